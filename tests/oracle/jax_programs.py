"""What the LAPACK-judging tests share: a JAX function lowered as `jax.jit`
lowers it, judged by the oracle and run on XLA; an output's verdict."""
from __future__ import annotations

import jax
import numpy as np

from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.suites.compare import compare


def program(xla, f, args):
    """(the oracle's expectations, XLA's outputs) of `f` on `args`."""
    text = jax.jit(f).lower(*args).as_text()
    es = execute(parse_program(text), list(args))
    return es, [np.asarray(o) for o in xla.run(xla.compile(text), list(args))]


def ok(e, a) -> bool:
    """Does output `a` meet expectation `e`?"""
    return compare(e, np.asarray(a).astype(e.type.element_type.numpy)).ok


def ends(e) -> tuple[np.ndarray, np.ndarray]:
    """A "bounded" expectation's ends as float64, in its shape."""
    from shlo_conform.spec.types import from_bits
    et = e.type.element_type
    return (np.asarray(from_bits(e.lo, et)).astype(np.float64), np.asarray(from_bits(e.hi, et)).astype(np.float64))


def judged_by_range(e, module: str, truth: np.ndarray, got: np.ndarray) -> None:
    """`e` is a range stated by `module`, holding the exact `truth`, met by
    the backend's `got`, and refusing it negated and zeroed."""
    assert e.kind == "bounded" and module in e.why, e.why
    lo, hi = ends(e)
    assert ((lo <= truth) & (truth <= hi)).all()
    assert ok(e, got)
    for wrong in (-got, np.zeros_like(got)):
        assert not ok(e, wrong)
