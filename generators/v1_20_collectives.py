"""Cases of v1.20's collective_broadcast, collective_reduce, async_start and
async_done (spec/added/): a generator stream of their own.

The two collectives are generated as the seed's are: the op's skeletons
(`skeleton.enumerate_skeletons`), shapes, groups and grids solved by z3
under the op's own constraints (`solve.solve_for`), the declared corners
(`corners.corner_instances`: groups leaving processes out, a channel's
cross_partition groups, several groups), and up to two invalid programs
per constraint (`negative.violations`, each checked to be refused for its
own constraint).  Every value case runs on its solved grid: process 0
takes the drawn arrays, the others arrays drawn from a generator of the
program's own, and the oracle runs the whole grid for each process's
expectations.  The skeleton solver cannot reach `has_dynamic_root = true`
with data beside the roots operand (operand counts are chosen before
attributes), so those programs — and the invalid ones that break the
roots' type — are built here by hand, the roots alike on every process of
a grid (the section does not say whose roots count).

async_start and async_done are programs of two ops around a third: one
case per operation v1.20's async_start C2 admits (the five collectives and
collective_broadcast on a 2×1 grid; slice, dynamic_slice,
dynamic_update_slice on one process), in jaxlib's spelling (the region's
block takes the operands as arguments), and in v1.20's own (the Example's:
the operation uses the enclosing function's values) for three of them —
v1.20's Example itself among them, on its 8×1 grid.  async_done gets one
case per element type its result row admits, and each op an invalid
program per constraint.

Hooked into `suite.op_cases` for the ops v1.20 added: `cases(spec, seed,
expect_fn)` is [] for any other op, and draws from a generator seeded by
(seed, op, "v1.20 collectives"), so no other stream changes.
`late_cases(spec, seed, expect_fn)`, the last of `suite.ADDED_STREAMS`,
holds async_start's and async_done's cases written after the quantized
stream's (a future of two tensors, a block argument of another element
type): on a generator of its own, (seed, op, "v1.20 collectives late"),
so every earlier line keeps its bytes.
"""
from __future__ import annotations

import zlib

import numpy as np

from ..spec.dsl import Function, OpSpec
from ..spec.grid import Grid
from ..spec.types import TensorType, element_type
from ..suites.records import Case, GridData, TensorValue, case_id
from . import corners, emit, expect, negative, solve, values
from .skeleton import draw_ranks, enumerate_skeletons

COLLECTIVES = ("collective_broadcast", "collective_reduce")
ASYNC = ("async_start", "async_done")
CASES_PER_DTYPE = 2   # solved random cases per element type of the collectives' skeletons
INVALID_PER_CONSTRAINT = 2
F32 = element_type("f32")
SI32 = element_type("si32")
SI64 = element_type("si64")
F64 = element_type("f64")


def cases(spec: OpSpec, seed: int, expect_fn=None) -> list[Case]:
    """The op's cases of this stream (module docstring); [] for other ops."""
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"v1.20 collectives")])
    if spec.mnemonic in COLLECTIVES:
        made = _collective_cases(spec, seed, rng, expect_fn)
    elif spec.mnemonic == "async_start":
        made = _async_start_cases(spec, seed, rng, expect_fn)
    elif spec.mnemonic == "async_done":
        made = _async_done_cases(spec, seed, rng, expect_fn)
    else:
        return []
    seen, out = set(), []
    for c in made:
        if c is not None and c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


