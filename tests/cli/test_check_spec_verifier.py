"""check-spec --verifier: the encoded spec against jaxlib's StableHLO verifier,
judged on hand-written programs, and the command's exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from shlo_conform import verifier
from shlo_conform.cli import main
from shlo_conform.suites.records import Case



def _compare(et: str, ct: str) -> str:
    return (f'func.func @main(%a: tensor<2x{et}>, %b: tensor<2x{et}>) -> tensor<2xi1> {{\n'
            f'  %0 = "stablehlo.compare"(%a, %b) {{comparison_direction = #stablehlo<comparison_direction LT>, '
            f'compare_type = #stablehlo<comparison_type {ct}>}} : (tensor<2x{et}>, tensor<2x{et}>) -> tensor<2xi1>\n'
            f'  "func.return"(%0) : (tensor<2xi1>) -> ()\n}}\n')


ADD_BAD = ('func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n'
           '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n'
           '  "func.return"(%0) : (tensor<2xf32>) -> ()\n}\n')


def _case(cid, op, kind, mlir, violates=None):
    return Case(id=cid, op=op, dtype="f32", kind=kind, mlir=mlir, inputs=[], violates=violates)


def test_signed_compare_on_f32_is_spec_stricter_and_unexplained_without_a_finding():
    c = _case("compare/f32/hand", "compare", "invalid", _compare("f32", "SIGNED"), "compare_c3")
    ag = verifier.compare([c], [])
    (v,) = ag.verdicts
    assert v.verifier_ok and not v.spec_ok and v.spec_constraint == "compare_c3"
    assert v.agreement == "spec stricter"
    assert ag.unexplained == [v] and not ag.ok
    assert "UNEXPLAINED spec stricter" in verifier.render(ag)


def test_reviewed_finding_explains_it():
    c = _case("compare/f32/hand", "compare", "invalid", _compare("f32", "SIGNED"), "compare_c3")
    ag = verifier.compare([c], verifier.load_findings())
    assert ag.ok and len(ag.explained) == 1 and ag.explained[0][1].constraint == "compare_c3"


def test_both_reject_and_both_accept_agree():
    cases = [_case("add/f32/bad", "add", "invalid", ADD_BAD, "add_c1"),
             _case("compare/f32/ok", "compare", "value", _compare("f32", "FLOAT"))]
    ag = verifier.compare(cases, [])
    assert [v.agreement for v in ag.verdicts] == ["agree", "agree"] and ag.ok
    assert ag.verdicts[0].spec_constraint == "add_c1" and not ag.verdicts[0].verifier_ok


AFTER_ALL_TENSOR = ('func.func @main(%a: tensor<2xf32>) -> () {\n'
                    '  %0 = "stablehlo.after_all"(%a) : (tensor<2xf32>) -> !stablehlo.token\n'
                    '  "func.return"() : () -> ()\n}\n')


def test_a_rule_outside_the_numbering_is_consistent_with_a_rejection_naming_none():
    """after_all's Inputs table broken: both refuse it; the record's
    after_all_inputs matches the spec's rejection, which names no
    constraint — and a numbered label on the same program does not."""
    ag = verifier.compare([_case("after_all/f32/hand", "after_all", "invalid", AFTER_ALL_TENSOR, "after_all_inputs")], [])
    (v,) = ag.verdicts
    assert v.agreement == "agree" and v.spec_constraint is None and v.record_consistent and ag.ok
    ag = verifier.compare([_case("after_all/f32/hand", "after_all", "invalid", AFTER_ALL_TENSOR, "after_all_c1")], [])
    assert ag.inconsistent and not ag.ok


def test_a_case_whose_record_contradicts_the_spec_fails():
    c = _case("compare/f32/mislabelled", "compare", "value", _compare("f32", "SIGNED"))
    ag = verifier.compare([c], verifier.load_findings())
    assert ag.inconsistent and not ag.ok


def test_finding_matches_op_kind_and_constraint_only():
    f = verifier.Finding("compare", "spec stricter", "compare_c3", "s", "v", "why")
    v = verifier.Verdict("x", "compare", "invalid", "compare_c3", False, "compare_c1", "", True, "")
    assert not f.explains(v)
    assert verifier.Finding("compare", "spec stricter", "compare_c1", "s", "v", "w", cases=["y"]).explains(v) is False


def test_malformed_findings_file_is_refused(tmp_path):
    p = tmp_path / "f.json"
    p.write_text(json.dumps({"findings": [{"op": "compare", "kind": "spec stricter", "constraint": "compare_c3"}]}))
    with pytest.raises(ValueError, match="lacks"):
        verifier.load_findings(p)


# send: an op with reviewed verifier findings (five spec-stricter cases) whose proofs take
# a hundredth of a second — compare's took 14 s of make test for the same CLI path
def test_cli_verifier_on_send_exits_0_and_writes_the_table(tmp_path, capsys):
    out = tmp_path / "cs.json"
    rc = main(["check-spec", "--ops", "send", "--verifier", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "verifier agreement" in text and "explained  spec stricter: send/i1/a9abdc1827ff (send_c2)" in text
    doc = json.loads(out.read_text())
    assert doc["ok"] and doc["verifier"]["per_op"]["send"]["spec stricter"] == 5
    assert doc["negative_coverage"]["missing"] == {}


def test_cli_verifier_without_the_finding_exits_1(tmp_path, capsys):
    empty = tmp_path / "none.json"
    empty.write_text('{"findings": []}')
    rc = main(["check-spec", "--ops", "send", "--verifier", "--findings", str(empty)])
    text = capsys.readouterr().out
    assert rc == 1 and "UNEXPLAINED spec stricter: send/i1/a9abdc1827ff" in text
    assert "5 unexplained" in text


def test_cli_seeds_folder_missing_a_constraint_exits_1(tmp_path, capsys):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "000_5ae4585f266cf299.txt").write_text(
        "## Ops\n\n### select\n\n#### Constraints\n\n* (C1) a.\n* (C2) b.\n* (C3) c.\n")
    rc = main(["check-spec", "--ops", "select", "--seeds", str(seeds)])
    text = capsys.readouterr().out
    assert rc == 1 and "MISSING C3" in text


def test_cli_bad_seeds_folder_is_a_usage_error(tmp_path, capsys):
    rc = main(["check-spec", "--ops", "select", "--seeds", str(tmp_path / "nope")])
    assert rc == 2 and "--seeds" in capsys.readouterr().err


def test_cli_without_seeds_traces_the_stored_sections(monkeypatch, capsys):
    """A clone without ../shared/seeds still traces every constraint: the
    seeds' op sections are stored in spec/seed/."""
    from shlo_conform.commands import check_spec
    monkeypatch.setattr(check_spec, "default_seeds", lambda: None)
    rc = main(["check-spec", "--ops", "select"])
    text = capsys.readouterr().out
    assert rc == 0 and "stored in spec/seed/" in text and "select" in text and "2/2 traced" in text
