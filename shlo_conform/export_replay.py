"""Replay an export (shlo_conform/export.py) through jaxlib's StableHLO interpreter.

jaxlib carries the reference interpreter (`stablehlo.eval_module`) but not
the `check` dialect the exported files use: no op, type or symbol of it is
in jaxlib (probed: `Context.is_registered_operation("check.expect_eq_const")`
is False after `register_interpreter_dialect`, and no jaxlib library holds
the string `expect_eq_const`), and an unregistered op reaching the
interpreter aborts the process ("Unsupported op").  So each exported
function is run with its checks taken out: a `@main` is made of the test
function's own lines whose results are the checked values, the expected
constants as the file writes them, and the input constants; the checks are
then applied here, with the rules of the check ops:

  expect_eq_const   bit equality (how we read upstream's element equality)
  expect_close      ULP distance at most max_ulp_difference (our counting:
                    spec.types.ulp_distance)

and, apart from them, the literals are checked: every constant must read
back (through jaxlib's MLIR parser and the interpreter) as the suite's bits.
A function whose checks pass while its literals are the suite's proves that
the file states the suite's expectation and that the interpreter meets it.

The interpreter kills its process on some inputs (SIGFPE on an integer
division by zero, aborts), so the cases run in a process of the isolation
harness (shlo_conform/pipeline/isolation.py); after a death or a hang the case in
flight is a `crash` or a `timeout`, and the next case starts a fresh process.

    python -m shlo_conform.export_replay OUT_DIR [--suite core] [--ops a,b] [--timeout S]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from . import export

_FUNC = re.compile(r"^func\.func @(\w+)\(\) \{$")
_CONST = re.compile(r"^  (%a\d+) = stablehlo\.constant .* : (tensor<.*>)$")


def replay_module(chunk: str, out_types: list[str]) -> tuple[str, list[export.Check]]:
    """(module text, checks): the chunk's test function as a `@main` that
    returns, in order, each checked value, each expected value as the file
    writes it, each result of the call (`out_types`) and a twin of each
    input constant (same literal, never passed to the program); the check
    lines removed, everything else kept."""
    lines = chunk.splitlines()
    start = next(i for i, line in enumerate(lines) if _FUNC.match(line))
    end = lines.index("}", start)
    checks = export.checks_of(chunk)
    body, inputs = [], []
    for line in lines[start + 1:end]:
        if line.lstrip().startswith("check.") or line.strip() == "func.return":
            continue
        body.append(line)
        m = _CONST.match(line)
        if m:  # a twin the program never sees: the interpreter's scatter writes into its operand (findings)
            twin = f"%z{len(inputs)}"
            body.append(line.replace(f"{m.group(1)} =", f"{twin} =", 1))
            inputs.append((twin, m.group(2)))
    rets = [c.actual for c in checks]
    types = [c.type for c in checks]
    for j, c in enumerate(checks):
        if c.op == "expect_eq_const":
            body.append(f"  %x{j} = stablehlo.constant {c.expected}")
            rets.append(f"%x{j}")
        else:
            rets.append(c.expected)
        types.append(c.type)
    rets += ["%r"] if len(out_types) == 1 else [f"%r#{k}" for k in range(len(out_types))]
    types += out_types
    rets += [name for name, _ in inputs]
    types += [t for _, t in inputs]
    head = f"func.func @main() -> ({', '.join(types)}) {{"
    ret = f"  func.return {', '.join(rets)} : {', '.join(types)}" if rets else "  func.return"
    return "\n".join([head, *body, ret, "}", *lines[end + 1:]]) + "\n", checks


def judge(case, checks: list[export.Check], outs: list) -> dict:
    """The verdict of one replayed chunk (module docstring): "literal" when a
    constant does not read back as the suite's bits, else "fail" when a check
    fails by its rule, else "pass"; `ours` is the suite's own verdict on the
    same results (suites.compare)."""
    from .spec.types import to_bits, ulp_distance
    from .suites.compare import compare
    plan = export.check_plan(case)
    n, m = len(checks), len(case.expected)
    if len(plan) != n:
        return {"id": case.id, "verdict": "literal", "ours": "error",
                "detail": f"{n} check lines where the case plans {len(plan)}"}
    actual, expected, raw, inputs = outs[:n], outs[n:2 * n], outs[2 * n:2 * n + m], outs[2 * n + m:]
    problems = []
    for k, v in enumerate(case.inputs):
        if not np.array_equal(to_bits(inputs[k], v.tensor_type.element_type),
                              export.tensor_bits(v.hex, v.tensor_type)):
            problems.append(f"literal: input {k} does not read back as the suite's bits")
    for j, (c, (k, part, t, bits, how)) in enumerate(zip(checks, plan)):
        et = t.element_type
        got_e = to_bits(expected[j], et)
        if not np.array_equal(got_e, bits):
            problems.append(f"literal: check {j} (output {k} {part}) does not read back as the suite's bits")
        a = to_bits(actual[j], et)
        if c.op == "expect_eq_const":
            bad = a != got_e
            if et.is_complex:
                bad = bad.any(axis=-1)
            if bad.any():
                problems.append(f"check {j} (expect_eq_const): {int(bad.sum())} of {bad.size} elements differ")
        else:
            comp = et.component if et.is_complex else et
            worst = max((ulp_distance(int(x), int(y), comp.format) for x, y in zip(a.reshape(-1), got_e.reshape(-1))),
                        default=0.0)
            if worst > c.max_ulp:
                problems.append(f"check {j} (expect_close): {worst:g} ulp > max_ulp_difference {c.max_ulp}")
    ours_ok = all(compare(e, raw[k]).ok for k, e in enumerate(case.expected))
    literal = any(p.startswith("literal") for p in problems)
    return {"id": case.id, "verdict": "literal" if literal else ("fail" if problems else "pass"),
            "ours": "pass" if ours_ok else "fail", "detail": "; ".join(problems)}


# ---------------------------------------------------------------------------
# one case in the replay's isolated process, and the parent
# ---------------------------------------------------------------------------

_STATE: dict = {}   # in the replay's job process: the suite's cases, the interpreter, the files read


def replay_one(suite: str, item: tuple[str, str]) -> dict:
    """Replay one (file, case id) exported function through the interpreter
    (runs in the isolated job process: the interpreter kills its process on
    some inputs); the suite, the adapter and each file are read once per
    process."""
    from .backends.interpreter import InterpreterBackend
    from .suites.io import load_cases, suite_path
    f, case_id = item
    if _STATE.get("suite") != suite:
        _STATE.update(suite=suite, cases={}, texts={}, backend=InterpreterBackend())
    op = case_id.split("/")[0]
    if case_id not in _STATE["cases"]:
        _STATE["cases"].update({c.id: c for c in load_cases(suite_path(suite), {op})})
    if f not in _STATE["texts"]:
        _STATE["texts"][f] = dict(export.chunks(Path(f).read_text()))
    case, backend = _STATE["cases"][case_id], _STATE["backend"]
    text, checks = replay_module(_STATE["texts"][f][case_id], [e.type.mlir for e in case.expected])
    try:
        return judge(case, checks, backend.run(backend.compile(text), []))
    except Exception as e:  # the interpreter refused or failed: reported, not hidden
        return {"id": case_id, "verdict": "error", "ours": "error",
                "detail": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]}


def replay(out_dir: Path, suite: str = "core", ops: set[str] | None = None, timeout: float = 60.0) -> list[dict]:
    """Every exported case of `out_dir` (of `ops`), replayed: one verdict dict
    per case (pass, fail, literal, error, crash, timeout).  The cases run in
    one process of the isolation harness (shlo_conform/pipeline/isolation.py): a death
    or a hang is the case in flight's `crash` or `timeout`, the next case
    starts a fresh process, and a process that cannot start says why."""
    import tempfile
    from .pipeline.isolation import Failure, Jobs, default_startup_timeout, failure_status
    todo = []
    for f in sorted(Path(out_dir).glob("ops_*.mlir")):
        op = f.stem[len("ops_"):]
        if ops is None or op in ops:
            todo += [(str(f), i) for i, _ in export.chunks(f.read_text())]
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="shlo-conform-") as tmp, Jobs(tmp, label="replay") as jobs:
        fresh = True
        for item in todo:   # a fresh process's first case includes its start (jaxlib, the suite)
            r = jobs.call("shlo_conform.export_replay:replay_one", suite, item,
                          timeout=default_startup_timeout(timeout) if fresh else timeout)
            fresh = isinstance(r, Failure) and r.kind in ("crash", "timeout")
            if isinstance(r, Failure):
                verdict, detail = failure_status(r, timeout)
                r = {"id": item[1], "verdict": verdict, "ours": r.kind, "detail": f"the interpreter's {detail}"[:300]}
            results.append(r)
    return results


def render(results: list[dict]) -> str:
    """Per op: cases, check verdicts, and the rule differences seen."""
    by_op: dict[str, Counter] = {}
    for r in results:
        by_op.setdefault(r["id"].split("/")[0], Counter())[r["verdict"]] += 1
        by_op[r["id"].split("/")[0]]["ours_pass"] += r["ours"] == "pass"
    cols = ("pass", "fail", "literal", "error", "crash", "timeout")
    lines = [f"{'op':22s} {'cases':>6s} " + " ".join(f"{c:>7s}" for c in cols) + "  ours-pass"]
    total = Counter()
    for op in sorted(by_op):
        c = by_op[op]
        total += c
        lines.append(f"{op:22s} {sum(c[k] for k in cols):6d} " + " ".join(f"{c[k]:7d}" for k in cols)
                     + f"  {c['ours_pass']:9d}")
    lines.append(f"{'total':22s} {sum(total[k] for k in cols):6d} " + " ".join(f"{total[k]:7d}" for k in cols)
                 + f"  {total['ours_pass']:9d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m shlo_conform.export_replay")
    p.add_argument("out")
    p.add_argument("--suite", default="core")
    p.add_argument("--ops")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--json")
    a = p.parse_args(argv)
    results = replay(Path(a.out), a.suite, set(a.ops.split(",")) if a.ops else None, a.timeout)
    print(render(results))
    for r in results:
        if r["verdict"] != "pass":
            print(f"  {r['verdict']:8s} {r['id']}  {r['detail']}")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(r["verdict"] == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
