"""Execution of `Characterized` semantics (cholesky, triangular_solve): results the spec defines by a property.

The seed says what the result *is* ("a Cholesky decomposition of a", "the
solution to op(a)·x = b"), not which rounding of it an implementation must
return.  The oracle states a residual expectation (spec/kinds/residual.py):

* `bits`: the op's reference — the result computed in high precision and
  rounded — which `run`, `explain` and reports show and measure ULP
  distances from; it never judges;
* `residual`: what the judge needs to evaluate the op's criterion on any
  output without the oracle — the op, its attributes and operands (type +
  hex, `Characterized.record`), the criterion in words, its threshold, the
  reference's own measure (a check of the reference: the oracle refuses to
  state a reference that fails its own criterion) and the problem's
  condition number; and, where the seed makes the behaviour undefined on
  these operands (a matrix not positive definite, a singular system), why:
  every output then passes, labelled.

Downstream of such a result (`downstream`, called by propagation.carry):
an op whose operand is a residual-judged value computes on the oracle's
reference, which a backend need not have returned, so its value is not
stated by a value:

* where the op passes the elements the criterion reads through unchanged,
  in place (JAX's `select(info == 0, L, nan)` and `select(tril, ·, 0)`
  after its LAPACK call), its result keeps the property — the same residual
  expectation: the criterion is evaluated on what comes out.  Passing
  through is observed, not assumed: the op runs twice more with that
  operand replaced by two arrays of pseudo-random values, and the elements
  the criterion reads must come out equal to them, in place.  Where the
  other elements come out as the op's own on both runs (the zeros of
  `select(tril, ·, 0)`) and every other operand is exact, the record is
  marked `fixed` (`_kept_record`): those elements are then judged too — a
  backend must return the program's zeros there (spec/kinds/residual.py) —
  and a Cholesky factor so fixed enters a computation as a range
  (oracle/chains.py `as_range`);
* where the op moves those elements in a way that restates the property
  (`RESTATE`: a real cholesky factor transposed is the factor of the other
  triangle — `jax.scipy.linalg.cholesky(lower=False)`), the restated
  residual expectation;
* where factors of one factorisation are used together (two triangular
  solves with a Cholesky or LU factor; xORGQR of xGEQRF's outputs), the
  property oracle/chains.py restores (`chains.combine`: x of M·x = c, A's Q);
* where the op only moves the elements (reshape, transpose, slice, pad…,
  observed on numbered elements: `chains.moved`), the same property with a
  `view` that moves the output back before the criterion reads it;
* where an op computes on eigen- or singular values, a solve's solution,
  a fixed Cholesky factor or the first of its solves (and keeps none of
  them whole), the values enter as the range their criterion lets pass
  (`chains.as_range`) and the op is carried like any ranged one
  (propagation.carry: lstsq's rcond mask and 1/σ);
* anything else is "any value", labelled `DOWNSTREAM` (every element an
  implementation-defined alternative without candidates, as
  oracle/propagation.py labels a range crossing NaN), and so is everything
  computed from such a value in turn.

A residual-judged op whose operand is itself approximate (a ranged value)
is judged against the oracle's primary operand values, and says so in its
`why`; the corners of propagation.py are not run for it.
"""
from __future__ import annotations

import numpy as np

from ..spec.dsl import Characterized
from ..spec.expectation import Alternative, Expectation
from ..spec.kinds import kind_of
from ..spec.kinds.exact import EXACT
from ..spec.kinds.residual import RESIDUAL
from ..spec.lapack import measure
from ..spec.types import to_bits
from . import chains
from .data_movement import bits_of
from .semantics import on_arrays

KIND = RESIDUAL.name   # what this module states; `RESIDUAL.judges(v)` asks whether `v` is one
DOWNSTREAM = "any value: computed from a result the spec defines by a property (oracle/characterized.py)"
PRIMARY = "the value computed on the oracle's reference"
PASSED_THROUGH = "the property of {op}'s result, whose elements this {by} passes through unchanged"
# A residual record so judged is marked `ranged`; a real Cholesky, LU, eigh or QR factorisation's also carries `slack`, ‖Â − A‖₁
# per matrix (chains.matrix_slack), which the ranges and the solve criterion downstream add (spec/lapack.py); others
# get no range downstream (chains.as_range).
RANGED_OPERAND = ("an operand is approximate upstream: the property is judged against the oracle's primary "
                  "(correctly rounded) operand values")


