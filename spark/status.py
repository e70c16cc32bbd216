"""Progress of running Spark jobs for logs that are no terminal.

Spark's console progress bar redraws one line with carriage returns, so the CLI turns it on only
when stderr is a terminal. A cron job's or an orchestrator's log then saw nothing during the export's
one Spark job, 50-105 s at 50k events (ut46d #2). :func:`stage_reports` prints one line every
``every`` seconds while stages run, read from the driver's status tracker (no data is touched)."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from pyspark import SparkContext


def stage_line(sc: SparkContext) -> str | None:
    """One line on the running stages of ``sc``'s jobs, or None when none runs."""
    tracker = sc.statusTracker()
    stages = [info for info in (tracker.getStageInfo(sid) for sid in sorted(tracker.getActiveStageIds()))
              if info is not None]
    if not stages:
        return None
    done = sum(info.numCompletedTasks for info in stages)
    total = sum(info.numTasks for info in stages)
    running = sum(info.numActiveTasks for info in stages)
    failed = sum(info.numFailedTasks for info in stages)
    names = ", ".join(str(info.stageId) for info in stages)
    line = (f"Spark stage{'s' if len(stages) > 1 else ''} {names}: {done:,} of {total:,} tasks done, "
            f"{running:,} running")
    return line + (f", {failed:,} failed" if failed else "")


@contextmanager
def stage_reports(sc: SparkContext, say: Callable[[str], None], *, every: float = 30.0) -> Iterator[None]:
    """While the block runs, call ``say`` every ``every`` seconds with :func:`stage_line` and the
    time since the block began, when some stage runs. The tracker is read from a daemon thread; a
    tracker that fails (the JVM stopping under Ctrl-C) ends the reports, never the block."""
    stop = threading.Event()
    began = time.monotonic()

    def report() -> None:
        while not stop.wait(every):
            try:
                line = stage_line(sc)
            except Exception:  # noqa: BLE001 - the JVM is going away; the block reports why
                return
            if line is not None and not stop.is_set():
                say(f"{line} ({_elapsed(time.monotonic() - began)})")

    thread = threading.Thread(target=report, name="changeprov-stage-reports", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def _elapsed(seconds: float) -> str:
    """``75.2`` → ``1 min 15 s``."""
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"
