"""shlo-conform: the executable StableHLO specification and its conformance suite.

Public API:
    run_program(program, inputs, backend="oracle") -> list[numpy.ndarray]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__version__ = "0.1.0"


def run_program(program: str | bytes, inputs: Sequence[np.ndarray], backend: str = "oracle") -> list[np.ndarray]:
    """Compile and run a StableHLO module's @main on one backend, in this process.

    `program`: MLIR text in the generic or pretty form, or bytes — MLIR
    bytecode or a portable artifact (`jax.export`'s `mlir_module_serialized`);
    backends other than the oracle are handed its text.  Inputs and outputs
    are numpy arrays (ml_dtypes for bf16, f8 and int4).  Raises
    backends.base.Rejected if the backend refuses the program.  CHLO ops
    the oracle decomposed first (jaxlib's chlo-legalize-to-stablehlo) are
    named in a `UserWarning`: the expectation is the decomposition's.
    """
    from .backends.base import load_backend
    b = load_backend(backend)
    if isinstance(program, (bytes, bytearray)) and backend != "oracle":
        from .oracle.reading import from_bytecode
        program = from_bytecode(bytes(program))
    executable = b.compile(program)
    legalized = getattr(executable, "legalized", None)
    if legalized:
        import warnings
        warnings.warn(f"the oracle judged the program after legalizing its CHLO ops into StableHLO "
                      f"(chlo-legalize-to-stablehlo): {_counts(legalized)}", stacklevel=2)
    return b.run(executable, list(inputs))


def _counts(ops: dict) -> str:
    return ", ".join(f"{op} x{n}" for op, n in sorted(ops.items()))
