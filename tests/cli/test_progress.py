"""`shlo-conform`'s progress on stderr (commands/score.py: Progress): on a terminal one line
rewritten in place; in a log (make conform piped, CI) one line every
`every` seconds — never a line per case, never a line once it is over."""
from __future__ import annotations

import io

from shlo_conform.commands.score import Progress
from shlo_conform.suites.records import Verdict


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


def _v(verdict: str) -> Verdict:
    return Verdict(id="add/f32/x", op="add", dtype="f32", kind="value", verdict=verdict)


def _feed(tty: bool, steps: list[tuple[float, str]], total: int) -> str:
    s = _Stream(tty)
    p = Progress(total, every=10.0, stream=s)
    now = [0.0]
    p._clock = lambda: now[0]
    p.t0 = p._last = 0.0
    for t, verdict in steps:
        now[0] = t
        p(_v(verdict))
    p.done()
    return s.getvalue()


def test_a_log_gets_one_line_per_interval_with_counts_and_time_left():
    # 30 cases over 29 s: lines at t=10 and t=20 only (not per case, not at the end).
    steps = [(float(i), "fail" if i % 10 == 3 else "pass") for i in range(30)]
    out = _feed(False, steps, 30)
    lines = out.splitlines()
    assert len(lines) == 2, out
    # At t=10, 11 cases (t=0..10) are done, one of them failed (t=3): 1.1 cases/s, 19 left -> ~17 s
    assert lines[0] == "[11/30] fail 1 pass 10 (10 s, 1 cases/s, ~17 s left)"
    assert lines[1].startswith("[21/30] fail 2 pass 19 (20 s")


def test_a_terminal_line_is_rewritten_in_place_and_cleared():
    out = _feed(True, [(0.05, "pass"), (0.2, "pass"), (0.25, "crash")], 3)
    assert "\n" not in out
    assert out.count("\r[") == 2          # at 0.2 s (0.1 s since the last) and the last case
    assert "[3/3] crash 1 pass 2" in out
    assert out.endswith("\r")             # cleared for the table that follows


def test_a_resumed_run_counts_the_journals_verdicts_as_done_but_not_in_its_rate():
    # 90 verdicts resumed (80 pass, 10 unsupported), then 10 cases over 10 s: the line at
    # t=10 says 100 of 110 done, 1 case a second (this run's), 10 left -> ~10 s.
    s = _Stream(False)
    p = Progress(110, every=10.0, stream=s)
    now = [0.0]
    p._clock = lambda: now[0]
    p.resumed([_v("pass")] * 80 + [_v("unsupported")] * 10)
    p._last = 0.0
    for t in range(1, 11):
        now[0] = float(t)
        p(_v("pass"))
    assert s.getvalue().splitlines() == ["[100/110] pass 90 unsupported 10 (10 s, 1 cases/s, ~10 s left)"]
