"""IREE, llvm-cpu target, through iree-base-compiler / iree-base-runtime.

compile: through the compiler's C embedding API (`iree.compiler.api`), in
a compile server (`_serve`): one long-lived process per adapter holding one
`Session` with the flags below, one `Invocation` per program (parse, the
standard pipeline, VM bytecode into a memory buffer), started on the first
compile.  Why not `iree.compiler.compile_str`: it starts an `iree-compile`
process per program, and that process's set-up (loading the compiler
library, registering dialects and passes, the context) is paid again every
time; a session pays it once.  Measured 2026-11-23 (best of 3, interleaved,
2 loaded cores): a refused invalid program 3 ms against 21 ms, a valid one
309 against 371 ms — most of a compile is the pipeline itself (≈0.3 s,
40 % of it serializing the executable: LLVM code generation and an
`iree-lld` process).  Why not in the adapter's own process:
IREE 3.13.0 aborts (an `LLVM ERROR` after its diagnostic) or segfaults on
some programs of the suite; the tool's death was a Rejected carrying what it
had printed, and so is the server's (`_Compiler._died`); a fresh server
takes the next program.  Messages are the tool's: the server prints
diagnostics as `iree-compile` does (console diagnostics, the buffer named
`<stdin>`, `--mlir-print-debuginfo` and `--mlir-print-op-on-diagnostic=false`
set as the tool sets them), all it writes on fd 2 (iree-lld's "undefined
symbol" lines too) is captured, and `one_line` folds it as before; the
vmfb is byte for byte the tool's.  run: the vmfb is
loaded into a fresh `SystemContext` on the "local-sync" driver and @main is
invoked at the VM level (VmContext.invoke with HalBufferViews built from the
inputs' raw bits; results read back as raw bits from the mapped result
buffers).

Flags, and why (`--iree-hal-target-backends=llvm-cpu` and
`--iree-input-type=stablehlo` say what `compile_str`'s arguments said):
* `--iree-input-demote-f64-to-f32=false`.  IREE's default *demotes* f64 and
  complex<f64> to f32 / complex<f32> at the input (ConvertTypesPass), which
  changes @main's signature and computes in the wrong format: with the
  default an f64 program cannot even be called with f64 inputs.  This is the
  one default the adapter overrides (option `demote_f64=True` restores it).
* `--iree-llvmcpu-target-cpu=generic`: what IREE targets by default anyway,
  said explicitly so that the compiler does not print a page-long warning per
  program.  `target_cpu="host"` is accepted as an option (faster code; FMA
  instructions become available to the code generator).

Boundary traps:
* iree.runtime maps no numpy dtype to int4/uint4, so 4-bit tensors are
  passed as HalBufferViews of element type SINT_4/UINT_4 over packed bytes
  (two elements per byte, low nibble first) and results are unpacked from
  the mapped buffer; 2-bit ones likewise, four to a byte (`_pack`).  IREE
  cannot lay out a 4-bit tensor whose element count is odd ("does not have
  integral number of total bytes"; a 2-bit one not a multiple of 4): that
  compile error is reported as Unsupported, not as a rejection of a valid
  program.
* An input needs a HAL element type (`hal_name`): iree.runtime 3.13 has
  none for v1.20's si2, ui2, f4E2M1FN, f6E2M3FN, f6E3M2FN, f8E3M4, f8E4M3
  and f8E4M3B11FNUZ, so programs taking them are Unsupported at compile,
  named, as are those IREE's compiler cannot return ("'hal.element_type' op
  unsupported element type": f4E2M1FN, f8E3M4, f8E4M3, f8E4M3B11FNUZ); 6-bit
  tensors have no known buffer layout (Unsupported too).  Each of these
  refusals names, MLIR's way, the functions but @main whose signatures
  hold such a type (`_located`): in a merged module of many cases
  (shlo_conform/pipeline/batching.py) only those cases then run alone.
* i1 crosses as one byte per element (numpy bool).
* IREE's ABI keeps no signedness (a ui32 result is reported as i32), so
  results are typed by @main's result types read from the program text
  (`_mlir.main_signature`), falling back to the HAL element type.

Collectives and grids (`skips`, `grid_unsupported`): IREE compiles all_gather,
all_reduce, all_to_all, collective_permute, reduce_scatter and replica_id
for llvm-cpu (to `flow.collective.*` on the default channel; partition_id to
the constant 0), but its local CPU drivers create no channel: calling @main
fails with "UNIMPLEMENTED; collectives not implemented" (hal.channel.create),
on a 1×1 grid too.  IREE runs a grid as one OS process per rank (MPI/NCCL
launchers, GPU drivers); its Python runtime has no way to run one program as
several processes here.  So those ops are declared, and every grid case is
`unsupported` with that reason.

Observed with 3.13.0 (behaviour under test, not adapter settings): f32
subnormal inputs and results are flushed to zero (1e-40 + 0 -> 0); `add` on
i1 computes XOR-like wrap (true + true -> false) where the spec says logical
OR; a complex<f64> splat constant fails to compile ('stream.async.splat' on
i128), which is reported as a rejection.
"""
from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..spec.types import ELEMENT_TYPES, ElementType, TensorType, element_type, from_bits, to_bits
from .base import Backend, Rejected, Skip, Unsupported
from ..suites.records import element_type_of
from ..suites.signature import main_signature
from .diagnostics import one_line

