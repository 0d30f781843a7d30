"""Tokens and side effects: after_all, infeed, outfeed, send, recv.

Truth is the seed's text and hand-made data: the seed's Examples print no
values, so each example is run with a host whose queues we fill by hand and
whose log we state by hand (what outfeed/send write is their operand,
unchanged).  Constraints are checked broken and kept on programs the oracle
reads, and token ordering on programs whose allowed logs we list by hand.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from shlo_conform.backends.base import HostQueues
from shlo_conform.backends.oracle import OracleBackend
from shlo_conform.oracle.elementwise import Unspecified
from shlo_conform.oracle.host import Host, session
from shlo_conform.oracle.program import ProgramRejected, execute, parse_program
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import SI32, TensorType, TokenType, to_bits
from shlo_conform.spec.traceability import SPEC_SEED, stored_sections
from shlo_conform.suites.compare import compare_log

OPS5 = ("after_all", "infeed", "outfeed", "send", "recv")
TOK = "!stablehlo.token"


def example(op: str) -> str:
    """The op's Examples block, from the seed section stored in spec/seed/."""
    text = stored_sections(SPEC_SEED)[op]
    return re.search(r"#### Examples\s*\n```mlir\n(.*?)```", text, re.S).group(1)


def around(op_text: str) -> tuple[str, list]:
    """@main around one example op: token operands made by after_all, tensor
    operands as arguments, tensor results returned (tokens are not).
    Returns (program, argument types)."""
    head, _, rest = op_text.partition("=")
    results = [r.strip() for r in head.split(",")]
    operands = re.search(r'"stablehlo\.\w+"\(([^)]*)\)', rest).group(1)
    names = [n.strip() for n in operands.split(",") if n.strip()]
    sig = rest[rest.rindex(":") + 1:].strip()
    ins, _, outs = sig.partition("->")
    in_types = [t.strip() for t in ins.strip()[1:-1].split(",") if t.strip()]
    outs = outs.strip()
    out_types = [t.strip() for t in (outs[1:-1] if outs.startswith("(") else outs).split(",")]
    prelude, args = [], []
    for n, t in zip(names, in_types):
        if t == TOK:
            prelude.append(f'  {n} = "stablehlo.after_all"() : () -> {TOK}')
        else:
            args.append((n, t))
    if len(results) > 1:
        body = f"  %r:{len(results)} =" + rest
        values = [f"%r#{i}" for i in range(len(results))]
    else:
        body = f"  {results[0]} =" + rest
        values = results
    rets = [(v, t) for v, t in zip(values, out_types) if t != TOK]
    rsig = ", ".join(t for _, t in rets)
    mlir = (f"func.func @main({', '.join(f'{n}: {t}' for n, t in args)}) -> ({rsig}) {{\n" + "\n".join(prelude)
            + f"\n{body.rstrip()}\n  \"func.return\"({', '.join(v for v, _ in rets)}) : ({rsig}) -> ()\n}}\n")
    return mlir, [t for _, t in args]


def run(mlir: str, inputs=(), infeed=(), channels=None):
    b = OracleBackend()
    return b.run_with_host(b.compile(mlir), list(inputs), HostQueues(list(infeed), dict(channels or {})))


# --------------------------------------------------------------------------
# The seed's examples, with hand-made host data
# --------------------------------------------------------------------------

def test_example_after_all_runs_and_returns_nothing():
    mlir, args = around(example("after_all"))
    assert args == []
    assert run(mlir) == ([], [])


def test_example_infeed_reads_the_queue():
    mlir, _ = around(example("infeed"))
    data = np.arange(27, dtype=np.int32).reshape(3, 3, 3)
    outs, log = run(mlir, infeed=[data])
    assert len(outs) == 1 and np.array_equal(outs[0], data) and log == []


def test_example_outfeed_logs_its_input():
    mlir, args = around(example("outfeed"))
    assert args == ["tensor<3x3x3xi32>"]
    x = (np.arange(27, dtype=np.int32) * 7 - 50).reshape(3, 3, 3)
    outs, log = run(mlir, [x])
    assert outs == [] and len(log) == 1
    assert log[0][0] == "outfeed" and np.array_equal(log[0][1], x)


