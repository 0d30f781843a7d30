"""`report --merge`: three shards scored on a real backend (the oracle) add up
to the unsharded run; what cannot be one document is refused in one line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from shlo_conform.cli import main
from shlo_conform.suites.results import check_results, load_results
# dynamic_iota: a program run on several input sets, invalid cases, a survey (reduce has them too, at twice the time)
OPS = "sine,dynamic_iota"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, *words):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], lines[0]


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """Shards 1/3, 2/3, 3/3 and one unsharded run of OPS on the oracle."""
    d = tmp_path_factory.mktemp("shards")
    for i in (1, 2, 3):
        assert main(["--backend=oracle", "--ops", OPS, "--jobs", "1", "--shard", f"{i}/3",
                     "--json", str(d / f"s{i}.json")]) == 0
    assert main(["--backend=oracle", "--ops", OPS, "--jobs", "1", "--json", str(d / "all.json")]) == 0
    return d


def test_merged_shards_equal_the_unsharded_run(capsys, runs, tmp_path):
    code, out, err = run(capsys, "report", "--merge", runs / "s1.json", runs / "s2.json", runs / "s3.json",
                         "--json", tmp_path / "m.json", "--html", tmp_path / "m.html", "--junit", tmp_path / "m.xml")
    assert code == 0 and err == "", err
    merged, whole = load_results(tmp_path / "m.json"), load_results(runs / "all.json")   # both pass check_results
    assert merged["counts"] == whole["counts"] and merged["per_op"] == whole["per_op"]
    strip = lambda v: {k: x for k, x in v.items() if k != "seconds"}  # noqa: E731
    assert sorted(map(json.dumps, map(strip, merged["verdicts"]))) == \
        sorted(map(json.dumps, map(strip, whole["verdicts"])))
    shards = [load_results(runs / f"s{i}.json") for i in (1, 2, 3)]
    assert [s["shard"]["index"] for s in shards] == [1, 2, 3]
    assert sum(s["shard"]["cases"] for s in shards) == whole["counts"]["cases"] == shards[0]["shard"]["selected"]
    assert all(s["counts"]["cases"] > 0 for s in shards)
    assert merged["backend"] == "oracle" and merged["describe"] == whole["describe"]
    assert merged["run_key"]["suite_digest"] == whole["run_key"]["suite_digest"]
    assert [m["shard"] for m in merged["merged"]] == ["1/3", "2/3", "3/3"]
    assert "total" in out and f"{whole['counts']['conformant']} of {whole['counts']['counted']}" in out
    assert "<table" in (tmp_path / "m.html").read_text()
    # the merged file is itself a results file: report renders it
    code, out2, _ = run(capsys, "report", tmp_path / "m.json")
    assert code == 0 and out.startswith(out2.rstrip("\n"))


def test_a_missing_shard_is_said_in_one_line(capsys, runs):
    code, out, err = run(capsys, "report", "--merge", runs / "s1.json", runs / "s3.json")
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "shard 2 of 3 is missing" in lines[0], err
    whole = load_results(runs / "all.json")
    n = sum(load_results(runs / f"s{i}.json")["counts"]["cases"] for i in (1, 3))
    assert f"{n} of its {whole['counts']['cases']} selected cases" in lines[0]


def _variant(src: Path, dst: Path, change) -> Path:
    """A copy of a results file with one thing changed, still a valid results document."""
    doc = json.loads(src.read_text())
    change(doc)
    check_results(doc)
    dst.write_text(json.dumps(doc))
    return dst


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(backend="iree"), ["backend", "'iree'", "'oracle'"]),
    (lambda d: d.update(describe="oracle 2.0"), ["backend description"]),
    (lambda d: d.update(suite="/elsewhere/core"), ["suite", "/elsewhere/core"]),
    (lambda d: d["run_key"].update(suite_digest="0" * 64), ["suite digest"]),
    (lambda d: d["manifest"].update(seed=1), ["suite manifest"]),
    (lambda d: d.update(timeouts={"compile": 1.0, "run": 0.5}), ["timeouts"]),
    (lambda d: d["shard"].update(batch=1), ["--batch 1", "--batch 16", "splits differ"]),
])
def test_results_of_another_backend_suite_or_timeouts_are_refused(capsys, runs, tmp_path, change, words):
    other = _variant(runs / "s2.json", tmp_path / "other.json", change)
    code, out, err = run(capsys, "report", "--merge", runs / "s1.json", other)
    one_line_error(code, err, "--merge", "other.json", *words)
    assert out == ""


def test_overlapping_case_ids_are_refused(capsys, runs):
    code, _, err = run(capsys, "report", "--merge", runs / "s1.json", runs / "all.json")
    one_line_error(code, err, "all.json", "also in", "s1.json")
    code, _, err = run(capsys, "report", "--merge", runs / "s1.json", runs / "s1.json")
    one_line_error(code, err, "given twice")


def test_a_complete_split_that_lacks_cases_is_refused(capsys, runs, tmp_path):
    """Shards made from different selections (or code) would leave cases
    out: a complete split must hold every selected case."""
    def lose_one(d):
        d["verdicts"].pop()
        d["shard"]["cases"] -= 1
        from shlo_conform.suites.records import Verdict
        from shlo_conform.suites.results import summarize
        d["counts"], d["per_op"] = summarize([Verdict(**v) for v in d["verdicts"]])
    s3 = _variant(runs / "s3.json", tmp_path / "s3.json", lose_one)
    code, _, err = run(capsys, "report", "--merge", runs / "s1.json", runs / "s2.json", s3)
    one_line_error(code, err, "were selected")


def test_unreadable_or_invalid_files_are_refused(capsys, runs, tmp_path):
    (tmp_path / "text.json").write_text("not json")
    doc = json.loads((runs / "s2.json").read_text())
    doc["counts"]["pass"] += 1
    (tmp_path / "lying.json").write_text(json.dumps(doc))
    doc = json.loads((runs / "s2.json").read_text())
    doc["shard"] = {"index": 4, "count": 3, "cases": 1, "selected": 1, "selection": "x"}
    (tmp_path / "badshard.json").write_text(json.dumps(doc))
    for name, words in [("nofile.json", ["no such file"]), ("text.json", ["not JSON"]),
                        ("lying.json", ["do not add up"]), ("badshard.json", ["inconsistent"])]:
        code, _, err = run(capsys, "report", "--merge", runs / "s1.json", tmp_path / name)
        one_line_error(code, err, name, *words)


def test_report_needs_a_file(capsys, runs, tmp_path):
    code, _, err = run(capsys, "report")
    one_line_error(code, err, "--merge")
    code, _, err = run(capsys, "report", runs / "s1.json", "--json", tmp_path / "x.json")
    one_line_error(code, err, "--json", "--merge")
