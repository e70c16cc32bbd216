"""Run the reference mapper over files: N-Triples out, quarantine records out, counts that add up."""

from __future__ import annotations

import io
from collections import Counter
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


def map_to_files(inputs: Iterable[str], out: Path, quarantine: Path, *, family: str = "auto") -> Counts:
    """Write the distinct triples of all inputs to ``out`` (N-Triples, sorted) and bad lines to ``quarantine``."""
    counts = Counts()
    by_source: dict[str, set[Triple]] = {}
    events: set = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    quarantine.parent.mkdir(parents=True, exist_ok=True)
    with quarantine.open("w", encoding="utf-8") as qf:
        for _source, _line, result in map_inputs(inputs, family=family):
            counts.lines_read += 1
            if result.blank:
                counts.blank += 1
            elif result.quarantine is not None:
                counts.quarantined[result.quarantine.reason] += 1
                qf.write(result.quarantine.to_json() + "\n")
            else:
                counts.mapped += 1
                by_source.setdefault(result.family, set()).update(result.triples)
                events.update(t.subject for t in result.triples
                              if t.predicate == RDF_TYPE and t.object == CHANGE_EVENT)
    everything: set[Triple] = set()
    for fam, triples in by_source.items():
        counts.triples[fam] = len(triples)
        everything |= triples
    counts.events = len(events)
    out.write_bytes(ntriples(everything))
    return counts


def ntriples(triples: Iterable[Triple]) -> bytes:
    """N-Triples, one triple a line, sorted so equal sets give equal bytes."""
    data = serialize(triples, format=RdfFormat.N_TRIPLES) or b""
    return b"".join(sorted(set(data.splitlines(keepends=True))))
