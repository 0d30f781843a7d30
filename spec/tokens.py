"""What the token ops share (after_all, infeed, outfeed, send, recv): the token slot and its tests."""
from __future__ import annotations

from .types import TokenType

TOKEN = ()   # the element types of a token slot: none (a tensor there is outside the table)


def is_token(t) -> bool:
    return isinstance(t, TokenType)


def results_of(op) -> list:
    """The spec's `results` (infeed, recv): `op.results` is the Instance's
    own table of outputs, so the spec's name is looked up in it."""
    return op.results.get("results", [])


def last_is_token(op):
    """`type(results[-1]) = token` (infeed C2, recv C3); holds vacuously
    without results (the "size(results) >= 1" rule's violation)."""
    return not results_of(op) or is_token(results_of(op)[-1])


def payload_types(op) -> list:
    """The tensor results an infeed or recv reads (its token left out)."""
    return [t for t in results_of(op) if not is_token(t)]
