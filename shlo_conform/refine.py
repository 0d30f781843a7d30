"""`run` on a program with dynamic dimensions: refined to static shapes first.

`jax.export` with symbolic shapes (`jax.export.symbolic_shape("b")`) is how
models are serialized for serving, and its @main takes `tensor<?x16xf32>`.
The spec (v1.20, "Dynamism") gives such a program a meaning only once its
arguments have concrete shapes, and calls a runtime shape mismatch
undefined behaviour.  So `run` does what a serving stack does before it
compiles: it takes the concrete shapes from the inputs (`--inputs`: each
array's header; `--random`: `--dims b=4,t=3` or `--dims arg0=4x16`),
refines the program with StableHLO's and jaxlib's own passes, and judges
the static program as any other:

  stablehlo-refine-arguments{types=…}   @main's `?` dimensions set to the inputs'
  jaxlib's refine_polymorphic_shapes    what jax.export's own call and compile
                                        run on a module whose @main is static:
                                        the inliner, CSE, stablehlo-refine-shapes
                                        (with the dynamic custom calls jax
                                        exports), stablehlo-canonicalize-dynamism
                                        (dynamic_broadcast_in_dim, dynamic_reshape,
                                        dynamic_iota … with constant shape operands
                                        become their static ops), the shape
                                        assertions checked and erased, every shape
                                        validated static

Upstream's passes alone, registered in jaxlib's MLIR from Python
(`stablehlo-refine-shapes`, `stablehlo-canonicalize-dynamism`,
`stablehlo-check-shape-assertions`), are not enough: that MLIR registers no
inliner for func.call, and refine-shapes refuses a function called with
two refinements ("incompatible refinement keys": jax's `divmod` for a
dimension `2*b`, its `_where`).  These passes are a second opinion on
shapes, not the oracle: the oracle judges the refined program op by op
under the encoded spec's constraints, so a wrong refinement shows as a
rejected program, never as a wrong verdict.

jax.export's conventions, read from the module itself (text, bytecode and
`Exported.serialize()` alike):
- the shape assertions (`stablehlo.custom_call @shape_assertion(pred,
  v0, …)` in @main, the message formatted from the values as llvm::formatv
  does) are evaluated here on the inputs' shapes before any pass runs
  (`_Scalars`: exact integer arithmetic of the shape computation jax writes
  there), then checked again by jaxlib's pass.  One that does not hold is
  the inputs' shapes contradicting the export's specification (two
  arguments giving two values of `b`, a constraint `b >= 2` broken): one
  line, exit 2, in jax's words — the spec leaves such a run undefined.
  Their "Obtained dimension variables: 'b' = 4" clauses name the values
  `run` prints (jax's own solution, expressions such as `2*b` included).
- a program exported for several platforms takes a platform index first
  (`tensor<i32> {jax.global_constant = "_platform_index"}`): no input of
  the user's function, so it is replaced by a constant — CPU's index where
  the serialized form names the platforms (the oracle, the interpreter and
  XLA:CPU all run on the host), else 0 — and said so.
- the dimension variables reach callees as `jax.global_constant` arguments
  computed in @main from `get_dimension_size`: refinement folds them; @main
  itself takes none (an argument of @main marked so, other than the
  platform index, is refused: the caller would have to pass it).
- the shape specifications (`args[0].shape = (b, 16)`) in the assertions'
  messages, or `Exported.in_avals` (of `module_kept_var_idx`) in the
  serialized form, say which dimension `--dims b=4` sets.

Runs in `run`'s isolated job process (MLIR's parser and passes may die on a
hostile program); `refine_for_run` is the caller's side.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

PLATFORM_INDEX = "_platform_index"
SHAPE_ASSERTION = "shape_assertion"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ARG = re.compile(r"arg(\d+)")


class Unrefinable(ValueError):
    """The program's dynamic shapes cannot be made static with the shapes
    given (missing, contradicting, or left dynamic by refinement): one line,
    exit 2."""


def parse_dims(text: str) -> dict:
    """`--dims b=4,t=3` → {"b": 4, "t": 3}; `arg0=4x16` → {"arg0": (4, 16)}
    (argument 0's whole shape, for a program that names no dimension
    variables).  Raises ValueError with the reason."""
    out = {}
    for item in text.split(","):
        name, eq, value = item.strip().partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not _NAME.fullmatch(name) or not value:
            raise ValueError(f"{item.strip()!r} is not NAME=N (a dimension variable) or argK=AxB (an argument's "
                             "shape)")
        if name in out:
            raise ValueError(f"{name} is given twice")
        if _ARG.fullmatch(name):
            parts = value.split("x") if value != "" else []
            if not all(p.isdigit() for p in parts):
                raise ValueError(f"{name}={value}: an argument's shape is sizes joined by x (4x16), each >= 0")
            out[name] = tuple(int(p) for p in parts)
        else:
            if not value.isdigit():
                raise ValueError(f"{name}={value}: a dimension is an integer >= 0")
            out[name] = int(value)
    return out


@dataclass
class Refined:
    """The refinement `run` judged: the static program and what it says
    about how it got there."""
    text: str                    # the static program (pretty form, no locations)
    form: str                    # the form it came in ("text", "jax.export Exported.serialize()", …)
    before: list                 # @main's argument types as written (platform index left out)
    after: list                  # … as refined
    source: str                  # where the shapes came from
    values: dict = field(default_factory=dict)   # dimension variables jax's assertions name {name: value}
    assertions: int = 0          # jax.export shape assertions evaluated here, all held
    unevaluated: int = 0         # … not evaluated here (an op outside @main's shape arithmetic): jaxlib's check
    platform: str = ""           # the platform index fixed, when the program takes one

    @property
    def program_form(self) -> str:
        """The form on `run`'s program line."""
        return self.form + (", refined to static shapes" if self.before != self.after else
                             ", jax.export's platform index fixed")

    def lines(self) -> list[str]:
        """`run`'s lines about the refinement, under the program line."""
        dims = ", ".join(f"{k}={v}" for k, v in self.values.items())
        changed = [f"{b} → {a}" for b, a in zip(self.before, self.after) if b != a]
        out = [f"shapes   refined to static shapes from {self.source}" + (f": {dims}" if dims else "")
               + "; " + ", ".join(changed) if changed else
               "shapes   @main's arguments are static; refined only to fix jax.export's platform index"]
        checked = (f"jax.export's shape assertions: {self.assertions} evaluated on these shapes, all held"
                   if self.assertions else "")
        if self.unevaluated:
            checked += ("; " if checked else "jax.export's shape assertions: ") + \
                f"{self.unevaluated} checked by jaxlib's refinement"
        out.append("         by stablehlo-refine-arguments, then jaxlib's refine_polymorphic_shapes (inliner, "
                   "stablehlo-refine-shapes, stablehlo-canonicalize-dynamism); "
                   + (checked or "no shape assertions in the program"))
        if self.platform:
            out.append(f"         {self.platform}")
        return out


