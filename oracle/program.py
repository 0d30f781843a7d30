"""The oracle's program interpreter: a program in, expected outputs out.

The program is parsed with jaxlib's MLIR bindings *without* the stablehlo
dialect registered: the generic form `"stablehlo.add"(%a, %b) : (…) -> …`
then parses as unregistered ops, and the official verifier never judges on
our behalf.  Programs in other syntaxes — the pretty form JAX prints,
bytecode, portable artifacts — are first read into the generic form by
reading.py.  Every check is the encoded spec's own: the op must be in
`spec.ops.OPS`, its element types in its Inputs/Outputs tables, its
constraints (`<op>_c<N>`) satisfied and its program result types equal to the
inferred ones.  Then its semantics are executed (elementwise.py).

What a program may hold:
* a module with any attributes (`mhlo.num_replicas`, …) and locations,
  holding `func.func @main` (or a single function) with tensor arguments, a
  straight-line block of stablehlo ops, `func.return`;
* other functions of the module, called with `func.call` (JAX emits these
  for `jnp` helpers): each is read once and run like @main's block;
  recursion is refused;
* regions (scatter's `update_computation`, …): the single block of each is
  read the same way (its arguments are the region's inputs, its
  `stablehlo.return` operands its outputs) into a `spec.dsl.Function` whose
  `call` runs it on primary arrays and whose `expect` runs it on whole
  values (control flow: `spec.dsl.ControlFlow`) — before the op's
  constraints are checked, since they read its types.  A region may use
  values of the blocks around it (captures, bound when the op runs); a
  variadic region (case's branches) is a list of them;
* attributes, read from the op's printed text (`literals.op_attributes`:
  the bindings cannot hand out every attribute): grouped ones
  (`OpSpec.groups`) from their `#stablehlo.x<…>` attribute — whose printer
  leaves out fields holding their default (empty lists, integers equal to
  0), read as that default — 1-D si64 arrays as `array<i64: …>` or as the
  seed's `dense<[…]> : tensor<Nxi64>`; an attribute the program leaves out
  takes the op's declared default; discardable attributes of other dialects
  (`mhlo.sharding`, `jax.…`: a dotted name) carry no StableHLO semantics
  and are ignored;
  an operand declared `constant` (constant's `value`) is the attribute of
  its name, a dense literal read exactly (literals.py);
* tuples: values inside a block may be tuples (`tuple`,
  `get_tuple_element`), held as Python tuples of their members' values.
  When @main returns a tuple, the program's outputs are its tensors in
  order, depth first (`((a, b), c)` gives a, b, c) — generators and
  backends count outputs this way;
* tokens: values of the token ops (after_all, infeed, outfeed, send, recv),
  which run through the host model (host.py: queues, log, token order);
  @main takes none, and a token it returns is no output;
* CHLO ops (JAX's `chlo.erf`, `chlo.lgamma`, `chlo.square`, `chlo.top_k` …):
  those spec/chlo declares, for the element types it declares them for, are
  read like StableHLO ops — checked by their constraints and executed by
  their declared semantics: the mathematical function, rounded correctly,
  with the ULP tolerance of an approximate op (DESIGN.md: "CHLO ops are
  mathematics"); top_k as data movement, ragged_dot as dot_general's
  accumulation per group, mulhi as exact integer arithmetic — and listed
  in `Program.chlo_judged`.  (One such op that jaxlib's verifier refuses
  is judged alone by spec/chlo's constraints, as a StableHLO op is:
  `_our_verdict`.)  Every other CHLO op
  is rewritten into StableHLO by jaxlib's chlo-legalize-to-stablehlo before
  anything is checked (reading.py) and listed in `Program.legalized`, so
  that what is judged is said; an op the pass does not decompose is
  `CannotJudge`.  A program that arrives legalized (jax.export's artifact
  holds no CHLO) is judged as written.

The walk is whole-array: each op runs once on its operands' arrays (and
once per corner of ranged operands, propagation.py); a value's array is
decoded from its bits once per op that reads it, not per element.
"""
from __future__ import annotations

import contextvars
import re
import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..spec.dsl import ControlFlow, Function, I64ArrayAttr, IntAttr, LoopLimit
from ..spec.chlo import CHLO, declared as chlo_declared
from ..spec.ops import OPS
from ..spec.expectation import Expectation
from ..spec.grid import SINGLE as SINGLE_GRID, Grid
from ..spec.types import SI64, TensorType, TokenType, TupleType, parse_type, to_bits
from .elementwise import Unspecified
from .grid import GridProcess, single_process
from .host import Token, running
from .literals import op_attributes, parse_dense, parse_elements
from . import affine
from .propagation import carry, payloads
from .custom_calls import read_as_op
from .semantics import Context, on_values, run_arrays, run_values, works_on_values
from .reading import CHLO_PASS, MLIR_BYTECODE_MAGIC, ChloNotDecomposed, SyntaxRejected, VerifierRejected, chlo_ops, \
    from_bytecode, isolated_program, read_registered, unregistered_context

