"""chlo.tan — tangent, element-wise (chlo.md "chlo.tan": sin(x)/cos(x)).

The same function as StableHLO's own `tan` (spec/ops/tan.py), whose
element semantics it takes: tan(±0) = ±0, ±inf and NaN → NaN, an `Approx`
of tan elsewhere; complex by C99 Annex G.  (JAX writes stablehlo.tan; older
producers wrote chlo.tan.)
"""
from ..dsl import COMPLEX, FLOAT
from ..ops import tan as _tan
from .common import unary

SPEC = unary("tan", _tan.element, FLOAT + COMPLEX, generic=_tan.SPEC.semantics.generic)