def significant(x: float, digits: int = 3) -> float:
    """A measure as the suite stores it: 3 significant digits (BLAS kernels
    differ in the last bits between machines; suites must not)."""
    return float(f"{x:.{digits}g}")


@on_arrays(Characterized)
def run_characterized(sem: Characterized, inst, operands: list, results: list) -> list:
    """The op's reference as `bits`, its criterion and operands as a "residual" expectation."""
    who = inst.spec.mnemonic
    if len(results) != 1:
        raise ValueError(f"{who}: a Characterized op has one result ({len(results)} here)")
    (t,) = results
    reference = sem.reference(inst, *operands)
    why = sem.undefined(inst, *operands) if sem.undefined is not None else None
    measured = sem.criterion(inst, list(operands), reference)
    if why is None and not measured.ok:
        raise AssertionError(f"{who}: the oracle's reference fails the op's own criterion ({measured.detail})")
    record = Characterized.record(inst, operands)
    record.update(statement=sem.statement, threshold=measured.threshold, reference=significant(measured.value))
    if sem.condition is not None:
        kappa = sem.condition(inst, *operands)
        if kappa == kappa:   # not NaN (an empty batch)
            record["condition"] = significant(kappa) if np.isfinite(kappa) else "inf"
    if why is not None:
        record["undefined"] = why
    return [Expectation(t, bits_of(reference, t, who), KIND, why=why or "", residual=record)]


# --------------------------------------------------------------------------
# Downstream of a residual-judged value (called by propagation.carry)
# --------------------------------------------------------------------------

def is_free(v) -> bool:
    """Is `v` not stated by a value: a residual-judged result, or "any value" downstream of one?"""
    if isinstance(v, tuple):
        return any(is_free(m) for m in v)
    return RESIDUAL.judges(v) or any(a.label == DOWNSTREAM for a in v.alternatives)


def any_value(o):
    """`o` (the op on the reference) offered as "any value" at every element, labelled."""
    if isinstance(o, tuple):
        return tuple(any_value(m) for m in o)
    every = list(range(int(o.type.num_elements)))
    return Expectation(o.type, o.bits, EXACT.name, impl_defined=every,
                       alternatives=[Alternative(PRIMARY, o.bits), Alternative(DOWNSTREAM, None, every)],
                       why="; ".join(w for w in (o.why, DOWNSTREAM) if w))


def scored(e: Expectation) -> np.ndarray:
    """The elements a residual expectation's criterion reads (bool mask of its shape)."""
    m = measure(e.residual, e.type, e.array())
    shape = tuple(int(d) for d in e.type.shape)
    return np.ones(shape, dtype=bool) if m.scored is None else np.broadcast_to(m.scored, shape)


def _markers(e: Expectation, seed: int) -> np.ndarray:
    """Pseudo-random finite values of `e`'s type and shape (seeded: the oracle is deterministic)."""
    et = e.type.element_type
    shape = tuple(int(d) for d in e.type.shape)
    rng = np.random.default_rng(seed)
    x = rng.choice((-1.0, 1.0), size=shape) * 2.0 ** rng.integers(-4, 4, size=shape) * (1 + rng.integers(0, 8, size=shape) / 8)
    if et.is_complex:
        x = x + 1j * rng.choice((-1.0, 1.0), size=shape) * 2.0 ** rng.integers(-4, 4, size=shape)
    return x.astype(et.numpy)


