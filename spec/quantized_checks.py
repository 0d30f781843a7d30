"""Proofs over v1.20's quantization clauses (`check-spec`): the clauses an op
states "if the operation uses quantized tensors" (add C2–C7, dot_general
C14–C20, convolution's, reshape C3, transpose C4, broadcast_in_dim C6) and
the ops that exist for quantized tensors (uniform_quantize,
uniform_dequantize), read with every number of a quantized type left to z3.

Why a reader of its own: spec/checks.py proves an op over symbolic *dims*
on skeletons of table element types, and a quantized type is in no table —
it carries numbers (scales, zero points, storage_min/max, the quantization
dimension) that the clauses constrain.  Here the structure is fixed instead
(which tensors are quantized, per-tensor or per-axis along which dimension,
storage and expressed types: `ROLE_TYPES`) on the op's declared example
(`Quantization.example`, or `BASES` where it declares none), and every
number of every quantized type is a z3 term (`spec.quantized.
symbolic_quantized_type`: integers, binary64 scales).  The constraints
evaluated on such an instance — the op's own, its quantization clauses, and
the type clauses C1–C13 of each quantized type it holds (a program holds
only well-formed types) — are formulas over those numbers, so:

  satisfiable  some structure holding a quantized tensor has a model of
               all of them (the op can be used on quantized tensors at all);
  independent  for each quantization clause Ci, some structure has a model
               of ¬Ci ∧ the others ∧ the type clauses, and that model made
               concrete (`concrete_quantized_type`) breaks Ci and nothing
               else by `OpSpec.violated` — the program an invalid case
               spells;
  redundant    no structure has one: Ci is implied by the others over the
               structures searched (reported, as spec/checks.py does).

The structures are a finite family, so "redundant" is relative to it, and
the dims are concrete; the numbers are not sampled.  Floor 1: spec and z3.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field

import z3

from .dsl import OpSpec, is_symbolic
from .quantized import (CONSTRAINTS as TYPE_CONSTRAINTS, QuantizedType, concrete_quantized_type,
                        symbolic_quantized_type)
from .types import TensorType, element_type

PROOF_TIMEOUT_MS = 20000
MAX_STRUCTURES = 4000   # role assignments per op; past it, those changing at most two roles from the first

F32, F16 = element_type("f32"), element_type("f16")
SI8, SI16 = element_type("si8"), element_type("si16")


def _matmul(spec: OpSpec):
    """dot_general as a 2×3 · 3×2 matrix product (no example is declared:
    its quantized cases come from the seed's skeletons)."""
    return spec.instance({"lhs": TensorType((2, 3), F32), "rhs": TensorType((3, 2), F32)},
                         {"lhs_batching_dimensions": (), "rhs_batching_dimensions": (),
                          "lhs_contracting_dimensions": (1,), "rhs_contracting_dimensions": (0,)},
                         {"result": TensorType((2, 2), F32)})


def _elementwise(spec: OpSpec):
    """Every operand and result a 2×3 f32 tensor (add, uniform_quantize,
    uniform_dequantize: element-wise, no attributes)."""
    t = TensorType((2, 3), F32)
    return spec.instance({o.name: t for o in spec.operands}, {}, {r.name: t for r in spec.results})


# Ops whose `Quantization` declares no example: the instance the structures are put on.
BASES = {"dot_general": _matmul}


def base_instance(spec: OpSpec):
    q = spec.quantization
    if q.example is not None:
        return q.example({}, q.bodies[0]) if q.bodies else q.example({})
    return BASES.get(spec.mnemonic, _elementwise)(spec)


def proved_ops(specs: dict) -> list[OpSpec]:
    """The ops with something to prove here: quantization clauses, clauses
    of their own that read quantized types on a declared example
    (`Quantization.type_clauses`), or a meaning of their own
    (uniform_quantize, uniform_dequantize)."""
    from .dsl.quantization import OWN
    return [s for _, s in sorted(specs.items()) if s.quantization is not None
            and (s.quantization.constraints or s.quantization.meaning == OWN
                 or (s.quantization.type_clauses and s.quantization.example is not None))]


def clauses_of(spec: OpSpec) -> list[str]:
    """The labels proved here: the quantization clauses, the op's own clauses
    that read quantized types, every clause of an op that exists for them."""
    from .dsl.quantization import OWN
    q = spec.quantization
    own = [c.__name__ for c in spec.constraints] if q.meaning == OWN else list(q.type_clauses)
    return [c.__name__ for c in q.constraints] + [l for l in own if l not in {c.__name__ for c in q.constraints}]


def _roles(inst) -> list[tuple[str, str, TensorType]]:
    """(side, name, tensor) of the float operands and results a quantized type
    may take the place of (index operands and predicates keep their types);
    a variadic one by its first member, every member taking its type."""
    def first(v):
        return v[0] if isinstance(v, list) and v else v
    out = [("operand", o.name, first(inst.operands[o.name])) for o in inst.spec.operands]
    out += [("result", r.name, first(inst.results[r.name])) for r in inst.spec.results]
    return [(s, n, t) for s, n, t in out if isinstance(t, TensorType) and t.element_type.is_float]


def role_types(spec: OpSpec, name: str, t: TensorType) -> list[tuple[str, object]]:
    """What a role may be, in the order tried: its float type, per-tensor
    quantized (i8:f32, i16:f32, i8:f16 — the storage and expressed types are
    structure, the numbers z3's), per-axis along each dimension with as many
    scales as it is long (where the op admits per-axis there)."""
    q = spec.quantization
    out: list = [("float", t.element_type)]
    if not q.admits(name):
        return out
    for st, et in ((SI8, F32), (SI16, F32), (SI8, F16)):
        out.append((f"{st.name}:{et.name}", symbolic_quantized_type(st, et, name=f"{name}_{st.name}_{et.name}")))
    if q.admits_per_axis(name):
        for d, n in enumerate(t.shape):
            if n > 0:
                out.append((f"{SI8.name}:{F32.name} along {d}",
                            symbolic_quantized_type(SI8, F32, n=n, per_axis=True, name=f"{name}_axis{d}")))
    return out


def structures(spec: OpSpec):
    """(instance, words) for each assignment of `role_types` to the example's
    roles that holds a quantized tensor: all of them up to MAX_STRUCTURES,
    else those changing at most two roles from the first quantized option."""
    base = base_instance(spec)
    roles = _roles(base)
    options = [role_types(spec, n, t) for _, n, t in roles]
    total = 1
    for o in options:
        total *= len(o)
    if total <= MAX_STRUCTURES:
        combos = itertools.product(*options)
    else:
        first = [o[1] if len(o) > 1 else o[0] for o in options]

        def near():
            for k in range(3):
                for which in itertools.combinations(range(len(roles)), k):
                    for alts in itertools.product(*[options[i] for i in which]):
                        combo = list(first)
                        for i, a in zip(which, alts):
                            combo[i] = a
                        yield tuple(combo)
        combos = dict.fromkeys(near())
    for combo in combos:
        if not any(isinstance(et, QuantizedType) for _, et in combo):
            continue
        words = ", ".join(f"{n} {w}" for (_, n, _), (w, _) in zip(roles, combo))
        yield _retyped(base, roles, [et for _, et in combo]), words
        # ... and with the first result one longer in its last dimension: the dims are concrete here, so
        # a clause on shapes (uniform_quantize's C1) is broken only by a structure that differs in them
        yield _retyped(base, roles, [et for _, et in combo], longer=True), words + ", result one longer"


def _retyped(base, roles, types, longer: bool = False):
    ops, res = dict(base.operands), dict(base.results)
    first = base.spec.results[0].name if base.spec.results else None
    for (side, name, t), et in zip(roles, types):
        table = ops if side == "operand" else res
        if isinstance(table[name], list):   # a variadic value: every member of the same shape takes the type
            table[name] = [TensorType(m.shape, et) if tuple(m.shape) == tuple(t.shape) else m for m in table[name]]
            continue
        shape = tuple(t.shape)
        if longer and side == "result" and name == first and shape:
            shape = shape[:-1] + (shape[-1] + 1,)
        table[name] = TensorType(shape, et)
    return base.spec.instance(ops, dict(base.attributes), res, dict(base.regions or {}), base.grid)


def _quantized_tensors(inst) -> list[TensorType]:
    vals = list(inst.operands.values()) + list(inst.results.values())
    vals = [m for v in vals for m in (v if isinstance(v, list) else [v])]
    return [t for t in vals if isinstance(t, TensorType) and t.element_type.is_quantized]


def _formula(c, inst):
    """A constraint on the instance as a z3 formula or bool (one that raises
    reads as violated, as `OpSpec.violated` does)."""
    try:
        e = c(inst)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
        return False
    return e if is_symbolic(e) else bool(e)


ZERO_POINTS = (0, 1, -1, 2, -2, 3, -3, 5, -5, 8, -8)
SCALES = (0.5, 0.25, 0.125, 1.0, 0.0625, 0.375, 2.0)


def _preferences(inst) -> list[tuple[object, tuple]]:
    """(z3 number, values to try in order): numbers a person would write —
    the storage type's whole range, small zero points, scales that are
    powers of two — tensor by tensor in the instance's order."""
    out = []
    for t in _quantized_tensors(inst):
        q = t.element_type
        out += [(q.storage_min, (q.storage_type.min_value,)), (q.storage_max, (q.storage_type.max_value,))]
        if is_symbolic(q.quantization_dimension):
            out.append((q.quantization_dimension, tuple(range(len(t.shape)))))
        out += [(z, ZERO_POINTS) for z in q.zero_points]
        out += [(sc, tuple(z3.FPVal(v, sc.sort()) for v in SCALES)) for sc in q.scales if isinstance(sc, z3.FPRef)]
    return [(v, prefs) for v, prefs in out if is_symbolic(v)]


def _canonical(formulas, inst):
    """The model of `formulas` with each number fixed, in `_preferences`'
    order, to the first value it can take: so the witness (which
    generators/quantized.py writes as an invalid case) is the same program
    whatever else the process asked z3 before — a model z3 picks freely
    depends on its context's history — and reads as one a person would
    write.  None where z3 cannot decide."""
    s = z3.Solver()
    s.set("timeout", PROOF_TIMEOUT_MS)
    s.add(*[f for f in formulas if f is not True])
    for var, prefs in _preferences(inst):
        for v in prefs:
            if s.check(var == v) == z3.sat:
                s.add(var == v)
                break
    return s.model() if s.check() == z3.sat else None


def _conj(es):
    if any(e is False for e in es):
        return False
    sym = [e for e in es if e is not True]
    return z3.And(sym) if sym else True


def _concrete(inst, model):
    def put(t):
        if isinstance(t, list):
            return [put(m) for m in t]
        if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return TensorType(t.shape, concrete_quantized_type(t.element_type, model))
        return t
    return inst.spec.instance({k: put(v) for k, v in inst.operands.items()}, dict(inst.attributes),
                              {k: put(v) for k, v in inst.results.items()}, dict(inst.regions or {}), inst.grid)


@dataclass
class QuantizedResult:
    op: str
    clauses: list
    structures: int = 0
    satisfiable: str | None = None                     # the first structure with a model of everything
    witnesses: dict = field(default_factory=dict)      # clause -> structure of ¬Ci ∧ others
    programs: dict = field(default_factory=dict)       # clause -> the concrete instance breaking it alone
    redundant: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    unsound: list = field(default_factory=list)        # clauses whose z3 model, made concrete, breaks others

    @property
    def ok(self) -> bool:
        return self.satisfiable is not None and not self.failures

    def to_json(self) -> dict:
        return {"op": self.op, "clauses": self.clauses, "structures": self.structures,
                "satisfiable": self.satisfiable, "independent": dict(self.witnesses),
                "redundant": list(self.redundant), "failures": list(self.failures)}


def _check(*formulas):
    s = z3.Solver()
    s.set("timeout", PROOF_TIMEOUT_MS)
    fs = [f for f in formulas if f is not True]
    if any(f is False for f in fs):
        return z3.unsat, None
    s.add(*fs)
    r = s.check()
    return r, (s.model() if r == z3.sat else None)


def prove(spec: OpSpec) -> QuantizedResult:
    """The module docstring's three checks for one op."""
    q = spec.quantization
    clauses = clauses_of(spec)
    res = QuantizedResult(spec.mnemonic, clauses)
    every = list(spec.constraints) + list(q.constraints)
    for inst, words in structures(spec):
        res.structures += 1
        types = _conj([_formula(c, t) for t in _quantized_tensors(inst) for c in TYPE_CONSTRAINTS])
        if types is False:
            continue
        exprs = {c.__name__: _formula(c, inst) for c in every}
        if res.satisfiable is None and _check(types, _conj(list(exprs.values())))[0] == z3.sat:
            res.satisfiable = words
        for label in clauses:
            if label in res.witnesses or exprs[label] is True:
                continue
            others = _conj([e for l, e in exprs.items() if l != label])
            broken = z3.Not(exprs[label]) if is_symbolic(exprs[label]) else True
            r, model = _check(types, others, broken)
            if r != z3.sat:
                continue
            model = _canonical([types, others, broken], inst) or model
            concrete = _concrete(inst, model)
            got = spec.violated(concrete)
            if got == [label]:
                res.witnesses[label] = words
                res.programs[label] = concrete
            else:
                res.failures.append(f"{label}: z3's model of ¬{label} ∧ others at ({words}) breaks {got} "
                                    f"when made concrete (the clause reads the numbers otherwise than z3 does)")
                res.witnesses[label] = words   # reported once, not again per structure
                res.unsound.append(label)
    if res.satisfiable is None:
        res.failures.append(f"no structure holding a quantized tensor satisfies every constraint "
                            f"({res.structures} structures)")
    res.redundant = [l for l in clauses if l not in res.witnesses]
    return res


@functools.lru_cache(maxsize=None)
def proved(spec: OpSpec) -> QuantizedResult:
    """`prove`, once per process (check-spec and the generators ask for the
    same op: generators/quantized.py writes an invalid case from each
    clause's concrete witness where its other streams wrote none)."""
    return prove(spec)


def run(specs: dict) -> list[QuantizedResult]:
    return [proved(s) for s in proved_ops(specs)]


def render(results: list[QuantizedResult]) -> tuple[bool, str]:
    lines = []
    for r in results:
        lines.append(f"{r.op:<28} {r.structures:>5} structures  "
                     + ("ok" if r.ok else f"{len(r.failures)} FAILED")
                     + f"  independent {len(r.witnesses) - len(r.unsound)}/{len(r.clauses)}")
        lines += [f"    {f}" for f in r.failures]
        lines += [f"    note: {l} redundant over these structures" for l in r.redundant]
    n = sum(len(r.clauses) for r in results)
    ind = sum(len(r.witnesses) - len(r.unsound) for r in results)
    ok = all(r.ok for r in results)
    lines.append(f"quantization clauses: {len(results)} ops, {n} clauses, {ind} independent, "
                 f"{sum(len(r.redundant) for r in results)} redundant, "
                 f"{sum(len(r.failures) for r in results)} failures")
    return ok, "\n".join(lines) + "\n"
