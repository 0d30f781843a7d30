"""`shlo-conform run PROGRAM`: one program on several backends, each held against the oracle.

The tool an implementer reaches for when a model misbehaves: any program a
user has (pretty or generic text, bytecode, a `jax.export` portable
artifact), inputs from an `.npz` file or drawn from a seed, and for every
backend and every output the element-wise comparison with what the encoded
spec expects — the same `Expectation` and the same comparison a suite case
gets, so `run` and scoring never disagree.  Backends run isolated in worker
processes (a crash or a hang is a verdict, not the end of the run); the
oracle's expectations are computed here.

What is printed per output: the verdict, the largest ULP distance from the
correctly rounded (or exact) value, the first mismatching flat indices with
both values, and the mismatches that are special-value differences (NaN
lost or invented, ±inf, signed zero, subnormals flushed) counted apart from
inaccuracy.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .generators import values
from .oracle.reading import MLIR_BYTECODE_MAGIC
from .spec.expectation import Expectation
from .spec.types import TensorType, from_bits, nan_mask, to_bits
from .suites.compare import compare
from .suites.records import Case, TensorValue

ORACLE = "oracle"


class InputError(ValueError):
    """The program or the inputs cannot be used (one line for exit 2)."""


@dataclass
class OutputReport:
    index: int
    type: TensorType
    ok: bool
    detail: str
    max_ulp: float | None
    specials: Counter = field(default_factory=Counter)


@dataclass
class BackendReport:
    name: str
    verdict: str
    detail: str = ""
    describe: str = ""
    outputs: list = field(default_factory=list)   # OutputReport per output, when there is an expectation
    raw: list | None = None                      # the backend's arrays

    @property
    def agrees(self) -> bool:
        return self.verdict == "pass"


# --------------------------------------------------------------------------
# Program and inputs
# --------------------------------------------------------------------------

def read_program(path: str) -> tuple[str | bytes, str, str]:
    """(what the oracle reads, the text backends compile, a description of the form)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read program {path}: {e.strerror or e}") from None
    if data.startswith(MLIR_BYTECODE_MAGIC):
        from .oracle.reading import SyntaxRejected, from_bytecode
        try:
            text = from_bytecode(data)
        except SyntaxRejected as e:
            raise InputError(f"program {path}: {e}") from None
        form = "portable artifact" if b"StableHLO" in data[:32] else "MLIR bytecode"
        return data, text, form
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise InputError(f"program {path} is neither MLIR text nor MLIR bytecode") from None
    return text, text, "text"


def signature(text: str) -> tuple[list[TensorType], list]:
    """@main's argument and result types, read with jaxlib's parser (any syntax)."""
    from .oracle.reading import SyntaxRejected, VerifierRejected, main_types
    try:
        return main_types(text)
    except (SyntaxRejected, VerifierRejected) as e:
        raise InputError(f"cannot read @main's signature: {e}") from None


def random_inputs(types: list[TensorType], seed: int, special_fraction: float) -> list[np.ndarray]:
    """Inputs drawn from a seed: random values of each type (specials at the given share)."""
    rng = np.random.default_rng(seed)
    return [values.fill(t.element_type, tuple(t.shape), rng, special_fraction=special_fraction) for t in types]


