"""JUnit XML of a results document, for CI dashboards (GitLab, Jenkins, …).

Renders the plain dict of `results.json` (as `table` and `html` do), so a
live run, `report RESULTS.json --junit` and a merged split write the same.

Shape — what pytest's `--junitxml` writes, so every consumer that reads
pytest reads this:

    <testsuites>
      <testsuite name="shlo-conform" tests= failures= errors= skipped= time= timestamp= hostname=>
        <properties><property name="backend" value="xla"/> …</properties>
        <testcase classname="stablehlo.add" name="add/f32/1a2b3c4d5e6f" time="0.0012"/>
        <testcase …><failure type="fail" message="3 signed zero">first mismatches</failure></testcase>
        <testcase …><error type="crash" message="worker died: SIGSEGV"/></testcase>
        <testcase …><skipped type="unsupported" message="f8E4M3FN is not supported"/></testcase>
      </testsuite>
    </testsuites>

* one `<testsuite>` for the run: the run is what has a backend, a suite
  digest, a start time and a wall time (its properties), and its
  tests/failures/errors/skipped are the results document's counts.  Ops
  are grouped by classname, which every consumer groups by anyway.
* classname `stablehlo.<op>`: the op's own name in the program text, and
  dotted as consumers expect (Jenkins shows package `stablehlo`, class
  `add`; a bare `add` would land every op in Jenkins' "(root)" package).
  name: the case id, which `shlo-conform explain` takes.
* a nonconformant case is a `<failure>` (wrong values, rejected a valid
  program, accepted an invalid one) or an `<error>` (crash, timeout: the
  implementation did not answer); an unsupported case and a survey (never
  scored) are `<skipped>`.  So failures + errors = the document's
  `nonconformant` count and tests − skipped = its `counted`.
* `timestamp` is the run's start in UTC without zone and `hostname` the
  machine writing the file: both required by the Ant JUnit schema, whose
  timestamp pattern has no zone.  The testsuite also carries `package`,
  `id` and empty `<system-out/>`/`<system-err/>`, which that schema
  requires of a testsuite inside `<testsuites>`; what it lacks is
  `<skipped>` (it predates it), which pytest, Jenkins and GitLab read.

Text from a backend may hold characters XML 1.0 cannot carry (NUL, escape
sequences): they are written as `\\xNN`, so the file always parses.
"""
from __future__ import annotations

import re
import shlex
import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

from ..suites.io import write_text_atomic
from ..suites.records import conformant

