"""Self-contained HTML report of a results document (jinja2, inline CSS, no external assets).

Renders the plain dict of `results.json`, so `shlo-conform report` can
re-render a saved run.  Sections: summary, per-op table, op × dtype matrix,
the implementation-defined choices the backend made, the surveys
(unscored behaviour the spec leaves open) and the failures.
"""
from __future__ import annotations

from pathlib import Path

import jinja2

from ..spec.types import ELEMENT_TYPES
from ..suites.io import write_text_atomic
from ..suites.records import VERDICTS, conformant
from .table import conformance_percent, format_ulp

TEMPLATES = Path(__file__).parent / "templates"
MAX_FAILURES_SHOWN = 5000


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
    return {
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


def _spec_order(dtype: str):
    """Columns in the spec's order of element types (i1, si…, ui…, floats, complex)."""
    names = list(ELEMENT_TYPES)
    return (names.index(dtype), "") if dtype in names else (len(names), dtype)


def render(doc: dict) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["ulp"] = format_ulp
    env.filters["cellclass"] = _cell_class
    env.filters["pct"] = conformance_percent
    return env.get_template("report.html.j2").render(**context(doc))


def write(doc: dict, path: Path) -> None:
    """Written atomically: a failed write leaves the previous report whole."""
    write_text_atomic(Path(path), render(doc))
