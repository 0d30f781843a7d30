"""`shlo-conform report`: re-render a results file, or merge shards' results."""
from __future__ import annotations

import json
import os
import sys

from .common import (UsageError, Parser, PROG, nonempty, output_path, distinct_outputs, read_results, write_reports)

NAME = "report"


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} report", description="Re-render a results file, or merge the results of "
                                                  "several runs (the shards of --shard I/N) into one.")
    p.add_argument("results", nargs="?")
    p.add_argument("--merge", nargs="+", metavar="RESULTS.json", type=nonempty("--merge"),
                   help="results files of one backend on one suite with no case in common: report them as one")
    p.add_argument("--json", type=nonempty("--json"), help="with --merge: write the merged results here")
    p.add_argument("--html", type=nonempty("--html"), help="write a self-contained HTML report here")
    p.add_argument("--junit", type=nonempty("--junit"), help="write JUnit XML here")
    a = p.parse_args(argv)
    from ..reports import table
    if not a.merge and a.results is None:
        raise UsageError(f"{PROG} report: give a results file, or --merge with results files")
    if a.json and not a.merge:
        raise UsageError("--json: only with --merge (a results file is already one)")
    files = ([a.results] if a.results is not None else []) + (a.merge or [])
    # checked as results documents: the renderers and the merge can rely on their shape
    docs = [(f, read_results(f, "--merge" if a.merge else "results file")) for f in files]
    json_path = output_path(a.json, "--json", ".json") if a.json else None
    html_path = output_path(a.html, "--html", ".html") if a.html else None
    junit_path = output_path(a.junit, "--junit", ".xml") if a.junit else None
    distinct_outputs(("--json", json_path), ("--html", html_path), ("--junit", junit_path))
    for out_flag, out in (("--json", json_path), ("--html", html_path), ("--junit", junit_path)):
        if out is not None and any(os.path.realpath(out) == os.path.realpath(f) for f in files):
            raise UsageError(f"{out_flag} {out}: is one of the results files read; write elsewhere")
    doc = docs[0][1]
    if a.merge:
        from ..pipeline.merge import MergeError, merge
        try:
            doc, notes = merge(docs)
        except MergeError as e:
            raise UsageError(f"--merge: {e}") from None
        for note in notes:
            print(f"{PROG}: --merge: {note}", file=sys.stderr)
    print(table.render(doc))
    if json_path:
        from ..suites.io import write_text_atomic
        try:
            write_text_atomic(json_path, json.dumps(doc, indent=1) + "\n")
        except OSError as e:
            raise UsageError(f"--json {json_path}: cannot write it ({e.strerror or e})") from None
        print(f"results: {json_path}")
    write_reports(doc, html_path, junit_path)
    return 0
