"""The numbered constraints of an op, with their text, from a spec's markdown:
the seed (2023) and StableHLO v1.20.0 read alike, so the two can be compared
clause by clause (spec/v1_20_map.py states what each seed clause became).

What counts as a constraint is what spec/traceability.py counts as a label —
a bullet that *starts* with `(C<N>)` inside an op section's `#### Constraints`
subsection (an op section: a level-3 heading that is a lower-case mnemonic,
up to the next heading of level 3 or less; code blocks skipped) — so the
seed's labels read here are traceability's, one for one (tests hold them
equal).  What this module adds is the text:

* a constraint's text is its bullet line and every line that continues it
  (lines indented under it, the unlabelled bullets nested under it: the
  seed's all_gather C6 "`type(result) = type(operand)` except:" lists its
  exception as a nested bullet);
* v1.20 nests constraints under conditions ("* If the operation uses
  quantized tensors:" / "  * (C2) …", dot_general's "If `is_quantized(lhs)`:"
  two levels down): an unlabelled bullet that no labelled one encloses is
  such a condition, and each constraint keeps the conditions it stands under,
  outermost first, as `context`.  The seed has none; v1.20's guards are how
  most of its new clauses read ("if the operation uses quantized tensors"),
  and a seed clause that v1.20 guards by "non-quantized" keeps its meaning
  on every seed program (spec/v1_20_map.py says so per entry).

`normalise` is the comparison the map's mechanical `same`/`renumbered`
verdicts rest on: it removes what is formatting only (backticks, `$`, the
seed's LaTeX spellings of =, <, <=, ∈, the line breaks of the markdown), and
nothing that is wording.

Floor 1: text in, records out.  The seed's sections come from the copies
stored beside the spec (spec/seed/, traceability.stored_sections) so they
read in every clone; v1.20's text likewise from its copy beside them,
spec/seed/v1.20/spec.md (StableHLO v1.20.0's spec.md as ../shared/upstream-1.20
holds it, with its Apache-2.0 LICENSE: `V1_20_SPEC`), or a path the caller
gives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import traceability

V1_20_SPEC = Path(__file__).resolve().parent / "seed" / "v1.20" / "spec.md"

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_BULLET = re.compile(r"^(\s*)[*-]\s+(.*)$")
_LABELLED = re.compile(r"^(\s*)[*-]\s*\(C(\d+)\)\s*(.*)$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


@dataclass(frozen=True)
class Constraint:
    """One `(C<N>)` of an op's Constraints subsection."""

    op: str
    number: int
    text: str                      # the clause, its lines joined by single spaces, label removed
    context: tuple[str, ...] = ()  # the unlabelled bullets it is nested under, outermost first
    line: int = 0                  # 1-based line of its bullet in the text it was read from

    @property
    def label(self) -> str:
        return f"{self.op}_c{self.number}"

    @property
    def guarded(self) -> str:
        """The clause as it applies: its conditions, then its text."""
        return " ".join(self.context + (self.text,))


