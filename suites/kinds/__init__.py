"""Expectation kinds, as the suites judge by them: the registry of spec/kinds/.

A kind's meaning — its fields, rule, description, check, and how it
propagates — lives at floor 1 (spec/kinds/, one module per kind) so that
the oracle, which may not import suites/, asks the same kind objects the
judge does (DESIGN.md).  This package is their name on the suites' side:
`kind_of`, `describe`, `REGISTRY` are spec/kinds' own objects."""
from __future__ import annotations

from ...spec.kinds import REGISTRY, Comparison, Kind, describe, kind_of, register

__all__ = ["REGISTRY", "Comparison", "Kind", "describe", "kind_of", "register"]