def annotate(out: str, refined: Refined | None) -> str:
    """`run`'s text with the refinement's lines after the program line."""
    if refined is None:
        return out
    first, _, rest = out.partition("\n")
    return "\n".join([first, *refined.lines(), rest]) if rest else "\n".join([first, *refined.lines()])


# --------------------------------------------------------------------------
# The caller's side (run_command)
# --------------------------------------------------------------------------

def maybe_dynamic(data: bytes) -> bool:
    """Whether the program may need refining, without parsing it: text with
    no `?` and no platform index is static; bytecode and serialized forms
    are asked (their types are not text)."""
    from .oracle.reading import MLIR_BYTECODE_MAGIC
    if data.startswith(MLIR_BYTECODE_MAGIC):
        return True
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return True
    return "?" in text or PLATFORM_INDEX in text


def refine_for_run(jobs, data: bytes, *, inputs_npz: str | None, dims: dict | None, grid, timeout: float,
                   memory: int | None) -> tuple[bytes, Refined | None]:
    """(the program to judge, the refinement or None): `data` itself when
    @main is static (or unreadable: the ordinary reader then says why), the
    refined program's text otherwise.  Raises Unrefinable (exit 2)."""
    if not dims and not maybe_dynamic(data):
        return data, None
    got = jobs.call("shlo_conform.refine:refined", data, inputs_npz, dims, grid.size if grid else 1,
                    timeout=timeout, memory=memory)
    if isinstance(got, str):
        raise Unrefinable(got)
    if isinstance(got, Refined):
        return got.text.encode(), got
    if got is not None:   # a Failure: the job died, hung or raised while reading or refining
        raise Unrefinable(f"cannot refine the program's shapes ({got.kind}: {' '.join(str(got.detail).split())[:300]})")
    return data, None


