"""Traceability: seed (C<N>) labels against spec/ops <op>_c<N>, on a hand-written
seed text (so a missing constraint must be reported) and on the real seeds
when this checkout has them."""
from __future__ import annotations

from pathlib import Path

import pytest

from shlo_conform.spec import traceability as tr
from shlo_conform.spec.ops import OPS

TINY = """\
# Spec

## Programs

### Types

* (C1) not an op constraint: a Types section.

## Ops

### abs

#### Inputs

| Label | Name      | Type   | Constraints |
|-------|-----------|--------|-------------|
| (I1)  | `operand` | tensor | (C1-C3)     |

#### Constraints

* (C1) `shape(result) = shape(operand)`.
* (C2) `element_type(result)` ...
* (C3) a third constraint that spec/ops/abs.py does not have.

#### Examples

```mlir
* (C9) inside a code block: not a label
```

### frobnicate

#### Constraints

* (C1) something.
* (C2)`no space after the label`.

### after_all

#### Semantics

No constraints at all.

## Execution

### Process

* (C1) not an op either.
"""

RFC = """\
## Motivation

### TanOp

## Proposed Specification

### frobnicate

#### Constraints

* (C1) the RFC's only constraint.
"""


def _by_name(t):
    return {o.name: o for o in t.ops}


def test_parse_labels_only_from_constraints_sections_of_op_sections():
    ops = tr.parse_seed(TINY, "tiny.txt")
    assert set(ops) == {"abs", "frobnicate", "after_all"}
    assert ops["abs"].labels == [1, 2, 3]
    assert ops["frobnicate"].labels == [1, 2]
    assert ops["after_all"].labels == [] and not ops["after_all"].has_constraints_section


def test_missing_constraint_and_unencoded_ops_are_reported(tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text(TINY)
    t = tr.trace(tr.read_seeds(p), {"abs": OPS["abs"], "add": OPS["add"]})
    ops = _by_name(t)
    assert not t.ok
    assert ops["abs"].status == "INCOMPLETE" and ops["abs"].missing == ["abs_c3"]
    assert ops["abs"].present == ["abs_c1", "abs_c2"]
    assert ops["frobnicate"].status == "not encoded"
    assert ops["frobnicate"].seed_labels == ["frobnicate_c1", "frobnicate_c2"]
    assert ops["add"].status == "NOT IN SEEDS"   # encoded, yet no seed section: never hidden
    text = tr.render(t)
    assert "MISSING C3" in text and "frobnicate" in text and "after_all" in text and "INCOMPLETE" in text


def test_complete_trace_is_ok_and_extra_functions_are_not(tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text(TINY.replace("* (C3) a third constraint that spec/ops/abs.py does not have.\n", ""))
    assert tr.trace(tr.read_seeds(p), {"abs": OPS["abs"]}).ok
    p.write_text(TINY.replace("* (C2) `element_type(result)` ...\n", "").replace("(C3) a third", "(C2) a third")
                 .replace("* (C2) a third", "* (C1) dup"))
    t = tr.trace(tr.read_seeds(p), {"abs": OPS["abs"]})
    assert _by_name(t)["abs"].extra == ["abs_c2"] and not t.ok


def test_rfc_sections_supersede(tmp_path):
    a, b = tmp_path / "spec.txt", tmp_path / "rfc.txt"
    a.write_text(TINY)
    b.write_text(RFC)
    ops = tr.read_seeds(a, b)
    assert ops["frobnicate"].labels == [1] and ops["frobnicate"].source == "rfc.txt"
    assert "tanop" not in ops and "TanOp" not in ops


SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"


def test_the_stored_sections_are_the_seeds():
    """spec/seed/ holds every op section of the seed texts, verbatim
    (checked wherever the seed texts are present: in this project's
    checkouts, ../shared/seeds)."""
    if not (SEEDS / tr.SPEC_SEED).is_file():
        pytest.skip(f"seed texts not present at {SEEDS}: the stored sections serve alone")
    for name in (tr.SPEC_SEED, tr.RFC_SEED):
        assert tr.stored_sections(name) == tr.sections((SEEDS / name).read_text(encoding="utf-8")), name


def test_every_encoded_constraint_traced():
    """Against the stored seed sections, so every clone checks it."""
    t = tr.trace(tr.read_stored())
    ops = _by_name(t)
    assert t.ok, tr.render(t)
    assert all(ops[n].status == "ok" for n in OPS)
    assert ops["tan"].source == tr.RFC_SEED and ops["all_gather"].source == tr.RFC_SEED
    assert ops["compare"].seed_labels == ["compare_c1", "compare_c2", "compare_c3"]
    assert ops["convolution"].status == "ok" and len(ops["convolution"].seed_labels) == 28
    assert ops["cholesky"].status == "ok" and ops["cholesky"].seed_labels == ["cholesky_c1", "cholesky_c2", "cholesky_c3"]
    # the seed's own numbering gap, reported as it is
    assert "gather_c14" not in ops["gather"].seed_labels and "gather_c15" in ops["gather"].seed_labels


def test_later_clauses_are_listed_not_extra(tmp_path):
    """A constraint an op declares from a later spec (`OpSpec.later`: v1.20's
    batching clauses of gather and scatter) is listed with its clause, not
    counted as a function without a seed label — unless it reuses a seed label."""
    import dataclasses
    p = tmp_path / "tiny.txt"
    p.write_text(TINY.replace("* (C3) a third constraint that spec/ops/abs.py does not have.\n", ""))

    def abs_c7(op):
        return True
    spec = dataclasses.replace(OPS["abs"], constraints=OPS["abs"].constraints + (abs_c7,))
    t = tr.trace(tr.read_seeds(p), {"abs": spec})
    assert not t.ok and _by_name(t)["abs"].extra == ["abs_c7"]
    later = dataclasses.replace(spec, later=(("abs_c7", "v1.20 C3"),))
    t = tr.trace(tr.read_seeds(p), {"abs": later})
    assert t.ok and _by_name(t)["abs"].later == {"abs_c7": "v1.20 C3"} and _by_name(t)["abs"].extra == []
    assert "later: abs_c7 = v1.20 C3" in tr.render(t)
    clash = dataclasses.replace(OPS["abs"], later=(("abs_c2", "v1.20 C2"),))   # a seed label is the seed's
    t = tr.trace(tr.read_seeds(p), {"abs": clash})
    assert _by_name(t)["abs"].later == {} and _by_name(t)["abs"].present == ["abs_c1", "abs_c2"]


def test_gather_and_scatter_trace_their_v1_20_clauses():
    t = _by_name(tr.trace(tr.read_stored()))
    assert t["gather"].status == "ok" and t["gather"].later["gather_c22"] == "v1.20 C15"
    assert len(t["gather"].later) == 10 and len(t["scatter"].later) == 9
    assert t["scatter"].status == "ok" and t["scatter"].later["scatter_c25"] == "v1.20 C20"
    assert "gather_c16" not in t["gather"].seed_labels