def _constraints_lines(section: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines of a section's `#### Constraints` subsection (up to the next heading), code blocks left out."""
    out, inside, in_code = [], False, False
    for n, line in section:
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        h = _HEADING.match(line)
        if h:
            inside = h.group(2).strip().lower() == "constraints" and len(h.group(1)) >= 4
            continue
        if inside:
            out.append((n, line))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _read_clauses(op: str, lines: list[tuple[int, str]]) -> list[Constraint]:
    """Walk one Constraints subsection: labelled bullets become constraints;
    lines indented under the current one continue it, and so does a
    paragraph line right after it at any indent (markdown's lazy
    continuation: the seed's fft C4 and pad C2, C4 wrap to column 0);
    unlabelled bullets outside any labelled one are conditions (kept by
    indentation); HTML comments (markdownlint switches) are not text."""
    out: list[Constraint] = []
    conditions: list[tuple[int, str]] = []     # (indent, text) of enclosing unlabelled bullets
    cur: dict | None = None                    # the labelled bullet being read
    blank = False                              # was the previous line blank?
    for n, line in lines:
        if not line.strip() or _COMMENT.match(line):
            blank = blank or not line.strip()
            continue
        ind = _indent(line)
        lab = _LABELLED.match(line)
        bullet = _BULLET.match(line)
        lazy = not blank and bullet is None    # markdown's lazy continuation: a paragraph line, any indent
        blank = False
        if cur is not None and not lab and (ind > cur["indent"] or lazy):
            cur["parts"].append(line.strip())  # continuation, or a bullet nested in the clause
            continue
        if cur is not None:
            out.append(_finish(op, cur))
            cur = None
        if lab is None and bullet is None:
            if conditions and ind > conditions[-1][0]:
                conditions[-1] = (conditions[-1][0], conditions[-1][1] + " " + line.strip())
            continue                           # prose between bullets: not a clause
        while conditions and conditions[-1][0] >= ind:
            conditions.pop()
        if lab is not None:
            cur = {"indent": ind, "number": int(lab.group(2)), "parts": [lab.group(3).strip()], "line": n,
                   "context": tuple(c for _, c in conditions)}
        else:
            conditions.append((ind, bullet.group(2).strip()))
    if cur is not None:
        out.append(_finish(op, cur))
    return out


def _finish(op: str, cur: dict) -> Constraint:
    return Constraint(op, cur["number"], " ".join(p for p in cur["parts"] if p), cur["context"], cur["line"])


def parse(text: str) -> dict[str, list[Constraint]]:
    """{op: its constraints in text order} for every op section of a spec's
    markdown (ops with no Constraints subsection map to [])."""
    ops: dict[str, list[tuple[int, str]]] = {}
    cur: list[tuple[int, str]] | None = None
    in_code = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code:
            h = _HEADING.match(line)
            if h and len(h.group(1)) <= 3:
                m = re.match(r"^###\s+([a-z][a-z0-9_]*)\s*$", line)
                cur = ops.setdefault(m.group(1), []) if m else None
                continue
        if cur is not None:
            cur.append((n, line))
    return {op: _read_clauses(op, _constraints_lines(lines)) for op, lines in ops.items()}


def seed_constraints() -> dict[str, list[Constraint]]:
    """The seed's constraints as the project traces them: seed 000's op
    sections with the RFC's (seed 004: tan, custom_call, the multi-operand
    all_gather/all_reduce/all_to_all) replacing those of the same name, read
    from the sections stored beside the spec (spec/seed/)."""
    out: dict[str, list[Constraint]] = {}
    for source in (traceability.SPEC_SEED, traceability.RFC_SEED):
        for section in traceability.stored_sections(source).values():
            out.update(parse(section))
    return out


def v1_20_constraints(path: Path | str | None = None) -> dict[str, list[Constraint]]:
    """v1.20's constraints of every op section of its spec.md (`V1_20_SPEC` by default)."""
    return parse(Path(path or V1_20_SPEC).read_text(encoding="utf-8"))


# Formatting only: the seed writes relations in LaTeX between `$`, v1.20 in code spans.
_LATEX = (
    (r"\\le(q)?\b", "<="), (r"\\ge(q)?\b", ">="), (r"\\lt\b", "<"), (r"\\gt\b", ">"), (r"\\ne(q)?\b", "!="),
    (r"\\in\b", "in"), (r"\\notin\b", "not in"), (r"\\times\b", "*"), (r"\\cdot\b", "*"), (r"\\forall\b", "for all"),
    (r"\\text\{([^}]*)\}", r"\1"), (r"\\_", "_"),
)


def normalise(text: str) -> str:
    """A clause's text with its formatting removed: code spans, math
    delimiters, LaTeX relation names (spelled as v1.20 spells them), case,
    whitespace and the final full stop; words are kept, so two clauses that
    normalise alike say the same thing in the same words."""
    t = text
    for pat, rep in _LATEX:
        t = re.sub(pat, rep, t)
    t = t.replace("`", "").replace("$", "").replace("*", " * ")
    t = re.sub(r"\s+", " ", t).strip().lower()
    t = re.sub(r"\s*([()\[\],=<>+])\s*", r"\1", t)
    return t.rstrip(" .")