# --------------------------------------------------------------------------
# The job process's side
# --------------------------------------------------------------------------

@dataclass
class _Source:
    text: str
    form: str
    specs: list | None = None      # per argument of the user's function: its dimensions as strings, or None
    platforms: tuple | None = None


def _source(data: bytes) -> _Source | None:
    """The program's text, its form, and for a serialized Exported its
    shape specifications and platforms; None when it is none of the forms
    `run` reads (its reader says why)."""
    from .oracle.reading import MLIR_BYTECODE_MAGIC, SyntaxRejected, from_bytecode
    try:
        if data.startswith(MLIR_BYTECODE_MAGIC):
            form = "portable artifact" if b"StableHLO" in data[:32] else "MLIR bytecode"
            return _Source(from_bytecode(data), form)
        try:
            return _Source(data.decode(), "text")
        except UnicodeDecodeError:
            pass
        from jax import export
        exp = export.deserialize(bytearray(data))
        avals = [exp.in_avals[i] for i in exp.module_kept_var_idx]
        return _Source(from_bytecode(bytes(exp.mlir_module_serialized)), "jax.export Exported.serialize()",
                       [[str(d) for d in a.shape] for a in avals], tuple(exp.platforms))
    except SyntaxRejected:
        return None
    except Exception:   # not a flatbuffer of jax's schema: not an Exported
        return None


def refined(data: bytes, inputs_npz: str | None, dims: dict | None, processes: int = 1):
    """In the job process: the Refined program, a one-line refusal (str), or
    None when @main needs no refinement (and no --dims asks for one)."""
    from jaxlib.mlir import ir

    from .oracle.reading import registered_context
    src = _source(data)
    if src is None:
        return None
    with registered_context(), ir.Location.unknown():
        try:
            module = ir.Module.parse(src.text)
        except ir.MLIRError:
            return None   # the ordinary reader names what is wrong
        main = _main(module)
        if main is None:
            return None
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        inputs = list(ftype.inputs)
        platform = _takes_platform_index(main, inputs)
        user = inputs[1:] if platform else inputs
        dynamic = [not s.has_static_shape for s in map(_shaped, user) if s is not None]
        if not any(dynamic) and not platform:
            return "--dims: @main's arguments have static shapes; there is no dimension to set" if dims else None
        if processes > 1:   # a grid's inputs are per process (arg<k>@<id>): not read here
            return "dynamic shapes on a process grid are not refined yet: run it on one process" if any(dynamic) \
                else None
        try:
            return _refine(module, main, src, user, platform, inputs_npz, dims)
        except Unrefinable as e:
            return str(e)


def _main(module):
    funcs = {_ir_name(op): op for op in module.body.operations if op.operation.name == "func.func"}
    return funcs.get("main") or (next(iter(funcs.values())) if len(funcs) == 1 else None)


def _ir_name(op) -> str:
    """A func.func's symbol name."""
    return str(op.operation.attributes["sym_name"]).strip('"')


def _arg_attr(main, i: int, name: str):
    if "arg_attrs" not in main.attributes:
        return None
    attrs = main.attributes["arg_attrs"]
    if i >= len(attrs):
        return None
    from jaxlib.mlir import ir
    d = ir.DictAttr(attrs[i])
    return str(d[name]).strip('"') if name in d else None


def _takes_platform_index(main, inputs) -> bool:
    """jax.export's convention for a program lowered for several platforms:
    @main's first argument is the platform index, marked
    `jax.global_constant = "_platform_index"`."""
    return bool(inputs) and _arg_attr(main, 0, "jax.global_constant") == PLATFORM_INDEX


