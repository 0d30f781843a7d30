"""oracle/numbering.py: where an op sends each element, observed on numbered
elements — the one helper of oracle/affine.py (index formulas, int64) and
oracle/chains.py (the op itself, numbers in the value's type).  Expected
sources are written by hand from what each numpy function does."""
from __future__ import annotations

import numpy as np

from shlo_conform.oracle.numbering import sources
from shlo_conform.spec.types import E_F32, element_type


def test_int64_numbers_follow_index_formulas_over_several_operands():
    # concatenate a (2×2) and b (1×2) along rows: b's elements are numbered 4, 5
    got = sources(lambda xs: np.concatenate(xs, axis=0), [(2, 2), (1, 2)])
    assert got.tolist() == [0, 1, 2, 3, 4, 5]
    got = sources(lambda xs: xs[0].T, [(2, 3)])
    assert got.tolist() == [0, 3, 1, 4, 2, 5]
    assert sources(lambda xs: xs[0] * 0.5, [(2,)]) is None           # not integers: nothing observed
    assert sources(lambda xs: 1 / 0, [(2,)]) is None                   # raises: nothing observed


def test_numbers_in_the_value_type_tell_moves_from_computations():
    got = sources(lambda xs: xs[0][::-1], [(4,)], E_F32)
    assert got.tolist() == [3, 2, 1, 0]
    got = sources(lambda xs: np.concatenate([xs[0][:2], np.abs(xs[0][2:]), xs[0][:1] + 1]), [(4,)], E_F32)
    assert got.tolist() == [0, 1, -1, -1, -1]                          # abs and an offset are no moves
    got = sources(lambda xs: np.stack([xs[0][0], np.float32(0)]), [(2,)], E_F32)
    assert got.tolist() == [0, -1]                                     # a constant is no move


def test_a_conjugation_is_not_a_move_and_large_values_are_not_numbered():
    c64 = element_type("complex<f32>")
    assert sources(lambda xs: xs[0].copy(), [(3,)], c64).tolist() == [0, 1, 2]
    assert sources(lambda xs: np.conj(xs[0]), [(3,)], c64).tolist() == [-1, -1, -1]
    assert sources(lambda xs: xs[0], [(1 << 24,)], E_F32) is None      # 2^24 + 1 is not an f32
