"""An op's attributes, read from its printed text into the values its declaration names.

The MLIR bindings cannot hand out every attribute, so each is read from the
op's generic form (literals.op_attributes) by the kind the op declares
(`spec.dsl.attributes`); grouped attributes from their `#stablehlo.x<…>`,
whose printer leaves defaults out; discardable attributes of other dialects
are dropped; `result_accuracy` is accepted only at its default, the one
value whose meaning the encoded spec states.
"""
from __future__ import annotations

import re

from ..spec.dsl import I64ArrayAttr, IntAttr
from ..spec.types import SI64, TensorType, parse_type
from .literals import op_attributes, parse_dense, parse_elements
from .rejection import ProgramRejected


_LONG_HEX = re.compile(r'"0x[0-9A-Fa-f]{128,}"')
_ASIDE = "shlo_conform.hex"
_HEX_DENSE = re.compile(r'dense<("0x[0-9A-Fa-f]*")>\s*:\s*(tensor<.*>)', re.S)


def attribute_texts(op, name: str, discardable: set | None = None) -> dict:
    """{attribute name: text} of an op (literals.op_attributes on its generic
    form).  Long hex literals (a model's weights as a constant: megabytes)
    are set aside while the dictionary is split — op_attributes reads
    strings a character at a time — and put back in the texts after."""
    asm = op.get_asm(print_generic_op_form=True, skip_regions=True, use_local_scope=True, assume_verified=True)
    aside: list = []

    def put_aside(m):
        aside.append(m.group(0))
        return f'"{_ASIDE}{len(aside) - 1}"'
    short = _LONG_HEX.sub(put_aside, asm)
    present = op_attributes(short, name, discardable)
    if aside:
        back = re.compile(f'"{re.escape(_ASIDE)}(\\d+)"')
        present = {k: back.sub(lambda m: aside[int(m.group(1))], v) if _ASIDE in v else v for k, v in present.items()}
    return present


def dense_constant(text: str):
    """literals.parse_dense, with the hex form (how MLIR prints large
    constants) split by a regular expression rather than a character scan."""
    m = _HEX_DENSE.fullmatch(text.strip())
    if m is None:
        return parse_dense(text)
    t = parse_type(m.group(2))
    if not isinstance(t, TensorType):
        raise ValueError(f"dense literal of non-tensor type {t}")
    return parse_elements(m.group(1), t), t


def declared_attributes(spec, present: dict, mnemonic: str, discardable: set = frozenset()) -> dict:
    """The spec's attributes from {name: text}; grouped ones from their group.
    What the printer leaves out holds its default: an empty list or 0 inside
    a group, the declared default of an optional attribute.  Discardable
    attributes (MLIR's `{…}` dictionary, which any tool may attach to any op
    and no op's meaning reads: torch-xla's `result_layout` and `xla_shape`
    on transpose) are set aside unless the spec declares the name; an
    unknown name among the op's own properties (`<{…}>`) is a rejection."""
    declared = {a.name for a in spec.attributes} | {g.mlir_name for g in spec.groups}
    for name in [n for n in present if "." in n or (n in discardable and n not in declared)]:
        del present[name]   # discardable attributes (mhlo.sharding, result_layout, …)
    attrs, grouped = {}, {}
    for g in spec.groups:
        kinds = {a.name: a.kind for a in spec.attributes if a.group == g.mlir_name}
        if g.mlir_name in present:
            try:
                grouped.update(g.from_mlir(present.pop(g.mlir_name), kinds))
            except (ValueError, IndexError) as e:
                raise ProgramRejected(f"{mnemonic}: attribute {g.mlir_name}: {e}") from None
    for a in spec.attributes:
        if a.group is not None:
            if a.name in grouped:
                attrs[a.name] = grouped[a.name]
            elif isinstance(a.kind, I64ArrayAttr):
                attrs[a.name] = ()  # the printer leaves empty lists out of a group
            elif isinstance(a.kind, IntAttr):
                attrs[a.name] = 0   # ... and integers equal to 0 (index_vector_dim = 0)
            elif not a.optional and a.default is None:
                raise ProgramRejected(f"{mnemonic}: missing {a.name} in attribute {a.group}")
        elif a.name in present:
            attrs[a.name] = _attribute(a, present.pop(a.name), mnemonic)
        elif not a.optional and a.default is None:
            raise ProgramRejected(f"{mnemonic}: missing attribute {a.name}")
    accuracy = present.pop("result_accuracy", None)
    if accuracy is not None and not _default_accuracy(accuracy):
        raise ProgramRejected(f"{mnemonic}: result_accuracy {accuracy}: only its default (mode DEFAULT, no "
                              "tolerance: the implementation's own accuracy) means what the encoded spec says")
    if present:
        raise ProgramRejected(f"{mnemonic}: unknown attribute(s) {', '.join(sorted(present))}")
    return attrs


_ACCURACY_FIELD = re.compile(r"(mode|atol|rtol|ulps)\s*=\s*(#stablehlo\.result_accuracy_mode<\s*(\w+)\s*>|[^,>]+)")


def _default_accuracy(text: str) -> bool:
    """Whether a `result_accuracy` attribute (newer StableHLO than the
    seed: the accuracy a transcendental op is asked for) holds its default —
    mode DEFAULT, no tolerance — which asks for the implementation's own
    accuracy, i.e. what the op means without it.  jaxlib's CHLO
    decompositions write it on the ops they create (acos's sqrt)."""
    t = text.strip()
    if not (t.startswith("#stablehlo.result_accuracy<") and t.endswith(">")):
        return False
    for name, value, mode in _ACCURACY_FIELD.findall(t[len("#stablehlo.result_accuracy<"):-1]):
        if name == "mode":
            if mode != "DEFAULT":
                return False
        else:
            try:
                if float(value.split(":")[0]) != 0:
                    return False
            except ValueError:
                return False
    return True


def _attribute(a, text: str, mnemonic: str):
    try:
        if type(a.kind) is I64ArrayAttr and text.startswith("dense<"):
            # The seed's spelling: a 1-D si64 tensor constant (splats included).
            array, t = parse_dense(text)
            if t.rank != 1 or t.element_type != SI64:
                raise ValueError(f"{t} is not a 1-dimensional tensor of si64")
            return tuple(int(x) for x in array)
        return a.kind.from_mlir(text)
    except (ValueError, IndexError) as e:
        raise ProgramRejected(f"{mnemonic}: attribute {a.name}: {e}") from None
