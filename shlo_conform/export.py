"""`shlo-conform export`: a suite in the StableHLO interpreter's own test format.

openxla/stablehlo tests its reference interpreter with files like
`stablehlo/tests/interpret/*.mlir`: a `// RUN: stablehlo-translate
--interpret -split-input-file %s` line, then chunks separated by `// -----`,
each a function without arguments that builds its inputs with
`stablehlo.constant`, runs the op and states the result with the `check`
dialect (`check.expect_eq_const`, `check.expect_close`, ...).  Writing our
cases that way hands a failure to upstream people in a form they already
run.  One chunk per case:

    // case add/f32/0123456789ab (value): special values
    func.func @add_f32_0123456789ab() {
      %a0 = stablehlo.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
      %r = func.call @add_f32_0123456789ab_main(%a0, ...) : (...) -> (tensor<2xf32>)
      check.expect_eq_const %r, dense<[...]> : tensor<2xf32>
      func.return
    }
    func.func private @add_f32_0123456789ab_main(...)   <- the case's @main, verbatim

The case's program is called, not inlined: its text stays the suite's
(generic form, which jaxlib and upstream parse alike), and the interpreter
evaluates `func.call` (this project's interpreter adapter calls programs
that way too); the callee is private, so a tool that runs every public
function runs only the test.

Literals are exact: integers in decimal, floats in decimal only where the
shortest decimal reads back to the same bits whether a parser rounds it
directly or through f64 (as we read MLIR's parser, it goes through f64), otherwise — and
always for NaN, infinities and subnormals — as the element's bit pattern
in hex (`0x7FC00001`), which MLIR reads as bits.

Which check per expectation (see `skip_reason` for what is not exported):
  exact  -> check.expect_eq_const (bits: signed zero and, where the op
            moves bits, NaN payloads count).  Where a NaN is expected and our
            rule accepts any NaN (`spec.kinds.exact.has_nan`), the result's NaNs at those
            places are first replaced by the expected NaN with
            stablehlo.compare/and/select, so the bitwise check states our rule.
  ulp    -> check.expect_close ..., max_ulp_difference = N, against the
            correctly rounded value as a constant
Invalid cases go to `invalid_<op>.mlir` for `stablehlo-opt
--verify-diagnostics`: the program with the diagnostics of the StableHLO
verifier inside jaxlib as `expected-error` lines (`invalid_chunk`).

The `check` dialect is not in jaxlib (no op, no symbol of it), so this
module cannot run the checks; `export_replay` evaluates each exported
function with jaxlib's interpreter and applies the check rules itself.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from .oracle.reading import holds_quantized_types
from .suites.kinds import kind_of
from .suites.records import Case
from .spec.expectation import Expectation
from .spec.types import I1 as _I1
from .spec.types import ElementType, TensorType, nan_mask, tensor_from_hex, to_bits

RUN_LINE = "// RUN: stablehlo-translate --interpret -split-input-file %s"
SEPARATOR = "// -----"
MANIFEST = "export.json"
README = "README.txt"
SKIPPED = "SKIPPED.txt"
FORMAT_VERSION = 1


# ---------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------

def _hex_bits(b: int, bits: int) -> str:
    return f"0x{b:0{bits // 4}X}"


def _decimal(b: int, et: ElementType) -> str | None:
    """The shortest decimal that reads back as exactly these bits both when
    a parser rounds it to the format directly and when it rounds through
    f64 first; None where no decimal is used (NaN, ±inf, subnormals)."""
    fmt = et.format
    if fmt.is_nan_bits(b) or fmt.is_inf_bits(b):
        return None
    mag = b & ~fmt.sign_mask
    if mag == 0 and fmt.has_zero:
        return "-0.0" if b & fmt.sign_mask else "0.0"
    if mag < (1 << fmt.mantissa_bits) or (mag == 0 and not fmt.has_zero):
        # subnormal, or f8E8M0FNU's smallest value (nothing below it): bits, whatever a parser does with tiny numbers
        return None
    exact = fmt.decode(b)
    lower = fmt.decode(b - 1)           # next toward zero (b is not ±0)
    # next away from zero: ±inf or NaN at the top, nothing past the all-ones magnitude (f4E2M1FN's ±6, FNUZ's -max)
    upper = fmt.decode(b + 1) if mag < fmt.magnitude_mask else None
    if not isinstance(upper, Fraction):
        upper = exact + (exact - lower)  # the spacing of the top binade, past which a parser overflows

    def reads_back(text: str) -> bool:
        with np.errstate(all="ignore"):
            if int(to_bits(np.array(float(text)).astype(et.numpy), et)) != b:
                return False
        d = Fraction(text)   # a parser that rounds the decimal directly must not land elsewhere (or on a tie)
        return d == exact or all(abs(d - exact) < abs(d - n) for n in (lower, upper))

    for digits in range(1, 18):
        text = _mlir_float(f"{float(exact):.{digits}g}")
        if reads_back(text):
            plain = _mlir_float(repr(float(text)))   # "10.0" rather than "1.0e+01" where it reads back as well
            return plain if len(plain) <= len(text) and reads_back(plain) else text
    return None


def _mlir_float(text: str) -> str:
    """MLIR's float literal needs a '.' in the mantissa ("1e+10" is not one)."""
    mant, e, exp = text.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + (e + exp if e else "")


