"""Verdicts of two results files compared case by case:
`python tools/runtimes/compare.py BASE.json OTHER.json [--examples N]`;
or the scoreboard of several: `compare.py --table A.json B.json …`.

For the scoreboard of StableHLO consumers: each configuration is scored on
the same selection of the suite as the project's `xla`, and what changes
between them is the list of cases whose verdict flips (pass → fail, fail →
pass, pass → unsupported, …), counted per (base verdict, other verdict)
and per op, with a few case ids each — the ids `shlo-conform explain`
takes.  Standard library only (results files are JSON: `verdicts`, one
object per case with `id`, `op`, `dtype`, `verdict`, `detail`).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict


def verdicts(path: str) -> tuple[dict, dict]:
    """({case id: verdict record}, the run's summary: backend, describe, counts, timing)."""
    with open(path) as f:
        doc = json.load(f)
    return {v["id"]: v for v in doc["verdicts"]}, {k: doc.get(k) for k in ("backend", "describe", "counts", "timing")}


def flips(base: dict, other: dict) -> dict:
    """{(base verdict, other verdict): [case records of `other`, in id order]} for every
    case both runs hold whose verdict differs; cases only one run holds are under
    ("absent", v) / (v, "absent")."""
    out = defaultdict(list)
    for cid in sorted(set(base) | set(other)):
        a = base.get(cid, {}).get("verdict", "absent")
        b = other.get(cid, {}).get("verdict", "absent")
        if a != b:
            out[(a, b)].append(other.get(cid) or base[cid])
    return dict(out)


def report(base_path: str, other_path: str, examples: int = 3) -> str:
    base, bs = verdicts(base_path)
    other, os_ = verdicts(other_path)
    lines = [f"base:  {bs['backend']} — {bs['describe']}", f"other: {os_['backend']} — {os_['describe']}",
             f"cases: {len(base)} / {len(other)}; same verdict: "
             f"{sum(1 for c in set(base) & set(other) if base[c]['verdict'] == other[c]['verdict'])}"]
    for (a, b), recs in sorted(flips(base, other).items(), key=lambda kv: -len(kv[1])):
        per_op = defaultdict(int)
        for r in recs:
            per_op[r["op"]] += 1
        ops = ", ".join(f"{op} {n}" for op, n in sorted(per_op.items(), key=lambda kv: -kv[1]))
        lines.append(f"{a} -> {b}: {len(recs)} ({ops})")
        for r in recs[:examples]:
            detail = (other.get(r["id"]) or {}).get("detail", "")
            lines.append(f"    {r['id']}  {detail[:160]}")
    return "\n".join(lines)


COLUMNS = ("pass", "fail", "rejected", "unsupported", "crash", "timeout")


def table(paths: list[str]) -> str:
    """One row per results file: its verdict counts, conformant of counted,
    and the runner's time split (wall; compile, run and worker start-up
    summed over workers — for a command backend these include the protocol's
    round trips)."""
    head = f"{'backend':44} {'cases':>6} " + " ".join(f"{c:>11}" for c in COLUMNS) + \
        f" {'conformant':>16} {'wall s':>7} {'compile s':>9} {'run s':>7} {'start s':>7}"
    rows = [head]
    for path in paths:
        _, doc = verdicts(path)
        c, t = doc["counts"], doc["timing"] or {}
        share = f"{c['conformant']}/{c['counted']} {100 * c['conformant'] / max(c['counted'], 1):.1f}%"
        rows.append(f"{doc['backend'][-44:]:44} {c['cases']:>6} " + " ".join(f"{c.get(k, 0):>11}" for k in COLUMNS) +
                    f" {share:>16} {t.get('wall', 0):>7.0f} {t.get('compile', 0):>9.0f} {t.get('run', 0):>7.1f} "
                    f"{t.get('startup', 0):>7.0f}")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="BASE OTHER, or with --table any number of results files")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--table", action="store_true", help="one row of counts and times per file")
    a = ap.parse_args(argv)
    if a.table:
        print(table(a.files))
        return 0
    if len(a.files) != 2:
        ap.error("compare takes BASE and OTHER (or --table FILES…)")
    print(report(a.files[0], a.files[1], a.examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
