"""The accuracy survey as one self-contained HTML page (shlo_conform/survey/).

Plots are drawn with matplotlib (pinned in requirements.lock) on the Agg
backend and embedded as base64 PNG, so the page needs no network and no
files beside it: a heat map of the max ULP error, op × (type, backend);
one figure per op with the ULP error against the input (the first
operand, on a symmetric log axis) per type, one line per backend; and
the table of every measure, special-value disagreements apart.
"""
from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path

import numpy as np

CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#eee}td.l,th.l{text-align:left}tr.bad td{background:#fdd}tr.warn td{background:#ffe9c6}
img{max-width:100%}h2{margin-top:1.6em}.note{color:#555;font-size:13px}"""


def _png(fig) -> str:
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def heatmap(doc: dict) -> str | None:
    """Max ULP error, op × (type, backend); grey where not measured."""
    rows = doc["rows"]
    if not rows:
        return None
    plt = _plt()
    ops = list(dict.fromkeys(r["op"] for r in rows))
    cols = list(dict.fromkeys((r["dtype"], r["backend"]) for r in rows))
    grid = np.full((len(ops), len(cols)), np.nan)
    label = [["" for _ in cols] for _ in ops]
    for r in rows:
        i, j = ops.index(r["op"]), cols.index((r["dtype"], r["backend"]))
        if r["status"] == "measured":
            grid[i, j] = math.log2(1 + r["max_ulp"])
            label[i][j] = f"{r['max_ulp']:.3g}" + ("*" if r["special_disagreements"] else "")
        else:
            label[i][j] = r["status"][:5]
    fig, ax = plt.subplots(figsize=(2.0 + 0.9 * len(cols), 1.5 + 0.35 * len(ops)))
    cmap = plt.get_cmap("viridis").with_extremes(bad="#bbbbbb")
    im = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap=cmap, vmin=0)
    ax.set_xticks(range(len(cols)), [f"{d}\n{b}" for d, b in cols], fontsize=7)
    ax.set_yticks(range(len(ops)), ops, fontsize=8)
    for i in range(len(ops)):
        for j in range(len(cols)):
            if label[i][j]:
                ax.text(j, i, label[i][j], ha="center", va="center", fontsize=6,
                        color="white" if not np.isnan(grid[i, j]) and grid[i, j] < np.nanmax(grid) / 2 else "black")
    fig.colorbar(im, ax=ax, label="log2(1 + max ULP error)")
    ax.set_title("max ULP error (* : special-value disagreements too)", fontsize=9)
    return _png(fig)


def op_figure(doc: dict, op: str) -> str | None:
    """ULP error against the input, one panel per type, one line per backend."""
    rows = [r for r in doc["rows"] if r["op"] == op and r["status"] == "measured"]
    if not rows:
        return None
    plt = _plt()
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(3.2 * len(dtypes), 2.4), squeeze=False)
    for ax, d in zip(axes[0], dtypes):
        fin = [abs(v) for r in rows if r["dtype"] == d for v in r["profile"]["x"] if v != 0]
        lin = min(fin) if fin else 1.0
        top = 0.0
        for r in rows:
            if r["dtype"] != d:
                continue
            x, u = np.array(r["profile"]["x"]), np.array(r["profile"]["max_ulp"])
            ax.plot(_signed_log(x, lin), u, ".", ms=2, label=r["backend"])
            top = max(top, float(u.max()) if u.size else 0.0)
        span = math.log10(max(fin)) - math.log10(lin) if fin else 1.0
        ks = sorted({round(k) for k in np.linspace(0, span, 4)})
        ticks = [-(k + 1) for k in ks[::-1]] + [0] + [k + 1 for k in ks]
        ax.set_xticks(ticks, [("-" if t < 0 else "") + f"1e{round(math.log10(lin) + abs(t) - 1)}" if t else "0"
                              for t in ticks], fontsize=6, rotation=45)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylim(-0.3, max(2.0, top * 2))
        ax.set_title(f"{op} {d}", fontsize=8)
        ax.tick_params(axis="y", labelsize=6)
        ax.set_xlabel("input (first operand)", fontsize=7)
        ax.set_ylabel("ULP error (max per bin)", fontsize=7)
        ax.legend(fontsize=6)
    fig.tight_layout()
    return _png(fig)


