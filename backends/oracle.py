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
    name = "oracle"

    def compile(self, mlir: str, grid=None) -> Any:
        try:
            return parse_program(mlir, grid)
        except CannotJudge as e:   # an op outside StableHLO with no decomposition: nothing to judge
            raise Unsupported(f"oracle: cannot judge {e.op}: {e}") from None
        except ProgramRejected as e:
            raise Rejected(str(e)) from None

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [o.array() for o in _outputs(executable, inputs)]

    def run_with_host(self, executable: Any, inputs: Sequence[np.ndarray], host: HostQueues):
        """The run with the case's queues (oracle/host.py): outputs, and the
        log's primary values in the order the oracle wrote them."""
        h = Host(list(host.infeed), {k: list(v) for k, v in host.channels.items()})
        with session(h):
            outs = [o.array() for o in _outputs(executable, inputs)]
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
        return [[o.array() for o in per] for per in outs]

    def describe(self) -> str:
        return ("oracle (the encoded spec: exact arithmetic; correct rounding proven from arb enclosures, "
                "mpmath's Ziv loop where no arb form exists)")


def _outputs(program, inputs) -> list[Expectation]:
    try:
        return execute(program, inputs)
    except Unspecified as e:
        raise Unsupported(f"the spec states no result: {e}") from None
