"""Cases with host data through the real runner and worker: the log a
backend writes is judged against the case's, and a backend without a host
API declares its cases unsupported.  Expected logs are stated by hand."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from shlo_conform.backends.base import Backend
from shlo_conform.backends.oracle import OracleBackend
from shlo_conform.pipeline.runner import Runner
from shlo_conform.spec.expectation import Expectation
from shlo_conform.spec.types import SI32, TensorType, to_bits
from shlo_conform.suites.records import Case, HostData, TensorValue, case_id

HERE = Path(__file__).resolve()
TOK = "!stablehlo.token"
T = TensorType((2,), SI32)

PROGRAM = f"""func.func @main(%x: tensor<2xi32>) -> (tensor<2xi32>) {{
  %t = "stablehlo.after_all"() : () -> {TOK}
  %r:2 = "stablehlo.infeed"(%t) {{infeed_config = ""}} : ({TOK}) -> (tensor<2xi32>, {TOK})
  %o = "stablehlo.outfeed"(%x, %r#1) {{outfeed_config = ""}} : (tensor<2xi32>, {TOK}) -> {TOK}
  "func.return"(%r#0) : (tensor<2xi32>) -> ()
}}
"""


class WrongLog(OracleBackend):
    """Writes the outfeed with its first element changed."""

    def run_with_host(self, executable, inputs, host):
        outs, log = super().run_with_host(executable, inputs, host)
        return outs, [(s, a + np.int32(1)) for s, a in log]


class SkipsLog(OracleBackend):
    """Runs, but writes nothing to the outfeed."""

    def run_with_host(self, executable, inputs, host):
        return super().run_with_host(executable, inputs, host)[0], []


class NoHost(Backend):
    """An adapter without a host API (the default `run_with_host`)."""

    name = "nohost"

    def compile(self, mlir):
        return mlir

    def run(self, executable, inputs):
        raise AssertionError("a host case must never reach run()")


def exact(a) -> Expectation:
    return Expectation(T, to_bits(a, SI32), bit_exact=True)


def host_case() -> Case:
    x, fed = np.array([3, -4], np.int32), np.array([70, 80], np.int32)
    host = HostData([TensorValue.of(fed, T)], {}, [("outfeed", exact(x), ())])
    inputs = [TensorValue.of(x, T)]
    return Case(id=case_id("outfeed", "si32", PROGRAM, inputs, salt="host"), op="outfeed", dtype="si32",
                kind="value", mlir=PROGRAM, inputs=inputs, expected=[exact(fed)], host=host)


def verdict(backend: str):
    (v,) = Runner(backend).run([host_case()])
    return v


def test_record_round_trip_and_host_omitted_when_absent():
    c = host_case()
    again = Case.from_json(c.to_json())
    assert again.host.to_json() == c.host.to_json() and again.to_json() == c.to_json()
    plain = Case(id="add/si32/x1", op="add", dtype="si32", kind="value", mlir=PROGRAM, inputs=c.inputs,
                 expected=c.expected)
    assert "host" not in json.loads(plain.to_json())


def test_record_refuses_damaged_host_data():
    d = json.loads(host_case().to_json())
    for damage, words in ((lambda h: h["log"][0].update(stream="printer"), "stream"),
                          (lambda h: h["log"][0].update(after=[0]), "after"),
                          (lambda h: h["infeed"][0].update(hex="00"), "hex of 2 digits"),
                          (lambda h: h.update(extra=1), "unknown field")):
        bad = json.loads(json.dumps(d))
        damage(bad["host"])
        try:
            Case.from_json(json.dumps(bad))
        except ValueError as e:
            assert words in str(e)
        else:
            raise AssertionError(f"accepted damaged host data ({words})")


def test_oracle_passes_its_log():
    v = verdict("oracle")
    assert v.verdict == "pass", v.detail


def test_a_wrong_outfeed_fails():
    v = verdict(f"{HERE}:WrongLog")
    assert v.verdict == "fail" and "host log entry 0" in v.detail


def test_a_skipped_outfeed_fails():
    v = verdict(f"{HERE}:SkipsLog")
    assert v.verdict == "fail" and "never written" in v.detail


def test_no_host_api_is_declared_unsupported():
    v = verdict(f"{HERE}:NoHost")
    assert v.verdict == "unsupported" and "no host-side API" in v.detail


TWO_INFEEDS = f"""func.func @main() -> (tensor<2xi32>, tensor<f32>) {{
  %t = "stablehlo.after_all"() : () -> {TOK}
  %a:2 = "stablehlo.infeed"(%t) {{infeed_config = ""}} : ({TOK}) -> (tensor<2xi32>, {TOK})
  %b:2 = "stablehlo.infeed"(%a#1) {{infeed_config = ""}} : ({TOK}) -> (tensor<f32>, {TOK})
  "func.return"(%a#0, %b#0) : (tensor<2xi32>, tensor<f32>) -> ()
}}
"""


def test_interpreter_feeds_its_infeed_and_declares_the_rest():
    """The reference interpreter's own host model (interpreter.run_parallel
    with infeed functions): two chained infeeds get the queue in order; an
    outfeed, which it cannot report, is unsupported."""
    import pytest
    from shlo_conform.backends.base import HostQueues, Unsupported
    from shlo_conform.backends.interpreter import InterpreterBackend
    b = InterpreterBackend()
    q = [np.array([9, -9], np.int32), np.array(2.5, np.float32)]
    outs, log = b.run_with_host(b.compile(TWO_INFEEDS), [], HostQueues(q, {}))
    assert outs[0].tolist() == [9, -9] and float(outs[1]) == 2.5 and log == []
    with pytest.raises(Unsupported, match="outfeed"):
        b.run_with_host(b.compile(PROGRAM), [np.array([1, 2], np.int32)], HostQueues([q[0]], {}))


def test_real_adapters_declare_what_they_cannot_run():
    """XLA and IREE have no host API through Python (docs/findings.md): they
    keep the default `run_with_host`, whose reason the runner reports; the
    interpreter implements it (infeed only)."""
    from shlo_conform.backends.interpreter import InterpreterBackend
    from shlo_conform.backends.iree import IreeBackend
    from shlo_conform.backends.xla import XlaBackend
    assert XlaBackend.run_with_host is Backend.run_with_host and "UNIMPLEMENTED" in XlaBackend.host_unsupported
    assert IreeBackend.run_with_host is Backend.run_with_host and "after_all" in IreeBackend.host_unsupported
    assert InterpreterBackend.run_with_host is not Backend.run_with_host
