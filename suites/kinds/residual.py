"""The "residual" kind's labels, where suites-side code and tests import them: spec/kinds/residual.py."""
from __future__ import annotations

from ...spec.kinds.residual import KNOWN, RESIDUAL, UNDEFINED, Residual

__all__ = ["KNOWN", "RESIDUAL", "UNDEFINED", "Residual"]
