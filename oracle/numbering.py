"""Where an op sends each element: observed by running it on numbered elements.

Two followers of values need the same fact — which operand element each
output element holds — and neither may assume it from the op's name:

* oracle/affine.py carries affine forms through data movement: it runs the
  op's own index formulas (`DataMovement.fn`, no rounding there) on the
  operands' element numbers as int64, and gathers the forms' rows;
* oracle/chains.py follows a value the spec defines by a property (a
  LAPACK factor) through whatever JAX does to it between two calls
  (reshape, transpose, slice, select, gather): it runs the op itself — its
  whole semantics — on the element numbers written in the value's own
  element type, so an op that computes instead of moving must show it.

`sources` is the one place that numbers, runs and reads back.  Numbers in
int64 start at 0 and run on over the numbered operands in order; the
op's output *is* its sources.  Numbers in an element type start at 1 (zero
would hide a computed zero), both components of a complex element carry
the same number (so a conjugation or a swap of components is not a move),
and the op runs twice, on the numbers and on their negatives: an output
element holds operand element k only where the first run gives +k and the
second −k exactly — what a move gives and a constant, an absolute value or
an offset does not.  (A sum of two numbered elements still reads as a
third; what the follower needs — each element it reads arriving exactly
once — is the follower's check, oracle/chains.py.)  A type holds the
numbers exactly only up to 2^p − 1 (p its significand's precision): past
that, nothing is observed.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def _shapes(shapes) -> list:
    return [tuple(int(d) for d in s) for s in shapes]


def sources(run: Callable[[list], np.ndarray], shapes: list, et=None) -> np.ndarray | None:
    """Per element of `run`'s output (flattened), the flat number of the
    operand element it holds — counted over the operands of `shapes` in
    order — or −1 where it holds none; None where nothing can be observed
    (`run` raises, gives a value of another kind, or the numbers do not fit
    the type).  `run(numbered)` gets one numbered array per shape and
    returns the output as an array.  `et` None: int64 numbers (index
    formulas); else numbers in that element type, run with both signs."""
    shapes = _shapes(shapes)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    total = sum(sizes)
    starts = np.cumsum([0] + sizes)
    if et is None:
        numbered = [np.arange(starts[j], starts[j] + sizes[j], dtype=np.int64).reshape(s)
                    for j, s in enumerate(shapes)]
        try:
            out = np.asarray(run(numbered))
        except Exception:   # an index formula that needs the values' own type: nothing observed
            return None
        if out.dtype.kind not in "iu":
            return None
        flat = out.reshape(-1).astype(np.int64)
        return np.where((flat >= 0) & (flat < total), flat, -1)
    precision = (et.component if et.is_complex else et).format.precision
    if total == 0 or total + 1 >= 2 ** min(precision, 53):
        return None
    ids = [np.arange(starts[j] + 1, starts[j] + sizes[j] + 1, dtype=np.float64).reshape(s)
           for j, s in enumerate(shapes)]
    if et.is_complex:
        ids = [x * (1 + 1j) for x in ids]
    got = []
    for sign in (1.0, -1.0):
        try:
            out = run([(sign * x).astype(et.numpy) for x in ids])
        except Exception:   # the op states nothing on these values: no move shown
            return None
        if out is None:
            return None
        got.append(np.asarray(out).astype(np.complex128).reshape(-1))
    x, y = got
    if x.shape != y.shape:
        return None
    im = x.real if et.is_complex else 0
    hit = (x.imag == im) & (x == -y) & (x.real >= 1) & (x.real <= total) & (x.real == np.round(x.real))
    return np.where(hit, x.real, 0).astype(np.int64) - 1
