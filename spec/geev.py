"""xGEEV: the eigenvalues and right eigenvectors of a general square matrix,
judged in whatever order the backend returns them (`jnp.linalg.eigvals`,
`eig`; oracle/custom_calls.py reads the call).

**The contract.**  A backward-stable eigensolver (LAPACK's xGEEV: a
Hessenberg reduction, then the shifted QR algorithm to Schur form) returns
the exact eigenvalues of A + E for an E with ‖E‖₂ ≤ s·n·‖A‖₁·ε, s a modest
constant (Golub & Van Loan §7.5.6; LAPACK Users' Guide §4.8), in the order
of its Schur form — the backend's choice.  The criterion finds the least s
that can explain the backend's values, by the bound below, and compares it
with t, LAPACK's threshold for two-sided factorisations (spec/lapack.py
`two_sided`, as for eigh).

**Where the eigenvalues of A + E lie.**  For a non-normal A they move by
up to their condition number times ‖E‖, so the bound is made in an
approximate eigenbasis:

* Ṽ: numpy's float64 eigenvectors of A (columns xⱼ), λ̃ its eigenvalues;
  Y = Ṽ⁻¹ (rows yᵢ) and F = Y·A·Ṽ − diag(λ̃), both enclosed in arb
  (python-flint: the exact inverse and products of the float64 matrices,
  as complex balls).
* Y·(A + E)·Ṽ = diag(λ̃) + F + Y·E·Ṽ is similar to A + E.  Its (i, j)
  element, λ̃ᵢ taken off the diagonal, is at most |Fᵢⱼ| + ‖yᵢ‖₂·‖E‖₂·‖xⱼ‖₂
  in magnitude, so Gershgorin's i-th row disc of it lies in
  Dᵢ = D(λ̃ᵢ, bᵢ + kᵢ·‖E‖₂), bᵢ = Σⱼ|Fᵢⱼ|, kᵢ = ‖yᵢ‖₂·Σⱼ‖xⱼ‖₂
  (‖yᵢ‖₂·‖xᵢ‖₂ is λᵢ's condition number), or kᵢ = ‖yᵢ‖₂·√n·‖Ṽ‖₂ where
  smaller (Σⱼ|(Y·E·Ṽ)ᵢⱼ| ≤ √n·‖yᵢᴴ·E·Ṽ‖₂; near-orthogonal eigenvectors).
* Gershgorin's theorem: a union of k of the row discs disjoint from the
  other n − k holds exactly k eigenvalues, counted with multiplicity.  A
  connected component C of ∪Dᵢ holds the row discs of its indices and none
  of the others (each lies in its Dᵢ), so C holds exactly |C| eigenvalues of
  A + E.
* With ‖E‖₂ = s·U, U = n·‖A‖₁·ε: every ŵ lies in some Dᵢ(s) and each
  component of ∪Dᵢ(s) holds as many ŵ as it has discs.  Growing s keeps
  each ŵ in its disc and only merges components (their counts add), so this
  holds from a least s* on; s* is one of the finitely many s at which a ŵ
  enters a disc or two discs meet, found by bisection over them.  The
  criterion: s* ≤ t.

**First order.**  The discs above carry the factor Σⱼ‖xⱼ‖₂ (up to n) where
λᵢ moves by about ‖yᵢ‖₂·‖xᵢ‖₂·‖E‖₂.  Where λ̃ᵢ is apart from the rest, a
diagonal similarity closes most of that: with βᵢⱼ ≥ |Gᵢⱼ| as above (G = F +
Y·E·Ṽ) and rₖ = Σⱼ≠ₖ βₖⱼ, scaling row i by δ and column i by 1/δ leaves
Gershgorin's i-th disc inside D(λ̃ᵢ, βᵢᵢ + δ·rᵢ) and the k-th inside
D(λ̃ₖ, βₖₖ + rₖ − βₖᵢ + βₖᵢ/δ); where for every k ≠ i δ·rᵢ + βₖᵢ/δ <
|λ̃ᵢ − λ̃ₖ| − βᵢᵢ − βₖₖ − rₖ + βₖᵢ, the i-th is apart from the union of the
others and holds exactly one eigenvalue (`isolated_radii`: the least such
δ, a root of the quadratic, taken for each i).  So at s = t each such disc
must hold exactly one ŵ (`first_order_holds`); the measure is s* where they
do and ∞ where one does not.  In f32 this takes the scaling caught below
1/64 from order ≈ 16 to ≈ 24 on Gaussian matrices; past it the other discs'
rows are too wide to leave any apart, and the criterion says that the
scaled answer passes (`run`: inconclusive).

Which ŵ belongs to which eigenvalue is never asked: the order is free, and
so is the pairing inside a cluster (a component of several discs: close or
defective eigenvalues).  A value outside every disc, two values in a
component of one disc, a conjugate pair's missing half: each fails.  Where
arb cannot invert Ṽ (a defective matrix numpy cannot diagonalise) or the
matrix is past GEEV_LIMIT, no record is made (any value).

**The eigenvectors** (`jnp.linalg.eig`'s second result, each column of
unit 2-norm, its phase free): a backward-stable pair has ‖A·v̂ⱼ − ŵⱼ·v̂ⱼ‖₂
≤ s·U, and ŵⱼ lies in the disc Dᵢ(t) of the eigenvalue it approximates, so
‖(A − λ̃ᵢ)·v̂ⱼ‖₂ ≤ s·U + ρᵢ·‖v̂ⱼ‖₂, ρᵢ = Dᵢ(t)'s radius.  The vectors are
judged alone (the criterion reads one result): v̂ⱼ may serve component C
where rⱼ(C) = minᵢ∈C (‖(A − λ̃ᵢ)·v̂ⱼ‖₂ − ρᵢ·‖v̂ⱼ‖₂)/U is at most s, and the
columns must be matched to the components, |C| columns each (a bipartite
matching: scipy's linear_sum_assignment); the measure is the least s with
such a matching, and each column's |‖v̂ⱼ‖₂ − 1|/(n·ε) beside it (LAPACK's
dget22 normalisation test).  n copies of one eigenvector fail.

**Computed upstream.**  Where the backend is given Â with ‖Â − A‖₁ ≤ σ per
matrix (the record's `slack`, oracle/chains.py `matrix_slack`), its values
are those of A + (Â − A) + E, and ‖Â − A‖₂ ≤ √n·σ joins ‖E‖₂ in every disc
(`with_slack`) — `jnp.roots`' companion matrix holds −p[1:]/p[0].

**Rigour of the numbers.**  bᵢ and ‖yᵢ‖₂ are upper ends of arb balls;
Σⱼ‖xⱼ‖₂, ‖A‖₁ and U are float64 sums rounded up by n·2⁻⁵² relative;
distances and residuals are float64 (working format), given 2⁻⁴⁰ relative
(and the residual's γ bound) in the backend's favour.
"""
from __future__ import annotations

