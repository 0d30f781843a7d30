"""What the brute-force tests of the rules built on `qr` share
(test_projection.py, test_unique_qr.py, test_reconstruction.py): matrices
A of a few shapes with the criteria's thresholds, and a backend's Q̃, R̃
drawn at the edges of qr.q's criterion and xGEQRF's contract."""
from __future__ import annotations

import numpy as np

from shlo_conform.spec import lapack
from shlo_conform.spec.types import parse_type

U32 = 2.0 ** -24


def n1(v) -> float:
    """‖v‖₁, the largest column sum."""
    return float(np.abs(v).sum(axis=0).max())


def matrices(rng, shapes, trials: int, shift: float = 2.0):
    """(m, n, A's type, t = two_sided(max(m, n)), a) for `trials` f32 matrices of each shape, a = N(0, 1) + shift·I."""
    for m, n in shapes:
        ta = parse_type(f"tensor<{m}x{n}xf32>")
        t = lapack.two_sided(max(m, n), ta.element_type)
        for _ in range(trials):
            yield m, n, ta, t, (rng.standard_normal((m, n)) + shift * np.eye(m, n)).astype(np.float32)


def contract_error(A: np.ndarray, t: float, rng) -> np.ndarray:
    """E with ‖E‖₁ at 99 % of xGEQRF's contract, t·max(m, n)·‖A‖₁·u."""
    E = rng.standard_normal(A.shape)
    return E * 0.99 * t * max(A.shape) * n1(A) * U32 / n1(E)


def factors_at_the_edges(A: np.ndarray, t: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """(Q̃, R̃) with Q̃·R̃ = A − E exactly (E at the contract's bound), R̃ upper triangular, Q̃'s Gram error at 98 %
    of qr.q's bound, random signs: Q̃ = Q_B·(I + X)·S, R̃ = S·(I + X)⁻¹·R_B, X upper triangular."""
    m, n = A.shape
    qb, rb = np.linalg.qr(A - contract_error(A, t, rng))
    x = np.triu(rng.standard_normal((n, n)))
    x *= 0.98 * t * m * U32 / n1(x + x.T)   # the Gram error's first-order part; x's square is δ² small
    assert n1((np.eye(n) + x).T @ (np.eye(n) + x) - np.eye(n)) <= t * m * U32
    s = np.diag(rng.choice([-1.0, 1.0], n))
    return qb @ (np.eye(n) + x) @ s, s @ np.linalg.solve(np.eye(n) + x, rb)
