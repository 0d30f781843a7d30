"""shlo-conform: the executable StableHLO specification and its conformance suite.

Public API:
    run_program(mlir_text, inputs, backend="oracle") -> list[numpy.ndarray]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__version__ = "0.1.0"


def run_program(mlir_text: str, inputs: Sequence[np.ndarray], backend: str = "oracle") -> list[np.ndarray]:
    """Compile and run a StableHLO module's @main on one backend, in this process.

    Inputs and outputs are numpy arrays (ml_dtypes for bf16, f8 and int4).
    Raises backends.base.Rejected if the backend refuses the program.
    """
    from .backends.base import load_backend
    b = load_backend(backend)
    return b.run(b.compile(mlir_text), list(inputs))
