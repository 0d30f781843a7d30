"""`shlo-conform check-spec`: proofs over the encoded spec, traceability, negative coverage, the verifier."""
from __future__ import annotations

import json
from pathlib import Path

from .common import (UsageError, Parser, PROG, SUITE_HELP, MAX_JOBS, bounded, nonempty, output_path, spec_op_list,
                     open_suite, selected_cases)

NAME = "check-spec"


def default_seeds() -> Path | None:
    """../shared/seeds next to the repository root, when this is a checkout that has it."""
    d = Path(__file__).resolve().parents[3] / "shared" / "seeds"
    return d if d.is_dir() else None


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} check-spec",
               description="z3 proofs over the encoded spec; traceability to the seed text; "
                           "negative-case coverage; optionally agreement with jaxlib's StableHLO verifier.")
    p.add_argument("--ops", help="comma-separated op mnemonics (default: all)")
    p.add_argument("--seeds", type=nonempty("--seeds"),
                   help="folder holding the seed texts (default: ../shared/seeds beside the "
                        "repository, when present; otherwise traceability is skipped)")
    p.add_argument("--verifier", action="store_true",
                   help="judge every case of the suite with jaxlib's StableHLO verifier too")
    p.add_argument("--suite", default="core", type=nonempty("--suite"),
                   help="suite for coverage and --verifier (default: core): " + SUITE_HELP)
    p.add_argument("--findings", type=nonempty("--findings"),
                   help="reviewed findings file (default: suites/verifier-findings.json)")
    p.add_argument("--json", type=nonempty("--json"),
                   help="write the results (proofs, traceability, coverage, verifier table) here")
    p.add_argument("--jobs", type=bounded(int, 1, MAX_JOBS, "--jobs"), default=None,
                   help="processes proving the ops (default: one per CPU); the results do not depend on it")
    a = p.parse_args(argv)
    ops = spec_op_list(a.ops)
    from ..spec.added import ADDED
    json_out = output_path(a.json, "--json", ".json") if a.json else None
    from ..spec import checks, traceability
    doc: dict = {}
    ok = True

    from ..pipeline.runner import default_jobs
    results = checks.run_ops(ops, jobs=a.jobs or default_jobs())
    proofs_ok, text = checks.render(results)
    print(text, end="")
    ok &= proofs_ok
    doc["proofs"] = {"ok": proofs_ok, "ops": [r.to_json() for r in results]}

    from ..spec import quantized_checks
    from ..spec.ops import OPS as SEED_OPS
    q_specs = {n: s for n, s in {**SEED_OPS, **ADDED}.items() if not ops or n in ops}
    q_results = quantized_checks.run(q_specs)
    if q_results:
        q_ok, text = quantized_checks.render(q_results)
        print(text, end="")
        ok &= q_ok
        doc["quantization_proofs"] = {"ok": q_ok, "ops": [r.to_json() for r in q_results]}

    seeds = Path(a.seeds) if a.seeds else default_seeds()
    if a.seeds and not seeds.is_dir():
        raise UsageError(f"--seeds {a.seeds}: no such folder")
    if seeds is None:   # every clone has the seeds' op sections stored beside the spec (spec/seed/)
        print("traceability: from the seed sections stored in spec/seed/ (no seeds folder given)")
        seed_ops = traceability.read_stored()
    else:
        try:
            spec_path, rfc_path = traceability.seed_paths(seeds)
        except FileNotFoundError as e:
            raise UsageError(f"--seeds: {e}") from None
        seed_ops = traceability.read_seeds(spec_path, rfc_path)
    from ..spec.ops import OPS
    seed_chosen = [n for n in ops or () if n in OPS]
    if ops and not seed_chosen:   # v1.20's additions carry v1.20's numbering; the seed has no section for them
        print("traceability: none to do — the ops chosen are v1.20's additions (spec/added/), labelled by "
              "v1.20's numbering, which the seed has no sections for")
    else:
        tr = traceability.trace(seed_ops, {n: OPS[n] for n in seed_chosen} if ops else None)
        if ops:  # only the chosen ops (and nothing hidden about them)
            tr.ops = [t for t in tr.ops if t.name in ops]
        print(traceability.render(tr), end="")
        ok &= tr.ok
        doc["traceability"] = tr.to_json()
    if not ops:   # the seed -> v1.20 map covers all 95 ops (spec/v1_20_map.py, docs/v1_20-map.md)
        from ..spec import v1_20_map
        print(v1_20_map.render(), end="")
        doc["v1_20_map"] = v1_20_map.totals()

    from .. import verifier
    suite_dir, _ = open_suite(a.suite)
    cases = selected_cases(suite_dir, set(ops) if ops else None, None)
    independent = {r.name: list(r.independence.witnesses) for r in results if r.independence}
    for r in q_results:   # each independent quantization clause needs its invalid case too
        independent.setdefault(r.op, [])
        independent[r.op] += [l for l in r.witnesses if l not in r.unsound and l not in independent[r.op]]
    uncovered = verifier.negative_coverage(independent, cases)
    uncovered = {op: ls for op, ls in uncovered.items() if ls}
    n_ind = sum(len(v) for v in independent.values())
    unspellable = sorted(l for v in independent.values() for l in v if l in verifier.UNSPELLABLE)
    print(f"negative cases ({a.suite}): {n_ind - len(unspellable) - sum(len(v) for v in uncovered.values())}/"
          f"{n_ind} independent constraints have an invalid case named after them"
          + "".join(f"; {l} cannot be spelled: {verifier.UNSPELLABLE[l]}" for l in unspellable)
          + ("" if not uncovered else "; MISSING " + ", ".join(l for v in uncovered.values() for l in v)))
    ok &= not uncovered
    doc["negative_coverage"] = {"independent": n_ind, "missing": uncovered}

    if a.verifier:
        try:
            findings = verifier.load_findings(Path(a.findings) if a.findings else verifier.FINDINGS)
        except (OSError, ValueError) as e:
            raise UsageError(f"findings file: {e}") from None
        ag = verifier.compare(cases, findings)
        print(verifier.render(ag), end="")
        ok &= ag.ok
        doc["verifier"] = ag.to_json()

    doc["ok"] = bool(ok)
    if json_out:
        json_out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"wrote {json_out}")
    print("check-spec: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1
