"""The scoreboard: one self-contained page comparing configurations scored on one suite.

Input: each configuration's results document (`results.json`, what
`shlo-conform --backend=…` writes) and, for a configuration that could not
be scored, the one line saying why.  Sections:

* the summary — configuration × conformant/counted, unsupported, rejected,
  crashed, top causes, wall time and where it went (compile, run, harness);
* the per-op heat map (ops × configurations, conformance %), drawn with
  matplotlib and embedded as a PNG, since a picture shows which op is weak
  where faster than a table of 100 rows — with the same figures as a table
  below it for reading and searching;
* the verdict flips between every pair of configurations: cases counted by
  both whose conformance differs, each with the `explain` command that
  shows it.

Why pairs and not a baseline: the questions the page answers ("did the new
jaxlib change anything?", "is TensorFlow's XLA the same as JAX's?") are
each about two configurations, and any configuration may be the reference.
A flip is judged with `suites.records.conformant`, the rule every report
uses: a case unsupported on either side, or a survey, flips nothing.
"""
from __future__ import annotations

import base64
import html
import io
from itertools import combinations

from ..suites.records import conformant
from .table import conformance_percent, format_causes

MAX_FLIPS_LISTED = 30      # case ids listed per pair (the count is always complete)


def flips(a: dict, b: dict) -> list[tuple[str, bool, bool]]:
    """(case id, conformant on a, conformant on b) for every case both count
    and judge differently."""
    on_b = {v["id"]: conformant(v["kind"], v["verdict"]) for v in b.get("verdicts", [])}
    out = []
    for v in a.get("verdicts", []):
        ca, cb = conformant(v["kind"], v["verdict"]), on_b.get(v["id"])
        if ca is not None and cb is not None and ca != cb:
            out.append((v["id"], ca, cb))
    return sorted(out)


def _verdicts(doc: dict) -> dict:
    return {v["id"]: v["verdict"] for v in doc.get("verdicts", [])}


