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
