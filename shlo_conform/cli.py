"""`shlo-conform`: score a backend, and the tools around the suite.

    shlo-conform --backend=NAME [--suite NAME|DIR] [--ops a,b] [--dtypes f32,bf16]
                 [--json PATH] [--html PATH] [--timeout S] [--jobs N] [--batch N]
                 [--baseline RESULTS.json] [--junit PATH] [--shard I/N]
    shlo-conform generate --out DIR --seed N [--ops a,b]
    shlo-conform check-spec [--ops a,b] [--seeds DIR] [--verifier] [--json PATH]
    shlo-conform explain CASE_ID [--suite NAME|DIR] [--backend NAME]
    shlo-conform report RESULTS.json [--html OUT] [--junit OUT]
    shlo-conform report --merge A.json B.json ... [--json OUT] [--html OUT] [--junit OUT]
    shlo-conform run PROGRAM --backend=a,b,oracle [--inputs FILE.npz | --random SEED [--dims NAME=N,…]] [--specials P]
                     [--replicas N] [--partitions M]
    shlo-conform list [ops|backends|suites]
    shlo-conform accuracy --backend=a,b [--ops a,b] [--dtypes f16,f32] [--size N] [--json PATH] [--html PATH]
    shlo-conform export --out DIR [--suite NAME|DIR] [--ops a,b] [--dtypes f32,si8]
    shlo-conform fuzz --backend=NAME [--ops a,b] [--budget S] [--seed N] [--out DIR]

Exit codes: 0 conformant (or nothing new against --baseline), 1 conformance
failures, 2 usage or input errors — one line on stderr naming the flag or
file and what is wrong, never a traceback (set SHLO_CONFORM_DEBUG=1 to see
one).  Every argument and input file is checked before any work: numbers
within their bounds, output paths writable, suites validated as they load
(suites/io.py), results files checked as results documents.  Ctrl-C keeps
the results so far in the journal (`<json>.<key>.journal`, keyed by what
decides the verdicts); the same command resumes.

The commands are in shlo_conform/commands/, one module each, listed once in
its COMMANDS; this module is the entry point (pyproject.toml's
`shlo-conform`, and `python -m shlo_conform.cli`): it dispatches and turns
what escapes a command into an exit code.
"""
from __future__ import annotations

import os
import sys

from .commands import COMMANDS, DEFAULT
from .commands.common import PROG, UsageError


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        if argv and not argv[0].startswith("-"):
            raise UsageError(f"unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}, "
                             "or score a backend with --backend=NAME")
        return DEFAULT(argv, tuple(COMMANDS))
    except UsageError as e:
        msg = str(e)
        if not msg.startswith(PROG):
            msg = f"{PROG}: {msg}"
        print(msg.replace("\n", " "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted; verdicts so far are kept in the journal — run the same command to resume",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # never a traceback on the terminal
        if os.environ.get("SHLO_CONFORM_DEBUG"):
            raise
        print(f"{PROG}: internal error: {type(e).__name__}: {e} (SHLO_CONFORM_DEBUG=1 shows the traceback)"
              .replace("\n", " "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
