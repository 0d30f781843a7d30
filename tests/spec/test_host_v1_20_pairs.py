"""v1.20's send/recv `source_target_pairs` (C1–C4) and infeed's C2.

Truth is v1.20's text read by hand: each clause broken alone on an instance
whose pairs we wrote, the expected label and the process each one receives
from listed here by hand (a pair (s, t) carries s's input to t), and
StableHLO's spelling of the attribute as jaxlib 0.10.2 prints it.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from shlo_conform.generators import expect, host_pairs, suite
from shlo_conform.oracle.elementwise import Unspecified
from shlo_conform.oracle.program import ProgramRejected, parse_program
from shlo_conform.oracle.rejection import CannotJudge
from shlo_conform.spec import v1_20_map as vmap
from shlo_conform.spec.grid import Grid
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.ops.recv import DEVICE_TRANSFERS
from shlo_conform.spec.types import SI32, TensorType, TokenType

T = TensorType((2,), SI32)
TOK = "!stablehlo.token"
DEVICE = {"channel_id": 3, "channel_type": "DEVICE_TO_DEVICE", "is_host_transfer": False}


def send(pairs, grid=Grid(1, 2), **attrs):
    spec = OPS["send"]
    return spec.instance({"inputs": [T], "token": TokenType()}, {**DEVICE, "source_target_pairs": pairs, **attrs},
                         {"result": TokenType()}, grid=grid)


def recv(pairs, grid=Grid(1, 2), **attrs):
    spec = OPS["recv"]
    return spec.instance({"token": TokenType()}, {**DEVICE, "source_target_pairs": pairs, **attrs},
                         {"results": [T, TokenType()]}, grid=grid)


# v1.20 C<n> -> the label that states it, per op (send's seed C1 is v1.20 C5; recv's seed runs to C3)
LABELS = {"send": {1: "send_c2", 2: "send_c3", 3: "send_c4", 4: "send_c5"},
          "recv": {1: "recv_c4", 2: "recv_c5", 3: "recv_c6", 4: "recv_c7"}}

# (pairs, grid, channel_id, the v1.20 clause it breaks — None: valid), by hand
BY_HAND = [
    (((0, 1), (1, 0)), Grid(1, 2), 3, None),             # a swap of two partitions
    (((0, 1), (1, 2), (2, 0)), Grid(1, 3), 3, None),     # a cycle
    (((0, 1),), Grid(1, 2), 3, None),                    # one pair; partition 0 receives nothing
    ((), Grid(1, 1), 3, None),                           # empty: 0×2 (undefined behaviour, not invalid)
    (((0, 1), (1, 0)), Grid(2, 1), 0, None),             # channel 0: replica ids (cross_replica)
    (((0, 1, 1),), Grid(1, 2), 3, 1),                    # width 3
    (((1,),), Grid(1, 2), 3, 1),                         # width 1
    (((0, 1), (0, 0)), Grid(1, 2), 3, 2),                # source 0 twice
    (((0, 1), (1, 1)), Grid(1, 2), 3, 3),                # target 1 twice
    (((0, 2),), Grid(1, 2), 3, 4),                       # target outside the two partitions
    (((0, 1),), Grid(2, 1), 3, 4),                       # channel > 0: partitions, and there is one
    (((0, 1),), Grid(1, 2), 0, 4),                       # channel 0: replicas, and there is one
    (((-1, 0),), Grid(1, 2), 3, 4),                      # a negative source
]


@pytest.mark.parametrize("op", ["send", "recv"])
@pytest.mark.parametrize("pairs, grid, channel, clause", BY_HAND)
def test_each_pairs_clause_is_broken_alone(op, pairs, grid, channel, clause):
    make = send if op == "send" else recv
    inst = make(pairs, grid, channel_id=channel)
    assert OPS[op].violated(inst) == ([] if clause is None else [LABELS[op][clause]])


@pytest.mark.parametrize("op", ["send", "recv"])
def test_a_program_without_pairs_reads_as_the_seeds(op):
    """None (the attribute left out: every seed program) breaks no pairs clause."""
    make = send if op == "send" else recv
    assert OPS[op].violated(make(None, Grid(1, 1))) == []
    host = {"channel_id": 1, "channel_type": "DEVICE_TO_HOST" if op == "send" else "HOST_TO_DEVICE",
            "is_host_transfer": True}
    assert OPS[op].violated(make(None, Grid(1, 1), **host)) == []


def test_the_rules_are_collective_permutes():
    """Every pairs list of ids in -1..2, up to two pairs of width 1..3, on a 1×2 grid: send's and recv's
    C1–C4 decide as collective_permute's C1–C4 on the same pairs (one rule in one place)."""
    cp = OPS["collective_permute"]
    ids = (-1, 0, 1, 2)
    rows = [(a,) for a in ids] + [(a, b) for a in ids for b in ids] + [(0, 1, 1)]
    checked = 0
    for r1 in rows:
        for r2 in [None] + rows:
            pairs = (r1,) if r2 is None else (r1, r2)
            if len({len(r) for r in pairs}) != 1:
                continue
            c = cp.instance({"operand": T}, {"source_target_pairs": pairs, "channel_id": 3}, {"result": T},
                            grid=Grid(1, 2))
            theirs = [n for n in range(1, 5) if f"collective_permute_c{n}" in cp.violated(c)]
            for op, make in (("send", send), ("recv", recv)):
                ours = [n for n, label in LABELS[op].items() if label in OPS[op].violated(make(pairs))]
                assert ours == theirs, (op, pairs)
            checked += 1
    assert checked > 100


