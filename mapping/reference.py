"""Run the reference mapper over files: N-Triples out, quarantine records out, counts that add up."""

from __future__ import annotations

import heapq
import tempfile
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from pyoxigraph import RdfFormat, Triple, serialize

from changeprov.mapping.inputs import display_name, expand_inputs, read_lines
from changeprov.mapping.mapper import Result, map_line
from changeprov.mapping.vocab import RDF_TYPE, om

CHANGE_EVENT = om("ChangeEvent")


@dataclass
class Counts:
    """The accounting every run reports: lines read = blank + mapped + quarantined."""

    lines_read: int = 0
    blank: int = 0
    mapped: int = 0
    quarantined: Counter = field(default_factory=Counter)
    triples: Counter = field(default_factory=Counter)  # by source family
    events: int = 0  # distinct event IRIs

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
    for path in expand_inputs(inputs):
        source = display_name(path)
        for number, raw in read_lines(path):
            yield source, number, map_line(raw, source=source, line=number, family=family)


#: lines per sorted run of the reference mapper's external sort (~200 MB)
RUN_LINES = 1_000_000


def map_to_files(inputs: Iterable[str], out: Path, quarantine: Path, *, family: str = "auto",
                 run_lines: int = RUN_LINES) -> Counts:
    """Write the distinct triples of all inputs to ``out`` (N-Triples, sorted) and bad lines to ``quarantine``.

    Memory stays bounded: each family's N-Triples lines are sorted in runs of ``run_lines`` written to
    temporary files next to ``out``, then merged (the external sort a log of any size needs; holding
    every triple as a term object took 7.7 GiB for 100k events)."""
    counts = Counts()
    runs: dict[str, _SortedRuns] = {}
    events: set[str] = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    quarantine.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".changeprov-map-", dir=out.parent) as tmp, \
            quarantine.open("w", encoding="utf-8") as qf:
        for _source, _line, result in map_inputs(inputs, family=family):
            counts.lines_read += 1
            if result.blank:
                counts.blank += 1
            elif result.quarantine is not None:
                counts.quarantined[result.quarantine.reason] += 1
                qf.write(result.quarantine.to_json() + "\n")
            else:
                counts.mapped += 1
                if result.family not in runs:
                    runs[result.family] = _SortedRuns(Path(tmp) / f"run-{len(runs)}", run_lines)
                    counts.triples[result.family] = 0
                runs[result.family].add(serialize(result.triples, format=RdfFormat.N_TRIPLES) or b"")
                events.update(t.subject.value for t in result.triples
                              if t.predicate == RDF_TYPE and t.object == CHANGE_EVENT)
        counted = {fam: _counted(r.unique(), counts.triples, fam) for fam, r in sorted(runs.items())}
        tmp_out = out.with_name(out.name + ".tmp")
        with tmp_out.open("wb") as f:
            f.writelines(_merged_unique(counted.values()))  # a triple of several families once
        tmp_out.replace(out)
    counts.events = len(events)
    return counts


class _SortedRuns:
    """N-Triples lines collected in sorted, deduplicated runs on disk; ``unique()`` merges them."""

    def __init__(self, prefix: Path, run_lines: int) -> None:
        self.prefix, self.run_lines = prefix, run_lines
        self.lines: list[bytes] = []
        self.files: list[Path] = []

    def add(self, data: bytes) -> None:
        self.lines += data.splitlines(keepends=True)
        if len(self.lines) >= self.run_lines:
            self._spill()

    def _spill(self) -> None:
        path = self.prefix.with_name(f"{self.prefix.name}-{len(self.files):05d}.nt")
        path.write_bytes(b"".join(sorted(set(self.lines))))
        self.files.append(path)
        self.lines = []

    def unique(self) -> Iterator[bytes]:
        if self.files and self.lines:
            self._spill()
        if not self.files:
            yield from sorted(set(self.lines))
            return
        with ExitStack() as stack:
            yield from _merged_unique([stack.enter_context(p.open("rb")) for p in self.files])


def _merged_unique(sorted_streams: Iterable[Iterable[bytes]]) -> Iterator[bytes]:
    """The lines of sorted streams, merged in order, each distinct line once."""
    previous = None
    for line in heapq.merge(*sorted_streams):
        if line != previous:
            yield line
            previous = line


def _counted(lines: Iterator[bytes], counter: Counter, key: str) -> Iterator[bytes]:
    for line in lines:
        counter[key] += 1
        yield line


def ntriples(triples: Iterable[Triple]) -> bytes:
    """N-Triples, one triple a line, sorted so equal sets give equal bytes."""
    data = serialize(triples, format=RdfFormat.N_TRIPLES) or b""
    return b"".join(sorted(set(data.splitlines(keepends=True))))