__all__ = ["ProgramRejected", "CannotJudge", "Unspecified", "Program", "parse_program", "execute"]


class ProgramRejected(Exception):
    """The program is not a valid StableHLO program under the encoded spec.
    `constraint` names the violated rule (e.g. "add_c1") when there is one."""

    def __init__(self, message: str, constraint: str | None = None):
        super().__init__(message)
        self.constraint = constraint


class CannotJudge(ProgramRejected):
    """The program holds an op outside StableHLO that cannot be brought into
    it (a CHLO op jaxlib does not decompose): not a verdict on the program's
    validity — the oracle has nothing to judge.  `op` names it."""

    def __init__(self, op: str, message: str):
        super().__init__(message)
        self.op = op


@dataclass
class Step:
    inst: object  # spec.dsl.Instance (None for a call)
    operands: list  # value keys in the spec's operand order (variadic members flattened)
    results: list
    call: "Program | None" = None   # func.call: the callee's body
    regions: list = field(default_factory=list)   # the op's region bodies (Programs), to bind their captures


@dataclass
class Program:
    """One block: @main's body, or a region's."""

    args: list  # [(key, TensorType)]
    steps: list
    returns: list  # value keys
    return_types: list
    constants: dict = field(default_factory=dict)  # key -> Expectation of a `constant` operand
    captures: dict = field(default_factory=dict)   # key here -> key in the enclosing block
    legalized: dict = field(default_factory=dict)  # the entry's: CHLO ops decomposed before judging {name: count}
    chlo_judged: dict = field(default_factory=dict)  # the entry's: CHLO ops judged by their meaning (spec/chlo)
    grid: Grid | None = None         # the entry's: the grid it was checked for (parse_program)
    module_grid: Grid | None = None  # the entry's: the grid its module's attributes state, if any
    manual: dict | None = None       # the entry's: the mesh of the sdy.manual_computation it is the body of
    _bound: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def bound(self) -> dict:
        """key here -> the captured value, while the op runs.  Per process
        of a grid run (oracle/grid.py): the processes share one Program, and
        one may wait at a collective inside a region while another binds
        the same region's captures."""
        per = getattr(_PER_PROCESS, "bound", None)
        return self._bound if per is None else per.get(id(self), {})

    @bound.setter
    def bound(self, value: dict) -> None:
        per = getattr(_PER_PROCESS, "bound", None)
        if per is None:
            self._bound = value
        else:
            per[id(self)] = value


_PER_PROCESS = threading.local()   # `bound` of a grid process's thread (set by `execute` with a process)


_context = unregistered_context


def parse_program(source: str | bytes, grid: Grid | None = None) -> Program:
    """Parse and check a module in any StableHLO syntax (text in generic or
    pretty form, MLIR bytecode, a portable artifact); raise ProgramRejected
    naming the first problem.  CHLO ops that spec/chlo declares are read
    as ops and listed in the program's `chlo_judged`; the others are
    legalized into StableHLO first (reading.legalize_chlo) and listed in
    its `legalized`; one that does not decompose raises CannotJudge,
    naming it.

    The process grid the program is checked for (the collectives'
    constraints and type inference read it: `Instance.grid`) is the
    module's `mhlo.num_replicas` × `mhlo.num_partitions` where it states
    them (a missing one is 1), else `grid`, else 1×1; a module that states
    another grid than `grid` is rejected.  The program keeps it (`grid`)
    and what the module said (`module_grid`, None when it says nothing)."""
    module, legalized, judged = _module(source)
    with _context():
        stated = _module_grid(module)
        if stated is not None and grid is not None and stated != grid:
            raise ProgramRejected(f"the module states a {stated} grid (mhlo.num_replicas × mhlo.num_partitions); "
                                  f"it is run on a {grid} grid")
        grid = stated or grid or SINGLE_GRID
        funcs = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                funcs[str(op.attributes["sym_name"]).strip('"')] = op
        entry = "main" if "main" in funcs else (next(iter(funcs)) if len(funcs) == 1 else None)
        if entry is None:
            raise ProgramRejected("no func.func @main" + (f" (functions: {', '.join(sorted(funcs))})" if funcs else ""))
        # The func dialect's verifier (registered) already tied returns and calls to signatures.
        functions = _Functions(funcs, grid)
        manual = _manual_computation(module, funcs[entry], grid)
        gspmd = _gspmd_manual(funcs[entry], grid) if manual is None else None
        if manual is not None:   # a JAX shard_map / pmap program: each process runs the body on its shards
            op, mesh = manual
            program = _block(op.regions[0].blocks[0], f"@{entry}'s sdy.manual_computation", functions)
            program.manual = mesh
        elif gspmd is not None:   # the same, as GSPMD writes it (Shardy off): a call between sharding custom_calls
            program = functions.body(gspmd, f"@{entry}'s manual call")
            program.manual = {"devices": grid.size}
        else:
            program = functions.body(entry, "the entry point")
    program.legalized, program.chlo_judged = legalized, judged
    program.grid, program.module_grid = grid, stated
    return program


