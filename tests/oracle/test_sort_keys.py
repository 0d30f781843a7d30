"""sort's whole-row route (spec/ops/sort.py `key_comparison`, `_sortable`):
where the comparator compares one key computed alike from each element, a
row is sorted by numpy's stable argsort of the keys instead of calling the
comparator on every pair.  The expectation must be the pairwise route's,
JSON for JSON — orders, stability, the ties an unstable sort offers and
their labels, NaN rows under FLOAT left to the pairwise route — on every
value case of suites/core/sort.jsonl and on JAX's sorts (jnp.sort,
jnp.argsort, lax.top_k, lax.sort unstable with payloads, descending,
batched, bf16 and integer keys, NaN and ±0), and XLA's outputs meet it.

The reader hands a region's block to the spec as `Function.block`
(oracle/program.py's `_regions`), where sort recognises a key comparison."""
from __future__ import annotations

import numpy as np
import pytest

from shlo_conform.oracle.reading import read_registered
from shlo_conform.oracle.program import execute, parse_program
from shlo_conform.spec.ops import sort as sort_mod
from shlo_conform.suites.compare import compare
from shlo_conform.suites.io import load_cases

import jax
jnp = jax.numpy
lax = jax.lax

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _both_routes(monkeypatch, text, inputs):
    """(expectations by keys, expectations pair by pair, whether the key route served every row)."""
    p = parse_program(text)
    rows = []
    orig_matrix = sort_mod._matrix
    monkeypatch.setattr(sort_mod, "_matrix", lambda call, el: (rows.append(len(el)), orig_matrix(call, el))[1])
    fast = [e.to_json() for e in execute(p, inputs)]
    keyed = not rows
    with monkeypatch.context() as m:
        m.setattr(sort_mod, "key_comparison", lambda fn: None)
        slow = [e.to_json() for e in execute(p, inputs)]
    return fast, slow, keyed


def test_suites_core_sort_cases(monkeypatch):
    from pathlib import Path
    core = Path(__file__).resolve().parents[2] / "suites" / "core"
    cases = [c for c in load_cases(core, ops={"sort"}) if c.kind in ("value", "survey")]
    assert len(cases) > 30
    served = 0
    for c in cases:
        fast, slow, keyed = _both_routes(monkeypatch, c.mlir, [t.array() for t in c.inputs])
        assert fast == slow, c.id
        assert fast == [e.to_json() for e in c.expected], c.id
        served += keyed
    assert served > len(cases) // 3   # lt, gt, lt_totalorder comparators (not le, ge, lexicographic_lt, never)


FLOATS = np.array([1.0, -0.0, np.nan, 0.0, -np.inf, 1.0, -np.nan, 2.5, 0.0, np.inf, -3.0, 2.5], np.float32)


def _complex(re, im):
    z = np.empty(len(re), dtype=np.complex64)
    z.real, z.imag = re, im
    return z


def _jax_programs():
    rng = np.random.default_rng(7)
    keys2d = rng.choice([-1.0, 0.0, -0.0, 2.0, np.nan, np.inf], (5, 9)).astype(np.float32)
    ints = rng.integers(-3, 3, (4, 11)).astype(np.int32)
    payload = rng.standard_normal((4, 11)).astype(np.float32)
    bf = FLOATS.astype(jnp.bfloat16)
    return [
        ("jnp.sort", jnp.sort, [FLOATS]),
        ("jnp.argsort", jnp.argsort, [FLOATS]),
        ("lax.top_k", lambda x: lax.top_k(x, 5), [FLOATS]),
        ("jnp.sort descending", lambda x: jnp.sort(x, descending=True), [FLOATS]),
        ("jnp.sort bf16", jnp.sort, [bf]),
        ("jnp.sort axis 0", lambda x: jnp.sort(x, axis=0), [keys2d]),
        ("jnp.argsort axis 1", lambda x: jnp.argsort(x, axis=1), [keys2d]),
        ("lax.top_k batched", lambda x: lax.top_k(x, 3), [keys2d]),
        ("jnp.sort int", lambda x: jnp.sort(x, axis=1), [ints]),
        ("lax.sort unstable, payload", lambda k, p: lax.sort((k, p), dimension=1, is_stable=False, num_keys=1),
         [ints, payload]),
        ("lax.sort unstable, float keys", lambda k, p: lax.sort((k, p), dimension=1, is_stable=False, num_keys=1),
         [keys2d[:4, :9], payload[:, :9]]),
        ("jnp.sort complex", jnp.sort, [_complex(FLOATS[:6], FLOATS[6:])]),
    ]


