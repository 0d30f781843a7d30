"""Read programs with the oracle, one mutant in place: what a declaration's reason claims, checked.

    .venv/bin/python tools/mutation/try_mutant.py 'KEY' prog.mlir [prog2.mlir …]
    .venv/bin/python tools/mutation/try_mutant.py '' prog.mlir          # unmutated

KEY is a mutant's stable name as equivalent.toml and the run records write it
(file | function | operator | source line | rank).  Each program is read by
`oracle.program.parse_program` — the reading every case's verdict starts
with — and its rejection (the rules it names) or acceptance printed, so a
reason such as "differs only on programs another rule refuses" is shown on
such a program, mutated and not (stop 48: tools/mutation/runs/stop48-checks.txt).
The mutated module is served from memory as the tool's scorers serve it.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutation  # noqa: E402


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    key, programs = argv[0], argv[1:]
    if key:
        stem, _, rank = key.rpartition(" | ")
        path = stem.split(" | ")[0]
        same = [m for m in mutation.enumerate_mutants(path) if mutation.mutant_key(m, 0).rpartition(" | ")[0] == stem]
        if not rank.isdigit() or int(rank) >= len(same):
            print(f"try_mutant: no mutant {key!r} in {path}", file=sys.stderr)
            return 2
        m = same[int(rank)]
        mutation._install_hook(mutation.ROOT / m.path, mutation.mutated_source(m))
        print(f"mutant {m.path}:{m.line} {m.operator}")
    from shlo_conform.oracle.program import ProgramRejected, parse_program
    for p in programs:
        try:
            parse_program(Path(p).read_text())
            print(f"{p}: accepted")
        except ProgramRejected as e:
            print(f"{p}: rejected: {str(e)[:300]}")
        except Exception as e:   # a mutant that breaks the reader: what a scorer counts as a kill
            print(f"{p}: raised {type(e).__name__}: {str(e)[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
