"""How each kind of semantics executes: open registries, one entry per kind.

The spec states an op's semantics as an object of a kind (spec/dsl/:
`Elementwise`, `DataMovement`, `Accumulating`, `Statistical`,
`ControlFlow`, `SideEffect`, …); the oracle executes each kind by the rule
registered for its class, as JAX registers an implementation rule per
primitive.  A new kind is its class in the spec and one registration in
the module that executes it — no chain elsewhere is edited.

Two registries, by what a rule consumes:

* `on_arrays(Kind)` — rules on primary arrays: `rule(sem, inst, arrays,
  result_types) -> [Expectation]`.  Element-wise (elementwise.py), data
  movement (data_movement.py), accumulations (accumulate.py), statistics
  (statistical.py).  The program walk runs them on the operands' primary
  values and again on the ends of ranged operands (propagation.py); a
  region's `call` runs them too.
* `on_values(Kind)` — rules on whole values (Expectations with their
  tolerances and alternatives, tuples, tokens) and the step's `Context`:
  `rule(ctx, inst, values) -> values`.  Control flow (program.py) passes
  values through its regions; side effects (host.py) talk to the host.

`Context` is what an op may need beyond its operands: how to read a
value's primary arrays, the host of the run (host.py's session), and the
process of a grid the program runs on (collectives).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .x87 import extended_precision

ARRAY_RULES: dict[type, Callable] = {}
VALUE_RULES: dict[type, Callable] = {}
# How an op on quantized tensors runs, by its declaration's `meaning`
# (spec/dsl/quantization.py): `rule(inst, arrays) -> [Expectation]` (quantized.py).
QUANTIZATION_RULES: dict[str, Callable] = {}
# The same for ops that work on whole values (collectives): `rule(ctx, inst, values) -> values`.
QUANTIZATION_VALUE_RULES: dict[str, Callable] = {}


def on_arrays(kind: type):
    """Register `rule(sem, inst, arrays, result_types) -> [Expectation]` for `kind`."""
    def register(rule):
        ARRAY_RULES[kind] = rule
        return rule
    return register


def on_values(kind: type):
    """Register `rule(ctx, inst, values) -> values` for `kind`."""
    def register(rule):
        VALUE_RULES[kind] = rule
        return rule
    return register


def on_quantization(meaning: str):
    """Register `rule(inst, arrays) -> [Expectation]` for ops whose quantized
    form the spec defines by `meaning` ("dequantize_op_quantize")."""
    def register(rule):
        QUANTIZATION_RULES[meaning] = rule
        return rule
    return register


def on_quantization_values(meaning: str):
    """Register `rule(ctx, inst, values) -> values` for the ops of kinds that
    work on whole values whose quantized form the spec defines by `meaning`."""
    def register(rule):
        QUANTIZATION_VALUE_RULES[meaning] = rule
        return rule
    return register


@dataclass
class Context:
    """What a step may need beyond its operands (module docstring)."""
    arrays: Callable[[Any], Any]            # a value's primary arrays (tuples nested)
    process: Any = None                     # the process of a grid this run is, when there is one
    extra: dict = field(default_factory=dict)


def _rule(table: dict, sem) -> Callable | None:
    for cls in type(sem).__mro__:
        if cls in table:
            return table[cls]
    return None


def works_on_values(inst) -> bool:
    """Does the op's kind take whole values (control flow, side effects)?"""
    _load()
    return _rule(VALUE_RULES, inst.spec.semantics) is not None


def run_values(ctx: Context, inst, values: list) -> list:
    """The op on whole values, by its kind's `on_values` rule."""
    _load()
    q = inst.spec.quantization
    if q is not None and q.meaning in QUANTIZATION_VALUE_RULES and inst.spec.holds_quantized(inst):
        return QUANTIZATION_VALUE_RULES[q.meaning](ctx, inst, values)
    return _rule(VALUE_RULES, inst.spec.semantics)(ctx, inst, values)


def run_arrays(inst, arrays: list) -> list:
    """The op on concrete primary arrays, by its kind's `on_arrays` rule: a
    list of Expectations (tuples of them for tuple results)."""
    _load()
    q = inst.spec.quantization
    if q is not None and q.meaning in QUANTIZATION_RULES and inst.spec.holds_quantized(inst):
        return QUANTIZATION_RULES[q.meaning](inst, arrays)
    sem = inst.spec.semantics
    rule = _rule(ARRAY_RULES, sem)
    if rule is None:
        raise NotImplementedError(f"{inst.spec.mnemonic}: the oracle cannot execute semantics of kind "
                                  f"{type(sem).__name__}")
    with extended_precision():   # the long double routes' 64 bits, whatever the process set (x87.py)
        return rule(sem, inst, arrays, result_types(inst))


def operand_types(inst) -> list:
    out = []
    for o in inst.spec.operands:
        v = inst.operands[o.name]
        out.extend(v if o.variadic else [v])
    return out


def result_types(inst) -> list:
    out = []
    for r in inst.spec.results:
        v = inst.results[r.name]
        out.extend(v if r.variadic else [v])
    return out


# The modules that register rules, imported once on first use (they import
# this module for the decorators).
_EXECUTORS = ("elementwise", "data_movement", "accumulate", "statistical", "host", "execution", "decomposition",
              "collective", "quantized")
_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        import importlib
        for name in _EXECUTORS:
            importlib.import_module(f"{__package__}.{name}")
        _loaded = True
