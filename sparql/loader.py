"""Load a committed Spark export (``DIR/triples/source=*/date=*/part-*.nt[.gz]``) into a store.

An export is committed when ``DIR/_SUCCESS`` exists (written last by the job) and no leftover of a
killed run remains (``_temporary`` from Spark, ``_staging-*`` from changeprov, ``.spark-staging-*``).
Anything else is refused with a message naming the problem. Loading is set-union: loading the same
export twice leaves the same store. On the embedded store each group of files goes in through one
atomic ``bulk_load``, and by default a load is all-or-nothing:

- into a store that holds triples, the default is one group (a bad line anywhere leaves the store
  unchanged);
- into an empty store, the default is ``auto_jobs()`` groups of about equal size loaded by as many
  threads (the engine parses and indexes outside the GIL, and a single ``bulk_load`` keeps only one
  core busy parsing); if a group fails, the store is emptied again.

``jobs=N`` asks for N groups into any store; into a non-empty one, a bad line then leaves its own
group out but other groups may be in, and reloading after a fix completes the store, since loading
is idempotent. A load killed midway (not failed) may leave part of a parallel load behind: the store
keeps the mark the load put in its folder (sparql.loading), every command opening it says so, and
loading again completes it.

A remote endpoint takes the triples in batches (one request each), so every file is parsed first and
a bad line anywhere leaves the endpoint unchanged; a request that fails midway (network, server) can
leave the batches before it in, and loading again completes them.
"""

from __future__ import annotations

import io
import math
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pyoxigraph as ox

from changeprov.errors import ChangeprovError, InputError
from changeprov.exportlayout import (dead_run, lock_holder, manifest_runs, parse_manifest, run_ids, running_export,
                                     written_by_a_run)
from changeprov.mapping.inputs import HADOOP_ONLY_CODECS, READ_ERRORS, codec_of, local_path, open_input
from changeprov.sparql.stores import NTriplesSyntaxError, TripleStore, shift_lines

LEFTOVER_PREFIXES = ("_temporary", "_staging-", ".spark-staging-")


@dataclass
class LoadReport:
    files: int
    bytes_read: int
    triples_before: int
    triples_after: int
    seconds: float
    #: time spent compacting the indexes after the load (None: not compacted)
    optimize_seconds: float | None = None
    #: what does not agree with the export's manifest.json (the CLI prints them as warnings)
    warnings: list[str] = field(default_factory=list)
    #: the interrupt (Ctrl-C, the CLI's SIGTERM) that came once the store held the whole load: the
    #: compaction was stopped or skipped, the triples are all in
    stopped: KeyboardInterrupt | None = None

    @property
    def triples_added(self) -> int:
        return self.triples_after - self.triples_before


def export_root(export_dir: str | Path) -> Path:
    """The local folder of an export given as a path or a ``file:`` URI (as ``export --out`` takes it);
    InputError for another file system's (``s3a://``, ``hdfs://``)."""
    if isinstance(export_dir, Path):
        return export_dir
    return Path(local_path(export_dir, command="load", hint="; copy the export to this machine first"))


