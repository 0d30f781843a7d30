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
    from shlo_conform.suites.results import results_document
    from shlo_conform.suites.records import Verdict
    passed = [Verdict(**dict(v, verdict="pass", detail="")) for v in doc["verdicts"] if v["kind"] == "value"]
    clean = results_document(backend=doc["backend"], describe=doc["describe"], suite=doc["suite"], manifest={},
                             started="", seconds=0, verdicts=passed)
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


def _default_sigint():
    """In the child before exec: Ctrl-C's default action (a pytest worker may ignore SIGINT, and an
    ignored signal stays ignored across exec)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.long   # ~13 s of a real interrupted run and its resumption: make test-long (CI)
def test_ctrl_c_keeps_the_journal_and_the_same_command_resumes(tmp_path):
    import signal
    import time

    d = tmp_path / "hang-suite"
    done = toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6])
    hang = toy.value_case("custom_call", "tensor<2xi8>", [1, 1], [1, 1], [2, 2], target="hang")
    write_suite(d, {"suite": "hang"}, [done, hang])  # add.jsonl runs before custom_call.jsonl
    out = tmp_path / "r.json"
    journals = lambda: list(tmp_path.glob("r.json.*.journal"))  # noqa: E731
    # the hang must still be in flight when SIGINT comes, on a loaded machine too; the resumed run waits it out
    argv = [str(SCRIPT), "--backend", BACKEND, "--suite", str(d), "--json", str(out), "--timeout", "6"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_default_sigint)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (journals() and done.id in journals()[0].read_text()):
        time.sleep(0.05)
    time.sleep(0.3)  # now inside the hanging run
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130
    assert "journal" in err and "Traceback" not in err
    [journal] = journals()
    assert done.id in journal.read_text() and not out.exists()

    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1  # the hang is a timeout
    assert "resumed 1 verdicts" in again.stdout
    verdicts = {v["id"]: v["verdict"] for v in json.loads(out.read_text())["verdicts"]}
    assert verdicts == {done.id: "pass", hang.id: "timeout"}
    assert not journals()


# ---------------------------------------------------------------- every argument and input file checked

@pytest.mark.parametrize("argv, words", [
    (["--timeout", "nan"], ["--timeout", "'nan'", "out of range"]),
    (["--timeout", "inf"], ["--timeout", "out of range"]),
    (["--timeout", "1e400"], ["--timeout", "out of range"]),
    (["--timeout", "1e9"], ["--timeout", "at most 3600"]),
    (["--timeout", "0"], ["--timeout", "out of range"]),
    (["--timeout", "-1"], ["--timeout", "out of range"]),
    (["--jobs", "100000"], ["--jobs", "from 1 to 64"]),
    (["--jobs", "1.5"], ["--jobs", "not a number"]),
    (["--json", ""], ["--json", "empty"]),
    (["--html", ""], ["--html", "empty"]),
    (["--baseline", ""], ["--baseline", "empty"]),
    (["--suite", ""], ["--suite", "empty"]),
    (["--ops", ""], ["--ops", "empty list"]),
    (["--ops", ","], ["--ops", "empty list"]),
    (["--dtypes", ""], ["--dtypes", "empty list"]),
    (["--json", "TMP"], ["--json", "is a folder"]),
    (["--json", "FILE/r.json"], ["--json", "cannot create its folder"]),
    (["--html", "FILE/r.html"], ["--html", "cannot create its folder"]),
])
def test_bad_arguments_are_one_line_naming_the_flag(capsys, suite, tmp_path, argv, words):
    (tmp_path / "file").write_text("")
    argv = [str(tmp_path) if a == "TMP" else a.replace("FILE", str(tmp_path / "file")) for a in argv]
    code, _, err = run_main(capsys, "--backend", BACKEND, "--suite", str(suite), *argv)
    assert_one_line_usage_error(code, err, *words)
    assert not list(tmp_path.glob("**/*.journal"))


def damaged(suite: Path) -> Path:
    f = suite / "add.jsonl"
    lines = f.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["inputs"][0]["hex"] = rec["inputs"][0]["hex"][:-2]
    lines[1] = json.dumps(rec)
    f.write_text("\n".join(lines) + "\n")
    return suite


def test_a_damaged_suite_is_refused_never_scored(capsys, suite, tmp_path):
    out = tmp_path / "r.json"
    code, _, err = run_main(capsys, "--backend", BACKEND, "--suite", str(damaged(suite)), "--json", str(out))
    assert_one_line_usage_error(code, err, f"suite {suite}: add.jsonl:2: input 0: hex of 14 digits")
    assert not out.exists() and not list(tmp_path.glob("*.journal"))


def _results(tmp_path, name, doc):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


@pytest.fixture
def good_results(capsys, suite, tmp_path):
    out = tmp_path / "good.json"
    assert run_main(capsys, "--backend", BACKEND, "--suite", str(suite), "--json", str(out))[0] == 0
    return json.loads(out.read_text())


BAD_RESULTS = [
    ("[]", "not a JSON object"),
    ("{}", "no 'backend'"),
    ("not json", "not JSON"),
    (lambda d: dict(d, verdicts=[dict(d["verdicts"][0], verdict="excellent")]), "unknown verdict 'excellent'"),
    (lambda d: dict(d, verdicts=d["verdicts"] + d["verdicts"][:1]), "duplicate id"),
    (lambda d: dict(d, counts=dict(d["counts"], fail=7)), "do not add up"),
    (lambda d: dict(d, per_op={}), "do not add up"),
    (lambda d: {k: v for k, v in d.items() if k != "describe"}, "no 'describe'"),
    (lambda d: dict(d, verdicts=[{"id": 1}]), "'id' has the wrong JSON type"),
]


@pytest.mark.parametrize("bad, words", BAD_RESULTS, ids=[w for _, w in BAD_RESULTS])
def test_results_files_of_the_wrong_shape_are_refused(capsys, suite, tmp_path, good_results, bad, words):
    path = _results(tmp_path, "bad.json", bad if isinstance(bad, str) else bad(good_results))
    code, _, err = run_main(capsys, "report", path, "--html", str(tmp_path / "x.html"))
    assert_one_line_usage_error(code, err, path, "not a shlo-conform results file", words)
    assert not (tmp_path / "x.html").exists()
    code, _, err = run_main(capsys, "--backend", BACKEND, "--suite", str(suite), "--json",
                            str(tmp_path / "r.json"), "--baseline", path)
    assert_one_line_usage_error(code, err, "--baseline", path, words)
    assert not (tmp_path / "r.json").exists()


def test_generate_never_deletes_what_it_did_not_write(capsys, tmp_path):
    d = tmp_path / "copy"
    d.mkdir()
    (d / "add.jsonl").write_text("someone's work\n")
    code, _, err = run_main(capsys, "generate", "--out", str(d), "--seed", "0", "--ops", "tuple")
    assert_one_line_usage_error(code, err, "--out", "not a suite folder")
    assert (d / "add.jsonl").read_text() == "someone's work\n"
    code, _, err = run_main(capsys, "generate", "--out", str(tmp_path / "new"), "--seed", "-1")
    assert_one_line_usage_error(code, err, "--seed", "out of range")


def test_generate_into_a_suite_of_ours_replaces_only_the_ops_generated(capsys, tmp_path):
    # two ops of few cases (after_all, partition_id: a second each; tuple and iota took 15 s)
    d = tmp_path / "core-copy"
    assert run_main(capsys, "generate", "--out", str(d), "--seed", "0", "--ops", "after_all,partition_id")[0] == 0
    kept = (d / "partition_id.jsonl").read_bytes()
    assert run_main(capsys, "generate", "--out", str(d), "--seed", "0", "--ops", "after_all")[0] == 0
    assert (d / "partition_id.jsonl").read_bytes() == kept
    assert json.loads((d / "manifest.json").read_text())["counts"].keys() == {"after_all", "partition_id"}
    code, _, err = run_main(capsys, "generate", "--out", str(d), "--seed", "1", "--ops", "after_all")
    assert_one_line_usage_error(code, err, "--out", "seed 0", "seed 1")
    assert (d / "partition_id.jsonl").read_bytes() == kept


def test_a_core_folder_does_not_hide_the_bundled_suite(capsys, tmp_path, monkeypatch):
    from shlo_conform.suites.io import CORE
    cid = json.loads((CORE / "tuple.jsonl").read_text().splitlines()[0])["id"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "core").mkdir()
    code, out, err = run_main(capsys, "explain", cid, "--suite", "core")
    assert code == 0 and cid in out, err
    code, _, err = run_main(capsys, "explain", cid, "--suite", "./core")
    assert_one_line_usage_error(code, err, "./core", "manifest.json")


def test_a_second_run_on_the_same_results_file_is_refused(tmp_path):
    """Two real runs on one --json: the second is refused while the first
    works (it hangs on its case), and nothing of the first is disturbed."""
    import signal
    import time

    d = tmp_path / "hang-suite"
    hang = toy.value_case("custom_call", "tensor<2xi8>", [1, 1], [1, 1], [2, 2], target="hang")
    write_suite(d, {"suite": "hang"}, [hang])
    out = tmp_path / "r.json"
    # the first run's hang outlasts the second run however loaded the machine (SIGINT ends it, not the timeout)
    argv = [str(SCRIPT), "--backend", BACKEND, "--suite", str(d), "--json", str(out), "--timeout", "600"]
    first = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not Path(f"{out}.lock").exists():
            time.sleep(0.05)
        second = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert second.stderr.count("\n") == 1 and "being written by another run" in second.stderr
        assert f"process {first.pid}" in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=30)
    assert first.returncode == 130


def test_a_full_disk_keeps_the_previous_results_and_the_journal(capsys, suite, tmp_path):
    """The results file is written atomically: a write that fails (here a file
    size limit, as a full disk would) leaves the previous good file whole."""
    import resource
    import signal

    out = tmp_path / "r.json"
    assert run_main(capsys, "--backend", BACKEND, "--suite", str(suite), "--json", str(out))[0] == 0
    good = out.read_text()
    limit = len(good) // 2

    def small_files():  # runs in the child: EFBIG instead of SIGXFSZ past `limit` bytes
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run([str(SCRIPT), "--backend", BACKEND, "--suite", str(suite), "--json", str(out),
                        "--timeout", "7"], capture_output=True, text=True, preexec_fn=small_files, timeout=120)
    assert p.returncode == 2 and "cannot write results" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert out.read_text() == good
    [journal] = tmp_path.glob("r.json.*.journal")  # every verdict is kept for a rerun: only the results write failed
    assert all(v["id"] in journal.read_text() for v in json.loads(good)["verdicts"])
    assert not list(tmp_path.glob(".r.json.*"))  # no temporary file left


def _children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def test_kill_9_of_the_runner_ends_its_hung_worker(tmp_path):
    """The worker leads its own process group (so the runner can end it with
    all it started), and the kernel kills it when the runner dies, even by
    SIGKILL: a backend hung in a run does not outlive the run."""
    import signal
    import time

    d = tmp_path / "hang-suite"
    write_suite(d, {"suite": "hang"}, [toy.value_case("custom_call", "tensor<2xi8>", [1, 1], [1, 1], [2, 2],
                                                      target="hang")])
    runner = subprocess.Popen([str(SCRIPT), "--backend", BACKEND, "--suite", str(d), "--json",
                               str(tmp_path / "r.json"), "--timeout", "60"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    workers = []
    while time.monotonic() < deadline and not workers:
        time.sleep(0.1)
        workers = _children(runner.pid)
    assert workers
    time.sleep(1.0)  # the worker is loaded and inside the hanging run
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{workers[0]}").exists() and \
            "State:\tZ" not in Path(f"/proc/{workers[0]}/status").read_text():
        time.sleep(0.05)
    assert not Path(f"/proc/{workers[0]}").exists() or "State:\tZ" in Path(f"/proc/{workers[0]}/status").read_text()


def test_dtypes_select_a_quantized_family(capsys, tmp_path):
    """A quantized case's dtype is its family (quant_i8_f32): --dtypes takes
    it as it takes an element type, and picks those cases alone."""
    out = tmp_path / "q.json"
    code, _, _ = run_main(capsys, "--backend", "oracle", "--json", str(out), "--ops", "add",
                          "--dtypes", "quant_i8_f32")
    got = {v["dtype"] for v in json.loads(out.read_text())["verdicts"]}
    assert code == 0 and got == {"quant_i8_f32"}
    code, _, err = run_main(capsys, "--backend", "oracle", "--ops", "add", "--dtypes", "quant_x_f32")
    assert code == 2 and "quantized family" in err
