"""`shlo-conform fuzz`: random programs of several ops, judged by the oracle,
disagreements shrunk by hypothesis into one-case suites.

The loop: hypothesis draws a program and its inputs
(generators/fuzz_programs.py: ops read from their declarations, every step
solved under its own constraints); the oracle states the expected outputs
(the same `Expectation`s a suite case holds — where the spec states no
result, the program is skipped and counted); the backend runs it in a
worker process kept between programs (`Runner.run_one`: a crash, hang or
abort is a verdict, not the end of the run); the runner's judge gives the
verdict.  A disagreement is anything but `pass` (and `unsupported`, which
is counted apart): a wrong value, a crash, a timeout, or a rejection of a
program the encoded spec accepts.

Dedupe: a disagreement is labelled (verdict, cause) — the cause being the
most frequent per-element cause of the runner's judge (`suites/causes.py`),
or the verdict itself for a crash, timeout or rejection.  A disagreement is
a repeat when a case already written has the same label and an op set
contained in this program's: the smaller program explains it.  The first
new one is shrunk: hypothesis replays smaller candidates and keeps those
that fail with the same label, use no op the first did not, and are still
not a repeat; the smallest is cut down to the cone of its first failing
output (`FuzzProgram.cone`: other outputs and unused arguments dropped)
where that still fails the same way, written as its own one-case suite,
and its label and op set join the known ones.  So each distinct (op set × cause/verdict) gets one case.

Determinism: hypothesis runs with no example database and an explicit
`@seed` per round (seed × 1000 + round), so the same seed and the same
backend behaviour give the same programs in the same order.  The budget is
wall-clock seconds: no program starts after it is spent; one shrink may take
a quarter of it (at least 10 s) and, cut short, writes the smallest failing
program found so far.
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from .generators.expect import ProgramRejected, Unspecified, expected_outputs
from .generators import emit
from .generators.fuzz_programs import FuzzProgram, programs
from .generators.suite import GENERATOR_VERSION, SPEC_SOURCE, SUITE_VERSION
from .runner import Runner
from .suites.compare import compare
from .suites.io import write_suite
from .suites.records import Case, TensorValue, case_id

FUZZ_VERSION = "1"
SHRINK_SHARE = 0.25        # one shrink may take this share of the budget (at least SHRINK_FLOOR s) …
SHRINK_FLOOR = 10.0        # … so one stubborn failure cannot eat the whole run
ROUND_EXAMPLES = 10 ** 6   # examples per hypothesis round: rounds end on a new disagreement or the budget


class _OutOfTime(BaseException):
    """The budget is spent (a BaseException: hypothesis must not shrink it)."""


class _NewDisagreement(Exception):
    """Raised inside the hypothesis test: the example disagrees in a new way."""


@dataclass
class Found:
    label: tuple          # (verdict, cause)
    ops: list
    case: Case
    path: Path
    detail: str


@dataclass
class Summary:
    tried: int = 0               # programs run on the backend (exploring)
    shrink_runs: int = 0         # programs run while shrinking
    skipped: Counter = field(default_factory=Counter)   # why no verdict: unspecified, unsupported, …
    disagreements: int = 0       # exploring programs that disagreed (repeats included)
    found: list = field(default_factory=list)           # Found, one per distinct disagreement
    programs: list = field(default_factory=list)        # texts of the explored programs, in order (tests)
    seconds: float = 0.0

    def line(self) -> str:
        skipped = sum(self.skipped.values())
        why = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items()))
        head = (f"fuzz: {self.tried} programs tried, {skipped} skipped" + (f" ({why})" if why else "")
                + f", {self.disagreements} disagreements, {len(self.found)} shrunk case"
                + ("s" if len(self.found) != 1 else "") + f" ({self.shrink_runs} runs shrinking) in {self.seconds:.0f} s")
        return "\n".join([head] + [f"  {f.case.id}  {f.label[0]}: {f.label[1]}  ops {','.join(f.ops)}  -> {f.path}"
                                   for f in self.found])


def _case(prog: FuzzProgram, expected: list, step, seed: int) -> Case:
    """The program as a case filed under `step`'s op and its first operand's element type."""
    text = prog.text()
    tvs = [TensorValue.of(a, t) for a, t in zip(prog.inputs, prog.args)]
    op = step.spec.mnemonic
    dtype = emit.operand_types(step.spec, step.inst)[0].element_type.name
    return Case(id=case_id(op, dtype, text, tvs, salt="fuzz"), op=op, dtype=dtype, kind="value", mlir=text,
                inputs=tvs, expected=expected, note=f"fuzz: ops {', '.join(prog.ops)}",
                provenance={"seed": seed, "section": op, "generator": f"fuzz {FUZZ_VERSION}"})


def _label(verdict, expected: list, outputs) -> tuple[tuple, int | None]:
    """((verdict, cause), index of the first failing output or None)."""
    if verdict.verdict != "fail" or outputs is None:
        return (verdict.verdict, verdict.verdict), None
    first = next((k for k, (e, o) in enumerate(zip(expected, outputs)) if not compare(e, o).ok), None)
    causes = getattr(verdict, "causes", None) or {}
    cause = max(sorted(causes), key=lambda c: causes[c]) if causes else "other"
    return ("fail", cause), first


class Fuzzer:
    def __init__(self, backend: str, ops: list[str], *, seed: int, budget: float, out: Path,
                 timeout: float = 10.0, max_programs: int | None = None, log=None):
        self.backend, self.ops, self.seed, self.budget, self.out = backend, ops, seed, budget, Path(out)
        self.max_programs = max_programs
        self.log = log or (lambda m: None)
        self.runner = Runner(backend, run_timeout=timeout, keep_outputs=True)
        self.summary = Summary()
        self.deadline = 0.0

    # -- one program ------------------------------------------------------------
    def judge(self, prog: FuzzProgram):
        """(label, case, detail, index of the first failing output or None):
        label None when it agrees, a string (why) when it has no verdict."""
        text = prog.text()
        try:
            expected = expected_outputs(text, prog.inputs)
        except Unspecified:
            return "unspecified", None, "", None
        except ProgramRejected as e:   # our generator built a program our spec refuses: a bug of ours
            self.log(f"fuzz: the encoded spec rejects a generated program ({e}); skipped")
            return "rejected by the oracle", None, "", None
        case = _case(prog, expected, prog.steps[-1], self.seed)
        v = self.runner.run_one(case)
        if v.verdict == "pass":
            return None, case, "", None
        if v.verdict == "unsupported":
            return "unsupported", case, v.detail, None
        outs = (self.runner.outputs or {}).pop(case.id, None)
        label, first = _label(v, expected, outs)
        if first is not None:   # the case is filed under the op whose output disagrees
            name = prog.outputs[first][0]
            case = _case(prog, expected, next(st for st in prog.steps if name in dict(st.results)), self.seed)
        return label, case, v.detail, first

    def repeat(self, label: tuple, ops: list[str]) -> bool:
        return any(f.label == label and set(f.ops) <= set(ops) for f in self.summary.found)

    # -- the loop ---------------------------------------------------------------
    def run(self) -> Summary:
        t0 = time.monotonic()
        self.deadline = t0 + self.budget
        try:
            rnd = 0
            while time.monotonic() < self.deadline and not self._enough():
                self._round(rnd)
                rnd += 1
        finally:
            self.runner.close()
            self.summary.seconds = time.monotonic() - t0
        return self.summary

    def _enough(self) -> bool:
        return self.max_programs is not None and self.summary.tried >= self.max_programs

    def _round(self, rnd: int) -> None:
        state = {"target": None, "best": None, "ops": set(), "until": 0.0}
        s = self.summary

        @settings(database=None, max_examples=ROUND_EXAMPLES, deadline=None, derandomize=False,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                  report_multiple_bugs=False)
        @hypothesis_seed(self.seed * 1000 + rnd)
        @given(st.data())
        def test(data):
            shrinking = state["target"] is not None
            if time.monotonic() >= (state["until"] if shrinking else self.deadline) or \
                    (not shrinking and self._enough()):
                raise _OutOfTime
            prog = data.draw(programs(self.ops))
            if prog is None:
                if not shrinking:
                    s.skipped["no op fits"] += 1
                return
            if shrinking:
                s.shrink_runs += 1
            else:
                s.tried += 1
                s.programs.append(prog.text())
                if s.tried % 25 == 0:
                    self.log(f"fuzz: {s.tried} programs, {s.disagreements} disagreements, "
                             f"{len(s.found)} shrunk, {max(0.0, self.deadline - time.monotonic()):.0f} s left")
            label, case, detail, first = self.judge(prog)
            if isinstance(label, str):
                if not shrinking:
                    s.skipped[label] += 1
                return
            if label is None:
                return
            if not shrinking:
                s.disagreements += 1
            if self.repeat(label, prog.ops):
                return
            if state["target"] is None:
                state["target"], state["ops"] = label, set(prog.ops)
                state["until"] = min(self.deadline, time.monotonic() + max(SHRINK_FLOOR, SHRINK_SHARE * self.budget))
                self.log(f"fuzz: disagreement {label[0]}: {label[1]} on ops {','.join(prog.ops)}; shrinking")
            if label == state["target"] and set(prog.ops) <= state["ops"]:
                state["best"] = (prog, case, detail, first)
                raise _NewDisagreement

        try:
            test()
        except (_NewDisagreement, _OutOfTime):
            pass
        except Flaky:   # the last replay of the smallest failure did not fail again: keep what we saw fail
            if state["target"] is not None and time.monotonic() < state["until"]:
                self.log("fuzz: the shrunk program did not disagree again on replay (a flaky backend?)")
        if state["best"] is not None:
            if time.monotonic() >= state["until"]:
                self.log("fuzz: shrinking time spent: writing the smallest disagreeing program so far")
            self._write(state["target"], *state["best"])

    def _write(self, label: tuple, prog: FuzzProgram, case: Case, detail: str, first: int | None) -> None:
        # The failing output's cone alone (no other outputs, no unused
        # arguments), if it still fails so; a crash, hang or rejection names
        # no output: each output's cone is tried in turn.
        for k in ([first] if first is not None else range(len(prog.outputs))):
            cut = prog.cone(k)
            if (len(prog.outputs), len(prog.args)) == (1, len(cut.args)):
                break
            got = self.judge(cut)
            self.summary.shrink_runs += 1
            if got[0] == label:
                prog, case, detail = cut, got[1], got[2]
                break
        path = self.out / case.id.replace("/", "-")
        manifest = {"suite": "fuzz", "suite_version": SUITE_VERSION, "spec_source": SPEC_SOURCE,
                    "generator_version": GENERATOR_VERSION, "seed": self.seed,
                    "fuzz": {"backend": self.backend, "verdict": label[0], "cause": label[1],
                             "ops": prog.ops, "detail": detail[:500]}}
        write_suite(path, manifest, [case])
        self.summary.found.append(Found(label, prog.ops, case, path, detail))
        self.log(f"fuzz: shrunk to {len(prog.steps)} op(s) {','.join(prog.ops)}, "
                 f"{sum(int(np.prod(t.shape, dtype=np.int64)) for t in prog.args)} input elements: {case.id} -> {path}")


def fuzz(backend: str, ops: list[str], *, seed: int = 0, budget: float = 60.0, out: str | Path = "out/fuzz",
         timeout: float = 10.0, max_programs: int | None = None, log=None) -> Summary:
    """Run the fuzz loop (module docstring); the summary says what was tried and found."""
    return Fuzzer(backend, ops, seed=seed, budget=budget, out=Path(out), timeout=timeout,
                  max_programs=max_programs, log=log).run()


def stderr_log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
