"""Verifier agreement: the encoded spec against jaxlib's StableHLO verifier.

Every case program is judged twice, independently:

  spec      `oracle.program.parse_program`: the program under the encoded
            spec's own rules (Inputs/Outputs tables, `<op>_c<N>`, inferred
            result types) — the official verifier never judges for it;
  verifier  jaxlib's parser + verifier with the StableHLO dialect registered
            (`ir.Module.parse(text)`, `module.operation.verify()`), as the
            interpreter backend compiles; a program with quantized types,
            which jaxlib's bindings cannot read (no quant dialect), by
            StableHLO's verifier as IREE's bindings carry it
            (`oracle.reading.read_quantized`), as `run` reads it.

agree               both accept or both reject;
spec stricter       the spec rejects (naming the constraint), the verifier accepts;
verifier stricter   the spec accepts, the verifier rejects.

A disagreement is *explained* when the reviewed findings file
(`suites/verifier-findings.json`) has an entry with the same op, kind and
constraint (and, if the entry lists `cases`, that case).  The file is data,
reviewed like code: each entry says what the spec says, what the verifier
does, and why.  Separately, a case whose spec verdict contradicts its own
record (`kind`, `violates`) is a defect of the suite: always a failure.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .spec.dsl import constraint_named

# Package data beside suites/core (pyproject.toml), so an installed wheel finds it too.
FINDINGS = Path(__file__).resolve().parent / "suites" / "verifier-findings.json"
KINDS = ("spec stricter", "verifier stricter")
_REQUIRED = ("op", "kind", "constraint", "spec", "verifier", "why")


@dataclass
class Verdict:
    case_id: str
    op: str
    record_kind: str            # the case's own kind: value | invalid
    record_violates: str | None
    spec_ok: bool
    spec_constraint: str | None  # the violated constraint the spec names (None: accepted, or no label)
    spec_message: str
    verifier_ok: bool
    verifier_message: str

    @property
    def agreement(self) -> str:
        if self.spec_ok == self.verifier_ok:
            return "agree"
        return "spec stricter" if self.verifier_ok else "verifier stricter"

    @property
    def record_consistent(self) -> bool:
        """The spec's verdict is the one the case was generated with."""
        if self.record_kind in ("value", "survey"):
            return self.spec_ok
        if self.spec_ok:
            return False
        if self.record_violates is None:
            return True
        return self.spec_constraint == constraint_named(self.record_violates)


@dataclass
class Finding:
    op: str
    kind: str
    constraint: str | None
    spec: str
    verifier: str
    why: str
    cases: list | None = None

    def explains(self, v: Verdict) -> bool:
        return (self.op == v.op and self.kind == v.agreement and self.constraint == v.spec_constraint
                and (self.cases is None or v.case_id in self.cases))


