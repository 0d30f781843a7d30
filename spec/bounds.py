"""Accumulations on whole arrays: spec/schedule.py's answers, stated by enclosures.

spec/schedule.py states, per element, what every allowed schedule of a
reduction may give — the exact result `s` and a bound `b` (a `Range`), a
value every schedule agrees on, or "any value" where a partial result may
overflow — with exact rationals.  Here the same statement is made for a
whole result at once: an `Answers` record classifies each element (range,
value, overflow, or "per element") with vectorised tests, and encloses the
three reals a range is made of — s, s − b, s + b — in intervals of a wider
float type (`working`: float64 for formats of at most 24 bits of precision
and f32's exponent range, x87 long double for f64).  The oracle rounds
both ends of each interval into the result's format (oracle/accumulate.py):
where they agree, the element's bits are the ones the exact route gives —
not an approximation of them —; where they do not, a later, tighter stage
encloses it again, and the last resort is the exact route itself
(`Answers.element`, the op module's per-element statement).  So the
whole-array route and the exact one state the same expectation, bit for
bit (tests/spec/test_bounds.py shows it on 10^5 sums and products).

Stages and why each enclosure holds (u₆₄ = 2^-53, γ₆₄(k) = k·u₆₄/(1 − k·u₆₄);
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1,
§4.2: a sum of k terms computed in floating point in any order — any tree,
fused multiply-adds, blocking — is within γ(k−1)·Σ|terms| of the exact one,
and a sum that lands in the subnormal range is exact, so no underflow term;
docs/oracle-evaluation.md, "Accumulations on whole arrays", has the long
form):

1. *BLAS* (`float_dot`) or numpy sums (`float_sum`): S = fl(Σ pᵢ) and
   M = fl(Σ |pᵢ|) over the products pᵢ = aᵢ·bᵢ (or the terms).  For formats
   narrower than f64 the products are exact in float64 (at most 2·24
   significant bits, exponents within [-298, 256]) and no float64 sum of
   them overflows, so |S − s| ≤ γ₆₄(k−1)·mag and |M − mag| ≤ γ₆₄(k−1)·mag,
   hence mag ∈ [M/(1 + γ), M/(1 − γ)] and |S − s| ≤ γ/(1 − γ)·M — 2^29
   times below f32's own γ.  Each end of each enclosure is then S + k·M + c
   for rationals k, c, evaluated in the working type and moved outward by a
   bound on its own rounding error (`_Stage1._fused`).  For f64 inputs the
   products are rounded (and may underflow: ≤ 2^-1075 each), so
   |S − s| ≤ γ₆₄(k)·mag + k·2^-1074 — about the allowance itself: stage 1
   decides few f64 elements (single terms, zeros) but classifies them all;
   its quantities are taken with every operation rounded outward (`below`,
   `above`).  Sums of f64 terms are taken in long double (u = 2^-64).
2. *TwoSum cascade* (`cascade`): the terms of each element the first stage
   leaves, listed exactly as floats (narrow formats: the products; f64:
   Dekker's TwoProduct split of each product into two floats, exact when no
   factor exceeds 2^995 and no nonzero product is below 2^-969), summed by
   a pairwise tree of TwoSums whose errors are kept and summed with a
   bound: an enclosure about 2^-52·|s| wide (Ogita–Rump–Oishi's Sum2).
3. *fsum*: Python's `math.fsum`, the correctly rounded binary64 sum of
   floats, gives h = RN(s); a second fsum with −h appended gives
   l = RN(s − h), so s = h exactly where l = 0, else s lies within one
   step of h + l.
4. *exact*: `Answers.element(i)`, the op's own per-element statement in
   rationals (spec/schedule.py), for what is still undecided — exact ties,
   sums within about 2^-50 of a rounding boundary, dot products of
   subnormal products, classes the enclosures cannot settle.

Float products (`float_product`, `jnp.prod` and `jnp.cumprod`) take their
own two stages — a pairwise tree in W, then double-double — and classify
overflow and underflow on run sums of log₂ magnitudes (the section above
`float_product`; docs/oracle-evaluation.md, "Float products").

Classification (each as spec/schedule.py decides it, on enclosures; an
element whose class the enclosures cannot tell goes to the per-element
route): a NaN term, 0 × ∞, or infinities of both signs — the value NaN; an
infinity of one sign — that value; mag·(1 + γ) at or past the format's
overflow threshold (or γ undefined: n·u ≥ 1) — "any value", labelled, with
the infinity or the exact result rounded as primary; an empty dot
product — +0.  Integers are exact through numpy where no partial sum can
overflow int64 (Python integers in object arrays otherwise); maximum and
minimum are exact (IEEE's, +0 above −0, NaN wins).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

import numpy as np

from .dsl import Range
from .types import ElementType, FloatFormat, long_double_exact

RANGE, VALUE, OVER, ELEMENT = 0, 1, 2, 3
FSUM_CHUNK = 1 << 20            # stage 2 gathers at most this many terms at once



def working(fmt: FloatFormat):
    """The float type whole-array enclosures of `fmt` results are computed
    in: float64 for formats narrower than f64 (products exact), long double
    (64-bit significand, checked at each use: `types.long_double_exact`) for
    f64, else None (no whole-array route: the per-element one states
    everything)."""
    if fmt.precision <= 24 and fmt.emax <= 127:
        return np.float64
    if fmt.precision == 53 and long_double_exact():
        return np.longdouble
    return None


@dataclass(eq=False)
class Answers:
    """The element answers of one whole result (flat, row-major over `shape`),
    by kind:

    * RANGE: a `Range` — the exact result s and [s − b, s + b] — given by
      `stages`: callables `stage(idx) -> (s, lo, hi)`, each a pair (low,
      high) of arrays in the working type enclosing s, s − b, s + b at the
      flat indices `idx` (NaN where a stage cannot enclose an element);
    * VALUE: one exact value every schedule gives, `value[i]` (float64 with
      its specials, or integers);
    * OVER: "any value", a partial result may overflow; primary `value[i]`
      where `over_value[i]` (an infinity), else the exact result rounded
      (its enclosure from the stages);
    * ELEMENT: stated by `element(i)`, the op's per-element route, which
      also answers any element the stages leave undecided.

    `probes[kind]` is an answer of that kind as the per-element route
    writes it (its labels and reasons, not its value: the oracle reads the
    alternatives' names from it); `wrap(answer)` is applied to every
    element's answer (dot_general's precision label), labels independent of
    the value."""

    shape: tuple
    kind: np.ndarray
    value: np.ndarray
    stages: tuple
    element: Callable
    probes: dict
    over_value: Optional[np.ndarray] = None
    wrap: Optional[Callable] = None

    def __post_init__(self):
        if self.over_value is None:
            self.over_value = np.zeros(len(self.kind), dtype=bool)
        self._objects = None

    # -- the object array it stands for -------------------------------------
    def objects(self) -> np.ndarray:
        """The element answers this record states, as an object array of
        `shape`, each from the per-element route (`wrap(element(i))`): what
        the op's semantics give element by element.  A record also reads as
        that array (np.asarray, indexing, tolist, reshape …), so callers that
        look at answers one by one need not know the whole-array form."""
        if self._objects is None:
            wrap = self.wrap or (lambda a: a)
            out = np.empty(len(self.kind), dtype=object)
            for i in range(len(out)):
                out[i] = wrap(self.element(i))
            self._objects = out.reshape(self.shape)
        return self._objects

    def __array__(self, dtype=None, copy=None):
        return self.objects() if dtype in (None, object) else self.objects().astype(dtype)

    def __getitem__(self, key):
        return self.objects()[key]

    def __len__(self):
        return len(self.objects())

    def __iter__(self):
        return iter(self.objects())

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.objects(), name)

    def permuted(self, src: np.ndarray, shape: tuple) -> "Answers":
        """The same answers laid out as `shape`, whose flat element j is this
        record's element src[j] (a transposed result)."""
        src = np.asarray(src, dtype=np.int64).reshape(-1)
        return Answers(tuple(shape), self.kind[src], self.value[src],
                       tuple((lambda idx, st=st: st(src[idx])) for st in self.stages),
                       lambda i: self.element(int(src[i])), self.probes, self.over_value[src], self.wrap)

    def wrapped(self, wrap: Optional[Callable]) -> "Answers":
        self.wrap = wrap
        return self


