"""Why the oracle states no expectation for a program: it is not valid, or not ours to judge.

Every stage of reading a program (its syntax, its module's grid, each op's
constraints, a partitioned entry) raises these; they live apart from the
reader so each of those stages, and the grid runner, can raise them
without importing the others.
"""
from __future__ import annotations


class ProgramRejected(Exception):
    """The program is not a valid StableHLO program under the encoded spec.
    `constraint` names the violated rule (e.g. "add_c1") when there is one."""

    def __init__(self, message: str, constraint: str | None = None):
        super().__init__(message)
        self.constraint = constraint


class CannotJudge(ProgramRejected):
    """The program holds an op outside StableHLO that cannot be brought into
    it (a CHLO op jaxlib does not decompose): not a verdict on the program's
    validity — the oracle has nothing to judge.  `op` names it."""

    def __init__(self, op: str, message: str):
        super().__init__(message)
        self.op = op