# ---------------------------------------------------------------- one case, on a grid or not
def _provenance(spec: OpSpec, seed: int) -> dict:
    from .suite import GENERATOR_VERSION   # (suite.py runs this stream: imported when a case is made)
    return {"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION, "spec": "v1.20"}


def _module(mlir: str, grid: Grid) -> str:
    from .suite import with_grid
    return with_grid(mlir, grid) if grid.size > 1 else mlir


def _case(spec: OpSpec, seed: int, dtype: str, mlir: str, grid: Grid, arg_types: list, per: list, kind: str,
          note: str, expect_fn=None, violates: str | None = None, inst=None) -> Case | None:
    """One case of the program `mlir` (@main's body, the grid not yet
    stated) run with `per[i]` on process i: a plain case on one process, a
    `GridData` case on more; None where the spec states no result, or where
    an invalid program is not refused for `violates` (the text cannot say
    what was meant: no test of the constraint)."""
    mlir = _module(mlir, grid)
    tv = lambda xs: [TensorValue.of(a, t) for a, t in zip(xs, arg_types)]  # noqa: E731
    prov = _provenance(spec, seed)
    if kind == "invalid":
        if expect.rejection(mlir) != violates:
            return None
        tvs = tv(per[0])
        return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=kind), op=spec.mnemonic, dtype=dtype,
                    kind=kind, mlir=mlir, inputs=tvs, violates=violates, note=note,
                    grid=GridData(grid.num_replicas, grid.num_partitions) if grid.size > 1 else None,
                    provenance=prov)
    reason = spec.exercise.survey_when(inst) if inst is not None and spec.exercise.survey_when else None
    if reason:   # the result as a whole is the implementation's choice (a non-associative reduction)
        kind, note = "survey", f"{note}; {reason}"
    try:
        if grid.size == 1:
            expected = (expect_fn(spec, inst, mlir, per[0]) if expect_fn is not None
                        else expect.expected_outputs(mlir, per[0]))
        elif expect_fn is not None:   # a stand-in (tests): per process, as it would for one
            expected = [expect_fn(spec, inst, mlir, a) for a in per]
        else:
            expected = expect.expected_grid_outputs(mlir, grid, per)
    except expect.Unspecified:
        return None
    if grid.size == 1:
        tvs = tv(per[0])
        return Case(id=case_id(spec.mnemonic, dtype, mlir, tvs, salt=kind), op=spec.mnemonic, dtype=dtype,
                    kind=kind, mlir=mlir, inputs=tvs, expected=expected, note=note, provenance=prov)
    per_tvs = [tv(a) for a in per]
    return Case(id=case_id(spec.mnemonic, dtype, mlir, [v for vs in per_tvs for v in vs], salt=kind),
                op=spec.mnemonic, dtype=dtype, kind=kind, mlir=mlir, inputs=[], expected=[], note=note,
                grid=GridData(grid.num_replicas, grid.num_partitions, per_tvs, expected), provenance=prov)


# ---------------------------------------------------------------- collective_broadcast, collective_reduce
def _roots(inst) -> int | None:
    """The index of the roots operand among @main's arguments (None without dynamic roots)."""
    return len(inst.operands["operands"]) - 1 if inst.has_dynamic_root else None


def _draw(spec: OpSpec, inst, rng, roots: np.ndarray | None) -> list:
    """@main's arguments for one process: each data operand random and
    special values (`values.fill`); the roots operand, where there is one,
    the `roots` every process of the grid holds (repeated or cut to the
    operand's shape, which an invalid program may get wrong)."""
    types = emit.operand_types(spec, inst, arguments_only=True)
    k = _roots(inst)
    return [np.resize(np.asarray(roots), t.shape).astype(t.element_type.numpy) if i == k
            else values.fill(t.element_type, t.shape, rng, spec.exercise, i) for i, t in enumerate(types)]


def _draw_roots(inst, rng) -> np.ndarray | None:
    """Roots in `[0, shape(replica_groups)[1])` (collective_broadcast's C6), one per data operand."""
    k = _roots(inst)
    if k is None:
        return None
    cols = len(inst.replica_groups[0]) if inst.replica_groups else 1
    return rng.integers(0, max(cols, 1), size=k).astype(np.int32)


def _grid_of(inst) -> Grid:
    g = inst.grid
    return g if isinstance(g, Grid) else Grid(1, 1)