def test_the_later_clauses_are_declared_and_traced():
    assert dict(OPS["send"].later) == {"send_c2": "v1.20 C1", "send_c3": "v1.20 C2", "send_c4": "v1.20 C3",
                                       "send_c5": "v1.20 C4"}
    assert dict(OPS["recv"].later) == {"recv_c4": "v1.20 C1", "recv_c5": "v1.20 C2", "recv_c6": "v1.20 C3",
                                       "recv_c7": "v1.20 C4"}
    for op in ("send", "recv"):
        enc = {n: label for (o, n), label in vmap.encoded_v1_20().items() if o == op}
        assert enc == LABELS[op]
        assert op not in vmap.not_encoded()
    assert vmap.seed_entry("send", 1).v1_20 == (5,)   # the seed's C1 keeps its label


# --------------------------------------------------------------------------
# The attribute as StableHLO spells it
# --------------------------------------------------------------------------

def _send_program(pairs_text: str) -> str:
    return (f"func.func @main(%x: tensor<2xi32>) -> () {{\n  %t = \"stablehlo.after_all\"() : () -> {TOK}\n"
            f"  %r = \"stablehlo.send\"(%x, %t) {{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, "
            f"is_host_transfer = false, source_target_pairs = {pairs_text}}} : (tensor<2xi32>, {TOK}) -> {TOK}\n"
            f"  \"func.return\"() : () -> ()\n}}\n")


def test_jaxlib_reads_and_prints_the_attribute_as_we_write_it():
    """jaxlib 0.10.2's stablehlo dialect has `source_target_pairs` on send (and recv): it parses our
    spelling and prints the same text back, which the oracle reads as the pairs we wrote."""
    from jax._src.interpreters import mlir as jm
    from jaxlib.mlir import ir
    from shlo_conform.generators import emit
    inst = send(((0, 1), (1, 0)), Grid(1, 1))
    text = emit.attribute_text(OPS["send"], inst)
    assert "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>" in text
    with jm.make_ir_context(), ir.Location.unknown():
        m = ir.Module.parse(_send_program("dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>"))
        assert m.operation.verify()
        printed = m.operation.get_asm(print_generic_op_form=True)
    assert "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>" in printed
    with pytest.raises(ProgramRejected) as e:   # one process: the ids are outside the grid (C4), as written
        parse_program(printed)
    assert e.value.constraint == "send_c5"
    prog = parse_program(printed, Grid(1, 2))
    [inst] = [s.inst for s in prog.steps if s.inst.spec is OPS["send"]]
    assert inst.source_target_pairs == ((0, 1), (1, 0))


@pytest.mark.parametrize("pairs_text, label", [
    ("dense<[[0, 1, 0]]> : tensor<1x3xi64>", "send_c2"),
    ("dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>", "send_c3"),
    ("dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>", "send_c4"),
    ("dense<[[0, 2]]> : tensor<1x2xi64>", "send_c5"),
])
def test_the_oracle_names_the_broken_clause(pairs_text, label):
    module = ("module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
              + _send_program(pairs_text) + "}\n")
    with pytest.raises(ProgramRejected) as e:
        parse_program(module)
    assert e.value.constraint == label


# --------------------------------------------------------------------------
# Device transfers on a grid
# --------------------------------------------------------------------------