def test_example_send_writes_channel_5():
    mlir, _ = around(example("send"))
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    outs, log = run(mlir, [x])
    assert outs == [] and [s for s, _ in log] == ["channel 5"] and np.array_equal(log[0][1], x)


def test_example_recv_reads_channel_5():
    mlir, _ = around(example("recv"))
    x = -np.arange(12, dtype=np.int32).reshape(3, 4)
    outs, log = run(mlir, channels={5: [x]})
    assert np.array_equal(outs[0], x) and log == []
    with pytest.raises(Exception, match="channel 5 is empty"):   # nothing on channel 5: it would wait
        run(mlir, channels={4: [x]})


# --------------------------------------------------------------------------
# Constraints, broken and kept
# --------------------------------------------------------------------------

def infeed_program(results: list[str]) -> str:
    lhs = "" if not results else ("%r = " if len(results) == 1 else f"%r:{len(results)} = ")
    sig = results[0] if len(results) == 1 else f"({', '.join(results)})"
    return (f"func.func @main() -> () {{\n  %t = \"stablehlo.after_all\"() : () -> {TOK}\n"
            f"  {lhs}\"stablehlo.infeed\"(%t) {{infeed_config = \"\"}} : ({TOK}) -> {sig}\n"
            f"  \"func.return\"() : () -> ()\n}}\n")


def channel_program(op: str, handle_type: int, flag: str | None, results=("tensor<2xi32>", TOK)) -> str:
    attrs = f"channel_handle = #stablehlo.channel_handle<handle = 3, type = {handle_type}>"
    if flag is not None:
        attrs += f", is_host_transfer = {flag}"
    if op == "send":
        return (f"func.func @main(%x: tensor<2xi32>) -> () {{\n  %t = \"stablehlo.after_all\"() : () -> {TOK}\n"
                f"  %r = \"stablehlo.send\"(%x, %t) {{{attrs}}} : (tensor<2xi32>, {TOK}) -> {TOK}\n"
                f"  \"func.return\"() : () -> ()\n}}\n")
    lhs = "" if not results else ("%r = " if len(results) == 1 else f"%r:{len(results)} = ")
    sig = results[0] if len(results) == 1 else f"({', '.join(results)})"
    return (f"func.func @main() -> () {{\n  %t = \"stablehlo.after_all\"() : () -> {TOK}\n"
            f"  {lhs}\"stablehlo.recv\"(%t) {{{attrs}}} : ({TOK}) -> {sig}\n"
            f"  \"func.return\"() : () -> ()\n}}\n")


def rejected_for(mlir: str) -> str | None:
    try:
        parse_program(mlir)
    except ProgramRejected as e:
        return e.constraint or f"other: {e}"
    return None


@pytest.mark.parametrize("results, label", [
    ([], "infeed_c1"), (["tensor<2xi32>", "tensor<2xi32>"], "infeed_c2"), (["tensor<2xi32>"], "infeed_c2"),
    ([TOK], None), (["tensor<2xi32>", "tensor<f32>", TOK], None),
    # v1.20's C2 (infeed_c3): every result but the last a tensor
    (["tensor<2xi32>", TOK, TOK], "infeed_c3")])
def test_infeed_constraints(results, label):
    assert rejected_for(infeed_program(results)) == label


# channel_handle type: 1 DEVICE_TO_DEVICE, 2 DEVICE_TO_HOST, 3 HOST_TO_DEVICE (0 invalid)
@pytest.mark.parametrize("op, handle_type, flag, label", [
    ("send", 2, "true", None), ("send", 1, "false", None), ("send", 1, None, None),
    ("send", 2, "false", "send_c1"), ("send", 2, None, "send_c1"), ("send", 1, "true", "send_c1"),
    ("send", 3, "true", "send_c1"), ("send", 0, "false", "send_c1"),
    ("recv", 3, "true", None), ("recv", 1, "false", None),
    ("recv", 3, "false", "recv_c1"), ("recv", 2, "true", "recv_c1"), ("recv", 1, "true", "recv_c1"),
])
def test_channel_constraint(op, handle_type, flag, label):
    assert rejected_for(channel_program(op, handle_type, flag)) == label


@pytest.mark.parametrize("results, label", [([], "recv_c2"), ([TOK, "tensor<2xi32>"], "recv_c3"),
                                            (["tensor<2xi32>"], "recv_c3"), ([TOK], None)])
