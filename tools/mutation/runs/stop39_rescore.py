"""Stop 39's figures (docs/mutation.md §12.3): stop 38's sample of the op modules on today's tool and suite: the mutants stop 38 had not seen killed by the
suite's verdicts rescored by the suite alone (--no-later --tests ''; fastA/B); one that survives keeps stop 38's
later verdict (killed by tests, check-spec or regeneration, or a gap) unless equivalent.toml now declares it; the
mutants today's tool no longer makes (generator inputs, symmetric calls) left out.

    tools/mutation/mutation.py --ops OPS --only ONLY --no-later --tests '' --json stop39-fastA.json
        # ONLY: stop38.json.journal's op-module records not killed by the suite's verdicts (277); run as two
        # halves of the ops (A, B), then C: slice, triangular_solve, pad, if, all_reduce, case,
        # get_tuple_element again after the oracle's rejections named every rule broken
    .venv/bin/python tools/mutation/runs/stop39_rescore.py stop39-fastA.json stop39-fastB.json stop39-fastC.json
"""
import collections
import json
import sys
import tomllib
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import mutation as mt
rows = [json.loads(l) for l in open(HERE / "stop38.json.journal")][1:]
ops = [r for r in rows if r["path"].startswith("spec/ops/")]
new = {}
for f in sys.argv[1:]:
    for m in json.load(open(f))["mutants"]:
        new[m["key"]] = m
declared = {e["mutant"]: e["reason"] for e in tomllib.loads(mt.EQUIVALENT.read_text()).get("equivalent", [])}
keys = {p: {m.key for m in mt.enumerate_mutants(p)} for p in sorted({r["path"] for r in ops})}
fields = set(mt.Mutant.__dataclass_fields__)
plan, dropped, moved, missing = [], collections.Counter(), collections.Counter(), []
def kind(d):
    if d["status"] != "killed":
        return d["status"]
    return d["by"].split(":")[0].split(" (")[0][:16] if d["by"].startswith("by ") else "suite"
for r in ops:
    if r["key"] not in keys[r["path"]]:
        dropped[kind(r)] += 1
        continue
    d = r
    if kind(r) != "suite":
        n = new.get(r["key"])
        if n is None:
            missing.append(r["key"])
        elif n["status"] == "killed":
            d = n
        elif r["key"] in declared and r["status"] != "killed":
            d = dict(r, status="equivalent", by=declared[r["key"]])
        moved[(kind(r), kind(d))] += 1
    plan.append(mt.Mutant(**{k: v for k, v in d.items() if k in fields}))
print("stop 38 op-module records", len(ops), "; no longer made by today's tool:", dict(dropped))
print("rescored", len(new), "; not rescored though not a suite kill:", len(missing))
for k, v in sorted(moved.items(), key=lambda kv: -kv[1]):
    print(f"   {v:4d}  {k[0]} -> {k[1]}")
print(collections.Counter(m.status for m in plan))
for line in mt.figures(plan):
    print(line)
for label, pick in (("gaps / not reached", lambda m: m.status in ("gap", "not reached")),
                    ("killed only by tests, check-spec or regeneration (not declared)",
                     lambda m: m.status == "killed" and m.by.startswith("by ") and m.key not in declared)):
    ms = [m for m in plan if pick(m)]
    print(f"{label}: {len(ms)}")
    for m in ms:
        print(f"  {m.status:<11} {m.path}:{m.line} [{m.function}] {m.operator}: {m.source[:90]}  | {m.by[:70]}")
