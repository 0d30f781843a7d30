"""rng and rng_bit_generator: constraints, the seed's examples, the published
algorithms' known answers, and JAX programs on the oracle and XLA.

Independent truth: the seed's Examples (rng_bit_generator's printed bits,
rng's printed sample), the Random123 known-answer vectors for zero key and
counter (Threefry-2x32-20: 0x6b200159 0x99ba4efe; Philox-4x32-10:
0x6627e8d5 0xe169c58d 0xbc57ac4c 0x9b00dbd8), and XLA:CPU (a second
implementation) for the JAX programs.
"""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.oracle.elementwise import Unspecified
from shlo_conform.oracle.program import ProgramRejected, execute, parse_program
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops.rng_bit_generator import philox4x32, threefry2x32
from shlo_conform.suites.compare import compare


def rbg(alg: str, n: int, out: str) -> str:
    return (f'func.func @main(%s: tensor<{n}xui64>) -> (tensor<{n}xui64>, tensor<{out}>) {{\n'
            f'  %0:2 = "stablehlo.rng_bit_generator"(%s) {{rng_algorithm = #stablehlo<rng_algorithm {alg}>}} : '
            f'(tensor<{n}xui64>) -> (tensor<{n}xui64>, tensor<{out}>)\n'
            f'  return %0#0, %0#1 : tensor<{n}xui64>, tensor<{out}>\n}}')


def rng(dist: str, et: str, shape: str, dims: str, res: str | None = None) -> str:
    res = res or et
    return (f'func.func @main(%a: tensor<{et}>, %b: tensor<{et}>) -> tensor<{shape}x{res}> {{\n'
            f'  %sh = stablehlo.constant dense<[{dims}]> : tensor<{len(dims.split(","))}xi64>\n'
            f'  %0 = "stablehlo.rng"(%a, %b, %sh) {{rng_distribution = #stablehlo<rng_distribution {dist}>}} : '
            f'(tensor<{et}>, tensor<{et}>, tensor<{len(dims.split(","))}xi64>) -> tensor<{shape}x{res}>\n'
            f'  return %0 : tensor<{shape}x{res}>\n}}')


# -- known answers and the seed's examples --------------------------------------

def test_random123_known_answers():
    assert [int(x) for x in threefry2x32((0, 0), 0, 0)] == [0x6B200159, 0x99BA4EFE]
    assert [int(x) for x in philox4x32((0, 0), (0, 0, 0, 0))] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def test_seed_example_rng_bit_generator():
    """The oracle's THREE_FRY is bit for bit the seed's printed output and state."""
    state, out = execute(parse_program(rbg("THREE_FRY", 2, "2x2xui64")), [np.array([1, 2], np.uint64)])
    printed = np.array([[9236835810183407956, 16087790271692313299],
                        [18212823393184779219, 2658481902456610144]], np.uint64)
    assert np.array_equal(out.array(), printed) and state.array().tolist() == [1, 6]
    got = compare(out, printed)
    assert got.ok and got.alternatives_used == [f"same bits as {out.statistical['published']}"]
    assert compare(state, np.array([1, 6], np.uint64)).ok
    assert not compare(state, np.array([1, 2], np.uint64)).ok   # the state did not change


def test_seed_example_rng_sample_meets_expectation():
    exp, = execute(parse_program(rng("UNIFORM", "i32", "3x3", "3, 3")), [np.int32(0), np.int32(2)])
    assert exp.kind == "statistical" and exp.statistical["a"] == 0 and exp.statistical["b"] == 2
    assert compare(exp, np.array([[1, 0, 1], [1, 1, 1], [0, 0, 0]], np.int32)).ok
    bad = compare(exp, np.array([[1, 0, 1], [1, 1, 1], [0, 0, 2]], np.int32))
    assert not bad.ok and "outside [0, 2)" in bad.detail


# -- constraints -------------------------------------------------------------------

@pytest.mark.parametrize("alg,n,ok", [("THREE_FRY", 2, True), ("THREE_FRY", 3, False), ("PHILOX", 2, True),
                                      ("PHILOX", 3, True), ("PHILOX", 4, False), ("DEFAULT", 5, True)])
def test_rng_bit_generator_c2_state_size(alg, n, ok):
    text = rbg(alg, n, "4xui32")
    if ok:
        parse_program(text)
    else:
        with pytest.raises(ProgramRejected) as e:
            parse_program(text)
        assert e.value.constraint == "rng_bit_generator_c2"


def test_rng_bit_generator_c1_state_type():
    text = ('func.func @main(%s: tensor<2xui64>) -> (tensor<3xui64>, tensor<4xui32>) {\n'
            '  %0:2 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm PHILOX>} : '
            '(tensor<2xui64>) -> (tensor<3xui64>, tensor<4xui32>)\n'
            '  "func.return"(%0#0, %0#1) : (tensor<3xui64>, tensor<4xui32>) -> ()\n}')
    with pytest.raises(ProgramRejected) as e:
        parse_program(text)
    assert e.value.constraint == "rng_bit_generator_c1"


