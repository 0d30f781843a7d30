"""The StableHLO process grid and the collective strategies (seed 000,
"Parallel execution" and "Collective ops").

A program runs on a 2-D grid of `num_replicas` × `num_partitions` processes
(both `ui32`); each process has a position `process_id = (replica_id,
partition_id)`.  Collective ops split the grid into process groups by one of
four strategies, written here as the seed writes them, so that op modules,
the oracle, generators and backend adapters share one reading:

* `cross_replica(replica_groups)`: each replica group × every partition id;
* `cross_partition(partition_groups)`: each partition group × every replica id;
* `cross_replica_and_partition(replica_groups)`: each replica group with all
  partition ids in one group;
* `flattened_ids(flattened_id_groups)`: ids `replica_id * num_partitions +
  partition_id`.

Every list of processes in this project (per-process inputs and outputs of
a suite case, of `run`, of a backend's `run_grid`) is in *flattened id
order*: the process at index `replica_id * num_partitions + partition_id`.

The seed requires the groups of each strategy to "have unique elements and
cover all" ids; `groups_problem` says, in one line, how a given list of
groups fails that (a program whose groups name a process twice is reported,
never run into a hang).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Sequence

ProcessId = tuple  # (replica_id, partition_id)

MAX_PROCESSES = 64   # what one machine runs as a grid (host devices, threads); larger grids are refused up front


@dataclass(frozen=True)
class Grid:
    """`num_replicas` × `num_partitions` processes (both ui32, both ≥ 1)."""

    num_replicas: int = 1
    num_partitions: int = 1

    def __post_init__(self):
        for name in ("num_replicas", "num_partitions"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v < 2 ** 32:
                raise ValueError(f"{name} must be a ui32 of at least 1, not {v!r}")

    @property
    def size(self) -> int:
        return self.num_replicas * self.num_partitions

    @property
    def replica_ids(self) -> list[int]:
        return list(range(self.num_replicas))

    @property
    def partition_ids(self) -> list[int]:
        return list(range(self.num_partitions))

    def processes(self) -> list[ProcessId]:
        """Every process id, in flattened id order."""
        return [(r, p) for r in self.replica_ids for p in self.partition_ids]

    def flattened(self, process: ProcessId) -> int:
        r, p = process
        return r * self.num_partitions + p

    def process(self, flattened_id: int) -> ProcessId:
        return divmod(flattened_id, self.num_partitions)

    def to_json(self) -> dict:
        return {"num_replicas": self.num_replicas, "num_partitions": self.num_partitions}

    @classmethod
    def from_json(cls, d: dict) -> "Grid":
        return cls(int(d["num_replicas"]), int(d["num_partitions"]))

    def __str__(self) -> str:
        return f"{self.num_replicas}×{self.num_partitions}"


SINGLE = Grid(1, 1)


_GRID_ATTR = re.compile(r"\b(mhlo\.num_replicas|mhlo\.num_partitions)\s*=\s*([^:,}\s]+)")


def stated_in_text(text: str):
    """The grid a module's attributes state (`module attributes
    {mhlo.num_partitions = 8 : i32, …}`: how JAX and XLA write it), read
    from its text before the first function; None when they state none, or
    a one-line refusal (a value that is not an integer, or not ≥ 1)."""
    head = text.split("func.func", 1)[0]
    sizes = {}
    for name, value in _GRID_ATTR.findall(head):
        try:
            sizes[name] = int(value)
        except ValueError:
            return f"module attribute {name} = {value} is not an integer"
    if not sizes:
        return None
    try:
        return Grid(sizes.get("mhlo.num_replicas", 1), sizes.get("mhlo.num_partitions", 1))
    except ValueError as e:
        return f"module attributes: {e}"


def cross_replica(grid: Grid, replica_groups: Sequence[Sequence[int]]) -> Iterator[list[ProcessId]]:
    for replica_group in replica_groups:
        for partition_id in grid.partition_ids:
            yield [(replica_id, partition_id) for replica_id in replica_group]


def cross_partition(grid: Grid, partition_groups: Sequence[Sequence[int]]) -> Iterator[list[ProcessId]]:
    for partition_group in partition_groups:
        for replica_id in grid.replica_ids:
            yield [(replica_id, partition_id) for partition_id in partition_group]


def cross_replica_and_partition(grid: Grid, replica_groups: Sequence[Sequence[int]]) -> Iterator[list[ProcessId]]:
    for replica_group in replica_groups:
        yield [(replica_id, partition_id) for partition_id in grid.partition_ids for replica_id in replica_group]


def flattened_ids(grid: Grid, flattened_id_groups: Sequence[Sequence[int]]) -> Iterator[list[ProcessId]]:
    for group in flattened_id_groups:
        yield [grid.process(f) for f in group]


STRATEGIES = {
    "cross_replica": (cross_replica, "replica_ids", "num_replicas"),
    "cross_partition": (cross_partition, "partition_ids", "num_partitions"),
    "cross_replica_and_partition": (cross_replica_and_partition, "replica_ids", "num_replicas"),
    "flattened_ids": (flattened_ids, "process ids", "size"),
}


def groups_problem(grid: Grid, strategy: str, groups: Sequence[Sequence[int]]) -> str | None:
    """Why `groups` is not a valid argument of `strategy` on `grid` ("must
    have unique elements and cover all" the ids), or None."""
    _, what, count = STRATEGIES[strategy]
    n = getattr(grid, count)
    flat = [int(i) for g in groups for i in g]
    bad = [i for i in flat if not 0 <= i < n]
    if bad:
        return f"{strategy}: id {bad[0]} is outside the grid's {what} 0..{n - 1} ({grid})"
    seen: set = set()
    for i in flat:
        if i in seen:
            return f"{strategy}: id {i} appears twice in the groups {[list(g) for g in groups]}"
        seen.add(i)
    missing = sorted(set(range(n)) - seen)
    if missing:
        return f"{strategy}: the groups do not cover {what} {missing} of the grid {grid}"
    return None


def process_groups(grid: Grid, strategy: str, groups: Sequence[Sequence[int]]) -> list[list[ProcessId]]:
    """The process groups `strategy` makes of `groups` on `grid` (ValueError
    naming the problem where the groups are not valid for it)."""
    problem = groups_problem(grid, strategy, groups)
    if problem:
        raise ValueError(problem)
    return list(STRATEGIES[strategy][0](grid, groups))


def group_of(groups: Sequence[Sequence[ProcessId]], process: ProcessId) -> list[ProcessId] | None:
    """The group that holds `process` (None: no group does)."""
    for g in groups:
        if process in g:
            return list(g)
    return None


@dataclass(frozen=True)
class SymbolicGrid:
    """A grid whose sizes are z3 integers (or ints): what `Instance.grid`
    holds in z3 mode (spec/symbolic.py), so that the collectives'
    constraints that read the grid (all_reduce C2: "size(replica_groups)" is
    `num_replicas` or `num_processes`) are solved and proved with the grid
    as an unknown, as dimension sizes are.  Only the sizes are symbolic;
    the strategies' groups need a concrete `Grid`."""

    num_replicas: object
    num_partitions: object

    @property
    def size(self):
        return self.num_replicas * self.num_partitions

    def __str__(self) -> str:
        return f"{self.num_replicas}×{self.num_partitions}"


def num_processes(grid):
    """The seed's `num_processes` = num_replicas × num_partitions (a z3
    product for a `SymbolicGrid`)."""
    return grid.num_replicas * grid.num_partitions
