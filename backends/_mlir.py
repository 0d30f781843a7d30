"""Small helpers shared by the real adapters (xla, interpreter, iree, command).

Nothing here executes a program: it maps numpy arrays to spec element types
and tensor types, turns multi-line compiler diagnostics into the one-line
messages `Rejected` carries, and reads @main's signature out of MLIR text.
"""
from __future__ import annotations

import re

import numpy as np

from ..spec.types import ALL_TYPES, ElementType, TensorType, parse_type

_BY_NUMPY = {np.dtype(t.numpy): t for t in ALL_TYPES}


def element_type_of(array: np.ndarray) -> ElementType:
    """The spec element type a numpy/ml_dtypes array carries (unique per dtype)."""
    dt = np.asarray(array).dtype
    try:
        return _BY_NUMPY[dt]
    except KeyError:
        raise TypeError(f"no StableHLO element type for numpy dtype {dt}") from None


def tensor_type_of(array: np.ndarray) -> TensorType:
    a = np.asarray(array)
    return TensorType(tuple(int(d) for d in a.shape), element_type_of(a))


_NOISE = re.compile(r"^\s*(note:|see current operation|\^|$)")


def one_line(message: str, limit: int = 400) -> str:
    """The first meaningful line(s) of a diagnostic, folded into one line.

    Prefers lines that say `error:`; drops notes, carets and op dumps."""
    lines = [ln.strip() for ln in str(message).splitlines()]
    errors = [ln for ln in lines if "error:" in ln]
    keep = errors or [ln for ln in lines if ln and not _NOISE.match(ln)] or [str(message).strip()]
    seen, out = set(), []
    for ln in keep:
        if ln not in seen:
            seen.add(ln)
            out.append(ln)
    text = " | ".join(out[:3])
    return text if len(text) <= limit else text[: limit - 1] + "…"


_MAIN_RE = re.compile(r"func\.func\s+(?:public\s+|private\s+)?@main\s*\(")


def main_signature(mlir: str) -> tuple[list, list] | None:
    """(argument types, result types) of @main read from the program text, as
    spec type objects; None when the text is not in the pretty `func.func`
    form this reader understands.  Best effort: adapters use it to give their
    outputs the program's own element types (an implementation whose ABI
    forgets signedness, say), never to judge anything."""
    m = _MAIN_RE.search(mlir)
    if not m:
        return None
    j = _close(mlir, m.end(), "(", ")")
    args = []
    for part in _split_top_level(mlir[m.end():j - 1]):
        if ":" not in part:
            return None
        ty = part.split(":", 1)[1].split("{", 1)[0].strip()  # drop argument attributes
        try:
            args.append(parse_type(ty))
        except ValueError:
            return None
    rest = mlir[j:].lstrip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            res_text = rest[1:_close(rest, 1, "(", ")") - 1]
        else:
            k, depth = 0, 0
            while k < len(rest):
                c = rest[k]
                depth += 1 if c == "<" else -1 if c == ">" else 0
                if depth == 0 and c in " {\n\t":
                    break
                k += 1
            res_text = rest[:k]
        for part in _split_top_level(res_text):
            part = part.split("{", 1)[0].strip()
            try:
                results.append(parse_type(part))
            except ValueError:
                return None
    return args, results


def _close(s: str, i: int, open_: str, close: str) -> int:
    """Index just past the bracket closing the one opened before position i."""
    depth = 1
    while i < len(s) and depth:
        depth += 1 if s[i] == open_ else -1 if s[i] == close else 0
        i += 1
    return i


def _split_top_level(s: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]
