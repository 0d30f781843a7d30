"""Scoring speed, in one run: a backend scored on suites/core the old way
(one worker, one compile per program) and the new way (parallel workers,
batched compiles), with where the wall went and the harness's share.

    .venv/bin/python bench/scoring_speed.py [--backend xla] [--ops a,b] [--skip-before]

Each configuration is a real `shlo-conform --backend=...` process (the
figures include starting it, loading the suite and writing the results);
the breakdown is the results document's `timing` (runner.timing_breakdown):
worker-seconds inside the adapter's compile and run, starting workers,
IPC, judging, the rest; harness share = worker wall not spent inside the
adapter.  The run checks that both configurations gave the same verdicts.
On a machine shared with other work the wall moves; the CPU seconds of the
process tree (runner, workers, the compilers they start) much less.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = str(Path(sys.executable).with_name("shlo-conform"))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def score(backend: str, ops: str | None, extra: list[str], out: Path) -> tuple[float, float, dict]:
    """(wall, CPU seconds of the whole process tree: runner, workers, compilers they ran, results)."""
    cmd = [CLI, f"--backend={backend}", "--json", str(out), *extra] + (["--ops", ops] if ops else [])
    t0, c0 = time.monotonic(), _cpu()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.monotonic() - t0, _cpu() - c0
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return wall, cpu, json.loads(out.read_text())


def show(label: str, wall: float, cpu: float, doc: dict) -> None:
    t = doc.get("timing", {})
    c = doc["counts"]
    print(f"{label:<8} {wall:7.1f} s wall, {cpu:7.1f} s CPU, {c['cases']} cases, {doc.get('compiles', '?')} "
          f"compiles, {t.get('workers', '?')} workers")
    if t:
        slots = t["run_wall"] * t["workers"]
        print(f"         worker-seconds {slots:7.1f}: compile {t['compile']:.1f}, run {t['run']:.1f} (inside the "
              f"adapter); startup {t['startup']:.1f}, ipc {t['ipc']:.1f}, judge {t['judge']:.1f}, "
              f"other {t['other']:.1f}; load+write {t['load_and_write']:.1f} s")
        print(f"         harness share {100 * t['harness_share']:.0f}%   batches {t['batches']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="xla")
    ap.add_argument("--ops", help="comma-separated ops (default: all of suites/core)")
    ap.add_argument("--skip-before", action="store_true", help="only the new way")
    a = ap.parse_args()
    print(f"{a.backend} on suites/core{' (' + a.ops + ')' if a.ops else ''}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="shlo-bench-") as tmp:
        runs = []
        if not a.skip_before:
            runs.append(("before", ["--jobs", "1", "--batch", "1"]))
        runs.append(("after", []))
        got = {}
        for label, extra in runs:
            wall, cpu, doc = score(a.backend, a.ops, extra, Path(tmp) / f"{label}.json")
            got[label] = (wall, cpu, doc)
            show(label, wall, cpu, doc)
    if len(got) == 2:
        (wb, cb, db), (wa, ca, da) = got["before"], got["after"]
        same = [(v["id"], v["verdict"]) for v in db["verdicts"]] == [(v["id"], v["verdict"]) for v in da["verdicts"]]
        print(f"speed-up {wb / wa:.1f}x wall, {cb / ca:.1f}x CPU; verdicts {'identical' if same else 'DIFFER'}")
        if not same:
            before = {v["id"]: v for v in db["verdicts"]}
            for v in da["verdicts"]:
                w = before.get(v["id"])
                if w is None or w["verdict"] != v["verdict"]:
                    print(f"  {v['id']}: before {w and w['verdict']} ({w and w['detail'][:100]}), "
                          f"after {v['verdict']} ({v['detail'][:100]})")
            sys.exit(1)


if __name__ == "__main__":
    main()
