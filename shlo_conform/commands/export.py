"""`shlo-conform export`: a suite in the StableHLO interpreter's test format."""
from __future__ import annotations

from pathlib import Path

from .common import (UsageError, Parser, PROG, SUITE_HELP, comma_list, nonempty, open_suite, check_ops,
                     check_dtypes, selected_cases)

NAME = "export"


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} export",
               description="Write a suite's cases in the StableHLO interpreter's own test format "
                           "(stablehlo/tests/interpret: check.expect_* lines, one ops_<op>.mlir per op) for "
                           "stablehlo-translate --interpret; cases no check op states faithfully are listed in "
                           "SKIPPED.txt with the reason.  Same suite => same bytes.")
    p.add_argument("--suite", default="core", type=nonempty("--suite"), help=SUITE_HELP + " (default: core)")
    p.add_argument("--out", required=True, type=nonempty("--out"),
                   help="a new or empty folder, or one an earlier export wrote (its files are replaced); a "
                        "folder holding anything else is refused")
    p.add_argument("--ops", help="comma-separated op mnemonics to export (default: all)")
    p.add_argument("--dtypes", help="comma-separated element types to export (default: all)")
    a = p.parse_args(argv)
    from .. import export
    from ..suites.io import is_bundled, suite_digest
    path, manifest = open_suite(a.suite)
    ops = check_ops(comma_list(a.ops, "--ops"), path)
    dtypes = check_dtypes(comma_list(a.dtypes, "--dtypes"))
    out = Path(a.out).expanduser()
    try:
        export.check_out(out)
    except ValueError as e:  # ExportRefused
        raise UsageError(f"--out {a.out}: {e}") from None
    cases = selected_cases(path, ops, dtypes)
    if not cases:
        raise UsageError(f"no cases in suite {a.suite!r} match the selection (--ops/--dtypes)")
    label = a.suite if is_bundled(path) else str(manifest.get("suite", path.name))
    try:
        s = export.export(cases, out, label, suite_digest(path))
    except ValueError as e:  # ExportRefused
        raise UsageError(f"--out {a.out}: {e}") from None
    except OSError as e:
        raise UsageError(f"--out {a.out}: cannot write the export ({e.strerror or e})") from None
    print(f"exported {sum(s.exported.values())} value cases ({len(s.exported)} ops, ops_<op>.mlir) and "
          f"{sum(s.invalid.values())} invalid cases (invalid_<op>.mlir) of {len(cases)} into {out}; "
          f"skipped {len(s.skipped)} (see {out / export.SKIPPED}):")
    for reason, n in sorted(s.reasons().items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:6d}  {reason}")
    return 0