def _passes_through(run_op, inst, arrays: list, i: int, r: Expectation, k: int, o: Expectation) -> bool | None:
    """Does output `k` of the op hold operand `i` (a residual value `r`), in
    place, at every element `r`'s criterion reads, whatever that operand
    holds?  None where it does not; else whether the op also *fixes* the
    other elements — they come out as `o`'s own, whatever the operand held
    (JAX's `select(tril, L, 0)`: the zeros of the triangle not read)."""
    if isinstance(o, tuple) or o.type != r.type:
        return None
    mask = scored(r).reshape(-1)
    fixed = True
    for seed in (1, 2):
        m = _markers(r, seed)
        trial = list(arrays)
        trial[i] = m
        try:
            out = run_op(inst, trial)[k]
        except Exception:   # the op states nothing on these values: no pass-through shown
            return None
        if isinstance(out, tuple):
            return None
        et = r.type.element_type
        want = to_bits(m, et).reshape((mask.size, -1))
        got = np.asarray(out.bits).reshape((mask.size, -1))
        if not (want[mask] == got[mask]).all():
            return None
        own = np.asarray(o.bits).reshape((mask.size, -1))
        fixed = fixed and bool((own[~mask] == got[~mask]).all())
    return fixed


def _kept_record(r: Expectation, inputs: list, i: int, fixed: bool) -> dict:
    """`r`'s record for an output that passes it through: marked `fixed` (the
    elements its criterion does not read are the expectation's own bits:
    spec/kinds/residual.py judges them, oracle/chains.py `as_range` states
    them) where the op fixed them and every other operand is exact."""
    rec = {key: val for key, val in r.residual.items() if key != "fixed"}
    if fixed and all(chains.exact(v) for j, v in enumerate(inputs) if j != i):
        rec["fixed"] = True
    return rec


def downstream(run_op, inst, inputs: list, outs: list, arrays: list | None) -> list | None:
    """`outs` (the op on the primary values) restated where an input is a
    residual-judged value or downstream of one (module docstring); None
    where no input is and no output is residual-judged (nothing to do)."""
    free = [i for i, v in enumerate(inputs) if is_free(v)]
    if not free:
        ranged = any(isinstance(v, Expectation) and kind_of(v).approximate for v in inputs)
        if ranged and any(RESIDUAL.judges(o) or _judged_part(o) for o in outs):
            for o in outs:
                o.why = "; ".join(w for w in (o.why, RANGED_OPERAND) if w)
                if RESIDUAL.judges(o):   # what the backend factors is not the primary M: its distance, or no range
                    o.residual = _marked(o.residual, inputs[0])
                elif _judged_part(o):    # xGEEV's wr, wi: the record they are parts of
                    o.residual = {**o.residual, "of": _marked(o.residual["of"], inputs[0])}
            return outs
        return None
    primary = list(arrays) if arrays is not None else [_primary(v) for v in inputs]
    if inst is not None:
        chained = chains.combine(inst, inputs, outs, primary)   # a factorisation's factors used together
        if chained is not None:
            return chained
    ranges = [chains.as_range(inputs[i]) for i in free]
    if inst is not None and all(r is not None for r in ranges) and not _kept_whole(run_op, inst, primary, inputs,
                                                                                    free, outs):
        from .propagation import carry   # eigen- or singular values computed on: the range their criterion allows
        ranged = list(inputs)
        for i, r in zip(free, ranges):
            ranged[i] = r
        return carry(run_op, inst, ranged, outs, arrays)
    residual = [i for i in free if RESIDUAL.judges(inputs[i])]
    tagged = [i for i in free if not isinstance(inputs[i], tuple) and chains.tag(inputs[i]) is not None]
    out = []
    for k, o in enumerate(outs):
        kept = None
        if len(free) == 1 and residual:
            r = inputs[residual[0]]
            through = _passes_through(run_op, inst, primary, residual[0], r, k, o)
            if through is not None:
                by = f"{inst.spec.mnemonic}" if inst is not None else "op"
                kept = Expectation(o.type, o.bits, KIND, residual=_kept_record(r, inputs, residual[0], through),
                                   why="; ".join(w for w in (r.why, PASSED_THROUGH.format(op=_name(r.residual), by=by))
                                                 if w))
            elif inst is not None and not isinstance(o, tuple):
                kept = _restated(inst, r, o)
        if kept is None and len(free) == 1 and tagged and inst is not None:
            others_exact = all(chains.exact(v) for j, v in enumerate(inputs) if j != tagged[0])
            kept = chains.moved(run_op, inst, primary, tagged[0], inputs[tagged[0]], k, o, others_exact)
        out.append(kept if kept is not None else any_value(o))
    return out


