"""`shlo-conform explain`: one case decoded, optionally run on a backend."""
from __future__ import annotations


import numpy as np

from .common import UsageError, Parser, PROG, MAX_TIMEOUT, SUITE_HELP, bounded, nonempty, open_suite, selected_cases

NAME = "explain"


def show_array(array) -> str:
    """An array as `explain` prints it: suites/show.py's notation (NaN sign
    and payload, the shortest digits that tell the type's values apart)."""
    from ..suites import show
    return show.array(array, threshold=200, edgeitems=4, linewidth=100)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in text.splitlines())


def _explain_values(kind: str, inputs: list, expected: list, by: str = "") -> None:
    """`explain`'s inputs and expected outputs of one process (`by`: the indent)."""
    print(f"{by}inputs:")
    for i, v in enumerate(inputs):
        print(f"{by}  %arg{i}: {v.type} =")
        print(_indent(show_array(v.array()), by + "      "))
    if kind in ("value", "survey"):
        print(f"{by}expected:" if kind == "value" else f"{by}known behaviours (survey: reported, not scored):")
        for i, e in enumerate(expected):
            from ..suites.kinds import describe
            print(f"{by}  #{i}: {e.type.mlir} ({describe(e)})" + (f" — {e.why}" if e.why else ""))
            print(_indent(show_array(e.array()), by + "      "))
            if e.impl_defined:
                print(f"{by}      implementation-defined at flat indices {e.impl_defined[:20]}: "
                      + ", ".join(alt.label for alt in e.alternatives))


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} explain", description="Show one case, decoded; optionally run it on a backend.")
    p.add_argument("case_id")
    p.add_argument("--suite", default="core", type=nonempty("--suite"), help=SUITE_HELP)
    p.add_argument("--backend")
    p.add_argument("--timeout", type=bounded(float, 0, MAX_TIMEOUT, "--timeout"), default=None)
    a = p.parse_args(argv)
    from ..pipeline.runner import DEFAULT_RUN_TIMEOUT, BackendLoadError, Runner, check_backend_spec
    if a.backend:
        try:
            check_backend_spec(a.backend)
        except ValueError as e:
            raise UsageError(str(e)) from None
    path, _ = open_suite(a.suite)
    op = a.case_id.split("/")[0]
    if not (path / f"{op}.jsonl").is_file():
        raise UsageError(f"no case {a.case_id!r} in suite {a.suite!r} (it has no op {op!r})")
    matches = [c for c in selected_cases(path, {op}, None) if c.id == a.case_id]
    if not matches:
        raise UsageError(f"no case {a.case_id!r} in suite {a.suite!r}")
    c = matches[0]

    print(f"case  {c.id}")
    print(f"op    {c.op}   element type {c.dtype}   kind {c.kind}")
    if c.note:
        print(f"note  {c.note}")
    if c.violates:
        print(f"violates  {c.violates} (must be rejected before execution)")
    if c.provenance:
        print("provenance  " + ", ".join(f"{k}={v}" for k, v in sorted(c.provenance.items())))
    if c.grid is not None:
        g = c.grid
        print(f"grid  {g.num_replicas} replica(s) × {g.num_partitions} partition(s): {g.size} processes, "
              "listed in flattened id order (replica_id * num_partitions + partition_id)")
    print("program:")
    print(_indent(c.mlir.rstrip()))
    per_process = c.grid is not None and bool(c.grid.inputs)
    for n, (inputs, expected) in enumerate(zip(c.grid.inputs, c.grid.expected) if per_process
                                           else [(c.inputs, c.expected)]):
        if per_process:
            print(f"{c.grid.process_label(n)}:")
        _explain_values(c.kind, inputs, expected, "  " if per_process else "")
    if not a.backend:
        return 0

    run_timeout = a.timeout or DEFAULT_RUN_TIMEOUT
    runner = Runner(a.backend, run_timeout=run_timeout, keep_outputs=True)
    try:
        [v] = runner.run([c])
    except BackendLoadError as e:
        raise UsageError(str(e)) from None
    print(f"backend {runner.describe or a.backend}:")
    outs = (runner.outputs or {}).get(c.id)
    if outs is not None:
        for n, per in enumerate(outs if per_process else [outs]):
            if per_process:
                print(f"  {c.grid.process_label(n)}:")
            for i, o in enumerate(per):
                print(f"{'  ' if per_process else ''}  actual #{i}: dtype {np.asarray(o).dtype}, "
                      f"shape {tuple(np.shape(o))}")
                print(_indent(show_array(o), "        " if per_process else "      "))
    print(f"verdict  {v.verdict}" + (f"   max ULP {v.max_ulp:g}" if v.max_ulp is not None else "")
          + (f" (over elements where ULP is the measure: {v.meaningful_ulp:g})"
             if v.meaningful_ulp is not None and v.meaningful_ulp != v.max_ulp else ""))
    if v.causes:   # why the elements failed (suites/causes.py)
        print("causes   " + ", ".join(f"{cause}: {n} element{'s' if n != 1 else ''}" for cause, n in v.causes.items()))
        for i, e, act, u, cause in v.mismatches:
            print(f"  [{i}] expected {e} got {act}" + (f" ({u:g} ulp)" if u is not None else "") + f": {cause}")
    if v.detail:
        print(f"detail   {v.detail}")
    if v.impl_defined:
        print(f"implementation-defined choices: {', '.join(v.impl_defined)}")
    return 1 if v.conformant is False else 0