GRID_ATTRIBUTES = ("mhlo.num_replicas", "mhlo.num_partitions")
_MESH = re.compile(r'"(\w+)"\s*=\s*(\d+)')


def _target(op) -> str | None:
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return str(op.attributes["call_target_name"]).strip('"')


def _gspmd_manual(func, grid: Grid) -> str | None:
    """The callee that each process runs, when the entry is what JAX writes
    for `shard_map` with GSPMD (Shardy off): per argument `Sharding` then
    `SPMDFullToShardShape` (sharding `{manual}`), one call of the body on
    the shards, per result `Sharding` then `SPMDShardToFullShape`, return —
    the GSPMD spelling of `_manual_computation`'s case; else None.  A
    sharding other than fully manual is CannotJudge."""
    ops = [o.operation for o in func.regions[0].blocks[0].operations]
    if not any(_target(o) == "SPMDFullToShardShape" for o in ops):
        return None
    args = list(func.regions[0].blocks[0].arguments)

    def refuse(why: str):
        return CannotJudge("custom_call", f"@main's GSPMD sharding custom_calls: {why}; the oracle runs such a "
                                          "program only when it is one manual call of the body on every process's "
                                          "shards (what shard_map writes)")
    n = len(args)
    if len(ops) < 2 * n + 2 or ops[2 * n].name not in ("func.call", CALL) or ops[-1].name != "func.return":
        raise refuse("not a call of one body between them")
    call = ops[2 * n]
    shards = []
    for k in range(n):
        s, f = ops[2 * k], ops[2 * k + 1]
        if (_target(s), _target(f)) != ("Sharding", "SPMDFullToShardShape") or list(s.operands) != [args[k]] or \
                list(f.operands) != list(s.results):
            raise refuse(f"argument {k} does not go through Sharding and SPMDFullToShardShape")
        if str(f.attributes["mhlo.sharding"]).strip('"') != "{manual}":
            raise refuse(f"argument {k} is not fully manual ({f.attributes['mhlo.sharding']})")
        shards.append(f.result)
    if list(call.operands) != shards:
        raise refuse("the body is not called on the shards in order")
    tail, results = ops[2 * n + 1:-1], list(call.results)
    if len(tail) != 2 * len(results):
        raise refuse("the body's results do not each go through Sharding and SPMDShardToFullShape")
    outs = []
    for j, r in enumerate(results):
        s, f = tail[2 * j], tail[2 * j + 1]
        if (_target(s), _target(f)) != ("Sharding", "SPMDShardToFullShape") or list(s.operands) != [r] or \
                list(f.operands) != list(s.results):
            raise refuse(f"result {j} does not go through Sharding and SPMDShardToFullShape")
        outs.append(f.result)
    if list(ops[-1].operands) != outs:
        raise refuse("@main does not return the body's results in order")
    return str(call.attributes["callee"]).lstrip("@").strip('"')


def _manual_computation(module, func, grid: Grid):
    """(the op, {mesh axis: size}) when the entry's body is one Shardy
    manual computation over every axis of its mesh — what JAX lowers
    `shard_map` and `pmap` to: @main's arguments handed to
    `sdy.manual_computation` in order, its results returned in order — else
    None.  Then every process runs the computation's body on its own
    shards (`in_shardings` say how the global arrays split; the program a
    process runs sees only its shard), so the program the oracle runs per
    process is that body: its arguments and results are the per-device
    buffers, as XLA's partitioned executable takes and gives them.  A
    computation manual over only some axes leaves the rest to the SPMD
    partitioner (no StableHLO semantics): CannotJudge."""
    ops = [o.operation for o in func.regions[0].blocks[0].operations]
    if not ops or ops[0].name != "sdy.manual_computation":
        return None
    op = ops[0]
    args = list(func.regions[0].blocks[0].arguments)
    if len(ops) != 2 or ops[1].name != "func.return" or list(op.operands) != args or \
            list(ops[1].operands) != list(op.results):
        raise CannotJudge("sdy.manual_computation", "@main does more than hand its arguments to one "
                          "sdy.manual_computation and return its results: the oracle runs such a program only "
                          "as that computation's body on every process")
    mesh = {}
    for m in module.body.operations:
        m = m.operation
        if m.name == "sdy.mesh":
            mesh = {name: int(size) for name, size in _MESH.findall(str(m.attributes["mesh"]))}
    manual = set(re.findall(r'"(\w+)"', str(op.attributes["manual_axes"]))) if "manual_axes" in op.attributes \
        else set()
    partly = sorted(set(mesh) - manual)
    if partly:
        raise CannotJudge("sdy.manual_computation", f"the manual computation leaves mesh axes {', '.join(partly)} "
                          "to the SPMD partitioner: no StableHLO semantics states what each process runs")
    size = 1
    for n in mesh.values():
        size *= n
    if size != grid.size:
        raise ProgramRejected(f"the mesh {mesh} has {size} devices; the program runs on a {grid} grid "
                              f"({grid.size} processes)")
    return op, mesh