def _element(b: int, et: ElementType) -> str:
    if et.is_bool:
        return "true" if b else "false"
    if et.is_integer:
        return str(et.bits_to_int(int(b)) if et.is_signed else int(b))
    return _decimal(int(b), et) or _hex_bits(int(b), et.bits)


def _elements(bits: np.ndarray, et: ElementType) -> list[str]:
    """One literal per element, row-major (complex: `(re, im)`)."""
    if et.is_complex:
        c = et.component
        rows = np.asarray(bits).reshape(-1, 2)
        return [f"({_element(int(r), c)}, {_element(int(i), c)})" for r, i in rows]
    return [_element(int(b), et) for b in np.asarray(bits).reshape(-1)]


def dense(bits: np.ndarray, t: TensorType) -> str:
    """`dense<…> : tensor<…>` holding exactly these bits (`to_bits` layout):
    a splat where every element is the same, nested lists otherwise."""
    et = t.element_type
    items = _elements(bits, et)
    if not items:
        return f"dense<> : {t.mlir}"
    if len(set(items)) == 1:
        return f"dense<{items[0]}> : {t.mlir}"

    def nest(flat: list[str], shape: tuple) -> str:
        if len(shape) == 1:
            return "[" + ", ".join(flat) + "]"
        step = len(flat) // shape[0]
        return "[" + ", ".join(nest(flat[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])) + "]"

    return f"dense<{nest(items, tuple(t.shape))}> : {t.mlir}"


def tensor_bits(hexstr: str, t: TensorType) -> np.ndarray:
    return to_bits(tensor_from_hex(hexstr, t), t.element_type)


# ---------------------------------------------------------------------------
# What is exported, and how
# ---------------------------------------------------------------------------

def skip_reason(case: Case) -> str | None:
    """Why this case cannot be written faithfully as check.expect_* lines
    (None: it can).  The check dialect states one value per element, exactly
    or within N ULP; anything else would be a weaker or a different test."""
    from .backends.interpreter import InterpreterBackend
    if holds_quantized_types(case.mlir):
        return f"the reference interpreter: {InterpreterBackend.quantized_unsupported}"
    if case.kind == "invalid":
        return "invalid case: no check op states a rejection (export writes it to invalid_<op>.mlir instead)"
    if case.kind == "survey":
        return "survey case: behaviour the spec leaves implementation-defined, reported and never scored"
    if case.host is not None:
        return "host data (infeed, outfeed, send, recv): the interpreter's test format has no host queues"
    for k, e in enumerate(case.expected):
        how, why = kind_of(e).check(e)
        if how is None:
            return f"output {k}: {why}"
        if e.impl_defined and not one_behaviour(e):
            labels = ", ".join(a.label for a in e.alternatives) or "any value"
            return (f"output {k}: implementation-defined alternatives ({labels}) at {len(e.impl_defined)} "
                    "element(s): a check op states one value")
    skip = next((s for s in InterpreterBackend.skips if s.covers(case.op, case.dtype)), None)
    if skip is not None:
        return f"the reference interpreter {skip.reason}"
    if not (case.mlir.startswith("func.func @main(") and case.mlir.count("func.func") == 1
            and case.mlir.count("@main") == 1):
        return "program is not one func.func @main (the exporter renames that function)"
    return None