def committed_partitions(export_dir: str | Path) -> list[Path]:
    """The partition files of a committed export, sorted; raise InputError naming the problem otherwise."""
    root = export_root(export_dir)
    if not root.exists():  # ut42d #9: "is not a directory" for a file that does not exist
        raise InputError(f"no such file or folder: {root} (expected a `changeprov export` output folder, or an "
                         "N-Triples file that `changeprov map` wrote)")
    if not root.is_dir():
        raise InputError(f"{root} is not a directory (expected a `changeprov export` output folder)")
    # the staging folder of an export that is writing now is its work, not a dead run's leftovers (rv35 #6)
    held = lock_holder(root)
    writing = f"_staging-{held.get('run_id')}" if held else None
    leftovers = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                       if p.name.startswith(LEFTOVER_PREFIXES) and p.relative_to(root).parts[0] != writing)
    if leftovers and dead_run(root) is not None and all(Path(x).parts[0].startswith("_staging-") for x in leftovers):
        leftovers = []  # a dead run's staging beside a committed export: load_export warns of it
    if leftovers:
        committed = (root / "_SUCCESS").is_file()
        raise InputError(f"{root} holds leftovers of an unfinished or killed export run: "
                         f"{', '.join(leftovers[:5])}{' …' if len(leftovers) > 5 else ''}; re-run the export "
                         "that died, with its inputs and --mode: it removes them"
                         + ("; or remove them once you know the run is dead" if committed else
                            # ut23 #6: removing them did not help after a kill during the commit; and a run
                            # of other inputs would commit without the dead run's (rv38 #2)
                            ": it died while committing and took _SUCCESS away, so only a run that commits makes "
                            "the folder loadable again"))
    if not (root / "_SUCCESS").is_file():
        raise InputError(f"{root} has no _SUCCESS marker: the export is not committed (still running, "
                         "killed, or not an export folder); refusing to load a partial export")
    triples = root / "triples"
    if not triples.is_dir():
        raise InputError(f"{root} has _SUCCESS but no triples/ folder")
    # an export with no triples has one empty triples/part-00000.nt[.gz], outside any partition
    parts = sorted(p for pattern in ("source=*/date=*/part-*", "part-*") for p in triples.glob(pattern)
                   if p.is_file() and (p.name.endswith(".nt") or p.name.endswith(".nt.gz")))
    known = set(parts)  # a list here made this check quadratic: 7 s for a 2,932-file export
    strays = sorted(str(p.relative_to(root)) for p in triples.rglob("*")
                    if p.is_file() and p not in known and not p.name.startswith(("_", "."))
                    and not p.name.endswith(".crc"))
    if strays:
        raise InputError(f"{root} has files outside the partition layout: {', '.join(strays[:5])}")
    # an export copied from elsewhere (an archive, a bucket) is read only inside itself: a symbolic link
    # out of it would load whatever it points to (rv40 M2)
    real = root.resolve()
    outside = [str(p.relative_to(root)) for p in parts if not p.resolve().is_relative_to(real)]
    if outside:
        raise InputError(f"{root} has part files that lead outside it through a symbolic link: "
                         f"{', '.join(outside[:5])}{' …' if len(outside) > 5 else ''}; an export is loaded only "
                         "from inside its folder")
    return parts


def loadable_files(path: str | Path) -> tuple[list[Path], Path, bool]:
    """(files, the folder they are named relative to, whether it is an export) for ``load PATH``: the
    committed partitions of an export folder, or one N-Triples file (``changeprov map --out``, ut22 M2)."""
    root = export_root(path)
    if root.is_file():
        name, codec = root.name.lower(), codec_of(root)
        if not name[:len(name) - len(codec or "")].endswith(".nt") or codec in HADOOP_ONLY_CODECS:
            raise InputError(f"{root} is neither an export folder nor an N-Triples file (*.nt, or *.nt.gz, "
                             "*.nt.bz2, *.nt.deflate, as `changeprov map --out` writes them)")
        return [root], root.parent, False
    return committed_partitions(root), root, True


class _Chain(io.RawIOBase):
    """One byte stream over several files (.nt or .nt.gz), newline-separated, reporting progress."""

    def __init__(self, files: list[Path], on_open: Callable[[int, Path], None],
                 on_end: Callable[[], None] = lambda: None):
        self._files = iter(enumerate(files))
        self._on_open, self._on_end = on_open, on_end
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
            if self._on_end is not None:  # once: a reader may ask again after the end
                self._on_end()
                self._on_end = None
            return False
        self._on_open(i, path)
        self._path = path
        self._cur = open_input(path)
        return True

    def readinto(self, buf) -> int:
        while True:
            if self._need_newline:
                self._need_newline = False
                buf[0:1] = b"\n"
                return 1
            if self._cur is None and not self._next():
                return 0
            try:
                n = self._cur.readinto(buf)
            except READ_ERRORS as exc:  # a corrupt .nt.gz: name it, no traceback
                raise InputError(f"{self._path}: cannot read: {exc}") from None
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


def _located(exc: NTriplesSyntaxError, files: list[Path], root: Path) -> NTriplesSyntaxError:
    """The engine counts lines of the whole stream of ``files``: name the file and its own line.

    Only on failure, so reading the files again to count their lines costs nothing on a good load."""
    if exc.line is None:
        return exc
    line = exc.line
    for path in files:
        with open_input(path) as fh:
            spans = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1
        if line <= spans:  # _Chain follows each file with a newline, so a file spans its newlines + 1
            shift = exc.line - line
            problem = re.sub(r" \(line \d+\)$", "", exc.problem.removeprefix("Parser error "))  # Python's suffix
            problem = shift_lines(problem, -shift)
            # still an NTriplesSyntaxError, with the file's own line (ut42a #7: a plain InputError)
            return NTriplesSyntaxError(problem, line=line, source=str(path.relative_to(root)))
        line -= spans
    return exc


