"""The export folder's lock (spark.exportlock.acquire_lock) and manifest, without a Spark session: a stand-in
for spark.fs.FileSystem on a local folder (they need only these five calls)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from changeprov.errors import InputError
from changeprov.exportlayout import LOCK
from changeprov.spark.exportlock import acquire_lock


class LocalFolder:
    """What acquire_lock asks of spark.fs.FileSystem, on a local folder, as FileSystem does it there."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdirs(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def read_text(self, name: str) -> str:
        return (self.root / name).read_text("utf-8")

    def delete(self, name: str) -> None:
        (self.root / name).unlink(missing_ok=True)

    def create_new(self, name: str, data: bytes) -> bool:
        try:
            with (self.root / name).open("xb") as fh:
                fh.write(data)
        except FileExistsError:
            return False
        return True


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_taking_over_a_dead_runs_lock_says_whose_it_was(tmp_path):
    """A user's test: an export took over a stale _export.lock (and deleted that run's leftovers)
    without a word in its log."""
    fs, out = LocalFolder(tmp_path / "out"), str(tmp_path / "out")
    said: list[str] = []
    acquire_lock(fs, out, "a" * 32, progress=said.append)
    assert said == [], "a free folder: nothing to say"
    pid = _dead_pid()
    (tmp_path / "out" / LOCK).write_text(json.dumps({"run_id": "c" * 32, "host": socket.gethostname(), "pid": pid,
                                                     "started": "2026-01-02T03:04:05+00:00"}))
    acquire_lock(fs, out, "d" * 32, progress=said.append)
    assert json.loads((tmp_path / "out" / LOCK).read_text())["run_id"] == "d" * 32
    assert said == [f"took over the lock of export run cccccccccccc, pid {pid} on {socket.gethostname()}, started "
                    "2026-01-02T03:04:05.000Z: that process no longer runs"]  # as people read times everywhere
    # this very pid, another run: an earlier life of a restarted container
    said.clear()
    (tmp_path / "out" / LOCK).write_text(json.dumps({"run_id": "e" * 32, "host": socket.gethostname(),
                                                     "pid": os.getpid(), "started": "x"}))
    acquire_lock(fs, out, "f" * 32, progress=said.append)
    assert len(said) == 1 and said[0].startswith("took over the lock of export run eeeeeeeeeeee, pid ")
    assert "an earlier process with that pid left it" in said[0]


def test_a_live_runs_lock_is_refused_without_a_takeover_line(tmp_path):
    fs, out = LocalFolder(tmp_path / "out"), str(tmp_path / "out")
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    said: list[str] = []
    try:
        fs.mkdirs()
        (tmp_path / "out" / LOCK).write_text(json.dumps({"run_id": "a" * 32, "host": socket.gethostname(),
                                                         "pid": running.pid, "started": "x"}))
        with pytest.raises(InputError, match=r"another export \(run aaaaaaaaaaaa, pid \d+ on "):
            acquire_lock(fs, out, "b" * 32, progress=said.append)
    finally:
        running.kill()
        running.wait()
    assert said == []


@pytest.mark.parametrize("pid", [10**30, -1, 0, True, "123"])
def test_a_lock_whose_pid_no_process_can_have_is_a_dead_runs(tmp_path, pid):
    """rv40 m5: a crafted lock with a pid of 10**30 made `load` an internal error (OverflowError); the
    store's load mark had its own copy of the check (mq1 #1), where -1, 0 and True were a running load."""
    from changeprov.exportlayout import lock_holder
    from changeprov.sparql import loading

    fields = {"run_id": "c" * 32, "host": socket.gethostname(), "pid": pid}
    (tmp_path / LOCK).write_text(json.dumps(fields))
    assert lock_holder(tmp_path) is None
    assert not loading._running(fields)


@pytest.mark.parametrize("text", ["[]", '{"previous_runs": 5}', "x", '{"previous_runs": [1]}',
                                  '{"counts": []}', '{"previous_runs": [{"inputs": "a.jsonl"}]}'])
def test_a_damaged_manifest_stops_an_append_before_anything_moves(tmp_path, text):
    """mq1 #2: five readers of manifest.json had four policies; the export's raised AttributeError or
    TypeError (an internal error), and an append's commit read it after moving the part files."""
    from changeprov.sparql.loader import manifest_warnings
    from changeprov.spark.commit import committed_manifest
    from changeprov.spark.job import read_before

    fs = LocalFolder(tmp_path / "out")
    fs.mkdirs()
    (tmp_path / "out" / "manifest.json").write_text(text)
    with pytest.raises(InputError, match=r"out/manifest.json is not an export manifest: .*; restore it, or export "
                                         r"with --mode overwrite"):
        committed_manifest(fs, str(tmp_path / "out"), required=True)
    assert committed_manifest(fs, str(tmp_path / "out"), required=False) is None  # an overwrite replaces it
    assert read_before(str(tmp_path / "out"), ["file:///a.jsonl"]) == []
    (warning,) = manifest_warnings(tmp_path / "out", [], before=0, after=0)
    assert "manifest.json is not an export manifest" in warning
