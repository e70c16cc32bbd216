"""Input and output files: finding and reading JSONL inputs (files, folders, globs, optionally
compressed), and writing outputs so that a failed or interrupted run leaves no partial file at the target."""

from __future__ import annotations

import bz2
import glob
import gzip
import io
import os
import re
import stat
import uuid
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Sequence

from changeprov.errors import InputError

# Compressed files are recognised by suffix, in any case, as Hadoop's CompressionCodecFactory does,
# so that `map` and `export` read a file named directly the same way. Hadoop's .lz4 and .snappy are
# its own block formats and .zst needs its native library: `map` refuses those by name.
CODECS = (".gz", ".bz2", ".deflate")
HADOOP_ONLY_CODECS = {".lz4": "LZ4", ".snappy": "Snappy", ".zst": "Zstandard"}
_EVENT_FILES = (".jsonl", ".json", ".ndjson")
SUFFIXES = tuple(base + codec for base in _EVENT_FILES for codec in ("", *CODECS))
#: a folder's event files: also in the codecs only `export` reads (ut44e #3: events.jsonl.zst was left out
#: without a word; `map` says it cannot read it, as when it is named)
FOLDER_SUFFIXES = SUFFIXES + tuple(base + codec for base in _EVENT_FILES for codec in HADOOP_ONLY_CODECS)


# file:///p, file://localhost/p and Hadoop's own file:/p; the host is checked by file_uri_path
_FILE_URI = re.compile(r"file:(?://(?P<host>[^/]*))?(?P<path>/.*)?", re.IGNORECASE | re.DOTALL)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def file_uri_path(item: str) -> str | None:
    """The local path a ``file:`` URI names, or None when ``item`` is not one.

    The path is taken as it is, not %XX-decoded, globs included: ``export`` hands such an input to
    Hadoop, whose ``Path(String)`` reads it so, and ``map`` and ``load`` must read the same files.
    InputError for a host other than localhost (another machine's file) or a path that is not absolute.

    >>> file_uri_path("file:///data/in.jsonl"), file_uri_path("file://localhost/d/*.jsonl"), file_uri_path("file:/d")
    ('/data/in.jsonl', '/d/*.jsonl', '/d')
    >>> file_uri_path("data/in.jsonl") is None
    True
    """
    if not item[:5].lower() == "file:":
        return None
    m = _FILE_URI.fullmatch(item)
    if m is None or not m.group("path"):
        raise InputError(f"{item}: a file: URI needs an absolute path (file:///abs/path)")
    if (m.group("host") or "localhost").lower() != "localhost":
        raise InputError(f"{item}: a file: URI names a file on another machine ({m.group('host')}); give a path on "
                         "this one (a plain path, file:///abs/path or file://localhost/abs/path)")
    return m.group("path")


def scheme_of(item: str) -> str | None:
    """The scheme of a ``scheme://…`` path other than ``file:`` (``s3a``, ``hdfs``), or None.

    >>> scheme_of("s3a://bucket/events/"), scheme_of("file:///x"), scheme_of("events/a.jsonl")
    ('s3a', None, None)
    """
    m = _SCHEME.match(item)
    return m.group(1) if m and m.group(1).lower() != "file" else None


def local_path(item: str, *, command: str, hint: str = "") -> str:
    """A local path as the user gave it, a plain path or a ``file:`` URI (file_uri_path), as a plain path;
    InputError for another file system's path (``s3a://``), saying that ``command`` reads local ones only,
    then ``hint``."""
    scheme = scheme_of(item)
    if scheme is not None:
        raise InputError(f"{item}: `{command}` reads local paths only, a plain path or a file: URI (file:///abs/path), "
                         f"not {scheme}://{hint}")
    path = file_uri_path(item)
    return item if path is None else path


