"""`run`'s default timeout scales with the program (differential.py,
`TIMEOUT_RULE`); an explicit --timeout wins; a backend past the limit is
slow, not wrong.

Independent truth: the rule's figures worked by hand, and the bytes of a
program's @main arguments (shape × element size), which the oracle holds
at the least, as a lower bound on what the estimate gives a model-sized
program."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shlo_conform.cli import main
from shlo_conform.differential import default_timeout, prepare, program_timeout

HANG = Path(__file__).parent / "fixtures" / "hang_backend.py"

TINY = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}"""


def _mlp(n: int) -> str:
    """A layer of a model: tanh(x·w)·w + x on n×n f32 (3 arguments of 4n² bytes)."""
    t = f"tensor<{n}x{n}xf32>"
    dot = "stablehlo.dot_general {a}, %w, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}"
    return "\n".join([
        f"func.func @main(%x: {t}, %w: {t}) -> {t} {{",
        f"  %0 = {dot.format(a='%x', t=t)}",
        f"  %1 = stablehlo.tanh %0 : {t}",
        f"  %2 = {dot.format(a='%1', t=t)}",
        f"  %3 = stablehlo.add %2, %x : {t}",
        f"  func.return %3 : {t}",
        "}"])


def test_the_rule_by_hand():
    """60 s + 1 s per 16 MiB + 1 s per 50 lines, at most 3600 s."""
    assert default_timeout(0, 0) == 60.0
    assert default_timeout(160 << 20, 0) == 70.0
    assert default_timeout(0, 500) == pytest.approx(70.0)
    assert default_timeout(32 << 20, 100) == pytest.approx(64.0)
    assert default_timeout(1 << 40, 10 ** 7) == 3600.0


def test_a_model_sized_program_gets_more_than_a_tiny_one():
    """The tiny program gets the floor (a few lines, bytes of data); an
    MLP layer of 1024² f32 holds at least its two 4 MiB arguments and
    results besides, so its default is above 60 s by at least that share —
    and a program twice as wide gets more again."""
    tiny = TINY.encode()
    t_tiny = program_timeout(tiny, prepare(tiny))
    assert 60.0 <= t_tiny < 60.5
    model = _mlp(1024).encode()
    prep = prepare(model)
    assert prep.cost is not None
    held_args = 2 * 1024 * 1024 * 4   # %x and %w, f32
    t_model = program_timeout(model, prep)
    assert t_model >= 60.0 + held_args / (16 << 20) and t_model > t_tiny + 0.5
    wider = _mlp(2048).encode()
    assert program_timeout(wider, prepare(wider)) > t_model
    assert program_timeout(model) == pytest.approx(60.0 + 7 / 50)   # before reading: the file's 7 lines


def test_weights_held_as_constants_count_through_the_file_size():
    """A program whose data sits in its text (a constant of 2^18 f32 as
    hex: 2 MiB of text) gets the file's size even where the oracle cannot
    judge it (no estimate)."""
    hexdata = "0x" + "0000803F" * (1 << 18)
    text = (f'func.func @main() -> tensor<{1 << 18}xf32> {{\n  %0 = stablehlo.constant dense<"{hexdata}"> : '
            f'tensor<{1 << 18}xf32>\n  func.return %0 : tensor<{1 << 18}xf32>\n}}').encode()
    assert program_timeout(text) >= 60.0 + (len(text) / (1 << 20)) / 16 > 60.1


def test_help_states_the_rule(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default scaled to the program: 60 s + 1 s per 16 MiB of the program's data" in out
    assert "1 s per 50 lines of its text, at most 3600 s" in out
    assert "slow, not wrong: no verdict (exit 4)" in out


def test_an_explicit_timeout_wins_and_a_slow_backend_is_no_verdict(tmp_path, capsys):
    """A backend that never finishes compiling, with --timeout 1 (compiles
    get 2 s): TIMEOUT, slow, not wrong, the limit stated, exit 4 — while
    the oracle's own value stands."""
    (tmp_path / "s.mlir").write_text(TINY.replace("stablehlo.add %a, %a", "stablehlo.sqrt %a"))
    rc = main(["run", str(tmp_path / "s.mlir"), f"--backend={HANG}:HangOnSqrt", "--timeout", "1"])
    out = capsys.readouterr().out
    assert rc == 4, out
    assert "TIMEOUT" in out, out
    assert "slow, not wrong: no verdict (limit 1 s a run, 2 s a compile; --timeout raises the limit)" in out, out
    assert "oracle   1 output(s)" in out