def manifest_warnings(root: Path, files: list[Path], *, before: int, after: int) -> list[str]:
    """What about a loaded export does not agree with its ``manifest.json`` (ut7a #10, ut7b #6): no
    manifest, part files no run of it wrote or that it lists and are gone (each run lists its files;
    an older manifest without the lists is checked by file names), files of another size than their
    run wrote, or, for a one-run export loaded into an empty store, a triple count other than the
    run's. Each means the files were changed after the run; the load itself stands."""
    path = root / "manifest.json"
    try:
        manifest = parse_manifest(path.read_text("utf-8"), str(path))
    except FileNotFoundError:
        return [f"{root} has no manifest.json: the loaded triples are not checked against the counts of the "
                "export run that wrote them"]
    except (OSError, InputError) as exc:
        return [f"{exc if isinstance(exc, InputError) else path}: the loaded triples are not checked against it"]
    runs = manifest_runs(manifest)
    ids = run_ids(manifest)
    counted = (manifest.get("counts") or {}).get("triples")
    warnings = []
    listed = [r.get("files") for r in runs]
    if all(isinstance(f, list) for f in listed):  # each run lists its part files (exports since stop 28)
        expected = {name for f in listed for name in f if isinstance(name, str)}
        present = {p.relative_to(root).as_posix() for p in files}
        strays = sorted(present - expected)
        missing = sorted(expected - present)
    else:
        strays = sorted(p.relative_to(root).as_posix() for p in files if not written_by_a_run(p.name, ids))
        missing = []
    if strays:
        warnings.append(f"{len(strays)} part file(s) that no run of manifest.json wrote: "
                        + ", ".join(strays[:5]) + (" …" if len(strays) > 5 else ""))
    if missing:
        warnings.append(f"{len(missing)} part file(s) that manifest.json lists are missing: "
                        + ", ".join(missing[:5]) + (" …" if len(missing) > 5 else ""))
    # each run's file sizes (exports since stop 36): a file cut short by a copy or edited, whatever
    # the store held before and however many runs the folder has (ut23 #1)
    sizes = {name: size for r in runs if isinstance(r.get("file_bytes"), dict)
             for name, size in r["file_bytes"].items()}
    bad = sorted(name for name, size in sizes.items() if isinstance(size, bool) or not isinstance(size, int) or size < 0)
    if bad:  # the manifest is wrong, not the files (rv38 #7)
        warnings.append(f"manifest.json gives {len(bad)} part file(s) no size in bytes (file_bytes): "
                        + ", ".join(map(str, bad[:5])) + (" …" if len(bad) > 5 else ""))
    on_disk = {p.relative_to(root).as_posix(): p.stat().st_size for p in files}
    changed = sorted(name for name, size in on_disk.items()
                     if name in sizes and name not in bad and sizes[name] != size)
    if changed:
        warnings.append(f"{len(changed)} part file(s) differ in size from what their run wrote (cut short by a "
                        "copy, or edited): " + ", ".join(changed[:5]) + (" …" if len(changed) > 5 else ""))
    if before == 0 and len(runs) == 1 and isinstance(counted, int) and after != counted:
        # ut48b #3: a server that dropped requests was blamed on the files, which were whole
        whole = not changed and bool(sizes) and set(on_disk) == set(sizes)
        warnings.append(f"the store holds {after:,} triples, the export run of manifest.json wrote {counted:,}: "
                        + ("its part files are as the run wrote them (their sizes), so the store did not keep all it "
                           "was sent (a server or gateway that dropped requests?), or the files were edited in place"
                           if whole else "its part files were changed, added or removed after the run"))
    return warnings


def check_files(files: list[Path], root: Path) -> None:
    """Parse every file strictly without loading anything (for stores that take data in batches, so
    that a bad line late in an export cannot leave the batches before it in the store); raise
    InputError naming the file and line."""
    chain = _Chain(files, lambda _i, _p: None)
    try:
        with io.BufferedReader(chain, buffer_size=1 << 20) as stream:
            for _ in ox.parse(stream, format=ox.RdfFormat.N_TRIPLES):
                pass
    except SyntaxError as exc:
        raise _located(NTriplesSyntaxError(str(exc), line=exc.lineno), files, root) from None


