"""Properties carried downstream of a factorisation, where the factors are used together.

oracle/characterized.py offers "any value" for what an op computes from a
residual-judged value.  Two uses of factors restore a property, and JAX
emits both:

* **A factor's two triangular solves** (`jnp.linalg.solve`, `inv`: LU,
  xGETRF then two xTRSM; a Cholesky solve: `cholesky` then two
  `solve_triangular`, or `cho_solve`).  A left-side triangular solve whose
  `a` is a residual-judged factor F of M (cholesky: M = L·Lᴴ, the record's
  Hermitian matrix; xGETRF: M = P·A with the oracle's pivots) and whose b is
  an exact value c applies the first factor (L); its result is "pending":
  any value, tagged with the factor and c.  A second left-side solve with
  the same factor applying the second factor (Lᴴ; U) to that pending value
  gives x = (F₁·F₂)⁻¹·c = M⁻¹·c: its result is judged by "linear_solve"
  (spec/lapack.py: ‖M·x − c‖₁/(n·‖M‖₁·‖x‖₁·ε), LAPACK's dget02/dpot02), a
  backward-error criterion every backward-stable solve meets.  Which factor
  a solve applies is read from the factor's record and the solve's
  attributes (`_role`): cholesky with `lower` = true: the lower triangle,
  NO_TRANSPOSE applies L, ADJOINT (TRANSPOSE on real matrices) Lᴴ; with
  `lower` = false the upper triangle holds Lᴴ; xGETRF: the lower triangle
  with a unit diagonal is L, the upper one U (NO_TRANSPOSE).  Any other
  order (Lᴴ first, the wrong triangle, a transposed LU solve) keeps "any
  value".  The factor is "the same" where the two records state the same
  factor of the same operands (the same op and operands; for xGETRF the same
  pivots); c must be exact (not approximate, not free).
* **xORGQR of xGEQRF's outputs** (`jnp.linalg.qr`): "qr.q" of geqrf's A.

Between the steps JAX moves the values (reshape, transpose, slice, pad,
select on info): `moved` follows a value through any op that moves its
elements — observed, not assumed: the op runs on the value's element
numbers (1, 2, … and their negatives, so an element that is computed
rather than moved is told apart), and where every element the criterion
reads comes out exactly once, the record gets a `view` (spec/lapack.py,
`measure`: the output is moved back before the criterion reads it).

What stays "any value": anything mixing the factors into arithmetic —
`det` and `slogdet` (products of U's diagonal and the pivots' parity),
`lstsq` (arithmetic on the SVD), a solve through a factor used otherwise
than above, anything downstream of a factorisation whose pivots the oracle
does not state (a near-tie) or of an implementation-defined output (tau,
LAPACK's overwritten a).
"""
from __future__ import annotations

import numpy as np

from ..spec import lapack
from ..spec.expectation import Expectation
from ..spec.ops.cholesky import component, hermitian
from ..spec.types import TensorType, parse_type, tensor_from_hex, tensor_to_hex


def tag(v):
    """The record (residual) or tag (pending) of a value, or None."""
    if isinstance(v, tuple) or v.residual is None:
        return None
    return v.residual


def _triangular(inst):
    """The triangular_solve instance an op is (itself, or a custom_call read as one), or None."""
    if inst.spec.mnemonic == "triangular_solve":
        return inst
    op = getattr(inst.spec.semantics, "op", None)
    return op if op is not None and op.spec.mnemonic == "triangular_solve" else None


def _factor_key(rec: dict):
    """What identifies the factorisation a record states (cholesky's `lower` aside: both triangles of
    a defined operand state the same factor)."""
    if rec.get("view"):
        return None
    if rec.get("op") == "cholesky":
        return ("cholesky", tuple(o["hex"] for o in rec["operands"]), rec["operands"][0]["type"])
    if rec.get("property") == "getrf.lu":
        return ("getrf", tuple(o["hex"] for o in rec["operands"]), rec["operands"][0]["type"],
                tuple(rec["attributes"]["pivots"]))
    return None


