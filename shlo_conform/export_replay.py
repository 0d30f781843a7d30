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
division by zero, aborts), so chunks run in a worker process that reports
each case as it goes; the parent restarts it after a death, and the case in
flight is a `crash`.

    python -m shlo_conform.export_replay OUT_DIR [--suite core] [--ops a,b] [--timeout S]
"""
from __future__ import annotations

import argparse
import json
import re
import selectors
import subprocess
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
# worker (in its own process) and parent
# ---------------------------------------------------------------------------

def _worker(suite: str, todo: list[tuple[str, str]]) -> None:
    """Replay (file, case id) pairs; one JSON line when a case starts and one
    with its verdict, flushed, so the parent knows the case in flight."""
    from .backends.interpreter import InterpreterBackend
    from .suites.io import load_cases, suite_path
    cases = {c.id: c for c in load_cases(suite_path(suite), {i.split("/")[0] for _, i in todo})}
    backend = InterpreterBackend()
    texts: dict[str, dict[str, str]] = {}
    for f, case_id in todo:
        if f not in texts:
            texts[f] = dict(export.chunks(Path(f).read_text()))
        print(json.dumps({"start": case_id}), flush=True)
        case = cases[case_id]
        text, checks = replay_module(texts[f][case_id], [e.type.mlir for e in case.expected])
        try:
            outs = backend.run(backend.compile(text), [])
            result = judge(case, checks, outs)
        except Exception as e:  # the interpreter refused or failed: reported, not hidden
            result = {"id": case_id, "verdict": "error", "ours": "error",
                      "detail": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]}
        print(json.dumps(result), flush=True)


def replay(out_dir: Path, suite: str = "core", ops: set[str] | None = None, timeout: float = 60.0) -> list[dict]:
    """Every exported case of `out_dir` (of `ops`), replayed: one verdict dict
    per case (pass, fail, literal, error, crash, timeout)."""
    todo = []
    for f in sorted(Path(out_dir).glob("ops_*.mlir")):
        op = f.stem[len("ops_"):]
        if ops is None or op in ops:
            todo += [(str(f), i) for i, _ in export.chunks(f.read_text())]
    results: list[dict] = []
    while todo:
        proc = subprocess.Popen([sys.executable, "-m", "shlo_conform.export_replay", "--worker", suite],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        proc.stdin.write(json.dumps(todo))
        proc.stdin.close()
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        in_flight, end = None, None
        while True:
            if not sel.select(timeout):
                proc.kill()
                end = "timeout"
                break
            line = proc.stdout.readline()
            if not line:
                end = "crash"
                break
            msg = json.loads(line)
            if "start" in msg:
                in_flight = msg["start"]
            else:
                results.append(msg)
                in_flight = None
        proc.wait()
        done = {r["id"] for r in results}
        if in_flight is not None:
            results.append({"id": in_flight, "verdict": end, "ours": end,
                            "detail": f"the interpreter process {'died' if end == 'crash' else 'hung'} "
                                      f"(exit {proc.returncode})"})
            done.add(in_flight)
        left = [t for t in todo if t[1] not in done]
        if len(left) == len(todo):  # died before its first case: nothing would ever progress
            err = (proc.stderr.read() if proc.stderr else "") or f"exit {proc.returncode}"
            results += [{"id": i, "verdict": "error", "ours": "error",
                         "detail": f"the replay worker did not start: {err.strip()[-300:]}"} for _, i in left]
            break
        todo = left
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
    if argv[:1] == ["--worker"]:
        _worker(argv[1], [tuple(t) for t in json.loads(sys.stdin.read())])
        return 0
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
