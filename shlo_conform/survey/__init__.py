"""The accuracy survey (`shlo-conform accuracy`): every float op of the spec, measured element by element.

`shlo-conform accuracy --backend=NAME` runs, for each float unary and binary
element-wise op of the encoded spec and each float type, ONE program over a
whole input array (one compile per op × type), and compares the backend's
bits with the oracle's correctly rounded reference:

* inputs (`survey_inputs`): every bit pattern of f8E4M3FN, f8E5M2, bf16 and
  f16 (unary ops) or of both 8-bit operands (binary ops); a stratified sample
  elsewhere — every binade of both signs, each subnormal binade (by leading
  bit), the format's special values and the op's hard arguments
  (`Exercise.hard_floats`, spec/samples.py) — of `size` inputs (default 2^20).
* expectations (`expectations`): the oracle's primary value per element,
  through its public entry point (`generators.expect.expected_outputs` on the
  survey program itself, in chunks), so every speed-up of oracle/ applies.
  They are computed once and cached per op × type in a versioned file
  (`CacheEntry`): the key covers the survey's format version, the seed, the
  size, the sources of spec/ and oracle/ and of the functions here that draw
  inputs and ask the oracle (`_KEYED`), so a changed spec or oracle
  regenerates it and a second backend repeats only the backend's work.
* backends (`run_backend`): each in a process of its own (the isolation
  harness, shlo_conform/pipeline/isolation.py); one that dies or hangs costs the
  op × type in flight (`crash`, `timeout` past --timeout), not the survey.
* measures (`measure`): special-value disagreements first, counted apart,
  by the conformance suite's causes and rule (suites/causes.py) — subnormal
  flushed (a subnormal result returned as zero, or the op's result on the
  operands with their subnormals read as zero: DAZ, established by the
  oracle on those operands), NaN lost or invented, the sign of zero,
  infinity — then the ULP error of every other element: max, mean, the share
  correctly rounded and within our tolerance (spec/accuracy.py), the worst
  input, and a binned profile of the error along the input for the plots.

Complex types (c64, c128) are sampled over the plane for the ops the spec
defines on them: both parts by binade, the axes and branch cuts (a part
±0), and every pair of special values; components are judged one by one.
"""
from __future__ import annotations

from .expectations import CHUNK, CacheEntry, build, cache_key, entry_path, expectations
from .inputs import stratified, survey_inputs
from .measures import SPECIAL_CAUSES, judge, measure, ulp_errors
from .ops import COMPLEX, DEFAULT_SIZE, DTYPES, EXHAUSTIVE, FORMAT_VERSION, SAMPLED, accepts, exhaustive, float_ops, program
from .runs import DEFAULT_ENTRY_TIMEOUT, render, run_backend, survey, survey_entry

__all__ = ["CHUNK", "CacheEntry", "build", "cache_key", "entry_path", "expectations", "stratified", "survey_inputs",
           "SPECIAL_CAUSES", "judge", "measure", "ulp_errors", "COMPLEX", "DEFAULT_SIZE", "DTYPES", "EXHAUSTIVE",
           "FORMAT_VERSION", "SAMPLED", "accepts", "exhaustive", "float_ops", "program", "DEFAULT_ENTRY_TIMEOUT",
           "render", "run_backend", "survey", "survey_entry"]
