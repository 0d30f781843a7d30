"""Programs as users have them, read into the generic form the oracle checks.

StableHLO comes in several syntaxes: the generic form our generators write
(`"stablehlo.add"(%a, %b) : (…) -> …`), the pretty form JAX and the
StableHLO project print (`stablehlo.add %a, %b : tensor<4xf32>`), and
bytecode — plain MLIR bytecode or the versioned portable artifact that
`jax.export` and `stablehlo.serialize_portable_artifact` write.  Syntax is
jaxlib's business: a program that does not parse in the oracle's own
context (stablehlo unregistered) is parsed in a context with the StableHLO
dialect registered and printed back generically; a portable artifact is
deserialized by StableHLO's own reader.  Validity stays the encoded
spec's: the generic text is checked by our constraints (program.py).

The registered parser always runs the official verifier, and jaxlib offers
no parse without it.  When the verifier refuses a pretty program, its
diagnostic names the op and prints it generically ("see current
operation"); that op is then judged alone by our constraints
(`VerifierRejected`): rejected for the constraint of ours it breaks, or —
where ours accept it — rejected as unreadable, with the disagreement stated
(a finding about one of the two, never a silent verdict).

CHLO (`chlo.square`, `chlo.erf`, `chlo.top_k` …), the "client HLO" ops JAX
emits beside StableHLO, is no part of the spec.  CHLO ops are mathematics
(DESIGN.md): the ops spec/chlo declares, for the element types it declares
them for, stay in the program (`Read.kept`) and the oracle executes them by
their declared meaning.  Every other CHLO op is legalized by jaxlib's own
pass `chlo-legalize-to-stablehlo` (`legalize_chlo`; the decomposition
patterns XLA's own pipeline, `MlirToXlaComputation`, applies to every CHLO
op it does not keep as a high-level HLO op), and the oracle judges the
StableHLO that comes out — saying so (`Read.legalized`).  An op the pass
cannot decompose (chlo.bessel_i1e of a complex operand, …) stays unjudged,
named (`ChloNotDecomposed`).

A convolution whose result element type is a promotion of its operands'
(bf16 × bf16 → f32, i8 × i8 → i32: what JAX's
`conv_general_dilated(…, preferred_element_type=…)` writes) breaks the
spec's C27 (`element_type(lhs) = element_type(rhs) = element_type(result)`,
seed and v1.20 alike), yet StableHLO's verifier accepts it
(openxla/stablehlo#1896), its maintainers read the result type as the
accumulation type (#2953, merged in 2026 for integer convolutions: "aligns
with the spec"; the pinned interpreter, 1.17.0, still sums a bf16 one in
bf16 — docs/findings.md), XLA computes so, and v1.20 reads dot_general so
(spec/ops/dot_general.py).  Such programs are read that way before they
are checked (`convert_to_wider_results`): each operand is converted to the
result's element type first — exact where the result type holds every
operand value, the spec's `convert` otherwise — and the convolution is the
result type's; `run` says so on a line of its own ("reading"), naming C27.
The spec module stays the spec's: its C27 still refuses the op as written
(the suite's `mixed_precision` cases).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .literals import close_bracket, split_top

MLIR_BYTECODE_MAGIC = b"ML\xefR"
_REGISTERED = None


class SyntaxRejected(Exception):
    """The text is not a program in any StableHLO syntax; `str` says where."""


class VerifierRejected(Exception):
    """jaxlib's verifier refused a pretty-form program.  `op_text`: the
    refused op in generic form (None if the diagnostic did not print it);
    `message`: the verifier's words."""

    def __init__(self, message: str, op_text: str | None):
        super().__init__(message)
        self.message = message
        self.op_text = op_text


def registered_context():
    """One MLIR context with StableHLO, CHLO and the upstream dialects
    registered (jaxlib's, as a backend starts from)."""
    global _REGISTERED
    if _REGISTERED is None:
        from jax._src.interpreters import mlir as jm
        _REGISTERED = jm.make_ir_context()
    return _REGISTERED


