"""Properties carried downstream of a factorisation, where the factors are used together.

oracle/characterized.py offers "any value" for what an op computes from a
residual-judged value.  These uses of factors restore a property or a
range, and JAX emits each:

* **A factor's two triangular solves** (`jnp.linalg.solve`, `inv`: LU,
  xGETRF then two xTRSM; a Cholesky solve: `cholesky` then two
  `solve_triangular`, or `cho_solve`).  A left-side triangular solve whose
  `a` is a residual-judged factor F of M (cholesky: M = L·Lᴴ, the record's
  Hermitian matrix; xGETRF: M = P·A with the oracle's pivots) and whose b is
  an exact value c applies the first factor (L); its result is "pending":
  any value, tagged with the factor and c.  A second left-side solve with
  the same factor applying the second factor (Lᴴ; U) to that pending value
  gives x = (F₁·F₂)⁻¹·c = M⁻¹·c: its result is judged by "linear_solve"
  (spec/lapack.py: ‖M·x − c‖₁/(n·‖M‖₁·‖x‖₁·ε), LAPACK's dget02/dpot02), a
  backward-error criterion every backward-stable solve meets.  Which factor
  a solve applies is read from the factor's record and the solve's
  attributes (`_role`): cholesky with `lower` = true: the lower triangle,
  NO_TRANSPOSE applies L, ADJOINT (TRANSPOSE on real matrices) Lᴴ; with
  `lower` = false the upper triangle holds Lᴴ; xGETRF: the lower triangle
  with a unit diagonal is L, the upper one U (NO_TRANSPOSE).  Any other
  order (Lᴴ first, the wrong triangle, a transposed LU solve) keeps "any
  value".  The factor is "the same" where the two records state the same
  factor of the same operands (the same op and operands; for xGETRF the same
  pivots); c must be exact (not approximate, not free).
* **xORGQR of xGEQRF's outputs** (`jnp.linalg.qr`): "qr.q" of geqrf's A.
* **Complex parts put back together** (JAX conjugates by real, imag,
  negate and complex: `cho_factor`'s upper factor is conj(Lᵀ), lstsq's Uᴴ
  is transpose(conj(U))): `_components` tags each part with its sign;
  complex(re, im) of one value gives it back; complex(re, −im) of a
  Cholesky factor seen through a transpose is Lᴴ — the factor of the other
  triangle (`lower` flipped), so the complex Cholesky solve is checked end
  to end like the real one; of any other judged value it is the conjugate,
  marked `conj` (spec/lapack.py `measure` conjugates the output back).
* **Least squares through QR** (`q, r = jnp.linalg.qr(a)`, then
  `solve_triangular(r, qᴴ @ b)`; `_qr_lstsq`): Qᴴ·b (xORGQR's Q of xGEQRF's
  outputs through a transpose, b exact) is pending; the upper triangular
  solve with R — xGEQRF's result of the same A, its leading n×n in place —
  gives x, judged by "lstsq" with a threshold derived from the criteria of
  Q, of the factorisation read whole (A = Q·R + E: R and the reflectors
  are one factorisation) and of the solve (spec/lapack.py
  `qr_lstsq_threshold`).  The signs free in Q and in R alone cancel in
  R⁻¹·Qᴴ.
* **Q·sign(diag R)** (`jax.nn.initializers.orthogonal`: the Q of A whose R
  has a positive diagonal, unique for A of full column rank;
  oracle/unique_qr.py): R's diagonal picked out by data movement is
  pending "qr.rdiag" (`_picked_elements`), its sign "qr.rsign", a broadcast along
  Q's rows keeps it (`REPEATABLE`), and its product with xORGQR's Q of the
  same A is judged as "qr.q.positive": Q's orthogonality and its distance
  from the oracle's Q₊ within a proven radius; computed on, the range
  Q₊ ± ρ (`as_range`).  `abs` of R's diagonal (slogdet with method "qr")
  is a range from geqrf.r's criterion (`unique_qr.diagonal_range`), and
  Q·R is A within the contract (oracle/reconstruction.py).
* **U's diagonal, L and U apart** (`jnp.linalg.det`, `slogdet`: Σ log|uₖₖ|,
  the signs of uₖₖ and the pivots' parity; `jax.scipy.linalg.lu`: tril and
  triu by select): where data movement (JAX's gather, a select with zeros)
  picks elements out of a real xGETRF result, the picked values are stated
  as a "bounded" range — every l̂ᵢₖ or ûₖⱼ any evaluation order of the
  factorisation can give (oracle/lu_diagonal.py: ball arithmetic, leading
  minors and Schur complements, componentwise backward error, Higham ch. 9
  and 14), the elements put in from exact operands at their values — and
  the program's own arithmetic on them is the ordinary ranged
  walk (oracle/propagation.py, affine.py): sign exact where no ball holds 0,
  logabsdet and det ranges whose width `run` prints (too wide: inconclusive).
* **The eigen- and singular values computed on** (`as_range`): the range
  their criterion lets pass (spec/lapack.py `values_range`), where an op
  computes on them (characterized.downstream; lstsq's rcond mask and 1/σ).
* **A linear system's solution computed on** (`as_range`: `jnp.linalg.solve`
  or `inv` followed by arithmetic): the range its criterion lets pass,
  x* ± maxₖ|M⁻¹ᵢₖ|·‖r‖₁ with ‖r‖₁ what the threshold admits (spec/lapack.py
  `solve_range`: M⁻¹ and x* as arb balls; real systems up to order 256 and
  κ₁ below about 1/(2·t·n·ε), else any value).
* **A Cholesky factor computed on** (`as_range`: the log of its diagonal
  in a Gaussian log-likelihood, L·z in a sampler, L·Lᵀ): where the program
  fixed the triangle the criterion does not read (JAX's `select(tril, L,
  0)`: the record is `fixed`, oracle/characterized.py `_kept_record`), every
  factor its criterion lets pass, as a range (spec/lapack.py
  `cholesky_range`: L_c ± √aᵢᵢ·f, a perturbation bound proven for every
  such factor, real matrices up to order 256), the other triangle as the
  program fixed it.  A factor whose other triangle is LAPACK's leftovers
  gets no range.
* **The first of a Cholesky solve's two solves computed on**
  (`jax.scipy.stats.multivariate_normal.logpdf`: ‖L⁻¹·(x − μ)‖², JAX's
  right-side solve y·Lᵀ = c): the pending value's range, every y =
  L̃⁻¹·c that triangular_solve's criterion passes with any L̃ cholesky's
  passes (spec/lapack.py `cholesky_solve_range`).  A right-side solve
  x·op(a) = b is op(a)ᵀ·xᵀ = bᵀ: `_role` reads which factor it applies to
  b's rows; only the left-side pair is put together into "linear_solve".
* **Matrices and right-hand sides computed upstream** (ridge regression:
  solve(xᵀx + λI, xᵀy), its Cholesky form): the factorisation is judged
  against the oracle's primary matrix (characterized.RANGED_OPERAND), and
  the record carries `slack`, ‖Â − A‖₁ at most for the Â the backend
  factors (`matrix_slack`, from the operand's range; a right-hand side's
  `c_slack` per column, `column_slack`): the solve's criterion and the
  ranges above add it (spec/lapack.py `solve_slack`).  A record of another
  property from such an operand (eigenvalues) is `ranged` without slack:
  no range downstream.
* **lstsq** (`_lstsq`, A of full column rank, m ≥ n): Uᴴ·b (xGESDD's U
  through a transpose — of its conjugate where complex —, b exact), then
  D ⊙ (Uᴴ·b) with D a stated value whose range is within RHO_MAX of 1/σᵢ
  on row i, then V·(…) (vt likewise, of the same A): x judged by "lstsq" —
  the normal equations' residual ‖Aᴴ(A·x − b)‖ (LAPACK's dqrt17), with a
  threshold covering the SVD's backward error and D's deviation
  (spec/lapack.py `lstsq_threshold`).  `jnp.linalg.pinv` is the same
  chain with b = I: V·(Uᴴ ⊘ s), s the singular values (∞ past the cutoff,
  so 1/s = 0 and D out of reach: no claim) — pinv(A)'s columns are the
  least-squares solutions for the columns of the identity, judged by the
  same criterion (`_utb`); for complex A JAX factors conj(A) and takes
  plain transposes, so the result is the conjugate (the record's `conj`).

Between the steps JAX moves the values (reshape, transpose, slice, pad,
select on info): `moved` follows a value through any op that moves its
elements — observed, not assumed: the op runs on the value's element
numbers (oracle/numbering.py: 1, 2, … and their negatives, so an element
that is computed rather than moved is told apart), and where every element
the criterion reads comes out exactly once, the record gets a `view`
(spec/lapack.py, `measure`: the output is moved back before the criterion
reads it).

What stays "any value": an underdetermined lstsq (m < n: the normal
equations hold for every solution, the minimum-norm one is not singled
out), a
rank-deficient or nearly rank-deficient lstsq (D not within reach of Σ⁻¹),
a solve through a factor used otherwise than above, anything downstream of
a factorisation whose pivots the oracle does not state (a near-tie) or of
an implementation-defined output (tau, LAPACK's overwritten a), and
xGEEV's eigenvalues computed on element by element (their order is free)
— but for `compare` EQ / NE with a value outside every disc their
criterion allows (`jnp.roots`' zero test) and the largest |ŵ| (a spectral
radius), oracle/eigenvalues.py.
"""
from __future__ import annotations

