"""`run` on programs exported with symbolic shapes (issue 35): @main takes
`tensor<?x16xf32>`, the concrete shapes come from the inputs (or --dims),
the program is refined to static shapes by StableHLO's and jaxlib's own
passes (shlo_conform/refine.py) and the static program is judged as usual.

The programs are jax.export's (nobody here wrote them), in both forms a
user has: `Exported.mlir_module()` text and `Exported.serialize()` bytes.
Each test states what must hold end to end: XLA and the reference
interpreter agree with the oracle on the refined program, a deliberately
wrong backend (XLA's outputs scaled by 1.01 or zeroed, fixtures/wrong.py)
disagrees, and shapes that do not fit — missing, contradicting, breaking a
constraint — are one line on stderr with exit 2, never a traceback.
Expected values are hand truths: the sizes the test chose, 2·x and 3·x of
small integers (exact in f32)."""
from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from shlo_conform.cli import main
from shlo_conform.suites import show
from tests.run_report import verdicts as read_verdicts

WRONG = Path(__file__).parent / "fixtures" / "wrong.py"
F32 = jnp.float32


def _save(d: Path, name: str, exp) -> None:
    (d / f"{name}.mlir").write_text(exp.mlir_module())
    (d / f"{name}.bin").write_bytes(exp.serialize())


def _softmax_over_t(x, w):
    """Two symbolic dims: a reshape to (b*t, 16) and back, an iota of t
    and broadcasts, all of them dynamic_* ops in the export."""
    y = (x.reshape(-1, x.shape[-1]) @ w).reshape(x.shape[0], x.shape[1], w.shape[1])
    y = y + jnp.arange(x.shape[1], dtype=F32)[None, :, None]
    return jax.nn.softmax(y, axis=1)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    d = tmp_path_factory.mktemp("dynamic")
    b, = export.symbolic_shape("b")
    # the issue's program
    _save(d, "mlp", export.export(jax.jit(lambda x, w: jax.nn.relu(x @ w)))(
        jax.ShapeDtypeStruct((b, 16), F32), jax.ShapeDtypeStruct((16, 8), F32)))
    bb, t = export.symbolic_shape("b, t")
    _save(d, "bt", export.export(jax.jit(_softmax_over_t))(
        jax.ShapeDtypeStruct((bb, t, 16), F32), jax.ShapeDtypeStruct((16, 8), F32)))
    c, = export.symbolic_shape("c", constraints=["c >= 2"])
    _save(d, "constrained", export.export(jax.jit(lambda x: jnp.cumsum(x, axis=0) * x[0]))(
        jax.ShapeDtypeStruct((c, 3), F32)))
    _save(d, "two", export.export(jax.jit(lambda x, y: x @ y.T))(
        jax.ShapeDtypeStruct((b, 16), F32), jax.ShapeDtypeStruct((b, 16), F32)))
    _save(d, "even", export.export(jax.jit(lambda x: x.reshape(2, -1).sum(0)))(jax.ShapeDtypeStruct((2 * b,), F32)))
    _save(d, "flip", export.export(jax.jit(lambda x: jnp.flip(x, 0)))(jax.ShapeDtypeStruct((b, 3), F32)))
    _save(d, "platforms", export.export(
        jax.jit(lambda x: jax.lax.platform_dependent(x, cpu=lambda v: v * 2, cuda=lambda v: v * 3)),
        platforms=("cuda", "cpu"))(jax.ShapeDtypeStruct((b, 2), F32)))
    _save(d, "platforms_static", export.export(
        jax.jit(lambda x: jax.lax.platform_dependent(x, cpu=lambda v: v * 2, cuda=lambda v: v * 3)),
        platforms=("cuda", "cpu"))(jax.ShapeDtypeStruct((3, 2), F32)))
    (d / "static.mlir").write_text(jax.jit(lambda x: x * 2).lower(np.ones(3, np.float32)).as_text())
    return d


def _inputs(d: Path, name: str, *arrays) -> str:
    path = d / f"{name}.npz"
    np.savez(path, *arrays)
    return str(path)


