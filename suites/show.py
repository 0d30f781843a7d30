"""Values as text: the one notation `explain`, `run`, the mismatch lines and the reports print.

Why a module of its own: numpy prints every NaN as `nan` (no sign, no
payload) and, by default, 8 significant digits, so a correct expectation
`[nan, -inf]` looked wrong next to an actual `[-nan, -inf]`, and two f64
values one ULP apart printed the same.  Here:

* **NaN** shows its sign bit and, unless it is the plain quiet NaN, its
  payload: `nan` / `-nan` is the quiet NaN with an empty payload (f32
  0x7fc00000 / 0xffc00000, the NaN most hardware makes);
  `nan(q:0xP)` a quiet NaN whose payload — the trailing significand bits
  below the quiet bit — is P; `nan(s:0xP)` a signaling NaN (quiet bit
  clear, payload P, never 0).  f8E4M3FN has one NaN per sign (S.1111.111):
  `nan`, `-nan`.  Read back: f32 `-nan(q:0x1)` is 0xffc00001, f32
  `nan(s:0x1)` is 0x7f800001, f8E5M2 `nan(q:0x1)` is 0x7f.
* **Arrays** (`array`) print each number as the shortest decimal that
  reads back to the same bits in the element's own type (bf16 and the f8
  types too, which numpy prints with 6 digits), in numpy's style (`1.`,
  `-2.5`, scientific where numpy would use it), so two different values
  never print alike; numpy lays out the nesting and cuts large arrays.
* **One element** on its own (`element`: the expected/actual of a
  mismatch line) prints its value widened to binary64 — exact for every
  float format here — as Python's `repr` (`3.000000645916e-39` for the f32
  nearest 3e-39); integers and booleans as Python prints them; complex as
  `(re+imj)` with each part by these rules.

Floor 2: imports spec/ only.
"""
from __future__ import annotations

import math

import numpy as np

from ..spec.types import ELEMENT_TYPES, ElementType, FloatFormat, from_bits, to_bits

_BY_NUMPY = {np.dtype(t.numpy): t for t in ELEMENT_TYPES.values()}   # v1.20's types too
_NATIVE = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def nan_text(bits: int, fmt: FloatFormat) -> str:
    """The notation of one NaN bit pattern of `fmt` (module docstring)."""
    bits = int(bits)
    sign = "-" if bits & fmt.sign_mask else ""
    if fmt.nan != "ieee":   # FN: one NaN per sign, FNUZ: one NaN; no quiet bit, no payload
        return sign + "nan" if fmt.nan == "fn" else "nan"
    quiet = 1 << (fmt.mantissa_bits - 1)
    m = bits & fmt.mantissa_mask
    payload = m & (quiet - 1)
    if m == quiet:
        return sign + "nan"
    return f"{sign}nan({'q' if m & quiet else 's'}:0x{payload:x})"


def _type_of(a: np.ndarray, et: ElementType | None) -> ElementType | None:
    return et if et is not None else _BY_NUMPY.get(np.asarray(a).dtype)


# ---------------------------------------------------------------------------
# One element
# ---------------------------------------------------------------------------

def _float_element(b: int, fmt: FloatFormat, value) -> str:
    if fmt.is_nan_bits(int(b)):
        return nan_text(b, fmt)
    return repr(float(value))


def element(value, et: ElementType | None = None) -> str:
    """One element (a numpy / ml_dtypes scalar, or a 0-d array) as text."""
    a = np.asarray(value)
    et = _type_of(a, et)
    if et is None or not (et.is_float or et.is_complex):
        v = a.item() if a.ndim == 0 else a.tolist()
        return repr(v)
    bits = to_bits(a.reshape(1), et).reshape(-1)
    if et.is_complex:
        c = et.component
        parts = from_bits(bits, c)
        re, im = (_float_element(bits[k], c.format, parts[k]) for k in (0, 1))
        return f"({re}{'' if im.startswith('-') else '+'}{im}j)"
    return _float_element(bits[0], et.format, a.reshape(-1)[0])


