"""Value cases of device-to-device send/recv on a process grid (StableHLO v1.20's `source_target_pairs`).

v1.20's send "sends `inputs` to other devices in the order specified by
`source_target_pairs`" when `is_host_transfer` is false, and recv receives
"from another device based on the values of `source_target_pairs`".  A
send alone shows nothing a backend returns, and a recv alone has nothing
to receive, so each case here is one program holding both, and its result
at each process is the input of the process the pairs name as its source:
exactly what the pairs change.  The oracle runs the whole grid
(oracle/grid.py; send.py `transfer`, recv.py `read`: a send meets the recv
that names its process as the source).

Ordered so that no reading of the channels' synchronisation (v1.20: "what
kind of synchronization is introduced by them, is TBD", #484) changes the
outcome: partition 0 sends and then receives, every other partition
receives and then sends (`case` on `partition_id`: an index past the last
branch runs the last one), and the pairs form one cycle through partition
0 — so a send that waits for its recv (the reference interpreter's) and
one that does not complete alike.  Where every process sends first, a
waiting send would never complete: the oracle states no result for such a
program (tests/spec/test_host_v1_20_pairs.py).

Channels are positive (v1.20, "Point-to-point communication": a channel is
"a positive id"), so the pairs are partition ids (cross_partition, the
reading send.py states).  The programs are listed by the op whose results the pairs decide
(recv.py's `DEVICE_TRANSFERS`, with `device_transfer` making its send and
recv), and are its cases, on a generator seeded by (seed, op, "pairs"),
after every other case of the op, so those keep their bytes; each program
takes the next element type of `TYPES` (three float formats, an integer, a quantized type whose
storage values travel unchanged).
"""
from __future__ import annotations

import inspect
import zlib

import numpy as np

from ..spec.dsl import OpSpec
from ..spec.grid import Grid
from ..spec.quantized import family_name, parse_quantized_type
from ..spec.types import TensorType, TokenType, element_type
from ..suites.records import Case, GridData, TensorValue, case_id
from . import emit, expect, values

TYPES = (element_type("f32"), element_type("si32"), element_type("f16"), element_type("bf16"),
         parse_quantized_type("!quant.uniform<i8:f32, 0.1:-3>"))


def program(sending, receiving, grid: Grid, t: TensorType) -> str:
    """The module: @main(x) returns what the process receives; partition 0
    runs `sending` (of x) then `receiving`, the others `receiving` then
    `sending` (module docstring)."""
    s_attrs, r_attrs = emit.attribute_text(sending.spec, sending), emit.attribute_text(receiving.spec, receiving)
    tok, ty = TokenType().mlir, t.mlir
    after_all = f'"stablehlo.after_all"() : () -> {tok}'

    def send(token: str) -> str:
        return f'"stablehlo.{sending.spec.mnemonic}"(%arg0, %{token}){s_attrs} : ({ty}, {tok}) -> {tok}'

    def recv(token: str) -> str:
        return f'"stablehlo.{receiving.spec.mnemonic}"(%{token}){r_attrs} : ({tok}) -> ({ty}, {tok})'

    first = (f"    %k = {after_all}\n    %t = {send('k')}\n    %v:2 = {recv('t')}\n"
             f'    "stablehlo.return"(%v#0) : ({ty}) -> ()\n')
    later = (f"    %k = {after_all}\n    %v:2 = {recv('k')}\n    %t = {send('v#1')}\n"
             f'    "stablehlo.return"(%v#0) : ({ty}) -> ()\n')
    body = (f"func.func @main(%arg0: {ty}) -> ({ty}) {{\n"
            f'  %p = "stablehlo.partition_id"() : () -> tensor<ui32>\n'
            f'  %i = "stablehlo.convert"(%p) : (tensor<ui32>) -> tensor<i32>\n'
            f'  %r = "stablehlo.case"(%i) ({{\n{first}  }}, {{\n{later}  }}) : (tensor<i32>) -> {ty}\n'
            f'  "func.return"(%r) : ({ty}) -> ()\n'
            f"}}\n")
    return (f"module attributes {{mhlo.num_partitions = {grid.num_partitions} : i32, "
            f"mhlo.num_replicas = {grid.num_replicas} : i32}} {{\n{body}}}\n")


def cases(spec: OpSpec, seed: int) -> list[Case]:
    """The grid cases of an op whose module lists device transfers
    (`DEVICE_TRANSFERS` and `device_transfer`: recv.py); [] for every other op."""
    module = inspect.getmodule(spec.infer)
    listed = getattr(module, "DEVICE_TRANSFERS", ())
    if not listed:
        return []
    from .suite import GENERATOR_VERSION   # (suite.py runs this stream: imported when a case is made)
    rng = np.random.default_rng([seed, zlib.crc32(spec.mnemonic.encode()), zlib.crc32(b"pairs")])
    out = []
    for k, (note, grid, channel, pairs, shape) in enumerate(listed):
        et = TYPES[k % len(TYPES)]
        t = TensorType(shape, et)
        mlir = program(*module.device_transfer(t, grid, channel, pairs), grid, t)
        per = [[values.fill(et, shape, rng)] for _ in range(grid.size)]
        try:
            expected = expect.expected_grid_outputs(mlir, grid, per)
        except expect.Unspecified:   # pragma: no cover - every listed program states its result
            continue
        per_tvs = [[TensorValue.of(a[0], t)] for a in per]
        dtype = family_name(et) if et.is_quantized else et.name
        out.append(Case(id=case_id(spec.mnemonic, dtype, mlir, [v for vs in per_tvs for v in vs], salt="value"),
                        op=spec.mnemonic, dtype=dtype, kind="value", mlir=mlir, inputs=[], expected=[],
                        note=f"send and recv with source_target_pairs: {note}",
                        grid=GridData(grid.num_replicas, grid.num_partitions, per_tvs, expected),
                        provenance={"seed": seed, "section": spec.mnemonic, "generator": GENERATOR_VERSION,
                                    "spec": "v1.20"}))
    return out