# Probed with 3.13.0 on llvm-cpu: all_gather, all_reduce, all_to_all, collective_permute (send_recv),
# reduce_scatter and replica_id (the default channel's rank) compile to flow.collective.* / flow.channel.*
# ops, which create the default channel when @main is called; partition_id compiles to the constant 0.
_NO_COLLECTIVES = ("compiles to IREE's flow.collective / flow.channel ops, but the local CPU drivers implement no "
                   "collectives: calling @main fails with 'UNIMPLEMENTED; collectives not implemented; while "
                   "invoking native function hal.channel.create' (local-sync and local-task, iree-base-runtime "
                   "3.13.0), on a 1×1 grid too")

_UNSUPPORTED_MESSAGES = (
    "does not have integral number of total bytes",
    # iree-base-compiler 3.13 has no HAL element type for v1.20's f4E2M1FN, f8E3M4, f8E4M3, f8E4M3B11FNUZ at
    # @main's boundary: the types of a valid program it cannot take or return, declared as such
    "'hal.element_type' op unsupported element type",
    # Shardy's annotations (a jit with shardings, which `run` judges as one global computation) are not StableHLO,
    # and iree-base-compiler 3.13 has no sdy dialect: a program it cannot read, not a StableHLO program it refuses
    "Dialect `sdy' not found",
)

# The element types iree-base-compiler 3.13.0 cannot return from @main ("'hal.element_type' op unsupported
# element type", located at <stdin>:1:1 whatever the program, where the compiler gets that far): probed type by
# type (tests/backends/test_iree_boundary.py holds the list against the compiler).  Read only to say which
# functions of a refused module return them (`_located`); the verdict stays the compiler's.
COMPILER_NO_RESULT = ("f4E2M1FN", "f8E3M4", "f8E4M3", "f8E4M3B11FNUZ")


def hal_name(et: ElementType) -> str:
    """IREE's name of an element type (iree.runtime.HalElementType): i1 is
    BOOL_8, siN/uiN SINT_N/UINT_N, bf16 BFLOAT_16, complex<fN> COMPLEX_2N,
    and a float format `f<bits>E<e>M<m><suffix>` FLOAT_<bits>[_E<e>M<m>[_<suffix>]]
    (f8E4M3FN → FLOAT_8_E4M3_FN, f8E5M2FNUZ → FLOAT_8_E5M2_FNUZ): derived
    from the type's declaration, so a new format needs no row here."""
    if et.is_bool:
        return "BOOL_8"
    if et.is_integer:
        return f"{'SINT' if et.is_signed else 'UINT'}_{et.bits}"
    if et.is_complex:
        return f"COMPLEX_{et.bits}"
    if et.name == "bf16":
        return "BFLOAT_16"
    m = re.fullmatch(r"f(\d+)(E\d+M\d+)?([A-Z0-9]*)", et.name)
    if m is None:
        return ""
    return "_".join(p for p in (f"FLOAT_{m.group(1)}", m.group(2), m.group(3)) if p)


