"""The command protocol's side that every runtime server shares: JSON lines,
tensors as type + hex, @main's signature read from the program text.

Why a file of its own and not the project's code: a server runs under
another environment's Python (`.envs/<env>/bin/python`: jaxlib 0.9.2, or
TensorFlow), where the project and its dependencies (z3, mpmath, flint) are
not installed and a second jax must not meet the project's.  So this module
imports only the standard library, numpy and ml_dtypes — what every one of
those environments has — and restates the two facts of the protocol
(docs/command-protocol.md) it needs:

* a tensor crosses as its MLIR type and the hex of its elements'
  little-endian bit patterns, row-major; i1 and the 2-, 4- and 6-bit types
  take one byte each, the pattern in the byte's low bits (ml_dtypes keeps it
  there too, so a masked byte viewed as the ml_dtypes type is the value —
  the layout of spec.types.to_bits / from_bits);
* every request is one JSON object per line carrying an id, answered by
  exactly one line that echoes it; stdout carries nothing else, so
  everything a runtime prints is sent to stderr (fd 1 is moved away before
  the runtime is imported: `claim_stdout`).

tests/runtimes/test_wire.py holds this module to the project's own codec
(spec.types.to_bits, suites.records.tensor_to_hex) type by type.
"""
from __future__ import annotations

import io
import json
import os
import re
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np


class Rejected(Exception):
    """The runtime refused the program at parse, verify or compile time."""


class Unsupported(Exception):
    """The runtime (or this server) declares it does not handle the program."""


class RunFailed(Exception):
    """The run itself failed (an error message, not a crash)."""


# ----------------------------------------------------------------- element types
# MLIR element type -> (ml_dtypes / numpy attribute, bits).  Signed integers
# are written `iN` in MLIR and `siN` in the spec's names: both are read.
_ELEMENTS = {
    "i1": ("bool_", 1),
    "i2": ("int2", 2), "i4": ("int4", 4), "i8": ("int8", 8), "i16": ("int16", 16),
    "i32": ("int32", 32), "i64": ("int64", 64),
    "ui2": ("uint2", 2), "ui4": ("uint4", 4), "ui8": ("uint8", 8), "ui16": ("uint16", 16),
    "ui32": ("uint32", 32), "ui64": ("uint64", 64),
    "f4E2M1FN": ("float4_e2m1fn", 4), "f6E2M3FN": ("float6_e2m3fn", 6), "f6E3M2FN": ("float6_e3m2fn", 6),
    "f8E3M4": ("float8_e3m4", 8), "f8E4M3": ("float8_e4m3", 8), "f8E4M3FN": ("float8_e4m3fn", 8),
    "f8E4M3FNUZ": ("float8_e4m3fnuz", 8), "f8E4M3B11FNUZ": ("float8_e4m3b11fnuz", 8),
    "f8E5M2": ("float8_e5m2", 8), "f8E5M2FNUZ": ("float8_e5m2fnuz", 8), "f8E8M0FNU": ("float8_e8m0fnu", 8),
    "bf16": ("bfloat16", 16), "f16": ("float16", 16), "f32": ("float32", 32), "f64": ("float64", 64),
    "complex<f32>": ("complex64", 64), "complex<f64>": ("complex128", 128),
}


def mlir_element(name: str) -> str:
    """The MLIR spelling of an element type given in either spelling (si32 -> i32)."""
    return name[1:] if re.fullmatch(r"si\d+", name) else name


def spec_element(name: str) -> str:
    """The spec's name of an element type (i32 -> si32; i1 stays i1): what
    `claims` entries name (docs/command-protocol.md, "claims")."""
    return "s" + name if re.fullmatch(r"i\d+", name) and name != "i1" else name


def element_dtype(name: str) -> np.dtype:
    """The numpy dtype of an element type (ml_dtypes for the narrow formats);
    KeyError when neither numpy nor ml_dtypes has it."""
    attr, _ = _ELEMENTS[mlir_element(name)]
    if hasattr(np, attr):
        return np.dtype(getattr(np, attr))
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, attr))


def element_bits(name: str) -> int:
    return _ELEMENTS[mlir_element(name)][1]


