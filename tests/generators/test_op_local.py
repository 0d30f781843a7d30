"""One op, one module: generators read what an op declares and name no op.

The only op names generators may spell are those of region bodies
(generators/regions.py: the ops a scatter update or a reduce body applies),
which are data about the body, not a branch per op."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from shlo_conform.generators import values
from shlo_conform.spec import samples
from shlo_conform.spec.exercise import CLAMPED, IMPLEMENTATION_DEFINED, SKIPPED
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.types import E_F32, SI8

GENERATORS = Path(values.__file__).parent
# Files whose op names are the contents of bodies, not branches per op: regions.py (a scatter update's or
# a reduce body's ops), quantized.py (a reduce body's identity on a quantized type, by the body's op),
# v1_20_ops.py (composite's decomposition functions), v1_20_collectives.py (the operation async_start's
# body wraps, all_reduce's body).
REGION_BODIES = {"regions.py", "quantized.py", "v1_20_ops.py", "v1_20_collectives.py"}


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_generators_name_no_op_outside_region_bodies():
    named = [(p.name, line, s) for p in sorted(GENERATORS.glob("*.py")) if p.name not in REGION_BODIES
             for line, s in _strings(p) if s in OPS]
    assert named == []


def test_the_check_sees_an_op_name():
    """The test above can fail: an op name in a string is found."""
    assert any(s == "add" for _, s in _strings(GENERATORS / "regions.py"))


def test_out_of_bounds_meaning_is_the_ops_own():
    """The seed clamps dynamic_slice's starts, v1.20 gather's; v1.20's
    scatter skips an out-of-bounds update: all scored.  An op whose spec
    leaves it implementation-defined would get surveys."""
    assert OPS["dynamic_slice"].exercise.indices.out_of_bounds == CLAMPED
    assert OPS["dynamic_update_slice"].exercise.indices.out_of_bounds == CLAMPED
    assert OPS["gather"].exercise.indices.out_of_bounds == CLAMPED
    assert OPS["scatter"].exercise.indices.out_of_bounds == SKIPPED
    assert all(OPS[op].exercise.indices.defined for op in ("dynamic_slice", "gather", "scatter"))
    assert not dataclasses.replace(OPS["gather"].exercise.indices, out_of_bounds=IMPLEMENTATION_DEFINED).defined
    assert OPS["add"].exercise.indices is None


def test_declared_values_reach_the_specials():
    """An op's hard values join the format's specials; integer values replace
    the boundaries only for the operand they are declared for."""
    plain = values.specials(E_F32)
    sine = values.specials(E_F32, OPS["sine"].exercise)
    assert len(sine) == len(plain) + len(samples.near_multiples_of_half_pi(E_F32, 0))
    amounts = values.specials(SI8, OPS["shift_left"].exercise, operand=1).astype(int).tolist()
    assert amounts[:9] == list(range(9)) and values.specials(SI8, OPS["shift_left"].exercise, operand=0).tolist() \
        == values.specials(SI8).tolist()