def iter_partition_lines(files: list[Path]) -> Iterator[bytes]:
    for path in files:
        with open_input(path) as fh:
            yield from fh


def split_by_size(files: list[Path], groups: int) -> list[list[Path]]:
    """``files`` in at most ``groups`` groups of about equal total size (largest first, greedy);
    each group keeps the files' sorted order."""
    size = {path: path.stat().st_size for path in files}
    bins: list[tuple[int, list[Path]]] = [(0, []) for _ in range(max(1, min(groups, len(files))))]
    for path in sorted(files, key=lambda p: (-size[p], p)):
        i = min(range(len(bins)), key=lambda k: bins[k][0])
        bins[i] = (bins[i][0] + size[path], bins[i][1] + [path])
    return [sorted(b) for _, b in bins if b]


#: a load says which file it has reached at most every PROGRESS_SECONDS and every PROGRESS_SHARE of its
#: files, whichever is rarer: at most ~10 lines, and none for a load shorter than the seconds
PROGRESS_SECONDS = 2.0
PROGRESS_SHARE = 0.1


class _FileProgress:
    """Counts the files the groups of a load open, and says how far it is, rarely and one line at a time.

    A line per file was 2,900 lines for a big export, and two parallel groups printing at once glued
    lines together (a print is two writes): lines are said under a lock, so a callback that writes
    each line in one piece never interleaves them."""

    def __init__(self, progress: Callable[[str], None], total: int, root: Path, *, groups: int = 1) -> None:
        self._progress, self._total, self._root = progress, total, root
        self._lock = threading.Lock()
        self._opened = 0
        self._groups_left = groups
        self._started = time.monotonic()
        self._said = (self._started, 0)  # when the last line was said, and the files opened then

    def opened(self, path: Path) -> None:
        with self._lock:
            self._opened += 1
            now = time.monotonic()
            step = max(1, math.ceil(self._total * PROGRESS_SHARE))
            if now - self._said[0] < PROGRESS_SECONDS or self._opened - self._said[1] < step:
                return
            self._said = (now, self._opened)
            self._progress(f"{self._opened:,} of {self._total:,} files ({100 * self._opened // self._total}%) in "
                           f"{now - self._started:.0f} s; reading {path.relative_to(self._root)}")

    def ended(self) -> None:
        """A group has read its last file. After the last group the store still writes what it
        read (the embedded store builds its indexes then: a minute for millions of triples), which
        the file count cannot show: say so, not nothing (ut11 #4)."""
        with self._lock:
            self._groups_left -= 1
            if self._groups_left == 0 and self._total:
                self._progress(f"read all {self._total:,} files in {time.monotonic() - self._started:.0f} s; "
                               "the store is writing them")


#: parallel groups of an automatic load into an empty store: two measured faster than one on two cores
#: (docs/queries.md); each group's loader holds ~1.7 GB at its peak, so more cores do not mean more
AUTO_JOBS_MAX = 2