def load_findings(path: Path = FINDINGS) -> list[Finding]:
    """The reviewed findings; ValueError naming the entry when one is malformed."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    entries = doc.get("findings", []) if isinstance(doc, dict) else doc
    out = []
    for i, e in enumerate(entries):
        missing = [k for k in _REQUIRED if k not in e]
        if missing:
            raise ValueError(f"{path}: finding {i} lacks {', '.join(missing)}")
        if e["kind"] not in KINDS:
            raise ValueError(f"{path}: finding {i}: kind must be one of {KINDS}, not {e['kind']!r}")
        if not str(e["why"]).strip():
            raise ValueError(f"{path}: finding {i} has no explanation")
        out.append(Finding(e["op"], e["kind"], e["constraint"], e["spec"], e["verifier"], e["why"], e.get("cases")))
    return out


def _first_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]


def both_verdicts(cases) -> list[Verdict]:
    """Spec and verifier verdicts for every case (programs are parsed, never run)."""
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir

    from .oracle.program import ProgramRejected, parse_program
    from .oracle.reading import holds_quantized_types, read_quantized
    out = []
    spec_cache: dict = {}
    with jm.make_ir_context(), ir.Location.unknown():
        for c in cases:
            if c.mlir not in spec_cache:
                try:
                    parse_program(c.mlir)
                    spec_cache[c.mlir] = (True, None, "")
                except ProgramRejected as e:
                    spec_cache[c.mlir] = (False, e.constraint, _first_line(e))
            spec_ok, constraint, smsg = spec_cache[c.mlir]
            try:
                if holds_quantized_types(c.mlir):
                    read_quantized(c.mlir)
                else:
                    ir.Module.parse(c.mlir).operation.verify()
                vok, vmsg = True, ""
            except Exception as e:  # MLIRError, VerifierRejected: a parse or verify diagnostic is a rejection
                vok, vmsg = False, _first_line(e)
            out.append(Verdict(c.id, c.op, c.kind, c.violates, spec_ok, constraint, smsg, vok, vmsg))
    return out


@dataclass
class Agreement:
    verdicts: list
    findings: list
    rows: dict = field(default_factory=dict)   # op -> {"agree": n, "spec stricter": n, "verifier stricter": n}
    explained: list = field(default_factory=list)    # (Verdict, Finding)
    unexplained: list = field(default_factory=list)  # Verdict
    inconsistent: list = field(default_factory=list)  # Verdict whose spec verdict contradicts its record
    unused: list = field(default_factory=list)        # Findings that explain nothing in this pass

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.inconsistent

    def to_json(self) -> dict:
        def v(x: Verdict) -> dict:
            return {"case": x.case_id, "op": x.op, "record": x.record_kind, "violates": x.record_violates,
                    "agreement": x.agreement, "spec_constraint": x.spec_constraint, "spec": x.spec_message,
                    "verifier": x.verifier_message}
        return {"ok": self.ok, "cases": len(self.verdicts), "per_op": self.rows,
                "explained": [{**v(x), "finding": f.why} for x, f in self.explained],
                "unexplained": [v(x) for x in self.unexplained],
                "inconsistent_with_record": [v(x) for x in self.inconsistent],
                "unused_findings": [{"op": f.op, "kind": f.kind, "constraint": f.constraint} for f in self.unused]}


def compare(cases, findings: list[Finding]) -> Agreement:
    verdicts = both_verdicts(cases)
    ag = Agreement(verdicts, findings)
    used = set()
    for v in verdicts:
        row = ag.rows.setdefault(v.op, {"cases": 0, "agree": 0, "spec stricter": 0, "verifier stricter": 0})
        row["cases"] += 1
        row[v.agreement] += 1
        if not v.record_consistent:
            ag.inconsistent.append(v)
        if v.agreement == "agree":
            continue
        f = next((f for f in findings if f.explains(v)), None)
        if f is None:
            ag.unexplained.append(v)
        else:
            used.add(id(f))
            ag.explained.append((v, f))
    ag.unused = [f for f in findings if id(f) not in used]
    return ag


def render(ag: Agreement) -> str:
    lines = ["verifier agreement (encoded spec vs jaxlib StableHLO parser+verifier):",
             f"  {'op':28s} {'cases':>6s} {'agree':>6s} {'spec stricter':>14s} {'verifier stricter':>18s}"]
    tot = {"cases": 0, "agree": 0, "spec stricter": 0, "verifier stricter": 0}
    for op in sorted(ag.rows):
        r = ag.rows[op]
        for k in tot:
            tot[k] += r[k]
        lines.append(f"  {op:28s} {r['cases']:6d} {r['agree']:6d} {r['spec stricter']:14d} {r['verifier stricter']:18d}")
    lines.append(f"  {'total':28s} {tot['cases']:6d} {tot['agree']:6d} {tot['spec stricter']:14d} {tot['verifier stricter']:18d}")
    for v, f in ag.explained:
        lines.append(f"  explained  {v.agreement}: {v.case_id} ({v.spec_constraint or '-'}) — {f.why.split('. ')[0]}")
    for v in ag.unexplained:
        what = (f"spec rejects ({v.spec_constraint or v.spec_message}), verifier accepts" if v.agreement == "spec stricter"
                else f"spec accepts, verifier rejects: {v.verifier_message}")
        lines.append(f"  UNEXPLAINED {v.agreement}: {v.case_id}: {what}")
    for v in ag.inconsistent:
        lines.append(f"  SUITE INCONSISTENT {v.case_id}: recorded {v.record_kind}"
                     f"{' violating ' + v.record_violates if v.record_violates else ''}, "
                     f"spec says {'accept' if v.spec_ok else 'reject (' + str(v.spec_constraint) + ')'}")
    for f in ag.unused:
        lines.append(f"  note: finding {f.op}/{f.constraint} ({f.kind}) explains no case in this pass")
    lines.append(f"  {len(ag.explained)} disagreements explained by {len(ag.findings) - len(ag.unused)} findings, "
                 f"{len(ag.unexplained)} unexplained, {len(ag.inconsistent)} cases inconsistent with their record"
                 f" — {'ok' if ag.ok else 'FAILED'}")
    return "\n".join(lines) + "\n"


# Independent constraints that no program *text* can break: the instance exists
# (check-spec has its witness), but StableHLO's syntax cannot say it.  Reviewed
# like verifier-findings.json; coverage counts them as explained, not missing.
UNSPELLABLE = {
    "scatter_c5": "StableHLO splits scatter's operand list into equal halves of inputs and updates "
                  "(SameVariadicOperandSize), so N inputs != N updates has no spelling; N = 0 breaks "
                  "C2, C4 ... too (docs/spec-findings.md)",
}


def negative_coverage(labels: dict, cases) -> dict:
    """{op: [independent labels with no invalid case naming them]} over
    `cases`, leaving out the reviewed `UNSPELLABLE` ones."""
    named = {(c.op, c.violates) for c in cases if c.kind == "invalid"}
    missing = {op: [l for l in ls if (op, l) not in named and l not in UNSPELLABLE] for op, ls in labels.items()}
    return {op: ls for op, ls in missing.items() if ls}