def _module_grid(module) -> Grid | None:
    """The grid a module's attributes state (`mhlo.num_replicas`,
    `mhlo.num_partitions`, as JAX and XLA write them: `8 : i32`), or None."""
    attrs = module.operation.attributes
    sizes = {}
    for name in GRID_ATTRIBUTES:
        if name in attrs:
            text = str(attrs[name]).split(":")[0].strip()
            try:
                sizes[name] = int(text)
            except ValueError:
                raise ProgramRejected(f"module attribute {name} = {attrs[name]} is not an integer") from None
    if not sizes:
        return None
    try:
        return Grid(sizes.get("mhlo.num_replicas", 1), sizes.get("mhlo.num_partitions", 1))
    except ValueError as e:
        raise ProgramRejected(f"module attributes: {e}") from None


def _module(source: str | bytes):
    """(the module in the oracle's own context (stablehlo unregistered), the
    CHLO ops legalized on the way, the CHLO ops left in it to be judged by
    their declared meaning: each {name: count})."""
    from jaxlib.mlir import ir
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
        if not data.startswith(MLIR_BYTECODE_MAGIC):
            try:
                source = data.decode()
            except UnicodeDecodeError:
                raise ProgramRejected("neither MLIR text nor MLIR bytecode") from None
        else:
            try:
                source = from_bytecode(data)
            except SyntaxRejected as e:
                raise ProgramRejected(f"parse error: {e}") from None
    with _context():
        try:
            module = ir.Module.parse(source)
        except Exception:  # MLIRError: not generic form (or not a program at all)
            module = None
        if module is not None and not chlo_ops(module):
            return module, {}, {}
        if module is not None and _ISOLATED_REFUSAL.get():
            # the one op jaxlib's verifier refused (`_our_verdict`), read as written for our constraints
            return module, {}, chlo_ops(module)
    try:
        read = read_registered(source, keep=_judged_as_declared)   # pretty form, or CHLO to legalize
    except SyntaxRejected as e:
        raise ProgramRejected(f"parse error: {e}") from None
    except VerifierRejected as e:
        raise _our_verdict(e) from None
    except ChloNotDecomposed as e:
        raise CannotJudge(e.op, f"cannot judge {e.op}: a CHLO op, no StableHLO op, and jaxlib's {CHLO_PASS} "
                                f"does not decompose it here ({e.message})") from None
    # A func.call inside a region of an unregistered op (JAX's `jnp.where` in a
    # reduction body) cannot find its callee: MLIR stops the symbol lookup at
    # the unregistered op, which might be a symbol table.  Spelled as an op of
    # our own, the call is resolved by the reader instead.
    with _context():
        return ir.Module.parse(read.generic.replace('"func.call"(', f'"{CALL}"(')), read.legalized, read.kept


def _judged_as_declared(op) -> bool:
    """Does spec/chlo declare this CHLO op (an MLIR operation) for its
    operand and result element types?  Then it stays in the program and is
    judged by its meaning; otherwise jaxlib's pass legalizes it."""
    try:
        ins = [parse_type(str(o.type)) for o in op.operands]
        outs = [parse_type(str(r.type)) for r in op.results]
    except ValueError:
        return False
    if not all(isinstance(t, TensorType) for t in ins + outs):
        return False
    return chlo_declared(op.name, [t.element_type for t in ins], [t.element_type for t in outs]) is not None


