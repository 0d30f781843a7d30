"""`shlo-conform run PROGRAM`: one program on several backends, each held against the oracle.

The tool an implementer reaches for when a model misbehaves: any program a
user has (pretty or generic text, bytecode, a `jax.export` portable
artifact), inputs from an `.npz` file or drawn from a seed, and for every
backend and every output the element-wise comparison with what the encoded
spec expects — the same `Expectation` and the same comparison a suite case
gets, so `run` and scoring never disagree.  Backends run isolated in worker
processes (a crash or a hang is a verdict, not the end of the run); the
oracle's expectations are computed here.

What is printed per output: the verdict, the largest ULP distance from the
correctly rounded (or exact) value, the first mismatching flat indices with
both values, and the mismatches counted by cause (suites/causes.py, the
rule scoring uses, input flush included): special-value differences (NaN
lost or invented, ±inf, signed zero, subnormals flushed) and the other
causes but ULP inaccuracy, which the max ULP shows.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .generators import values
from .oracle.reading import MLIR_BYTECODE_MAGIC, WIDER_RESULTS
from .suites.signature import main_signature
from .spec.expectation import Expectation
from .spec.kinds.exact import EXACT
from .spec.types import TensorType, from_bits
from .suites import show
from .suites.compare import compare
from .suites.kinds import Kind, describe, kind_of
from .suites.resolution import Resolution, allowance_used, resolution, resolved_elements
from .suites.records import Case, GridData, TensorValue
from .backends.xla import global_grid
from .spec.grid import MAX_PROCESSES, SINGLE, Grid, stated_in_text

ORACLE = "oracle"


class InputError(ValueError):
    """The program or the inputs cannot be used (one line for exit 2)."""


# Exit codes of `run` (README, "When a model misbehaves"); 2 is a usage or input error (cli.UsageError).
AGREES, DISAGREES, INCONCLUSIVE, NO_VERDICT = 0, 1, 3, 4


@dataclass
class OutputReport:
    index: int
    type: TensorType
    ok: bool                     # inside the expectation (every element, alternatives included)
    detail: str
    max_ulp: float | None
    specials: Counter = field(default_factory=Counter)
    process: int | None = None   # on a grid: the flattened id of the process whose output this is
    resolution: Resolution | None = None   # how much the expectation decides (suites/resolution.py)
    used: float | None = None    # the largest fraction of its enclosure an element used (allowance_used), or a
                                 # property's ratio over its threshold (`Comparison.used`)
    used_words: str = Kind.used_words   # how `used` reads (the kind's)
    ulp_measures: bool = True    # False: the oracle's value is one correct answer of many (kind.ulp_measures)

    @property
    def status(self) -> str:
        """The output's verdict: "agrees" only when the expectation was
        narrow enough to tell a wrong answer from a right one."""
        if not self.ok:
            return "DISAGREES"
        if self.resolution is not None and self.resolution.all_unchecked:
            return "UNCHECKED"
        if self.resolution is not None and not self.resolution.conclusive:
            return "INCONCLUSIVE"
        return "agrees"


@dataclass
class BackendReport:
    name: str
    verdict: str
    detail: str = ""
    describe: str = ""
    outputs: list = field(default_factory=list)   # OutputReport per output, when there is an expectation
    raw: list | None = None                      # the backend's arrays

    @property
    def agrees(self) -> bool:
        return self.verdict == "pass" and all(o.status == "agrees" for o in self.outputs)

    def exit_code(self, judged: bool) -> int:
        """This backend's share of `run`'s exit status (`AGREES` … `NO_VERDICT`);
        `judged`: the oracle stated what the outputs must be."""
        if self.verdict in ("timeout", "unsupported") or (self.verdict in ("rejected", "fail") and not judged):
            return NO_VERDICT   # slow, declared away, or refusing or failing (out of memory) what nobody
            #                     can judge: not shown wrong — a crash still is (the process died)
        if self.verdict not in ("pass", "ran") or any(o.status == "DISAGREES" for o in self.outputs):
            return DISAGREES
        if any(o.status in ("UNCHECKED", "INCONCLUSIVE") for o in self.outputs):
            return INCONCLUSIVE
        return AGREES


# --------------------------------------------------------------------------
# Program and inputs
# --------------------------------------------------------------------------

def read_source(path: str) -> bytes:
    """The program file's bytes (nothing is parsed in this process)."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read program {path}: {e.strerror or e}") from None


@dataclass
class Prepared:
    """What the isolated reader found: the program's form, the text backends
    compile, @main's types, and what the oracle will need (`cost`, or why
    it cannot say)."""
    form: str
    text: str
    types: list
    results: list
    cost: object = None          # oracle.cost.Cost
    cost_why: str = ""           # why there is no cost: the encoded spec rejects the program, …
    legalized: dict = field(default_factory=dict)   # CHLO ops decomposed before judging {name: count}
    chlo_judged: dict = field(default_factory=dict)  # CHLO ops judged by their meaning (spec/chlo) {name: count}
    widened: dict = field(default_factory=dict)      # ops read with their operands converted to a wider result type
    refusal: str = ""            # a user error (exit 2): not MLIR, no @main, …
    grid: Grid = SINGLE          # the process grid it runs on: the module's mhlo.num_replicas/num_partitions,
                                 # else --replicas/--partitions, else 1×1
    manual: dict | None = None   # the mesh of @main's sdy.manual_computation (shard_map, pmap): per-process
                                 # inputs and outputs are the shards its body takes and gives
    partitioned: Grid | None = None   # a jit with shardings over these devices: one global computation
                                      # (backends/xla.py `global_grid`), judged as one process


_PARSED: dict = {}   # in the job process: the oracle's parse of the last program, for `expectations`


def prepare(data: bytes, grid: Grid | None = None) -> Prepared:
    """Read a program (runs in the isolated job process: MLIR's parser and
    the oracle's reader may die or recurse on a hostile program): its form,
    the text for the backends, @main's types, the process grid (`grid`:
    the one asked for, None when none is) and the oracle's cost."""
    from .oracle.reading import SyntaxRejected, from_bytecode
    if data.startswith(MLIR_BYTECODE_MAGIC):
        try:
            text = from_bytecode(data)
        except SyntaxRejected as e:
            return Prepared("", "", [], [], refusal=str(e))
        form = "portable artifact" if b"StableHLO" in data[:32] else "MLIR bytecode"
        source = data
    else:
        try:
            text = source = data.decode()
            form = "text"
        except UnicodeDecodeError:
            module = exported_module(data)
            if module is None:
                return Prepared("", "", [], [], refusal="is neither MLIR text, MLIR bytecode nor a serialized "
                                                        "jax.export Exported")
            return prepare_module(module, data, "jax.export Exported.serialize()", grid)
    return _prepared(source, text, form, data, grid)


def exported_module(data: bytes) -> bytes | None:
    """The StableHLO bytecode inside `jax.export`'s serialized `Exported`
    (`Exported.serialize()`: a flatbuffer with the module, its shapes,
    platforms and device count), or None when `data` is not one."""
    try:
        from jax import export
        return bytes(export.deserialize(bytearray(data)).mlir_module_serialized)
    except Exception:   # not a flatbuffer of jax's schema (or no jax): not an Exported
        return None


