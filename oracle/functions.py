"""A module's functions and their blocks read into Programs, every op checked as it is read.

Each op must be in the encoded spec (`spec.ops.OPS`, v1.20's added ops `spec.added.ADDED`, or a CHLO op spec/chlo
declares), its element types in its Inputs/Outputs tables, its constraints
(`<op>_c<N>`) satisfied and its result types the inferred ones; the first
failure is the verdict (ProgramRejected naming the rule).  Regions are read
first, as `spec.dsl.Function`s, since constraints read their types; a region
may capture values of the blocks around it.  Functions are read once, when
first called; recursion is refused.
"""
from __future__ import annotations

from ..spec.chlo import CHLO
from ..spec.dsl import Function
from ..spec.expectation import Expectation
from ..spec.grid import SINGLE as SINGLE_GRID, Grid
from ..spec.ops import lookup
from ..spec import quantized as quantized_rules
from ..spec.quantized import is_quantized, quantized_violations, same_baseline_type
from ..spec.types import FutureType, TensorType, TokenType, TupleType, parse_type, to_bits
from .attribute_values import attribute_texts, declared_attributes, dense_constant
from .block import CALL, Program, Step
from .custom_calls import read_as_op
from .execution import caller, expecter
from .rejection import ProgramRejected


class Functions:
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
            prog = read_block(self.funcs[name].regions[0].blocks[0], f"@{name}", self)
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


def read_block(block, where: str, functions: Functions | None = None, parent: _Scope | None = None) -> Program:
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
    _check_quantized(vt, t)
    return vt


def _check_quantized(vt, text) -> None:
    """Rejects a quantized tensor type that breaks the spec's rules for
    quantized types (v1.20 "Types", quantized_c1 … c13: storage range,
    scales, zero points, quantization dimension): the reader takes any
    scale, zero point and dimension written, and an op's constraints read
    those types as given, so without this a program whose type no
    implementation may accept (a quantization dimension of -1, three
    scales on a dimension of two) was judged as valid."""
    if isinstance(vt, (TupleType, FutureType)):
        for m in vt.types:
            _check_quantized(m, text)
        return
    if isinstance(vt, TensorType) and is_quantized(vt):
        broken = quantized_violations(vt)
        if broken:
            doc = " ".join((getattr(quantized_rules, broken[0]).__doc__ or "").strip().split("\n\n")[0].split())
            also = f" (it also violates {', '.join(broken[1:])})" if len(broken) > 1 else ""
            raise ProgramRejected(f"type {text} violates {broken[0]}: {doc}{also}", broken[0])


