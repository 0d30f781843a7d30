"""`shlo-conform scoreboard`: score one suite on several configurations and write one page comparing them.

Each configuration is a backend name as `--backend` takes it (xla,
interpreter, iree, `iree:target=vmvx`, a `command:` line, an entry point
…), scored by the default command itself — the same workers, isolation,
journal and timeouts — into `OUT/results-<name>.json`.  So the board
resumes where it stopped twice over: a configuration whose results file
already holds this suite and selection is not scored again, and one
stopped half-way resumes from its journal.  A configuration that cannot be
started says so in one line on the page and the console; the others are
scored all the same (a crash or hang inside one is the runner's to
isolate, case by case).  The page: reports/scoreboard.py.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

from .common import (UsageError, Parser, PROG, MAX_JOBS, SUITE_HELP, bounded, comma_list, nonempty, output_dir,
                     open_suite, check_ops, check_dtypes, selected_cases)

NAME = "scoreboard"
DEFAULT_CONFIGS = "xla,interpreter,iree"


def _slug(config: str) -> str:
    return re.sub(r"[^\w.-]+", "_", config)[:60]


def _parser() -> Parser:
    p = Parser(prog=f"{PROG} {NAME}", description="Score a suite on several configurations (backend names) and "
               "write one self-contained page comparing them: conformance per configuration and per op, top "
               "causes, time, and the cases whose verdicts differ between configurations.")
    p.add_argument("--configs", default=DEFAULT_CONFIGS, type=nonempty("--configs"),
                   help=f"comma-separated backend names, as --backend takes them (default {DEFAULT_CONFIGS})")
    p.add_argument("--suite", default="core", type=nonempty("--suite"), help=SUITE_HELP + " (default: core)")
    p.add_argument("--ops", help="comma-separated op mnemonics (a subset runs in minutes)")
    p.add_argument("--dtypes", help="comma-separated element types")
    p.add_argument("--out", default="out/scoreboard", type=nonempty("--out"),
                   help="folder for each configuration's results and the page, index.html (default out/scoreboard)")
    p.add_argument("--jobs", type=bounded(int, 1, MAX_JOBS, "--jobs"), default=None,
                   help="worker processes per configuration (default: the scoring's, one per CPU)")
    p.add_argument("--cluster", type=nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler: each configuration's cases run on its workers")
    return p


def _done(json_path: Path, config: str, digest: str, selection: str) -> dict | None:
    """The results already written for this configuration, suite and selection, if any."""
    try:
        doc = json.loads(json_path.read_text())
        key = doc["run_key"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (key.get("backend"), key.get("suite_digest"), key.get("selection")) != (config, digest, selection):
        return None
    return doc


def main(argv: list[str]) -> int:
    import hashlib
    from ..backends.base import runtime_names
    from ..pipeline.runner import check_backend_spec
    from ..reports.scoreboard import render
    from ..suites.io import suite_digest, write_text_atomic
    from .score import main as score_main

    a = _parser().parse_args(argv)
    configs = comma_list(a.configs, "--configs")
    if len(set(configs)) != len(configs):
        raise UsageError("--configs: a configuration is named twice")
    unbuilt: dict[str, str] = {}
    for config in configs:   # a misspelt name is the user's to fix before any scoring; one that cannot start is not
        try:
            check_backend_spec(config)
        except ValueError as e:
            if config.startswith("runtime:") and config[len("runtime:"):] in runtime_names():
                unbuilt[config] = str(e)   # a known runtime whose environment is not built: one line on the page
                continue
            raise UsageError(f"--configs: {e}") from None
    out = output_dir(a.out, "--out")
    path, _ = open_suite(a.suite)
    ops = check_ops(comma_list(a.ops, "--ops"), path)
    dtypes = check_dtypes(comma_list(a.dtypes, "--dtypes"))
    cases = selected_cases(path, ops, dtypes)
    if not cases:
        raise UsageError(f"no cases in suite {a.suite!r} match the selection (--ops/--dtypes)")
    digest = suite_digest(path)
    selection = hashlib.sha256("\n".join(c.id for c in cases).encode()).hexdigest()[:16]   # journal.run_key's

    docs: dict[str, dict] = {}
    failed: dict[str, str] = dict(unbuilt)
    for config in configs:
        if config in unbuilt:
            print(f"{config}: not scored: {unbuilt[config]}")
            continue
        json_path = out / f"results-{_slug(config)}.json"
        doc = _done(json_path, config, digest, selection)
        if doc is not None:
            print(f"{config}: already scored ({json_path})")
            docs[config] = doc
            continue
        argv_score = ["--backend", config, "--suite", a.suite, "--json", str(json_path)]
        for flag, value in (("--ops", a.ops), ("--dtypes", a.dtypes), ("--jobs", a.jobs), ("--cluster", a.cluster)):
            if value:
                argv_score += [flag, str(value)]
        print(f"{config}: scoring {len(cases)} cases")
        t0 = time.monotonic()
        try:
            score_main(argv_score)
        except UsageError as e:   # the configuration cannot be started (or named): one line, the others go on
            failed[config] = str(e)
            print(f"{config}: not scored: {e}")
            continue
        doc = _done(json_path, config, digest, selection)
        if doc is None:
            failed[config] = f"no results were written ({time.monotonic() - t0:.0f} s)"
            continue
        docs[config] = doc
    what = ", ".join(x for x in (f"ops {a.ops}" if a.ops else "", f"types {a.dtypes}" if a.dtypes else "") if x)
    page = out / "index.html"
    write_text_atomic(page, render(docs, failed, a.suite, f"{len(cases)} cases" + (f" ({what})" if what else "")))
    print(f"scoreboard: {page} ({len(docs)} configurations scored, {len(failed)} not)")
    return 0 if docs else 2