# ---------------------------------------------------------------------------
# Arrays
# ---------------------------------------------------------------------------

def _shortest(x, et: ElementType) -> float:
    """The binary64 nearest the shortest decimal that reads back (through
    binary64) to the bits of `x`, a finite value of the float type `et`."""
    want = to_bits(np.asarray([x]), et)[0]
    v = float(np.asarray(x).astype(np.float64))
    for p in range(1, 18):
        d = float(f"{v:.{p - 1}e}")
        if to_bits(np.asarray([d]).astype(et.numpy), et)[0] == want:
            return d
    return v


def _exp_format(values: list[float]) -> bool:
    """numpy's rule (floatmode "unique"): scientific when the finite nonzero
    magnitudes reach 1e8, go below 1e-4, or span more than 1000×."""
    mags = [abs(v) for v in values if v != 0 and math.isfinite(v)]
    if not mags:
        return False
    lo, hi = min(mags), max(mags)
    return hi >= 1e8 or lo < 1e-4 or hi / lo > 1000.0


def _numbers(bits: np.ndarray, et: ElementType) -> list[str]:
    """Texts of flat bit patterns of one float type, numpy-styled as one array."""
    fmt = et.format
    vals = from_bits(bits, et)
    nan = [fmt.is_nan_bits(int(b)) for b in bits.tolist()]
    native = np.dtype(et.numpy) in _NATIVE
    finite = [None if n else (vals[k] if native else _shortest(vals[k], et)) for k, n in enumerate(nan)]
    sci = _exp_format([float(v) for v in finite if v is not None])
    out = []
    for b, v in zip(bits.tolist(), finite):
        if v is None:
            out.append(nan_text(b, fmt))
        elif not math.isfinite(float(v)):
            out.append("-inf" if float(v) < 0 else "inf")
        elif sci:
            out.append(np.format_float_scientific(v, unique=True, trim="."))
        else:
            out.append(np.format_float_positional(v, unique=True, trim="."))
    return out


def array(a, et: ElementType | None = None, *, threshold: int = 200, edgeitems: int = 4,
          linewidth: int = 100) -> str:
    """An array as text (module docstring): numpy's layout, separator ", ",
    large arrays cut to `edgeitems` per edge; float and complex elements in
    this module's notation, other types as numpy prints them."""
    a = np.asarray(a)
    et = _type_of(a, et)
    opts = {"separator": ", ", "threshold": threshold, "edgeitems": edgeitems, "max_line_width": linewidth}
    if et is None or not (et.is_float or et.is_complex) or a.size == 0:
        try:
            return np.array2string(a, **opts)
        except Exception:   # a dtype numpy cannot lay out
            return repr(a.tolist())
    c = et.component if et.is_complex else et
    rows = to_bits(a, et).reshape(a.size, -1)
    idx = np.arange(a.size).reshape(a.shape)
    shown: list[int] = []   # the flat indices numpy lays out (all of them, or the edges of a cut array)
    np.array2string(idx, formatter={"int": lambda i: shown.append(int(i)) or "."}, **opts)
    shown = sorted(set(shown))
    texts = _numbers(rows[shown].reshape(-1), c)
    if et.is_complex:
        texts = [f"{r}{'' if i.startswith('-') else '+'}{i}j" for r, i in zip(texts[0::2], texts[1::2])]
    width = max((len(t) for t in texts), default=0)
    by_index = {i: t.rjust(width) for i, t in zip(shown, texts)}
    return np.array2string(idx, formatter={"int": lambda i: by_index[int(i)]}, **opts)


def one_line(a, et: ElementType | None = None, *, threshold: int = 20, edgeitems: int = 3) -> str:
    """`array` on one line (runs of whitespace closed up): `run`'s short form."""
    return " ".join(array(a, et, threshold=threshold, edgeitems=edgeitems, linewidth=120).split())
