"""Hostile input: for any line the mapper returns valid N-Triples or exactly one quarantine record."""

from __future__ import annotations

import json

import pytest

from changeprov.mapping.decode import REASONS
from changeprov.mapping.mapper import map_line
from changeprov.mapping.reference import ntriples
from conftest import load_shared_module


class Quarantined(Exception):
    pass


def mapper(raw: bytes) -> bytes:
    result = map_line(raw, source="fuzz", line=1)  # must never raise
    if result.quarantine is not None:
        assert result.quarantine.reason in REASONS, result.quarantine
        assert not result.triples
        raise Quarantined(result.quarantine.reason)
    return ntriples(result.triples)


def test_hostile_events_never_crash_and_never_emit_bad_ntriples():
    hostile = load_shared_module("conformance/fuzz/hostile_events.py", "hostile_events")
    hostile.mapper_property(mapper, quarantine=(Quarantined,), max_examples=250)()


@pytest.mark.parametrize("case", sorted(
    ["lone_high_surrogate_escape", "lone_low_surrogate_escape", "reversed_surrogate_pair", "duplicate_keys",
     "timestamp_1e309", "timestamp_nan_literal", "timestamp_5000_digits", "timestamp_float",
     "timestamp_string", "deep_nesting_100k", "trailing_garbage", "two_objects_one_line", "json_null",
     "top_level_array", "huge_string_20MB"]))
def test_named_hostile_cases_are_quarantined(case):
    hostile = load_shared_module("conformance/fuzz/hostile_events.py", "hostile_events")
    raw = hostile.RAW_CASES[case].encode("utf-8", "surrogatepass")
    result = map_line(raw, source="hostile", line=7)
    assert result.quarantine is not None, case
    assert result.quarantine.line == 7 and result.quarantine.source == "hostile"


@pytest.mark.parametrize("case", ["utf8_bom", "invalid_utf8", "utf16_le", "cesu8_surrogate_bytes"])
def test_bad_bytes_are_quarantined_as_encoding_errors(case):
    hostile = load_shared_module("conformance/fuzz/hostile_events.py", "hostile_events")
    result = map_line(hostile.RAW_BYTES_CASES[case])
    assert result.quarantine is not None and result.quarantine.reason in ("BAD_ENCODING", "MALFORMED_JSON")


@pytest.mark.parametrize("case", ["valid_surrogate_pair", "nul_escape", "u2028_raw_in_string"])
def test_odd_but_valid_strings_map(case, check_ntriples):
    hostile = load_shared_module("conformance/fuzz/hostile_events.py", "hostile_events")
    result = map_line(hostile.RAW_CASES[case].encode("utf-8", "surrogatepass"))
    assert result.quarantine is None, result.quarantine
    assert check_ntriples.accept(ntriples(result.triples), "nt")["ok"]


