"""A value case's outputs held against its expectations: the verdict's
ok, detail, max ULP, the implementation-defined choices made, and the
causes of failing elements (suites/causes.py) — with the oracle's result
on flushed inputs where the inputs hold subnormals (input_flush.py)."""
from __future__ import annotations

from .input_flush import flushed_expectations
from ..suites.causes import CAUSES
from ..suites.compare import MAX_MISMATCHES_SHOWN, Comparison, compare, compare_log
from ..suites.kinds import kind_of
from ..suites.records import Case


def check_outputs(case: Case, outputs: list, why: dict | None = None) -> tuple[bool, str, float | None, list[str]]:
    """`_check_outputs` of a case's outputs; for a case with a grid,
    `outputs` holds each process's outputs (flattened id order) and each
    is held against that process's expectations (`check_grid_outputs`)."""
    if case.grid is not None:
        return check_grid_outputs(case, outputs, why)
    return _check_outputs(case, outputs, why)


def check_grid_outputs(case: Case, outputs: list, why: dict | None = None):
    """Each process's outputs against its own expectations: the verdict's
    detail names the processes that fail ("process 1 (replica 0, partition
    1): output 0: …") and a mismatch's index says the process ("3 of
    process 1"); causes add up over the processes, max ULP is the largest.
    Input flush is established as for one process: the oracle on the whole
    grid with every process's subnormal inputs flushed (`_flushed_grid`)."""
    grid = case.grid
    if not isinstance(outputs, (list, tuple)) or len(outputs) != grid.size:
        n = len(outputs) if isinstance(outputs, (list, tuple)) else 0
        return False, f"outputs of {n} processes where the {grid.num_replicas}×{grid.num_partitions} grid has " \
                      f"{grid.size}", None, []
    flushed = [False]

    def flushed_at(i):
        if flushed[0] is False:
            flushed[0] = _flushed_grid(case)
        return None if flushed[0] is None else flushed[0][i]
    problems, ulps, labels, causes, mismatches, meaningful = [], [], [], {}, [], []
    for i, out in enumerate(outputs):
        one = Case(id=case.id, op=case.op, dtype=case.dtype, kind=case.kind, mlir=case.mlir,
                   inputs=grid.inputs[i], expected=grid.expected[i])
        w = {} if why is not None else None
        ok, detail, max_ulp, used = _check_outputs(one, list(out), w, lambda i=i: flushed_at(i))
        if not ok:
            problems.append(f"{grid.process_label(i)}: {detail}")
        if max_ulp is not None:
            ulps.append(max_ulp)
        labels += [label for label in used if label not in labels]
        if w is not None:
            for c, n in w["causes"].items():
                causes[c] = causes.get(c, 0) + n
            mismatches += [[f"{m[0]} of process {i}", *m[1:]] for m in w["mismatches"]]
            if w["meaningful_ulp"] is not None:
                meaningful.append(w["meaningful_ulp"])
    if why is not None:
        why.update(causes={c: causes[c] for c in CAUSES if c in causes}, mismatches=mismatches[:MAX_MISMATCHES_SHOWN],
                   meaningful_ulp=max(meaningful) if meaningful else None)
    return not problems, "; ".join(problems), (max(ulps) if ulps else None), labels


def _flushed_grid(case: Case) -> list | None:
    """Each process's expectations on the grid's inputs with subnormals
    read as zeros (input_flush.py's rule on a whole grid), or None."""
    from ..suites.causes import flush_inputs
    if case.kind != "value":
        return None
    per, any_flushed = [], False
    for vals in case.grid.inputs:
        arrays = [v.array() for v in vals]
        f = flush_inputs(arrays, [v.tensor_type.element_type for v in vals])
        any_flushed |= f is not None
        per.append(arrays if f is None else f)
    if not any_flushed:
        return None
    try:
        from ..oracle.grid import execute_on_grid
        from ..oracle.program import parse_program
        outs = execute_on_grid(parse_program(case.mlir), case.grid.shape, per)
    except Exception:   # Unspecified, processes that disagree: no input-flush verdict
        return None
    for o, e in zip(outs, case.grid.expected):
        if len(o) != len(e) or any(a.type != b.type for a, b in zip(o, e)):
            return None
    return outs


def _check_outputs(case: Case, outputs: list, why: dict | None = None, flushed_for=None):
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
                    flushed = flushed_for() if flushed_for is not None else flushed_expectations(case)
                if flushed is not None:
                    j = compare(exp, actual, flushed[k])
        except Exception as e:  # an output numpy cannot even read as the expected type
            j = Comparison(False, detail=f"could not compare ({type(e).__name__}: {e})")
        if j.max_ulp is not None and kind_of(exp).ulp_measures:   # a property's reference is no yardstick
            ulps.append(j.max_ulp)
        if j.meaningful_ulp is not None and kind_of(exp).ulp_measures:
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


def with_log(case: Case, log: list, ok: bool, detail: str, max_ulp, labels: list):
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
