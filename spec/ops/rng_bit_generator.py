"""rng_bit_generator — uniform random bits and an updated state (spec section
"rng_bit_generator").

"The output is guaranteed to be deterministic function of `initial_state`,
but it is not guaranteed to be deterministic between implementations", and
THREE_FRY / PHILOX are "implementation-defined variant[s]" of the published
algorithms.  So no bit is expected: the semantics are `dsl.Statistical`.
`output` must pass the bit tests of spec/statistics.py (per-bit frequency,
symbol frequency, collisions; 1e-9 false alarm per case), and
`output_state` must differ from `initial_state` whenever `output` has
elements (our reading of "an updated output state").

The oracle's own sample is the published algorithm where the seed names
one, laid out on the state as XLA does (found by probing XLA:CPU, and the
seed's own example agrees bit for bit):
* THREE_FRY: Threefry-2x32 with 20 rounds (Random123), key = the two 32-bit
  halves of `state[0]` (low first), counter of block i = `state[1] + i`
  (low word first); the words x0, x1 of each block in order, little-endian,
  fill the output's bits; `output_state = [state[0], state[1] + blocks]`.
* PHILOX: Philox-4x32 with 10 rounds, key = `state[0]`; the 128-bit
  counter is `state[1], state[2]` (low word first) for three-word states
  and `state[1], state[0]` for two-word ones; block i adds i to
  `state[1]`; `output_state` likewise advanced by the blocks used.
* DEFAULT: the seed leaves both the algorithm and the state size to the
  implementation; the oracle uses PHILOX (as XLA:CPU does) for 2 or 3
  words and states nothing for other sizes.  Every DEFAULT case is a
  survey: a backend may refuse any state size and be conformant.
Whether a backend's bits equal the published algorithm's is reported as a
label of each case ("same bits as …"), never scored: the seed allows any
variant.  Determinism (same state, same bits) is promised by the seed but
is not a suite case (a case runs once); tests/spec/test_ops_rng.py checks
it on XLA.

Bits beyond the 32-bit words: elements take the output's bytes in order
(an element of 64 bits is word 2k | word 2k+1 << 32, as XLA lays it out;
of 8 or 16 bits, consecutive bytes; 4-bit types the low nibble of a byte) —
the oracle's choice; XLA packs narrow types otherwise (reported by the
label, not scored).
"""
import numpy as np

from ..dsl import (FLOAT, INTEGER, Attribute, EnumAttr, OpSpec, Scoring, Operand, Or, Result, Sample, Statistical, dim,
                   same_type)
from ..exercise import Exercise
from ..statistics import DEFAULT_ALPHA
from ..types import UI64, from_bits

ALGORITHMS = ("DEFAULT", "THREE_FRY", "PHILOX")
PUBLISHED = {"THREE_FRY": "Threefry-2x32-20 (Random123), XLA's state layout",
             "PHILOX": "Philox-4x32-10 (Random123), XLA's state layout"}
_M32 = np.uint64(0xFFFFFFFF)


def rng_bit_generator_c1(op):
    """(C1) type(`initial_state`) $=$ type(`output_state`)."""
    return same_type(op.initial_state, op.output_state)


def rng_bit_generator_c2(op):
    """(C2) size(`initial_state`) depends on `rng_algorithm`:

    DEFAULT: implementation-defined (any size is accepted here); THREE_FRY:
    2; PHILOX: 2 or 3.  The algorithm is structure (plain Python), the size
    may be symbolic."""
    n = dim(op.initial_state, 0)
    if op.rng_algorithm == "THREE_FRY":
        return n == 2
    if op.rng_algorithm == "PHILOX":
        return Or(n == 2, n == 3)
    return True


def infer(op):
    """`output_state` has the type of `initial_state` (C1); `output` is the program's."""
    return {"output_state": op.initial_state}


# -- the published algorithms (Salmon et al., SC 2011; Random123) -------------

def threefry2x32(key, x0, x1, rounds: int = 20):
    """Threefry-2x32: `key` two 32-bit words, counters x0, x1 (arrays)."""
    rot = (13, 15, 26, 6, 17, 29, 16, 24)
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    ks = (k0, k1, np.uint32(0x1BD11BDA) ^ k0 ^ k1)
    with np.errstate(over="ignore"):
        x0 = np.asarray(x0, np.uint32) + ks[0]
        x1 = np.asarray(x1, np.uint32) + ks[1]
        for r in range(rounds):
            x0 = (x0 + x1).astype(np.uint32)
            x1 = ((x1 << np.uint32(rot[r % 8])) | (x1 >> np.uint32(32 - rot[r % 8]))).astype(np.uint32) ^ x0
            if r % 4 == 3:
                s = (r + 1) // 4
                x0 = (x0 + ks[s % 3]).astype(np.uint32)
                x1 = (x1 + ks[(s + 1) % 3] + np.uint32(s)).astype(np.uint32)
    return x0, x1