def prepare_module(module: bytes, data: bytes, form: str, grid: Grid | None = None) -> "Prepared":
    from .oracle.reading import SyntaxRejected, from_bytecode
    try:
        text = from_bytecode(module)
    except SyntaxRejected as e:
        return Prepared("", "", [], [], refusal=str(e))
    return _prepared(module, text, form, data, grid)


def _prepared(source, text: str, form: str, data: bytes, grid: Grid | None = None) -> "Prepared":
    """@main's types and the oracle's cost of a program read as `text`
    (backends) and `source` (the oracle); `data` keys the oracle's parse."""
    from .oracle.cost import program_cost
    from .oracle.program import CannotJudge, ProgramRejected, parse_program
    from .oracle.reading import SyntaxRejected, VerifierRejected, main_types
    try:
        types, results = main_types(text)
    except (SyntaxRejected, VerifierRejected) as e:
        return Prepared(form, text, [], [], refusal=f"cannot read @main's signature: {e}")
    prep = Prepared(form, text, types, results)
    stated = stated_in_text(text)
    if isinstance(stated, str):
        return Prepared(form, text, [], [], refusal=stated)
    partitioned = _read_globally(text, grid)
    if partitioned is not None:
        prep.partitioned, stated, grid = partitioned, None, SINGLE
    if stated is not None and grid is not None and stated != grid:
        return Prepared(form, text, [], [], refusal=f"the module states a {stated} grid (mhlo.num_replicas × "
                                                     f"mhlo.num_partitions); --replicas/--partitions ask for {grid}")
    prep.grid = stated or grid or SINGLE
    if prep.grid.size > MAX_PROCESSES:
        return Prepared(form, text, [], [], refusal=f"a {prep.grid} grid is {prep.grid.size} processes; "
                                                     f"run takes at most {MAX_PROCESSES}")
    try:
        # a jit with shardings keeps the mesh its module states (it holds no collective to check against it)
        program = parse_program(source, None if prep.partitioned else prep.grid, wider_results=True)
    except CannotJudge as e:
        prep.cost_why = f"cannot judge {e.op}: {e}"
        return prep
    except ProgramRejected as e:
        prep.cost_why = f"the encoded spec rejects the program: {e}"
        return prep
    prep.legalized = dict(program.legalized)
    prep.chlo_judged = dict(program.chlo_judged)
    prep.widened = dict(program.widened)
    if program.manual is not None:   # shard_map / pmap: each process's inputs and outputs are its shards
        prep.types, prep.results = [t for _, t in program.args], list(program.return_types)
        prep.manual = program.manual
    _PARSED.clear()
    _PARSED[_key(data, prep.grid)] = program
    _PARSED["source"] = source
    prep.cost = program_cost(program, affine=True)   # run's expectations carry affine forms
    return prep


def _read_globally(text: str, asked: Grid | None) -> Grid | None:
    """The devices of a jit with shardings (backends/xla.py `global_grid`)
    when `run` judges it as one global computation — its mesh a layout, as
    JAX reads it — which it does unless a grid is asked for (the spec's
    reading: every process runs @main on the whole arrays); else None."""
    partitioned = global_grid(text)
    return partitioned if partitioned is not None and (asked is None or asked.size == 1) else None


def _key(data: bytes, grid: Grid) -> tuple:
    return hashlib.sha256(data).hexdigest(), grid


def grid_expectations(data: bytes, grid: Grid, inputs: list) -> tuple[list | None, str]:
    """Each process's expectations on a grid (`inputs`: per process, in
    flattened id order), or None and why there are none (the isolated job
    process, after `prepare`)."""
    from .generators.expect import ProgramRejected, Unspecified
    from .oracle.grid import execute_on_grid
    program = _PARSED.get(_key(data, grid))
    if program is None:
        return None, "the program was not read for this grid"
    try:
        return execute_on_grid(program, grid, [list(x) for x in inputs]), ""
    except ProgramRejected as e:   # CannotJudge too: processes that cannot meet at a collective
        what = "the processes disagree" if getattr(e, "disagreement", False) else "the encoded spec rejects the program"
        return None, f"{what}: {e}"
    except Unspecified as e:
        return None, f"the spec states no result for these inputs: {e}"


def expectations(data: bytes, inputs: list) -> tuple[list[Expectation] | None, str]:
    """The oracle's expectations for `inputs`, or None and why it has none
    (runs in the isolated job process, after `prepare`)."""
    from .generators.expect import ProgramRejected, Unspecified, expected_outputs
    from .oracle import affine
    from .oracle.program import execute
    program = _PARSED.get(_key(data, SINGLE))
    try:
        with affine.enable():   # a program's errors tracked with their correlations (oracle/affine.py)
            if program is not None:
                return execute(program, list(inputs)), ""
            source = data if data.startswith(MLIR_BYTECODE_MAGIC) else exported_module(data) or data.decode()
            return expected_outputs(source, inputs), ""
    except ProgramRejected as e:
        return None, f"the encoded spec rejects the program: {e}"
    except Unspecified as e:
        return None, f"the spec states no result for these inputs: {e}"


def width_origins(data: bytes, inputs: list, outputs: list[int]) -> dict:
    """{output: the line saying where its width starts} for the
    inconclusive `outputs` (shlo_conform/width_origin.py: one more run of
    the program, watching its steps; runs in the isolated job process,
    after `prepare`).  A grid's or a manual computation's programs get none."""
    from .generators.expect import ProgramRejected, Unspecified
    from .width_origin import origin
    if _key(data, SINGLE) not in _PARSED:   # a job process started afresh (an earlier job ran past its time)
        prepare(data)
    program = _PARSED.get(_key(data, SINGLE))
    found = {}
    for k in outputs if program is not None and program.manual is None else ():
        try:
            o = origin(program, list(inputs), k)
        except (ProgramRejected, Unspecified):
            continue
        if o is not None:
            found[k] = o.describe()
    return found


def rewritten_programs(text: str) -> list[tuple[str, str, int, str]]:
    """(name, what was computed instead, sites, the rewritten program's
    text) for each known compiler rewrite (oracle/rewrites.py) that changes
    `text` (runs in the isolated job process: MLIR's parser)."""
    from .oracle.rewrites import rewritten
    return [(rw.name, rw.says, sites, changed) for rw, changed, sites in rewritten(text)]


def rewritten_expectation(changed: str, inputs: list, name: str = "") -> list | None:
    """The oracle's expectations for one rewritten program (by the rewrite
    `name`: oracle/rewrites.py `tolerant`), None where the oracle cannot
    judge it (runs in the isolated job process)."""
    from .generators.expect import ProgramRejected, Unspecified
    from .oracle.program import execute, parse_program
    from .oracle.rewrites import tolerant
    try:
        return tolerant(name, execute(parse_program(changed, wider_results=True), list(inputs)))
    except (ProgramRejected, Unspecified):
        return None


WITHIN = "inside the rewritten program's enclosure, no wider than the spec's"


