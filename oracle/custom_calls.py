"""custom_call targets read as the StableHLO ops they are.

JAX lowers `jnp.linalg.cholesky` and `jax.scipy.linalg.solve_triangular`
on CPU not to `stablehlo.cholesky` / `stablehlo.triangular_solve` but to
calls of jaxlib's LAPACK kernels, in the legacy spelling — `api_version`
left at 1, the FFI attributes in the discardable `mhlo.backend_config`:

    %l, %info = stablehlo.custom_call @lapack_spotrf_ffi(%a)
        {mhlo.backend_config = {uplo = 76 : ui8},
         operand_layouts = [dense<[0, 1]> : tensor<2xindex>], …}
    %x = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b)
        {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8,
                                trans_x = 78 : ui8, uplo = 76 : ui8}, …}

The seed makes custom_call implementation-defined, and the spec's own
registry of targets (spec/custom_targets.py) defines only the typed-FFI
Cholesky, exactly, where every evaluation order is exact.  A call of a
target named here that the spec's registry does not define is read as the
op it computes — the op's semantics then judge it (cholesky's and
triangular_solve's property criteria, a "residual" expectation):

* `lapack_{s,d,c,z}potrf_ffi` (one square-matrix operand of f32, f64,
  complex<f32>, complex<f64>; results: the matrix's type and an si32 `info`
  of the batch shape) — LAPACK xPOTRF: the Cholesky factor of the triangle
  `uplo` names ('L' = 76, 'U' = 85) -> `cholesky` with `lower` that
  triangle; `info` is 0 where the matrix is Hermitian positive-definite
  (xPOTRF: "= 0: successful exit"), and any value, labelled, where the seed
  makes the factorisation undefined (xPOTRF then returns the order of the
  failing minor: the op read has no such output to compare with);
* `lapack_{s,d,c,z}trsm_ffi` (operands a, b; one result of b's type) —
  BLAS xTRSM with alpha = 1 (jaxlib's FFI kernel takes no alpha):
  op(A)·X = B for `side` 'L' (76), X·op(A) = B for 'R' (82); `uplo` the
  triangle read; `trans_x` 'N' (78), 'T' (84), 'C' (67) -> `transpose_a`
  NO_TRANSPOSE, TRANSPOSE, ADJOINT; `diag` 'U' (85) -> `unit_diagonal`
  -> `triangular_solve`.

Layout.  LAPACK reads column-major memory, and jaxlib's kernels take each
matrix's dimensions as the tensor's last two.  With `operand_layouts` (and
`result_layouts`) of minor-to-major (r-2, r-1, r-3, …, 0) — what JAX
writes: column-major matrices, batch dimensions major-most — the matrix
LAPACK sees is the tensor as indexed.  Without layouts, or with the
row-major (r-1, r-2, …, 0), XLA hands the kernel row-major buffers: for
xPOTRF's square matrix that is the transpose, so the triangle read is the
other one (as spec/custom_targets.py reads it); for xTRSM's b (m×k) it is
the elements reinterpreted as a column-major m×k matrix — no solve of the
tensors as indexed (checked against XLA:CPU in
tests/oracle/test_wild_linalg.py), so such a call is not read.  Any other
layout is not read.

The reading is what the op's section defines, no more: xPOTRF leaves the
triangle it does not reference untouched; cholesky makes it
implementation-defined — so the oracle does not score it.  A recognised
target whose call does not fit its definition (operand count or types,
config, layout) is `CannotJudge`, naming why.

Wired in oracle/program.py (`_block`: `read_as_op`): the custom_call step
keeps its operands and results (costs, propagation and the downstream rules
of oracle/characterized.py see an ordinary step); only its semantics become
`AsOp`, executed here.
"""
from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..spec.custom_targets import TARGETS
from ..spec.dsl import Instance
from ..spec.expectation import Alternative, Expectation
from ..spec.ops import OPS
from ..spec.types import E_F32, E_F64, SI32, TensorType, element_type, to_bits
from .literals import op_attributes
from .semantics import on_arrays, run_arrays

INFO_UNDEFINED = ("any value: xPOTRF's info where the seed makes the factorisation undefined (read as cholesky, "
                  "which has no such output)")

_C64, _C128 = element_type("complex<f32>"), element_type("complex<f64>")
_TYPES = {"s": E_F32, "d": E_F64, "c": _C64, "z": _C128}
_TRANSPOSE = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}


class Misfit(Exception):
    """The call names a target read here but does not fit its definition."""