def _packed(et: ElementType) -> bool:
    """Whether IREE stores `et` packed, several elements to a byte (2- and
    4-bit types; i1 crosses as one byte per element, numpy's bool)."""
    if et.is_bool or et.is_complex or et.bits >= 8:
        return False
    if 8 % et.bits:
        raise Unsupported(f"iree: no known buffer layout for the {et.bits}-bit {et.name}")
    return True


def _pack(bits: np.ndarray, width: int) -> np.ndarray:
    """Patterns of `width` bits (width dividing 8) packed 8 // width to a
    byte, the first element in the lowest bits — IREE's layout of int4
    (measured), taken for every sub-byte width."""
    k = 8 // width
    b = bits.astype(np.uint8)
    if b.size % k:
        b = np.append(b, np.zeros(k - b.size % k, np.uint8))
    b = b.reshape(-1, k)
    out = np.zeros(len(b), np.uint8)
    for j in range(k):
        out |= b[:, j] << np.uint8(j * width)
    return out


def _unpack(raw: np.ndarray, width: int, n: int) -> np.ndarray:
    """The first `n` patterns of `width` bits packed in `raw` (`_pack`)."""
    k = 8 // width
    mask = np.uint8((1 << width) - 1)
    out = np.empty(raw.size * k, np.uint8)
    for j in range(k):
        out[j::k] = (raw >> np.uint8(j * width)) & mask
    return out[:n]


@dataclass
class _Executable:
    vmfb: bytes
    context: Any
    function: Any  # the VmFunction of @main
    results: list | None  # @main's result types read from the text (None: unknown)