class RewriteSearch:
    """The rewritten programs' expectations, judged only as far as someone
    reads: `_name_rewrites` stops asking once every failing element of an
    output is named, so a failure the first rows explain costs no oracle
    run of the others (each one a run of the whole program).  Iterating
    yields the judged rows in REWRITES order, each judged once (shared by
    every backend of the run); `judge(i, row)` gives the row's (name, says,
    sites, expectations), None where its program could not be judged, or
    False to stop (the time box: it says so itself)."""

    def __init__(self, todo: list, judge):
        self.todo, self.judge, self.judged, self.done = list(todo), judge, [], False

    def __bool__(self) -> bool:
        return bool(self.todo)

    def __iter__(self):
        k = 0
        while True:
            while k >= len(self.judged) and not self.done:
                i = len(self.judged)
                if i >= len(self.todo):
                    self.done = True
                    break
                got = self.judge(i, self.todo[i])
                if got is False:
                    self.done = True
                    break
                self.judged.append(got)
            if k >= len(self.judged):
                return
            if self.judged[k] is not None:
                yield self.judged[k]
            k += 1


def _name_rewrites(reports: list, exps: list, outputs: list, rewrites: list, failing: list | None = None) -> None:
    """Failing elements that equal the rewritten program's value bit for bit
    (NaN for NaN) get the rewrite's name as their cause
    (`OutputReport.specials`), the first rewrite that explains an element
    winning.  Bit for bit, not "inside its expectation": a rewritten
    program's enclosure can be wide, and a cause is a claim about what was
    computed.  Where an approximate op follows the rewrite (a linspace's
    division, then a tanh), no backend's bits are the oracle's; an element
    still unexplained that lies inside the rewritten program's enclosure,
    where that enclosure is no wider than the spec's own (`_as_narrow`), is
    named with the rewrite, saying so (`WITHIN`).  An element so named
    leaves the element-level cause it was counted under (a "wrong choice"
    of an element with alternatives, a "signed zero"): one cause per
    element, as the suite counts (`failing`: each output's (indices,
    causes) from `compare`)."""
    from .suites.compare import matches
    for k, (r, exp, actual) in enumerate(zip(reports, exps, outputs)):
        if r.ok or not kind_of(exp).element_wise:
            continue
        left = ~matches(exp, actual)
        named = np.zeros(left.shape, dtype=bool)
        for within in (False, True):
            rows = iter(rewrites)
            # every failing element named: the later rows are not asked for, so not judged at all
            while left.any() and (row := next(rows, None)) is not None:
                name, says, _, rw_exps = row
                rw = rw_exps[r.index]
                if rw.type != exp.type:
                    continue
                if within:
                    explained = left & matches(rw, actual) & _as_narrow(rw, exp, left.size) \
                        & _shifted(rw, exp, actual, left.size) & _zero_sign_kept(rw, actual)
                else:
                    explained = left & matches(Expectation(rw.type, rw.bits, EXACT.name), actual)
                if explained.any():
                    r.specials[f"{says} ({name}{'; ' + WITHIN if within else ''})"] += int(explained.sum())
                    left &= ~explained
                    named |= explained
        if failing is not None and named.any():
            _uncount(r.specials, *failing[k], named.reshape(-1))


def _uncount(specials: Counter, indices, causes: list, named: np.ndarray) -> None:
    """The element-level causes of the elements a rewrite named taken out of
    `specials` (the worded counts `_worded` made of them)."""
    for i, cause in zip(np.asarray(indices, dtype=np.int64).tolist(), causes):
        word = SPECIAL_KINDS.get(cause, cause)
        if named[i] and cause != "out of tolerance" and specials.get(word, 0) > 0:
            specials[word] -= 1
            if not specials[word]:
                del specials[word]


def _shifted(rw: Expectation, exp: Expectation, actual, n: int) -> np.ndarray:
    """Per element: within the spec's own half-width (in ordinals, plus one)
    of the rewritten enclosure's middle — what the rewrite moved, not what
    it widened.  A rewritten enclosure up to twice as wide (`_as_narrow`)
    held a 1 %-scaled backend's elements just past the spec's edge of a
    whitening's ±1 % range, and named them a reciprocal multiplication."""
    from .spec.kinds import flat_ordinals
    from .spec.types import to_bits
    got = [kind_of(e).admits(e) for e in (rw, exp)]
    if any(g is None or len(g[0]) != n for g in got):
        return np.zeros(n, dtype=bool)
    (rl, rh), (el, eh) = ((np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)) for lo, hi in got)
    try:
        x = flat_ordinals(to_bits(np.asarray(actual), exp.type.element_type), exp).astype(np.float64)
    except (TypeError, ValueError):
        return np.zeros(n, dtype=bool)
    if x.size != n:
        return np.zeros(n, dtype=bool)
    return np.abs(x - (rl + rh) / 2) <= (eh - el) / 2 + 1


def _zero_sign_kept(rw: Expectation, actual) -> np.ndarray:
    """Per element (flat, as `matches`): not a zero whose sign differs from
    the rewritten program's value.  A range from 0 to 0 admits −0 too, so a negated
    output's −0 where the spec states +0 (pow(huge, −huge)) lay "inside"
    the flushed program's enclosure and was named a flush; a rewrite that
    gives +0 there explains no −0."""
    got = np.asarray(actual).reshape(-1)
    want = np.asarray(rw.array()).reshape(-1)
    try:
        zero = (got == 0) & (want == 0)
        return ~zero | (np.signbit(got) == np.signbit(want))
    except TypeError:   # a type without a sign of zero to compare (integers, complex parts): nothing to flip
        return np.ones(got.shape, dtype=bool)


def _as_narrow(rw: Expectation, exp: Expectation, n: int) -> np.ndarray:
    """Per element: is the rewritten program's allowed range at most twice
    the original's, plus one ulp (an element's ordinals, real types only),
    and itself resolved (within RESOLVED relative: suites/resolution.py)?
    A wide enclosure of a rewritten program would explain anything — a
    negated output's elements near zero, inside an enclosure of ±10^4 %
    that the rewrite merely shifted, are no sign of the rewrite."""
    got = [kind_of(e).admits(e) for e in (rw, exp)]
    resolved = resolved_elements(rw)
    if any(g is None or len(g[0]) != n for g in got) or resolved is None or len(resolved) != n:
        return np.zeros(n, dtype=bool)
    (rl, rh), (el, eh) = got
    return np.asarray((rh - rl) <= 2 * (eh - el) + 1, dtype=bool) & resolved


def fallback_signature(data: bytes) -> tuple[list, list] | None:
    """@main's types read from the text alone (suites/signature.py), for a
    program whose parse killed the reader: the backends can still run."""
    try:
        return main_signature(data.decode())
    except UnicodeDecodeError:
        return None


def random_inputs(types: list[TensorType], seed: int, special_fraction: float,
                  draw: str = values.RUN_DRAW) -> list[np.ndarray]:
    """Inputs drawn from a seed: values of each type as `draw` names them
    (generators/values.DRAWS), specials at the given share."""
    rng = np.random.default_rng(seed)
    return [values.fill(t.element_type, tuple(t.shape), rng, special_fraction=special_fraction,
                        draw=values.DRAWS[draw].values) for t in types]


