"""The oracle's program interpreter: MLIR text in, expected outputs out.

The program is parsed with jaxlib's MLIR bindings *without* the stablehlo
dialect registered: the generic form `"stablehlo.add"(%a, %b) : (…) -> …`
then parses as unregistered ops, and the official verifier never judges on
our behalf.  Every check is the encoded spec's own: the op must be in
`spec.ops.OPS`, its element types in its Inputs/Outputs tables, its
constraints (`<op>_c<N>`) satisfied and its program result types equal to the
inferred ones.  Then its semantics are executed (elementwise.py).

What a program may hold:
* one `func.func @main` with tensor arguments, a straight-line block of
  stablehlo ops in generic form, `func.return`;
* regions (scatter's `update_computation`, …): the single block of each is
  read the same way (its arguments are the region's inputs, its
  `stablehlo.return` operands its outputs) into a `spec.dsl.Function` whose
  `call` runs it — before the op's constraints are checked, since they read
  its types.  A region may not use values defined outside its block;
* attributes, read from the op's printed text (`literals.op_attributes`:
  the bindings cannot hand out every attribute): grouped ones
  (`OpSpec.groups`) from their `#stablehlo.x<…>` attribute, 1-D si64
  arrays as `array<i64: …>` or as the seed's `dense<[…]> : tensor<Nxi64>`;
  an operand declared `constant` (constant's `value`) is the attribute of
  its name, a dense literal read exactly (literals.py);
* tuples: values inside a block may be tuples (`tuple`,
  `get_tuple_element`), held as Python tuples of their members' values.
  When @main returns a tuple, the program's outputs are its tensors in
  order, depth first (`((a, b), c)` gives a, b, c) — generators and
  backends count outputs this way.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..spec.dsl import Function, I64ArrayAttr
from ..spec.ops import OPS
from ..spec.expectation import Expectation
from ..spec.types import SI64, TensorType, TupleType, parse_type, to_bits
from .elementwise import Unspecified, run_op
from .literals import op_attributes, parse_dense

__all__ = ["ProgramRejected", "Unspecified", "Program", "parse_program", "execute"]


class ProgramRejected(Exception):
    """The program is not a valid StableHLO program under the encoded spec.
    `constraint` names the violated rule (e.g. "add_c1") when there is one."""

    def __init__(self, message: str, constraint: str | None = None):
        super().__init__(message)
        self.constraint = constraint


@dataclass
class Step:
    inst: object  # spec.dsl.Instance
    operands: list  # value keys in the spec's operand order (variadic members flattened)
    results: list


@dataclass
class Program:
    """One block: @main's body, or a region's."""

    args: list  # [(key, TensorType)]
    steps: list
    returns: list  # value keys
    return_types: list
    constants: dict = field(default_factory=dict)  # key -> Expectation of a `constant` operand


_CTX = None


def _context():
    """One MLIR context with the upstream dialects (func, …) and no stablehlo."""
    global _CTX
    if _CTX is None:
        from jax._src.interpreters import mlir as jm
        from jaxlib.mlir import ir
        ctx = ir.Context()
        ctx.append_dialect_registry(jm.upstream_dialects)
        ctx.load_all_available_dialects()
        ctx.allow_unregistered_dialects = True
        _CTX = ctx
    return _CTX


def parse_program(text: str) -> Program:
    """Parse and check a module; raise ProgramRejected naming the first problem."""
    from jaxlib.mlir import ir
    with _context():
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # MLIRError: a syntax error is a rejection
            raise ProgramRejected("parse error: " + " ".join(str(e).split())[:400]) from None
        main = None
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and str(op.attributes["sym_name"]).strip('"') == "main":
                main = op
        if main is None:
            raise ProgramRejected("no func.func @main")
        # The func dialect's verifier (registered) already tied the return to @main's signature.
        return _block(main.regions[0].blocks[0], "@main")


def _block(block, where: str) -> Program:
    """A block's arguments, ops (each checked against the spec) and returned values."""
    keys: dict = {}  # MLIR value -> our name for it

    def key(value):
        if value not in keys:
            raise ProgramRejected(f"{where}: use of a value defined outside its block")
        return keys[value]

    args = []
    for i, a in enumerate(block.arguments):
        t = _value_type(a.type)
        if not isinstance(t, TensorType):
            raise ProgramRejected(f"{where}: argument {i} has type {t}; the oracle takes tensors")
        keys[a] = f"arg{i}"
        args.append((f"arg{i}", t))
    steps, constants = [], {}
    for n, op in enumerate(block.operations):
        op = op.operation
        actual = [key(o) for o in op.operands]
        if op.name in ("func.return", "stablehlo.return"):
            return Program(args, steps, actual, [_value_type(o.type) for o in op.operands], constants)
        inst, consts = _instance(op)
        operand_keys, rest = [], iter(actual)
        for o in inst.spec.operands:
            if o.constant:
                constants[f"op{n}.{o.name}"] = consts[o.name]
                operand_keys.append(f"op{n}.{o.name}")
            else:
                v = inst.operands[o.name]
                operand_keys += [next(rest) for _ in (v if o.variadic else [v])]
        result_keys = []
        for j, r in enumerate(op.results):
            keys[r] = f"op{n}.{j}"
            result_keys.append(f"op{n}.{j}")
        steps.append(Step(inst, operand_keys, result_keys))
    raise ProgramRejected(f"{where} has no return")