@dataclass(frozen=True)
class TensorType:
    shape: tuple
    element: str          # MLIR spelling: i32, ui8, f32, complex<f32>

    @property
    def mlir(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.element + ">"

    @property
    def dtype(self) -> np.dtype:
        return element_dtype(self.element)


_TENSOR = re.compile(r"^tensor<((?:\d+x)*)(.+)>$")


def parse_tensor_type(text: str) -> TensorType:
    """`tensor<2x3xf32>` -> TensorType((2, 3), "f32"); ValueError for anything
    else (a dynamic dimension, a token, an encoding, a quantized element)."""
    m = _TENSOR.match(text.strip())
    if m is None:
        raise ValueError(f"not a static tensor type: {text}")
    element = mlir_element(m.group(2).strip())
    if element not in _ELEMENTS:
        raise ValueError(f"element type {element} of {text} is not one the protocol carries")
    dims = tuple(int(d) for d in m.group(1).split("x") if d)
    return TensorType(dims, element)


def decode(tensor: dict) -> np.ndarray:
    """A protocol tensor ({"type", "hex"}) as its numpy / ml_dtypes array."""
    t = parse_tensor_type(tensor["type"])
    raw = bytes.fromhex(tensor["hex"])
    dtype = t.dtype
    bits = element_bits(t.element)
    if bits < 8:   # one byte per element, the pattern in its low bits (i1: 0 or 1)
        b = np.frombuffer(raw, np.uint8)
        flat = b.astype(np.bool_) if t.element == "i1" else (b & np.uint8((1 << bits) - 1)).view(dtype)
    else:
        flat = np.frombuffer(raw, dtype.newbyteorder("<") if dtype.kind in "iufc" else dtype).astype(dtype)
    n = int(np.prod(t.shape, dtype=np.int64))
    if flat.size != n:
        raise ValueError(f"{tensor['type']}: {flat.size} elements in the hex, {n} in the type")
    return np.array(flat.reshape(t.shape), copy=True)


def element_of(dtype: np.dtype) -> str | None:
    """The MLIR element type whose numpy / ml_dtypes dtype is `dtype`, or
    None (object arrays, a dtype the protocol does not carry)."""
    for name in _ELEMENTS:
        try:
            if element_dtype(name) == dtype:
                return name
        except (AttributeError, ImportError):   # an ml_dtypes without the format
            continue
    return None


def encode(array: np.ndarray, t: TensorType) -> dict:
    """An array as a protocol tensor: of type `t` where the runtime handed
    back `t`'s dtype (or a bool array for i1, an integer array of one bit
    per element); of the element type the runtime did hand back, `t`'s
    shape, where that is another one the protocol carries — the project's
    judge then says "element type ui8 where i8 was declared", as it does for
    the project's own XLA adapter (docs/command-protocol.md: an output
    labelled with another type fails even where its bits would match).
    Casting it to `t` instead relabelled jaxlib's rng_bit_generator outputs
    (uint where the program declares i8 or f32) as conformant.  A dtype the
    protocol does not carry is cast to `t`'s (the server's own conversions)."""
    a = np.asarray(array)
    dtype = t.dtype
    if a.dtype != dtype:
        got = element_of(a.dtype)
        if got is not None and got != t.element and not (t.element == "i1" and a.dtype.kind in "bui"):
            t = TensorType(t.shape, got)
            dtype = a.dtype
        else:
            a = a.astype(dtype)
    a = np.ascontiguousarray(a.reshape(t.shape))
    bits = element_bits(t.element)
    if t.element == "i1":
        raw = a.astype(np.uint8).tobytes()
    elif bits < 8:
        raw = (a.reshape(-1).view(np.uint8) & np.uint8((1 << bits) - 1)).tobytes()
    elif dtype.kind in "iufc":
        raw = a.astype(dtype.newbyteorder("<")).tobytes()
    else:   # ml_dtypes formats of 8 bits or more: the buffer is the little-endian pattern
        raw = a.tobytes()
    return {"type": t.mlir, "hex": raw.hex()}


# ----------------------------------------------------------------- @main's signature
def _split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` outside brackets and strings (`->` is no bracket)."""
    out, depth, cur, i, quoted = [], 0, [], 0, False
    while i < len(text):
        c = text[i]
        if quoted:
            cur.append(c)
            if c == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            cur.append(c)
        elif text.startswith("->", i):
            cur.append("->")
            i += 1
        elif c in "(<[{":
            depth += 1
            cur.append(c)
        elif c in ")>]}":
            depth -= 1
            cur.append(c)
        elif c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (strings and `->` skipped)."""
    opening = text[start]
    pair = {"(": ")", "<": ">", "[": "]", "{": "}"}[opening]
    depth, i, quoted = 0, start, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif text.startswith("->", i):
            i += 1
        elif c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
            if depth == 0:
                if c != pair:
                    raise ValueError(f"unbalanced {opening!r} at {start}")
                return i
        i += 1
    raise ValueError(f"unclosed {opening!r} at {start}")


def _type_of(item: str) -> str:
    """The type of an argument (`%a: TYPE {attrs}`) or a result (`TYPE {attrs}`)."""
    item = item.split(":", 1)[1] if item.strip().startswith("%") else item
    item = item.strip()
    brace = item.find("{")
    if brace > 0 and _closing(item, brace) == len(item) - 1:   # trailing {attributes}
        item = item[:brace].strip()
    return item


def main_signature(mlir: str) -> tuple[list[str], list[str]]:
    """(argument types, result types) of @main, as MLIR type text, read from
    the program text; ValueError when there is no @main."""
    m = re.search(r"func\.func\s+(?:public\s+|private\s+)?@main\s*\(", mlir)
    if m is None:
        generic = _generic_main_signature(mlir)
        if generic is None:
            raise ValueError("no @main in the program text")
        return generic
    open_args = m.end() - 1
    close_args = _closing(mlir, open_args)
    args = [_type_of(a) for a in _split_top(mlir[open_args + 1:close_args])]
    rest = mlir[close_args + 1:].lstrip()
    results: list[str] = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            end = _closing(rest, 0)
            results = [_type_of(r) for r in _split_top(rest[1:end])]
        else:   # one result, up to the body or attributes
            depth, i = 0, 0
            while i < len(rest):
                c = rest[i]
                if c in "<([":
                    depth += 1
                elif c in ">)]":
                    depth -= 1
                elif depth == 0 and (c == "{" or rest.startswith("attributes", i)):
                    break
                i += 1
            results = [rest[:i].strip()]
    return args, results


def _generic_main_signature(mlir: str) -> tuple[list[str], list[str]] | None:
    """@main's signature from the generic form (`"func.func"() <{function_type
    = (A, B) -> R, sym_name = "main"}>`: how a program read from bytecode
    is printed): the properties of each func.func, the one named main."""
    for m in re.finditer(r'"func\.func"\(\)\s*<\{', mlir):
        props = mlir[m.end():_closing(mlir, m.end() - 1)]
        if not re.search(r'(?:^|[\s,])sym_name\s*=\s*"main"', props):
            continue
        f = re.search(r"function_type\s*=\s*\(", props)
        if f is None:
            return None
        close = _closing(props, f.end() - 1)
        args = [_type_of(a) for a in _split_top(props[f.end():close])]
        rest = props[close + 1:].lstrip()
        if not rest.startswith("->"):
            return args, []
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            return args, [_type_of(r) for r in _split_top(rest[1:_closing(rest, 0)])]
        return args, [_split_top(rest)[0].strip()]   # one result, up to the next property
    return None


def has_quantized(mlir: str) -> bool:
    return "!quant." in mlir


# ----------------------------------------------------------------- stdout, stderr
_REPLIES = None


def claim_stdout():
    """Keep fd 1 for replies only: a duplicate of it becomes the reply
    stream, and fd 1 itself is pointed at stderr, so whatever a runtime's
    C++ code prints to stdout (TensorFlow's and XLA's logs, LLVM's) lands
    in the worker's log instead of breaking the protocol.  Called before
    the runtime is imported."""
    global _REPLIES
    if _REPLIES is None:
        fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = io.TextIOWrapper(io.FileIO(os.dup(2), "w"), line_buffering=True)
        _REPLIES = io.FileIO(fd, "w")
    return _REPLIES


@contextmanager
def captured_stderr():
    """What native code writes on fd 2 meanwhile (MLIR's diagnostics reach
    stderr, not the Python exception: TensorFlow's StableHLO bindings raise
    only "failed to serialize module"); yields a list that holds the text
    when the block ends, and repeats it on the real stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    box: list[str] = []
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield box
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", "replace")
            box.append(text)
            if text:
                os.write(2, text.encode())


def one_line(text: str, limit: int = 2000) -> str:
    """A message folded onto one line, MLIR's `error:` lines first."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error:" in ln]
    line = " | ".join(errors or lines) or "no message"
    return line if len(line) <= limit else line[:limit] + " …"


# ----------------------------------------------------------------- the loop
class Server:
    """A runtime as the protocol sees it.  Subclasses implement `describe`,
    `unsupported` (claims entries), `compile(mlir) -> handle value` and
    `run(program, inputs) -> outputs` (numpy arrays, @main's result types
    given by `program.results`)."""

    def describe(self) -> str:
        raise NotImplementedError

    def unsupported(self) -> list[dict]:
        return []

    def compile(self, mlir: str):
        raise NotImplementedError

    def run(self, program, inputs: list[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def serve(make_server, replies=None, requests=None) -> int:
    """The request loop (docs/command-protocol.md): one reply per request,
    echoing its id.  The server is made first, after fd 1 is claimed (its
    runtime may print while it loads); if it cannot be made the process
    ends with status 3 before any reply (the runner then reports a backend
    that does not start, and the traceback is in its log).  A program is
    kept by handle until the next compile (the runner sends all of a
    program's input sets before it compiles the next).  Per-request timings go to stderr as
    `[timing] compile|run SECONDS` for the report's compile/run split."""
    replies = replies if replies is not None else claim_stdout()
    requests = requests if requests is not None else sys.stdin
    try:   # a runtime that does not load ends the process before any reply: the backend does not start
        server = make_server()
    except Exception:
        _log("wire: the runtime failed to load:\n" + traceback.format_exc())
        return 3
    programs: dict = {}
    next_handle = 0

    def reply(obj):
        replies.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
        replies.flush()

    for line in requests:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            _log(f"wire: a request that is not JSON: {line[:200]!r}")
            return 2
        rid, cmd = msg.get("id"), msg.get("cmd")
        try:
            if cmd == "claims":
                reply({"id": rid, "ok": True, "describe": server.describe(), "unsupported": server.unsupported()})
            elif cmd == "compile":
                if msg.get("grid"):
                    raise Unsupported("this server runs no process grid")
                t0 = time.perf_counter()
                program = server.compile(msg["mlir"])
                _log(f"[timing] compile {time.perf_counter() - t0:.6f}")
                programs.clear()
                programs[next_handle] = program
                reply({"id": rid, "ok": True, "handle": next_handle})
                next_handle += 1
            elif cmd == "run":
                program = programs.get(msg.get("handle"))
                if program is None:
                    reply({"id": rid, "ok": False, "error": f"unknown handle {msg.get('handle')!r}"})
                    continue
                if "processes" in msg:
                    raise Unsupported("this server runs no process grid")
                inputs = [decode(t) for t in msg["inputs"]]
                t0 = time.perf_counter()
                outs = server.run(program, inputs)
                _log(f"[timing] run {time.perf_counter() - t0:.6f}")
                if len(outs) != len(program.results):
                    raise RunFailed(f"the runtime returned {len(outs)} results; @main declares "
                                    f"{len(program.results)}")
                reply({"id": rid, "ok": True,
                       "outputs": [encode(o, t) for o, t in zip(outs, program.results)]})
            else:
                reply({"id": rid, "ok": False, "error": f"unknown command {cmd!r}"})
        except Rejected as e:
            reply({"id": rid, "ok": False, "rejected": one_line(str(e))})
        except Unsupported as e:
            reply({"id": rid, "ok": False, "unsupported": one_line(str(e))})
        except RunFailed as e:
            reply({"id": rid, "ok": False, "error": one_line(str(e))})
        except Exception as e:   # a fault of this server or the runtime's API: said, never hidden
            _log(traceback.format_exc())
            reply({"id": rid, "ok": False, "error": f"server error: {type(e).__name__}: {one_line(str(e))}"})
    return 0
