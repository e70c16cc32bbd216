"""A mark in an embedded store's folder while `changeprov load` writes to it.

A load killed midway (power, SIGKILL, a parallel load interrupted) can leave part of an export in
the store, and a reader opening the store during a load sees what has been written so far; neither
could tell. The loader writes ``changeprov-loading.json`` into the store's folder before it adds a
triple and removes it once the store holds the whole export (or is unchanged, after a failure that
undid itself). Any command opening a store with the mark says so: still running, or unfinished and
to be loaded again (loading is idempotent).
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from changeprov.exportlayout import alive
from changeprov.mapping.terms import ms_to_xsd

MARK = "changeprov-loading.json"


def begin(store: Path, export: str | Path) -> None:
    info = {"export": str(Path(export).resolve()), "pid": os.getpid(), "host": socket.gethostname(),
            # the form every time is shown in (formats.display_datetime), read back into a warning
            "started": ms_to_xsd(int(time.time() * 1000))}
    tmp = store / f".{MARK}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(info), encoding="utf-8")
    os.replace(tmp, store / MARK)


def finish(store: Path) -> None:
    try:
        (store / MARK).unlink()
    except FileNotFoundError:
        pass


def _running(info: dict) -> bool:
    # not this process: an earlier load of ours that failed, not one running beside us
    return info.get("host") == socket.gethostname() and info.get("pid") != os.getpid() and alive(info.get("pid"))


def unfinished(store: Path) -> str | None:
    """What a reader of ``store`` should know about a load that has not finished, or None."""
    try:
        info = json.loads((store / MARK).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict):  # rv47: a mark of other JSON ([1]) made every command a bug
        info = {}
    export, started = info.get("export", "an export"), info.get("started", "at an unknown time")
    if _running(info):
        return (f"a `changeprov load` of {export} into {store} is running (pid {info['pid']}, started "
                f"{started}): answers may be incomplete until it ends")
    return (f"a `changeprov load` of {export} into {store} (started {started}) did not finish: the store may "
            f"hold part of it; load it again to complete the store (loading is idempotent): "
            f"changeprov load {export} --store {store}")