import numpy as np

from ..spec import lapack
from ..spec.expectation import Expectation
from ..spec.kinds import kind_of
from ..spec.kinds.bounded import BOUNDED
from ..spec.kinds.residual import RESIDUAL
from ..spec.ops.cholesky import hermitian
from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex
from . import numbering
from .rounding import outward_bits
from .lu_diagonal import lu_elements


def tag(v):
    """The record (residual) or tag (pending) of a value, or None."""
    if isinstance(v, tuple) or v.residual is None:
        return None
    return v.residual


def _triangular(inst):
    """The triangular_solve instance an op is (itself, or a custom_call read as one), or None."""
    if inst.spec.mnemonic == "triangular_solve":
        return inst
    op = getattr(inst.spec.semantics, "op", None)
    return op if op is not None and op.spec.mnemonic == "triangular_solve" else None


def _factor_key(rec: dict):
    """What identifies the factorisation a record states (cholesky's `lower` aside: both triangles of
    a defined operand state the same factor)."""
    if rec.get("view") or rec.get("conj"):
        return None
    if rec.get("op") == "cholesky":
        return ("cholesky", tuple(o["hex"] for o in rec["operands"]), rec["operands"][0]["type"])
    if rec.get("property") == "getrf.lu":
        return ("getrf", tuple(o["hex"] for o in rec["operands"]), rec["operands"][0]["type"],
                tuple(rec["attributes"]["pivots"]))
    return None


def _role(rec: dict, tri) -> str | None:
    """Which factor of M the solve applies: "L" (first) or "R" (second: Lᴴ, U), or None.  A right-side
    Cholesky solve x·op(a) = b is op(a)ᵀ·xᵀ = bᵀ: the factor op(a)ᵀ applied to b's rows (real factors)."""
    real = not tri.b.element_type.is_complex
    t = tri.transpose_a
    if rec.get("op") == "cholesky" and not tri.unit_diagonal:
        stored_lower = bool(rec["attributes"].get("lower", False))
        if bool(tri.lower) != stored_lower or not (tri.left_side or real):
            return None
        flip = {"L": "R", "R": "L"} if not tri.left_side else {"L": "L", "R": "R"}
        if t == "NO_TRANSPOSE":
            return flip["L" if stored_lower else "R"]
        if t == "ADJOINT" or (t == "TRANSPOSE" and real):
            return flip["R" if stored_lower else "L"]
        return None
    if not tri.left_side:
        return None
    if rec.get("property") == "getrf.lu" and t == "NO_TRANSPOSE":
        m, n = (int(d) for d in parse_type(rec["operands"][0]["type"]).shape[-2:])
        if m != n:
            return None
        if tri.lower and tri.unit_diagonal:
            return "L"
        if not tri.lower and not tri.unit_diagonal:
            return "R"
    return None


def _matrix(rec: dict) -> tuple[np.ndarray, TensorType, float]:
    """(M, its type, the growth G of the threshold) of a factor's record."""
    t = parse_type(rec["operands"][0]["type"])
    a = tensor_from_hex(rec["operands"][0]["hex"], t)
    n = int(t.shape[-1])
    if rec.get("op") == "cholesky":
        M = hermitian(np.asarray(a).astype(np.complex128 if t.element_type.is_complex else np.float64),
                      bool(rec["attributes"].get("lower", False)))
        return M.astype(t.element_type.numpy), t, float(n)
    piv = np.asarray(rec["attributes"]["pivots"], dtype=np.int64).reshape(tuple(int(d) for d in t.shape[:-2]) + (n,))
    return lapack.permute_rows(np.asarray(a), piv), t, max(rec["attributes"]["growth"] or [1.0])


def _ranged_real(v) -> bool:
    """Is `v` one real value with a range (approximate upstream), not free?"""
    from .characterized import is_free
    from .propagation import is_ranged
    return not isinstance(v, tuple) and not v.type.element_type.is_complex and is_ranged(v) and not is_free(v)


def exact(v) -> bool:
    """Is `v` one stated value (no range, no alternative, not a tuple)?"""
    return not isinstance(v, tuple) and kind_of(v).pinned and not v.impl_defined and not v.alternatives


def radius(v) -> np.ndarray:
    """|value − primary| at most, per element of a real value (0 where it is
    exact; +inf where an end is not finite), float64 rounded up."""
    from .propagation import is_ranged, value_ends
    p = np.asarray(v.array(), dtype=np.float64)
    if not is_ranged(v):
        return np.zeros(p.shape)
    lo, hi = (np.asarray(x, dtype=np.float64) for x in value_ends(v))
    with np.errstate(invalid="ignore"):
        r = np.nextafter(np.maximum(hi - p, p - lo), np.inf)
    return np.where(np.isfinite(r), r, np.inf)


def column_slack(r: np.ndarray) -> list:
    """‖·‖₁ of each column of a batch of radii (…, n, k), rounded up, as nested lists."""
    return np.nextafter(np.abs(r).sum(axis=-2), np.inf).tolist()