def random_grid_inputs(types: list[TensorType], seed: int, special_fraction: float, grid: Grid,
                       draw: str = values.RUN_DRAW) -> list[list]:
    """Each process's inputs (flattened id order) drawn from (seed, flattened id)."""
    out = []
    for i in range(grid.size):
        rng = np.random.default_rng([seed, i])
        out.append([values.fill(t.element_type, tuple(t.shape), rng, special_fraction=special_fraction,
                                draw=values.DRAWS[draw].values) for t in types])
    return out


def npz_grid_inputs(path: str, types: list[TensorType], grid: Grid) -> list[list[np.ndarray]]:
    """Each process's inputs from one .npz file: `arg<k>@<i>` is argument k
    of the process of flattened id i (replica_id * num_partitions +
    partition_id); a bare `arg<k>` (or `arr_<k>`) is argument k of every
    process that has no `arg<k>@<i>` of its own.  Each array is checked as
    `npz_inputs` checks one (shape, element type or raw bits); a name that
    fits no argument or no process, or an argument a process lacks, is
    one line (exit 2)."""
    import zipfile
    npz_inputs(path, [], check_only=True)
    with zipfile.ZipFile(path) as z:
        names = [i.filename[:-4] for i in z.infolist()]
    per_name = re.compile(r"(arg\d+)@(\d+)")
    for name in names:
        m = per_name.fullmatch(name)
        if m is not None:
            k, i = int(m.group(1)[3:]), int(m.group(2))
            if k >= len(types) or i >= grid.size:
                raise InputError(f"--inputs {path}: {name} fits no " + ("argument of @main" if k >= len(types) else
                                 f"process: the {grid} grid has flattened ids 0..{grid.size - 1}"))
        elif not re.fullmatch(r"(arg|arr_)\d+", name) or int(re.sub(r"\D", "", name)) >= len(types):
            raise InputError(f"--inputs {path}: array {name} matches no argument of @main ({len(types)} arguments; "
                             "per process: arg<k>@<flattened id>)")
    out = []
    for i in range(grid.size):
        picked = {}
        for k in range(len(types)):
            own = f"arg{k}@{i}"
            shared = next((n for n in (f"arg{k}", f"arr_{k}") if n in names), None)
            if own not in names and shared is None:
                raise InputError(f"--inputs {path}: no array {own} (argument {k} of process {i}) nor arg{k} for "
                                 "every process")
            picked[k] = own if own in names else shared
        try:
            out.append(npz_inputs(path, types, members=[picked[k] for k in range(len(types))]))
        except InputError as e:
            if " has shape " not in str(e) or "@" in str(e).split(" has shape ")[0]:
                raise
            raise InputError(f"{e} — on the {grid} grid an array given once goes whole to every process; give "
                             "each process its own (its shard) as arg<k>@<flattened id>") from None
    return out


ZIP_MAGIC, NPY_MAGIC = b"PK\x03\x04", b"\x93NUMPY"


def npz_inputs(path: str, types: list[TensorType], members: list[str] | None = None,
               check_only: bool = False) -> list[np.ndarray]:
    """Inputs from an .npz file: `arg0`, `arg1`, … or numpy's `arr_0`, `arr_1`, …,
    each of @main's shape and element type exactly — or unsigned integers of
    the type's storage width, read as its raw bits (how bf16/f8 travel
    through numpy's file format).  Each member's header is read and checked
    against @main before its data: a header that claims 10^11 elements is
    refused by its shape, never allocated; a damaged file, a member that is
    not an array, or an .npy file is one line naming the problem."""
    import zipfile
    import zlib
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise InputError(f"--inputs {path}: cannot read it ({e.strerror or e})") from None
    if head.startswith(NPY_MAGIC):
        raise InputError(f"--inputs {path}: is an .npy file (one array); give an .npz file "
                         f"(np.savez(path, arg0=…, arg1=…))")
    if not head.startswith(ZIP_MAGIC):
        raise InputError(f"--inputs {path}: not an .npz file (no zip archive)")
    try:
        with zipfile.ZipFile(path) as z:
            named = {}
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    raise InputError(f"--inputs {path}: member {info.filename!r} is not an array (.npy)")
                named[info.filename[:-4]] = info
            if check_only:
                return []
            return _npz_members(path, z, named, types, members)
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
        raise InputError(f"--inputs {path}: a damaged .npz file ({type(e).__name__}: {e})") from None


def npy_header(f) -> tuple:
    """(shape, fortran_order, dtype) of an open .npy member, read from its
    header alone (the data stays unread: a model's arrays may be large);
    ValueError for a format version other than 1.0 and 2.0."""
    version = np.lib.format.read_magic(f)
    read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read is None:
        raise ValueError(f".npy format version {version} is not read here (1.0 and 2.0 are)")
    return read(f)


def _npz_members(path: str, z, members: dict, types: list[TensorType], chosen: list[str] | None = None) -> list:
    out = []
    for i, t in enumerate(types):
        name = chosen[i] if chosen is not None else f"arg{i}" if f"arg{i}" in members else f"arr_{i}"
        info = members.get(name)
        if info is None:
            raise InputError(f"--inputs {path}: no array arg{i} (or arr_{i}) for argument {i} of type {t.mlir}")
        et = t.element_type
        with z.open(info) as f:
            try:
                shape, fortran, dtype = npy_header(f)
            except ValueError as e:
                raise InputError(f"--inputs {path}: {name} is not a readable array ({e})") from None
            want = tuple(t.shape) + ((2,) if et.is_complex and dtype.kind == "u" else ())
            if tuple(shape) != want:
                raise InputError(f"--inputs {path}: {name} has shape {tuple(shape)}, @main takes {t.mlir}")
            if dtype not in (np.dtype(et.numpy), et.bits_dtype) and dtype.kind == "V":
                raise InputError(f"--inputs {path}: {name} is {dtype}, raw bytes: an .npz cannot hold "
                                 f"{np.dtype(et.numpy).name} (@main takes {t.mlir}); save its raw bits instead, "
                                 f"np.savez(…, {name}=a.view(np.{et.bits_dtype.name}))")
            if dtype not in (np.dtype(et.numpy), et.bits_dtype):
                raise InputError(f"--inputs {path}: {name} is {dtype}, @main takes {t.mlir} "
                                 f"(give {np.dtype(et.numpy).name} values or {et.bits_dtype.name} raw bits)")
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            raw = f.read(size)
            if len(raw) != size:
                raise InputError(f"--inputs {path}: {name} is truncated ({len(raw)} of {size} bytes)")
        a = np.frombuffer(raw, dtype=dtype)
        a = (a.reshape(shape[::-1]).T if fortran else a.reshape(shape)).copy()
        out.append(a if dtype == np.dtype(et.numpy) else from_bits(a, et))
    used = {f"arg{i}" for i in range(len(types))} | {f"arr_{i}" for i in range(len(types))}
    extra = sorted(set(members) - used) if chosen is None else []
    if extra:
        raise InputError(f"--inputs {path}: arrays {', '.join(extra)} match no argument of @main "
                         f"({len(types)} arguments)")
    return out


# --------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------

SPECIAL_KINDS = {"NaN lost": "NaN expected, a number returned", "NaN invented": "a number expected, NaN returned",
                 "infinity": "infinity differs", "signed zero": "signed zero differs",
                 "subnormal flushed": "subnormal flushed to zero"}


