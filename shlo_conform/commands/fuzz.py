"""`shlo-conform fuzz`: random multi-op programs judged by the oracle, disagreements shrunk."""
from __future__ import annotations


from .common import UsageError, Parser, PROG, MAX_TIMEOUT, comma_list, bounded, nonempty, output_dir, cluster_engine

NAME = "fuzz"


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} fuzz",
               description="Random programs of several ops (drawn by hypothesis from the encoded ops, inputs "
                           "with special values), judged by the oracle against a backend; each distinct "
                           "disagreement is shrunk to a minimal program and written as a one-case suite that "
                           "--suite and explain replay.  Exit 1 when a disagreement was found.")
    p.add_argument("--backend", required=True)
    p.add_argument("--ops", help="comma-separated ops to draw from (default: every op fuzz can place)")
    p.add_argument("--budget", type=bounded(float, 0, 7 * 24 * 3600, "--budget"), default=60.0,
                   help="seconds; no program starts after they are spent (default 60)")
    p.add_argument("--seed", type=bounded(int, 0, 2 ** 32 - 1, "--seed"), default=0)
    p.add_argument("--out", default="out/fuzz", type=nonempty("--out"),
                   help="folder for the shrunk cases, one suite folder each (default out/fuzz)")
    p.add_argument("--timeout", type=bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None,
                   help="seconds per run (compiles get twice as long); default 10 s")
    p.add_argument("--campaigns", type=bounded(int, 1, 1 << 16, "--campaigns"), default=None, metavar="N",
                   help="N campaigns with distinct reproducible seeds (the first keeps --seed), each in a fresh "
                        "process, their shrunk cases de-duplicated by cause (default 1; with --cluster: its workers)")
    p.add_argument("--cluster", type=nonempty("--cluster"), metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): the campaigns run on its workers")
    p.add_argument("--max-programs", type=bounded(int, 1, 1 << 40, "--max-programs"), default=None, metavar="N",
                   help="stop each campaign after N programs (reproducible runs; default: the budget only)")
    a = p.parse_args(argv)
    from ..pipeline.runner import DEFAULT_RUN_TIMEOUT, BackendLoadError, check_backend_spec
    try:
        check_backend_spec(a.backend)
    except ValueError as e:
        raise UsageError(f"--backend: {e}") from None
    from ..generators.fuzz_programs import fuzzable, fuzzable_ops
    from ..spec.ops import OPS
    ops = comma_list(a.ops, "--ops")
    for o in ops or []:
        if o not in OPS:
            raise UsageError(f"--ops: no op {o!r} in the encoded spec")
        if fuzzable(OPS[o]):
            raise UsageError(f"--ops: fuzz cannot place {o!r} in a program ({fuzzable(OPS[o])})")
    out = output_dir(a.out, "--out")
    from ..fuzz import fuzz, fuzz_campaigns, stderr_log
    try:
        if a.campaigns is None and a.cluster is None:
            summary = fuzz(a.backend, fuzzable_ops(ops), seed=a.seed, budget=a.budget, out=out,
                           timeout=a.timeout or DEFAULT_RUN_TIMEOUT, max_programs=a.max_programs, log=stderr_log)
        else:
            with cluster_engine(a.cluster) as engine:
                summary = fuzz_campaigns(a.backend, fuzzable_ops(ops), seed=a.seed, campaigns=a.campaigns or 1,
                                         budget=a.budget, out=out, timeout=a.timeout or DEFAULT_RUN_TIMEOUT,
                                         max_programs=a.max_programs, engine=engine, log=stderr_log)
    except BackendLoadError as e:
        raise UsageError(str(e)) from None
    print(summary.line())
    return 1 if summary.disagreements else 0
