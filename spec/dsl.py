"""The language op modules are written in: op declarations and dual-mode constraint helpers.

A constraint is written once and read two ways.  The `Instance` it receives has
concrete *structure* (ranks, variadic counts, element types, enum values) and
possibly symbolic *numbers* (dimension sizes, integer attribute entries: a
Python int or a z3 integer expression).  Every helper here returns a Python
bool when all its arguments are concrete and a z3 expression otherwise, so
`concatenate_c4` checks a program, feeds the solver that generates programs,
and takes part in proofs.  Never branch in Python on a value that may be
symbolic (use `If`); never use randomness in a rule.

Semantics are declared, not executed, here: an op's `Elementwise.fn` returns
the *exact* result of one element in the vocabulary below (ints, bools,
Fractions, floats standing for their exact value, `Approx` for a real function
evaluated by the oracle at rising precision, `ImplDefined` for the spec's
implementation-defined alternatives).  `oracle/` executes that vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, ClassVar, Iterable, Sequence

import z3

from .exercise import Exercise
from .grid import SINGLE as SINGLE_GRID
from .types import (ALL_TYPES, BOOLEAN_TYPES, COMPLEX_TYPES, FLOAT_TYPES, INTEGER_TYPES,
                    SIGNED_TYPES, UNSIGNED_TYPES, ElementType, TensorType)

# --------------------------------------------------------------------------
# Dual-mode logic
# --------------------------------------------------------------------------


def is_symbolic(x: Any) -> bool:
    return isinstance(x, z3.ExprRef)


def _flat(args: Iterable) -> list:
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) or (hasattr(a, "__iter__") and not isinstance(a, (str, z3.ExprRef))):
            out.extend(_flat(a))
        else:
            out.append(a)
    return out


def _z3b(x):
    return x if is_symbolic(x) else z3.BoolVal(bool(x))


def And(*args):
    xs = _flat(args)
    if any(is_symbolic(x) for x in xs):
        # Concrete False short-circuits so a solver never sees a dead branch.
        if any(not is_symbolic(x) and not x for x in xs):
            return False
        return z3.And([x for x in xs if is_symbolic(x)])
    return all(bool(x) for x in xs)


def Or(*args):
    xs = _flat(args)
    if any(is_symbolic(x) for x in xs):
        if any(not is_symbolic(x) and x for x in xs):
            return True
        return z3.Or([x for x in xs if is_symbolic(x)])
    return any(bool(x) for x in xs)


def Not(x):
    return z3.Not(x) if is_symbolic(x) else not x


def Implies(a, b):
    if is_symbolic(a) or is_symbolic(b):
        if not is_symbolic(a):
            return b if a else True
        return z3.Implies(a, _z3b(b))
    return (not a) or bool(b)


def If(c, a, b):
    if is_symbolic(c):
        return z3.If(c, a, b)
    return a if c else b


def Eq(a, b):
    return a == b


def Distinct(*args):
    xs = _flat(args)
    if any(is_symbolic(x) for x in xs):
        return z3.Distinct(*[x if is_symbolic(x) else z3.IntVal(x) for x in xs]) if len(xs) > 1 else True
    return len(set(xs)) == len(xs)


def all_of(xs: Iterable) -> Any:
    return And(*list(xs))


def any_of(xs: Iterable) -> Any:
    return Or(*list(xs))


def is_unique(xs: Sequence) -> Any:
    """The spec's `is_unique(xs)`: no two entries equal."""
    return Distinct(*xs)


def in_range(x, lo, hi) -> Any:
    """lo <= x < hi (half-open, as the spec writes [lo, hi))."""
    return And(lo <= x, x < hi)


def is_sorted(xs: Sequence) -> Any:
    """Ascending (non-strict) order of the entries."""
    return all_of(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))


def is_permutation(xs: Sequence, n) -> Any:
    """`xs` is a permutation of [0, 1, ..., n-1] (`n` concrete: a rank)."""
    if len(xs) != n:
        return False
    return And(all_of(in_range(x, 0, n) for x in xs), is_unique(xs))


def size(xs) -> int:
    """The spec's `size(x)`: entries of a 1-D attribute, or members of a variadic input."""
    return len(xs)


def at(xs: Sequence, i, default=0):
    """`xs[i]` where the index may be symbolic: an `If` chain over the
    positions (concrete `i` indexes directly).  Out of range: `default`
    (callers state the range as a constraint of its own)."""
    if not is_symbolic(i):
        return xs[i] if 0 <= i < len(xs) else default
    out = default
    for k in reversed(range(len(xs))):
        out = If(i == k, xs[k], out)
    return out


def contains(xs: Sequence, x) -> Any:
    """`x in xs` where entries may be symbolic."""
    return any_of(y == x for y in xs)


# --------------------------------------------------------------------------
# Type helpers the spec's constraints are written with
# --------------------------------------------------------------------------


def shape(t: TensorType) -> tuple:
    return tuple(t.shape)


def rank(t: TensorType) -> int:
    return len(t.shape)


def dim(t: TensorType, i: int):
    return t.shape[i]


def element_type(t: TensorType) -> ElementType:
    return t.element_type


def same_shape(*ts: TensorType):
    """All tensors have the same shape (ranks are structure: compared concretely)."""
    first = ts[0]
    if any(rank(t) != rank(first) for t in ts):
        return False
    return all_of(d == e for t in ts[1:] for d, e in zip(shape(first), shape(t)))


def same_element_type(*ts: TensorType) -> bool:
    return all(t.element_type == ts[0].element_type for t in ts)


def same_type(*ts: TensorType):
    return And(same_element_type(*ts), same_shape(*ts))


def same_types(xs: Sequence, ys: Sequence):
    """Two lists of value types are equal, member by member: tensors by
    `same_type` (dims may be symbolic), tokens and tuples as they are — the
    "tensors or tokens" of control flow's operands and regions."""
    if len(xs) != len(ys):
        return False
    return all_of(same_type(x, y) if isinstance(x, TensorType) and isinstance(y, TensorType) else x == y
                  for x, y in zip(xs, ys))


def shape_is(t: TensorType, dims: Sequence):
    if rank(t) != len(dims):
        return False
    return all_of(d == e for d, e in zip(shape(t), dims))


# --------------------------------------------------------------------------
# Type groups, as the Inputs/Outputs tables name them
# --------------------------------------------------------------------------

BOOLEAN = BOOLEAN_TYPES
SIGNED = SIGNED_TYPES
UNSIGNED = UNSIGNED_TYPES
INTEGER = INTEGER_TYPES
FLOAT = FLOAT_TYPES
COMPLEX = COMPLEX_TYPES
ANY = ALL_TYPES


# --------------------------------------------------------------------------
# Attributes: their value kinds and MLIR spelling
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class EnumAttr:
    """An enum attribute, written `#stablehlo<mlir_name VALUE>`."""

    mlir_name: str
    values: tuple[str, ...]

    def to_mlir(self, v: str) -> str:
        return f"#stablehlo<{self.mlir_name} {v}>"

    def from_mlir(self, text: str) -> str:
        inner = text.strip()
        prefix = f"#stablehlo<{self.mlir_name} "
        if not (inner.startswith(prefix) and inner.endswith(">")):
            raise ValueError(f"expected {prefix}…>, got {text!r}")
        v = inner[len(prefix):-1].strip()
        if v not in self.values:
            raise ValueError(f"{v!r} is not one of {self.values}")
        return v


@dataclass(frozen=True)
class IntAttr:
    """An integer attribute, written `N : i32` (or i64); `N` inside a grouped attribute."""

    width: int = 64

    def to_mlir(self, v) -> str:
        return f"{v} : i{self.width}"

    def to_group(self, v) -> str:
        return str(v)

    def from_mlir(self, text: str) -> int:
        return int(text.split(":")[0].strip())