def one_behaviour(e: Expectation) -> bool:
    """Do the declared alternatives all hold the primary value where the
    result is implementation-defined (e.g. integer overflow, whose one
    declared behaviour is two's complement wrap)?  Then our comparison
    accepts exactly the primary value, as a check op does."""
    flat = np.asarray(e.bits).reshape(e.type.num_elements, -1)
    where = list(e.impl_defined)
    return all(a.bits is not None and np.array_equal(np.asarray(a.bits).reshape(flat.shape)[where], flat[where])
               for a in e.alternatives)


def function_name(case_id: str) -> str:
    """The test function's symbol: the id with every other character as '_'
    (`add/f32/0123456789ab` -> `add_f32_0123456789ab`)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", case_id)


def check_plan(case: Case) -> list[tuple]:
    """One (output index, part, type, expected bits, how) per check line, in
    the order the chunk writes them.  `how`: "eq" (expect_eq_const, bits),
    "close" (expect_close within the tolerance) or "nan" (expect_eq_const
    after the result's NaNs where a NaN is expected are replaced by that
    expected NaN: our rule, any NaN is a NaN, said with well-known ops);
    `part` "real"/"imag" splits a complex result for "nan", "" otherwise."""
    plan = []
    for k, e in enumerate(case.expected):
        et = e.type.element_type
        how, _ = kind_of(e).check(e)   # the kind's own rule (suites/kinds): "eq", "close" or "nan"
        if how == "nan" and et.is_complex:
            comp = TensorType(e.type.shape, et.component)
            plan += [(k, "real", comp, e.bits[..., 0], "nan"), (k, "imag", comp, e.bits[..., 1], "nan")]
        else:
            plan.append((k, "", e.type, e.bits, how))
    return plan


def case_chunk(case: Case) -> str:
    """One `// -----` chunk: the test function and the case's program."""
    name = function_name(case.id)
    callee = f"{name}_main"
    note = " ".join(case.note.split())
    lines = [f"// case {case.id} ({case.kind})" + (f": {note}" if note else "")]
    lines.append(f"func.func @{name}() {{")
    args = []
    for k, v in enumerate(case.inputs):
        t = v.tensor_type
        lines.append(f"  %a{k} = stablehlo.constant {dense(tensor_bits(v.hex, t), t)}")
        args.append(f"%a{k}")
    n = len(case.expected)
    in_types = ", ".join(v.type for v in case.inputs)
    out_types = ", ".join(e.type.mlir for e in case.expected)
    lhs = "" if n == 0 else ("%r = " if n == 1 else f"%r:{n} = ")
    lines.append(f"  {lhs}func.call @{callee}({', '.join(args)}) : ({in_types}) -> ({out_types})")
    for k, e in enumerate(case.expected):
        if e.impl_defined:
            lines.append(f"  // output {k}: implementation-defined at {len(e.impl_defined)} element(s); the one "
                         f"behaviour declared: {', '.join(sorted({a.label for a in e.alternatives}))}")
    for j, (k, part, t, bits, how) in enumerate(check_plan(case)):
        res = "%r" if n == 1 else f"%r#{k}"
        tm = t.mlir
        if how == "eq":
            lines.append(f"  check.expect_eq_const {res}, {dense(bits, t)}")
        elif how == "close":
            lines.append(f"  %e{j} = stablehlo.constant {dense(bits, t)}")
            lines.append(f"  check.expect_close {res}, %e{j}, max_ulp_difference = "
                         f"{case.expected[k].tolerance_ulp} : {tm}, {tm}")
        else:  # "nan": any NaN where a NaN is expected, every other element bit for bit
            whole = case.expected[k].type.mlir
            lines.append(f"  // output {k}{' ' + part if part else ''}: any NaN matches where a NaN is expected "
                         "(the op does not move bits), other elements bit for bit")
            if part:
                lines.append(f'  %p{j} = "stablehlo.{part}"({res}) : ({whole}) -> {tm}')
                res = f"%p{j}"
            mask_t = TensorType(t.shape, _I1)
            mask = nan_mask(np.asarray(bits).astype(object), t.element_type.format).astype(np.uint8)
            lines.append(f"  %e{j} = stablehlo.constant {dense(bits, t)}")
            lines.append(f"  %m{j} = stablehlo.constant {dense(mask, mask_t)}")
            lines.append(f'  %n{j} = "stablehlo.compare"({res}, {res}) {{comparison_direction = '
                         f'#stablehlo<comparison_direction NE>}} : ({tm}, {tm}) -> {mask_t.mlir}')
            lines.append(f'  %b{j} = "stablehlo.and"(%m{j}, %n{j}) : ({mask_t.mlir}, {mask_t.mlir}) -> {mask_t.mlir}')
            lines.append(f'  %f{j} = "stablehlo.select"(%b{j}, %e{j}, {res}) : ({mask_t.mlir}, {tm}, {tm}) -> {tm}')
            lines.append(f"  check.expect_eq_const %f{j}, {dense(bits, t)}")
    lines.append("  func.return")
    lines.append("}")
    lines.append("func.func private @" + callee + case.mlir[len("func.func @main"):].rstrip("\n"))
    return "\n".join(lines) + "\n"


