"""Quarantine details: the export words each reason as the reference mapper does (ut10a #12, #13).

Corpus events with one value replaced by a value of every JSON kind, one per line: each line is
quarantined (or mapped) the same way by both mappers, with the same detail, except where a JSON
parser's own message is quoted (Python's names a position, Spark's does not)."""

from __future__ import annotations

import json
import random
import re
import uuid
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from changeprov.mapping.mapper import map_line
from changeprov.spark.decode import decode
from changeprov.spark.transform import map_events

pytestmark = pytest.mark.spark

KINDS = (42, 1.5, "s", [], None, True)
#: the export's words for a line or embedded text no JSON parser reads: the reference quotes
#: Python's parser, which names a position
PARSER_WORDED = ("not one valid JSON value", "not valid JSON")
#: identifiers no IRI can hold, each with the reference's own words
IDENTIFIERS = ("tab\there", "caf\u00e9\u0085", "https://not.a.urn/", "al\U0010ffffice")  # U+10FFFF: ut21 #6


def _replaced(obj: dict, path: tuple, value) -> dict:
    out = json.loads(json.dumps(obj))
    cur = out
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = value
    return out


def _paths(value, prefix=(), depth=3):
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from _paths(item, prefix + (key,), depth - 1)
    elif isinstance(value, list) and value:
        yield from _paths(value[0], prefix + (0,), depth)


