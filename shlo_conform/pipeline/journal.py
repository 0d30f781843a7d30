"""A run's journal and its results file's lock.

Each verdict is appended to a JSON-lines journal as it arrives, so an
interrupted run resumes without redoing or losing work; a journal is keyed
by everything that decides its verdicts (`run_key`: suite digest,
selection, backend with its configuration, timeouts), so one run never
resumes another's.  The results file is written by one run at a time
(`ResultsLock`).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from ..suites.records import VERDICTS, Verdict

JOURNAL_VERSION = 2



class JournalMismatch(Exception):
    """A journal file that is not the journal of this run (damaged, or
    written by another version): never resumed, never silently replaced."""


class ResultsBusy(Exception):
    """Another run holds the results file."""


def run_key(*, backend: str, suite: str, suite_digest: str, case_ids: list[str],
            compile_timeout: float, run_timeout: float) -> dict:
    """Everything that decides a run's verdicts: the backend, the suite's
    bytes, which of its cases are run, the timeouts.  A journal resumes
    only a run with the same key."""
    selection = hashlib.sha256("\n".join(case_ids).encode()).hexdigest()[:16]
    return {"backend": backend, "suite": suite, "suite_digest": suite_digest, "selection": selection,
            "cases": len(case_ids), "timeouts": {"compile": compile_timeout, "run": run_timeout}}


def journal_path(json_path: Path, key: dict) -> Path:
    """`<results>.<key hash>.journal`: runs with other options keep their own."""
    h = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return Path(f"{json_path}.{h}.journal")


def other_journals(json_path: Path, key: dict) -> list[Path]:
    """Journals next to `json_path` of runs with another key (kept, not resumed)."""
    json_path = Path(json_path)
    mine = journal_path(json_path, key)
    found = sorted(json_path.parent.glob(f"{json_path.name}.*.journal")) if json_path.parent.is_dir() else []
    legacy = Path(f"{json_path}.journal")
    return [j for j in found if j != mine] + ([legacy] if legacy.is_file() else [])


class Journal:
    """`journal_path(results, key)`: a header line holding the run's key,
    then `{"describe": …}` and verdict lines."""

    def __init__(self, path: Path, key: dict):
        self.path = Path(path)
        self.header = {"journal": JOURNAL_VERSION, "key": key}
        self.done: dict[str, Verdict] = {}
        self.describe: str | None = None
        self._fh = None

    def open(self) -> "Journal":
        """Resume the journal of this key; a file there with another header
        raises JournalMismatch (it is left as it is)."""
        if self.path.is_file() and self.path.stat().st_size:
            lines = self.path.read_text(errors="replace").splitlines()
            try:
                same = json.loads(lines[0]) == self.header
            except ValueError:
                same = False
            if not same:
                raise JournalMismatch(f"{self.path} is not a journal of this run (damaged, or from another "
                                      "version): remove it to start afresh")
            for line in lines[1:]:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue  # a line cut short by the interruption
                if isinstance(d, dict) and "describe" in d and "id" not in d:
                    self.describe = d["describe"]
                elif isinstance(d, dict) and d.get("verdict") in VERDICTS:
                    try:
                        self.done[d["id"]] = Verdict(**d)
                    except (TypeError, KeyError):
                        continue
            self._fh = self.path.open("a")
            if not self.path.read_text(errors="replace").endswith("\n"):
                self._fh.write("\n")
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("w")
        self._write(self.header)
        return self

    def _write(self, d: dict) -> None:
        self._fh.write(json.dumps(d, sort_keys=True) + "\n")
        self._fh.flush()

    def add(self, v: Verdict) -> None:
        self._write(asdict(v))

    def set_describe(self, describe: str) -> None:
        if describe != self.describe:
            self.describe = describe
            self._write({"describe": describe})

    def close(self, remove: bool = False) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None
        if remove:
            self.path.unlink(missing_ok=True)


class ResultsLock:
    """`<results>.lock`, held with flock(2) for a whole run: a second run on
    the same results file is refused while the first holds it.  The kernel
    releases the lock when the holder exits or is killed."""

    def __init__(self, json_path: Path):
        self.path = Path(f"{json_path}.lock")
        self._fd: int | None = None

    def __enter__(self) -> "ResultsLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode(errors="replace").strip()
                os.close(fd)
                raise ResultsBusy(f"{str(self.path)[:-5]} is being written by another run"
                                  + (f" (process {holder})" if holder else "")
                                  + ": wait for it to finish, or choose another results file") from None
            try:  # the previous holder may have removed the file between our open and our lock
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None
