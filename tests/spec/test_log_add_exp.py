"""spec/log_add_exp.py: JAX's log-add-exp body (`lax.cumlogsumexp`,
`lax.reduce(…, jnp.logaddexp, …)`) recognised, and the Range it states
holding every schedule and every tolerance of the body's approximate ops.

Independent truth: the bodies are the ones JAX lowers (programs nobody here
wrote); the Range is held against every full binary tree over the leaves
with the body evaluated by an implementation written here — numpy's
correctly rounded subtract/add in the format, and `exponential` /
`log_plus_one` taken from mpmath's value at 200 bits moved by up to the
tolerance's ulps, adversarially (all up, all down) and at random — and the
centre against mpmath's log-sum-exp."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from jax import lax

from shlo_conform.oracle.program import parse_program
from shlo_conform.spec import log_add_exp, schedule
from shlo_conform.spec.dsl import ANY_VALUE, ImplDefined, Range
from tests.independent.trees import every_tree


def _steps(program):
    for s in program.steps:
        if s.call is not None:
            yield from _steps(s.call)
        yield s


def _region(text: str, mnemonic: str):
    p = parse_program(text)
    got = [s for s in _steps(p) if s.inst is not None and s.inst.spec.mnemonic == mnemonic]
    assert len(got) == 1
    return got[0].inst.regions["body"]


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float16, jnp.bfloat16])
def test_jax_cumlogsumexp_and_logaddexp_reduce_bodies_are_recognised(dtype):
    x = jnp.zeros((3, 6), dtype)
    cum = _region(jax.jit(lambda v: lax.cumlogsumexp(v, axis=1)).lower(x).as_text(), "reduce_window")
    red = _region(jax.jit(lambda v: lax.reduce(v, jnp.array(-jnp.inf, dtype), jnp.logaddexp, (1,))).lower(x).as_text(), "reduce")
    for body in (cum, red):
        got = log_add_exp.of(body)
        assert got is not None and got.fmt.name == {jnp.float32: "f32", jnp.float16: "f16",
                                                     jnp.bfloat16: "bf16"}[dtype]
        assert (got.t_exp, got.t_log) == ((4, 4) if dtype == jnp.float32 else (1, 1))


def _hand(body: str):
    text = f"""
func.func @main(%x: tensor<5xf32>) -> tensor<f32> {{
  %i = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%x init: %i) across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {{
{body}
  }}
  return %r : tensor<f32>
}}"""
    return _region(text, "reduce")


LAE = """    {M}
    %d = stablehlo.subtract {D} : tensor<f32>
    %n = stablehlo.compare NE, %d, %d{T} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %s = stablehlo.add %b, %a : tensor<f32>
    %ab = stablehlo.abs %d : tensor<f32>
    %ng = stablehlo.negate %ab : tensor<f32>
    %e = stablehlo.{EXP} %ng : tensor<f32>
    %l = stablehlo.{LOG} %e : tensor<f32>
    %r = stablehlo.add %l, %m : tensor<f32>
    %o = stablehlo.select %n, %s, %r : tensor<i1>, tensor<f32>
    stablehlo.return %o : tensor<f32>"""


@pytest.mark.parametrize("change,recognised", [
    ({}, True),
    ({"D": "%b, %a"}, True),                  # d = b − a: |d| and the NaN test alike
    ({"T": ""}, True),                        # the compare type left to its default (FLOAT)
    ({"M": "%c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    %m = stablehlo.select %c, %b, %a : tensor<i1>, tensor<f32>"}, True),   # a fast max
    ({"M": "%c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    %m = stablehlo.select %c, %a, %b : tensor<i1>, tensor<f32>"}, False),  # a minimum
    ({"LOG": "log"}, False),                  # log(e) instead of log1p(e): another function
    ({"EXP": "tanh"}, False),
    ({"T": ", TOTALORDER"}, False),
])
def test_a_hand_written_body_is_recognised_only_when_it_is_log_add_exp(change, recognised):
    fill = {"D": "%a, %b", "T": ", FLOAT", "EXP": "exponential", "LOG": "log_plus_one",
            "M": "%m = stablehlo.maximum %a, %b : tensor<f32>", **change}
    assert (log_add_exp.of(_hand(LAE.format(**fill))) is not None) is recognised


# -- every schedule, every tolerance -------------------------------------------

def _cr(f, x: float, dtype) -> float:
    """f(x) correctly rounded into dtype (mpmath at 200 bits, through float64)."""
    with mpmath.workprec(200):
        return float(dtype(float(f(mpmath.mpf(x)))))


def _moved(v: float, k: int, dtype) -> float:
    v = dtype(v)
    for _ in range(abs(k)):
        v = np.nextafter(v, dtype(np.inf if k > 0 else -np.inf))
    return float(v)


def _body(dtype, t: int, pick):
    """JAX's logaddexp evaluated in dtype, exp and log1p moved by pick(…) ulps (|pick| ≤ t)."""
    def f(a: float, b: float) -> float:
        a, b = dtype(a), dtype(b)
        with np.errstate(all="ignore"):
            d = a - b
            if math.isnan(float(d)):
                return float(a + b)
            x = -abs(float(d))
        e = 0.0 if x == -math.inf else (1.0 if x == 0 else _moved(_cr(mpmath.exp, x, dtype), pick(t), dtype))
        lg = 0.0 if e == 0 else _moved(_cr(mpmath.log1p, e, dtype), pick(t), dtype)
        with np.errstate(all="ignore"):
            return float(max(a, b) + dtype(lg))
    return f