def test_rng_c1_c2_c3():
    with pytest.raises(ProgramRejected) as e:   # NORMAL of integers
        parse_program(rng("NORMAL", "i32", "4", "4"))
    assert e.value.constraint == "rng_c2"
    with pytest.raises(ProgramRejected) as e:   # result type other than a's
        parse_program(rng("UNIFORM", "f32", "4", "4", res="f16"))
    assert e.value.constraint == "rng_c1"
    with pytest.raises(ProgramRejected) as e:   # two shape entries for a rank-1 result
        parse_program(rng("UNIFORM", "f32", "4", "4, 1"))
    assert e.value.constraint == "rng_c3"
    parse_program(rng("UNIFORM", "i1", "4", "4"))   # boolean UNIFORM is allowed (C2 only restricts NORMAL)
    spec = OPS["rng"]
    assert [c.__name__ for c in spec.constraints] == ["rng_c1", "rng_c2", "rng_c3"]


def test_rng_c3_values_checked_when_run():
    """Generic form, read unverified: the shape's values reach the op only when it runs
    (jaxlib's verifier refuses the pretty form outright)."""
    text = ('func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<4xf32> {\n'
            '  %sh = "stablehlo.constant"() {value = dense<5> : tensor<1xi64>} : () -> tensor<1xi64>\n'
            '  %0 = "stablehlo.rng"(%a, %b, %sh) {rng_distribution = #stablehlo<rng_distribution UNIFORM>} : '
            '(tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>\n'
            '  "func.return"(%0) : (tensor<4xf32>) -> ()\n}')
    program = parse_program(text)   # lenient: C3's values are not seen when the program is read
    with pytest.raises(ValueError, match="rng_c3"):
        execute(program, [np.float32(0), np.float32(1)])


@pytest.mark.parametrize("dist,a,b", [("UNIFORM", 1.0, 1.0), ("UNIFORM", 2.0, 1.0), ("NORMAL", 0.0, -1.0),
                                      ("UNIFORM", -np.inf, 1.0)])
def test_undefined_behaviour_states_nothing(dist, a, b):
    with pytest.raises(Unspecified):
        execute(parse_program(rng(dist, "f32", "4", "4")), [np.float32(a), np.float32(b)])


def test_boolean_uniform_is_false_and_normal_sd_zero_is_the_mean():
    exp, = execute(parse_program(rng("UNIFORM", "i1", "8", "8")), [np.bool_(False), np.bool_(True)])
    assert compare(exp, np.zeros(8, bool)).ok and not compare(exp, np.array([True] + [False] * 7)).ok
    exp, = execute(parse_program(rng("NORMAL", "f32", "8", "8")), [np.float32(1.5), np.float32(0)])
    assert compare(exp, np.full(8, 1.5, np.float32)).ok and not compare(exp, np.full(8, 1.25, np.float32)).ok


# -- XLA: determinism, its state layout, and JAX programs --------------------------

import jax


@pytest.fixture(scope="module")
def xla():
    from shlo_conform.backends.xla import XlaBackend
    return XlaBackend()


@pytest.mark.parametrize("alg,n", [("THREE_FRY", 2), ("PHILOX", 2), ("PHILOX", 3)])
def test_xla_deterministic_and_published_layout(xla, alg, n):
    """Same initial_state twice: same bits and state (the seed's promise);
    and the oracle's published-algorithm layout is XLA's."""
    text = rbg(alg, n, "64xui32")
    state = np.array([0x0123456789ABCDEF, 0x1111222233334444, 0x5555666677778888][:n], np.uint64)
    exe = xla.compile(text)
    first, second = xla.run(exe, [state]), xla.run(exe, [state])
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    exp_state, exp_out = execute(parse_program(text), [state])
    assert np.array_equal(exp_out.array(), first[1]) and np.array_equal(exp_state.array(), first[0])
    assert compare(exp_out, first[1]).ok and compare(exp_state, first[0]).ok


def _oracle_vs_xla(f, *args):
    import jax.numpy as jnp  # noqa: F401
    text = jax.jit(f).lower(*args).as_text()
    exps = execute(parse_program(text), [np.asarray(a) for a in args])
    outs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    assert len(exps) == len(outs)
    for e, o in zip(exps, outs):
        got = compare(e, np.asarray(o))
        assert got.ok, got.detail
    return text


def test_jax_random_threefry_on_oracle_and_xla():
    """The default threefry key lowers to integer arithmetic (no rng op)."""
    import jax.numpy as jnp
    key = jax.random.key_data(jax.random.key(42))
    text = _oracle_vs_xla(lambda k: (jax.random.uniform(jax.random.wrap_key_data(k), (16,), jnp.float32),
                                     jax.random.bits(jax.random.wrap_key_data(k), (8,), jnp.uint32)), key)
    assert "rng_bit_generator" not in text


def test_jax_random_rbg_on_oracle_and_xla():
    """impl='rbg' lowers to rng_bit_generator; the oracle's expectation holds XLA's output."""
    import jax.numpy as jnp
    key = jax.random.key_data(jax.random.key(7, impl="rbg"))
    text = _oracle_vs_xla(lambda k: jax.random.bits(jax.random.wrap_key_data(k, impl="rbg"), (256,), jnp.uint32),
                          key)
    assert "rng_bit_generator" in text
    # Downstream of the bits the oracle expects what its own sample gives: that
    # holds XLA only because the oracle's DEFAULT is XLA's Philox (a known limit:
    # a statistical value does not stay statistical through later ops).
    _oracle_vs_xla(lambda k: jax.random.uniform(jax.random.wrap_key_data(k, impl="rbg"), (64,), jnp.float32), key)