_UNREGISTERED = None


def unregistered_context():
    """One MLIR context with the upstream dialects (func, …) and no
    stablehlo: ops are read and printed back as written, in generic form,
    with no dialect's printer or verifier in between (the oracle reads
    programs so; batching merges them so)."""
    global _UNREGISTERED
    if _UNREGISTERED is None:
        from jax._src.interpreters import mlir as jm
        from jaxlib.mlir import ir
        ctx = ir.Context()
        ctx.append_dialect_registry(jm.upstream_dialects)
        ctx.load_all_available_dialects()
        ctx.allow_unregistered_dialects = True
        _UNREGISTERED = ctx
    return _UNREGISTERED


def _one_line(e: Exception, limit: int = 400) -> str:
    return " ".join(str(e).split())[:limit]


def from_bytecode(data: bytes) -> str:
    """Generic text of a portable artifact or plain MLIR bytecode."""
    import jaxlib.mlir._mlir_libs._stablehlo as stablehlo
    from jaxlib.mlir import ir
    ctx = registered_context()
    with ctx, ir.Location.unknown():
        try:
            module = stablehlo.deserialize_portable_artifact(ctx, data)
        except Exception as e:   # not VHLO: plain bytecode of the dialects themselves
            try:
                module = ir.Module.parse(data)
            except Exception:
                raise SyntaxRejected(f"bytecode that neither StableHLO's portable-artifact reader nor MLIR's "
                                     f"bytecode reader accepts: {_one_line(e)}") from None
        return module.operation.get_asm(print_generic_op_form=True, assume_verified=True)


def _parse_registered(text: str):
    """The module, parsed with the dialect registered (call inside the
    registered context).  Raises VerifierRejected when the official verifier
    refuses it, SyntaxRejected when it is not StableHLO at all."""
    from jaxlib.mlir import ir
    try:
        return ir.Module.parse(text)
    except ir.MLIRError as e:
        op_text = _current_operation(e)
        if op_text is not None:
            raise VerifierRejected(_first_error(e), op_text) from None
        raise SyntaxRejected(_one_line(e)) from None


@dataclass
class Read:
    """A program read with the dialects registered: its generic text, the
    CHLO ops jaxlib legalized on the way ({op name: count}, empty when the
    program held none), and the CHLO ops left in it to be judged by their
    declared meaning ({op name: count}: `read_registered`'s `keep`)."""

    generic: str
    legalized: dict = field(default_factory=dict)
    kept: dict = field(default_factory=dict)


