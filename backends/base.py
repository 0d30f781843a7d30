"""The contract every backend adapter fulfils.

An adapter answers three questions and nothing else: which ops and element
types it claims, `compile(mlir) -> executable`, `run(executable, inputs) ->
outputs`.  The runner (shlo_conform/pipeline/runner.py) owns scheduling, worker
processes, timeouts, crash recovery and judging; adapters never see cases'
expectations.  Inputs and outputs are numpy arrays (ml_dtypes for bf16, f8,
int4), in the order of @main's arguments and results.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
import signal
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..oracle.reading import holds_quantized_types


class Rejected(Exception):
    """The implementation refused the program at parse, verify or compile time.
    For an `invalid` case this is the conformant answer."""


class Unsupported(Exception):
    """The implementation declares it does not handle this op or type; the
    case is reported as `unsupported`, not as a conformance failure."""


class Crashed(Exception):
    """The implementation died or broke its protocol (an adapter that talks
    to another process: `command`).  Like a death of the worker itself, the
    case in flight is a `crash`, and nothing of the adapter survives: the
    runner restarts the worker, so the program is compiled afresh there and
    no handle of the dead process is ever used again."""


def status_of(error: BaseException) -> tuple[str, str]:
    """The one reading of what an adapter raised, for every caller (the
    worker, the survey, the mutation tool): (status, one line) — `crash`
    (Crashed), `rejected` (Rejected), `unsupported` (Unsupported), or
    `error` for anything else (the adapter failed: type and message)."""
    for cls, status in ((Crashed, "crash"), (Rejected, "rejected"), (Unsupported, "unsupported")):
        if isinstance(error, cls):
            return status, str(error) or {"crash": "the implementation crashed"}.get(status, status)
    return "error", f"{type(error).__name__}: {error}".strip()


def compile_and_run(backend: "Backend", text: str, inputs: Sequence, *, op: str | None = None,
                    dtype: str | None = None, executable=None) -> tuple[list, Any]:
    """The one adapter call outside the runner: the backend's claim on `op`
    and `dtype` (Unsupported when it declines them), compile (unless an
    `executable` is given), run.  Returns (outputs as numpy arrays, the
    executable, for reuse); raises what the adapter raises (`status_of`)."""
    if op is not None:
        claim = backend.claims(op, dtype)
        if claim:
            raise Unsupported(claim)
    exe = backend.compile(text) if executable is None else executable
    return [np.asarray(o) for o in backend.run(exe, list(inputs))], exe


@dataclass
class HostQueues:
    """The host side of one run (a case's `host` data, oracle/host.py):
    `infeed`, the arrays infeed pops in order; `channels`, per channel id
    the arrays recv pops in order."""

    infeed: list = field(default_factory=list)
    channels: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Skip:
    """One thing a backend declares it does not handle, as data: an op
    (`"*"`: every op), the element types (None: all of them) and why.  Its
    cases are `unsupported` with the reason — reported, not counted.  A new
    skip is a row in the adapter's `skips`, never code keyed by op names."""
    op: str
    reason: str
    dtypes: tuple[str, ...] | None = None

    def covers(self, op: str, dtype: str) -> bool:
        return self.op in (op, "*") and (self.dtypes is None or dtype in self.dtypes)


class Backend(ABC):
    name: str = "?"
    # What the adapter declares it does not handle (`Skip`); `claims` reads it.
    skips: tuple[Skip, ...] = ()
    # True: `compile` takes a module whose @main calls several private
    # functions as readily as a single program, and compiling one such
    # module is cheaper than compiling its parts (shlo_conform/pipeline/batching.py);
    # the runner then compiles many cases at once and re-runs any that do
    # not pass alone.
    batches: bool = False
    # Modules the adapter imports that start no threads and hold no handles
    # once imported: the runner's zygote (shlo_conform/pipeline/zygote.py) imports
    # them once, and every worker forked from it starts with them loaded.
    # Never the adapter's clients or sessions: those are made per worker.
    preload: tuple[str, ...] = ()
    # True: the constructor takes `config`, a dict of the implementation's
    # own options named after the backend (`xla:key=value`): a vendor
    # scores a configuration other than the one users get only by naming it.
    configurable: bool = False

    # Why the adapter cannot take a program with quantized element types (v1.20's
    # `!quant.uniform`), None where it can: such a program is `unsupported` with
    # this reason (`refuse_quantized`, called first by the adapter's compile).
    quantized_unsupported: str | None = None

    def refuse_quantized(self, mlir: str) -> None:
        """Unsupported (`quantized_unsupported`) for a program with quantized types the adapter cannot take."""
        if self.quantized_unsupported and isinstance(mlir, str) and holds_quantized_types(mlir):
            raise Unsupported(f"{self.name}: {self.quantized_unsupported}")

    def claims(self, op: str, dtype: str) -> str | None:
        """None if the backend claims (op, element type), else the reason it
        does not: the first of its declared `skips` that covers them."""
        skip = next((s for s in self.skips if s.covers(op, dtype)), None)
        return f"{self.name}: {skip.reason}" if skip is not None else None

    @abstractmethod
    def compile(self, mlir: str) -> Any:
        """Compile a module whose entry point is @main; raise Rejected on refusal."""

    @abstractmethod
    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Execute once; return @main's results as numpy arrays."""

    def run_with_host(self, executable: Any, inputs: Sequence[np.ndarray],
                      host: HostQueues) -> tuple[list[np.ndarray], list[tuple[str, np.ndarray]]]:
        """Execute once with a host: infeed and recv read `host`'s queues;
        return (@main's results, the log of what outfeed ("outfeed") and
        send ("channel <id>") wrote, in order).  An adapter that cannot run
        side effects through its implementation's API leaves this as is:
        the case is `unsupported`, with the reason, never a failure."""
        raise Unsupported(f"{self.name}: {self.host_unsupported}")

    host_unsupported = "no host-side API for infeed/outfeed/send/recv through Python"

    # --- a process grid (spec "Parallel execution"; spec/grid.py) --------------
    # True: the adapter implements `compile_grid` / `run_grid`.  Whether it
    # takes a given program on a given grid is still `compile_grid`'s to say
    # (Unsupported, with the reason: a command implementation that does not
    # announce grids, a grid larger than the devices it can make).
    grid_capable: bool = False
    grid_unsupported = "its adapter has no multi-process execution"

    def compile_grid(self, mlir: str, grid) -> Any:
        """Compile @main to run as every process of `grid` (a spec.grid.Grid:
        `num_replicas` × `num_partitions`); Rejected on refusal, as `compile`.
        An adapter that cannot leaves this as is: grid cases are
        `unsupported`, with the reason, never failures."""
        raise Unsupported(f"{self.name} runs no process grid: {self.grid_unsupported}")

    def run_grid(self, executable: Any, inputs_per_process: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
        """Execute once on every process of the grid `executable` was
        compiled for, each with its own inputs; return each process's
        results.  Both lists are in flattened id order (spec/grid.py: the
        process (r, p) at index r * num_partitions + p)."""
        raise Unsupported(f"{self.name} runs no process grid: {self.grid_unsupported}")

    def describe(self) -> str:
        """One line for reports: implementation and version."""
        return self.name


_BUILTIN = {
    "oracle": "shlo_conform.backends.oracle:OracleBackend",
    "xla": "shlo_conform.backends.xla:XlaBackend",
    "interpreter": "shlo_conform.backends.interpreter:InterpreterBackend",
    "iree": "shlo_conform.backends.iree:IreeBackend",
    "command": "shlo_conform.backends.command:CommandBackend",
}


_PY_CLASS = re.compile(r"^(?P<target>[\w.]+|.+\.py):(?P<attr>\w+)$")


def backend_names() -> list[str]:
    names = list(_BUILTIN)
    try:
        from importlib.metadata import entry_points
        names += [ep.name for ep in entry_points(group="shlo_conform.backends") if ep.name not in names]
    except Exception:  # pragma: no cover - metadata unavailable
        pass
    return names


_CONFIGURED = re.compile(r"^(?P<name>\w+):(?P<config>\w+=[^,]*(?:,\w+=[^,]*)*)$")


def _config_value(text: str):
    """A configuration value as its implementation takes it: true/false as
    booleans, integers and floats as numbers, anything else as text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def backend_config(text: str) -> dict:
    """The configuration a built-in backend's name carries:
    `xla:xla_cpu_enable_fast_min_max=true,key=value` gives
    {"xla_cpu_enable_fast_min_max": True, "key": "value"}; a bare name
    gives {}.  A configuration is part of the name, so results, reports
    and the journal's key all say which one was scored."""
    m = _CONFIGURED.match(text)
    if m is None or m.group("name") not in _BUILTIN:
        return {}
    return {k: _config_value(v) for k, v in (kv.split("=", 1) for kv in m.group("config").split(","))}


def parse_backend_name(text: str) -> tuple[str, str]:
    """The one reading of a backend name, as the CLI, the runner and the
    worker take it: ("builtin", "module:Class") for a built-in name (bare,
    or `name:key=value,…` for a configuration the adapter takes:
    `backend_config`),
    ("entry point", name) for a Python entry point in group
    `shlo_conform.backends`, ("command", command line) for `command:CMD`,
    ("class", text) for `module.path:Class` or `path/to/file.py:Class`
    (adapters under development, tests).  Raises ValueError naming the
    problem; imports nothing."""
    if text.startswith("runtime:"):   # another runtime in an environment of its own (tools/runtimes/)
        return "command", runtime_command(text[len("runtime:"):])
    if text.startswith("command:"):
        cmd = text[len("command:"):]
        if not cmd.strip():
            raise ValueError("backend 'command:' needs a command line after the colon")
        return "command", cmd
    if text in _BUILTIN:
        return "builtin", _BUILTIN[text]
    m = _CONFIGURED.match(text)
    if m is not None and m.group("name") in _BUILTIN:
        return "builtin", _BUILTIN[m.group("name")]
    if text in backend_names():
        return "entry point", text
    if _PY_CLASS.match(text):
        return "class", text
    raise ValueError(f"unknown backend {text!r}; known: {', '.join(backend_names())}, runtime:NAME, command:CMD, "
                     "module:Class")


_LAUNCH = Path(__file__).resolve().parent.parent / "tools" / "runtimes" / "launch.py"


def _launch():
    """tools/runtimes/launch.py — the registry of other runtimes' names,
    environments and servers (standard library only) — read by its path, so
    that this package never imports another runtime's Python."""
    if "_shlo_runtimes_launch" not in sys.modules:
        if not _LAUNCH.is_file():
            raise ValueError(f"no {_LAUNCH}: other runtimes (runtime:NAME) are scored from a checkout")
        mspec = importlib.util.spec_from_file_location("_shlo_runtimes_launch", _LAUNCH)
        mod = importlib.util.module_from_spec(mspec)
        mspec.loader.exec_module(mod)
        sys.modules["_shlo_runtimes_launch"] = mod
    return sys.modules["_shlo_runtimes_launch"]


def runtime_names() -> list[str]:
    """The `runtime:NAME` configurations there are (built or not)."""
    try:
        return list(_launch().CONFIGS)
    except ValueError:
        return []


def runtime_command(name: str) -> str:
    """The command line serving `runtime:NAME` — a StableHLO consumer in an
    environment of its own (another jaxlib release, TensorFlow's
    XlaCallModule, LiteRT), spoken to over the command protocol.  An unknown
    name, or one whose environment is not built, is a ValueError in one line
    (naming the command that builds it)."""
    try:
        return shlex.join(_launch().command(name.strip()))
    except ValueError as e:
        raise ValueError(f"backend 'runtime:{name}': {e}") from None


def _load_class(text: str):
    m = _PY_CLASS.match(text)
    target, attr = m.group("target"), m.group("attr")
    if target.endswith(".py"):
        path = Path(target).resolve()
        modname = "_shlo_backend_" + re.sub(r"\W", "_", path.stem)
        mspec = importlib.util.spec_from_file_location(modname, path)
        if mspec is None or not path.is_file():
            raise ValueError(f"no backend file {target!r}")
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[modname] = mod
        mspec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(target)
    return getattr(mod, attr)


def backend_class(name: str) -> tuple[type, dict]:
    """The adapter class a backend name names (`parse_backend_name`), and
    the constructor options the name itself carries (`command:CMD`: the
    command line as `command`); imports the class's module, constructs
    nothing (the zygote imports this way before it forks workers)."""
    kind, target = parse_backend_name(name)
    named = {}
    config = backend_config(name)
    if config:
        cls = backend_class(name.split(":", 1)[0])[0]
        if not cls.configurable:
            raise ValueError(f"backend {cls.name!r} takes no configuration (given {name!r})")
        return cls, {"config": config}
    if kind == "command":
        named = {"command": target}
        kind, target = "builtin", _BUILTIN["command"]
    if kind == "builtin":
        mod, _, attr = target.partition(":")
        return getattr(importlib.import_module(mod), attr), named
    if kind == "entry point":
        from importlib.metadata import entry_points
        return next(ep for ep in entry_points(group="shlo_conform.backends") if ep.name == target).load(), named
    return _load_class(target), named


def load_backend(name: str, **options) -> Backend:
    """Instantiate a backend by name (`backend_class`); `options` go to
    its constructor (`command:CMD` passes the command line as `command`)."""
    cls, named = backend_class(name)
    return cls(**{**options, **named})


def exit_status(code: int | None) -> str:
    """A process's end as people read it, from a Popen-style return code
    (-N: killed by signal N): "SIGSEGV", "exit status 3", "no exit status"."""
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def check_grid_inputs(grid, inputs_per_process: Sequence[Sequence], n_args: int | None = None) -> None:
    """ValueError, one line, where `inputs_per_process` is not one input
    list per process of `grid` (flattened id order), each of `n_args`
    arrays where that is known: what every adapter's `run_grid` checks
    before it starts any process (a short list would leave a process
    waiting in a collective for one that never starts)."""
    if len(inputs_per_process) != grid.size:
        raise ValueError(f"the grid {grid} has {grid.size} processes; inputs were given for {len(inputs_per_process)}")
    if n_args is not None:
        for i, ins in enumerate(inputs_per_process):
            if len(ins) != n_args:
                raise ValueError(f"process {grid.process(i)} (flattened id {i}) was given {len(ins)} inputs; "
                                 f"@main takes {n_args}")