def auto_jobs() -> int:
    """How many file groups an automatic load into an empty store uses: the usable cores, at most
    ``AUTO_JOBS_MAX``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(AUTO_JOBS_MAX, cores))


def load_export(store: TripleStore, export_dir: str | Path,
                progress: Callable[[str], None] = lambda _msg: None, *, jobs: int | None = None,
                optimize: bool = True) -> LoadReport:
    """Load every committed partition of ``export_dir`` (or one N-Triples file, as ``changeprov map``
    writes it) into ``store``, in ``jobs`` parallel groups where the store supports it (the embedded
    one). ``jobs=None`` picks all-or-nothing ways: into an empty store ``auto_jobs()`` groups, emptied
    again if one fails; otherwise one group. Then, with ``optimize`` and when files were read, compact
    the store's indexes (included in ``seconds``): without it, lookups on a store grown by big loads
    read many overlapping files."""
    # ut42a #6: a path where the store belongs, jobs="auto" or optimize="no" were TypeErrors or ignored
    if not isinstance(store, TripleStore):
        raise InputError(f"load_export takes a store (open_store(...)) first, then the export: got "
                         f"{type(store).__name__} {str(store)[:80]!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise InputError(f"jobs must be an int >= 1 (parallel load groups) or None (chosen by the loader), got {jobs!r}")
    if not isinstance(optimize, bool):
        raise InputError(f"optimize must be True or False, got {optimize!r}")
    given = export_root(export_dir)
    # before the files: a run that commits meanwhile may be in them, or not
    running = running_export(given) if given.is_dir() else None
    dead = dead_run(given) if given.is_dir() else None
    files, root, is_export = loadable_files(given)
    started = time.monotonic()
    before = store.count()
    if jobs is None:
        jobs = auto_jobs() if before == 0 else 1
    groups = split_by_size(files, jobs if store.parallel_load else 1)
    if not store.atomic_load and files:
        progress(f"checking the {len(files)} file(s) before sending any triple")
        check_files(files, root)
    progress((f"{len(files)} partition file(s) in {root}" if is_export else f"{given}")
             + f"; store holds {before:,} triples"
             + (f"; {len(groups)} parallel groups" if len(groups) > 1 else ""))
    said = _FileProgress(progress, len(files), root, groups=len(groups))
    store.mark_loading(given)  # removed below once the store is whole or as it was (sparql.loading)

    def load_group(group: list[Path]) -> int:
        chain = _Chain(group, lambda _i, path: said.opened(path), said.ended)
        try:
            with io.BufferedReader(chain, buffer_size=1 << 20) as stream:
                store.load_ntriples(stream)
        except NTriplesSyntaxError as exc:
            raise _located(exc, group, root) from None
        return chain.bytes_read

    if len(groups) <= 1:  # an export of blank or quarantined lines only has no partition files
        try:
            bytes_read = load_group(groups[0]) if groups else 0
        except ChangeprovError:
            if store.atomic_load:  # one bulk load that failed added nothing
                store.unmark_loading()
            raise
        except KeyboardInterrupt:
            sent = getattr(store, "batches_sent", 0)
            if not store.atomic_load and sent:  # ut48b #2: "terminated", and nothing of what was in the store
                progress(f"stopped after {sent} request(s) of triples: they stay in the store (a remote load is "
                         "not atomic), the last one perhaps in part; load again to complete it (loading is idempotent)")
            raise
    else:
        with ThreadPoolExecutor(max_workers=len(groups)) as pool:
            futures = [pool.submit(load_group, g) for g in groups]
            errors = [e for e in (f.exception() for f in futures) if e is not None]
            if errors:
                first = errors[0]
                if before == 0:  # the store was empty: emptying it again undoes the groups that went in
                    store.clear()
                    store.unmark_loading()
                if before == 0 or not isinstance(first, ChangeprovError):
                    raise first
                more = ("; the other file groups of this parallel load may be in the store: fix the input and "
                        "load again (loading is idempotent), or use --jobs 1 for an all-or-nothing load")
                if isinstance(first, NTriplesSyntaxError):  # keep its file and line (rv42 #1)
                    raise NTriplesSyntaxError(first.problem + more, line=first.line, source=first.source) from None
                raise type(first)(f"{first}{more}") from None
            bytes_read = sum(f.result() for f in futures)
    after = store.count()
    store.unmark_loading()  # whole: compaction only makes lookups faster
    optimize_seconds, stopped = None, None
    try:
        # also when nothing was new: bulk_load wrote a full set of index files all the same, and a nightly
        # reload of a whole export doubled the store's size until the next load that added triples (ut23 #3)
        if optimize and store.compacts and bytes_read:
            progress(f"loaded {after - before:,} new triples in {time.monotonic() - started:.2f} s; "
                     "compacting the indexes")
            began = time.monotonic()
            store.optimize()
            optimize_seconds = time.monotonic() - began
    except KeyboardInterrupt as exc:
        # ut46d #4: a SIGTERM while compacting said "terminated", exit 2, of a whole load, and the CLI
        # then deleted the store it had just created and filled
        stopped = exc
    report = LoadReport(len(files), bytes_read, before, after, time.monotonic() - started, optimize_seconds,
                        (manifest_warnings(root, files, before=before, after=after) if is_export else [])
                        + ([running] if running else []) + ([dead] if dead else []), stopped)
    progress(f"done: {report.triples_added:,} new triples ({after:,} in the store) from {len(files)} file(s), "
             f"{report.bytes_read:,} bytes in {report.seconds:.2f} s"
             + (f" (compaction {optimize_seconds:.2f} s)" if optimize_seconds is not None else ""))
    return report
