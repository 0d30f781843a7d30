"""`shlo-conform generate`: generate a suite from the encoded spec."""
from __future__ import annotations

import json
from pathlib import Path

from .common import UsageError, Parser, PROG, bounded, nonempty, spec_ops, spec_op_list

NAME = "generate"


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} generate", description="Generate a suite (same seed => same bytes).")
    p.add_argument("--out", required=True, type=nonempty("--out"),
                   help="a new or empty folder, or a suite folder written by generate: then only the files of "
                        "the generated ops are replaced (same seed required when other ops stay); a folder "
                        "holding anything else is refused")
    p.add_argument("--seed", required=True, type=bounded(int, 0, 2 ** 64 - 1, "--seed"))
    p.add_argument("--ops", help="comma-separated op mnemonics (default: all)")
    a = p.parse_args(argv)
    ops = spec_op_list(a.ops)
    from ..generators import suite as gen
    from ..suites.io import SuiteWriteRefused, check_suite_write
    out = Path(a.out).expanduser()
    try:  # before minutes of generation, not after
        check_suite_write(out, {"seed": a.seed}, set(ops or spec_ops()))
        gen.build(out, a.seed, ops)
    except SuiteWriteRefused as e:   # only that: a generator's own ValueError is not the folder's fault
        raise UsageError(f"--out {a.out}: {e}") from None
    except OSError as e:
        raise UsageError(f"--out {a.out}: cannot write the suite ({e.strerror or e})") from None
    try:
        total = json.loads((out / "manifest.json").read_text()).get("total")
    except (OSError, ValueError):
        total = None
    print(f"wrote suite {out}" + (f" ({total} cases)" if total is not None else ""))
    return 0
