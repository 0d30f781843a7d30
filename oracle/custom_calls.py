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

JAX's other LAPACK calls — xGETRF, xGEQRF, xORGQR / xUNGQR, xSYEVD /
xHEEVD, xGESDD / xGESVD, xGEEV, xGEES, xGEHRD, xGEQP3, xGTSV, xSYTRD /
xHETRD — compute what no StableHLO op does: they are read as the
factorisations themselves (`FAMILY`, `Factorisation`, below: a routine is
one `register` call, its reading and its run), each output judged alone by
a property of spec/lapack.py (or of a module it gathers: spec/geev.py,
schur.py, hessenberg.py, tridiagonal.py).

Wired in oracle/program.py (`_block`: `read_as_op`): the custom_call step
keeps its operands and results (costs, propagation and the downstream rules
of oracle/characterized.py see an ordinary step); only its semantics become
`AsOp`, executed here.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..spec.custom_targets import READ_ELSEWHERE, TARGETS
from ..spec.dsl import Instance
from ..spec.expectation import Alternative, Expectation
from ..spec.ops import OPS
from ..spec.types import E_F32, E_F64, SI32, TensorType, to_bits
# the routines read in modules of their own register themselves when imported
from . import lapack_gees, lapack_gehrd, lapack_geqp3, lapack_gtsv, lapack_sytrd, tridiagonal_perturbed  # noqa: F401
from .lapack_calls import (C64, C128, FAMILIES, FAMILY, REAL_OF, TYPES, Call, Factorisation, Family, Misfit,
                           all_column_major, char, component_precision, config, eigenvalue_outputs, element_type_of,
                           layouts, matrix_type, read_elsewhere, register, square, want, want_results)
from .literals import op_attributes
from .rejection import CannotJudge
from .semantics import on_arrays, run_arrays

INFO_UNDEFINED = ("any value: xPOTRF's info where the seed makes the factorisation undefined (read as cholesky, "
                  "which has no such output)")

_TRANSPOSE = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}


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


def _column_major(texts: dict, ranks: list, result_ranks: list) -> bool:
    """Whether LAPACK sees the matrices as indexed (module docstring,
    Layout): `ranks` of the operands, `result_ranks` of the matrix results
    (xPOTRF's info, a batch of integers, has no matrix layout to read)."""
    ins, outs = layouts(texts.get("operand_layouts")), layouts(texts.get("result_layouts"))
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
    uplo = char(cfg, "uplo", "LU")
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
    side, uplo = char(cfg, "side", "LR"), char(cfg, "uplo", "LU")
    trans, diag = char(cfg, "trans_x", "NTC"), char(cfg, "diag", "NU")
    left, lower = side == "L", uplo == "L"
    attrs = {"left_side": left, "lower": lower, "unit_diagonal": diag == "U", "transpose_a": _TRANSPOSE[trans]}
    inst = _checked("triangular_solve", {"a": a, "b": b}, attrs, b)
    words = ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in attrs.items())
    return inst, None, (f"side '{side}', uplo '{uplo}', trans '{trans}', diag '{diag}', "
                        f"{'column' if column_major else 'row'}-major: triangular_solve with {words}")


REWRITES = (Rewrite({f"lapack_{p}potrf_ffi": et for p, et in TYPES.items()}, _potrf),
            Rewrite({f"lapack_{p}trsm_ffi": et for p, et in TYPES.items()}, _trsm))
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
    if name in FAMILIES:   # LAPACK's factorisations (below): no op computes them
        return read_factorisation(inst, op)
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
        target, info, words = rw.read(et, config(texts), column_major, ins, outs)
    except Misfit as e:
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


