"""The spec's own "#### Examples", run through the oracle backend.

One generic harness: for every op in `spec.ops.OPS` whose seed section has
an Examples block (the StableHLO spec, seed 000, and the tan RFC, seed 004),
each example's `// %name: [...]` input comments become @main's arguments,
its op (possibly over several lines, with regions and attributes) is the
body, and its `// %result: [...]` comment is the truth.  An input of tuple
type — `(3)`, `([1.0, 2.0], (3))` — is built inside @main from tensor
arguments with `stablehlo.tuple` (@main takes tensors); a tuple result is
compared tensor by tensor (the oracle returns a tuple's tensors in order).
Ops without operands (constant, iota) get an @main without arguments.

Floats are compared at the printed precision: the printed decimal is rounded
into the result type (numpy/Python parse, not the oracle); an op the spec
ties to IEEE basic operations ("exact") must give exactly those bits (signed
zero significant); an "approx" op (no accuracy guarantee) passes with those
bits or within half a unit of the last printed digit — but a result that
is exactly zero must carry the printed sign.  Hex literals (0x7FC00000) are bit patterns; nan and
-nan match any NaN.  Examples whose printed values are themselves wrong or
imprecise are expected failures, each naming the finding.
"""
from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from shlo_conform.backends.base import load_backend
from shlo_conform.spec.dsl import Elementwise
from shlo_conform.spec.ops import OPS
from shlo_conform.spec.traceability import RFC_SEED, SPEC_SEED, stored_sections
from shlo_conform.spec.types import TensorType, from_bits, parse_type, to_bits

SPEC_SEEDS = (SPEC_SEED, RFC_SEED)

# Findings: examples whose printed values disagree with the spec's own semantics.
FINDINGS = {
    "rng": "the example prints one sample of values in [0, 2); the oracle's own sample differs (the seed makes "
           "the values implementation-defined): tests/spec/test_ops_rng.py checks that the printed sample "
           "meets the oracle's statistical expectation",
    "divide": "the example's expected [5.66666651, …] is 17/3, but lhs is ±17.1: "
              "17.1f/3.0f = 5.70000029 (f32); the example was written for lhs = 17.0",
    "rsqrt": "rsqrt(9.0) is printed 0.33333343, but 1/3 in f32 is 0.333333343 "
             "(0x3EAAAAAB): a digit is missing, the printed value is 3 ulp off",
    "power": "the f64 example prints f32 results: power(3.0, -1.0) as 0.333333343 "
             "(f32's 1/3; in f64 it is 0.3333333333333333) and power(10000.0, 10.0) as inf "
             "(1e40 overflows f32, but is finite in f64)",
    "log_plus_one": "log_plus_one(-0.0) is printed 0.0, but log1p(-0) = -0 "
                    "(IEEE 754 §9.2.1; the op's own Semantics say `logp1` from IEEE-754)",
    "negate-1": "the complex example prints its operand as a bare pair `(2.5, 0.0)` and "
                "its tensor<1xcomplex<f32>> result as a flat `[-2.5, -0.0]`, not `[(-2.5, -0.0)]`",
    "map": "the example's body is in pretty form (`stablehlo.multiply %arg0, %arg1 : tensor<i32>`), so "
           "only StableHLO's registered parser reads it, and that parser (StableHLO 1.17) refuses "
           "`dimensions = dense<[0, 1]> : tensor<2xi64>`: it wants `array<i64: 0, 1>` (the values are "
           "right: tests/spec/test_ops_sort_map.py runs the example with a generic body)",
    "custom_call": "both examples (seed and RFC) print no input or result values, and call `foo`, a target "
                   "whose semantics the seed leaves implementation-defined: tests/spec/test_ops_custom_call.py "
                   "reads both and checks the oracle's unknown-target verdict",
}


# The token ops (after_all, infeed, outfeed, send, recv): no printed values, token operands.
FINDINGS.update({op: ("the example prints no values and takes tokens as operands, which @main cannot take from a "
                "backend: tests/spec/test_ops_side_effects.py runs it with tokens made by after_all and "
                "a host whose queues and log are stated by hand") for op in ("after_all", "infeed", "outfeed", "send", "recv")})


# The collectives and the position ops: values printed per process (`// %operand@(0, 0): …`) on a grid.
FINDINGS.update({op: ("the example prints values per process of a grid (`%operand@(0, 0)`) or none "
                      "(replica_id, partition_id), which this one-process harness cannot run: "
                      "tests/oracle/test_collective_semantics.py runs it on its grid")
                 for op in ("all_gather", "all_reduce", "all_to_all", "collective_permute", "reduce_scatter",
                            "replica_id", "partition_id")})


# --------------------------------------------------------------------------
# Reading the seeds
# --------------------------------------------------------------------------

