"""What a semantics function answers for one element, beyond an exact value.

An op's semantics states the *exact* result (ints, bools, Fractions, floats
standing for their exact value); where that is not a single known number it
answers in these words: `Approx` (a real function the oracle evaluates at
rising precision), `RoundTo` (an exact value rounded into a format the op
names), `ImplDefined` and `ANY_VALUE` (the spec's implementation-defined
alternatives), `Range` (an order of evaluation left open), `Choices` (a
whole result with per-element alternatives).  `oracle/` resolves them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable


@dataclass(frozen=True)
class Approx:
    """The real value `f(*args)`, to be evaluated at rising precision.

    `f` takes mpmath numbers and returns an mpmath number; args are exact
    Python floats/Fractions.  Special values (±0, ±inf, NaN, poles) must be
    decided by the op before returning an Approx: mpmath has no signed zero.
    """

    f: Callable
    args: tuple

    def __init__(self, f: Callable, *args):
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "args", args)


@dataclass(frozen=True)
class ImplDefined:
    """The spec leaves this element implementation-defined; these are the
    alternatives we know of, by label (e.g. {"all ones": -1, "zero": 0}).
    A backend matching one passes, and the report says which it chose."""

    alternatives: dict
    why: str = ""


INTEGER_OVERFLOW_WHY = ("integer overflow is implementation-defined "
                        "(seed, \"Errors\": \"integer overflows ... result in implementation-defined behavior\")")


def integer_overflow(et, v: int) -> ImplDefined:
    """An integer result outside `et`'s range: the seed's Errors clause makes it
    implementation-defined; two's complement wrap is the alternative we know."""
    return ImplDefined({"two's complement wrap": et.wrap(v)}, why=INTEGER_OVERFLOW_WHY)


class _AnyValue:
    """The alternative "any value": where the spec makes a result
    implementation-defined without naming candidates.  It is never a primary
    value; a backend landing on it passes, and the report counts it."""

    def __repr__(self) -> str:
        return "ANY"


ANY_VALUE = _AnyValue()

Exactly = Fraction  # readability in op modules: Exactly(a) + Exactly(b)


@dataclass(frozen=True)
class RoundTo:
    """`value` (an exact real: Fraction or float) correctly rounded, ties to
    even, into `format` (a spec.types.FloatFormat, possibly not one of the
    spec's element types, as reduce_precision builds).  The rounded value is
    then exactly representable in the result type."""

    format: Any
    value: Any


@dataclass(frozen=True)
class Range:
    """An element known to a range, as accumulating ops give it: the seed
    leaves the order of a reduction implementation-defined (`reduce`: "for
    some binary tree `schedule`"), so a float sum is known to lie in
    [`lo`, `hi`] (exact reals, or ±inf floats) — every allowed schedule
    rounds into [round_down(lo), round_up(hi)] — and `nearest`, the exact
    real result, is what the ULP distance is reported from (spec/schedule.py
    derives both).  In an element answer of `Elementwise` or `Accumulating`
    semantics, a complex element is an (re, im) pair of these."""

    nearest: Any
    lo: Any
    hi: Any


@dataclass
class Choices:
    """One result with implementation-defined elements: `primary` is the
    value the oracle states first; `options[flat index]` lists further
    allowed values of that element (each a scalar of the result's dtype, or
    ANY_VALUE), labelled by `labels[flat index]` (same length) — e.g. the
    values every order of duplicate scatter updates gives.  `why` is the
    spec sentence that opens the choice.  `ranges[flat index]`: a `Range`
    the element lies in, every order of a float sum or product of more
    updates than their orders are enumerated for (the primary value there is
    the exact result rounded)."""

    primary: Any
    options: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    why: str = ""
    ranges: dict = field(default_factory=dict)
