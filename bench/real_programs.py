"""Model-like JAX programs through `shlo-conform run`: what each verdict decides.

For each program (lowered by JAX here, nobody in this project wrote it):
XLA's verdict, the width of the enclosure it was judged with (median and
widest element, relative), the verdicts of three deliberately wrong
backends (XLA's outputs zeroed, negated, scaled by 1.01:
tests/cli/fixtures/wrong.py), and the oracle's time beside XLA's run in the
same command.  A wrong backend must be DISAGREES or, where the enclosure
is too wide to tell, INCONCLUSIVE — never "agrees".

    .venv/bin/python bench/real_programs.py [--only NAME,…] [--interpreter]

The oracle's time is its expectations as `run` computes them (affine forms
included); the interpreter's (with --interpreter) is its compile and run,
each in a process of its own, cut at 900 s.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import jax.scipy.stats  # noqa: F401  (multivariate_normal, `_mvn_logpdf`)
from jax.scipy.linalg import solve_triangular

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "tests" / "cli" / "fixtures" / "wrong.py"
RNG = np.random.default_rng(0)


def _n(*shape, scale=1.0, dtype=np.float32):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def _lstm(xs, w, u, b, h0, c0):
    def step(carry, x):
        h, c = carry
        i, f, g, o = jnp.split(x @ w + h @ u + b, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        return (jax.nn.sigmoid(o) * jnp.tanh(c), c), None
    (h, c), _ = jax.lax.scan(step, (h0, c0), xs)
    return h, c


def _ln_gelu_mlp(x, w1, w2):
    m = x.mean(-1, keepdims=True)
    y = (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)
    return jax.nn.gelu(y @ w1, approximate=False) @ w2


def _attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1]).astype(q.dtype)
    return jax.nn.softmax(s, axis=-1) @ v


def _chol_solve(a, b):
    l = jnp.linalg.cholesky(a)
    return solve_triangular(l.T, solve_triangular(l, b, lower=True), lower=False)


def _conv_block(x, w):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y) + x


def _ln_softmax_sort(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    h = (h - h.mean(axis=1, keepdims=True)) / jnp.sqrt(h.var(axis=1, keepdims=True) + 1e-5)
    s = jnp.cumsum(jax.nn.softmax(h @ w2, axis=-1), axis=-1)
    return jnp.concatenate([s, jnp.sort(h[:, :w2.shape[1] // 2], axis=1)], axis=1)


def _classifier(x, w1, w2):
    logits = jnp.tanh(x @ w1) @ w2
    return jnp.argmax(logits, axis=-1), jax.nn.logsumexp(logits, axis=-1)


def _embedding_grad(table, ids, v):
    return jax.grad(lambda e: jnp.sum(jnp.tanh(e[ids] * v)))(table)


def _cumulative_logprob(x, w):
    """Cumulative probability mass in log space (top-p sampling's running
    total): `lax.cumlogsumexp`, a reduce_window of jnp.logaddexp."""
    return jax.lax.cumlogsumexp(jax.nn.log_softmax(jnp.tanh(x @ w) * 4, axis=-1), axis=1)


def _mvn_logpdf(x, mu, cov):
    """A multivariate normal's log-density (jax.scipy.stats): a Cholesky
    factor's log-diagonal and its first solve, computed on."""
    return jax.scipy.stats.multivariate_normal.logpdf(x, mu, cov)


def _ridge(x, y):
    """Ridge regression's weights through the normal equations: a solve of a
    computed matrix and right-hand side (xᵀx + λI, xᵀy)."""
    return jnp.linalg.solve(x.T @ x + 0.1 * jnp.eye(x.shape[1]), x.T @ y)


def _whiten(x):
    """ZCA whitening: a computed covariance's eigh, the data times V·diag(1/√(w + ε))·Vᵀ (oracle/spectral.py)."""
    xc = x - x.mean(0)
    w, v = jnp.linalg.eigh(xc.T @ xc / x.shape[0])
    return xc @ (v * (1 / jnp.sqrt(w + 1e-5))) @ v.T


def _sqrtm(s):
    """A symmetric matrix's square root through eigh (oracle/spectral.py)."""
    w, v = jnp.linalg.eigh(s)
    return (v * jnp.sqrt(jnp.clip(w, 0))) @ v.T


def _polar(a):
    """The polar factor U·Vᵀ of a thin SVD (oracle/singular.py)."""
    u, _, vt = jnp.linalg.svd(a, full_matrices=False)
    return u @ vt