SYMMETRIC = ("eigh.values", "eigh.vectors")   # records whose operand is read as a Hermitian matrix, as cholesky's
# Records of a real factorisation whose `slack` (‖Â − A‖₁) a rule downstream adds (besides cholesky's)
SLACKED = SYMMETRIC + ("getrf.lu", "geqrf.r", "geev.values", "geev.vectors", "gees.t", "gees.vectors", "gehrd.h")


def matrix_slack(v, rec: dict) -> list | None:
    """‖Â − A‖₁ at most, per matrix of the batch (flat list), for a real
    factorisation's operand `v` approximate upstream: what the backend
    factors (Â) is within the operand's range of the oracle's primary A —
    read as the record reads it (cholesky: the Hermitian matrix of its
    triangle; xGETRF: the rows permuted, which keeps column sums); None for
    complex operands and where an end is not finite (no distance bounds
    it)."""
    if v.type.element_type.is_complex:
        return None
    r = radius(v)
    if rec.get("op") == "cholesky" or rec.get("property") in SYMMETRIC:
        r = np.abs(hermitian(r, bool(rec["attributes"].get("lower", False))))
    norms = np.nextafter(r.sum(axis=-2).max(axis=-1), np.inf) if r.shape[-1] else np.zeros(r.shape[:-2])
    if not np.isfinite(norms).all():   # an end not finite: no distance to add, no statement downstream
        return None
    return np.asarray(norms, dtype=np.float64).reshape(-1).tolist()


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The outputs where `inst` uses a factorisation's results together (module docstring), else None."""
    from . import characterized as ch
    tri = _triangular(inst)
    if tri is not None and len(inputs) == 2 and len(outs) == 1:
        a, b = inputs
        rec = tag(a) if RESIDUAL.judges(a) else None
        key = _factor_key(rec) if rec is not None else None
        role = _role(rec, tri) if key is not None else None
        if role is None:
            return _qr_lstsq(inst, inputs, outs, primary)
        (o,) = outs
        spread = None if exact(b) or not _ranged_real(b) else radius(b)   # ĉ's distance from c, where computed
        if role == "L" and (exact(b) or (spread is not None and np.isfinite(spread).all())):
            t = b.type
            c = {"type": t.mlir, "hex": tensor_to_hex(np.asarray(primary[1]).astype(t.element_type.numpy), t)}
            pend = {"pending": "solve", "factor": list(map(_jsonable, key)), "c": c}
            for k in ("ranged", "slack"):
                if k in rec:
                    pend[k] = rec[k]
            if not tri.left_side:
                pend["rows"] = True   # y·L̃ᵀ = c: the factor applied to c's rows
            if spread is not None:   # ĉ within ‖·‖₁ of c per right-hand side (a column; a row where `rows`)
                pend["c_slack"] = column_slack(np.swapaxes(spread, -1, -2) if not tri.left_side else spread)
            return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; the first of two triangular solves with the "
                                                f"factors of {key[0]} (oracle/chains.py)", pend)]
        p = tag(b)
        if role == "R" and tri.left_side and p is not None and p.get("pending") == "solve" and not p.get("view") \
                and not p.get("rows") \
                and p["factor"] == list(map(_jsonable, key)):
            M, tm, growth = _matrix(rec)
            tc = parse_type(p["c"]["type"])
            c = tensor_from_hex(p["c"]["hex"], tc)
            if tc != o.type:
                return None
            n = int(tm.shape[-1])
            thr = lapack.solve_threshold(n, growth, tc.element_type)
            extra = {"undefined": rec["undefined"]} if rec.get("undefined") else {}
            if rec.get("ranged") and "slack" not in rec:
                extra["ranged"] = True
            attrs = {"threshold": thr}
            if "slack" in rec or "c_slack" in p:   # M, c approximate upstream (spec/lapack.py `linear_solve`)
                k = int(tc.shape[-1])
                attrs["slack"] = {"M": rec.get("slack") or [0.0] * int(np.prod(tm.shape[:-2], dtype=np.int64)),
                                  "c": p.get("c_slack") or np.zeros(tc.shape[:-2] + (k,)).tolist()}
            new = lapack.record("linear_solve", attrs, [(M, tm), (c, tc)], lapack.SOLVE_STATEMENT, thr, **extra)
            new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
            via = "L·Lᴴ (cholesky)" if key[0] == "cholesky" else "P·A = L·U (xGETRF, the oracle's pivots)"
            why = f"two triangular solves with the factors of M = {via}: x solves M·x = c (oracle/chains.py)"
            return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new,
                                why="; ".join(w for w in (a.why, why) if w))]
        return None
    parts = _components(inst, inputs, outs)
    if parts is not None:
        return parts
    by_qr = _qr_lstsq(inst, inputs, outs, primary)
    if by_qr is not None:
        return by_qr
    from . import eigenvalues, projection, reconstruction, singular, spectral, unique_qr
    # V·diag(d)·Vᵀ of eigh, U·diag(d)·Vᵀ of svd, Q·(Qᴴ·x), Q·sign(diag R) and Q·R of qr, geev's values compared
    for rule in (spectral.combine, singular.combine, projection.combine, unique_qr.combine, reconstruction.combine,
                 eigenvalues.combine):
        got = rule(inst, inputs, outs, primary)
        if got is not None:
            return got
    least = _lstsq(inst, inputs, outs, primary)
    if least is not None:
        return least
    fam = getattr(inst.spec.semantics, "family", None)
    if fam == "orgqr" and len(inputs) == 2 and len(outs) == 1:
        by_gehrd = _hessenberg_q(inst, inputs, outs)
        if by_gehrd is not None:
            return by_gehrd
        r, tau = tag(inputs[0]), tag(inputs[1])
        if r is None or tau is None or r.get("property") != "geqrf.r" or tau.get("pending") != "geqrf.tau" \
                or r.get("conj"):
            return None
        if r["operands"][0] != tau["of"] or not _embeds(r, inputs[0].type):
            return None
        (o,) = outs
        ta = parse_type(r["operands"][0]["type"])
        a = tensor_from_hex(r["operands"][0]["hex"], ta)
        thr = lapack.two_sided(max(int(d) for d in ta.shape[-2:]), ta.element_type)
        new = lapack.record("qr.q", {}, [(a, ta)], lapack.QR_Q_STATEMENT, thr)
        new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
        return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new,
                            why=f"{inst.spec.semantics.reading} of xGEQRF's outputs: the Q of A (oracle/chains.py)")]
    return None