import math

import numpy as np

from .ops.cholesky import gamma, unit_roundoff

GEEV_LIMIT = 256   # order of the largest matrix given discs (arb's inverse and two products: about 1 s at 256)
GEEV_VALUES_STATEMENT = ("the least s for which every ŵ lies in a disc D(λ̃ᵢ, bᵢ + kᵢ·s·n·‖A‖₁·ε) and each connected "
                         "component of the discs holds as many ŵ as it has discs, and each first-order disc of an "
                         "eigenvalue apart from the rest exactly one (Gershgorin's theorem in an approximate "
                         "eigenbasis; any order; spec/geev.py)")
GEEV_VECTORS_STATEMENT = ("the least s with the columns matched to the discs' components, |C| each, "
                          "‖(A − λ̃ᵢ)·v̂‖₂ ≤ s·n·‖A‖₁·ε + ρᵢ·‖v̂‖₂ for some i of C; and |‖v̂‖₂ − 1|/(n·ε) "
                          "(LAPACK dget22); phases free (spec/geev.py)")
MARGIN = 2.0 ** -40
NO_DISCS = ("no bound: arb cannot invert the approximate eigenvector matrix (a defective or nearly defective "
            "matrix), or the matrix is past GEEV_LIMIT (spec/geev.py)")


def _acb_mat(m: np.ndarray):
    import flint
    return flint.acb_mat([[flint.acb(float(z.real), float(z.imag)) for z in row] for row in np.asarray(m, complex)])


def _up(x) -> float:
    """The upper end of a nonnegative arb ball, as a float64 not below it."""
    hi = float(x.upper())
    return float(np.nextafter(hi, np.inf))


def _sum_up(x: np.ndarray, axis=None):
    """A float64 sum of nonnegative terms rounded up past its own rounding."""
    n = max(np.asarray(x).size, 1)
    return np.asarray(x, dtype=np.float64).sum(axis=axis) * (1 + (n + 2) * 2.0 ** -52)


