"""Self-contained HTML report of a results document (jinja2, inline CSS, no external assets).

Renders the plain dict of `results.json`, so `shlo-conform report` can
re-render a saved run.  Sections: diagnoses, summary, per-op table (with
failure causes), op × dtype matrix (with causes), the implementation-defined
choices the backend made, the surveys (unscored behaviour the spec leaves
open), the failures, and for each failing case its explain text in a
`<details id="case-ID">` the failures table links to: program, inputs and
expected values (read from the suite the document names, when it can be
found — the report still renders without it), the verdict's detail and its
first mismatches (index, expected, actual, ULP, cause).  Long programs and
arrays are cut, saying so, so the file stays a sane size at the full suite.
"""
from __future__ import annotations

from pathlib import Path

import jinja2
import numpy as np

from ..spec.types import ELEMENT_TYPES
from ..suites import show
from ..suites.io import load_cases, suite_path, write_text_atomic
from ..suites.kinds import describe
from ..suites.records import VERDICTS, conformant
from .table import SHORT_CAUSE, conformance_percent, format_causes, format_ulp

TEMPLATES = Path(__file__).parent / "templates"
MAX_FAILURES_SHOWN = 5000
MAX_EXPLAINED = 3000        # failing cases with an explain section
MAX_PROGRAM_LINES = 30
MAX_PROGRAM_CHARS = 3000
MAX_VALUES = 12             # elements shown per array


def _cut_program(mlir: str) -> str:
    lines = mlir.rstrip().splitlines()
    text = "\n".join(lines[:MAX_PROGRAM_LINES])[:MAX_PROGRAM_CHARS]
    if len(text) < len(mlir.rstrip()):
        text += f"\n… (cut: {len(lines)} lines, {len(mlir)} characters in all)"
    return text


def _values(a) -> str:
    """The first MAX_VALUES elements of an array, flat, saying how many there
    are; in suites/show.py's notation (NaN sign and payload, the digits that
    tell the type's values apart), as `explain` prints them."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    head = show.array(flat[:MAX_VALUES], threshold=MAX_VALUES + 1, linewidth=10 ** 6)
    text = head[:-1] + (", …]" if flat.size > MAX_VALUES else "]")
    cut = f" (first {MAX_VALUES} of {flat.size})" if flat.size > MAX_VALUES else ""
    return f"shape {tuple(a.shape)}: {text}{cut}"


def _explained(doc: dict, failures: list) -> tuple[dict, str]:
    """Per failing case id, what the suite holds about it (program, inputs,
    expected; cut), and a note when the suite could not be read."""
    ids = {v["id"] for v in failures}
    if not ids:
        return {}, ""
    try:
        cases = load_cases(suite_path(doc.get("suite", "")), {v["op"] for v in failures}, None)
    except Exception as e:   # the suite moved, or is another version: render without it
        return {}, (f"the suite {doc.get('suite')!r} could not be read ({type(e).__name__}), "
                    "so programs and inputs are not shown")
    out = {}
    by_id = {v["id"]: v for v in failures}
    for c in cases:
        if c.id not in ids:
            continue
        try:
            arrays = [np.asarray(v.array()).reshape(-1) for v in c.inputs]
            n = c.expected[0].type.num_elements if len(c.expected) == 1 and c.grid is None else None
            at = {}   # element-wise shapes: the inputs at each mismatching element
            if arrays and all(a.size == n for a in arrays):
                for m in by_id[c.id].get("mismatches", []):
                    if isinstance(m[0], int) and 0 <= m[0] < n:
                        at[m[0]] = ", ".join(f"%arg{k} = {show.element(a[m[0]])}" for k, a in enumerate(arrays))
            per_process = c.grid is not None and c.grid.inputs   # a grid: every process's values, labelled
            sets = [(f"{c.grid.process_label(i)}: ", ins, exps) for i, (ins, exps)
                    in enumerate(zip(c.grid.inputs, c.grid.expected))] if per_process else [("", c.inputs, c.expected)]
            out[c.id] = {"at": at,
                "program": _cut_program(c.mlir), "note": c.note,
                "inputs": [f"{who}%arg{k}: {v.type} {_values(v.array())}"
                           for who, ins, _ in sets for k, v in enumerate(ins)],
                "expected": [f"{who}#{k}: {e.type.mlir} ({describe(e)}) {_values(e.array())}"
                             for who, _, exps in sets for k, e in enumerate(exps)]}
        except Exception:   # a value this renderer cannot show: the verdict's part still is
            continue
    missing = len(ids - out.keys())
    return out, (f"{missing} failing case{'s' if missing != 1 else ''} not found in the suite "
                 f"{doc.get('suite')!r} (another version?)" if missing else "")


def _cell_class(c: dict) -> str:
    if not c.get("counted"):
        return "na"
    if c.get("conformant") == c.get("counted"):
        return "good"
    if c.get("conformant", 0) == 0:
        return "bad"
    return "mixed"


def context(doc: dict) -> dict:
    per_op = doc.get("per_op", {})
    dtypes = sorted({d for c in per_op.values() for d in c.get("dtypes", {})}, key=_spec_order)
    failures = [v for v in doc.get("verdicts", []) if conformant(v.get("kind", "value"), v.get("verdict")) is False]
    unsupported = [v for v in doc.get("verdicts", []) if v.get("verdict") == "unsupported"]
    impl = {op: c["impl_defined"] for op, c in per_op.items() if c.get("impl_defined")}
    surveys = [v for v in doc.get("verdicts", []) if v.get("kind") == "survey"]
    explained, suite_note = _explained(doc, failures[:MAX_EXPLAINED])
    return {
        "diagnoses": doc.get("diagnoses", []),
        "explained": explained,
        "explained_shown": min(len(failures), MAX_EXPLAINED),
        "suite_note": suite_note,
        "doc": doc,
        "counts": doc.get("counts", {}),
        "percent": conformance_percent(doc.get("counts", {})),
        "verdicts": VERDICTS,
        "per_op": per_op,
        "dtypes": dtypes,
        "failures": failures[:MAX_FAILURES_SHOWN],
        "failures_total": len(failures),
        "unsupported_total": len(unsupported),
        "impl": impl,
        "surveys": surveys,
    }


def _ulp_title(u) -> str:
    """Hover text where a ULP figure prints as "wrong": the figure itself."""
    return f"{u:.3g} ULP: past 2^20 the value is simply wrong, not inaccurate" if format_ulp(u) == "wrong" else ""


def _spec_order(dtype: str):
    """Columns in the spec's order of element types (i1, si…, ui…, floats, complex)."""
    names = list(ELEMENT_TYPES)
    return (names.index(dtype), "") if dtype in names else (len(names), dtype)


def render(doc: dict) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["ulp"] = format_ulp
    env.filters["ulptitle"] = _ulp_title
    env.filters["cellclass"] = _cell_class
    env.filters["pct"] = conformance_percent
    env.filters["causes"] = format_causes
    env.filters["fullcauses"] = lambda c: ", ".join(f"{k} {n}" for k, n in (c or {}).items())
    env.filters["shortcause"] = lambda c: SHORT_CAUSE.get(c, c)
    return env.get_template("report.html.j2").render(**context(doc))


def write(doc: dict, path: Path) -> None:
    """Written atomically: a failed write leaves the previous report whole."""
    write_text_atomic(Path(path), render(doc))