def op_file(cases: list[Case]) -> str:
    return RUN_LINE + "\n\n" + f"\n{SEPARATOR}\n\n".join(case_chunk(c) for c in cases)


# ---------------------------------------------------------------------------
# Invalid cases: files for stablehlo-opt --verify-diagnostics
# ---------------------------------------------------------------------------

INVALID_RUN_LINE = "// RUN: stablehlo-opt --verify-diagnostics -split-input-file %s"
_LOC = re.compile(r'^loc\("-":(\d+):\d+\)$')
_CONTEXT = []


def verifier_diagnostics(mlir: str) -> list[tuple[int, str, str]] | str:
    """(line, "error" | "note", message) of every diagnostic the StableHLO
    parser and verifier inside jaxlib emit for `mlir`, or why there is none
    to expect (it is accepted; a diagnostic without a line of the program;
    a message `{{...}}` cannot hold).  jaxlib's context adds a note "see
    current operation" to each error, which stablehlo-opt does not print
    under --verify-diagnostics: left out."""
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir
    if not _CONTEXT:
        _CONTEXT.append(jm.make_ir_context())
    with _CONTEXT[0], ir.Location.unknown():
        try:
            ir.Module.parse(mlir).operation.verify()
            return ("the StableHLO verifier in jaxlib accepts this invalid program (a disagreement with the "
                    "encoded spec: suites/verifier-findings.json), so no error can be expected")
        except ir.MLIRError as e:
            found = [("error", d) for d in e.error_diagnostics]
            found += [("note", n) for _, d in list(found) for n in d.notes
                      if not n.message.startswith("see current operation")]
    out = []
    for kind, d in found:
        m = _LOC.match(str(d.location))
        if not m:
            return f"a verifier diagnostic has no line of the program ({d.location})"
        msg = " ".join(d.message.split())
        if "{{" in msg or "}}" in msg or not msg:
            return "a verifier message cannot be written inside {{...}}"
        out.append((int(m.group(1)), kind, msg))
    return out