def _ordered(pairs_text: str, n: int) -> str:
    """Partition 0 sends then receives; the others receive then send (host_pairs' program)."""
    attrs = (f"{{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, is_host_transfer = false, "
             f"source_target_pairs = {pairs_text}}}")
    ty = "tensor<2xi32>"
    return (f"module attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
            f"func.func @main(%arg0: {ty}) -> ({ty}) {{\n"
            f'  %p = "stablehlo.partition_id"() : () -> tensor<ui32>\n'
            f'  %i = "stablehlo.convert"(%p) : (tensor<ui32>) -> tensor<i32>\n'
            f'  %r = "stablehlo.case"(%i) ({{\n'
            f'    %k = "stablehlo.after_all"() : () -> {TOK}\n'
            f'    %t = "stablehlo.send"(%arg0, %k) {attrs} : ({ty}, {TOK}) -> {TOK}\n'
            f'    %v:2 = "stablehlo.recv"(%t) {attrs} : ({TOK}) -> ({ty}, {TOK})\n'
            f'    "stablehlo.return"(%v#0) : ({ty}) -> ()\n'
            f"  }}, {{\n"
            f'    %k = "stablehlo.after_all"() : () -> {TOK}\n'
            f'    %v:2 = "stablehlo.recv"(%k) {attrs} : ({TOK}) -> ({ty}, {TOK})\n'
            f'    %t = "stablehlo.send"(%arg0, %v#1) {attrs} : ({ty}, {TOK}) -> {TOK}\n'
            f'    "stablehlo.return"(%v#0) : ({ty}) -> ()\n'
            f"  }}) : (tensor<i32>) -> {ty}\n"
            f'  "func.return"(%r) : ({ty}) -> ()\n}}\n}}\n')


def _inputs(n: int) -> list:
    return [[np.array([100 + p, -7 * p], np.int32)] for p in range(n)]


@pytest.mark.parametrize("pairs_text, n, sources", [
    ("dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>", 3, [2, 0, 1]),
    ("dense<[[0, 2], [1, 0], [2, 1]]> : tensor<3x2xi64>", 3, [1, 2, 0]),
    ("dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>", 2, [1, 0]),
    ("dense<[[0, 3], [3, 1], [1, 2], [2, 0]]> : tensor<4x2xi64>", 4, [2, 3, 1, 0]),
])
def test_each_process_receives_its_sources_input(pairs_text, n, sources):
    """`sources[p]` (by hand): the process whose pair names p as its target."""
    got = expect.expected_grid_outputs(_ordered(pairs_text, n), Grid(1, n), _inputs(n))
    for p, outs in enumerate(got):
        assert np.array_equal(outs[0].bits.view(np.int32), _inputs(n)[sources[p]][0]), p


def test_every_process_sending_first_states_no_result():
    """A send meets its recv; when every process sends first, a send that waits would wait forever —
    v1.20 leaves the synchronisation TBD (#484), so the oracle states nothing (CannotJudge)."""
    prog = _ordered("dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>", 3)
    first = prog.split("}, {")[0]
    spmd = first.replace('"stablehlo.case"(%i) ({', "").rsplit('"stablehlo.return"', 1)[0]
    lines = [ln for ln in spmd.splitlines() if "stablehlo.send" in ln or "stablehlo.recv" in ln
             or "after_all" in ln]
    body = "\n".join(lines)
    module = ("module attributes {mhlo.num_partitions = 3 : i32, mhlo.num_replicas = 1 : i32} {\n"
              "func.func @main(%arg0: tensor<2xi32>) -> (tensor<2xi32>) {\n" + body
              + '\n  "func.return"(%v#0) : (tensor<2xi32>) -> ()\n}\n}\n')
    assert module.count("stablehlo.send") == module.count("stablehlo.recv") == 1
    parse_program(module, Grid(1, 3))   # a valid program
    with pytest.raises(CannotJudge, match=r"waits at channel 5"):
        expect.expected_grid_outputs(module, Grid(1, 3), _inputs(3))


@pytest.mark.parametrize("pairs_text, why", [
    ("dense<> : tensor<0x2xi64>", "no source_target_pairs"),
    ("dense<[[0, 1]]> : tensor<1x2xi64>", "no pair's target"),   # partition 0 receives from nobody
])
def test_undefined_transfers_state_no_result(pairs_text, why):
    with pytest.raises(Unspecified, match=why):
        expect.expected_grid_outputs(_ordered(pairs_text, 2), Grid(1, 2), _inputs(2))


