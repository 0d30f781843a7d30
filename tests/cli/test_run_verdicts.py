"""`run`'s verdicts mean what they say: an output is "agrees" only when its
expectation was narrow enough to tell a wrong answer from a right one;
otherwise INCONCLUSIVE or UNCHECKED, with their own exit code (3), and every
verdict states the width it was judged with (suites/resolution.py).

The programs are JAX's (nobody here wrote them); the wrong answers are
XLA's own outputs zeroed, negated or scaled by 1.01 (fixtures/wrong.py)."""
from __future__ import annotations

import pytest

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import solve_triangular

from shlo_conform.cli import main
from tests.run_report import verdicts as read_verdicts

WRONG = Path(__file__).parent / "fixtures" / "wrong.py"


def _run(tmp_path, f, args, backends):
    (tmp_path / "p.mlir").write_text(jax.jit(f).lower(*args).as_text())
    np.savez(tmp_path / "in.npz", *args)
    return main(["run", str(tmp_path / "p.mlir"), f"--backend={backends}", "--inputs", str(tmp_path / "in.npz")])


def _xla_agrees_and_wrong_ones_disagree(tmp_path, capsys, f, args):
    """f's program judged on XLA and on zeroed and negated XLA: the first
    agrees, the others DISAGREE (exit 1), and no output is unchecked."""
    rc = _run(tmp_path, f, args, f"xla,{WRONG}:Zeroed,{WRONG}:Negated")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees"], out
    assert verdicts[f"{WRONG}:Zeroed"] == verdicts[f"{WRONG}:Negated"] == ["DISAGREES"], out
    assert rc == 1 and "unchecked" not in out


def _bench_program(name: str):
    """A model program of bench/real_programs.py (f, args): the LSTM is the one its table measures."""
    from bench import real_programs
    return real_programs.PROGRAMS[name][0], real_programs.inputs(name)


@pytest.mark.long   # ~20 s: a 16-step scan judged on three backends; make test-long (CI)
def test_a_zeroed_lstm_state_is_caught_and_xla_agrees(tmp_path, capsys):
    """16 steps of a 128-wide LSTM: the op-by-op enclosure covered about ±1
    after step 10 and `run` said "agrees" for the zero vector.  With the
    errors tracked as affine forms (oracle/affine.py) the enclosure stays
    within a fraction of a percent: XLA agrees, and zeroed, negated and
    1 %-scaled states DISAGREE — no compiler rewrite is named for them."""
    lstm, args = _bench_program("lstm-16x128")
    assert [a.shape for a in args][:3] == [(16, 4, 16), (16, 512), (128, 512)]
    rc = _run(tmp_path, lstm, args, f"xla,{WRONG}:Zeroed,{WRONG}:Negated,{WRONG}:Scaled")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees", "agrees"], out
    for name in ("Zeroed", "Negated", "Scaled"):
        assert verdicts[f"{WRONG}:{name}"] == ["DISAGREES", "DISAGREES"], out
    assert rc == 1 and "enclosure ±" in out and "FMA contraction" not in out


@pytest.mark.long   # ~25 s: a 256×512·512×512·512×128 block on four backends; make test-long (CI)
def test_a_layer_norm_between_two_matmuls_is_decided(tmp_path, capsys):
    """relu(x·w1) → row layer norm → softmax(h·w2) → cumsum, beside a sort
    (bench/real_programs.py ln-softmax-sort).  With the order allowance
    γₙ·Σ|x||y| the enclosure was ±1.61 % at the median element: INCONCLUSIVE,
    exit 3.  Bounded by the terms' sums of each sign (oracle/affine.py's
    `_order_allowance`) it is about half: XLA agrees (exit 0) and zeroed,
    negated and 1 %-scaled outputs DISAGREE."""
    f, args = _bench_program("ln-softmax-sort")
    rc = _run(tmp_path, f, args, "xla")
    out = capsys.readouterr().out
    assert rc == 0 and read_verdicts(out)["xla"] == ["agrees"], out
    rc = _run(tmp_path, f, args, f"{WRONG}:Zeroed,{WRONG}:Negated,{WRONG}:Scaled")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert rc == 1 and all(verdicts[f"{WRONG}:{w}"] == ["DISAGREES"] for w in ("Zeroed", "Negated", "Scaled")), out