def invalid_chunk(case: Case) -> tuple[str | None, str]:
    """(chunk, "") for stablehlo-opt --verify-diagnostics: the program as the
    suite has it, each diagnostic of jaxlib's StableHLO verifier written as
    `// expected-error @+N {{message}}` right above its line; or (None, why)."""
    diags = verifier_diagnostics(case.mlir)
    if isinstance(diags, str):
        return None, diags
    lines = case.mlir.rstrip("\n").splitlines()
    above: dict[int, list[str]] = {}
    for line, kind, msg in diags:
        if not 1 <= line <= len(lines):
            return None, f"a verifier diagnostic points past the program (line {line})"
        above.setdefault(line, []).append(f"expected-{kind}")
        above[line][-1] += f" {{{{{msg}}}}}"
    note = " ".join(case.note.split())
    out = [f"// case {case.id} (invalid, violates {case.violates})" + (f": {note}" if note else "")]
    for n, text in enumerate(lines, 1):
        marks = above.get(n, [])
        indent = text[:len(text) - len(text.lstrip())]
        out += [f"{indent}// {m.split(' ', 1)[0]} @+{len(marks) - i} {m.split(' ', 1)[1]}" for i, m in enumerate(marks)]
        out.append(text)
    return "\n".join(out) + "\n", ""


def invalid_file(chunks: list[str]) -> str:
    return INVALID_RUN_LINE + "\n\n" + f"\n{SEPARATOR}\n\n".join(chunks)


# ---------------------------------------------------------------------------
# Reading our own files back (tests, replay)
# ---------------------------------------------------------------------------

_CHECK_EQ = re.compile(r"^(\s*)check\.expect_eq_const (%[\w#]+), (dense<.*>) : (tensor<.*>)$")
_CHECK_CLOSE = re.compile(r"^(\s*)check\.expect_close (%[\w#]+), (%\w+), max_ulp_difference = (\d+) : "
                          r"(tensor<.*>), (tensor<.*>)$")
_CASE = re.compile(r"^// case (\S+) ")


def chunks(text: str) -> list[tuple[str, str]]:
    """(case id, chunk text) of every chunk of an exported file."""
    out = []
    for part in text.split(f"\n{SEPARATOR}\n"):
        m = next((_CASE.match(line) for line in part.splitlines() if _CASE.match(line)), None)
        if m:
            out.append((m.group(1), part))
    return out


def generic_checks(chunk: str) -> str:
    """The chunk with its check lines in MLIR's generic form, which a parser
    that does not know the check dialect reads (jaxlib: unregistered
    dialects allowed).  Every other line is left as it is."""
    out = []
    for line in chunk.splitlines():
        m = _CHECK_EQ.match(line)
        if m:
            ind, x, lit, t = m.groups()
            line = f'{ind}"check.expect_eq_const"({x}) {{value = {lit} : {t}}} : ({t}) -> ()'
        m = _CHECK_CLOSE.match(line)
        if m:
            ind, x, y, ulp, t1, t2 = m.groups()
            line = f'{ind}"check.expect_close"({x}, {y}) {{max_ulp_difference = {ulp} : ui64}} : ({t1}, {t2}) -> ()'
        if line.lstrip().startswith("check."):
            raise ValueError(f"check line not in the exporter's form: {line.strip()}")
        out.append(line)
    return "\n".join(out) + "\n"


@dataclass
class Check:
    op: str            # "expect_eq_const" | "expect_close"
    actual: str        # SSA name of the result checked
    expected: str      # literal (eq_const) or SSA name of the constant (close)
    type: str
    max_ulp: int = 0


def checks_of(chunk: str) -> list[Check]:
    out = []
    for line in chunk.splitlines():
        m = _CHECK_EQ.match(line)
        if m:
            out.append(Check("expect_eq_const", m.group(2), m.group(3) + " : " + m.group(4), m.group(4)))
        m = _CHECK_CLOSE.match(line)
        if m:
            out.append(Check("expect_close", m.group(2), m.group(3), m.group(5), int(m.group(4))))
    return out


# ---------------------------------------------------------------------------
# Writing a folder
# ---------------------------------------------------------------------------

_OWN_FILE = re.compile(rf"(ops|invalid)_\w+\.mlir|{re.escape(README)}|{re.escape(SKIPPED)}")