def test_recv_result_constraints(results, label):
    assert rejected_for(channel_program("recv", 3, "true", results)) == label


def test_tables_refuse_a_tensor_token_mixup():
    """after_all's inputs are tokens; outfeed's `token` is a token."""
    bad_join = ("func.func @main(%x: tensor<2xi32>) -> () {\n"
                f"  %r = \"stablehlo.after_all\"(%x) : (tensor<2xi32>) -> {TOK}\n  \"func.return\"() : () -> ()\n}}\n")
    assert "not allowed by the spec" in rejected_for(bad_join)
    two_tensors = ("func.func @main(%x: tensor<2xi32>) -> () {\n"
                   f"  %r = \"stablehlo.outfeed\"(%x, %x) {{outfeed_config = \"\"}} : (tensor<2xi32>, tensor<2xi32>) -> {TOK}\n"
                   "  \"func.return\"() : () -> ()\n}\n")
    assert "not allowed by the spec" in rejected_for(two_tensors)


def test_constraint_functions_directly():
    t, tok = TensorType((2,), SI32), TokenType()
    inf = OPS["infeed"]
    assert inf.violated(inf.instance({"token": tok}, {}, {"results": [t, tok]})) == []
    assert inf.violated(inf.instance({"token": tok}, {}, {"results": []})) == ["infeed_c1"]
    assert inf.violated(inf.instance({"token": tok}, {}, {"results": [t, t]})) == ["infeed_c2"]
    assert inf.violated(inf.instance({"token": tok}, {}, {"results": [tok, t]})) == ["infeed_c2", "infeed_c3"]
    assert inf.violated(inf.instance({"token": tok}, {}, {"results": [t, tok, tok]})) == ["infeed_c3"]
    send = OPS["send"]
    ok = {"channel_id": 1, "channel_type": "DEVICE_TO_HOST", "is_host_transfer": True}
    assert send.violated(send.instance({"inputs": [t], "token": tok}, ok, {"result": tok})) == []
    assert send.violated(send.instance({"inputs": [t], "token": tok}, {**ok, "is_host_transfer": False},
                                       {"result": tok})) == ["send_c1"]


# --------------------------------------------------------------------------
# Token ordering, the infeed queue, the outfeed log
# --------------------------------------------------------------------------

ORDERING = f"""func.func @main(%x: tensor<2xi32>, %y: tensor<2xi32>, %z: tensor<2xi32>) -> () {{
  %t = "stablehlo.after_all"() : () -> {TOK}
  %a = "stablehlo.outfeed"(%x, %t) {{outfeed_config = ""}} : (tensor<2xi32>, {TOK}) -> {TOK}
  %b = "stablehlo.outfeed"(%y, %t) {{outfeed_config = ""}} : (tensor<2xi32>, {TOK}) -> {TOK}
  %j = "stablehlo.after_all"(%a, %b) : ({TOK}, {TOK}) -> {TOK}
  %c = "stablehlo.outfeed"(%z, %j) {{outfeed_config = ""}} : (tensor<2xi32>, {TOK}) -> {TOK}
  "func.return"() : () -> ()
}}
"""


def _exp(a):
    t = TensorType(a.shape, SI32)
    return Expectation(t, to_bits(a, SI32), bit_exact=True)


def test_token_order_is_a_partial_order():
    """x and y share a token: either order; z stands after both (after_all)."""
    x, y, z = (np.array([i, i + 1], np.int32) for i in (1, 10, 100))
    host = Host()
    with session(host):
        assert execute(parse_program(ORDERING), [x, y, z]) == []
    assert [(e.stream, e.after) for e in host.log] == [("outfeed", ()), ("outfeed", ()), ("outfeed", (0, 1))]
    expected = [(e.stream, e.value, e.after) for e in host.log]
    for order in ([x, y, z], [y, x, z]):
        assert compare_log(expected, [("outfeed", a) for a in order]).ok
    for order in ([x, z, y], [z, x, y]):
        assert not compare_log(expected, [("outfeed", a) for a in order]).ok