def _hessenberg_q(inst, inputs: list, outs: list) -> list | None:
    """xORGQR of xGEHRD's reflectors (`jax.scipy.linalg.hessenberg(calc_q=True)`):
    a[1:n, 0:n−1] of xGEHRD's a (a part, `PARTS`) with its tau gives
    Q(2:n, 2:n), judged as "gehrd.q" of A (spec/hessenberg.py)."""
    from . import characterized as ch
    r, tau = tag(inputs[0]), tag(inputs[1])
    if r is None or tau is None or r.get("property") != "gehrd.h" or r.get("pending") != "part" \
            or tau.get("pending") != "gehrd.tau" or r.get("conj") or tau.get("view") or r["operands"][0] != tau["of"]:
        return None
    ta = parse_type(r["operands"][0]["type"])
    shape0 = tuple(int(d) for d in ta.shape)
    n = shape0[-1]
    t = inputs[0].type
    if tuple(int(d) for d in t.shape) != shape0[:-2] + (n - 1, n - 1) or not r.get("view"):
        return None
    want = np.arange(int(np.prod(shape0))).reshape(shape0)[..., 1:, :n - 1]
    if not np.array_equal(np.asarray(r["view"]["src"]).reshape(want.shape), want):
        return None
    (o,) = outs
    a = tensor_from_hex(r["operands"][0]["hex"], ta)
    thr = lapack.two_sided(n, ta.element_type)
    from ..spec import hessenberg
    new = lapack.record("gehrd.q", {"threshold": thr}, [(a, ta)], hessenberg.GEHRD_Q_STATEMENT, thr)
    for k in ("ranged", "slack"):
        if k in r:
            new[k] = r[k]
    new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
    return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new,
                        why=f"{inst.spec.semantics.reading} of xGEHRD's reflectors: Q(2:n, 2:n) of A's Hessenberg "
                            "reduction (oracle/chains.py)")]


COMPONENT = "the {part} parts of a value judged by a property, {sign}(oracle/chains.py)"
CONJUGATED = ("the conjugate transpose of {op}'s factor, put together from its parts: the property of {op} with "
              "{words} (oracle/chains.py)")


def _components(inst, inputs: list, outs: list) -> list | None:
    """JAX conjugates a complex value by parts — real, imag, negate,
    complex (`jax.scipy.linalg.cho_factor`: the upper factor is conj(Lᵀ)).
    real / imag of a judged or tagged complex value give "any value" tagged
    with the part and its sign; negate flips the sign; complex(re, ±im) of
    the same value gives it back (+) or, where the value is a cholesky
    factor moved by a transpose of its matrices, Lᴴ — the factor of the
    other triangle of the same matrix (−).  Anything else: None."""
    from . import characterized as ch
    name = inst.spec.mnemonic
    if len(outs) != 1 or isinstance(outs[0], tuple):
        return None
    (o,) = outs
    if name in ("real", "imag") and len(inputs) == 1:
        (v,) = inputs
        rec = tag(v)
        if rec is None or rec.get("pending") == "part" or not v.type.element_type.is_complex:
            return None
        part = {"pending": "part", "part": "re" if name == "real" else "im", "sign": 1, "of": rec,
                "judged": RESIDUAL.judges(v)}
        return [ch.unstated(o.type, o.bits, "; ".join(w for w in (v.why, COMPONENT.format(
            part=part["part"], sign="")) if w), part)]
    if name == "negate" and len(inputs) == 1:
        rec = tag(inputs[0])
        if rec is None or rec.get("pending") != "part" or rec.get("view"):
            return None
        new = {**rec, "sign": -rec["sign"]}
        return [ch.unstated(o.type, o.bits, inputs[0].why + "; negated", new)]
    if name == "complex" and len(inputs) == 2:
        re, im = (tag(x) for x in inputs)
        if re is None or im is None or any(t.get("pending") != "part" or t.get("view") for t in (re, im)):
            return None
        if (re["part"], re["sign"], im["part"]) != ("re", 1, "im") or re["of"] != im["of"] or not re["judged"]:
            return None
        rec = re["of"]
        if not rec.get("property") and not rec.get("op"):
            return None
        if im["sign"] == 1:
            why = COMPONENT.format(part="re and im", sign="put back together ")
            return [Expectation(o.type, o.bits, RESIDUAL.name, residual=rec, why=why)]
        restated = _conjugate_transposed(rec, o.type)
        if restated is None:   # the conjugate, judged by the same property on its conjugate (spec/lapack.measure)
            new = {k: v for k, v in rec.items() if k != "conj"}
            if not rec.get("conj"):
                new["conj"] = True
            return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new,
                                why=COMPONENT.format(part="re and −im", sign="put back together: the conjugate "))]
        new, words = restated
        return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new,
                            why=CONJUGATED.format(op=new["op"], words=words))]
    return None


def _conjugate_transposed(rec: dict, t: TensorType) -> tuple | None:
    """(the record, words) where `rec` is a cholesky factor seen through a transpose of its matrices (its
    `view`) and the value is conjugated: Lᴴ, the factor of the other triangle (A = L·Lᴴ = Uᴴ·U, U = Lᴴ)."""
    view = rec.get("view")
    if rec.get("op") != "cholesky":
        return None
    if not is_transposed(view, t):
        return None
    lower = not rec["attributes"].get("lower", False)
    new = {k: v for k, v in rec.items() if k != "view"}
    new["attributes"] = {**rec["attributes"], "lower": lower}
    return new, f"lower = {str(lower).lower()}"


def is_transposed(view: dict | None, t: TensorType) -> bool:
    """Is the `view` (a value of type t) the transpose of its record's matrices, batch dimensions kept?"""
    if not view:
        return False
    shape0 = tuple(int(d) for d in parse_type(view["type"]).shape)
    shape = tuple(int(d) for d in t.shape)
    if len(shape0) < 2 or shape != shape0[:-2] + (shape0[-1], shape0[-2]):
        return False
    swapped = np.arange(int(np.prod(shape0, dtype=np.int64))).reshape(shape0).swapaxes(-1, -2).reshape(-1)
    return np.array_equal(np.asarray(view["src"], dtype=np.int64), swapped)


# --------------------------------------------------------------------------
# jnp.linalg.lstsq: x = V·D·(Uᴴ·b), D = Σ⁻¹ on the singular values kept
# --------------------------------------------------------------------------

VALUES_RANGE = ("the values its criterion lets pass, as a range (spec/lapack.py `values_range`), where a program "
                "computes on them (oracle/chains.py)")
SOLVE_RANGE = ("the solutions its criterion lets pass, as a range: x* ± max|M⁻¹ᵢₖ|·‖r‖₁ (spec/lapack.py "
               "`solve_range`), where a program computes on them (oracle/chains.py)")
LSTSQ_RANGE = ("the least-squares solutions its criterion lets pass, as a range: x* ± max|(AᴴA)⁻¹ᵢₖ|·‖Aᴴr‖₁ "
               "(spec/lapack.py `lstsq_range`), where a program computes on them (oracle/chains.py)")
LSTSQ_WHY = ("V·D·(Uᴴ·b) with D within a relative {rho:.2g} of Σ⁻¹, from xGESDD of A: x of min ‖A·x − b‖ "
             "(oracle/chains.py)")
RHO_MAX = 2.0 ** -6   # D further from Σ⁻¹ than this (a singular value dropped or near rcond): not claimed


FIRST_SOLVE_RANGE = ("the first of a Cholesky solve's two solves, computed on: every y = L̃⁻¹·c the two criteria let "
                     "pass, as a range (spec/lapack.py `cholesky_solve_range`; oracle/chains.py)")
CHOLESKY_RANGE = ("the factors its criterion lets pass, as a range: L ± √aᵢᵢ·f₋(g) (spec/lapack.py "
                  "`cholesky_range`), the other triangle as the program fixed it, where a program computes on them "
                  "(oracle/chains.py)")


