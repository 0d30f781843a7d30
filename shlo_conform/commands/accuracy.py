"""`shlo-conform accuracy`: the accuracy survey of the float element-wise ops."""
from __future__ import annotations

import argparse
import json
import os
import sys

from .common import (UsageError, Parser, PROG, MAX_TIMEOUT, MAX_JOBS, comma_list, bounded, nonempty, output_path,
                     output_dir, distinct_outputs, backend_list, cluster_engine)

NAME = "accuracy"


def main(argv: list[str]) -> int:
    from .. import survey as accuracy
    p = Parser(prog=f"{PROG} accuracy",
               description="Survey the accuracy of every float element-wise op of the spec: one program per op "
                           "and type over every input of the 8- and 16-bit types (every 8-bit pair for binary "
                           "ops) and a stratified sample of the wider ones, against the oracle's correctly "
                           "rounded values (computed once, cached).  Reports ULP error and special-value "
                           "disagreements; exit 0 when the survey ran.")
    p.add_argument("--backend", required=True, help="comma-separated backends (xla,interpreter,iree,...)")
    p.add_argument("--ops", help="comma-separated ops (default: every float unary and binary element-wise op)")
    p.add_argument("--dtypes", help=f"comma-separated float types (default: {','.join(accuracy.DTYPES)})")
    p.add_argument("--size", type=bounded(int, 16, 1 << 24, "--size"), default=accuracy.DEFAULT_SIZE,
                   help=f"inputs per op and sampled type (default {accuracy.DEFAULT_SIZE})")
    p.add_argument("--seed", type=bounded(int, 0, 2 ** 32 - 1, "--seed"), default=0)
    p.add_argument("--timeout", type=bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None,
                   help="seconds a backend may take for one op x type (compile and run; default "
                        f"{accuracy.DEFAULT_ENTRY_TIMEOUT:g}); past it the entry is a timeout and the survey goes on")
    p.add_argument("--cache", default="out/accuracy-cache", type=nonempty("--cache"),
                   help="folder of cached expectations (default out/accuracy-cache); stale entries are remade")
    p.add_argument("--regenerate", action="store_true", help="recompute the expectations even when cached")
    p.add_argument("--jobs", type=bounded(int, 1, MAX_JOBS, "--jobs"), default=1,
                   help="processes computing expectations (default 1)")
    p.add_argument("--json", type=nonempty("--json"), help="results file (default out/accuracy.json)")
    p.add_argument("--html", type=nonempty("--html"), help="also write an HTML page with plots here")
    p.add_argument("--exhaustive", action="store_true",
                   help="with --dtypes f32 and unary --ops: every one of the 2^32 inputs, streamed in chunks "
                        "(a summary per chunk, checkpointed under --cache: an interrupted survey resumes)")
    p.add_argument("--cluster", type=nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): chunks and backend runs go to its workers")
    p.add_argument("--input-range", type=_pattern_range, default=None, help=argparse.SUPPRESS)  # tests: LO:HI
    p.add_argument("--chunk", type=_chunk_size, default=None, help=argparse.SUPPRESS)   # patterns per unit
    a = p.parse_args(argv)
    backends = backend_list(a.backend)
    if a.exhaustive:
        return _accuracy_exhaustive(a, backends)
    if a.input_range or a.chunk:
        raise UsageError("--input-range and --chunk go with --exhaustive")
    known = accuracy.float_ops()
    ops = comma_list(a.ops, "--ops") or list(known)
    bad = [o for o in ops if o not in known]
    if bad:
        raise UsageError(f"--ops: {bad[0]!r} is not a float element-wise op of the spec; surveyed: {', '.join(known)}")
    dtypes = comma_list(a.dtypes, "--dtypes") or list(accuracy.DTYPES)
    bad = [d for d in dtypes if d not in accuracy.DTYPES]
    if bad:
        raise UsageError(f"--dtypes: {bad[0]!r} is not surveyed; types: {', '.join(accuracy.DTYPES)}")
    json_path = output_path(a.json or "out/accuracy.json", "--json", ".json")
    html_path = output_path(a.html, "--html", ".html") if a.html else None
    distinct_outputs(("--json", json_path), ("--html", html_path))
    cache = output_dir(a.cache, "--cache")
    log = (lambda m: print(m, file=sys.stderr, flush=True))
    with cluster_engine(a.cluster) as engine:
        doc = accuracy.survey(backends, {o: known[o] for o in ops}, dtypes, a.size, a.seed, cache,
                              jobs=min(a.jobs, os.cpu_count() or 1), regenerate=a.regenerate, log=log,
                              timeout=a.timeout or accuracy.DEFAULT_ENTRY_TIMEOUT, engine=engine)
    print(accuracy.render(doc))
    json_path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"results: {json_path}  ({', '.join(f'{k} {v} s' for k, v in doc['timing'].items())})")
    if html_path:
        from ..reports import accuracy_html
        accuracy_html.write(doc, html_path)
        print(f"report: {html_path}")
    return 0


def _pattern_range(text: str) -> tuple[int, int]:
    """An argparse type: `LO:HI`, bit patterns (decimal or 0x…), 0 <= LO < HI <= 2^32."""
    try:
        lo, hi = (int(x, 0) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LO:HI (e.g. 0x3f800000:0x3f810000)") from None
    if not 0 <= lo < hi <= 1 << 32:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= LO < HI <= 2^32")
    return lo, hi


def _chunk_size(text: str) -> int:
    """An argparse type: patterns per exhaustive chunk, 1 to 2^28 (decimal or 0x…)."""
    try:
        n = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= n <= 1 << 28:
        raise argparse.ArgumentTypeError(f"{text!r}: from 1 to 2^28")
    return n


def _accuracy_exhaustive(a, backends: list[str]) -> int:
    """`accuracy --exhaustive` (shlo_conform/survey/streaming.py)."""
    from .. import survey as accuracy
    from ..survey import streaming
    dtypes = comma_list(a.dtypes, "--dtypes") or []
    if dtypes != ["f32"]:
        raise UsageError("--exhaustive takes --dtypes f32 (every f32 input; the 8- and 16-bit types are "
                         "exhaustive already, f64 has no end)")
    known = accuracy.float_ops()
    ops = comma_list(a.ops, "--ops")
    if not ops:
        raise UsageError("--exhaustive needs --ops: each unary op is 2^32 inputs")
    bad = [o for o in ops if known.get(o) != 1]
    if bad:
        raise UsageError(f"--ops: {bad[0]!r} is not a unary float element-wise op of the spec; "
                         f"unary: {', '.join(o for o, n in known.items() if n == 1)}")
    lo, hi = a.input_range or (0, 1 << 32)
    json_path = output_path(a.json or "out/accuracy-exhaustive.json", "--json", ".json")
    cache = output_dir(a.cache, "--cache")
    log = (lambda m: print(m, file=sys.stderr, flush=True))
    with cluster_engine(a.cluster) as engine:
        doc = streaming.survey(backends, ops, "f32", cache, lo=lo, hi=hi, chunk=a.chunk or streaming.DEFAULT_CHUNK,
                               jobs=min(a.jobs, os.cpu_count() or 1), engine=engine, log=log,
                               timeout=a.timeout or accuracy.DEFAULT_ENTRY_TIMEOUT)
    print(accuracy.render(doc))
    json_path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"results: {json_path}  ({', '.join(f'{k} {v} s' for k, v in doc['timing'].items())})")
    return 0