def discs_one(A: np.ndarray, u: float) -> dict | None:
    """Disc centers λ̃, base radii b, coefficients k and the unit U =
    n·‖A‖₁·ε of one square matrix (module docstring), or None."""
    import flint
    n = A.shape[-1]
    if n == 0:
        return {"centers": [], "base": [], "coef": [], "unit": 0.0, "u": u}
    A = np.asarray(A, dtype=np.complex128 if np.iscomplexobj(A) else np.float64)
    try:
        lam, V = np.linalg.eig(A)
    except np.linalg.LinAlgError:
        return None
    if not (np.isfinite(V).all() and np.isfinite(lam).all()):
        return None
    old = flint.ctx.prec
    flint.ctx.prec = 128
    try:
        Vb = _acb_mat(V)
        try:
            Y = Vb.inv()
        except (ZeroDivisionError, ValueError):
            return None
        F = Y * _acb_mat(A) * Vb
        base, ynorm, fabs = np.empty(n), np.empty(n), np.empty((n, n))
        for i in range(n):
            row = flint.arb(0)
            sq = flint.arb(0)
            for j in range(n):
                f = abs(F[i, j] - flint.acb(float(lam[i].real), float(lam[i].imag)) if i == j else F[i, j])
                fabs[i, j] = _up(f)
                row += f
                sq += abs(Y[i, j]) ** 2
            if not (row.is_finite() and sq.is_finite()):
                return None
            base[i], ynorm[i] = _up(row), _up(sq.sqrt())
    finally:
        flint.ctx.prec = old
    # Σⱼ‖xⱼ‖₂, or √n·‖Ṽ‖₂ where smaller (near-orthogonal eigenvectors): numpy's σ₁ plus 8·n·2⁻⁵³·‖Ṽ‖_F
    fro = float(np.sqrt(_sum_up(np.abs(V) ** 2)))
    two = (float(np.linalg.svd(V, compute_uv=False)[0]) + 8 * n * 2.0 ** -53 * fro) * (1 + 2.0 ** -50)
    xnorm = np.sqrt(_sum_up(np.abs(V) ** 2, axis=0)) * (1 + 2.0 ** -50)
    xsum = min(float(_sum_up(xnorm)), math.sqrt(n) * two * (1 + 2.0 ** -50))
    unit = float(n * _sum_up(np.abs(A), axis=0).max() * u * (1 + 2.0 ** -50))
    return {"centers": [[float(z.real), float(z.imag)] for z in lam], "base": base.tolist(),
            "coef": (ynorm * xsum * (1 + 2.0 ** -50)).tolist(), "unit": unit, "u": u,
            "fabs": fabs.reshape(-1).tolist(), "ynorm": ynorm.tolist(), "xnorm": xnorm.tolist()}


def discs(a: np.ndarray, et) -> list | None:
    """`discs_one` of each matrix of a batch (…, n, n), or None where one has no bound."""
    n = a.shape[-1]
    if n > GEEV_LIMIT:
        return None
    u = unit_roundoff(et)
    out = []
    for idx in np.ndindex(*a.shape[:-2]):
        d = discs_one(a[idx], u)
        if d is None:
            return None
        out.append(d)
    return out


def with_slack(d: dict, e0: float) -> dict:
    """The discs of a matrix the backend may have been given within ‖Â − A‖₂ ≤ e0 of A
    (computed upstream): Â + E = A + (Â − A + E), so every |Gᵢⱼ| bound grows by ‖yᵢ‖₂·e0·‖xⱼ‖₂."""
    if not e0:
        return d
    out = dict(d)
    out["base"] = (np.asarray(d["base"]) + np.asarray(d["coef"]) * e0 * (1 + MARGIN)).tolist()
    if "fabs" in d:
        n = len(d["ynorm"])
        out["fabs"] = (np.asarray(d["fabs"]).reshape(n, n)
                       + np.outer(d["ynorm"], d["xnorm"]) * e0 * (1 + MARGIN)).reshape(-1).tolist()
    return out


def slack_discs(attrs: dict) -> list:
    """The record's discs, each widened by its matrix's `slack` (‖Â − A‖₁ ≤ slack, so
    ‖Â − A‖₂ ≤ √n·slack), where the operand was computed upstream."""
    discs = attrs["discs"]
    slack = attrs.get("slack")
    if not slack:
        return discs
    return [with_slack(d, math.sqrt(len(d["centers"])) * float(s) * (1 + MARGIN)) for d, s in zip(discs, slack)]


