"""Stop 46's figures (docs/mutation.md §13.3; stops 47 and 48 use it too) from the shards' journals of a
`make mutation` that had not finished (the shared modules' part), a later journal's record of a mutant
replacing an earlier one's (how many records each journal gave is printed first): every mutant scored so far, the declarations of equivalent.toml applied
as a restore applies them, `mutation.figures` for the two figures, and the op-module mutants that neither a
verdict kills nor a declaration explains.

    .venv/bin/python tools/mutation/runs/stop46_figures.py tools/mutation/runs/stop46.json.journal
"""
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import mutation as mt  # noqa: E402

declared = mt._equivalents()
records, origin = {}, {}
for path in sys.argv[1:]:   # a later journal's record of a mutant replaces an earlier one's
    for line in Path(path).read_text().splitlines()[1:]:
        try:
            r = json.loads(line)
        except ValueError:   # a line cut by an interruption
            continue
        records[r["key"] + "\0" + r["source"]] = r
        origin[r["key"] + "\0" + r["source"]] = path
for path in sys.argv[1:]:
    mine = [k for k, p in origin.items() if p == path]
    print(f"{path}: {len(mine)} records kept ({sum(mt.is_op_module(records[k]['path']) for k in mine)} op-module)")
# only the mutants today's sample holds (seed 0, 12 a module): a module changed since a journal was written
# may have swapped a mutant of its sample for another (stop 49: batch_norm_inference's F32Attr line)
counts = json.loads((mt.ROOT / "suites" / "core" / "manifest.json").read_text())["counts"]
today = {m.key + "\0" + m.source
         for path in [mt.op_module(o) for o in sorted(counts) if mt.op_module(o)] + list(mt.ORACLE_MODULES)
         for m in mt.sample(mt.enumerate_mutants(path), 12, 0)}
gone = [k for k in records if k not in today]
for k in gone:
    del records[k]
print(f"{len(gone)} records of mutants today's sample no longer holds left out")
fields = set(mt.Mutant.__dataclass_fields__)
plan = []
for r in records.values():
    m = mt.Mutant(**{k: v for k, v in r.items() if k in fields})
    if m.status in ("gap", "not reached") and m.key in declared:
        m.status, m.by = "equivalent", declared[m.key]
    plan.append(m)
print(f"{len(plan)} mutants scored: {dict(collections.Counter(m.status for m in plan))}; "
      f"op modules {sum(mt.is_op_module(m.path) for m in plan)}, shared {sum(not mt.is_op_module(m.path) for m in plan)}")
for line in mt.figures(plan):
    print(line)
left = [m for m in plan if mt.is_op_module(m.path) and m.key not in declared
        and (m.status in ("gap", "not reached") or (m.status == "killed" and m.by.startswith("by ")))]
print(f"{len(left)} op-module mutants no verdict kills and no declaration explains:")
for m in sorted(left, key=lambda m: (m.path, m.line)):
    print(f"  {m.status:<11} {m.path}:{m.line} [{m.function}] {m.operator}\n      {m.source}\n   -> {m.mutated.strip()}\n"
          f"      {m.by[:160]}")