def _examples() -> list:
    """[(test id, op mnemonic, example text)] for every encoded op, from the
    seeds' op sections stored beside the spec (spec/seed/: every clone has
    them; tests/spec/test_traceability.py holds them equal to the seed
    texts wherever those are present)."""
    out = []
    for name in SPEC_SEEDS:
        for op, section in stored_sections(name).items():
            if op not in OPS:
                continue
            m = re.search(r"#### Examples\s*\n```mlir\n(.*?)```", section, re.S)
            if not m:
                continue
            blocks = [b for b in re.split(r"\n\s*\n", m.group(1)) if '"stablehlo.' in b]
            for k, b in enumerate(blocks):
                out.append((op if len(blocks) == 1 else f"{op}-{k}", op, b))
    return out


def _parse_example(text: str):
    """(values {name: literal text}, op text, ordered value names before/after the op).
    Value comments are read as the seed writes them: `// %x: v`, `// %x = v`
    (reverse) and `// % result: v` (slice)."""
    values, op_lines, before, after = {}, [], [], []
    lines = text.strip().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        m = re.match(r"//\s*%\s*(\w+)\s*[:=]\s*(.*)$", line)
        if m:
            name, lit = "%" + m.group(1), _strip_comment(m.group(2))
            # Continuation lines until the brackets balance.
            while _depth(lit) > 0 and i + 1 < len(lines):
                i += 1
                lit += " " + _strip_comment(lines[i].strip().lstrip("/"))
            values[name] = lit.strip()
            (after if op_lines else before).append(name)
        elif line and not line.startswith("//"):
            op_lines.append(line)
        i += 1
    return values, " ".join(op_lines), before, after


def _strip_comment(s: str) -> str:
    return s.split("//", 1)[0].strip()


def _depth(s: str) -> int:
    return s.count("[") + s.count("(") - s.count("]") - s.count(")")


_HEAD_RE = re.compile(r'^(%\w+(?:\s*,\s*%\w+)*)\s*=\s*"stablehlo\.(\w+)"\(([^)]*)\)')


def _program(values: dict, op_text: str):
    """@main around the example's op: (MLIR, input names, input types, result names, result types).
    Several results (`%r0, %r1 = "stablehlo.sort"(…)`) are all returned.
    Tuple-typed inputs are assembled from tensor arguments (`_tuple_args`)."""
    m = _HEAD_RE.match(op_text)
    assert m, f"unrecognised op: {op_text[:80]}"
    heads, _, operands = m.groups()
    results = [r.strip() for r in heads.split(",")]
    in_types, out_type = _signature(op_text)
    names = [o.strip() for o in operands.split(",") if o.strip()]
    types = [parse_type(t) for t in _split_types(in_types)]
    outs = _split_types(out_type[1:-1]) if out_type.startswith("(") and len(results) > 1 else [out_type]
    rtypes = [parse_type(t[1:-1] if t.startswith("(") and len(results) == 1 else t) for t in outs]
    assert len(rtypes) == len(results), f"{len(results)} results named for {len(rtypes)} types"
    if len(results) > 1:   # `%r0, %r1 = op` is written `%op:2 = op` and used as %op#0, %op#1
        op_text = f"%multi:{len(results)} = " + op_text.split("=", 1)[1].lstrip()
        returned = [f"%multi#{i}" for i in range(len(results))]
    else:
        returned = results
    captured = _captures(values, op_text, names)   # values a region reads from outside it (if, case, while)
    names, types = names + list(captured), types + list(captured.values())
    args, prelude = [], []
    for n, t in zip(names, types):
        _tuple_args(n, t, args, prelude)
    body = "".join(f"  {line}\n" for line in prelude)
    rmlir = ", ".join(t.mlir for t in rtypes)
    mlir = (f"func.func @main({', '.join(f'{n}: {t.mlir}' for n, t in args)}) -> ({rmlir}) {{\n"
            f"{body}  {op_text}\n  func.return {', '.join(returned)} : {rmlir}\n}}\n")
    return mlir, names, types, results, rtypes


_USE_RE = re.compile(r'"stablehlo\.\w+"\(([^()]*)\)(?:(?!"stablehlo\.).)*?:\s*\(([^()]*)\)\s*->', re.S)


def _captures(values: dict, op_text: str, operands: list) -> dict:
    """{name: type} of the printed values (`// %name: …`) that the op's regions use but that are not
    its operands — the branches of if/case return them, while's body adds one — typed where they
    are used (`"stablehlo.x"(%a, %b) … : (A, B) -> …`)."""
    out = {}
    for uses, types in _USE_RE.findall(op_text):
        for n, t in zip([u.strip() for u in uses.split(",")], _split_types(types)):
            if n in values and n not in operands and n not in out:
                out[n] = parse_type(t)
    return out


