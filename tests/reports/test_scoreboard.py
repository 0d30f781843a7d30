"""`shlo-conform scoreboard`: configurations scored side by side, the flips between them, resuming, and a
configuration that cannot start — on a deliberately wrong backend (XLA's outputs negated), so the flips
are known in advance: every value case the oracle passes with a nonzero, non-NaN output fails negated."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from shlo_conform.cli import main
from shlo_conform.reports.scoreboard import flips

WRONG = Path(__file__).resolve().parents[1] / "cli" / "fixtures" / "wrong.py"


def _doc(verdicts):
    return {"verdicts": [{"id": i, "kind": k, "verdict": v} for i, k, v in verdicts]}


def test_a_flip_is_a_difference_of_conformance_counted_on_both_sides():
    a = _doc([("p", "value", "pass"), ("q", "value", "pass"), ("r", "invalid", "rejected"),
              ("s", "value", "pass"), ("t", "survey", "pass"), ("u", "value", "fail")])
    b = _doc([("p", "value", "fail"), ("q", "value", "pass"), ("r", "invalid", "pass"),
              ("s", "value", "unsupported"), ("t", "survey", "fail"), ("u", "value", "crash")])
    # p: pass → fail; r: an invalid case rejected (conformant) → accepted; s unsupported and t a survey
    # count on neither side; u fails both ways
    assert flips(a, b) == [("p", True, False), ("r", True, False)]


@pytest.mark.long   # ~35 s: two configurations scored in workers of their own; make test-long (CI)
def test_two_configurations_a_page_their_flips_and_one_that_cannot_start(tmp_path, capsys):
    out = tmp_path / "board"
    configs = f"oracle,{WRONG}:Negated,{WRONG}:NoSuchClass"
    argv = ["scoreboard", "--configs", configs, "--ops", "negate", "--dtypes", "f32,si32", "--out", str(out),
            "--jobs", "1"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert "NoSuchClass: not scored" in said
    oracle = json.loads((out / "results-oracle.json").read_text())
    wrong = json.loads(next(out.glob("results-*Negated.json")).read_text())
    by_id = {v["id"]: v["verdict"] for v in wrong["verdicts"]}
    expected = sorted(v["id"] for v in oracle["verdicts"]
                      if v["kind"] == "value" and v["verdict"] == "pass" and by_id[v["id"]] == "fail")
    assert expected, "negating negate's outputs must fail some case"
    page = (out / "index.html").read_text()
    assert f"{len(expected)} flips" in page
    for cid in expected:
        assert cid in page
    assert "not scored" in page and "NoSuchClass" in page and "data:image/png;base64," in page
    # a second run scores nothing again
    assert main(argv) == 0
    assert capsys.readouterr().out.count("already scored") == 2


def test_a_misspelt_configuration_is_a_usage_error_before_any_scoring(tmp_path, capsys):
    assert main(["scoreboard", "--configs", "oracle,nosuch", "--out", str(tmp_path)]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert not list(tmp_path.glob("results-*"))
