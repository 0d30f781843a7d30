"""`--shard I/N`: a split by program of the real core suite, the same on every machine."""
from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter

import pytest

from shlo_conform.pipeline import shard
from shlo_conform.cli import main
from shlo_conform.pipeline.planning import DEFAULT_BATCH, cases_of, group_by_program, plan
from shlo_conform.suites.io import CORE, load_cases
from shlo_conform.suites.records import Case


@pytest.fixture(scope="session")
def core():
    return load_cases(CORE)


@pytest.mark.parametrize("n", range(1, 8))
def test_shards_partition_the_selection_and_never_split_a_program(core, n):
    parts = [shard.select(core, i, n, batch=DEFAULT_BATCH) for i in range(1, n + 1)]
    ids = [c.id for p in parts for c in p]
    assert sorted(ids) == sorted(c.id for c in core)           # union = selection, each case once
    assert len(ids) == len(set(ids))                            # disjoint
    where = {c.id: i for i, p in enumerate(parts) for c in p}
    by_program: dict[str, set] = {}
    for c in core:
        by_program.setdefault(c.mlir, set()).add(where[c.id])
    assert all(len(s) == 1 for s in by_program.values())       # a program is compiled on one machine
    # the shards compile the very modules the unsharded run compiles
    whole = {frozenset(c.id for c in cases_of(u)) for u in plan(group_by_program(core), DEFAULT_BATCH)}
    split = {frozenset(c.id for c in cases_of(u)) for p in parts for u in plan(group_by_program(p), DEFAULT_BATCH)}
    assert split == whole
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= max(len(u) for u in whole)   # greedy largest-first: within one unit
    position = {c.id: k for k, c in enumerate(core)}
    for p in parts:                                             # each shard keeps the selection's order
        assert [position[c.id] for c in p] == sorted(position[c.id] for c in p)


@pytest.mark.parametrize("n", (2, 5))
def test_with_batch_1_the_unit_is_the_program(core, n):
    parts = [shard.select(core, i, n, batch=1) for i in range(1, n + 1)]
    assert sorted(c.id for p in parts for c in p) == sorted(c.id for c in core)
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= max(Counter(c.mlir for c in core).values())


def _case(cid: str, mlir: str, op: str = "add") -> Case:
    return Case(id=cid, op=op, dtype="f32", kind="value", mlir=mlir, inputs=[], expected=[])


def test_assignment_by_hand():
    """Programs of 3, 1 and 1 cases over 2 shards: the 3-case program goes
    first to shard 1; the two single ones then go to the lightest, shard 2."""
    cases = [_case("a1", "P"), _case("b", "Q"), _case("a2", "P"), _case("c", "R"), _case("a3", "P")]
    assert shard.assign(cases, 2) == {"a1": 1, "a2": 1, "a3": 1, "b": 2, "c": 2}
    assert [c.id for c in shard.select(cases, 2, 2)] == ["b", "c"]
    # more shards than programs: the extra shards are empty, not an error
    assert [len(shard.select(cases, i, 4)) for i in (1, 2, 3, 4)] == [3, 1, 1, 0]


def test_split_by_program_does_not_depend_on_the_order_cases_arrive_in(core):
    shuffled = list(core)
    random.Random(7).shuffle(shuffled)
    assert shard.assign(shuffled, 5, batch=1) == shard.assign(core, 5, batch=1)


def test_an_ops_batches_go_whole_to_one_shard():
    """Five single-case programs of `add` and three of `negate` with --batch
    2 make the runner's units: add's series {a,b} {c,d} {e} and negate's
    {f,g} {h} (runner.plan: a series shares what its batches learn); over
    two shards add's five go to shard 1, negate's three to shard 2."""
    cases = [_case(x, f"program {x}") for x in "abcde"] + [_case(x, f"program {x}", "negate") for x in "fgh"]
    where = shard.assign(cases, 2, batch=2)
    assert {where[x] for x in "abcde"} == {1} and {where[x] for x in "fgh"} == {2}


_CHILD = """
import hashlib, json
from shlo_conform.pipeline import shard
from shlo_conform.suites.io import CORE, load_cases
where = shard.assign(load_cases(CORE, {"add", "compare", "reduce", "sort"}), 3, batch=16)
print(hashlib.sha256(json.dumps(sorted(where.items())).encode()).hexdigest())
"""


def test_same_assignment_in_processes_with_other_hash_seeds():
    """Every machine of a split must compute the same split: nothing may
    hang on Python's per-process string hashing."""
    digests = set()
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    here = shard.assign(load_cases(CORE, {"add", "compare", "reduce", "sort"}), 3, batch=16)
    digests.add(hashlib.sha256(json.dumps(sorted(here.items())).encode()).hexdigest())
    assert len(digests) == 1


@pytest.mark.parametrize("text, index, count", [("1/1", 1, 1), ("2/3", 2, 3), (" 3 / 3 ", 3, 3), ("07/12", 7, 12)])
def test_parse_accepts(text, index, count):
    assert shard.parse(text) == (index, count)


@pytest.mark.parametrize("value, words", [
    ("0/3", ["0/3", "from 1 to 3"]), ("4/3", ["4/3", "from 1 to 3"]), ("1/0", ["1/0", "number of shards"]),
    ("x", ["'x'", "I/N"]), ("1/2/3", ["1/2/3", "I/N"]), ("", ["I/N"]), ("-1/3", ["I/N"]), ("1.5/3", ["I/N"]),
])
def test_bad_shard_values_are_one_line_exit_2(capsys, tmp_path, value, words):
    code = main(["--backend=oracle", "--ops", "sine", f"--shard={value}", "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert "--shard" in lines[0] and all(w in lines[0] for w in words), lines[0]
    assert not (tmp_path / "r.json").exists()


def test_an_empty_shard_writes_empty_results(capsys, tmp_path):
    """More shards than units of work: a machine left without cases still
    writes results (and JUnit) that a merge can count as its shard."""
    code = main(["--backend=oracle", "--ops", "sine", "--shard", "40/50", "--json", str(tmp_path / "r.json"),
                 "--junit", str(tmp_path / "r.xml")])
    out = capsys.readouterr().out
    n = len(load_cases(CORE, {"sine"}))
    assert code == 0 and f"shard 40/50: 0 of {n} selected cases" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["counts"]["cases"] == 0 and doc["shard"]["index"] == 40 and doc["shard"]["selected"] == n
    assert 'tests="0"' in (tmp_path / "r.xml").read_text()
