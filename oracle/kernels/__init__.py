"""The oracle's compiled loops (numba), one module per family, and the
flags they share.  Importing this package imports numba: the modules that
use it (chlo_compiled.py, chlo_fast_zeta.py, chlo_dd/zeta_compiled.py)
import it on first use, after chlo_compiled.available().

Every kernel is a module-level function taking its tables and constants as
arguments.  numba's cache keys a compiled kernel on its source file's
stamp, its bytecode and the pickled contents of its closure; a kernel
nested in a function closes over its sibling dispatchers, whose pickles
carry a fresh id each process, so nested kernels were compiled again in
every process (measured in a fresh process: erf's first call 3.9 s, the
double-word zeta's 9.5 s; from this package's cache 0.8 s and 0.3 s, after
numba's own import, 0.4 s).  Constants read as globals are frozen when a kernel compiles, and
the cache would not see them change in another file: so none comes from
another file.

* `jit`: fastmath allows contraction into fused multiply-adds (fewer
  roundings, inside every bound written for separate roundings); not "no
  NaN or infinity" (loops answer NaN and an infinite bound outside their
  cells: under that flag LLVM had turned the infinite bound into
  1.8e308) and no reassociation (the bounds follow the order the loops
  spell).
* `exact_jit`: no fastmath at all, for the error-free transformations of
  double-word arithmetic (each product and sum rounded once, as numpy
  rounds them: kernels/zeta_dd.py's results are numpy's bits).
* `to_bits`, `to_float`: a float64's bit pattern and back (LLVM bitcasts:
  a scalar has no `.view` in numba).
"""
from __future__ import annotations


import numba
from numba.core import types
from numba.extending import intrinsic

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")
jit = numba.njit(**_OPTIONS, fastmath={"nsz", "contract"})
jit_inline = numba.njit(**_OPTIONS, fastmath={"nsz", "contract"}, inline="always")
exact_jit = numba.njit(**_OPTIONS)
exact_inline = numba.njit(**_OPTIONS, inline="always")


@intrinsic
def to_bits(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.uint64))
    return types.uint64(types.float64), codegen


@intrinsic
def to_float(typingctx, b):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.uint64), codegen
