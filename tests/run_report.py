"""Reading `shlo-conform run`'s report in tests: one parser for every test
that asserts on its verdict lines."""


def verdicts(out: str) -> dict:
    """{backend line's first word: [each output's verdict word]} from `run`'s report."""
    got, name = {}, None
    for ln in out.split("\n"):
        if ln and not ln.startswith(" "):
            name = ln.split()[0]
        elif name and ln.startswith("  #") and ":" in ln and name != "oracle":
            got.setdefault(name, []).append(ln.split(": ", 1)[1].split(";")[0].strip())
    return got