def input_list(inputs: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The inputs as a list of path texts: one path given alone (a str or a Path) is one input, not a
    sequence of one-character paths, the first of which is ``/`` (ut40c #1).

    >>> input_list("/data/a.jsonl"), input_list([Path("a.jsonl"), "b/"])
    (['/data/a.jsonl'], ['a.jsonl', 'b/'])
    """
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    out = []
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)):
            raise InputError(f"an input must be a path (str or Path), not {type(item).__name__}: {item!r:.80}")
        out.append(os.fspath(item))
    return out


def _is_export(folder: Path) -> bool:
    """A changeprov export (committed or being written): its manifest and triples, or a _SUCCESS marker."""
    return (folder / "_SUCCESS").is_file() or ((folder / "manifest.json").is_file() and (folder / "triples").is_dir())


def _event_files(folder: Path) -> list[Path]:
    """The JSONL files in ``folder`` and below, sorted: not hidden ones (a file or folder name starting
    with ``.`` or ``_``, as Spark lists a folder), and none inside an earlier export, whose manifest and
    quarantine are JSON too (ut40c #2: a nightly export written below its input folder read them).
    A folder that cannot be read is an error: skipping it would lose its lines without a word, and the
    counts would still add up (ut41b #1); so is an event file's name that is a link to nothing (ut44e #3)."""
    def unreadable(where: str | os.PathLike, exc: OSError) -> InputError:
        return InputError(f"cannot read folder {os.fspath(where)}: {exc.strerror or exc} (its event files would "
                          "be left out)")

    def walk_error(exc: OSError) -> None:
        raise unreadable(exc.filename, exc)

    def visible(here: Path, name: str) -> bool:
        try:
            return not name.startswith((".", "_")) and not _is_export(here / name)
        except OSError as exc:  # listed, but its entries cannot be looked at (no x permission)
            raise unreadable(here / name, exc) from None

    def event_file(here: Path, name: str) -> bool:
        if name.startswith((".", "_")) or not name.lower().endswith(FOLDER_SUFFIXES):
            return False
        path = here / name
        if path.is_file():
            return True
        if path.is_symlink() and not path.exists():
            raise InputError(f"{path}: a link to {os.readlink(path)}, which does not exist (its events would be "
                             "left out)")
        return False  # a named pipe, a socket: never a file of events in a folder

    found = []
    for root, dirs, files in os.walk(folder, onerror=walk_error):  # like rglob: no symlinked folder walked
        here = Path(root)
        dirs[:] = [d for d in dirs if visible(here, d)]
        try:
            found += [here / f for f in files if event_file(here, f)]
        except OSError as exc:
            raise unreadable(here, exc) from None
    return sorted(found)


def expand_inputs(inputs: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """Files named directly, every JSONL file under named folders, and glob matches: in the order given (a
    folder's files and a glob's matches by path), each once (rv48 #9: the docstring said sorted).
    An input may be a ``file:`` URI, as ``export`` takes it; another scheme is `map`'s InputError (the
    export passes those to Spark)."""
    found: list[Path] = []
    for given in input_list(inputs):
        item = local_path(given, command="map", hint="; `export` reads any Hadoop path")
        # a path that exists is that file or folder, whatever its name holds: events[1].jsonl read the
        # sibling events1.jsonl as a glob (ut41b #3)
        matches = sorted(glob.glob(item, recursive=True)) if glob.has_magic(item) and not os.path.exists(item) \
            else [item]
        if not matches:
            raise InputError(f"{given}: no file matches")
        for m in matches:
            p = Path(m)
            if p.is_dir():
                try:
                    export = _is_export(p)
                except OSError as exc:  # listed, but not entered (rv41 #8)
                    raise InputError(f"cannot read folder {m}: {exc.strerror or exc} (its event files would be "
                                     "left out)") from None
                if export:
                    raise InputError(f"{m}: a changeprov export folder (_SUCCESS, manifest.json), not event files")
                inside = _event_files(p)
                if not inside:  # a run pointed at the wrong folder must not report success (ut40b #4)
                    raise InputError(f"{m}: a folder with no event files (*.jsonl, *.json or *.ndjson, "
                                     f"optionally {', '.join(CODECS)}) in it or below it")
                found.extend(inside)
            elif p.is_file():
                found.append(p)
            elif os.path.exists(m):  # ut41b #5: a pipe was "no such file"
                raise InputError(f"{given}: not a file or folder (a pipe or a device): write the events to a file "
                                 "and give that (an input is read more than once, and Spark reads it from its workers)")
            else:
                raise InputError(f"{given}: no such file or folder")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


# What reading an input can raise: a truncated or non-gzip .gz is an EOFError or OSError, a corrupt
# gzip or deflate stream a zlib.error (neither of those).
READ_ERRORS = (OSError, EOFError, zlib.error)


def codec_of(path: str | Path) -> str | None:
    """The compression suffix of ``path`` as Hadoop matches it (any case), or None.

    >>> codec_of("a/events.jsonl.GZ"), codec_of("e.bz2"), codec_of("e.jsonl"), codec_of("e.zst")
    ('.gz', '.bz2', None, '.zst')
    """
    name = str(path).lower()
    return next((c for c in (*CODECS, *HADOOP_ONLY_CODECS) if name.endswith(c)), None)


#: how a compressed file starts, for one named as plain text (framing_warnings)
_MAGIC = ((b"\x1f\x8b", "gzip", ".gz"), (b"BZh", "bzip2", ".bz2"), (b"\x28\xb5\x2f\xfd", "Zstandard", ".zst"))


def framing_warnings(paths: Iterable[str | Path]) -> list[str]:
    """What the first 64 KiB of each local input named as plain text say of it, which no line can:
    a compressed file without its suffix (every line quarantined as BAD_ENCODING), or line ends of
    CR alone (the whole file one line). Other file systems are not looked at (ut46a #8: both cases
    gave only their quarantine records).

    >>> import tempfile, gzip, os
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "a.jsonl"), "wb") as f: _ = f.write(gzip.compress(b"{}\\n"))
    >>> framing_warnings([os.path.join(d, "a.jsonl")])[0].endswith("its lines are read as text; name it .gz")
    True
    """
    out = []
    for item in paths:
        text = str(item)
        path = file_uri_path(text) or (text if scheme_of(text) is None else None)
        if path is None or codec_of(path) is not None:
            continue
        try:
            with open(path, "rb") as f:
                head = f.read(65536)
        except OSError:
            continue
        kind = next(((name, suffix) for magic, name, suffix in _MAGIC if head.startswith(magic)), None)
        if kind is not None:
            only_export = " (which only `export` reads)" if kind[1] in HADOOP_ONLY_CODECS else ""
            out.append(f"{path} starts as a {kind[0]} file does, but its name does not end in {kind[1]}: its lines "
                       f"are read as text; name it {kind[1]}{only_export}")
        elif b"\r" in head and b"\n" not in head and len(head) > 1:
            out.append(f"{path} has line ends of CR alone (no LF in its first {len(head):,} bytes): it is read as one "
                       "line; convert them to LF")
    return out


def open_input(path: str | Path) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed by its suffix (``.gz``, ``.bz2``, ``.deflate``,
    in any case). InputError for Hadoop's codecs that Python cannot read."""
    codec = codec_of(path)
    if codec in CODECS and os.path.getsize(path) == 0:  # no lines, as Hadoop's codecs read it (ut41b #4)
        return io.BytesIO(b"")
    if codec == ".gz":
        return gzip.open(path, "rb")
    if codec == ".bz2":
        return bz2.open(path, "rb")
    if codec == ".deflate":
        return io.BufferedReader(_ZlibReader(open(path, "rb")))
    if codec in HADOOP_ONLY_CODECS:
        raise InputError(f"{path}: {HADOOP_ONLY_CODECS[codec]}-compressed ({codec}), which only `export` "
                         "(Hadoop's codec) reads; decompress it to read it here")
    return open(path, "rb")


class _ZlibReader(io.RawIOBase):
    """Hadoop's DeflateCodec: zlib streams (one, or several written one after another)."""

    def __init__(self, raw: BinaryIO):
        self._raw, self._z = raw, zlib.decompressobj()
        self._pending, self._in_stream = b"", False

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        while True:
            if self._z.eof:  # the next stream starts with what followed this one's end
                self._pending, self._z = self._z.unused_data, zlib.decompressobj()
            if self._z.unconsumed_tail:
                data = self._z.decompress(self._z.unconsumed_tail, len(buf))
            else:
                chunk, self._pending = self._pending or self._raw.read(65536), b""
                if not chunk:
                    if self._in_stream:
                        raise EOFError("compressed file ended before the end-of-stream marker was reached")
                    return 0
                data = self._z.decompress(chunk, len(buf))
            self._in_stream = not self._z.eof
            if data:
                buf[:len(data)] = data
                return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def read_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw bytes without the newline). Only b"\\n" ends a line."""
    try:
        with open_input(path) as fh:
            for number, raw in enumerate(fh, start=1):
                yield number, raw[:-1] if raw.endswith(b"\n") else raw
    except READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def display_name(path: Path) -> str:
    """A local input's name in quarantine records (``source``, and the DUPLICATE_EVENT detail): its
    absolute path, as expand_inputs found it (symlinks resolved). Not relative to the working folder:
    an export's quarantine is read later from anywhere, beside a manifest that names its inputs
    absolutely, and the same input gave other records from another folder. The export names the
    files Spark reports by this rule too (spark.fs.display_source), so both mappers agree.

    >>> display_name(Path("/data/events/a.jsonl"))
    '/data/events/a.jsonl'
    """
    return os.path.abspath(path)


def check_outputs(outputs: Sequence[Path], inputs: Sequence[Path] = ()) -> None:
    """Refuse, before any work is done, an output that is one of the inputs or the same file as
    another output (symlinks, hard links and relative paths included). Devices and pipes are not
    files that can be destroyed: ``--out /dev/null --quarantine /dev/null`` is allowed."""
    input_ids = {_file_id(p) for p in inputs}
    seen: dict[object, Path] = {}
    for out in outputs:
        if out.exists() and not out.is_file() and not out.is_dir():
            continue
        key = _file_id(out) if out.exists() else os.path.realpath(out)
        if key in input_ids:
            raise InputError(f"{out}: is one of the inputs; writing it would destroy the input")
        if key in seen:
            raise InputError(f"two outputs are the same file ({seen[key]}, {out}); each needs its own")
        seen[key] = out


def _file_id(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


class _DeflateWriter:
    """Hadoop's DeflateCodec: one zlib stream (``open_input`` reads it back)."""

    def __init__(self, raw: BinaryIO):
        self._raw, self._z = raw, zlib.compressobj(1)

    def write(self, data: bytes) -> None:
        self._raw.write(self._z.compress(data))

    def close(self) -> None:
        self._raw.write(self._z.flush())


def compressing(raw: BinaryIO, codec: str | None):
    """A writer over ``raw`` for the compression suffix ``codec`` (``codec_of``), as ``open_input``
    reads it back: gzip without a name or time (byte-identical for the same data), bz2, Hadoop's
    deflate; ``raw`` itself for none. Closing it ends the stream and leaves ``raw`` open."""
    if codec == ".gz":
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0)
    if codec == ".bz2":
        return bz2.BZ2File(raw, "wb", compresslevel=1)
    if codec == ".deflate":
        return _DeflateWriter(raw)
    return raw


@contextmanager
def written_on_success(target: Path) -> Iterator[BinaryIO]:
    """``replaced_on_success``, compressed by the target's suffix (``compressing``): ``out.nt.gz`` is
    gzip, as its name says and ``load`` reads it. A suffix only Hadoop reads is refused."""
    codec = codec_of(target)
    if codec in HADOOP_ONLY_CODECS:
        raise InputError(f"{target}: cannot write {HADOOP_ONLY_CODECS[codec]} ({codec}); name it without a "
                         f"suffix or with {', '.join(CODECS)}")
    with replaced_on_success(target) as raw:
        writer = compressing(raw, codec)
        yield writer
        if writer is not raw:
            writer.close()


@contextmanager
def replaced_on_success(target: Path) -> Iterator[BinaryIO]:
    """A binary file to write that becomes ``target`` only when the block ends without an error.

    It is a hidden temporary file beside the target (missing parent folders are created, as
    ``mkdir -p`` does), opened on entry, so that an unwritable location fails before the work, not
    after it. On any error, KeyboardInterrupt included, it is removed and the target is untouched.
    A target that exists and is not a regular file (``/dev/null``, a named pipe) is written directly:
    it cannot be replaced, and must not be. OSError becomes InputError naming the path."""
    real = Path(os.path.realpath(target))  # a symlinked target: replace the file it points to
    tmp = real.with_name(f".{real.name}.{uuid.uuid4().hex[:12]}.tmp")
    if real.is_dir():
        raise InputError(f"{target}: is a folder; name a file to write")
    created = False
    try:
        if real.exists() and not stat.S_ISREG(real.stat().st_mode):
            with real.open("wb") as fh:
                yield fh
            return
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:  # a file where a folder must be: mkdir's message misleads
            raise InputError(f"cannot write {target}: {exc.filename} is a file, not a folder") from None
        # os.open with 0o666 gives the file the permissions the umask allows (mkstemp: always 0600)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        created = True
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(tmp, real)
    except BaseException as exc:
        if created:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            where = "" if exc.filename in (None, str(tmp), str(real), str(target)) else f"{exc.filename}: "
            raise InputError(f"cannot write {target}: {where}{exc.strerror or exc}") from None
        raise
