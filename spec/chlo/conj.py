"""chlo.conj — complex conjugate, element-wise (chlo.md "chlo.conj":
(real(x), -imag(x))); a real operand is its own conjugate.  Exact: nothing
rounds (a negation), NaNs stay NaN."""
from ..dsl import COMPLEX, FLOAT
from .common import unary


def element(op, x):
    if isinstance(x, complex):
        return (x.real, -x.imag)
    return x


SPEC = unary("conj", element, FLOAT + COMPLEX, accuracy="exact")
