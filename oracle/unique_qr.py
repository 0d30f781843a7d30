"""Q·sign(diag R): the one Q of A = Q·R whose R has a positive diagonal,
put together from `qr`.

`q, r = jnp.linalg.qr(a)`, then `q * jnp.sign(jnp.diagonal(r))` is how JAX
makes a matrix with orthonormal columns out of a random one
(`jax.nn.initializers.orthogonal`, every recurrent and RL code base's
weight initialiser; random rotations; Haar-distributed samples).  Q alone
is free (each column's sign: xGEQRF's R may have either sign on its
diagonal), and so is the sign of R's diagonal; their product is not: for A
of full column rank, A = Q₊·R₊ with R₊'s diagonal positive has one Q₊.

**The steps followed** (oracle/chains.py calls `picked` and `combine`):
the diagonal of xGEQRF's R picked out by data movement (JAX's gather,
through the `case` jnp.diagonal lowers to) is pending "qr.rdiag"; `sign`
of it "qr.rsign"; broadcast, which repeats it along Q's rows, keeps the tag
(`chains.REPEATABLE`); its product with xORGQR's Q of the same A — element
(…, i, j) scaled by the sign of r_jj — is judged as "qr.q.positive"
(spec/lapack.py `qr_q_positive`): Q's orthogonality criterion (‖I −
MᵀM‖₁ ≤ t_q·m·ε, as "qr.q") and ‖M − Q₊‖_F ≤ ρ, Q₊ the oracle's center.

**The radius.**  Real A, m×n, m ≥ n, u the unit roundoff, t_q "qr.q"'s
threshold, t_r = two_sided(max(m, n)) (spec/lapack.py).  The backend's Q̃
passes "qr.q": Q̃ᵀQ̃ = I + F, ‖F‖₁ ≤ δ = t_q·m·u; xGEQRF's contract read
whole, as oracle/projection.py reads it: Q̃·R̃ = A − E, ‖E‖₁ ≤ e₁ =
t_r·max(m, n)·‖A‖₁·u.  S = diag(sign(r̃ⱼⱼ)) is exact (a product by ±1), M
= Q̃·S, R̃₊ = S·R̃ (positive diagonal).  Let σ ≤ σ_n(A) (spec/lapack.py
`spectrum`, less its error), ‖E‖_F ≤ √n·e₁ =: e_F < σ.

* R̃ is nonsingular: σ_n(R̃) ≥ σ_n(A − E)/‖Q̃‖₂ ≥ (σ − e_F)/√(1 + δ) > 0,
  so no r̃ⱼⱼ is 0 and sign is ±1.
* M·R̃₊ = A − E = Q₊R₊ − E, so M = Q₊·T − G with T = R₊R̃₊⁻¹ (upper
  triangular, positive diagonal) and G = E·R̃₊⁻¹, ‖G‖_F ≤ g =
  e_F·√(1 + δ)/(σ − e_F).
* TᵀT = (M + G)ᵀ(M + G) = I + K, K = SFS + MᵀG + GᵀM + GᵀG, and
  ‖K‖_F ≤ k = √n·δ + 2·√(1 + δ)·g + g² (‖F‖_F ≤ √n·‖F‖₁ column by column;
  ‖M‖₂ ≤ √(1 + δ)).
* T = I + U, U upper triangular: U + Uᵀ = K − UᵀU, and U = up(K − UᵀU)
  (up: the strict upper triangle and half the diagonal), ‖up(X)‖_F ≤
  ‖X‖_F/√2 for symmetric X, so ‖U‖_F ≤ (k + ‖U‖_F²)/√2.  For k < 1/2 this
  leaves ‖U‖_F ≤ u₋ = (1 − √(1 − 2k))/√2 or ‖U‖_F ≥ u₊ = (1 + √(1 − 2k))/√2;
  along chol(I + tK), t from 0 to 1 (positive definite throughout, the
  factor continuous, starting at U = 0), the gap (u₋, u₊) only widens, so
  ‖U‖_F ≤ u₋ (the argument of Sun's and Stewart's Cholesky perturbation
  bounds, here with the constants spelt out).
* M − Q₊ = Q₊(T − I) − G: ‖M − Q₊‖_F ≤ u₋ + g = ρ.

Q₊ itself is the oracle's float64 center C: numpy's QR of A with its
columns' signs fixed the same way, placed by the same bound with its own
δ₆₄ and E₆₄ measured (plus float64's rounding of the measuring), so the
criterion reads ‖M − C‖_F ≤ ρ + ρ₆₄.  Held against mpmath's Q₊ at 50
digits and brute force (Q̃, R̃ drawn at the criteria's edges) in
tests/oracle/test_unique_qr.py.

**A matrix computed upstream** (the orthogonal initialiser's Gaussian
draws): the backend factors Â, ‖Â − A‖₁ ≤ s (the record's `slack`,
oracle/chains.py `matrix_slack`), so E = Ê + (A − Â) and e₁ =
t_r·max(m, n)·(‖A‖₁ + s)·u + s.

What stays "any value": complex A (its sign is a phase), a complete Q,
A too close to rank-deficient (σ ≤ e_F, or k ≥ 1/2), the diagonal's signs
anywhere but along Q's columns, and a matrix computed upstream whose
distance is not known.

**R's diagonal in magnitude** (`jnp.linalg.slogdet(a, method="qr")`,
Σ log|r̃ₖₖ|; a Gram log-determinant ½·log det(AᵀA) from `qr(a, mode="r")`):
|r̃ₖₖ| is free of R's row signs, and `abs` of the picked diagonal is stated
as a range from geqrf.r's own criterion, R̃ᵀR̃ = AᵀA + F with ‖F‖₁ ≤ f =
t·max(m, n)·‖A‖₁·‖A‖∞·u (A m×n, m ≥ n).  With R₊ the exact factor (R₊ᵀR₊ =
AᵀA) and R̃₊ = S·R̃, W = R̃₊R₊⁻¹ is upper triangular with a positive
diagonal and WᵀW = I + R₊⁻ᵀFR₊⁻¹, ‖·‖_F ≤ k = √n·f/σ_n(A)²; the bound above
gives ‖W − I‖_F ≤ w = (1 − √(1 − 2k))/√2, and wₖₖ = |r̃ₖₖ|/r₊ₖₖ, so |r̃ₖₖ| ∈
r₊ₖₖ·[1 − w, 1 + w].  r₊ₖₖ is |diag| of numpy's R placed the same way (its F₆₄
measured).  A matrix computed upstream adds ‖ÂᵀÂ − AᵀA‖₁ ≤ n·s·‖A‖₁ +
‖A‖∞·s + n·s² to f (‖Â − A‖₁ ≤ s, so ‖Â − A‖∞ ≤ n·s), and the criterion's
own allowance is taken at ‖A‖₁ + s, ‖A‖∞ + n·s.  The program's log and sum
are then the ordinary ranged walk.  (slogdet's sign, which multiplies the
diagonal's signs by the reflectors' parity — tau, implementation-defined —
stays any value.)

**A gain** (`orthogonal(scale=√2)`, ReLU networks' initialiser): g·M for one
exact g ≠ 0, 1 is judged as M̂ = fl(g·M)/g, which is M·(1 + ε), |ε| ≤ η =
u + 2⁻⁵² (the product rounded once in the format, the division in float64):
‖M̂ᵀM̂ − MᵀM‖₁ ≤ (2η + η²)·n·(1 + δ) raises the orthogonality threshold by
2.1·η·n·(1 + δ)/(m·u) and ‖M̂ − M‖_F ≤ η·√(n(1 + δ)) the radius (the
record's `scale`).

**Computed on** (any other arithmetic on M):
M enters as a range, C ± ρ at every element (`q_range`; an element is at
most the Frobenius norm), and the program's arithmetic is carried as any
ranged value's (oracle/chains.py `as_range`).
"""
from __future__ import annotations

