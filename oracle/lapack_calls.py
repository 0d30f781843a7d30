"""The reading of LAPACK calls that no StableHLO op computes — what every
routine's reading shares (oracle/custom_calls.py reads the calls and holds
the first routines; oracle/lapack_gees.py, lapack_gehrd.py, lapack_geqp3.py,
lapack_gtsv.py and lapack_sytrd.py one routine each; jaxlib's own kernel
beside them, oracle/tridiagonal_perturbed.py, `register_target`): the call's FFI
configuration and layouts, the checks of its types (`Misfit` naming what
does not fit), the registry a routine joins (`register`, `Family`), and what
a routine's run is given (`Call`)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..spec.expectation import Expectation
from ..spec.types import E_F32, E_F64, TensorType, element_type, to_bits

C64, C128 = element_type("complex<f32>"), element_type("complex<f64>")
TYPES = {"s": E_F32, "d": E_F64, "c": C64, "z": C128}   # LAPACK's prefix -> the element type it takes


class Misfit(Exception):
    """The call names a target read here but does not fit its definition."""


def config(texts: dict) -> dict:
    """{key: character} of the FFI dictionary `{uplo = 76 : ui8, …}` (and
    {key: int} of its integers, `{low = 1 : i32}`): the typed-FFI
    `backend_config`, else JAX's legacy `mhlo.backend_config`."""
    for key in ("backend_config", "mhlo.backend_config"):
        text = texts.get(key, "").strip()
        if text.startswith("{"):
            pairs = re.findall(r"(\w+)\s*=\s*(-?\d+)\s*:\s*(ui8|i32|i64)", text)
            return {k: chr(int(v)) if t == "ui8" else int(v) for k, v, t in pairs}
    raise Misfit("no FFI configuration (a dictionary in backend_config or mhlo.backend_config)")


def layouts(text: str | None) -> list | None:
    if text is None:
        return None
    return [tuple(int(x) for x in body.replace("[", "").replace("]", "").split(",") if x.strip())
            for body in re.findall(r"dense<([^>]*)>", text)]


def char(cfg: dict, key: str, allowed: str) -> str:
    c = cfg.get(key)
    if not isinstance(c, str) or c not in allowed:
        raise Misfit(f"{key} must be one of {', '.join(repr(x) for x in allowed)} (got {c!r})")
    return c


REAL = {"s": E_F32, "d": E_F64, "c": E_F32, "z": E_F64}
REAL_OF = {et.name: REAL[p] for p, et in TYPES.items()}


@dataclass(frozen=True)
class Family:
    """One LAPACK routine no StableHLO op computes, read as what it
    computes: `read(et, cfg, texts, ins, outs)` checks the call against the
    routine's definition (Misfit where it does not fit) and gives its
    configuration, (key, character) pairs; `run(call)` gives one expectation
    per result (`Call`).  `names` spells the routine per element-type prefix
    (xORGQR is xUNGQR for complex); `finite_only`: a NaN or ±inf in the
    matrix makes every output any value (LAPACK's results are then
    unspecified) — xORGQR computes on given reflectors, whatever they are."""

    read: Callable
    run: Callable
    names: Callable = None
    finite_only: bool = True
    title: str | None = None   # what the call is read as, where not LAPACK's routine ("LAPACK xGETRF")


FAMILY: dict[str, Family] = {}   # routine -> its reading; a new routine is one `register` call
FAMILIES: dict[str, tuple] = {}   # target name -> (routine, element type; None: the operands' — one target, every type)


def register(routine: str, family: Family, shown: str | None = None) -> None:
    """Add `routine` (the lower-case LAPACK name, xGETRF -> "getrf") and its
    targets `lapack_{s,d,c,z}<name>_ffi` to the registries."""
    FAMILY[routine] = family
    for p, et in TYPES.items():
        FAMILIES[f"lapack_{p}{family.names(p) if family.names else routine}_ffi"] = (routine, et)
    _SHOWN.append(shown or routine)


def register_target(target: str, routine: str, family: Family, words: str) -> None:
    """Add one target of every element type — a kernel of jaxlib's own beside
    LAPACK's (`tridiagonal_solve_perturbed_ffi`): the type is its last
    operand's, one of TYPES'.  `words`: what custom_call's refusal lists."""
    FAMILY[routine] = family
    FAMILIES[target] = (routine, None)
    _OTHERS.append(f"{target} as {words}")


_SHOWN: list[str] = []
_OTHERS: list[str] = []


def element_type_of(ins: list):
    """The element type of a call registered for every type: its last operand's."""
    et = getattr(ins[-1], "element_type", None) if ins else None
    if et not in TYPES.values():
        raise Misfit(f"the operands must be f32, f64, complex<f32> or complex<f64> ({getattr(et, 'name', et)} here)")
    return et


def read_elsewhere() -> str:
    """What custom_call's refusal lists as read here (spec/custom_targets.py READ_ELSEWHERE)."""
    return "; ".join(["lapack_{s,d,c,z}{potrf,trsm}_ffi as cholesky and triangular_solve",
                      f"lapack_{{s,d,c,z}}{{{','.join(_SHOWN)}}}_ffi as the factorisations they compute",
                      *_OTHERS]) + " (oracle/custom_calls.py)"


@dataclass(frozen=True)
class Factorisation:
    """Semantics of a LAPACK factorisation call (the section above): `family`,
    the element type, the FFI configuration, and words for the expectation."""

    family: str
    et: object
    config: tuple
    reading: str