class ExportRefused(ValueError):
    """--out holds something this command did not write."""


def _previous(out: Path) -> set[str]:
    """The files an earlier export wrote into `out` (empty for a new or empty
    folder).  A folder holding anything else is refused: export never
    deletes or overwrites what it did not write (suites.io's rule)."""
    from .suites.io import foreign_entries
    if not out.exists():
        return set()
    if not out.is_dir():
        raise ExportRefused(f"{out} is not a folder")
    if not any(out.iterdir()):
        return set()
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        files = set(manifest["files"])
        if not all(isinstance(f, str) and _OWN_FILE.fullmatch(f) for f in files):
            raise ValueError("a listed file is not one export writes")
    except (OSError, ValueError, KeyError, TypeError):
        raise ExportRefused(f"{out} is not empty and not a folder written by export; "
                            "export into a new or empty folder") from None
    ours = files | {MANIFEST}
    foreign = foreign_entries(out, ours)
    if foreign:
        raise ExportRefused(f"{out} holds {foreign[0]!r}, which export did not write; "
                            "export into a new or empty folder")
    return files


def check_out(out: Path) -> None:
    """Raise ExportRefused now if `export` would refuse `out`."""
    _previous(Path(out))


@dataclass
class Summary:
    exported: Counter = field(default_factory=Counter)      # op -> value cases exported (ops_<op>.mlir)
    invalid: Counter = field(default_factory=Counter)       # op -> invalid cases exported (invalid_<op>.mlir)
    skipped: list = field(default_factory=list)             # (case id, reason)
    files: list = field(default_factory=list)
    nan_notes: int = 0                                      # cases whose checks mask NaN payloads (check_plan)

    def reasons(self) -> Counter:
        return Counter(_reason_key(r) for _, r in self.skipped)


def _reason_key(reason: str) -> str:
    """A reason without its case-specific parts (output number, labels, counts)."""
    r = re.sub(r"^output \d+: ", "", reason)
    r = re.sub(r" \(.*?\) at \d+ element\(s\)", "", r)
    return r