def _qr_lstsq(a, b):
    """Least squares through QR: R⁻¹·(Qᵀ·b) (oracle/chains.py `_qr_lstsq`)."""
    q, r = jnp.linalg.qr(a)
    return jax.scipy.linalg.solve_triangular(r, q.T @ b, lower=False)


def _qr_projection(a, x):
    """x's part orthogonal to A's columns, x − Q·(Qᵀ·x) (oracle/projection.py)."""
    q, _ = jnp.linalg.qr(a)
    return x - q @ (q.T @ x)


def _orthogonal_init(key):
    """jax.nn.initializers.orthogonal on a 64×16 weight: Q·sign(diag R) of Gaussian draws (oracle/unique_qr.py)."""
    return jax.nn.initializers.orthogonal()(jax.random.wrap_key_data(key), (64, 16), jnp.float32)


def _pca(x):
    """PCA reconstruction on the top 2 components of a computed covariance: Xc·V_k·V_kᵀ (oracle/spectral.py)."""
    xc = x - x.mean(axis=0)
    _, v = jnp.linalg.eigh(xc.T @ xc / x.shape[0])
    return xc @ v[:, -2:] @ v[:, -2:].T


def _truncated_svd(a):
    """The best rank-4 approximation, U[:, :4]·diag(s[:4])·Vᵀ[:4] (oracle/singular.py)."""
    u, s, vt = jnp.linalg.svd(a, full_matrices=False)
    return (u[:, :4] * s[:4]) @ vt[:4]


def _spline_midpoints(y):
    """A natural cubic spline through y (unit spacing): its second derivatives by
    a tridiagonal solve (xGTSV), then its values halfway between the knots."""
    n = y.shape[0] - 2
    one = jnp.ones(n, y.dtype)
    m = jax.lax.linalg.tridiagonal_solve(one.at[0].set(0), 4 * one, one.at[-1].set(0),
                                         (6 * (y[2:] - 2 * y[1:-1] + y[:-2]))[:, None])[:, 0]
    m = jnp.concatenate([jnp.zeros(1, y.dtype), m, jnp.zeros(1, y.dtype)])
    return (y[1:] + y[:-1]) / 2 - (m[1:] + m[:-1]) / 16


def _spd(n):
    m = _n(n, n)
    return (m @ m.T + n * np.eye(n)).astype(np.float32)


