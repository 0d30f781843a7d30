"""A region's returns read as canonical expression trees over its arguments.

Some reduction bodies are no pairwise monoid yet compute one known function
whatever the schedule: JAX's argmax (spec/selection.py) and its log-add-exp
(spec/log_add_exp.py).  Each is recognised by comparing the body's returns,
read here as trees, with the trees JAX writes.  Canonical, so that what a
hand-written copy may change without changing the function does not
matter: the operands of symmetric ops are put in one order, GT(x, y) reads
as LT(y, x), and a compare states its type (the element type's default
where the op leaves it out).  TOTALORDER and complex compares are other
orders: not read.
"""
from __future__ import annotations

SYMMETRIC = frozenset({"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
MAX_DEPTH = 12


def legal_compare_types(et) -> tuple:
    from .ops.compare import legal_compare_types as legal   # spec/ops imports spec/schedule, which imports this
    return legal(et)


def arg(k: int) -> tuple:
    return ("arg", k)


def compare(direction: str, ctype: str, x, y) -> tuple:
    if direction in ("GT", "GE"):
        direction, x, y = {"GT": "LT", "GE": "LE"}[direction], y, x
    if direction in ("EQ", "NE"):
        x, y = sorted((x, y), key=repr)
    return ("compare", direction, ctype, x, y)


def op(mnemonic: str, *kids) -> tuple:
    if mnemonic in SYMMETRIC:
        kids = tuple(sorted(kids, key=repr))
    return (mnemonic,) + tuple(kids)


def tree(block, key: str, allowed: frozenset, depth: int = 0):
    """The canonical expression of value `key` of the block, or None where
    it is not made of the block's arguments through compare and the ops
    `allowed` (mnemonics)."""
    if key.startswith("arg") and key[3:].isdigit():
        return arg(int(key[3:]))
    step = next((s for s in block.steps if key in s.results), None)
    if step is None or step.inst is None or depth > MAX_DEPTH or len(step.results) != 1:
        return None
    mnemonic = step.inst.spec.mnemonic
    if mnemonic != "compare" and mnemonic not in allowed:
        return None
    kids = [tree(block, o, allowed, depth + 1) for o in step.operands]
    if any(k is None for k in kids):
        return None
    if mnemonic == "compare":
        if len(kids) != 2:
            return None
        et = step.inst.lhs.element_type
        ctype = step.inst.compare_type or legal_compare_types(et)[0]
        if ctype == "TOTALORDER" or et.is_complex:
            return None
        return compare(step.inst.comparison_direction, ctype, *kids)
    if mnemonic in ("or", "and") and not step.inst.lhs.element_type.is_bool:
        return None
    return op(mnemonic, *kids)


def returns(block, allowed: frozenset) -> tuple | None:
    """Every return of a block without constants or captures, as trees; None
    where one is not such a tree."""
    if block is None or block.constants or block.captures:
        return None
    got = tuple(tree(block, r, allowed) for r in block.returns)
    return None if any(g is None for g in got) else got


def cached(fn, attribute: str, recognise):
    """`recognise(block)` of a region's Function (its reader's block),
    cached on the block as `attribute`; None for a Function without one."""
    block = getattr(fn, "block", None)
    if block is None:
        return None
    got = getattr(block, attribute, False)
    if got is False:
        got = recognise(block)
        try:
            object.__setattr__(block, attribute, got)
        except AttributeError:
            pass
    return got
