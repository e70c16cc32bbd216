"""Load a committed Spark export (``DIR/triples/source=*/date=*/part-*.nt[.gz]``) into a store.

An export is committed when ``DIR/_SUCCESS`` exists (written last by the job) and no leftover of a
killed run remains (``_temporary`` from Spark, ``_staging-*`` from changeprov, ``.spark-staging-*``).
Anything else is refused with a message naming the problem. Loading is set-union: loading the same
export twice leaves the same store. On the embedded store the whole export goes in through ONE
atomic ``bulk_load`` (a bad line anywhere leaves the store unchanged).
"""

from __future__ import annotations

import gzip
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from changeprov.errors import InputError
from changeprov.sparql.stores import TripleStore

LEFTOVER_PREFIXES = ("_temporary", "_staging-", ".spark-staging-")


@dataclass
class LoadReport:
    files: int
    bytes_read: int
    triples_before: int
    triples_after: int
    seconds: float

    @property
    def triples_added(self) -> int:
        return self.triples_after - self.triples_before


def committed_partitions(export_dir: str | Path) -> list[Path]:
    """The partition files of a committed export, sorted; raise InputError naming the problem otherwise."""
    root = Path(export_dir)
    if not root.is_dir():
        raise InputError(f"{root} is not a directory (expected a `changeprov export` output folder)")
    leftovers = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                       if p.name.startswith(LEFTOVER_PREFIXES))
    if leftovers:
        raise InputError(f"{root} holds leftovers of an unfinished or killed export run: "
                         f"{', '.join(leftovers[:5])}{' …' if len(leftovers) > 5 else ''}; "
                         "re-run the export (or remove them once you know the run is dead)")
    if not (root / "_SUCCESS").is_file():
        raise InputError(f"{root} has no _SUCCESS marker: the export is not committed (still running, "
                         "killed, or not an export folder); refusing to load a partial export")
    triples = root / "triples"
    if not triples.is_dir():
        raise InputError(f"{root} has _SUCCESS but no triples/ folder")
    parts = sorted(p for p in triples.glob("source=*/date=*/part-*")
                   if p.is_file() and (p.name.endswith(".nt") or p.name.endswith(".nt.gz")))
    strays = sorted(str(p.relative_to(root)) for p in triples.rglob("*")
                    if p.is_file() and p not in parts and not p.name.startswith(("_", "."))
                    and not p.name.endswith(".crc"))
    if strays:
        raise InputError(f"{root} has files outside the partition layout: {', '.join(strays[:5])}")
    return parts


class _Chain(io.RawIOBase):
    """One byte stream over several files (.nt or .nt.gz), newline-separated, reporting progress."""

    def __init__(self, files: list[Path], on_open: Callable[[int, Path], None]):
        self._files = iter(enumerate(files))
        self._on_open = on_open
        self._cur = None
        self._need_newline = False
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def _next(self) -> bool:
        if self._cur is not None:
            self._cur.close()
        try:
            i, path = next(self._files)
        except StopIteration:
            self._cur = None
            return False
        self._on_open(i, path)
        self._cur = gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")
        return True

    def readinto(self, buf) -> int:
        while True:
            if self._need_newline:
                self._need_newline = False
                buf[0:1] = b"\n"
                return 1
            if self._cur is None and not self._next():
                return 0
            n = self._cur.readinto(buf)
            if n:
                self.bytes_read += n
                return n
            self._need_newline = True  # a file without a final newline must not glue lines
            self._cur.close()
            self._cur = None
            if not self._next():
                self._need_newline = False
                return 0

    def close(self) -> None:
        if self._cur is not None:
            self._cur.close()
        super().close()


def iter_partition_lines(files: list[Path]) -> Iterator[bytes]:
    for path in files:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            yield from fh


def load_export(store: TripleStore, export_dir: str | Path,
                progress: Callable[[str], None] = lambda _msg: None) -> LoadReport:
    """Load every committed partition of ``export_dir`` into ``store``."""
    files = committed_partitions(export_dir)
    root = Path(export_dir)
    started = time.monotonic()
    before = store.count()
    progress(f"{len(files)} partition file(s) in {root}; store holds {before:,} triples")

    def on_open(i: int, path: Path) -> None:
        progress(f"[{i + 1}/{len(files)}] {path.relative_to(root)} ({path.stat().st_size:,} bytes)")

    chain = _Chain(files, on_open)
    with io.BufferedReader(chain, buffer_size=1 << 20) as stream:
        store.load_ntriples(stream)
    after = store.count()
    report = LoadReport(len(files), chain.bytes_read, before, after, time.monotonic() - started)
    progress(f"done: {report.triples_added:,} new triples ({after:,} in the store) from {len(files)} file(s), "
             f"{report.bytes_read:,} bytes in {report.seconds:.2f} s")
    return report