def test_a_tight_program_agrees_with_its_width_stated_and_a_one_percent_error_is_caught(tmp_path, capsys):
    """tanh(x @ w): the enclosure is a few ULPs; XLA agrees (exit 0, the
    width on the verdict's line) and a 1 % scaling disagrees (exit 1)."""
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((8, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)]
    rc = _run(tmp_path, lambda x, w: jnp.tanh(x @ w / 8), args, "xla")
    out = capsys.readouterr().out
    assert rc == 0 and read_verdicts(out)["xla"] == ["agrees"], out
    lines = out.split("\n")
    width = lines[next(k for k, ln in enumerate(lines) if ln.startswith("  #0") and ": agrees" in ln) + 1]
    assert "enclosure ±" in width and "median" in width and "catches a scaling by" in width
    rc = _run(tmp_path, lambda x, w: jnp.tanh(x @ w / 8), args, f"{WRONG}:Scaled")
    out = capsys.readouterr().out
    assert rc == 1 and read_verdicts(out)[f"{WRONG}:Scaled"] == ["DISAGREES"], out


@pytest.mark.long   # stop 63's trim of make test (7:30 warm): the solve's judgement stays in make test (tests/oracle/test_lapack_factorisations.py)
def test_a_cholesky_solve_is_checked_end_to_end(tmp_path, capsys):
    """A Cholesky solve (jnp.linalg.cholesky, two solve_triangular): the
    solves' result is judged by the backward error of A·x = b
    (oracle/chains.py, spec/lapack.py "linear_solve") — XLA agrees, exit 0;
    an all-zero answer DISAGREES, exit 1.  (It used to be UNCHECKED: any value.)"""
    def solve(a, b):
        l = jnp.linalg.cholesky(a)
        return solve_triangular(l.T, solve_triangular(l, b, lower=True), lower=False)
    rng = np.random.default_rng(0)
    m = rng.standard_normal((8, 8)).astype(np.float32)
    args = [(m @ m.T + 8 * np.eye(8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)]
    rc = _run(tmp_path, solve, args, "xla")
    out = capsys.readouterr().out
    assert read_verdicts(out)["xla"] == ["agrees"] and rc == 0, out
    rc = _run(tmp_path, solve, args, f"{WRONG}:Zeroed")
    out = capsys.readouterr().out
    assert read_verdicts(out)[f"{WRONG}:Zeroed"] == ["DISAGREES"] and rc == 1, out


def test_an_output_the_oracle_states_no_value_for_is_unchecked_not_exact(tmp_path, capsys):
    """The column sums of jnp.linalg.eigh's eigenvectors: the vectors are
    defined by a property, not a value (each column's sign is free), and no
    range is carried through the sum, so the oracle states no value —
    "unchecked", exit 3, for XLA and for an all-zero answer alike; it used
    to print "exact" and agree.  (Complex det, then L·Lᵀ of a Cholesky
    factor, were the example until they were judged:
    tests/oracle/test_complex_det.py, test_lapack_factorisations.py.)"""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((8, 8))
    args = [(g @ g.T + 8 * np.eye(8)).astype(np.float32)]
    rc = _run(tmp_path, lambda a: jnp.sum(jnp.linalg.eigh(a)[1], axis=0), args, f"xla,{WRONG}:Zeroed")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["UNCHECKED"] and verdicts[f"{WRONG}:Zeroed"] == ["UNCHECKED"], out
    assert "exact (" not in out and "unchecked: any value" in out and rc == 3


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): argmax of approximate values stays in make test (tests/oracle)
def test_an_argmax_of_approximate_logits_is_judged(tmp_path, capsys):
    """argmax over 32 classes of tanh(x·w): a reduce whose body selects
    (spec/selection.py), over more leaves than the schedules are
    enumerated for, on values known to within their enclosures — it was
    "unchecked: any value" (exit 3).  Now every index some point of the
    logits' ranges makes the winner is stated (here one a row): XLA
    agrees, and a zeroed or negated answer DISAGREES."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((64, 128)).astype(np.float32),
            (rng.standard_normal((128, 32)) * 0.1).astype(np.float32)]
    _xla_agrees_and_wrong_ones_disagree(tmp_path, capsys, lambda x, w: jnp.argmax(jnp.tanh(x @ w), axis=1), args)


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): selection stays in make test (tests/oracle/test_selection*)
def test_the_first_true_of_a_mask_is_judged(tmp_path, capsys):
    """`jnp.argmax(mask)`, the index of the first True: JAX's argmax body
    over i1 values, init (false, 0).  It was UNCHECKED (i1 values refused,
    40 leaves past the enumeration); a row with no True ties the init and
    is decided too (index 0 in every schedule)."""
    x = np.random.default_rng(1).random((6, 40)).astype(np.float32)
    x[2] = 0.0   # no True in row 2
    _xla_agrees_and_wrong_ones_disagree(tmp_path, capsys, lambda x: jnp.argmax(x > 0.8, axis=1), [x])


@pytest.mark.long   # stop 62's trim of make test (8:05 on a clean run): reductions by approximate ops stay in make test (tests/oracle)
def test_a_cumulative_logsumexp_is_judged_within_its_tolerances(tmp_path, capsys):
    """`lax.cumlogsumexp`: a reduce_window whose body is jnp.logaddexp, with
    an approximate exp and log1p inside (spec/log_add_exp.py).  On exact
    inputs XLA's answer was DISAGREES by 1 ulp (the schedules enumerated
    through the oracle's correctly rounded body) and past 12 leaves
    unchecked or out of time (exit 4); now a Range every schedule and
    tolerance lies in: XLA agrees, a zeroed or negated answer DISAGREES."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((16, 40)).astype(np.float32)]
    _xla_agrees_and_wrong_ones_disagree(tmp_path, capsys, lambda x: jax.lax.cumlogsumexp(jnp.tanh(x) * 3, axis=1),
                                        args)


