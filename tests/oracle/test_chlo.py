"""CHLO, the ops JAX emits beside StableHLO (issue 21).

jnp.var and lax.square lower to chlo.square, the exact GELU to chlo.erfc,
lax.top_k to chlo.top_k.  The ops spec/chlo declares (the element-wise
functions, top_k, ragged_dot, mulhi) are judged by their meaning
(`Program.chlo_judged`; tests/oracle/test_chlo_math.py,
test_chlo_complex.py, test_chlo_structured.py); the rest the oracle rewrites with jaxlib's own
chlo-legalize-to-stablehlo (oracle/reading.py), judges the StableHLO that
comes out, and says which ops it legalized (`Program.legalized`).

Truth: hand computation (x·x is one correctly rounded multiply), numpy's
sort for top_k, and the reference interpreter run on the same legalized
program (an implementation that follows it op by op, with no fused
multiply-add: it must meet the oracle's expectation to the bit).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jax
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from shlo_conform.generators.expect import expected_outputs  # noqa: E402
from shlo_conform.oracle.program import CannotJudge, ProgramRejected, execute, parse_program  # noqa: E402
from shlo_conform.oracle.reading import read_registered  # noqa: E402
from shlo_conform.suites.compare import compare  # noqa: E402

jax.config.update("jax_enable_x64", False)


def _lowered(f, *args) -> str:
    return jax.jit(f).lower(*args).as_text()


def test_lax_square_is_judged_as_the_exact_square():
    x = np.array([1.5, -3.0, 1e-3, 3e19, -0.0, np.inf], np.float32)
    text = _lowered(lax.square, x)
    assert "chlo.square" in text
    program = parse_program(text)
    assert program.chlo_judged == {"chlo.square": 1} and program.legalized == {}
    (e,) = execute(program, [x])
    assert e.kind == "exact"
    with np.errstate(over="ignore"):
        assert e.bits.tolist() == (x * x).view(np.uint32).tolist()   # IEEE multiply: one correct rounding


def test_a_layer_norm_written_with_jnp_var_is_judged_and_holds_xla():
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    norm = lambda v: (v - v.mean(-1, keepdims=True)) / jnp.sqrt(jnp.var(v, -1, keepdims=True) + 1e-5)  # noqa: E731
    text = _lowered(norm, x)
    assert parse_program(text).chlo_judged == {"chlo.square": 1}
    (e,) = expected_outputs(text, [x])
    assert compare(e, np.asarray(jax.jit(norm)(x))).ok


def test_chlo_in_generic_form_is_read_too():
    text = ('func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n'
            '  %0 = "chlo.square"(%a) : (tensor<3xf32>) -> tensor<3xf32>\n'
            '  "func.return"(%0) : (tensor<3xf32>) -> ()\n}\n')
    program = parse_program(text)
    assert program.chlo_judged == {"chlo.square": 1}
    (e,) = execute(program, [np.array([2.0, -0.5, 3.0], np.float32)])
    assert e.array().tolist() == [4.0, 0.25, 9.0]


def test_top_k_is_judged_by_its_meaning_not_legalized():
    """chlo.top_k is declared (spec/chlo/top_k.py): the k largest by
    totalOrder, ties' indices in any order (JAX writes no `is_stable`)."""
    x = np.array([[0.5, -1.0, 7.0, 2.0, 2.0, -0.0], [3.0, 1.0, 4.0, 1.0, 5.0, 9.0]], np.float32)
    text = _lowered(lambda v: lax.top_k(v, 3), x)
    program = parse_program(text)
    assert program.chlo_judged == {"chlo.top_k": 1} and program.legalized == {}
    values, indices = expected_outputs(text, [x])
    order = np.argsort(-x, axis=1, kind="stable")[:, :3]     # ties: the lower index first, as a stable sort
    assert values.array().tolist() == np.take_along_axis(x, order, axis=1).tolist()
    assert indices.array().tolist() == order.tolist()
    assert compare(indices, np.array([[2, 4, 3], [5, 4, 2]], np.int32)).ok       # the tie 2.0, 2.0 swapped
    assert not compare(indices, np.array([[2, 3, 0], [5, 4, 2]], np.int32)).ok   # x[0, 0] = 0.5 is no 2.0