PROGRAMS = _jax_programs()


def _as_sort(text: str) -> str:
    """The program with its CHLO legalized: lax.top_k's `chlo.top_k` is
    judged as its own op now (spec/chlo/top_k.py), and these tests are about
    the sort it decomposes into (a TOTALORDER GT comparator: the key route)."""
    return read_registered(text).generic


@pytest.mark.parametrize("name,f,inputs", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_jax_sorts(monkeypatch, name, f, inputs):
    from shlo_conform.backends.base import load_backend
    text = _as_sort(jax.jit(f).lower(*inputs).as_text())
    fast, slow, keyed = _both_routes(monkeypatch, text, inputs)
    assert fast == slow
    if name != "jnp.sort complex":   # JAX sorts complex keys as two keys: lexicographic, not one key
        assert keyed, name
    xla = load_backend("xla")
    got = xla.run(xla.compile(text), inputs)
    exps = execute(parse_program(text), inputs)
    for e, g in zip(exps, got):
        c = compare(e, g)
        assert c.ok, (name, c.detail)


def test_a_large_top_k_is_judged_by_keys(monkeypatch):
    rng = np.random.default_rng(3)
    v = rng.standard_normal(4096).astype(np.float32)
    v[::97] = np.nan
    v[::89] = -0.0
    text = _as_sort(jax.jit(lambda x: lax.top_k(x, 16)).lower(v).as_text())
    rows = []
    monkeypatch.setattr(sort_mod, "_matrix", lambda call, el: rows.append(el))
    vals, idx = execute(parse_program(text), [v])
    assert not rows
    key = np.where(np.isnan(v), np.inf, v)   # top_k's TOTALORDER GT: +NaN above +inf
    want = np.argsort(-key, kind="stable")[:16]
    assert idx.array().tolist() == want.tolist()


# --------------------------------------------------------------------------
# What is recognised, and that a wrong reading is caught
# --------------------------------------------------------------------------

def _sort_text(body: str, types=("f32",), n=6) -> str:
    ins = ", ".join(f"%a{i}: tensor<{n}x{t}>" for i, t in enumerate(types))
    outs = ", ".join(f"tensor<{n}x{t}>" for t in types)
    args = ", ".join(f"%x{i}: tensor<{t}>, %y{i}: tensor<{t}>" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(types)))
    return f"""func.func @main({ins}) -> ({outs}) {{
  %0:{len(types)} = "stablehlo.sort"({operands}) ({{
  ^bb0({args}):
{body}
  }}) {{dimension = 0 : i64, is_stable = false}} : ({outs}) -> ({outs})
  func.return {", ".join(f"%0#{i}" for i in range(len(types)))} : {outs}
}}"""


def _cmp(d, a, b, t="f32", ct=""):
    kind = f", compare_type = #stablehlo<comparison_type {ct}>" if ct else ""
    return (f'    %c = "stablehlo.compare"({a}, {b}) {{comparison_direction = #stablehlo<comparison_direction {d}>'
            f'{kind}}} : (tensor<{t}>, tensor<{t}>) -> tensor<i1>\n    "stablehlo.return"(%c) : (tensor<i1>) -> ()')


def _recognised(text):
    p = parse_program(text)
    return sort_mod.key_comparison(p.steps[0].inst.comparator)


