"""oracle/literals.py: dense element literals read exactly, and op attribute text.

Truth: hand-computed bit patterns, and MLIR itself — a literal we write is
parsed and re-printed by jaxlib's MLIR (decimals, hex for NaN/inf, splats,
its i4 / i1 / complex spellings), and reading that re-print must give back
every bit we wrote.  The 8- and 16-bit types go through exhaustively.
"""
from decimal import Decimal, getcontext

import numpy as np
import pytest

from shlo_conform.oracle.literals import dense_literal, op_attributes, parse_dense
from shlo_conform.oracle.program import _context
from shlo_conform.spec.types import ELEMENT_TYPES, TensorType, element_type, parse_type, to_bits


def bits_of(text: str) -> list:
    a, t = parse_dense(text)
    return to_bits(a, t.element_type).reshape(-1).tolist()


# --- hand values --------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    # MLIR's re-print of dense<"0x0000803F0000C07F"> : tensor<2xf32>
    ("dense<[1.000000e+00, 0x7FC00000]> : tensor<2xf32>", [0x3F800000, 0x7FC00000]),
    ('dense<"0x0000803F0100C07F"> : tensor<2xf32>', [0x3F800000, 0x7FC00001]),   # NaN payload kept
    ("dense<[-0.000000e+00, 1.401300e-45]> : tensor<2xf32>", [0x80000000, 0x00000001]),
    ("dense<5.510130e-39> : tensor<3xbf16>", [0x003C] * 3),                       # subnormal bf16 splat
    ("dense<[-1, 7]> : tensor<2xi4>", [0xF, 0x7]),
    ("dense<[-8, 15]> : tensor<2xi4>", [0x8, 0xF]),                                # signless: 15 is -1
    ("dense<[15, 0]> : tensor<2xui4>", [0xF, 0x0]),
    ("dense<[true, false]> : tensor<2xi1>", [1, 0]),
    ("dense<255> : tensor<i8>", [0xFF]),
    ("dense<[0x7F, -128]> : tensor<2xi8>", [0x7F, 0x80]),
    ("dense<18446744073709551615> : tensor<ui64>", [2**64 - 1]),
    ("dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>", [1, 2, 3, 4]),
    ("dense<(1.000000e+00,0x7FC00000)> : tensor<complex<f32>>", [0x3F800000, 0x7FC00000]),
    ("dense<[(1.5, -2.0), (0.0, -0.0)]> : tensor<2xcomplex<f64>>",
     [0x3FF8000000000000, 0xC000000000000000, 0, 0x8000000000000000]),
    ("dense<[1.953130e-03, 0xFF]> : tensor<2xf8E4M3FN>", [0x01, 0xFF]),          # 2^-9, NaN
    ("dense<4.940660e-324> : tensor<f64>", [1]),
    ('dense<"0x0201FF00"> : tensor<4xi1>', [1, 1, 1, 0]),                         # MLIR: nonzero byte = true
])
def test_hand_values(text, want):
    assert bits_of(text) == want


def test_splats_and_empty_tensors():
    assert bits_of('dense<"0x0000803F"> : tensor<3xf32>') == [0x3F800000] * 3   # one element's bytes
    assert bits_of('dense<"0x0F"> : tensor<2x2xi4>') == [0xF] * 4
    assert bits_of('dense<"0x0000C07F0000803F"> : tensor<2xcomplex<f32>>') == [0x7FC00000, 0x3F800000] * 2
    assert bits_of("dense<-2.5> : tensor<2x2xf16>") == [0xC100] * 4
    for text in ("dense<> : tensor<0x3xf32>", 'dense<"0x"> : tensor<0xf32>', "dense<1.5> : tensor<2x0xf32>",
                 "dense<[]> : tensor<0xi8>", "dense<[[]]> : tensor<1x0xi8>"):
        a, t = parse_dense(text)
        assert a.shape == tuple(t.shape) and a.size == 0 and a.dtype == t.element_type.numpy