def _our_verdict(e: VerifierRejected) -> ProgramRejected:
    """The official verifier refused a pretty-form program (which jaxlib
    cannot read without it): judge the refused op alone by our constraints."""
    isolated = isolated_program(e.op_text) if e.op_text else None
    if isolated is not None:
        token = _ISOLATED_REFUSAL.set(True)
        try:
            parse_program(isolated)
        except ProgramRejected as ours:
            return ProgramRejected(f"{ours} (jaxlib's verifier refuses it too: {e.message})", ours.constraint)
        finally:
            _ISOLATED_REFUSAL.reset(token)
        return ProgramRejected(f"jaxlib's verifier refuses an op the encoded spec accepts — a disagreement "
                               f"to examine; the pretty form cannot be read past the verifier: {e.message}")
    return ProgramRejected(f"jaxlib's verifier refuses the program: {e.message}")


# Set while `_our_verdict` reads the one op jaxlib's verifier refused: a CHLO op in it is read as written
# (generic form, the oracle's own context) and judged by spec/chlo's constraints, not handed to jaxlib's
# verifier again — which refused it, and would send the reader round the same verdict without end.
_ISOLATED_REFUSAL: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_isolated_refusal", default=False)

CALL = "shlo_conform.call"   # func.call, as the reader spells it inside regions (see `_module`)


class _Functions:
    """The functions of one module, each read once when first needed."""

    def __init__(self, funcs: dict, grid: Grid | None = None):
        self.funcs = funcs
        self.grid = grid or SINGLE_GRID   # what the ops' instances are checked for (parse_program)
        self.read: dict = {}
        self.reading: list = []

    def body(self, name: str, where: str) -> Program:
        if name in self.read:
            return self.read[name]
        if name not in self.funcs:
            raise ProgramRejected(f"{where}: no function @{name} in the module")
        if name in self.reading:
            raise ProgramRejected(f"@{name} calls itself (through {' -> '.join('@' + n for n in self.reading)}): "
                                  "recursion is not supported")
        self.reading.append(name)
        try:
            prog = _block(self.funcs[name].regions[0].blocks[0], f"@{name}", self)
        finally:
            self.reading.pop()
        self.read[name] = prog
        return prog


class _Scope:
    """The names of a block's values, and the values it takes from enclosing
    blocks (a region may use any value defined above it: a comparator that
    compares with a constant of the function around it)."""

    def __init__(self, where: str, parent: "_Scope | None" = None):
        self.where, self.parent = where, parent
        self.keys: dict = {}        # MLIR value -> our name for it here
        self.captures: dict = {}    # our name here -> the enclosing block's name for it

    def key(self, value) -> str:
        if value in self.keys:
            return self.keys[value]
        outer = self.parent.key(value) if self.parent is not None else None
        if outer is None:
            if self.parent is None:
                raise ProgramRejected(f"{self.where}: use of a value not defined before it")
            return None
        local = f"cap{len(self.captures)}"
        self.captures[local] = outer
        self.keys[value] = local
        return local

    def name(self, value) -> str:
        k = self.key(value)
        if k is None:
            raise ProgramRejected(f"{self.where}: use of a value not defined before it")
        return k


def _block(block, where: str, functions: _Functions | None = None, parent: _Scope | None = None) -> Program:
    """A block's arguments, ops (each checked against the spec, calls read
    through `functions`, regions read with this block as their enclosing
    scope) and returned values."""
    scope = _Scope(where, parent)
    args = []
    for i, a in enumerate(block.arguments):
        t = _value_type(a.type)
        # @main takes tensors from a backend; a region's block may also take tokens (while carries them)
        if not (isinstance(t, TensorType) or (parent is not None and isinstance(t, TokenType))):
            raise ProgramRejected(f"{where}: argument {i} has type {t}; the oracle takes tensors")
        scope.keys[a] = f"arg{i}"
        args.append((f"arg{i}", t))
    steps, constants = [], {}
    for n, op in enumerate(block.operations):
        op = op.operation
        actual = [scope.name(o) for o in op.operands]
        if op.name in ("func.return", "stablehlo.return", "sdy.return"):
            return Program(args, steps, actual, [_value_type(o.type) for o in op.operands], constants,
                           captures=scope.captures)
        if op.name in ("func.call", CALL) and functions is not None:
            callee = str(op.attributes["callee"]).lstrip("@").strip('"')
            result_keys = []
            for j, r in enumerate(op.results):
                scope.keys[r] = f"op{n}.{j}"
                result_keys.append(f"op{n}.{j}")
            steps.append(Step(None, actual, result_keys, call=functions.body(callee, where)))
            continue
        inst, consts, bodies = _instance(op, functions, scope)
        inst = read_as_op(inst, op)   # custom_calls.py: JAX's LAPACK calls read as the ops they compute
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
            scope.keys[r] = f"op{n}.{j}"
            result_keys.append(f"op{n}.{j}")
        steps.append(Step(inst, operand_keys, result_keys, regions=bodies))
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
    return isinstance(vt, (TensorType, TokenType)) or (isinstance(vt, TupleType) and all(_held(m) for m in vt.types))


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


