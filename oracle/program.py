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

The interpreter is in modules by topic; this one reads a program's source
into the module the oracle walks (syntaxes, CHLO, the one op jaxlib's
verifier refuses) and keeps the entry points (`parse_program`, `execute`,
`Program`, the exceptions): rejection.py (the exceptions), block.py (the
Program record), partitioned.py (the grid a module states, manual
computations), functions.py (functions and blocks read, each op checked),
attribute_values.py (an op's attributes from its text), execution.py (the
walk on concrete inputs).
"""
from __future__ import annotations

import contextvars

from ..spec.chlo import declared as chlo_declared
from ..spec.grid import SINGLE as SINGLE_GRID, Grid
from ..spec.types import TensorType, parse_type
from .block import CALL, Program
from .elementwise import Unspecified
from .execution import execute
from .functions import Functions, read_block
from .partitioned import gspmd_manual, manual_computation, stated_grid
from .reading import CHLO_PASS, MLIR_BYTECODE_MAGIC, ChloNotDecomposed, SyntaxRejected, VerifierRejected, chlo_ops, \
    convert_to_wider_results, from_bytecode, isolated_program, read_registered, unregistered_context
from .rejection import CannotJudge, ProgramRejected

__all__ = ["ProgramRejected", "CannotJudge", "Unspecified", "Program", "parse_program", "execute"]


_context = unregistered_context


def parse_program(source: str | bytes, grid: Grid | None = None, wider_results: bool = False) -> Program:
    """Parse and check a module in any StableHLO syntax (text in generic or
    pretty form, MLIR bytecode, a portable artifact); raise ProgramRejected
    naming the first problem.  CHLO ops that spec/chlo declares are read
    as ops and listed in the program's `chlo_judged`; the others are
    legalized into StableHLO first (reading.legalize_chlo) and listed in
    its `legalized`; one that does not decompose raises CannotJudge,
    naming it.  `wider_results` (`run`'s reading of a user's program, never
    the suite's): ops whose result element type is a promotion of their
    operands' are read with converted operands first
    (reading.convert_to_wider_results) and listed in its `widened`.

    The process grid the program is checked for (the collectives'
    constraints and type inference read it: `Instance.grid`) is the
    module's `mhlo.num_replicas` × `mhlo.num_partitions` where it states
    them (a missing one is 1), else `grid`, else 1×1; a module that states
    another grid than `grid` is rejected.  The program keeps it (`grid`)
    and what the module said (`module_grid`, None when it says nothing)."""
    module, legalized, judged = _module(source)
    with _context():
        widened = convert_to_wider_results(module) if wider_results else {}
        stated = stated_grid(module)
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
        functions = Functions(funcs, grid)
        manual = manual_computation(module, funcs[entry], grid)
        gspmd = gspmd_manual(funcs[entry], grid) if manual is None else None
        if manual is not None:   # a JAX shard_map / pmap program: each process runs the body on its shards
            op, mesh = manual
            program = read_block(op.regions[0].blocks[0], f"@{entry}'s sdy.manual_computation", functions)
            program.manual = mesh
        elif gspmd is not None:   # the same, as GSPMD writes it (Shardy off): a call between sharding custom_calls
            program = functions.body(gspmd, f"@{entry}'s manual call")
            program.manual = {"devices": grid.size}
        else:
            program = functions.body(entry, "the entry point")
    program.legalized, program.chlo_judged, program.widened = legalized, judged, widened
    program.grid, program.module_grid = grid, stated
    return program


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
