"""The ratios the README quotes, measured in one run (issue 13, item 4).

    .venv/bin/python bench/summary.py [--backends xla,interpreter,iree] [--scoring-ops a,b] [--survey-size N]
    make bench

Three parts, each a ratio against a peer measured in the same run (the
machine may be loaded; seconds move, ratios much less):

1. **oracle vs reference interpreter** (`oracle_vs_interpreter.throughput`):
   one 16384-element program per (op, type), best of 5, interpreter time /
   oracle time per group — transcendentals in f32, bf16, f16, f8; f64;
   integer ops; data movement.
2. **accuracy survey wall per backend** (`shlo-conform accuracy`): the
   expectations are computed once (cached under a temporary folder, so the
   figure includes building them), then each backend's wall; the ratio is
   backend wall / expectations wall.
3. **scoring wall per backend against the pure compile+run time**: a real
   `shlo-conform --backend=B` with the default settings; the results'
   `timing` says how many worker-seconds went inside the adapter's compile
   and run; pure = those / workers; the ratio wall / pure is what the
   harness (startup, IPC, judging, loading, writing) costs on top.

4. **the oracle at model scale** (issue 21): `bench/model_scale.py` (the
   issue's five JAX programs, one 2^20-element transcendental per float
   type, an MLP, a conv-net block and a transformer block; interpreter
   time / oracle time, and whether XLA's outputs meet the oracle's
   expectations) and `bench/accumulations.py` (a reduce over 10^7 f32
   elements against the interpreter; a 1024³ f32 matmul judged against
   XLA's own time on it, with the oracle's memory), each in a process of
   its own; their lines are printed as they come and their verdict lines
   repeated in the summary.

The defaults keep a run to about half an hour on 2 cores: the
survey over four ops at 2^16 sampled inputs (exhaustive ≤ 16-bit), the
scoring over the whole suite on xla and the interpreter and over
`IREE_OPS` on iree (a whole IREE run takes about 20 minutes here; pass
`--scoring-ops all` to score everything everywhere).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import oracle_vs_interpreter  # noqa: E402
import scoring_speed  # noqa: E402

CLI = scoring_speed.CLI
SURVEY_OPS = "sine,exponential,log,add"
IREE_OPS = "sine,exponential,add,multiply,compare,select,convert,transpose,reduce,dot_general"


def survey(backends: list[str], size: int, tmp: Path) -> dict:
    out = tmp / "accuracy.json"
    cmd = [CLI, "accuracy", f"--backend={','.join(backends)}", "--ops", SURVEY_OPS, "--size", str(size),
           "--dtypes", "f8E4M3FN,f8E5M2,bf16,f16,f32,f64", "--cache", str(tmp / "cache"), "--json", str(out)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    doc = json.loads(out.read_text())
    doc["timing"]["wall_s"] = round(time.monotonic() - t0, 2)
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="xla,interpreter,iree")
    ap.add_argument("--scoring-ops", default=None,
                    help="ops scored on every backend ('all': the whole suite everywhere); "
                         f"default: the whole suite, but {IREE_OPS} on iree")
    ap.add_argument("--survey-size", type=int, default=1 << 16)
    ap.add_argument("--skip", default="", help="comma-separated parts to leave out: throughput,survey,scoring,model")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    backends = a.backends.split(",")

    groups, t, scoring, model = {}, {}, {}, []
    if "throughput" not in skip:
        print("== 1. oracle vs reference interpreter (throughput) ==")
        groups = oracle_vs_interpreter.throughput()

    with tempfile.TemporaryDirectory(prefix="shlo-bench-") as tmp:
        if "survey" not in skip:
            print("\n== 2. accuracy survey ==")
            sv = survey(backends, a.survey_size, Path(tmp))
            t = sv["timing"]
            print(f"{SURVEY_OPS} over f8E4M3FN..f64 (exhaustive <= 16-bit, {a.survey_size} sampled f32/f64): "
                  f"expectations {t['expectations_s']:.1f} s (built once)")
            for b in backends:
                s = t[f"backend_{b}_s"]
                print(f"  {b:<12} {s:7.1f} s   {s / t['expectations_s']:.2f}x the expectations")

        if "scoring" not in skip:
            print("\n== 3. scoring wall against pure compile+run ==")
            for b in backends:
                ops = None if a.scoring_ops in (None, "all") else a.scoring_ops
                if a.scoring_ops is None and b == "iree":
                    ops = IREE_OPS
                wall, cpu, doc = scoring_speed.score(b, ops, [], Path(tmp) / f"score-{b}.json")
                tm = doc["timing"]
                pure = (tm["compile"] + tm["run"]) / tm["workers"]
                scoring[b] = (wall, pure)
                print(f"  {b:<12} {doc['counts']['cases']:>5} cases{' (' + ops + ')' if ops else ''}: "
                      f"wall {wall:6.1f} s, compile+run {pure:6.1f} s per worker x {tm['workers']}, "
                      f"wall / compile+run {wall / pure:.2f}, harness share {100 * tm['harness_share']:.0f}%")

    if "model" not in skip:
        print("\n== 4. the oracle at model scale ==")
        for script, args in (("model_scale.py", []), ("accumulations.py", ["--only", "reduce"])):
            model += _echo([sys.executable, str(Path(__file__).parent / script), *args])

    print("\n== summary (the README's figures) ==")
    for key, (o, i) in groups.items():
        print(f"  oracle throughput, {key:<24} {i / o:7.1f}x the interpreter's")
    for b in backends:
        if t:
            print(f"  accuracy survey wall, {b:<12} {t[f'backend_{b}_s']:7.1f} s")
    for b, (wall, pure) in scoring.items():
        print(f"  scoring wall / compile+run, {b:<12} {wall / pure:5.2f}  ({wall:.0f} s)")
    for line in model:
        print("  " + line.strip())


def _echo(cmd: list[str]) -> list[str]:
    """Run a bench script, print its lines as they come; its target and
    judging lines (those the summary repeats)."""
    keep = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        for line in p.stdout:
            print(line, end="", flush=True)
            if any(w in line for w in ("target", "->", "MISSED", " met")):
                keep.append(line.rstrip())
    return keep

if __name__ == "__main__":
    main()