def _present(spec: OpSpec, skel) -> set | None:
    """The attributes a program of `skel` writes: all but the optional ones
    the skeleton leaves out (`has_dynamic_root` absent: false), as the
    seed's streams write them; None (every attribute with a value) for a
    hand-built instance."""
    if skel is None:
        return None
    chosen = skel.attr_dict
    return {a.name for a in spec.attributes if not (a.name in chosen and chosen[a.name] is None)}


def _instance_case(spec: OpSpec, seed: int, dtype: str, inst, rng, note: str, expect_fn, kind: str = "value",
                   violates: str | None = None, skel=None) -> Case | None:
    grid = _grid_of(inst)
    roots = _draw_roots(inst, rng)
    first = _draw(spec, inst, rng, roots)
    mlir = emit.program(spec, inst, _present(spec, skel))
    if kind == "invalid" or grid.size == 1:
        per = [first]
    else:   # the other processes' arrays from a generator of the program's own: the stream draws the same
        own = np.random.default_rng([seed, zlib.crc32(_module(mlir, grid).encode())])
        per = [first] + [_draw(spec, inst, own, roots) for _ in range(grid.size - 1)]
    return _case(spec, seed, dtype, mlir, grid, emit.operand_types(spec, inst, arguments_only=True), per, kind,
                 note, expect_fn, violates, inst)