def _value_type(t):
    """A tensor type, or a tuple of them (nested): the values the oracle holds."""
    try:
        vt = parse_type(str(t))
    except ValueError as e:
        raise ProgramRejected(str(e)) from None
    if not _held(vt):
        raise ProgramRejected(f"type {t} is not supported by the oracle yet")
    return vt


def _held(vt) -> bool:
    return isinstance(vt, TensorType) or (isinstance(vt, TupleType) and all(_held(m) for m in vt.types))


def _split(decl: list, values: list, what: str, mnemonic: str) -> dict:
    """Assign the op's actual operands/results to the spec's named slots: the
    variadic slots share what the fixed ones leave, equally when there are
    several (MLIR's SameVariadicOperandSize: scatter's `inputs`/`updates`)."""
    n_var = sum(d.variadic for d in decl)
    n_fixed = len(decl) - n_var
    k, rem = divmod(len(values) - n_fixed, n_var) if n_var else (0, len(values) - n_fixed)
    if rem or k < 0:
        raise ProgramRejected(f"{mnemonic}: cannot match {len(values)} {what} to the spec's {len(decl)}")
    out, i = {}, 0
    for d in decl:
        if d.variadic:
            out[d.name] = list(values[i:i + k])
            i += k
        else:
            out[d.name] = values[i]
            i += 1
    return out


def _instance(op):
    """The op as a checked `Instance`, and its `constant` operands' values by name."""
    name = op.name
    spec = OPS.get(name[len("stablehlo."):]) if name.startswith("stablehlo.") else None
    if spec is None:
        raise ProgramRejected(f"op {name} not in the encoded spec")
    mnemonic = spec.mnemonic
    present = op_attributes(op.get_asm(print_generic_op_form=True, skip_regions=True,
                                       use_local_scope=True, assume_verified=True), name)
    operands = _split([o for o in spec.operands if not o.constant],
                      [_value_type(o.type) for o in op.operands], "operands", mnemonic)
    constants = {}
    for o in spec.operands:
        if o.constant:
            if o.name not in present:
                raise ProgramRejected(f"{mnemonic}: missing attribute {o.name}")
            try:
                array, t = parse_dense(present.pop(o.name))
            except ValueError as e:
                raise ProgramRejected(f"{mnemonic}: attribute {o.name}: {e}") from None
            operands[o.name] = t
            constants[o.name] = Expectation(t, to_bits(array, t.element_type), bit_exact=True)
    operands = {o.name: operands[o.name] for o in spec.operands}
    results = _split(spec.results, [_value_type(r.type) for r in op.results], "results", mnemonic)
    attrs = _attributes(spec, present, mnemonic)
    inst = spec.instance(operands, attrs, results, _regions(op, spec))
    bad = spec.types_outside_tables(inst)
    if bad:
        raise ProgramRejected(f"{mnemonic}: element type of {', '.join(bad)} is not allowed by the spec")
    violated = spec.violated(inst)
    if violated:
        raise ProgramRejected(f"{mnemonic}: violates {violated[0]}: {_doc(spec, violated[0])}", violated[0])
    try:
        inferred = spec.infer(inst)
    except Exception as e:  # inference undefined for this instance: not a valid program
        raise ProgramRejected(f"{mnemonic}: type inference fails: {e}") from None
    for r in spec.results:
        want, got = inferred.get(r.name), results[r.name]
        if want is not None and want != got:
            raise ProgramRejected(f"{mnemonic}: result {r.name} has type {got} where the spec infers {want}")
    return inst, constants


