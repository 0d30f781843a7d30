"""Registry: mnemonic → OpSpec, one module per op named by its mnemonic.

Modules whose mnemonic is a Python keyword (`and`, `or`, `not`) are imported
by name through importlib, so the file name stays the spec's name.
"""
from __future__ import annotations

from ..dsl import OpSpec
from ..dsl.declaration import collect_specs

OPS: dict[str, OpSpec] = collect_specs(__name__, __path__)


def get(mnemonic: str) -> OpSpec:
    try:
        return OPS[mnemonic]
    except KeyError:
        raise KeyError(f"no op {mnemonic!r} in the encoded spec") from None


def lookup(mnemonic: str) -> OpSpec | None:
    """The op `stablehlo.<mnemonic>` of a program: one of the seed's, or one
    v1.20 added (`spec.added.ADDED`); None when neither declares it."""
    from ..added import ADDED
    return OPS.get(mnemonic) or ADDED.get(mnemonic)