@pytest.mark.parametrize("line, reason, field", [
    (b'{"eventType":"entityCreated","entityType":"table","timestamp":1}', "MISSING_FIELD", "entityId"),
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":"x"}', "BAD_TYPE", "timestamp"),
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":-5}', "BAD_TIMESTAMP", "timestamp"),
    (b'{"eventType":"entityExploded","entityType":"table","entityId":"a","timestamp":1}', "UNKNOWN_EVENT_TYPE", "eventType"),
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a\\u0001b","timestamp":1}', "BAD_IDENTIFIER", "entityId"),
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":1,"entity":"{oops"}', "BAD_ASPECT_JSON", "entity"),
    # ut46a #1: a creation whose state was a number or JSON in JSON lost its columns and owners unseen
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":1,"entity":"42"}', "BAD_ASPECT_JSON",
     "entity: expected an object, got an integer"),
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":1,"entity":"\\"{}\\""}',
     "BAD_ASPECT_JSON", "entity: expected an object, got a string"),
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":1,"currentVersion":"0.1"}', "BAD_TYPE", "currentVersion"),
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","aspectName":"status","changeType":"UPSERT",'
     b'"created":{"time":1,"actor":"urn:li:corpuser:a"},"aspect":{"value":"{bad","contentType":"application/json"}}',
     "BAD_ASPECT_JSON", "aspect.value"),
    (b'{"entityUrn":"not a urn","entityType":"dataset","aspectName":"status","changeType":"UPSERT",'
     b'"created":{"time":1},"aspect":{"value":"{}"}}', "BAD_IDENTIFIER", "entityUrn"),
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","aspectName":"status","changeType":"MERGE",'
     b'"created":{"time":1},"aspect":{"value":"{}"}}', "UNKNOWN_EVENT_TYPE", "changeType"),
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","category":"TAG","operation":"EXPLODE",'
     b'"auditStamp":{"time":1,"actor":"urn:li:corpuser:a"}}', "UNKNOWN_EVENT_TYPE", "operation"),
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","category":"TAG","operation":"ADD"}',
     "MISSING_FIELD", "auditStamp.time"),
    # ut46c #1: a tag or owner that is no URN, or a tag ADD naming none, was a change of nothing
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","category":"TAG","operation":"ADD",'
     b'"parameters":{"tagUrn":"PII"},"auditStamp":{"time":1}}', "BAD_IDENTIFIER", "parameters.tagUrn: not a URN"),
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","category":"OWNER","operation":"REMOVE",'
     b'"modifier":"bob","auditStamp":{"time":1}}', "BAD_IDENTIFIER", "modifier: not a URN"),
    (b'{"entityUrn":"urn:li:dataset:x","entityType":"dataset","category":"TAG","operation":"ADD",'
     b'"auditStamp":{"time":1}}', "MISSING_FIELD", "parameters.tagUrn: absent, and no modifier names the member"),
    (b'{"header":{"timestampMillis":1},"name":"entityChangeEvent","payload":{"value":"[1]"}}',
     "BAD_ASPECT_JSON", "payload.value"),
    (b'{"header":{"timestampMillis":1},"name":"somethingElse","payload":{"value":"{}"}}',
     "UNKNOWN_EVENT_TYPE", "name"),
    (b'{"hello":"world"}', "UNKNOWN_FAMILY", "hello"),
    (b'[1,2]', "NOT_AN_OBJECT", ""),
    (b'{"a":', "MALFORMED_JSON", ""),
])
def test_quarantine_reason_names_the_field(line, reason, field):
    result = map_line(line, source="in.jsonl", line=3)
    assert result.quarantine is not None, f"expected {reason}, got triples"
    assert (result.quarantine.reason, result.quarantine.line) == (reason, 3), result.quarantine
    assert field in result.quarantine.detail


@pytest.mark.parametrize("timestamp, got", [("1700000000000.0", "a number"), ('"1700000000000"', "a string"),
                                            ("true", "a boolean"), ("[1]", "an array")])
def test_type_errors_name_json_types_not_python_classes(timestamp, got):
    """A user saw "expected an integer, got JsonDecimal": a Python class of ours, not a JSON type."""
    line = ('{"id":"x","eventType":"entityUpdated","entityType":"table","entityId":"e","timestamp":%s}'
            % timestamp).encode()
    result = map_line(line, source="in.jsonl", line=1)
    assert (result.quarantine.reason, result.quarantine.detail) == (
        "BAD_TYPE", f"timestamp: expected an integer, got {got}")


def test_blank_lines_are_blank_not_quarantined():
    assert map_line(b"   \t").blank and map_line(b"").blank


ASPECT_VALUES = ['{"fields": 5}', '{"fields": true}', '{"fields": [1, "x", {"fieldPath": 3}]}',
                 '{"upstreams": {"a": 1}}', '{"upstreams": [{"dataset": 7}]}', '{"tags": "urn:li:tag:x"}',
                 '{"tags": [{"tag": ["urn:li:tag:x"]}]}', '{"owners": [{"owner": "not a urn"}]}',
                 '{"fineGrainedLineages": [{"upstreams": "x", "downstreams": [1]}]}', '[]', '"text"', '42',
                 '{"inputs": [null]}', '{"removed": "yes"}', '{"timestampMillis": -1, "status": "STARTED"}']
