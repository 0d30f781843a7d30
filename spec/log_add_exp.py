"""Reductions by log-add-exp: `lax.cumlogsumexp`, `lax.reduce(…, jnp.logaddexp, …)`.

JAX lowers `lax.cumlogsumexp` to a `reduce_window` (init −inf, a window
the length of the axis, padded in front) whose body is `jnp.logaddexp`
(jax/_src/lax/other.py, `logaddexp`):

    m = maximum(a, b);  d = subtract(a, b)
    return select(compare(NE, d, d), add(a, b),
                  add(m, log_plus_one(exponential(negate(abs(d))))))

No pairwise monoid, and two of its ops are approximate: before this
module the oracle enumerated schedules through the body's correctly
rounded values — judging a body a backend may evaluate within the
tolerance of `exponential` and `log_plus_one` as if it were exact (XLA's
cumlogsumexp over 8 elements: DISAGREES by 1 ulp) — and said "any value"
past 12 leaves.  What every schedule gives, with every tolerance, is
stated instead:

* *special values* decide every schedule alike: a NaN leaf gives NaN (the
  maximum propagates it, d is NaN, a + b is NaN); else a +inf leaf gives
  +inf (d is ±inf or NaN, and both branches are +inf); −inf leaves and the
  init −inf are the body's exact identity (x + log1p(exp(−inf)) = x + 0:
  `exponential` states exp(−inf) = +0 and `log_plus_one` log1p(0) = 0
  exactly, no tolerance), so only the n finite leaves count; one finite
  leaf is the result itself (zero up to its sign: "bounded" compares ±0
  equal); none gives −inf.
* *n ≥ 2 finite leaves*: with LSE(S) = log Σ_{x∈S} eˣ, the body at finite
  a, b computes LSE(a, b) + δ with |δ| ≤ Δ = c + u·R, where u = 2^-p is
  the format's unit roundoff, R bounds |m + log1p(ê)| (below), and c is
  the sum of (writing ρ(T) = u + T·2u·(1 + 2u)^T·(1 + u) and σ(T) =
  2(T + 1)·min_subnormal, the relative and absolute error of a result
  within T ulps of the correctly rounded one — each ulp step from v moves
  by at most 2u·|v|, or one subnormal step):
  - `d` rounded: |d̂ − d| ≤ u·|d| (a difference in the subnormal range is
    exact), so |e^-|d̂| − e^-|d|| ≤ u·t·e^(−t(1−u)) ≤ 0.38u (t = |d|; an
    overflowing d gives exp(−inf) = 0, within e^-t ≤ 0.38u too);
  - `exponential` within T_e ulps: |ê − e^-|d̂|| ≤ ρ_e + σ_e (its value ≤ 1);
  - `log_plus_one` of ê (≥ −T_e·min_subnormal, so log1p' ≤ 1.01):
    1.01·(ρ_e + σ_e + 0.38u) from ê's error, and within T_l ulps of a
    value ≤ log(2 + ρ_e): ρ_l·(0.7 + ρ_e) + σ_l;
  - the final `add` rounded: u·|m + L̂| ≤ u·R (a sum in the subnormal range
    is exact); `maximum`, `abs` and `negate` are exact.
  LSE is 1-Lipschitz in the max norm (|LSE(a, b) − LSE(a', b')| ≤
  max(|a − a'|, |b − b'|)), so by induction a subtree of depth k is within
  k·Δ of the LSE of its leaves, and every schedule — any tree over the n
  finite leaves, of depth ≤ n − 1; identity nodes add nothing — lies within
  B = (n − 1)·Δ of LSE(leaves).  Every node is the LSE of a contiguous run of
  leaves ± B, so |node| ≤ R = R₀ + B with R₀ = max(|min leaf|, |max leaf +
  log n|); solving Δ = c + u(R₀ + (n − 1)Δ) gives Δ = (c + u·R₀)/(1 − u(n − 1)).
  The element is the `Range` [LSE − B, LSE + B], nearest LSE.  Where a
  node may reach the overflow threshold (max leaf + log n + B), or
  u·(n − 1) ≥ 1/2 (f16 past 1,024 leaves: no useful bound), any value,
  labelled.

LSE itself is evaluated in the working type W of spec/bounds.py (float64
for formats of at most 24 bits, long double for f64) as M + log Σ e^(x−M),
M the largest leaf, and enclosed by a margin of 16·ε_W·(|M| + log n + n + 1):
the differences and the sum cost at most (n + 1)·ε_W/2 relative each, exp
and log at most 4 ulps of W each (glibc's and numpy's double and long
double functions are documented within that), the final add ε_W/2·|s| —
a margin at least twice the sum of these.  The same function serves whole
arrays (`enclose`, spec/bounds.py's stage) and one element (`element`), so
both routes state the same bits.

Recognised on the reader's block as spec/selection.py recognises argmax:
the body's return as a canonical expression tree (spec/expression.py),
equal to the tree above with d = a − b or b − a, and m the maximum or
select(a < b, b, a) — a single max instruction's form, which a compiler
may use (oracle/rewrites.py "fast min/max") and which differs from the
maximum only where a or b is NaN, and on ±0 ties, which take the other
branch or add log 2 — over one float type (not complex), init −inf.  `T_e`, `T_l` are the tolerances the body's own ops
are judged with (spec/accuracy.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import bounds, expression
from .accuracy import tolerance_ulp
from .dsl import Range
from .types import FloatFormat

READ = frozenset({"maximum", "subtract", "add", "abs", "negate", "exponential", "log_plus_one", "select"})
OVERFLOW = "any value: a partial result may overflow in some schedule"
TOO_MANY = "any value: too many leaves for the format's precision to bound every schedule"
APPROXIMATE = ("exponential", "log_plus_one")


@dataclass(frozen=True)
class LogAddExp:
    """A recognised log-add-exp body over format `fmt`, whose exponential
    and log_plus_one are judged within `t_exp` and `t_log` ulps."""

    fmt: FloatFormat
    t_exp: int
    t_log: int

    @property
    def per_node(self) -> tuple[float, float]:
        """(c, u) of the module docstring, c rounded up."""
        u = self.fmt.unit_roundoff
        q = 2 * u

        def rho(t):
            return u + t * q * (1 + q) ** t * (1 + u)

        def sigma(t):
            return 2 * (t + 1) * self.fmt.min_subnormal

        re, rl = rho(self.t_exp), rho(self.t_log)
        c = rl * (Fraction(7, 10) + re) + sigma(self.t_log) \
            + Fraction(101, 100) * (re + sigma(self.t_exp) + Fraction(38, 100) * u)
        return math.nextafter(float(c), math.inf), float(u)


def _expected(ctype: str) -> list:
    a, b = expression.arg(0), expression.arg(1)
    op, cmp, out = expression.op, expression.compare, []
    larger = (op("maximum", a, b), op("select", cmp("LT", ctype, a, b), b, a),
              op("select", cmp("LT", ctype, b, a), a, b))
    for d in (op("subtract", a, b), op("subtract", b, a)):
        nan = cmp("NE", ctype, d, d)
        for m in larger:
            r = op("add", m, op("log_plus_one", op("exponential", op("negate", op("abs", d)))))
            out.append((op("select", nan, op("add", a, b), r),))
    return out


def recognise(block) -> LogAddExp | None:
    """The LogAddExp a reduce body computes (module docstring), or None."""
    if block is None or len(getattr(block, "returns", ())) != 1 or len(block.args) != 2:
        return None
    et = block.args[0][1].element_type
    if not et.is_float or block.args[1][1].element_type != et or getattr(et, "format", None) is None:
        return None
    got = expression.returns(block, READ)
    if got is None or got not in _expected(expression.legal_compare_types(et)[0]):
        return None
    t = {}
    for step in block.steps:
        name = step.inst.spec.mnemonic
        if name in APPROXIMATE:
            t[name] = tolerance_ulp(et, getattr(step.inst.spec.semantics, "tolerance", None))
    return LogAddExp(et.format, t["exponential"], t["log_plus_one"])


def of(fn) -> LogAddExp | None:
    """The LogAddExp of a region's Function, cached on its block."""
    return expression.cached(fn, "_log_add_exp", recognise)