def test_decimals_round_once_into_the_type():
    """1 + 2^-24 + 2^-80 lies just above the f32 midpoint between 1 and
    1 + 2^-23: correctly rounded it is 0x3F800001.  Through binary64 first it
    becomes the midpoint itself, then 1.0 by ties-to-even — what MLIR's own
    parser does, so the oracle reads constants as MLIR re-prints them (see
    test_mlir_reads_decimals_through_binary64)."""
    getcontext().prec = 100
    f32 = format(Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -80, "f")
    bf16 = format(Decimal(1) + Decimal(2) ** -8 + Decimal(2) ** -80, "f")
    assert bits_of(f"dense<{f32}> : tensor<f32>") == [0x3F800001]
    assert bits_of(f"dense<{bf16}> : tensor<bf16>") == [0x3F81]
    # Exactly on the midpoint: ties to even, both ways.
    assert bits_of("dense<1.000000059604644775390625> : tensor<f32>") == [0x3F800000]
    assert bits_of("dense<1.000000178813934326171875> : tensor<f32>") == [0x3F800002]


def test_mlir_reads_decimals_through_binary64():
    """The pinned MLIR double-rounds the literal above (it parses a binary64
    and converts): its re-print is 1.0.  The oracle reads the re-print, so
    it agrees with every backend that parses the program with MLIR."""
    getcontext().prec = 100
    d = format(Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -80, "f")
    assert _through_mlir([f"dense<{d}> : tensor<f32>"]) == ["dense<1.000000e+00> : tensor<f32>"]


@pytest.mark.parametrize("text", [
    "dense<[1.0, 2.0]> : tensor<3xf32>",          # too few elements
    "dense<[[1.0], [2.0, 3.0]]> : tensor<2x2xf32>",  # ragged
    "dense<[[1.0], [2.0]]> : tensor<2xf32>",      # shape [2, 1] for [2]
    "dense<16> : tensor<i4>",
    "dense<-9> : tensor<i4>",
    "dense<-1> : tensor<ui8>",
    "dense<2> : tensor<i1>",
    'dense<"0x0001"> : tensor<3xi8>',             # neither one element nor all
    'dense<"0x1F"> : tensor<i4>',                 # a 4-bit element in a byte above 0xF
    "dense<inf> : tensor<f32>",                   # MLIR writes non-finite floats as hex
    "dense<0x1FF> : tensor<f8E5M2>",              # more bits than the format
    "dense<1.0> : tensor<complex<f32>>",          # complex needs (re, im)
    "dense<(1.0, 2.0)> : tensor<f32>",
    "dense<[1.0 2.0]> : tensor<2xf32>",
    "dense<[1.0, 2.0]> : tuple<tensor<2xf32>>",
])
def test_rejects_what_is_not_a_literal_of_the_type(text):
    with pytest.raises(ValueError):
        parse_dense(text)


# --- round trip through MLIR --------------------------------------------------

def _through_mlir(literals: list) -> list:
    """Each literal as MLIR re-prints it: parsed as a constant's `value`, printed back."""
    from jaxlib.mlir import ir
    body = "".join(f'  %{i} = "stablehlo.constant"() {{value = {lit}}} : () -> {lit.rsplit(" : ", 1)[1]}\n'
                   for i, lit in enumerate(literals))
    with _context():
        module = ir.Module.parse(f"func.func @main() {{\n{body}  func.return\n}}\n")
        ops = list(module.body.operations[0].regions[0].blocks[0].operations)[:-1]
        return [op_attributes(op.operation.get_asm(print_generic_op_form=True), "stablehlo.constant")["value"]
                for op in ops]