# --------------------------------------------------------------------------
# LAPACK factorisations no StableHLO op computes: read as what they compute,
# judged by LAPACK's test ratios (spec/lapack.py)
# --------------------------------------------------------------------------
#
# * `lapack_{s,d,c,z}getrf_ffi` (a m×n -> lu m×n, ipiv si32 batch×min(m,n),
#   info si32 batch) — xGETRF, LU with partial pivoting.  lu: "getrf.lu"
#   with the pivots the oracle states; ipiv: exact (1-based, LAPACK's), where
#   every pivot choice is decisive (spec/lapack.py, `lu_pivoting`); info: 0.
#   Where a choice is not decisive or a pivot is zero (singular), all three
#   are any value, labelled — and so is everything downstream.  Elements
#   picked out of lu downstream (U's diagonal for det and slogdet, L and U
#   apart for jax.scipy.linalg.lu) are stated as a range of every value
#   xGETRF can give: real, oracle/chains.py with oracle/lu_diagonal.py
#   `lu_elements`; complex, oracle/complex_ranges.py with
#   `lu_elements_complex`.
# * `lapack_{s,d,c,z}geqrf_ffi` (a m×n -> a m×n, tau batch×min(m,n)) —
#   xGEQRF.  a: "geqrf.r" on its upper trapezoid (R; the Householder vectors
#   below it are implementation-defined, not scored); tau: any value (the
#   representation), tagged so that xORGQR downstream knows whose it is.
# * `lapack_{s,d}orgqr_ffi`, `lapack_{c,z}ungqr_ffi` (a m×c, tau -> q m×c)
#   — xORGQR / xUNGQR (`householder_product`).  On given reflectors:
#   "householder"; downstream of xGEQRF of A (oracle/characterized.py): "qr.q" of A.
# * `lapack_{s,d}syevd_ffi`, `lapack_{c,z}heevd_ffi` (a n×n -> v n×n,
#   w batch×n real, info) with `mode` 'V' (86) / 'N' (78) and `uplo` —
#   xSYEVD / xHEEVD of the Hermitian matrix of the triangle read.
#   w: "eigh.values"; v: "eigh.vectors" ('N': any value); info: 0.
# * `lapack_{s,d,c,z}gesdd_ffi` (a m×n -> a, s batch×min(m,n) real, u, vt,
#   info) with `mode` 'A' (65: u m×m, vt n×n), 'S' (83: m×k, k×n), 'N' (78)
#   — xGESDD.  a: any value (LAPACK overwrites it); s: "svd.values";
#   u: "svd.u"; vt: "svd.vt" ('N': any value); info: 0.
# * `lapack_{s,d,c,z}geev_ffi` (a n×n -> real: wr, wi batch×n; complex: w;
#   then vl, vr n×n complex, info) with `compute_left` / `compute_right` 'V'
#   (86) / 'N' (78) — xGEEV.  The eigenvalues: "geev.values" (complex; any
#   order: spec/geev.py) — real wr and wi are its parts, put together by
#   `complex` downstream (oracle/chains.py `_components`); vr: "geev.vectors";
#   vl: "geev.vectors" of Aᴴ ('N': any value); info: 0.  A matrix spec/geev.py
#   gives no discs (defective, or past GEEV_LIMIT): every output any value.
# * `lapack_{s,d,c,z}gesvd_ffi` — xGESVD: xGESDD's outputs by the QR
#   algorithm (`jax.lax.linalg.svd(algorithm=QR)`), read and judged as they are.
# * In modules of their own (each registers itself, `register`):
#   oracle/lapack_gees.py (xGEES: `jax.scipy.linalg.schur`, `sqrtm`),
#   oracle/lapack_gehrd.py (xGEHRD: `hessenberg`), oracle/lapack_geqp3.py
#   (xGEQP3: `qr(pivoting=True)`), oracle/lapack_gtsv.py (xGTSV:
#   `tridiagonal_solve`), oracle/lapack_sytrd.py (xSYTRD / xHETRD:
#   `jax.lax.linalg.tridiagonal`).  With them every LAPACK routine jaxlib's
#   CPU lowering calls is read.
# Every matrix must be column-major (JAX's layouts); a NaN or ±inf in an
# operand makes every output any value (LAPACK's results are then unspecified).

