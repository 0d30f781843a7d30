"""oracle/elementwise.py's own tests: which route states an element-wise
result.  What each route states is checked elsewhere against independent
truth (tests/oracle/test_whole_programs.py: the op on pieces too small for
the routes; tests/spec/test_generic.py: the whole-array claims); here, that
the route meant for a case is the one taken — a route that silently stops
serving gives the same values, only at the per-element cost, and no value
comparison can notice it (the mutation tool's "speed only" survivors)."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.generators.expect import expected_outputs
from shlo_conform.oracle import elementwise


def _unary(op: str, n: int, et: str) -> str:
    t = f"tensor<{n}x{et}>"
    return (f"func.func @main(%a: {t}) -> {t} {{\n  %0 = \"stablehlo.{op}\"(%a) : ({t}) -> {t}\n"
            f"  \"func.return\"(%0) : ({t}) -> ()\n}}\n")


@pytest.fixture
def by_value(monkeypatch):
    """What `_by_value` answered on each call (None: declined)."""
    got = []
    real = elementwise._by_value

    def spy(*a):
        got.append(real(*a))
        return got[-1]
    monkeypatch.setattr(elementwise, "_by_value", spy)
    return got


def test_narrow_operands_over_more_elements_than_values_go_by_value(by_value):
    """f16 exponential over 2^17 elements (more than the 2^16 patterns of
    f16): each value present evaluated once.  The same op over 64 elements
    (SMALL: the per-element grouping is cheaper) and an f32 op (2^32
    values: no table) are declined."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 1 << 16, 1 << 17, dtype=np.uint64).astype(np.uint16).view(np.float16)
    expected_outputs(_unary("exponential", x.size, "f16"), [x])
    assert by_value[-1] is not None   # (the last to answer: the values present ran through the op first)
    by_value.clear()
    expected_outputs(_unary("exponential", elementwise.SMALL, "f16"), [x[:elementwise.SMALL]])
    assert by_value == [None]
    by_value.clear()
    y = rng.standard_normal(1 << 17).astype(np.float32)
    expected_outputs(_unary("exponential", y.size, "f32"), [y])
    assert by_value == [None]


def test_each_open_element_gets_each_alternatives_value_and_only_open_elements_are_implementation_defined():
    """clamp on complex<f32> with a NaN component at elements 0 and 2 (two
    different values: each is evaluated on its own; the lexicographic
    maximum and minimum are open there — lhs, rhs or NaN — under labels the
    op builds per element, "maximum→…; minimum→…", equal strings but not
    one object): only those two elements are implementation-defined, each
    alternative holds its value at both, and 0.5 and 2 (clamped to 1) keep
    their one value.  By hand: "maximum→rhs" is the lower bound 0 at both,
    "maximum→lhs; minimum→rhs" the upper bound 1, "maximum→lhs;
    minimum→lhs" the operand itself."""
    t, s = "tensor<4xcomplex<f32>>", "tensor<complex<f32>>"
    prog = (f"func.func @main(%lo: {s}, %x: {t}, %hi: {s}) -> {t} {{\n"
            f"  %0 = \"stablehlo.clamp\"(%lo, %x, %hi) : ({s}, {t}, {s}) -> {t}\n"
            f"  \"func.return\"(%0) : ({t}) -> ()\n}}\n")
    x = np.array([complex(np.nan, 0), 0.5, complex(np.nan, 1), 2.0], np.complex64)
    [e] = expected_outputs(prog, [np.complex64(0), x, np.complex64(1)])
    assert e.impl_defined == [0, 2]
    f32 = lambda v: int(np.float32(v).view(np.uint32))   # noqa: E731
    by_label = {a.label: a.bits.tolist() for a in e.alternatives}
    for label, bits in by_label.items():
        assert bits[1] == [f32(0.5), 0] and bits[3] == [f32(1), 0], label
    assert [by_label["maximum→rhs"][i] for i in (0, 2)] == [[0, 0], [0, 0]]
    assert [by_label["maximum→lhs; minimum→rhs"][i] for i in (0, 2)] == [[f32(1), 0], [f32(1), 0]]
    assert [by_label["maximum→lhs; minimum→lhs"][i] for i in (0, 2)] == [[f32(np.nan), 0], [f32(np.nan), f32(1)]]