def test_what_is_recognised():
    assert _recognised(_sort_text(_cmp("LT", "%x0", "%y0")))[1] == "LT"
    assert _recognised(_sort_text(_cmp("LT", "%y0", "%x0")))[1] == "GT"            # swapped: the flipped order
    assert _recognised(_sort_text(_cmp("GT", "%x0", "%y0", ct="TOTALORDER")))[1] == "GT"
    assert _recognised(_sort_text(_cmp("LT", "%x1", "%y1", "si32"), ("f32", "si32")))[0].what == ("in", 1)
    for body in (_cmp("LE", "%x0", "%y0"), _cmp("NE", "%x0", "%y0"), _cmp("LT", "%x0", "%x0"),
                 _cmp("LT", "%x0", "%y1", "f32"), _cmp("LT", "%y0", "%y0")):
        types = ("f32", "f32") if "%y1" in body else ("f32",)
        assert _recognised(_sort_text(body, types)) is None, body


def test_keys_computed_differently_on_each_side_are_not_one_key():
    """select(x == 0, +0, x) against select(y == 0, -0, y): not the same K."""
    body = """    %z = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %m = "stablehlo.constant"() {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
    %ex = "stablehlo.compare"(%x0, %z) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %ey = "stablehlo.compare"(%y0, %z) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %kx = "stablehlo.select"(%ex, %z, %x0) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %ky = "stablehlo.select"(%ey, %m, %y0) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
""" + _cmp("LT", "%kx", "%ky", ct="TOTALORDER")
    assert _recognised(_sort_text(body)) is None
    assert _recognised(_sort_text(body.replace('%ey, %m, %y0', '%ey, %z, %y0'))) is not None


def test_a_wrong_direction_is_caught(monkeypatch):
    """The comparison above (key route against the pairwise one) fails for
    a key reading with the direction flipped, and for FLOAT rows with a NaN
    sorted by keys."""
    text = _as_sort(jax.jit(lambda x: lax.top_k(x, 5)).lower(FLOATS).as_text())
    orig = sort_mod.key_comparison

    def flipped(fn):
        got = orig(fn)
        return got and (got[0], {"LT": "GT", "GT": "LT"}[got[1]], got[2])
    monkeypatch.setattr(sort_mod, "key_comparison", flipped)
    fast, slow, _ = _both_routes(monkeypatch, text, [FLOATS])
    assert fast != slow
    monkeypatch.setattr(sort_mod, "key_comparison", orig)
    text = _sort_text(_cmp("LT", "%x0", "%y0"), n=12)
    orig_sortable = sort_mod._sortable

    def nan_rows_too(op, moved):
        got = orig_sortable(op, moved)
        return got and (got[0], np.ones_like(got[1]))
    monkeypatch.setattr(sort_mod, "_sortable", nan_rows_too)
    fast, slow, _ = _both_routes(monkeypatch, text, [FLOATS])
    assert fast != slow


def test_rows_with_nan_under_float_take_the_pairwise_route(monkeypatch):
    """A batch sorted by FLOAT LT, unstable: rows without NaN by keys (their
    ties offered), the row with a NaN pair by pair (the formal condition's
    alternatives, padded to the widest row) — one expectation, the
    pairwise route's."""
    keys = np.array([[1.0, -0.0, 0.0, 1.0, 2.0, -1.0],
                     [3.0, np.nan, 1.0, 0.0, 1.0, -0.0],
                     [2.0, 2.0, 2.0, -0.0, 0.0, 5.0]], np.float32)
    pay = np.arange(18, dtype=np.int32).reshape(3, 6)
    text = _sort_text(_cmp("LT", "%x0", "%y0"), ("f32", "si32"), n=6).replace("tensor<6x", "tensor<3x6x") \
        .replace("dimension = 0", "dimension = 1")
    fast, slow, keyed = _both_routes(monkeypatch, text, [keys, pay])
    assert not keyed and fast == slow
    assert any("formal condition" in a["label"] for a in fast[1]["alternatives"])
    assert any("ties reordered" in a["label"] for a in fast[1]["alternatives"])