def _patterns(et) -> np.ndarray:
    """Bit patterns to try: every one for types of at most 16 bits; for wider
    ones the specials (±0, subnormals, min normal, ±1, max finite, ±inf, NaNs
    with payloads) and random patterns."""
    if et.is_complex:
        comp = _patterns(et.component)
        return np.stack([comp, np.roll(comp, 1)], axis=-1)
    n = 2 if et.is_bool else 1 << et.bits
    if et.bits <= 16:
        return np.arange(n, dtype=np.uint64).astype(et.bits_dtype)
    if et.is_float:
        f = et.format
        m, e, s = f.mantissa_mask, f.exponent_mask, f.sign_mask
        special = [0, s, 1, s | 1, m, m + 1, s | (m + 1), e - 1, s | (e - 1), e, s | e, e | 1, s | e | m,
                   e | (1 << (f.mantissa_bits - 1)), e | (1 << (f.mantissa_bits - 1)) | 5]
    else:
        special = [0, 1, n - 1, n >> 1, (n >> 1) - 1, (n >> 1) + 1]
    rng = np.random.default_rng(et.bits)
    rand = rng.integers(0, n, 200, dtype=np.uint64) if et.bits < 64 else rng.integers(0, 2**63, 200, dtype=np.uint64) * 2 + 1
    return np.concatenate([np.array(special, dtype=np.uint64), rand]).astype(et.bits_dtype)


CHUNK = 64  # MLIR prints up to this many elements as decimals (larger ones may come back in hex)


@pytest.mark.parametrize("name", list(ELEMENT_TYPES))
def test_round_trip_through_mlir(name):
    """dense_literal → parse_dense is the identity on bits; so is dense_literal
    → MLIR parse and re-print (decimals, hex NaNs, i4 negatives …) → parse_dense."""
    from shlo_conform.spec.types import from_bits
    et = element_type(name)
    pats = _patterns(et)
    chunks = [pats[i:i + CHUNK] for i in range(0, len(pats), CHUNK)]
    literals = []
    for c in chunks:
        t = TensorType((len(c),), et)
        lit = dense_literal(from_bits(c, et), t)
        assert to_bits(parse_dense(lit)[0], et).tolist() == c.tolist()
        literals.append(lit)
    printed = _through_mlir(literals)
    assert any('"0x' not in p for p in printed), "MLIR printed every chunk in hex: the decimal path went untested"
    for c, p in zip(chunks, printed):
        got = to_bits(parse_dense(p)[0], et)
        bad = [(hex(int(w)), hex(int(g))) for w, g in zip(c.reshape(-1), got.reshape(-1)) if w != g]
        assert not bad, f"{p[:120]}…: {bad[:5]}"


def test_splat_and_shape_through_mlir():
    """A 2x3 all-equal tensor comes back from MLIR as a splat `dense<v>`; a
    rank-0 one as a bare value."""
    et = element_type("bf16")
    lits = [dense_literal(np.full((2, 3), 1.5, et.numpy), TensorType((2, 3), et)),
            dense_literal(np.array(-3, np.int8), parse_type("tensor<i8>"))]
    printed = _through_mlir(lits)
    assert printed == ["dense<1.500000e+00> : tensor<2x3xbf16>", "dense<-3> : tensor<i8>"]
    assert parse_dense(printed[0])[0].tolist() == [[1.5] * 3] * 2


# --- attribute dictionaries ---------------------------------------------------

def test_op_attributes_splits_at_the_top_level_only():
    asm = ('%4 = "stablehlo.scatter"(%arg0, %arg1, %arg2) ({...}) {indices_are_sorted = false, '
           'scatter_dimension_numbers = #stablehlo.scatter<\n    update_window_dims = [2,3],\n'
           '    index_vector_dim = 2>, s = "a, } >", f = (i32) -> i32, unit_attr, '
           '"quoted.name" = dense<[1, 2]> : tensor<2xi64>} : (tensor<3xi32>) -> tensor<3xi32>')
    assert op_attributes(asm, "stablehlo.scatter") == {
        "indices_are_sorted": "false",
        "scatter_dimension_numbers": "#stablehlo.scatter<\n    update_window_dims = [2,3],\n    index_vector_dim = 2>",
        "s": '"a, } >"',
        "f": "(i32) -> i32",
        "unit_attr": "unit",
        "quoted.name": "dense<[1, 2]> : tensor<2xi64>",
    }
    assert op_attributes('%0 = "stablehlo.tuple"(%a, %b) : (tensor<i32>, tensor<i32>) -> '
                         'tuple<tensor<i32>, tensor<i32>>', "stablehlo.tuple") == {}
