"""Compiler diagnostics folded into the one-line messages `Rejected` carries
(xla, interpreter, iree)."""
from __future__ import annotations

import re

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
