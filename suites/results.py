"""The results document: what a scoring run writes, `report` and
`--baseline` read, and `merge` builds — its schema and its summaries.

It lives beside the suite's records (records.py) because it is one: a list
of `Verdict`s of one backend on one suite, with the counts, per-op tables
and diagnoses they add up to.  `check_results` refuses a document whose
counts do not add up to its verdicts, so a report never shows figures its
verdicts do not support.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .causes import CAUSES, diagnose
from .records import KINDS, VERDICTS, Verdict, conformant



def _blank() -> dict:
    return {"cases": 0, **{v: 0 for v in VERDICTS}, "counted": 0, "conformant": 0}


def _count(bucket: dict, v: Verdict) -> None:
    bucket["cases"] += 1
    bucket[v.verdict] = bucket.get(v.verdict, 0) + 1
    c = conformant(v.kind, v.verdict)
    if c is not None:
        bucket["counted"] += 1
        bucket["conformant"] += int(c)
    causes = bucket.setdefault("causes", {})   # cause -> failing cases with an element of that cause
    for cause in v.causes:
        causes[cause] = causes.get(cause, 0) + 1
    bucket["causes"] = {k: causes[k] for k in CAUSES if k in causes}


def _max(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def summarize(verdicts: list[Verdict]) -> tuple[dict, dict]:
    """(counts over all cases, per-op counts with max ULP, per-dtype counts and
    the implementation-defined choices the backend made).  Every bucket has
    "causes": cause -> failing cases with at least one element of that cause.
    The max ULP is `meaningful_ulp`'s: over elements that passed or are "out
    of tolerance" (never a flushed subnormal's or a lost NaN's distance)."""
    counts = _blank()
    per_op: dict[str, dict] = {}
    for v in verdicts:
        _count(counts, v)
        op = per_op.setdefault(v.op, {**_blank(), "max_ulp": None, "dtypes": {}, "impl_defined": {}})
        _count(op, v)
        if v.meaningful_ulp is not None:
            op["max_ulp"] = _max(op["max_ulp"], v.meaningful_ulp)
        d = op["dtypes"].setdefault(v.dtype, {**_blank(), "max_ulp": None})
        _count(d, v)
        if v.meaningful_ulp is not None:
            d["max_ulp"] = _max(d["max_ulp"], v.meaningful_ulp)
        for label in v.impl_defined:
            op["impl_defined"][label] = op["impl_defined"].get(label, 0) + 1
    counts["nonconformant"] = counts["counted"] - counts["conformant"]
    return counts, dict(sorted(per_op.items()))


def results_document(*, backend: str, describe: str | None, suite: str, manifest: dict, started: str,
                     seconds: float, verdicts: list[Verdict], timeouts: dict | None = None) -> dict:
    counts, per_op = summarize(verdicts)
    doc = {"backend": backend, "describe": describe or backend, "suite": suite, "manifest": manifest,
           "started": started, "seconds": round(seconds, 3), "counts": counts, "per_op": per_op,
           "diagnoses": diagnose(backend, verdicts), "verdicts": [asdict(v) for v in verdicts]}
    if timeouts:
        doc["timeouts"] = timeouts
    return doc


_DOC_FIELDS = {"backend": str, "describe": str, "suite": str, "counts": dict, "per_op": dict, "verdicts": list}
_DOC_OPTIONAL = {"manifest": dict, "started": str, "seconds": (int, float), "timeouts": dict, "resumed": int,
                 "compiles": int, "run_key": dict, "timing": dict, "diagnoses": list,
                 "shard": dict, "merged": list,   # shard: shlo_conform/pipeline/shard.py; merged: merge.py
                 "backend_notes": list}   # what the backend's adapter said in its workers' logs (runner.NOTE)
_VERDICT_TYPES = {"id": str, "op": str, "dtype": str, "kind": str, "verdict": str, "detail": str,
                  "max_ulp": (int, float, type(None)), "impl_defined": list, "seconds": (int, float),
                  "violates": (str, type(None)), "causes": dict, "mismatches": list,
                  "meaningful_ulp": (int, float, type(None))}


