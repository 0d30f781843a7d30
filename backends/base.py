"""The contract every backend adapter fulfils.

An adapter answers three questions and nothing else: which ops and element
types it claims, `compile(mlir) -> executable`, `run(executable, inputs) ->
outputs`.  The runner (shlo_conform/runner.py) owns scheduling, worker
processes, timeouts, crash recovery and judging; adapters never see cases'
expectations.  Inputs and outputs are numpy arrays (ml_dtypes for bf16, f8,
int4), in the order of @main's arguments and results.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Sequence

import numpy as np


class Rejected(Exception):
    """The implementation refused the program at parse, verify or compile time.
    For an `invalid` case this is the conformant answer."""


class Unsupported(Exception):
    """The implementation declares it does not handle this op or type; the
    case is reported as `unsupported`, not as a conformance failure."""


class Backend(ABC):
    name: str = "?"

    def claims(self, op: str, dtype: str) -> str | None:
        """None if the backend claims (op, element type), else the reason it does not."""
        return None

    @abstractmethod
    def compile(self, mlir: str) -> Any:
        """Compile a module whose entry point is @main; raise Rejected on refusal."""

    @abstractmethod
    def run(self, executable: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Execute once; return @main's results as numpy arrays."""

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


def backend_names() -> list[str]:
    names = list(_BUILTIN)
    try:
        from importlib.metadata import entry_points
        names += [ep.name for ep in entry_points(group="shlo_conform.backends") if ep.name not in names]
    except Exception:  # pragma: no cover - metadata unavailable
        pass
    return names


def load_backend(name: str, **options) -> Backend:
    """Instantiate a backend by name: built-in, or a Python entry point in
    group `shlo_conform.backends`.  `command:PATH` selects the command adapter."""
    import importlib
    if name.startswith("command:"):
        options = {**options, "command": name[len("command:"):]}
        name = "command"
    target = _BUILTIN.get(name)
    if target is None:
        from importlib.metadata import entry_points
        eps = [ep for ep in entry_points(group="shlo_conform.backends") if ep.name == name]
        if not eps:
            raise ValueError(f"unknown backend {name!r}; known: {', '.join(backend_names())}")
        cls = eps[0].load()
    else:
        mod, _, attr = target.partition(":")
        cls = getattr(importlib.import_module(mod), attr)
    return cls(**options)