def _unpack(d: dict):
    c = np.array([complex(x, y) for x, y in d["centers"]], dtype=np.complex128)
    return c, np.asarray(d["base"], dtype=np.float64), np.asarray(d["coef"], dtype=np.float64), float(d["unit"])


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """max(num, 0)/den, 0 where num ≤ 0, inf where den is 0 and num > 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num <= 0, 0.0, np.where(den > 0, num / np.where(den > 0, den, 1), np.inf))


def components(c, base, g, s):
    """(component label per disc, count of discs per label, radii) at s."""
    from scipy.sparse.csgraph import connected_components
    rho = (base + g * s) * (1 + MARGIN)
    gap = np.abs(c[:, None] - c[None, :]) * (1 - MARGIN)
    _, label = connected_components(gap <= rho[:, None] + rho[None, :], directed=False)
    return label, np.bincount(label), rho


def _values_hold(c, base, g, d, s) -> bool:
    label, size, rho = components(c, base, g, s)
    inside = d <= rho[None, :]
    if not inside.any(axis=1).all():
        return False
    got = np.bincount(label[np.argmax(inside, axis=1)], minlength=size.size)
    return bool((got == size).all())


def _least(cands: np.ndarray, holds) -> float:
    """The least candidate where `holds` (monotone), inf where none."""
    cands = np.unique(cands[np.isfinite(cands)])
    if cands.size == 0 or not holds(cands[-1]):
        return math.inf
    lo, hi = 0, cands.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(cands[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(cands[lo])


def values_s(d: dict, w: np.ndarray) -> float:
    """s* of the module docstring for the backend's values `w` (n,) of one matrix."""
    c, base, coef, unit = _unpack(d)
    if c.size == 0:
        return 0.0
    w = np.asarray(w, dtype=np.complex128).reshape(-1)
    if w.size != c.size or not np.isfinite(w).all():
        return math.inf
    g = coef * unit
    dist = np.abs(w[:, None] - c[None, :]) * (1 - MARGIN)
    enter = _ratio(dist - base[None, :], g[None, :])
    gap = np.abs(c[:, None] - c[None, :]) * (1 - MARGIN)
    meet = _ratio(gap - base[:, None] - base[None, :], g[:, None] + g[None, :])
    return _least(np.concatenate([enter.ravel(), meet.ravel(), [0.0]]),
                  lambda s: _values_hold(c, base, g, dist, s))


def isolated_radii(d: dict, s: float) -> np.ndarray:
    """Per eigenvalue i, the radius of a disc about λ̃ᵢ that holds exactly one
    eigenvalue of every A + E with ‖E‖₂ ≤ s·U, or inf where none is found
    (module docstring, "First order")."""
    c, base, coef, unit = _unpack(d)
    n = c.size
    if n == 0 or "fabs" not in d:
        return np.full(n, np.inf)
    up = 1 + MARGIN
    B = (np.asarray(d["fabs"], dtype=np.float64).reshape(n, n)
         + np.outer(np.asarray(d["ynorm"]), np.asarray(d["xnorm"])) * (s * unit)) * up   # βᵢⱼ ≥ |Gᵢⱼ|
    diag = np.diagonal(B).copy()
    r = (B.sum(axis=1) - diag) * up
    gap = np.abs(c[:, None] - c[None, :])
    out = np.full(n, np.inf)
    for i in range(n):
        k = np.arange(n) != i
        bki = B[k, i]
        # disc i scaled by δ (row i times δ, column i over δ) is apart from every other k's when
        # δ·rᵢ + βₖᵢ/δ < cₖ = |λ̃ᵢ − λ̃ₖ| − βᵢᵢ − βₖₖ − rₖ + βₖᵢ; the least such δ is the largest root below
        ck = (gap[i, k] * (1 - MARGIN) - (diag[i] + diag[k] + r[k]) * up + bki) - MARGIN * (gap[i, k] + r[k])
        if (ck <= 0).any():
            continue
        disc = ck * ck - 4 * r[i] * bki
        if (disc < 0).any():
            continue
        lo = (2 * bki / (ck + np.sqrt(disc))).max(initial=0.0) * (1 + 2.0 ** -30) + np.finfo(float).tiny
        if not (lo * r[i] + bki / lo < ck).all():
            continue
        out[i] = (diag[i] + lo * r[i]) * up
    return out


def first_order_holds(d: dict, w: np.ndarray, t: float) -> bool:
    """Exactly one of the values `w` in each disc `isolated_radii` finds at s = t."""
    c, *_ = _unpack(d)
    rho = isolated_radii(d, t)
    keep = np.isfinite(rho)
    if not keep.any():
        return True
    w = np.asarray(w, dtype=np.complex128).reshape(-1)
    inside = np.abs(w[:, None] - c[None, keep]) * (1 - MARGIN) <= rho[None, keep]
    return bool((inside.sum(axis=0) == 1).all())


