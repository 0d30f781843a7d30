"""custom_call — an implementation-defined operation named `call_target_name`
(seed section "custom_call", with the RFC's "CustomCallOp with typed FFI").

Numbering.  Neither the seed's section nor the RFC's proposed one has a
Constraints subsection: there is no `(C<N>)` to encode, so this module
defines no `custom_call_c<N>` (traceability: 0/0), and a program is valid
whenever its attributes have the kinds the Inputs table gives.  The RFC's
section replaces the seed's (spec/traceability.py); it changes only the
example (typed FFI: `api_version = 4`, `backend_config = {bar = 42 : i32}`)
and the motivation (`API_VERSION_TYPED_FFI` as an enum value, metadata in one
dictionary).

Inputs, as read here:
* (I1) `inputs`: "variadic number of values" — tensors and tuples (tokens
  are not values the oracle holds yet);
* (I2) `call_target_name`: a string (`dsl.StringAttr`); the generic plan
  calls `Sharding` (any tensor), the LAPACK Cholesky targets of
  spec/custom_targets.py are built by hand (`typed_ffi_corners`);
* (I3) `has_side_effect`: i1, optional (the pinned StableHLO's default false);
* (I4) `backend_config`: a string (seed) or a dictionary (RFC example);
  optional, absent means "" (`dsl.ConfigAttr`);
* (I5) `api_version`: si32, written `N : i32` or in the RFC's enum spelling
  `#stablehlo<custom_call_api_version API_VERSION_TYPED_FFI>` (read as 4);
  optional, absent means 1 (API_VERSION_ORIGINAL, the pinned default);
* (I6) `called_computations`: symbol references `[@foo]`; optional, [];
* attributes the pinned StableHLO has and the seed lacks —
  `operand_layouts`, `result_layouts`, `output_operand_aliases` — are read
  as text (`dsl.RawAttr`) so programs from JAX can be read; no constraint
  reads them, the LAPACK targets' definitions read the layouts.

Readings and findings (docs/spec-findings.md, custom_call):
* The RFC's Inputs table still says backend_config is a "constant of type
  `string`" while its example writes a dictionary; the pinned verifier ties
  the two to api_version (a dictionary iff API_VERSION_TYPED_FFI) and limits
  api_version to the enum's five values.  The spec states neither rule, so
  they are not encoded: a program breaking them is valid here and refused by
  jaxlib: two value cases show it (api_version = 5; typed FFI with a string
  backend_config), reviewed in suites/verifier-findings.json.  The other
  cases keep to the verifier's pairing (no backend_config, or a dictionary
  with api_version 4).
* The seed states no result type rule: `infer` states none for a call of a
  target outside the registry (its results are what the program says); a
  registry target's definition brings its own (`infer`).
* Semantics: the seed states no result.  A call of a target in the registry
  (spec/custom_targets.py) that fits its definition gets that definition's
  result; any other call — an unknown target, or a known one with other
  types — is implementation-defined with no alternative known: the oracle
  states no result and says why (`ImplDefined({})`, reported unsupported).
  Known leniency: the identity's result is stated element by element, so a
  NaN matches any NaN (payloads not compared).
"""
from __future__ import annotations

import numpy as np

from ..custom_targets import TARGETS, NoExactFactor, potrf_operand, unknown_target
from ..dsl import (ANY, Accumulating, ApiVersionAttr, Attribute, BoolAttr, ConfigAttr, Dictionary, ImplDefined, OpSpec,
                   Operand, RawAttr, Result, Scoring, StringAttr, SymbolListAttr)
from ..exercise import UNRETURNED, Exercise
from ..symbolic import Skeleton
from ..types import E_F32, TensorType, TupleType, exact_values, parse_type


def infer(op):
    """The seed states no type rule: a call of a target outside the registry
    has the results its program states (nothing inferred).  A registry
    target's definition includes its type rule (Sharding: the operand's
    type), so a call of it gets those types — in a generated program, and
    as the oracle's check of a program (a Sharding whose result type is not
    its operand's is refused as type inference refuses any op; XLA's HLO
    verifier refuses it too).  A call whose operand count the definition
    cannot type states its own results."""
    target = TARGETS.get(op.call_target_name)
    if target is None:
        if "results" not in op.results:
            raise ValueError(unknown_target(op.call_target_name))
        return {}
    types = target.result_types(op)
    return {} if types is None else {"results": types}