ASPECTS = ["schemaMetadata", "upstreamLineage", "globalTags", "ownership", "glossaryTerms", "domains",
           "dataJobInputOutput", "status", "dataProcessInstanceInput", "dataProcessInstanceRunEvent"]


@pytest.mark.parametrize("aspect", ASPECTS)
@pytest.mark.parametrize("value", ASPECT_VALUES)
def test_odd_aspect_shapes_never_crash(aspect, value):
    import json

    line = json.dumps({"entityUrn": "urn:li:dataset:(urn:li:dataPlatform:x,y,PROD)", "entityType": "dataset",
                       "aspectName": aspect, "changeType": "UPSERT",
                       "created": {"time": 1, "actor": "urn:li:corpuser:a"},
                       "aspect": {"value": value, "contentType": "application/json"},
                       "previousAspectValue": {"value": value, "contentType": "application/json"}}).encode()
    result = map_line(line)  # must not raise
    assert result.quarantine is not None or result.triples


_TAGS_CHANGE = ('{"id":"t","eventType":"entityUpdated","entityType":"table","entityId":"t-1","entityFullyQualifiedName":'
                '"s.d.x.t","timestamp":1700000000000,"userName":"a","previousVersion":0.1,"currentVersion":0.2,'
                '"changeDescription":{"fieldsAdded":[],"fieldsUpdated":[{"name":"%s","oldValue":%s,"newValue":%s}],'
                '"fieldsDeleted":[]}}')


@pytest.mark.parametrize("name, old, new, detail", [
    ("tags", '"[]"', json.dumps(json.dumps(json.dumps([{"tagFQN": "PII.Sensitive"}]))),
     "changeDescription.fieldsUpdated[0].newValue: expected a list of objects, got a string"),  # JSON in JSON
    ("tags", '"[]"', '"[42]"', "changeDescription.fieldsUpdated[0].newValue[0]: expected an object, got an integer"),
    ("tags", '"[]"', '"PII.Sensitive"', "changeDescription.fieldsUpdated[0].newValue: expected a list of objects, got a string"),
    ("owners", 'true', '"[]"', "changeDescription.fieldsUpdated[0].oldValue: expected a list of objects, got a boolean"),
    ("domains", '"[]"', '"[{\\"id\\":\\"d-1\\"}, null]"',
     "changeDescription.fieldsUpdated[0].newValue[1]: expected an object, got null"),
])
def test_a_member_list_of_the_wrong_shape_is_quarantined_not_emptied(name, old, new, detail):
    """ut46a #1, ut46c #13: a tag list sent as JSON in JSON, as [42] or as a bare name mapped, and the tag
    was in no answer (tag-changes gave one row of three)."""
    result = map_line((_TAGS_CHANGE % (name, old, new)).encode(), source="in.jsonl", line=1)
    assert result.quarantine is not None, "mapped"
    assert (result.quarantine.reason, result.quarantine.detail) == ("BAD_ASPECT_JSON", detail)


@pytest.mark.parametrize("old, new", [('""', '"[]"'), ("null", '"[{\\"tagFQN\\":\\"PII.Sensitive\\"}]"'),
                                      ('"{\\"tagFQN\\":\\"A.B\\"}"', '"[]"')])
def test_an_empty_or_single_member_value_maps(old, new):
    assert map_line((_TAGS_CHANGE % ("tags", old, new)).encode(), source="in.jsonl", line=1).quarantine is None


