"""Run the reference mapper over files: N-Triples out, quarantine records out, counts that add up."""

from __future__ import annotations

import hashlib
import heapq
import os
import tempfile
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from pyoxigraph import RdfFormat, Triple, serialize

from changeprov.errors import InputError
from changeprov.mapping.decode import Quarantine
from changeprov.mapping.inputs import check_outputs, display_name, expand_inputs, read_lines, written_on_success
from changeprov.mapping.mapper import MAPPERS, Result, map_line
from changeprov.mapping.vocab import RDF_TYPE, om

CHANGE_EVENT = om("ChangeEvent")


@dataclass
class Counts:
    """The accounting every run reports: lines read = blank + mapped + quarantined."""

    lines_read: int = 0
    blank: int = 0
    mapped: int = 0
    quarantined: Counter = field(default_factory=Counter)
    triples: Counter = field(default_factory=Counter)  # distinct triples by attributed family (map_to_files)
    events: int = 0  # distinct event IRIs
    days: set = field(default_factory=set)  # the UTC days of the triples written (the export's date= partitions)

    @property
    def quarantined_total(self) -> int:
        return sum(self.quarantined.values())

    def balanced(self) -> bool:
        return self.lines_read == self.blank + self.mapped + self.quarantined_total

    def as_dict(self) -> dict:
        return {"lines_read": self.lines_read, "blank": self.blank, "mapped": self.mapped,
                "quarantined": self.quarantined_total, "quarantined_by_reason": dict(sorted(self.quarantined.items())),
                "triples_by_source": dict(sorted(self.triples.items())), "triples": sum(self.triples.values()),
                "distinct_events": self.events}


def map_inputs(inputs: Iterable[str], *, family: str = "auto") -> Iterator[tuple[str, int, Result]]:
    """(source file, line number, result) for every line of every input."""
    for source, number, raw in _lines(expand_inputs(inputs)):
        yield source, number, map_line(raw, source=source, line=number, family=family)


#: lines per sorted run of the reference mapper's external sort (~200 MB)
RUN_LINES = 1_000_000

#: the line that types an event: counted once per distinct event, as the export counts them
_EVENT_LINE_END = f" <{RDF_TYPE.value}> <{CHANGE_EVENT.value}> .\n".encode()


def map_to_files(inputs: Iterable[str], out: str | Path, quarantine: str | Path, *, family: str = "auto",
                 run_lines: int = RUN_LINES) -> Counts:
    """Write the distinct triples of all inputs to ``out`` (N-Triples, sorted) and bad lines to ``quarantine``.

    Each distinct triple is written once and counted for one family, by the export's rule
    (spark/job.py): the family of the earliest (UTC day, family by name) where it occurs; so
    ``triples`` is the number of lines of ``out`` and ``triples_by_source`` equals the export's.
    Outputs that are inputs, or one file twice, are refused before anything is written; both files
    appear only when the whole run succeeds.

    Memory stays bounded: N-Triples lines are sorted in runs of ``run_lines`` written to temporary
    files next to ``out``, then merged (the external sort a log of any size needs; holding every
    triple as a term object took 7.7 GiB for 100k events)."""
    if family != "auto" and family not in MAPPERS:  # before anything is read (mq1 #4)
        raise InputError(f"unknown family {family!r}; choose from auto, {', '.join(MAPPERS)}")
    out, quarantine = Path(out), Path(quarantine)
    files = expand_inputs(inputs)
    check_outputs([out, quarantine], files)
    counts = Counts()
    real = Path(os.path.realpath(out))
    beside = real.parent if real.is_file() or not real.exists() else None  # --out /dev/null: the system's
    # an OSError writing the runs is reported as one writing ``out``, naming the run file
    with written_on_success(quarantine) as qf, written_on_success(out) as of, \
            tempfile.TemporaryDirectory(prefix=".changeprov-map-", dir=beside) as tmp:
        runs = _SortedRuns(Path(tmp) / "run", run_lines)
        first = _FirstSeen()
        for source, number, raw in _lines(files):
            result = map_line(raw, source=source, line=number, family=family)
            counts.lines_read += 1
            data = b""
            if result.quarantine is None and not result.blank:
                data = serialize(result.triples, format=RdfFormat.N_TRIPLES) or b""
                detail = first.conflict(data, source, number)
                if detail:
                    result = Result(None, quarantine=Quarantine(
                        "DUPLICATE_EVENT", detail, source, number, raw.decode("utf-8", "backslashreplace")))
            if result.blank:
                counts.blank += 1
            elif result.quarantine is not None:
                counts.quarantined[result.quarantine.reason] += 1
                qf.write((result.quarantine.to_json() + "\n").encode("utf-8"))
            else:
                counts.mapped += 1
                runs.add(data, f"{result.day}{result.family}")
        for line, tag in runs.unique():
            counts.triples[tag[10:]] += 1  # tag: YYYY-MM-DD + family
            counts.days.add(tag[:10])
            counts.events += line.endswith(_EVENT_LINE_END)
            of.write(line)
    return counts


