"""A local ``oxigraph serve`` over an on-disk store: the real SPARQL 1.1 endpoint the tests and the
query benchmark talk to through the remote store."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Iterator

OXIGRAPH = Path(sys.executable).parent / "oxigraph"  # the CLI of the `oxigraph` package, beside python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def oxigraph_server(location: Path, *, timeout: float = 20.0, query_timeout: float | None = None,
                    log: Path | None = None, union_default_graph: bool = False) -> Iterator[str]:
    """Run ``oxigraph serve`` on 127.0.0.1 and a free port; yield the query endpoint URL; stop it.

    ``timeout``: seconds to wait for the server to answer; ``query_timeout``: the server's own limit
    per query; ``log``: where its stderr goes (a temporary file otherwise); ``union_default_graph``: the
    default graph is the union of all graphs.
    """
    port = free_port()
    cmd = [str(OXIGRAPH), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"]
    if query_timeout is not None:
        cmd += ["--timeout-s", str(int(query_timeout))]
    if union_default_graph:
        cmd.append("--union-default-graph")
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    with (log.open("w+b") if log is not None else tempfile.TemporaryFile()) as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        try:
            while True:
                if proc.poll() is not None:
                    err.seek(0)
                    raise RuntimeError(f"oxigraph serve exited: {err.read().decode(errors='replace')[-500:]}")
                try:
                    with urllib.request.urlopen(base + "/query?query=ASK%7B%7D", timeout=2) as r:
                        r.read()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError("oxigraph serve did not answer in time") from None
                    time.sleep(0.1)
            yield base + "/query"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
