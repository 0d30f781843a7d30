"""backends/iree.py's compile cache: a module compiled from the same text,
flags and compiler is loaded, not compiled again; a refusal is never kept;
"off" keeps nothing."""
from __future__ import annotations

from shlo_conform.backends import iree

PROGRAM = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
FLAGS = ["--iree-hal-target-backends=llvm-cpu", "--iree-input-type=stablehlo"]


def _files(root):
    return sorted(p for p in root.rglob("*.vmfb"))


def test_a_second_compile_of_the_same_text_is_loaded_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(iree.CACHE_ENV, str(tmp_path))
    first = iree._Compiler(FLAGS)
    try:
        vmfb, said = first.compile(PROGRAM)
        assert vmfb and said == "" and len(_files(tmp_path)) == 1
    finally:
        first.close()
    second = iree._Compiler(FLAGS)
    again, _ = second.compile(PROGRAM)
    assert again == vmfb and second._proc is None   # no compile server was started: loaded
    other = iree._Compiler(FLAGS + ["--iree-input-demote-f64-to-f32=true"])   # other flags: another module
    try:
        assert other._cache.get(PROGRAM) is None
    finally:
        other.close()


def test_a_refusal_is_not_kept_and_off_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(iree.CACHE_ENV, str(tmp_path))
    c = iree._Compiler(FLAGS)
    try:
        vmfb, said = c.compile(PROGRAM.replace("stablehlo.add", "stablehlo.no_such_op"))
        assert vmfb is None and said and _files(tmp_path) == []
    finally:
        c.close()
    monkeypatch.setenv(iree.CACHE_ENV, "off")
    assert iree.cache_dir() is None
    c = iree._Compiler(FLAGS)
    try:
        assert c.compile(PROGRAM)[0] and _files(tmp_path) == []
    finally:
        c.close()