def values_measure(d: dict, w: np.ndarray, t: float) -> float:
    """The criterion's measure: s* (`values_s`) where every first-order disc at
    s = t holds exactly one value, else inf (a value out of its disc)."""
    s = values_s(d, w)
    return s if first_order_holds(d, w, t) else math.inf


def radius_range(d: dict, t: float) -> tuple[float, float] | None:
    """(low, high): every max |ŵ| of values passing at s = t — each value in a
    disc of its component, a component of k discs holding k values, a
    first-order disc one (oracle/eigenvalues.py); None without discs."""
    c, base, coef, unit = _unpack(d)
    rho = radii_at(d, t)
    if c.size == 0 or not np.isfinite(rho).all():
        return None
    mag = np.abs(c)
    label, _, _ = components(c, base, coef * unit, t)
    low = max(float(np.min(mag[label == k] - rho[label == k])) for k in np.unique(label))
    iso = isolated_radii(d, t)
    if np.isfinite(iso).any():
        low = max(low, float(np.max((mag - iso)[np.isfinite(iso)])))
    return max(low, 0.0), float(np.max(mag + rho))


def values_detail(d: dict, w: np.ndarray, t: float) -> str:
    """What fails at s = t, in words."""
    c, base, coef, unit = _unpack(d)
    w = np.asarray(w, dtype=np.complex128).reshape(-1)
    if not np.isfinite(w).all():
        return "a NaN or inf among the values"
    label, size, rho = components(c, base, coef * unit, t)
    inside = np.abs(w[:, None] - c[None, :]) * (1 - MARGIN) <= rho[None, :]
    out = int((~inside.any(axis=1)).sum())
    got = np.bincount(label[np.argmax(inside, axis=1)][inside.any(axis=1)], minlength=size.size)
    wrong = [(int(size[k]), int(got[k])) for k in range(size.size) if got[k] != size[k]]
    words = []
    if not first_order_holds(d, w, t):
        words.append("a first-order disc holding no value or more than one")
    if out:
        words.append(f"{out} value(s) outside every disc")
    if wrong:
        k, m = wrong[0]
        words.append(f"{len(wrong)} component(s) holding another count of values (one of {k} disc(s) holds {m})")
    return "; ".join(words) or "every value in its disc"


def radii_at(d: dict, t: float) -> np.ndarray:
    c, base, coef, unit = _unpack(d)
    return (base + coef * unit * t) * (1 + MARGIN)


def vectors_s(d: dict, A: np.ndarray, V: np.ndarray, t: float, uw: float) -> tuple[float, float]:
    """(the least s of the matching, max |‖v̂ⱼ‖₂ − 1|/(n·ε)) for one matrix A (n, n)
    and the backend's columns V (n, n), both in the working format (module docstring)."""
    from scipy.optimize import linear_sum_assignment
    c, base, coef, unit = _unpack(d)
    n = c.size
    if n == 0:
        return 0.0, 0.0
    if not np.isfinite(V).all():
        return math.inf, math.inf
    rho = radii_at(d, t)
    label, size, _ = components(c, base, coef * unit, t)
    norms = np.sqrt((np.abs(V) ** 2).sum(axis=0))
    # ‖(A − λ̃ᵢ)·v̂ⱼ‖₂ for every (column j, disc i), less its rounding: γ(n + 3)·(‖|A|·|v̂ⱼ|‖₁ + |λ̃ᵢ|·‖v̂ⱼ‖₁)
    res = np.sqrt((np.abs((A @ V)[:, :, None] - V[:, :, None] * c[None, None, :]) ** 2).sum(axis=0))
    err = gamma(n + 3, uw) * ((np.abs(A) @ np.abs(V)).sum(axis=0)[:, None]
                              + np.abs(V).sum(axis=0)[:, None] * np.abs(c)[None, :])
    need = _ratio(np.asarray((res - err) * (1 - MARGIN) - rho[None, :] * norms[:, None], dtype=np.float64),
                  np.full((1, n), unit))
    comp = np.column_stack([need[:, label == k].min(axis=1) for k in range(size.size)])
    cost = comp[:, np.repeat(np.arange(size.size), size)]   # (column j, one slot per disc of each component)

    def holds(s):
        miss = np.where(cost <= s, 0.0, 1.0)
        r, k = linear_sum_assignment(miss)
        return bool(miss[r, k].sum() == 0)

    unit_n = n * float(d["u"])
    return _least(np.concatenate([cost.ravel(), [0.0]]), holds), float(np.max(np.abs(norms - 1))) / unit_n
