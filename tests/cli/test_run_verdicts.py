"""`run`'s verdicts mean what they say: an output is "agrees" only when its
expectation was narrow enough to tell a wrong answer from a right one;
otherwise INCONCLUSIVE or UNCHECKED, with their own exit code (3), and every
verdict states the width it was judged with (suites/resolution.py).

The programs are JAX's (nobody here wrote them); the wrong answers are
XLA's own outputs zeroed, negated or scaled by 1.01 (fixtures/wrong.py)."""
from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.linalg import solve_triangular

from shlo_conform.cli import main

WRONG = Path(__file__).parent / "fixtures" / "wrong.py"


def _verdicts(out: str) -> dict:
    """{backend line's first word: [each output's verdict word]}."""
    got, name = {}, None
    for ln in out.split("\n"):
        if ln and not ln.startswith(" "):
            name = ln.split()[0]
        elif name and ln.startswith("  #") and ":" in ln and name not in ("oracle",):
            got.setdefault(name, []).append(ln.split(": ", 1)[1].split(";")[0].strip())
    return got


def _run(tmp_path, f, args, backends):
    (tmp_path / "p.mlir").write_text(jax.jit(f).lower(*args).as_text())
    np.savez(tmp_path / "in.npz", *args)
    return main(["run", str(tmp_path / "p.mlir"), f"--backend={backends}", "--inputs", str(tmp_path / "in.npz")])


def _lstm(xs, w, u, b, h0, c0):
    def step(carry, x):
        h, c = carry
        i, f, g, o = jnp.split(x @ w + h @ u + b, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        return (jax.nn.sigmoid(o) * jnp.tanh(c), c), None
    (h, c), _ = jax.lax.scan(step, (h0, c0), xs)
    return h, c


def test_a_zeroed_lstm_state_is_never_called_agreeing(tmp_path, capsys):
    """16 steps of a 128-wide LSTM: the zero vector is not the answer.  The
    oracle's enclosure either rules it out (DISAGREES) or says it cannot
    (INCONCLUSIVE, exit 3) — it used to say "agrees", exit 0."""
    rng = np.random.default_rng(0)
    h, d, t, b = 128, 16, 16, 4
    args = [rng.standard_normal((t, b, d)).astype(np.float32),
            (rng.standard_normal((d, 4 * h)) / np.sqrt(d)).astype(np.float32),
            (rng.standard_normal((h, 4 * h)) / np.sqrt(h)).astype(np.float32),
            (rng.standard_normal(4 * h) * 0.1).astype(np.float32),
            np.zeros((b, h), np.float32), np.zeros((b, h), np.float32)]
    rc = _run(tmp_path, _lstm, args, f"xla,{WRONG}:Zeroed,{WRONG}:Negated")
    out = capsys.readouterr().out
    verdicts = _verdicts(out)
    for name in (f"{WRONG}:Zeroed", f"{WRONG}:Negated"):
        assert len(verdicts[name]) == 2 and "agrees" not in verdicts[name], out
        assert set(verdicts[name]) <= {"DISAGREES", "INCONCLUSIVE"}, out
    assert rc in (1, 3) and "enclosure ±" in out


def test_a_tight_program_agrees_with_its_width_stated_and_a_one_percent_error_is_caught(tmp_path, capsys):
    """tanh(x @ w): the enclosure is a few ULPs; XLA agrees (exit 0, the
    width on the verdict's line) and a 1 % scaling disagrees (exit 1)."""
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((8, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)]
    rc = _run(tmp_path, lambda x, w: jnp.tanh(x @ w / 8), args, "xla")
    out = capsys.readouterr().out
    assert rc == 0 and _verdicts(out)["xla"] == ["agrees"], out
    width = out.split("agrees", 1)[1].split("\n")[1]
    assert "enclosure ±" in width and "median" in width and "catches a scaling by" in width
    rc = _run(tmp_path, lambda x, w: jnp.tanh(x @ w / 8), args, f"{WRONG}:Scaled")
    out = capsys.readouterr().out
    assert rc == 1 and _verdicts(out)[f"{WRONG}:Scaled"] == ["DISAGREES"], out


def test_an_output_the_oracle_states_no_value_for_is_unchecked_not_exact(tmp_path, capsys):
    """A Cholesky solve (jnp.linalg.cholesky, two solve_triangular): the
    solves' results are defined by a property the oracle does not carry
    downstream yet, so it states no value — "unchecked", exit 3, for XLA
    and for an all-zero answer alike; it used to print "exact" and agree."""
    def solve(a, b):
        l = jnp.linalg.cholesky(a)
        return solve_triangular(l.T, solve_triangular(l, b, lower=True), lower=False)
    rng = np.random.default_rng(0)
    m = rng.standard_normal((8, 8)).astype(np.float32)
    args = [(m @ m.T + 8 * np.eye(8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)]
    rc = _run(tmp_path, solve, args, f"xla,{WRONG}:Zeroed")
    out = capsys.readouterr().out
    verdicts = _verdicts(out)
    assert verdicts["xla"] == ["UNCHECKED"] and verdicts[f"{WRONG}:Zeroed"] == ["UNCHECKED"], out
    assert "exact (" not in out and "unchecked: any value" in out and rc == 3
