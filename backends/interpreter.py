"""The official StableHLO reference interpreter, as shipped inside jaxlib
(`jaxlib.mlir.dialects.stablehlo.eval_module`).

compile: parse the text in an MLIR context with the StableHLO dialects
registered and run the verifier (errors -> Rejected).  run: build one
DenseElementsAttr per input from the hex of its raw bits
(`dense<"0x…"> : tensor<…>`, which the parser accepts for every element type,
i1 and 4-bit types taking one byte per element), evaluate, and read the
results back as numpy arrays.

Traps of the Python bindings, and how the adapter gets around them:

* A DenseElementsAttr of complex element type cannot cross into Python at all:
  the bindings' automatic downcast raises "Can't cast unknown element type
  DenseTypedElementsAttr" — and when that happens to a *result* of
  eval_module, the exception escapes C++ and the process aborts (SIGABRT).
* np.array(attr) / the buffer protocol refuse bf16, f8E4M3FN, f8E5M2, i4 and
  ui4 ("Unsupported floating-point type", "Unsupported integer type"), and
  printing the attribute gives decimal text only.

So when @main's signature has such a type at its boundary, the adapter adds
a *boundary shim*: the program's own @main is renamed `@__shlo_main` (made
private, otherwise untouched) and a new @main calls it, carrying
    complex<fN> arguments as two fN tensors (real, imag) -> stablehlo.complex
    complex<fN> results   -> stablehlo.real, stablehlo.imag -> two fN tensors
    bf16 / f8 results     -> stablehlo.bitcast_convert to i16 / i8 (raw bits)
    i4 / ui4 results      -> stablehlo.convert to i8 / ui8 (exact widening)
These carrier ops are evaluated by the interpreter too; they are exact and
bit-preserving by the spec, and the results are turned back into the
program's types with spec.types.from_bits.

A process grid (`compile_grid` / `run_grid`): the interpreter's own
`interpreter.run_parallel` op runs @main once per process, `programs`
naming it num_replicas × num_partitions times; its operands and results
are every process's, concatenated in flattened id order.  It runs each
process as a task of LLVM's default thread pool — one thread per CPU the
process may use — so on a grid of more processes than CPUs the processes
past the first few never start while those wait in a collective for them:
observed on 2 CPUs, a 4-process all_reduce ends the process with "LLVM
ERROR: rendezvous timed out" (and `taskset -c 0` does it to 2 processes).
Such grids are declared `unsupported`, naming the count, for programs
with a collective; collective-free programs (replica_id, partition_id) run
on any grid.  A JAX `shard_map` / `pmap` program (@main handing its
arguments to one `sdy.manual_computation` over every mesh axis, or GSPMD's
spelling of it) runs as the computation's body, each process on its shards
(backends/manual.py).  Other ops of other dialects are unsupported, rather
than the abort the interpreter gives them.

Process hazards (why the runner keeps this adapter in a worker process):
the interpreter kills its process with SIGFPE on an integer division by zero
(e.g. si32 divide/remainder by 0, or MIN / -1), and aborts on some internal
errors.  Nothing here tries to catch those.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..spec.types import (E_F16, E_F32, E_F64, ElementType, TensorType, dense_literal, element_type, from_bits,
                          holds_every_value, parse_type)
from ..oracle.reading import ChloNotDecomposed, legalize_chlo
from .base import Backend, Rejected, Skip, Unsupported, check_grid_inputs
from ..suites.records import tensor_type_of
from .diagnostics import one_line

_INNER = "__shlo_main"
_PROCESS = "__shlo_process"


@dataclass
class _Plan:
    """How one result of the original @main comes back through the shim."""

    type: TensorType
    carriers: int  # number of shim results that carry it (2 for complex)
    how: str  # "native" | "bits" | "widen" | "complex"


@dataclass
class _Program:
    module: Any
    arg_types: list  # TensorType of each original argument
    plans: list  # _Plan per original result
    shimmed: bool
    parallel: bool = False   # holds an op the interpreter runs only inside run_parallel (_PARALLEL)
    single: Any = None       # its 1×1 run_parallel form (_GridProgram), made on its first run


_NATIVE_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _carrier_result(et: ElementType) -> str:
    """How a result of this element type is read back ("native" when numpy can):
    ml_dtypes' float formats of 8 bits or more as the bits of the integer type
    of their width ("bits": bitcast_convert); the narrower ones (f4E2M1FN,
    f6E2M3FN, f6E3M2FN) converted exactly into a wider float (`_carrier`) —
    jaxlib's Python bindings read no sub-byte integer attribute back
    ("Unsupported integer type"), and no integer type is 6 bits wide; 2- and
    4-bit integers widened to 8 bits, for the same reason."""
    if et.is_complex:
        return "complex"
    if et.is_float and et.numpy not in _NATIVE_FLOATS:   # ml_dtypes' formats (bf16, f8 …): numpy has no dtype
        return "bits" if et.bits >= 8 else "widen"
    if et.bits < 8 and et.is_integer:
        return "widen"
    return "native"


def _carrier(et: ElementType, how: str) -> ElementType:
    """The element type a non-native result crosses as: the signless integer
    of its width ("bits"); for "widen", an integer's 8-bit twin, or the
    narrowest numpy float that holds every value of the format
    (`holds_every_value`: the convert is exact, so nothing is judged on
    the shim's rounding)."""
    if how == "bits":
        return element_type(f"si{et.bits}")
    if et.is_integer:
        return element_type("si8" if et.is_signed else "ui8")
    return next(w for w in (E_F16, E_F32, E_F64) if holds_every_value(et, w))


class InterpreterBackend(Backend):
    """The StableHLO reference interpreter.  A program that holds CHLO ops
    (JAX writes `chlo.square` for `jnp.var`, `chlo.erf` for exact GELU) is
    legalized first by jaxlib's `chlo-legalize-to-stablehlo`, the pass the
    oracle applies too (oracle/reading.py): the interpreter knows no CHLO and
    aborts its process on it ("LLVM ERROR: Unsupported op: chlo.square"),
    and a reference interpreter of StableHLO is scored on StableHLO.  A CHLO
    op the pass cannot decompose is `unsupported`, named."""

    name = "interpreter"
    quantized_unsupported = ("quantized types: the interpreter is reached through jaxlib 0.10.2's Python MLIR "
                             "bindings, which register no quant dialect, so no program with !quant.uniform can be "
                             "read into it (the interpreter itself implements the quantized ops)")
    preload = ("jax._src.interpreters.mlir", "jaxlib.mlir.ir", "jaxlib.mlir.dialects.stablehlo")

    def __init__(self, **options):
        from jax._src.interpreters import mlir as jm
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo

        self._ir = ir
        self._stablehlo = stablehlo
        self._ctx = jm.make_ir_context()

    def describe(self) -> str:
        import jaxlib

        try:
            version = self._stablehlo.get_current_version()
        except Exception:
            version = "?"
        return f"StableHLO reference interpreter (stablehlo {version}) via jaxlib {jaxlib.__version__}"

    # ------------------------------------------------------------------ compile
    def compile(self, mlir: str) -> Any:
        self.refuse_quantized(mlir)
        ir = self._ir
        with self._ctx, ir.Location.unknown():
            try:
                module = ir.Module.parse(mlir)
                module.operation.verify()
            except Exception as e:
                raise Rejected(one_line(str(e))) from None
            try:   # CHLO is not StableHLO: decomposed first, with StableHLO's own patterns (class docstring)
                legalize_chlo(module)
            except ChloNotDecomposed as e:
                raise Unsupported(f"interpreter: {e.op} has no StableHLO decomposition ({e})") from None
            main = self._find_main(module)
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            arg_types = [self._tensor_type(t, "argument") for t in ftype.inputs]
            res_types = [self._tensor_type(t, "result") for t in ftype.results]
            plans = []
            for t in res_types:
                how = _carrier_result(t.element_type)
                plans.append(_Plan(t, 2 if how == "complex" else 1, how))
            needs_shim = any(t.element_type.is_complex for t in arg_types) or any(p.how != "native" for p in plans)
            if needs_shim:
                module = self._shim(module, main, arg_types, plans)
            return _Program(module, arg_types, plans, needs_shim, parallel=bool(_ops_in(module.operation, _PARALLEL)))

    def _find_main(self, module):
        for op in module.body.operations:
            if op.operation.name == "func.func" and "sym_name" in op.attributes:
                if self._ir.StringAttr(op.attributes["sym_name"]).value == "main":
                    return op
        raise Rejected("no @main function in the module")

    def _tensor_type(self, t, what: str) -> TensorType:
        try:
            tt = parse_type(str(t))
        except ValueError:
            tt = None
        if not isinstance(tt, TensorType):
            raise Unsupported(f"interpreter adapter: @main {what} of type {t} cannot cross the Python boundary")
        return tt

    def _shim(self, module, main, arg_types, plans):
        ir = self._ir
        main.attributes["sym_name"] = ir.StringAttr.get(_INNER)
        main.attributes["sym_visibility"] = ir.StringAttr.get("private")
        params, body, call_args = [], [], []
        for i, t in enumerate(arg_types):
            et = t.element_type
            if et.is_complex:
                comp = TensorType(t.shape, et.component).mlir
                params += [f"%a{i}re: {comp}", f"%a{i}im: {comp}"]
                body.append(f"%a{i} = stablehlo.complex %a{i}re, %a{i}im : {t.mlir}")
            else:
                params.append(f"%a{i}: {t.mlir}")
            call_args.append(f"%a{i}")
        n = len(plans)
        call_sig = f"({', '.join(t.mlir for t in arg_types)}) -> ({', '.join(p.type.mlir for p in plans)})"
        body.append(f"%r:{n} = func.call @{_INNER}({', '.join(call_args)}) : {call_sig}" if n
                    else f"func.call @{_INNER}({', '.join(call_args)}) : {call_sig}")
        rets, ret_types = [], []
        for i, p in enumerate(plans):
            t = p.type
            et = t.element_type
            src = f"%r#{i}"
            if p.how == "native":
                rets.append(src)
                ret_types.append(t.mlir)
            elif p.how == "complex":
                comp = TensorType(t.shape, et.component).mlir
                body.append(f"%o{i}re = stablehlo.real {src} : ({t.mlir}) -> {comp}")
                body.append(f"%o{i}im = stablehlo.imag {src} : ({t.mlir}) -> {comp}")
                rets += [f"%o{i}re", f"%o{i}im"]
                ret_types += [comp, comp]
            else:
                carrier = TensorType(t.shape, _carrier(et, p.how))
                op = "bitcast_convert" if p.how == "bits" else "convert"   # widen: exact (`_carrier`)
                body.append(f"%o{i} = stablehlo.{op} {src} : ({t.mlir}) -> {carrier.mlir}")
                rets.append(f"%o{i}")
                ret_types.append(carrier.mlir)
        body.append(f"return {', '.join(rets)} : {', '.join(ret_types)}" if rets else "return")
        wrapper = (f"func.func @main({', '.join(params)}) -> ({', '.join(ret_types)}) {{\n  "
                   + "\n  ".join(body) + "\n}\n")
        # The program's own ops are re-printed in generic form: the pretty form
        # does not always parse back (stablehlo 1.17 prints a rank-0
        # dynamic_slice without the `sizes` its parser then demands).
        ops = "\n".join(op.operation.get_asm(print_generic_op_form=True) for op in module.body.operations)
        text = "module {\n" + ops + "\n" + wrapper + "}\n"
        try:
            shimmed = ir.Module.parse(text)
            shimmed.operation.verify()
        except Exception as e:  # a bug of the shim, not a rejection by the implementation
            raise RuntimeError(f"interpreter adapter: boundary shim failed: {one_line(str(e))}") from None
        return shimmed

    # ------------------------------------------------------------------ run
    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        ir = self._ir
        prog: _Program = executable
        if len(inputs) != len(prog.arg_types):
            raise ValueError(f"@main takes {len(prog.arg_types)} arguments, got {len(inputs)}")
        if prog.parallel:   # a collective, replica_id or partition_id: the one process of a 1×1 grid
            from ..spec.grid import SINGLE

            if prog.single is None:
                prog.single = self._on_grid(prog, SINGLE)
            return self.run_grid(prog.single, [inputs])[0]
        with self._ctx, ir.Location.unknown():
            outs = self._stablehlo.eval_module(prog.module, self._arguments(prog, inputs))
            return self._results(prog, outs)

    def _arguments(self, prog: _Program, inputs: Sequence[np.ndarray]) -> list:
        """One process's inputs as the attributes @main (the shim's, where
        there is one) takes: complex arguments as (real, imag) pairs."""
        attrs = []
        for a, t in zip(inputs, prog.arg_types):
            a = np.asarray(a)
            if tensor_type_of(a) != t:
                a = a.astype(t.element_type.numpy).reshape(t.shape)
            et = t.element_type
            if et.is_complex:
                comp = TensorType(t.shape, et.component)
                attrs.append(self._attr(np.ascontiguousarray(a.real), comp))
                attrs.append(self._attr(np.ascontiguousarray(a.imag), comp))
            else:
                attrs.append(self._attr(a, t))
        return attrs

    def _results(self, prog: _Program, outs: Sequence) -> list[np.ndarray]:
        """One process's result attributes, read back in the program's own types."""
        results, k = [], 0
        for p in prog.plans:
            et = p.type.element_type
            if p.how == "native":
                results.append(_read(outs[k], p.type.shape).astype(et.numpy))
            elif p.how == "complex":
                re_, im_ = _read(outs[k], p.type.shape), _read(outs[k + 1], p.type.shape)
                c = np.empty(p.type.shape, et.numpy)
                c.real, c.imag = re_, im_
                results.append(c)
            elif et.is_float and p.how == "widen":   # f6: the exact value in a wider float
                results.append(_read(outs[k], p.type.shape).astype(et.numpy))
            else:  # raw bits (bf16, f8) or a widened 2- or 4-bit integer
                carrier = _read(outs[k], p.type.shape)
                results.append(from_bits(carrier.view(np.dtype(f"u{carrier.dtype.itemsize}")), et))
            k += p.carriers
        return results

    # ------------------------------------------------------------------ grid
    grid_capable = True

    def compile_grid(self, mlir: str, grid) -> Any:
        """@main (behind the boundary shim, where it needs one) renamed and
        run as every process of `grid` by the interpreter's own
        `interpreter.run_parallel` op: `programs` holds the process
        function `num_replicas` × `num_partitions` times (row r, column p:
        process (r, p)); its operands are every process's inputs and its
        results every process's results, both in flattened id order.  The
        interpreter runs each process in a thread of its own and carries out
        the collectives between them (its `ProcessGrid`)."""
        self.refuse_quantized(mlir)
        from ..spec.grid import MAX_PROCESSES

        if grid.size > MAX_PROCESSES:
            raise Unsupported(f"interpreter: a grid of {grid.size} processes ({grid}): at most "
                              f"{MAX_PROCESSES} (spec.grid.MAX_PROCESSES, one thread each)")
        from .manual import per_process_text

        mlir, _ = per_process_text(mlir, grid, self._ctx)   # shard_map / pmap: the body each process runs
        return self._on_grid(self.compile(mlir), grid)

    def _on_grid(self, prog: _Program, grid) -> "_GridProgram":
        """`prog` (compiled) wrapped in run_parallel for `grid` (compile_grid)."""
        ir = self._ir
        with self._ctx, ir.Location.unknown():
            foreign = _foreign_ops(prog.module.operation)
            if foreign:
                raise Unsupported(f"interpreter: {', '.join(sorted(foreign))} is not StableHLO: the interpreter "
                                  "runs StableHLO programs process by process (it aborts its process on an op it "
                                  "does not know)")
            threads = _pool_threads()
            collectives = _ops_in(prog.module.operation, _COLLECTIVES)
            if grid.size > threads and collectives:
                raise Unsupported(
                    f"interpreter: {sorted(collectives)[0]} on a grid of {grid.size} processes ({grid}) with "
                    f"{threads} CPUs: run_parallel runs each process as a task of LLVM's default thread pool, "
                    f"one thread per CPU, so the processes past the first {threads} never start while those "
                    "wait in the collective for them (observed: 'LLVM ERROR: rendezvous timed out', the process "
                    "aborted)")
            self._stablehlo.register_interpreter_dialect(self._ctx)
            module = ir.Module.parse(prog.module.operation.get_asm(print_generic_op_form=True))
            main = self._find_main(module)
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            main.attributes["sym_name"] = ir.StringAttr.get(_PROCESS)
            main.attributes["sym_visibility"] = ir.StringAttr.get("private")
            ins = [str(t) for t in ftype.inputs] * grid.size
            outs = [str(t) for t in ftype.results] * grid.size
            n = len(outs)
            rows = ", ".join("[" + ", ".join([f"@{_PROCESS}"] * grid.num_partitions) + "]"
                             for _ in range(grid.num_replicas))
            lhs = "" if not n else ("%r = " if n == 1 else f"%r:{n} = ")
            rets = ["%r"] if n == 1 else [f"%r#{i}" for i in range(n)]
            wrapper = (f"func.func @main({', '.join(f'%a{i}: {t}' for i, t in enumerate(ins))}) "
                       f"-> ({', '.join(outs)}) {{\n"
                       f'  {lhs}"interpreter.run_parallel"({", ".join(f"%a{i}" for i in range(len(ins)))}) '
                       f"{{programs = [{rows}]}} : ({', '.join(ins)}) -> ({', '.join(outs)})\n"
                       f'  "func.return"({", ".join(rets[:n])}) : ({", ".join(outs)}) -> ()\n}}')
            ops = "\n".join(op.operation.get_asm(print_generic_op_form=True) for op in module.body.operations)
            try:
                wrapped = ir.Module.parse("module {\n" + ops + "\n" + wrapper + "\n}\n")
                wrapped.operation.verify()
            except Exception as e:  # a bug of the wrapper, not a rejection by the implementation
                raise RuntimeError(f"interpreter adapter: run_parallel wrapper failed: {one_line(str(e))}") from None
        return _GridProgram(wrapped, prog, grid)

    def run_grid(self, executable: Any, inputs_per_process) -> list[list[np.ndarray]]:
        gp: _GridProgram = executable
        check_grid_inputs(gp.grid, inputs_per_process, len(gp.process.arg_types))
        ir = self._ir
        with self._ctx, ir.Location.unknown():
            attrs = [a for inputs in inputs_per_process for a in self._arguments(gp.process, inputs)]
            outs = self._stablehlo.eval_module(gp.module, attrs)
            per = sum(p.carriers for p in gp.process.plans)
            return [self._results(gp.process, outs[i * per:(i + 1) * per]) for i in range(gp.grid.size)]

    host_unsupported = ("only infeed runs through jaxlib's Python API (eval_module of an "
                        "`interpreter.run_parallel` with `infeed` functions); what outfeed writes is not returned, "
                        "and send/recv wait for a peer process (host transfers are not modelled)")

    def run_with_host(self, executable: Any, inputs: Sequence[np.ndarray], host) -> tuple[list, list]:
        """Infeed through the interpreter's own host model: @main is renamed
        and run inside `interpreter.run_parallel` with one `infeed` function
        per queued tensor (each infeed op calls the next one).  Programs with
        outfeed, send or recv are unsupported (host_unsupported)."""
        ir = self._ir
        prog: _Program = executable
        text = str(prog.module)
        for op in ("stablehlo.outfeed", "stablehlo.send", "stablehlo.recv"):
            if op in text:
                raise Unsupported(f"{self.name}: {op}: {self.host_unsupported}")
        if host.channels:
            raise Unsupported(f"{self.name}: recv channels: {self.host_unsupported}")
        with self._ctx, ir.Location.unknown():
            self._stablehlo.register_interpreter_dialect(self._ctx)
            module = ir.Module.parse(text)
            if any(n != 1 for n in _infeed_payloads(module.operation)):
                # Each infeed op calls the next `infeed` function, which must return one tensor:
                # none or several cannot be fed (the interpreter aborts or segfaults: docs/findings.md).
                raise Unsupported(f"{self.name}: an infeed of other than one tensor: the interpreter's infeed "
                                  "functions return exactly one tensor each")
            main = self._find_main(module)
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            main.attributes["sym_name"] = ir.StringAttr.get("__shlo_host_main")
            ins, outs = [str(t) for t in ftype.inputs], [str(t) for t in ftype.results]
            feeds = []
            for k, a in enumerate(host.infeed):
                t = tensor_type_of(np.asarray(a))
                feeds.append(f'func.func private @__shlo_infeed{k}() -> {t.mlir} {{\n'
                             f'  %c = "stablehlo.constant"() {{value = {dense_literal(np.asarray(a), t)}}} : () -> {t.mlir}\n'
                             f'  "func.return"(%c) : ({t.mlir}) -> ()\n}}')
            attrs = [f"infeed = [{', '.join(f'@__shlo_infeed{k}' for k in range(len(feeds)))}]"] if feeds else []
            attrs.append("programs = [[@__shlo_host_main]]")
            params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(ins))
            n = len(outs)
            lhs = "" if not n else ("%r = " if n == 1 else f"%r:{n} = ")
            rets = ["%r"] if n == 1 else [f"%r#{i}" for i in range(n)]
            wrapper = (f"func.func @main({params}) -> ({', '.join(outs)}) {{\n"
                       f'  {lhs}"interpreter.run_parallel"({", ".join(f"%a{i}" for i in range(len(ins)))}) '
                       f"{{{', '.join(attrs)}}} : ({', '.join(ins)}) -> ({', '.join(outs)})\n"
                       f'  "func.return"({", ".join(rets[:n])}) : ({", ".join(outs)}) -> ()\n}}')
            body = str(module).rstrip()
            assert body.endswith("}")
            try:
                wrapped = ir.Module.parse(body[:-1] + "\n".join(feeds + [wrapper]) + "\n}")
                wrapped.operation.verify()
            except Exception as e:
                raise Rejected(one_line(str(e))) from None
        return self.run(_Program(wrapped, prog.arg_types, prog.plans, prog.shimmed), inputs), []

    # Probed: these ops abort the whole process ("LLVM ERROR: Unsupported op" for every custom_call
    # target; rng and rng_bit_generator are "unsupported at the moment", openxla/stablehlo#1571).
    skips = (Skip("custom_call", 'has no custom_call at all ("LLVM ERROR: Unsupported op"); the process aborts on it'),
             # Probed (stablehlo 1.17.0): every cholesky, any type and shape, aborts the process.
             Skip("cholesky", 'does not implement cholesky ("Operation stablehlo.cholesky is unsupported at the '
                              'moment. However, this operation can be decomposed into supported operations", '
                              "openxla/stablehlo#1571); the process aborts on it"),
             # Probed (stablehlo 1.17.0): every batch_norm_* case of /tmp/bn-suite (230, every float type) aborts.
             *(Skip(op, f'does not implement {op} ("… is unsupported at the moment. However, this operation can be '
                        'decomposed into supported operations", openxla/stablehlo#1571); the process aborts on it')
               for op in ("batch_norm_inference", "batch_norm_training", "batch_norm_grad")),
             Skip("rng", "does not implement rng (openxla/stablehlo#1571); the process aborts on it"),
             # Probed (stablehlo 1.17.0): v1.20's async_start aborts the process ("LLVM ERROR: Unsupported op").
             *(Skip(op, 'does not implement v1.20\'s async ops ("LLVM ERROR: Unsupported op"); the process aborts '
                        'on it') for op in ("async_start", "async_done")),
             Skip("rng_bit_generator", "does not implement rng_bit_generator (openxla/stablehlo#1571); "
                                       "the process aborts on it"),
             # Probed: every fft of f32 / complex<f32> (FFT, IFFT, RFFT, IRFFT, any length); complex<f64> runs.
             Skip("fft", "the process aborts on every non-empty fft of f32 or complex<f32> (\"LLVM ERROR: Semantics mismatch "
                         "between provided type and complex value\"); complex<f64> runs", dtypes=("f32", "complex<f32>")))

    def _attr(self, array: np.ndarray, t: TensorType):
        return self._ir.Attribute.parse(dense_literal(array, t))


