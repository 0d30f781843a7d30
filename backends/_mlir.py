"""Small helpers shared by the real adapters (xla, interpreter, iree, command).

Nothing here executes a program: it maps numpy arrays to spec element types
and tensor types, turns multi-line compiler diagnostics into the one-line
messages `Rejected` carries, and reads @main's signature out of MLIR text
(the type mapping and the signature reader live in `suites`, which
checks cases and outputs with them too).
"""
from __future__ import annotations

import re

# Read where suites need them too (suites/records.py, suites/signature.py); re-exported for adapters.
from ..suites.records import element_type_of, tensor_type_of  # noqa: F401
from ..suites.signature import main_signature  # noqa: F401

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
