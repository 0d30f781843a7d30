"""The custom_call targets whose semantics the oracle knows.

The seed makes `custom_call` "an implementation-defined operation
`call_target_name`": the spec states no result for any target.  A target
named here has semantics written from a definition outside the code under
test, so a suite case may call it and backends that register the same
target can be scored; every other target is unknown to the oracle, which
then states no result (the op's semantics answer "implementation-defined,
no alternative known", which the oracle reports as unsupported with the
target named — never a value of our making).

A target declares:
  result_types(op)  its type rule: the result types of a call (symbolic
                    dims allowed) from its operands, or None where the
                    operands do not fit the definition;
  misfit(op)        why a concrete call does not fit its definition (operand
                    or result types), or None — the call is then no longer
                    this target as defined here, and no result is stated;
  run(op, *arrays)  the results (arrays).

Known here:

* `Sharding` — XLA's sharding annotation (jaxlib lowers
  `with_sharding_constraint` to `custom_call @Sharding` with an
  `mhlo.sharding` attribute when Shardy is off; XLA's HLO importer turns it
  into a copy carrying the sharding).  Definition: the identity on one
  tensor — the result is the operand and has its type (XLA's own HLO
  verifier refuses a result of another type: "Expected instruction to have
  shape equal to f32[3,3], actual shape is f64[3,3]").  On a single device
  the sharding changes no value; the definition holds for any
  `api_version`, `backend_config` and `has_side_effect`.  Stated element
  by element (the op's `Accumulating` answers), so a NaN matches any NaN:
  payloads are not compared — a known leniency.

* `lapack_spotrf_ffi`, `lapack_dpotrf_ffi` — jaxlib's typed-FFI LAPACK
  Cholesky (what `jnp.linalg.cholesky` lowers to on CPU), `api_version = 4`,
  `backend_config = {uplo = 76 : ui8}` ('L') or 85 ('U').  Definition:
  LAPACK's xPOTRF (its reference documentation): on a column-major matrix,
  for 'L' it reads only the lower triangle and writes L with A = L·Lᵀ
  there, for 'U' the upper one with A = Uᵀ·U; the other strict triangle is
  "not referenced", so it keeps the input (jaxlib copies the operand into
  the result first); `info` = 0, or i > 0 when the leading minor of order i
  is not positive definite (the factor is then partial: no result stated).
  Layout: `operand_layouts` gives each operand's minor-to-major order;
  without it XLA's default is row-major, where LAPACK sees the transpose:
  the logical triangle is the other one.  Batch dimensions (all but the
  last two) must be major-most.
  Accuracy: the factor is stated *exactly*, and only where every
  evaluation order is exact — an integer factor whose diagonal entries are
  powers of two (so the reciprocal scaling LAPACK and OpenBLAS use is
  exact, and every square root is of a power of four), every partial sum
  below 2^p of the format — else no result is stated.  Generators draw
  such factors (`potrf_operand`) and put other integers into the triangle
  that is never read.

jaxlib's XLA:CPU crashes (SIGSEGV) on the LAPACK targets unless the LAPACK
function table was initialised in the process (JAX's own lowering calls
`jaxlib.lapack._lapack.initialize()`; a program compiled straight from text
does not): docs/findings.md, custom_call.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from math import isqrt
from typing import Callable

import numpy as np

from .types import E_F32, E_F64, SI32, TensorType


@dataclass(frozen=True)
class Target:
    name: str
    result_types: Callable
    misfit: Callable
    run: Callable
    definition: str


def _sharding_misfit(op) -> str | None:
    ins, outs = list(op.inputs), list(op.results["results"])   # Instance.results: the dict of results by name
    if len(ins) != 1 or len(outs) != 1:
        return f"Sharding takes one operand and gives one result ({len(ins)} operands, {len(outs)} results here)"
    if not isinstance(ins[0], TensorType) or ins[0] != outs[0]:
        return f"Sharding is the identity: its result has its operand's type ({ins[0]} -> {outs[0]} here)"
    return None


SHARDING = Target(
    name="Sharding",
    result_types=lambda op: [op.inputs[0]] if len(op.inputs) == 1 and isinstance(op.inputs[0], TensorType) else None,
    misfit=_sharding_misfit,
    run=lambda op, x: [x],
    definition="identity: the result is the operand, bit for bit (XLA's sharding annotation)",
)

# -- LAPACK xPOTRF (Cholesky), jaxlib's typed FFI ------------------------

UPLO = {76: "L", 85: "U"}   # the ASCII code of LAPACK's UPLO character, as jaxlib writes it


def _uplo(op):
    """'L' or 'U' from a typed-FFI backend_config `{uplo = 76 : ui8}`, or None."""
    cfg = getattr(op.backend_config, "text", None)
    m = re.fullmatch(r"\{\s*uplo\s*=\s*(\d+)\s*:\s*ui8\s*\}", cfg or "")
    return UPLO.get(int(m.group(1))) if m else None


def _layouts(text) -> list | None:
    """The minor-to-major lists of `[dense<[0, 1]> : tensor<2xindex>, dense<> : …]`."""
    if text is None:
        return None
    return [tuple(int(x) for x in body.replace("[", "").replace("]", "").split(",") if x.strip())
            for body in re.findall(r"dense<([^>]*)>", text)]


def _column_major(op) -> bool | None:
    """Whether the matrix operand is column-major (LAPACK's own order): True
    for minor-to-major (r-2, r-1, …), False for the default (r-1, r-2, …) or
    no layouts, None for any other order (batch not major-most, or result
    and operand laid out differently)."""
    r = op.inputs[0].rank
    ins, outs = _layouts(op.operand_layouts), _layouts(op.result_layouts)
    if ins is None and outs is None:
        return False
    if not ins or not outs or ins[0] != outs[0]:
        return None
    batch = tuple(range(r - 3, -1, -1))
    if ins[0] == (r - 2, r - 1) + batch:
        return True
    if ins[0] == (r - 1, r - 2) + batch:
        return False
    return None


def logical_triangle(op) -> str | None:
    """The triangle ('L' or 'U', of the matrix as indexed) xPOTRF reads and writes."""
    uplo, col = _uplo(op), _column_major(op)
    if uplo is None or col is None:
        return None
    return uplo if col else {"L": "U", "U": "L"}[uplo]


def _potrf_types(et):
    def result_types(op):
        ins = list(op.inputs)
        if len(ins) != 1 or not isinstance(ins[0], TensorType) or ins[0].element_type != et or ins[0].rank < 2:
            return None
        t = ins[0]
        return [t, TensorType(tuple(t.shape[:-2]), SI32)]
    return result_types


def _potrf_misfit(et, name):
    def misfit(op):
        ins, outs = list(op.inputs), list(op.results["results"])
        want = _potrf_types(et)(op)
        if want is None or outs != want:
            return f"{name} takes one {et.name} tensor of rank >= 2 and gives it and an si32 info tensor"
        if ins[0].shape[-1] != ins[0].shape[-2]:
            return f"{name} factors square matrices ({ins[0].mlir} here)"
        if op.api_version != 4 or _uplo(op) is None:
            return f"{name} is typed FFI: api_version = 4 and backend_config = {{uplo = 76 : ui8}} (or 85)"
        if _column_major(op) is None:
            return f"{name}: operand and result layouts must agree and keep batch dimensions major-most"
        return None
    return misfit


def _rational_sqrt(x: Fraction) -> Fraction | None:
    n, d = isqrt(x.numerator), isqrt(x.denominator)
    return Fraction(n, d) if n * n == x.numerator and d * d == x.denominator else None


def _is_power_of_two(x: Fraction) -> bool:
    return x > 0 and x.denominator == 1 and x.numerator & (x.numerator - 1) == 0


class NoExactFactor(Exception):
    """The oracle states no factor for this matrix (the message says why)."""


NOT_EXACT = ("the factor is stated only where every evaluation order is exact "
             "(integer factor, power-of-two diagonal, partial sums below 2^p)")


def exact_cholesky(a: np.ndarray, triangle: str, precision: int) -> np.ndarray:
    """xPOTRF's result on one matrix as indexed (triangle 'L': A = L·Lᵀ from
    the lower triangle; 'U': A = Uᵀ·U from the upper), in exact rationals;
    the other strict triangle is the input's.  Raises NoExactFactor unless
    every evaluation order gives exactly this (module docstring);
    `precision`: the format's p (24 for f32)."""
    n = a.shape[0]
    m = a if triangle == "L" else a.T                      # read the lower triangle of m
    A = [[Fraction(float(m[i][j])) for j in range(n)] for i in range(n)]
    L = [[Fraction(0)] * n for _ in range(n)]
    limit = 2 ** precision
    for j in range(n):
        d = A[j][j] - sum(L[j][k] ** 2 for k in range(j))
        if d <= 0:
            raise NoExactFactor(f"the leading minor of order {j + 1} is not positive definite "
                                "(LAPACK then leaves the factor partial)")
        r = _rational_sqrt(d)
        if r is None or not _is_power_of_two(r) or abs(A[j][j]) + sum(L[j][k] ** 2 for k in range(j)) >= limit:
            raise NoExactFactor(NOT_EXACT)
        L[j][j] = r
        for i in range(j + 1, n):
            v = (A[i][j] - sum(L[i][k] * L[j][k] for k in range(j))) / r
            if v.denominator != 1 or abs(A[i][j]) + sum(abs(L[i][k] * L[j][k]) for k in range(j)) >= limit:
                raise NoExactFactor(NOT_EXACT)
            L[i][j] = v
    out = np.array(m, dtype=a.dtype, copy=True)
    for i in range(n):
        for j in range(i + 1):
            out[i][j] = float(L[i][j])
    return out if triangle == "L" else out.T