def test_programs_without_chlo_legalize_nothing():
    x = np.ones(4, np.float32)
    program = parse_program(_lowered(jnp.tanh, x))
    assert program.legalized == {} and program.chlo_judged == {}


def test_the_decomposition_is_the_one_the_interpreter_follows_to_the_bit():
    """A program whose CHLO arrives legalized (here: legalized with jaxlib's
    own pass first — top_k's sort, the complex arcsine's and arccosine's
    formulas; acos's decomposition carries a default `result_accuracy` on
    its sqrt) is judged as written, op by op: the reference interpreter,
    run on the same program, meets the oracle's expectation with no ULP of
    difference.  (spec/chlo now declares these ops, so the program as JAX
    writes it is judged by their meaning instead: test_chlo_complex.py.)"""
    from shlo_conform.backends.base import load_backend
    interp = load_backend("interpreter")
    rng = np.random.default_rng(1)
    z = (rng.uniform(-1, 1, 64) + 1j * rng.uniform(-1, 1, 64)).astype(np.complex64)
    cases = [(lambda v: lax.top_k(v, 5)[0], rng.uniform(-6, 6, (4, 64)).astype(np.float32)),
             (jnp.arccos, z), (jnp.arcsin, z)]
    for f, x in cases:
        written = _lowered(f, x)
        assert parse_program(written).chlo_judged and not parse_program(written).legalized
        text = read_registered(written).generic
        program = parse_program(text)
        assert program.legalized == {} and program.chlo_judged == {} and "chlo." not in text
        (e,) = execute(program, [x])
        (got,) = interp.run(interp.compile(text), [x])
        result = compare(e, got)
        assert result.ok and result.max_ulp == 0, (written.splitlines()[2], result.detail)


def test_result_accuracy_other_than_the_default_is_refused():
    x = np.ones(4, np.float32)
    text = _lowered(lambda v: lax.exp(v, accuracy=lax.AccuracyMode.HIGHEST), x)
    with pytest.raises(ProgramRejected, match="result_accuracy"):
        parse_program(text)


def test_a_chlo_op_that_does_not_decompose_cannot_be_judged_and_is_named():
    text = ("func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
            "  %0 = chlo.bessel_i1e %a : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>\n"
            "  return %0 : tensor<4xcomplex<f32>>\n}\n")
    with pytest.raises(CannotJudge) as e:
        parse_program(text)
    assert e.value.op == "chlo.bessel_i1e"
    assert "cannot judge chlo.bessel_i1e" in str(e.value)
    assert isinstance(e.value, ProgramRejected)   # callers that catch a refusal still catch it


def test_the_interpreter_aborts_on_chlo_and_runs_the_legalized_module():
    """Why a backend built on the reference interpreter must legalize first:
    on chlo.square it kills its process (LLVM ERROR); `legalize_chlo`, in
    the interpreter's own context, makes the same module run."""
    script = textwrap.dedent("""
        import sys, numpy as np
        from jax._src.interpreters import mlir as jm
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo
        from shlo_conform.oracle.reading import legalize_chlo
        text = ('func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\\n'
                '  %0 = chlo.square %a : tensor<3xf32> -> tensor<3xf32>\\n  return %0 : tensor<3xf32>\\n}\\n')
        with jm.make_ir_context(), ir.Location.unknown():
            m = ir.Module.parse(text)
            if sys.argv[1] == "legalize":
                print(legalize_chlo(m))
            x = ir.DenseElementsAttr.get(np.array([1.5, -2.0, 3.0], np.float32))
            print(np.array(stablehlo.eval_module(m, [x])[0]).tolist())
    """)
    raw = subprocess.run([sys.executable, "-c", script, "raw"], capture_output=True, text=True, timeout=120)
    assert raw.returncode != 0 and "chlo.square" in raw.stderr
    legal = subprocess.run([sys.executable, "-c", script, "legalize"], capture_output=True, text=True, timeout=120)
    assert legal.returncode == 0, legal.stderr
    assert legal.stdout.splitlines() == ["{'chlo.square': 1}", "[2.25, 4.0, 9.0]"]