def heat_map_png(docs: dict[str, dict]) -> bytes | None:
    """Ops × configurations, the conformance % of each cell; grey where a
    configuration counted none of the op's cases.  None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:   # pragma: no cover - matplotlib is pinned in requirements.lock
        return None
    names = list(docs)
    ops = sorted({op for d in docs.values() for op in d.get("per_op", {})})
    if not ops or not names:
        return None
    grid = np.full((len(ops), len(names)), np.nan)
    for j, n in enumerate(names):
        for i, op in enumerate(ops):
            c = docs[n].get("per_op", {}).get(op)
            if c and c.get("counted"):
                grid[i, j] = 100.0 * c["conformant"] / c["counted"]
    fig, ax = plt.subplots(figsize=(2.4 + 1.1 * len(names), max(3.0, 1.2 + 0.19 * len(ops))), dpi=100)
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#dddddd")
    im = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap=cmap, vmin=0, vmax=100, interpolation="nearest")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="left", fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(ops)), ops, fontsize=7)
    for i in range(len(ops)):
        for j in range(len(names)):
            if not np.isnan(grid[i, j]) and grid[i, j] < 100:
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02, label="conformant %")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _timing(doc: dict) -> str:
    t = doc.get("timing") or {}
    wall = t.get("wall", doc.get("seconds"))
    if wall is None:
        return ""
    parts = [f"{wall:.0f} s"]
    if "compile" in t and "run" in t:
        parts.append(f"compile {t['compile']:.0f} s, run {t['run']:.0f} s (worker-seconds), "
                     f"harness {100 * t.get('harness_share', 0):.0f} %")
    return "; ".join(parts)


_CSS = """body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1300px}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:#a00}.note{color:#555}code{font-size:12px}img{max-width:100%}
td.impl{font-size:12px;color:#444;max-width:360px}td.wide{min-width:170px}"""


def render(docs: dict[str, dict], failed: dict[str, str], suite: str, selection: str) -> str:
    """The page (module docstring).  `docs`: configuration → results
    document; `failed`: configuration → why it could not be scored."""
    e = html.escape
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>StableHLO scoreboard</title>"
           f"<style>{_CSS}</style></head><body>",
           "<h1>StableHLO scoreboard</h1>",
           f"<p class=note>Suite <code>{e(suite)}</code>; selection: {e(selection)}. Each configuration is "
           "scored on the same cases by <code>shlo-conform</code>; a case counts when the configuration does "
           "not declare it unsupported and it is not a survey.</p>",
           "<h2>Summary</h2><table><tr><th>configuration</th><th>implementation</th><th>conformant / counted</th>"
           "<th>unsupported</th><th>rejected</th><th>crash</th><th>timeout</th><th>top causes</th>"
           "<th>wall</th></tr>"]
    for name, d in docs.items():
        c = d["counts"]
        out.append(f"<tr><td>{e(name)}</td><td class=impl>{e(d.get('describe', ''))}</td>"
                   f"<td class=n>{c['conformant']} / {c['counted']} ({conformance_percent(c)})</td>"
                   f"<td class=n>{c.get('unsupported', 0)}</td><td class=n>{c.get('rejected', 0)}</td>"
                   f"<td class=n>{c.get('crash', 0)}</td><td class=n>{c.get('timeout', 0)}</td>"
                   f"<td class=wide>{e(format_causes(c.get('causes', {}), 3))}</td>"
                   f"<td class=wide>{e(_timing(d))}</td></tr>")
    for name, why in failed.items():
        out.append(f"<tr><td>{e(name)}</td><td colspan=8 class=bad>not scored: {e(why)}</td></tr>")
    out.append("</table>")

    png = heat_map_png(docs)
    if png is not None:
        out.append("<h2>Per op</h2><img alt='ops × configurations, conformant %' src='data:image/png;base64,"
                   + base64.b64encode(png).decode() + "'>")
    ops = sorted({op for d in docs.values() for op in d.get("per_op", {})})
    out.append("<table><tr><th>op</th>" + "".join(f"<th>{e(n)}</th>" for n in docs) + "</tr>")
    for op in ops:
        cells = []
        for d in docs.values():
            c = d.get("per_op", {}).get(op)
            if not c or not c.get("counted"):
                cells.append("<td class=note>—</td>")
            else:
                cls = "n" if c["conformant"] == c["counted"] else "n bad"
                cells.append(f"<td class='{cls}'>{c['conformant']}/{c['counted']}</td>")
        out.append(f"<tr><td>{e(op)}</td>{''.join(cells)}</tr>")
    out.append("</table>")

    out.append("<h2>Verdict flips</h2><p class=note>Cases both configurations count whose conformance "
               "differs. <code>shlo-conform explain ID --backend=NAME</code> shows one.</p>")
    for a, b in combinations(docs, 2):
        fl = flips(docs[a], docs[b])
        va, vb = _verdicts(docs[a]), _verdicts(docs[b])
        out.append(f"<h3>{e(a)} vs {e(b)}: {len(fl)} flips</h3>")
        if not fl:
            continue
        out.append(f"<table><tr><th>case</th><th>{e(a)}</th><th>{e(b)}</th><th>see</th></tr>")
        for cid, ok_a, _ in fl[:MAX_FLIPS_LISTED]:
            worse = b if ok_a else a
            out.append(f"<tr><td><code>{e(cid)}</code></td><td>{e(va.get(cid, ''))}</td><td>{e(vb.get(cid, ''))}"
                       f"</td><td><code>shlo-conform explain {e(cid)} --backend={e(worse)}</code></td></tr>")
        if len(fl) > MAX_FLIPS_LISTED:
            out.append(f"<tr><td colspan=4 class=note>… {len(fl) - MAX_FLIPS_LISTED} more</td></tr>")
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)
