"""Attribute kinds: the value an op's attribute holds and its MLIR spelling.

Each kind writes a value (`to_mlir`, `to_group` inside a grouped attribute)
and reads it back (`from_mlir`) in the spellings the seed, the pinned
StableHLO and JAX use, so generators emit what the program reader takes and
the oracle reads what other tools wrote.  Integer entries of array kinds may
be z3 integers in symbolic instances; the kinds never inspect them.
"""
from __future__ import annotations

from dataclasses import dataclass


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
        """The integer; where the text writes its type (`N : i32`), that type
        must be this attribute's (`i{width}`): the Inputs table's "constant
        of type si64" is an i64 attribute to StableHLO's verifier, which
        refuses `feature_index = 1 : i32`.  A bare `N` (inside a grouped
        attribute) has no type of its own."""
        value, colon, typ = text.partition(":")
        if colon and typ.strip() != f"i{self.width}":
            raise ValueError(f"{text.strip()!r} is of type {typ.strip()}, not i{self.width}")
        return int(value.strip())


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

    def _body(self, text: str) -> str:
        """What `#dialect<…>` holds between its brackets (whitespace folded); ValueError otherwise."""
        t = " ".join(text.split())
        head = f"#{self.dialect_attr}<"
        if not (t.startswith(head) and t.endswith(">")):
            raise ValueError(f"expected {head}…>, got {text!r}")
        return t[len(head):-1]

    def from_mlir(self, text: str, kinds: dict) -> dict:
        body, out, i = self._body(text), {}, 0
        while i < len(body):
            eq = body.index("=", i)
            name = body[i:eq].strip().strip(",").strip()
            j = eq + 1
            while j < len(body) and body[j] == " ":
                j += 1
            end = body.index("]", j) + 1 if body[j] == "[" else (body.find(",", j) if "," in body[j:] else len(body))
            if name not in kinds:
                raise ValueError(f"unknown field {name!r} in #{self.dialect_attr}<…>")
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
        body = self._body(text).strip()
        if body.startswith("raw "):
            raw = Group(self.mlir_name, self.dialect_attr, self.fields)
            return raw.from_mlir(f"#{self.dialect_attr}<{body[4:]}>", kinds)
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