@dataclass(frozen=True)
class I64ArrayAttr:
    """A "1-dimensional tensor constant of type `si64`": written `array<i64: a, b>`
    (the pinned StableHLO's spelling); the seed's own examples write
    `dense<[a, b]> : tensor<2xi64>`, which is read too.  Inside a grouped
    attribute (`#stablehlo.gather<…>`) it is written `[a, b]`."""

    def to_mlir(self, v) -> str:
        return "array<i64" + (": " + ", ".join(str(x) for x in v) if len(v) else "") + ">"

    def to_group(self, v) -> str:
        return "[" + ", ".join(str(x) for x in v) + "]"

    def from_mlir(self, text: str) -> tuple:
        t = text.strip()
        if t.startswith("dense<"):
            vals, shape = _dense_ints(t)
            if len(shape) != 1:
                raise ValueError(f"{t} is not a 1-dimensional tensor")
            return tuple(vals)
        if t.startswith("["):
            inner = t.strip("[]")
        else:
            if not t.startswith("array<i64"):
                raise ValueError(f"expected array<i64: …>, got {text!r}")
            inner = t[len("array<i64"):-1].lstrip(":").strip()
        return tuple(int(x) for x in inner.split(",") if x.strip()) if inner.strip() else ()


@dataclass(frozen=True)
class Group:
    """Several spec inputs written as one MLIR attribute, e.g. gather's
    `dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], …>`.
    `fields` are the spec names in the order they are written; a field with
    an empty list value is left out (the pinned parser's printing)."""

    mlir_name: str          # the attribute's name in the program: "dimension_numbers"
    dialect_attr: str       # "stablehlo.gather"
    fields: tuple[str, ...]

    def to_mlir(self, values: dict, kinds: dict) -> str:
        parts = [f"{f} = {kinds[f].to_group(values[f])}" for f in self.fields
                 if values.get(f) is not None and not (isinstance(values[f], (list, tuple)) and not values[f])]
        return f"#{self.dialect_attr}<{', '.join(parts)}>"

    def from_mlir(self, text: str, kinds: dict) -> dict:
        t = " ".join(text.split())
        head = f"#{self.dialect_attr}<"
        if not (t.startswith(head) and t.endswith(">")):
            raise ValueError(f"expected {head}…>, got {text!r}")
        body, out, i = t[len(head):-1], {}, 0
        while i < len(body):
            eq = body.index("=", i)
            name = body[i:eq].strip().strip(",").strip()
            j = eq + 1
            while j < len(body) and body[j] == " ":
                j += 1
            end = body.index("]", j) + 1 if body[j] == "[" else (body.find(",", j) if "," in body[j:] else len(body))
            if name not in kinds:
                raise ValueError(f"unknown field {name!r} in {head}…>")
            out[name] = kinds[name].from_mlir(body[j:end].strip())
            i = end + 1
        return out


@dataclass(frozen=True)
class BoolAttr:
    def to_mlir(self, v) -> str:
        return "true" if v else "false"

    def from_mlir(self, text: str) -> bool:
        return text.strip() == "true"


def _dense_ints(text: str) -> tuple[list, tuple]:
    """(flat ints, shape) of `dense<…> : tensor<AxBxi64>` (nested lists or a
    splat), the seed's spelling of integer tensor constants."""
    t = text.strip()
    body = t[len("dense<"):t.rindex(">", 0, t.rindex(":"))].strip()
    dims = t[t.rindex("tensor<") + len("tensor<"):].rstrip(">").split("x")[:-1]
    shape = tuple(int(d) for d in dims)
    count = 1
    for d in shape:
        count *= d
    flat = [x.strip() for x in body.replace("[", " ").replace("]", " ").split(",") if x.strip()]
    vals = [v.lower() in ("true", "1") if v.lower() in ("true", "false") else int(v) for v in flat]
    if len(vals) == 1 and count != 1:
        vals = vals * count
    if len(vals) != count:
        raise ValueError(f"{len(vals)} values for shape {shape}")
    return vals, shape


@dataclass(frozen=True)
class I64MatrixAttr(I64ArrayAttr):
    """A "2-dimensional tensor constant of type `si64`" with rows of two
    (convolution's and reduce_window's `padding`): a tuple of (low, high)
    pairs, written `dense<[[l0, h0], [l1, h1]]> : tensor<2x2xi64>`; its
    length is the number of rows."""

    def to_mlir(self, v) -> str:
        rows = ", ".join(f"[{a}, {b}]" for a, b in v)
        return f"dense<[{rows}]> : tensor<{len(v)}x2xi64>" if v else "dense<> : tensor<0x2xi64>"

    def from_mlir(self, text: str) -> tuple:
        t = text.strip()
        if not t.startswith("dense<"):
            raise ValueError(f"expected dense<…> : tensor<Nx2xi64>, got {text!r}")
        vals, shape = _dense_ints(t)
        if len(shape) != 2 or shape[1] != 2:
            raise ValueError(f"{t} is not an Nx2 tensor")
        return tuple((vals[2 * i], vals[2 * i + 1]) for i in range(shape[0]))


@dataclass(frozen=True)
class BoolArrayAttr(I64ArrayAttr):
    """A "1-dimensional tensor constant of type `i1`" (convolution's
    `window_reversal`), written `array<i1: true, false>` (the pinned
    StableHLO's spelling) or as the seed's `dense<false> : tensor<2xi1>`.
    Generators and proofs solve its entries as integers in [0, 1]."""

    entry_range = (0, 1)

    def to_mlir(self, v) -> str:
        return "array<i1" + (": " + ", ".join("true" if x else "false" for x in v) if len(v) else "") + ">"

    def from_mlir(self, text: str) -> tuple:
        t = text.strip()
        if t.startswith("dense<"):
            return tuple(bool(x) for x in _dense_ints(t)[0])
        if not t.startswith("array<i1"):
            raise ValueError(f"expected array<i1: …>, got {text!r}")
        inner = t[len("array<i1"):-1].lstrip(":").strip()
        return tuple(x.strip() == "true" for x in inner.split(",") if x.strip())


@dataclass(frozen=True)
class EnumListAttr:
    """A "variadic number of enums" written as an array of enum attributes
    (`precision_config = [#stablehlo<precision DEFAULT>, …]`): a tuple of
    values, structure like an enum (its `choices` are tuples)."""

    mlir_name: str
    values: tuple[str, ...]

    def to_mlir(self, v) -> str:
        return "[" + ", ".join(f"#stablehlo<{self.mlir_name} {x}>" for x in v) + "]"

    def from_mlir(self, text: str) -> tuple:
        t = text.strip()
        if not (t.startswith("[") and t.endswith("]")):
            raise ValueError(f"expected [#stablehlo<{self.mlir_name} …>, …], got {text!r}")
        one = EnumAttr(self.mlir_name, self.values)
        items = [x.strip() for x in t[1:-1].split(",") if x.strip()]
        return tuple(one.from_mlir(x) for x in items)