def _attributes(spec, present: dict, mnemonic: str) -> dict:
    """The spec's attributes from {name: text}; grouped ones from their group."""
    attrs, grouped = {}, {}
    for g in spec.groups:
        kinds = {a.name: a.kind for a in spec.attributes if a.group == g.mlir_name}
        if g.mlir_name in present:
            try:
                grouped.update(g.from_mlir(present.pop(g.mlir_name), kinds))
            except (ValueError, IndexError) as e:
                raise ProgramRejected(f"{mnemonic}: attribute {g.mlir_name}: {e}") from None
    for a in spec.attributes:
        if a.group is not None:
            if a.name in grouped:
                attrs[a.name] = grouped[a.name]
            elif isinstance(a.kind, I64ArrayAttr):
                attrs[a.name] = ()  # the printer leaves empty lists out of a group
            elif not a.optional and a.default is None:
                raise ProgramRejected(f"{mnemonic}: missing {a.name} in attribute {a.group}")
        elif a.name in present:
            attrs[a.name] = _attribute(a, present.pop(a.name), mnemonic)
        elif not a.optional and a.default is None:
            raise ProgramRejected(f"{mnemonic}: missing attribute {a.name}")
    if present:
        raise ProgramRejected(f"{mnemonic}: unknown attribute(s) {', '.join(sorted(present))}")
    return attrs


def _attribute(a, text: str, mnemonic: str):
    try:
        if isinstance(a.kind, I64ArrayAttr) and text.startswith("dense<"):
            # The seed's spelling: a 1-D si64 tensor constant (splats included).
            array, t = parse_dense(text)
            if t.rank != 1 or t.element_type != SI64:
                raise ValueError(f"{t} is not a 1-dimensional tensor of si64")
            return tuple(int(x) for x in array)
        return a.kind.from_mlir(text)
    except (ValueError, IndexError) as e:
        raise ProgramRejected(f"{mnemonic}: attribute {a.name}: {e}") from None


def _regions(op, spec) -> dict:
    """{region name: Function} for the op's regions, in the spec's order."""
    mnemonic = spec.mnemonic
    if len(op.regions) != len(spec.regions):
        raise ProgramRejected(f"{mnemonic}: {len(op.regions)} regions where the spec has {len(spec.regions)}")
    out = {}
    for g, region in zip(spec.regions, op.regions):
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise ProgramRejected(f"{mnemonic}: region {g.name} has {len(blocks)} blocks; one is expected")
        body = _block(blocks[0], f"{mnemonic} region {g.name}")
        out[g.name] = Function(tuple(t for _, t in body.args), tuple(body.return_types),
                               call=_caller(body))
    return out


def _caller(body: Program):
    """`call(*arrays) -> [arrays]`: the region executed on rank-0 (or any) arrays."""
    def call(*arrays):
        return [o.array() for o in execute(body, arrays)]
    return call


def _doc(spec, label: str) -> str:
    doc = (spec.constraint(label).__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def execute(program: Program, inputs: Sequence[np.ndarray]) -> list[Expectation]:
    """Run @main (or a region's block) on concrete inputs: one Expectation
    per returned tensor (a returned tuple gives its tensors, depth first).
    Raises `Unspecified` where the spec states no result we could expect."""
    if len(inputs) != len(program.args):
        raise ValueError(f"the block takes {len(program.args)} inputs, {len(inputs)} given")
    env: dict = dict(program.constants)
    for (k, t), a in zip(program.args, inputs):
        a = np.asarray(a)
        if tuple(a.shape) != tuple(t.shape):
            raise ValueError(f"input {k}: shape {a.shape} where {t.mlir} was declared")
        env[k] = Expectation(t, to_bits(a.astype(t.element_type.numpy, copy=False), t.element_type),
                              bit_exact=True)
    # Each op consumes the primary values of the ops before it: the
    # alternatives and tolerances of an intermediate result do not propagate.
    for step in program.steps:
        outs = run_op(step.inst, [_arrays(env[k]) for k in step.operands])
        for k, o in zip(step.results, outs):
            env[k] = o
    return [leaf for k in program.returns for leaf in _leaves(env[k])]


def _arrays(v):
    """A value's primary arrays: an array, or a tuple of them (nested)."""
    return tuple(_arrays(m) for m in v) if isinstance(v, tuple) else v.array()


def _leaves(v) -> list:
    return [leaf for m in v for leaf in _leaves(m)] if isinstance(v, tuple) else [v]
