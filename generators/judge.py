"""The oracle's verdict at a case's birth: expected outputs as suite records.

`generators` sits on floor 3 and may not import `backends`; the oracle
(floor 2) executes the spec's semantics.  This module is the one place that
calls it and hands back `suites.records.Expectation`s, so the suite writer
does not care how the oracle is organised inside.
"""
from __future__ import annotations

import importlib

import numpy as np

from ..spec.dsl import Instance, OpSpec
from ..suites.records import Expectation


class OracleUnavailable(RuntimeError):
    """No oracle entry point is installed yet (the suite cannot be judged)."""


# Where the oracle may publish `expectations(mlir_text, inputs) -> list[Expectation]`,
# in order of preference.
_ENTRY_POINTS = (
    ("shlo_conform.oracle", "expectations"),
    ("shlo_conform.oracle.program", "expectations"),
    ("shlo_conform.oracle.elementwise", "expectations"),
)


def _entry():
    for mod, name in _ENTRY_POINTS:
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        fn = getattr(m, name, None)
        if callable(fn):
            return fn
    raise OracleUnavailable("the oracle publishes no `expectations(mlir, inputs)` "
                            "(looked in " + ", ".join(f"{m}.{n}" for m, n in _ENTRY_POINTS) + ")")


def expectations(spec: OpSpec, inst: Instance, mlir: str, inputs: list[np.ndarray]) -> list[Expectation]:
    """Expected outputs of one value case, judged by the oracle."""
    out = _entry()(mlir, inputs)
    for e in out:
        if not isinstance(e, Expectation):
            raise TypeError(f"oracle returned {type(e).__name__}, not suites.records.Expectation")
    return list(out)
