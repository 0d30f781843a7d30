"""The commands of `shlo-conform`, one module each (its arguments and what
it does), and the one list of them that the entry point dispatches over
(shlo_conform/cli.py).

A command module holds `NAME` (as typed on the command line) and
`main(argv) -> int` (the exit code); it reads its arguments with
common.Parser, so a usage error is one line and exit 2, and calls into the
pipeline (shlo_conform/pipeline/), the survey, fuzz or export for the work.
Scoring a backend (`shlo-conform --backend=…`, score.py) is the command
run when no other is named.  A new command is a module here and one entry
in COMMANDS — nothing else is edited."""
from __future__ import annotations

from . import accuracy, check_spec, explain, export, fuzz, generate, listing, report, run, score, scoreboard

# In the order `shlo-conform --help` lists them.
COMMANDS = {m.NAME: m.main for m in (generate, check_spec, explain, report, run, listing, accuracy, fuzz, export,
                                          scoreboard)}
DEFAULT = score.main   # no command named: score a backend
