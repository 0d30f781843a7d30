"""The survey's inputs: every bit pattern of the narrow types, a stratified sample elsewhere, the complex plane."""
from __future__ import annotations

import zlib

import numpy as np

from ..spec.types import nan_mask
from .ops import EXHAUSTIVE, element_type_named


def _specials(et) -> np.ndarray:
    """±0, the smallest and largest subnormal, the smallest normal, ±1, the
    largest finite, ±inf and NaN (where the format has them): the
    generators' list, read from the format's declaration."""
    from ..generators.values import float_special_bits
    return np.array(float_special_bits(et), dtype=np.uint64)


def stratified(et, size: int, rng: np.random.Generator) -> np.ndarray:
    """About `size` bit patterns: the same count from every binade of both
    signs (each subnormal binade by its leading bit), uniform within it."""
    f = et.format
    mb = f.mantissa_bits
    top = f.max_finite_bits >> mb                                 # the largest finite exponent code
    subnormal_binades = mb if f.has_subnormals else 0
    per = max(1, -(-size // (2 * (top + subnormal_binades))))    # per binade and sign
    parts = []
    for e in range(1 if f.has_zero else 0, top + 1):
        parts.append(np.uint64(e << mb) | rng.integers(0, 1 << mb, 2 * per, dtype=np.uint64))
    for j in range(subnormal_binades):                            # subnormals with leading bit j
        parts.append(np.uint64(1 << j) | rng.integers(0, 1 << j, 2 * per, dtype=np.uint64) if j else
                     np.ones(2 * per, dtype=np.uint64))
    signs = np.repeat(np.array([0, f.sign_mask], dtype=np.uint64), per)   # half of each binade negative
    out = np.concatenate([p | signs for p in parts])
    return out[~nan_mask(out, f)]   # FN formats' all-ones pattern is NaN: keep the draw finite


def _hard(op: str, et, operand: int) -> np.ndarray:
    from ..spec.ops import OPS
    from ..spec.types import to_bits
    ex = OPS[op].exercise
    if ex is None or ex.hard_floats is None:
        return np.zeros(0, dtype=np.uint64)
    try:
        v = np.asarray(ex.hard_floats(et, operand))
    except Exception:   # a family that has nothing for this format
        return np.zeros(0, dtype=np.uint64)
    return to_bits(v.astype(et.numpy), et).astype(np.uint64).reshape(-1)


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("/".join(names).encode())])


def _plane(op: str, et, size: int, rng: np.random.Generator) -> np.ndarray:
    """About `size` complex numbers as (n, 2) component bits: both parts drawn
    by binade (`stratified`), then the branch cuts and axes — a sampled part
    with the other ±0, each way — and every pair of the specials."""
    c = et.component
    re, im = stratified(c, size, rng), stratified(c, size, rng)
    n = min(re.size, im.size)
    plane = np.stack([rng.permutation(re)[:n], rng.permutation(im)[:n]], axis=1)
    x = rng.permutation(re)[:max(1, n // 16)]
    zero, neg_zero = np.zeros_like(x), np.full_like(x, c.format.sign_mask)
    axes = [np.stack(p, axis=1) for p in ((x, zero), (x, neg_zero), (zero, x), (neg_zero, x))]
    sp = np.concatenate([_specials(c), _hard(op, c, 0)])
    s0, s1 = np.meshgrid(sp, sp, indexing="ij")
    return np.concatenate([np.stack([s0.reshape(-1), s1.reshape(-1)], axis=1), *axes, plane])


def _distinct(bits: np.ndarray) -> np.ndarray:
    """np.unique(bits) — the sorted distinct values — by a sort and a
    neighbour comparison: numpy 2.4's np.unique takes 1-3 s on 10^6 integers
    (hashing), the sort 0.1 s."""
    s = np.sort(bits)
    return s[np.concatenate([[True], s[1:] != s[:-1]])] if s.size else s


def survey_inputs(op: str, arity: int, dtype: str, size: int, seed: int) -> np.ndarray:
    """The operands' bit patterns, shape (arity, n) — (arity, n, 2) for complex
    types, (re, im) — unsigned of the (component) type's width."""
    et = element_type_named(dtype)
    rng = _rng(seed, op, dtype)
    if et.is_complex:
        zs = [_plane(op, et, size, rng) for _ in range(arity)]
        n = min(z.shape[0] for z in zs)
        return np.stack([z[:n] for z in zs]).astype(et.bits_dtype)
    f = et.format
    if arity == 1:
        if dtype in EXHAUSTIVE:
            bits = np.arange(1 << f.bits, dtype=np.uint64)
        else:
            bits = _distinct(np.concatenate([stratified(et, size, rng), _specials(et), _hard(op, et, 0)]))
            while bits.size < size:   # the narrow subnormal binades repeat values: draw until `size` distinct
                bits = _distinct(np.concatenate([bits, stratified(et, size - bits.size, rng)]))
        return bits.astype(et.bits_dtype)[None, :]
    if f.bits <= 8:   # every pair of patterns (ops.exhaustive): 256² for 8 bits, 16² for f4E2M1FN
        every = np.arange(1 << f.bits, dtype=np.uint64)
        a, b = np.meshgrid(every, every, indexing="ij")
        return np.stack([a.reshape(-1), b.reshape(-1)]).astype(et.bits_dtype)
    lhs, rhs = stratified(et, size, rng), stratified(et, size, rng)
    n = min(lhs.size, rhs.size)
    lhs, rhs = rng.permutation(lhs)[:n], rng.permutation(rhs)[:n]
    sp = _specials(et)
    h0, h1 = np.concatenate([sp, _hard(op, et, 0)]), np.concatenate([sp, _hard(op, et, 1)])
    c0, c1 = np.meshgrid(h0, h1, indexing="ij")                   # specials and hard values, every pair
    return np.stack([np.concatenate([c0.reshape(-1), lhs]),
                     np.concatenate([c1.reshape(-1), rhs])]).astype(et.bits_dtype)
