"""The Spark OpenMetadata mapper (changeprov.spark.openmetadata) equals the reference mapper.

Every line goes through the whole Spark per-line pipeline (decode + family mappers) and through
changeprov.mapping.mapper.map_line; outcomes (reason or family) and triple sets must be equal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_support import diff_report, reference_outcomes, spark_outcomes

GOLDEN = Path(__file__).parent / "golden"

pytestmark = pytest.mark.spark


FAMILIES = ("openmetadata", "openmetadata-legacy")


def _compare(spark, lines: list[bytes], tmp_path: Path) -> None:
    got = spark_outcomes(spark, lines, tmp_path, families=FAMILIES)
    want = reference_outcomes(lines)
    assert got == want, diff_report(lines, got, want)


def _line(obj) -> bytes:
    return json.dumps(obj, allow_nan=True, ensure_ascii=False).encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- hand-made hostile events

BASE = {"id": "e-1", "eventType": "entityUpdated", "entityType": "table", "entityId": "t-1",
        "entityFullyQualifiedName": "svc.db.sch.orders", "timestamp": 1700000000000, "userName": "alice",
        "previousVersion": 0.1, "currentVersion": 0.2}
LEGACY = {"eventType": "entityUpdated", "entityType": "table", "entityId": "t-1",
          "dateTime": "2024-03-01T08:00:00Z", "userName": "alice", "previousVersion": 1.0, "currentVersion": 1.1}
LINEAGE = {"id": "l-1", "eventType": "entityLineageAdded", "entityType": "table", "entityId": "t-2",
           "timestamp": 1700000000000, "userName": "bob",
           "entity": {"fromEntity": {"type": "table", "id": "t-1", "fullyQualifiedName": "a.b"},
                      "toEntity": {"type": "table", "id": "t-2"},
                      "lineageDetails": {"sqlQuery": "insert …", "source": "QueryLineage",
                                         "pipeline": {"type": "pipeline", "id": "p-1"},
                                         "columnsLineage": [{"toColumn": "a.b.c", "fromColumns": ["x.y.z", "x.y.w"],
                                                             "function": "concat"}, {"toColumn": ""}]}}}


def _with(base: dict, **changes) -> dict:
    out = dict(base)
    for k, val in changes.items():
        if val is _DROP:
            out.pop(k, None)
        else:
            out[k] = val
    return out


_DROP = object()
CREATED = _with(BASE, eventType="entityCreated", previousVersion=0.1, currentVersion=0.1)


def _changes(*items, **extra) -> dict:
    return _with(BASE, changeDescription={"fieldsAdded": [], "fieldsUpdated": list(items), "fieldsDeleted": [],
                                          **extra})


def _tags(*fqns, source="Classification"):
    return [{"tagFQN": f, "source": source} for f in fqns]


HOSTILE: list = [
    BASE,
    _with(BASE, eventType=_DROP), _with(BASE, eventType=None), _with(BASE, eventType=""), _with(BASE, eventType=3),
    _with(BASE, eventType="entityExploded"), _with(BASE, eventType="EntityCreated"),
    _with(BASE, entityType=_DROP), _with(BASE, entityType=[]), _with(BASE, entityId=""), _with(BASE, entityId=7),
    _with(BASE, timestamp=None), _with(BASE, timestamp="1700000000000"), _with(BASE, timestamp=True),
    _with(BASE, timestamp=-1), _with(BASE, timestamp=253402300800000), _with(BASE, timestamp=253402300799999),
    _with(BASE, timestamp=0), _with(BASE, timestamp=1.5e12), _with(BASE, timestamp=1700000000000.0),
    _with(BASE, timestamp=0.0), _with(BASE, timestamp=10**30), _with(BASE, timestamp=-(2**63) - 1),
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":1700000000000.000}',
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":17e11}',
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":' + b"1" * 45 + b"}",
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","Timestamp":1.5,"timestamp":5}',
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":5,"TIMESTAMP":1.5}',
    # rv48 #2: a number a double reads as 0 (Spark made the version "0.0"); a subnormal one is not 0
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":5,"currentVersion":1e-400}',
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":5,"currentVersion":1e-320}',
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":5,"x":[-1E-330]}',
    b'{"eventType":"entityCreated","entityType":"table","entityId":"t","timestamp":5,"x":0e-500}',
    # ut47a #4: a thread's entity link and the FQN it names
    *(_with(BASE, eventType="threadCreated", entityType=kind, entityId="th-1", currentVersion=_DROP, previousVersion=_DROP,
            changeDescription=_DROP, entity=json.dumps({"id": "th-1", "about": about}))
      for kind in ("THREAD", "thread")
      for about in ("<#E::table::svc.db.sch.orders>", "<#E::table::svc.db.sch.orders::columns::id::tags>",
                    "<#E::table>", "<#E::table::>", "<#E::table::a\nb::x>", "<#E::table::a::b::>", "plain text",
                    "<#E::glossaryTerm::\"g.t\"::description>x", "", 5, None, ["<#E::table::a>"])),
    _with(BASE, entity=json.dumps({"id": "t-1", "about": "<#E::table::svc.db.sch.orders>"})),  # a table's: no link
    # rv48 #4: a pipeline run's times as Spark's variant holds them
    *(_line(_changes({"name": "pipelineStatus", "newValue": {"executionId": "run-1", key: 4242424242}})).replace(b"4242424242", big)
      for key in ("timestamp", "endTime") for big in [b"1" + b"0" * 18 + b".0", b"1" + b"0" * 39, b"-" + b"1" * 25 + b".0", b"1709280000000.0"]),
    # rv48 #3: a value's datatype as Spark's variant types it (an exponent in either case, > 38 digits)
    *(b'{"id":"lit-%d","eventType":"entityUpdated","entityType":"table","entityId":"t1","timestamp":1709280000000,'
      b'"changeDescription":{"fieldsUpdated":[{"name":"description","oldValue":%s}]}}' % (i, v)
      for i, v in enumerate([b"5E-1", b"1.5E0", b"10." + b"0" * 38 + b"1", b"1" + b"0" * 38, b"0.5e0", b"-7E2"])),
    _with(BASE, userName=""), _with(BASE, userName=5), _with(BASE, userName="a b#c%d<e>\"f"),
    _with(BASE, userName="tab\there"), _with(BASE, userName="caf\u00e9 \u65e5\u672c \U0001F600"),
    _with(BASE, userName="\u0085x"), _with(BASE, userName="\ufffd"), _with(BASE, userName="no\u00a0break"),
    _with(BASE, id=""), _with(BASE, id=_DROP), _with(BASE, id=12),
    _with(BASE, userId=""), _with(CREATED, entityFullyQualifiedName=""),
    _with(BASE, currentVersion="0.2"), _with(BASE, previousVersion="0.1"), _with(BASE, currentVersion=True),
    _with(BASE, currentVersion=1e15), _with(BASE, currentVersion=1e-7), _with(BASE, currentVersion=0.1234567890123456),
    _with(BASE, currentVersion=123456789012345), _with(BASE, currentVersion=-0.0), _with(BASE, currentVersion=2),
    _with(BASE, previousVersion=_DROP), _with(BASE, previousVersion=_DROP, changeDescription={"previousVersion": 0.1}),
    _with(BASE, previousVersion=_DROP, changeDescription="x"), _with(BASE, changeDescription="x"),
    _with(BASE, previousVersion=_DROP, changeDescription={"previousVersion": "0.1"}),
    _with(BASE, previousVersion=0.2), _with(BASE, eventType="entityCreated", previousVersion=_DROP),
    _with(BASE, eventType="entityDeleted"), _with(BASE, eventType="entitySoftDeleted"),
    _with(BASE, entity='{"a": 1}'), _with(BASE, entity='{"a": 1,}'), _with(BASE, entity='{"a": 1, "a": 2}'),
    _with(BASE, entity='{"a": NaN}'), _with(BASE, entity='{"a": 1} x'), _with(BASE, entity='[1] '),
    _with(BASE, entity="null"), _with(BASE, entity='"text"'), _with(BASE, entity=""), _with(BASE, entity="\ufeff{}"),
    _with(BASE, entity='{"a": "\\ud800"}'), _with(BASE, entity='{"a": "x\ny"}'), _with(BASE, entity=5),
    _with(BASE, entity=True), _with(BASE, entity=[1, {"b": 1.50}]), _with(BASE, entity="[" * 129 + "]" * 129),
    _with(BASE, entity='{"n": 1e999}'),
    _with(BASE, entityType="a b", entityId="x#y%z"), _with(BASE, entityId="id\u0000x"),
    _with(BASE, entityId="\ue000"), _with(BASE, entityFullyQualifiedName=5), _with(BASE, entityFullyQualifiedName=""),
    _with(BASE, userId="u1"), _with(BASE, userId=1), _with(BASE, impersonatedBy="bot x"),
    _with(BASE, impersonatedBy="bot\x7f"), _with(BASE, impersonatedBy=""), _with(BASE, impersonatedBy=[]),
    _with(BASE, recursive=True), _with(BASE, recursive="yes"),
    _with(BASE, changeDescription={"changeSummary": {"b": 1, "a": [1.0, None]}}),
    _with(BASE, changeDescription={"changeSummary": []}), _with(BASE, changeDescription={}),
    _changes({"name": "description", "oldValue": "a", "newValue": "b"}),
    _changes({"name": "description", "oldValue": None, "newValue": 1.5}, {"name": "x", "newValue": {"k": [1]}}),
    _changes("not an object"), _changes({"name": ""}), _changes({"name": 3}), _changes({"newValue": 1}),
    _with(BASE, changeDescription={"fieldsAdded": "x"}), _with(BASE, changeDescription={"fieldsDeleted": {}}),
    _changes({"name": "tags", "oldValue": json.dumps(_tags("PII.Sensitive", "Tier.Tier1")),
              "newValue": json.dumps(_tags("PII.Sensitive") + _tags("Glossary.Term", source="Glossary"))}),
    _changes({"name": "columns.c1.tags", "oldValue": "[]", "newValue": json.dumps(_tags("PII.None"))}),
    _changes({"name": "tags", "oldValue": "[", "newValue": "{not json"}),
    _changes({"name": "tags", "oldValue": "[]", "newValue": json.dumps(_tags("a\tb"))}),
    _changes({"name": "tags", "oldValue": "[]", "newValue": json.dumps(_tags("a b#c"))}),
    _changes({"name": "tags", "oldValue": "[]", "newValue": json.dumps([{"tagFQN": 1}])}),
    _changes({"name": "tags", "oldValue": "[]", "newValue": json.dumps([{"tagFQN": "t", "source": 1}])}),
    _changes({"name": "tags", "newValue": [{"tagFQN": "t", "source": "Glossary"}, {"tagFQN": "t"}, 5, None]}),
    _with(BASE, changeDescription={"fieldsAdded": [{"name": "tags", "newValue": _tags("x")}],
                                   "fieldsDeleted": [{"name": "tags", "oldValue": _tags("y", "x\u2028")}]}),
    _changes({"name": "owners", "oldValue": [{"name": "alice", "type": "user"}],
              "newValue": json.dumps([{"name": "data team", "type": "team"}, {"name": "bob"}])}),
    _changes({"name": "owner", "oldValue": '{"name": "eve", "type": "user"}', "newValue": None}),
    _changes({"name": "owners", "newValue": [{"name": "x\x01", "type": "user"}]}),
    _changes({"name": "owners", "newValue": [{"name": "x", "type": 1}]}),
    _changes({"name": "columns", "oldValue": json.dumps([{"name": "a", "dataType": "INT"}, {"name": "b"}]),
              "newValue": json.dumps([{"name": "a", "dataType": "BIGINT"}, {"fullyQualifiedName": "z.c"}])}),
    _changes({"name": "columns", "newValue": [{"name": "a"}]}, entityFullyQualifiedName=None),
    # a column's own field change names its column (openmetadata._about_column)
    _changes({"name": "columns.email.tags", "oldValue": "[]", "newValue": json.dumps(_tags("PII.Sensitive"))},
             {"name": "columns.addr.street.description", "oldValue": "a", "newValue": "b"},
             {"name": 'columns."a.b".tags', "newValue": "[]"}, {"name": 'columns.x."y.z"', "newValue": "1"},
             {"name": "columns.c", "newValue": "1"}, {"name": "columns..tags", "newValue": "1"},
             {"name": "columns.a\nb.tags", "newValue": "1"}, {"name": "columns.a\u2028.tags", "newValue": "1"},
             {"name": "columns.ok.tags\n", "newValue": "1"}, {"name": "columns.bad\x01.tags", "newValue": "1"},
             {"name": "xcolumns.a.tags", "newValue": "1"}, {"name": "columns.a.tags.", "newValue": "1"}),
    _changes({"name": "columns.email.tags", "newValue": "[]"}, entityFullyQualifiedName=None),
    _changes({"name": "columns.email.tags", "newValue": "[]"}, entityFullyQualifiedName=""),
    _with(CREATED, entityFullyQualifiedName="svc.db.sch.t2", entity={"columns": [
        {"name": "email", "tags": _tags("PII.Sensitive"), "children": [{"name": "in.ner", "tags": _tags("x")}]}]}),
    # a dropped column's tags go with it (openmetadata._dropped_column_tags)
    _with(BASE, changeDescription={"fieldsDeleted": [{"name": "columns", "oldValue": json.dumps([
        {"name": "email", "tags": _tags("PII.Sensitive") + _tags("G.Email", source="Glossary")},
        {"name": "a.b", "fullyQualifiedName": "svc.db.sch.orders.\"a.b\"", "tags": _tags("x")},
        {"name": "plain", "tags": []}, {"name": "email", "tags": _tags("Last.Wins")}, 5, {"tags": _tags("nameless")}])}]}),
    _changes({"name": "columns", "oldValue": json.dumps([{"name": "keep", "tags": _tags("K")},
                                                          {"name": "gone", "tags": _tags("G")}]),
              "newValue": json.dumps([{"name": "keep", "tags": _tags("K2")}])}),
    _with(BASE, changeDescription={"fieldsDeleted": [{"name": "columns", "oldValue": [{"name": "c", "tags": [
        {"tagFQN": 3}]}]}]}),
    # ... and so do its nested columns' tags, down to three levels (openmetadata.column_tags)
    _changes({"name": "columns", "oldValue": json.dumps([{"name": "keep"}, {"name": "addr", "children": [
        {"name": "zip", "tags": _tags("PII.Sensitive")}, {"name": "", "tags": _tags("nameless"), "children": [
            {"name": "under.nameless", "tags": _tags("skipped")}]}, 7,
        {"name": "geo", "tags": "no list", "children": [{"name": "l.at", "tags": _tags("G.Lat", source="Glossary"),
                                                          "children": [{"name": "d3", "tags": _tags("D3"), "children": [
                                                              {"name": "d4", "tags": _tags("too.deep")}]}]}]}]}]),
              "newValue": json.dumps([{"name": "keep"}])}),
    _with(BASE, changeDescription={"fieldsDeleted": [{"name": "columns", "oldValue": [{"name": "c", "children": [
        {"name": "ok", "tags": _tags("fine")}, {"name": "bad", "tags": [{"tagFQN": 3}]}]}]}]}),
    # a struct column's nested columns, changed under the struct's name (openmetadata.nested_columns)
    _changes({"name": "columns.addr", "oldValue": json.dumps([
        {"name": "zip", "tags": _tags("PII.Sensitive"), "children": [{"name": "p4", "tags": _tags("P4")}]},
        {"name": "keep", "fullyQualifiedName": "svc.db.sch.orders.addr.keep"}]),
        "newValue": json.dumps([{"name": "keep", "fullyQualifiedName": "svc.db.sch.orders.addr.keep", "dataType": "INT"},
                                {"name": "zip5"}])},
        {"name": "columns.addr.geo", "oldValue": json.dumps([{"name": "lat", "tags": _tags("G")}])},
        {"name": 'columns."a.b"', "newValue": json.dumps([{"name": "c.d"}])}, {"name": "columns.tags", "newValue": "[]"},
        {"name": "columns.addr.description", "newValue": "[1]"}, {"name": "columns.addr.children", "newValue": "[]"},
        {"name": "columns.", "newValue": "[]"}, {"name": "columns.x", "newValue": "[not json"},
        {"name": "columns.bad\x01", "newValue": "[]"}, {"name": "columns.y", "newValue": {"name": "one"}}),
    _with(BASE, entityFullyQualifiedName=None, changeDescription={"fieldsDeleted": [
        {"name": "columns.addr", "oldValue": [{"name": "c", "tags": _tags("no.fqn")}]}]}),
    _with(BASE, changeDescription={"fieldsDeleted": [{"name": "columns.addr", "oldValue": [{"name": 3}]}]}),
    _with(BASE, changeDescription={"fieldsAdded": [{"name": "columns.addr.geo", "newValue": [{"fullyQualifiedName": []}]}]}),
    _with(CREATED, entityFullyQualifiedName="s.d.t3", entity={"columns": [
        {"name": "addr", "children": [{"name": "zip", "children": [{"name": "p4"}, {"name": 7}]}, 5, {"tags": []}]},
        {"name": "flat", "children": []}, {"name": "odd", "children": "x"}]}),
    _with(CREATED, entity={"columns": [{"name": "addr", "children": [{"name": 3}]}]}),
    _with(BASE, changeDescription={"fieldsDeleted": [{"name": "columns", "oldValue": [{"name": "c", "tags": [
        {"tagFQN": "a\tb"}]}]}]}),
    _with(BASE, changeDescription={"fieldsDeleted": [{"name": "columns", "oldValue": [{"name": "c", "tags": "PII"}]}],
                                   "fieldsUpdated": [{"name": "columns", "oldValue": [{"name": "d", "tags": _tags("D")}],
                                                      "newValue": []}]}),
    _with(BASE, entityFullyQualifiedName=None, changeDescription={"fieldsDeleted": [
        {"name": "columns", "oldValue": [{"name": "c", "tags": _tags("no.fqn")}]}]}),
    _changes({"name": "columns", "newValue": [{"fullyQualifiedName": 3}]}),
    _changes({"name": "columns", "newValue": [{"fullyQualifiedName": "a b", "name": 3}]}),
    _changes({"name": "pipelineStatus", "newValue": {
        "timestamp": 1700000000000, "executionStatus": "Successful", "endTime": 1700000001000,
        "executedBy": {"name": "ops team", "type": "team"},
        "inputs": [{"datasetFQN": "a.b"}, 3], "outputs": [{"datasetFQN": "c.d"}]}}),
    _changes({"name": "pipelineStatus", "newValue": {"executionId": "run-1", "timestamp": -5}}),
    _changes({"name": "pipelineStatus", "newValue": {"executionStatus": 3}}),
    _changes({"name": "pipelineStatus", "newValue": {"timestamp": 1, "executedBy": {"name": "a\x00"}}}),
    _changes({"name": "pipelineStatus", "newValue": {"timestamp": 1, "endTime": "x"}}),
    _changes({"name": "pipelineStatus", "newValue": {"timestamp": "1"}}),
    _changes({"name": "pipelineStatus", "newValue": {"timestamp": 1, "inputs": [{"datasetFQN": 1}]}}),
    _changes({"name": "pipelineStatus", "newValue": '{"timestamp": 1}'}),
    # a creation's tags, owners and column tags (openmetadata._initial_values)
    _with(CREATED, entity={"tags": _tags("PII.Sensitive", "Tier.Tier1") + _tags("G.T", source="Glossary"),
                           "owners": [{"name": "alice", "type": "user"}, {"name": "data team", "type": "team"}],
                           "columns": [{"name": "email", "tags": _tags("PII.Sensitive")}, {"name": "a.b", "tags": _tags("x")},
                                       {"name": "", "tags": _tags("y")}, {"name": 3, "tags": _tags("y")},
                                       {"name": "c", "tags": []}, {"name": "d"}, 5, None, {"tags": _tags("z")}]}),
    _with(CREATED, entity=json.dumps({"tags": _tags("t"), "owners": [{"name": "bob"}]})),
    _with(LEGACY, eventType="entityCreated", entity={"owners": [{"name": "bob", "type": "user"}]}),
    _with(CREATED, entity={"tags": [{"tagFQN": 1}]}), _with(CREATED, entity={"tags": _tags("a\tb")}),
    _with(CREATED, entity={"tags": [{"tagFQN": "t", "source": 1}]}),
    _with(CREATED, entity={"tags": [5, None, {"tagFQN": "t"}, {"tagFQN": "t", "source": "Glossary"}, {"x": 1}]}),
    _with(CREATED, entity={"owners": [{"name": "x", "type": 1}]}), _with(CREATED, entity={"owners": [{"name": "x\x01"}]}),
    _with(CREATED, entity={"tags": "x", "owners": {"name": "o"}, "columns": "y"}),
    _with(CREATED, entity={"columns": [{"name": "c", "tags": [{"tagFQN": 2}]}]}),
    _with(CREATED, entity={"columns": [{"name": "c", "tags": {"tagFQN": "t"}}]}),
    _with(CREATED, entity=[{"tags": _tags("x")}]), _with(CREATED, entity={"tags": []}),
    _with(CREATED, entity={"tags": _tags("x")}, changeDescription={"fieldsAdded": [{"name": "tags", "newValue": "[]"}]}),
    _with(CREATED, entity={"tags": [{"tagFQN": 1}]}, changeDescription={"fieldsAdded": [{"name": 2}]}),
    _with(BASE, entity={"tags": _tags("not.initial"), "owners": [{"name": "bob"}]}),
    _with(CREATED, entityFullyQualifiedName="s.d.t", entity={
        "domains": [{"type": "domain", "name": "Sales"}], "columns": [
            {"name": "address", "fullyQualifiedName": "s.d.t.address", "tags": _tags("T.a"), "children": [
                {"name": "street", "tags": _tags("PII.Sensitive"), "children": [
                    {"name": "line.1", "tags": _tags("L3"), "children": [
                        {"name": "x", "tags": _tags("L4"), "children": [{"name": "y", "tags": _tags("L5")}]}]}]},
                {"name": "", "tags": _tags("no.name"), "children": [{"name": "z", "tags": _tags("under.no.name")}]},
                5, {"name": "zip", "children": "none"}]},
            {"name": "id"}, {"fullyQualifiedName": "s.d.t.nameless"}, {"name": "n", "children": [{"name": "m", "tags": _tags("N.M")}]}]}),
    _with(CREATED, entity={"columns": [{"name": "c", "children": [{"name": "d", "tags": [{"tagFQN": 7}]}]}]}),
    _with(CREATED, entity={"columns": [{"name": "c", "dataType": "INT"}]}, entityFullyQualifiedName=None),
    _with(CREATED, entity={"columns": [{"fullyQualifiedName": 3}]}),
    _with(CREATED, entity={"domains": "Sales", "columns": []}),
    # the tags of columns a change adds are added (ut44g #1), not in a creation's own description
    _changes({"name": "columns", "oldValue": json.dumps([{"name": "id", "tags": _tags("K")}]),
              "newValue": json.dumps([{"name": "id", "tags": _tags("K")}, {"name": "email", "tags": _tags("PII.Sensitive") + _tags("G.T", source="Glossary")},
                                      {"name": "addr", "children": [{"name": "street", "tags": _tags("PII.Sensitive")}, {"name": "n"}]},
                                      {"name": "email", "tags": _tags("Last.Wins")}, {"name": "", "tags": _tags("x")}, 5])}),
    _changes(fieldsAdded=[{"name": "columns", "newValue": json.dumps([{"name": "c", "tags": _tags("A", "B")}])}]),
    _changes(fieldsAdded=[{"name": "columns.addr", "newValue": json.dumps([{"name": "zip", "tags": _tags("PII.Z")}])}]),
    _changes(fieldsAdded=[{"name": "columns", "newValue": json.dumps([{"name": "c", "tags": [{"tagFQN": 7}]}])}]),
    _changes(fieldsAdded=[{"name": "columns", "newValue": json.dumps([{"name": "c", "tags": "PII"}])}]),
    _changes(fieldsAdded=[{"name": "columns", "newValue": json.dumps([{"name": "c", "tags": [{"tagFQN": "a\tb"}]}])}]),
    _changes(fieldsDeleted=[{"name": "columns", "oldValue": json.dumps([{"name": "c", "tags": [{"tagFQN": 7}]}])}],
             fieldsAdded=[{"name": "columns", "newValue": json.dumps([{"name": "d", "tags": [{"tagFQN": 8}]}])}]),
    _with(CREATED, entity={"columns": [{"name": "c", "tags": _tags("T")}]},
          changeDescription={"fieldsAdded": [{"name": "columns", "newValue": json.dumps([{"name": "c", "tags": _tags("T")}])}]}),
    # domains are members by id (ut44b #1)
    _with(CREATED, entity={"domains": [{"id": "d-1", "type": "domain", "name": "Sales", "fullyQualifiedName": "Sales"},
                                       {"id": "d 2#", "fullyQualifiedName": "Ops.Sub"}, {"id": "d-3"}, {"id": ""},
                                       {"name": "no id"}, 5, None, {"id": "d-1", "fullyQualifiedName": "Sales again"},
                                       {"id": "d-4", "type": "team", "name": "not an owner"}]}),
    _changes({"name": "domains", "oldValue": json.dumps([{"id": "d-1", "fullyQualifiedName": "Sales"},
                                                          {"id": "d-2", "fullyQualifiedName": "Ops"}]),
              "newValue": json.dumps([{"id": "d-2", "fullyQualifiedName": "Ops"}, {"id": "d-5"}])}),
    _changes(fieldsAdded=[{"name": "domains", "newValue": json.dumps({"id": "d-6", "fullyQualifiedName": "Single"})}],
             fieldsDeleted=[{"name": "domains", "oldValue": json.dumps([{"id": "d-1", "fullyQualifiedName": "Sales"}])}]),
    _changes({"name": "domains", "newValue": json.dumps([{"id": "d-7", "fullyQualifiedName": 1}])}),
    _with(CREATED, entity={"domains": [{"id": 7}]}), _with(CREATED, entity={"domains": [{"id": "d\x01"}]}),
    _with(CREATED, entity={"domains": [{"id": "d", "fullyQualifiedName": ["x"]}]}),
    _with(CREATED, entity={"domains": [{"id": "", "fullyQualifiedName": 3}]}),
    _with(CREATED, entity={"tags": _tags("x"), "owners": [{"name": "o"}]},
          changeDescription={"fieldsAdded": [{"name": "tags", "newValue": _tags("x")}], "fieldsUpdated": [
              {"name": "columns.c.tags", "oldValue": "[]", "newValue": "[]"}]}),
    _with(CREATED, entity={"columns": [{"name": "c", "tags": _tags("y")}]},
          changeDescription={"fieldsUpdated": [{"name": "columns.c.tags", "oldValue": "[]", "newValue": "[]"}]}),
    # a recursive delete's children (openmetadata._cascade)
    _with(BASE, eventType="entityDeleted", recursive=True, entity={"children": [
        {"type": "glossaryTerm", "id": "c-1", "fullyQualifiedName": "G.a.b"}, {"type": "glossaryTerm", "id": "c-2"},
        5, None, {"type": "", "id": "x"}, {"id": "no-type"}, {"type": "team", "id": "c 3#", "fullyQualifiedName": "T"}]}),
    _with(BASE, eventType="entitySoftDeleted", recursive=True, entity=json.dumps({"children": [{"type": "t", "id": "1"}]})),
    _with(LEGACY, eventType="entityDeleted", recursive=True, entity={"children": [{"type": "t", "id": "1"}]}),
    _with(BASE, eventType="entityDeleted", recursive=False, entity={"children": [{"type": "t", "id": "1"}]}),
    _with(BASE, eventType="entityUpdated", recursive=True, entity={"children": [{"type": "t", "id": "1"}]}),
    _with(BASE, eventType="entityDeleted", recursive=True, entity={"children": [{"type": 1, "id": "1"}]}),
    _with(BASE, eventType="entityDeleted", recursive=True, entity={"children": [{"type": "t", "id": ["1"]}]}),
    _with(BASE, eventType="entityDeleted", recursive=True, entity={"children": [{"type": "t", "id": "\x00"}]}),
    _with(BASE, eventType="entityDeleted", recursive=True, entity={"children": [{"type": "t", "id": "1",
                                                                                  "fullyQualifiedName": 2}]}),
    _with(BASE, eventType="entityDeleted", recursive=True, entity={"children": {"type": "t", "id": "1"}}),
    _with(BASE, eventType="entityDeleted", recursive=True, entity=[{"children": [{"type": "t", "id": "1"}]}]),
    _with(BASE, eventType="entityDeleted", recursive="yes", entity={"children": [{"type": "t", "id": "1"}]}),
    # lineage
    LINEAGE, _with(LINEAGE, eventType="entityLineageDeleted"), _with(LINEAGE, entity=_DROP),
    _with(LINEAGE, entity=json.dumps(LINEAGE["entity"])), _with(LINEAGE, entity="null"), _with(LINEAGE, entity=[]),
    _with(LINEAGE, entity={"toEntity": {"type": "table", "id": "t"}}),
    _with(LINEAGE, entity={"fromEntity": {"type": "table", "id": "t"}, "toEntity": {"type": "table", "id": ""}}),
    _with(LINEAGE, entity={"fromEntity": {"type": "table", "id": "t"}, "toEntity": {"type": "tab le", "id": "\x02"}}),
    _with(LINEAGE, entity={"fromEntity": {"type": "t", "id": "1", "fullyQualifiedName": 1}, "toEntity": {"type": "t",
                                                                                                      "id": "2"}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": []}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"pipeline": {"type": "pipeline"}}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"pipeline": {}}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"columnsLineage": [5]}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"columnsLineage": [{"toColumn": "a",
                                                                                      "fromColumns": [1]}]}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"columnsLineage": [{"toColumn": "a",
                                                                                      "fromColumns": ["b"],
                                                                                      "function": 5}]}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"columnsLineage": [{"toColumn": "a\x03",
                                                                                      "fromColumns": 1}]}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"columnsLineage": [{"toColumn": "",
                                                                                      "fromColumns": 1}]}}),
    _with(LINEAGE, entity={**LINEAGE["entity"], "lineageDetails": {"sqlQuery": 1}}),
    _with(LINEAGE, entityFullyQualifiedName=1, userName="bad\nuser"),
    # legacy dateTime
    LEGACY, _with(LEGACY, dateTime="2024-03-01T09:30:00.123999+01:30"), _with(LEGACY, dateTime="2024-02-29T00:00:00Z"),
    _with(LEGACY, dateTime="2023-02-29T00:00:00Z"), _with(LEGACY, dateTime="2024-03-01 08:00:00Z"),
    _with(LEGACY, dateTime="2024-03-01T24:00:00Z"), _with(LEGACY, dateTime="2024-03-01T23:59:60Z"),
    _with(LEGACY, dateTime="2024-03-01T08:00:00+24:00"), _with(LEGACY, dateTime="1970-01-01T00:00:00.000-00:01"),
    _with(LEGACY, dateTime="1970-01-01T00:00:00+00:01"), _with(LEGACY, dateTime="0000-01-01T00:00:00Z"),
    _with(LEGACY, dateTime="9999-12-31T23:59:59.9999Z"), _with(LEGACY, dateTime="9999-12-31T23:59:59-00:01"),
    _with(LEGACY, dateTime="2024-03-01t08:00:00z"), _with(LEGACY, dateTime="2024-03-01T08:00:00Z\n"),
    _with(LEGACY, dateTime="2024-03-01T08:00:00.1234567890Z"), _with(LEGACY, dateTime="1900-03-01T08:00:00Z"),
    _with(LEGACY, dateTime="2100-02-29T00:00:00Z"), _with(LEGACY, dateTime="2000-02-29T00:00:00Z"),
    _with(LEGACY, dateTime=""), _with(LEGACY, dateTime=17), _with(LEGACY, eventType="entitySoftDeleted"),
    _with(LEGACY, eventType="entityCreated"), _with(LEGACY, eventType="entityDeleted", id="x"),
    _with(LEGACY, dateTime="٢٠٢٤-03-01T08:00:00Z"), _with(LEGACY, dateTime="2024-03-01T08:00:00.1234567891234567891234z"),
    # ut46a #2: a "/" in the type is %2F, so (table/a, b) and (table, a/b) stay two entities
    _with(BASE, entityType="table/a", entityId="b"), _with(BASE, entityType="table", entityId="a/b"),
    _with(BASE, entityType="a%2Fb"),
    # ut46a #3: a column keyed by its name has the name quoted when it holds a dot
    _with(CREATED, entity={"columns": [{"name": "x.y", "tags": _tags("PII.Sensitive")}, {"name": "z"}]}),
    _changes({"name": "columns", "oldValue": json.dumps([{"name": "x.y"}, {"name": "q"}]),
              "newValue": json.dumps([{"name": "q"}])}),
    # ut46a #1: a member list of the wrong shape is quarantined, "" and null hold nothing
    _changes({"name": "tags", "oldValue": "[]", "newValue": json.dumps(json.dumps(_tags("PII.Sensitive")))}),
    _changes({"name": "tags", "oldValue": "[]", "newValue": "[42]"}),
    _changes({"name": "tags", "oldValue": "[]", "newValue": "PII.Sensitive"}),
    _changes({"name": "tags", "oldValue": "", "newValue": json.dumps(_tags("A.B"))}),
    _changes({"name": "tags", "oldValue": None, "newValue": json.dumps(_tags("A.B")[0])}),
    _changes({"name": "owners", "oldValue": True, "newValue": "[]"}),
    _changes({"name": "owners", "oldValue": "[]", "newValue": json.dumps([{"name": "bob"}, "carol"])}),
    _changes({"name": "domains", "oldValue": "[]", "newValue": json.dumps([{"id": "d-1"}, None])}),
    _changes({"name": "domains", "oldValue": 7, "newValue": json.dumps({"id": "d-1"})}),
    _changes({"name": "columns", "oldValue": "[]", "newValue": "[1]"}),  # columns: a non-object is skipped
    _with(CREATED, entity={"tags": [1, {"tagFQN": "A.B"}]}),
    _with(CREATED, entity={"owners": "bob"}),
    # ... and an entity text that holds no object (a creation without its state, unseen)
    _with(CREATED, entity="42"), _with(CREATED, entity='"hello"'), _with(CREATED, entity="[1, 2]"),
    _with(CREATED, entity="null"), _with(CREATED, entity=json.dumps(json.dumps({"columns": [{"name": "a"}]}))),
    _with(CREATED, entity="true"),
    # rv46b #1: a created entity's member lists of another shape
    _with(CREATED, entity={"tags": "PII.Sensitive"}), _with(CREATED, entity={"tags": {"tagFQN": "PII.Sensitive"}}),
    _with(CREATED, entity={"tags": json.dumps(_tags("A.B"))}), _with(CREATED, entity={"owners": 0, "domains": ""}),
    _with(CREATED, entity={"domains": {"id": "d-1", "fullyQualifiedName": "D"}, "owners": []}),
    _with(CREATED, entity={"columns": [{"name": "x", "tags": "PII"}]}),
    _with(CREATED, entity={"columns": [{"name": "x", "tags": {"tagFQN": "PII.Sensitive"}, "children": "c"}]}),
    _with(CREATED, entity={"columns": "x", "tags": None}),
]


def _hypothesis_lines(shared_dir) -> list[bytes]:
    """Events drawn by hypothesis from ../shared's hostile_change_events() (a fixed seed), so that
    one Spark job compares them all (planning the mapper is the slow part, not the rows)."""
    from conftest import load_shared_module
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    hostile = load_shared_module("conformance/fuzz/hostile_events.py", "hostile_events")
    drawn: list[bytes] = []

    @seed(20261122)
    @settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(hostile.hostile_change_events(), min_size=30, max_size=30))
    def draw(events):
        lines = [json.dumps(e, allow_nan=True).encode("utf-8", "surrogatepass") for e in events]
        drawn.extend(x for x in lines if len(x) < 1_000_000 and b"\n" not in x)

    draw()
    return drawn


def test_spark_equals_reference(spark, tmp_path, shared_dir):
    """Corpus, golden examples, hand-made hostile events and hypothesis-drawn hostile events in one
    Spark job: outcome (family or quarantine reason) and triple set equal, line by line."""
    lines = (shared_dir / "corpus/openmetadata/change_events.jsonl").read_bytes().splitlines()
    lines += [p.read_bytes().strip(b"\n") for p in sorted(GOLDEN.glob("om-*.jsonl"))]
    lines += [x if isinstance(x, bytes) else _line(x) for x in HOSTILE]
    lines += _hypothesis_lines(shared_dir)
    assert len(lines) > 400
    _compare(spark, lines, tmp_path)