def test_compare_log_fails_wrong_missing_extra_and_wrong_stream():
    x, y = np.array([1, 2], np.int32), np.array([3, 4], np.int32)
    expected = [("outfeed", _exp(x), ()), ("outfeed", _exp(y), (0,))]
    assert compare_log(expected, [("outfeed", x), ("outfeed", y)]).ok
    wrong = compare_log(expected, [("outfeed", x), ("outfeed", x)])
    assert not wrong.ok and "entry 1" in wrong.detail
    skipped = compare_log(expected, [("outfeed", x)])
    assert not skipped.ok and "never written" in skipped.detail
    assert not compare_log(expected, [("outfeed", x), ("outfeed", y), ("outfeed", y)]).ok
    assert not compare_log(expected, [("channel 1", x), ("outfeed", y)]).ok
    assert not compare_log(expected, [("outfeed", y), ("outfeed", x)]).ok


INFEEDS = f"""func.func @main() -> (tensor<2xi32>, tensor<i32>) {{
  %t = "stablehlo.after_all"() : () -> {TOK}
  %a:2 = "stablehlo.infeed"(%t) {{infeed_config = ""}} : ({TOK}) -> (tensor<2xi32>, {TOK})
  %b:2 = "stablehlo.infeed"(%SECOND) {{infeed_config = ""}} : ({TOK}) -> (tensor<i32>, {TOK})
  "func.return"(%a#0, %b#0) : (tensor<2xi32>, tensor<i32>) -> ()
}}
"""


def test_infeed_queue_is_consumed_in_order():
    q = [np.array([5, 6], np.int32), np.array(7, np.int32)]
    outs, _ = run(INFEEDS.replace("%SECOND", "%a#1"), infeed=q)
    assert np.array_equal(outs[0], q[0]) and outs[1] == 7
    with pytest.raises(Exception, match="where the program reads"):   # the host queued another type
        run(INFEEDS.replace("%SECOND", "%a#1"), infeed=q[::-1])


def test_unordered_infeeds_state_no_result():
    """Both infeeds stand after %t only: which reads the first tensor is not stated."""
    q = [np.array([5, 6], np.int32), np.array(7, np.int32)]
    with pytest.raises(Unspecified, match="no token orders them"):
        with session(Host(q)):
            execute(parse_program(INFEEDS.replace("%SECOND", "%t")), [])


def test_every_op_is_declared_and_generates():
    """Every token op lists its cases; every value case of an op that talks
    to the host carries host data (after_all's none, and recv's device
    transfers on a process grid: generators/host_pairs.py); infeed/recv
    cases read the queues the generator filled, outfeed/send cases expect
    their inputs logged."""
    from shlo_conform.generators.suite import op_cases
    for name in OPS5:
        cases, implied = op_cases(OPS[name], 0)
        assert implied == [], name
        kinds = {c.kind for c in cases}
        assert "value" in kinds, name
        for c in cases:
            if c.kind == "value":
                assert (c.host is None) == (name == "after_all" or (name == "recv" and c.grid is not None)), c.id
            if c.kind == "value" and name in ("outfeed", "send"):
                assert [e.to_json()["hex"] for _, e, _ in c.host.log] == [v.hex for v in c.inputs]
            if c.kind == "value" and name in ("infeed", "recv") and c.expected and c.host is not None:
                queued = c.host.infeed if name == "infeed" else [v for vs in c.host.channels.values() for v in vs]
                assert [v.hex for v in queued] == [e.to_json()["hex"] for e in c.expected]


def test_check_spec_on_listed_instances_can_fail():
    """check-spec's listed-instance checks (spec/checks.check_listed) name a
    mislabelled invalid instance, an uncovered element type and a
    constraint no listed instance breaks alone."""
    from shlo_conform.spec import checks

    def wrong(spec, rng):
        bad = spec.instance({"token": TokenType()}, {}, {"results": []})   # breaks C1, listed as C2
        return [("mislabelled", "invalid", bad, "infeed_c2")]

    rep = checks.Report()
    ind = checks.check_listed(OPS["infeed"], wrong, rep)
    assert any("breaks ['infeed_c1'], not [infeed_c2]" in f for f in rep.failures)
    assert any("valid in no listed instance" in f for f in rep.failures)
    assert set(ind.redundant) == {"infeed_c1", "infeed_c2", "infeed_c3"} and not ind.witnesses
    ok = checks.Report()
    good = checks.check_listed(OPS["infeed"], OPS["infeed"].semantics.cases, ok)
    assert ok.failures == [] and set(good.witnesses) == {"infeed_c1", "infeed_c2", "infeed_c3"}
