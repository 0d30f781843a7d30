"""bench/exhaustive_slice.py: the slices of one backend's exhaustive survey,
made by separate runs into separate caches, read as one range.  The
checkpoints are written here by hand (two chunks of 4 patterns each) and
the merged figures computed by hand."""
from __future__ import annotations

import json
from pathlib import Path

from bench import exhaustive_slice


def _chunk(lo, hi, *, measured, correct, within, max_ulp, worst, seconds=1.0):
    hist = [0] * 34
    hist[0] = correct
    hist[1] = measured - correct
    return {"lo": lo, "hi": hi, "status": "ok", "n": hi - lo, "measured": measured, "free": 0,
            "correctly_rounded": correct, "within_tolerance": within, "tolerance_ulp": 1,
            "ulp_sum": measured - correct, "hist": hist, "specials": {"infinity": 0}, "special_first": {},
            "input_flushes": 0, "max_ulp": max_ulp, "worst": worst, "pid": 1,
            "seconds": {"backend": seconds}}


def _checkpoint(cache: Path, key: str, chunks: list[dict]) -> None:
    path = cache / "exhaustive" / "sine" / "f32-interpreter.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(x) for x in [{"key": key}, *chunks]) + "\n")


def test_slices_in_two_caches_read_as_one_range(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    # 0x3f800000 = 1.0, 0x3f800005: the worst inputs of each chunk
    _checkpoint(a, "k-a", [_chunk(0, 4, measured=4, correct=3, within=4, max_ulp=1.0, worst=[0x3f800000, 0, 0])])
    _checkpoint(b, "k-b", [_chunk(4, 8, measured=3, correct=1, within=3, max_ulp=1.0, worst=[0x3f800005, 0, 0]),
                           # a second copy of the first chunk, another run's timing only: not a disagreement
                           _chunk(0, 4, measured=4, correct=3, within=4, max_ulp=1.0, worst=[0x3f800000, 0, 0],
                                  seconds=9.0)])
    keys, parts, differ = exhaustive_slice.joined(
        [a / "exhaustive/sine/f32-interpreter.jsonl", b / "exhaustive/sine/f32-interpreter.jsonl"], 0, 8)
    assert keys == ["k-a", "k-b"] and [p["lo"] for p in parts] == [0, 4] and differ == []
    assert exhaustive_slice.main(["--cache", f"{a},{b}", "--op", "sine", "--range", "0:8",
                                  "--backends", "interpreter"]) == 0
    out = capsys.readouterr().out
    row = [ln for ln in out.splitlines() if ln.startswith("| interpreter")][0]
    # 8 patterns covered, 4 + 3 measured, 3 + 1 correctly rounded (4 of 7 = 57.1429 %), all 7 within;
    # max 1 ULP, the tie keeps the earlier input (1.0)
    assert row.startswith("| interpreter | 8 | 7 | 4 (57.1429 %) | 7 (100.0000 %) | 1 (0x3f800000 = 1.0)")
    assert "(incomplete)" not in row and "interpreter: k-a, k-b" in out


def test_copies_that_disagree_are_said_and_a_gap_is_incomplete(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    _checkpoint(a, "k-a", [_chunk(0, 4, measured=4, correct=3, within=4, max_ulp=1.0, worst=[1, 0, 0])])
    _checkpoint(b, "k-b", [_chunk(0, 4, measured=4, correct=2, within=4, max_ulp=1.0, worst=[1, 0, 0])])
    assert exhaustive_slice.main(["--cache", f"{a},{b}", "--op", "sine", "--range", "0:8",
                                  "--backends", "interpreter"]) == 0
    out = capsys.readouterr().out
    assert "1 chunk(s) with two copies that disagree, first 0x0" in out
    assert "| interpreter | 4 (incomplete) | 4 | 3 (75.0000 %)" in out


def test_no_checkpoint_in_any_cache_is_one_line_and_exit_2(tmp_path, capsys):
    assert exhaustive_slice.main(["--cache", f"{tmp_path / 'x'},{tmp_path / 'y'}", "--op", "sine",
                                  "--range", "0:8", "--backends", "iree"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("exhaustive_slice: no checkpoint")


def test_a_range_that_is_not_lo_hi_is_one_line_and_exit_2(tmp_path, capsys):
    for bad in ("zz", "5", "1:2:3"):
        assert exhaustive_slice.main(["--cache", str(tmp_path), "--op", "sine", "--range", bad,
                                      "--backends", "iree"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--range" in err[0], bad