def _refine(module, main, src: _Source, user: list, platform: bool, inputs_npz, dims) -> Refined:
    """The refinement of a module whose @main has dynamic dimensions (or
    jax.export's platform index), in the order of the module docstring."""
    before = [str(t) for t in user]
    for i in range(len(user)):
        k = i + (1 if platform else 0)
        other = _arg_attr(main, k, "jax.global_constant")
        if other is not None:
            raise Unrefinable(f"@main's argument {i} is jax.export's global constant {other!r}, passed by the caller; "
                              "run gives only the function's own arguments")
        if _shaped(user[i]) is not None and _ranked(user[i]) is None:
            raise Unrefinable(f"@main's argument {i} is unranked ({before[i]}): no shape to refine it to")
    specs = src.specs if src.specs is not None else _text_specs(module)
    shapes, source = _shapes(user, before, specs, inputs_npz, dims)
    after = [_static_type(t, s) if s is not None else str(t) for t, s in zip(user, shapes)]
    note = ""
    if platform:
        index, note = _platform_choice(src.platforms)
        _fix_platform_index(main, index)
    values, held, left = _check_assertions(module, main, shapes, dims)
    _run_passes(module, f"stablehlo-refine-arguments{{types={','.join(after)}}}")
    module = _jaxlib_refine(module)
    _validate_static(module)
    if "jax.uses_shape_polymorphism" in module.operation.attributes:
        del module.operation.attributes["jax.uses_shape_polymorphism"]   # no longer: nothing left to refine
    return Refined(module.operation.get_asm(enable_debug_info=False), src.form, before, after, source, values, held,
                   left, note)


def _shaped(t):
    """`t` as an MLIR ShapedType (tensor), None when it is not one (a token, a tuple)."""
    from jaxlib.mlir import ir
    d = t.maybe_downcast()
    return d if isinstance(d, ir.ShapedType) else None


def _ranked(t):
    from jaxlib.mlir import ir
    d = t.maybe_downcast()
    return d if isinstance(d, ir.RankedTensorType) else None


def _is_complex(t) -> bool:
    from jaxlib.mlir import ir
    return isinstance(t.maybe_downcast(), ir.ComplexType)


def _static_type(t, shape) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{_ranked(t).element_type}>"


