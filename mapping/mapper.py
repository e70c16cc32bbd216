"""The reference mapper: one line in, triples or one quarantine record out. Stateless and pure.

>>> r = map_line(b'{"eventType": "entityCreated", "entityType": "table", "entityId": "t1", "timestamp": 0}')
>>> r.family, len(r.triples) > 0, r.quarantine, r.day
('openmetadata', True, None, '1970-01-01')
>>> map_line(b'{"eventType": "nope", "entityType": "table", "entityId": "t1", "timestamp": 0}').quarantine.reason
'UNKNOWN_EVENT_TYPE'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pyoxigraph import Triple

from changeprov.errors import InputError
from changeprov.mapping.datahub import map_ece, map_mcl, map_platform
from changeprov.mapping.decode import Quarantine, Rejected, decode_line
from changeprov.mapping.emit import Graph
from changeprov.mapping.openmetadata import map_openmetadata
from changeprov.mapping.vocab import om, rules

MAPPERS: dict[str, Callable[[dict], Graph]] = {
    "openmetadata": map_openmetadata,
    "openmetadata-legacy": lambda obj: map_openmetadata(obj, legacy=True),
    "datahub-mcl": map_mcl,
    "datahub-ece": map_ece,
    "datahub-platform": map_platform,
}
FAMILIES = tuple(rules()["detectOrder"])
TIMESTAMP = om("timestamp")


@dataclass(frozen=True)
class Result:
    """What one input line became: triples of a family, a quarantine record, or nothing (blank)."""

    family: str | None
    triples: tuple[Triple, ...] = ()
    quarantine: Quarantine | None = None

    @property
    def blank(self) -> bool:
        return self.family is None and self.quarantine is None

    @property
    def day(self) -> str | None:
        """The UTC day (YYYY-MM-DD) of the line's event, the export's date partition: the date part of
        the ChangeEvent's om:timestamp (every mapped line has exactly one, always in UTC)."""
        for t in self.triples:
            if t.predicate == TIMESTAMP:
                return t.object.value[:10]
        return None


def detect_family(obj: dict) -> str | None:
    """The first family (in rules.json `detectOrder`) whose detection keys are all present."""
    table = rules()["families"]
    for family in FAMILIES:
        if all(key in obj for key in table[family]["detect"]):
            return family
    return None


def nearest_family(obj: dict) -> str:
    """For an event no family matches: the first family (in `detectOrder`) that lacks only one of its
    detection keys, which is most likely the field that was lost (ut10a #13), or "".

    >>> nearest_family({"aspectName": "status", "changeType": "UPSERT", "aspect": {}})
    '; nearest: datahub-mcl, which also needs entityUrn'
    >>> nearest_family({"foo": 1})
    ''
    """
    table = rules()["families"]
    for family in FAMILIES:
        missing = [key for key in table[family]["detect"] if key not in obj]
        if len(missing) == 1:
            return f"; nearest: {family}, which also needs {missing[0]}"
    return ""


def map_event(obj: dict, *, family: str = "auto") -> tuple[str, list[Triple]]:
    """Map one decoded event; raises Rejected for events that must be quarantined."""
    detected = detect_family(obj)
    if family != "auto":
        if family not in MAPPERS:  # the caller's argument, not the line: an error, not a quarantine
            raise InputError(f"unknown family {family!r}; choose from auto, {', '.join(MAPPERS)}")
        if detected != family:
            raise Rejected("UNKNOWN_FAMILY",
                           f"not an event of the {family} family (looks like {detected or 'no known family'})")
    if detected is None:
        raise Rejected("UNKNOWN_FAMILY", "no event family matches the keys "
                       + ", ".join(sorted(map(str, obj))[:12]) + nearest_family(obj))
    return detected, MAPPERS[detected](obj).triples


def map_line(raw: bytes | str, *, source: str = "-", line: int = 0, family: str = "auto") -> Result:
    """Decode and map one input line (its bytes, or its text); never raises on bad input. One line at a
    time knows no other line: ``map_to_files`` also quarantines a second event with a seen id. An
    argument of the wrong kind (``raw`` not text or bytes, an unknown ``family``) is an InputError.

    >>> map_line(b'{"id": 1}').quarantine.reason, map_line(b"").blank
    ('UNKNOWN_FAMILY', True)
    >>> map_line(None)
    Traceback (most recent call last):
    ...
    changeprov.errors.InputError: map_line takes one line as bytes or str, got NoneType
    """
    if not isinstance(raw, (bytes, bytearray, memoryview, str)):  # rv45d #9: an AttributeError on .strip
        raise InputError(f"map_line takes one line as bytes or str, got {type(raw).__name__}")
    if family != "auto" and family not in MAPPERS:  # also for a blank line, as for any other
        raise InputError(f"unknown family {family!r}; choose from auto, {', '.join(MAPPERS)}")
    raw = bytes(raw) if not isinstance(raw, (bytes, str)) else raw
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if not raw.strip(b" \t\r\n"):
        return Result(None)
    try:
        obj = decode_line(raw)
        fam, triples = map_event(obj, family=family)
    except Rejected as exc:
        return Result(None, quarantine=Quarantine(exc.reason, exc.detail, source, line,
                                                  raw.decode("utf-8", "backslashreplace")))
    except RecursionError:
        return Result(None, quarantine=Quarantine("TOO_LARGE", "nesting too deep", source, line,
                                                  raw.decode("utf-8", "backslashreplace")))
    return Result(fam, tuple(triples))