def special_differences(exp: Expectation, actual: np.ndarray, flushed: Expectation | None = None) -> Counter:
    """Mismatching elements by cause, the suite's rule (suites/causes.py via
    `compare`): special-value differences under `SPECIAL_KINDS`' wording,
    other causes but "out of tolerance" (the inaccuracy the max ULP shows)
    under their names.  `flushed`: the expectation on the inputs with their
    subnormals read as zeros, so an input flush (0 × inf = NaN where the
    subnormal input times inf is inf) is named as one, not as NaN invented."""
    try:
        return _worded(compare(exp, actual, flushed).causes)
    except (TypeError, ValueError):
        return Counter()


def _worded(causes: dict) -> Counter:
    return Counter({SPECIAL_KINDS.get(c, c): n for c, n in causes.items() if c != "out of tolerance"})


def judge_outputs(expected: list[Expectation], outputs: list, case: Case | None = None,
                  flushed_for=None, rewrites_for=None) -> list[OutputReport]:
    """Each output against its expectation.  With `case` (the program and
    its inputs), failing outputs of inputs that hold subnormals are held
    against the oracle's result on the flushed inputs too (input_flush.py),
    as scoring does — computed by `flushed_for(case)` where given (`run`:
    in the oracle's isolated job process), else here."""
    reports, flushed, failing = [], False, []
    for k, (exp, actual) in enumerate(zip(expected, outputs)):
        cmp = compare(exp, actual)
        if not cmp.ok and case is not None and cmp.causes:
            if flushed is False:
                from .pipeline.input_flush import flushed_expectations
                flushed = (flushed_for or flushed_expectations)(case)
            if flushed is not None:
                cmp = compare(exp, actual, flushed[k])
        specials = _worded(cmp.causes) if not cmp.ok else Counter()
        failing.append(cmp.failing)
        kind = kind_of(exp)
        used = (cmp.used if cmp.used is not None else _used(exp, actual)) if cmp.ok else None
        reports.append(OutputReport(k, exp.type, cmp.ok, cmp.detail, cmp.max_ulp, specials,
                                    resolution=resolution(exp), used=used, used_words=kind.used_words,
                                    ulp_measures=kind.ulp_measures))
    if rewrites_for is not None and case is not None and any(not r.ok for r in reports):
        rewrites = rewrites_for(case)   # the program with each known rewrite, judged: what failed may be one
        if rewrites:
            _name_rewrites(reports, expected, outputs, rewrites, failing)
    return reports


def run_backends(text: str, inputs: list, types: list, backends: list[str], expected: list | None,
                 timeout: float, flushed_for=None, grid: Grid = SINGLE, rewrites_for=None) -> list[BackendReport]:
    """Each backend in its own worker, with the runner's isolation and
    verdicts; what differs on a grid of several processes (inputs and
    expectations per process, `Backend.run_grid`, each output held against
    its process's expectation) is the run mode's (`run_mode`)."""
    from .pipeline.runner import Runner
    mode = run_mode(grid)
    case = mode.case(text, inputs, types, expected)
    out = []
    for name in backends:
        if name == ORACLE:
            continue
        runner = Runner(name, run_timeout=timeout, keep_outputs=True)
        [v] = runner.run([case])
        outs = (runner.outputs or {}).get(case.id)
        ran = expected is None and outs is not None   # no expectation to hold the outputs to
        rep = BackendReport(name, "ran" if ran else v.verdict, "" if ran else v.detail, runner.describe or name)
        if outs is not None and expected is not None:
            rep.outputs = mode.judge(expected, outs, case, flushed_for, rewrites_for)
        rep.raw = outs
        out.append(rep)
    return out


class OneProcess:
    """How `run` runs a program on one process: inputs drawn or read for
    @main, the oracle's `expectations` job, the backends' outputs held
    against them.  `OnGrid` is the same on a process grid; `run_mode`
    picks one, so the command asks its mode instead of testing the grid's
    size in each place (as pipeline/modes.py does for scoring)."""

    size = 1
    expectations_job = "shlo_conform.differential:expectations"

    def __init__(self, grid: Grid = SINGLE):
        self.grid = grid

    def random_inputs(self, types, seed: int, special_fraction: float, draw: str) -> list:
        return random_inputs(types, seed, special_fraction, draw)

    def npz_inputs(self, path: str, types) -> list:
        return npz_inputs(path, types)

    def inputs_words(self, npz: bool) -> str:
        return ""

    def expectations_args(self, data: bytes, inputs) -> tuple:
        return data, inputs

    def case(self, text: str, inputs, types, expected) -> Case:
        tvs = [TensorValue.of(a, t) for a, t in zip(inputs, types)]
        return Case(id="run/program/0", op="program", dtype=types[0].element_type.name if types else "none",
                    kind="value", mlir=text, inputs=tvs, expected=expected or [])

    def judge(self, expected, outs, case, flushed_for, rewrites_for) -> list[OutputReport]:
        if len(outs) != len(expected):
            return []
        return judge_outputs(expected, outs, case, flushed_for, rewrites_for)

    def per_process(self, x) -> list:
        """Values that are one per process on a grid, as a list over processes."""
        return [x]


class OnGrid(OneProcess):
    """`run` on a process grid: each process's inputs (flattened id order)
    from (seed, id) or `arg<k>@<id>`, the oracle's `grid_expectations`,
    and each output judged against its own process's expectation."""

    expectations_job = "shlo_conform.differential:grid_expectations"

    @property
    def size(self) -> int:
        return self.grid.size

    def random_inputs(self, types, seed: int, special_fraction: float, draw: str) -> list:
        return random_grid_inputs(types, seed, special_fraction, self.grid, draw)

    def npz_inputs(self, path: str, types) -> list:
        return npz_grid_inputs(path, types, self.grid)

    def inputs_words(self, npz: bool) -> str:
        return " (arg<k>@<flattened id> per process, arg<k> for all)" if npz else \
            " (each process from (seed, its flattened id))"

    def expectations_args(self, data: bytes, inputs) -> tuple:
        return data, self.grid, inputs

    def case(self, text: str, inputs, types, expected) -> Case:
        per_tvs = [[TensorValue.of(a, t) for a, t in zip(per, types)] for per in inputs]
        data = GridData(self.grid.num_replicas, self.grid.num_partitions, per_tvs,
                        expected or [[] for _ in per_tvs])
        return Case(id="run/program/0", op="program", dtype=types[0].element_type.name if types else "none",
                    kind="value", mlir=text, inputs=[], expected=[], grid=data)

    def judge(self, expected, outs, case, flushed_for, rewrites_for) -> list[OutputReport]:
        if len(outs) != self.size or any(len(o) != len(e) for o, e in zip(outs, expected)):
            return []
        reports = []
        for i, (exp, got) in enumerate(zip(expected, outs)):
            for r in judge_outputs(exp, got):
                r.process = i
                reports.append(r)
        return reports

    def per_process(self, x) -> list:
        return x


def run_mode(grid: Grid | None) -> OneProcess:
    """The run mode of a program on `grid` (one process where it is one)."""
    grid = grid or SINGLE
    return OnGrid(grid) if grid.size > 1 else OneProcess(grid)