def test_a_slash_in_an_entity_type_makes_no_second_entity_share_the_node():
    """ut46a #2, ut46c #2: (table/a, b) and (table, a/b) were one node with two types and two names."""
    base = {"id": "x", "eventType": "entityCreated", "timestamp": 1788249600000, "userName": "u",
            "previousVersion": 0.1, "currentVersion": 0.1}
    nodes = set()
    for n, (kind, ident) in enumerate((("table/a", "b"), ("table", "a/b"))):
        line = json.dumps({**base, "id": f"e-{n}", "entityType": kind, "entityId": ident, "entityFullyQualifiedName": f"s{n}"})
        triples = map_line(line.encode(), source="in.jsonl", line=n + 1).triples
        nodes |= {str(t.object) for t in triples if str(t.predicate).endswith("changeEvent/affectsEntity>")}
    assert nodes == {"<https://open-metadata.org/entity/table%2Fa/b>", "<https://open-metadata.org/entity/table/a/b>"}


def test_a_column_named_with_a_dot_is_quoted_in_its_fqn():
    """ut46a #3: column "x.y" of table t and column "y" of table t.x were one node t.x.y."""
    created = {"id": "c", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1", "timestamp": 1788249600000,
               "userName": "u", "entityFullyQualifiedName": "s.t", "previousVersion": 0.1, "currentVersion": 0.1,
               "entity": {"columns": [{"name": "x.y"}]}}
    triples = map_line(json.dumps(created).encode(), source="in.jsonl", line=1).triples
    columns = {str(t.object) for t in triples if "/om/column/" in str(t.object)}
    assert columns == {"<https://w3id.org/changeprov/id/om/column/s.t.%22x.y%22>"}


@pytest.mark.parametrize("entity, outcome", [
    ({"tags": "PII.Sensitive"}, "entity.tags: expected a list of objects, got a string"),
    ({"tags": json.dumps([{"tagFQN": "A.B"}])}, "entity.tags: expected a list of objects, got a string"),
    ({"owners": 0}, "entity.owners: expected a list of objects, got an integer"),
    ({"columns": [{"name": "x", "tags": "PII"}]}, "entity.columns[0].tags: expected a list of objects, got a string"),
    ({"tags": {"tagFQN": "A.B"}}, "A.B"),  # one object is one member
    ({"columns": [{"name": "x", "tags": {"tagFQN": "A.B"}}]}, "A.B"),
    ({"tags": "", "owners": None, "domains": []}, None),  # nothing
])
def test_a_created_entitys_member_lists_are_read_or_quarantined(entity, outcome):
    """rv46b #1: a created entity's tags given as a string or an object were left in its state alone."""
    event = {"id": "c", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1", "timestamp": 1788249600000,
             "userName": "u", "entityFullyQualifiedName": "s.t", "previousVersion": 0.1, "currentVersion": 0.1,
             "entity": entity}
    result = map_line(json.dumps(event).encode(), source="in.jsonl", line=1)
    tags = {str(t.object) for t in result.triples if str(t.predicate).endswith("addedTag>")}
    if outcome is None or outcome == "A.B":
        assert result.quarantine is None and tags == ({"<https://w3id.org/changeprov/id/om/tag/A.B>"} if outcome else set())
    else:
        assert (result.quarantine.reason, result.quarantine.detail) == ("BAD_ASPECT_JSON", outcome)


_MCL = ('{"entityUrn":"urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)","entityType":"dataset","changeType":"UPSERT",'
        '"aspectName":"%s","created":{"time":%s,"actor":"urn:li:corpuser:a"},"aspect":{"value":%s}%s}')