def export(cases: list[Case], out: Path, suite: str, digest: str) -> Summary:
    """Write `ops_<op>.mlir` per op with exported cases, SKIPPED.txt, README.txt
    and export.json into `out` (new, empty, or an earlier export: its files
    are replaced, those this export does not write again are removed)."""
    from .suites.io import write_text_atomic
    out = Path(out)
    before = _previous(out)
    s = Summary()
    by_op: dict[str, list[Case]] = {}
    invalid: dict[str, list[str]] = {}
    for c in cases:
        if holds_quantized_types(c.mlir):   # jaxlib's bindings, which write and check these files, cannot read it
            s.skipped.append((c.id, skip_reason(c)))
            continue
        if c.kind == "invalid":
            chunk, why = invalid_chunk(c)
            if chunk is None:
                s.skipped.append((c.id, f"invalid case: {why}"))
            else:
                invalid.setdefault(c.op, []).append(chunk)
                s.invalid[c.op] += 1
            continue
        why = skip_reason(c)
        if why:
            s.skipped.append((c.id, why))
        else:
            by_op.setdefault(c.op, []).append(c)
            s.exported[c.op] += 1
            s.nan_notes += any(kind_of(e).check(e)[0] == "nan" for e in c.expected)
    out.mkdir(parents=True, exist_ok=True)
    for op in sorted(by_op):
        name = f"ops_{op}.mlir"
        write_text_atomic(out / name, op_file(by_op[op]))
        s.files.append(name)
    for op in sorted(invalid):
        name = f"invalid_{op}.mlir"
        write_text_atomic(out / name, invalid_file(invalid[op]))
        s.files.append(name)
    s.skipped.sort()
    write_text_atomic(out / SKIPPED, _skipped_text(s))
    write_text_atomic(out / README, _readme(s, suite))
    s.files += [SKIPPED, README]
    manifest = {"exporter": "shlo-conform export", "format_version": FORMAT_VERSION, "suite": suite,
                "suite_digest": digest, "files": sorted(s.files),
                "exported": dict(sorted(s.exported.items())), "invalid": dict(sorted(s.invalid.items())),
                "skipped": len(s.skipped),
                "skipped_by_reason": dict(sorted(s.reasons().items()))}
    write_text_atomic(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    for old in sorted(before - set(s.files)):
        (out / old).unlink(missing_ok=True)   # ours (listed by the earlier export), not written this time
    return s


def _skipped_text(s: Summary) -> str:
    lines = [f"# {len(s.skipped)} cases not exported: they cannot be stated faithfully as check.expect_* lines "
             "(value cases) or expected-error lines (invalid cases).",
             "# by reason:"]
    lines += [f"#   {n:6d}  {r}" for r, n in sorted(s.reasons().items(), key=lambda kv: (-kv[1], kv[0]))]
    lines += ["# case id<TAB>reason"]
    lines += [f"{i}\t{r}" for i, r in s.skipped]
    return "\n".join(lines) + "\n"


def _readme(s: Summary, suite: str) -> str:
    total, invalid = sum(s.exported.values()), sum(s.invalid.values())
    return f"""shlo-conform export of suite {suite}: {total} value cases in {len(s.exported)} files ops_<op>.mlir,
{invalid} invalid cases in {len(s.invalid)} files invalid_<op>.mlir, {len(s.skipped)} skipped
(SKIPPED.txt lists them with the reason).

Format: the StableHLO reference interpreter's own tests (openxla/stablehlo,
stablehlo/tests/interpret/*.mlir).  One file per op, one `// -----` chunk per
case: a function @<op>_<type>_<hash> (the case id with '/' as '_') that
builds the inputs as stablehlo.constant, calls the case's program (its @main,
renamed <name>_main and private) and checks each output:
  check.expect_eq_const   exact expectation (bits; see NaN below)
  check.expect_close      ULP expectation: max_ulp_difference = the tolerance,
                          against the correctly rounded value
Float literals are decimal where that reads back exactly, else the bit
pattern in hex (0x7FC00001): NaN payloads, infinities and subnormals are exact.

Run (a build of openxla/stablehlo; the check dialect is registered there):
  stablehlo-translate --interpret -split-input-file ops_add.mlir
  for f in ops_*.mlir; do stablehlo-translate --interpret -split-input-file "$f" || echo "FAILED: $f"; done
or copy the files into stablehlo/tests/interpret/ and run them with lit
(the RUN line is the first line of every file):
  llvm-lit -v stablehlo/tests/interpret/ops_add.mlir
A failing check is reported for its chunk; the chunk's "// case" line names
the case, which `shlo-conform explain <case id>` shows decoded.  A chunk that
aborts the interpreter (it does on compare of complex numbers, some
convolutions, integer remainder by zero) ends the run of its whole file.

Invalid cases (programs the spec rejects) are in invalid_<op>.mlir, for
  stablehlo-opt --verify-diagnostics -split-input-file invalid_add.mlir
each program as the suite has it, with the diagnostics of the StableHLO
verifier in jaxlib (stablehlo 1.17) as `// expected-error @+N {{{{message}}}}`
lines; another StableHLO version may word its messages otherwise.  Cases
that verifier accepts are in SKIPPED.txt (they are findings, not tests).

Where the check ops differ from shlo-conform's own comparison:
  - NaN: shlo-conform accepts any NaN where a NaN is expected unless the op
    moves bits (bitcast_convert, data movement: then the payload counts).
    check.expect_eq_const compares bits, so in the {s.nan_notes} exported
    cases that expect a NaN of no fixed payload, the result's NaNs at those
    places are replaced by the expected NaN first (stablehlo.compare NE, and,
    select: commented in the chunk); these ops run on the implementation
    under test too.
  - ULP: shlo-conform counts -0 and +0 as 0 ULP apart, two NaNs as 0 and a
    NaN against a number as infinitely far; expect_close's own counting of
    those cases may differ.
"""
