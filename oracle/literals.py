"""MLIR attribute text, read exactly: dense element literals and op attribute dictionaries.

`dense<…> : tensor<…>` is how a program writes constant's `value` (and the
seed's spelling of 1-D si64 attributes).  MLIR re-prints what it parsed in
its own way, so the oracle must read every form MLIR prints as well as the
one the generators write:

* `dense<"0xHEX">`: the raw little-endian bytes of the elements (4-bit
  types and i1 take one byte each; complex is re, im per element); a single
  element's worth of bytes is a splat;
* `dense<[…]>` nested to the type's shape, or `dense<v>` (a splat), with
  decimals for floats — parsed *exactly* (a Fraction) and correctly rounded
  into the element type by `rounding.round_bits`, never through binary64
  first (that rounds twice) — and hex integers `0x7FC00000` as the bit
  pattern of a float (MLIR prints NaN, inf and non-round-tripping values
  so); `true`/`false` for i1; `(re, im)` for complex.

The oracle reads a program's constants as MLIR re-prints them, so a decimal
in a program means what MLIR made of it — MLIR itself does parse through
binary64 — exactly as for every backend that parses with MLIR; its
re-prints round-trip, so correct rounding reads them back bit for bit.

The writer, `spec.types.dense_literal` (the generators' floor), writes the
hex form: exact for every type, never re-read through decimals; it is
re-exported here so the pair is tested together.

The attribute dictionary of an op is read from its printed generic form
(`op_attributes`): jaxlib's Python bindings cannot hand out a complex
`DenseElementsAttr` (casting one aborts the process), so the oracle never
asks the bindings for attribute objects, only for text.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np

from ..spec.types import ElementType, TensorType, dense_literal, from_bits, parse_type
from .rounding import round_bits

__all__ = ["parse_dense", "parse_elements", "dense_literal", "op_attributes", "close_bracket", "split_top"]


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

def parse_dense(text: str) -> tuple[np.ndarray, TensorType]:
    """`dense<…> : tensor<…>` → (array of the type's numpy dtype, the type)."""
    s = text.strip()
    if not s.startswith("dense<"):
        raise ValueError(f"expected dense<…> : tensor<…>, got {text[:80]!r}")
    end = close_bracket(s, len("dense"))
    rest = s[end + 1:].strip()
    if not rest.startswith(":"):
        raise ValueError(f"dense literal without a type: {text[:80]!r}")
    t = parse_type(rest[1:].strip())
    if not isinstance(t, TensorType):
        raise ValueError(f"dense literal of non-tensor type {t}")
    return parse_elements(s[len("dense<"):end], t), t


def parse_elements(body: str, t: TensorType) -> np.ndarray:
    """The elements between `dense<` and `>` as an array of type `t`."""
    body = body.strip()
    et = t.element_type
    shape = tuple(int(d) for d in t.shape)
    if body.startswith('"'):
        return _from_hex(body, et, shape)
    if not body:
        if t.num_elements != 0:
            raise ValueError(f"no elements for {t.mlir}")
        return np.zeros(shape, dtype=et.numpy)
    tree = _Parser(body).value(top=True)
    trail = (2,) if et.is_complex else ()
    # Built as bit patterns, so NaN payloads and signed zeros survive untouched.
    if not isinstance(tree, list):           # a splat
        one = np.array(_element_bits(tree, et), dtype=et.bits_dtype)
        return from_bits(np.broadcast_to(one, shape + trail), et)
    got, flat = _shape_of(tree), _leaves(tree)
    if got != shape and not (not flat and t.num_elements == 0):
        raise ValueError(f"literal of shape {list(got)} for {t.mlir}")
    bits = np.array([_element_bits(a, et) for a in flat], dtype=et.bits_dtype).reshape(shape + trail)
    return from_bits(bits, et)


def _from_hex(body: str, et: ElementType, shape: tuple) -> np.ndarray:
    h = body.strip('"')
    if not h.lower().startswith("0x"):
        raise ValueError(f"hex elements must start with 0x: {body[:40]!r}")
    data = bytes.fromhex(h[2:])
    per = et.storage_bits // 8               # complex: both components
    n = int(np.prod(shape, dtype=np.int64))
    if len(data) == per and n != 1:
        data = data * n                      # one element's worth of bytes: a splat
    if len(data) != per * n:
        raise ValueError(f"{len(data)} bytes of hex data for {n} elements of {et.name}")
    bits = np.frombuffer(data, dtype=et.bits_dtype.newbyteorder("<")).astype(et.bits_dtype)
    if 1 < et.bits < 8 and (bits >> et.bits).any():
        # MLIR accepts the byte but its 2-, 4- or 6-bit value is then undefined (it re-prints garbage).
        raise ValueError(f"hex byte above 0x{(1 << et.bits) - 1:X} for a {et.bits}-bit element of {et.name}")
    if et.is_bool:
        bits = (bits != 0).astype(et.bits_dtype)  # MLIR reads any nonzero byte as true
    return from_bits(bits.reshape(shape + ((2,) if et.is_complex else ())), et)


class _Parser:
    """value := '[' value (',' value)* ']' | '[' ']' | '(' atom ',' atom ')' | atom."""

    def __init__(self, text: str):
        self.toks = re.findall(r"\[|\]|\(|\)|,|[^\s,()\[\]]+", text)
        self.i = 0

    def _next(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("element literal ends early")
        self.i += 1
        return self.toks[self.i - 1]

    def value(self, top: bool = False):
        tok = self._next()
        if tok == "[":
            items = []
            if self.toks[self.i:self.i + 1] == ["]"]:
                self.i += 1
            else:
                while True:
                    items.append(self.value())
                    sep = self._next()
                    if sep == "]":
                        break
                    if sep != ",":
                        raise ValueError(f"expected , or ] in element literal, got {sep!r}")
            out = items
        elif tok == "(":
            re_, comma, im, close = self._next(), self._next(), self._next(), self._next()
            if comma != "," or close != ")":
                raise ValueError("a complex element is written (re, im)")
            out = (re_, im)
        elif tok in "]),":
            raise ValueError(f"unexpected {tok!r} in element literal")
        else:
            out = tok
        if top and self.i != len(self.toks):
            raise ValueError(f"trailing text in element literal: {' '.join(self.toks[self.i:])[:40]!r}")
        return out


def _shape_of(tree) -> tuple:
    if not isinstance(tree, list):
        return ()
    if not tree:
        return (0,)
    inner = {_shape_of(x) for x in tree}
    if len(inner) != 1:
        raise ValueError("ragged element literal")
    return (len(tree),) + inner.pop()


def _leaves(tree) -> list:
    if not isinstance(tree, list):
        return [tree]
    return [a for x in tree for a in _leaves(x)]


def _element_bits(atom, et: ElementType):
    """One element literal → its bit pattern (an (re, im) pair for complex)."""
    if et.is_complex:
        if not isinstance(atom, tuple):
            raise ValueError(f"complex element written {atom!r}, not (re, im)")
        return tuple(_float_bits(a, et.component) for a in atom)
    if isinstance(atom, tuple):
        raise ValueError(f"(re, im) pair for {et.name}")
    if et.is_bool:
        if atom in ("true", "false"):
            return int(atom == "true")
        v = _int(atom)
        if v not in (0, 1):
            raise ValueError(f"{atom} is not an i1")
        return v
    if et.is_integer:
        v = _int(atom)
        # Spec si types are MLIR's signless iN: MLIR accepts -2^(n-1) .. 2^n - 1 (the bits).
        if not et.min_value <= v <= (1 << et.bits) - 1:
            raise ValueError(f"{atom} is out of range for {et.name}")
        return et.int_to_bits(v)
    return _float_bits(atom, et)


def _int(atom: str) -> int:
    try:
        return int(atom, 0) if atom.lstrip("+-")[:2].lower() == "0x" else int(atom, 10)
    except ValueError:
        raise ValueError(f"{atom!r} is not an integer literal") from None


def _float_bits(atom: str, et: ElementType) -> int:
    """A float element: hex = bit pattern; decimal = exact value, correctly rounded."""
    fmt = et.format
    if atom.lower().startswith("0x"):
        b = int(atom, 16)
        if b >= 1 << fmt.bits:
            raise ValueError(f"{atom} has more than {fmt.bits} bits for {et.name}")
        return b
    try:
        d = Decimal(atom)
    except InvalidOperation:
        raise ValueError(f"{atom!r} is not a float literal") from None
    if not d.is_finite():
        raise ValueError(f"{atom!r}: MLIR writes non-finite floats as hex bit patterns")
    q = Fraction(d)
    return round_bits(q if q else (-0.0 if atom.startswith("-") else 0.0), fmt)


# --------------------------------------------------------------------------
# Attribute dictionaries of printed ops
# --------------------------------------------------------------------------

_OPEN, _CLOSE = "([{<", ")]}>"


def close_bracket(s: str, i: int) -> int:
    """Index of the bracket closing the one at s[i] (strings and `->` skipped)."""
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == '"':
            j = _string_end(s, j)
        elif c == "-" and s.startswith("->", j):
            j += 1
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise ValueError(f"unbalanced brackets in {s[i:i + 60]!r}")


def _string_end(s: str, j: int) -> int:
    k = j + 1
    while k < len(s) and s[k] != '"':
        k += 2 if s[k] == "\\" else 1
    if k >= len(s):
        raise ValueError(f"unterminated string in {s[j:j + 40]!r}")
    return k


def split_top(s: str) -> list[str]:
    parts, depth, cur, j = [], 0, [], 0
    while j < len(s):
        c = s[j]
        if c == '"':
            k = _string_end(s, j)
            cur.append(s[j:k + 1])
            j = k + 1
            continue
        if c == "-" and s.startswith("->", j):
            cur.append("->")
            j += 2
            continue
        depth += c in _OPEN
        depth -= c in _CLOSE
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        j += 1
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def op_attributes(asm: str, name: str, discardable: set | None = None) -> dict[str, str]:
    """{attribute name: attribute text} of one op printed in generic form
    (`%0 = "stablehlo.x"(%a) ({...}) {a = 1 : i64, …} : (…) -> …`; regions
    may be elided).  `discardable`, when given, receives the names written
    in the `{…}` dictionary rather than the `<{…}>` properties."""
    head = f'"{name}"'
    i = asm.index(head) + len(head)
    i = close_bracket(asm, i) + 1                  # the operand list
    rest = asm[i:].lstrip()
    if rest.startswith("("):                # regions
        rest = rest[close_bracket(rest, 0) + 1:].lstrip()
    out = {}
    while rest.startswith(("{", "<{")):     # `<{…}>` properties (registered ops), then `{…}`
        end = close_bracket(rest, 0)
        inner = rest[2:end - 1] if rest.startswith("<{") else rest[1:end]
        for item in split_top(inner):
            key, eq, value = item.partition("=")
            out[key.strip().strip('"')] = value.strip() if eq else "unit"
            if discardable is not None and not rest.startswith("<{"):
                discardable.add(key.strip().strip('"'))
        rest = rest[end + 1:].lstrip()
    return out
