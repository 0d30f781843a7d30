"""The command line: exit codes, one-line errors, scoring end to end with the toy backend."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from shlo_conform.cli import main
from shlo_conform.suites.io import write_suite

FIXTURE = Path(__file__).parents[1] / "runner" / "fixtures" / "toy.py"
BACKEND = f"{FIXTURE}:ToyBackend"
_spec = importlib.util.spec_from_file_location("toy_fixture_cli", FIXTURE)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)
SCRIPT = Path(sys.executable).with_name("shlo-conform")


def good_cases():
    return [toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),
            toy.value_case("add", "tensor<2xi32>", [-1, 7], [1, 8], [0, 15]),
            toy.invalid_case("add", "tensor<2xf32>", "tensor<3xf32>", "add_c1")]


@pytest.fixture
def suite(tmp_path):
    d = tmp_path / "suite"
    write_suite(d, {"suite": "toy", "seed": 0}, good_cases())
    return d


@pytest.fixture
def bad_suite(tmp_path):
    d = tmp_path / "bad"
    write_suite(d, {"suite": "toy-bad", "seed": 0}, good_cases() + [
        toy.value_case("subtract", "tensor<2xf32>", [1, 2], [3, 4], [-2, -2]),
        toy.value_case("divide", "tensor<2xi32>", [6, 8], [0, 2], [0, 4])])
    return d


def run_main(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_usage_error(code, err, *words):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("argv, words", [
    (["--backend=no-such-backend"], ["unknown backend", "no-such-backend"]),
    (["--backend", BACKEND, "--suite", "/no/such/suite"], ["/no/such/suite"]),
    (["--backend", BACKEND, "--suite", "SUITE", "--ops", "add,frobnicate"], ["unknown op", "frobnicate"]),
    (["--backend", BACKEND, "--suite", "SUITE", "--dtypes", "f32,f33"], ["f33"]),
    (["--backend", BACKEND, "--suite", "SUITE", "--jobs", "0"], ["--jobs"]),
    (["--backend", BACKEND, "--suite", "SUITE", "--timeout", "soon"], ["--timeout"]),
    (["--backend", BACKEND, "--suite", "SUITE", "--baseline", "/no/such.json"], ["/no/such.json"]),
    (["--backend", BACKEND, "--suite", "SUITE", "--dtypes", "bf16"], ["no cases"]),
    ([], ["--backend"]),
    (["--backend", BACKEND, "--no-such-flag"], ["--no-such-flag"]),
    (["frobnicate"], ["unknown command", "frobnicate"]),
    (["report", "/no/such/results.json"], ["/no/such/results.json"]),
    (["explain", "add/f32/000000000000", "--suite", "SUITE"], ["add/f32/000000000000"]),
    (["list", "widgets"], ["widgets"]),
])
def test_usage_errors_exit_2_with_one_line(capsys, suite, argv, words):
    argv = [str(suite) if a == "SUITE" else a for a in argv]
    code, _, err = run_main(capsys, *argv)
    assert_one_line_usage_error(code, err, *words)


def test_unloadable_backend_is_a_usage_error(capsys, suite):
    code, _, err = run_main(capsys, "--backend", f"{FIXTURE}:Missing", "--suite", str(suite),
                            "--json", str(suite.parent / "r.json"))
    assert_one_line_usage_error(code, err, "could not be loaded", "Missing")


def test_console_script_bad_input_has_no_traceback(tmp_path):
    p = subprocess.run([str(SCRIPT), "--backend=nope"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "unknown backend 'nope'" in p.stderr
    assert "Traceback" not in p.stderr


def test_conformant_run_exits_0_and_writes_reports(capsys, suite, tmp_path):
    out, html = tmp_path / "r.json", tmp_path / "r.html"
    code, stdout, err = run_main(capsys, "--backend", BACKEND, "--suite", str(suite), "--json", str(out),
                                 "--html", str(html))
    assert code == 0, err
    assert "total" in stdout and "wall time" in stdout
    doc = json.loads(out.read_text())
    assert doc["counts"]["pass"] == 2 and doc["counts"]["rejected"] == 1 and doc["counts"]["nonconformant"] == 0
    assert "toy backend 1.0" in html.read_text()


def test_failures_exit_1_and_baseline_accepts_known_ones(capsys, bad_suite, tmp_path):
    first = tmp_path / "first.json"
    code, stdout, _ = run_main(capsys, "--backend", BACKEND, "--suite", str(bad_suite), "--json", str(first))
    assert code == 1
    doc = json.loads(first.read_text())
    assert doc["counts"]["fail"] == 1 and doc["counts"]["crash"] == 1
    row = next(line for line in stdout.splitlines() if line.startswith("divide"))
    assert row.split()[1:8] == ["1", "0", "0", "0", "0", "1", "0"]  # cases, pass..timeout

    code, stdout, _ = run_main(capsys, "--backend", BACKEND, "--suite", str(bad_suite),
                               "--json", str(tmp_path / "second.json"), "--baseline", str(first))
    assert code == 0
    assert "0 new failures, 2 known" in stdout

    # A baseline in which everything passed makes the same failures new.
    clean = dict(doc, verdicts=[dict(v, verdict="pass") for v in doc["verdicts"] if v["kind"] == "value"])
    (tmp_path / "clean.json").write_text(json.dumps(clean))
    code, stdout, _ = run_main(capsys, "--backend", BACKEND, "--suite", str(bad_suite),
                               "--json", str(tmp_path / "third.json"), "--baseline", str(tmp_path / "clean.json"))
    assert code == 1 and "2 new failures" in stdout


def test_ops_and_dtypes_select_cases(capsys, bad_suite, tmp_path):
    out = tmp_path / "r.json"
    code, _, _ = run_main(capsys, "--backend", BACKEND, "--suite", str(bad_suite), "--json", str(out),
                          "--ops", "add,divide", "--dtypes", "si32")
    doc = json.loads(out.read_text())
    assert sorted((v["op"], v["dtype"]) for v in doc["verdicts"]) == [("add", "si32"), ("divide", "si32")]
    assert code == 1  # the divide crash


def test_explain_decodes_and_judges(capsys, bad_suite):
    cid = toy.value_case("subtract", "tensor<2xf32>", [1, 2], [3, 4], [-2, -2]).id
    code, out, _ = run_main(capsys, "explain", cid, "--suite", str(bad_suite))
    assert code == 0
    assert "stablehlo.subtract" in out and "[1., 2.]" in out and "[-2., -2.]" in out
    code, out, _ = run_main(capsys, "explain", cid, "--suite", str(bad_suite), "--backend", BACKEND)
    assert code == 1
    assert "verdict  fail" in out and "[4., 6.]" in out


def test_report_rerenders(capsys, suite, tmp_path):
    out = tmp_path / "r.json"
    assert run_main(capsys, "--backend", BACKEND, "--suite", str(suite), "--json", str(out))[0] == 0
    code, stdout, _ = run_main(capsys, "report", str(out), "--html", str(tmp_path / "again.html"))
    assert code == 0 and "total" in stdout
    assert "<table>" in (tmp_path / "again.html").read_text()


def test_list_backends(capsys):
    code, out, _ = run_main(capsys, "list", "backends")
    assert code == 0 and {"oracle", "xla", "interpreter", "iree", "command"} <= set(out.split())


def test_ctrl_c_keeps_the_journal_and_the_same_command_resumes(tmp_path):
    import signal
    import time

    d = tmp_path / "hang-suite"
    done = toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6])
    hang = toy.value_case("custom_call", "tensor<2xi8>", [1, 1], [1, 1], [2, 2], target="hang")
    write_suite(d, {"suite": "hang"}, [done, hang])  # add.jsonl runs before custom_call.jsonl
    out = tmp_path / "r.json"
    journal = Path(str(out) + ".journal")
    argv = [str(SCRIPT), "--backend", BACKEND, "--suite", str(d), "--json", str(out)]
    p = subprocess.Popen(argv + ["--timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (journal.exists() and done.id in journal.read_text()):
        time.sleep(0.1)
    time.sleep(0.3)  # now inside the hanging run
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130
    assert "journal" in err and "Traceback" not in err
    assert done.id in journal.read_text() and not out.exists()

    again = subprocess.run(argv + ["--timeout", "1"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 1  # the hang is a timeout
    assert "resumed 1 verdicts" in again.stdout
    verdicts = {v["id"]: v["verdict"] for v in json.loads(out.read_text())["verdicts"]}
    assert verdicts == {done.id: "pass", hang.id: "timeout"}
    assert not journal.exists()
