"""elementwise._distinct: the grouping that lets the whole-array route call
an op's fn once per distinct operand tuple.  Truth: Python's own set of the
row tuples."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.oracle.elementwise import _distinct


@pytest.mark.parametrize("dtypes", [(np.uint8,), (np.uint8, np.uint8), (np.uint16, np.uint32), (np.uint64,),
                                    (np.uint32, np.uint32, np.uint16),   # 80 bits: the dict route
                                    (np.uint64, np.uint64)])
def test_distinct_groups_equal_rows(dtypes):
    rng = np.random.default_rng(15)
    top = [np.iinfo(d).max for d in dtypes]
    cols = [np.concatenate([rng.integers(0, 4, 3000).astype(d), np.array([t, 0], dtype=d)]) for d, t in zip(dtypes, top)]
    cols = [np.where(rng.random(len(c)) < 0.3, np.asarray(t, dtype=c.dtype), c) for c, t in zip(cols, top)]
    first, inverse = _distinct(cols)
    rows = list(zip(*[c.tolist() for c in cols]))
    assert len(first) == len(set(rows))
    assert len({rows[i] for i in first.tolist()}) == len(first)
    assert all(rows[i] == rows[first[inverse[i]]] for i in range(len(rows)))