def _unstated(t, why: str):
    """A result of which nothing is known: every element implementation-defined, no alternative."""
    if not isinstance(t, TensorType):   # a token (or tuple) result: no elements to state
        return np.empty((0,), dtype=object)
    return np.array([ImplDefined({}, why=why)] * t.num_elements, dtype=object).reshape(tuple(int(d) for d in t.shape))


def answers(op, *inputs):
    """Each result as element answers: the registry target's result, exact;
    for any other call, "implementation-defined, nothing known" (the oracle
    then states no result, naming the reason)."""
    outs = list(op.results["results"])   # `op.results` is the Instance's dict of results by name
    target = TARGETS.get(op.call_target_name)
    why = unknown_target(op.call_target_name) if target is None else target.misfit(op)
    if why is None:
        try:
            arrays = target.run(op, *inputs)
        except NoExactFactor as e:
            why = f"{op.call_target_name}: {e}"
    if why is not None:
        return [_unstated(t, why) for t in outs]
    return [np.array(exact_values(a, t.element_type), dtype=object).reshape(tuple(int(d) for d in t.shape))
            for a, t in zip(arrays, outs)]


# The generic plan (every element type, ranks 0-5) calls Sharding, which
# takes any tensor; the LAPACK targets take square f32/f64 matrices and a
# typed-FFI config, so they are built by hand below.
GENERATED_TARGETS = ("Sharding",)


def typed_ffi_corners(spec, skels, rng):
    """The RFC's example shape — typed FFI, `api_version = 4` with a
    dictionary backend_config (the generic plan writes none) — on Sharding,
    and jaxlib's LAPACK Cholesky in both triangles, both layouts (JAX's
    column-major one, and none: row-major), one batch."""
    ffi = [s for s in skels if s.attr_dict.get("api_version") == 4]   # skeletons that write api_version = 4
    for skel in ffi[:1]:
        t = TensorType((2, 3), skel.operand_types[0])
        for cfg in (Dictionary("{}"), Dictionary("{bar = 42 : i32}")):
            attrs = {"call_target_name": "Sharding", "api_version": 4, "backend_config": cfg, "has_side_effect": False}
            yield (f"typed FFI, backend_config = {cfg.text}", skel,
                   spec.instance({"inputs": [t]}, attrs, {"results": [t]}))
        # Valid by the Inputs table, refused by jaxlib's verifier (suites/verifier-findings.json):
        # api_version is "si32" (the verifier: one of the enum's five values), and
        # backend_config is "string" (the verifier: a dictionary under typed FFI).
        for attrs, note in (({"api_version": 5}, "api_version 5: an si32 outside the pinned enum"),
                            ({"api_version": 4, "backend_config": ""}, "typed FFI with a string backend_config")):
            yield (note, skel, spec.instance({"inputs": [t]}, {"call_target_name": "Sharding", **attrs},
                                             {"results": [t]}))
    by_type = {s.operand_types[0]: s for s in reversed(ffi)}
    for name, et in (("lapack_spotrf_ffi", "f32"), ("lapack_dpotrf_ffi", "f64")):
        skel = next((s for t, s in by_type.items() if t.name == et), None)
        if skel is None:
            continue
        for shape, uplo, layout in (((3, 3), 76, True), ((4, 4), 85, True), ((3, 3), 76, False),
                                    ((1, 1), 85, False), ((2, 3, 3), 76, True)):
            t = TensorType(shape, skel.operand_types[0])
            attrs = {"call_target_name": name, "api_version": 4, "backend_config": Dictionary(f"{{uplo = {uplo} : ui8}}")}
            if layout:
                r = len(shape)
                mm = ", ".join(str(d) for d in (r - 2, r - 1) + tuple(range(r - 3, -1, -1)))
                info = ", ".join(str(d) for d in range(r - 3, -1, -1))
                attrs["operand_layouts"] = f"[dense<[{mm}]> : tensor<{r}xindex>]"
                attrs["result_layouts"] = (f"[dense<[{mm}]> : tensor<{r}xindex>, "
                                           f"dense<[{info}]> : tensor<{r - 2}xindex>]")
            inst = spec.instance({"inputs": [t]}, attrs, {})
            results = infer(inst)["results"]
            yield (f"LAPACK Cholesky {name}, uplo {chr(uplo)}, {'column' if layout else 'row'}-major {t.mlir}", skel,
                   spec.instance({"inputs": [t]}, attrs, {"results": results}))


