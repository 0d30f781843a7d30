"""Distribution tests behind the `statistical` expectation (rng, rng_bit_generator).

The seed makes the values of `rng` and the bits of `rng_bit_generator`
implementation-defined, and promises only a distribution ("uniform
distribution over the interval [a, b)", "normal distribution with mean = a
and standard deviation = b", "uniform random bits").  A case therefore
states tests, not values, each with a false-alarm probability a correct
backend suffers at most:

* every test here is *distribution-free and valid for every sample size*
  (no asymptotic chi-square or normal approximation), so the stated bound
  holds for the 5-element outputs of a suite case as for a million-element
  benchmark — at the price of power on small samples;
* a case composes its tests by Bonferroni: `k` tests at `alpha / k` each,
  so the case's false-alarm probability is at most `alpha` (1e-9 by
  default: a suite of thousands of such cases stays quiet on a correct
  backend);
* deterministic checks (the range [a, b), the state change) have no false
  alarm at all and are not counted.

The tests:

  range      UNIFORM values in [a, b) (NaN outside), exact.
  dkw        the sample's empirical CDF against the stated CDF, by the
             Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant:
             P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2) for *any* F,
             continuous or discrete (so integer uniforms are covered).  A
             float sample is bracketed by its format's spacing
             (`ROUNDING_SPACINGS` ulps each way): a backend that rounds a
             real variate into the format shifts the CDF that much at most.
  bit        per bit position, the count of ones against Binomial(n, 1/2)
             by Hoeffding: P(|k - n/2| >= t) <= 2 exp(-2 t^2 / n).
  symbols    the frequency vector of symbols (element values for widths
             <= 8, else bytes) against the uniform one in L1 distance by
             Weissman et al. (2003): P(||p_hat - p||_1 >= eps)
             <= (2^m - 2) exp(-N eps^2 / 2) for m symbols.
  collisions for widths >= 16, the number of equal pairs of elements
             against its expectation C(n, 2) / 2^w by Markov's inequality:
             a repeating sequence collides where uniform bits do not.
  state      rng_bit_generator's `output_state` differs from its
             `initial_state` whenever `output` has elements (our reading of
             "an updated output state"; exact).

`judge(params, values, bits, width)` returns (ok, detail, labels): `params`
is the expectation's JSON-able dict (`test` in "uniform" | "normal" |
"bits" | "state"), `values` the outputs as exact numbers (float64 / Python
ints), `bits` their raw bit patterns as unsigned ints.
"""
from __future__ import annotations

import math

import numpy as np

DEFAULT_ALPHA = 1e-9
ROUNDING_SPACINGS = 2   # ulps of the format each float sample is bracketed by (rounding + one step of arithmetic)


# --------------------------------------------------------------------------
# Thresholds (each: the bound a correct generator exceeds with probability <= alpha)
# --------------------------------------------------------------------------