import math

import numpy as np

from ..spec import lapack
from ..spec.expectation import Expectation
from ..spec.kinds.residual import RESIDUAL
from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex
from .spectral import U64, bounded, gamma

PICKED = "R's diagonal of xGEQRF, picked out by data movement: its signs are free (oracle/unique_qr.py)"
SIGNED = "the signs of R's diagonal of xGEQRF: free alone (oracle/unique_qr.py)"
GAINED = "times a gain g: the same property of the output divided by g (oracle/unique_qr.py)"
MAGNITUDES = ("|diag R| of xGEQRF: every |r̃ₖₖ| an R passing its criterion can have — R₊'s diagonal within the "
              "Cholesky perturbation of RᵀR = AᵀA + F (oracle/unique_qr.py)")
WHY = ("Q·sign(diag R) of xORGQR's Q and xGEQRF's R of one A: the Q of A = Q·R with R's diagonal positive, judged by "
       "Q's orthogonality and its distance from the oracle's Q₊ (oracle/unique_qr.py)")


def picked(rec: dict, src: np.ndarray, o) -> Expectation | None:
    """Output `o` where data movement picks only diagonal elements of R out
    of a real xGEQRF result (`src`: the elements' numbers, −1 where none):
    "any value", tagged "qr.rdiag" with each element's (batch, k); else None."""
    from . import characterized as ch
    from .chains import diagonal_picked
    if rec.get("property") != "geqrf.r" or rec.get("conj") or o.type.element_type.is_complex:
        return None
    got = diagonal_picked(rec, src)
    if got is None:
        return None
    _, _, flat_batch, k = got
    tag = {"pending": "qr.rdiag", "a": rec["operands"][0], "k": np.asarray(k).tolist(),
           "batch": np.asarray(flat_batch).tolist(), "threshold": rec["threshold"]}
    tag.update({key: rec[key] for key in ("ranged", "slack") if key in rec})
    return ch.unstated(o.type, o.bits, PICKED, tag)


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """sign of a "qr.rdiag" value (tagged "qr.rsign"), or xORGQR's Q times
    the signs along its columns ("qr.q.positive"); else None."""
    from . import characterized as ch
    from .chains import tag
    if len(outs) != 1 or isinstance(outs[0], tuple) or any(isinstance(x, tuple) for x in inputs):
        return None
    (o,) = outs
    name = inst.spec.mnemonic
    if name in ("sign", "abs") and len(inputs) == 1:
        t = tag(inputs[0])
        if t is None or t.get("pending") != "qr.rdiag" or t.get("view"):
            return None
        if name == "sign":
            return [ch.unstated(o.type, o.bits, SIGNED, {**t, "pending": "qr.rsign"})]
        got = None if t.get("ranged") and t.get("slack") is None else diagonal_range(t)
        out = None if got is None else bounded(o, *(x.reshape(tuple(int(d) for d in o.type.shape)) for x in got),
                                               MAGNITUDES)
        return None if out is None else [out]
    if name != "multiply" or len(inputs) != 2:
        return None
    for q, s in (inputs, inputs[::-1]):
        got = _signed_q(q, s, o)
        if got is None:
            got = _gained(q, s, o)
        if got is not None:
            return [got]
    return None