def read_factorisation(inst, op):
    """`inst` with `Factorisation` semantics where it calls a target of FAMILIES, else None."""
    name = inst.attributes.get("call_target_name")
    if name not in FAMILIES:
        return None
    family, et = FAMILIES[name]
    fam = FAMILY[family]
    ins, outs = _types(inst, "inputs"), _types(inst, "results")
    texts = op_attributes(op.get_asm(print_generic_op_form=True, skip_regions=True, use_local_scope=True,
                                     assume_verified=True), op.name)
    try:
        et = et or element_type_of(ins)
        try:
            cfg = config(texts)
        except Misfit:
            cfg = {}
        settings = fam.read(et, cfg, texts, ins, outs)
    except Misfit as e:
        raise CannotJudge(f"custom_call @{name}", f"{e} (oracle/custom_calls.py reads LAPACK's factorisations "
                                                  "where the call fits LAPACK's definition)") from None
    out = copy.copy(inst)
    words = ", ".join(f"{k} '{v}'" for k, v in settings)
    out.spec = dataclasses.replace(inst.spec, semantics=Factorisation(
        family, et, settings,
        f"custom_call @{name} read as {fam.title or 'LAPACK x' + family.upper()}" + (f" ({words})" if words else "")))
    return out


@on_arrays(Factorisation)
def run_factorisation(sem: Factorisation, inst, arrays: list, result_types: list) -> list:
    ins = _types(inst, "inputs")
    a, ta = np.asarray(arrays[0]), ins[0]
    x = a.astype(np.complex128 if sem.et.is_complex else np.float64)
    call = Call(sem, dict(sem.config), ins, list(arrays), a, ta, x, list(result_types))
    fam = FAMILY[sem.family]
    if fam.finite_only and not all(np.isfinite(np.asarray(v)).all() for v in arrays
                                   if np.asarray(v).dtype.kind in "fc"):
        why = "a NaN or ±inf in the operands: LAPACK's outputs are unspecified"
        return [call.free(t, call.zeros(t), f"any value ({why})") for t in result_types]
    return fam.run(call)


# xGETRF ---------------------------------------------------------------------

def _read_getrf(et, cfg, texts, ins, outs):
    a, batch, m, n = square("getrf", ins, et)
    want_results(outs, [(a.shape, et, "lu"), (batch + (min(m, n),), SI32, "ipiv"), (batch, SI32, "info")],
                 "xGETRF gives lu, ipiv and info")
    all_column_major(texts, ins, outs, [0])
    return ()


def _run_getrf(call: Call) -> list:
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta = call.et, call.a, call.ta
    t_lu, t_piv, t_info = call.result_types
    lu, piv, growth, why = lapack.lu_pivoting(call.x, et)
    if why is not None:
        return [call.free(t, v, f"any value ({why})") for t, v in ((t_lu, rounded(lu, et)), (t_piv, piv),
                                                                   (t_info, call.zeros(t_info)))]
    rec = lapack.record("getrf.lu", {"pivots": piv.reshape(-1).tolist(), "growth": growth.reshape(-1).tolist()},
                        [(a, ta)], lapack.GETRF_STATEMENT, lapack.one_sided(min(ta.shape[-2:]), et))
    return [call.residual(t_lu, rounded(lu, et), rec),
            Expectation.of(piv.astype(np.int32), t_piv, why=f"{call.sem.reading}: the pivots of partial pivoting, "
                                                            "every choice decisive by a first-order margin "
                                                            "(spec/lapack.py `lu_pivoting`)"),
            call.info(t_info, "info 0, a nonsingular matrix")]


# xGEQRF, xORGQR / xUNGQR ----------------------------------------------------