def matrix_type(t, et, what) -> TensorType:
    if not isinstance(t, TensorType) or t.element_type != et or t.rank < 2:
        raise Misfit(f"{what} must be a {et.name} tensor of rank >= 2 ({getattr(t, 'mlir', t)} here)")
    return t


def want(got, shape, et, what):
    want = TensorType(tuple(shape), et)
    if got != want:
        raise Misfit(f"{what} must be {want.mlir} ({getattr(got, 'mlir', got)} here)")


def given_layouts(texts: dict, ins: list, outs: list) -> tuple[list, list]:
    """(operand layouts, result layouts) the call gives, one per value, or Misfit."""
    given_in, given_out = layouts(texts.get("operand_layouts")), layouts(texts.get("result_layouts"))
    if given_in is None or given_out is None or len(given_in) < len(ins) or len(given_out) < len(outs):
        raise Misfit("operand_layouts and result_layouts must give one layout per value (LAPACK reads column-major "
                     "memory; JAX writes them)")
    return given_in, given_out


def want_results(outs: list, wanted: list, words: str) -> None:
    """The call's results are `wanted`, (shape, element type, name) each; else
    Misfit — `words` where their number differs."""
    if len(outs) != len(wanted):
        raise Misfit(words)
    for o, (shape, et, what) in zip(outs, wanted):
        want(o, shape, et, what)


def all_column_major(texts: dict, ins: list, outs: list, matrix_outs: list, matrix_ins=(0,)) -> None:
    """The operands at `matrix_ins` and the results at `matrix_outs`
    column-major with batch major-most."""
    given_in, given_out = given_layouts(texts, ins, outs)
    pairs = [(given_in[i], ins[i].rank) for i in matrix_ins]   # xORGQR's tau is a batch of vectors
    pairs += [(given_out[i], outs[i].rank) for i in matrix_outs]
    for g, r in pairs:
        if g != (r - 2, r - 1) + tuple(range(r - 3, -1, -1)):
            raise Misfit(f"layout {list(g)}: only column-major matrices with batch dimensions major-most are read")


def square(family, ins, et):
    """(a, batch, m, n) of a call that takes one matrix."""
    if len(ins) != 1:
        raise Misfit(f"x{family.upper()} takes one matrix")
    a = matrix_type(ins[0], et, "a")
    return a, tuple(a.shape[:-2]), int(a.shape[-2]), int(a.shape[-1])


@dataclass
class Call:
    """What a family's `run` is given: the semantics `sem` and its
    configuration `cfg`, the instance's operand types `ins`, the operands
    `arrays`, the matrix `a` (of type `ta`) widened to `x` (float64 or
    complex128), and the result types; with the three ways to state a
    result: `free` (any value, labelled), `residual` (a property of
    spec/lapack.py) and `zeros`."""

    sem: Factorisation
    cfg: dict
    ins: list
    arrays: list
    a: np.ndarray
    ta: TensorType
    x: np.ndarray
    result_types: list

    @property
    def et(self):
        return self.sem.et

    def free(self, t, bits_of_value, words, tag=None):
        from . import characterized as ch
        return ch.unstated(t, to_bits(np.asarray(bits_of_value).astype(t.element_type.numpy), t.element_type),
                           f"{self.sem.reading}: {words}", tag)

    @staticmethod
    def zeros(t):
        return np.zeros(tuple(int(d) for d in t.shape), t.element_type.numpy)

    def residual(self, t, ref, rec, why=None):
        from . import characterized as ch
        from ..spec import lapack
        m = lapack.measure(rec, t, ref)
        rec["reference"] = ch.significant(m.value)
        return Expectation(t, to_bits(np.asarray(ref).astype(t.element_type.numpy), t.element_type), ch.KIND,
                           why=why or self.sem.reading, residual=rec)

    def info(self, t, words="info 0"):
        return Expectation.of(self.zeros(t), t, why=f"{self.sem.reading}: {words}")


GEEV_PART = "{part} of x{routine}'s eigenvalues: judged where `complex` puts them back together (oracle/chains.py)"


def eigenvalue_outputs(call: Call, t_vals: list, discs: list, thr: float) -> list:
    """The eigenvalues' expectations, in any order (spec/geev.py): w for a
    complex routine, wr and wi (its parts, `GEEV_PART`) for a real one; xGEEV's
    and xGEES's alike."""
    from . import characterized as ch
    from ..spec import geev, lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta = call.et, call.a, call.ta
    n = int(ta.shape[-1])
    batch = tuple(int(d) for d in ta.shape[:-2])
    lam = np.array([[complex(*c) for c in d["centers"]] for d in discs], dtype=np.complex128).reshape(batch + (n,))
    rec = lapack.record("geev.values", {"discs": discs, "threshold": thr}, [(a, ta)], geev.GEEV_VALUES_STATEMENT, thr)
    wt = TensorType(batch + (n,), C64 if et in (E_F32, C64) else C128)
    rec["reference"] = ch.significant(lapack.measure(rec, wt, lam).value)
    if et.is_complex:
        return [Expectation(t_vals[0], to_bits(rounded(lam, et).astype(et.numpy), et), ch.KIND, why=call.sem.reading,
                            residual=rec)]
    return [call.free(t, rounded(part, et), GEEV_PART.format(part=name, routine=call.sem.family.upper()),
                      tag={"pending": "part", "part": p, "sign": 1, "of": rec, "judged": True})
            for t, part, name, p in ((t_vals[0], lam.real, "the real parts", "re"),
                                     (t_vals[1], lam.imag, "the imaginary parts", "im"))]


def component_precision(et) -> int:
    return (et.component if et.is_complex else et).format.precision
