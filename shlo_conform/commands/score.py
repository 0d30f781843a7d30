"""`shlo-conform`: the default command: score a backend on a suite."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from ..pipeline.planning import DEFAULT_BATCH
from ..pipeline.runner import MAX_DEFAULT_JOBS, default_jobs
from .common import (UsageError, Parser, PROG, MAX_TIMEOUT, MAX_JOBS, MAX_BATCH, SUITE_HELP, comma_list, bounded,
                     nonempty, output_path, distinct_outputs, open_suite, check_ops, check_dtypes, selected_cases,
                     read_results, write_reports, cluster_engine)


def _default_json(backend: str, shard: tuple[int, int] | None = None) -> Path:
    name = "command" if backend.startswith("command:") else re.sub(r"[^\w.-]+", "_", backend)[:60]
    return Path("out") / (f"results-{name}.json" if shard is None else f"results-{name}-{shard[0]}of{shard[1]}.json")


def _shard_arg(text: str) -> tuple[int, int]:
    """An argparse type: `I/N` (shlo_conform/pipeline/shard.py reads it)."""
    from ..pipeline.shard import parse
    try:
        return parse(text)
    except ValueError as e:
        raise UsageError(f"--shard: {e}") from None


class Progress:
    """Progress on stderr while a run goes on: on a terminal one line
    rewritten in place (at most ten times a second); elsewhere (a log, CI,
    `make conform` piped) one line every `every` seconds.  Either says
    cases done of all, the verdicts so far, the rate and the time left.
    Verdicts resumed from a journal (`resumed`) count as done, not in the
    rate: a run resumed at 9,506 of 12,173 says so from its first line."""

    def __init__(self, total: int, every: float = 10.0, stream=None):
        import time
        self.stream = stream or sys.stderr
        self.total, self.n, self.base = total, 0, 0
        self.counts: dict[str, int] = {}
        self.live = self.stream.isatty()
        self.every = 0.1 if self.live else every
        self._clock = time.monotonic
        self.t0 = self._last = self._clock()
        self._width = 0

    def resumed(self, verdicts: list) -> None:
        """The verdicts a journal already holds: done before this run began."""
        for v in verdicts:
            self.counts[v.verdict] = self.counts.get(v.verdict, 0) + 1
        self.n = self.base = self.n + len(verdicts)
        self.t0 = self._clock()

    def line(self) -> str:
        spent = self._clock() - self.t0
        rate = (self.n - self.base) / spent if spent > 0 else 0.0
        left = f", ~{(self.total - self.n) / rate:.0f} s left" if rate > 0 and self.n < self.total else ""
        tally = " ".join(f"{k} {self.counts[k]}" for k in sorted(self.counts))
        return f"[{self.n}/{self.total}] {tally} ({spent:.0f} s, {rate:.0f} cases/s{left})"

    def __call__(self, v) -> None:
        self.n += 1
        self.counts[v.verdict] = self.counts.get(v.verdict, 0) + 1
        now = self._clock()
        if now - self._last < self.every and (self.n < self.total or not self.live):
            return   # a log gets a line every `every` seconds, none at the end (the table follows)
        self._last = now
        text = self.line()
        if self.live:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.live and self.n:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


def _score_parser(commands: tuple[str, ...]) -> Parser:
    p = Parser(prog=PROG, description="Score a backend on a conformance suite.",
               epilog="Other commands: " + ", ".join(commands) + f" (see `{PROG} COMMAND --help`).")
    p.add_argument("--backend", required=True,
                   help="oracle, xla, interpreter, iree, command:CMDLINE, an entry point, or module:Class")
    p.add_argument("--suite", default="core", type=nonempty("--suite"), help=SUITE_HELP + " (default: core)")
    p.add_argument("--ops", help="comma-separated op mnemonics to run")
    p.add_argument("--dtypes", help="comma-separated element types to run (f32, bf16, si32, c64, ...) or quantized "
                                    "families (quant_i8_f32, quant_i8_f32_axis)")
    p.add_argument("--json", type=nonempty("--json"),
                   help="results file (default: out/results-BACKEND.json), written when the run ends; verdicts "
                        "are journaled in JSON.<key>.journal meanwhile (one per suite, selection, backend and "
                        "timeouts) and a second run on the same file is refused while one holds it")
    p.add_argument("--html", type=nonempty("--html"), help="also write a self-contained HTML report here")
    p.add_argument("--timeout", type=bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None,
                   help=f"seconds per run, at most {MAX_TIMEOUT:g} (compiles get twice as long); default 10 s per "
                        "run, 20 s per compile.  Starting a backend may take the compile timeout, at least 60 s")
    p.add_argument("--jobs", type=bounded(int, 1, MAX_JOBS, "--jobs"), default=None,
                   help=f"worker processes (default: one per CPU, at most {MAX_DEFAULT_JOBS}; at most {MAX_JOBS}; "
                        "no more than the CPUs are used); verdicts do not depend on it")
    p.add_argument("--batch", type=bounded(int, 1, MAX_BATCH, "--batch"), default=DEFAULT_BATCH,
                   help=f"cases compiled together in one module where the backend allows it (default "
                        f"{DEFAULT_BATCH}, 1: one compile per program); a batch that fails is re-run case by case, "
                        "so verdicts do not depend on it")
    p.add_argument("--baseline", type=nonempty("--baseline"),
                   help="earlier results.json: exit 0 unless a case fails that did not fail there")
    p.add_argument("--junit", type=nonempty("--junit"),
                   help="also write JUnit XML here (one testcase per case, classname stablehlo.OP) for CI")
    p.add_argument("--cluster", type=nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): the cases run as parcels on its workers")
    p.add_argument("--shard", type=_shard_arg, metavar="I/N",
                   help="run only shard I of N (1-based) of the selected cases, split by program (and by "
                        "--batch's merged modules) so that N machines with the same suite, selection and "
                        "--batch run each case once; combine their results with `report --merge`")
    return p


def _new_failures(doc: dict, baseline: dict) -> tuple[list[str], int]:
    from ..suites.records import conformant
    known_bad = {v["id"] for v in baseline.get("verdicts", [])
                 if conformant(v.get("kind", "value"), v.get("verdict")) is False}
    bad = [v["id"] for v in doc["verdicts"] if conformant(v["kind"], v["verdict"]) is False]
    return [i for i in bad if i not in known_bad], sum(i in known_bad for i in bad)


def main(argv: list[str], commands: tuple[str, ...] = ()) -> int:
    """Score `--backend` on `--suite`; `commands`: the other commands' names,
    for the help's epilog (the registry, shlo_conform/commands/__init__.py,
    passes them: this module does not import the registry that imports it)."""
    from ..pipeline.journal import JournalMismatch, ResultsBusy, other_journals
    from ..pipeline.isolation import compile_timeout_for
    from ..pipeline.runner import DEFAULT_RUN_TIMEOUT, BackendLoadError, check_backend_spec
    from ..pipeline.scoring import score
    from ..reports import table
    from ..suites.io import is_bundled, suite_digest

    a = _score_parser(commands).parse_args(argv)
    try:
        check_backend_spec(a.backend)
    except ValueError as e:
        raise UsageError(str(e)) from None
    path, manifest = open_suite(a.suite)
    ops = check_ops(comma_list(a.ops, "--ops"), path)
    dtypes = check_dtypes(comma_list(a.dtypes, "--dtypes"))
    baseline = read_results(a.baseline, "--baseline") if a.baseline else None
    json_path = output_path(a.json or str(_default_json(a.backend, a.shard)), "--json", ".json")
    html_path = output_path(a.html, "--html", ".html") if a.html else None
    junit_path = output_path(a.junit, "--junit", ".xml") if a.junit else None
    distinct_outputs(("--json", json_path), ("--html", html_path), ("--junit", junit_path),
                     ("--baseline", Path(a.baseline) if a.baseline else None))
    cases = selected_cases(path, ops, dtypes)
    if not cases:
        raise UsageError(f"no cases in suite {a.suite!r} match the selection (--ops/--dtypes)")
    shard_record = None
    if a.shard:  # after the selection: every machine of the split must select the same cases
        from ..pipeline import shard
        selected, cases = cases, shard.select(cases, *a.shard, batch=a.batch)
        shard_record = shard.record(*a.shard, cases, selected, batch=a.batch)
        print(f"shard {a.shard[0]}/{a.shard[1]}: {len(cases)} of {len(selected)} selected cases")
    run_timeout = a.timeout or DEFAULT_RUN_TIMEOUT
    compile_timeout = compile_timeout_for(run_timeout)
    jobs = min(a.jobs or default_jobs(), max(1, os.cpu_count() or 1))
    suite_label = a.suite if is_bundled(path) else str(path.resolve())
    digest = suite_digest(path)

    progress = Progress(len(cases))
    try:
        with cluster_engine(a.cluster) as engine:
            doc = score(cases, a.backend, suite=suite_label, manifest=manifest, json_path=json_path,
                        compile_timeout=compile_timeout, run_timeout=run_timeout, jobs=jobs, on_verdict=progress,
                        batch=a.batch, on_resumed=progress.resumed,
                        suite_digest=digest, shard=shard_record, engine=engine)
    except (BackendLoadError, ResultsBusy, JournalMismatch) as e:
        progress.done()
        raise UsageError(str(e)) from None
    except OSError as e:
        progress.done()
        raise UsageError(f"--json {json_path}: cannot write results ({e.strerror or e}); the verdicts so far "
                         "are kept in the journal") from None
    progress.done()

    print(table.render(doc))
    if doc.get("resumed"):
        print(f"resumed {doc['resumed']} verdicts from the journal")
    print(f"results: {json_path}")
    for other in other_journals(json_path, doc["run_key"]):
        print(f"kept: {other}, the journal of an unfinished run with other options "
              "(rerun those options to resume it, or delete it)")
    write_reports(doc, html_path, junit_path)
    if baseline is not None:
        new, known = _new_failures(doc, baseline)
        print(f"against baseline {a.baseline}: {len(new)} new failures, {known} known")
        for i in new[:20]:
            print(f"  new: {i}")
        return 1 if new else 0
    return 1 if doc["counts"]["nonconformant"] else 0