class IreeBackend(Backend):
    name = "iree"
    batches = True  # one compile for many cases (shlo_conform/pipeline/batching.py)
    preload = ("iree.runtime",)   # imported by the zygote; the compiler lives in the compile server (_serve)
    host_unsupported = ("IREE's StableHLO input conversion refuses tokens (`stablehlo.after_all` is illegal), and "
                        "iree.runtime has no infeed/outfeed/channel API")

    configurable = True   # iree:target=vmvx — another HAL target of the same compiler and runtime
    TARGETS = ("llvm-cpu", "vmvx")   # the CPU targets the local-sync driver loads

    def __init__(self, demote_f64: bool = False, target_cpu: str = "generic", driver: str = "local-sync",
                 config: dict | None = None, **options):
        """`config` (from the name `iree:target=vmvx`): `target`, one of
        TARGETS — vmvx is IREE's portable VM-interpreted executable format,
        its reference-style CPU path, loaded by the same local-sync driver;
        `--iree-llvmcpu-target-cpu` means nothing to it and is left out."""
        import iree.runtime as rt

        config = dict(config or {})
        self.target = config.pop("target", "llvm-cpu")
        if config or self.target not in self.TARGETS:
            raise ValueError(f"iree: configuration {dict(config, target=self.target)} refused: the one key is "
                             f"target, one of {', '.join(self.TARGETS)}")
        self._rt = rt
        self._driver = driver
        self._config = rt.Config(driver)
        self._flags = [f"--iree-input-demote-f64-to-f32={'true' if demote_f64 else 'false'}"]
        if target_cpu and self.target == "llvm-cpu":
            self._flags.append(f"--iree-llvmcpu-target-cpu={target_cpu}")
        self._compiler = _Compiler([f"--iree-hal-target-backends={self.target}", "--iree-input-type=stablehlo",
                                    *self._flags])

    def close(self) -> None:
        """End the compile server now (it also ends with this process)."""
        self._compiler.close()

    def describe(self) -> str:
        from importlib.metadata import version

        def v(pkg):
            try:
                return version(pkg)
            except Exception:
                return "?"

        return (f"IREE {self.target} (iree-base-compiler {v('iree-base-compiler')}, "
                f"iree-base-runtime {v('iree-base-runtime')}, driver {self._driver})")

    # Every element type of the spec crossed the boundary in our probes (add,
    # and convert to/from f32, on all 19 types), so no type is declared away;
    # what IREE then gets wrong is for the suite to find.
    skips = (Skip("custom_call", "registers none of the custom_call targets the suite names (Sharding, LAPACK "
                                 "potrf): its StableHLO input conversion marks stablehlo.custom_call illegal"),
             # Probed (iree-base-compiler 3.13.0): every case of either op with a non-empty result, any type,
             # fails to compile; zero-element results compile (folded away) and are skipped with the rest.
             *(Skip(op, f"does not legalize stablehlo.{op} (\"failed to legalize operation 'stablehlo.{op}' that "
                        "was explicitly marked illegal\"): no program computing a non-empty result compiles")
               for op in ("cholesky", "triangular_solve")),
             # Probed (iree-base-compiler 3.13.0, /tmp/bn-suite seed 0): every non-empty batch_norm_grad fails to
             # compile, any type; f8 batch_norm_inference / _training fail on the sqrt of their expansion.
             Skip("batch_norm_grad", "does not legalize stablehlo.batch_norm_grad (\"failed to legalize operation "
                                     "'stablehlo.batch_norm_grad' that was explicitly marked illegal\"): no program "
                                     "computing a non-empty result compiles"),
             *(Skip(op, "compiles no non-empty f8 case: its expansion's sqrt is not lowered for f8 (\"failed to "
                        "legalize operation 'math.sqrt'\"), or the expansion refuses an epsilon that f8 cannot hold "
                        "exactly (\"Could not convert batch_norm epsilon to target fp type\")",
                    dtypes=("f8E4M3FN", "f8E5M2")) for op in ("batch_norm_inference", "batch_norm_training")),
             *(Skip(op, _NO_COLLECTIVES) for op in ("all_gather", "all_reduce", "all_to_all", "collective_permute",
                                                   "reduce_scatter", "replica_id")),
             # Probed (iree-base-compiler 3.13.0): every f64 / complex<f64> fft longer than one point fails to compile.
             Skip("fft", "compiles no f64 transform longer than one point: its FFT lowering mixes f32 and f64 "
                         "(\"'arith.mulf' op requires the same type for all operands and results\"), or does not "
                         "legalize the op at all (lengths not a power of two, several axes)",
                  dtypes=("f64", "complex<f64>")))

    # A grid: IREE runs one process per rank of a collective channel (MPI / NCCL-style launchers, GPU drivers);
    # its local CPU drivers have no channel at all (`_NO_COLLECTIVES`), and no API runs a grid in one process.
    grid_unsupported = ("IREE's local CPU drivers (local-sync, local-task) have no collective channels, and its "
                        "runtime has no API that runs a program as several processes: "
                        "'UNIMPLEMENTED; collectives not implemented' (hal.channel.create, iree-base-runtime 3.13.0)")

    def compile(self, mlir: str) -> Any:
        sig = main_signature(mlir)
        refused = self._boundary(sig) if sig is not None else {}
        if refused:
            raise Unsupported(next(iter(refused.values())) + _located(mlir, refused))
        vmfb, diagnostics = self._compiler.compile(mlir)
        if vmfb is None:
            msg = one_line(diagnostics) if diagnostics.strip() else "iree: compilation failed with no diagnostic"
            if any(s in msg for s in _UNSUPPORTED_MESSAGES):
                results = {t.element_type.name for t in sig[1] if isinstance(t, TensorType)} if sig else set()
                raise Unsupported(f"iree: {msg}" + _located(mlir, results & set(COMPILER_NO_RESULT)))
            raise Rejected(msg)
        rt = self._rt
        ctx = rt.SystemContext(config=self._config)
        vm_module = rt.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm_module)
        try:   # the VM module is named after the MLIR module (`module @jit_f` from JAX), else "module"
            function = ctx.modules[vm_module.name]["main"].vm_function
        except Exception as e:
            raise Rejected(f"iree: compiled module has no callable main: {e}") from None
        results = sig[1] if sig is not None and all(isinstance(t, TensorType) for t in sig[1]) else None
        return _Executable(vmfb, ctx, function, results)

    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        rt = self._rt
        args = rt.VmVariantList(len(inputs))
        for a in inputs:
            args.push_ref(self._to_device(np.asarray(a)))
        n_out = len(executable.results) if executable.results is not None else 16
        rets = rt.VmVariantList(n_out)
        executable.context.vm_context.invoke(executable.function, args, rets)
        outs = []
        for i in range(rets.size):
            bv = rets.get_as_object(i, rt.HalBufferView)
            want = executable.results[i].element_type if executable.results is not None else None
            outs.append(self._to_host(bv, want))
        return outs

    # ------------------------------------------------------------------ boundary
    def _to_device(self, a: np.ndarray):
        """An input as a HalBufferView over its raw bits (spec layout; 4-bit
        types packed two to a byte, low nibble first, as IREE stores them)."""
        rt = self._rt
        et = element_type_of(a)
        bits = to_bits(a, et)
        if _packed(et):
            raw = _pack(bits.reshape(-1), et.bits)
        else:
            raw = np.ascontiguousarray(bits).reshape(-1).view(np.uint8)
        if raw.size == 0:
            raw = np.zeros(1, np.uint8)
        dev = self._config.device
        buf = dev.allocator.allocate_buffer_copy(memory_type=rt.MemoryType.DEVICE_LOCAL,
                                                 allowed_usage=rt.BufferUsage.DEFAULT, device=dev, buffer=raw)
        return rt.HalBufferView(buf, [int(d) for d in a.shape], self._hal_type(et))

    def _boundary(self, sig: tuple[list, list]) -> dict[str, str]:
        """The element types at @main's boundary that cannot cross it, each
        with its reason, the one found first first: every type needs a
        buffer layout (`_packed`), an input a HAL element type too
        (`_to_device`).  Declared, not a crash nor a rejection of a valid
        program."""
        refused = {}
        checks = [(t, _packed) for t in sig[0] + sig[1]] + [(t, self._hal_type) for t in sig[0]]
        for t, check in checks:
            if isinstance(t, TensorType) and t.element_type.name not in refused:
                try:
                    check(t.element_type)
                except Unsupported as e:
                    refused[t.element_type.name] = str(e)
        return refused

    def _hal_type(self, et: ElementType):
        """IREE's HAL element type of `et`, by IREE's naming rule (`hal_name`);
        a quantized tensor crosses as its storage integers (IREE lowers
        `!quant.uniform` to its storage type at @main's boundary)."""
        if et.is_quantized:
            et = et.storage_type
        hal = getattr(self._rt.HalElementType, hal_name(et), None)
        if hal is None:
            raise Unsupported(f"iree: no HAL element type for {et.name}")
        return hal

    def _from_hal_type(self, hal) -> ElementType:
        """The element type of a HAL type: every declared type by `hal_name`,
        and IREE's signless INT_n read as signed (the declared result type
        corrects a ui result: `_to_host`)."""
        H = self._rt.HalElementType
        for et in ELEMENT_TYPES.values():
            if int(getattr(H, hal_name(et), -1)) == int(hal):
                return et
        for bits in (4, 8, 16, 32, 64):
            if int(getattr(H, f"INT_{bits}")) == int(hal):
                return element_type(f"si{bits}")
        raise TypeError(f"iree: result of HAL element type {hal:#x} has no StableHLO element type")

    def _to_host(self, bv, want: ElementType | None) -> np.ndarray:
        """A result buffer view as a numpy array: raw bits read from the mapped
        buffer, typed by @main's declared result type when the text shows it
        (IREE's ABI keeps no signedness: a ui32 result comes back as i32)."""
        et = want or self._from_hal_type(bv.element_type)
        shape = tuple(int(d) for d in bv.shape)
        n = int(np.prod(shape, dtype=np.int64))
        nbytes = int(bv.byte_length)
        raw = np.array(bv.map().asarray([nbytes], np.dtype(np.uint8)), copy=True) if nbytes else np.zeros(0, np.uint8)
        if _packed(et):
            return from_bits(_unpack(raw, et.bits, n).reshape(shape), et)
        width = et.bits_dtype.itemsize * (2 if et.is_complex else 1)
        raw = raw[: n * width]
        bits = raw.view(et.bits_dtype.newbyteorder("<")).reshape(shape + ((2,) if et.is_complex else ()))
        return from_bits(bits, et)