def combine(shape: tuple, parts: list, element: Callable, probes: dict) -> Answers:
    """One record of `shape` from parts (record, flat indices in the whole):
    each part states the elements it covers (in its own order); `element`
    answers any element of the whole."""
    size = int(np.prod(shape, dtype=np.int64))
    kind = np.full(size, ELEMENT, dtype=np.int8)
    value = None
    over_value = np.zeros(size, dtype=bool)
    owner = np.full(size, -1, dtype=np.int64)
    local = np.zeros(size, dtype=np.int64)
    for p, (rec, where) in enumerate(parts):
        where = np.asarray(where, dtype=np.int64).reshape(-1)
        if value is None:
            value = np.zeros(size, dtype=rec.value.dtype)
        elif value.dtype != rec.value.dtype:
            value = value.astype(np.result_type(value.dtype, rec.value.dtype))
        kind[where], value[where], over_value[where] = rec.kind, rec.value, rec.over_value
        owner[where], local[where] = p, np.arange(len(where))
    if value is None:
        value = np.zeros(size)
    depth = max((len(rec.stages) for rec, _ in parts), default=0)

    def stage_at(k):
        def stage(idx):
            out = None
            for p, (rec, _) in enumerate(parts):
                mine = np.flatnonzero(owner[idx] == p)
                if not len(mine) or k >= len(rec.stages):
                    continue
                got = rec.stages[k](local[idx[mine]])
                if out is None:
                    out = tuple((np.full(len(idx), np.nan, dtype=a.dtype), np.full(len(idx), np.nan, dtype=z.dtype))
                                for a, z in got)
                for (oa, oz), (a, z) in zip(out, got):
                    oa[mine], oz[mine] = a, z
            if out is None:
                nan = np.full(len(idx), np.nan)
                out = ((nan, nan),) * 3
            return out
        return stage

    return Answers(tuple(shape), kind, value, tuple(stage_at(k) for k in range(depth)), element, probes, over_value)


def values(array, et: ElementType) -> np.ndarray:
    """The exact values of an operand as a numpy array: float64 for floats
    (every format widens exactly), int64 (uint64 for ui64) for integers,
    bool for i1, complex128 — `types.exact_values` without the Python
    objects."""
    a = np.asarray(array)
    if et.is_bool:
        return a.astype(np.bool_)
    if et.is_integer:
        return a.astype(np.int64 if et.is_signed or et.bits < 64 else np.uint64)
    if et.is_complex:
        return a.astype(np.complex128)
    return a.astype(np.float64)


# --------------------------------------------------------------------------
# Outward arithmetic in the working type
# --------------------------------------------------------------------------

_WIDEN = {}


def _widen(dtype):
    """(c, t) for outward steps in `dtype`: c = 2^(2 − precision), t its
    smallest subnormal (below)."""
    got = _WIDEN.get(dtype)
    if got is None:
        fi = np.finfo(dtype)
        got = _WIDEN[dtype] = (np.ldexp(dtype.type(1), -(fi.nmant - 1)), fi.smallest_subnormal)
    return got


def below(x):
    """A value ≤ the exact real that x = RN(real) stands for (the result of
    one operation rounded to nearest): x − (|x|·2^(2−p) + the smallest
    subnormal).  For normal x, |x|·2^(2−p) ≥ 2·ulp(x) ≥ 4 × the rounding
    error, and the subtraction's own rounding (≤ ulp(x), a binade further
    out at most) leaves at least ulp(x)/2 below x; for subnormal x the
    smallest subnormal is one whole step.  Cheaper than np.nextafter, and
    two or three steps below x instead of one."""
    c, t = _widen(x.dtype)
    return x - (np.abs(x) * c + t)


def above(x):
    c, t = _widen(x.dtype)
    return x + (np.abs(x) * c + t)


def add_dn(a, b):
    """a + b rounded toward −∞: exact where a term is 0, else a little
    below the sum rounded to nearest (`below`)."""
    if np.ndim(b) == 0 and b == 0:
        return a
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        return np.where((a == 0) | (b == 0), s, below(s))


def add_up(a, b):
    if np.ndim(b) == 0 and b == 0:
        return a
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        return np.where((a == 0) | (b == 0), s, above(s))


