"""`--cluster`: the accuracy survey (sampled and exhaustive), scoring and fuzz
campaigns on a Dask LocalCluster of two worker processes give the tables
they give without it; a worker killed mid-run changes no figure; an
interrupted exhaustive survey resumes from its checkpoint; and without
`--cluster` no engine module is imported.

The exhaustive figures are checked against numpy alone: the backend is
tests/accuracy/fixtures/numpy_math.py's `Sloppy` (binary64 sqrt rounded once,
correct for f32, then every seventh result of a program that is finite,
nonzero and below 1 made three ULP too large), so every count is known."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shlo_conform import cli

from shlo_conform import survey as accuracy
from shlo_conform.pipeline.distributed import campaign_seed, connect
from shlo_conform.fuzz import fuzz_campaigns, merge_campaigns
from shlo_conform.generators.fuzz_programs import fuzzable_ops
from shlo_conform.suites.records import Case
from shlo_conform.suites.io import load_manifest
from shlo_conform.survey import streaming

pytestmark = [pytest.mark.xdist_group("local_cluster"),
              pytest.mark.long]   # Dask clusters and fresh processes: ~50 s of CPU (make test-long)

ROOT = Path(__file__).resolve().parents[2]
SLOPPY = f"{ROOT / 'tests/accuracy/fixtures/numpy_math.py'}:Sloppy"
FAULTY = ROOT / "tests/fuzz/fixtures/faulty.py"
LO, N, CHUNK = 0x3E800000, 1 << 14, 1 << 11     # sqrt of [0.25, 0.2509...): results in [0.5, 1)


@pytest.fixture(scope="module")
def cluster():
    """One LocalCluster for the module (a start costs seconds of CPU)."""
    from distributed import LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        engine = connect(c.scheduler_address)
        yield c, engine
        engine.close()


def _figures(row: dict) -> dict:
    """A row less what depends on the clock."""
    return {k: v for k, v in row.items() if k not in ("seconds", "describe")}


def _exhaustive(cache: Path, **kw) -> dict:
    return streaming.survey([SLOPPY], ["sqrt"], "f32", cache, lo=LO, hi=LO + N, chunk=CHUNK, **kw)


def test_exhaustive_figures_resume_and_cluster(cluster, tmp_path):
    c, engine = cluster
    # interrupted after three chunks, then resumed: the rest runs
    cache = tmp_path / "resume"
    assert _exhaustive(cache, stop_after=3)["rows"] == []
    ck = streaming.checkpoint_path(cache, "sqrt", "f32", SLOPPY)
    assert len(ck.read_text().splitlines()) == 1 + 3
    resumed = _exhaustive(cache)
    assert next(iter(resumed["chunks"].values())) == {"resumed": 3, "ran": 5, "of": 8}
    [ref] = resumed["rows"]
    # independent truth: numpy's float64 sqrt rounded to f32, spoiled where Sloppy spoils
    bits = np.arange(LO, LO + N, dtype=np.uint32)
    r = np.sqrt(bits.view(np.float32).astype(np.float64)).astype(np.float32)
    hits = int(sum(((np.arange(CHUNK) % 7 == 0) & (r[k:k + CHUNK] < 1)).sum() for k in range(0, N, CHUNK)))
    assert hits == 8 * len(range(0, CHUNK, 7)) > 0
    assert (ref["n"], ref["measured"], ref["max_ulp"], ref["failed_chunks"]) == (N, N, 3.0, 0)
    assert ref["correctly_rounded_count"] == N - hits and ref["within_tolerance_count"] == N
    assert ref["histogram"] == {"0": N - hits, "[2^1,2^2)": hits}
    assert ref["mean_ulp"] == pytest.approx(3 * hits / N)
    assert ref["worst"]["input_bits"] == f"{LO:#010x}"       # the first of the largest errors
    assert ref["special_disagreements"] == 0

    # on the cluster (every chunk afresh), and with a worker killed at the first finished chunk: the same figures
    assert _figures(_exhaustive(tmp_path / "cluster", engine=engine)["rows"][0]) == _figures(ref)
    before = set(engine.client.run(os.getpid).values())
    killed = []

    def kill_one(message: str) -> None:
        if "chunk 0x" in message and not killed:
            killed.append(min(before))
            os.kill(min(before), signal.SIGKILL)

    [row] = _exhaustive(tmp_path / "killed", engine=engine, log=kill_one)["rows"]
    assert killed and _figures(row) == _figures(ref)
    engine.client.wait_for_workers(2, timeout=60)
    assert killed[0] not in set(engine.client.run(os.getpid).values())   # the nanny started another


def test_sampled_survey_through_the_cluster_equals_the_local_one(cluster, tmp_path):
    _, engine = cluster
    ops = {"sqrt": 1}
    local = accuracy.survey([SLOPPY], ops, ["f32"], 64, 0, tmp_path / "a")
    remote = accuracy.survey([SLOPPY], ops, ["f32"], 64, 0, tmp_path / "b", engine=engine)
    assert [_figures(r) for r in remote["rows"]] == [_figures(r) for r in local["rows"]]
    assert [(r["status"], r["max_ulp"]) for r in local["rows"]] == [("measured", 3)]
    for key in local["cache"]:   # the oracle's chunks, computed on the workers, are the same bits
        a, b = (accuracy.CacheEntry.load(accuracy.entry_path(tmp_path / d, *key.split("/"))) for d in "ab")
        assert all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("inputs", "expected", "alts", "free"))


def test_scoring_through_the_cluster_gives_the_same_verdicts(cluster, tmp_path, monkeypatch):
    c, _ = cluster
    monkeypatch.setattr("shlo_conform.pipeline.scoring.PARCELS_PER_WORKER", 1)   # a parcel starts a runner: CPU seconds
    backend = f"--backend={FAULTY}:FlushingOracle"
    args = [backend, "--ops", "sqrt", "--dtypes", "f32", "--batch", "8"]
    assert cli.main(args + ["--json", str(tmp_path / "local.json")]) == 1   # flushed subnormals fail
    assert cli.main(args + ["--json", str(tmp_path / "cluster.json"), "--cluster", c.scheduler_address]) == 1

    def verdicts(name):
        doc = json.loads((tmp_path / name).read_text())
        return [(v["id"], v["verdict"], v["detail"], v["max_ulp"], v["causes"]) for v in doc["verdicts"]], doc["counts"]

    assert verdicts("cluster.json") == verdicts("local.json")
    assert verdicts("local.json")[1]["fail"] >= 1


def test_fuzz_campaigns_on_the_cluster_equal_the_local_ones(cluster, tmp_path):
    _, engine = cluster
    ops = fuzzable_ops(["add", "negate"])
    run = lambda out, **kw: fuzz_campaigns(f"{FAULTY}:FlushingOracle", ops, seed=2, campaigns=2,  # noqa: E731
                                           max_programs=1, budget=300, out=tmp_path / out, **kw)
    local, remote = run("local"), run("cluster", engine=engine)
    assert [c["seed"] for c in local.campaigns] == [2, campaign_seed(2, 1)] and campaign_seed(2, 1) != 2
    assert local.tried == 2 and remote.programs == local.programs and len(set(local.programs)) == 2
    assert (remote.disagreements, remote.skipped, [f.case.id for f in remote.found]) == \
        (local.disagreements, local.skipped, [f.case.id for f in local.found])


def test_campaigns_merge_drops_cases_another_campaign_explains(tmp_path):
    """Across campaigns, a case is kept unless a kept one has its label and
    an op set inside its own; smaller op sets are kept first, whichever
    campaign found them."""
    lines = (ROOT / "suites/core/negate.jsonl").read_text().splitlines()[:3]
    fail = ["fail", "subnormal flushed"]
    found = lambda i, ops, label=fail: {"label": label, "ops": ops, "case": lines[i], "detail": ""}  # noqa: E731
    results = [{"seed": 2, "tried": 5, "shrink_runs": 1, "skipped": {}, "disagreements": 2, "seconds": 1.0,
                "programs": [], "found": [found(0, ["add", "negate"]), found(1, ["add"], ["crash", "crash"])]},
               {"seed": 9, "tried": 5, "shrink_runs": 1, "skipped": {}, "disagreements": 1, "seconds": 1.0,
                "programs": [], "found": [found(2, ["negate"])]}]
    s = merge_campaigns(results, "oracle", tmp_path)
    ids = [Case.from_json(x).id for x in lines]
    assert [(f.case.id, f.ops) for f in s.found] == [(ids[1], ["add"]), (ids[2], ["negate"])]
    assert (s.tried, s.disagreements) == (10, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(i.replace("/", "-") for i in ids[1:])
    assert load_manifest(tmp_path / ids[2].replace("/", "-"))["seed"] == 9


def test_no_engine_without_cluster(tmp_path):
    code = ("import sys; from shlo_conform import cli; rc = cli.main(sys.argv[1:]); "
            "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    p = subprocess.run([sys.executable, "-c", code, "accuracy", f"--backend={SLOPPY}", "--exhaustive",
                        "--dtypes", "f32", "--ops", "sqrt", "--input-range", "0x3f800000:0x3f800010",
                        "--cache", str(tmp_path / "c"), "--json", str(tmp_path / "a.json")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.stdout.strip().splitlines()[-1] == "0 []", p.stdout + p.stderr[-2000:]
    [row] = json.loads((tmp_path / "a.json").read_text())["rows"]   # sqrt of [1, 1+2^-19]: >= 1, never spoiled
    assert (row["n"], row["correctly_rounded_count"], row["max_ulp"], row["histogram"]) == (16, 16, 0, {"0": 16})


@pytest.mark.parametrize("args, says", [
    (["--dtypes", "f16", "--ops", "sqrt"], "--exhaustive takes --dtypes f32"),
    (["--dtypes", "f32", "--ops", "add"], "not a unary float"),
    (["--dtypes", "f32"], "needs --ops"),
    (["--dtypes", "f32", "--ops", "sqrt", "--input-range", "9:3"], "--input-range"),
    (["--dtypes", "f32", "--ops", "sqrt", "--cluster", "tcp://127.0.0.1:9"], "cannot reach the scheduler"),
])
def test_bad_input_is_one_line_and_exit_2(args, says, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("shlo_conform.pipeline.distributed.CONNECT_TIMEOUT", 2.0)
    assert cli.main(["accuracy", "--backend=oracle", "--exhaustive", "--cache", str(tmp_path)] + args) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
