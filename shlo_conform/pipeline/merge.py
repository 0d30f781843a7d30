"""`report --merge`: one results document from the results of several runs
of one backend on one suite — typically the N shards of `--shard I/N`.

What may be merged is what `runner.run_key` says decides verdicts, less
the selection: the same backend (name and `describe`, which names the
implementation's version), the same suite (label, manifest and digest)
and the same timeouts.  Anything else is refused (`MergeError`), as is a
case id that two files both hold: a merge never picks one verdict over
another.  Counts are never added up from the parts: the merged document
is `runner.results_document` of the union of the verdicts, so it passes
`runner.check_results` like any other.

Shards of one split (same `shard.count` and `shard.selection`) are checked
as a whole: a complete split must hold every selected case; an incomplete
one is merged, and `missing` says which shards are not there.
"""
from __future__ import annotations

from ..suites.results import results_document

from .journal import run_key
from .shard import check_shard_record
from ..suites.records import Verdict


class MergeError(ValueError):
    """Results that cannot be one document: the message names the file and why."""


def _suite_digest(doc: dict):
    return (doc.get("run_key") or {}).get("suite_digest")


def _shown(x) -> str:
    return repr(x) if len(repr(x)) <= 80 else repr(x)[:77] + "..."


def _same(docs: list[tuple[str, dict]], what: str, get) -> None:
    """Refuse files that differ in `get(doc)` from the first (None: not stated, not compared)."""
    first_name, first = None, None
    for name, doc in docs:
        value = get(doc)
        if value is None:
            continue
        if first_name is None:
            first_name, first = name, value
        elif value != first:
            raise MergeError(f"{name}: its {what} ({_shown(value)}) differs from {first_name}'s "
                             f"({_shown(first)}); only results of one backend on one suite can be merged")


def _shards(docs: list[tuple[str, dict]]) -> list[dict]:
    """Each split among the files: count, selection, shard indices present and missing."""
    splits: dict[tuple[int, str], dict] = {}
    for name, doc in docs:
        if doc.get("shard") is None:
            continue
        try:
            s = check_shard_record(doc["shard"])
        except ValueError as e:
            raise MergeError(f"{name}: {e}") from None
        if s["cases"] != len(doc["verdicts"]):
            raise MergeError(f"{name}: says shard {s['index']}/{s['count']} ran {s['cases']} cases, "
                             f"but it holds {len(doc['verdicts'])} verdicts")
        split = splits.setdefault((s["count"], s["selection"]),
                                  {"count": s["count"], "selection": s["selection"], "selected": s["selected"],
                                   "present": {}, "cases": 0})
        if s.get("batch") != split.setdefault("batch", s.get("batch")):
            raise MergeError(f"{name}: shard {s['index']}/{s['count']} was split with --batch {s.get('batch')}, "
                             f"the other shards of its split with --batch {split['batch']}: the splits differ")
        if s["selected"] != split["selected"]:
            raise MergeError(f"{name}: shard {s['index']}/{s['count']} of a selection of {s['selected']} cases; "
                             f"the other shards of its split say {split['selected']}")
        if s["index"] in split["present"]:
            raise MergeError(f"{name}: shard {s['index']}/{s['count']} is also given as "
                             f"{split['present'][s['index']]}")
        split["present"][s["index"]] = name
        split["cases"] += s["cases"]
    out = []
    for split in splits.values():
        missing = [i for i in range(1, split["count"] + 1) if i not in split["present"]]
        if not missing and split["cases"] != split["selected"]:
            raise MergeError(f"the {split['count']} shards of split {split['selection']} hold {split['cases']} "
                             f"cases, but {split['selected']} were selected (shards made by different versions?)")
        out.append({"count": split["count"], "selection": split["selection"], "selected": split["selected"],
                    "cases": split["cases"], "present": sorted(split["present"]), "missing": missing})
    return out


def merge(docs: list[tuple[str, dict]]) -> tuple[dict, list[str]]:
    """(merged document, notes) from (file name, checked results document)
    pairs; MergeError when they cannot be merged.  Notes say what is
    missing (shards of a split) — the merge is still whole for what it holds."""
    if not docs:
        raise MergeError("no results files to merge")
    names = [name for name, _ in docs]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise MergeError(f"{twice} is given twice")
    _same(docs, "backend", lambda d: d["backend"])
    # a run with no case never started the backend: its describe is the bare name
    _same(docs, "backend description", lambda d: d["describe"] if d["verdicts"] else None)
    _same(docs, "suite", lambda d: d["suite"])
    _same(docs, "suite digest", _suite_digest)
    _same(docs, "suite manifest", lambda d: d.get("manifest"))
    _same(docs, "timeouts", lambda d: d.get("timeouts"))

    owner: dict[str, str] = {}
    verdicts: list[Verdict] = []
    for name, doc in docs:
        for v in doc["verdicts"]:
            if v["id"] in owner:
                raise MergeError(f"{name}: case {v['id']} is also in {owner[v['id']]} (overlapping results "
                                 "cannot be merged: which verdict would count?)")
            owner[v["id"]] = name
            verdicts.append(Verdict(**v))
    splits = _shards(docs)
    verdicts.sort(key=lambda v: (v.op, v.id))

    base = next((d for _, d in docs if d["verdicts"]), docs[0][1])
    starts = [d["started"] for _, d in docs if d.get("started")]
    merged = results_document(backend=base["backend"], describe=base["describe"], suite=base["suite"],
                              manifest=base.get("manifest") or {}, started=min(starts) if starts else "",
                              seconds=max((d.get("seconds") or 0.0) for _, d in docs), verdicts=verdicts,
                              timeouts=base.get("timeouts"))
    if any(d.get("compiles") is not None for _, d in docs):
        merged["compiles"] = sum(d.get("compiles") or 0 for _, d in docs)
    notes = sorted({n for _, d in docs for n in d.get("backend_notes", [])})
    if notes:   # what the adapter said in any shard
        merged["backend_notes"] = notes
    digest = next((x for x in map(_suite_digest, (d for _, d in docs)) if x), None)
    timeouts = base.get("timeouts") or {}
    if digest and "compile" in timeouts and "run" in timeouts:  # what `report --merge` of merges compares
        merged["run_key"] = run_key(backend=base["backend"], suite=base["suite"], suite_digest=digest,
                                    case_ids=[v.id for v in verdicts], compile_timeout=timeouts["compile"],
                                    run_timeout=timeouts["run"])
    merged["merged"] = [{"file": name, "cases": len(d["verdicts"]), "seconds": d.get("seconds"),
                         **({"shard": f"{d['shard']['index']}/{d['shard']['count']}"} if d.get("shard") else {})}
                        for name, d in docs]
    notes = [f"shard{'s' * (len(s['missing']) > 1)} {', '.join(map(str, s['missing']))} of {s['count']} "
             f"{'are' if len(s['missing']) > 1 else 'is'} missing (split {s['selection']}): "
             f"{s['cases']} of its {s['selected']} selected cases are merged" for s in splits if s["missing"]]
    return merged, notes