class _FirstSeen:
    """Each event's first mapped line: where it was, and a digest of its set of triples.

    An event id seen again with other triples is a conflict (a replay with edits, two producers
    sharing ids): merging both lines would make one event with two times, entities or users, so the
    later line is quarantined and the first kept — the order in which the inputs are read (files
    sorted, lines in order), which the export reproduces. The same triples again are a plain
    duplicate and map as before. Memory: one entry per distinct event (~300 bytes in CPython)."""

    def __init__(self) -> None:
        self.events: dict[bytes, tuple[bytes, str, int]] = {}

    def conflict(self, data: bytes, source: str, line: int) -> str | None:
        """The quarantine detail if ``data`` (one line's N-Triples) conflicts with its event's first line."""
        lines = set(data.splitlines(keepends=True))
        event = next((t.split(b" ", 1)[0] for t in lines if t.endswith(_EVENT_LINE_END)), None)
        if event is None:
            return None
        digest = hashlib.blake2b(b"".join(sorted(lines)), digest_size=16).digest()
        seen = self.events.setdefault(event, (digest, source, line))
        if seen[0] == digest:
            return None
        return duplicate_detail(seen[1], seen[2])


#: DUPLICATE_EVENT's detail; ``{where}`` is ``source:line`` of the event's first line (the export's too)
DUPLICATE_DETAIL = "the same event id with different content was first seen at {where}; that line is kept"


def duplicate_detail(source: str, line: int) -> str:
    return DUPLICATE_DETAIL.format(where=f"{source}:{line}")


def _lines(files: Iterable[Path]) -> Iterator[tuple[str, int, bytes]]:
    for path in files:
        source = display_name(path)
        for number, raw in read_lines(path):
            yield source, number, raw


class _SortedRuns:
    """N-Triples lines, each with the least tag (``YYYY-MM-DD`` + family: the export's partition
    order) it was added with, collected in sorted runs on disk; ``unique()`` merges them."""

    def __init__(self, prefix: Path, run_lines: int) -> None:
        self.prefix, self.run_lines = prefix, run_lines
        self.lines: dict[bytes, str] = {}
        self.files: list[Path] = []

    def add(self, data: bytes, tag: str) -> None:
        new = dict.fromkeys(data.splitlines(keepends=True), tag)
        for line in new.keys() & self.lines.keys():  # set operations in C: most lines are new
            new[line] = min(tag, self.lines[line])
        self.lines.update(new)
        if len(self.lines) >= self.run_lines:
            self._spill()

    def _spill(self) -> None:
        # two lines a record: the N-Triples line (it holds no raw newline), then its tag
        path = self.prefix.with_name(f"{self.prefix.name}-{len(self.files):05d}.nt")
        with path.open("wb") as fh:  # written record by record: one joined copy doubled the peak memory
            for line in sorted(self.lines):
                fh.write(line)
                fh.write(self.lines[line].encode() + b"\n")
        self.files.append(path)
        self.lines = {}

    def unique(self) -> Iterator[tuple[bytes, str]]:
        """(line, least tag) for every distinct line, in line order."""
        if self.files and self.lines:
            self._spill()
        if not self.files:
            yield from sorted(self.lines.items())
            return
        with ExitStack() as stack:
            streams = [_records(stack.enter_context(p.open("rb"))) for p in self.files]
            previous = None
            for line, tag in heapq.merge(*streams):  # a line's first record has its least tag
                if line != previous:
                    yield line, tag
                    previous = line


def _records(fh) -> Iterator[tuple[bytes, str]]:
    for line, tag in zip(fh, fh):
        yield line, tag[:-1].decode()


def ntriples(triples: Iterable[Triple]) -> bytes:
    """N-Triples, one triple a line, sorted so equal sets give equal bytes."""
    data = serialize(triples, format=RdfFormat.N_TRIPLES) or b""
    return b"".join(sorted(set(data.splitlines(keepends=True))))
