"""custom_call's attributes (seed "custom_call" and the RFC's typed FFI).

custom_call is the one op whose inputs are strings, symbol lists, a
dictionary and layouts whose meaning belongs to the call's target: these
kinds read and write them as text (MLIR string literals with escapes,
`[@name, …]`, `{…}`), so a program from JAX reads back as it was written
and no rule of ours claims more about them than the seed does.
"""
from __future__ import annotations

from dataclasses import dataclass

from .attributes import EnumAttr


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