def _signature(op_text: str) -> tuple[str, str]:
    """(operand types, result type) of the op's trailing `: (…) -> …`: the
    last `->` outside brackets (a region's own `-> ()` is inside `({…})`)."""
    depth, arrow = 0, None
    for i, ch in enumerate(op_text):
        if ch == "-" and op_text.startswith("->", i):
            if depth == 0:
                arrow = i
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and i and op_text[i - 1] == "-"):
            depth -= 1
    assert arrow is not None, f"no signature in {op_text[:80]}"
    head, depth = op_text[:arrow].rstrip(), 0
    for j in range(len(head) - 1, -1, -1):
        depth += head[j] == ")"
        depth -= head[j] == "("
        if depth == 0:
            assert head[:j].rstrip().endswith(":"), f"no `: (…) ->` in {op_text[:80]}"
            return head[j + 1:-1], op_text[arrow + 2:].strip()
    raise AssertionError(f"unbalanced signature in {op_text[:80]}")


def _tuple_args(name: str, t, args: list, prelude: list) -> None:
    """A tensor input is an argument; a tuple input is `stablehlo.tuple` of its
    members' values, themselves arguments or tuples (named name_0, name_1, …)."""
    if isinstance(t, TensorType):
        args.append((name, t))
        return
    members = [f"{name}_{i}" for i in range(len(t.types))]
    for m, mt in zip(members, t.types):
        _tuple_args(m, mt, args, prelude)
    prelude.append(f'{name} = "stablehlo.tuple"({", ".join(members)}) : '
                   f'({", ".join(mt.mlir for mt in t.types)}) -> {t.mlir}')


def _leaf_values(lit: str, t) -> list:
    """[(tensor type, literal)] of a value printed as the seed prints it: a
    tuple `(a, (b))` member by member, depth first."""
    if isinstance(t, TensorType):
        return [(t, lit)]
    inner = lit.strip()
    assert inner.startswith("(") and inner.endswith(")"), f"tuple literal {lit!r}"
    parts = _split_top(inner[1:-1])
    assert len(parts) == len(t.types), f"{len(parts)} members printed for {t.mlir}"
    return [leaf for p, mt in zip(parts, t.types) for leaf in _leaf_values(p, mt)]