def _read_geqrf(et, cfg, texts, ins, outs):
    a, batch, m, n = square("geqrf", ins, et)
    want_results(outs, [(a.shape, et, "a"), (batch + (min(m, n),), et, "tau")], "xGEQRF gives a and tau")
    all_column_major(texts, ins, outs, [0])
    return ()


def _run_geqrf(call: Call) -> list:
    from . import characterized as ch
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta, x = call.et, call.a, call.ta, call.x
    t_a, t_tau = call.result_types
    h = np.zeros(x.shape, x.dtype)
    tau = np.zeros(tuple(int(d) for d in t_tau.shape), x.dtype)
    for idx in np.ndindex(*x.shape[:-2]):
        if 0 not in x.shape[-2:]:
            hh, tt = np.linalg.qr(x[idx], mode="raw")
            h[idx], tau[idx] = hh.T, tt
    big = max(int(d) for d in ta.shape[-2:])
    rec = lapack.record("geqrf.r", {}, [(a, ta)], lapack.QR_R_STATEMENT, lapack.two_sided(big, et))
    return [call.residual(t_a, rounded(h, et), rec),
            call.free(t_tau, rounded(tau, et), "any value (the Householder scalars: the representation of Q is "
                                               "implementation-defined)", tag=ch.pending("geqrf.tau", a, ta))]


def _read_orgqr(et, cfg, texts, ins, outs):
    if len(ins) != 2 or len(outs) != 1:
        raise Misfit("xORGQR takes a and tau and gives q")
    a = matrix_type(ins[0], et, "a")
    k = min(int(a.shape[-2]), int(a.shape[-1]))
    if not isinstance(ins[1], TensorType) or ins[1].element_type != et or ins[1].rank != a.rank - 1 \
            or tuple(ins[1].shape[:-1]) != tuple(a.shape[:-2]) or int(ins[1].shape[-1]) > k:
        raise Misfit(f"tau must be a {et.name} tensor of a's batch shape and at most min(m, n) reflectors")
    want(outs[0], a.shape, et, "q")
    all_column_major(texts, ins, outs, [0])
    return ()


def _run_orgqr(call: Call) -> list:
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta, x = call.et, call.a, call.ta, call.x
    (t_q,) = call.result_types
    tau, tt = np.asarray(call.arrays[1]), call.ins[1]
    cols = int(t_q.shape[-1])
    small = max(int(d) for d in ta.shape[-2:]) <= lapack.MP_EIG_LIMIT and component_precision(et) > 24
    prod, scale = lapack.householder_product(x, tau.astype(x.dtype), cols, et, exact=small)
    wide = TensorType(tuple(t_q.shape), C128 if et.is_complex else E_F64)
    k = int(tt.shape[-1])
    rec = lapack.record("householder", {"scale": scale.reshape(-1).tolist()}, [(a, ta), (tau, tt), (prod, wide)],
                        lapack.HOUSEHOLDER_STATEMENT, lapack.one_sided(max(int(ta.shape[-2]), 1) * max(k, 1), et))
    return [call.residual(t_q, rounded(prod, et), rec)]


# xSYEVD / xHEEVD ------------------------------------------------------------

def _read_syevd(et, cfg, texts, ins, outs):
    a, batch, m, n = square("syevd", ins, et)
    words = "xSYEVD / xHEEVD takes a square matrix and gives v, w and info"
    if m != n:
        raise Misfit(words)
    want_results(outs, [(a.shape, et, "v"), (batch + (n,), REAL_OF[et.name], "w"), (batch, SI32, "info")], words)
    all_column_major(texts, ins, outs, [0])
    return (("mode", char(cfg, "mode", "VN")), ("uplo", char(cfg, "uplo", "LU")))