def mul_dn(a, c):
    """a·c toward −∞ for a, c ≥ 0 (never below the exact 0 of a zero factor)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(below(a * c), a.dtype.type(0))


def mul_up(a, c):
    """a·c toward +∞ for a, c ≥ 0 (exactly 0 where a factor is 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where((a == 0) | (c == 0), a.dtype.type(0), above(a * c))


def bracket(q, W) -> tuple:
    """(lo, hi) values of the working type W with lo ≤ q ≤ hi (q a Fraction
    or int); lo == hi == q where q is representable."""
    q = Fraction(q)
    if q == 0:
        return W(0), W(0)
    mag = abs(q)
    e = mag.numerator.bit_length() - mag.denominator.bit_length() - 60
    m = (mag.numerator << max(0, -e)) // (mag.denominator << max(0, e))   # floor(|q| / 2^e), 60-61 bits
    lo = np.ldexp(W(m >> 8) * W(256) + W(m & 255), e)   # exact in W, then scaled (may round if subnormal)
    hi = np.ldexp(W((m + 1) >> 8) * W(256) + W((m + 1) & 255), e)
    lo, hi = _step_until(lo, mag, -1), _step_until(hi, mag, 1)
    return (lo, hi) if q > 0 else (-hi, -lo)


def exact_of(x) -> Fraction:
    return Fraction(*x.as_integer_ratio())


def _step_until(x, q: Fraction, direction: int):
    """x moved by nextafter until it lies on the wanted side of q (≤ q for
    direction −1, ≥ q for +1), and then as close as that allows."""
    W = type(x)
    target = W(-np.inf) if direction < 0 else W(np.inf)
    while np.isfinite(x) and ((exact_of(x) > q) if direction < 0 else (exact_of(x) < q)):
        x = np.nextafter(x, target)
    while np.isfinite(x):   # tighten: the neighbour toward q may still be on the right side
        y = np.nextafter(x, -target)
        if not np.isfinite(y) or ((exact_of(y) > q) if direction < 0 else (exact_of(y) < q)):
            break
        x = y
    return x


def _plus_zero(x):
    """−0.0 → +0.0: an exact zero is +0 (the exact route's Fraction 0)."""
    return x + x.dtype.type(0)


def log2_of(q) -> float:
    """log₂ of a positive Fraction (or int), past float's range too."""
    q = Fraction(q)
    return math.log2(q.numerator) - math.log2(q.denominator)


def gamma(k: int, fmt: FloatFormat) -> Fraction | None:
    ku = k * fmt.unit_roundoff
    return None if ku >= 1 else ku / (1 - ku)


def gamma_u(k: int, u: Fraction) -> Fraction:
    """Higham's γ_k = ku / (1 − ku): the relative error bound of k rounding
    steps of unit roundoff u (each step's error compounds with the others)."""
    ku = k * u
    if ku >= 1:
        raise ValueError("working precision too small for this many terms")
    return ku / (1 - ku)


def threshold(fmt: FloatFormat) -> Fraction:
    """The least magnitude that rounds to infinity (or NaN in f8E4M3FN)."""
    return fmt.max_finite + fmt.ulp(fmt.max_finite) / 2


# --------------------------------------------------------------------------
# Stage 1 enclosures and classification, shared by sums and dot products
# --------------------------------------------------------------------------

@dataclass
class _Sums:
    """Per element: S, M (working type) with |S − s| ≤ err_s·(M + eta) + eta
    and mag ∈ [(M − eta)·m_lo, (M + eta)·m_hi]; n terms (array) for γ_fmt."""
    S: np.ndarray
    M: np.ndarray
    err: Fraction          # |S − s| ≤ err·(M + eta) + eta
    m_lo: Fraction         # mag ≥ (M − eta)·m_lo
    m_hi: Fraction         # mag ≤ (M + eta)·m_hi
    eta: Fraction          # absolute slack (f64 products that underflow)


def _per_n(n, f: Callable, W):
    """(lo, hi) enclosures of f(k) (a Fraction, or None) per element count:
    scalars for one count, arrays for an array of counts; NaN where f is
    None."""
    if np.ndim(n) == 0:
        q = f(int(n))
        return (W(np.nan), W(np.nan)) if q is None else bracket(q, W)
    lo, hi = np.full(len(n), np.nan, dtype=W), np.full(len(n), np.nan, dtype=W)
    ks, inverse = np.unique(n, return_inverse=True)
    for j, k in enumerate(ks.tolist()):
        q = f(int(k))
        if q is not None:
            lo[inverse == j], hi[inverse == j] = bracket(q, W)
    return lo, hi


class _Stage1:
    """Stage 1 (module docstring) on the elements asked for: enclosures of
    s and b from the sums S, M, and of s, s − b, s + b.  Lazy, so the
    oracle can take it in cache-sized chunks."""

    def __init__(self, sums: _Sums, n, gamma_of: Callable, c0_of: Callable, W):
        self.W, self.n = W, n
        S, M = sums.S.astype(W, copy=False), sums.M.astype(W, copy=False)
        self.finite = np.isfinite(S) & np.isfinite(M)
        if not self.finite.all():
            S = np.where(self.finite, S, W(0))
            M = np.where(self.finite, M, W(0))
        self.S, self.M = S, M
        self.exact = sums.err == 0 and sums.eta == 0
        self.eta = None if sums.eta == 0 else bracket(sums.eta, W)[1]
        self.err = bracket(sums.err, W)[1]
        self.m_lo = None if sums.m_lo == 1 else bracket(sums.m_lo, W)[0]
        self.m_hi = None if sums.m_hi == 1 else bracket(sums.m_hi, W)[1]
        self.g = _per_n(n, gamma_of, W)
        self.c = _per_n(n, c0_of, W)
        self.fused = None if sums.eta != 0 else self._coefficients(sums, n, gamma_of, c0_of, W)

    @staticmethod
    def _coefficients(sums: _Sums, n, gamma_of: Callable, c0_of: Callable, W) -> dict:
        """Where mag is within [M·m_lo, M·m_hi] and s within S ± err·M (no
        absolute slack), each end of each enclosure is S + k·M + c for
        rationals k, c: s ∓ err·M; s − b from S − (err + γ·m_hi)·M − c₀ to
        S + (err − γ·m_lo)·M − c₀; s + b from S − (err − γ·m_lo)·M + c₀ to
        S + (err + γ·m_hi)·M + c₀.  Their values in W (within one step), per
        count of terms; NaN where γ is undefined."""
        def per_n(f):
            if np.ndim(n) == 0:
                q = f(int(n))
                return W(np.nan) if q is None else bracket(q, W)[0]
            out = np.full(len(n), np.nan, dtype=W)
            ks, inverse = np.unique(n, return_inverse=True)
            for j, k in enumerate(ks.tolist()):
                q = f(int(k))
                if q is not None:
                    out[inverse == j] = bracket(q, W)[0]
            return out
        err, m_lo, m_hi = sums.err, sums.m_lo, sums.m_hi

        def gm(k, m):
            g = gamma_of(k)
            return None if g is None else g * m
        return {
            "s": bracket(err, W)[0],
            "lo_lo": per_n(lambda k: None if gm(k, m_hi) is None else -(err + gm(k, m_hi))),
            "lo_hi": per_n(lambda k: None if gm(k, m_lo) is None else err - gm(k, m_lo)),
            "hi_lo": per_n(lambda k: None if gm(k, m_lo) is None else gm(k, m_lo) - err),
            "hi_hi": per_n(lambda k: None if gm(k, m_hi) is None else err + gm(k, m_hi)),
            "c": per_n(lambda k: c0_of(k)),
            "exact_ends": bool(np.ndim(n) == 0 and err == 0 and gamma_of(int(n)) == 0 and c0_of(int(n)) == 0),
        }

    def _fused(self, idx):
        """Stage 1 where the sums carry no absolute slack, in few passes: each
        end S + k·M + c is evaluated in W to nearest and moved outward by
        2^(5−p)·X, X = |S| + |k|max·M + |c| (p the precision of W).  Why that
        covers it: k and c are within one step (2u, u = 2^-p) of the
        rationals, and the three roundings of the evaluation and the one of
        the final move are each within u of a value at most X(1 + 2^-50), so
        the error is below 8u·X ≤ 2^(5−p)·X/4; X is computed with three
        roundings (≥ X(1 − 4u)).  No value here is subnormal in W (S and M
        are sums of products of format values, at least 2^-298 when not
        zero; long double reaches 2^-16445), so no absolute term is needed.
        Elements with M = 0 have S = 0, and s = 0 exactly: their ends ∓c₀
        are set exactly (the bracket of c₀)."""
        W, co = self.W, self.fused
        S, M = _plus_zero(self.S[idx]), self.M[idx]

        def at(v):
            return v if np.ndim(v) == 0 else v[idx]
        lo_lo, lo_hi, hi_lo, hi_hi, c = at(co["lo_lo"]), at(co["lo_hi"]), at(co["hi_lo"]), at(co["hi_hi"]), at(co["c"])
        if co["exact_ends"]:   # one term, γ = 0: s, s − b, s + b are all S
            return (S, S), (S, S), (S, S)
        f = W(2.0 ** (5 - np.finfo(W).nmant - 1))
        absS = np.abs(S)
        slack = (absS + hi_hi * M + np.abs(c)) * f   # NaN where γ is undefined: those elements need s only
        if co["s"] == 0:
            s = (S, S)
        else:
            e = co["s"] * M
            slack_s = (absS + e) * f
            s = (S - e - slack_s, S + e + slack_s)
        lo = (S + lo_lo * M - c - slack, S + lo_hi * M - c + slack)
        hi = (S + hi_lo * M + c - slack, S + hi_hi * M + c + slack)
        zero = M == 0
        if zero.any():
            c_lo, c_hi = self._at(self.c, idx)
            z = W(0)
            s = (np.where(zero, z, s[0]), np.where(zero, z, s[1]))
            lo = (np.where(zero, -c_hi, lo[0]), np.where(zero, -c_lo, lo[1]))
            hi = (np.where(zero, c_lo, hi[0]), np.where(zero, c_hi, hi[1]))
        return s, lo, hi

    def _at(self, pair, idx):
        lo, hi = pair
        return (lo, hi) if np.ndim(lo) == 0 else (lo[idx], hi[idx])

    def mag(self, idx):
        M = self.M[idx]
        if self.eta is None:
            Mlo = Mhi = M
        else:
            Mlo, Mhi = np.maximum(below(M - self.eta), self.W(0)), above(M + self.eta)
        mag_lo = Mlo if self.m_lo is None else mul_dn(Mlo, self.m_lo)
        mag_hi = Mhi if self.m_hi is None else mul_up(Mhi, self.m_hi)
        return Mhi, mag_lo, mag_hi

    def b(self, idx, mag=None):
        _, mag_lo, mag_hi = mag or self.mag(idx)
        (g_lo, g_hi), (c_lo, c_hi) = self._at(self.g, idx), self._at(self.c, idx)
        return add_dn(mul_dn(mag_lo, g_lo), c_lo), add_up(mul_up(mag_hi, g_hi), c_hi)

    def __call__(self, idx):
        if len(idx) > 1 and idx[-1] - idx[0] == len(idx) - 1 and (np.diff(idx) == 1).all():
            idx = slice(int(idx[0]), int(idx[-1]) + 1)   # a run of indices: a slice, not a gather
        if self.fused is not None:
            return self._fused(idx)
        S = _plus_zero(self.S[idx])
        mag = self.mag(idx)
        if self.exact:   # one term: the computed sum is exact
            s = (S, S)
        else:
            E = mul_up(mag[0], self.err)
            if self.eta is not None:
                E = above(E + self.eta)
            s = (add_dn(S, -E), add_up(S, E))
        return _ends(s, self.b(idx, mag))


def _classify(sums: _Sums, n, gamma_of: Callable, c0_of: Callable, fmt: FloatFormat, W,
              nan_: np.ndarray, pinf: np.ndarray, ninf: np.ndarray):
    """Kinds, values and over_value of the elements of a Range
    b = γ(n)·mag + c₀(n), and the lazy stage 1 (`_Stage1`); `n` (the count
    of terms) an int, or an array per element."""
    size = len(sums.S)
    st = _Stage1(sums, n, gamma_of, c0_of, W)
    M = st.M
    eta = st.eta if st.eta is not None else W(0)
    m_lo = st.m_lo if st.m_lo is not None else W(1)
    m_hi = st.m_hi if st.m_hi is not None else W(1)
    p_lo, p_hi = _per_n(n, lambda k: None if gamma_of(k) is None else 1 + gamma_of(k), W)
    no_gamma = np.isnan(st.g[1]) if np.ndim(n) else np.full(size, bool(np.isnan(st.g[1])))
    T_lo, T_hi = bracket(threshold(fmt), W)
    margin = W(2.0 ** -48)   # covers the few roundings of each bound below
    with np.errstate(invalid="ignore", over="ignore"):
        over = no_gamma | ((M - eta) * m_lo * p_lo * (1 - margin) >= T_hi)
        unsure = ~over & ~((M + eta) * m_hi * p_hi * (1 + margin) < T_lo)
    # classes (spec/schedule.py's order: NaN first, then overflow, then infinities)
    kind = np.full(size, RANGE, dtype=np.int8)
    value = np.zeros(size, dtype=np.float64)
    over_value = np.zeros(size, dtype=bool)
    kind[over] = OVER
    if nan_.any() or pinf.any() or ninf.any():
        special_nan = nan_ | (pinf & ninf)
        special_inf = (pinf | ninf) & ~special_nan
        kind[~over & special_inf] = VALUE
        value[special_inf] = np.where(pinf[special_inf], np.inf, -np.inf)
        over_value[over & special_inf] = True
        kind[special_nan] = VALUE
        value[special_nan] = np.nan
    else:
        special_nan = special_inf = np.zeros(size, dtype=bool)
    kind[unsure & ~special_nan] = ELEMENT
    kind[~st.finite & ~special_nan & ~(over & special_inf)] = ELEMENT   # an f64 product overflowed in BLAS
    return kind, value, over_value, st


def _ends(s: tuple, b: tuple) -> tuple:
    """Enclosures of s, s − b, s + b.  An exact zero is +0 (the exact
    route's Fraction 0): s enclosures come with −0.0 made +0.0, and no
    operation here makes a −0.0 (x − d with d > 0 never rounds to −0,
    an exact cancellation is +0 when rounding to nearest)."""
    (s_lo, s_hi), (b_lo, b_hi) = s, b
    lo = (sum_dn(s_lo, -b_hi), sum_up(s_hi, -b_lo))
    hi = (sum_dn(s_lo, b_lo), sum_up(s_hi, b_hi))
    return (s_lo, s_hi), lo, hi


def sum_dn(a, b):
    """a + b rounded toward −∞ exactly: TwoSum's error says on which side
    of the exact sum its rounding to nearest fell."""
    with np.errstate(invalid="ignore", over="ignore"):
        t = a + b
        bb = t - a
        e = (a - (t - bb)) + (b - bb)
    return np.where(e < 0, np.nextafter(t, t.dtype.type(-np.inf)), t)


def sum_up(a, b):
    with np.errstate(invalid="ignore", over="ignore"):
        t = a + b
        bb = t - a
        e = (a - (t - bb)) + (b - bb)
    return np.where(e > 0, np.nextafter(t, t.dtype.type(np.inf)), t)


def _fsum_enclosures(h: np.ndarray, l: np.ndarray, W) -> tuple:
    """Enclosures in W of s, given h = RN(s) and l = RN(s − h) (module
    docstring, stage 2): s = h where l = 0, else s − h ∈ [l⁻, l⁺], the
    neighbours of l (a rounding to nearest is off by at most half a step)."""
    with np.errstate(invalid="ignore"):
        lo_l = np.nextafter(l, -np.inf).astype(W)
        hi_l = np.nextafter(l, np.inf).astype(W)
        hw = _plus_zero(h.astype(W))
        exact = l == 0
        return (np.where(exact, hw, add_dn(hw, lo_l)), np.where(exact, hw, add_up(hw, hi_l)))


def _chunked(terms_of: Callable, idx: np.ndarray, each: Callable) -> None:
    """`each(start, rows)` over the terms of `idx` in chunks of at most
    FSUM_CHUNK terms (rows: (count, k) floats whose exact row sums are the
    elements' s)."""
    if not len(idx):
        return
    k = max(1, terms_of(idx[:1]).shape[1])
    step = max(1, FSUM_CHUNK // k)
    for start in range(0, len(idx), step):
        each(start, terms_of(idx[start:start + step]))


def cascade(rows: np.ndarray, W) -> tuple[np.ndarray, np.ndarray]:
    """Enclosures (lo, hi) in W of the exact row sums of float64 `rows`, by
    a pairwise tree of TwoSums (Knuth; exact when nothing overflows): each
    level replaces pairs (a, b) by t = fl(a + b) and keeps e = a + b − t
    exactly, so Σ row = t_root + Σ e.  The e's are summed in float64: with
    k terms in a row at most k − 1 errors, so that sum E is within
    γ₆₄(k)·Σ|e| ≤ γ₆₄(k)/(1 − γ₆₄(k))·A of Σ e, A = fl(Σ|e|).  The
    enclosure is t_root + E ± that, rounded outward in W: about 2^-52·|s|
    wide plus k·log₂k·2^-106·Σ|terms| — Ogita–Rump–Oishi's Sum2 in tree
    order.  NaN rows (a non-finite term or partial sum) are not enclosed."""
    u, k = rows.shape
    s = rows
    E = np.zeros(u)
    A = np.zeros(u)
    with np.errstate(invalid="ignore", over="ignore"):
        while s.shape[1] > 1:
            if s.shape[1] % 2:
                s = np.concatenate([s, np.zeros((u, 1))], axis=1)
            a, b = s[:, 0::2], s[:, 1::2]
            t = a + b
            bb = t - a
            e = (a - (t - bb)) + (b - bb)
            E += e.sum(axis=1)
            A += np.abs(e).sum(axis=1)
            s = t
        top = s[:, 0] if k else np.zeros(u)
        ok = np.isfinite(rows).all(axis=1) & np.isfinite(top) & np.isfinite(E) & np.isfinite(A)
    g = gamma_u(max(k, 1), Fraction(1, 1 << 53))
    r = mul_up(A.astype(W), bracket(g / (1 - g), W)[1])
    top, E = _plus_zero(top.astype(W)), E.astype(W)
    # t + e = top + E exactly (TwoSum in W); the ends t + (e ∓ r), each rounded once to nearest and
    # moved one step out: e ∓ r is far below t's step, so its own rounding is within that step's slack.
    with np.errstate(invalid="ignore", over="ignore"):
        t = top + E
        tb = t - top
        e = (top - (t - tb)) + (E - tb)
        x_lo, x_hi = t + (e - r), t + (e + r)
    exact = (E == 0) & (r == 0)
    lo = np.where(exact, top, np.nextafter(x_lo, W(-np.inf)))
    hi = np.where(exact, top, np.nextafter(x_hi, W(np.inf)))
    nan = W(np.nan)
    return np.where(ok, lo, nan), np.where(ok, hi, nan)


def _cascade_stage(terms_of: Callable, b_of: Callable, W) -> Callable:
    """Stage 2: `cascade` over each element's terms (module docstring)."""

    def stage(idx):
        lo = np.full(len(idx), np.nan, dtype=W)
        hi = np.full(len(idx), np.nan, dtype=W)

        def each(start, rows):
            lo[start:start + len(rows)], hi[start:start + len(rows)] = cascade(rows, W)
        _chunked(terms_of, idx, each)
        return _ends((lo, hi), b_of(idx))
    return stage


def _fsum_stage(terms_of: Callable, b_of: Callable, W) -> Callable:
    """Stage 3: `math.fsum`, correctly rounded, over each element's terms
    (rows holding a non-finite float cannot be: left undecided)."""

    def stage(idx):
        h = np.full(len(idx), np.nan)
        l = np.full(len(idx), np.nan)

        def each(start, rows):
            ok = np.isfinite(rows).all(axis=1)
            for j, row in zip(np.flatnonzero(ok).tolist(), rows[ok].tolist()):
                try:
                    hj = math.fsum(row)
                    row.append(-hj)
                    h[start + j], l[start + j] = hj, math.fsum(row)
                except OverflowError:   # a partial sum past float64: left to the exact route
                    pass
        _chunked(terms_of, idx, each)
        return _ends(_fsum_enclosures(h, l, W), b_of(idx))
    return stage


# --------------------------------------------------------------------------
# Dot products: Σ aᵢ·bᵢ over the last axis of A (G, M, K) and the middle of B (G, K, N)
# --------------------------------------------------------------------------

def two_product(a, b):
    """(p, e) with p + e = a·b exactly (Dekker, Veltkamp's split), for
    float64 arrays; e is NaN where the split is not exact (a factor above
    2^995, or a nonzero product below 2^-969)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        p = a * b
        c = 134217729.0   # 2^27 + 1
        ta = c * a
        ah = ta - (ta - a)
        al = a - ah
        tb = c * b
        bh = tb - (tb - b)
        bl = b - bh
        e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)
        bad = ((np.abs(a) > 2.0 ** 995) | (np.abs(b) > 2.0 ** 995) | ~np.isfinite(p)
               | ((p != 0) & (np.abs(p) < 2.0 ** -969)) | ((p == 0) & (a != 0) & (b != 0)))
    return p, np.where(bad, np.nan, np.where(p == 0, 0.0, e))


def float_dot(A: np.ndarray, B: np.ndarray, fmt: FloatFormat, element: Callable, probes: dict) -> Optional[Answers]:
    """`dot_range` (spec/schedule.py) of every (g, m, n): the pairs
    (A[g, m, k], B[g, k, n]) over k, as an `Answers` (flat over G×M×N).
    A and B hold the exact input values as float64.  None where no working
    type serves `fmt`."""
    W = working(fmt)
    if W is None:
        return None
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    G, M, K = A.shape
    N = B.shape[2]
    size = G * M * N
    if K == 0:   # the empty sum: +0 (dot_range's n == 0)
        return Answers((G, M, N), np.full(size, VALUE, np.int8), np.zeros(size), (), element, probes)
    fa, fb = np.isfinite(A), np.isfinite(B)
    A0 = np.where(fa, A, 0.0)
    B0 = np.where(fb, B, 0.0)
    narrow = W is np.float64
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        S = np.matmul(A0, B0).reshape(-1)
        Mr = np.matmul(np.abs(A0), np.abs(B0)).reshape(-1)
    if narrow:   # products exact, k = K terms: γ₆₄(K − 1)
        g64 = gamma_u(K - 1, Fraction(1, 1 << 53))
        sums = _Sums(S, Mr, g64 / (1 - g64), 1 / (1 + g64), 1 / (1 - g64), Fraction(0))
    else:        # products rounded, possibly underflowing
        g64 = gamma_u(K, Fraction(1, 1 << 53))
        sums = _Sums(S, Mr, g64 / (1 - g64), 1 / (1 + g64), 1 / (1 - g64), Fraction(K, 1 << 1074))
    nan_ = np.zeros(size, dtype=bool)
    pinf = np.zeros(size, dtype=bool)
    ninf = np.zeros(size, dtype=bool)
    if not (fa.all() and fb.all()):
        nan_, pinf, ninf = dot_specials(A, B)
    kind, value, over_value, st = _classify(
        sums, K, lambda k: gamma(k, fmt), lambda k: Fraction(k) * fmt.min_subnormal / 2, fmt, W, nan_, pinf, ninf)

    columns = []

    def terms_of(idx):
        if not columns:   # B's columns as contiguous rows, once
            columns.append(np.ascontiguousarray(B0.transpose(0, 2, 1)))
        g, rest = np.divmod(idx, M * N)
        m, j = np.divmod(rest, N)
        a, bb = A0[g, m, :], columns[0][g, j, :]
        if narrow:
            return a * bb
        p, e = two_product(a, bb)
        return np.concatenate([p, e], axis=1)

    stages = (st, _cascade_stage(terms_of, st.b, W), _fsum_stage(terms_of, st.b, W))
    return Answers((G, M, N), kind, value, stages, element, probes, over_value)


def dot_within(A: np.ndarray, B: np.ndarray, fmt: FloatFormat, b: tuple, classes: tuple, element: Callable,
               probes: dict) -> Optional[Answers]:
    """Σ aᵢ·bᵢ ± b for a bound b the caller states per element (dot_general's
    `algorithm`, spec/ops/dot_algorithm.py), with the caller's classes:
    `classes` = (kind, value, over_value) flat over G×M×N as `Answers` reads
    them.  s (of RANGE elements, and of OVER ones whose primary is the exact
    result rounded) is enclosed by `float_dot`'s stages (products exact in
    the working type of `fmt`, or TwoProduct for f64), b by `b` = (lo, hi)
    float64 arrays with lo ≤ b ≤ hi.  An element whose s those stages
    cannot enclose (an f64 product past float64) is ELEMENT.  None where
    `float_dot` has no working type or the sum is empty."""
    got = float_dot(A, B, fmt, element, probes)
    if got is None or not np.asarray(A).shape[2]:
        return None
    W = working(fmt)
    b_lo, b_hi = (np.asarray(x, dtype=np.float64).astype(W) for x in b)
    kind, value, over_value = (np.asarray(x).reshape(-1) for x in classes)
    kind = np.where(got.stages[0].finite, kind, ELEMENT).astype(np.int8)   # stage 1's sums past float64

    def ranged(stage):
        return lambda idx: _ends(stage(idx)[0], (b_lo[idx], b_hi[idx]))
    return Answers(got.shape, kind, value, tuple(ranged(st) for st in got.stages), element, probes, over_value)


def dot_specials(A, B):
    """Per (g, m, n): a NaN term or 0 × ∞ (NaN), an infinite product of
    each sign — counted exactly with float64 matrix products of 0/1
    indicators."""
    def f(x):
        return x.astype(np.float64)
    an, bn = np.isnan(A), np.isnan(B)
    ap, am = A == np.inf, A == -np.inf
    bp, bm = B == np.inf, B == -np.inf
    az, bz = A == 0, B == 0
    apos, aneg = A > 0, A < 0
    bpos, bneg = B > 0, B < 0
    with np.errstate(invalid="ignore"):
        nan_ = (np.matmul(f(an), f(~bn)) + np.matmul(f(~an), f(bn)) + np.matmul(f(an), f(bn))
                + np.matmul(f(ap | am), f(bz)) + np.matmul(f(az), f(bp | bm))) > 0
        pinf = (np.matmul(f(ap), f(bpos)) + np.matmul(f(am), f(bneg))
                + np.matmul(f(apos), f(bp)) + np.matmul(f(aneg), f(bm))) > 0
        ninf = (np.matmul(f(ap), f(bneg)) + np.matmul(f(am), f(bpos))
                + np.matmul(f(apos), f(bm)) + np.matmul(f(aneg), f(bp))) > 0
    return nan_.reshape(-1), pinf.reshape(-1), ninf.reshape(-1)


def integer_dot(A: np.ndarray, B: np.ndarray, et: ElementType, element: Callable, probes: dict) -> Answers:
    """Σ aᵢ·bᵢ exactly (integers: the exact sum, wrapped by the oracle where
    it leaves the type; i1: an OR of ANDs): float64 BLAS where every
    partial sum stays below 2^53 in magnitude, int64 below 2^63, Python
    integers otherwise."""
    G, M, K = A.shape
    N = B.shape[2]
    size = G * M * N
    if et.is_bool:
        v = np.matmul(A.astype(np.float64), B.astype(np.float64)) > 0 if K else np.zeros((G, M, N), dtype=bool)
        return Answers((G, M, N), np.full(size, VALUE, np.int8), v.reshape(-1), (), element, probes)
    amax = int(np.abs(A.astype(object)).max()) if A.size else 0
    bmax = int(np.abs(B.astype(object)).max()) if B.size else 0
    bound = K * amax * bmax
    if bound < 1 << 53:
        v = np.matmul(A.astype(np.float64), B.astype(np.float64)).astype(np.int64)
    elif bound < 1 << 63:
        v = np.matmul(A.astype(np.int64), B.astype(np.int64))
    else:
        v = np.matmul(A.astype(object), B.astype(object)) if K else np.zeros((G, M, N), dtype=object)
    return Answers((G, M, N), np.full(size, VALUE, np.int8), np.asarray(v).reshape(-1), (), element, probes)


# --------------------------------------------------------------------------
# Reductions by a monoid body: rows of X (P, L), the valid leaves where `valid`
# --------------------------------------------------------------------------

def float_sum(X: np.ndarray, valid: Optional[np.ndarray], fmt: FloatFormat, element: Callable,
              probes: dict, rows_of: Optional[Callable] = None) -> Optional[Answers]:
    """`sum_range` of each row's valid leaves (float64 exact values), as an
    `Answers`; rows with no leaf are not expected here (their result is the
    init value: `reduce_values`).  `rows_of(idx)`, where given, gives
    (X[idx], valid[idx]) again: the record's later stages read their terms
    from it instead of keeping every row."""
    W = working(fmt)
    if W is None:
        return None
    X = np.asarray(X, dtype=np.float64)
    P, L = X.shape
    ok = np.isfinite(X) if valid is None else (np.isfinite(X) & valid)
    X0 = np.where(ok, X, 0.0)
    n = L if valid is None else valid.sum(axis=1).astype(np.int64)
    inv = np.zeros_like(ok) if valid is None else ~valid
    with np.errstate(invalid="ignore"):
        nan_ = (np.isnan(X) & ~inv).any(axis=1)
        pinf = ((X == np.inf) & ~inv).any(axis=1)
        ninf = ((X == -np.inf) & ~inv).any(axis=1)
    S = X0.astype(W).sum(axis=1)
    Mr = np.abs(X0).astype(W).sum(axis=1)
    u = Fraction(1, 1 << 53) if W is np.float64 else Fraction(1, 1 << 64)
    g = gamma_u(max(L - 1, 0), u)
    sums = _Sums(S, Mr, g / (1 - g), 1 / (1 + g), 1 / (1 - g), Fraction(0))
    kind, value, over_value, st = _classify(
        sums, n, lambda k: gamma(max(k - 1, 0), fmt), lambda k: Fraction(0), fmt, W, nan_, pinf, ninf)

    if rows_of is None:
        def terms_of(idx):
            return X0[idx]
    else:
        def terms_of(idx):
            Xi, vi = rows_of(idx)
            Xi = np.asarray(Xi, dtype=np.float64)
            return np.where(np.isfinite(Xi) if vi is None else (np.isfinite(Xi) & vi), Xi, 0.0)
        del X0

    stages = (st, _cascade_stage(terms_of, st.b, W), _fsum_stage(terms_of, st.b, W))
    return Answers((P,), kind, value, stages, element, probes, over_value)



# --------------------------------------------------------------------------
# Float products: `product_range` (spec/schedule.py) of each row at once
# --------------------------------------------------------------------------
#
# A product of n factors in any schedule is Π xᵢ · Π(1 + δ) over its n − 1
# multiplications — whatever the tree, every node's rounding multiplies the
# whole result — so |p̂ − Π xᵢ| ≤ γ(n − 1)·|Π xᵢ| while no partial product (a
# product of consecutive factors: a subtree) leaves the normal range.  The
# same argument bounds the oracle's own evaluation in a wider type, so a
# pairwise tree in W encloses s within γ_W(L − 1) (stage 1), a pairwise tree
# of double-double products within about L·2^-102 (stage 2) — each valid
# where every product of consecutive factors stays inside the range its
# arithmetic is exact in, which the log₂ magnitudes' largest and smallest
# run sums decide (as `schedule._some_partial` does, with its slack).

RUN_SLACK = 2.0 ** -48      # per term, relative to Σ|log₂ xᵢ| + |edge| + 1: `schedule._some_partial`'s
DD_RANGE = 900              # stage 2: runs within 2^±900 (TwoProduct exact, no tail underflows in float64)
DD_UNIT = Fraction(1, 1 << 102)   # stage 2's relative error per multiplication (below 8.1·2^-106)


def _runs(logs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest and smallest sum of consecutive entries of each row
    (Kadane's, on prefix sums: max over j of P_j − min over i < j of P_i)."""
    P = np.cumsum(logs, axis=1)
    lead = np.minimum.accumulate(np.concatenate([np.zeros((len(P), 1)), P[:, :-1]], axis=1), axis=1)
    top = (P - lead).max(axis=1)
    np.maximum.accumulate(np.concatenate([np.zeros((len(P), 1)), P[:, :-1]], axis=1), axis=1, out=lead)
    bottom = (P - lead).min(axis=1)
    return top, bottom


def _tree_product(A: np.ndarray) -> np.ndarray:
    """Π of each row by a pairwise tree (its inner nodes: products of
    consecutive entries), in A's type."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        while A.shape[1] > 1:
            if A.shape[1] % 2:
                A = np.concatenate([A, np.ones((len(A), 1), dtype=A.dtype)], axis=1)
            A = A[:, 0::2] * A[:, 1::2]
    return A[:, 0] if A.shape[1] else np.ones(len(A), dtype=A.dtype)


def _dd_tree_product(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Π of each row of float64 `A` as a double-double (h, l) by a pairwise
    tree: (h₁ + l₁)(h₂ + l₂) = TwoProduct(h₁, h₂) + (h₁l₂ + l₁h₂), then
    renormalised (FastTwoSum).  Each node's error is below 8.1·2^-106 of
    its value (|lᵢ| ≤ 2^-53|hᵢ|, the TwoProduct tail ≤ 2^-53|h₁h₂|, three
    roundings of terms ≤ 3·2^-53 of it, and l₁l₂ dropped) — DD_UNIT per
    node — where TwoProduct is exact (NaN h otherwise)."""
    H, L = A, np.zeros_like(A)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        while H.shape[1] > 1:
            if H.shape[1] % 2:
                H = np.concatenate([H, np.ones((len(H), 1))], axis=1)
                L = np.concatenate([L, np.zeros((len(L), 1))], axis=1)
            h1, h2, l1, l2 = H[:, 0::2], H[:, 1::2], L[:, 0::2], L[:, 1::2]
            p, e = two_product(h1, h2)
            s = e + (h1 * l2 + l1 * h2)
            H = p + s
            L = s - (H - p)
            H = np.where(np.isnan(e), np.nan, H)
    if not H.shape[1]:
        return np.ones(len(H)), np.zeros(len(H))
    return H[:, 0], L[:, 0]


def float_product(X: np.ndarray, valid: Optional[np.ndarray], fmt: FloatFormat, element: Callable,
                  probes: dict, rows_of: Optional[Callable] = None) -> Optional[Answers]:
    """`product_range` (spec/schedule.py) of each row's valid leaves
    (float64 exact values) as an `Answers`: NaN, ±∞ and ±0 rows are
    VALUE (a NaN, or 0 × ∞: NaN; else ±∞, ±0 by the signs' parity); a
    product some schedule may overflow is OVER (its primary ±∞ or ±0 from
    the log sum where the product is past the working type); the rest RANGE, with
    b = γ(n − 1)·|s|, plus (n − 1)·(min_subnormal/2)·Π max(1, |xᵢ|) where a
    partial product may fall below the normal range.  A row whose class the
    run sums leave in doubt, or whose runs leave the working type's range,
    is ELEMENT.  `rows_of(idx)` as for `float_sum`."""
    W = working(fmt)
    if W is None:
        return None
    X = np.asarray(X, dtype=np.float64)
    P, L = X.shape
    V = np.ones(X.shape, dtype=bool) if valid is None else valid
    n = V.sum(axis=1).astype(np.int64)
    with np.errstate(invalid="ignore"):
        nan_ = (np.isnan(X) & V).any(axis=1)
        inf_ = (np.isinf(X) & V).any(axis=1)
        zero = ((X == 0) & V).any(axis=1)
    negative = (np.signbit(X) & V).sum(axis=1) % 2 == 1
    kind = np.full(P, RANGE, dtype=np.int8)
    value = np.zeros(P)
    special = nan_ | inf_ | zero
    kind[special] = VALUE
    value[special] = np.where(nan_ | (inf_ & zero), np.nan, np.where(inf_, np.inf, 0.0))[special]
    value[special & negative] = -value[special & negative]

    M = np.where(V & ~special[:, None], np.abs(X), 1.0)
    with np.errstate(divide="ignore"):
        logs = np.log2(M)
    top, bottom = _runs(logs) if L else (np.zeros(P), np.zeros(P))
    absum = np.abs(logs).sum(axis=1)
    total = logs.sum(axis=1)
    del logs
    g_lo, g_hi = _per_n(np.maximum(n - 1, 0), lambda k: gamma(k, fmt), W)
    with np.errstate(invalid="ignore", divide="ignore"):
        edge_over = log2_of(threshold(fmt)) - np.log2(1 + g_hi.astype(np.float64))
    edge_under = log2_of(fmt.min_normal)
    slack_o = (L + 4) * RUN_SLACK * (absum + np.abs(edge_over) + 1)
    slack_u = (L + 4) * RUN_SLACK * (absum + abs(edge_under) + 1)
    lim = 1000.0 if W is np.float64 else 16000.0
    live = ~special
    with np.errstate(invalid="ignore"):
        over = live & (np.isnan(g_hi) | (top > edge_over + slack_o))
        doubt = live & ~over & (top >= edge_over - slack_o)
        under = live & (n > 1) & (bottom < edge_under - slack_u)
        doubt |= live & (n > 1) & ~under & (bottom <= edge_under + slack_u)
        # an overflow whose product itself is past W: its primary (the exact result rounded) from the log sum
        beyond = live & ((top > lim) | (bottom < -lim))
        slack_t = (L + 4) * RUN_SLACK * (absum + abs(log2_of(fmt.min_subnormal)) + 1)
        huge = over & beyond & (total > log2_of(threshold(fmt)) + slack_t) & fmt.has_inf   # (no ∞: NaN of its sign)
        nil = over & beyond & (total < log2_of(fmt.min_subnormal / 2) - slack_t)
        doubt |= beyond & ~huge & ~nil
    over_value = huge | nil
    value[huge] = np.inf
    value[over_value & negative] = -value[over_value & negative]
    kind[over] = OVER
    kind[doubt] = ELEMENT

    s_lo, s_hi = _magnitude_enclosure(_tree_product(M.astype(W)), L, Fraction(1, 1 << (np.finfo(W).nmant + 1)), W)
    c_lo, c_hi = np.zeros(P, dtype=W), np.zeros(P, dtype=W)
    if under.any():   # the underflow term, from the product of the factors' max(1, |xᵢ|)
        Q = np.maximum(M[under], 1.0)
        q_lo, q_hi = _magnitude_enclosure(_tree_product(Q.astype(W)), L, Fraction(1, 1 << (np.finfo(W).nmant + 1)), W)
        half = bracket(fmt.min_subnormal / 2, W)[0]   # a power of two: exact
        k = (n[under] - 1).astype(W) * half
        c_lo[under], c_hi[under] = mul_dn(q_lo, k), mul_up(q_hi, k)
        kind[np.flatnonzero(under)[~np.isfinite(q_hi) & ~over_value[under]]] = ELEMENT
    del M
    kind[live & ~over_value & ~np.isfinite(s_hi)] = ELEMENT   # (the primaries of OVER ones: from the log sum)
    narrow = (top <= DD_RANGE) & (bottom >= -DD_RANGE)

    def signed(a_lo, a_hi, idx):
        neg = negative[idx]
        return np.where(neg, -a_hi, a_lo), np.where(neg, -a_lo, a_hi)

    def ends(a_lo, a_hi, idx):
        b = (add_dn(mul_dn(a_lo, g_lo[idx]), c_lo[idx]), add_up(mul_up(a_hi, g_hi[idx]), c_hi[idx]))
        return _ends(signed(a_lo, a_hi, idx), b)

    def stage1(idx):
        return ends(s_lo[idx], s_hi[idx], idx)

    def terms_of(idx):
        if rows_of is None:
            Xi, vi = X[idx], (None if valid is None else valid[idx])
        else:
            Xi, vi = rows_of(idx)
            Xi = np.asarray(Xi, dtype=np.float64)
        return np.abs(Xi) if vi is None else np.where(vi, np.abs(Xi), 1.0)

    def stage2(idx):
        a_lo, a_hi = np.full(len(idx), np.nan, dtype=W), np.full(len(idx), np.nan, dtype=W)
        ok = np.flatnonzero(narrow[idx])

        def each(start, rows):
            at = ok[start:start + len(rows)]
            h, l = _dd_tree_product(rows)
            a_lo[at], a_hi[at] = _dd_enclosure(h, l, rows.shape[1], W)
        _chunked(terms_of, idx[ok], each)
        return ends(a_lo, a_hi, idx)

    if rows_of is not None:
        del X
    return Answers((P,), kind, value, (stage1, stage2), element, probes, over_value)


def _magnitude_enclosure(p: np.ndarray, L: int, u: Fraction, W) -> tuple:
    """(lo, hi) about the exact product of positive factors that `p`, their
    product in W by any tree of at most L − 1 roundings of unit roundoff u,
    stands for: p/(1 + γ) ≤ s ≤ p/(1 − γ); NaN-free only where p is finite
    and nonzero."""
    g = gamma_u(max(L - 1, 0), u)
    return mul_dn(p, bracket(1 / (1 + g), W)[0]), mul_up(p, bracket(1 / (1 - g), W)[1])


def _dd_enclosure(h: np.ndarray, l: np.ndarray, L: int, W) -> tuple:
    """(lo, hi) in W about the exact product of positive factors a
    double-double (h, l) from `_dd_tree_product` of L factors stands for:
    h + l within γ(L − 1) of DD_UNIT (about L·2^-102) of it, t = W(h + l)
    within half a step of h + l, so two steps of W each way from t cover
    both (a step is at least 2^(1−p)/2 of |t|, p W's precision, far above
    L·2^-102 while L < 2^30); NaN where h is NaN."""
    if L >= 1 << 30:
        raise ValueError("too many factors for stage 2's enclosure")
    with np.errstate(invalid="ignore"):
        t = h.astype(W) + l.astype(W)
        down, up = W(-np.inf), W(np.inf)
        return np.nextafter(np.nextafter(t, down), down), np.nextafter(np.nextafter(t, up), up)


def extremum(X: np.ndarray, valid: Optional[np.ndarray], op: str, et: ElementType, element: Callable,
             probes: dict) -> Answers:
    """maximum / minimum of each row's valid leaves: floats by IEEE 754
    (NaN if any is NaN; +0 above −0), integers exactly."""
    P, L = X.shape
    if L == 0:   # no leaves: the caller states the init value
        return Answers((P,), np.full(P, VALUE, np.int8), np.zeros(P, dtype=X.dtype), (), element, probes)
    if et.is_float:
        X = np.asarray(X, dtype=np.float64)
        fill = -np.inf if op == "maximum" else np.inf
        V = X if valid is None else np.where(valid, X, fill)
        with np.errstate(invalid="ignore"):
            r = V.max(axis=1) if op == "maximum" else V.min(axis=1)
            zero = r == 0
            if zero.any():
                ok = np.ones_like(X, dtype=bool) if valid is None else valid
                want = ~np.signbit(X) if op == "maximum" else np.signbit(X)
                has = (ok & (X == 0) & want).any(axis=1)
                signed = np.where(has == (op == "maximum"), 0.0, -0.0)
                r = np.where(zero, signed, r)
    else:
        V = X if valid is None else np.where(valid, X, _int_fill(X, op))
        r = V.max(axis=1) if op == "maximum" else V.min(axis=1)
    return Answers((P,), np.full(P, VALUE, np.int8), np.asarray(r).reshape(-1), (), element, probes)


def _int_fill(X, op):
    info = np.iinfo(X.dtype) if X.dtype != object else None
    if info is None:
        raise TypeError("object arrays take the per-element route")
    return info.min if op == "maximum" else info.max


def integer_fold(X: np.ndarray, valid: Optional[np.ndarray], op: str, et: ElementType, element: Callable,
                 probes: dict) -> Answers:
    """add, multiply, and, or, xor of each row's valid leaves, exactly:
    int64 (or uint64) where no partial result can leave it, Python integers
    (object arrays) otherwise; the oracle wraps results outside the type."""
    P, L = X.shape
    identity = {"add": 0, "multiply": 1, "and": -1, "or": 0, "xor": 0}[op]
    big = X.dtype == np.uint64 or X.dtype == object
    if op in ("and", "or", "xor") and not big:
        V = X if valid is None else np.where(valid, X, X.dtype.type(identity))
        r = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op].reduce(V, axis=1)
    else:
        if op == "and" and big:
            identity = (1 << 64) - 1 if X.dtype == np.uint64 else -1
        Xo = X.astype(object)
        V = Xo if valid is None else np.where(valid, Xo, identity)
        amax = int(np.abs(Xo).max()) if X.size else 0
        if op == "add" and not big and L * amax < 1 << 63:
            r = V.astype(np.int64).sum(axis=1)
        elif op == "add":
            r = V.sum(axis=1) if L else np.zeros(P, dtype=object)
        elif op == "multiply":
            r = V.prod(axis=1) if L else np.ones(P, dtype=object)
        else:
            f = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}[op]
            r = np.array([_fold_row(row, f, identity) for row in V], dtype=object)
    return Answers((P,), np.full(P, VALUE, np.int8), np.asarray(r).reshape(-1), (), element, probes)


def _fold_row(row, f, identity):
    acc = identity
    for v in row:
        acc = f(acc, int(v))
    return acc


def range_probe() -> Range:
    return Range(Fraction(0), Fraction(0), Fraction(0))