def check_results(doc) -> dict:
    """A results document as `results_document` writes it: its fields and
    their JSON types, every verdict a valid record with a unique id, and the
    counts and per-op tables equal to what its verdicts add up to (reports
    and baselines read them).  Raises ValueError naming the problem."""
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    for k, t in _DOC_FIELDS.items():
        if not isinstance(doc.get(k), t):
            raise ValueError(f"no {k!r}" if k not in doc else f"{k!r} has the wrong JSON type")
    for k, t in _DOC_OPTIONAL.items():
        if k in doc and doc[k] is not None and not isinstance(doc[k], t):
            raise ValueError(f"{k!r} has the wrong JSON type")
    verdicts, seen = [], set()
    for n, d in enumerate(doc["verdicts"]):
        verdicts.append(_check_verdict(d, n))
        if verdicts[-1].id in seen:
            raise ValueError(f"verdict {n}: duplicate id {verdicts[-1].id!r}")
        seen.add(verdicts[-1].id)
    counts, per_op = summarize(verdicts)
    if "causes" not in doc["counts"]:   # written before failure causes: compare what it has, then fill in
        if _plain(_without_causes(counts)) != _plain(doc["counts"]) or \
                _plain(_without_causes(per_op)) != _plain(doc["per_op"]):
            raise ValueError("its counts do not add up to its verdicts")
        doc["counts"], doc["per_op"] = counts, per_op
    elif _plain(counts) != _plain(doc["counts"]) or _plain(per_op) != _plain(doc["per_op"]):
        raise ValueError("its counts do not add up to its verdicts")
    diagnoses = diagnose(doc["backend"], verdicts)
    if doc.get("diagnoses", diagnoses) != diagnoses:
        raise ValueError("its diagnoses are not those of its verdicts")
    doc["diagnoses"] = diagnoses
    return doc


def _without_causes(x):
    """A summary as it was before failure causes (no "causes" buckets)."""
    if isinstance(x, dict):
        return {k: _without_causes(v) for k, v in x.items() if k != "causes"}
    return x


def _check_verdict(d, n: int) -> Verdict:
    if not isinstance(d, dict):
        raise ValueError(f"verdict {n} is not an object")
    for k, v in d.items():
        if k not in _VERDICT_TYPES:
            raise ValueError(f"verdict {n} has an unknown field {k!r}")
        if not isinstance(v, _VERDICT_TYPES[k]) or (isinstance(v, bool) and k in ("max_ulp", "seconds")):
            raise ValueError(f"verdict {n}: {k!r} has the wrong JSON type")
    missing = [k for k in ("id", "op", "dtype", "kind", "verdict") if k not in d]
    if missing:
        raise ValueError(f"verdict {n} has no {missing[0]!r}")
    if d["kind"] not in KINDS:
        raise ValueError(f"verdict {n}: unknown kind {d['kind']!r}")
    if d["verdict"] not in VERDICTS:
        raise ValueError(f"verdict {n}: unknown verdict {d['verdict']!r}")
    bad = [c for c in d.get("causes", {}) if c not in CAUSES or not isinstance(d["causes"][c], int)]
    if bad:
        raise ValueError(f"verdict {n}: unknown cause {bad[0]!r} (or its count is not an integer)")
    if "meaningful_ulp" not in d:   # written before failure causes: its only ULP figure is the raw one
        d["meaningful_ulp"] = d.get("max_ulp")   # (in the document too, for readers that build Verdicts)
    return Verdict(**d)


def _plain(x):
    """JSON's view of a value (so a loaded document compares equal to a fresh summary)."""
    return json.loads(json.dumps(x, sort_keys=True))


def load_results(path: Path) -> dict:
    """Read and check a results document (raises ValueError if it is not one)."""
    try:
        doc = json.loads(Path(path).read_text())
    except UnicodeDecodeError as e:
        raise ValueError(f"not text ({e})") from None
    except ValueError as e:
        raise ValueError(f"not JSON ({e})") from None
    return check_results(doc)
