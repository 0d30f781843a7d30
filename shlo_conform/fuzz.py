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
from .pipeline.runner import Runner
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
    campaigns: list = field(default_factory=list)       # fuzz_campaigns: per campaign, its seed and counts

    def line(self) -> str:
        skipped = sum(self.skipped.values())
        why = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items()))
        head = (f"fuzz: {self.tried} programs tried, {skipped} skipped" + (f" ({why})" if why else "")
                + f", {self.disagreements} disagreements, {len(self.found)} shrunk case"
                + ("s" if len(self.found) != 1 else "") + f" ({self.shrink_runs} runs shrinking) in {self.seconds:.0f} s"
                + (f" over {len(self.campaigns)} campaigns (seeds {', '.join(str(c['seed']) for c in self.campaigns)})"
                   if self.campaigns else ""))
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
        path = _write_case(self.out, self.backend, self.seed, label, prog.ops, case, detail)
        self.summary.found.append(Found(label, prog.ops, case, path, detail))
        self.log(f"fuzz: shrunk to {len(prog.steps)} op(s) {','.join(prog.ops)}, "
                 f"{sum(int(np.prod(t.shape, dtype=np.int64)) for t in prog.args)} input elements: {case.id} -> {path}")


def _write_case(out: Path, backend: str, seed: int, label: tuple, ops: list, case: Case, detail: str) -> Path:
    """A shrunk disagreement as its own one-case suite under `out`."""
    path = Path(out) / case.id.replace("/", "-")
    manifest = {"suite": "fuzz", "suite_version": SUITE_VERSION, "spec_source": SPEC_SOURCE,
                "generator_version": GENERATOR_VERSION, "seed": seed,
                "fuzz": {"backend": backend, "verdict": label[0], "cause": label[1],
                         "ops": list(ops), "detail": detail[:500]}}
    write_suite(path, manifest, [case])
    return path


def fuzz(backend: str, ops: list[str], *, seed: int = 0, budget: float = 60.0, out: str | Path = "out/fuzz",
         timeout: float = 10.0, max_programs: int | None = None, log=None) -> Summary:
    """Run the fuzz loop (module docstring); the summary says what was tried and found."""
    return Fuzzer(backend, ops, seed=seed, budget=budget, out=Path(out), timeout=timeout,
                  max_programs=max_programs, log=log).run()


def stderr_log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- campaigns: several seeds at once, on an engine's workers or here ----------------------------------------

def campaign(backend: str, ops: list[str], seed: int, budget: float, timeout: float,
             max_programs: int | None) -> dict:
    """One campaign, in a fresh process of its own (`run_campaign` puts it
    there): the fuzz loop into a scratch folder, what it found returned as
    data (an engine worker may not share the caller's disk)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="shlo-conform-fuzz-") as tmp:
        s = fuzz(backend, ops, seed=seed, budget=budget, out=tmp, timeout=timeout, max_programs=max_programs)
    return {"seed": seed, "tried": s.tried, "shrink_runs": s.shrink_runs, "skipped": dict(s.skipped),
            "disagreements": s.disagreements, "seconds": s.seconds, "programs": s.programs,
            "found": [{"label": list(f.label), "ops": list(f.ops), "case": f.case.to_json(), "detail": f.detail}
                      for f in s.found]}


CAMPAIGN_SLACK = 120.0   # seconds past the budget before a campaign's process counts as hung (shrink, startup)


def run_campaign(backend: str, ops: list[str], seed: int, budget: float, timeout: float,
                 max_programs: int | None) -> dict:
    """`campaign` in a fresh process of the isolation harness — where it
    runs, an engine worker or here: z3's models depend on what the process
    asked before (tests/fuzz/fixtures/fresh.py), so a fresh process draws
    the programs a user's `shlo-conform fuzz --seed` draws, and a campaign
    that brings its process down is reported, not the worker's death."""
    from .pipeline.isolation import Failure, call_isolated
    r = call_isolated("shlo_conform.fuzz:campaign", backend, ops, seed, budget, timeout, max_programs,
                      timeout=budget + CAMPAIGN_SLACK, label=f"fuzz-{seed}")
    if isinstance(r, Failure):
        return {"seed": seed, "failed": f"{r.kind}: {r.detail}"[:300], "tried": 0, "shrink_runs": 0, "skipped": {},
                "disagreements": 0, "seconds": 0.0, "programs": [], "found": []}
    return r


def fuzz_campaigns(backend: str, ops: list[str], *, seed: int = 0, campaigns: int = 2, budget: float = 60.0,
                   out: str | Path = "out/fuzz", timeout: float = 10.0, max_programs: int | None = None,
                   engine=None, jobs: int = 1, log=None) -> Summary:
    """`campaigns` fuzz campaigns with distinct, reproducible seeds
    (`distributed.campaign_seed`: campaign 0 keeps `seed`), on `engine`'s
    workers when given, else `jobs` at a time here; each campaign shrinks
    each of its disagreements once.  Merged deterministically: the found
    cases of all campaigns, smallest op set first (then campaign, then
    order found), each kept unless a kept one has its label and an op set
    contained in its own — the same dedupe rule a single campaign applies —
    and written under `out`.  So the summary and the cases written do not
    depend on where or in what order the campaigns ran."""
    from .pipeline.distributed import campaign_seed, ordered
    items = [(backend, ops, campaign_seed(seed, k), budget, timeout, max_programs) for k in range(campaigns)]
    log = log or (lambda m: None)
    results = ordered(run_campaign, items, engine=engine, jobs=jobs,
                      on_result=lambda i, r: log(f"fuzz: campaign {i} (seed {r['seed']}): {r['tried']} programs, "
                                                 f"{r['disagreements']} disagreements, {len(r['found'])} shrunk"
                                                 + (f"; failed: {r['failed']}" if r.get("failed") else "")))
    return merge_campaigns(results, backend, Path(out))


def merge_campaigns(results: list[dict], backend: str, out: Path) -> Summary:
    """Campaign results (`campaign`'s dicts, in campaign order) as one
    summary, their cases de-duplicated and written (`fuzz_campaigns`)."""
    from .suites.records import Case
    s = Summary()
    s.campaigns = [{"seed": r["seed"], "tried": r["tried"], "disagreements": r["disagreements"],
                    "found": len(r["found"]), **({"failed": r["failed"]} if r.get("failed") else {})} for r in results]
    candidates = []
    for k, r in enumerate(results):
        s.tried += r["tried"]
        s.shrink_runs += r["shrink_runs"]
        s.skipped.update(r["skipped"])
        s.disagreements += r["disagreements"]
        s.programs += r["programs"]
        s.seconds = max(s.seconds, r["seconds"])
        candidates += [(len(f["ops"]), k, j, f) for j, f in enumerate(r["found"])]
    for _, k, _, f in sorted(candidates, key=lambda t: t[:3]):
        label, fops = tuple(f["label"]), list(f["ops"])
        if any(g.label == label and set(g.ops) <= set(fops) for g in s.found):
            continue   # explained by a kept case with fewer or the same ops
        case = Case.from_json(f["case"])
        path = _write_case(out, backend, results[k]["seed"], label, fops, case, f["detail"])
        s.found.append(Found(label, fops, case, path, f["detail"]))
    return s