@pytest.mark.parametrize("line, reason, detail", [
    # rv48 #2: a number a double reads as 0 (Spark made the version 1e-400 the version 0.0)
    (b'{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":1,"currentVersion":1e-400}',
     "MALFORMED_JSON", "number 1e-400 underflows a double (it would read as 0)"),
    # rv48 #5: a list an aspect states whole, of another shape (both mappers read rules.json `shapes`)
    ((_MCL % ("upstreamLineage", 1, json.dumps(json.dumps({"upstreams": [{"dataset": 42}]})), "")).encode(),
     "BAD_ASPECT_JSON", "aspect.value.upstreams.*.dataset: expected a string, got an integer"),
    ((_MCL % ("upstreamLineage", 1, json.dumps(json.dumps({"fineGrainedLineages": [{"downstreams": 5}]})), "")).encode(),
     "BAD_ASPECT_JSON", "aspect.value.fineGrainedLineages.*.downstreams: expected an array, got an integer"),
    ((_MCL % ("upstreamLineage", 1, json.dumps(json.dumps({"fineGrainedLineages": [{"upstreams": [7]}]})), "")).encode(),
     "BAD_ASPECT_JSON", "aspect.value.fineGrainedLineages.*.upstreams.*: expected a string, got an integer"),
    ((_MCL % ("schemaMetadata", 1, json.dumps(json.dumps({"fields": {"fieldPath": "id"}})), "")).encode(),
     "BAD_ASPECT_JSON", "aspect.value.fields: expected an array, got an object"),
    ((_MCL % ("dataJobInputOutput", 1, json.dumps(json.dumps({"outputDatasetEdges": [{"destinationUrn": 4}]})),
              "")).encode(),
     "BAD_ASPECT_JSON", "aspect.value.outputDatasetEdges.*.destinationUrn: expected a string, got an integer"),
    ((_MCL % ("upstreamLineage", 1, json.dumps(json.dumps({"upstreams": []})),
              ',"previousAspectValue":{"value":"{\\"upstreams\\": \\"x\\"}"}')).encode(),
     "BAD_ASPECT_JSON", "previousAspectValue.value.upstreams: expected an array, got a string"),
    # rv48 #8: the first bad URN in list order, datasets before edges
    ((_MCL % ("dataJobInputOutput", 1, json.dumps(json.dumps(
        {"inputDatasets": ["urn:"], "inputDatasetEdges": [{"destinationUrn": "notaurn"}]})), "")).encode(),
     "BAD_IDENTIFIER", "'urn:'"),
    # rv48 #4: times as the export's variant reads them
    ((_MCL % ("status", "1" + "0" * 18 + ".0", '"{}"', "")).encode(), "BAD_TIMESTAMP",
     "created.time: epoch milliseconds out of range 0..253402300799999: 1000000000000000000"),
    ((_MCL % ("status", "1" + "0" * 39, '"{}"', "")).encode(), "BAD_TYPE", "created.time: expected an integer, got a number"),
])
def test_rv48_lines_are_quarantined_by_the_reference_as_by_the_export(line, reason, detail):
    """rv49: these were caught only by the Spark comparison, or (a `shapes` path removed from rules.json,
    which both mappers read) not at all."""
    result = map_line(line, source="in.jsonl", line=1)
    assert result.quarantine is not None, "mapped"
    assert result.quarantine.reason == reason and result.quarantine.detail.endswith(detail), result.quarantine


def test_rv48_values_map_as_the_export_maps_them():
    """rv48 #3, #6: 5E-1 is a double (Spark's variant), an ECE's impersonator is om-event:impersonatedBy."""
    changed = {"id": "e", "eventType": "entityUpdated", "entityType": "table", "entityId": "t", "timestamp": 1,
               "changeDescription": {"fieldsUpdated": [{"name": "description", "oldValue": 0}]}}
    line = json.dumps(changed).replace('"oldValue": 0', '"oldValue": 5E-1').encode()
    values = [t.object for t in map_line(line).triples if str(t.predicate).endswith("oldValue>")]
    assert [(v.value, v.datatype.value) for v in values] == [("0.5", "http://www.w3.org/2001/XMLSchema#double")]
    ece = {"entityUrn": "urn:li:dataset:x", "entityType": "dataset", "category": "TAG", "operation": "ADD",
           "modifier": "urn:li:tag:PII", "auditStamp": {"time": 1, "actor": "urn:li:corpuser:a",
                                                        "impersonator": "urn:li:corpuser:bot"}}
    triples = map_line(json.dumps(ece).encode()).triples
    assert [str(t.object) for t in triples if str(t.predicate).endswith("impersonatedBy>")] == ["<urn:li:corpuser:bot>"]
