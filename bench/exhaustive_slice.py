"""One input range of exhaustive f32 surveys, side by side across backends.

    .venv/bin/python bench/exhaustive_slice.py --cache out/accuracy-cache --op sine \
        --range 0x40000000:0x50000000 --backends xla,interpreter,iree

`accuracy --exhaustive` keeps a summary per finished chunk in its
checkpoint (`<cache>/exhaustive/<op>/f32-<backend>.jsonl`,
shlo_conform/survey/streaming.py).  A backend too slow for all 2^32 inputs
here can be surveyed on a slice (`--input-range`); this reads the chunks of
each backend's checkpoint that lie inside the range — from whichever run
made them, whole-range or slice — and merges them with the survey's own
`streaming.row`, so the rows compare the same inputs.  A backend whose
checkpoint does not cover the range whole is said, not padded."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shlo_conform.survey import streaming  # noqa: E402


def _int(s: str) -> int:
    return int(s, 0)


def chunks_in(path: Path, lo: int, hi: int) -> list[dict]:
    """The checkpoint's chunk summaries inside [lo, hi), first by input."""
    out = {}
    for line in path.read_text().splitlines()[1:]:
        try:
            s = json.loads(line)
        except ValueError:
            continue
        if lo <= s.get("lo", -1) and s.get("hi", hi + 1) <= hi:
            out[s["lo"]] = s
    return [out[k] for k in sorted(out)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--op", required=True)
    ap.add_argument("--range", required=True, help="LO:HI bit patterns (0x… or decimal)")
    ap.add_argument("--backends", required=True)
    a = ap.parse_args(argv)
    lo, hi = (_int(x) for x in a.range.split(":"))
    rows = []
    for b in a.backends.split(","):
        path = streaming.checkpoint_path(Path(a.cache), a.op, "f32", b)
        if not path.exists():
            print(f"exhaustive_slice: no checkpoint {path}", file=sys.stderr)
            return 2
        parts = chunks_in(path, lo, hi)
        covered = sum(p["hi"] - p["lo"] for p in parts)
        r = streaming.row(a.op, "f32", b, parts, sum(sum(p.get("seconds", {}).values()) for p in parts))
        r["covered"] = covered
        rows.append(r)
    print(f"{a.op} f32, inputs [{lo:#010x}, {hi:#010x}) ({hi - lo:,} patterns)")
    print("| backend | covered | measured | correctly rounded | within tolerance | max ULP (first input) "
          "| special-value disagreements |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("status") != "measured":
            print(f"| {r['backend']} | {r['covered']:,} | {r.get('status')}: {r.get('detail', '')} | | | | |")
            continue
        w = r.get("worst") or {}
        print(f"| {r['backend']} | {r['covered']:,}{'' if r['covered'] == hi - lo else ' (incomplete)'} "
              f"| {r['measured']:,} | {r['correctly_rounded_count']:,} ({100 * r['correctly_rounded']:.4f} %) "
              f"| {r['within_tolerance_count']:,} ({100 * r['within_tolerance']:.4f} %) "
              f"| {r['max_ulp']:.0f} ({w.get('input_bits', '-')} = {(w.get('inputs') or ['-'])[0]}) "
              f"| {r['special_disagreements']:,} {json.dumps({k: v for k, v in r['specials'].items() if v})} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