# --------------------------------------------------------------------------
# The cases generated
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("host_v1_20")
    suite.build(out, 0, ops=["send", "recv", "infeed", "outfeed"])
    return out


@pytest.mark.parametrize("op", ["send", "recv", "infeed", "outfeed"])
def test_the_committed_cases_keep_their_bytes(generated, op):
    from pathlib import Path
    committed = (Path(__file__).resolve().parents[2] / "suites" / "core" / f"{op}.jsonl").read_bytes()
    assert (generated / f"{op}.jsonl").read_bytes().startswith(committed)


def _cases(generated, op) -> list[dict]:
    return [json.loads(line) for line in (generated / f"{op}.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("op", ["send", "recv"])
def test_every_pairs_clause_has_an_invalid_case_the_oracle_names(generated, op):
    named = {}
    for c in _cases(generated, op):
        if c["kind"] == "invalid" and c["violates"] in LABELS[op].values():
            named.setdefault(c["violates"], []).append(c)
            assert expect.rejection(c["mlir"]) == c["violates"]
            ids = [int(x) for x in re.findall(r"-?\d+", c["mlir"].split("source_target_pairs = ")[1].split(":")[0])]
            assert ids, c["note"]
    assert set(named) == set(LABELS[op].values())


def test_recv_grid_cases_move_each_sources_input():
    """host_pairs' cases: at each process the expectation is the input of its source (by the pairs, by hand:
    a pair (s, t) gives t the input of s), bit for bit; every other op lists none."""
    by_hand = {((0, 1), (1, 2), (2, 0)): {0: 2, 1: 0, 2: 1}, ((0, 2), (1, 0), (2, 1)): {0: 1, 1: 2, 2: 0},
               ((0, 1), (1, 0)): {0: 1, 1: 0}, ((0, 3), (3, 1), (1, 2), (2, 0)): {0: 2, 1: 3, 2: 1, 3: 0}}
    assert all(host_pairs.cases(OPS[op], 0) == [] for op in ("send", "infeed", "outfeed", "collective_permute"))
    grid_cases = [json.loads(c.to_json()) for c in host_pairs.cases(OPS["recv"], 0)]
    assert all(c["kind"] == "value" and not c.get("host") for c in grid_cases)
    assert len(grid_cases) == len(DEVICE_TRANSFERS)
    seen = set()
    for c in grid_cases:
        text = c["mlir"].split("source_target_pairs = dense<")[1].split(">")[0]
        pairs = tuple(tuple(int(x) for x in row.split(",")) for row in re.findall(r"\[([-\d, ]+)\]", text))
        seen.add(pairs)
        g = c["grid"]
        parts = g["num_partitions"]
        for proc, expected in enumerate(g["expected"]):
            r, p = divmod(proc, parts)
            src = r * parts + by_hand[pairs][p]
            assert expected[0]["hex"] == g["inputs"][src][0]["hex"], (pairs, proc)
    assert seen == set(by_hand)


# --------------------------------------------------------------------------
# infeed's v1.20 C2
# --------------------------------------------------------------------------

def _infeed(results):
    return OPS["infeed"].instance({"token": TokenType()}, {"infeed_config": ""}, {"results": results})


@pytest.mark.parametrize("results, holds", [
    ([T, TokenType()], True),
    ([T, T, TokenType()], True),
    ([TokenType()], True),                      # is_empty(results[:-1])
    ([], True),                                 # nothing to check (C1's violation)
    ([T, TokenType(), TokenType()], False),     # a token among the payload
    ([TokenType(), T, TokenType()], False),
])
def test_infeed_c3_is_v1_20_c2(results, holds):
    from shlo_conform.spec.ops.infeed import infeed_c3
    assert bool(infeed_c3(_infeed(results))) is holds


def test_infeed_c3_is_enforced():
    """v1.20's C2 (every result but the last a tensor) is among infeed's
    constraints: a token among the payload breaks it alone, and the map
    counts v1.20's C2 encoded (docs/spec-findings.md, "infeed")."""
    assert "infeed_c3" in OPS["infeed"].labels
    assert OPS["infeed"].violated(_infeed([T, TokenType(), TokenType()])) == ["infeed_c3"]
    assert OPS["infeed"].violated(_infeed([T, TokenType()])) == []
    assert "infeed" not in vmap.not_encoded()