# How jax.jit writes a LAPACK call's result aliasing its operand (the factor overwrites the matrix: `jnp.linalg.cholesky`
# on CPU); the seed has no such attribute, the pinned StableHLO does, and its meaning changes no value.
JAX_ALIAS = "[#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>]"


def aliases_and_called_computations(spec, skels, rng):
    """`Exercise.appended_last`: the two optional attributes no generated
    case writes — a Sharding with `called_computations = []` (the seed's
    example names @foo; an empty list calls nothing, so the call's value
    is still its operand), and the LAPACK Cholesky as jax.jit writes it,
    with `output_operand_aliases` (the factor in the operand's buffer).
    Why (docs/mutation.md §25): no case held either attribute, so an
    implementation that refuses them (an unknown attribute) refused
    programs JAX emits every day and still passed suites/core.  (One that
    ignores them computes the same values: neither changes a result, so the
    reader's mutants that garble the two names die only by unit tests.)"""
    t = TensorType((2, 3), E_F32)
    attrs = {"call_target_name": "Sharding", "has_side_effect": False, "api_version": 1, "called_computations": ()}
    yield (f"a Sharding with called_computations = [] on {t.mlir}", None,
           Skeleton(spec.mnemonic, (E_F32,), (), tuple(attrs.items())),
           spec.instance({"inputs": [t]}, attrs, {"results": [t]}))
    m = TensorType((3, 3), E_F32)
    attrs = {"call_target_name": "lapack_spotrf_ffi", "api_version": 4, "backend_config": Dictionary("{uplo = 76 : ui8}"),
             "operand_layouts": "[dense<[0, 1]> : tensor<2xindex>]",
             "result_layouts": "[dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]",
             "output_operand_aliases": JAX_ALIAS}
    inst = spec.instance({"inputs": [m]}, attrs, {})
    yield (f"LAPACK Cholesky lapack_spotrf_ffi as jax.jit writes it: output_operand_aliases, {m.mlir}", None,
           Skeleton(spec.mnemonic, (E_F32,), (), tuple((k, str(v)) for k, v in attrs.items())),
           spec.instance({"inputs": [m]}, attrs, {"results": infer(inst)["results"]}))


def operand_values(op, name, k, t, rng):
    """A LAPACK Cholesky's matrix: one whose factor is exact in every
    evaluation order (spec/custom_targets.py); other calls: the usual values."""
    if name == "inputs" and op.call_target_name.startswith("lapack_") and op.call_target_name in TARGETS:
        return potrf_operand(op, rng)
    return None


UNREGISTERED = "shlo_conform.unregistered_target"   # a target name no registry holds (the oracle's nor XLA's)


def empty_unregistered(spec, skels, rng):
    """A call of a target outside the registry whose result holds no
    element (2×0): nothing of it is implementation-defined, so the oracle
    states it — the empty tensor of the program's type — where any other
    unknown call states no result.  Reading the program infers nothing (the
    results are the program's, `infer`); a survey case (`unregistered`):
    whether an implementation has the target at all is its own."""
    t = TensorType((2, 0), E_F32)
    attrs = {"call_target_name": UNREGISTERED, "has_side_effect": False, "api_version": 1}
    yield (f"a target outside the registry, an empty {t.mlir} result", None,
           Skeleton(spec.mnemonic, (E_F32,), (), tuple(attrs.items())),
           spec.instance({"inputs": [t]}, attrs, {"results": [t]}))