def _inside(r, v: float, dtype) -> bool:
    if isinstance(r, float):
        return (math.isnan(r) and math.isnan(v)) or r == v
    lo = float(dtype(float(r.lo)))
    hi = float(dtype(float(r.hi)))
    lo = lo if lo <= r.lo else _moved(lo, -1, dtype)   # round outward into the format
    hi = hi if hi >= r.hi else _moved(hi, 1, dtype)
    return lo <= v <= hi


@pytest.mark.parametrize("dtype,t", [(np.float32, 4), (np.float16, 1)])
def test_every_schedule_with_every_tolerance_lies_in_the_stated_range(dtype, t):
    rng = np.random.default_rng(7)
    fmt = {np.float32: "f32", np.float16: "f16"}[dtype]
    from shlo_conform.spec.types import element_type
    lae = log_add_exp.LogAddExp(element_type(fmt).format, t, t)
    rows = [list(rng.normal(0, s, n).astype(dtype).astype(float)) for n in (2, 3, 4, 5, 6) for s in (0.5, 3, 30)]
    rows += [[1.0, 1.0, 1.0, 1.0, 1.0], [0.0, -np.inf, 2.5], [-np.inf, -np.inf], [3.0, np.nan, 1.0],
             [np.inf, -1.0, 2.0], [-np.inf, 0.5], [100.0, -100.0, 5.0, 5.0]]
    strategies = [lambda t: t, lambda t: -t, lambda t: 0]
    prng = np.random.default_rng(1)
    strategies += [lambda t: int(prng.integers(-t, t + 1))] * 2
    used = 0.0
    for xs in rows:
        r = log_add_exp.element(lae, xs)
        for pick in strategies:
            for v in every_tree(xs, _body(dtype, t, pick)):
                assert _inside(r, v, dtype), (xs, r, v)
                if isinstance(r, Range) and r.hi > r.lo:
                    used = max(used, abs(v - float(r.nearest)) / float((r.hi - r.lo) / 2))
    assert used > 0.01   # the adversarial schedules reach into the range: it is not vacuously wide


def test_special_values_and_single_leaves_are_exact():
    from shlo_conform.spec.types import element_type
    lae = log_add_exp.LogAddExp(element_type("f32").format, 4, 4)
    assert math.isnan(log_add_exp.element(lae, [1.0, np.nan, np.inf]))
    assert log_add_exp.element(lae, [1.0, np.inf, -np.inf]) == np.inf
    assert log_add_exp.element(lae, [-np.inf, -np.inf]) == -np.inf
    assert log_add_exp.element(lae, [-np.inf, 2.5, -np.inf]) == 2.5
    zero = log_add_exp.element(lae, [-np.inf, -0.0])
    assert isinstance(zero, Range) and zero.lo == zero.hi == 0   # ±0: whether −inf joined it
    over = log_add_exp.element(lae, [3.4028235e38, 3.4028235e38])   # the final add may round past the largest f32
    assert isinstance(over, ImplDefined) and ANY_VALUE in over.alternatives.values()