# Compiled modules are kept on disk by program: what IREE's users do with a vmfb (compile once, load many
# times), and what makes a second scoring of the same selection — a scoreboard resumed, `make conform` again,
# the same batches after a code change elsewhere — cost loading instead of compiling (98 % of IREE's time).
CACHE_ENV = "SHLO_CONFORM_IREE_CACHE"   # a folder; "off" compiles every time


def cache_dir() -> str | None:
    """Where compiled modules are kept: $SHLO_CONFORM_IREE_CACHE, else
    ~/.cache/shlo-conform/iree (None: "off")."""
    where = os.environ.get(CACHE_ENV)
    if where == "off":
        return None
    return where or os.path.join(os.path.expanduser("~"), ".cache", "shlo-conform", "iree")


def _compiler_version() -> str:
    from importlib.metadata import version
    try:
        return version("iree-base-compiler")
    except Exception:   # pragma: no cover - installed with the project
        return "?"


class _Cache:
    """vmfb bytes by sha256 of (compiler version, flags, program text): a
    module compiled from the same text by the same compiler with the same
    flags is the same module.  Only successful compiles are kept (a
    refusal's text can carry a crash's stderr); a file appears whole or not
    at all (written aside, then renamed)."""

    def __init__(self, flags: Sequence[str]):
        self._dir = cache_dir()
        self._salt = "\0".join([_compiler_version(), *flags]).encode()

    def _path(self, text: str) -> str | None:
        if self._dir is None:
            return None
        import hashlib
        key = hashlib.sha256(self._salt + b"\0" + text.encode()).hexdigest()
        return os.path.join(self._dir, key[:2], key[2:] + ".vmfb")

    def get(self, text: str) -> bytes | None:
        path = self._path(text)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (OSError, TypeError):
            return None
        return data or None

    def put(self, text: str, vmfb: bytes) -> None:
        path = self._path(text)
        if path is None:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".part")
            with os.fdopen(fd, "wb") as f:
                f.write(vmfb)
            os.replace(tmp, path)
        except OSError:   # a full or read-only disk costs a compile next time, nothing more
            pass