def _process(i: int, grid: Grid) -> str:
    r, p = divmod(i, grid.num_partitions)
    return f"process {i} (replica {r}, partition {p})"


def render(path: str, form: str, types: list, how: str, expected: list | None, why_none: str,
           reports: list[BackendReport], oracle_asked: bool, need: str = "", legalized: dict | None = None,
           grid: Grid = SINGLE, chlo_judged: dict | None = None, limit: str = "",
           origins: dict | None = None, notes: list | None = None, widened: dict | None = None) -> str:
    """`run`'s text.  On a grid, `expected` and each report's raw outputs
    hold one list per process and each process is headed and indented
    under the line that owns it; one process is the same text without the
    headings.  `origins`: {output: where its width starts} for the
    inconclusive ones (`width_origins`); `notes`: lines on how the causes
    were searched (a search stopped at its time box)."""
    lines = [f"program  {path} ({form}); @main({', '.join(t.mlir for t in types)})", f"inputs   {how}"]
    mode = run_mode(grid)
    many = mode.size > 1
    if many:
        lines.insert(1, f"grid     {grid.num_replicas} replica(s) × {grid.num_partitions} partition(s): {grid.size} "
                        "processes, listed in flattened id order")
    pad = "  " if many else ""

    def head(i: int) -> list:
        return [f"  {_process(i, grid)}"] if many else []

    if chlo_judged:
        lines.append("chlo     judged as mathematics (spec/chlo: each op's declared meaning — functions correctly "
                     "rounded, with spec/accuracy.py's ULP tolerance): " + ", ".join(f"{op} x{n}" for op, n in sorted(chlo_judged.items())))
    if legalized:
        lines.append("chlo     legalized into StableHLO before judging (jaxlib's chlo-legalize-to-stablehlo; "
                     "the interpreter runs the same decomposition, XLA keeps some as its own ops): "
                     + ", ".join(f"{op} x{n}" for op, n in sorted(legalized.items())))
    for op, n in sorted((widened or {}).items()):
        lines.append(f"reading  {op} x{n}: {WIDER_RESULTS[op]}")
    if expected is None:
        lines.append(f"oracle   cannot judge: {why_none}" + (f" ({need})" if need else ""))
    else:
        per_process = mode.per_process(expected)
        lines.append(f"oracle   {len(per_process[0]) if per_process else 0} output(s)"
                     + (" per process" if many else "") + (f"; {need}" if need else ""))
        for i, per in enumerate(per_process):
            lines += head(i)
            for k, e in enumerate(per):
                res = resolution(e)
                what = "unchecked: any value (no value stated)" if res.all_unchecked else describe(e)
                lines.append(f"{pad}  #{k} {e.type.mlir}: {what}" + (f" ({e.why})" if e.why else ""))
                lines.append(f"{pad}      {res.describe()}")
                if k in (origins or {}):
                    lines.append(f"{pad}      {origins[k]}")
                if oracle_asked:
                    lines.append(f"{pad}      " + _short(e.array()))
    for r in reports:
        lines.append(f"{r.name}   {r.describe}" if r.describe and r.describe != r.name else r.name)
        if not r.outputs:
            lines.append(f"  {r.verdict.upper()}" + (f": {r.detail}" if r.detail else "")
                         + (" — slow, not wrong: no verdict (" + (f"{limit}; " if limit else "")
                            + "--timeout raises the limit)" if r.verdict == "timeout" else "")
                         + (" (no verdict without the oracle's expectation)" if r.verdict == "ran" else ""))
            if r.raw is not None and expected is None:
                for i, per in enumerate(mode.per_process(r.raw)):
                    lines += head(i)
                    lines += [f"{pad}  #{k} " + _short(o) for k, o in enumerate(per)]
            continue
        shown = None
        for o in r.outputs:
            if many and o.process != shown:
                shown = o.process
                lines += head(o.process)
            ulp = _distance(o) if o.status != "UNCHECKED" else ""
            lines.append(f"{pad}  #{o.index} {o.type.mlir}: {o.status}{ulp}")
            if o.resolution is not None:
                lines.append(f"{pad}      {o.resolution.describe()}")
            if not o.ok:
                lines.append(f"{pad}      {o.detail}")
                for kind, n in o.specials.items():
                    what = "special values" if kind in SPECIAL_KINDS.values() else "cause"
                    lines.append(f"{pad}      {what}: {kind} x{n}")
    lines += [f"causes   {note}" for note in notes or ()]
    return "\n".join(lines)


def _widened(e: Expectation) -> bool:
    """An output whose enclosure is too wide to tell (not one left mostly
    unchecked, nor one judged by a property): `width_origins` says why."""
    res = resolution(e)
    return res.stated and not res.mostly_unchecked and not res.conclusive


def _used(exp: Expectation, actual) -> float | None:
    try:
        return allowance_used(exp, actual)
    except (TypeError, ValueError):   # an output of another shape or type: the comparison said so already
        return None


def _distance(o: OutputReport) -> str:
    """How far an agreeing output went: the share of its enclosure used
    leads (the same scale at every magnitude), the ULP distance from the
    oracle's value follows (suites/resolution.allowance_used says why).  An
    output judged by a property leads with its ratio's share of the
    threshold; its distance from the oracle's reference — one correct
    answer of many (signs, order, a basis free) — is named as such."""
    parts = []
    if o.used is not None and (o.used > 0 or not o.ulp_measures):
        parts.append(o.used_words.format(f"{o.used * 100:.3g}"))
    elif o.used == 0:
        parts.append("every element is the oracle's value")
    if o.max_ulp is not None and not o.ulp_measures:
        parts.append(f"max {o.max_ulp:g} ulp from the oracle's reference, one correct answer of many, not judged")
    elif o.max_ulp is not None and not (o.used == 0 and o.max_ulp == 0):
        parts.append(f"max {o.max_ulp:g} ulp from the oracle's value")
    return ("; " + " (".join(parts) + (")" if len(parts) == 2 else "")) if parts else ""


def _short(a) -> str:
    """An array on one line, cut to 3 elements per edge: suites/show.py's
    notation, as `explain` prints (NaN sign and payload, enough digits)."""
    return show.one_line(a)


DEFAULT_ORACLE_MEMORY = 8 << 30   # bytes the oracle may use unless --oracle-memory says otherwise