def _instance(op, functions=None, scope=None):
    """The op as a checked `Instance`, and its `constant` operands' values by name."""
    name = op.name
    spec = OPS.get(name[len("stablehlo."):]) if name.startswith("stablehlo.") else CHLO.get(name)
    if spec is None:
        raise ProgramRejected(f"op {name} not in the encoded spec")
    mnemonic = spec.mnemonic
    present = _attribute_texts(op, name)
    operands = _split([o for o in spec.operands if not o.constant],
                      [_value_type(o.type) for o in op.operands], "operands", mnemonic)
    constants = {}
    for o in spec.operands:
        if o.constant:
            if o.name not in present:
                raise ProgramRejected(f"{mnemonic}: missing attribute {o.name}")
            try:
                array, t = _dense(present.pop(o.name))
            except ValueError as e:
                raise ProgramRejected(f"{mnemonic}: attribute {o.name}: {e}") from None
            operands[o.name] = t
            constants[o.name] = Expectation(t, to_bits(array, t.element_type), bit_exact=True)
    operands = {o.name: operands[o.name] for o in spec.operands}
    results = _split(spec.results, [_value_type(r.type) for r in op.results], "results", mnemonic)
    attrs = _attributes(spec, present, mnemonic)
    regions, bodies = _regions(op, spec, functions, scope)
    inst = spec.instance(operands, attrs, results, regions, grid=functions.grid if functions is not None else None)
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
    return inst, constants, bodies


_LONG_HEX = re.compile(r'"0x[0-9A-Fa-f]{128,}"')
_ASIDE = "shlo_conform.hex"
_HEX_DENSE = re.compile(r'dense<("0x[0-9A-Fa-f]*")>\s*:\s*(tensor<.*>)', re.S)


def _attribute_texts(op, name: str) -> dict:
    """{attribute name: text} of an op (literals.op_attributes on its generic
    form).  Long hex literals (a model's weights as a constant: megabytes)
    are set aside while the dictionary is split — op_attributes reads
    strings a character at a time — and put back in the texts after."""
    asm = op.get_asm(print_generic_op_form=True, skip_regions=True, use_local_scope=True, assume_verified=True)
    aside: list = []

    def put_aside(m):
        aside.append(m.group(0))
        return f'"{_ASIDE}{len(aside) - 1}"'
    short = _LONG_HEX.sub(put_aside, asm)
    present = op_attributes(short, name)
    if aside:
        back = re.compile(f'"{re.escape(_ASIDE)}(\\d+)"')
        present = {k: back.sub(lambda m: aside[int(m.group(1))], v) if _ASIDE in v else v for k, v in present.items()}
    return present


def _dense(text: str):
    """literals.parse_dense, with the hex form (how MLIR prints large
    constants) split by a regular expression rather than a character scan."""
    m = _HEX_DENSE.fullmatch(text.strip())
    if m is None:
        return parse_dense(text)
    t = parse_type(m.group(2))
    if not isinstance(t, TensorType):
        raise ValueError(f"dense literal of non-tensor type {t}")
    return parse_elements(m.group(1), t), t


def _attributes(spec, present: dict, mnemonic: str) -> dict:
    """The spec's attributes from {name: text}; grouped ones from their group.
    What the printer leaves out holds its default: an empty list or 0 inside
    a group, the declared default of an optional attribute."""
    for name in [n for n in present if "." in n]:
        del present[name]   # discardable attributes of other dialects (mhlo.sharding, …)
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
            elif isinstance(a.kind, IntAttr):
                attrs[a.name] = 0   # ... and integers equal to 0 (index_vector_dim = 0)
            elif not a.optional and a.default is None:
                raise ProgramRejected(f"{mnemonic}: missing {a.name} in attribute {a.group}")
        elif a.name in present:
            attrs[a.name] = _attribute(a, present.pop(a.name), mnemonic)
        elif not a.optional and a.default is None:
            raise ProgramRejected(f"{mnemonic}: missing attribute {a.name}")
    accuracy = present.pop("result_accuracy", None)
    if accuracy is not None and not _default_accuracy(accuracy):
        raise ProgramRejected(f"{mnemonic}: result_accuracy {accuracy}: only its default (mode DEFAULT, no "
                              "tolerance: the implementation's own accuracy) means what the encoded spec says")
    if present:
        raise ProgramRejected(f"{mnemonic}: unknown attribute(s) {', '.join(sorted(present))}")
    return attrs


_ACCURACY_FIELD = re.compile(r"(mode|atol|rtol|ulps)\s*=\s*(#stablehlo\.result_accuracy_mode<\s*(\w+)\s*>|[^,>]+)")