def sharding_of_another_type(spec, skels, rng):
    """`Exercise.appended_last`: a registry target's type rule broken — a
    Sharding whose result (3×2) is not its operand's type (2×3).  The
    seed's custom_call has no constraint to name; Sharding's definition
    types its result as its operand (`infer`), and XLA refuses the call
    in its HLO translation (StableHLO's verifier takes it: a finding)."""
    t, wrong = TensorType((2, 3), E_F32), TensorType((3, 2), E_F32)
    attrs = {"call_target_name": "Sharding", "has_side_effect": False, "api_version": 1}
    yield (f"a Sharding whose result is {wrong.mlir} for a {t.mlir} operand", "custom_call_infer",
           Skeleton(spec.mnemonic, (E_F32,), (), tuple(attrs.items())),
           spec.instance({"inputs": [t]}, attrs, {"results": [wrong]}))


# A per-axis quantized type with three elements on its quantization dimension and two scales (quantized_c13):
# tests/oracle/test_program.py's, broken by this one rule alone.
BROKEN_QUANTIZED = "tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>"


def broken_quantized_members(spec, skels, rng):
    """`Exercise.appended_last`: a call (of a target outside the registry,
    no operands) whose result type holds a broken quantized type — alone,
    as a tuple's member, as a nested tuple's member beside an f32 tensor:
    invalid cases naming the type's rule (quantized_c13).  Its result is
    left unreturned (`UNRETURNED`): @main returns a tuple's members taken
    apart, so the broken type would otherwise stand at the top level too,
    as a get_tuple_element's result; the call has a side effect, so it is
    not dead code.  Why (docs/mutation.md §23): oracle/functions.py's
    `_check_quantized` without its tuple branch survived every verdict — an
    implementation that checks the types it sees at the top level only
    passed suites/core.  The case alone is the rule's case at the top
    level, which no other case held.  StableHLO's verifier refuses all
    three and takes them with a type it admits (2 elements, 2 scales); the
    oracle also reads custom_call as taking no quantized tensors (no
    `quantization`), so without the tuple branch it still refuses the
    tuple cases, naming no rule instead of quantized_c13."""
    q = parse_type(BROKEN_QUANTIZED)
    f = TensorType((2,), E_F32)
    attrs = {"call_target_name": UNREGISTERED, "has_side_effect": True, "api_version": 1}
    skel = Skeleton(spec.mnemonic, (), (("results", q.element_type),), tuple(attrs.items()))
    for where, t in (("alone", q), ("as a tuple's member", TupleType((q,))),
                     ("as a nested tuple's member", TupleType((f, TupleType((q,)))))):
        yield (f"a result {t.mlir}: the broken quantized type {where}, unreturned", "quantized_c13", skel,
               UNRETURNED.leave(spec.instance({"inputs": []}, attrs, {"results": [t]})))


def unregistered(op) -> str | None:
    """`Exercise.survey_when`: a call of a target outside the registry is reported, not scored."""
    if op.call_target_name in TARGETS:
        return None
    return (f"custom_call target {op.call_target_name!r} is no registry's: the seed makes the call "
            f"implementation-defined, so an implementation may lack it")


SPEC = OpSpec(
    mnemonic="custom_call",
    operands=(Operand("inputs", ANY, variadic=True, count=1),),
    results=(Result("results", ANY, variadic=True),),
    constraints=(),
    infer=infer,
    semantics=Accumulating(answers),
    attributes=(
        Attribute("call_target_name", StringAttr(values=GENERATED_TARGETS)),
        Attribute("has_side_effect", BoolAttr(), optional=True, default=False),
        Attribute("backend_config", ConfigAttr(), optional=True),
        Attribute("api_version", ApiVersionAttr(), choices=(1, 4, 0, 2, 3), optional=True, default=1),
        Attribute("called_computations", SymbolListAttr(), optional=True),
        Attribute("operand_layouts", RawAttr(), optional=True),
        Attribute("result_layouts", RawAttr(), optional=True),
        Attribute("output_operand_aliases", RawAttr(), optional=True),
    ),
    exercise=Exercise(built_corners=typed_ffi_corners, operand_values=operand_values, survey_when=unregistered,
                      appended_last=(empty_unregistered, sharding_of_another_type,
                                     broken_quantized_members, aliases_and_called_computations)),
    results_unconstrained=("the seed's section has no Constraints and no type rule: a call's results are what its "
                           "program states (a registry target's type rule is the target's, not the spec's)"),
    scoring=Scoring(alone="a call's target may keep state between calls of one module"),
)