@dataclass(frozen=True)
class ConvDimensionsGroup(Group):
    """convolution's `dimension_numbers`: nine spec inputs written as one
    `#stablehlo.conv<…>`.  Written in the raw form
    (`#stablehlo.conv<raw input_batch_dimension = 0, …>`), which spells any
    values, invalid ones too; read in that form and in the compact one the
    printer uses (`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`:
    per tensor, each axis's role — b/f, i/o, or the index of the spatial
    dimension it is)."""

    def to_mlir(self, values: dict, kinds: dict) -> str:
        parts = [f"{f} = {kinds[f].to_group(values[f])}" for f in self.fields]
        return f"#{self.dialect_attr}<raw {', '.join(parts)}>"

    def from_mlir(self, text: str, kinds: dict) -> dict:
        t = " ".join(text.split())
        head = f"#{self.dialect_attr}<"
        if not (t.startswith(head) and t.endswith(">")):
            raise ValueError(f"expected {head}…>, got {text!r}")
        body = t[len(head):-1].strip()
        if body.startswith("raw "):
            raw = Group(self.mlir_name, self.dialect_attr, self.fields)
            return raw.from_mlir(f"{head}{body[4:]}>", kinds)
        lhs, _, out = body.partition("->")
        inp, _, ker = lhs.partition("x")
        roles = [[r.strip() for r in part.strip().strip("[]").split(",") if r.strip()] for part in (inp, ker, out)]
        names = (("input", "b", "f"), ("kernel", "i", "o"), ("output", "b", "f"))
        values = {}
        for (prefix, first, second), rs in zip(names, roles):
            lead = {"input": ("batch", "feature"), "kernel": ("input_feature", "output_feature"),
                    "output": ("batch", "feature")}[prefix]
            spatial = {}
            for pos, r in enumerate(rs):
                if r == first:
                    values[f"{prefix}_{lead[0]}_dimension"] = pos
                elif r == second:
                    values[f"{prefix}_{lead[1]}_dimension"] = pos
                elif r.isdigit():
                    spatial[int(r)] = pos
                else:
                    raise ValueError(f"unknown role {r!r} in {text!r}")
            values[f"{prefix}_spatial_dimensions"] = tuple(spatial[k] for k in sorted(spatial))
        return values


# custom_call's attributes (seed "custom_call" and the RFC's typed FFI) ----