class ChloNotDecomposed(Exception):
    """A CHLO op that jaxlib's chlo-legalize-to-stablehlo leaves as it is: no
    StableHLO program exists to judge.  `op`: its name; `message`: the
    pass's words."""

    def __init__(self, op: str, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


CHLO_PASS = "chlo-legalize-to-stablehlo"
_PASSES_REGISTERED = False


def chlo_ops(module) -> dict:
    """{name: count} of the CHLO ops anywhere in a module (regions included)."""
    from jaxlib.mlir import ir
    found: dict = {}

    def visit(op):
        name = op.name
        if name.startswith("chlo."):
            found[name] = found.get(name, 0) + 1
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


_KEPT_PREFIX = "shlo_conform.kept."   # a kept CHLO op's name while the pass runs (`legalize_chlo_except`)
_PERMISSIVE = None


def _permissive_context():
    """A registered context (as `registered_context`) that also reads ops of
    unknown dialects: the kept CHLO ops, renamed, while the pass runs."""
    global _PERMISSIVE
    if _PERMISSIVE is None:
        from jax._src.interpreters import mlir as jm
        _PERMISSIVE = jm.make_ir_context()
        _PERMISSIVE.allow_unregistered_dialects = True
    return _PERMISSIVE


def legalize_chlo_except(module, keep) -> tuple[str, dict, dict]:
    """(generic text, {legalized op: count}, {kept op: count}) of a module
    (parsed in `registered_context`) whose CHLO ops are legalized by
    `legalize_chlo` except those `keep(op)` accepts (an MLIR operation in,
    a bool out), which stay as they are.  The pass rewrites every CHLO op
    it meets and has no option to spare one, so the kept ones are renamed
    out of the chlo dialect while it runs (generic text, read in
    `_permissive_context`) and named back after."""
    import re
    from jaxlib.mlir import ir
    decisions: list = []

    def visit(op):
        if op.name.startswith("chlo."):
            decisions.append((op.name, bool(keep(op))))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    kept: dict = {}
    for name, k in decisions:
        if k:
            kept[name] = kept.get(name, 0) + 1
    generic = module.operation.get_asm(print_generic_op_form=True, assume_verified=True)
    if not kept:
        legalized = legalize_chlo(module)
        return module.operation.get_asm(print_generic_op_form=True, assume_verified=True), legalized, {}
    order = iter(decisions)   # the generic text names the ops in pre-order, as the walk met them

    def rename(m):
        name, k = next(order)
        assert name == f"chlo.{m.group(1)}", (name, m.group(0))
        return f'"{_KEPT_PREFIX}{m.group(1)}"(' if k else m.group(0)
    renamed = re.sub(r'"chlo\.(\w+)"\(', rename, generic)
    with _permissive_context(), ir.Location.unknown():
        other = ir.Module.parse(renamed)
        legalized = legalize_chlo(other)
        text = other.operation.get_asm(print_generic_op_form=True, assume_verified=True)
    return text.replace(f'"{_KEPT_PREFIX}', '"chlo.'), legalized, kept


def legalize_chlo(module) -> dict:
    """Rewrite a module's CHLO ops into StableHLO in place, with jaxlib's pass
    `chlo-legalize-to-stablehlo` (StableHLO's own patterns, the ones XLA's
    MlirToXlaComputation applies through chlo-legalize-to-high-level-mhlo to
    every CHLO op it does not keep whole); the module must be in a context
    with the StableHLO and CHLO dialects registered (any: the oracle's, a
    backend's).  Returns {CHLO op name: count} of what was legalized; raises
    ChloNotDecomposed, naming the op, where the pass fails."""
    global _PASSES_REGISTERED
    found = chlo_ops(module)
    if not found:
        return found
    from jaxlib.mlir import ir, passmanager
    import jaxlib.mlir._mlir_libs._stablehlo as stablehlo
    if not _PASSES_REGISTERED:
        stablehlo.register_stablehlo_passes()
        _PASSES_REGISTERED = True
    with module.context:
        pm = passmanager.PassManager.parse(f"builtin.module(func.func({CHLO_PASS}))")
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            message = _first_error(e)
            raise ChloNotDecomposed(_refused_op(message, found), f"{CHLO_PASS}: {message}") from None
    left = chlo_ops(module)
    if left:   # the pass succeeded but kept some (none known today): still nothing to judge there
        op = next(iter(left))
        raise ChloNotDecomposed(op, f"{CHLO_PASS} leaves {op} in the program")
    return found


def _refused_op(message: str, found: dict) -> str:
    """The CHLO op a failed legalization names ("failed to legalize operation
    'chlo.x'"), else the first CHLO op of the program."""
    import re
    m = re.search(r"operation '(chlo\.[A-Za-z0-9_]+)'", message)
    return m.group(1) if m else next(iter(found))


# Ops read with their operands converted to a wider result element type (module docstring): {op name: why}
WIDER_RESULTS = {
    "stablehlo.convolution": "its result element type differs from its operands', which the spec's C27 forbids "
                             "(element_type(lhs) = element_type(rhs) = element_type(result)); judged as StableHLO's "
                             "maintainers read it (openxla/stablehlo#2953: convolution accumulates in the result "
                             "type) and as v1.20 reads dot_general: the operands converted to the result's element "
                             "type first, the products and sums the result type's",
}


def convert_to_wider_results(module) -> dict:
    """Rewrite, in place, each op of WIDER_RESULTS whose two operands share
    a non-quantized element type that the result's differs from and is
    promotable from (v1.20's `is_promotable`: one kind, at least as wide):
    a `stablehlo.convert` of each operand to the result's element type is
    inserted before it (module docstring).  Works in any context, the
    oracle's unregistered one included.  Returns {op name: count}."""
    from jaxlib.mlir import ir

    from ..spec.ops.dot_general import promotable
    from ..spec.types import TensorType, parse_type
    found: list = []

    def visit(op):
        if op.name in WIDER_RESULTS and len(op.operands) == 2 and len(op.results) == 1:
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    done: dict = {}
    for op in found:
        try:
            lhs, rhs, res = (parse_type(str(v.type)) for v in (op.operands[0], op.operands[1], op.results[0]))
        except ValueError:
            continue
        if not all(isinstance(t, TensorType) and not t.element_type.is_quantized for t in (lhs, rhs, res)):
            continue
        if lhs.element_type != rhs.element_type or lhs.element_type == res.element_type \
                or not promotable(lhs.element_type, res.element_type):
            continue
        wide = ir.RankedTensorType(op.results[0].type).element_type
        for i in range(2):
            value = op.operands[i]
            with ir.InsertionPoint(op), op.location:
                shape = ir.RankedTensorType(value.type).shape
                op.operands[i] = ir.Operation.create("stablehlo.convert", results=[ir.RankedTensorType.get(shape, wide)],
                                                     operands=[value]).result
        done[op.name] = done.get(op.name, 0) + 1
    return done


def holds_quantized_types(text: str) -> bool:
    """Does a program's text name a quantized element type (`!quant.uniform<…>`)?"""
    return "!quant." in text


def read_quantized(text: str) -> str:
    """The generic text of a program with quantized element types, read and
    verified by StableHLO's own verifier as IREE's compiler bindings carry
    it (iree.compiler.ir, which registers the `quant` dialect): jaxlib's
    Python bindings register no `quant` dialect (jaxlib 0.10.2: neither
    `make_ir_context` nor `load_all_available_dialects` brings it), and
    with unknown dialects allowed the stablehlo verifier refuses the opaque
    type.  The generic text names every type as written, so the oracle's
    own context (stablehlo and quant unregistered) reads it back."""
    try:
        from iree.compiler import ir as iree_ir
    except ImportError:   # pragma: no cover - iree-base-compiler is in the lock
        raise SyntaxRejected("a program with quantized types: reading it needs iree-base-compiler's MLIR "
                             "bindings (jaxlib's have no quant dialect), which are not installed") from None
    with iree_ir.Context(), iree_ir.Location.unknown():
        try:
            module = iree_ir.Module.parse(text)
        except iree_ir.MLIRError as e:
            op_text = _current_operation(e)
            if op_text is not None:
                raise VerifierRejected(_first_error(e), op_text) from None
            raise SyntaxRejected(_one_line(e)) from None
        generic = module.operation.get_asm(print_generic_op_form=True, assume_verified=True)
    if '"chlo.' in generic:
        raise SyntaxRejected("CHLO ops in a program with quantized types: jaxlib's legalization cannot read "
                             "the program (no quant dialect), so its CHLO is not decomposed here")
    return generic


def read_registered(text: str, keep=None) -> Read:
    """A program in any textual syntax, read with the dialects registered
    (`_parse_registered`'s errors), its CHLO legalized (`legalize_chlo`;
    ChloNotDecomposed) — all of it, or all but the ops `keep(op)` accepts
    (`legalize_chlo_except`) — printed back generically.  A program with
    quantized types is read by `read_quantized`."""
    from jaxlib.mlir import ir
    if holds_quantized_types(text):
        return Read(read_quantized(text))
    with registered_context(), ir.Location.unknown():
        module = _parse_registered(text)
        if keep is not None and chlo_ops(module):
            return Read(*legalize_chlo_except(module, keep))
        legalized = legalize_chlo(module)
        return Read(module.operation.get_asm(print_generic_op_form=True, assume_verified=True), legalized)


def via_registered(text: str) -> str:
    """The generic text of a program in any textual syntax, read with the
    StableHLO dialect registered (`read_registered`, CHLO legalized)."""
    return read_registered(text).generic


def main_types(text: str) -> tuple[list, list]:
    """(argument types, result types) of @main — or of the module's only
    function — as spec types, read with the dialect registered."""
    from jaxlib.mlir import ir

    from ..spec.types import parse_type
    if holds_quantized_types(text):   # read back in the oracle's own context (read_quantized)
        ctx, text = unregistered_context(), read_quantized(text)
        parse = ir.Module.parse
    else:
        ctx, parse = registered_context(), _parse_registered
    with ctx, ir.Location.unknown():
        module = parse(text)
        funcs = {str(op.operation.attributes["sym_name"]).strip('"'): op.operation
                 for op in module.body.operations if op.operation.name == "func.func"}
        main = funcs.get("main") or (next(iter(funcs.values())) if len(funcs) == 1 else None)
        if main is None:
            raise SyntaxRejected("no func.func @main")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        try:
            return [parse_type(str(t)) for t in ftype.inputs], [parse_type(str(t)) for t in ftype.results]
        except ValueError as e:
            raise SyntaxRejected(f"@main's signature: {e}") from None


def _first_error(e) -> str:
    diags = getattr(e, "error_diagnostics", None) or []
    return " ".join(str(diags[0].message).split()) if diags else _one_line(e)


def _current_operation(e) -> str | None:
    """The generic text of the op a verifier diagnostic is about (MLIR
    attaches "see current operation: …" to verifier errors), or None: then
    the error is one of syntax."""
    marker = "see current operation:"
    for d in getattr(e, "error_diagnostics", None) or []:
        for note in list(getattr(d, "notes", [])) + [d]:
            msg = str(note.message)
            if msg.startswith(marker):
                return msg[len(marker):].strip()
    return None


def isolated_program(op_text: str) -> str | None:
    """A module whose @main applies one op given in generic form to
    arguments of its operand types — so our constraints can judge an op the
    official verifier refused.  None when the text is not one op with a
    function-type signature."""
    t = op_text.strip()
    q = t.find('"')
    if q < 0:
        return None
    results, name_end = t[:q], t.index('"', q + 1) + 1
    if not t[name_end:].startswith("("):
        return None
    operands_end = close_bracket(t, name_end)
    n_operands = len(split_top(t[name_end + 1:operands_end]))
    sig_at = t.rfind(" : (")
    if sig_at < operands_end:
        return None
    sig = t[sig_at + 3:]
    ins_end = close_bracket(sig, 0)
    in_types = split_top(sig[1:ins_end])
    out = sig[ins_end + 1:].strip()
    if not out.startswith("->") or len(in_types) != n_operands:
        return None
    out = out[2:].strip()
    out_types = split_top(out[1:-1]) if out.startswith("(") else [out]
    args = ", ".join(f"%x{i}" for i in range(n_operands))
    head = "%r" if len(out_types) == 1 else f"%r:{len(out_types)}"
    rets = ["%r"] if len(out_types) == 1 else [f"%r#{i}" for i in range(len(out_types))]
    body = f"{head} = {t[q:name_end]}({args}){t[operands_end + 1:]}" if results.strip() else None
    if body is None:
        return None
    sig_args = ", ".join(f"%x{i}: {ty}" for i, ty in enumerate(in_types))
    return (f"func.func @main({sig_args}) -> ({', '.join(out_types)}) {{\n  {body}\n"
            f'  "func.return"({", ".join(rets)}) : ({", ".join(out_types)}) -> ()\n}}\n')