def philox4x32(key, c, rounds: int = 10):
    """Philox-4x32: `key` two 32-bit words, counter `c` four word arrays."""
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    c = [np.asarray(x, np.uint64) for x in c]
    with np.errstate(over="ignore"):
        for _ in range(rounds):
            p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
            c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & _M32, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & _M32]
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & _M32, (k1 + np.uint64(0xBB67AE85)) & _M32
    return [x.astype(np.uint32) for x in c]


def _halves(v):
    v = int(v)
    return v & 0xFFFFFFFF, v >> 32


def words(algorithm: str, state, count: int):
    """(`count` 32-bit words, the state after them) of the oracle's generator."""
    s = [int(x) for x in state]
    if algorithm == "THREE_FRY":
        blocks = -(-count // 2)
        ctr = [(s[1] + i) % 2 ** 64 for i in range(blocks)]
        x0, x1 = threefry2x32(_halves(s[0]), [c & 0xFFFFFFFF for c in ctr], [c >> 32 for c in ctr])
        out = np.stack([x0, x1], axis=-1).reshape(-1)
        return out[:count], [s[0], (s[1] + blocks) % 2 ** 64]
    blocks = -(-count // 4)
    hi = s[2] if len(s) == 3 else s[0]
    ctr = [(s[1] + i) % 2 ** 64 for i in range(blocks)]
    carry = [(s[1] + i) >> 64 for i in range(blocks)]
    c = [[x & 0xFFFFFFFF for x in ctr], [x >> 32 for x in ctr],
         [((hi + k) % 2 ** 64) & 0xFFFFFFFF for k in carry], [((hi + k) % 2 ** 64) >> 32 for k in carry]]
    out = np.stack(philox4x32(_halves(s[0]), c), axis=-1).reshape(-1)
    return out[:count], [s[0], (s[1] + blocks) % 2 ** 64] + ([s[2]] if len(s) == 3 else [])


def samples(op, state):
    """The oracle's output and state, and the tests (module docstring)."""
    t = op.output
    et = t.element_type
    n = int(np.prod([int(d) for d in t.shape], dtype=np.int64))
    algorithm = op.rng_algorithm
    if algorithm == "DEFAULT":
        if len(state) not in (2, 3):
            return [Sample(None, {}, "rng_bit_generator: DEFAULT with an implementation-defined state size")] * 2
        algorithm = "PHILOX"
    width = max(8, et.bits)                       # bytes each element takes from the stream
    w, new_state = words(algorithm, state, -(-n * width // 32))
    stream = w.astype("<u4").view(np.uint8)[:n * width // 8]
    bits = stream.view(et.bits_dtype) if width > 8 else stream.copy()
    if et.bits < 8:   # 2- and 4-bit types: the low bits of each byte
        bits = bits & np.uint8((1 << et.bits) - 1)
    values = from_bits(bits.reshape(tuple(int(d) for d in t.shape)), et)
    state_test = {"test": "state", "initial": [int(x) for x in state], "output_elements": n}
    bit_test = {"test": "bits", "alpha": DEFAULT_ALPHA}
    if op.rng_algorithm in PUBLISHED:
        bit_test["published"] = PUBLISHED[op.rng_algorithm]
    return [Sample(np.array(new_state, dtype=np.uint64), state_test), Sample(values, bit_test)]


def survey_reason(op):
    if op.rng_algorithm == "DEFAULT":
        return "DEFAULT: algorithm and state size are implementation-defined (C2)"
    return None


LARGE = 1024   # elements of a large-sample case: the bit tests find a stuck bit from about 100


def large_samples(spec, skels, rng):
    """One large output per published algorithm, state size and a few
    element types (the solved corners stay small): where the bit tests have
    power (bench/statistical_power.py)."""
    from ..symbolic import Skeleton
    from ..types import TensorType, element_type
    for algorithm, size in (("THREE_FRY", 2), ("PHILOX", 2), ("PHILOX", 3)):
        for et_name in ("ui32", "ui64", "f32", "ui8"):
            et = element_type(et_name)
            skel = Skeleton("rng_bit_generator", (UI64,), (("output", et),), (("rng_algorithm", algorithm),))
            state = TensorType((size,), UI64)
            inst = spec.instance({"initial_state": state}, {"rng_algorithm": algorithm},
                                 {"output_state": state, "output": TensorType((LARGE,), et)})
            yield f"large sample ({algorithm}, {size}-word state)", skel, inst


SPEC = OpSpec(
    mnemonic="rng_bit_generator",
    operands=(Operand("initial_state", (UI64,), rank=1),),
    attributes=(Attribute("rng_algorithm", EnumAttr("rng_algorithm", ALGORITHMS), choices=ALGORITHMS),),
    results=(Result("output_state", (UI64,), fixed_rank=1), Result("output", INTEGER + FLOAT, rank=(1, 2, 0, 3))),
    constraints=(rng_bit_generator_c1, rng_bit_generator_c2),
    infer=infer,
    semantics=Statistical(samples),
    result_from_program=("output",),
    shape_from_program=("output",),
    exercise=Exercise(built_corners=large_samples, survey_when=survey_reason),
    scoring=Scoring(alone="the DEFAULT algorithm is the implementation's, which may depend on the module around it"),
)
