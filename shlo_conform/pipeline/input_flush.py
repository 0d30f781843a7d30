"""The spec's result for a case with its subnormal inputs read as zeros.

`suites/causes.py` calls a failing element "subnormal flushed" when it meets
this expectation (input flush).  Computing it needs the oracle (floor 2,
beside `suites/`), so it is done here, on the runner's floor, and only for
failing cases whose inputs hold a subnormal: one oracle run of the case's
own program on the flushed inputs.  Exact for any op, element-wise or not.
"""
from __future__ import annotations

from ..suites.causes import flush_inputs
from ..suites.records import Case


def flushed_expectations(case: Case) -> list | None:
    """One Expectation per output of `case` on its flushed inputs, or None
    when no input holds a subnormal, the case talks to the host, or the
    oracle states no result there (then no element is called an input flush)."""
    if case.host is not None or case.kind != "value":
        return None
    arrays = case.input_arrays()
    flushed = flush_inputs(arrays, [v.tensor_type.element_type for v in case.inputs])
    if flushed is None:
        return None
    try:
        from ..oracle.program import execute, parse_program
        outs = execute(parse_program(case.mlir), flushed)
    except Exception:   # Unspecified, a program the oracle cannot run: no input-flush verdict
        return None
    if len(outs) != len(case.expected) or any(o.type != e.type for o, e in zip(outs, case.expected)):
        return None
    return outs