def _split_top(s: str, opens: str = "([", closes: str = ")]") -> list:
    """Split at the commas outside brackets (literals: `([…], (3))`)."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in opens
        depth -= ch in closes
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def _split_types(s: str) -> list:
    """Split a type list at the commas outside `<…>`."""
    return _split_top(s, "<", ">")


# --------------------------------------------------------------------------
# Literals
# --------------------------------------------------------------------------

def _atoms(lit: str) -> list:
    """Flat row-major list of element literals; a complex `(re, im)` is a tuple."""
    toks = re.findall(r"\(|\)|\[|\]|,|[^\s,()\[\]]+", lit)
    out, pair = [], None
    for t in toks:
        if t == "(":
            pair = []
        elif t == ")":
            out.append(tuple(pair))
            pair = None
        elif t in "[],":
            continue
        elif pair is not None:
            pair.append(t)
        else:
            out.append(t)
    return out


def _float_array(atoms: list, et) -> np.ndarray:
    """Printed floats → values of `et`: hex are bit patterns, decimals are
    parsed by Python (float(Fraction) is correctly rounded to binary64)."""
    def one(a: str):
        if a.lower().startswith("0x"):
            return from_bits(np.array(int(a, 16), dtype=et.bits_dtype), et).astype(np.float64)
        return float(_decimal(a))
    return np.array([one(a) for a in atoms], dtype=np.float64).astype(et.numpy)


def _decimal(a: str):
    low = a.lower().lstrip("+")
    if low in ("nan", "-nan"):
        return float("nan")
    if low in ("inf", "-inf"):
        return float(low)
    q = Fraction(Decimal(a))
    return -0.0 if q == 0 and low.startswith("-") else q


def _array(lit: str, t: TensorType) -> np.ndarray:
    et = t.element_type
    atoms = _atoms(lit)
    assert len(atoms) == t.num_elements, f"{len(atoms)} values printed for {t.mlir}"
    if et.is_bool:
        a = np.array([x == "true" for x in atoms])
    elif et.is_integer:
        a = np.array([int(x, 0) for x in atoms], dtype=object).astype(et.numpy)
    elif et.is_complex:
        assert all(isinstance(x, tuple) and len(x) == 2 for x in atoms), f"complex literal {lit}"
        re_, im_ = (_float_array([x[k] for x in atoms], et.component) for k in (0, 1))
        a = re_.astype(et.numpy) + 1j * im_.astype(et.numpy)
        a = a.astype(et.numpy)
    else:
        a = _float_array(atoms, et)
    return a.reshape(t.shape)


# --------------------------------------------------------------------------
# Judging
# --------------------------------------------------------------------------

def _approx(op: str, names, types, rtype) -> bool:
    spec = OPS[op]
    if not isinstance(spec.semantics, Elementwise):
        return False
    inst = spec.instance({o.name: t for o, t in zip(spec.operands, types)},
                         results={spec.results[0].name: rtype})
    return spec.semantics.accuracy_for(inst) == "approx"


def _float_ok(atom: str, got: float, got_bits: int, et, approx: bool) -> bool:
    fmt = et.format
    if atom.lower().startswith("0x"):
        want_bits = int(atom, 16)
        return (fmt.is_nan_bits(want_bits) and np.isnan(got)) or got_bits == want_bits
    want = _decimal(atom)
    if isinstance(want, float) and np.isnan(want):
        return bool(np.isnan(got))
    want_arr = np.array([float(want)], dtype=np.float64).astype(et.numpy)
    if int(to_bits(want_arr, et)[0]) == got_bits:
        return True
    if not approx or np.isnan(got) or np.isinf(float(want)) or got == 0:
        return False  # an exact zero result must have the printed sign
    digits = len(atom.lower().split("e")[0].split(".")[1]) if "." in atom else 0
    exp = int(atom.lower().split("e")[1]) if "e" in atom.lower() else 0
    return abs(Fraction(got) - want) <= Fraction(1, 2) * Fraction(10) ** (exp - digits)


def _check(op, lit, got: np.ndarray, rtype: TensorType, approx: bool):
    et = rtype.element_type
    atoms = _atoms(lit)
    assert len(atoms) == rtype.num_elements, f"{len(atoms)} values printed for {rtype.mlir}"
    got = np.asarray(got).reshape(-1)
    bad = []
    for i, (a, g) in enumerate(zip(atoms, got)):
        if et.is_bool:
            ok = (a == "true") == bool(g)
        elif et.is_integer:
            ok = int(a, 0) == int(g)
        elif et.is_complex:
            comp = et.component
            gb = to_bits(np.array([g], dtype=et.numpy), et).reshape(2)
            ok = isinstance(a, tuple) and all(
                _float_ok(a[k], float(v), int(gb[k]), comp, approx) for k, v in enumerate((g.real, g.imag)))
        else:
            ok = _float_ok(a, float(g), int(to_bits(np.array([g], dtype=et.numpy), et)[0]), et, approx)
        if not ok:
            bad.append(f"[{i}] printed {a}, oracle {g!r}")
    assert not bad, f"{op}: " + "; ".join(bad)


EXAMPLES = _examples()

# Issue 11's ops: every one has an Examples block in seed 000 (sort has two).
REDUCTION_OPS = ("dot_general", "convolution", "reduce", "reduce_window", "select_and_scatter", "sort", "map")

# Issue 3's ops: every one has an Examples block in seed 000 (iota has two).
SHAPE_OPS = ("broadcast_in_dim", "concatenate", "constant", "dynamic_slice", "dynamic_update_slice",
             "gather", "get_dimension_size", "iota", "pad", "reshape", "reverse", "scatter", "slice",
             "transpose", "tuple", "get_tuple_element")


def _params():
    for tid, op, text in EXAMPLES:
        finding = FINDINGS.get(tid) or FINDINGS.get(op)
        marks = [pytest.mark.xfail(reason=finding, strict=True)] if finding else []
        yield pytest.param(op, text, id=tid, marks=marks)


@pytest.mark.parametrize("op, text", list(_params()))
def test_example(op, text):
    values, op_text, before, after = _parse_example(text)
    mlir, names, types, results, rtypes = _program(values, op_text)
    inputs = [np.asarray(_array(lit, t)) for n, tn in zip(names, types) for t, lit in _leaf_values(values[n], tn)]
    oracle = load_backend("oracle")   # what shlo_conform.run_program(mlir, inputs, backend="oracle") does
    got = oracle.run(oracle.compile(mlir), inputs)
    leaves = []
    for result, rtype in zip(results, rtypes):
        assert result in after, f"no printed value for {result}"
        leaves += _leaf_values(values[result], rtype)
    assert len(got) == len(leaves), f"{len(got)} outputs for {len(leaves)} printed tensors"
    for g, (t, lit) in zip(got, leaves):
        _check(op, lit, g, t, _approx(op, names, types, t))


def test_examples_were_found():
    """The harness must see the seeds' examples, or it silently tests nothing."""
    ops = {op for _, op, _ in EXAMPLES}
    assert "add" in ops and len(EXAMPLES) >= 10
    if "tan" in OPS:
        assert "tan" in ops, "the RFC's tan example was not found"
    for op in SHAPE_OPS + REDUCTION_OPS:
        if op in OPS:
            assert op in ops, f"the seed's {op} example was not found"