def mutations(corpus: Path) -> list[bytes]:
    """An event per corpus file (two of the OpenMetadata one), each value down to three levels replaced by every JSON kind and
    by unusable identifiers; inside DataHub aspect values (JSON text) too. Fresh event ids, so that
    no line is only a duplicate of another."""
    rng = random.Random(7)
    events = []
    for path in sorted(corpus.glob("*/*.jsonl")):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        events += rng.sample(lines, 2 if "openmetadata" in path.parts else 1)
        # member lists inside aspect values (a tag list given as a number is named where it is)
        events += [next(x for x in lines if x.get("aspectName") == name) for name in ("globalTags", "ownership")
                   if any(x.get("aspectName") == name for x in lines)]
    variants = []
    for event in events:
        for path in _paths(event):
            variants += [_replaced(event, path, v) for v in (*KINDS, *IDENTIFIERS)]
        value = dict(_texts(event)).get(("aspect", "value"))
        if value is not None:
            variants += [_changed(event, ("aspect", "value"), {path: v})
                         for path in list(_paths(value, depth=4))[:10] for v in (*KINDS, *IDENTIFIERS)]
    variants += _two_bad_values(corpus, rng)
    # an unknown event type is named, up to 200 characters
    variants += [_replaced(event, (key,), "A" * 300) for event in events
                 for key in ("eventType", "changeType", "category") if key in event]
    # ... as given, also with the characters the export marks its own details with (ut21 #4)
    variants += [_replaced(event, (key,), text) for event in events for key in ("eventType", "changeType", "category")
                 if key in event for text in ("upd\u001cated", "upd\u001dated", "upd\u001eated", "\u001d\u001a")]
    # versions the graph cannot hold: too large, too precise (written as JSON numbers, not floats)
    variants += [_replaced(event, (key,), value) for event in events for key in ("currentVersion", "previousVersion")
                 if key in event for value in (10 ** 15, -(10 ** 16), "@0.1234567890123456", "@2.5e15")]
    # ... and in the keys of a line no family matches (rv36 #3)
    variants += [{"a\u001eb": 1, "hello": "x"}, {"k\u001dz": 1}, {"k\u001cz": 1}, {"zz\u001finteger": 1}]
    variants += _schema_variants()
    # a number out of a double's range in a list of other kinds (ut21 #8): the aspect is not read
    variants += [_replaced(event, ("aspect", "value"), '{"tags": [{"tag": 1e400}, {"tag": "urn:li:tag:keep"}]}')
                 for event in events if event.get("aspectName") == "globalTags"]
    out = []
    for i, variant in enumerate(variants):
        if isinstance(variant.get("id"), str) and len(variant["id"]) == 36:
            variant["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, str(i)))
        # "@…" stands for a JSON number written as is
        out.append(re.sub(r'"@([-0-9.e]+)"', r"\1", json.dumps(variant)).encode("utf-8"))
    return out


def _two_bad_values(corpus: Path, rng: random.Random) -> list[dict]:
    """Two values of an event (or of a JSON text in it) replaced at once, each by a value that alone
    quarantines the line: the detail names the one the reference checks first (rv49 AS2/DH3/SP1:
    swapping two checks of a Spark mapper passed every test). On an event of each shape in the
    corpus, and with one member unusable in both the previous and the new aspect value."""
    def pairs(paths: list[tuple], k: int) -> list[tuple]:
        # a path comes before the paths under it, so only the first of a pair can hold the second
        every = [(a, b) for i, a in enumerate(paths) for b in paths[i + 1:] if b[:len(a)] != a]
        return rng.sample(every, min(k, len(every)))

    tab, not_urn = "tab\there", "https://not.a.urn/"
    out = []
    for event in _one_per_shape(corpus):
        texts = dict(_texts(event))
        for where, value in texts.items():
            bad = {p: [v for v in ([], 42, tab) if _reason(_changed(event, where, {p: v}))]
                   for p in _paths(value, depth=4)}
            bad = {p: values for p, values in bad.items() if values}
            out += [_changed(event, where, {a: rng.choice(bad[a]), b: rng.choice(bad[b])}) for a, b in pairs(list(bad), 12)]
            named = [p for p, values in bad.items() if tab in values]  # two identifier checks
            out += [_changed(event, where, {a: tab, b: not_urn}) for a, b in pairs(named, 6)]
            if where == ("aspect", "value") and ("previousAspectValue", "value") in texts:
                out += [_changed(_changed(event, where, {p: tab}), ("previousAspectValue", "value"), {p: not_urn})
                        for p in rng.sample(named, min(3, len(named)))]
    return out


def _texts(event: dict) -> list[tuple[tuple, object]]:
    """The event itself at (), and each JSON text it carries at its path, parsed."""
    out = [((), event)]
    for key in ("aspect", "previousAspectValue", "payload"):
        holder = event.get(key)
        if isinstance(holder, dict) and isinstance(holder.get("value"), str):
            out.append(((key, "value"), json.loads(holder["value"])))
    return out


def _changed(event: dict, where: tuple, values: dict) -> dict:
    """``event`` with the values at the paths of ``values`` replaced, inside the JSON text at ``where``
    (() for the event itself)."""
    target = json.loads(event[where[0]][where[1]]) if where else event
    for path, value in values.items():
        target = _replaced(target, path, value)
    return _replaced(event, where, json.dumps(target)) if where else target


def _reason(event: dict) -> str | None:
    q = map_line(json.dumps(event).encode("utf-8")).quarantine
    return q.reason if q else None


def _one_per_shape(corpus: Path) -> list[dict]:
    """The first event of each kind in each corpus file (event type, entity type, aspect, category)."""
    seen, out = set(), []
    for path in sorted(corpus.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                event = json.loads(line)
                inner = dict(_texts(event)).get(("payload", "value"), {})
                key = (path.name, *(str(event.get(k)) for k in ("eventType", "entityType", "aspectName", "name", "category")),
                       *(str(inner.get(k)) for k in ("category", "relationshipType")))
                if key not in seen:
                    seen.add(key)
                    out.append(event)
    return out


def _schema_variants() -> list[dict]:
    """Schema fields and their tags and terms that no IRI can hold, before or after, in both aspects
    with column tags: the detail names the value and the field the reference names (ut21 #5)."""
    def field(path: str, tags=(), terms=()) -> dict:
        out = {"fieldPath": path, "nativeDataType": "int", "type": {"type": {}}}
        if tags:
            out["globalTags"] = {"tags": [{"tag": t} for t in tags]}
        if terms:
            out["glossaryTerms"] = {"terms": [{"urn": u} for u in terms],
                                    "auditStamp": {"time": 0, "actor": "urn:li:corpuser:a"}}
        return out

    ok, bad, worse = "urn:li:tag:a", "tab\there", "https://not.a.urn/"
    cases = [([field("c", tags=[bad])], [field("c", tags=[ok])]),  # only the previous value is bad
             ([field("c")], [field("c", terms=["urn:li:glossaryTerm:g", worse, bad])]),  # the first bad one
             ([field("b\tq")], [field("c\nz")]),  # an added and a removed field: the added one
             ([], [field("c\nz", tags=[ok])]),  # a column whose tags changed
             ([field("c", tags=[bad])], [field("c", tags=[bad])]),  # unchanged members are not looked at
             ([], [field("z", tags=[worse]), field("b", terms=[""]), field("b", tags=[bad])]),  # by fieldPath
             (None, [field("c", tags=[ok, ""])])]
    out = []
    for aspect, key in (("schemaMetadata", "fields"), ("editableSchemaMetadata", "editableSchemaFieldInfo")):
        for before, after in cases:
            event = {"entityType": "dataset", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)",
                     "changeType": "UPSERT", "aspectName": aspect,
                     "aspect": {"value": json.dumps({key: after}), "contentType": "application/json"},
                     "systemMetadata": {"lastObserved": 1704067200001, "version": "2"},
                     "created": {"time": 1704067200001 + len(out), "actor": "urn:li:corpuser:a"}}
            if before is not None:
                event["previousAspectValue"] = {"value": json.dumps({key: before}), "contentType": "application/json"}
            out.append(event)
    return out


def spark_details(spark, lines: list[bytes], tmp_path: Path) -> list[tuple]:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for raw in lines))
    df = spark.read.text(str(path)).withColumn("_n", F.monotonically_increasing_id())
    rows = df.transform(decode).transform(map_events).orderBy("_n").select("reason", "detail").collect()
    return [(r.reason, r.detail) for r in rows]