def _mlir_string(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _read_mlir_string(text: str) -> str:
    """An MLIR string literal's value (escapes `\\\\`, `\\"`, `\\n`, `\\t`, `\\XX` hex)."""
    t = text.strip()
    if len(t) < 2 or t[0] != '"' or t[-1] != '"':
        raise ValueError(f"expected a string \"…\", got {text[:60]!r}")
    out, i, body = [], 0, t[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n in "\\\"":
                out.append(n)
                i += 2
            elif n in "nt":
                out.append("\n" if n == "n" else "\t")
                i += 2
            else:
                out.append(chr(int(body[i + 1:i + 3], 16)))
                i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class StringAttr(EnumAttr):
    """A "constant of type `string`" (custom_call's `call_target_name`),
    written `"text"`.  `values`: the strings a generator may choose — they
    are structure, like an enum's values — while a program may hold any."""

    mlir_name: str = "string"
    values: tuple = ()

    def to_mlir(self, v: str) -> str:
        return _mlir_string(v)

    def from_mlir(self, text: str) -> str:
        return _read_mlir_string(text)


API_VERSIONS = ("API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI")


@dataclass(frozen=True)
class ApiVersionAttr(EnumAttr):
    """custom_call's `api_version`: the seed's "constant of type `si32`",
    written `4 : i32` (what the pinned StableHLO prints), and read also in
    the RFC's enum spelling `#stablehlo<custom_call_api_version
    API_VERSION_TYPED_FFI>` (the number is its position in API_VERSIONS).
    `values` are the numbers a generator may choose; a program may hold any
    si32."""

    mlir_name: str = "custom_call_api_version"
    values: tuple = (0, 1, 2, 3, 4)

    def to_mlir(self, v: int) -> str:
        return f"{v} : i32"

    def from_mlir(self, text: str) -> int:
        t = text.strip()
        if t.startswith("#stablehlo<"):
            return API_VERSIONS.index(EnumAttr(self.mlir_name, API_VERSIONS).from_mlir(t))
        v = int(t.split(":")[0].strip())
        if not -2 ** 31 <= v < 2 ** 31:
            raise ValueError(f"{v} is not an si32")
        return v


@dataclass(frozen=True)
class Dictionary:
    """A dictionary attribute, kept as its text (`{bar = 42 : i32}`): the
    RFC's typed-FFI `backend_config`, whose entries mean what the target says."""

    text: str


@dataclass(frozen=True)
class ConfigAttr:
    """custom_call's `backend_config`: a string (seed: "constant of type
    `string`") or, as the RFC's example writes it for typed FFI, a
    dictionary attribute (`Dictionary`)."""

    def to_mlir(self, v) -> str:
        return v.text if isinstance(v, Dictionary) else _mlir_string(v)

    def from_mlir(self, text: str):
        t = text.strip()
        if t.startswith("{") and t.endswith("}"):
            return Dictionary(" ".join(t.split()))
        return _read_mlir_string(t)


@dataclass(frozen=True)
class SymbolListAttr:
    """A "variadic number of constants of type `string`" that name functions
    (custom_call's `called_computations`), written `[@foo, @bar]`."""

    def to_mlir(self, v) -> str:
        return "[" + ", ".join("@" + n for n in v) + "]"

    def from_mlir(self, text: str) -> tuple:
        t = text.strip()
        if not (t.startswith("[") and t.endswith("]")):
            raise ValueError(f"expected [@name, …], got {text[:60]!r}")
        names = [x.strip() for x in t[1:-1].split(",") if x.strip()]
        if any(not n.startswith("@") for n in names):
            raise ValueError(f"expected symbol references @name, got {text[:60]!r}")
        return tuple(n[1:].strip('"') for n in names)


@dataclass(frozen=True)
class RawAttr:
    """An attribute read and written as its text, whose meaning no encoded
    rule needs (custom_call's `operand_layouts`, `result_layouts`,
    `output_operand_aliases`: the pinned StableHLO has them, the seed not)."""

    def to_mlir(self, v) -> str:
        return v

    def from_mlir(self, text: str) -> str:
        return " ".join(text.split())


# --------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------


def _hint(h, op):
    """A structure hint's candidates: an int, a tuple of ints, or a callable
    of the instance so far (operands with concrete ranks) returning either."""
    v = h(op) if callable(h) else h
    if v is None:
        return ()
    return tuple(v) if isinstance(v, (list, tuple, range)) else (v,)


@dataclass(frozen=True)
class Operand:
    """An input value of the op (the Inputs table's (I<n>) rows that are values).

    `rank`: a rank the table itself fixes ("0-dimensional tensor").
    `count` (variadic only): the number of members, a structure *hint* for
    generators and proofs — an int, a tuple of candidates, or a callable of
    the instance (its fixed operands have concrete ranks).  The constraint
    that ties the count down (e.g. dynamic_slice C2) still decides; a hint
    only says where to look.
    `constant`: the value is written as an attribute of the op (constant's
    `value`), not passed as an argument of @main.
    `types_of`: another operand whose element type the constraints make this
    one's (reduce's `init_values` and `inputs`, C2): skeletons tie the two
    instead of enumerating every mismatch (all invalid); negative cases
    still break the tie through `mixed` layouts and result types."""

    name: str
    types: tuple[ElementType, ...]
    variadic: bool = False
    rank: int | None = None
    count: Any = None
    constant: bool = False
    tuple_members: bool = False   # a tuple of `count` tensors of `types` (get_tuple_element's operand)
    types_of: str | None = None   # skeletons give it this operand's element type (see below)
    literal: bool = False         # a "tensor constant" operand (rng's `shape`): @main builds it with
                                  # stablehlo.constant instead of taking it as an argument

    def counts(self, op) -> tuple:
        return _hint(self.count, op) or (1, 2)


@dataclass(frozen=True)
class Attribute:
    """An input attribute: name, value kind, the values a generator may choose,
    and whether a program may leave it out (then `default` applies)."""

    name: str
    kind: Any
    choices: tuple = ()
    default: Any = None
    optional: bool = False
    length: Any = None     # I64ArrayAttr: size hint (int | tuple | callable(op)), see Operand.count
    group: str | None = None  # written inside OpSpec.groups[group]
    # The spec version that added the input ("v1.20": gather's batching dims), "" for the seed's.  The
    # seed's draws hold it at its hint (gather's: empty, as the seed has it); only the op's
    # `Exercise.later` structures vary it, on streams of their own, so the seed's cases stay as they were.
    since: str = ""

    def lengths(self, op) -> tuple:
        return _hint(self.length, op) or (1,)


@dataclass(frozen=True)
class Result:
    """An output.  `rank`: a hint for results whose shape the program states
    (`OpSpec.shape_from_program`): int, tuple or callable(op), as for
    `Operand.count`.  `fixed_rank`: a rank the Outputs table fixes."""

    name: str
    types: tuple[ElementType, ...]
    variadic: bool = False
    rank: Any = None
    fixed_rank: int | None = None
    count: Any = None   # variadic results: the number infer gives, which negative cases and proofs vary

    def ranks(self, op) -> tuple:
        if self.fixed_rank is not None:
            return (self.fixed_rank,)
        return _hint(self.rank, op)


@dataclass(frozen=True)
class Region:
    """A function-valued input (scatter's `update_computation`, later reduce's
    `body`, sort's `comparator` …).  The instance holds a `Function` for it:
    constraints read its `inputs` / `outputs` types; semantics call it.

    `signature(op) -> (input types, output types)` is the type the spec
    requires (e.g. scatter C15), used by generators to build a valid body;
    `bodies` names the computations a generator may write in it (templates
    rendered by generators/regions.py)."""

    name: str
    signature: Callable
    bodies: tuple[str, ...] = ()
    variadic: bool = False   # a variadic number of functions (case's `branches`): the instance holds a list
    count: Any = None        # variadic only: the number of functions, a hint as `Operand.count`

    def counts(self, op) -> tuple:
        return _hint(self.count, op) or (2,)


@dataclass
class Function:
    """A region's value: its block's argument and result types, the name of
    the body a generator wrote (None when parsed from a program), and — in
    the oracle — `call(*arrays) -> list of arrays`, the body executed, and
    `pairwise`: when the block applies one op to each pair (argument k,
    argument N+k) and returns the N results in order (a sum, a product, a
    maximum … reduce's usual bodies), the N op mnemonics; else None.  What a
    reduction may compute depends on that algebra (spec/schedule.py).

    `expect` (oracle) runs the block on whole values — the oracle's
    expectations, tolerances and alternatives included — where `call` gives
    primary arrays only: control flow (`ControlFlow`) passes values through
    its regions unchanged, so what a branch or loop body computes keeps
    every allowance its ops have."""

    inputs: tuple
    outputs: tuple
    body: str | None = None
    call: Callable | None = None
    pairwise: tuple | None = None   # set by the oracle's reader: see below
    expect: Callable | None = None  # oracle: `expect(*values) -> values`, the block run on whole values
    # oracle: the reader's block (args, steps with their Instances, returns, constants, bound captures), for
    # ops that recognise a body (sort's comparator as one key comparison: spec/ops/sort.py)
    block: Any = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        ins = ", ".join(t.mlir for t in self.inputs)
        outs = ", ".join(t.mlir for t in self.outputs)
        return f"{self.body or 'fn'}(({ins}) -> ({outs}))"


class Instance:
    """One op in a program: its operand, attribute and result values by name.

    Structure is concrete; dimension sizes and integer attribute entries may
    be z3 expressions.  Constraints read `op.lhs`, `op.result`,
    `op.comparison_direction` … by the spec's names.
    """

    def __init__(self, spec: "OpSpec", operands: dict, attributes: dict, results: dict,
                 regions: dict | None = None, grid=None):
        self.spec = spec
        self.operands = dict(operands)
        self.attributes = {a.name: a.default for a in spec.attributes}
        self.attributes.update(attributes)
        self.results = dict(results)
        self.regions = dict(regions or {})
        # The process grid the program runs on (spec/grid.py): the collectives'
        # constraints read it (all_reduce C2: "size(replica_groups)" is
        # num_replicas or num_processes), so it is part of the instance, not of
        # the op.  One process unless the program reader / generators say
        # otherwise; in z3 mode a `grid.SymbolicGrid` (sizes are z3 integers).
        if grid is None:
            grid = symbolic_grid() if isinstance(spec.semantics, Collective) and _any_symbolic(
                self.operands, self.attributes, self.results) else SINGLE_GRID
        self.grid = grid

    def __getattr__(self, name: str):
        for table in ("operands", "attributes", "results", "regions"):
            d = self.__dict__.get(table, {})
            if name in d:
                return d[name]
        raise AttributeError(f"{self.__dict__.get('spec').mnemonic if 'spec' in self.__dict__ else '?'} has no input or output {name!r}")

    def __repr__(self) -> str:
        ops = ", ".join(f"{k}: {v}" for k, v in self.operands.items())
        res = ", ".join(f"{k}: {v}" for k, v in self.results.items())
        attrs = ", ".join(f"{k}={v}" for k, v in self.attributes.items() if v is not None)
        regs = ", ".join(f"{k}={v!r}" for k, v in self.regions.items())
        return f"{self.spec.mnemonic}({ops}{'; ' + attrs if attrs else ''}{'; ' + regs if regs else ''}) -> {res}"


@dataclass(frozen=True)
class Scoring:
    """How the runner must run an op's cases on a backend, declared by the
    op (shlo_conform/planning.py reads it; nothing there names an op):
    `alone` — why its programs never share a merged module with others (an
    implementation may answer differently inside another module);
    `fresh_worker` — why each of its programs is compiled by a worker that
    compiled nothing before (an answer that depends on the process's
    compile history).  Empty: no such rule."""
    alone: str = ""
    fresh_worker: str = ""


@dataclass(frozen=True)
class OpSpec:
    """One op of the spec: Inputs, Outputs, Constraints, type inference, Semantics.

    `constraints` are the `<op>_c<N>` functions in the seed's numbering.
    `infer(op)` returns {result name: TensorType} from operands and
    attributes; a result listed in `result_from_program` takes its element
    type from the program (convert, bitcast_convert), and `infer` returns it
    with the element type the program gave.  A result in
    `shape_from_program` (reshape, iota, broadcast_in_dim) has a shape the
    constraints relate to the operands without fixing it: `infer` leaves it
    out, its rank is structure (`Result.rank`), its dims are solved.
    A result in `result_type_stated` has an element type the constraints
    allow several of (dot_general's: any promotion of lhs's): `infer` gives
    the one the program states where it is allowed, else the operands';
    check-spec proves its dims and rank unique, not its element type.
    `groups`: attributes written together as one MLIR attribute (`Group`).
    `exercise`: what generators need to know to exercise the op well (hard
    values, corners, index operands: spec/exercise.py).
    """

    mnemonic: str
    operands: tuple[Operand, ...]
    results: tuple[Result, ...]
    constraints: tuple[Callable, ...]
    infer: Callable[[Instance], dict]
    semantics: Any
    attributes: tuple[Attribute, ...] = ()
    result_from_program: tuple[str, ...] = ()
    shape_from_program: tuple[str, ...] = ()
    result_type_stated: tuple[str, ...] = ()
    regions: tuple[Region, ...] = ()
    groups: tuple[Group, ...] = ()
    exercise: Exercise = Exercise()
    check_ranks: tuple = ()   # ranks check-spec proves beyond 0..2 (rules that bite only there)
    results_unconstrained: str = ""   # why the seed fixes no result type (custom_call): no uniqueness to prove
    scoring: Scoring = Scoring()   # how the runner must run its cases (planning.py)
    # constraints the op's others imply (no instance breaks them alone; docs/spec-findings.md): check-spec
    # proves them redundant, and no invalid case can name them
    implied: tuple[str, ...] = ()
    # constraints of a later spec than the seed, as (label, clause): ("gather_c16", "v1.20 C6").  Their
    # labels continue the seed's numbering past its last label (never reusing one); traceability lists
    # them as later clauses, and generators and check-spec break them on `Exercise.later` structures.
    later: tuple[tuple[str, str], ...] = ()
    notes: str = ""

    @property
    def structured(self) -> bool:
        """Does the op have structure beyond operand element types and ranks
        (variadic or tuple operands, array attributes, regions, constants,
        table-fixed ranks, program-stated shapes)?  Such ops get layouts,
        covering tables and the generators' structured path; the others
        (element-wise ops, select) keep the simpler path."""
        return bool(self.regions or self.shape_from_program
                    or any(o.variadic or o.tuple_members or o.constant or o.rank is not None for o in self.operands)
                    or any(r.fixed_rank is not None or r.variadic for r in self.results)
                    or any(isinstance(a.kind, (I64ArrayAttr, ReplicaGroupsAttr)) for a in self.attributes)
                    or not self.operands)

    @property
    def labels(self) -> list[str]:
        return [c.__name__ for c in self.constraints]

    def constraint(self, label: str) -> Callable:
        for c in self.constraints:
            if c.__name__ == label:
                return c
        raise KeyError(f"{self.mnemonic} has no constraint {label}")

    def instance(self, operands: dict, attributes: dict | None = None, results: dict | None = None,
                 regions: dict | None = None, grid=None) -> Instance:
        return Instance(self, operands, attributes or {}, results or {}, regions, grid)

    def violated(self, inst: Instance) -> list[str]:
        """Labels of the constraints a concrete instance breaks (in order)."""
        bad = []
        for c in self.constraints:
            try:
                ok = c(inst)
            except (AttributeError, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
                ok = False  # e.g. a tuple where the rule reads a tensor's shape
            if is_symbolic(ok):
                raise TypeError(f"{c.__name__} is symbolic on a concrete instance")
            if not ok:
                bad.append(c.__name__)
        return bad

    def types_outside_tables(self, inst: Instance) -> list[str]:
        """Names of operands/results whose type is outside the Inputs/Outputs
        table: an element type it does not list, or a rank other than the one
        it fixes ("0-dimensional tensor")."""
        def leaves(v):
            if isinstance(v, TensorType):
                return [v]
            if isinstance(v, (list, tuple)):
                return [x for m in v for x in leaves(m)]
            return [x for m in getattr(v, "types", ()) for x in leaves(m)]

        bad = []
        for o in self.operands:
            vals = inst.operands[o.name]
            vals = vals if o.variadic else [vals]
            ts = [x for v in vals for x in leaves(v)]
            if any(t.element_type not in o.types for t in ts) or \
                    (o.rank is not None and any(t.rank != o.rank for t in ts)):
                bad.append(o.name)
        for r in self.results:
            vals = inst.results.get(r.name)
            if vals is None:
                continue
            vals = vals if r.variadic else [vals]
            ts = [x for v in vals for x in leaves(v)]
            if any(t.element_type not in r.types for t in ts) or \
                    (r.fixed_rank is not None and any(t.rank != r.fixed_rank for t in ts)):
                bad.append(r.name)
        return bad


# --------------------------------------------------------------------------
# Semantics vocabulary
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Elementwise:
    """Element-wise semantics.

    `fn(op, *elements)` receives the Instance and one element of each operand
    as exact Python values (bool, int, float — every format of the spec is a
    subset of binary64 — or complex) and returns the exact result of that
    element: bool, int (the oracle wraps out-of-range results, declared as
    implementation-defined), Fraction or float (an exact real, correctly
    rounded into the result type; float carries ±0, ±inf, NaN), complex or a
    (re, im) pair of those, `Approx` or `ImplDefined`.

    `accuracy` is "exact" (the spec demands the correctly rounded result: IEEE
    basic operations, conversions, integer and data ops) or "approx" (the
    spec gives no accuracy guarantee — "Accuracy" section — so results are
    judged against the correctly rounded reference with a ULP tolerance of
    our policy, spec/accuracy.py, and the error is always reported).
    """

    composable: ClassVar[bool] = True   # a function of its operands' values alone: programs may chain it (fuzz)

    fn: Callable
    accuracy: Any = "exact"  # a str, or a callable(op Instance) -> str
    bit_exact: bool = False  # NaN payloads significant (bitcast_convert moves bits)
    generic: "Generic | None" = None  # where fn is one Approx: lets the oracle work on whole arrays
    tolerance: Any = None    # {format name: ULPs}: this op's own tolerance of "approx" results, where the
                             # format's default (FloatFormat.tolerance, spec/accuracy.py) is not the right one

    def accuracy_for(self, op: "Instance") -> str:
        """The accuracy class ("exact" | "approx") of this op instance: ops
        such as multiply are IEEE basic operations on reals but unguaranteed
        complex arithmetic, so `accuracy` may depend on the element types
        (of operands: `abs` of complex<f32> yields f32 yet is approximate)."""
        return self.accuracy(op) if callable(self.accuracy) else self.accuracy


@dataclass(frozen=True)
class Generic:
    """A claim about an `Elementwise` fn on real floats, for speed only: at
    every element where `where(*operands)` holds (numpy float64 arrays in,
    a bool mask out), `fn` returns exactly `Approx(f, *arguments(*operands))`
    (the operands themselves unless `args` says otherwise), or f's value
    itself where that is exact (cbrt(27) = 3).  With `ieee`
    (and f None) the claim is that fn's answer there is the exact result of
    that IEEE operation — a basic one (+ - * / sqrt), which hardware rounds
    correctly, or an exact one (abs, negate, roundToIntegral…, maximum,
    minimum), whose result numpy computes without rounding: the oracle
    lets numpy compute it where operands and result are normal numbers.  The
    oracle uses it to evaluate those elements as whole arrays and still calls
    `fn` on every other element; tests/spec/test_generic.py checks the claim
    against `fn` on every value of the small formats and the specials.
    With `integer`, the claim is about integer operands: on arrays of an
    integer type numpy holds natively (i1 as numpy bool) it returns fn's
    result at every element it does not decline (an overflow, which fn
    states as implementation-defined: `checked`); tests/oracle/test_fast.py
    checks it with each type's extremes.
    With `whole`, the claim is about every element of an instance, of any
    element types (compare: floats, integers, complex in, i1 out):
    `whole(op, *operands)` — the operand arrays as the oracle holds them, in
    their element types' numpy types (ml_dtypes for the narrow ones, numpy
    bool for i1) — returns fn's answer at every element as an array of the
    result's numpy type; or (that array, a mask of declined elements), where
    fn's answer is more than one value (compare's TOTALORDER on a pair of
    zeros or NaNs: implementation-defined), the array holds its primary
    value and fn states the element; or None: no claim about this instance.
    Served by `oracle.fast.whole`; tests/spec/test_compare_whole.py checks
    compare's against fn.
    With `nan` (beside f), the claim is that fn answers a NaN (math.nan:
    log of a negative number) wherever `nan(*operands)` holds, so the
    oracle states those elements as whole arrays too (an exhaustive f32
    survey of log meets 2^31 of them); test_generic.py checks it alike."""

    f: Callable | None
    where: Callable | None = None  # required with f or ieee
    args: Callable | None = None   # operand arrays -> the Approx's argument arrays (default: the operands)
    ieee: Callable | None = None   # instead of f: the numpy ufunc of an IEEE operation (+ - * / sqrt; exact: abs, ceil …)
    exact: bool = False            # ieee never rounds, and numpy's zeros carry IEEE's sign (ceil(-0.5) = -0): zero results count
    integer: Callable | None = None  # integer arrays -> fn's results, or (results, mask of elements declined)
    whole: Callable | None = None    # (op, *operand arrays) -> fn's results, or (results, declined), or None
    nan: Callable | None = None      # with f: operands -> where fn answers a NaN (outside f's domain)

    def arguments(self, *operands) -> tuple:
        return tuple(self.args(*operands)) if self.args is not None else operands


def finite(*xs):
    """Every operand finite (numpy arrays)."""
    import numpy as np
    m = np.ones(np.shape(xs[0]), dtype=bool)
    for x in xs:
        m &= np.isfinite(x)
    return m


def finite_nonzero(*xs):
    """Every operand finite and nonzero (numpy arrays): the generic case of
    most transcendental functions, whose ±0, ±inf and NaN are special."""
    import numpy as np
    m = np.ones(np.shape(xs[0]), dtype=bool)
    for x in xs:
        m &= np.isfinite(x) & (x != 0)
    return m


def approx_if_complex(op: "Instance") -> str:
    """Accuracy of an op that is exact on integers and IEEE basic operations
    on floats, but whose complex form is not a basic operation (the seed's
    "Accuracy" section gives no guarantee there): "approx" when an operand
    is complex."""
    types = []
    for v in op.operands.values():
        types.extend(v if isinstance(v, (list, tuple)) else [v])
    return "approx" if any(t.element_type.is_complex for t in types) else "exact"


@dataclass(frozen=True)
class Approx:
    """The real value `f(*args)`, to be evaluated at rising precision.

    `f` takes mpmath numbers and returns an mpmath number; args are exact
    Python floats/Fractions.  Special values (±0, ±inf, NaN, poles) must be
    decided by the op before returning an Approx: mpmath has no signed zero.
    """

    f: Callable
    args: tuple

    def __init__(self, f: Callable, *args):
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "args", args)


@dataclass(frozen=True)
class ImplDefined:
    """The spec leaves this element implementation-defined; these are the
    alternatives we know of, by label (e.g. {"all ones": -1, "zero": 0}).
    A backend matching one passes, and the report says which it chose."""

    alternatives: dict
    why: str = ""


INTEGER_OVERFLOW_WHY = ("integer overflow is implementation-defined "
                        "(seed, \"Errors\": \"integer overflows ... result in implementation-defined behavior\")")


def integer_overflow(et, v: int) -> ImplDefined:
    """An integer result outside `et`'s range: the seed's Errors clause makes it
    implementation-defined; two's complement wrap is the alternative we know."""
    return ImplDefined({"two's complement wrap": et.wrap(v)}, why=INTEGER_OVERFLOW_WHY)


def checked(np_fn):
    """numpy's `np_fn` for a `Generic.integer` route where overflow can
    happen: computed wide (int64, or Python ints for 64-bit types); the
    elements that leave the type's range are declined (a mask), and the
    op's fn states them (`integer_overflow`).  Booleans are numpy's (add is
    OR, multiply AND)."""
    import numpy as np

    def on_arrays(*xs):
        dt = xs[0].dtype
        if dt.kind == "b":
            return np_fn(*xs)
        wide = np.int64 if dt.itemsize <= 4 else object
        r = np.asarray(np_fn(*[np.asarray(x).astype(wide) for x in xs]))
        info = np.iinfo(dt)
        out = np.asarray((r < info.min) | (r > info.max), dtype=bool)
        return np.where(out, 0, r).astype(dt), out
    return on_arrays


class _AnyValue:
    """The alternative "any value": where the spec makes a result
    implementation-defined without naming candidates.  It is never a primary
    value; a backend landing on it passes, and the report counts it."""

    def __repr__(self) -> str:
        return "ANY"


ANY_VALUE = _AnyValue()

Exactly = Fraction  # readability in op modules: Exactly(a) + Exactly(b)


@dataclass(frozen=True)
class RoundTo:
    """`value` (an exact real: Fraction or float) correctly rounded, ties to
    even, into `format` (a spec.types.FloatFormat, possibly not one of the
    spec's element types, as reduce_precision builds).  The rounded value is
    then exactly representable in the result type."""

    format: Any
    value: Any


@dataclass(frozen=True)
class DataMovement:
    """Semantics stated as the spec's index formulas on whole arrays.

    `fn(op, *operands) -> list of results`, one per result: a numpy/ml_dtypes
    array, or `Choices` where the spec allows several values (scatter's
    implementation-defined update order, out-of-bounds indices).  No rounding
    happens in the movement itself, so results are bit-exact (NaN payloads
    included); values a region computed were rounded by its body's ops.
    `bit_exact=False` for results computed by a region (NaN is NaN there)."""

    composable: ClassVar[bool] = True   # a function of its operands' values alone

    fn: Callable
    bit_exact: bool = True


@dataclass(frozen=True)
class Range:
    """An element known to a range, as accumulating ops give it: the seed
    leaves the order of a reduction implementation-defined (`reduce`: "for
    some binary tree `schedule`"), so a float sum is known to lie in
    [`lo`, `hi`] (exact reals, or ±inf floats) — every allowed schedule
    rounds into [round_down(lo), round_up(hi)] — and `nearest`, the exact
    real result, is what the ULP distance is reported from (spec/schedule.py
    derives both).  In an element answer of `Elementwise` or `Accumulating`
    semantics, a complex element is an (re, im) pair of these."""

    nearest: Any
    lo: Any
    hi: Any


@dataclass(frozen=True)
class Accumulating:
    """Semantics of ops that reduce (reduce, dot_general, convolution, …):
    `fn(op, *operands) -> list`, one object array per result, of element
    answers in the vocabulary of `Elementwise` (exact ints, bools,
    Fractions, floats with their specials, (re, im) pairs, `ImplDefined`)
    plus `Range` where the schedule is implementation-defined.  The oracle
    resolves each element as it does an element-wise answer (integer wrap,
    correct rounding) and states an exact expectation, or a "bounded" one
    where some element has a range.

    `working(op) -> bytes`: what the op's whole-array route holds beyond its
    operands and results (a convolution's patch matrices), for the oracle's
    cost stated before it starts (oracle/cost.py); None: the kind's
    per-element figure there serves.

    `bilinear`: the operands (by name) the result is bilinear in — each
    result element a sum of products x·y of one element of each, as
    dot_general and convolution are in ("lhs", "rhs") — and
    `bilinear_form(op) -> (n, product)`: n, the number of products in each
    sum (padding holes included, as zero terms: the n of its accumulation
    bound), and `product(x, y)`, those sums on whole arrays (x, y float64
    arrays of the two operands' shapes) by a float64 matrix product, each
    sum taken in some order (BLAS), in the result's shape.  The oracle
    carries the ranges of approximate operands through such an op by
    interval arithmetic (oracle/bilinear.py) rather than by corners."""

    composable: ClassVar[bool] = True   # a function of its operands' values alone

    fn: Callable
    working: Callable | None = None
    bilinear: tuple = ()
    bilinear_form: Callable | None = None


@dataclass(frozen=True)
class ControlFlow:
    """Semantics of ops that choose or repeat their regions (if, case,
    while) or pass values through untouched (optimization_barrier):
    `fn(op, values, read) -> list of values`.  `values` are the oracle's
    values of the operands (opaque: expectations, tuples, tokens), passed
    on as they are to a region's `Function.expect` or to the results;
    `read(value)` gives a value's primary array where the op must look at
    it (a predicate, an index, a loop condition).  Nothing is rounded here:
    what the regions compute was rounded by their own ops."""

    composable: ClassVar[bool] = False   # runs regions: not a function fuzz composes

    fn: Callable


@dataclass(frozen=True)
class Decomposition:
    """Semantics the seed states as a program of other StableHLO ops ("More
    formally, this operation can be expressed as a decomposition to existing
    StableHLO operations": batch_norm_inference, batch_norm_training,
    batch_norm_grad).  Each op of the decomposition rounds as its own
    section says, in the order written; where an op leaves something to
    the implementation (reduce's schedule) the decomposition inherits it.
    `fusable`: the decomposition states what is computed, not how it is
    rounded — any step may instead be computed exactly or in a wider format
    (fused), so each rounding step and each inexact constant may give
    either neighbour of its exact value (oracle/decomposition.py, `Fused`);
    False holds every step to its rounding as written.

    `program(op, b, *operands) -> list`, one value per result, states the
    decomposition as the seed writes it, line by line, on opaque values
    (each with `.type`, a TensorType) through `b`, a builder the oracle
    hands in (the spec never imports it):

      b.constant(x, element_type)      a rank-0 constant: the exact real x
                                       (int, Fraction, float) rounded to
                                       nearest, ties to even, into the type —
                                       how a literal `x : type` reads
      b.broadcast_in_dim(v, dims, shape)
      b.reduce(inputs, init_values, dimensions, body)
                                       body: the mnemonic of the pairwise op
                                       the seed's lambda applies ("add");
                                       returns the list of results
      b.<mnemonic>(*operands, **attributes)
                                       any other op whose `infer` states its
                                       results (add, sqrt, batch_norm_inference…);
                                       one value, or a list for several results

    The oracle (oracle/decomposition.py) runs the program through its own
    walk, so every rounding, every reduction bound and every tolerance of an
    approximate input propagates as in any program, and each op of the
    decomposition is checked by its own constraints."""

    composable: ClassVar[bool] = True   # a function of its operands' values alone

    program: Callable
    fusable: bool = False


@dataclass(frozen=True)
class SideEffect:
    """Semantics of an op that orders or performs side effects.

    `fn(op, payloads, host) -> list`: `payloads` are the arrays of the op's
    tensor operands in table order (tokens left out); `host` offers
    `read(stream, tensor_types) -> arrays` and `write(stream, arrays)` (one
    call per op, even of no tensors: the op still talks to the host), streams
    named "infeed", "outfeed" or "channel <id>".  It returns the arrays of
    the op's tensor results in order; the oracle makes each token result,
    which stands after the op's token operands and the op's own effect.
    `cases(spec, rng) -> [(note, kind, instance, violates)]` are the
    instances generators render (kind "value" or "invalid"): a token op's
    structure is a handful of counts and flags, listed rather than solved."""

    composable: ClassVar[bool] = False   # talks to the host

    fn: Callable
    cases: Callable | None = None


class LoopLimit(Exception):
    """A loop ran past the iteration budget the oracle gives it: the seed
    leaves the behaviour of an infinite loop TBD (while), so no result is
    stated."""


@dataclass(frozen=True)
class Sample:
    """One result of `Statistical` semantics: `values`, a sample the
    implementation could have produced (an array of the result's type: the
    oracle's own output), and `tests`, the distribution tests every
    implementation's output must pass (a JSON-able dict for
    spec/statistics.py: `test`, its parameters, `alpha`)."""

    values: Any
    tests: dict
    why: str = ""   # with `values` None: the seed states no result here (undefined behaviour), and why


@dataclass(frozen=True)
class Statistical:
    """Semantics of ops whose values the seed leaves to the implementation
    but whose distribution it states (rng, rng_bit_generator):
    `fn(op, *operands) -> list`, one `Sample` per result.  The oracle states
    a "statistical" expectation (spec/expectation.py); `fn` must be a
    deterministic function of its inputs, so suites stay reproducible."""

    composable: ClassVar[bool] = False   # draws values the implementation chooses

    fn: Callable


@dataclass
class Choices:
    """One result with implementation-defined elements: `primary` is the
    value the oracle states first; `options[flat index]` lists further
    allowed values of that element (each a scalar of the result's dtype, or
    ANY_VALUE), labelled by `labels[flat index]` (same length) — e.g. the
    values every order of duplicate scatter updates gives.  `why` is the
    spec sentence that opens the choice."""

    primary: Any
    options: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    why: str = ""


# --------------------------------------------------------------------------
# Results the seed defines by a property (cholesky, triangular_solve)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """What an op's `Characterized.criterion` finds of one result.

    `value`: the measured quantity (a backward-error ratio); the property
    holds where it is at most `threshold`.  `ok`: the verdict — False only
    where the value is *provably* above the threshold (the criterion
    computes an enclosure of it; `detail` shows it), or where a part of the
    property without a ratio fails (a non-positive diagonal, a NaN).
    `scored`: a bool mask of the result's elements the criterion reads
    (None: all); the others are implementation-defined (cholesky's opposite
    triangle), never judged, and left out of the ULP distances shown.
    `low`, `high`: the enclosure of `value` (the criterion's own rounding
    bounded), where the criterion computes one."""

    value: float
    threshold: float
    ok: bool
    detail: str = ""
    scored: Any = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Characterized:
    """Semantics of ops whose result the seed defines by a property rather
    than a value ("`result` is a Cholesky decomposition of `a`", "the
    solution to op(a)·x = b"): any result with the property conforms, and
    which one an implementation returns depends on its order of evaluation.

    `criterion(op, operands, result) -> Measured`: the property every
    correct result must have, with a stated bound (`operands` the operand
    arrays in table order, `result` the op's one result as an array of its
    type).  This is what judges.
    `reference(op, *operands) -> array`: a result computed in high precision
    and rounded into the result type — what the oracle shows as the value
    and what ULP distances are measured from, never what judges.
    `undefined(op, *operands) -> str | None`: why the seed makes the
    behaviour undefined on these values (a matrix not Hermitian
    positive-definite, a singular system), or None.  There every result
    passes, labelled; the criterion is still reported as a known behaviour.
    `condition(op, *operands) -> float`: the condition number of the
    problem (shown with the expectation; None: not stated).
    `statement`: the criterion in words, as reports print it.

    The oracle states a "residual" expectation (oracle/characterized.py,
    suites/kinds/residual.py) that records the op, its attributes and its
    operands (`record`), so the judge can evaluate the criterion on a
    backend's output without the oracle (`recall`)."""

    composable: ClassVar[bool] = False   # its result is not a function of its operands: fuzz does not chain it

    reference: Callable
    criterion: Callable
    undefined: Callable | None = None
    condition: Callable | None = None
    statement: str = ""

    @staticmethod
    def record(op: "Instance", operands: Sequence) -> dict:
        """What the judge needs to evaluate the criterion again: the op's
        mnemonic, its attributes (JSON values) and its operands as type + hex."""
        from .types import tensor_to_hex
        types = [op.operands[o.name] for o in op.spec.operands]
        return {"op": op.spec.mnemonic,
                "attributes": {k: (list(v) if isinstance(v, tuple) else v) for k, v in op.attributes.items()},
                "operands": [{"type": t.mlir, "hex": tensor_to_hex(Characterized._typed(a, t), t)}
                             for a, t in zip(operands, types)]}

    @staticmethod
    def _typed(a, t: TensorType):
        """`a` as an array of `t`'s numpy type (ml_dtypes for the narrow formats)."""
        import numpy as np
        return np.asarray(a).astype(t.element_type.numpy, copy=False).reshape(tuple(int(d) for d in t.shape))

    @staticmethod
    def recall(record: dict, result_type: TensorType) -> tuple:
        """(Instance, operand arrays) of a `record` and the result's type."""
        from .ops import OPS
        from .types import parse_type, tensor_from_hex
        spec = OPS[record["op"]]
        types = [parse_type(o["type"]) for o in record["operands"]]
        arrays = [tensor_from_hex(o["hex"], t) for o, t in zip(record["operands"], types)]
        attrs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in record["attributes"].items()}
        inst = spec.instance({o.name: t for o, t in zip(spec.operands, types)}, attrs,
                             {spec.results[0].name: result_type})
        return inst, arrays


# --------------------------------------------------------------------------
# The process grid: collectives and a process's position (seed "Parallel
# execution", "Collective ops")
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Collective:
    """Semantics of a collective op: each process's results depend on the
    operands of the other processes of its process group, so no rule on one
    process's arrays can state them — the oracle runs every process of the
    grid (oracle/grid.py) and exchanges operands within each group
    (oracle/collective.py).

    `groups(op, grid) -> list[list[ProcessId]]`: the `process_groups` the
    op's section makes of the grid — the strategy its `channel_id` and
    `use_global_device_ids` pick (spec/grid.py), applied to its
    `replica_groups` — ValueError with the seed's reason where they are not
    valid groups (a process twice, ids not covered): a program reported in
    one line, never run into a hang.
    `fn(op, grid, process, operands_at) -> list`: `process`'s results, one
    per result, where `operands_at` is {ProcessId: [operand arrays]} for
    every process of `process`'s group (numpy / ml_dtypes arrays of the
    operands' types, in table order, variadic members flattened).  A result
    is an array (data movement: bit-exact) or, for ops that combine values
    (all_reduce, reduce_scatter: "for some binary tree `schedule`"), what
    an `Accumulating.fn` returns — an object array of element answers or a
    `bounds.Answers` — so the order of the cross-process combination, which
    the seed leaves to the implementation, is bounded or enumerated as
    reduce's is.  Pure: tests evaluate the seed's Examples through it with
    hand-built `operands_at`."""

    composable: ClassVar[bool] = False   # talks to other processes: not a function of its own operands

    groups: Callable
    fn: Callable
    accumulating: bool = False   # results are Accumulating answers (see above), not arrays


@dataclass(frozen=True)
class Position:
    """Semantics of replica_id / partition_id: the result is the running
    process's position in the grid, not a function of any operand.
    `fn(op, grid, process) -> list of arrays` (process: (replica_id,
    partition_id))."""

    composable: ClassVar[bool] = False   # depends on which process runs it

    fn: Callable


@dataclass(frozen=True)
class UnitAttr(BoolAttr):
    """A "constant of type `i1`" the pinned StableHLO spells as a unit
    attribute, present for true and absent for false
    (`use_global_device_ids`).  Written `name = unit` (the generic form of
    a unit attribute); read from `unit` (the program reader's value of a
    bare name) and from `true` / `false`.  Declare it `optional` with
    `choices=(True,)`: a skeleton then holds True or leaves it out (None,
    read as false), so a program never spells `= false`."""

    def to_mlir(self, v) -> str:
        return "unit" if v else "false"

    def from_mlir(self, text: str) -> bool:
        t = text.strip()
        if t not in ("unit", "true", "false"):
            raise ValueError(f"expected a unit attribute (or true/false), got {text!r}")
        return t != "false"


@dataclass(frozen=True)
class ReplicaGroupsAttr:
    """A "2-dimensional tensor constant of type `si64`" whose rows are
    process groups (`replica_groups`, `source_target_pairs`), written as
    the seed writes it, `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` (the
    pinned StableHLO's spelling too).  The value is a tuple of equal-length
    rows (tuples of ints, or z3 integers in symbolic instances); the shape
    (rows, columns) is structure, `Attribute.length` hints candidates as
    (rows, columns) pairs.  `columns`: a width the kind fixes (None: any) —
    kept only as a generator hint, since source_target_pairs' width 2 is a
    constraint (C1) the program may break.  An empty attribute reads as no
    rows: `dense<> : tensor<0x0xi64>`, or `tensor<0x2xi64>` for pairs."""

    columns: int | None = None

    def to_mlir(self, v) -> str:
        rows = [tuple(r) for r in v]
        cols = len(rows[0]) if rows else (self.columns or 0)
        if not rows or cols == 0:
            return f"dense<> : tensor<{len(rows)}x{cols}xi64>"
        body = ", ".join("[" + ", ".join(str(x) for x in r) + "]" for r in rows)
        return f"dense<[{body}]> : tensor<{len(rows)}x{cols}xi64>"

    def from_mlir(self, text: str) -> tuple:
        t = " ".join(text.split())
        if not t.startswith("dense<"):
            raise ValueError(f"expected dense<[[…]]> : tensor<RxCxi64>, got {text!r}")
        dims = t[t.rindex("tensor<") + len("tensor<"):].rstrip(">").split("x")[:-1]
        if len(dims) != 2:
            raise ValueError(f"{t} is not a 2-dimensional tensor")
        rows_n, cols = int(dims[0]), int(dims[1])
        if rows_n * cols == 0:
            return ()
        vals, _ = _dense_ints(t)
        return tuple(tuple(int(x) for x in vals[i * cols:(i + 1) * cols]) for i in range(rows_n))


def groups_shape(v) -> tuple:
    """(rows, columns) of a `ReplicaGroupsAttr` value (structure: concrete)."""
    rows = list(v)
    return (len(rows), len(rows[0]) if rows else 0)


def groups_entries(v) -> list:
    """Every entry of a `ReplicaGroupsAttr` value, row by row (the spec's
    `replica_groups[i]` for i in `indices(replica_groups)`)."""
    return [x for r in v for x in r]


# z3 mode: the grid's sizes as unknowns.  `num_replicas` = r + 1 and
# `num_partitions` = p + 1 for z3 integers r, p ≥ 0, so a solver that keeps
# dims non-negative (proofs, generators' budgets) never meets an empty grid;
# the names are fixed, so every copy of a symbolic instance (proofs rebuild
# them with other results) shares the same grid.
GRID_VARS = ("grid_replicas_minus_1", "grid_partitions_minus_1")


def symbolic_grid():
    from .grid import SymbolicGrid
    r, p = (z3.Int(n) for n in GRID_VARS)
    return SymbolicGrid(r + 1, p + 1)


def grid_vars() -> list:
    """The z3 integers behind `symbolic_grid()` (each ≥ 0)."""
    return [z3.Int(n) for n in GRID_VARS]


def concrete_grid(grid, num):
    """A concrete `Grid` from a grid of `num`-evaluable sizes (a model's
    `eval`); a concrete Grid as it is."""
    from .grid import Grid, SymbolicGrid
    if isinstance(grid, SymbolicGrid):
        def n(x):
            return int(num(x)) if is_symbolic(x) else int(x)
        return Grid(n(grid.num_replicas), n(grid.num_partitions))
    return grid


def _any_symbolic(*tables) -> bool:
    def sym(v):
        if is_symbolic(v):
            return True
        if isinstance(v, TensorType):
            return any(is_symbolic(d) for d in v.shape)
        if isinstance(v, (list, tuple)):
            return any(sym(x) for x in v)
        return False
    return any(sym(v) for t in tables for v in t.values())