CLASS_PREFIX = "stablehlo."
SUITE_NAME = "shlo-conform"
MESSAGE_CHARS = 300
MISMATCHES_SHOWN = 5
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text) -> str:
    """`text` as XML 1.0 can hold it (other characters as \\xNN escapes)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def _short(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cause_summary(v: dict) -> str:
    """'12 subnormal flushed, 1 NaN lost' from a verdict's `causes` (most
    elements first); empty where the verdict has none (a crash, a rejection,
    an older results file)."""
    causes = v.get("causes") or {}
    return ", ".join(f"{n} {name}" for name, n in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])))


def mismatch_lines(v: dict) -> list[str]:
    """The first mismatching elements: `[flat index, expected, actual, ulp, cause]`."""
    out = []
    for m in (v.get("mismatches") or [])[:MISMATCHES_SHOWN]:
        try:
            index, expected, actual, ulp, cause = m
        except (TypeError, ValueError):
            out.append(str(m))
            continue
        out.append(f"element {index}: expected {expected}, got {actual}"
                   + (f" ({ulp:g} ulp)" if isinstance(ulp, (int, float)) else "") + (f" — {cause}" if cause else ""))
    return out


def outcome(v: dict) -> tuple[str, str] | None:
    """(element, type) of a verdict's JUnit outcome, None for a pass:
    ("skipped", why), ("error", verdict) or ("failure", verdict)."""
    kind, verdict = v.get("kind", "value"), v.get("verdict")
    if kind == "survey":
        return "skipped", "survey"
    ok = conformant(kind, verdict)
    if ok is None:
        return "skipped", verdict
    if ok:
        return None
    return ("error" if verdict in ("crash", "timeout") else "failure"), verdict


def _message(v: dict, what: str) -> str:
    """A skip's reason; a failure's causes, or where it has none (a crash, a
    rejection, an older results file) its detail, or its verdict."""
    detail = v.get("detail") or ""
    if what == "skipped" and v.get("kind") == "survey":
        return _short(f"survey (reported, never scored): {v.get('verdict')}" + (f": {detail}" if detail else ""))
    return _short(cause_summary(v) or detail or v.get("verdict", ""))


def _text(v: dict, doc: dict) -> str:
    lines = [f"{v.get('verdict')}: {v['id']} ({v.get('kind', 'value')} case, element type {v.get('dtype')})"]
    if v.get("detail"):
        lines.append(v["detail"])
    if cause_summary(v):
        lines.append("causes: " + cause_summary(v))
    lines += mismatch_lines(v)
    if "meaningful_ulp" in v:   # results with causes: the raw maximum counts a lost NaN as 9e18 ULP
        if v["meaningful_ulp"] is not None:
            lines.append(f"max ULP over elements where ULP is the measure: {v['meaningful_ulp']:g}")
    elif v.get("max_ulp") is not None:
        lines.append(f"max ULP {v['max_ulp']:g}")
    suite = doc.get("suite")
    lines.append(f"replay: shlo-conform explain {shlex.quote(v['id'])}"
                 + (f" --suite {shlex.quote(suite)}" if suite else "")
                 + f" --backend {shlex.quote(str(doc.get('backend')))}")
    return "\n".join(lines)


def _timestamp(started) -> str:
    """The run's start as the Ant schema's pattern has it (UTC, no zone)."""
    for fmt in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S"):
        try:
            t = datetime.strptime(str(started), fmt)
        except ValueError:
            continue
        if t.tzinfo is not None:
            t = t.astimezone(timezone.utc).replace(tzinfo=None)
        return t.isoformat(timespec="seconds")
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")


def properties(doc: dict) -> dict[str, str]:
    """What the run was: backend, implementation, suite and its digest, shard."""
    props = {"backend": doc.get("backend"), "describe": doc.get("describe"), "suite": doc.get("suite"),
             "suite_digest": (doc.get("run_key") or {}).get("suite_digest"),
             "suite_version": (doc.get("manifest") or {}).get("suite_version"),
             "started": doc.get("started")}
    shard = doc.get("shard")
    if isinstance(shard, dict):
        props["shard"] = f"{shard.get('index')}/{shard.get('count')}"
    merged = doc.get("merged")
    if isinstance(merged, list):
        props["merged_from"] = str(len(merged))
    return {k: str(v) for k, v in props.items() if v is not None}


def render(doc: dict) -> str:
    """The JUnit XML text of a results document."""
    verdicts = doc.get("verdicts", [])
    outcomes = [outcome(v) for v in verdicts]
    tally = {w: sum(1 for o in outcomes if o and o[0] == w) for w in ("failure", "error", "skipped")}
    seconds = doc.get("seconds")
    if seconds is None:
        seconds = sum(v.get("seconds", 0.0) for v in verdicts)
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", {
        "name": SUITE_NAME, "package": SUITE_NAME, "id": "0", "tests": str(len(verdicts)),
        "failures": str(tally["failure"]), "errors": str(tally["error"]), "skipped": str(tally["skipped"]),
        "time": f"{seconds:.3f}",
        "timestamp": _timestamp(doc.get("started")), "hostname": _clean(socket.gethostname() or "localhost")})
    props = ET.SubElement(suite, "properties")
    for name, value in properties(doc).items():
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    for v, o in zip(verdicts, outcomes):
        case = ET.SubElement(suite, "testcase", {"classname": CLASS_PREFIX + v["op"], "name": v["id"],
                                                 "time": f"{v.get('seconds', 0.0):.3f}"})
        if o is None:
            continue
        what, typ = o
        el = ET.SubElement(case, what, {"type": typ, "message": _clean(_message(v, what))})
        if what != "skipped":
            el.text = _clean(_text(v, doc))
    ET.SubElement(suite, "system-out")
    ET.SubElement(suite, "system-err")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(doc: dict, path: Path) -> None:
    """Written atomically: a reader sees the previous file or the new one."""
    write_text_atomic(Path(path), render(doc))
