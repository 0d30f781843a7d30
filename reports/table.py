"""Terminal table of a results document: one row per op, a totals row, the wall time.

Works on the plain dict that `results.json` holds (the runner's
`results_document`), so a saved file renders the same as a live run.
"""
from __future__ import annotations

import math

from ..suites.records import VERDICTS

COLUMNS = ("op", "cases", *VERDICTS, "max ULP")


def format_ulp(u) -> str:
    if u is None:
        return "-"
    if isinstance(u, str):
        return u
    if math.isinf(u):
        return "inf"
    if u == int(u) and abs(u) < 1e6:
        return str(int(u))
    return f"{u:.3g}"


def conformance_percent(counts: dict) -> str:
    counted = counts.get("counted", 0)
    if not counted:
        return "n/a"
    return f"{100.0 * counts.get('conformant', 0) / counted:.1f}%"


def rows(doc: dict) -> list[list[str]]:
    out = []
    for op, c in doc.get("per_op", {}).items():
        out.append([op, str(c.get("cases", 0)), *(str(c.get(v, 0)) for v in VERDICTS), format_ulp(c.get("max_ulp"))])
    return out


def render(doc: dict) -> str:
    """The per-op table, a totals row, and a summary line."""
    body = rows(doc)
    counts = doc.get("counts", {})
    ulps = [c.get("max_ulp") for c in doc.get("per_op", {}).values() if c.get("max_ulp") is not None]
    total = ["total", str(counts.get("cases", 0)), *(str(counts.get(v, 0)) for v in VERDICTS),
             format_ulp(max(ulps) if ulps else None)]
    table = [list(COLUMNS), *body, total]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]

    def line(r):
        return "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(r))

    rule = "-" * len(line(table[0]))
    out = [line(table[0]), rule, *(line(r) for r in body), rule, line(total)]
    seconds = doc.get("seconds")
    summary = (f"{doc.get('describe') or doc.get('backend')}: {counts.get('conformant', 0)} of "
               f"{counts.get('counted', 0)} counted cases conformant ({conformance_percent(counts)})")
    if counts.get("unsupported"):
        summary += f", {counts['unsupported']} unsupported (not counted)"
    if seconds is not None:
        summary += f"; wall time {seconds:.1f} s"
    out.append(summary)
    return "\n".join(out)
