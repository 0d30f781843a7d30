"""v1.20's composite (issue 35): run as its decomposition (spec/added/composite.py).

Truths: spec.md's Example (its `@my_op` is not shown: here it adds, so
1.5 + 2.25 = 3.75 exactly), hand computation for the constraints, mpmath
at high precision for a sine in a decomposition (rounded to f32 by mpmath
itself), and XLA and the reference interpreter executing a program
`jax.lax.composite` wrote.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from jax import export

from shlo_conform.oracle.execution import execute
from shlo_conform.oracle.program import parse_program
from shlo_conform.oracle.rejection import ProgramRejected
from shlo_conform.spec.added import ADDED
from shlo_conform.spec.added.composite import DECOMPOSITION, FunctionNameAttr
from shlo_conform.suites.compare import compare

EXAMPLE = """module {
func.func @main(%input0: tensor<f32>, %input1: tensor<f32>) -> tensor<f32> {
  %results = "stablehlo.composite"(%input0, %input1) {
    name = "my_namespace.my_op",
    composite_attributes = {my_attribute = "my_value"},
    decomposition = @my_op,
    version = 1 : i32
  } : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "func.return"(%results) : (tensor<f32>) -> () }
func.func private @my_op(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "func.return"(%r) : (tensor<f32>) -> () }
}"""


def _run(text: str, *inputs):
    return execute(parse_program(text), [np.asarray(a) for a in inputs])


def _rejected(text: str) -> ProgramRejected:
    with pytest.raises(ProgramRejected) as e:
        parse_program(text)
    return e.value


def test_the_spec_example_runs_its_decomposition():
    [e] = _run(EXAMPLE, np.float32(1.5), np.float32(2.25))
    assert e.array().tolist() == 3.75 and e.kind == "exact"


def test_the_attributes_are_read_and_defaulted():
    program = parse_program(EXAMPLE)
    [step] = program.steps
    assert (step.inst.name, step.inst.version, step.inst.composite_attributes.text) == (
        "my_namespace.my_op", 1, '{my_attribute = "my_value"}')
    bare = EXAMPLE.replace('composite_attributes = {my_attribute = "my_value"},', "").replace(
        ",\n    version = 1 : i32", "")
    [step] = parse_program(bare).steps
    assert (step.inst.version, step.inst.composite_attributes.text) == (0, "{}")   # "defaults to 0"


def test_each_constraint_alone():
    """C1 a name outside a namespace; C2 a decomposition the module lacks;
    C3 a decomposition taking f64; C4 a result the decomposition does not
    return — each program rejected naming it, and no other rule broken."""
    c1 = _rejected(EXAMPLE.replace('name = "my_namespace.my_op"', 'name = "my_op"'))
    c2 = _rejected(EXAMPLE.replace("decomposition = @my_op", "decomposition = @nowhere"))
    c3 = _rejected(EXAMPLE.replace("@my_op(%a: tensor<f32>", "@my_op(%a: tensor<f64>").replace(
        '%r = "stablehlo.add"(%a, %b)',
        '%c = "stablehlo.convert"(%a) : (tensor<f64>) -> tensor<f32>\n  %r = "stablehlo.add"(%c, %b)'))
    c4 = _rejected(EXAMPLE.replace("-> tensor<f32>\n  \"func.return\"(%results) : (tensor<f32>)",
                                   "-> tensor<f64>\n  \"func.return\"(%results) : (tensor<f64>)").replace(
        "func.func @main(%input0: tensor<f32>, %input1: tensor<f32>) -> tensor<f32>",
        "func.func @main(%input0: tensor<f32>, %input1: tensor<f32>) -> tensor<f64>"))
    assert [e.constraint for e in (c1, c2, c3, c4)] == ["composite_c1", "composite_c2", "composite_c3", "composite_c4"]
    spec = ADDED["composite"]
    assert spec.constraint("composite_c1").__doc__.startswith("(C1) `is_namespaced_op_name(name)`")
    names = ("a.b", "a1_.b$c.d", "x.y_9")
    bad = ("my_op", "1a.b", "a.", ".a", "a..b", "a.b c")
    inst = spec.instance({"inputs": []}, {"name": ""}, {"results": []}, {DECOMPOSITION: None})
    for n, want in [(n, True) for n in names] + [(n, False) for n in bad]:
        inst.attributes["name"] = n
        assert spec.constraint("composite_c1")(inst) is want, n


def test_a_decomposition_that_calls_its_composite_is_refused():
    loop = EXAMPLE.replace('%r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>',
                           '%r = "stablehlo.composite"(%a, %b) {name = "my.again", decomposition = @my_op} : '
                           "(tensor<f32>, tensor<f32>) -> tensor<f32>")
    assert "calls itself" in str(_rejected(loop))


def test_two_results_and_a_composite_inside_the_decomposition():
    """(a·b, a − b) on si32 by hand, then max(x, y) + y through a nested
    composite, on values chosen here."""
    text = """module {
func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %r:2 = "stablehlo.composite"(%a, %b) {name = "my.mul_sub", decomposition = @mul_sub}
    : (tensor<3xi32>, tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>)
  %m = "stablehlo.composite"(%r#0, %r#1) {name = "my.max_plus", decomposition = @outer}
    : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  "func.return"(%m, %r#1) : (tensor<3xi32>, tensor<3xi32>) -> () }
func.func private @mul_sub(%x: tensor<3xi32>, %y: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %p = "stablehlo.multiply"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %q = "stablehlo.subtract"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  "func.return"(%p, %q) : (tensor<3xi32>, tensor<3xi32>) -> () }
func.func private @outer(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  %m = "stablehlo.composite"(%x, %y) {name = "my.max", decomposition = @inner}
    : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %s = "stablehlo.add"(%m, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  "func.return"(%s) : (tensor<3xi32>) -> () }
func.func private @inner(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  %m = "stablehlo.maximum"(%x, %y) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  "func.return"(%m) : (tensor<3xi32>) -> () }
}"""
    # a = [2, -3, 4], b = [5, 1, -2]: a·b = [10, -3, -8], a − b = [-3, -4, 6];
    # max(a·b, a − b) + (a − b) = [10 - 3, -3 - 4, 6 + 6] = [7, -7, 12]
    m, q = _run(text, np.array([2, -3, 4], np.int32), np.array([5, 1, -2], np.int32))
    assert m.array().tolist() == [7, -7, 12] and q.array().tolist() == [-3, -4, 6]


def _scaled_sin():
    c = jax.lax.composite(lambda x, scale: jnp.sin(x) * scale, name="my.scaled_sin", version=2)
    return export.export(jax.jit(lambda x: c(x, scale=np.float32(2.0))))(jax.ShapeDtypeStruct((5,), jnp.float32))


X = np.array([0.5, -1.25, 3.0, 2.0 ** -20, 100.0], np.float32)


def test_jax_lax_composite_keeps_the_sine_tolerance():
    """jax.lax.composite's program (pretty form, its decomposition a private
    function with a dotted name): the oracle's value is 2·sin(x) correctly
    rounded (mpmath at 60 digits, rounded to 24 bits by mpmath), the
    expectation keeps the sine's tolerance (not exact), and XLA's run of
    the exported program is inside it."""
    exp = _scaled_sin()
    text = exp.mlir_module()
    assert "stablehlo.composite" in text and "decomposition = @my.scaled_sin" in text
    [e] = _run(text, X)
    assert e.kind != "exact"
    want = []
    for x in X.tolist():
        with mpmath.workdps(60):
            s = mpmath.sin(mpmath.mpf(x))
        with mpmath.workprec(24):
            want.append(float(+s) * 2)
    assert e.array().tolist() == want
    assert compare(e, np.asarray(exp.call(X))).ok


def test_xla_and_the_interpreter_run_composites():
    """Both backends run jax's composite program (XLA inlines the
    decomposition; the interpreter calls it) and agree with the oracle."""
    from shlo_conform.backends.base import compile_and_run, load_backend
    text = _scaled_sin().mlir_module()
    [e] = _run(text, X)
    for name in ("xla", "interpreter"):
        [out], _ = compile_and_run(load_backend(name), text, [X])
        assert compare(e, out).ok, name


def test_function_names_read_and_written():
    kind = FunctionNameAttr()
    assert kind.from_mlir("@my.scaled_sin") == "my.scaled_sin"
    assert kind.from_mlir('@"odd name"') == "odd name"
    assert kind.to_mlir("my.op") == "@my.op" and kind.to_mlir("odd name") == '@"odd name"'
    with pytest.raises(ValueError):
        kind.from_mlir('"my_op"')