_REMEMBERED: dict = {}   # (what, digest of the record) -> the ends computed for it, the last few
_REMEMBER_MAX = 8


def _remembered(what: str, rec: dict, compute):
    """`compute()` once per record: every op that reads a residual-judged
    value asks `as_range` again (jnp.linalg.solve's result passes through
    reshapes and a transpose before it is computed on: five asks of one
    record), and a range costs an arb inverse (about a second at order 256).  Keyed by
    the record's contents; the ends are returned read-only, so no caller
    can change what the next one gets."""
    import hashlib
    import json

    def spelt(o):   # arrays by their bytes (str() would elide a large one's middle); anything else: not remembered
        if isinstance(o, np.ndarray):
            return [str(o.dtype), list(o.shape), hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest()]
        if isinstance(o, np.generic):
            return o.item()
        raise TypeError(type(o).__name__)
    try:
        key = (what, hashlib.sha256(json.dumps(rec, sort_keys=True, default=spelt).encode()).hexdigest())
    except (TypeError, ValueError):
        return compute()
    if key not in _REMEMBERED:
        ends = compute()
        if ends is not None:
            ends = tuple(np.asarray(x) for x in ends)
            for x in ends:
                x.setflags(write=False)
        while len(_REMEMBERED) >= _REMEMBER_MAX:
            _REMEMBERED.pop(next(iter(_REMEMBERED)))
        _REMEMBERED[key] = ends
    return _REMEMBERED[key]


def as_range(v) -> Expectation | None:
    """A residual-judged value of eigen- or singular values, a linear
    system's solution, or a Cholesky factor whose other triangle the
    program fixed, or the pending first solve with a Cholesky factor (moved
    or not), as the range of values its criteria let pass — what it is
    where a program computes on it (characterized.downstream); None for
    anything else, and where no range is proven (spec/lapack.py
    `solve_range`, `cholesky_range`, `cholesky_solve_range`: too
    ill-conditioned, too large).  Elements the criterion does not read are
    stated only where the record is `fixed` (characterized._kept_record):
    as the value's own bits.  A record `ranged` (its factorisation's operand
    approximate upstream, judged against the oracle's primary values:
    characterized.RANGED_OPERAND) gets a range only with its `slack` (the
    distance of what the backend factors, `matrix_slack`), else none."""
    if isinstance(v, tuple) or v.type.element_type.is_complex:
        return None
    rec = v.residual
    if rec is not None and rec.get("ranged") and "slack" not in rec:   # factored from the oracle's primary M only
        return None
    bare = {k: val for k, val in (rec or {}).items() if k not in ("view", "fixed", "ranged")}
    if not RESIDUAL.judges(v):
        if rec is None or rec.get("pending") != "solve" or rec["factor"][0] != "cholesky":
            return None
        tc = parse_type(rec["c"]["type"])
        ends = _remembered("first solve", rec, lambda: lapack.cholesky_solve_range(
            {"type": rec["factor"][2], "hex": rec["factor"][1][0]}, tensor_from_hex(rec["c"]["hex"], tc), tc,
            bool(rec.get("rows")), rec.get("slack"), rec.get("c_slack")))
        why = FIRST_SOLVE_RANGE
    elif rec.get("property") in ("eigh.values", "svd.values"):
        ends, why = _remembered("values", bare, lambda: lapack.values_range(bare)), VALUES_RANGE
    elif rec.get("property") == "linear_solve":
        ends, why = _remembered("solve", bare, lambda: lapack.solve_range(bare)), SOLVE_RANGE
    elif rec.get("property") == "lstsq":
        ends, why = _remembered("lstsq", bare, lambda: lapack.lstsq_range(bare)), LSTSQ_RANGE
    elif rec.get("op") == "cholesky" and rec.get("fixed"):
        ends, why = _remembered("cholesky", bare, lambda: lapack.cholesky_range(bare)), CHOLESKY_RANGE
    elif rec.get("property") == "qr.q.positive":
        from .unique_qr import RANGE, q_range
        ends, why = q_range(bare), RANGE
    else:
        return None
    if ends is None:
        return None
    lo, hi = (x.reshape(-1) for x in ends)
    view = rec.get("view")
    if view:
        src = np.asarray(view["src"], dtype=np.int64)
        lo, hi = (np.where(src >= 0, x[np.maximum(src, 0)], np.nan) for x in (lo, hi))
    unread = np.isnan(lo) | np.isnan(hi)
    if unread.any():
        if not rec.get("fixed"):
            return None
        own = np.asarray(v.array(), dtype=np.float64).reshape(-1)
        lo, hi = np.where(unread, own, lo), np.where(unread, own, hi)
    shape = tuple(int(d) for d in v.type.shape)
    et = v.type.element_type
    return Expectation(v.type, v.bits, BOUNDED.name, lo=outward_bits(lo, et, True).reshape(shape),
                       hi=outward_bits(hi, et, False).reshape(shape), why="; ".join(w for w in (v.why, why) if w))


def is_matmul(inst, lhs_rank: int, rhs_rank: int) -> bool:
    """Is the dot_general a batched matrix product lhs·rhs (batch dimensions leading, in order)?"""
    if inst.spec.mnemonic != "dot_general" or lhs_rank != rhs_rank or lhs_rank < 2:
        return False
    got = [[int(d) for d in (inst.attributes.get(k) or [])] for k in
           ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
            "rhs_contracting_dimensions")]
    batch = list(range(lhs_rank - 2))
    return got == [batch, batch, [lhs_rank - 1], [lhs_rank - 2]]


def _svd_of(rec: dict) -> list:
    return [rec["operands"][0]["type"], rec["operands"][0]["hex"]]