@dataclass(frozen=True)
class AsOp:
    """Semantics of a custom_call read as a StableHLO op: `op` (the op's
    checked Instance) computes the call's first result; `info`, where the
    target has one (xPOTRF), is the type of its second; `reading` says what
    was read, for the expectation's `why`."""

    op: Instance
    info: TensorType | None
    reading: str


@dataclass(frozen=True)
class Rewrite:
    """A family of targets: `names` (target name -> the element type it
    takes) and `read(element type, config, column_major, operand types,
    result types) -> (op Instance, info type or None, words)`, raising
    Misfit where the call does not fit."""

    names: dict
    read: Callable


def _config(texts: dict) -> dict:
    """{key: character} of the FFI dictionary `{uplo = 76 : ui8, …}`: the
    typed-FFI `backend_config`, else JAX's legacy `mhlo.backend_config`."""
    for key in ("backend_config", "mhlo.backend_config"):
        text = texts.get(key, "").strip()
        if text.startswith("{"):
            pairs = re.findall(r"(\w+)\s*=\s*(\d+)\s*:\s*ui8", text)
            return {k: chr(int(v)) for k, v in pairs}
    raise Misfit("no FFI configuration (a dictionary in backend_config or mhlo.backend_config)")


def _layouts(text: str | None) -> list | None:
    if text is None:
        return None
    return [tuple(int(x) for x in body.replace("[", "").replace("]", "").split(",") if x.strip())
            for body in re.findall(r"dense<([^>]*)>", text)]


def _column_major(texts: dict, ranks: list, result_ranks: list) -> bool:
    """Whether LAPACK sees the matrices as indexed (module docstring,
    Layout): `ranks` of the operands, `result_ranks` of the matrix results
    (xPOTRF's info, a batch of integers, has no matrix layout to read)."""
    ins, outs = _layouts(texts.get("operand_layouts")), _layouts(texts.get("result_layouts"))
    if ins is None and outs is None:
        return False
    orders = []
    for given, ranks_of in ((ins, ranks), (outs, result_ranks)):   # result_ranks: the matrix result's only
        if given is None or len(given) < len(ranks_of):
            raise Misfit("operand_layouts and result_layouts must both give one layout per value")
        orders += [(g, r) for g, r in zip(given, ranks_of)]
    kinds = set()
    for g, r in orders:
        batch = tuple(range(r - 3, -1, -1))
        if g == (r - 2, r - 1) + batch:
            kinds.add(True)
        elif g == (r - 1, r - 2) + batch:
            kinds.add(False)
        else:
            raise Misfit(f"layout {list(g)}: neither column- nor row-major with batch dimensions major-most")
    if len(kinds) != 1:
        raise Misfit("the matrices' layouts disagree (some column-major, some row-major)")
    return kinds.pop()


def _char(cfg: dict, key: str, allowed: str) -> str:
    c = cfg.get(key)
    if c is None or c not in allowed:
        raise Misfit(f"{key} must be one of {', '.join(repr(x) for x in allowed)} (got {c!r})")
    return c


def _checked(mnemonic: str, operands: dict, attributes: dict, result: TensorType) -> Instance:
    spec = OPS[mnemonic]
    inst = spec.instance(operands, attributes, {"result": result})
    bad = spec.violated(inst)
    if bad:
        raise Misfit(f"read as {mnemonic} it violates {bad[0]}")
    if spec.infer(inst)["result"] != result:
        raise Misfit(f"read as {mnemonic} its result type is not {result.mlir}")
    return inst


def _potrf(et, cfg, column_major, ins, outs):
    if len(ins) != 1 or len(outs) != 2 or not isinstance(ins[0], TensorType):
        raise Misfit("xPOTRF takes one matrix and gives the factor and info")
    a, (f, info) = ins[0], outs
    if a.element_type != et or f != a:
        raise Misfit(f"xPOTRF takes and gives one {et.name} tensor ({a.mlir} -> {f.mlir} here)")
    if info != TensorType(tuple(a.shape[:-2]), SI32):
        raise Misfit(f"info is an si32 tensor of the batch shape ({info.mlir} here)")
    uplo = _char(cfg, "uplo", "LU")
    lower = (uplo == "L") == column_major
    inst = _checked("cholesky", {"a": a}, {"lower": lower}, a)
    return inst, info, (f"uplo '{uplo}', {'column' if column_major else 'row'}-major: cholesky with "
                        f"lower = {str(lower).lower()}")


