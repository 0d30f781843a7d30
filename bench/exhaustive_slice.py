"""One input range of exhaustive f32 surveys, side by side across backends.

    .venv/bin/python bench/exhaustive_slice.py --cache out/accuracy-cache --op sine \
        --range 0x40000000:0x50000000 --backends xla,interpreter,iree
    .venv/bin/python bench/exhaustive_slice.py --cache CACHE_A,CACHE_B --op sine \
        --range 0x0:0x100000000 --backends interpreter      # a whole range surveyed in slices

`accuracy --exhaustive` keeps a summary per finished chunk in its
checkpoint (`<cache>/exhaustive/<op>/f32-<backend>.jsonl`,
shlo_conform/survey/streaming.py).  A backend too slow for all 2^32 inputs
here can be surveyed on a slice (`--input-range`); this reads the chunks of
each backend's checkpoint that lie inside the range — from whichever run
made them, whole-range or slice — and merges them with the survey's own
`streaming.row`, so the rows compare the same inputs.  A backend whose
checkpoint does not cover the range whole is said, not padded.  Several
caches (comma-separated) join the slices of one backend surveyed in
separate runs (each slice's own checkpoint: a checkpoint holds one range);
a chunk found in two of them is taken once, and a second copy whose
figures differ is said.  Each row names the checkpoint keys it read (the
key holds the digest of the code that made the chunks)."""
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


def chunks_in(path: Path, lo: int, hi: int) -> tuple[str, list[dict]]:
    """The checkpoint's key and its chunk summaries inside [lo, hi), first by input."""
    lines = path.read_text().splitlines()
    try:
        key = json.loads(lines[0]).get("key", "?") if lines else "?"
    except ValueError:
        key = "?"
    out = {}
    for line in lines[1:]:
        try:
            s = json.loads(line)
        except ValueError:
            continue
        if lo <= s.get("lo", -1) and s.get("hi", hi + 1) <= hi:
            out[s["lo"]] = s
    return key, [out[k] for k in sorted(out)]


TIMING = ("seconds", "pid", "describe")   # what may differ between two runs of one chunk


def joined(paths: list[Path], lo: int, hi: int) -> tuple[list[str], list[dict], list[int]]:
    """(keys read, chunk summaries inside [lo, hi) from every checkpoint, one
    per chunk — the first found —, the chunks whose copies disagree)."""
    keys, by_lo, differ = [], {}, []
    for path in paths:
        key, parts = chunks_in(path, lo, hi)
        keys.append(key)
        for p in parts:
            first = by_lo.setdefault(p["lo"], p)
            if first is not p and {k: v for k, v in first.items() if k not in TIMING} != \
                    {k: v for k, v in p.items() if k not in TIMING}:
                differ.append(p["lo"])
    return keys, [by_lo[k] for k in sorted(by_lo)], differ


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True, help="the survey cache folder(s), comma-separated")
    ap.add_argument("--op", required=True)
    ap.add_argument("--range", required=True, help="LO:HI bit patterns (0x… or decimal)")
    ap.add_argument("--backends", required=True)
    a = ap.parse_args(argv)
    try:
        lo, hi = (_int(x) for x in a.range.split(":"))
    except ValueError:
        print(f"exhaustive_slice: --range {a.range!r}: want LO:HI, bit patterns (0x… or decimal)", file=sys.stderr)
        return 2
    rows, notes = [], []
    for b in a.backends.split(","):
        paths = [streaming.checkpoint_path(Path(c), a.op, "f32", b) for c in a.cache.split(",") if c]
        found = [p for p in paths if p.exists()]
        if not found:
            print(f"exhaustive_slice: no checkpoint {' or '.join(map(str, paths))}", file=sys.stderr)
            return 2
        keys, parts, differ = joined(found, lo, hi)
        notes.append(f"{b}: " + ", ".join(keys))
        if differ:
            notes.append(f"{b}: {len(differ)} chunk(s) with two copies that disagree, first {differ[0]:#x} "
                         f"(the first copy counted)")
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
    print("checkpoints read: " + "; ".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