def _gained(m, g, o) -> Expectation | None:
    """`o` = g·M, M a "qr.q.positive" value in place and g one exact value
    other than 0 and 1 at every element (the initialiser's gain): the same
    property of o/g (module docstring, "A gain")."""
    from .chains import exact
    if not RESIDUAL.judges(m) or g.residual is not None or not exact(g) or g.type != m.type or o.type != m.type:
        return None
    rec = m.residual
    attrs = rec["attributes"]
    if rec.get("property") != "qr.q.positive" or rec.get("view") or rec.get("fixed") or "scale" in attrs:
        return None
    vals = np.unique(np.asarray(g.array(), dtype=np.float64))
    if vals.size != 1 or not np.isfinite(vals[0]) or vals[0] in (0.0, 1.0):
        return None
    rows, cols = (int(d) for d in o.type.shape[-2:])
    u = float(lapack.unit_roundoff(o.type.element_type))
    eta = u + 2.0 ** -52   # fl(g·M) once in the format, then /g in float64
    thr = float(attrs["threshold"])
    delta = thr * rows * u
    thr_g = (thr + 2.1 * eta * cols * (1 + delta) / (rows * u)) * (1 + 2.0 ** -40)
    rho = [(r + eta * math.sqrt(cols * (1 + delta))) * (1 + 2.0 ** -40) for r in attrs["radius"]]
    new = {**rec, "attributes": {**attrs, "scale": float(vals[0]), "threshold": thr_g, "radius": rho},
           "threshold": thr_g}
    from .characterized import significant
    new["reference"] = significant(lapack.measure(new, o.type, o.array()).value)
    return Expectation(o.type, o.bits, RESIDUAL.name, residual=new, why="; ".join(w for w in (m.why, GAINED) if w))