def npz_inputs(path: str, types: list[TensorType]) -> list[np.ndarray]:
    """Inputs from an .npz file: `arg0`, `arg1`, … or numpy's `arr_0`, `arr_1`, …,
    each of @main's shape and element type exactly — or unsigned integers of
    the type's storage width, read as its raw bits (how bf16/f8 travel
    through numpy's file format)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = dict(z.items())
    except (OSError, ValueError) as e:
        raise InputError(f"--inputs {path}: not a readable .npz file ({e})") from None
    out = []
    for i, t in enumerate(types):
        a = arrays.get(f"arg{i}", arrays.get(f"arr_{i}"))
        if a is None:
            raise InputError(f"--inputs {path}: no array arg{i} (or arr_{i}) for argument {i} of type {t.mlir}")
        et = t.element_type
        if tuple(a.shape) != tuple(t.shape) + ((2,) if et.is_complex and a.dtype.kind == "u" else ()):
            raise InputError(f"--inputs {path}: arg{i} has shape {a.shape}, @main takes {t.mlir}")
        if a.dtype == et.numpy:
            out.append(a)
        elif a.dtype == et.bits_dtype:
            out.append(from_bits(a, et))
        else:
            raise InputError(f"--inputs {path}: arg{i} is {a.dtype}, @main takes {t.mlir} "
                             f"(give {np.dtype(et.numpy).name} values or {et.bits_dtype.name} raw bits)")
    extra = sorted(set(arrays) - {f"arg{i}" for i in range(len(types))} - {f"arr_{i}" for i in range(len(types))})
    if extra:
        raise InputError(f"--inputs {path}: arrays {', '.join(extra)} match no argument of @main "
                         f"({len(types)} arguments)")
    return out


# --------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------

def oracle_expectations(source: str | bytes, inputs: list) -> tuple[list[Expectation] | None, str]:
    """The oracle's expectations, or None and why it has none."""
    from .generators.expect import ProgramRejected, Unspecified, expected_outputs
    try:
        return expected_outputs(source, inputs), ""
    except ProgramRejected as e:
        return None, f"the encoded spec rejects the program: {e}"
    except Unspecified as e:
        return None, f"the spec states no result for these inputs: {e}"


SPECIAL_KINDS = ("NaN expected, a number returned", "a number expected, NaN returned", "infinity differs",
                 "signed zero differs", "subnormal flushed to zero")


def special_differences(exp: Expectation, actual: np.ndarray) -> Counter:
    """Mismatching elements whose difference is one of special values, by kind
    (floats, per component for complex); the rest are inaccuracy."""
    et = exp.type.element_type
    c = et.component if et.is_complex else et
    if not c.is_float:
        return Counter()
    e = np.asarray(exp.bits).reshape(-1).astype(object)
    try:
        a = to_bits(np.asarray(actual).astype(et.numpy), et).reshape(-1).astype(object)
    except (TypeError, ValueError):
        return Counter()
    f = c.format
    en, an = nan_mask(e, f).astype(bool), nan_mask(a, f).astype(bool)
    mag_e, mag_a = e & ~f.sign_mask, a & ~f.sign_mask
    inf_e = (mag_e == f.inf_bits(False)) if f.has_inf else np.zeros(e.shape, bool)
    inf_a = (mag_a == f.inf_bits(False)) if f.has_inf else np.zeros(a.shape, bool)
    sub_e = (mag_e != 0) & (mag_e < (1 << f.mantissa_bits))
    out = Counter()
    out[SPECIAL_KINDS[0]] = int(np.sum(en & ~an))
    out[SPECIAL_KINDS[1]] = int(np.sum(~en & an))
    out[SPECIAL_KINDS[2]] = int(np.sum((inf_e | inf_a) & (e != a) & ~en & ~an))
    out[SPECIAL_KINDS[3]] = int(np.sum((mag_e == 0) & (mag_a == 0) & (e != a)))
    out[SPECIAL_KINDS[4]] = int(np.sum(sub_e & (mag_a == 0)))
    return +out


def judge_outputs(expected: list[Expectation], outputs: list) -> list[OutputReport]:
    reports = []
    for k, (exp, actual) in enumerate(zip(expected, outputs)):
        cmp = compare(exp, actual)
        specials = special_differences(exp, actual) if not cmp.ok else Counter()
        reports.append(OutputReport(k, exp.type, cmp.ok, cmp.detail, cmp.max_ulp, specials))
    return reports