def _role(rec: dict, tri) -> str | None:
    """Which factor of M the solve applies: "L" (first) or "R" (second: Lᴴ, U), or None."""
    real = not tri.b.element_type.is_complex
    t = tri.transpose_a
    if rec.get("op") == "cholesky" and not tri.unit_diagonal:
        stored_lower = bool(rec["attributes"].get("lower", False))
        if bool(tri.lower) != stored_lower:
            return None
        if t == "NO_TRANSPOSE":
            return "L" if stored_lower else "R"
        if t == "ADJOINT" or (t == "TRANSPOSE" and real):
            return "R" if stored_lower else "L"
        return None
    if rec.get("property") == "getrf.lu" and t == "NO_TRANSPOSE":
        m, n = (int(d) for d in parse_type(rec["operands"][0]["type"]).shape[-2:])
        if m != n:
            return None
        if tri.lower and tri.unit_diagonal:
            return "L"
        if not tri.lower and not tri.unit_diagonal:
            return "R"
    return None


def _matrix(rec: dict) -> tuple[np.ndarray, TensorType, float]:
    """(M, its type, the growth G of the threshold) of a factor's record."""
    t = parse_type(rec["operands"][0]["type"])
    a = tensor_from_hex(rec["operands"][0]["hex"], t)
    n = int(t.shape[-1])
    if rec.get("op") == "cholesky":
        M = hermitian(np.asarray(a).astype(np.complex128 if t.element_type.is_complex else np.float64),
                      bool(rec["attributes"].get("lower", False)))
        return M.astype(t.element_type.numpy), t, float(n)
    piv = np.asarray(rec["attributes"]["pivots"], dtype=np.int64).reshape(tuple(int(d) for d in t.shape[:-2]) + (n,))
    return lapack.permute_rows(np.asarray(a), piv), t, max(rec["attributes"]["growth"] or [1.0])


def _exact(v) -> bool:
    return not isinstance(v, tuple) and v.kind == "exact" and not v.impl_defined and not v.alternatives


def combine(inst, inputs: list, outs: list, primary: list) -> list | None:
    """The outputs where `inst` uses a factorisation's results together (module docstring), else None."""
    from . import characterized as ch
    tri = _triangular(inst)
    if tri is not None and len(inputs) == 2 and len(outs) == 1 and bool(tri.left_side):
        a, b = inputs
        rec = tag(a) if not isinstance(a, tuple) and a.kind == ch.KIND else None
        key = _factor_key(rec) if rec is not None else None
        role = _role(rec, tri) if key is not None else None
        if role is None:
            return None
        (o,) = outs
        if role == "L" and _exact(b):
            t = b.type
            c = {"type": t.mlir, "hex": tensor_to_hex(np.asarray(primary[1]).astype(t.element_type.numpy), t)}
            pend = {"pending": "solve", "factor": list(map(_jsonable, key)), "c": c}
            return [ch.unstated(o.type, o.bits, f"{ch.DOWNSTREAM}; the first of two triangular solves with the "
                                                f"factors of {key[0]} (oracle/chains.py)", pend)]
        p = tag(b)
        if role == "R" and p is not None and p.get("pending") == "solve" and not p.get("view") \
                and p["factor"] == list(map(_jsonable, key)):
            M, tm, growth = _matrix(rec)
            tc = parse_type(p["c"]["type"])
            c = tensor_from_hex(p["c"]["hex"], tc)
            if tc != o.type:
                return None
            n = int(tm.shape[-1])
            thr = lapack.solve_threshold(n, growth, tc.element_type)
            extra = {"undefined": rec["undefined"]} if rec.get("undefined") else {}
            new = lapack.record("linear_solve", {"threshold": thr}, [(M, tm), (c, tc)], lapack.SOLVE_STATEMENT, thr,
                                **extra)
            new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
            via = "L·Lᴴ (cholesky)" if key[0] == "cholesky" else "P·A = L·U (xGETRF, the oracle's pivots)"
            why = f"two triangular solves with the factors of M = {via}: x solves M·x = c (oracle/chains.py)"
            return [Expectation(o.type, o.bits, ch.KIND, residual=new,
                                why="; ".join(w for w in (a.why, why) if w))]
        return None
    fam = getattr(inst.spec.semantics, "family", None)
    if fam == "orgqr" and len(inputs) == 2 and len(outs) == 1:
        r, tau = tag(inputs[0]), tag(inputs[1])
        if r is None or tau is None or r.get("property") != "geqrf.r" or tau.get("pending") != "geqrf.tau":
            return None
        if r["operands"][0] != tau["of"] or not _embeds(r, inputs[0].type):
            return None
        (o,) = outs
        ta = parse_type(r["operands"][0]["type"])
        a = tensor_from_hex(r["operands"][0]["hex"], ta)
        thr = lapack.two_sided(max(int(d) for d in ta.shape[-2:]), ta.element_type)
        new = lapack.record("qr.q", {}, [(a, ta)], lapack.QR_Q_STATEMENT, thr)
        new["reference"] = ch.significant(lapack.measure(new, o.type, o.array()).value)
        return [Expectation(o.type, o.bits, ch.KIND, residual=new,
                            why=f"{inst.spec.semantics.reading} of xGEQRF's outputs: the Q of A (oracle/chains.py)")]
    return None


