"""The oracle's program interpreter: MLIR text in, expected outputs out.

The program is parsed with jaxlib's MLIR bindings *without* the stablehlo
dialect registered: the generic form `"stablehlo.add"(%a, %b) : (…) -> …`
then parses as unregistered ops, and the official verifier never judges on
our behalf.  Every check is the encoded spec's own: the op must be in
`spec.ops.OPS`, its element types in its Inputs/Outputs tables, its
constraints (`<op>_c<N>`) satisfied and its program result types equal to the
inferred ones.  Then its semantics are executed (elementwise.py).

Supported today: one `func.func @main`, a straight-line block of stablehlo
ops in generic form, `func.return`.  (Regions and calls come with the ops
that need them.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..spec.ops import OPS
from ..spec.types import TensorType, parse_type
from .elementwise import OracleOutput, Unspecified, run_op

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
    operands: list  # SSA value keys
    results: list


@dataclass
class Program:
    args: list  # [(key, TensorType)]
    steps: list
    returns: list  # SSA value keys
    return_types: list


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
    ctx = _context()
    with ctx:
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
        block = main.regions[0].blocks[0]
        keys: dict = {}  # MLIR value -> our name for it

        def key(value):
            if value not in keys:
                raise ProgramRejected("use of a value defined outside @main's block")
            return keys[value]

        args = []
        for i, a in enumerate(block.arguments):
            keys[a] = f"arg{i}"
            args.append((f"arg{i}", _tensor_type(a.type)))
        steps, returns, return_types = [], None, []
        for n, op in enumerate(block.operations):
            op = op.operation
            operand_keys = [key(o) for o in op.operands]
            if op.name in ("func.return", "stablehlo.return"):
                returns = operand_keys
                return_types = [_tensor_type(o.type) for o in op.operands]
                break
            result_keys = []
            for j, r in enumerate(op.results):
                keys[r] = f"op{n}.{j}"
                result_keys.append(f"op{n}.{j}")
            steps.append(Step(_instance(op), operand_keys, result_keys))
        if returns is None:
            raise ProgramRejected("@main has no func.return")
        # The func dialect's verifier (registered) already tied these to @main's signature.
        return Program(args, steps, returns, return_types)


def _tensor_type(t) -> TensorType:
    try:
        tt = parse_type(str(t))
    except ValueError as e:
        raise ProgramRejected(str(e)) from None
    if not isinstance(tt, TensorType):
        raise ProgramRejected(f"type {t} is not supported by the oracle yet")
    return tt


def _split(decl: tuple, values: list, what: str, mnemonic: str) -> dict:
    """Assign the op's actual operands/results to the spec's named slots; one
    variadic slot takes whatever the fixed ones leave."""
    fixed = [d for d in decl if not d.variadic]
    if len(fixed) == len(decl):
        if len(values) != len(decl):
            raise ProgramRejected(f"{mnemonic}: {len(values)} {what} where the spec has {len(decl)}")
        return {d.name: v for d, v in zip(decl, values)}
    if len(decl) - len(fixed) > 1 or len(values) < len(fixed):
        raise ProgramRejected(f"{mnemonic}: cannot match {len(values)} {what} to the spec's")
    out, i = {}, 0
    for d in decl:
        if d.variadic:
            k = len(values) - len(fixed)
            out[d.name] = list(values[i:i + k])
            i += k
        else:
            out[d.name] = values[i]
            i += 1
    return out


def _instance(op):
    name = op.name
    if not name.startswith("stablehlo."):
        raise ProgramRejected(f"op {name} not in the encoded spec")
    mnemonic = name[len("stablehlo."):]
    spec = OPS.get(mnemonic)
    if spec is None:
        raise ProgramRejected(f"op {name} not in the encoded spec")
    operands = _split(spec.operands, [_tensor_type(o.type) for o in op.operands], "operands", mnemonic)
    results = _split(spec.results, [_tensor_type(r.type) for r in op.results], "results", mnemonic)
    attrs, present = {}, {}
    for i in range(len(op.attributes)):
        na = op.attributes[i]
        present[na.name] = str(na.attr)
    for a in spec.attributes:
        if a.name in present:
            try:
                attrs[a.name] = a.kind.from_mlir(present[a.name])
            except (ValueError, IndexError) as e:
                raise ProgramRejected(f"{mnemonic}: attribute {a.name}: {e}") from None
        elif not a.optional and a.default is None:
            raise ProgramRejected(f"{mnemonic}: missing attribute {a.name}")
    unknown = sorted(set(present) - {a.name for a in spec.attributes})
    if unknown:
        raise ProgramRejected(f"{mnemonic}: unknown attribute(s) {', '.join(unknown)}")
    inst = spec.instance(operands, attrs, results)
    bad = spec.operand_types_ok(inst)
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
    return inst


def _doc(spec, label: str) -> str:
    doc = (spec.constraint(label).__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def execute(program: Program, inputs: Sequence[np.ndarray]) -> list[OracleOutput]:
    """Run @main on concrete inputs: one OracleOutput per returned value.
    Raises `Unspecified` where the spec states no result we could expect."""
    if len(inputs) != len(program.args):
        raise ValueError(f"@main takes {len(program.args)} inputs, {len(inputs)} given")
    env: dict = {}
    for (k, t), a in zip(program.args, inputs):
        a = np.asarray(a)
        if tuple(a.shape) != tuple(t.shape):
            raise ValueError(f"input {k}: shape {a.shape} where {t.mlir} was declared")
        env[k] = OracleOutput(t, _bits_of(a, t), bit_exact=True)
    # Each op consumes the primary values of the ops before it: the
    # alternatives and tolerances of an intermediate result do not propagate.
    for step in program.steps:
        arrays = [env[k].array() for k in step.operands]
        outs = run_op(step.inst, arrays)
        for k, o in zip(step.results, outs):
            env[k] = o
    return [env[k] for k in program.returns]


def _bits_of(a: np.ndarray, t: TensorType) -> np.ndarray:
    from ..spec.types import to_bits
    return to_bits(a.astype(t.element_type.numpy, copy=False), t.element_type)