def _lstsq(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The three steps of `jnp.linalg.lstsq` after xGESDD (A of full column
    rank): Uᴴ·b (Uᴴ: xGESDD's u through a transpose, conjugated first where
    complex — the record's `conj` —, b exact) is pending;
    D ⊙ (Uᴴ·b) with D a stated value within RHO_MAX of 1/σᵢ on row i (D's
    range read from its expectation: JAX's 1/s where s > rcond·s₀, the
    singular values entering as `as_range`) is pending; V·(…) (V: vt
    through a transpose, of the same A) is x, judged by "lstsq"
    (spec/lapack.py).  Anything else: None."""
    from . import characterized as ch
    if len(outs) != 1 or isinstance(outs[0], tuple) or len(inputs) != 2 or any(isinstance(x, tuple) for x in inputs):
        return None
    (o,) = outs
    name = inst.spec.mnemonic
    lhs, rhs = inputs
    if name == "dot_general" and is_matmul(inst, lhs.type.rank, rhs.type.rank) and RESIDUAL.judges(lhs):
        rec = lhs.residual
        p = tag(rhs)
        flipped = p is not None and bool(p.get("conj"))   # every factor unconjugated: the conjugate (`_utb`)
        if not is_transposed(rec.get("view"), lhs.type) \
                or bool(rec.get("conj")) != (o.type.element_type.is_complex and not flipped):
            return None   # Uᴴ, V: the transpose, of the conjugate where complex
        if rec.get("property") == "svd.u" and exact(rhs):
            k = int(lhs.type.shape[-2])
            if k != len(rec["attributes"]["values"]) // max(1, int(np.prod(lhs.type.shape[:-2], dtype=np.int64))):
                return None   # U with more columns than singular values (mode 'A'): not lstsq's
            b = {"type": rhs.type.mlir, "hex": tensor_to_hex(np.asarray(primary[1]).astype(rhs.type.element_type.numpy),
                                                             rhs.type)}
            pend = {"pending": "lstsq.utb", "svd": _svd_of(rec), "b": b, "values": rec["attributes"]["values"],
                    "error": rec["attributes"]["error"]}
            return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; Uᴴ·b of xGESDD's U (oracle/chains.py)", pend)]
        if rec.get("property") == "svd.vt" and p is not None and p.get("pending") == "lstsq.scaled" \
                and not p.get("view") and p["svd"] == _svd_of(rec):
            ta = parse_type(rec["operands"][0]["type"])
            if int(ta.shape[-2]) < int(ta.shape[-1]):
                return None   # fewer equations than unknowns: every solution meets the normal equations, not one
            a = tensor_from_hex(rec["operands"][0]["hex"], ta)
            tb = parse_type(p["b"]["type"])
            b = tensor_from_hex(p["b"]["hex"], tb)
            big = max(int(d) for d in ta.shape[-2:])
            thr = lapack.lstsq_threshold(big, p["eta"] / lapack.norm_of(a, ta), o.type.element_type)
            new = lapack.record("lstsq", {"threshold": thr, "rho": p["rho"]}, [(a, ta), (b, tb)],
                                lapack.LSTSQ_STATEMENT, thr, **({"conj": True} if flipped else {}))
            new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
            return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new, why=LSTSQ_WHY.format(rho=p["rho"]))]
        return None
    if name in ("multiply", "divide"):   # D ⊙ (Uᴴ·b); pinv's Uᴴ ⊘ s (D = 1/s, b = I)
        pairs = ((lhs, rhs), (rhs, lhs)) if name == "multiply" else ((rhs, lhs),)
        for d, y in pairs:
            p = _utb(y)
            if p is None or ch.is_free(d) or d.type != y.type:
                continue
            got = _scaling(d, p, y.type, reciprocal=name == "divide")
            if got is None:
                return None
            rho, eta = got
            new = {**p, "pending": "lstsq.scaled", "rho": rho, "eta": eta}
            return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; Σ⁻¹·Uᴴ·b within a relative {rho:.2g} "
                                                f"(oracle/chains.py)", new)]
    return None


def _utb(y) -> dict | None:
    """The pending Uᴴ·b that `y` is: the tag of a value `_lstsq` made, or —
    `jnp.linalg.pinv`, V·(Uᴴ ⊘ s) — xGESDD's Uᴴ itself (U through a
    transpose, of its conjugate where complex), Uᴴ·b with b = I: pinv(A)'s
    columns are the least-squares solutions for the columns of the identity,
    so it is judged by lstsq's criterion with b = I.  None otherwise."""
    p = tag(y)
    if p is None:
        return None
    if p.get("pending") == "lstsq.utb" and not p.get("view"):
        return p
    if not RESIDUAL.judges(y) or p.get("property") != "svd.u" or p.get("ranged") \
            or not is_transposed(p.get("view"), y.type):
        return None   # a computed A's SVD is judged against the primary A only: no claim downstream
    batch = tuple(int(d) for d in y.type.shape[:-2])
    k, m = (int(d) for d in y.type.shape[-2:])
    if k != len(p["attributes"]["values"]) // max(1, int(np.prod(batch, dtype=np.int64))):
        return None   # U with more columns than singular values (mode 'A'): not pinv's
    tb = TensorType(batch + (m, m), y.type.element_type)
    eye = np.broadcast_to(np.eye(m), batch + (m, m)).astype(tb.element_type.numpy)
    pend = {"pending": "lstsq.utb", "svd": _svd_of(p), "b": {"type": tb.mlir, "hex": tensor_to_hex(eye, tb)},
            "values": p["attributes"]["values"], "error": p["attributes"]["error"]}
    if y.type.element_type.is_complex and not p.get("conj"):
        pend["conj"] = True   # Uᵀ: JAX's complex pinv takes the SVD of conj(A), x = conj(pinv(conj(A)))
    return pend


QR_LSTSQ_WHY = ("R̃⁻¹·(Q̃ᴴ·b) with Q̃ from xORGQR and R̃ from the same xGEQRF of A: x of min ‖A·x − b‖, judged by "
               "the normal equations (spec/lapack.py `qr_lstsq_threshold`; oracle/chains.py)")


def _qr_lstsq(inst, inputs: list, outs: list, primary: list) -> list | None:
    """Least squares through QR (`q, r = jnp.linalg.qr(a)`, then
    `solve_triangular(r, q.T @ b)`), A m×n of full column rank, m ≥ n:
    Qᴴ·b (xORGQR's Q judged as "qr.q", through a transpose — of its
    conjugate where complex —, b exact) is pending; the upper triangular
    solve with R (xGEQRF's result of the same A, its leading n×n in place:
    the triangle the solve reads) applied to it is x, judged by "lstsq"
    with the threshold spec/lapack.py `qr_lstsq_threshold` derives from
    the criteria of Q, of the factorisation and of the solve.  Signs are
    free in Q and in R alone; R̃⁻¹Q̃ᴴ is not, since both come from one
    factorisation.  Records of an operand approximate upstream (`ranged`):
    None, as anything else is."""
    from . import characterized as ch
    if len(outs) != 1 or isinstance(outs[0], tuple) or len(inputs) != 2 or any(isinstance(x, tuple) for x in inputs):
        return None
    (o,) = outs
    lhs, rhs = inputs
    cplx = o.type.element_type.is_complex
    if inst.spec.mnemonic == "dot_general" and is_matmul(inst, lhs.type.rank, rhs.type.rank) \
            and RESIDUAL.judges(lhs) and (exact(rhs) or _ranged_real(rhs)):
        rec = lhs.residual
        if rec.get("property") != "qr.q" or rec.get("ranged") or not is_transposed(rec.get("view"), lhs.type) \
                or bool(rec.get("conj")) != cplx:
            return None
        ta = parse_type(rec["operands"][0]["type"])
        m, n = (int(d) for d in ta.shape[-2:])
        if m < n or int(lhs.type.shape[-2]) != n:
            return None   # complete Q (mode 'complete'), or fewer equations than unknowns
        b = {"type": rhs.type.mlir, "hex": tensor_to_hex(np.asarray(primary[1]).astype(rhs.type.element_type.numpy),
                                                         rhs.type)}
        pend = {"pending": "qr.qtb", "a": rec["operands"][0], "b": b, "t_q": rec["threshold"]}
        if not exact(rhs):   # b computed upstream: its radius, for Q·(Qᴴ·b) (oracle/projection.py); no lstsq claim
            r = radius(rhs)
            if not np.isfinite(r).all():
                return None
            pend["b_r"] = r.tolist()
        return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; Qᴴ·b of xORGQR's Q (oracle/chains.py)", pend)]
    tri = _triangular(inst)
    if tri is None or not RESIDUAL.judges(lhs):
        return None
    rec, p = lhs.residual, tag(rhs)
    if p is None or p.get("pending") != "qr.qtb" or p.get("view") or "b_r" in p or rec.get("property") != "geqrf.r" \
            or rec.get("ranged") or rec.get("conj") or rec["operands"][0] != p["a"]:
        return None
    if not tri.left_side or tri.lower or tri.unit_diagonal or tri.transpose_a != "NO_TRANSPOSE":
        return None
    ta = parse_type(p["a"]["type"])
    n = int(ta.shape[-1])
    if tuple(int(d) for d in lhs.type.shape) != tuple(int(d) for d in ta.shape[:-2]) + (n, n) \
            or not leading_upper(rec.get("view"), ta, n):
        return None
    a = tensor_from_hex(p["a"]["hex"], ta)
    tb = parse_type(p["b"]["type"])
    if o.type != TensorType(tuple(ta.shape[:-2]) + (n, tb.shape[-1]), tb.element_type):
        return None
    thr = lapack.qr_lstsq_threshold(a, ta, float(p["t_q"]))
    if thr is None:
        return None
    new = lapack.record("lstsq", {"threshold": thr}, [(a, ta), (tensor_from_hex(p["b"]["hex"], tb), tb)],
                        lapack.LSTSQ_STATEMENT, thr)
    new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
    return [Expectation(o.type, o.bits, RESIDUAL.name, residual=new, why=QR_LSTSQ_WHY)]


def leading_upper(view: dict | None, ta: TensorType, n: int) -> bool:
    """Does a value of n×n matrices hold, on and above its diagonal, the
    same elements of xGEQRF's m×n result (type ta) — R in place?"""
    shape0 = tuple(int(d) for d in (parse_type(view["type"]).shape if view else ta.shape))
    if shape0 != tuple(int(d) for d in ta.shape):
        return False
    m = shape0[-1 - 1]
    batch = shape0[:-2]
    want = np.arange(int(np.prod(shape0, dtype=np.int64))).reshape(shape0)[..., :n, :]
    src = np.asarray(view["src"], dtype=np.int64).reshape(batch + (n, n)) if view else None
    if src is None:
        return m == n
    upper = np.broadcast_to(np.triu(np.ones((n, n), dtype=bool)), batch + (n, n))
    return bool((src[upper] == want[upper]).all())


def _scaling(d: Expectation, p: dict, t: TensorType, reciprocal: bool = False) -> tuple | None:
    """(ρ, η): the largest relative distance ρᵢ of D's range from 1/σᵢ (row
    i), and the largest σᵢ·ρᵢ — what D's deviation adds to A's normal
    equations: Aᴴ·A·V·Σ⁻¹·Δ·Uᴴ·b = V·Σ·Δ·Uᴴ·b; None where ρ > RHO_MAX.
    `reciprocal`: `d` is what Uᴴ·b is divided by (pinv's s), D = 1/d —
    real and positive ends only (a complex divisor with zero imaginary
    parts, JAX's s converted, counts as real); the division's own rounding
    is a relative u per element, as the product's is (lstsq_threshold)."""
    from ..spec.types import from_bits
    et = d.type.element_type
    kind = kind_of(d)
    if kind.holds_range:
        lo, hi = (np.asarray(from_bits(x, et)).astype(np.complex128 if et.is_complex else np.float64)
                  for x in kind.ends(d))
    elif kind.ulps(d) is not None and not d.impl_defined:
        x = d.array()
        c = et.component if et.is_complex else et
        spread = 2 * kind.ulps(d) * np.spacing(np.abs(x).astype(c.numpy)).astype(np.float64)
        lo, hi = x - spread * (1 + 1j if et.is_complex else 1), x + spread * (1 + 1j if et.is_complex else 1)
    else:
        return None
    shape = tuple(int(s) for s in t.shape)
    sig = np.asarray(p["values"], dtype=np.float64).reshape(shape[:-2] + (shape[-2], 1))
    err = np.asarray(p["error"], dtype=np.float64).reshape(shape[:-2] + (1, 1))
    if reciprocal:
        lo, hi = np.asarray(lo), np.asarray(hi)
        if np.any(lo.imag != 0) or np.any(hi.imag != 0) or not (lo.real > 0).all():
            return None
        with np.errstate(divide="ignore", over="ignore"):   # 1/x rounded outward (1/inf = 0: a dropped σ)
            lo, hi = np.nextafter(1 / hi.real, -np.inf), np.nextafter(1 / lo.real, np.inf)
        lo, hi = np.maximum(lo, 0.0), hi
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (sig - err <= 0).any():
        return None
    lo, hi = np.asarray(lo), np.asarray(hi)   # a complex range is a box: |dσ − 1| ≤ |re dev| + |im|·σ over it
    rho = np.maximum(np.abs(lo.real * sig - 1), np.abs(hi.real * sig - 1)) \
        + np.maximum(np.abs(lo.imag), np.abs(hi.imag)) * sig + err / (sig - err)
    if float(np.max(rho)) > RHO_MAX:
        return None
    return float(np.max(rho)), float(np.max((sig + err) * rho))


def _jsonable(x):
    return list(x) if isinstance(x, tuple) else x


def _embeds(rec: dict, t: TensorType) -> bool:
    """Does the value (of type t) hold geqrf's m×n result as its leading columns, in place?"""
    view = rec.get("view")
    t0 = parse_type(view["type"] if view else rec["operands"][0]["type"])
    if not view:
        return tuple(t.shape) == tuple(t0.shape)
    shape, shape0 = tuple(int(d) for d in t.shape), tuple(int(d) for d in t0.shape)
    if shape[:-1] != shape0[:-1] or shape[-1] < shape0[-1]:
        return False
    src = np.asarray(view["src"]).reshape(shape)[..., :shape0[-1]]
    return bool((src.reshape(-1) == np.arange(int(np.prod(shape0)))).all())


MOVED = "moved by data movement (its elements followed: oracle/chains.py)"
# Pending values whose elements may come out more than once (a broadcast): signs applied along Q's rows
# (oracle/unique_qr.py).  Every other tag's elements come out once each: a criterion reads each once.
REPEATABLE = ("qr.rdiag", "qr.rsign")
# Factors whose part — some of their columns or rows, each once, picked by data movement — oracle/spectral.py and
# singular.py read as the whole factor with d = 0 off the part (PCA's top k, a truncated SVD): tagged "part"
# (any value alone: the factor's criterion reads all of it), with the record and the composed `view`.
PARTS = ("eigh.vectors", "svd.u", "svd.vt", "gehrd.h")   # xGEHRD's a[1:n, 0:n−1]: its reflectors for xORGQR
PART = "a part of a factor's columns or rows, picked by data movement: any value alone (oracle/chains.py)"


def moved(run_op, inst, arrays: list, i: int, v: Expectation, k: int, o,
          others_exact: bool = False) -> Expectation | None:
    """Output `k` of the op where it moves the tagged value `v` (operand `i`)
    without computing on it (module docstring), with the record's `view`
    composed; None where it does not.  Where the op also puts in elements of
    its other operands (`concatenate`, `pad`: JAX's `block` around
    `hessenberg`'s Q), they are judged as the program's own values — the
    record marked `fixed` (spec/kinds/residual.py) — where those operands are
    exact (`others_exact`) and every element the record brings along is one
    its criterion reads or one already fixed; otherwise they are not read
    and a `fixed` mark of the record is dropped (an approximate element must
    not be compared bit for bit)."""
    from . import characterized as ch
    rec = tag(v)
    if isinstance(o, tuple) or rec is None or o.type.element_type != v.type.element_type:
        return None
    shape = tuple(int(d) for d in v.type.shape)
    n = int(np.prod(shape, dtype=np.int64))

    def run(numbered):
        trial = list(arrays)
        trial[i] = numbered[0]
        out = run_op(inst, trial)[k]
        return None if isinstance(out, tuple) or out.type != o.type else out.array()
    src = numbering.sources(run, [shape], v.type.element_type)
    if src is None:
        return None
    # the elements that must come through: what the criterion reads (a pending value: all of it)
    view = rec.get("view")
    need = ch.scored(v).reshape(-1) if RESIDUAL.judges(v) else np.ones(n, dtype=bool)
    got_src = src[src >= 0]
    counts = np.bincount(got_src, minlength=n) if got_src.size else np.zeros(n, dtype=np.int64)
    repeats = rec.get("pending") in REPEATABLE and bool((src >= 0).all())   # broadcast along Q's rows
    partial = rec.get("property") in PARTS and (RESIDUAL.judges(v) or rec.get("pending") == "part") \
        and bool((src >= 0).all()) and int(counts.max(initial=0)) <= 1   # PCA's v[:, -k:], a truncated SVD
    if (counts[need] != 1).any() and not repeats and not partial:
        return _picked_elements(rec, v, src, o, others_exact) if RESIDUAL.judges(v) else None
    carried = src[src >= 0]   # v's elements that come out (v's own numbering)
    if view:
        src0 = np.asarray(view["src"], dtype=np.int64)
        src = np.where(src >= 0, src0[np.maximum(src, 0)], -1)
        t0 = view["type"]
    else:
        t0 = v.type.mlir
    new = {key: val for key, val in rec.items() if key != "view"}
    if not (o.type.mlir == t0 and (src == np.arange(src.size)).all()):
        new["view"] = {"type": t0, "src": src.tolist()}
    put_in = (src < 0).any()
    if put_in and RESIDUAL.judges(v):
        brings_read = bool(rec.get("fixed")) or bool(need[carried].all())
        if others_exact and brings_read:
            new["fixed"] = True
        else:
            new.pop("fixed", None)
    if partial and (counts != 1).any():   # elements dropped: a part, which the criterion cannot read alone
        return ch.unstated(o.type, o.bits, "; ".join(w for w in (v.why, PART) if w), {**new, "pending": "part"})
    if RESIDUAL.judges(v):
        note = MOVED if MOVED not in v.why else ""
        return Expectation(o.type, o.bits, RESIDUAL.name, residual=new, why="; ".join(w for w in (v.why, note) if w))
    return ch.unstated(o.type, o.bits, v.why, new)


PICKED = ("{what} of xGETRF's LU, picked out by data movement: every value any evaluation order of the "
          "factorisation can give (oracle/lu_diagonal.py; oracle/chains.py)")


def elements_picked(rec: dict, src: np.ndarray):
    """(A, A's type, flat batch index, row, column) per element numbered
    `src` (−1 where none) of a getrf.lu or geqrf.r value — the element's
    place in the factorisation's m×n result, through the value's `view`, if
    data movement made one; −1 for all four where `src` or the view puts
    another operand's element in; None where no element is picked."""
    src = np.asarray(src, dtype=np.int64)
    view = rec.get("view")
    if view:
        src = np.where(src >= 0, np.asarray(view["src"], dtype=np.int64)[np.maximum(src, 0)], -1)
    if not (src >= 0).any():
        return None
    (a,), (ta,) = lapack.operands_of(rec)
    m, n = (int(d) for d in ta.shape[-2:])
    batch_shape = tuple(int(d) for d in ta.shape[:-2]) or (1,)
    at = np.maximum(src, 0)
    batch = np.ravel_multi_index(np.unravel_index(at // (m * n), batch_shape), batch_shape)
    i, j = np.unravel_index(at % (m * n), (m, n))
    none = src < 0
    return a, ta, *(np.where(none, -1, x) for x in (batch, i, j))


def diagonal_picked(rec: dict, src: np.ndarray):
    """(A, A's type, flat batch index, k) per element numbered `src` (−1
    where none) of a getrf.lu value, when every element is a diagonal
    element U[k, k] (through the value's `view`, if data movement made
    one); None otherwise.  Real and complex diagonals are picked alike
    (here and complex_ranges.py)."""
    got = elements_picked(rec, src)
    if got is None:
        return None
    a, ta, batch, i, j = got
    if (i < 0).any() or (i != j).any():
        return None
    return a, ta, batch, i


def _picked_elements(rec: dict, v: Expectation, src: np.ndarray, o: Expectation,
                     others_exact: bool = False) -> Expectation | None:
    """Output `o` where its elements hold elements of a real getrf.lu value
    (R's diagonal of a geqrf.r value: oracle/unique_qr.py `picked`)
    `v` (`src`: the elements' numbers in `v`, −1 where none) — U's diagonal
    (det, slogdet), or L's multipliers and U's entries apart
    (`jax.scipy.linalg.lu`: tril and triu by select, the others zeros): a
    "bounded" expectation from oracle/lu_diagonal.py, the elements put in
    from other operands at their own values where those are exact
    (`others_exact`); None elsewhere."""
    if rec.get("property") == "geqrf.r":   # its signs, for Q·sign(diag R)
        from .unique_qr import picked as r_diagonal
        return r_diagonal(rec, src, o)
    if rec.get("property") != "getrf.lu" or rec.get("conj") or o.type.element_type.is_complex:
        return None
    picked = elements_picked(rec, src)
    if picked is None:
        return None
    a, ta, flat_batch, i, j = picked
    put_in = i < 0
    if put_in.any() and not others_exact:
        return None
    got = lu_elements(a, ta.element_type, rec["attributes"]["pivots"])
    if isinstance(got, str):
        return None
    m, n = (int(d) for d in ta.shape[-2:])
    lo, hi = (x.reshape(-1, m, n)[np.maximum(flat_batch, 0), np.maximum(i, 0), np.maximum(j, 0)] for x in got)
    et = o.type.element_type
    shape = tuple(int(d) for d in o.type.shape)
    lo_bits = np.where(put_in.reshape(-1), o.bits.reshape(-1), outward_bits(lo, et, True).reshape(-1))
    hi_bits = np.where(put_in.reshape(-1), o.bits.reshape(-1), outward_bits(hi, et, False).reshape(-1))
    what = "U's diagonal" if not put_in.any() and (i == j).all() else "L's and U's elements"
    return Expectation(o.type, o.bits, BOUNDED.name, lo=lo_bits.reshape(shape).astype(o.bits.dtype),
                       hi=hi_bits.reshape(shape).astype(o.bits.dtype),
                       why="; ".join(w for w in (v.why, PICKED.format(what=what)) if w))