@dataclass
class _GridProgram:
    """A program compiled for a grid: the run_parallel module, the one
    process's program (its argument types and result plans), the grid."""

    module: Any
    process: _Program
    grid: Any


_KNOWN_DIALECTS = ("stablehlo", "func", "builtin", "chlo")


def _foreign_ops(op) -> set[str]:
    """The ops under `op` of a dialect the interpreter does not run (JAX's
    shard_map lowering writes `sdy.manual_computation` and `sdy.mesh`)."""
    out = set()
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = inner.operation.name
                if name.split(".", 1)[0] not in _KNOWN_DIALECTS:
                    out.add(name)
                out |= _foreign_ops(inner.operation)
    return out


# The collectives: they wait for the other processes of their group.
_COLLECTIVES = ("all_gather", "all_reduce", "all_to_all", "collective_broadcast", "collective_permute",
                "reduce_scatter")
# What the interpreter runs only inside run_parallel; elsewhere it aborts its process
# ("LLVM ERROR: replica_id is only supported when run via interpreter.run_parallel", probed for each).
_PARALLEL = _COLLECTIVES + ("replica_id", "partition_id")


def _ops_in(op, mnemonics) -> set[str]:
    """The stablehlo ops under `op` whose mnemonic is one of `mnemonics`."""
    out = set()
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = inner.operation.name
                if name.startswith("stablehlo.") and name.split(".", 1)[1] in mnemonics:
                    out.add(name)
                out |= _ops_in(inner.operation, mnemonics)
    return out


def _pool_threads() -> int:
    """The threads of LLVM's default thread pool in this process: one per
    CPU this process may run on (llvm::hardware_concurrency reads the
    affinity mask).  Probed: `taskset -c 0` makes a 2-process all_reduce
    abort with 'rendezvous timed out'; with 2 CPUs it passes."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):   # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _infeed_payloads(op) -> list[int]:
    """The number of tensor results of every stablehlo.infeed under `op`."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                if inner.name == "stablehlo.infeed":
                    out.append(sum(1 for r in inner.results if "token" not in str(r.type)))
                out += _infeed_payloads(inner)
    return out


def _read(attr, shape) -> np.ndarray:
    """A result attribute as a numpy array of `shape` (splat attributes hold one value)."""
    a = np.array(attr)
    n = int(np.prod(shape, dtype=np.int64))
    if a.size != n and a.size == 1:
        a = np.broadcast_to(a.reshape(()), shape)
    return np.array(a.reshape(shape), copy=True)