def _shapes(user: list, before: list, specs, inputs_npz, dims) -> tuple[list, str]:
    """Each argument's concrete shape (None: a non-tensor argument, left to
    `run`'s own refusal), and where the shapes came from."""
    ranked = [_ranked(t) for t in user]
    if inputs_npz is not None:
        return _npz_shapes(inputs_npz, ranked, before), "the inputs' shapes"
    if not dims and all(r is None or r.has_static_shape for r in ranked):   # refined for the platform index only
        return [None if r is None else tuple(r.shape) for r in ranked], "@main's own static shapes"
    if not dims:
        names = sorted({v for s in specs or [] if s for d in s for v in _variables(d)})
        raise Unrefinable(f"@main has dynamic dimensions ({', '.join(b for b in before if '?' in b)}): give --inputs, "
                          "or with --random the sizes: --dims " + (",".join(f"{n}=N" for n in names) if names else
                                                                   "arg0=AxB (each dynamic argument's shape)"))
    return _dims_shapes(ranked, before, specs, dims), "--dims " + ",".join(
        f"{k}={'x'.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in dims.items())


def _fits(i: int, rt, before: str, shape: tuple, what: str) -> tuple:
    """`shape` checked against argument i's rank and static dimensions."""
    dyn = _dynamic_size()
    want = list(rt.shape)
    if len(shape) != len(want) or any(w != dyn and w != s for w, s in zip(want, shape)):
        raise Unrefinable(f"{what} has shape {tuple(shape)}, @main's argument {i} is {before}")
    return tuple(shape)


def _dynamic_size() -> int:
    from jaxlib.mlir import ir
    return ir.ShapedType.get_dynamic_size()


def _npz_shapes(path: str, ranked: list, before: list) -> list:
    """Each argument's shape from the header of its array in the .npz
    (`arg<k>` or `arr_<k>`; complex values given as raw bits carry a last
    dimension of 2).  The arrays themselves are read and checked by `run`'s
    ordinary reader once the types are static."""
    import zipfile

    from .differential import npy_header
    try:
        with zipfile.ZipFile(path) as z:
            names = {i.filename[:-4]: i for i in z.infolist() if i.filename.endswith(".npy")}
            out = []
            for i, rt in enumerate(ranked):
                if rt is None:
                    out.append(None)
                    continue
                name = f"arg{i}" if f"arg{i}" in names else f"arr_{i}"
                if name not in names:
                    raise Unrefinable(f"--inputs {path}: no array arg{i} (or arr_{i}) for argument {i} of type "
                                      f"{before[i]}")
                with z.open(names[name]) as f:
                    try:
                        shape, _, dtype = npy_header(f)
                    except ValueError as e:
                        raise Unrefinable(f"--inputs {path}: {name}: {e}") from None
                if _is_complex(rt.element_type) and dtype.kind == "u" and len(shape) == rt.rank + 1:
                    shape = shape[:-1]   # complex as raw bits: (…, 2) unsigned components
                out.append(_fits(i, rt, before[i], shape, f"--inputs {path}: {name}"))
            return out
    except Unrefinable:
        raise
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as e:   # a damaged file or header
        raise Unrefinable(f"--inputs {path}: cannot read the arrays' shapes ({type(e).__name__}: {e})") from None


def _variables(dim: str) -> list[str]:
    """The dimension variables in one dimension of a shape specification."""
    return [] if dim.strip().lstrip("-").isdigit() else \
        [v for v in _NAME.findall(dim) if v not in ("floordiv", "mod", "max", "min", "non_negative")]


def _dims_shapes(ranked: list, before: list, specs, dims: dict) -> list:
    """Each argument's shape from `--dims`: `argK=AxB` as given; otherwise its
    specification's dimensions evaluated on the named variables (jax's own
    symbolic expressions, `2*b` included); a static argument as it is."""
    known = sorted({v for s in specs or [] if s for d in s for v in _variables(d)})
    unknown = [k for k in dims if not _ARG.fullmatch(k) and k not in known]
    if unknown:
        raise Unrefinable(f"--dims: the program names no dimension variable {unknown[0]!r}"
                          + (f" (its variables: {', '.join(known)})" if known else
                             " (it states no shape specification: give each dynamic argument's shape, arg0=AxB)"))
    bad = [k for k in dims if _ARG.fullmatch(k) and int(k[3:]) >= len(ranked)]
    if bad:
        raise Unrefinable(f"--dims: @main has no argument {bad[0][3:]} ({len(ranked)} arguments)")
    env = {k: v for k, v in dims.items() if not _ARG.fullmatch(k)}
    out = []
    for i, rt in enumerate(ranked):
        if rt is None:
            out.append(None)
        elif f"arg{i}" in dims:
            out.append(_fits(i, rt, before[i], dims[f"arg{i}"], f"--dims arg{i}"))
        elif rt.has_static_shape:
            out.append(tuple(rt.shape))
        elif specs is None or i >= len(specs) or specs[i] is None or len(specs[i]) != rt.rank:
            raise Unrefinable(f"--dims: argument {i} ({before[i]}) has no shape specification naming its dynamic "
                              f"dimensions: give arg{i}=AxB")
        else:
            out.append(_fits(i, rt, before[i], _evaluate(specs[i], env, i), f"--dims for argument {i}"))
    return out


def _evaluate(spec: list, env: dict, i: int) -> tuple:
    """Argument i's shape: each dimension of its specification evaluated on
    `env` with jax's parser and evaluator of symbolic dimensions."""
    missing = sorted({v for d in spec for v in _variables(d)} - set(env))
    if missing:
        raise Unrefinable(f"--dims: argument {i}'s shape ({', '.join(spec)}) needs {', '.join(missing)}: give "
                          + ",".join(f"{m}=N" for m in missing))
    from jax import export
    try:
        dims = export.symbolic_shape(", ".join(spec))
        shape = tuple(int(d) if isinstance(d, int) else int(d._evaluate(env)) for d in dims)
    except Exception as e:   # jax's parser or evaluator refusing the expression
        raise Unrefinable(f"--dims: cannot evaluate argument {i}'s shape ({', '.join(spec)}): {e}") from None
    if any(d < 0 for d in shape):
        raise Unrefinable(f"--dims: argument {i}'s shape ({', '.join(spec)}) is {shape}: a size below 0")
    return shape


_SPECS = re.compile(r"args\[(\d+)\]\.shape = \(")


def _text_specs(module) -> list | None:
    """The shape specifications a jax.export program states in its shape
    assertions' messages ("Using the following polymorphic shapes
    specifications: args[0].shape = (b, 16),args[1].shape = (16, 8)."),
    per argument; None when it states none."""
    for op in _walk(module.operation):
        if _is_assertion(op):
            message = _string_attr(op, "error_message")
            specs = {}
            for m in _SPECS.finditer(message):
                inner = _balanced(message, m.end())
                if inner is None:
                    break
                specs[int(m.group(1))] = [d.strip() for d in _split_dims(inner) if d.strip()]
            if specs:
                return [specs.get(k) for k in range(max(specs) + 1)]
    return None


def _balanced(text: str, start: int) -> str | None:
    """The text from `start` to the parenthesis that closes the one before it."""
    depth = 1
    for j in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return text[start:j]
    return None


def _split_dims(inner: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def _platform_choice(platforms: tuple | None) -> tuple[int, str]:
    """The platform index fixed for every backend: CPU's where the serialized
    form names the platforms (the oracle, the interpreter and XLA:CPU all
    run on the host), else 0 (the text does not name them)."""
    if platforms:
        index = platforms.index("cpu") if "cpu" in platforms else 0
        return index, (f"platform index {index} ({platforms[index]}) fixed: the program was exported for "
                       f"{', '.join(platforms)} and takes the index as its first argument")
    return 0, ("platform index 0 fixed: the program was exported for several platforms and takes the index as its "
               "first argument (the text does not name the platforms; the first one exported is index 0)")


def _fix_platform_index(main, index: int) -> None:
    """jax.export's platform index argument replaced by a constant: the
    user's function does not take it, and refine-shapes then specialises
    every callee on it (it is a `jax.global_constant`)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    block = main.regions[0].blocks[0]
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint.at_block_begin(block):
        const = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i32),
                                                                    ir.IntegerAttr.get(i32, index)))
    block.arguments[0].replace_all_uses_with(const.result)
    block.erase_argument(0)
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs)[1:],
                                                                            list(ftype.results)))
    if "arg_attrs" in main.attributes:
        attrs = main.attributes["arg_attrs"]
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([attrs[i] for i in range(1, len(attrs))])


_PASSES_REGISTERED = False


def _run_passes(module, pipeline: str) -> None:
    """StableHLO's own passes on the module (registered in jaxlib's MLIR
    once); a failure is the shapes not fitting the program: one line."""
    global _PASSES_REGISTERED
    from jaxlib.mlir import ir, passmanager
    import jaxlib.mlir._mlir_libs._stablehlo as stablehlo
    if not _PASSES_REGISTERED:
        stablehlo.register_stablehlo_passes()
        _PASSES_REGISTERED = True
    pm = passmanager.PassManager.parse(f"builtin.module({pipeline})")
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        diags = getattr(e, "error_diagnostics", None) or []
        why = " ".join(str(diags[0].message).split()) if diags else " ".join(str(e).split())
        raise Unrefinable(f"the inputs' shapes do not fit the program ({_UNDEFINED}): {why[:600]}") from None


_UNDEFINED = "the spec calls a runtime shape mismatch undefined behaviour"


def _jaxlib_refine(module):
    """jaxlib's `refine_polymorphic_shapes` (what `jax.export`'s call and
    compile run on a module with static @main): the inliner, CSE,
    stablehlo-refine-shapes (with jax's extensions: the dynamic custom calls
    such as `stablehlo.dynamic_reduce_window` that `cumsum` exports),
    stablehlo-canonicalize-dynamism, the shape assertions checked, every
    shape validated static.  Upstream's refine-shapes alone, run from
    Python, cannot inline (jaxlib's MLIR registers no inliner for func.call)
    and refuses a function called with two refinements (`divmod` in `2*b`)."""
    import io

    from jax._src.lib import _jax
    from jaxlib.mlir import ir
    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    text = module.operation.get_asm(enable_debug_info=False)
    try:
        out = _jax.mlir.refine_polymorphic_shapes(buf.getvalue(), enable_shape_assertions=True,
                                                  validate_static_shapes=True, enable_shardy="sdy." in text)
    except Exception as e:   # jaxlib's XlaRuntimeError: INVALID_ARGUMENT with the pass's diagnostics
        raise Unrefinable(f"the inputs' shapes do not fit the program ({_UNDEFINED}): jaxlib's refinement says "
                          f"{_first_error(str(e))}") from None
    return ir.Module.parse(out)


def _first_error(message: str) -> str:
    """The first `error:` of a pass manager's diagnostics, on one line, its
    source location dropped (a jax.export module's locations name the
    exporter's files)."""
    m = re.search(r"error: (.*)", message)
    line = m.group(1) if m else message.split("\n")[0]
    line = re.sub(r'^loc\("[^"]*"\): ', "", line.strip())
    return _short(line)[:600]


def _walk(op):
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _walk(inner.operation)


def _is_assertion(op) -> bool:
    return op.name == "stablehlo.custom_call" and _string_attr(op, "call_target_name") == SHAPE_ASSERTION


def _string_attr(op, name: str) -> str:
    from jaxlib.mlir import ir
    if name not in op.attributes:
        return ""
    a = op.attributes[name]
    a = a.maybe_downcast() if hasattr(a, "maybe_downcast") else a
    return a.value if isinstance(a, ir.StringAttr) else str(a)


_OBTAINED = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' = (-?\d+) from specification")


def _check_assertions(module, main, shapes: list, dims: dict | None) -> tuple[dict, int, int]:
    """jax.export's shape assertions in @main, evaluated on the arguments'
    concrete shapes before any pass runs (`_Scalars`: the integer shape
    computation jax writes there): ({dimension variable: value} from their
    "Obtained dimension variables" clause, how many held, how many could
    not be evaluated here — those jaxlib's refinement checks).  One that
    fails is the inputs' shapes contradicting the export's specification
    (two arguments giving `b` two values, a constraint broken): the spec
    leaves the run undefined, `run` refuses it in one line, jax's words."""
    scalars = _Scalars(module, shapes)
    values, held, left = {}, 0, 0
    for op in main.regions[0].blocks[0].operations:
        op = op.operation
        if not _is_assertion(op):
            continue
        operands = [scalars.value(v, scalars.main_frame) for v in op.operands]
        if any(v is None for v in operands):
            left += 1
            continue
        text = _format(_string_attr(op, "error_message"), operands[1:])
        if not operands[0]:
            raise Unrefinable("the inputs' shapes contradict the program's shape specification (jax.export's shape "
                              f"assertion; {_UNDEFINED}): {_short(text)}")
        held += 1
        for name, value in _OBTAINED.findall(text):
            values.setdefault(name, int(value))
    for name, value in (dims or {}).items():
        if name in values and values[name] != value:
            raise Unrefinable(f"--dims {name}={value}: the program derives {name}={values[name]} from the shapes")
    return values, held, left


class _Scalars:
    """The integer scalars of @main's shape computation, evaluated exactly:
    what jax.export writes before its shape assertions —
    get_dimension_size of an argument, constants, convert, integer
    arithmetic (divide truncating and remainder taking the dividend's sign,
    as the spec's `divide`/`remainder` on integers), compare, the logical
    ops, sign, select, and calls of private functions (`divmod`).  Anything else
    is None: not evaluated here, left to jaxlib's check."""

    DEPTH = 32   # nested calls followed at most

    def __init__(self, module, shapes: list):
        self.shapes = shapes
        self.funcs = {_ir_name(op): op for op in module.body.operations if op.operation.name == "func.func"}
        self.main_frame = {}   # value -> int; @main's arguments read only through get_dimension_size

    def value(self, v, frame: dict, depth: int = 0):
        from jaxlib.mlir import ir
        if v in frame:
            return frame[v]
        owner = v.owner
        if isinstance(owner, ir.Block):
            return None
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.name == "func.call":
            results = self._call(op, frame, depth)
            for r, x in zip(op.results, results or [None] * len(op.results)):
                frame[r] = x
            return frame[v]
        frame[v] = got = self._op(op, frame, depth)
        return got

    def _call(self, op, frame: dict, depth: int):
        """A func.call's results: the callee's body on the operands' values."""
        callee = self.funcs.get(str(op.attributes["callee"]).lstrip("@"))
        if callee is None or depth >= self.DEPTH:
            return None
        args = [self.value(a, frame, depth) for a in op.operands]
        if any(a is None for a in args):
            return None
        block = callee.regions[0].blocks[0]
        inner = dict(zip(block.arguments, args))
        ret = list(block.operations)[-1].operation
        if ret.name != "func.return":
            return None
        return [self.value(r, inner, depth + 1) for r in ret.operands]

    def _op(self, op, frame: dict, depth: int):
        name = op.name.removeprefix("stablehlo.")
        if name == "constant":
            return _constant_value(str(op.attributes["value"]))
        if name == "get_dimension_size":
            arg = op.operands[0]
            from jaxlib.mlir import ir
            if not isinstance(arg.owner, ir.Block) or frame is not self.main_frame:
                return None
            shape = self.shapes[ir.BlockArgument(arg).arg_number]
            return None if shape is None else shape[int(str(op.attributes["dimension"]).split(":")[0])]
        xs = [self.value(o, frame, depth) for o in op.operands]
        if any(x is None for x in xs):
            return None
        return _apply(name, xs, str(op.attributes["comparison_direction"]) if name == "compare" else "",
                      _is_i1(op.results[0].type) if len(op.results) == 1 else False)


def _is_i1(t) -> bool:
    return str(t) == "tensor<i1>"


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_COMPARE = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "LT": lambda a, b: a < b,
            "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b}


def _apply(name: str, xs: list, direction: str, boolean: bool):
    """One integer op of the shape computation on exact values (None: not one
    of them, or a division by zero)."""
    if name == "convert":
        return int(xs[0] != 0) if boolean else xs[0]
    if name == "compare":
        m = re.search(r"\b(EQ|NE|LT|LE|GT|GE)\b", direction)
        return None if m is None else int(_COMPARE[m.group(1)](*xs))
    if name == "select":
        return xs[1] if xs[0] else xs[2]
    if name == "not":
        return 1 - xs[0] if boolean else ~xs[0]
    if name in ("divide", "remainder") and xs[1] == 0:
        return None
    ops = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
           "divide": _trunc_div, "remainder": lambda a, b: a - _trunc_div(a, b) * b,
           "maximum": max, "minimum": min, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
           "xor": lambda a, b: a ^ b}
    unary = {"negate": lambda a: -a, "abs": abs, "sign": lambda a: (a > 0) - (a < 0)}
    if name in ops and len(xs) == 2:
        return ops[name](*xs)
    if name in unary and len(xs) == 1:
        return unary[name](xs[0])
    return None


_SCALAR = re.compile(r"dense<(true|false|-?\d+)>")


def _constant_value(text: str):
    """A scalar integer or i1 constant's value, None when it is not one."""
    m = _SCALAR.match(text)
    if m is None:
        return None
    return {"true": 1, "false": 0}[m.group(1)] if m.group(1) in ("true", "false") else int(m.group(1))


def _format(message: str, inputs: list) -> str:
    """llvm::formatv's `{0}`, `{1:…}` replaced by the inputs, as jaxlib's
    shape-assertion check formats the message."""
    def sub(m):
        k = int(m.group(1))
        return str(inputs[k]) if k < len(inputs) else m.group(0)
    return re.sub(r"\{(\d+)(?:[,:][^}]*)?\}", sub, message)


def _short(message: str) -> str:
    """jax's assertion message on one line: its preamble and the link dropped."""
    text = " ".join(message.split())
    text = text.replace("Input shapes do not match the polymorphic shapes specification. ", "")
    text = re.sub(r",? ?\. Please see https?://\S+ for more details\.?$", "", text)
    text = re.sub(r"\s*Obtained dimension variables:\s*$", "", text)
    return text[:700]


def _validate_static(module) -> None:
    """Every value static and no shape assertion left (what jaxlib's
    ValidateStaticShapes asked already; checked again on the module `run`
    hands to every backend and the oracle)."""
    def dynamic(v) -> bool:
        shaped = _shaped(v.type)
        return shaped is not None and not shaped.has_static_shape
    for op in _walk(module.operation):
        if op.name == "builtin.module":
            continue
        args = [a for r in op.regions for b in r.blocks for a in b.arguments]
        if any(dynamic(v) for v in list(op.results) + args):
            raise Unrefinable(f"refinement left a dynamic shape at {op.name}: "
                              + _short(op.get_asm(enable_debug_info=False).split("\n")[0])[:300])
        if _is_assertion(op):
            raise Unrefinable("a jax.export shape assertion is left after refinement: it cannot be checked")