def _default_accuracy(text: str) -> bool:
    """Whether a `result_accuracy` attribute (newer StableHLO than the
    seed: the accuracy a transcendental op is asked for) holds its default —
    mode DEFAULT, no tolerance — which asks for the implementation's own
    accuracy, i.e. what the op means without it.  jaxlib's CHLO
    decompositions write it on the ops they create (acos's sqrt)."""
    t = text.strip()
    if not (t.startswith("#stablehlo.result_accuracy<") and t.endswith(">")):
        return False
    for name, value, mode in _ACCURACY_FIELD.findall(t[len("#stablehlo.result_accuracy<"):-1]):
        if name == "mode":
            if mode != "DEFAULT":
                return False
        else:
            try:
                if float(value.split(":")[0]) != 0:
                    return False
            except ValueError:
                return False
    return True


def _attribute(a, text: str, mnemonic: str):
    try:
        if type(a.kind) is I64ArrayAttr and text.startswith("dense<"):
            # The seed's spelling: a 1-D si64 tensor constant (splats included).
            array, t = parse_dense(text)
            if t.rank != 1 or t.element_type != SI64:
                raise ValueError(f"{t} is not a 1-dimensional tensor of si64")
            return tuple(int(x) for x in array)
        return a.kind.from_mlir(text)
    except (ValueError, IndexError) as e:
        raise ProgramRejected(f"{mnemonic}: attribute {a.name}: {e}") from None


def _regions(op, spec, functions=None, scope=None) -> tuple[dict, list]:
    """({region name: Function}, their bodies) for the op's regions, in the
    spec's order; each body may capture values of the enclosing `scope`."""
    mnemonic = spec.mnemonic
    regions = list(op.regions)
    try:
        groups = _split(spec.regions, regions, "regions", mnemonic)
    except ProgramRejected:
        raise ProgramRejected(f"{mnemonic}: {len(regions)} regions where the spec has {len(spec.regions)}") from None
    out, bodies = {}, []
    for g in spec.regions:
        fns = []
        for k, region in enumerate(groups[g.name] if g.variadic else [groups[g.name]]):
            blocks = list(region.blocks)
            name = f"{g.name}[{k}]" if g.variadic else g.name
            if len(blocks) != 1:
                raise ProgramRejected(f"{mnemonic}: region {name} has {len(blocks)} blocks; one is expected")
            body = _block(blocks[0], f"{mnemonic} region {name}", functions, scope)
            fns.append(Function(tuple(t for _, t in body.args), tuple(body.return_types),
                                call=_caller(body), pairwise=_pairwise(body), expect=_expecter(body),
                                block=body))
            bodies.append(body)
        out[g.name] = fns if g.variadic else fns[0]
    return out, bodies


def _caller(body: Program):
    """`call(*arrays) -> [arrays]`: the region executed on rank-0 (or any)
    arrays, with the values it captures bound by the op running it."""
    def call(*arrays):
        return [leaf.array() for v in _run(body, _inputs(body, arrays), body.bound) for leaf in _leaves(v)]
    return call


def _expecter(body: Program):
    """`expect(*values) -> [values]`: the region executed on whole values
    (expectations with their allowances, tuples, tokens) — control flow's
    way in (`spec.dsl.ControlFlow`)."""
    def expect(*values):
        if len(values) != len(body.args):
            raise ValueError(f"the region takes {len(body.args)} values, {len(values)} given")
        out = _run(body, list(values), body.bound)
        if affine.enabled():   # a loop's carry: its deviations rotated into a basis of their own (affine.py)
            affine.reduce_carry(out)
        return out
    return expect


COMMUTATIVE = ("add", "multiply", "and", "or", "xor", "maximum", "minimum")


def _pairwise(body: Program) -> tuple | None:
    """The op of each (argument k, argument N+k) pair when the block is N
    binary ops, one per pair, returned in order (`Function.pairwise`)."""
    n = len(body.returns)
    if len(body.args) != 2 * n or len(body.steps) != n or body.constants or body.captures:
        return None
    ops = []
    for k, step in enumerate(body.steps):
        if step.call is not None or len(step.operands) != 2 or body.returns[k] != step.results[0]:
            return None
        pair = [f"arg{k}", f"arg{n + k}"]
        mnemonic = step.inst.spec.mnemonic
        if step.operands != pair and not (mnemonic in COMMUTATIVE and step.operands == pair[::-1]):
            return None
        ops.append(mnemonic)
    return tuple(ops)


def _doc(spec, label: str) -> str:
    """The constraint's statement: its docstring's first paragraph (the
    spec's text, wrapped over several lines as the spec wraps it), on one
    line — not its first line, which cut formulas off mid-way."""
    doc = (spec.constraint(label).__doc__ or "").strip().split("\n\n")[0]
    return " ".join(line.strip() for line in doc.splitlines())