def _normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["run", *map(str, argv)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _one_line_refusal(rc: int, err: str) -> None:
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err


@pytest.mark.long   # three batch sizes in two forms, ~18 s of CPU: make test-long (CI); the other tests run refine in make test
@pytest.mark.parametrize("form", ["mlir", "bin"])
def test_the_issue_program_is_judged_at_three_batch_sizes(programs, capsys, form):
    """The issue's relu(x @ w) with `b` rows, as text and as serialize()'s
    bytes: refined to each input's batch size and judged — XLA and the
    interpreter agree with the oracle, exit 0, and the output says it was
    refined and to which b."""
    for b in (1, 4, 9):
        npz = _inputs(programs, f"mlp{b}", _normal(b, 16, seed=b), _normal(16, 8, seed=100 + b))
        rc, out, err = _run(capsys, programs / f"mlp.{form}", "--backend=xla,interpreter,oracle", "--inputs", npz)
        assert rc == 0, out + err
        assert read_verdicts(out) == {"xla": ["agrees"], "interpreter": ["agrees"]}, out
        assert "refined to static shapes" in out.split("\n")[0], out
        assert f"@main(tensor<{b}x16xf32>, tensor<16x8xf32>)" in out, out
        assert f"from the inputs' shapes: b={b}; tensor<?x16xf32> → tensor<{b}x16xf32>" in out, out
        assert "shape assertions: 1 evaluated on these shapes, all held" in out, out
        assert ("jax.export Exported.serialize()" if form == "bin" else "(text,") in out


def test_a_wrong_backend_disagrees_on_the_refined_program(programs, capsys):
    """A refined program is judged, not waved through: XLA's outputs scaled
    by 1.01 or zeroed disagree, exit 1."""
    npz = _inputs(programs, "mlp_wrong", _normal(5, 16, seed=3), _normal(16, 8, seed=4))
    rc, out, err = _run(capsys, programs / "mlp.bin", f"--backend={WRONG}:Scaled,{WRONG}:Zeroed", "--inputs", npz)
    assert rc == 1, out + err
    verdicts = read_verdicts(out)
    assert verdicts[f"{WRONG}:Scaled"] == ["DISAGREES"] and verdicts[f"{WRONG}:Zeroed"] == ["DISAGREES"], out


@pytest.mark.long   # ~9 s: make test-long (CI); make test keeps one symbolic dim through refine
def test_two_symbolic_dims_through_dynamic_reshape_iota_and_broadcast(programs, capsys):
    """`symbolic_shape("b, t")`: the export holds dynamic_reshape,
    dynamic_iota and dynamic_broadcast_in_dim on values of the dims; all of
    them become static and the program is judged."""
    text = (programs / "bt.mlir").read_text()
    for op in ("stablehlo.dynamic_reshape", "stablehlo.dynamic_iota", "stablehlo.dynamic_broadcast_in_dim"):
        assert op in text   # the test exercises what it says
    npz = _inputs(programs, "bt", _normal(3, 5, 16, seed=5), _normal(16, 8, seed=6))
    for form in ("mlir", "bin"):
        rc, out, err = _run(capsys, programs / f"bt.{form}", "--backend=xla,interpreter,oracle", "--inputs", npz)
        assert rc == 0, out + err
        assert read_verdicts(out) == {"xla": ["agrees"], "interpreter": ["agrees"]}, out
        assert "b=3, t=5; tensor<?x?x16xf32> → tensor<3x5x16xf32>" in out, out


def test_a_constraint_that_holds_is_judged_and_one_that_fails_is_one_line(programs, capsys):
    """`symbolic_shape("c", constraints=["c >= 2"])` (with cumsum, exported
    through the `stablehlo.dynamic_reduce_window` custom call): c = 4 is
    refined and judged; c = 1 breaks the constraint — the spec leaves that
    run undefined, so it is one line naming the constraint, exit 2."""
    rc, out, err = _run(capsys, programs / "constrained.bin", "--backend=xla,oracle", "--inputs",
                        _inputs(programs, "c4", _normal(4, 3, seed=7)))
    assert rc == 0 and read_verdicts(out) == {"xla": ["agrees"]}, out + err
    assert "c=4" in out and "shape assertions: 2 evaluated on these shapes, all held" in out, out
    rc, out, err = _run(capsys, programs / "constrained.mlir", "--backend=xla,oracle", "--inputs",
                        _inputs(programs, "c1", _normal(1, 3, seed=8)))
    _one_line_refusal(rc, err)
    assert "c >= 2" in err and "'c' = 1" in err and "undefined" in err, err


@pytest.mark.parametrize("form", ["mlir", "bin"])
def test_inputs_that_give_b_two_values_are_one_line(programs, capsys, form):
    """x: (b, 16) and y: (b, 16) given 4 and 5 rows: the export's own
    assertion names the contradiction; nothing runs, exit 2."""
    npz = _inputs(programs, "two_bad", _normal(4, 16), _normal(5, 16))
    rc, out, err = _run(capsys, programs / f"two.{form}", "--backend=xla,oracle", "--inputs", npz)
    _one_line_refusal(rc, err)
    assert "args[1].shape[0] (= 5)" in err and "'b' (= 4)" in err and out == "", err


@pytest.mark.long   # stop 62's trim of make test (8:35 on a fresh clone): dynamic shapes stay in make test (the constraint cases)
def test_a_dimension_given_as_an_expression_is_solved_by_the_export(programs, capsys):
    """x: (2*b,): 6 elements solve b = 3 (the export's floor division,
    evaluated exactly); 7 elements leave remainder 1 — one line, exit 2."""
    rc, out, err = _run(capsys, programs / "even.mlir", "--backend=xla,interpreter,oracle", "--inputs",
                        _inputs(programs, "six", _normal(6, seed=9)))
    assert rc == 0 and read_verdicts(out) == {"xla": ["agrees"], "interpreter": ["agrees"]}, out + err
    assert "b=3; tensor<?xf32> → tensor<6xf32>" in out and "@main(tensor<6xf32>)" in out, out
    rc, out, err = _run(capsys, programs / "even.bin", "--backend=xla,oracle", "--inputs",
                        _inputs(programs, "seven", _normal(7, seed=10)))
    _one_line_refusal(rc, err)
    assert "Division had remainder 1" in err, err


@pytest.mark.long   # ~9 s, three backends twice: make test-long (CI); make test refines from --inputs in the others
def test_random_inputs_take_their_sizes_from_dims(programs, capsys):
    """--random has no arrays to read shapes from: --dims b=5 names the size
    (or arg0=5x3, the argument's whole shape); both refine to 5×3."""
    for dims in ("b=5", "arg0=5x3"):
        rc, out, err = _run(capsys, programs / "flip.bin", "--backend=xla,interpreter,oracle", "--random", "2",
                            "--dims", dims)
        assert rc == 0 and read_verdicts(out) == {"xla": ["agrees"], "interpreter": ["agrees"]}, out + err
        assert f"from --dims {dims}: b=5; tensor<?x3xf32> → tensor<5x3xf32>" in out, out


@pytest.mark.parametrize("program, args, message", [
    ("mlp.mlir", ["--random", "0"], "give --inputs, or with --random the sizes: --dims b=N"),
    ("mlp.bin", ["--random", "0", "--dims", "q=3"], "no dimension variable 'q' (its variables: b)"),
    ("mlp.mlir", ["--random", "0", "--dims", "b=three"], "--dims: b=three: a dimension is an integer >= 0"),
    ("mlp.mlir", ["--random", "0", "--dims", "b=0"], "Expected value >= 1 for dimension variable 'b'"),
    ("mlp.mlir", ["--random", "0", "--dims", "arg0=4x15"], "--dims arg0 has shape (4, 15), @main's argument 0 is "
                                                            "tensor<?x16xf32>"),
    ("mlp.mlir", ["--inputs", "MLP_NPZ", "--dims", "b=4"], "--dims goes with --random"),
    ("mlp.mlir", ["--inputs", "NARROW_NPZ"], "has shape (4, 15), @main's argument 0 is tensor<?x16xf32>"),
    ("static.mlir", ["--random", "0", "--dims", "b=4"], "@main's arguments have static shapes"),
])
def test_shapes_that_cannot_be_used_are_one_line_exit_2(programs, capsys, program, args, message):
    args = [{"MLP_NPZ": _inputs(programs, "mlp_ok", _normal(4, 16), _normal(16, 8)),
             "NARROW_NPZ": _inputs(programs, "narrow", _normal(4, 15), _normal(16, 8))}.get(a, a) for a in args]
    rc, out, err = _run(capsys, programs / program, "--backend=xla,oracle", *args)
    _one_line_refusal(rc, err)
    assert message in err and out == "", err


@pytest.mark.long   # ~13 s: make test-long (CI)
def test_a_multi_platform_export_runs_the_cpu_branch(programs, capsys):
    """Exported for ("cuda", "cpu") with `platform_dependent` (cpu: 2·x,
    cuda: 3·x): @main takes the platform index first, which the user's
    function does not.  The serialized form names the platforms, so the
    index is fixed to CPU's (1): the oracle states 2·x, XLA and the
    interpreter agree.  The text names none: index 0 is fixed and said so
    (the cuda branch, 3·x, judged as what the program computes there)."""
    x = np.arange(1, 7, dtype=np.float32).reshape(3, 2)   # small integers: 2x and 3x exact in f32
    npz = _inputs(programs, "plat", x)
    rc, out, err = _run(capsys, programs / "platforms.bin", "--backend=xla,interpreter,oracle", "--inputs", npz)
    assert rc == 0 and read_verdicts(out) == {"xla": ["agrees"], "interpreter": ["agrees"]}, out + err
    assert "platform index 1 (cpu) fixed: the program was exported for cuda, cpu" in out, out
    assert show.one_line(x * np.float32(2)) in out and show.one_line(x * np.float32(3)) not in out, out
    rc, out, err = _run(capsys, programs / "platforms.mlir", "--backend=xla,oracle", "--inputs", npz)
    assert rc == 0 and "platform index 0 fixed" in out and "the text does not name the platforms" in out, out + err
    assert show.one_line(x * np.float32(3)) in out, out


def test_a_static_multi_platform_export_takes_only_the_functions_arguments(programs, capsys):
    """Static shapes, two platforms: the platform index is still no input of
    the user's function — the .npz holds x alone, the index is fixed to
    CPU's and the program line says only that was refined."""
    x = np.arange(-3, 3, dtype=np.float32).reshape(3, 2)
    rc, out, err = _run(capsys, programs / "platforms_static.bin", "--backend=xla,oracle", "--inputs",
                        _inputs(programs, "plat_static", x))
    assert rc == 0 and read_verdicts(out) == {"xla": ["agrees"]}, out + err
    assert "jax.export's platform index fixed); @main(tensor<3x2xf32>)" in out.split("\n")[0], out
    assert "refined only to fix jax.export's platform index" in out and "platform index 1 (cpu)" in out, out
    assert show.one_line(x * np.float32(2)) in out, out