PROGRAMS = {
    "mlp-tanh": (lambda x, w1, w2: jnp.tanh(jnp.tanh(x @ w1) @ w2), lambda: [_n(64, 128), _n(128, 256, scale=0.09),
                                                                          _n(256, 64, scale=0.06)]),
    "ln-gelu-mlp": (_ln_gelu_mlp, lambda: [_n(32, 64), _n(64, 256, scale=0.125), _n(256, 64, scale=0.06)]),
    "attention-f32": (_attention, lambda: [_n(32, 64), _n(32, 64), _n(32, 64)]),
    "attention-bf16": (_attention, lambda: [_n(32, 64, dtype=ml_dtypes.bfloat16) for _ in range(3)]),
    "softmax-f16": (lambda x: jax.nn.softmax(x, axis=-1), lambda: [_n(64, 128, dtype=np.float16)]),
    "lstm-16x128": (_lstm, lambda: [_n(16, 4, 16), _n(16, 512, scale=0.25), _n(128, 512, scale=128 ** -0.5),
                                    _n(512, scale=0.1), np.zeros((4, 128), np.float32),
                                    np.zeros((4, 128), np.float32)]),
    "conv-block": (_conv_block, lambda: [_n(1, 16, 16, 8), _n(3, 3, 8, 8, scale=0.12)]),
    "cumsum": (lambda x: jnp.cumsum(x), lambda: [_n(1024)]),
    "int8-matmul": (lambda a, b: jax.lax.dot(a, b, preferred_element_type=jnp.int32),
                    lambda: [RNG.integers(-128, 128, (32, 64)).astype(np.int8),
                             RNG.integers(-128, 128, (64, 16)).astype(np.int8)]),
    "bf16-matmul-f32": (lambda a, b: jax.lax.dot(a, b, preferred_element_type=jnp.float32),
                        lambda: [_n(32, 64, dtype=ml_dtypes.bfloat16), _n(64, 16, dtype=ml_dtypes.bfloat16)]),
    "sort-topk": (lambda x: (jnp.sort(x, axis=-1), jax.lax.top_k(x, 4)[0]), lambda: [_n(16, 64)]),
    "cholesky-solve": (_chol_solve, lambda: [_spd(16), _n(16, 4)]),
    "mvn-logpdf": (_mvn_logpdf, lambda: [_n(64, 16), _n(16), _spd(16)]),
    "ridge-regression": (_ridge, lambda: [_n(256, 32), _n(256, 4)]),
    "zca-whitening": (_whiten, lambda: [_n(256, 8)]),
    "eigh-sqrtm": (_sqrtm, lambda: [_spd(8)]),
    "pinv": (jnp.linalg.pinv, lambda: [_n(32, 8)]),
    "svd-polar": (_polar, lambda: [_n(8, 4)]),
    "qr-lstsq": (_qr_lstsq, lambda: [_n(32, 8), _n(32, 2)]),
    "qr-projection": (_qr_projection, lambda: [_n(32, 8), _n(32, 4)]),
    "pca-reconstruct": (_pca, lambda: [_n(64, 4) * np.float32([4, 3, 1, 1])]),
    "truncated-svd": (_truncated_svd, lambda: [_n(8, 6) + np.eye(8, 6, dtype=np.float32) * np.float32([9, 8, 7, 6, 1, 1])]),
    "eig-general": (jnp.linalg.eig, lambda: [_n(8, 8)]),
    "lu-factors": (jax.scipy.linalg.lu, lambda: [_n(16, 16)]),
    "cumprod-discount": (lambda r: jnp.cumprod(np.float32(0.99) + 0.005 * r), lambda: [_n(512)]),
    "cumprod-4096": (lambda r: jnp.cumprod(np.float32(0.99) + 0.005 * r), lambda: [_n(4096)]),
    "prod-rows": (lambda r: jnp.prod(1 + 0.01 * r, axis=-1), lambda: [_n(256, 512)]),
    "schur": (jax.scipy.linalg.schur, lambda: [_n(12, 12)]),
    "hessenberg": (lambda a: jax.scipy.linalg.hessenberg(a, calc_q=True), lambda: [_n(12, 12)]),
    "qr-pivoting": (lambda a: jax.scipy.linalg.qr(a, pivoting=True, mode="economic"), lambda: [_n(24, 8)]),
    "spline-tridiagonal": (_spline_midpoints, lambda: [_n(64)]),
    "sqrtm-schur": (lambda a: jnp.real(jax.scipy.linalg.sqrtm(a)), lambda: [_n(6, 6) + 6 * np.eye(6, dtype=np.float32)]),
    "tridiagonal-perturbed": (lambda dl, d, du, b: jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
                              lambda: [_n(32), _n(32), _n(32), _n(32, 2)]),
    "eigh-tridiagonal": (lambda a, e: jax.scipy.linalg.eigh_tridiagonal(a, e, eigvals_only=False),
                         lambda: [_n(16), _n(15)]),
    "orthogonal-init": (_orthogonal_init, lambda: [RNG.integers(0, 2 ** 32, 2, dtype=np.uint64).astype(np.uint32)]),
    "fft-conv": (lambda x, k: jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(k), n=x.shape[-1]),
                 lambda: [_n(8, 256), _n(8, 256, scale=0.1)]),
    "ln-softmax-sort": (_ln_softmax_sort, lambda: [_n(256, 512), _n(512, 512, scale=1 / 22), _n(512, 128, scale=1 / 22)]),
    "ln-softmax-sort-16x64": (_ln_softmax_sort, lambda: [_n(16, 64), _n(64, 64, scale=1 / 8), _n(64, 32, scale=1 / 8)]),
    "classifier-argmax": (_classifier, lambda: [_n(128, 256), _n(256, 512, scale=1 / 16), _n(512, 1000, scale=1 / 22)]),
    "cumulative-logprob": (_cumulative_logprob, lambda: [_n(32, 64), _n(64, 256, scale=1 / 8)]),
    "embedding-grad": (_embedding_grad, lambda: [_n(50, 32), RNG.integers(0, 50, 512).astype(np.int32), _n(512, 32)]),
    "while-ring": (lambda x: jax.lax.fori_loop(0, 200, lambda i, v: jnp.roll(v, 1) * np.float32(0.99) + 0.01, x),
                   lambda: [_n(64)]),
}

