"""What the survey covers: the spec's element-wise ops that take and give one float type, and the types."""
from __future__ import annotations

import functools

FORMAT_VERSION = 1
# Every float format of at most 16 bits is surveyed whole: the seed's four,
# then v1.20's nine (spec.types.FLOAT_TYPES_V1_20, each declared once there).
EXHAUSTIVE = ("f8E4M3FN", "f8E5M2", "bf16", "f16",
              "f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FNUZ", "f8E4M3B11FNUZ",
              "f8E5M2FNUZ", "f8E8M0FNU")
SAMPLED = ("f32", "f64")
COMPLEX = ("c64", "c128")      # sampled over the plane, branch cuts included
DTYPES = EXHAUSTIVE + SAMPLED + COMPLEX
DEFAULT_SIZE = 1 << 20
CHUNK = 8192          # elements per oracle program
PROFILE_BINS = 400    # points of the ULP-against-input profile kept per op × type × backend


def element_type_named(name: str):
    from ..spec.types import element_type
    return element_type(name)


def program(op: str, arity: int, n: int, dtype: str) -> str:
    """@main applying `op` to `arity` operands of tensor<n x dtype>."""
    t = f"tensor<{n}x{element_type_named(dtype).mlir}>"
    args = ", ".join(f"%arg{i}: {t}" for i in range(arity))
    uses = ", ".join(f"%arg{i}" for i in range(arity))
    return (f"func.func @main({args}) -> {t} {{\n"
            f"  %0 = \"stablehlo.{op}\"({uses}) : ({', '.join([t] * arity)}) -> {t}\n"
            f"  func.return %0 : {t}\n}}\n")


def float_ops() -> dict[str, int]:
    """{op: arity} of every element-wise op of the encoded spec with one or
    two operands and no attributes whose program `T... -> T` the spec
    accepts for a float T (so is_finite, compare, convert to another type
    and complex are not; their results are not of the operand's type)."""
    from ..oracle.program import ProgramRejected, parse_program
    from ..spec.dsl import Elementwise
    from ..spec.ops import OPS
    out = {}
    for name, spec in sorted(OPS.items()):
        if not isinstance(spec.semantics, Elementwise) or spec.attributes or len(spec.operands) not in (1, 2):
            continue
        try:
            parse_program(program(name, len(spec.operands), 4, "f32"))
        except ProgramRejected:
            continue
        out[name] = len(spec.operands)
    return out


@functools.lru_cache(maxsize=None)
def accepts(op: str, arity: int, dtype: str) -> bool:
    """Does the encoded spec accept `op` on `dtype` (complex types: only some ops)?"""
    from ..oracle.program import ProgramRejected, parse_program
    try:
        parse_program(program(op, arity, 4, dtype))
    except ProgramRejected:
        return False
    return True


def exhaustive(arity: int, dtype: str) -> bool:
    """Every input is taken (unary ops on the narrow types, binary on 8 bits or fewer)."""
    return dtype in EXHAUSTIVE and (arity == 1 or element_type_named(dtype).bits <= 8)