def run_backends(text: str, inputs: list, types: list, backends: list[str], expected: list | None,
                 timeout: float) -> list[BackendReport]:
    """Each backend in its own worker, with the runner's isolation and verdicts."""
    from .runner import Runner
    tvs = [TensorValue.of(a, t) for a, t in zip(inputs, types)]
    case = Case(id="run/program/0", op="program", dtype=types[0].element_type.name if types else "none",
                kind="value", mlir=text, inputs=tvs, expected=expected or [])
    out = []
    for name in backends:
        if name == ORACLE:
            continue
        runner = Runner(name, compile_timeout=2 * timeout, run_timeout=timeout, keep_outputs=True)
        [v] = runner.run([case])
        outs = (runner.outputs or {}).get(case.id)
        ran = expected is None and outs is not None   # no expectation to hold the outputs to
        rep = BackendReport(name, "ran" if ran else v.verdict, "" if ran else v.detail, runner.describe or name)
        if outs is not None and expected is not None and len(outs) == len(expected):
            rep.outputs = judge_outputs(expected, outs)
        rep.raw = outs
        out.append(rep)
    return out


def render(path: str, form: str, types: list, how: str, expected: list | None, why_none: str,
           reports: list[BackendReport], oracle_asked: bool) -> str:
    lines = [f"program  {path} ({form}); @main({', '.join(t.mlir for t in types)})", f"inputs   {how}"]
    if expected is None:
        lines.append(f"oracle   no expectation: {why_none}")
    else:
        lines.append(f"oracle   {len(expected)} output(s)")
        for k, e in enumerate(expected):
            rule = e.kind + (f" within {e.tolerance_ulp} ulp" if e.kind == "ulp" else "")
            lines.append(f"  #{k} {e.type.mlir}: {rule}" + (f" ({e.why})" if e.why else ""))
            if oracle_asked:
                lines.append("      " + _short(e.array()))
    for r in reports:
        lines.append(f"{r.name}   {r.describe}" if r.describe and r.describe != r.name else r.name)
        if not r.outputs:
            lines.append(f"  {r.verdict.upper()}" + (f": {r.detail}" if r.detail else "")
                         + (" (no verdict without the oracle's expectation)" if r.verdict == "ran" else ""))
            if r.raw is not None and expected is None:
                lines += [f"  #{k} " + _short(o) for k, o in enumerate(r.raw)]
            continue
        for o in r.outputs:
            ulp = f"; max {o.max_ulp:g} ulp from the oracle's value" if o.max_ulp is not None else ""
            head = f"  #{o.index} {o.type.mlir}: {'agrees' if o.ok else 'DISAGREES'}{ulp}"
            lines.append(head)
            if not o.ok:
                lines.append(f"      {o.detail}")
                for kind, n in o.specials.items():
                    lines.append(f"      special values: {kind} x{n}")
    return "\n".join(lines)


def _short(a) -> str:
    with np.printoptions(threshold=20, edgeitems=3, linewidth=120):
        return " ".join(np.array2string(np.asarray(a), separator=", ").split())


def run_command(path: str, backends: list[str], *, inputs_npz: str | None = None, seed: int | None = None,
                special_fraction: float = 0.0, timeout: float = 10.0) -> tuple[str, int]:
    """The whole `run` command: (what to print, exit status).  Exit 1 when a
    backend disagrees with the oracle's expectation (or crashes, hangs or
    refuses a program the spec accepts); 2 when the oracle has no
    expectation to hold them to; raises InputError for unusable input."""
    source, text, form = read_program(path)
    types, _ = signature(text)
    if any(not isinstance(t, TensorType) for t in types):
        raise InputError("@main takes a non-tensor argument; run gives tensors only")
    if inputs_npz is not None:
        inputs, how = npz_inputs(inputs_npz, types), f"from {inputs_npz}"
    else:
        seed = 0 if seed is None else seed
        inputs = random_inputs(types, seed, special_fraction)
        how = f"random, seed {seed}" + (f", {special_fraction:g} special values" if special_fraction else "")
    expected, why_none = oracle_expectations(source, inputs)
    reports = run_backends(text, inputs, types, backends, expected, timeout)
    out = render(path, form, types, how, expected, why_none, reports, ORACLE in backends)
    if expected is None:
        return out, 2
    return out, 0 if all(r.agrees for r in reports) else 1
