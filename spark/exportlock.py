"""The lock an export run holds in its folder (``_export.lock``: run id, host, pid, start), so that two
runs into one folder cannot delete each other's work: taken, refused, taken over from a dead run."""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Callable

from changeprov.errors import InputError
from changeprov.exportlayout import LOCK, alive, describe_holder, iso_time, lock_fields, lock_holder
from changeprov.spark.fs import FileSystem, local_out


def acquire_lock(fs: FileSystem, out: str, run_id: str, *,
                 progress: Callable[[str], None] = lambda _msg: None) -> None:
    """Take ``out``'s lock (``_export.lock``: run id, host, pid, start), or refuse: a second export into
    the same folder deleted the first one's staging as a dead run's leftovers, and both failed (ut8b #4).
    A lock left by a process of this host that no longer runs (or by this very pid in an earlier life
    of a restarted container) is taken over, after checking that it is still the same lock, and
    ``progress`` says whose it was: the run then deletes that run's leftovers, which the log must explain."""
    fs.mkdirs()
    mine = {"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid(), "started": iso_time(time.time())}
    data = (json.dumps(mine) + "\n").encode()
    held: dict = {}
    taken_from: dict | None = None
    for _ in range(3):
        if fs.create_new(LOCK, data):
            if taken_from is not None:
                progress(_took_over(taken_from, same_pid=taken_from.get("pid") == mine["pid"]))
            return
        text = _read_lock(fs)
        if text is None:
            continue  # released meanwhile: try again
        held = lock_fields(text)
        stale = held.get("host") == mine["host"] and (held.get("pid") == mine["pid"] or not alive(held.get("pid")))
        if not stale:
            break
        if _read_lock(fs) == text:  # still that dead run's lock, not one another run just took
            fs.delete(LOCK)
            taken_from = held
    if not held:
        raise InputError(f"{out.rstrip('/')}/{LOCK} cannot be read (another export is writing it, or one died "
                         "while writing it): if no export is running into this folder, delete it")
    raise _busy(held, out)


def _busy(held: dict, out: str) -> InputError:
    return InputError(f"another export ({describe_holder(held)}) is writing into {out}: let it finish; if it is not "
                      f"running any more, delete {out.rstrip('/')}/{LOCK}")


def refuse_if_busy(out: str) -> None:
    """Refuse a local ``out`` that another running export holds before Spark starts: the run itself
    refuses only once its session is up (~20 s, and a second JVM, ut23 #8)."""
    local = local_out(out)
    held = lock_holder(local) if local is not None else None
    if held and held.get("pid") != os.getpid():  # this pid's own: an earlier life of it (acquire_lock)
        raise _busy(held, out)


def _took_over(held: dict, *, same_pid: bool) -> str:
    why = ("its pid is this process's, so an earlier process with that pid left it (a restarted container?)"
           if same_pid else "that process no longer runs")
    return f"took over the lock of export {describe_holder(held)}: {why}"


def release_lock(fs: FileSystem, run_id: str) -> None:
    """Remove the lock if it is still this run's (never one another run took over)."""
    text = _read_lock(fs)
    if text is not None and lock_fields(text).get("run_id") == run_id:
        fs.delete(LOCK)


def _read_lock(fs: FileSystem) -> str | None:
    try:
        return fs.read_text(LOCK) if fs.exists(LOCK) else None
    except Exception:  # removed between the two calls (Hadoop's error comes through py4j)
        return None