def execute(program: Program, inputs: Sequence[np.ndarray], process: GridProcess | None = None) -> list[Expectation]:
    """Run @main (or a region's block) on concrete inputs: one Expectation
    per returned tensor (a returned tuple gives its tensors, depth first;
    a returned token is no output).  Side effects see the host of the
    caller's `host.session` (an empty one when there is none).
    `process`: the process of a grid this run is (oracle/grid.py, which
    runs every process of a grid: `execute_on_grid`); its ops see it as
    `Context.process`.  Without one the run is the single process of a
    1×1 grid.  Raises `Unspecified` where the spec states no result we
    could expect."""
    if process is None:
        with running():   # the caller's host (`host.session`), else a fresh one for this run
            values = _run(program, _inputs(program, inputs))
    else:
        token = _STEP_CONTEXT.set(Context(arrays=_arrays, process=process))
        _PER_PROCESS.bound = {}
        try:
            with running():
                values = _run(program, _inputs(program, inputs))
        finally:
            _STEP_CONTEXT.reset(token)
            _PER_PROCESS.bound = None
    return [leaf for v in values for leaf in _leaves(v) if not isinstance(leaf, Token)]


def _inputs(program: Program, inputs: Sequence[np.ndarray]) -> list[Expectation]:
    """Arrays as the exact values of the block's arguments (shapes checked)."""
    if len(inputs) != len(program.args):
        raise ValueError(f"the block takes {len(program.args)} inputs, {len(inputs)} given")
    values = []
    for (k, t), a in zip(program.args, inputs):
        a = np.asarray(a)
        if tuple(a.shape) != tuple(t.shape):
            raise ValueError(f"input {k}: shape {a.shape} where {t.mlir} was declared")
        values.append(Expectation(t, to_bits(a.astype(t.element_type.numpy, copy=False), t.element_type),
                                  bit_exact=True))
    return values


def _run(program: Program, values: list, captured: dict | None = None) -> list:
    """The block's returned values (Expectations, or tuples of them) for its
    argument values (and the values it captures).  Each op consumes the
    primary values of the ops before it, and the ranges of approximate ones
    (propagation.py); the implementation-defined alternatives of an
    intermediate result do not propagate.  A call passes and returns whole
    values; an op's regions see the values they capture from this block."""
    env: dict = dict(program.constants)
    env.update(captured or {})
    env.update(zip((k for k, _ in program.args), values))
    for step in program.steps:
        for body in step.regions:
            body.bound = {local: env[outer] for local, outer in body.captures.items()}
        inputs = [env[k] for k in step.operands]
        if step.call is not None:
            outs = _run(step.call, inputs)
        elif works_on_values(step.inst):   # control flow, side effects: their kind's rule on whole values
            outs = run_values(_STEP_CONTEXT.get(), step.inst, inputs)
        else:   # on primary arrays, and on the ends of ranged operands (propagation.py)
            arrays = [_arrays(v) for v in inputs]
            outs = payloads(inputs, carry(run_arrays, step.inst, inputs, run_arrays(step.inst, arrays), arrays))
            if affine.enabled():   # `run`: errors tracked with their correlations, ranges tightened (affine.py)
                outs = affine.step(step.inst, inputs, outs)
        for k, o in zip(step.results, outs):
            env[k] = o
    return [env[k] for k in program.returns]


@on_values(ControlFlow)
def _control_flow(ctx: Context, inst, values: list) -> list:
    """if, case, while, optimization_barrier: the op's own `fn` passes whole
    values through its regions (`Function.expect`), reading only the arrays
    it must look at (a predicate, an index, a loop condition)."""
    try:
        return inst.spec.semantics.fn(inst, values, ctx.arrays)
    except LoopLimit as e:
        raise Unspecified(str(e)) from None


def _arrays(v):
    """A value's primary arrays: an array, or a tuple of them (nested) —
    read-only, since one array serves the op's primary run and each corner
    of its ranged operands (propagation.carry)."""
    if isinstance(v, tuple):
        return tuple(_arrays(m) for m in v)
    a = v.array()
    if isinstance(a, np.ndarray):   # (from_bits gives a scalar for some rank-0 values)
        a.flags.writeable = False
    return a


_CONTEXT = Context(arrays=_arrays, process=single_process())
# The Context of the steps of the run in progress: a grid process's own
# (set by `execute` with a process, in that process's thread), else the
# single process's.
_STEP_CONTEXT: contextvars.ContextVar = contextvars.ContextVar("shlo_conform_step_context", default=_CONTEXT)


def _leaves(v) -> list:
    return [leaf for m in v for leaf in _leaves(m)] if isinstance(v, tuple) else [v]
