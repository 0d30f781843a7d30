"""Traceability: every `(C<N>)` the seed text defines, op by op, against the
`<op>_c<N>` functions of `spec/ops`.

Each op's section of the seeds — the StableHLO spec (seed 000) and the RFC
(seed 004), whose proposed sections (`tan`, `custom_call`, the
multi-operand `all_gather`, `all_reduce`, `all_to_all`) supersede seed
000's sections of the same name — is stored beside the spec
(`spec/seed/000/<op>.md`, `spec/seed/004/<op>.md`, `write_stored`), so
traceability and the Examples run in every clone; callers may also pass
the seed texts themselves, and tests hold the stored sections equal to
them wherever they are present.  (Line numbers of stored sections count
from the section's heading.)

What counts as an op section: a level-3 heading that is a lower-case
mnemonic (`### abs`), up to the next level-2 or level-3 heading.  What counts
as a constraint label: a bullet that *starts* with `(C<N>)` inside that
section's `#### Constraints` subsection (`* (C6)`type(...)` too).  Ranges in
the Inputs/Outputs tables (`(C2-C4)`) only refer to these and are not labels.

Every op of the text is listed — encoded or not — so the report never hides
what is missing.  `ok` is about the encoded ops only: each of their seed
labels has a function, and no function claims a label the seed lacks —
except the constraints an op declares from a later spec (`OpSpec.later`:
v1.20's batching clauses of gather and scatter), which are listed with
their clause as *later*, and must not reuse a seed label.
Floor 1: text in, the op registry for comparison; nothing above spec.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SPEC_SEED = "000_5ae4585f266cf299.txt"
RFC_SEED = "004_6ddba65058e4afdd.txt"

_OP_HEADING = re.compile(r"^###\s+([a-z][a-z0-9_]*)\s*$")
_HEADING = re.compile(r"^(#{1,4})\s+(.*?)\s*$")
_LABEL = re.compile(r"^\s*[*-]\s*\(C(\d+)\)")
_FUNC_LABEL = re.compile(r"^(.*)_c(\d+)$")


@dataclass
class SeedOp:
    """One op section of a seed text: where it is and the labels it defines."""

    name: str
    source: str          # file name of the seed the section was read from
    line: int            # 1-based line of its heading
    labels: list[int] = field(default_factory=list)   # N of each (C<N>), in text order
    has_constraints_section: bool = False


def parse_seed(text: str, source: str = "") -> dict[str, SeedOp]:
    """Op sections of one seed text, by mnemonic."""
    ops: dict[str, SeedOp] = {}
    cur: SeedOp | None = None
    in_constraints = False
    in_code = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        h = _HEADING.match(line)
        if h:
            level = len(h.group(1))
            if level <= 3:
                m = _OP_HEADING.match(line)
                cur = SeedOp(m.group(1), source, n) if m else None
                if cur is not None:
                    ops[cur.name] = cur
                in_constraints = False
            elif cur is not None:
                in_constraints = h.group(2).strip().lower() == "constraints"
                cur.has_constraints_section |= in_constraints
            continue
        if cur is not None and in_constraints:
            m = _LABEL.match(line)
            if m and int(m.group(1)) not in cur.labels:
                cur.labels.append(int(m.group(1)))
    return ops


def sections(text: str) -> dict[str, str]:
    """Each op section of a seed text, verbatim: from its `### <op>` heading
    to the next heading of level 3 or less (code blocks skipped when
    looking for headings)."""
    out: dict[str, list[str]] = {}
    cur: list[str] | None = None
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code:
            h = _HEADING.match(line)
            if h and len(h.group(1)) <= 3:
                m = _OP_HEADING.match(line)
                cur = out.setdefault(m.group(1), []) if m else None
        if cur is not None:
            cur.append(line)
    return {op: "\n".join(lines).rstrip() + "\n" for op, lines in out.items()}


# The seeds' op sections, stored beside the spec (spec/seed/<seed>/<op>.md)
# so that traceability and the Examples run in every clone; when the seed
# texts are present, tests hold the stored sections equal to them.
STORED = Path(__file__).resolve().parent / "seed"


def stored_sections(source: str) -> dict[str, str]:
    """{op: section text} as stored for seed file `source`."""
    d = STORED / source.split("_")[0]
    return {f.stem: f.read_text(encoding="utf-8") for f in sorted(d.glob("*.md"))}


def write_stored(seeds_dir: Path) -> list[Path]:
    """Store every op section of the seed texts in `seeds_dir` (seed 000 and
    the RFC, 004) as spec/seed/<seed>/<op>.md; the files written."""
    written = []
    for name in (SPEC_SEED, RFC_SEED):
        path = Path(seeds_dir) / name
        if not path.is_file():
            continue
        d = STORED / name.split("_")[0]
        d.mkdir(parents=True, exist_ok=True)
        for op, text in sections(path.read_text(encoding="utf-8")).items():
            f = d / f"{op}.md"
            f.write_text(text, encoding="utf-8")
            written.append(f)
    return written


def read_stored() -> dict[str, SeedOp]:
    """What `read_seeds` reads, from the stored sections (the RFC's
    replacing seed 000's of the same name)."""
    ops: dict[str, SeedOp] = {}
    for source in (SPEC_SEED, RFC_SEED):
        for text in stored_sections(source).values():
            ops.update(parse_seed(text, source))
    return ops


def read_seeds(spec_path: Path, rfc_path: Path | None = None) -> dict[str, SeedOp]:
    """Seed 000's op sections, with the RFC's sections replacing same-named ones."""
    ops = parse_seed(Path(spec_path).read_text(encoding="utf-8"), Path(spec_path).name)
    if rfc_path is not None:
        ops.update(parse_seed(Path(rfc_path).read_text(encoding="utf-8"), Path(rfc_path).name))
    return ops


def seed_paths(seeds_dir: Path) -> tuple[Path, Path | None]:
    """The two seed files in a seeds folder (FileNotFoundError without seed 000)."""
    d = Path(seeds_dir)
    spec = d / SPEC_SEED
    if not spec.is_file():
        raise FileNotFoundError(f"{d} has no {SPEC_SEED}")
    rfc = d / RFC_SEED
    return spec, (rfc if rfc.is_file() else None)


@dataclass
class OpTrace:
    name: str
    source: str | None           # seed file, None when the op is encoded but in no seed
    encoded: bool
    seed_labels: list[str]       # "<op>_c<N>" for every (C<N>) of the seed section
    present: list[str]           # of those, the ones spec/ops defines
    missing: list[str]           # of those, the ones spec/ops lacks (encoded ops only)
    extra: list[str]             # functions of spec/ops with no (C<N>) in the seed (nor declared later)
    later: dict = field(default_factory=dict)   # label -> clause of a later spec ("v1.20 C10"), OpSpec.later

    @property
    def status(self) -> str:
        if not self.encoded:
            return "not encoded"
        if self.source is None:
            return "NOT IN SEEDS"
        if self.missing or self.extra:
            return "INCOMPLETE"
        return "ok"


@dataclass
class Trace:
    ops: list[OpTrace]

    @property
    def ok(self) -> bool:
        return all(t.status in ("ok", "not encoded") for t in self.ops)

    def to_json(self) -> dict:
        return {"ok": self.ok, "ops": [
            {"op": t.name, "source": t.source, "encoded": t.encoded, "status": t.status,
             "seed_labels": t.seed_labels, "present": t.present, "missing": t.missing, "extra": t.extra,
             "later": dict(t.later)}
            for t in self.ops]}


def trace(seed_ops: dict[str, SeedOp], encoded: dict | None = None) -> Trace:
    """Compare seed sections with encoded ops ({mnemonic: OpSpec}; default: spec.ops.OPS)."""
    if encoded is None:
        from .ops import OPS as encoded
    out = []
    for name in sorted(set(seed_ops) | set(encoded)):
        sec = seed_ops.get(name)
        labels = [f"{name}_c{n}" for n in (sec.labels if sec else [])]
        spec = encoded.get(name)
        have = list(spec.labels) if spec is not None else []
        declared = dict(getattr(spec, "later", ()) or ())
        later = {l: declared[l] for l in have if l in declared and l not in labels}
        present = [l for l in labels if l in have]
        missing = [l for l in labels if l not in have] if spec is not None else []
        # a later clause reusing a seed label is an error: it stays among the extras
        extra = [l for l in have if l not in labels and l not in later]
        out.append(OpTrace(name, sec.source if sec else None, spec is not None, labels, present, missing, extra,
                           later))
    return Trace(out)


def render(tr: Trace) -> str:
    """One line per op: status, labels traced / defined, what is missing or extra."""
    lines = ["traceability (seed (C<N>) -> spec/ops <op>_c<N>):"]
    for t in tr.ops:
        nums = lambda ls: ",".join("C" + l.rsplit("_c", 1)[1] for l in ls)  # noqa: E731
        where = t.source or "-"
        if t.encoded:
            detail = f"{len(t.present)}/{len(t.seed_labels)} traced"
            if t.seed_labels and not t.missing:
                detail += f" ({nums(t.present)})"
            if t.missing:
                detail += f"; MISSING {nums(t.missing)}"
            if t.later:
                detail += "; later: " + ", ".join(f"{l} = {c}" for l, c in t.later.items())
            if t.extra:
                detail += f"; NOT IN SEED {', '.join(t.extra)}"
        else:
            detail = f"{len(t.seed_labels)} constraints ({nums(t.seed_labels) or 'none'})"
        lines.append(f"  {t.name:28s} {t.status:12s} {detail}  [{where}]")
    enc = [t for t in tr.ops if t.encoded]
    n_labels = sum(len(t.seed_labels) for t in enc)
    n_present = sum(len(t.present) for t in enc)
    not_enc = [t for t in tr.ops if not t.encoded]
    lines.append(f"  {len(enc)} ops encoded, {len(not_enc)} seed ops not yet encoded "
                 f"({sum(len(t.seed_labels) for t in not_enc)} constraints); "
                 f"encoded ops: {n_present}/{n_labels} seed constraints traced, "
                 f"{sum(len(t.later) for t in enc)} from a later spec, "
                 f"{sum(len(t.extra) for t in enc)} functions without a seed label"
                 f" — {'ok' if tr.ok else 'INCOMPLETE'}")
    return "\n".join(lines) + "\n"
