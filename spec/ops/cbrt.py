"""cbrt — element-wise cubic root (spec section "cbrt")."""
from ..dsl import COMPLEX, FLOAT, Elementwise, Generic, OpSpec, Operand, Result, finite_nonzero
from ..dsl.quantization import PER_TENSOR
from ..quantized import same_baseline_type
from .. import annex_g, ieee, samples
from ..exercise import Exercise


def cbrt_c1(op):
    """(C1) `operand` and `result` have the same type.
    v1.20 reads `baseline_type(operand) = baseline_type(result)`: the same for every
    non-quantized type; per-tensor quantized tensors may differ in scales
    and zero points."""
    return same_baseline_type(op.operand, op.result)


def infer(op):
    return {"result": op.operand}


def element(op, x):
    """Floats: `rootn(x, 3)` from IEEE-754 (a real root, so cbrt(-8) = -2;
    rootn(±0, 3) = ±0, rootn(±inf, 3) = ±inf); complex: complex cubic root.

    rootn is a "recommended" operation of IEEE-754 §9.2, not a basic one, and
    the seed's Accuracy section promises nothing: accuracy "approx".  Exact
    roots (cbrt(27) = 3) are returned exactly."""
    if isinstance(x, complex):
        return annex_g.ccbrt(x)
    return ieee.rootn3(x)


SPEC = OpSpec(
    mnemonic="cbrt",
    operands=(Operand("operand", FLOAT + COMPLEX),),
    results=(Result("result", FLOAT + COMPLEX),),
    constraints=(cbrt_c1,),
    infer=infer,
    semantics=Elementwise(element, accuracy="approx", generic=Generic(ieee.real_cbrt, finite_nonzero)),
    exercise=Exercise(hard_floats=samples.roots),
    quantization=PER_TENSOR,   # v1.20: "or per-tensor quantized tensor"; dequantize_op_quantize
)