def _potrf_run(et):
    def run(op, x):
        tri = logical_triangle(op)
        x = np.asarray(x)
        batch = x.shape[:-2]
        out = np.empty_like(x)
        for idx in np.ndindex(*batch):
            out[idx] = exact_cholesky(x[idx], tri, et.format.precision)
        return [out, np.zeros(batch, np.int32)]
    return run


def potrf_operand(op, rng) -> np.ndarray:
    """A matrix (batch) whose xPOTRF factor is exact in every evaluation
    order: A = L·Lᵀ for an integer L with diagonal entries in {1, 2, 4} and
    entries in [-3, 3] below, in the triangle the call reads; the other
    strict triangle holds other integers (never read)."""
    t = op.inputs[0]
    n, batch = int(t.shape[-1]), tuple(int(d) for d in t.shape[:-2])
    tri = logical_triangle(op)
    out = np.empty(batch + (n, n), t.element_type.numpy)
    for idx in np.ndindex(*batch):
        L = np.tril(rng.integers(-3, 4, size=(n, n)), -1) + np.diag(2 ** rng.integers(0, 3, size=n))
        m = np.tril(L @ L.T) + np.triu(rng.integers(-9, 10, size=(n, n)), 1)
        out[idx] = m if tri == "L" else m.T
    return out


def _potrf(name, et):
    return Target(name=name, result_types=_potrf_types(et), misfit=_potrf_misfit(et, name), run=_potrf_run(et),
                  definition="LAPACK xPOTRF: the Cholesky factor in the triangle read, the other kept; info = 0")


TARGETS: dict[str, Target] = {t.name: t for t in (SHARDING, _potrf("lapack_spotrf_ffi", E_F32),
                                                  _potrf("lapack_dpotrf_ffi", E_F64))}


# Targets the oracle reads beyond this registry, as the op or factorisation they compute
# (oracle/custom_calls.py adds its own words here when imported): so that the refusal of a call names
# everything the oracle does read, not this registry alone.
READ_ELSEWHERE: list[str] = []


def unknown_target(name: str) -> str:
    """The oracle's words for a call it cannot state a result of."""
    known = ", ".join(sorted(TARGETS))
    also = f"; read as what they compute: {'; '.join(READ_ELSEWHERE)}" if READ_ELSEWHERE else ""
    return (f"custom_call target {name!r} is not in the oracle's registry of targets (known: {known}{also}); "
            f"the seed makes custom_call implementation-defined")