def _signed_log(x: np.ndarray, lin: float) -> np.ndarray:
    """sign(x)·(1 + log10(|x| / lin)) outside (-lin, lin), 0 at 0: every
    binade of both signs gets room, however wide the format's range."""
    with np.errstate(divide="ignore"):   # logs first: max finite / min subnormal overflows binary64
        m = np.where(x == 0, 0.0, 1 + np.log10(np.maximum(np.abs(x), lin)) - math.log10(lin))
    return np.sign(x) * m


def _cell(v, fmt="{}") -> str:
    return f"<td>{html.escape(fmt.format(v))}</td>"


def _table(doc: dict, kinds) -> str:
    head = ("<tr><th class=l>op</th><th class=l>type</th><th class=l>backend</th><th>n</th><th>max ULP</th>"
            "<th>mean ULP</th><th>correctly rounded</th><th>within tolerance</th>"
            + "".join(f"<th>{k.replace('_', ' ')}</th>" for k in kinds)
            + "<th class=l>worst input → expected / actual</th><th>s</th></tr>")
    out = [head]
    for r in doc["rows"]:
        first = (f"<td class=l>{html.escape(r['op'])}</td><td class=l>{r['dtype']}</td>"
                 f"<td class=l>{html.escape(r['backend'])}</td>")
        if r["status"] != "measured":
            out.append(f"<tr class=warn>{first}<td colspan={6 + len(kinds)} class=l>{r['status']}: "
                       f"{html.escape(r.get('detail', ''))}</td><td>{r['seconds']}</td></tr>")
            continue
        w = r.get("worst")
        worst = (f"{', '.join(w['inputs'])} → {w['expected']} / {w['actual']}" if w else "")
        cls = " class=bad" if r["within_tolerance"] < 1 or r["special_disagreements"] else ""
        out.append(f"<tr{cls}>{first}" + _cell(r["n"]) + _cell(r["max_ulp"], "{:g}") + _cell(r["mean_ulp"], "{:.3g}")
                   + _cell(100 * r["correctly_rounded"], "{:.3f}%") + _cell(100 * r["within_tolerance"], "{:.3f}%")
                   + "".join(_cell(r["specials"].get(k, 0)) for k in kinds)
                   + f"<td class=l>{html.escape(worst)}</td>" + _cell(r["seconds"]) + "</tr>")
    return "<table>" + "".join(out) + "</table>"


def render(doc: dict) -> str:
    from ..suites.causes import SPECIAL_CAUSES
    parts = [f"<!doctype html><html><head><meta charset=utf-8><title>shlo-conform accuracy survey</title>"
             f"<style>{CSS}</style></head><body><h1>Accuracy survey</h1>"]
    describes = sorted({f"{r['backend']}: {r['describe']}" for r in doc["rows"] if r.get("describe")})
    parts.append("<p class=note>Backends: " + html.escape("; ".join(describes) or ", ".join(doc["backends"]))
                 + f". Seed {doc['seed']}, sample size {doc['size']} for sampled types; f8E4M3FN, f8E5M2, bf16, f16 "
                   "exhaustive for unary ops, 8-bit pairs exhaustive for binary ops, c64/c128 sampled over the plane "
                   "with the axes and branch cuts (complex: the worse component). ULP error against the oracle's "
                   "correctly rounded value; special-value disagreements, by the conformance suite's causes (subnormal "
                   "flushed: a subnormal result returned as zero, or the result of the op on the inputs with their "
                   "subnormals read as zero; NaN lost/invented; signed zero; infinity), are counted apart and not in "
                   "the ULP statistics. Timing: "
                 + html.escape(", ".join(f"{k} {v}" for k, v in doc["timing"].items())) + "</p>")
    hm = heatmap(doc)
    if hm:
        parts.append(f"<h2>Max ULP error</h2><img alt='heat map' src='{hm}'>")
    parts.append("<h2>Every op × type × backend</h2>" + _table(doc, SPECIAL_CAUSES))
    parts.append("<h2>ULP error against the input</h2>")
    for op in dict.fromkeys(r["op"] for r in doc["rows"]):
        fig = op_figure(doc, op)
        if fig:
            parts.append(f"<h3>{html.escape(op)}</h3><img alt='{html.escape(op)}' src='{fig}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(doc: dict, path: Path) -> None:
    Path(path).write_text(render(doc), encoding="utf-8")