def _judged_part(o) -> bool:
    """A part (re or im) of a residual-judged value, as xGEEV's wr and wi are (oracle/custom_calls.py)."""
    t = o.residual if isinstance(o, Expectation) else None
    return bool(t) and t.get("pending") == "part" and bool(t.get("judged"))


def _marked(rec: dict, operand) -> dict:
    """`rec` marked `ranged`, with `slack` (‖Â − A‖₁ per matrix) where its rules add one."""
    slack = chains.matrix_slack(operand, rec) \
        if (rec.get("op") == "cholesky" or rec.get("property") in chains.SLACKED) \
        and isinstance(operand, Expectation) else None
    return {**rec, "ranged": True, **({"slack": slack} if slack is not None else {})}


def _kept_whole(run_op, inst, primary: list, inputs: list, free: list, outs: list) -> bool:
    """Does every output keep a lone residual input whole (passed through, or moved)?  Then the property
    goes on as it is (`downstream`'s loop), not as a range."""
    if len(free) != 1:
        return False
    i = free[0]
    r = inputs[i]
    for k, o in enumerate(outs):
        if not (_passes_through(run_op, inst, primary, i, r, k, o) is not None
                or chains.moved(run_op, inst, primary, i, r, k, o) is not None):
            return False
    return True


def _name(rec: dict) -> str:
    return rec.get("op") or rec.get("property", "?")


def unstated(t, bits, why: str, tag: dict | None = None) -> Expectation:
    """Any value at every element (labelled `DOWNSTREAM`: whatever is computed
    from it is any value too), `bits` the oracle's primary value; `tag`: what
    oracle/chains.py needs to recognise the value downstream."""
    every = list(range(int(t.num_elements)))
    return Expectation(t, bits, EXACT.name, impl_defined=every,
                       alternatives=[Alternative(PRIMARY, bits), Alternative(DOWNSTREAM, None, every)],
                       why=why, residual=tag)


def pending(what: str, a, t) -> dict:
    """A tag naming the value `what` computed from operand `a` of type `t`."""
    from ..spec.types import tensor_to_hex
    return {"pending": what, "of": {"type": t.mlir, "hex": tensor_to_hex(Characterized._typed(a, t), t)}}


RESTATED_BY = "{by} of {op}'s result: the property of {op} with {words}"


def _cholesky_transposed(inst, record: dict, o: Expectation) -> tuple | None:
    """A transpose swapping the last two dimensions (batch dimensions kept)
    of a real cholesky result: Lᵀ is the upper factor of the same matrix
    (A = L·Lᵀ = Uᵀ·U with U = Lᵀ), so the result has the property of
    cholesky with `lower` flipped — on a Hermitian operand both triangles
    define the same matrix, and on any other the behaviour is undefined
    either way.  (A complex Lᵀ is not a factor: conj(Lᵀ) would be.)  What
    `jax.scipy.linalg.cholesky(lower=False)` computes after LAPACK."""
    perm = [int(d) for d in inst.attributes.get("permutation", ())]
    r = len(perm)
    if r < 2 or perm != list(range(r - 2)) + [r - 1, r - 2] or o.type.element_type.is_complex:
        return None
    lower = not record["attributes"].get("lower", False)
    return {**record, "attributes": {**record["attributes"], "lower": lower}}, f"lower = {str(lower).lower()}"


# (the op moving the elements, the residual-judged op) -> its restatement:
# (inst, record, output) -> (the record the output is judged by, words) or None
RESTATE = {("transpose", "cholesky"): _cholesky_transposed}


def _restated(inst, r: Expectation, o: Expectation) -> Expectation | None:
    """`o` (an op that moves the elements of the residual value `r`) as a
    residual expectation of its own, where RESTATE knows the move."""
    if r.residual.get("view") or "op" not in r.residual:
        return None
    rule = RESTATE.get((inst.spec.mnemonic, r.residual["op"]))
    got = rule(inst, r.residual, o) if rule is not None else None
    if got is None:
        return None
    record, words = got
    why = RESTATED_BY.format(by=inst.spec.mnemonic, op=r.residual["op"], words=words)
    return Expectation(o.type, o.bits, KIND, residual=record, why="; ".join(w for w in (r.why, why) if w))


def _primary(v):
    return tuple(_primary(m) for m in v) if isinstance(v, tuple) else v.array()