def _run_syevd(call: Call) -> list:
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta = call.et, call.a, call.ta
    t_v, t_w, t_info = call.result_types
    col_lower = call.cfg["uplo"] == "L"   # column-major: the triangle as indexed
    A = lapack.hermitian_read(call.x, col_lower)
    vals, err = lapack.spectrum(A, et, "eigh")
    attrs = {"lower": col_lower, "values": vals.reshape(-1).tolist(), "error": err.reshape(-1).tolist()}
    n = int(ta.shape[-1])
    w = call.residual(t_w, rounded(vals, t_w.element_type), lapack.record(
        "eigh.values", attrs, [(a, ta)], lapack.EIGVALS_STATEMENT, lapack.two_sided(n, et)))
    if call.cfg["mode"] == "V":
        vecs = np.linalg.eigh(A)[1] if 0 not in A.shape else np.zeros(A.shape, A.dtype)
        v = call.residual(t_v, rounded(vecs, et), lapack.record("eigh.vectors", attrs, [(a, ta)],
                                                                 lapack.EIGVECS_STATEMENT, lapack.two_sided(n, et)))
    else:
        v = call.free(t_v, call.zeros(t_v), "any value (mode 'N': no eigenvectors; LAPACK overwrites a)")
    return [v, w, call.info(t_info, "info 0, converged")]


# xGESDD, xGESVD -------------------------------------------------------------

def _read_gesdd(et, cfg, texts, ins, outs):
    a, batch, m, n = square("gesdd", ins, et)
    k = min(m, n)
    mode = char(cfg, "mode", "ASN")
    if len(outs) != 5:
        raise Misfit("xGESDD / xGESVD gives a, s, u, vt and info")
    want(outs[0], a.shape, et, "a")
    want(outs[1], batch + (k,), REAL_OF[et.name], "s")
    if mode != "N":
        uc, vr = (m, n) if mode == "A" else (k, k)
        want(outs[2], batch + (m, uc), et, "u")
        want(outs[3], batch + (vr, n), et, "vt")
    want(outs[4], batch, SI32, "info")
    all_column_major(texts, ins, outs, [0] + ([2, 3] if mode != "N" else []))
    return (("mode", mode),)


def _run_gesdd(call: Call) -> list:
    from ..spec import lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta, x = call.et, call.a, call.ta, call.x
    t_a, t_s, t_u, t_vt, t_info = call.result_types
    vals, err = lapack.spectrum(x, et, "svd")
    attrs = {"values": vals.reshape(-1).tolist(), "error": err.reshape(-1).tolist()}
    big = max(int(d) for d in ta.shape[-2:])
    thr = lapack.two_sided(big, et)
    s = call.residual(t_s, rounded(vals, t_s.element_type), lapack.record("svd.values", attrs, [(a, ta)],
                                                                           lapack.SVD_VALUES_STATEMENT, thr))
    out = [call.free(t_a, call.zeros(t_a), "any value (LAPACK overwrites a)"), s]
    if call.cfg["mode"] == "N":
        out += [call.free(t, call.zeros(t), "any value (mode 'N': no singular vectors)") for t in (t_u, t_vt)]
    else:
        U = np.zeros(tuple(int(d) for d in t_u.shape), x.dtype)
        VT = np.zeros(tuple(int(d) for d in t_vt.shape), x.dtype)
        for idx in np.ndindex(*x.shape[:-2]):
            if 0 not in x.shape[-2:]:
                uu, _, vv = np.linalg.svd(x[idx], full_matrices=call.cfg["mode"] == "A")
                U[idx], VT[idx] = uu, vv
        for t, ref, side in ((t_u, U, "u"), (t_vt, VT, "vt")):
            out.append(call.residual(t, rounded(ref, et), lapack.record(
                f"svd.{side}", {**attrs, "side": side}, [(a, ta)], lapack.SVD_VECTORS_STATEMENT, thr)))
    return out + [call.info(t_info, "info 0, converged")]


# xGEEV ----------------------------------------------------------------------