def test_past_half_over_the_unit_roundoff_no_bound_is_stated():
    """u·(n − 1) ≥ 1/2 leaves Δ's denominator no room: f16 (u = 2^-11) is
    bounded up to 1,024 finite leaves and any value (labelled) from 1,025;
    a row of NaN or +inf keeps its one value however long."""
    from shlo_conform.spec.types import element_type
    lae = log_add_exp.LogAddExp(element_type("f16").format, 1, 1)
    rng = np.random.default_rng(5)
    xs = list(rng.normal(0, 1, 1025).astype(np.float16).astype(float))
    assert isinstance(log_add_exp.element(lae, xs[:1024]), Range)
    many = log_add_exp.element(lae, xs)
    assert isinstance(many, ImplDefined) and log_add_exp.TOO_MANY in many.alternatives
    assert math.isnan(log_add_exp.element(lae, xs + [np.nan])) and log_add_exp.element(lae, xs + [np.inf]) == np.inf


def test_the_centre_is_mpmaths_log_sum_exp_and_the_bound_grows_with_the_leaves():
    from shlo_conform.spec.types import element_type
    lae = log_add_exp.LogAddExp(element_type("f32").format, 4, 4)
    rng = np.random.default_rng(3)
    widths = []
    for n in (2, 16, 256):
        xs = list(rng.normal(0, 2, n).astype(np.float32).astype(float))
        r = log_add_exp.element(lae, xs)
        with mpmath.workprec(200):
            true = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(x)) for x in xs))
        assert abs(float(r.nearest) - float(true)) < 1e-13
        assert r.lo < float(true) < r.hi
        widths.append(float(r.hi - r.lo))
    assert widths[0] < widths[1] < widths[2] < 1e-3


def test_a_body_with_an_approximate_op_is_not_stated_exact_by_enumeration():
    """A body that is neither a monoid nor a recognised function is run on
    the oracle's values for every schedule; where it has an approximate op
    a backend may give other values within its tolerance, so "any value"
    joins the alternatives (it was the enumerated values alone: XLA's
    cumlogsumexp over 8 elements DISAGREED by 1 ulp)."""
    body = _hand(LAE.format(D="%a, %b", T=", FLOAT", EXP="exponential", LOG="log",
                            M="%m = stablehlo.maximum %a, %b : tensor<f32>"))   # not log-add-exp
    assert schedule.approximate_ops(body) == ["exponential", "log"]
    xs = [np.float32(v) for v in (0.5, 1.5, -0.25)]
    got = schedule.reduce_slice([(x,) for x in xs], (np.float32(-np.inf),), body, [body.inputs[0].element_type])
    assert isinstance(got[0], ImplDefined) and any("exponential, log may differ" in k and v is ANY_VALUE
                                                   for k, v in got[0].alternatives.items())
    exact = _hand("""    %s = stablehlo.subtract %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>""")
    assert schedule.approximate_ops(exact) == []
    got = schedule.reduce_slice([(x,) for x in xs], (np.float32(0),), exact, [exact.inputs[0].element_type])
    labels = list(getattr(got[0], "alternatives", {}))
    assert labels and not any("tolerance" in k for k in labels)   # its one "any value" is the init's


@pytest.mark.parametrize("W", [np.float64, np.longdouble])
def test_the_centre_margin_is_at_least_twice_the_documented_error(W):
    """The float64 (long double) evaluation of M + log Σ e^(x−M) errs by at
    most (n + 1)·ε/2 in the differences and the sum, 4 ulps in exp and in
    log (whose result is at most |M| + log n, the log itself at most
    1 + log n), and ε/2·(|M| + log n) in the final add: the margin must be
    at least twice that sum, for large and small leaves and many of them."""
    eps = W(np.finfo(W).eps)
    for M in (0.0, 1e-3, 1.0, 87.0, 1000.0, -1000.0, 1e6):
        for n in (1, 2, 3, 17, 100, 2048, 1 << 20):
            Mw, nw = W(M), W(n)
            documented = ((nw + 1) * eps / 2 + 4 * eps * (1 + np.log(nw))
                          + eps / 2 * (abs(Mw) + np.log(nw)))
            assert log_add_exp.centre_margin(np.asarray([Mw]), np.asarray([nw]), eps)[0] >= 2 * documented, (M, n)