class _Compiler:
    """The client side of the compile server (`_serve`): one long-lived
    process holding one compiler session, started on the first compile and
    again after it dies.  Why a process of its own: the compiler aborts on
    some programs (an `LLVM ERROR` after a diagnostic, a segfault), and what
    the tool's crash was — a Rejected carrying what it printed — must stay
    that, not become the death of the adapter's worker."""

    def __init__(self, flags: Sequence[str]):
        self._flags = list(flags)
        self._cache = _Cache(self._flags)
        self._proc: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="shlo-iree-")
        self._err = os.path.join(self._dir.name, "stderr")

    def _start(self) -> subprocess.Popen:
        cmd = [sys.executable, "-c", "from shlo_conform.backends.iree import _serve; _serve()", self._err,
               *self._flags]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if proc.stdout.read(1) != b"R":   # not a verdict on any program: the setup is broken
            proc.wait()
            raise RuntimeError(f"iree: the compile server did not start (exit status {proc.returncode}; "
                               "its stderr is this process's)")
        self._proc = proc
        return proc

    def compile(self, text: str) -> tuple[bytes | None, str]:
        """(vmfb, "") or (None, what the compiler printed); a module compiled
        before from the same text, flags and compiler comes from the cache."""
        kept = self._cache.get(text)
        if kept is not None:
            return kept, ""
        vmfb, said = self._compile(text)
        if vmfb is not None:
            self._cache.put(text, vmfb)
        return vmfb, said

    def _compile(self, text: str) -> tuple[bytes | None, str]:
        proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
        data = text.encode()
        try:
            proc.stdin.write(struct.pack("<Q", len(data)) + data)
            proc.stdin.flush()
            head = _read_exactly(proc.stdout, 9)
            payload = _read_exactly(proc.stdout, struct.unpack("<Q", head[1:])[0])
        except (OSError, EOFError):
            return None, self._died(proc)
        if head[:1] == b"1":
            return payload, ""
        return None, payload.decode("utf-8", "replace")

    def _died(self, proc: subprocess.Popen) -> str:
        """What a compiler that died mid-program leaves: its stderr (as the
        tool's crash left it), else the signal that ended it."""
        code = proc.wait()
        self._proc = None
        try:
            with open(self._err, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        if text.strip():
            return text
        try:
            how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        except ValueError:   # a signal number Python does not name
            how = f"signal {-code}"
        return f"iree: the compiler died ({how}) with no diagnostic"

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _located(mlir: str, types) -> str:
    """MLIR's ` (<stdin>:LINE:COL: error; …)` at each function but @main
    whose signature holds one of `types` (element type names), or "": in a
    merged module (shlo_conform/pipeline/batching.py) that names the cases
    that cannot cross @main's boundary, which then run alone while the
    rest compile together again, where an unlocated refusal halved the
    batch level by level (a passing case costs 0.06 s of a batch of 16,
    0.42 s alone)."""
    names = [re.compile(rf"[<x]{re.escape(ELEMENT_TYPES[n].mlir if n in ELEMENT_TYPES else n)}>") for n in types]
    at = [f"<stdin>:{k}:{len(line) - len(line.lstrip()) + 1}: error"
          for k, line in enumerate(mlir.splitlines(), 1)
          if names and line.lstrip().startswith("func.func") and "@main(" not in line
          and any(p.search(line) for p in names)]
    return f" ({'; '.join(at)})" if at else ""


def _read_exactly(f, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise EOFError
    return data


def _serve() -> None:
    """The compile server's loop (`python -c ... _serve() ERRFILE FLAG...`):
    says "R" once its session is ready, then reads length-prefixed MLIR
    texts on stdin (until EOF: it ends with the adapter, or with the
    runner's kill of the worker's process group) and answers each with a
    status byte (1: compiled, 0: refused), a length and the vmfb or the
    diagnostics.  The compiler prints its diagnostics (console format, the
    buffer named `<stdin>` as `iree-compile` names it) and its linker's
    messages on fd 2, which is ERRFILE, emptied before each program; fd 1
    points there too, so that nothing the compiler prints can mix with the
    answers (they go on a private copy of the original stdout)."""
    from iree.compiler import api

    err_path, flags = sys.argv[1], sys.argv[2:]
    # As `iree-compile` sets them: ops in diagnostics printed with their locations, no op dump per diagnostic.
    api._initializeGlobalCL("iree-compile", "--mlir-print-debuginfo", "--mlir-print-op-on-diagnostic=false")
    session = api.Session()
    session.set_flags(*flags)
    answers = os.fdopen(os.dup(1), "wb")
    requests = os.fdopen(os.dup(0), "rb")
    err = os.open(err_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(err, 2)
    os.dup2(err, 1)
    answers.write(b"R")   # ready: what fails before this line is the setup's fault, not a program's
    answers.flush()
    while True:
        try:
            head = _read_exactly(requests, 8)
            text = _read_exactly(requests, struct.unpack("<Q", head)[0])
        except EOFError:
            return
        os.ftruncate(2, 0)
        os.lseek(2, 0, os.SEEK_SET)
        inv = session.invocation()   # a failed invocation leaves the session usable for the next
        vmfb = None
        try:
            inv.enable_console_diagnostics()
            src = api.Source.wrap_buffer(session, text, buffer_name="<stdin>")
            if inv.parse_source(src) and inv.execute():
                out = api.Output.open_membuffer()
                inv.output_vm_bytecode(out)
                vmfb = bytes(out.map_memory())
                out.close()
        finally:
            inv.close()
        if vmfb is None:
            os.lseek(2, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(2, 1 << 16):
                chunks.append(chunk)
            status, payload = b"0", b"".join(chunks)
        else:
            status, payload = b"1", vmfb
        answers.write(status + struct.pack("<Q", len(payload)) + payload)
        answers.flush()
