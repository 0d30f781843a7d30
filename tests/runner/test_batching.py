"""Batched compiles (shlo_conform/pipeline/batching.py, Runner(batch=N)): many cases
in one merged module give exactly the verdicts of one compile per case,
on real XLA:CPU — with a case that crashes its worker, invalid cases that
must be rejected alone, and a case whose expectation is wrong (a failure
is always a single run's verdict)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shlo_conform.spec.quantized import is_family_name

from shlo_conform.pipeline.batching import merge
from shlo_conform.pipeline.runner import Runner
from shlo_conform.pipeline.planning import Learned, cases_of, kind_of, plan
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import parse_type
from shlo_conform.suites.io import load_cases, suite_path
from shlo_conform.suites.records import Case, TensorValue, Verdict, case_id


FIXTURE = Path(__file__).parent / "fixtures" / "crashy_xla.py"
BACKEND = f"{FIXTURE}:CrashyXla"
CRASH = 0x7EAD


def _add_case(a, b, expected) -> Case:
    t = parse_type("tensor<2xi32>")
    mlir = ("func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {\n"
            '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n'
            '  "func.return"(%0) : (tensor<2xi32>) -> ()\n}\n')
    # distinct programs (a batch holds single-case programs): a comment-free rename of the args
    mlir = mlir.replace("%a", f"%x{a[0]}")
    inputs = [TensorValue.of(np.asarray(a, np.int32), t), TensorValue.of(np.asarray(b, np.int32), t)]
    return Case(id=case_id("add", "si32", mlir, inputs), op="add", dtype="si32", kind="value", mlir=mlir,
                inputs=inputs, expected=[Expectation.of(np.asarray(expected, np.int32), t)])


def _const_case(a: int, k: int) -> Case:
    """a + k in si64, k a constant of the program (distinct programs)."""
    t = parse_type("tensor<2xi64>")
    mlir = ("func.func @main(%a: tensor<2xi64>) -> tensor<2xi64> {\n"
            f'  %c = "stablehlo.constant"() {{value = dense<{k}> : tensor<2xi64>}} : () -> tensor<2xi64>\n'
            '  %0 = "stablehlo.add"(%a, %c) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>\n'
            '  "func.return"(%0) : (tensor<2xi64>) -> ()\n}\n')
    inputs = [TensorValue.of(np.asarray([a, -a], np.int64), t)]
    return Case(id=case_id("add", "si64", mlir, inputs), op="add", dtype="si64", kind="value", mlir=mlir,
                inputs=inputs, expected=[Expectation.of(np.asarray([a + k, k - a], np.int64), t)])


def test_a_refused_case_sinks_only_half_batches_not_its_neighbours():
    # Eight cases of one kind, the sixth refused at compile time (the fixture's REFUSE constant):
    # 8 fails -> 4 pass, 4 fails -> 2 single, 2 single.  a + k by hand.
    cases = [_const_case(i, 32430 if i == 5 else 100 + i) for i in range(8)]
    single, one = _verdicts(cases, batch=1)
    batched, many = _verdicts(cases, batch=8)
    assert many == one
    assert [v for _, v, _ in one] == ["pass"] * 5 + ["rejected"] + ["pass"] * 2
    assert batched.compiles == 3 + 4 < single.compiles == 8


def _subset() -> list[Case]:
    cases = [c for c in load_cases(suite_path("core"), {"abs", "sine"})
             if c.op in ("abs", "sine") and not is_family_name(c.dtype)]   # quantized: XLA takes none (unsupported)
    # about half of abs's and sine's cases (every invalid one among them): each is compiled once alone
    # and once batched, and the other half added nothing but 8 s to make test
    rest = cases[56:72] + cases[120:134]
    assert sum(c.kind == "invalid" for c in rest) >= 4
    extra = [_add_case([1, 2], [3, 4], [4, 6]),            # hand-computed
             _add_case([CRASH, 0], [1, 1], [CRASH + 1, 1]),  # the fixture aborts on this input
             _add_case([5, 6], [1, 1], [6, 8])]             # wrong on purpose: 6 + 1 is 7
    return cases[:40] + extra + rest


def _verdicts(cases, backend=BACKEND, **kw):
    r = Runner(backend, **kw)
    return r, [(v.id, v.verdict, v.detail.split(" (")[0]) for v in r.run(cases)]


@pytest.mark.long   # ~8 s: every case of several ops run batched and one by one; make test-long (CI)
def test_batched_verdicts_are_the_single_verdicts():
    cases = _subset()
    single, one = _verdicts(cases, batch=1)
    batched, many = _verdicts(cases, batch=8, jobs=2)
    assert many == one
    by_id = {i: v for i, v, _ in one}
    assert by_id[cases[41].id] == "crash" and by_id[cases[40].id] == "pass" and by_id[cases[42].id] == "fail"
    assert {by_id[c.id] for c in cases if c.kind == "invalid"} <= {"rejected", "fail"}
    assert batched.batches["batches"] >= 5 and batched.batches["fallbacks"] >= 1   # the crashing batch
    assert batched.batches["rerun"] >= 1                                            # the wrong expectation
    assert batched.compiles < single.compiles


def test_invalid_cases_are_never_batched():
    cases = _subset()
    units = plan([[c] for c in cases], 8)
    for kind, group in units:
        if kind == "series":
            assert all(c.kind != "invalid" for b in group for c in b) and all(1 <= len(b) <= 8 for b in group)
            assert len({c.op for b in group for c in b}) == 1
    assert sorted(c.id for u in units for c in cases_of(u)) == sorted(c.id for c in cases)   # each once


def test_merge_renames_helpers_and_splits_outputs():
    # Two programs that both define @main and a helper @twice: merged, each calls its own.
    prog = lambda k: (  # noqa: E731
        "func.func private @twice(%x: tensor<i32>) -> tensor<i32> {\n"
        f'  %c = "stablehlo.constant"() {{value = dense<{k}> : tensor<i32>}} : () -> tensor<i32>\n'
        '  %0 = "stablehlo.multiply"(%x, %c) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n'
        '  "func.return"(%0) : (tensor<i32>) -> ()\n}\n'
        "func.func @main(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
        '  %0 = "func.call"(%a) {callee = @twice} : (tensor<i32>) -> tensor<i32>\n'
        '  "func.return"(%0, %a) : (tensor<i32>, tensor<i32>) -> ()\n}\n')
    b = merge([prog(2), prog(3)])
    assert b.n_inputs == (1, 1) and b.n_outputs == (2, 2)
    from shlo_conform.backends.xla import XlaBackend
    xla = XlaBackend()
    outs = xla.run(xla.compile(b.mlir), b.join_inputs([[np.int32(5)], [np.int32(7)]]))
    assert [[int(x) for x in o] for o in b.split(outs)] == [[10, 5], [21, 7]]   # 5*2, 7*3 by hand
    assert b.split(outs[:3]) is None
    assert merge(['module attributes {mhlo.num_partitions = 2 : i32} {\n' + prog(2) + "}"]) is None


@pytest.mark.long   # stop 62's trim of make test (8:35 on a fresh clone): batching's other guarantees stay in make test
def test_a_kind_that_crashed_alone_runs_alone_and_its_neighbours_still_batch():
    # One unit of 8 (one op, two kinds), refused for its si64 case R:
    # [R a X b | Y s s s] refused -> [R a X b] refused -> [R a] refused, alone: R refused,
    # a passes; [X b] dies (X aborts the worker), alone: X dies again, b passes — si32 is
    # batched no more in this unit -> [Y s s s]: Y alone (dies: the worker is gone), then
    # the three si64 cases merged on a fresh worker.  a + b and a + k by hand.
    R = _const_case(0, 32430)
    a, b = _add_case([1, 2], [3, 4], [4, 6]), _add_case([7, 8], [1, 1], [8, 9])
    X, Y = _add_case([CRASH, 0], [1, 1], [CRASH + 1, 1]), _add_case([3, CRASH], [2, 2], [5, CRASH + 2])
    s64 = [_const_case(i, 100 + i) for i in range(1, 4)]
    cases = [R, a, X, b, Y] + s64
    r, got = _verdicts(cases, batch=8, jobs=1)
    assert [v for _, v, _ in got] == ["rejected", "pass", "crash", "pass", "crash", "pass", "pass", "pass"], got
    assert r.batches["batches"] == 5   # [all], [R a X b], [R a], [X b], [s s s]
    assert r.compiles == 5 + 2 + 2 + 1


def test_a_kind_with_two_cases_refused_alone_is_batched_no_more():
    # One unit of 12 of one kind, the sixth and seventh refused: 12 refused -> [0-5]
    # refused -> [0-2] passes, [3-5] refused, alone: 5 is refused; [6-11] refused ->
    # [6-8] refused, alone: 6 is refused (the kind's second) -> [9-11] alone, not merged.
    # a + k by hand.
    cases = [_const_case(i, 32430 if i in (5, 6) else 100 + i) for i in range(12)]
    c6 = cases[6]   # a program of its own (a renamed argument), refused as the sixth's is
    mlir = c6.mlir.replace("%a", "%z")
    cases[6] = Case(id=case_id("add", "si64", mlir, c6.inputs), op="add", dtype="si64", kind="value", mlir=mlir,
                    inputs=c6.inputs, expected=c6.expected)
    single, one = _verdicts(cases, batch=1)
    batched, many = _verdicts(cases, batch=12, jobs=1)
    assert many == one
    assert [v for _, v, _ in one] == ["pass"] * 5 + ["rejected"] * 2 + ["pass"] * 5
    assert batched.compiles == 1 + 1 + 1 + 1 + 3 + 1 + 1 + 3 + 3


def _refused(i: int) -> Case:
    """An si64 case the fixture refuses (its REFUSE constant), a program of its own (argument renamed)."""
    c = _const_case(i, 32430)
    mlir = c.mlir.replace("%a", f"%r{i}")
    return Case(id=case_id("add", "si64", mlir, c.inputs), op="add", dtype="si64", kind="value", mlir=mlir,
                inputs=c.inputs, expected=c.expected)


def test_what_an_ops_first_batch_learns_its_next_batches_keep():
    # One op's series of three batches of 4, each [R R s s]: si64 refused as a whole kind (as IREE
    # refuses f8 of an op), si32 passing.  Batch 1: merged, refused -> [R R] merged, refused ->
    # alone, both rejected (si64 learned) -> [s s] merged.  Batches 2 and 3: the two R alone,
    # the two s merged.  With what batch 1 learned forgotten (a batch per unit), each batch
    # would cost batch 1's five compiles.  a + b by hand.
    s32 = [_add_case([i, 2], [3, 4], [i + 3, 6]) for i in range(10, 16)]
    cases = [x for k in range(3) for x in (_refused(2 * k), _refused(2 * k + 1), s32[2 * k], s32[2 * k + 1])]
    assert len({c.mlir for c in cases}) == 12
    single, one = _verdicts(cases, batch=1)
    batched, many = _verdicts(cases, batch=4, jobs=1)
    assert many == one
    assert [v for _, v, _ in one] == ["rejected", "rejected", "pass", "pass"] * 3
    assert single.compiles == 12
    assert batched.compiles == (1 + 1 + 2 + 1) + (2 + 1) * 2
    assert batched.batches["batches"] == 3 + 2


# the rejected form (~7 s) in make test-long (CI); make test keeps the unsupported one, the same runner path
@pytest.mark.parametrize("located, refused", [pytest.param("LocatingXla", "rejected", marks=pytest.mark.long),
                                              ("LocatingUnsupportedXla", "unsupported")])
def test_a_refusal_that_names_its_lines_sends_only_those_cases_alone(located, refused):
    # [R a R b c d e f]: the two si64 R refused.  Told where (LocatingXla, as IREE's MLIR
    # diagnostics tell; LocatingUnsupportedXla, as IREE's adapter names the functions whose
    # types cannot cross @main's boundary): the batch, both R alone, [a b c d e f] merged —
    # 4 compiles.  Not told (CrashyXla): halves of halves — 9.  The same verdicts either way,
    # and alone.  a + b by hand.
    s32 = [_add_case([i, 2], [3, 4], [i + 3, 6]) for i in range(20, 26)]
    cases = [_refused(0), s32[0], _refused(1)] + s32[1:]
    told, located_many = _verdicts(cases, batch=8, jobs=1, backend=f"{FIXTURE}:{located}")
    _, located_one = _verdicts(cases, batch=1, backend=f"{FIXTURE}:{located}")
    assert located_many == located_one
    assert [v for _, v, _ in located_one] == [refused, "pass", refused] + ["pass"] * 5
    assert told.compiles == 1 + 2 + 1
    if refused == "rejected":
        halved, many = _verdicts(cases, batch=8, jobs=1)
        _, one = _verdicts(cases, batch=1)
        assert many == one and [v for _, v, _ in one] == [v for _, v, _ in located_one]
        assert halved.compiles == 1 + 1 + (1 + 2) + (1 + 2) + 1


def test_a_kind_is_the_op_its_type_and_every_element_type_of_its_signature():
    # suites/core's converts from si32: two refused alone teach that their result type is
    # refused, not the op on si32 (IREE returns no f8E4M3 and converts si32 to f32).
    cases = [c for c in load_cases(suite_path("core"), {"convert"}) if c.dtype == "si32"]
    by = lambda t: [c for c in cases if c.expected and c.expected[0].type.element_type.name == t]  # noqa: E731
    f8, f32 = by("f8E4M3"), by("f32")
    assert len(f8) >= 2 and f32
    assert kind_of(f8[0]) == ("convert", "si32", ("f8E4M3", "i32")) == kind_of(f8[1]) != kind_of(f32[0])
    learned = Learned()
    for c in f8[:2]:
        learned.saw(c, Verdict(c.id, c.op, c.dtype, c.kind, "unsupported", "no"))
    assert learned.alone(f8[-1]) and not learned.alone(f32[0])


def test_culprits_are_the_cases_whose_functions_hold_the_named_lines():
    prog = lambda k: (  # noqa: E731  (a helper and @main per case: both lines belong to the case)
        "func.func private @h(%x: tensor<i32>) -> tensor<i32> {\n"
        f'  %c = "stablehlo.constant"() {{value = dense<{k}> : tensor<i32>}} : () -> tensor<i32>\n'
        '  %0 = "stablehlo.add"(%x, %c) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n'
        '  "func.return"(%0) : (tensor<i32>) -> ()\n}\n'
        "func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
        '  %0 = "func.call"(%a) {callee = @h} : (tensor<i32>) -> tensor<i32>\n'
        '  "func.return"(%0) : (tensor<i32>) -> ()\n}\n')
    b = merge([prog(1), prog(2), prog(3)])
    lines = b.mlir.splitlines()
    at = {k: next(i for i, line in enumerate(lines, 1) if f"dense<{k}>" in line) for k in (1, 2, 3)}
    assert b.culprits(f"<stdin>:{at[2]}:8: error: nope") == {1}
    assert b.culprits(f'x | "<stdin>":{at[3]}:1: error: a | <stdin>:{at[1]}:2: error: b') == {0, 2}
    main = next(i for i, line in enumerate(lines, 1) if line.startswith("func.func @main"))
    assert b.culprits(f"<stdin>:{main + 1}:3: error: in merged @main") == set()
    assert b.culprits(f"<stdin>:{at[2]}:8: note: not an error") == b.culprits("no location") == set()


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): batching's other guarantees stay in make test
def test_rng_draws_do_not_depend_on_what_the_worker_compiled_before():
    # XLA:CPU seeds a module's rng from process state that compiles move on: the same
    # rng program drew other numbers after other programs.  Each rng program now gets
    # a worker that compiled nothing before (planning.needs_fresh_worker), so the order of the
    # cases no longer matters.
    cases = [c for c in load_cases(suite_path("core"), {"rng"}) if c.dtype in ("si32", "bf16")][:4]
    assert len(cases) == 4

    def outputs(order):
        r = Runner("xla", jobs=1, keep_outputs=True)
        r.run(order)
        return {k: [np.asarray(a).tobytes() for a in v] for k, v in r.outputs.items()}

    forward, backward = outputs(cases), outputs(cases[::-1])
    assert forward.keys() == backward.keys() and len(forward) == 4
    assert forward == backward