def _jsonable(x):
    return list(x) if isinstance(x, tuple) else x


def _embeds(rec: dict, t: TensorType) -> bool:
    """Does the value (of type t) hold geqrf's m×n result as its leading columns, in place?"""
    view = rec.get("view")
    t0 = parse_type(view["type"] if view else rec["operands"][0]["type"])
    if not view:
        return tuple(t.shape) == tuple(t0.shape)
    shape, shape0 = tuple(int(d) for d in t.shape), tuple(int(d) for d in t0.shape)
    if shape[:-1] != shape0[:-1] or shape[-1] < shape0[-1]:
        return False
    src = np.asarray(view["src"]).reshape(shape)[..., :shape0[-1]]
    return bool((src.reshape(-1) == np.arange(int(np.prod(shape0)))).all())


MOVED = "moved by data movement (its elements followed: oracle/chains.py)"


def moved(run_op, inst, arrays: list, i: int, v: Expectation, k: int, o) -> Expectation | None:
    """Output `k` of the op where it moves the tagged value `v` (operand `i`)
    without computing on it (module docstring), with the record's `view`
    composed; None where it does not."""
    from . import characterized as ch
    rec = tag(v)
    if isinstance(o, tuple) or rec is None or o.type.element_type != v.type.element_type:
        return None
    et = v.type.element_type
    shape = tuple(int(d) for d in v.type.shape)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 or n + 1 >= 2 ** min(component(et).format.precision, 53):
        return None
    ids = np.arange(1, n + 1, dtype=np.float64).reshape(shape)
    if et.is_complex:   # both components numbered: a conjugation is no move
        ids = ids * (1 + 1j)
    got = []
    for sign in (1.0, -1.0):
        trial = list(arrays)
        trial[i] = (sign * ids).astype(et.numpy)
        try:
            out = run_op(inst, trial)[k]
        except Exception:   # the op states nothing on these values: no move shown
            return None
        if isinstance(out, tuple) or out.type != o.type:
            return None
        got.append(np.asarray(out.array()).astype(np.complex128).reshape(-1))
    x, y = got
    im = x.real if et.is_complex else 0
    hit = (x.imag == im) & (x == -y) & (x.real >= 1) & (x.real <= n) & (x.real == np.round(x.real))
    src = np.where(hit, x.real, 0).astype(np.int64) - 1
    # the elements that must come through: what the criterion reads (a pending value: all of it)
    view = rec.get("view")
    need = ch.scored(v).reshape(-1) if v.kind == ch.KIND else np.ones(n, dtype=bool)
    got_src = src[src >= 0]
    counts = np.bincount(got_src, minlength=n) if got_src.size else np.zeros(n, dtype=np.int64)
    if (counts[need] != 1).any():
        return None
    if view:
        src0 = np.asarray(view["src"], dtype=np.int64)
        src = np.where(src >= 0, src0[np.maximum(src, 0)], -1)
        t0 = view["type"]
    else:
        t0 = v.type.mlir
    new = {key: val for key, val in rec.items() if key != "view"}
    if not (o.type.mlir == t0 and (src == np.arange(src.size)).all()):
        new["view"] = {"type": t0, "src": src.tolist()}
    if v.kind == ch.KIND:
        note = MOVED if MOVED not in v.why else ""
        return Expectation(o.type, o.bits, ch.KIND, residual=new, why="; ".join(w for w in (v.why, note) if w))
    return ch.unstated(o.type, o.bits, v.why, new)
