"""@main's signature read from MLIR text, without parsing the program.

A suite case states its inputs and expected outputs with their types; the
program's @main must take and return exactly those.  Loading a suite checks
that agreement (suites/io.py) with this reader, and adapters use it to give
their outputs the program's own element types (an implementation whose ABI
forgets signedness) — so it lives here, below both.  It reads the pretty
`func.func @main(...) -> ...` form that our generators write and that
programs from JAX carry; it is a reader of text, never a verifier.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..spec.types import parse_type

# A suite repeats a few hundred type spellings thousands of times; the
# objects are immutable, so one parse of each serves every case.
read_type = lru_cache(maxsize=8192)(parse_type)

_MAIN_RE = re.compile(r"func\.func\s+(?:public\s+|private\s+)?@main\s*\(")


def _without_attributes(text: str) -> str:
    """An argument's type without its attributes (`{jax.arg_info = …}`): the
    text up to the first `{` outside the type's angle brackets (a per-axis
    quantized type has braces of its own inside them)."""
    depth = 0
    for k, c in enumerate(text):
        depth += 1 if c == "<" else -1 if c == ">" else 0
        if c == "{" and depth == 0:
            return text[:k]
    return text


def main_signature(mlir: str) -> tuple[list, list] | None:
    """(argument types, result types) of @main read from the program text, as
    spec type objects; None when the text is not in the pretty `func.func`
    form this reader understands.  Best effort: adapters use it to give their
    outputs the program's own element types (an implementation whose ABI
    forgets signedness, say) and suites to check that a case's inputs and
    expectations have @main's types, never to judge a program's validity."""
    m = _MAIN_RE.search(mlir)
    if not m:
        return None
    j = _close(mlir, m.end())
    args = []
    for part in _split_top_level(mlir[m.end():j - 1]):
        if ":" not in part:
            return None
        ty = _without_attributes(part.split(":", 1)[1]).strip()
        try:
            args.append(read_type(ty))
        except ValueError:
            return None
    rest = mlir[j:].lstrip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            res_text = rest[1:_close(rest, 1) - 1]
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
            part = _without_attributes(part).strip()
            try:
                results.append(read_type(part))
            except ValueError:
                return None
    return args, results


_PARENS = re.compile(r"[()]")
_NESTING = re.compile(r"[<({\[>)}\],]")


def _close(s: str, i: int) -> int:
    """Index just past the parenthesis closing the one opened before position i."""
    depth = 1
    for m in _PARENS.finditer(s, i):
        depth += 1 if m.group() == "(" else -1
        if not depth:
            return m.end()
    return len(s)


def _split_top_level(s: str) -> list[str]:
    """`s` split at the commas outside any bracket."""
    parts, depth, start = [], 0, 0
    for m in _NESTING.finditer(s):
        ch = m.group()
        if ch == ",":
            if depth == 0:
                parts.append(s[start:m.start()])
                start = m.end()
        elif ch in "<({[":
            depth += 1
        else:
            depth -= 1
    if s[start:].strip():
        parts.append(s[start:])
    return [p.strip() for p in parts]
