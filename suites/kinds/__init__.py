"""Expectation kinds: an open registry, one module per kind.

An `Expectation` (spec/expectation.py) names its kind; everything a kind
means lives in that kind's module here, once:

* `matches` — for kinds judged element by element (exact, ulp, bounded):
  which elements of an output meet the expected bits; the comparison
  (suites/compare.py) adds the shared machinery around it —
  implementation-defined alternatives, causes, the ULP error, mismatches;
* `judge` — for kinds judged on the whole output (statistical, and later
  residual criteria): the Comparison itself;
* `describe` — the one line `explain`, `run` and the HTML print for it;
* `check` — how the StableHLO interpreter's test format states it
  (shlo_conform/export.py): "eq", "close", "nan" or None with the reason.

A new kind is a new module here defining a `Kind` subclass and calling
`register` — no chain elsewhere is edited.  Modules are found by name, as
spec/ops finds op modules.
"""
from __future__ import annotations

import importlib
import pkgutil

import numpy as np

from ...spec.expectation import Expectation
from ...spec.types import ElementType, nan_mask


class Kind:
    """One expectation kind (module docstring)."""

    name: str = "?"
    element_wise: bool = True   # judged element by element (`matches`); else on the whole output (`judge`)
    ulp_measures: bool = True   # is the ULP distance from `bits` a measure of accuracy?  ("residual": no — the
                                # reference is one result among many correct ones; its distance is shown, not summarised)

    def describe(self, e: Expectation) -> str:
        return self.name

    def matches(self, e: Expectation, cet: ElementType, eb: np.ndarray, ab: np.ndarray, primary: bool,
                elem_ulp: np.ndarray | None) -> np.ndarray:
        """Per element (rows of component bits): does the actual `ab` meet
        the expected `eb` under this kind's rule?  `primary`: the primary
        value (False: an implementation-defined alternative, one value);
        `elem_ulp`: the per-element ULP distance for float types."""
        raise NotImplementedError(f"kind {self.name!r} is not judged element by element")

    def judge(self, e: Expectation, actual: np.ndarray):
        raise NotImplementedError(f"kind {self.name!r} is judged element by element")

    def enclosure(self, e: Expectation) -> tuple[np.ndarray, np.ndarray] | None:
        """The values this kind admits, as (low, high) ordinals per
        component (`spec.types.ordinals`, flattened) — what a verdict's
        width is measured from (suites/resolution.py) — or None when the
        kind states no range of values (a property or a distribution)."""
        return None

    def catches_scaling(self, e: Expectation, s: float) -> bool | None:
        """For a kind that states no range (a property): does its rule refuse
        the oracle's reference scaled by 1 + s and by 1 − s?  False: a
        uniformly wrong answer that large would pass, so "agrees" would claim
        more than was checked (suites/resolution.py).  None: not a question
        for this kind."""
        return None

    def check(self, e: Expectation) -> tuple[str | None, str]:
        """(how the interpreter's test format states it, or None; why not)."""
        return None, f"expectation kind {self.name!r} has no check op"


REGISTRY: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    REGISTRY[kind.name] = kind
    return kind


def kind_of(e: Expectation) -> Kind:
    """The registered kind of `e`; KeyError naming it when none is."""
    try:
        return REGISTRY[e.kind]
    except KeyError:
        raise KeyError(f"unknown expectation kind {e.kind!r}; known: {', '.join(sorted(REGISTRY))}") from None


def describe(e: Expectation) -> str:
    return kind_of(e).describe(e)


def nan_rows(x: np.ndarray, fmt) -> np.ndarray:
    return nan_mask(x, fmt)


for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
