"""Terminal table of a results document: one row per op, a totals row, the wall time, the diagnoses.

The max ULP is the results' (over elements where ULP means something:
suites/causes.py), printed "wrong" past `WRONG_ULP` (`format_ulp`); the
causes column counts failing cases per cause.

Works on the plain dict that `results.json` holds (the runner's
`results_document`), so a saved file renders the same as a live run.
"""
from __future__ import annotations

import math

from ..suites.causes import WRONG_ULP
from ..suites.records import VERDICTS

COLUMNS = ("op", "cases", *VERDICTS, "max ULP", "causes")

# Short names of the failure causes (suites/causes.py) for the terminal's causes column.
SHORT_CAUSE = {"subnormal flushed": "subnormal", "wrong order": "order", "wrong choice": "choice",
               "NaN lost": "NaN lost", "NaN invented": "NaN new", "NaN payload": "payload", "signed zero": "±0",
               "infinity": "inf", "out of tolerance": "ulp", "integer wrap": "wrap", "other": "other"}
TOP_CAUSES = 3


def format_causes(causes: dict | None, top: int = TOP_CAUSES) -> str:
    """The most frequent causes with their counts of failing cases, compact:
    "subnormal 10, NaN lost 4, +2" (the number of further causes); "-" when none."""
    if not causes:
        return "-"
    ranked = sorted(causes.items(), key=lambda kv: -kv[1])   # stable: ties keep the causes' order
    text = ", ".join(f"{SHORT_CAUSE.get(c, c)} {n}" for c, n in ranked[:top])
    return text + (f", +{len(ranked) - top}" if len(ranked) > top else "")


def format_ulp(u) -> str:
    """A ULP figure for people: "wrong" past `WRONG_ULP` (2^20: the value is
    simply wrong, a sign or a component, and its distance says nothing about
    accuracy; the JSON keeps the figure), "inf" for a NaN against a number
    (old results files' raw maximum), "-" when there is none."""
    if u is None:
        return "-"
    if isinstance(u, str):
        return u
    if math.isinf(u):
        return "inf"
    if u > WRONG_ULP:
        return "wrong"
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
        out.append([op, str(c.get("cases", 0)), *(str(c.get(v, 0)) for v in VERDICTS), format_ulp(c.get("max_ulp")),
                    format_causes(c.get("causes"))])
    return out


def render(doc: dict) -> str:
    """The per-op table, a totals row, and a summary line."""
    body = rows(doc)
    counts = doc.get("counts", {})
    ulps = [c.get("max_ulp") for c in doc.get("per_op", {}).values() if c.get("max_ulp") is not None]
    total = ["total", str(counts.get("cases", 0)), *(str(counts.get(v, 0)) for v in VERDICTS),
             format_ulp(max(ulps) if ulps else None), format_causes(counts.get("causes"))]
    table = [list(COLUMNS), *body, total]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]

    def line(r):
        return "  ".join(cell.ljust(widths[i]) if i in (0, len(r) - 1) else cell.rjust(widths[i])
                         for i, cell in enumerate(r)).rstrip()

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
    out += [f"diagnosis: {d}" for d in doc.get("diagnoses", [])]
    out += [f"backend note: {n}" for n in doc.get("backend_notes", [])]
    return "\n".join(out)
