"""Suite folders on disk: validated when loaded (a damaged suite is refused with
file, line and problem), written without deleting what the writer did not
write, found by name (bundled) or by path (folders)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from shlo_conform.suites.io import (CORE, SuiteError, SuiteWriteRefused, check_suite_write, load_cases,
                                    load_manifest, suite_path, write_suite, write_text_atomic)

TOY = Path(__file__).parents[1] / "runner" / "fixtures" / "toy.py"
_spec = importlib.util.spec_from_file_location("toy_fixture_io", TOY)
toy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)


def cases():
    return [toy.value_case("add", "tensor<2xf32>", [1, 2], [3, 4], [4, 6]),
            toy.value_case("add", "tensor<2xi32>", [-1, 7], [1, 8], [0, 15]),
            toy.invalid_case("add", "tensor<2xf32>", "tensor<3xf32>", "add_c1"),
            toy.value_case("subtract", "tensor<2xf32>", [1, 2], [3, 4], [-2, -2])]


@pytest.fixture
def suite(tmp_path):
    d = tmp_path / "suite"
    write_suite(d, {"suite": "toy", "seed": 0}, cases())
    return d


def test_the_bundled_suite_is_valid():
    manifest = load_manifest(CORE)
    loaded = load_cases(CORE)
    assert len(loaded) == manifest["total"] == sum(sum(c.values()) for c in manifest["counts"].values())
    assert len({c.id for c in loaded}) == len(loaded)


def test_a_written_suite_loads_back(suite):
    assert [c.to_json() for c in load_cases(suite)] == [c.to_json() for c in cases()]


# ---------------------------------------------------------------- damage, line by line

def edit_line(d, n, fn):
    """Replace line n (1-based) of add.jsonl by fn(record dict) (a dict, or a raw string)."""
    f = d / "add.jsonl"
    lines = f.read_text().splitlines()
    new = fn(json.loads(lines[n - 1]))
    lines[n - 1] = new if isinstance(new, str) else json.dumps(new)
    f.write_text("\n".join(lines) + "\n")


def _exp(r, **kw):
    r["expected"][0].update(kw)
    return r


DAMAGE = [
    ("not JSON", 1, lambda r: "{not json", "not JSON"),
    ("a JSON array", 1, lambda r: "[1, 2]", "not an object"),
    ("bad hex", 1, lambda r: dict(r, inputs=[{"type": "tensor<2xf32>", "hex": "zz" * 8}, r["inputs"][1]]),
     "not a hex digit"),
    ("short hex", 1, lambda r: dict(r, inputs=[{"type": "tensor<2xf32>", "hex": "00"}, r["inputs"][1]]),
     "hex of 2 digits where tensor<2xf32> takes 16"),
    ("expected hex of the wrong length", 2, lambda r: _exp(r, hex="00"), "expected output 0: hex of 2 digits"),
    ("unknown element type in a type", 1,
     lambda r: dict(r, inputs=[{"type": "tensor<2xf33>", "hex": "00" * 8}, r["inputs"][1]]), "f33"),
    ("unknown dtype", 1, lambda r: dict(r, dtype="f33"), "unknown element type 'f33'"),
    ("bogus kind", 1, lambda r: dict(r, kind="bogus"), "unknown kind 'bogus'"),
    ("value case without expected", 1, lambda r: {k: v for k, v in r.items() if k != "expected"},
     "has no 'expected'"),
    ("invalid case without violates", 3, lambda r: {k: v for k, v in r.items() if k != "violates"},
     "must name the constraint"),
    ("missing id", 1, lambda r: {k: v for k, v in r.items() if k != "id"}, "has no 'id'"),
    ("unknown field", 1, lambda r: dict(r, colour="red"), "unknown field 'colour'"),
    ("wrong JSON type", 1, lambda r: dict(r, mlir=42), "'mlir' is a number"),
    ("op of another file", 1, lambda r: dict(r, op="subtract", id=r["id"].replace("add/", "subtract/")),
     "case of op 'subtract' in the file of 'add'"),
    ("id not of its op and dtype", 1, lambda r: dict(r, id="add/si32/" + r["id"].split("/")[2]), "is not 'add/f32/"),
    ("wrong arity", 1, lambda r: dict(r, inputs=r["inputs"][:1]), "@main takes (tensor<2xf32>, tensor<2xf32>)"),
    ("expected type not @main's", 1,
     lambda r: _exp(r, type="tensor<2xi32>"), "@main returns (tensor<2xf32>); the case expects (tensor<2xi32>)"),
    ("no @main signature", 1, lambda r: dict(r, mlir="garbage"), "no @main signature"),
    ("bogus expectation kind", 1, lambda r: _exp(r, kind="bogus"), "bogus"),
    ("negative tolerance", 1, lambda r: _exp(r, tolerance_ulp=-1), "non-negative"),
    ("implementation-defined index out of range", 1, lambda r: _exp(r, impl_defined=[5]), "below 2"),
]


@pytest.mark.parametrize("what, line, damage, words", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_a_damaged_line_is_refused_with_file_line_and_problem(suite, what, line, damage, words):
    edit_line(suite, line, damage)
    with pytest.raises(SuiteError) as e:
        load_cases(suite)
    assert (e.value.file, e.value.line) == ("add.jsonl", line)
    assert str(e.value).startswith(f"add.jsonl:{line}: ")
    assert words in str(e.value), str(e.value)


def test_duplicate_ids_are_refused(suite):
    f = suite / "add.jsonl"
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines + [lines[0]]) + "\n")
    m = json.loads((suite / "manifest.json").read_text())
    m["counts"]["add"]["value"] += 1
    m["total"] += 1
    (suite / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(SuiteError, match=r"add.jsonl:4: duplicate id .* \(first on line 1\)"):
        load_cases(suite)


def _recount(m):
    m["total"] = sum(sum(c.values()) for c in m["counts"].values())


@pytest.mark.parametrize("lie, words", [
    (lambda m: (m["counts"]["add"].update(value=5), _recount(m)),
     "add.jsonl: holds 2 value cases; manifest.json counts 5"),
    (lambda m: m.update(total=99), "manifest.json: 'total' is 99; its counts add up to 4"),
    (lambda m: (m["counts"].pop("subtract"), _recount(m)), "subtract.jsonl: manifest.json counts no op 'subtract'"),
    (lambda m: m["counts"].update(divide={"value": 0, "invalid": 0, "survey": 0}), "no divide.jsonl"),
    (lambda m: m.pop("counts"), "no 'counts'"),
    (lambda m: m["counts"]["add"].update(value="2"), "non-negative integers"),
])
def test_a_manifest_that_lies_is_refused(suite, lie, words):
    m = json.loads((suite / "manifest.json").read_text())
    lie(m)
    (suite / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(SuiteError) as e:
        load_cases(suite)
    assert words in str(e.value), str(e.value)


def test_a_suite_of_ours_holds_only_ops_of_the_spec(tmp_path):
    d = tmp_path / "ours"
    write_suite(d, {"suite": "core", "generator_version": "1", "seed": 0},
                [toy.value_case("frobnicate", "tensor<2xi32>", [1, 1], [1, 1], [2, 2])])
    with pytest.raises(SuiteError, match="'frobnicate' is not an op of the encoded spec"):
        load_cases(d)


# ---------------------------------------------------------------- finding suites

def test_bundled_suites_by_name_folders_by_path(tmp_path, monkeypatch, suite):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "core").mkdir()  # a ./core folder does not hide the bundled suite
    assert suite_path("core") == CORE
    assert suite_path("./core") == Path("./core")
    assert suite_path("suite") == Path("suite")  # no bundled suite of that name: the folder
    assert suite_path(str(suite)) == suite
    with pytest.raises(FileNotFoundError, match="no suite folder './nowhere'"):
        suite_path("./nowhere")
    with pytest.raises(FileNotFoundError, match="no suite named 'nowhere'"):
        suite_path("nowhere")


# ---------------------------------------------------------------- writing

def test_writing_into_a_folder_with_other_files_is_refused_and_deletes_nothing(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.jsonl").write_text("precious\n")
    with pytest.raises(SuiteWriteRefused, match="not a suite folder"):
        write_suite(d, {"seed": 0}, cases())
    assert (d / "notes.jsonl").read_text() == "precious\n" and len(list(d.iterdir())) == 1


def test_writing_over_a_suite_with_a_stray_file_is_refused(suite):
    (suite / "extra.txt").write_text("keep me")
    with pytest.raises(SuiteWriteRefused, match="'extra.txt'"):
        write_suite(suite, {"suite": "toy", "seed": 0}, cases())
    assert (suite / "extra.txt").read_text() == "keep me"


def test_writing_some_ops_over_a_suite_keeps_the_others(suite):
    before = (suite / "subtract.jsonl").read_bytes()
    new_add = [toy.value_case("add", "tensor<2xf32>", [5, 5], [1, 1], [6, 6])]
    write_suite(suite, {"suite": "toy", "seed": 0}, new_add)
    assert (suite / "subtract.jsonl").read_bytes() == before
    m = load_manifest(suite)
    assert m["counts"]["add"] == {"value": 1, "invalid": 0, "survey": 0}
    assert m["counts"]["subtract"]["value"] == 1 and m["total"] == 2
    assert len(load_cases(suite)) == 2


def test_mixing_generations_is_refused_unless_every_op_is_replaced(suite):
    with pytest.raises(SuiteWriteRefused, match="seed 0; this one has seed 1"):
        check_suite_write(suite, {"seed": 1}, {"add"})
    with pytest.raises(SuiteWriteRefused):
        write_suite(suite, {"suite": "toy", "seed": 1}, cases()[:1])
    write_suite(suite, {"suite": "toy", "seed": 1}, cases())  # every op replaced: a new generation
    assert load_manifest(suite)["seed"] == 1


def test_an_atomic_write_that_fails_leaves_the_old_file(tmp_path):
    f = tmp_path / "r.json"
    f.write_text("old and good\n")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(f, "half written \ud800 never")
    assert f.read_text() == "old and good\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
