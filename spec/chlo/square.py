"""chlo.square — x², element-wise (chlo.md "chlo.square").

Floats: x·x correctly rounded — the exact square rounded once, which is
IEEE's multiply of x by itself, judged exactly (as `multiply` is): NaN →
NaN, ±inf → +inf, ±0 → +0.  Complex: z·z, the spec's complex product
(C99 Annex G, as `multiply` states it), approximate.
"""
import math
from fractions import Fraction

import numpy as np

from ..dsl import COMPLEX, FLOAT, Generic, approx_if_complex, finite
from .. import annex_g
from .common import unary


def element(op, x):
    if isinstance(x, complex):
        return annex_g.cmul(x, x)
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.inf
    return Fraction(x) ** 2


SPEC = unary("square", element, FLOAT + COMPLEX, accuracy=approx_if_complex,
             generic=Generic(None, finite, ieee=np.square))