def _signed_q(q, s, o) -> Expectation | None:
    """`o` = Q ⊙ signs, where `q` is xORGQR's Q (no view) and `s` the signs
    of R's diagonal of the same A, element (…, i, j) that of r_jj."""
    from .chains import tag
    if not RESIDUAL.judges(q) or s.residual is None:
        return None
    rec, t = q.residual, tag(s)
    if rec.get("property") != "qr.q" or rec.get("view") or rec.get("conj") or t.get("pending") != "qr.rsign" \
            or rec["operands"][0] != t["a"] or (t.get("ranged") and t.get("slack") is None):
        return None
    ta = parse_type(t["a"]["type"])
    m, n = (int(d) for d in ta.shape[-2:])
    shape = tuple(int(d) for d in o.type.shape)
    if m < n or shape != tuple(int(d) for d in ta.shape) or o.type != q.type:
        return None   # a complete Q (m×m), or a product of another shape
    view = t.get("view")
    src = np.asarray(view["src"] if view else np.arange(int(np.prod(shape))), dtype=np.int64)
    if src.size != int(np.prod(shape)) or (src < 0).any():
        return None
    ks, bs = np.asarray(t["k"], dtype=np.int64), np.asarray(t["batch"], dtype=np.int64)
    batch = shape[:-2]
    idx = np.indices(shape).reshape(len(shape), -1)
    flat_b = np.ravel_multi_index(idx[:-2], batch) if batch else np.zeros(src.size, dtype=np.int64)
    if not ((ks[src] == idx[-1]) & (bs[src] == flat_b)).all():
        return None
    a = tensor_from_hex(t["a"]["hex"], ta)
    slack = np.asarray(t.get("slack") or [0.0] * max(1, int(np.prod(batch, dtype=np.int64))), dtype=np.float64)
    got = positive_q(np.asarray(a, dtype=np.float64), ta, float(rec["threshold"]), slack)
    if got is None:
        return None
    center, rho = got
    tc = TensorType(ta.shape, parse_type("tensor<f64>").element_type)
    attrs = {"threshold": float(rec["threshold"]), "center": {"type": tc.mlir, "hex": tensor_to_hex(center, tc)},
             "radius": rho.reshape(-1).tolist()}
    placed = {key: t[key] for key in ("ranged", "slack") if key in t}   # A computed upstream, and its distance
    new = lapack.record("qr.q.positive", attrs, [(a, ta)], lapack.QR_Q_POSITIVE_STATEMENT, float(rec["threshold"]),
                        **placed)
    from .characterized import significant
    new["reference"] = significant(lapack.measure(new, o.type, o.array()).value)
    return Expectation(o.type, o.bits, RESIDUAL.name, residual=new, why=WHY)


RANGE = ("Q·sign(diag R) computed on: every element within ρ (the radius of its criterion, ‖M − Q₊‖_F ≤ ρ) of "
         "the oracle's Q₊ (oracle/unique_qr.py)")


def q_range(rec: dict) -> tuple | None:
    """(low, high) float64 of every element of every M a "qr.q.positive"
    record lets pass: C ± ρ, an element being at most the Frobenius norm."""
    attrs = rec["attributes"]
    tc = parse_type(attrs["center"]["type"])
    c = np.asarray(tensor_from_hex(attrs["center"]["hex"], tc), dtype=np.float64)
    rho = np.asarray(attrs["radius"], dtype=np.float64).reshape(c.shape[:-2] + (1, 1))
    g = float(attrs.get("scale", 1.0))   # y = fl(g·M): y/g within C ± ρ (the radius covers the rounding), so y in g·(C ± ρ)
    lo, hi = np.minimum(g * (c - rho), g * (c + rho)), np.maximum(g * (c - rho), g * (c + rho))
    return np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)