def default_oracle_memory() -> int:
    """The oracle's memory budget when none is given: 8 GiB, or half the
    machine's memory where that is less."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):   # pragma: no cover - no sysconf
        return DEFAULT_ORACLE_MEMORY
    return min(DEFAULT_ORACLE_MEMORY, total // 2)


# --------------------------------------------------------------------------
# How long a program may take: the default --timeout
# --------------------------------------------------------------------------

# A flat limit fits one size: a model-sized program may need minutes to be
# judged and compiled, while a backend hung on a tiny one is waited for as
# long.  So the default grows with what makes a program slow to judge and to
# compile: its data and its ops.
TIMEOUT_FLOOR = 60.0      # s, any program: a worker starts jax or IREE, the oracle its imports
TIMEOUT_PER_MIB = 1 / 16  # s per MiB of data: the oracle judged 50–200 MiB of its estimated peak a second
#                           (MLPs of 256² and 512² f32, a 1M-element elementwise chain; 2026-11-28):
#                           3–12× slack for a loaded machine and precision escalation
TIMEOUT_PER_LINE = 0.02   # s per line of the program's text (about one op a line): compiles and the
#                           oracle's steps grow with the ops
TIMEOUT_MAX = 3600.0      # what --timeout allows at most
TIMEOUT_RULE = (f"{TIMEOUT_FLOOR:g} s + 1 s per {1 / TIMEOUT_PER_MIB:g} MiB of the program's data (the oracle's "
                f"estimated memory, oracle/cost.py, or the file's size where larger) + 1 s per "
                f"{1 / TIMEOUT_PER_LINE:g} lines of its text, at most {TIMEOUT_MAX:g} s; a loop's trip count is "
                f"not seen")


def default_timeout(data_bytes: int, lines: int) -> float:
    """The default limit, in seconds, for a program of `data_bytes` of data
    and `lines` lines of text (`TIMEOUT_RULE`): each backend's run (its
    compile twice that, isolation.compile_timeout_for) and each of the
    oracle's jobs.  Past it a backend is "slow, not wrong" (no verdict,
    exit 4), never a disagreement; an explicit --timeout replaces it."""
    return min(TIMEOUT_MAX, TIMEOUT_FLOOR + data_bytes / (1 << 20) * TIMEOUT_PER_MIB + lines * TIMEOUT_PER_LINE)


def program_timeout(data: bytes, prep: Prepared | None = None) -> float:
    """`default_timeout` of a program: its data is the larger of the file's
    bytes (weights held as constants) and the oracle's estimated peak
    memory for every process of its grid (oracle/cost.py, when it has
    one); its lines those of the text the backends compile — before the
    program is read (`prep` None), the file's own (none for bytecode or a
    serialized jax.export artifact)."""
    size, lines = len(data), 0
    if not data.startswith(MLIR_BYTECODE_MAGIC):
        try:
            lines = data.decode().count("\n") + 1
        except UnicodeDecodeError:
            pass
    if prep is not None:
        lines = prep.text.count("\n") + 1 if prep.text else lines
        if prep.cost is not None:
            size = max(size, prep.cost.peak * prep.grid.size)
    return default_timeout(size, lines)


def judge_isolated(jobs, data: bytes, inputs_for, *, timeout: float | None, memory: int,
                   grid: Grid | None = None) -> tuple:
    """Read the program and run the oracle in a job process of their own
    (shlo_conform/pipeline/isolation.py): a parser that dies, a recursion past any
    stack, an allocation past `memory` or a run past the timeout becomes
    one line and "cannot judge", never the end of `run`.  `timeout` None:
    the program's default (`program_timeout`: from the file to read it,
    from what was read to judge it).  `inputs_for(types)` makes the inputs
    once @main's types are known.  Returns (Prepared, inputs, expectations
    or None, why there are none, the cost line, the timeout for the rest)."""
    from .pipeline.isolation import Failure, default_startup_timeout
    from .oracle.cost import human_bytes
    explicit = timeout is not None
    reading = default_startup_timeout(timeout if explicit else program_timeout(data))   # the job process's
    #                                                                        start (imports) is in its time
    prep = jobs.call("shlo_conform.differential:prepare", data, grid, timeout=reading)
    if isinstance(prep, Failure):   # the reader died: the backends may still read it
        sig = fallback_signature(data)
        if sig is None:
            raise InputError(f"cannot read the program: {_failure(prep, reading, memory, explicit)}")
        why = f"reading the program failed: {_failure(prep, reading, memory, explicit)}"
        prep = Prepared("text", data.decode(), *sig)
        stated = stated_in_text(prep.text)
        prep.grid = stated if isinstance(stated, Grid) else grid or SINGLE
        if _read_globally(prep.text, grid) is not None:
            prep.grid = SINGLE
        return prep, inputs_for(prep.types, prep.grid), None, why, "", timeout if explicit else program_timeout(data)
    if prep.refusal:
        raise InputError(prep.refusal)
    timeout = timeout if explicit else program_timeout(data, prep)
    inputs = inputs_for(prep.types, prep.grid)
    if prep.cost is None:
        return prep, inputs, None, prep.cost_why, "", timeout
    n = prep.grid.size   # every process holds its values at once
    need = f"needs {prep.cost.describe()}" + (f" per process, {n} processes" if n > 1 else "") + \
        f"; budget {human_bytes(memory)}"
    if prep.cost.peak * n > memory:
        return prep, inputs, None, (f"the oracle would need {prep.cost.describe()}"
                                    + (f" for each of {n} processes" if n > 1 else "") + ", past its budget of "
                                    f"{human_bytes(memory)} (--oracle-memory raises it)"), "", timeout
    mode = run_mode(prep.grid)
    got = jobs.call(mode.expectations_job, *mode.expectations_args(data, inputs), timeout=timeout, memory=memory)
    if isinstance(got, Failure):
        return prep, inputs, None, _failure(got, timeout, memory, explicit), need, timeout
    expected, why = got
    return prep, inputs, expected, why, need, timeout


def named(message: str, path: str) -> str:
    """A parser's message with the program's own file name where MLIR,
    reading a string, wrote "-" (`"-":2:26: use of undeclared SSA value`)."""
    return message.replace('"-":', f"{path}:")


def _failure(f, timeout: float, memory: int, explicit: bool = True) -> str:
    """A job's Failure as the one line `run` prints (`explicit`: the
    timeout was --timeout's, not the program's default)."""
    from .oracle.cost import human_bytes
    if f.kind == "timeout":
        return f"the oracle took longer than {timeout:g} s" + (
            " (--timeout)" if explicit else " (the default for this program's size; --timeout raises it)")
    if f.kind == "memory":
        return f"the oracle ran out of its memory budget of {human_bytes(memory)} (--oracle-memory raises it)"
    if f.kind == "recursion":
        return f"the program nests deeper than the oracle's stack allows ({f.detail})"
    if f.kind == "crash":
        return f"the oracle's process died: {f.detail}"
    return f"the oracle failed: {f.detail}"


def run_command(path: str, backends: list[str], *, inputs_npz: str | None = None, seed: int | None = None,
                special_fraction: float = 0.0, draw: str = values.RUN_DRAW, timeout: float | None = None,
                oracle_memory: int | None = None, grid: Grid | None = None,
                dims: dict | None = None) -> tuple[str, int]:
    """The whole `run` command: (what to print, exit status — `exit_code`:
    1 when a backend disagrees with the oracle's expectation, crashes or
    refuses a program the spec accepts; 4 when there is no verdict — the
    oracle cannot judge the program (the backends still run and are shown)
    or a backend ran past `timeout`; 3 when an output is inconclusive or
    unchecked; 0 when everything agrees); raises InputError for unusable
    input (exit 2).  The program is read and judged in a process of its
    own, within `timeout` seconds and `oracle_memory` bytes; `timeout`
    None: the default scaled to the program (`program_timeout`,
    `TIMEOUT_RULE`), for the oracle and every backend alike.  A program with
    dynamic dimensions is first refined to the inputs' shapes (`dims`:
    --dims, with random inputs; shlo_conform/refine.py) and the static
    program is what is judged."""
    data = read_source(path)
    how = [""]

    def inputs_for(types, on: Grid = SINGLE):
        if any(not isinstance(t, TensorType) for t in types):
            raise InputError("@main takes a non-tensor argument; run gives tensors only")
        mode = run_mode(on)
        if inputs_npz is not None:
            how[0] = f"from {inputs_npz}" + mode.inputs_words(npz=True)
            return mode.npz_inputs(inputs_npz, types)
        s = 0 if seed is None else seed
        how[0] = f"random, seed {s}, {values.DRAWS[draw].words}" + \
            (f", {special_fraction:g} special values" if special_fraction else "") + mode.inputs_words(npz=False)
        return mode.random_inputs(types, s, special_fraction, draw)

    memory = oracle_memory or default_oracle_memory()
    from .pipeline.isolation import Failure, Jobs, default_startup_timeout
    from .refine import Unrefinable, annotate, refine_for_run
    with tempfile.TemporaryDirectory(prefix="shlo-conform-") as tmp, Jobs(tmp, label="oracle") as jobs:
        try:
            explicit = timeout is not None
            data, refined = refine_for_run(jobs, data, inputs_npz=inputs_npz, dims=dims, grid=grid, memory=memory,
                                           timeout=default_startup_timeout(timeout if explicit else
                                                                           program_timeout(data)))
            started = time.monotonic()
            prep, inputs, expected, why_none, need, timeout = judge_isolated(jobs, data, inputs_for,
                                                                             timeout=timeout, memory=memory,
                                                                             grid=grid)
            box = cause_search_box(time.monotonic() - started)
        except (InputError, Unrefinable) as e:
            raise InputError(named(str(e), path)) from None
        why_none = named(why_none, path)

        def flushed_for(case):   # the oracle on the flushed inputs, in the same isolated process
            from .suites.causes import flush_inputs
            flushed = flush_inputs(case.input_arrays(), [v.tensor_type.element_type for v in case.inputs])
            if flushed is None:
                return None
            got = jobs.call("shlo_conform.differential:expectations", data, flushed, timeout=timeout, memory=memory)
            return None if isinstance(got, Failure) or got[0] is None else got[0]

        rewrites, stopped = [], []

        def rewrites_for(case):   # the oracle on the program with each known rewrite, once, in the same process:
            if not rewrites:      # one job per rewrite, all within the search's time box (`cause_search_box`)
                begun = time.monotonic()

                def left() -> float:
                    return min(timeout, box - (time.monotonic() - begun))

                def stop(done: int, of: str) -> None:
                    stopped.append(f"the search for compiler rewrites stopped at its time box ({box:g} s) after "
                                   f"{done} of {of} rewritten programs: a difference left \"out of tolerance\" may "
                                   "still be one of the others (--timeout raises the box)")
                got = jobs.call("shlo_conform.differential:rewritten_programs", prep.text, timeout=left(),
                                memory=memory) if left() > 0 else None
                if got is None or (isinstance(got, Failure) and got.kind == "timeout"):
                    stop(0, "the")
                elif isinstance(got, Failure):   # a rewrite that fails on this program: said, not swallowed
                    stopped.append(f"the search for compiler rewrites failed ({got.kind}: {got.detail}): no "
                                   "difference is named by a rewrite; the verdicts stand")
                from .oracle.rewrites import SUBNORMAL_INPUTS_ONLY
                from .suites.causes import flush_inputs
                todo = [] if got is None or isinstance(got, Failure) else got
                if flush_inputs(case.input_arrays(), [v.tensor_type.element_type for v in case.inputs]) is None:
                    todo = [row for row in todo if row[0] not in SUBNORMAL_INPUTS_ONLY]

                def judged(i: int, row):
                    name, says, sites, changed = row
                    if left() <= 0:
                        stop(i, str(len(todo)))
                        return False
                    exps = jobs.call("shlo_conform.differential:rewritten_expectation", changed, case.input_arrays(),
                                     name, timeout=left(), memory=memory)
                    return None if exps is None or isinstance(exps, Failure) else (name, says, sites, exps)
                rewrites.append(RewriteSearch(todo, judged))
            return rewrites[0]

        reports = run_backends(prep.text, inputs, prep.types, backends, expected, timeout, flushed_for, prep.grid,
                               rewrites_for)
        origins = {}
        wide = [k for k, e in enumerate(expected or []) if _widened(e)] if run_mode(prep.grid).size == 1 else []
        if wide:   # where an inconclusive output's width starts: the spec's allowance, or the enclosure's
            got = jobs.call("shlo_conform.differential:width_origins", data, inputs, wide, timeout=timeout,
                            memory=memory)
            origins = {} if isinstance(got, Failure) else got
    if prep.manual:
        how[0] += ("; each process's inputs and outputs are its shards: @main hands them to one manual "
                   f"computation (shard_map / pmap; mesh {', '.join(f'{a}={n}' for a, n in prep.manual.items())}), "
                   "run as its body on every process")
    if prep.partitioned:
        how[0] += (f"; a jit with shardings over {prep.partitioned.size} devices, judged as one global "
                   "computation (its shardings a layout, as JAX reads them): XLA runs it partitioned and its "
                   "results are put together from their shards")
    if refined is not None:
        prep.form = refined.program_form
    out = render(path, prep.form, prep.types, how[0], expected, why_none, reports, ORACLE in backends, need,
                 prep.legalized, prep.grid, prep.chlo_judged,
                 limit=_limit(timeout, explicit), origins=origins, notes=stopped, widened=prep.widened)
    return annotate(out, refined), exit_code(reports, expected is not None)


CAUSE_SEARCH_MIN = 30.0     # seconds the rewrite search may always take
CAUSE_SEARCH_FACTOR = 4.0   # ... or this many times what judging the program took


def cause_search_box(judged_in: float) -> float:
    """The seconds a DISAGREES output's search for compiler rewrites may
    take in all (one oracle run per rewritten program): 4× the program's
    own judging, at least 30 s — so that a wrong backend's verdict on a
    model-sized program is not held up by six more runs of it."""
    return max(CAUSE_SEARCH_MIN, CAUSE_SEARCH_FACTOR * judged_in)


def _limit(timeout: float, explicit: bool) -> str:
    """The limits a backend ran under, as its TIMEOUT line states them."""
    from .pipeline.isolation import compile_timeout_for
    return f"limit {timeout:g} s a run, {compile_timeout_for(timeout):g} s a compile" + \
        ("" if explicit else ": the default for this program's size")


def exit_code(reports: list[BackendReport], judged: bool) -> int:
    """`run`'s exit status: a disagreement (or a crash, or a valid program
    refused) wins; then no verdict (the oracle cannot judge, a backend ran
    past its timeout); then inconclusive (an output unchecked or too wide
    to tell); 0 only when every output of every backend agrees."""
    codes = {r.exit_code(judged) for r in reports}
    for code in (DISAGREES, NO_VERDICT, INCONCLUSIVE):
        if code in codes or (code == NO_VERDICT and not judged):
            return code
    return AGREES