IDENTITY = -math.inf   # the body's exact identity (module docstring): the one init every schedule may insert


def identity(init) -> bool:
    """Is `init` the init value every schedule may insert without effect (IDENTITY)?"""
    return isinstance(init, float) and init == IDENTITY


# Kinds of `enclose`'s rows, as spec/bounds.py's records name them (ELEMENT: any value, labelled)
RANGE, VALUE, ELEMENT = bounds.RANGE, bounds.VALUE, bounds.ELEMENT


def centre_margin(M, n, eps):
    """The margin of the centre's evaluation in the working type (module
    docstring): 16·ε_W·(|M| + log n + n + 1), rounded up, for the largest
    leaf M and n finite leaves — at least twice the documented sum
    (n + 1)·ε_W/2 (the differences and the sum) + 4·ε_W·(1 + log n) (exp and
    log, 4 ulps each, log's result at most |M| + log n) + ε_W/2·(|M| +
    log n) (the final add), tests/spec/test_log_add_exp.py."""
    W = type(eps)
    return bounds.above(W(16) * eps * (np.abs(M) + np.log(np.maximum(n, W(1))) + n + W(1)))


def enclose(lae: LogAddExp, X: np.ndarray, valid) -> tuple:
    """Per row of the leaves X (P×L float64 exact values, `valid` the mask
    of real leaves, None: all): (kind, value, s, lo, hi, why) — kind
    VALUE with `value`, RANGE with s = (low, high) enclosing LSE and the
    Range's ends lo, hi (points of the working type), or ELEMENT (any
    value) with the reason `why[i]`."""
    W = bounds.working(lae.fmt) or np.float64
    X = np.asarray(X, dtype=np.float64)
    P, L = X.shape
    ok = np.ones((P, L), dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    with np.errstate(invalid="ignore"):
        nan = (np.isnan(X) & ok).any(axis=1)
        pinf = ((X == np.inf) & ok).any(axis=1)
    fin = ok & np.isfinite(X)
    n = fin.sum(axis=1)
    kind = np.full(P, RANGE, dtype=np.int8)
    value = np.full(P, -np.inf)
    value[pinf] = np.inf
    value[nan] = np.nan
    first = np.argmax(fin, axis=1)
    single = X[np.arange(P), first]
    value = np.where(~nan & ~pinf & (n == 1), single, value)
    kind[nan | pinf | (n == 0) | ((n == 1) & (single != 0))] = VALUE
    why = np.full(P, "", dtype=object)

    Xw = np.where(fin, X, -np.inf).astype(W)
    M = np.where(n > 0, Xw.max(axis=1), W(0))
    mn = np.where(n > 0, np.where(fin, Xw, W(np.inf)).min(axis=1), W(0))
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        S = np.exp(np.where(fin, Xw - M[:, None], W(-np.inf))).sum(axis=1)
        logS = np.log(np.maximum(S, W(1)))
    s = M + logS
    nW = n.astype(W)
    eps = W(np.finfo(W).eps)
    margin = centre_margin(M, nW, eps)
    s_lo, s_hi = bounds.add_dn(s, -margin), bounds.add_up(s, margin)
    c, u = (W(x) for x in lae.per_node)
    ln_n = bounds.above(np.log(np.maximum(nW, W(1))))
    R0 = np.maximum(np.abs(mn), np.abs(bounds.add_up(M, ln_n)))
    room = bounds.below(W(1) - u * np.maximum(nW - 1, W(0)))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        delta = bounds.above(bounds.add_up(c, bounds.mul_up(R0, u)) / room)
        B = bounds.mul_up(np.maximum(nW - 1, W(0)), delta)
    lo, hi = bounds.add_dn(s_lo, -B), bounds.add_up(s_hi, B)
    many = (kind == RANGE) & (u * np.maximum(nW - 1, W(0)) >= W(0.5))
    top = W(float(bounds.threshold(lae.fmt)))
    over = (kind == RANGE) & ~many & ~(bounds.add_up(bounds.add_up(M, ln_n), B) < top)
    kind[many | over] = ELEMENT
    why[many] = TOO_MANY
    why[over] = OVERFLOW
    zero = (kind == RANGE) & (n == 1)   # one finite leaf, a zero: ±0 by whether an identity joined it
    for a in (s_lo, s_hi, lo, hi):
        a[zero] = W(0)
    return kind, value, (s_lo, s_hi), lo, hi, why


def element(lae: LogAddExp, xs: list[float]):
    """One reduction's answer (a float, a `Range` or any value) from its
    leaves' exact values: `enclose` of one row, in rationals."""
    from .schedule import any_value
    kind, value, s, lo, hi, why = enclose(lae, np.array([xs], dtype=np.float64), None)
    if kind[0] == VALUE:
        return float(value[0])
    mid = (bounds.exact_of(s[0][0]) + bounds.exact_of(s[1][0])) / 2
    if kind[0] == ELEMENT:
        return any_value(why[0], mid)
    return Range(mid, bounds.exact_of(lo[0]), bounds.exact_of(hi[0]))


def answers(lae: LogAddExp, X: np.ndarray, valid, element_of) -> "bounds.Answers":
    """The whole-array record of reductions of the rows of X (`enclose`),
    `element_of(i)` the per-element route of row i."""
    kind, value, s, lo, hi, why = enclose(lae, X, valid)

    def stage(idx):
        return (s[0][idx], s[1][idx]), (lo[idx], lo[idx]), (hi[idx], hi[idx])
    probes = {RANGE: bounds.range_probe(), VALUE: 0.0}
    return bounds.Answers((X.shape[0],), kind, value, (stage,), element_of, probes)
