"""The oracle's verdict at a case's birth: expected outputs as suite records.

This is the one place where the oracle's results (`oracle.elementwise.OracleOutput`)
meet the suite's record types: oracle/ and suites/ never import each other,
and generators sit above both.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..oracle.elementwise import OracleOutput, Unspecified
from ..oracle.program import ProgramRejected, execute, parse_program
from ..spec.types import from_bits
from ..suites.records import Alternative, Expectation, tensor_to_hex

__all__ = ["expectations", "to_expectation", "rejection", "ProgramRejected", "Unspecified"]


def to_expectation(o: OracleOutput) -> Expectation:
    """An oracle output as the suite records it: values through the hex of
    their bits (`spec.types.to_bits`), alternatives likewise."""
    t = o.type
    why = o.why
    if o.undecided:
        why = (why + "; " if why else "") + f"rounding undecided at elements {o.undecided[:10]}"
    return Expectation(
        type=t.mlir,
        hex=tensor_to_hex(o.array(), t),
        kind=o.kind,
        tolerance_ulp=o.tolerance_ulp,
        bit_exact=o.bit_exact,
        impl_defined=list(o.impl_defined),
        alternatives=[Alternative(label, None, list(bits)) if isinstance(bits, list)
                      else Alternative(label, tensor_to_hex(from_bits(bits, t.element_type), t))
                      for label, bits in o.alternatives.items()],
        why=why,
    )


def expectations(mlir: str, inputs: Sequence[np.ndarray]) -> list[Expectation]:
    """The expected outputs of @main on `inputs`.  Raises ProgramRejected for
    a program the encoded spec refuses, Unspecified where the spec states no
    result and names no alternatives (the generator then drops the case)."""
    return [to_expectation(o) for o in execute(parse_program(mlir), list(inputs))]


def rejection(mlir: str) -> str | None:
    """The constraint the encoded spec rejects a program for ("" when it
    rejects it for another reason — e.g. operands that cannot be matched to
    the op's inputs at all — and None when it accepts it)."""
    try:
        parse_program(mlir)
    except ProgramRejected as e:
        return e.constraint or ""
    return None
