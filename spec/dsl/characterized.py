"""Semantics of results the seed defines by a property (cholesky, triangular_solve).

Any result with the property conforms, so what judges is a criterion with a
stated bound (`Characterized.criterion`, its finding a `Measured`), not a
value; the record/recall pair lets the judge evaluate it on a backend's
output without the oracle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

from ..types import TensorType


@dataclass(frozen=True)
class Measured:
    """What an op's `Characterized.criterion` finds of one result.

    `value`: the measured quantity (a backward-error ratio); the property
    holds where it is at most `threshold`.  `ok`: the verdict — False only
    where the value is *provably* above the threshold (the criterion
    computes an enclosure of it; `detail` shows it), or where a part of the
    property without a ratio fails (a non-positive diagonal, a NaN).
    `scored`: a bool mask of the result's elements the criterion reads
    (None: all); the others are implementation-defined (cholesky's opposite
    triangle), never judged, and left out of the ULP distances shown.
    `low`, `high`: the enclosure of `value` (the criterion's own rounding
    bounded), where the criterion computes one."""

    value: float
    threshold: float
    ok: bool
    detail: str = ""
    scored: Any = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Characterized:
    """Semantics of ops whose result the seed defines by a property rather
    than a value ("`result` is a Cholesky decomposition of `a`", "the
    solution to op(a)·x = b"): any result with the property conforms, and
    which one an implementation returns depends on its order of evaluation.

    `criterion(op, operands, result) -> Measured`: the property every
    correct result must have, with a stated bound (`operands` the operand
    arrays in table order, `result` the op's one result as an array of its
    type).  This is what judges.
    `reference(op, *operands) -> array`: a result computed in high precision
    and rounded into the result type — what the oracle shows as the value
    and what ULP distances are measured from, never what judges.
    `undefined(op, *operands) -> str | None`: why the seed makes the
    behaviour undefined on these values (a matrix not Hermitian
    positive-definite, a singular system), or None.  There every result
    passes, labelled; the criterion is still reported as a known behaviour.
    `condition(op, *operands) -> float`: the condition number of the
    problem (shown with the expectation; None: not stated).
    `statement`: the criterion in words, as reports print it.

    The oracle states a "residual" expectation (oracle/characterized.py,
    spec/kinds/residual.py) that records the op, its attributes and its
    operands (`record`), so the judge can evaluate the criterion on a
    backend's output without the oracle (`recall`)."""

    composable: ClassVar[bool] = False   # its result is not a function of its operands: fuzz does not chain it

    reference: Callable
    criterion: Callable
    undefined: Callable | None = None
    condition: Callable | None = None
    statement: str = ""

    @staticmethod
    def record(op: "Instance", operands: Sequence) -> dict:
        """What the judge needs to evaluate the criterion again: the op's
        mnemonic, its attributes (JSON values) and its operands as type + hex."""
        from ..types import tensor_to_hex
        types = [op.operands[o.name] for o in op.spec.operands]
        return {"op": op.spec.mnemonic,
                "attributes": {k: (list(v) if isinstance(v, tuple) else v) for k, v in op.attributes.items()},
                "operands": [{"type": t.mlir, "hex": tensor_to_hex(Characterized._typed(a, t), t)}
                             for a, t in zip(operands, types)]}

    @staticmethod
    def _typed(a, t: TensorType):
        """`a` as an array of `t`'s numpy type (ml_dtypes for the narrow formats)."""
        import numpy as np
        return np.asarray(a).astype(t.element_type.numpy, copy=False).reshape(tuple(int(d) for d in t.shape))

    @staticmethod
    def recall(record: dict, result_type: TensorType) -> tuple:
        """(Instance, operand arrays) of a `record` and the result's type."""
        from ..ops import OPS
        from ..types import parse_type, tensor_from_hex
        spec = OPS[record["op"]]
        types = [parse_type(o["type"]) for o in record["operands"]]
        arrays = [tensor_from_hex(o["hex"], t) for o, t in zip(record["operands"], types)]
        attrs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in record["attributes"].items()}
        inst = spec.instance({o.name: t for o, t in zip(spec.operands, types)}, attrs,
                             {spec.results[0].name: result_type})
        return inst, arrays
