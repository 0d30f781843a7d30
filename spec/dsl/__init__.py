"""The language op modules are written in: op declarations and dual-mode constraint helpers.

A constraint is written once and read two ways.  The `Instance` it receives has
concrete *structure* (ranks, variadic counts, element types, enum values) and
possibly symbolic *numbers* (dimension sizes, integer attribute entries: a
Python int or a z3 integer expression).  Every helper of constraints.py returns a Python
bool when all its arguments are concrete and a z3 expression otherwise, so
`concatenate_c4` checks a program, feeds the solver that generates programs,
and takes part in proofs.  Never branch in Python on a value that may be
symbolic (use `If`); never use randomness in a rule.

Semantics are declared, not executed, here: an op's `Elementwise.fn` returns
the *exact* result of one element in the vocabulary of answers.py (ints, bools,
Fractions, floats standing for their exact value, `Approx` for a real function
evaluated by the oracle at rising precision, `ImplDefined` for the spec's
implementation-defined alternatives).  `oracle/` executes that vocabulary.

The language lives in modules by topic, re-exported here so an op module
imports every word from one place (`from ..dsl import OpSpec, And, …`):
constraints.py (dual-mode logic and type helpers), attributes.py (attribute
kinds and their MLIR spelling; custom_call's own in custom_call_attributes.py),
declaration.py (`OpSpec`, `Instance` and the tables' records), answers.py
(what an element's semantics may answer), semantics.py (the semantics
kinds), characterized.py (results defined by a property), collective.py
(the process grid: collectives, positions, z3 grids).
"""
from __future__ import annotations

from .constraints import (is_symbolic, And, Or, Not, Implies, If, Eq, Distinct, all_of, any_of,
                          is_unique, in_range, is_sorted, is_permutation, size, at, contains, shape,
                          rank, dim, element_type, same_shape, same_element_type, same_type,
                          same_types, shape_is)
from .attributes import (EnumAttr, IntAttr, I64ArrayAttr, Group, BoolAttr, I64MatrixAttr,
                         BoolArrayAttr, EnumListAttr, ConvDimensionsGroup, UnitAttr, ReplicaGroupsAttr,
                         groups_shape, groups_entries)
from .custom_call_attributes import (StringAttr, API_VERSIONS, ApiVersionAttr, Dictionary, ConfigAttr,
                                     SymbolListAttr, RawAttr)
from .declaration import (BOOLEAN, SIGNED, UNSIGNED, INTEGER, FLOAT, COMPLEX, ANY, Operand,
                          Attribute, Result, Region, Function, Instance, Scoring, OpSpec, Spelled, unnumbered, constraint_named,
                          type_rule)
from .answers import (Approx, ImplDefined, INTEGER_OVERFLOW_WHY, integer_overflow, ANY_VALUE,
                      Exactly, RoundTo, Range, Choices)
from .semantics import (Elementwise, Generic, finite, finite_nonzero, approx_if_complex, checked,
                        DataMovement, Accumulating, ControlFlow, Decomposition, SideEffect,
                        LoopLimit, Sample, Statistical)
from .characterized import Measured, Characterized
from .collective import (Collective, Position, GRID_VARS, symbolic_grid, grid_vars, concrete_grid)

__all__ = ["is_symbolic", "And", "Or", "Not", "Implies", "If", "Eq", "Distinct", "all_of",
           "any_of", "is_unique", "in_range", "is_sorted", "is_permutation", "size", "at",
           "contains", "shape", "rank", "dim", "element_type", "same_shape", "same_element_type",
           "same_type", "same_types", "shape_is", "EnumAttr", "IntAttr", "I64ArrayAttr", "Group",
           "BoolAttr", "I64MatrixAttr", "BoolArrayAttr", "EnumListAttr", "ConvDimensionsGroup",
           "StringAttr", "API_VERSIONS", "ApiVersionAttr", "Dictionary", "ConfigAttr",
           "SymbolListAttr", "RawAttr", "UnitAttr", "ReplicaGroupsAttr", "groups_shape",
           "groups_entries", "BOOLEAN", "SIGNED", "UNSIGNED", "INTEGER", "FLOAT", "COMPLEX", "ANY",
           "Operand", "Attribute", "Result", "Region", "Function", "Instance", "Scoring", "OpSpec", "Spelled", "unnumbered", "constraint_named", "type_rule",
           "Approx", "ImplDefined", "INTEGER_OVERFLOW_WHY", "integer_overflow", "ANY_VALUE",
           "Exactly", "RoundTo", "Range", "Choices", "Elementwise", "Generic", "finite",
           "finite_nonzero", "approx_if_complex", "checked", "DataMovement", "Accumulating",
           "ControlFlow", "Decomposition", "SideEffect", "LoopLimit", "Sample", "Statistical",
           "Measured", "Characterized", "Collective", "Position", "GRID_VARS", "symbolic_grid",
           "grid_vars", "concrete_grid"]