def _held(vt) -> bool:
    return (isinstance(vt, (TensorType, TokenType)) or (isinstance(vt, (TupleType, FutureType))
                                                        and all(_held(m) for m in vt.types)))


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
    spec = lookup(name[len("stablehlo."):]) if name.startswith("stablehlo.") else CHLO.get(name)
    if spec is None:
        raise ProgramRejected(f"op {name} not in the encoded spec")
    mnemonic = spec.mnemonic
    discardable: set = set()
    present = attribute_texts(op, name, discardable)
    operands = _split([o for o in spec.operands if not o.constant],
                      [_value_type(o.type) for o in op.operands], "operands", mnemonic)
    constants = {}
    for o in spec.operands:
        if o.constant:
            if o.name not in present:
                raise ProgramRejected(f"{mnemonic}: missing attribute {o.name}")
            try:
                array, t = dense_constant(present.pop(o.name))
            except ValueError as e:
                raise ProgramRejected(f"{mnemonic}: attribute {o.name}: {e}") from None
            operands[o.name] = t
            constants[o.name] = Expectation(t, to_bits(array, t.element_type), bit_exact=True)
    operands = {o.name: operands[o.name] for o in spec.operands}
    results = _split(spec.results, [_value_type(r.type) for r in op.results], "results", mnemonic)
    attrs = declared_attributes(spec, present, mnemonic, discardable)
    regions, bodies = _regions(op, spec, functions, scope)
    called = _called_functions(spec, attrs, functions, mnemonic)   # composite's decomposition, read as func.call's callee
    regions.update(called)
    bodies += [fn.block for fn in called.values()]
    inst = spec.instance(operands, attrs, results, regions, grid=functions.grid if functions is not None else None)
    inst.known_values = _literal_values(op, spec)   # v1.20's dynamic ops: shape operands a constant gives
    if scope is not None:   # the block's names of the op's operands: async_start's C3 compares its body's captures
        inst.value_names = [scope.name(o) for o in op.operands]
    bad = spec.types_outside_tables(inst)
    if bad:
        raise ProgramRejected(f"{mnemonic}: element type of {', '.join(bad)} is not allowed by the spec")
    violated = spec.violated(inst)
    if violated:   # the first rule read, and the others the program breaks too
        also = f" (it also violates {', '.join(violated[1:])})" if len(violated) > 1 else ""
        raise ProgramRejected(f"{mnemonic}: violates {violated[0]}: {_doc(spec, violated[0])}{also}", violated[0])
    try:
        inferred = spec.infer(inst)
    except Exception as e:  # inference undefined for this instance: not a valid program
        raise ProgramRejected(f"{mnemonic}: type inference fails: {e}") from None
    quantized = spec.holds_quantized(inst)
    for r in spec.results:
        want, got = inferred.get(r.name), results[r.name]
        if quantized and want is not None and _same_baseline(want, got):   # v1.20: scales are the program's
            continue
        if want is not None and want != got:
            raise ProgramRejected(f"{mnemonic}: result {r.name} has type {got} where the spec infers {want}")
    return inst, constants, bodies


def _literal_values(op, spec) -> dict:
    """{operand name: array} of the op's `literal` operands (a shape, a
    padding: spec/added/shape_operands.py) that a `stablehlo.constant` of
    the program defines — the values spec.md "Dynamism" verifies
    statically where it can; the op's constraints read them."""
    out: dict = {}
    declared = [o for o in spec.operands if not o.constant]
    if not any(o.literal for o in declared) or any(o.variadic for o in declared):
        return out
    for o, value in zip(declared, op.operands):
        owner = value.owner
        owner = getattr(owner, "operation", owner)
        if not o.literal or getattr(owner, "name", None) != "stablehlo.constant":
            continue
        try:
            out[o.name], _ = dense_constant(attribute_texts(owner, owner.name)["value"])
        except (KeyError, ValueError):   # no readable value: known when the op runs
            continue
    return out


def _called_functions(spec, attrs: dict, functions, mnemonic: str) -> dict:
    """{attribute name: Function} for the attributes whose kind names a
    function of the module (`names_function`: composite's
    `decomposition`), each function read once as a func.call's callee; an
    attribute naming no function of the module is left out, for the op's
    own constraint to name (composite_c2)."""
    out = {}
    for a in spec.attributes:
        name = attrs.get(a.name)
        if not getattr(a.kind, "names_function", False) or functions is None or name not in functions.funcs:
            continue
        body = functions.body(name, f"{mnemonic}'s {a.name}")
        out[a.name] = Function(tuple(t for _, t in body.args), tuple(body.return_types), call=caller(body),
                               expect=expecter(body), block=body)
    return out


def _same_baseline(want, got) -> bool:
    """`baseline_type` equality of an inferred and a stated result (a list
    of them for a variadic result; tokens and tuples by equality)."""
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(_same_baseline(a, b) for a, b in zip(want, got))
    if isinstance(want, TensorType) and isinstance(got, TensorType):
        return bool(same_baseline_type(want, got))
    return want == got


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
            body = read_block(blocks[0], f"{mnemonic} region {name}", functions, scope)
            fns.append(Function(tuple(t for _, t in body.args), tuple(body.return_types),
                                call=caller(body), pairwise=_pairwise(body), expect=expecter(body),
                                block=body))
            bodies.append(body)
        out[g.name] = fns if g.variadic else fns[0]
    return out, bodies


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
