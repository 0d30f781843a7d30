"""`shlo-conform run`: one program on several backends, judged against the oracle."""
from __future__ import annotations


from .common import UsageError, Parser, PROG, bounded, size_arg, nonempty, backend_list

NAME = "run"


def _dims(text: str) -> dict:
    """An argparse type: --dims b=4,t=3 or arg0=4x16 (shlo_conform/refine.py)."""
    from ..refine import parse_dims
    try:
        return parse_dims(text)
    except ValueError as e:
        raise UsageError(f"--dims: {e}") from None


def main(argv: list[str]) -> int:
    from ..generators.values import DRAWS, RUN_DRAW
    p = Parser(prog=f"{PROG} run",
               description="Run one program (StableHLO text in any syntax, MLIR bytecode or a jax.export "
                           "portable artifact) on several backends and compare each output with the "
                           "oracle's expectation, stating the width each verdict was judged with.  Exit 0 when "
                           "every output agrees; 1 when a backend disagrees, crashes or refuses a valid "
                           "program; 2 for a usage or input error; 3 when an output is inconclusive (its "
                           "enclosure too wide to tell a wrong answer from a right one) or unchecked (the "
                           "oracle states no value for it); 4 when there is no verdict (the oracle cannot "
                           "judge the program, or a backend ran past --timeout: slow, not wrong).")
    p.add_argument("program", type=nonempty("PROGRAM"))
    p.add_argument("--backend", required=True,
                   help="comma-separated backends (oracle prints its own values too): xla,interpreter,iree,oracle")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--inputs", type=nonempty("--inputs"),
                     help=".npz file: arg0, arg1, … (or arr_0, …), @main's types exactly (narrow floats as raw bits)")
    src.add_argument("--random", type=bounded(int, 0, 2**63 - 1, "--random"), metavar="SEED",
                     help="draw inputs from this seed (default: seed 0)")
    p.add_argument("--dims", type=_dims, default=None, metavar="NAME=N,…",
                   help="with --random, for a program with dynamic dimensions (tensor<?x16xf32>, jax.export with "
                        "symbolic shapes): the sizes to refine it to — its dimension variables (b=4,t=3) or an "
                        "argument's whole shape (arg0=4x16); with --inputs the arrays' shapes are the sizes")
    p.add_argument("--values", choices=tuple(DRAWS), default=None,
                   help="with --random: typical (default) draws floats from N(0, 1) rounded to their format and "
                        "integers from [-16, 16], as a model's inputs are; wide draws over the whole range, as the "
                        "suite does (a model program's dot products then overflow)")
    p.add_argument("--specials", type=bounded(float, -1e-300, 1.0, "--specials"), default=0.0, metavar="P",
                   help="with --random: share of special values (±0, ±inf, NaN, subnormals, extremes); default 0")
    from ..differential import TIMEOUT_MAX, TIMEOUT_RULE
    p.add_argument("--timeout", type=bounded(float, 0, TIMEOUT_MAX, "--timeout"), default=None,
                   help="seconds for each backend's run and for the oracle (compiles get twice as long); "
                        f"default scaled to the program: {TIMEOUT_RULE}.  A backend past it is slow, not "
                        "wrong: no verdict (exit 4)")
    p.add_argument("--oracle-memory", type=size_arg("--oracle-memory"), default=None, metavar="SIZE",
                   help="memory the oracle may use (e.g. 16G); a program that needs more is refused up front "
                        "with the figure; default 8G or half the machine's memory")
    p.add_argument("--replicas", type=bounded(int, 1, 2 ** 32 - 1, "--replicas"), default=None, metavar="N",
                   help="run on a process grid of N replicas (default: the module's mhlo.num_replicas, else 1)")
    p.add_argument("--partitions", type=bounded(int, 1, 2 ** 32 - 1, "--partitions"), default=None, metavar="M",
                   help="... and M partitions (default: the module's mhlo.num_partitions, else 1); on a grid, "
                        "--inputs holds arg<k>@<flattened id> per process (arg<k>: every process)")
    a = p.parse_args(argv)
    from ..differential import InputError, run_command
    from ..pipeline.runner import BackendLoadError
    from ..spec.grid import Grid
    if a.inputs is not None and a.values is not None:
        raise UsageError("--values goes with --random: with --inputs the values are the .npz file's")
    if a.dims is not None and a.inputs is not None:
        raise UsageError("--dims goes with --random: with --inputs the arrays' shapes set the dynamic dimensions")
    backends = backend_list(a.backend)
    grid = Grid(a.replicas or 1, a.partitions or 1) if (a.replicas or a.partitions) else None
    try:
        text, rc = run_command(a.program, backends, inputs_npz=a.inputs, seed=a.random,
                               special_fraction=a.specials, draw=a.values or RUN_DRAW, timeout=a.timeout,
                               oracle_memory=a.oracle_memory, grid=grid, dims=a.dims)
    except InputError as e:
        raise UsageError(str(e)) from None
    except BackendLoadError as e:
        raise UsageError(str(e)) from None
    print(text)
    return rc
