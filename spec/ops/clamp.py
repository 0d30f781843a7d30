"""clamp — clamp every element between a minimum and a maximum (spec section
"clamp"): `minimum(maximum(operand, min_val), max_val)`, so the semantics
of each element type is that of `maximum` and `minimum` (IEEE 754-2019 for
floats: NaN propagates; lexicographic for complex, with the open cases those
ops declare).  `min_val` / `max_val` of rank 0 apply to every element (the
oracle broadcasts a rank-0 operand).
"""
from ..dsl import ANY, Elementwise, ImplDefined, OpSpec, Operand, Or, Result, rank, same_shape
from ..dsl.quantization import PER_TENSOR
from ..quantized import baseline_element_type, same_baseline_type
from .maximum import max_element
from .minimum import min_element


def clamp_c1(op):
    """(C1) Either `rank(min)` $=$ `0` or `shape(min)` $=$ `shape(operand)`."""
    return Or(rank(op.min) == 0, same_shape(op.min, op.operand))


def clamp_c2(op):
    """(C2) Either `rank(max)` $=$ `0` or `shape(max)` $=$ `shape(operand)`."""
    return Or(rank(op.max) == 0, same_shape(op.max, op.operand))


def clamp_c3(op):
    """(C3) `min`, `operand`, and `max` have the same element type.
    v1.20 reads `baseline_element_type(min) = baseline_element_type(operand) = baseline_element_type(max)`:
    the same for every non-quantized type; per-tensor quantized tensors may differ in scales and zero
    points."""
    return baseline_element_type(op.min) == baseline_element_type(op.operand) == baseline_element_type(op.max)


def clamp_c4(op):
    """(C4) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every non-quantized
    type."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def _alternatives(v) -> dict:
    return dict(v.alternatives) if isinstance(v, ImplDefined) else {"": v}


def _as_element(et, v):
    return complex(*v) if et.is_complex else v


def element(op, min_val, operand, max_val):
    """`minimum(maximum(operand, min_val), max_val)`, open cases of either step combined."""
    et = op.operand.element_type
    out, whys = {}, []
    inner = max_element(et, operand, min_val)
    if isinstance(inner, ImplDefined):
        whys.append("maximum: " + inner.why)
    for l1, v in _alternatives(inner).items():
        outer = min_element(et, _as_element(et, v), max_val)
        if isinstance(outer, ImplDefined):
            whys.append("minimum: " + outer.why)
        for l2, w in _alternatives(outer).items():
            label = "; ".join(x for x in (f"maximum→{l1}" if l1 else "", f"minimum→{l2}" if l2 else "") if x)
            out[label] = w
    if list(out) == [""]:
        return out[""]
    return ImplDefined(out, why=" / ".join(dict.fromkeys(whys)))


SPEC = OpSpec(
    mnemonic="clamp",
    operands=(Operand("min", ANY), Operand("operand", ANY), Operand("max", ANY)),
    results=(Result("result", ANY),),
    constraints=(clamp_c1, clamp_c2, clamp_c3, clamp_c4),
    infer=infer,
    semantics=Elementwise(element),
    # v1.20: "tensor or per-tensor quantized tensor" for each; dequantize_op_quantize(clamp, min, operand, max,
    # type(result))
    quantization=PER_TENSOR,
)