def _collective_cases(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    skels = enumerate_skeletons(spec)
    by_dtype: dict = {}
    for s in skels:
        by_dtype.setdefault(s.dtype(spec), []).append(s)
    out = []
    for turn, (dtype, group) in enumerate(by_dtype.items()):
        order = [int(i) for i in rng.permutation(len(group))]
        for j in range(CASES_PER_DTYPE):
            skel = group[order[(turn + j) % len(group)]]
            for inst in solve.solve_for(spec, skel, draw_ranks(spec, skel, rng), rng, 1, zero_prob=0.1):
                out.append(_instance_case(spec, seed, dtype, inst, rng, "random and special values", expect_fn,
                                          skel=skel))
    for note, skel, inst in corners.corner_instances(spec, skels, rng):
        out.append(_instance_case(spec, seed, skel.dtype(spec), inst, rng, note, expect_fn, skel=skel))
    for note, inst in _dynamic_root_instances(spec):
        if not spec.violated(inst) and not spec.types_outside_tables(inst):
            out.append(_instance_case(spec, seed, inst.operands["operands"][0].element_type.name, inst, rng, note,
                                      expect_fn))
    found, _ = negative.violations(spec, rng, INVALID_PER_CONSTRAINT, skels)
    for v in found:
        out.append(_instance_case(spec, seed, v.skeleton.dtype(spec), v.inst, rng,
                                  f"violates {v.label} ({v.strategy})", expect_fn, "invalid", v.label, v.skeleton))
    for label, note, inst in _invalid_roots(spec):
        if spec.violated(inst) == [label]:
            out.append(_instance_case(spec, seed, inst.operands["operands"][0].element_type.name, inst, rng,
                                      f"violates {label} ({note})", expect_fn, "invalid", label))
    return out


def _t(shape, et=F32) -> TensorType:
    return TensorType(tuple(shape), et)


def _add(et) -> Function:
    s = _t((), et)
    return Function((s, s), (s,), "add")


def _collective(spec: OpSpec, data: list, roots: TensorType | None, groups, grid: Grid, channel_id: int = 0,
                results: list | None = None):
    """A hand-built instance (dynamic roots: the roots operand last)."""
    attrs = {"replica_groups": groups, "channel_id": channel_id, "has_dynamic_root": True if roots else None}
    regions = {"computation": _add(data[0].element_type)} if spec.regions else {}
    inst = spec.instance({"operands": list(data) + ([roots] if roots else [])}, attrs, {}, regions, grid=grid)
    inst.results["results"] = results if results is not None else spec.infer(inst)["results"]
    return inst


def _dynamic_root_instances(spec: OpSpec) -> list:
    """`has_dynamic_root = true` with data beside the roots (module docstring)."""
    g4, g22 = Grid(4, 1), Grid(2, 2)
    return [
        ("dynamic root: one f32 operand, groups of two", _collective(
            spec, [_t((3,))], _t((1,), SI32), ((2, 1), (0, 3)), g4)),
        ("dynamic root: two data operands, one group of three (process 3 in none)", _collective(
            spec, [_t((2, 2)), _t((4,), SI32)] if spec.mnemonic == "collective_broadcast" else [_t((2, 2)), _t((4,))],
            _t((2,), SI32), ((0, 1, 2),), g4)),
        ("dynamic root: channel, groups of partitions", _collective(
            spec, [_t((2,))], _t((1,), SI32), ((1, 0),), g22, channel_id=1)),
    ]


def _invalid_roots(spec: OpSpec) -> list:
    """The roots' type broken alone: collective_broadcast's C4, collective_reduce's C3."""
    label = "collective_broadcast_c4" if spec.mnemonic == "collective_broadcast" else "collective_reduce_c3"
    g = Grid(2, 1)
    return [
        (label, "roots of f32", _collective(spec, [_t((3,))], _t((1,), F32), ((0, 1),), g)),
        (label, "two roots for one data operand", _collective(spec, [_t((3,))], _t((2,), SI32), ((0, 1),), g)),
        (label, "roots of rank 2", _collective(spec, [_t((3,))], _t((1, 1), SI32), ((0, 1),), g)),
    ]


# ---------------------------------------------------------------- async_start / async_done programs
class Operation:
    """One operation async_start may hold (its C2's list), as generic MLIR:
    `text(uses, result)` writes it on the named operands."""

    def __init__(self, name: str, grid: Grid, operand_types: list, result_type: TensorType, text, indices=()):
        self.name, self.grid, self.operand_types, self.result_type = name, grid, operand_types, result_type
        self.text = text
        self.indices = tuple(indices)   # positions of index operands (dynamic_slice's start indices)


def _sum(et, indent: str) -> str:
    s = _t((), et).mlir
    return (f'({{\n{indent}  ^bb0(%l: {s}, %r: {s}):\n{indent}    %s = "stablehlo.add"(%l, %r) : ({s}, {s}) -> {s}\n'
            f'{indent}    "stablehlo.return"(%s) : ({s}) -> ()\n{indent}  }})')


def _sig(types) -> str:
    return ", ".join(t.mlir for t in types)


def operations(et) -> list[Operation]:
    """Each operation of async_start's C2 on operands of element type `et`
    (index operands si64): the collectives on a 2×1 grid, the slices on one
    process."""
    g2, g1 = Grid(2, 1), Grid(1, 1)
    pair = "dense<[[0, 1]]> : tensor<1x2xi64>"

    def op(name, ins, out, attrs, region=""):
        def text(uses, indent="    "):
            body = _sum(et, indent) if region else ""
            return (f'"stablehlo.{name}"({", ".join(uses)}){" " + body if body else ""} {{{attrs}}} : '
                    f"({_sig(ins)}) -> {out.mlir}")
        return text

    def make(name, grid, ins, out, attrs, region="", indices=()):
        return Operation(name, grid, ins, out, op(name, ins, out, attrs, region), indices)

    return [
        make("all_gather", g2, [_t((2, 3), et)], _t((2, 6), et), f"all_gather_dim = 1 : i64, replica_groups = {pair}"),
        make("all_reduce", g2, [_t((4,), et)], _t((4,), et), f"replica_groups = {pair}", region="add"),
        make("all_to_all", g2, [_t((4,), et)], _t((4,), et),
             f"concat_dimension = 0 : i64, replica_groups = {pair}, split_count = 2 : i64, split_dimension = 0 : i64"),
        make("collective_permute", g2, [_t((3,), et)], _t((3,), et),
             "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>"),
        make("reduce_scatter", g2, [_t((4,), et)], _t((2,), et),
             f"replica_groups = {pair}, scatter_dimension = 0 : i64", region="add"),
        make("collective_broadcast", g2, [_t((3,), et)], _t((3,), et),
             "replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>"),
        make("slice", g1, [_t((5,), et)], _t((2,), et),
             "limit_indices = array<i64: 4>, start_indices = array<i64: 2>, strides = array<i64: 1>"),
        make("dynamic_slice", g1, [_t((5,), et), _t((), SI64)], _t((2,), et), "slice_sizes = array<i64: 2>",
             indices=(1,)),
        make("dynamic_update_slice", g1, [_t((5,), et), _t((2,), et), _t((), SI64)], _t((5,), et), "",
             indices=(2,)),
    ]


def async_program(operation: Operation, form: str = "arguments", future=None, done=None, body=None,
                  operands=None, block_types=None) -> str:
    """@main running `operation` through async_start and async_done.

    `form`: "arguments" (the block takes the operands: jaxlib's spelling) or
    "captures" (the operation uses @main's values: v1.20's Example's).
    `future` / `done`: the future's and async_done's types where a case
    states others than the operation's; `body(uses) -> lines`: other block
    contents (invalid programs); `operands`: which @main arguments
    async_start takes (default: all, in order); `block_types`: the block
    arguments' types where a case states others than the operands' (by
    the operand's index)."""
    ins, out = operation.operand_types, operation.result_type
    future = future or f"!stablehlo.future<{out.mlir}>"
    done = done or out
    args = ", ".join(f"%arg{i}: {t.mlir}" for i, t in enumerate(ins))
    taken = list(range(len(ins))) if operands is None else list(operands)
    if form == "arguments":
        uses = [f"%b{i}" for i in taken]
        block = ins if block_types is None else block_types
        label = "    ^bb0(" + ", ".join(f"%b{i}: {block[i].mlir}" for i in taken) + "):\n"
    else:
        uses = [f"%arg{i}" for i in range(len(ins))]
        label = ""
    lines = body(uses) if body is not None else [f"    %1 = {operation.text(uses)}",
                                                 f'    "stablehlo.return"(%1) : ({out.mlir}) -> ()']
    return (f"func.func @main({args}) -> ({done.mlir}) {{\n"
            f'  %0 = "stablehlo.async_start"({", ".join(f"%arg{i}" for i in taken)}) ({{\n{label}'
            + "\n".join(lines) + "\n"
            f"  }}) : ({_sig([ins[i] for i in taken])}) -> {future}\n"
            f'  %2 = "stablehlo.async_done"(%0) : ({future}) -> {done.mlir}\n'
            f'  "func.return"(%2) : ({done.mlir}) -> ()\n}}\n')


def example_program() -> tuple[str, Grid, list]:
    """v1.20's Example (async_start's and async_done's), its operation
    using @main's `%arg0`, on a grid its replica_groups cover (8×1): the
    program, the grid, @main's argument types."""
    t = _t((8, 2))
    return ('func.func @main(%arg0: tensor<8x2xf32>) -> (tensor<8x8xf32>) {\n'
            '  %0 = "stablehlo.async_start"(%arg0) ({\n'
            '    %1 = "stablehlo.all_gather"(%arg0) {\n'
            '      all_gather_dim = 1 : i64,\n'
            '      replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>\n'
            '    } : (tensor<8x2xf32>) -> tensor<8x8xf32>\n'
            '    "stablehlo.return"(%1) : (tensor<8x8xf32>) -> ()\n'
            '  }) : (tensor<8x2xf32>) -> !stablehlo.future<tensor<8x8xf32>>\n'
            '  %2 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<8x8xf32>>) -> tensor<8x8xf32>\n'
            '  "func.return"(%2) : (tensor<8x8xf32>) -> ()\n}\n', Grid(8, 1), [t])


def _arrays(operation: Operation, rng, process: int = 0) -> list:
    """One process's arguments: random and special values; an index operand
    in bounds on even processes, past the end on odd ones (the slices run on
    one process: in bounds)."""
    out = []
    for i, t in enumerate(operation.operand_types):
        if i in operation.indices:
            hi = operation.operand_types[0].shape[0]
            out.append(np.asarray(rng.integers(0, hi) if process % 2 == 0 else hi + 2, dtype=np.int64))
        else:
            out.append(values.fill(t.element_type, t.shape, rng))
    return out


def _async_case(spec, seed, rng, operation: Operation, mlir: str, note: str, expect_fn, kind="value",
                violates=None, arg_types=None, grid=None) -> Case | None:
    grid = grid or operation.grid
    arg_types = arg_types or operation.operand_types
    if kind == "invalid" or grid.size == 1:
        per = [_arrays(operation, rng)]
    else:
        own = np.random.default_rng([seed, zlib.crc32(_module(mlir, grid).encode())])
        per = [_arrays(operation, rng)] + [_arrays(operation, own, i) for i in range(1, grid.size)]
    dtype = operation.result_type.element_type.name
    return _case(spec, seed, dtype, mlir, grid, arg_types, per, kind, note, expect_fn, violates)


CAPTURED = ("all_gather", "collective_permute", "slice")   # also written as v1.20's Example writes its body


def _async_start_cases(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    out = []
    for operation in operations(F32):
        out.append(_async_case(spec, seed, rng, operation, async_program(operation),
                               f"{operation.name} in the body (block arguments: jaxlib's spelling)", expect_fn))
        if operation.name in CAPTURED:
            out.append(_async_case(spec, seed, rng, operation, async_program(operation, "captures"),
                                   f"{operation.name} in the body on @main's values (v1.20's Example's spelling)",
                                   expect_fn))
    mlir, grid, types = example_program()
    own = np.random.default_rng([seed, zlib.crc32(_module(mlir, grid).encode())])
    per = [[values.fill(F32, types[0].shape, own)] for _ in range(grid.size)]
    out.append(_case(spec, seed, "f32", mlir, grid, types, per, "value", "v1.20's Example (8×1 grid)", expect_fn))
    return out + _async_start_invalid(spec, seed, rng, expect_fn)


def _async_start_invalid(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """Each of async_start's constraints broken alone (the rejection must name it)."""
    gather, _, _, _, _, _, slicing, _, _ = operations(F32)
    two = Operation("all_gather", Grid(2, 1), [_t((2, 3)), _t((2, 3))], _t((2, 6)), None)
    g2 = lambda uses, indent="    ": gather.text(uses, indent)  # noqa: E731
    out = []

    def add(label, note, operation, mlir):
        out.append(_async_case(spec, seed, rng, operation, mlir, f"violates {label} ({note})", expect_fn,
                               "invalid", label))

    r = gather.result_type.mlir
    add("async_start_c1", "two operations in the body", gather, async_program(gather, body=lambda uses: [
        f"    %1 = {g2(uses)}", f'    %3 = "stablehlo.abs"(%1) : ({r}) -> {r}', f'    "stablehlo.return"(%3) : ({r}) -> ()']))
    add("async_start_c1", "the body returns its argument, not the operation's result", slicing,
        async_program(slicing, body=lambda uses: [
            f"    %1 = {slicing.text(uses)}", f'    "stablehlo.return"({uses[0]}) : (tensor<5xf32>) -> ()']))
    add("async_start_c2", "an abs in the body", slicing, async_program(slicing, body=lambda uses: [
        f'    %1 = "stablehlo.abs"({uses[0]}) : (tensor<5xf32>) -> tensor<5xf32>',
        '    "stablehlo.return"(%1) : (tensor<5xf32>) -> ()'],
        future="!stablehlo.future<tensor<5xf32>>", done=_t((5,))))
    swapped = lambda uses: [  # noqa: E731
        f'    %1 = "stablehlo.all_gather"({uses[1]}) {{all_gather_dim = 1 : i64, '
        f'replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : (tensor<2x3xf32>) -> tensor<2x6xf32>',
        '    "stablehlo.return"(%1) : (tensor<2x6xf32>) -> ()']
    add("async_start_c3", "the operation takes the second block argument, async_start passes two", two,
        async_program(two, body=swapped))
    add("async_start_c3", "the operation takes another @main value than async_start's operand", two,
        async_program(two, "captures", body=swapped, operands=[0]))
    add("async_start_c4", "a future of another shape", gather,
        async_program(gather, future="!stablehlo.future<tensor<2x3xf32>>", done=_t((2, 3))))
    return out


def _async_done_cases(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """all_gather through async_start/async_done in each element type the
    result row admits; then its C1 broken alone."""
    out = []
    for et in spec.results[0].types:
        gather = operations(et)[0]
        out.append(_async_case(spec, seed, rng, gather, async_program(gather),
                               f"async_done of an all_gather of {et.mlir}", expect_fn))
    gather = operations(F32)[0]
    out.append(_async_case(spec, seed, rng, gather, async_program(gather, done=_t((2, 6), element_type("f64"))),
                           "violates async_done_c1 (a result of another element type than the future's)",
                           expect_fn, "invalid", "async_done_c1"))
    out.append(_async_case(spec, seed, rng, gather, async_program(gather, done=_t((6, 2))),
                           "violates async_done_c1 (a result of another shape than the future's)",
                           expect_fn, "invalid", "async_done_c1"))
    return out


# ---------------------------------------------------------------- late: after the quantized stream's cases
def late_cases(spec: OpSpec, seed: int, expect_fn=None) -> list[Case]:
    """async_start's and async_done's cases added after the quantized stream
    had written theirs (module docstring): the last stream of
    `suite.ADDED_STREAMS`, so the committed lines keep their bytes; [] for
    other ops."""
    if spec.mnemonic not in ASYNC:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"v1.20 collectives late")])
    made = (_async_start_late(spec, seed, rng, expect_fn) if spec.mnemonic == "async_start"
            else _async_done_late(spec, seed, rng, expect_fn))
    return [c for c in made if c is not None]


def _async_start_late(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """C3 by a block argument of another element type (f64) than the f32
    operand it receives, the operation taking it in order: the type half of
    C3 broken alone (the other C3 cases break the order half, so an
    implementation that never compared the types passed them all).  The
    f64 all_gather is valid, the future is of its result (C4)."""
    gather, wide = operations(F32)[0], operations(F64)[0]
    r = wide.result_type
    mlir = async_program(gather, future=f"!stablehlo.future<{r.mlir}>", done=r, block_types=wide.operand_types,
                         body=lambda uses: [f"    %1 = {wide.text(uses)}",
                                            f'    "stablehlo.return"(%1) : ({r.mlir}) -> ()'])
    return [_async_case(spec, seed, rng, gather, mlir,
                        "violates async_start_c3 (a block argument of f64 for an f32 operand)",
                        expect_fn, "invalid", "async_start_c3")]


def _async_done_late(spec: OpSpec, seed: int, rng, expect_fn) -> list:
    """C1 by a future of two tensors (a two-operand all_gather's results,
    async_start's C4 `future<T>` with T both types: spec.md's FutureType
    holds one or more tensors), async_done returning the first: async_done
    has one result, so no T is returned (the other C1 cases state another
    type than a one-tensor future's, so an implementation that took the
    first of any future's types passed them all)."""
    two = Operation("all_gather", Grid(2, 1), [_t((2, 3)), _t((2, 3))], _t((2, 6)), None)
    ins, r = _sig(two.operand_types), two.result_type.mlir

    def both(uses):
        return [f'    %1:2 = "stablehlo.all_gather"({", ".join(uses)}) {{all_gather_dim = 1 : i64, '
                f"replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : ({ins}) -> ({r}, {r})",
                f'    "stablehlo.return"(%1#0, %1#1) : ({r}, {r}) -> ()']
    mlir = async_program(two, future=f"!stablehlo.future<{r}, {r}>", body=both)
    return [_async_case(spec, seed, rng, two, mlir,
                        "violates async_done_c1 (a future of two tensors, the result its first)",
                        expect_fn, "invalid", "async_done_c1")]
