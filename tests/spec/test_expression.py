"""spec/expression.py: a region's returns read as canonical expression trees.

What a hand-written copy of JAX's body may change without changing the
function — the operands of a symmetric op, GT(x, y) written as LT(y, x),
the compare type left to its default — reads the same; what changes the
function (a subtraction's order, another compare type, a logical op on
non-booleans) does not."""
from __future__ import annotations

import pytest

from shlo_conform.oracle.program import parse_program
from shlo_conform.spec import expression

X, Y = expression.arg(0), expression.arg(1)
READ = frozenset({"add", "subtract", "and", "or", "select", "maximum"})


def test_symmetric_operands_and_directions_are_canonical():
    assert expression.op("add", X, Y) == expression.op("add", Y, X)
    assert expression.op("maximum", X, Y) == expression.op("maximum", Y, X)
    assert expression.op("subtract", X, Y) != expression.op("subtract", Y, X)
    assert expression.compare("EQ", "FLOAT", X, Y) == expression.compare("EQ", "FLOAT", Y, X)
    assert expression.compare("NE", "FLOAT", X, Y) == expression.compare("NE", "FLOAT", Y, X)
    assert expression.compare("GT", "FLOAT", X, Y) == expression.compare("LT", "FLOAT", Y, X)
    assert expression.compare("GE", "SIGNED", X, Y) == expression.compare("LE", "SIGNED", Y, X)
    assert expression.compare("LT", "FLOAT", X, Y) != expression.compare("LT", "FLOAT", Y, X)


def _block(body: str, t: str = "f32", ret: str = "f32"):
    text = f"""
func.func @main(%x: tensor<3x{t}>) -> tensor<{ret}> {{
  %i = stablehlo.constant dense<{"0.0" if t.startswith("f") else "0"}> : tensor<{t}>
  %r = stablehlo.reduce(%x init: %i) across dimensions = [0] : (tensor<3x{t}>, tensor<{t}>) -> tensor<{ret}>
   reducer(%a: tensor<{t}>, %b: tensor<{t}>) {{
{body}
  }}
  return %r : tensor<{ret}>
}}"""
    p = parse_program(text)
    [step] = [s for s in p.steps if s.inst is not None and s.inst.spec.mnemonic == "reduce"]
    return step.inst.regions["body"].block


def _cmp_select(direction: str, ctype: str, t: str = "f32") -> str:
    return f"""    %c = stablehlo.compare {direction}, %a, %b{ctype} : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %s = stablehlo.select %c, %a, %b : tensor<i1>, tensor<{t}>
    stablehlo.return %s : tensor<{t}>"""


@pytest.mark.parametrize("t,direction,ctype,read", [
    ("f32", "GT", ", FLOAT", ("compare", "LT", "FLOAT", Y, X)),
    ("f32", "GT", "", ("compare", "LT", "FLOAT", Y, X)),            # the default type of a float compare
    ("ui8", "GT", ", UNSIGNED", ("compare", "LT", "UNSIGNED", Y, X)),
    ("ui8", "LT", "", ("compare", "LT", "UNSIGNED", X, Y)),
    ("i32", "EQ", ", SIGNED", ("compare", "EQ", "SIGNED", X, Y)),
])
def test_a_compare_reads_with_its_type(t, direction, ctype, read):
    got = expression.returns(_block(_cmp_select(direction, ctype, t), t, t), READ)
    assert got == (("select", read, X, Y),)


def test_a_totalorder_compare_and_unknown_ops_are_not_read():
    assert expression.returns(_block(_cmp_select("GT", ", TOTALORDER")), READ) is None
    mul = """    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>"""
    assert expression.returns(_block(mul), READ) is None
    assert expression.returns(_block(mul), READ | {"multiply"}) == (("multiply", X, Y),)


def test_or_and_are_read_on_booleans_only():
    bits = """    %o = stablehlo.or %a, %b : tensor<i32>
    stablehlo.return %o : tensor<i32>"""
    assert expression.returns(_block(bits, "i32", "i32"), READ) is None
    flags = """    %o = stablehlo.or %b, %a : tensor<i1>
    stablehlo.return %o : tensor<i1>"""
    assert expression.returns(_block(flags, "i1", "i1"), READ) == (("or", X, Y),)


def test_a_deep_tree_is_not_read():
    """Past MAX_DEPTH the reader gives up (a body JAX writes is a few deep)."""
    lines, v = [], "%a"
    for k in range(expression.MAX_DEPTH + 2):
        lines.append(f"    %v{k} = stablehlo.add {v}, %b : tensor<f32>")
        v = f"%v{k}"
    deep = "\n".join(lines) + f"\n    stablehlo.return {v} : tensor<f32>"
    assert expression.returns(_block(deep), READ) is None
    shallow = "\n".join(lines[:3]) + "\n    stablehlo.return %v2 : tensor<f32>"
    assert expression.returns(_block(shallow), READ) is not None