def dkw_epsilon(n: int, alpha: float) -> float:
    """sup |F_n - F| above this has probability <= alpha (DKW, Massart)."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * n)) if n else math.inf


def bit_threshold(n: int, alpha: float) -> float:
    """|ones - n/2| at or above this has probability <= alpha (Hoeffding)."""
    return math.sqrt(n * math.log(2.0 / alpha) / 2.0)


def l1_epsilon(count: int, symbols: int, alpha: float) -> float:
    """L1 distance of observed symbol frequencies from uniform at or above
    this has probability <= alpha (Weissman et al.)."""
    if not count:
        return math.inf
    return math.sqrt(2.0 * (symbols * math.log(2.0) + math.log(1.0 / alpha)) / count)


def collision_threshold(n: int, width: int, alpha: float) -> float:
    """Equal pairs at or above this have probability <= alpha (Markov)."""
    expected = n * (n - 1) / 2.0 / 2.0 ** width
    return max(1.0, expected / alpha)


# --------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------

def dkw_distance(x: np.ndarray, cdf, spacing=None, discrete: bool = False) -> float:
    """sup_x |F_n(x) - F(x)| of the sample `x` (no NaN) against `cdf`
    (vectorised), each sample bracketed by `spacing(x)` each way; for a
    `discrete` (integer) distribution P(X < v) is F(v - 1)."""
    x = np.sort(np.asarray(x, dtype=np.float64))
    n = x.size
    if not n:
        return 0.0
    vals, first = np.unique(x, return_index=True)
    counts = np.diff(np.append(first, n))
    at_or_below = np.cumsum(counts) / n
    below = at_or_below - counts / n
    h = spacing(vals) if spacing is not None else 0.0
    upper = cdf(vals + h)                                   # F at the most favourable point above
    lower = cdf(vals - 1 - h) if discrete else cdf(vals - h)   # P(X < v), most favourable below
    return float(max(np.max(at_or_below - upper), np.max(lower - below), 0.0))


def float_spacing(fmt_eps: float, fmt_tiny: float):
    """`ROUNDING_SPACINGS` steps of a float format at x: relative `eps`
    (2^-mantissa bits) and at least the smallest subnormal step."""
    def spacing(v):
        return ROUNDING_SPACINGS * np.maximum(np.abs(v) * fmt_eps, fmt_tiny)
    return spacing


def uniform(values: np.ndarray, a, b, alpha: float, fmt=None) -> tuple[bool, str]:
    """UNIFORM over [a, b): the range (exact), then DKW."""
    v = np.asarray(values, dtype=np.float64) if fmt is not None else np.asarray(values, dtype=object)
    if fmt is not None:
        outside = np.isnan(v) | (v < a) | (v >= b)
    else:
        outside = np.array([not (a <= int(x) < b) for x in v.reshape(-1)], dtype=bool)
    if outside.any():
        i = int(np.nonzero(outside.reshape(-1))[0][0])
        return False, f"range: {int(outside.sum())} of {outside.size} elements outside [{a}, {b}); [{i}] = {v.reshape(-1)[i]!r}"
    n = v.size
    eps = dkw_epsilon(n, alpha)
    if fmt is not None:
        d = dkw_distance(v.reshape(-1), lambda x: np.clip((x - a) / (b - a), 0.0, 1.0),
                         float_spacing(*fmt))
    else:
        width = float(b - a)
        d = dkw_distance(np.array([float(int(x)) for x in v.reshape(-1)]),
                         lambda x: np.clip((np.floor(x) - a + 1) / width, 0.0, 1.0), discrete=True)
    if d > eps:
        return False, f"dkw: sup |F_n - F| = {d:.4g} > {eps:.4g} (n = {n}, alpha = {alpha:.3g})"
    return True, ""


def normal(values: np.ndarray, mean: float, sd: float, alpha: float, fmt) -> tuple[bool, str]:
    """NORMAL(mean, sd): no NaN; sd = 0 is the point mass at `mean`; else DKW."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.isnan(v).any():
        return False, f"normal: {int(np.isnan(v).sum())} NaN of {v.size} elements"
    if sd == 0:
        off = v != mean
        return (not off.any()), (f"normal with sd 0: {int(off.sum())} elements differ from the mean {mean}"
                                 if off.any() else "")
    from math import erf, sqrt
    cdf = np.vectorize(lambda x: 0.5 * (1.0 + erf((x - mean) / (sd * sqrt(2.0)))) if math.isfinite(x)
                       else (1.0 if x > 0 else 0.0))
    eps = dkw_epsilon(v.size, alpha)
    d = dkw_distance(v, cdf, float_spacing(*fmt))
    if d > eps:
        return False, f"dkw: sup |F_n - F| = {d:.4g} > {eps:.4g} (n = {v.size}, alpha = {alpha:.3g})"
    return True, ""


def bit_tests(bits: np.ndarray, width: int, alpha: float) -> tuple[bool, str]:
    """Uniform random bits: `width` per-bit tests, the symbol test and (for
    widths >= 16) the collision test, Bonferroni-composed to `alpha`."""
    b = np.asarray(bits, dtype=np.uint64).reshape(-1)
    n = b.size
    k = width + 1 + (width >= 16)
    a = alpha / k
    t = bit_threshold(n, a)
    for j in range(width):
        ones = int(((b >> np.uint64(j)) & np.uint64(1)).sum())
        if abs(ones - n / 2) >= t and n:
            return False, f"bit {j}: {ones} ones in {n} (|ones - n/2| >= {t:.3g}, alpha = {a:.3g})"
    if width <= 8:
        sym, m = b.astype(np.int64), 1 << width
    else:
        sym, m = b.astype("<u8").view(np.uint8).reshape(n, 8)[:, :width // 8].reshape(-1).astype(np.int64), 256
    freq = np.bincount(sym, minlength=m) / max(sym.size, 1)
    l1, eps = float(np.abs(freq - 1.0 / m).sum()), l1_epsilon(sym.size, m, a)
    if sym.size and l1 >= eps:
        return False, f"symbols: L1 distance {l1:.4g} from uniform >= {eps:.4g} ({sym.size} symbols of {m})"
    if width >= 16:
        _, counts = np.unique(b, return_counts=True)
        pairs, limit = int((counts * (counts - 1) // 2).sum()), collision_threshold(n, width, a)
        if pairs >= limit:
            return False, f"collisions: {pairs} equal pairs among {n} elements of {width} bits (>= {limit:.3g})"
    return True, ""


def state_changed(initial: list, actual: list, output_elements: int) -> tuple[bool, str]:
    if output_elements and [int(x) for x in actual] == [int(x) for x in initial]:
        return False, f"state: output_state equals initial_state {list(initial)} after {output_elements} elements"
    return True, ""


def judge(params: dict, values: np.ndarray, bits: np.ndarray, width: int, fmt=None) -> tuple[bool, str]:
    """Does a sample meet the statistical expectation `params`?  `fmt`:
    (relative eps, smallest step) of a float element type, else None."""
    test, alpha = params["test"], float(params.get("alpha", DEFAULT_ALPHA))
    if test == "uniform":
        return uniform(values, params["a"], params["b"], alpha, fmt)
    if test == "normal":
        return normal(values, params["mean"], params["sd"], alpha, fmt)
    if test == "bits":
        return bit_tests(bits, width, alpha)
    if test == "state":
        return state_changed(params["initial"], [int(x) for x in np.asarray(bits).reshape(-1)],
                             int(params["output_elements"]))
    raise ValueError(f"unknown statistical test {test!r}")