def reference_details(lines: list[bytes]) -> list[tuple]:
    out = []
    for raw in lines:
        q = map_line(raw).quarantine
        out.append((q.reason, q.detail) if q else (None, None))
    return out


def test_the_export_words_every_quarantine_reason_as_the_reference_does(spark, shared_dir, tmp_path):
    lines = mutations(shared_dir / "corpus")
    got, want = spark_details(spark, lines, tmp_path), reference_details(lines)
    reasons = {reason for reason, _ in want if reason}
    # the probe reaches the checks it is about
    assert {"BAD_TYPE", "MISSING_FIELD", "BAD_IDENTIFIER", "UNKNOWN_EVENT_TYPE"} <= reasons
    details = " | ".join(d for _, d in want if d)
    assert "version out of range" in details and "more than 15 fraction digits" in details
    assert "expected an array, got an integer" in details and "'" + "A" * 200 + "' is not a known" in details
    for words in ("got an integer", "got a number", "got an array", "got a boolean", "expected an object at '",
                  "forbidden code point U+0009 at position 3", "forbidden code point U+0085 at position 4",
                  "forbidden code point U+10FFFF at position 2", "'upd\u001cated' is not a",
                  "no event family matches the keys k\u001cz",
                  "not a URN (must start", "previousAspectValue.value.fields.globalTags.tags.*.tag: forbidden",
                  "aspect.value.editableSchemaFieldInfo.glossaryTerms.terms.*.urn: not a URN",
                  "aspect.value.fields.fieldPath: forbidden code point U+000A",
                  "aspect.value.editableSchemaFieldInfo.fieldPath: forbidden code point U+000A"):
        assert words in details
    assert len(got) == len(want) == len(lines)  # zip below would stop at a shorter answer (rv45d #4)
    diffs = [f"line {i}: export {g}\n{'':>{len(str(i)) + 7}}   map {w}\n    {raw[:200]!r}"
             for i, (raw, g, w) in enumerate(zip(lines, got, want), start=1)
             if g[0] != w[0] or (g[1] != w[1] and not (g[1] or "").endswith(PARSER_WORDED))]
    assert not diffs, f"{len(diffs)} of {len(lines)} lines differ:\n" + "\n".join(diffs[:15])


@pytest.mark.parametrize("family", ["openmetadata", "datahub-mcl"])
def test_a_forced_family_words_the_lines_of_others_as_the_reference_does(spark, shared_dir, tmp_path, family):
    """`export --family X` quarantines the lines of other families as `map --family X` does, in the same
    words (ut40c #8: "not a openmetadata event")."""
    from changeprov.spark.job import map_lines_for

    lines = [(shared_dir / "corpus" / f).read_bytes().splitlines()[0]
             for f in ("openmetadata/change_events.jsonl", "datahub/metadata_change_log.jsonl")] + [b'{"hello": 1}']
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for raw in lines))
    df = spark.read.text(str(path)).withColumn("_n", F.monotonically_increasing_id())
    got = [(r.reason, r.detail) for r in
           df.transform(map_lines_for(family)).orderBy("_n").select("reason", "detail").collect()]
    want = []
    for raw in lines:
        q = map_line(raw, family=family).quarantine
        want.append((q.reason, q.detail) if q else (None, None))
    assert got == want and sum(w[0] == "UNKNOWN_FAMILY" for w in want) == 2
    assert f"not an event of the {family} family (looks like " in " ".join(d for _, d in want if d)