def diagonal_range(t: dict):
    """(low, high) float64 per element of a "qr.rdiag" value: every |r̃ₖₖ|
    an R̃ passing geqrf.r's criterion can have (module docstring, "R's
    diagonal in magnitude"), or None where no bound holds."""
    ta = parse_type(t["a"]["type"])
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    if m < n:
        return None
    a = np.asarray(tensor_from_hex(t["a"]["hex"], ta), dtype=np.float64)
    batch = tuple(int(d) for d in ta.shape[:-2])
    a = a.reshape((-1, m, n))
    slack = np.asarray(t.get("slack") or [0.0] * a.shape[0], dtype=np.float64).reshape(-1)
    sig, err = lapack.spectrum(a.reshape(batch + (m, n)), et, "svd")
    smin = (sig.reshape(-1, n).min(axis=-1, initial=math.inf) - np.asarray(err).reshape(-1))
    u, big, thr = float(lapack.unit_roundoff(et)), max(m, n), float(t["threshold"])
    up = 1 + 2.0 ** -20
    lo, hi = np.empty((a.shape[0], n)), np.empty((a.shape[0], n))
    for b in range(a.shape[0]):
        A, s, sm = a[b], float(slack[b]), float(smin[b])
        a1, ainf = float(np.abs(A).sum(axis=0).max(initial=0.0)), float(np.abs(A).sum(axis=1).max(initial=0.0))
        f1 = (thr * big * (a1 + s) * (ainf + n * s) * u + n * s * a1 + ainf * s + n * s * s) * up
        if sm <= 0:
            return None
        w = lapack.cholesky_gap_above(math.sqrt(n) * f1 / (sm * sm) * up)
        R = np.linalg.qr(A, mode="r")
        f64 = float(np.abs(R.T @ R - A.T @ A).sum(axis=0).max(initial=0.0)) \
            + 2 * gamma(big + 2, U64) * float((np.abs(A).T @ np.abs(A) + np.abs(R).T @ np.abs(R)).sum(axis=0).max())
        w64 = lapack.cholesky_gap_above(math.sqrt(n) * f64 / (sm * sm) * up)
        if not (w < 1 and w64 < 1):
            return None
        d = np.abs(np.diagonal(R))
        lo[b], hi[b] = d * (1 - w) / (1 + w64) * (1 - 2.0 ** -40), d * (1 + w) / (1 - w64) * (1 + 2.0 ** -40)
    ks, bs = np.asarray(t["k"], dtype=np.int64), np.asarray(t["batch"], dtype=np.int64)
    return np.nextafter(lo[bs, ks], -np.inf), np.nextafter(hi[bs, ks], np.inf)


def radius(delta: float, e_f: float, smin: float, n: int) -> float:
    """ρ of the module docstring: ‖M − Q₊‖_F at most, for ‖MᵀM − I‖₁ ≤ δ,
    ‖E‖_F ≤ e_F, σ_n(A) ≥ smin; inf where no bound holds."""
    if smin <= e_f or delta >= 0.5:
        return math.inf
    g = e_f * math.sqrt(1 + delta) / (smin - e_f)
    return lapack.cholesky_gap_above(math.sqrt(n) * delta + 2 * math.sqrt(1 + delta) * g + g * g) + g


def positive_q(a: np.ndarray, ta, t_q: float, slack: np.ndarray):
    """(C, ρ + ρ₆₄ per matrix), float64: the center Q₊ and the radius every
    M the criteria let pass lies within (Frobenius), or None."""
    et = ta.element_type
    m, n = (int(d) for d in ta.shape[-2:])
    big = max(m, n)
    u = float(lapack.unit_roundoff(et))
    batch = tuple(int(d) for d in ta.shape[:-2])
    sig, err = lapack.spectrum(a, et, "svd")
    sig, err = sig.reshape(batch + (n,)), np.asarray(err).reshape(batch)
    t_r = lapack.two_sided(big, et)
    up = 1 + 2.0 ** -20   # float64's rounding of these few products, generously
    center, rho = np.empty(a.shape), np.empty(batch)
    for i, idx in enumerate(np.ndindex(*batch)):
        A = a[idx]
        s = float(slack.reshape(-1)[i])
        smin = float(sig[idx].min(initial=math.inf)) - float(err[idx])
        e1 = (t_r * big * (float(np.abs(A).sum(axis=0).max(initial=0.0)) + s) * u + s) * up
        r = radius(t_q * m * u * up, math.sqrt(n) * e1 * up, smin, n)
        c, r64 = _center(A, smin)
        if not math.isfinite(r + r64):
            return None
        center[idx], rho[idx] = c, (r + r64) * (1 + 2.0 ** -40)
    return center, rho


def _center(A: np.ndarray, smin: float):
    """(numpy's Q of A, its columns' signs those of R's diagonal; its
    distance from Q₊ by `radius`, δ₆₄ and E₆₄ measured and their
    measuring's rounding added)."""
    m, n = A.shape
    Q, R = np.linalg.qr(A)
    d = np.sign(np.diagonal(R))
    if (d == 0).any():
        return Q, math.inf
    d64 = float(np.abs(Q.T @ Q - np.eye(n)).sum(axis=0).max(initial=0.0)) + 2 * gamma(m + 2, U64) * n
    e64 = float(np.abs(A - Q @ R).sum(axis=0).max(initial=0.0)) \
        + 2 * gamma(n + 2, U64) * float((np.abs(Q) @ np.abs(R)).sum(axis=0).max(initial=0.0))
    return Q * d, radius(d64, math.sqrt(n) * e64, smin, n)
