"""A value case's outputs held against its expectations: the verdict's
ok, detail, max ULP, the implementation-defined choices made, and the
causes of failing elements (suites/causes.py) — with the oracle's result
on flushed inputs where the inputs hold subnormals (input_flush.py)."""
from __future__ import annotations

from .input_flush import flushed_expectations
from .suites.causes import CAUSES
from .suites.compare import MAX_MISMATCHES_SHOWN, Comparison, compare, compare_log
from .suites.records import Case


def check_outputs(case: Case, outputs: list, why: dict | None = None) -> tuple[bool, str, float | None, list[str]]:
    """Compare every output of a value case with its expectation: (ok,
    detail, max_ulp, implementation-defined labels chosen).  With `why` (a
    dict), also fills in the Verdict fields `causes`, `mismatches` and
    `meaningful_ulp` (suites/causes.py); failing outputs of a case whose
    inputs hold subnormals are compared again with the flushed-input
    expectation (input_flush.py), so input flushes are named."""
    if len(outputs) != len(case.expected):
        return False, f"{len(outputs)} outputs where {len(case.expected)} were expected", None, []
    problems, ulps, labels = [], [], []
    causes, mismatches, meaningful, flushed = {}, [], [], False
    for k, (exp, actual) in enumerate(zip(case.expected, outputs)):
        try:
            j = compare(exp, actual)
            if not j.ok and why is not None and j.causes:
                if flushed is False:
                    flushed = flushed_expectations(case)
                if flushed is not None:
                    j = compare(exp, actual, flushed[k])
        except Exception as e:  # an output numpy cannot even read as the expected type
            j = Comparison(False, detail=f"could not compare ({type(e).__name__}: {e})")
        if j.max_ulp is not None:
            ulps.append(j.max_ulp)
        if j.meaningful_ulp is not None:
            meaningful.append(j.meaningful_ulp)
        for c, n in j.causes.items():
            causes[c] = causes.get(c, 0) + n
        mismatches += [list(m) for m in j.mismatches]   # flat index within its output
        labels += [label for label in j.alternatives_used if label not in labels]
        if not j.ok:
            problems.append(f"output {k}: {j.detail}" if len(outputs) > 1 else j.detail)
    if why is not None:
        why.update(causes={c: causes[c] for c in CAUSES if c in causes}, mismatches=mismatches[:MAX_MISMATCHES_SHOWN],
                   meaningful_ulp=max(meaningful) if meaningful else None)
    return not problems, "; ".join(problems), (max(ulps) if ulps else None), labels


def _with_log(case: Case, log: list, ok: bool, detail: str, max_ulp, labels: list):
    """`check_outputs`' answer with the host log checked too (a case with
    host data: suites.compare.compare_log against the case's expected log)."""
    try:
        j = compare_log(case.host.log, [(s, a) for s, a in log])
    except Exception as e:  # a log numpy cannot read as the expected types
        j = Comparison(False, detail=f"could not compare the host log ({type(e).__name__}: {e})")
    if not j.ok:
        ok, detail = False, "; ".join(d for d in (detail, j.detail) if d)
    if j.max_ulp is not None:
        max_ulp = j.max_ulp if max_ulp is None else max(max_ulp, j.max_ulp)
    return ok, detail, max_ulp, labels + [a for a in j.alternatives_used if a not in labels]