VERDICT = re.compile(r"^  #(\d+) \S+: (\w+)")
WIDTH = re.compile(r"enclosure ±(\S+) median \(([^)]*)\), ±(\S+) widest")
CAUGHT = re.compile(r"catches a scaling by (\S+)")


def _stored(a):
    return a.view(np.uint16) if a.dtype == ml_dtypes.bfloat16 else a


def inputs(name: str) -> list:
    """The program's inputs: from a seed of its own name, whatever else runs."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(name.encode()))
    return PROGRAMS[name][1]()


def run_one(name: str, tmp: Path) -> dict:
    f = PROGRAMS[name][0]
    args = inputs(name)
    prog, npz = tmp / f"{name}.mlir", tmp / f"{name}.npz"
    prog.write_text(jax.jit(f).lower(*args).as_text())
    np.savez(npz, **{f"arg{i}": _stored(a) for i, a in enumerate(args)})
    backends = ["xla"] + [f"{WRONG}:{w}" for w in ("Zeroed", "Negated", "Scaled")]
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "shlo_conform.cli", "run", str(prog), "--backend=" + ",".join(backends),
                        "--inputs", str(npz), "--timeout", "300"], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    verdicts, widths, current = {}, [], None
    for ln in p.stdout.split("\n"):
        if ln and not ln.startswith(" "):
            current = ln.split()[0]
            if current.startswith(str(WRONG)):
                current = current.rsplit(":", 1)[1]
        m = VERDICT.match(ln)
        if m and current and current != "oracle":
            verdicts.setdefault(current, []).append(m.group(2))
        w = WIDTH.search(ln)
        if w and current == "xla":
            c = CAUGHT.search(ln)
            widths.append((w.group(1), w.group(3), c.group(1).rstrip(";") if c else "—"))
    judged = "cannot judge" not in p.stdout
    return {"name": name, "rc": p.returncode, "judged": judged, "verdicts": verdicts, "widths": widths,
            "wall": wall, "why": "" if judged else p.stdout.split("cannot judge:", 1)[1].split("\n")[0][:120],
            "oracle": _timed(prog, npz, "oracle"),
            "interpreter": _timed(prog, npz, "interpreter", 300.0) if INTERPRETER[0] else None}


INTERPRETER = [False]
_TIMED = """
import sys, time, numpy as np
from shlo_conform import differential as d, run_program
data = open(sys.argv[1], "rb").read()
prep = d.prepare(data)
inputs = d.npz_inputs(sys.argv[2], prep.types)
t = time.perf_counter()
if sys.argv[3] == "oracle":
    got, why = d.expectations(data, inputs)
    assert got is not None, why
else:
    run_program(prep.text, inputs, backend=sys.argv[3])
print(time.perf_counter() - t)
"""


def _timed(prog: Path, npz: Path, who: str, limit: float = 900.0) -> str:
    """Seconds `who` takes on the program (the oracle: its expectations as
    `run` computes them; a backend: compile and run), in a process of its own."""
    try:
        p = subprocess.run([sys.executable, "-c", _TIMED, str(prog), str(npz), who], capture_output=True,
                           text=True, cwd=ROOT, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"> {limit:g} s"
    if p.returncode:
        return "failed: " + (p.stderr.strip().splitlines() or ["?"])[-1][:60]
    return f"{float(p.stdout.split()[-1]):.2g} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--interpreter", action="store_true", help="time the reference interpreter too (slow)")
    a = ap.parse_args(argv)
    INTERPRETER[0] = a.interpreter
    names = [n for n in a.only.split(",") if n] or list(PROGRAMS)
    print("| program | judged | xla | enclosure median / widest (xla's outputs) | smallest scaling caught | zeroed | "
          "negated | ×1.01 | oracle | interpreter |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            r = run_one(n, Path(tmp))
            v = r["verdicts"]
            cell = lambda k: ",".join(sorted(set(v.get(k, ["—"]))))   # noqa: E731
            widths = "; ".join(f"{a}/{b}" for a, b, _ in r["widths"]) or "—"
            caught = "; ".join(c for _, _, c in r["widths"]) or "—"
            print(f"| {n} | {'yes' if r['judged'] else 'no: ' + r['why']} | {cell('xla')} | {widths} | {caught} | "
                  f"{cell('Zeroed')} | {cell('Negated')} | {cell('Scaled')} | {r['oracle']} | "
                  f"{r['interpreter'] or '—'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