def test_an_output_mostly_unchecked_is_not_called_agrees(tmp_path, capsys):
    """`z.at[i].set(v)` with ten writes to each of 16 of 20 elements: which
    write lands last is the implementation's, past MAX_ENUMERATED_UPDATES
    any value (no monoid to bound it), so 16 of 20 elements are unchecked.
    The output was "agrees" (exit 0) on the 4 it checked; now INCONCLUSIVE
    (exit 3), saying how many were unchecked.  (An embedding gradient was
    the example until its scatter-add was bounded: tests/spec/test_scatter_orders.py.)"""
    idx = np.concatenate([np.repeat(np.arange(16), 10), np.arange(16, 20)]).astype(np.int32)
    v = np.random.default_rng(0).standard_normal(len(idx)).astype(np.float32)
    rc = _run(tmp_path, lambda i, v: jnp.zeros(20, jnp.float32).at[i].set(jnp.tanh(v)), [idx, v], "xla")
    out = capsys.readouterr().out
    assert read_verdicts(out)["xla"] == ["INCONCLUSIVE"] and rc == 3, out
    assert "16 of 20 elements unchecked (any value)" in out


@pytest.mark.long   # ~6 s: make test-long (CI); make test keeps the real determinant (same route, getrf)
def test_a_complex_determinant_is_judged_and_a_wrong_one_caught(tmp_path, capsys):
    """jnp.linalg.det of a complex 8×8 complex<f32> matrix: U's complex
    diagonal in boxes (oracle/lu_diagonal.py), the product carried as discs
    (oracle/complex_ranges.py) — XLA agrees, a zeroed answer disagrees."""
    rng = np.random.default_rng(0)
    args = [(rng.standard_normal((8, 8)) + 1j * rng.standard_normal((8, 8))).astype(np.complex64)]
    rc = _run(tmp_path, jnp.linalg.det, args, f"xla,{WRONG}:Zeroed,{WRONG}:Negated")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees"], out
    assert verdicts[f"{WRONG}:Zeroed"] == ["DISAGREES"] and verdicts[f"{WRONG}:Negated"] == ["DISAGREES"], out
    assert rc == 1


@pytest.mark.long   # stop 63's trim of make test (7:30 warm): det's ranges stay in make test (tests/oracle/test_lapack_downstream.py)
def test_a_real_determinant_is_judged_and_a_wrong_one_caught(tmp_path, capsys):
    """jnp.linalg.det of a real 8×8 f32 matrix: U's diagonal gets a range
    holding every evaluation order of the factorisation (oracle/lu_diagonal.py),
    the product is carried as ranges — XLA agrees; zeroed, negated and ×1.01
    answers disagree, exit 1."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((8, 8)).astype(np.float32)]
    rc = _run(tmp_path, jnp.linalg.det, args, f"xla,{WRONG}:Zeroed,{WRONG}:Negated,{WRONG}:Scaled")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees"], out
    assert all(verdicts[f"{WRONG}:{w}"] == ["DISAGREES"] for w in ("Zeroed", "Negated", "Scaled")), out
    assert rc == 1


@pytest.mark.long   # stop 62's trim of make test (8:35 on a fresh clone): trees of small sums stay in make test (tests/oracle)
def test_an_f16_product_of_64_terms_is_judged_by_its_trees(tmp_path, capsys):
    """q·kᵀ of 64 f16 products summed in f16: the order allowance left it
    INCONCLUSIVE (±14.5 % median); the extremes over every allowed tree
    (oracle/every_tree.py) are ±1.2 %, so XLA agrees, and a result scaled
    by 1.01, zeroed or negated DISAGREES."""
    rng = np.random.default_rng(1)
    q, k = (rng.standard_normal((16, 64)).astype(np.float16) for _ in range(2))
    rc = _run(tmp_path, lambda a, b: a @ b.T, [q, k], f"xla,{WRONG}:Scaled,{WRONG}:Zeroed,{WRONG}:Negated")
    out = capsys.readouterr().out
    verdicts = read_verdicts(out)
    assert verdicts["xla"] == ["agrees"], out
    assert all(verdicts[f"{WRONG}:{w}"] == ["DISAGREES"] for w in ("Scaled", "Zeroed", "Negated")), out
    assert rc == 1
