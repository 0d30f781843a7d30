"""The oracle as a backend: the encoded spec executed at high precision.

It runs programs like any implementation, so `run_program(text, inputs)`
answers "what does the spec say?" with the primary value of every output
(the correctly rounded result; the first alternative where the spec allows
several).  Full expectations with tolerances and alternatives are what
generators store in suites (generators/expect.py).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..oracle.elementwise import Unspecified
from ..oracle.grid import execute_on_grid
from ..oracle.host import Host, session
from ..oracle.program import CannotJudge, ProgramRejected, execute, parse_program
from ..spec.expectation import Expectation
from .base import Backend, HostQueues, Rejected, Unsupported


class OracleBackend(Backend):
    """`choice`: which value an implementation-defined element takes —
    "primary" (the first alternative: what `run_program` answers) or
    "last" (the last alternative that names values): both are
    implementations the spec allows.  The mutation tool scores a mutant
    both ways, since a changed alternative shows only where it is chosen."""
    name = "oracle"

    def __init__(self, choice: str = "primary") -> None:
        if choice not in ("primary", "last"):
            raise ValueError(f"choice {choice!r}: primary or last")
        self.choice = choice

    def _value(self, o: Expectation) -> np.ndarray:
        named = [a for a in o.alternatives if a.bits is not None] if self.choice == "last" else []
        return o.alternative_array(named[-1]) if named else o.array()

    def compile(self, mlir: str, grid=None) -> Any:
        try:
            return parse_program(mlir, grid)
        except CannotJudge as e:   # an op outside StableHLO with no decomposition: nothing to judge
            raise Unsupported(f"oracle: cannot judge {e.op}: {e}") from None
        except ProgramRejected as e:
            raise Rejected(str(e)) from None

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [self._value(o) for o in _outputs(executable, inputs)]

    def run_with_host(self, executable: Any, inputs: Sequence[np.ndarray], host: HostQueues):
        """The run with the case's queues (oracle/host.py): outputs, and the
        log's primary values in the order the oracle wrote them."""
        h = Host(list(host.infeed), {k: list(v) for k, v in host.channels.items()})
        with session(h):
            outs = [self._value(o) for o in _outputs(executable, inputs)]
        return outs, [(e.stream, e.value.array()) for e in h.log]

    grid_capable = True

    def compile_grid(self, mlir: str, grid) -> Any:
        """The program, for every process of `grid` (spec.grid.Grid)."""
        return self.compile(mlir, grid), grid

    def run_grid(self, executable: Any, inputs_per_process: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
        """Every process of the grid (oracle/grid.py), each on its inputs
        (flattened id order): each process's outputs, in that order.
        Processes that cannot all meet at a collective are `Unsupported`
        (the spec states no result), never a hang."""
        program, grid = executable
        try:
            outs = execute_on_grid(program, grid, [list(x) for x in inputs_per_process])
        except Unspecified as e:
            raise Unsupported(f"the spec states no result: {e}") from None
        except CannotJudge as e:
            raise Unsupported(f"oracle: {e}") from None
        except ProgramRejected as e:
            raise Rejected(str(e)) from None
        return [[self._value(o) for o in per] for per in outs]

    def describe(self) -> str:
        return ("oracle (the encoded spec: exact arithmetic; correct rounding proven from arb enclosures, "
                "mpmath's Ziv loop where no arb form exists)")


def _outputs(program, inputs) -> list[Expectation]:
    try:
        return execute(program, inputs)
    except Unspecified as e:
        raise Unsupported(f"the spec states no result: {e}") from None