def _trsm(et, cfg, column_major, ins, outs):
    if len(ins) != 2 or len(outs) != 1:
        raise Misfit("xTRSM (jaxlib's FFI: alpha = 1) takes a and b and gives one result")
    a, b = ins
    if a.element_type != et or b.element_type != et or outs[0] != b:
        raise Misfit(f"xTRSM takes two {et.name} tensors and gives b's type")
    if not column_major:
        raise Misfit("xTRSM on row-major buffers (no layouts, or minor-to-major (r-1, r-2, …)) reads b and the "
                     "result as column-major matrices of the dimensions given: their elements reinterpreted, not "
                     "transposed — no triangular_solve of the tensors as indexed (observed with XLA:CPU)")
    side, uplo = _char(cfg, "side", "LR"), _char(cfg, "uplo", "LU")
    trans, diag = _char(cfg, "trans_x", "NTC"), _char(cfg, "diag", "NU")
    left, lower = side == "L", uplo == "L"
    attrs = {"left_side": left, "lower": lower, "unit_diagonal": diag == "U", "transpose_a": _TRANSPOSE[trans]}
    inst = _checked("triangular_solve", {"a": a, "b": b}, attrs, b)
    words = ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in attrs.items())
    return inst, None, (f"side '{side}', uplo '{uplo}', trans '{trans}', diag '{diag}', "
                        f"{'column' if column_major else 'row'}-major: triangular_solve with {words}")


REWRITES = (Rewrite({f"lapack_{p}potrf_ffi": et for p, et in _TYPES.items()}, _potrf),
            Rewrite({f"lapack_{p}trsm_ffi": et for p, et in _TYPES.items()}, _trsm))
BY_NAME = {name: (rw, et) for rw in REWRITES for name, et in rw.names.items()}


def _types(inst, name: str) -> list:
    d = next(x for x in inst.spec.operands + inst.spec.results if x.name == name)
    v = (inst.operands if d in inst.spec.operands else inst.results)[name]
    return list(v) if d.variadic else [v]


def read_as_op(inst, op):
    """`inst` (a checked custom_call, `op` its MLIR operation) with its
    semantics replaced by the op the call computes, where the target is one
    read here and the spec's registry does not define the call; any other
    instance unchanged.  A recognised call that does not fit: CannotJudge."""
    if inst.spec.mnemonic != "custom_call":
        return inst
    name = inst.attributes.get("call_target_name")
    if name not in BY_NAME:
        return inst
    known = TARGETS.get(name)
    unknown = known.misfit(inst) if known is not None else None
    if known is not None and unknown is None:   # the spec's registry defines this call
        return inst
    rw, et = BY_NAME[name]
    ins, outs = _types(inst, "inputs"), _types(inst, "results")
    texts = op_attributes(op.get_asm(print_generic_op_form=True, skip_regions=True, use_local_scope=True,
                                     assume_verified=True), op.name)
    try:
        column_major = _column_major(texts, [t.rank for t in ins], [t.rank for t in outs[:1]])
        target, info, words = rw.read(et, _config(texts), column_major, ins, outs)
    except Misfit as e:
        from .program import CannotJudge
        spec_words = f"{unknown}; nor can it be read as the op it computes: " if unknown else ""
        raise CannotJudge(f"custom_call @{name}", f"{spec_words}{e} (oracle/custom_calls.py reads the call as the "
                                                  f"op it computes where it fits that op's definition)") from None
    out = copy.copy(inst)
    out.spec = dataclasses.replace(inst.spec, semantics=AsOp(target, info, f"custom_call @{name} read as "
                                                                           f"{target.spec.mnemonic}: {words}"))
    return out


@on_arrays(AsOp)
def run_as_op(sem: AsOp, inst, arrays: list, result_types: list) -> list:
    """The op's expectation for the call's first result; info 0, or any value where the op is undefined."""
    (e,) = run_arrays(sem.op, list(arrays))
    e.why = "; ".join(w for w in (sem.reading, e.why) if w)
    if sem.info is None:
        return [e]
    zeros = to_bits(np.zeros(tuple(int(d) for d in sem.info.shape), np.int32), SI32)
    undefined = (e.residual or {}).get("undefined")
    if not undefined:
        return [e, Expectation(sem.info, zeros, why=f"{sem.reading}: info 0, xPOTRF's successful exit")]
    every = list(range(int(sem.info.num_elements)))
    return [e, Expectation(sem.info, zeros, impl_defined=every, why=f"{undefined}; {INFO_UNDEFINED}",
                           alternatives=[Alternative("xPOTRF's successful exit, 0", zeros),
                                         Alternative(INFO_UNDEFINED, None, every)])]