def _read_geev(et, cfg, texts, ins, outs):
    a, batch, m, n = square("geev", ins, et)
    vt = C64 if et in (E_F32, C64) else C128
    values = [(et, "w")] if et.is_complex else [(et, "wr"), (et, "wi")]
    if m != n or len(outs) != len(values) + 3:
        raise Misfit("xGEEV takes a square matrix and gives " + ", ".join(w for _, w in values) + ", vl, vr and info")
    for o, (t, what) in zip(outs, values):
        want(o, batch + (n,), t, what)
    k = len(values)
    want(outs[k], a.shape, vt, "vl")
    want(outs[k + 1], a.shape, vt, "vr")
    want(outs[k + 2], batch, SI32, "info")
    all_column_major(texts, ins, outs, [k, k + 1])
    return (("compute_left", char(cfg, "compute_left", "VN")), ("compute_right", char(cfg, "compute_right", "VN")))


register("getrf", Family(_read_getrf, _run_getrf))
register("geqrf", Family(_read_geqrf, _run_geqrf))
register("orgqr", Family(_read_orgqr, _run_orgqr, lambda p: "ungqr" if p in "cz" else "orgqr", finite_only=False),
         "orgqr/ungqr")
register("syevd", Family(_read_syevd, _run_syevd, lambda p: "heevd" if p in "cz" else "syevd"), "syevd/heevd")
register("gesdd", Family(_read_gesdd, _run_gesdd))
register("gesvd", Family(_read_gesdd, _run_gesdd))   # xGESVD: xGESDD's outputs by another algorithm (QR iteration)
def _geev(call: Call) -> list:
    """xGEEV's outputs (the section above; spec/geev.py)."""
    from . import characterized as ch
    from ..spec import geev, lapack
    from ..spec.ops.cholesky import rounded
    et, a, ta, x, cfg, result_types = call.et, call.a, call.ta, call.x, call.cfg, call.result_types
    k = 1 if et.is_complex else 2
    t_vals, (t_vl, t_vr, t_info) = result_types[:k], result_types[k:]
    n = int(ta.shape[-1])
    thr = lapack.two_sided(n, et)
    right = geev.discs(x, et)
    left = geev.discs(np.conj(np.swapaxes(x, -1, -2)), et) if cfg["compute_left"] == "V" and right is not None \
        else None
    if right is None or (cfg["compute_left"] == "V" and left is None):
        return [call.free(t, call.zeros(t), f"any value ({geev.NO_DISCS})") for t in result_types]
    batch = tuple(int(d) for d in ta.shape[:-2])
    out = eigenvalue_outputs(call, t_vals, right, thr)
    vt = t_vr.element_type
    for t, discs, side, flag in ((t_vl, left, "left", "compute_left"), (t_vr, right, "right", "compute_right")):
        if cfg[flag] != "V":
            out.append(call.free(t, call.zeros(t), f"any value ({flag} 'N': no {side} eigenvectors)"))
            continue
        m = x if side == "right" else np.conj(np.swapaxes(x, -1, -2))
        vecs = np.zeros(m.shape, np.complex128)
        for idx in np.ndindex(*batch):
            vecs[idx] = np.linalg.eig(m[idx])[1]
        attrs = {"discs": discs, "threshold": thr, **({"left": True} if side == "left" else {})}
        vrec = lapack.record("geev.vectors", attrs, [(a, ta)], geev.GEEV_VECTORS_STATEMENT, thr)
        ref = rounded(vecs, vt)
        vrec["reference"] = ch.significant(lapack.measure(vrec, t, ref).value)
        out.append(Expectation(t, to_bits(np.asarray(ref).astype(vt.numpy), vt), ch.KIND,
                               why=f"{call.sem.reading}: the {side} eigenvectors", residual=vrec))
    return out + [call.info(t_info, "info 0, converged")]


register("geev", Family(_read_geev, _geev))
READ_ELSEWHERE.append(read_elsewhere())   # every routine registered: the words custom_call's refusal lists
