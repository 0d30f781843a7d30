"""`shlo-conform list`: list ops, backends or bundled suites."""
from __future__ import annotations


from .common import Parser, PROG, spec_ops

NAME = "list"


def main(argv: list[str]) -> int:
    p = Parser(prog=f"{PROG} list", description="List ops, backends or bundled suites.")
    p.add_argument("what", nargs="?", choices=("ops", "backends", "suites"))
    a = p.parse_args(argv)
    from ..backends.base import backend_names
    from ..suites.io import bundled_suites
    sections = {
        "ops": spec_ops,
        "backends": backend_names,
        "suites": bundled_suites,
    }
    for name, fn in sections.items():
        if a.what in (None, name):
            items = fn()
            if a.what is None:
                print(f"{name}:")
                print("  " + ("\n  ".join(items) if items else "(none)"))
            else:
                print("\n".join(items))
    return 0
