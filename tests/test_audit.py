"""`changeprov audit`: findings on the corpus (exact, from ../shared/corpus/*/SOURCES.md and the data), the
same report from the embedded store and a real `oxigraph serve` endpoint, small synthetic logs for the
findings the corpus does not contain, and the HTML page rendered by headless Chromium."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pyoxigraph as ox
import pytest

from changeprov.cli import main
from changeprov.errors import InputError
from changeprov.mapping.reference import map_to_files
from changeprov.sparql.audit import compare, run_audit
from changeprov.sparql.loader import load_export
from changeprov.sparql.audit_html import layered_layout, render_html
from changeprov.sparql.queries import get_query, run_query
from changeprov.sparql.server import oxigraph_server
from changeprov.sparql.stores import open_store

DS = "urn:li:dataset:(urn:li:dataPlatform:{},PROD)".format
FCT, LEGACY = DS("snowflake,analytics.core.fct_orders"), DS("hive,staging.orders_legacy")
ORDERS, CUST = DS("postgres,shop.public.orders"), DS("postgres,shop.public.customers")
LTV, DREV = DS("snowflake,analytics.marts.customer_ltv"), DS("snowflake,analytics.marts.daily_revenue")
OM_EVENT = "https://open-metadata.org/schema/type/changeEvent/"
OM_ORDERS, OM_DR = "mysql_prod.ecommerce.sales.orders", "mysql_prod.ecommerce.analytics.daily_revenue"
NOW_MS = 1_800_000_000_000  # 2027-01-15: after every corpus event
CHROMIUM = Path("/usr/bin/chromium")

CORPUS_COUNTS = {"schema-drop": 1, "schema-drop-unused": 1, "version-gap": 1, "lineage-removed": 2, "sensitive-tag": 7, "impersonated": 1,
                 "deletion": 9, "bot": 3}


@pytest.fixture(scope="module")
def db(corpus_db) -> Path:
    return corpus_db


@pytest.fixture(scope="module")
def report(db):
    with open_store("embedded", path=db, read_only=True) as store:
        return run_audit(store, now_ms=NOW_MS)


def by_kind(report, kind):
    return report.of_kind(kind)


# ----------------------------------------------------------------------------- corpus acceptance


def test_corpus_finding_counts(report):
    assert report.counts() == CORPUS_COUNTS


def test_deletions_with_former_and_current_dependents(report):
    """deleted-entities of SOURCES.md; orders_legacy lost its only dependent (fct_orders) in the 2024-03-10 lineage
    migration, before the soft (03-15) and hard (03-20) deletes, so no deletion still had dependents."""
    got = [(f.time[:16], f.details["deletion"], f.entity_name, f.details["user"], f.details["dependents"],
            f.details["former_dependents"], len(f.events)) for f in by_kind(report, "deletion")]
    # ut41c #6: a restore is part of the finding, as deleted-entities has it
    restored = {(f.time[:16], f.entity_name): (f.details["restored_at"], f.summary.rsplit("; ", 1)[-1])
                for f in by_kind(report, "deletion") if f.details["restored_at"]}
    assert restored == {
        ("2024-03-15T08:30", DREV): ("2024-03-15T08:45:00.000Z", "restored at 2024-03-15T08:45:00.000Z"),
        ("2026-09-01T14:10", "mysql_prod.ecommerce.sales.orders_staging_tmp"): (
            "2026-09-03T09:00:00.000Z", "restored at 2026-09-03T09:00:00.000Z"),
        ("2026-09-08T11:00", "mlflow_prod.churn_predictor"): ("2026-09-09T09:00:00.000Z",
                                                              "restored at 2026-09-09T09:00:00.000Z")}
    assert got == [
        ("2024-03-15T08:00", "SoftDeleted", LEGACY, "urn:li:corpuser:bob", [], [FCT], 2),
        ("2024-03-15T08:30", "SoftDeleted", DREV, "urn:li:corpuser:carol", [], [], 2),
        ("2024-03-20T00:05", "HardDeleted", LEGACY, "urn:li:corpuser:bob", [], [FCT], 2),
        ("2026-09-01T14:10", "SoftDeleted", "mysql_prod.ecommerce.sales.orders_staging_tmp", "admin", [], [], 1),
        ("2026-09-04T13:00", "SoftDeleted", "mysql_prod.ecommerce.sales.orders_staging_tmp", "admin", [], [], 1),
        ("2026-09-04T13:05", "HardDeleted", "mysql_prod.ecommerce.sales.orders_staging_tmp", "admin", [], [], 1),
        ("2026-09-08T10:00", "HardDeleted", "BusinessGlossary.LegacyKPI", "admin", [], [], 1),
        # ut12 #7: the child the recursive delete took with it (deleted-entities listed it, the audit did not)
        ("2026-09-08T10:00", "HardDeleted", "BusinessGlossary.LegacyKPI.OldMargin", "admin", [], [], 1),
        ("2026-09-08T11:00", "SoftDeleted", "mlflow_prod.churn_predictor", "david.kim", [], [], 1),
    ]
    assert by_kind(report, "deletion-with-dependents") == []
    assert [f.details["cascaded_from"] for f in by_kind(report, "deletion")].count("BusinessGlossary.LegacyKPI") == 1


def test_pii_and_classification_tags(report):
    got = {(f.time[:16], f.details["action"], f.details["tag_name"], f.entity_name, len(f.events))
           for f in by_kind(report, "sensitive-tag")}
    assert got == {
        ("2022-05-02T18:34", "added", "urn:li:tag:pii", "urn:li:container:DATABASE", 1),  # copied DataHub sample
        ("2024-03-04T10:05", "added", "urn:li:tag:PII", CUST, 2),  # globalTags MCL + TAG EntityChangeEvent
        ("2024-03-04T10:06", "added", "urn:li:glossaryTerm:Classification.PersonalInformation", CUST, 2),
        # a column's tag, known from its schemaField's TAG event only: about the dataset, as it is when the
        # dataset's editableSchemaMetadata MCL arrives too (ut42d #1)
        ("2024-03-04T10:20", "added", "urn:li:tag:PII", CUST, 1),
        ("2024-03-04T10:20", "added", "urn:li:glossaryTerm:Classification.Email", CUST, 1),
        ("2026-09-02T09:00", "added", "PII.Sensitive", OM_ORDERS, 1),
        ("2026-09-03T10:00", "added", "PII.NonSensitive", "mlflow_prod.churn_predictor", 1),
    }
    # Tier / Gold / Finance tags are not classification tags
    assert not any("Tier" in f.details["tag_name"] or "Gold" in f.details["tag_name"]
                   for f in by_kind(report, "sensitive-tag"))


def test_audit_agents_names_the_impersonator_as_users_are_named(db):
    """ut12 #9: the query showed an OpenMetadata impersonator as its IRI beside the user's userName."""
    with open_store("embedded", path=db, read_only=True) as store:
        rows = run_query(store, get_query("audit-agents"), {}).dicts()
    assert [(r["user"].value, r["impersonator"].value) for r in rows if r["problem"].value == "impersonated"] \
        == [("david.kim", "metadata-agent-bot")]


def test_impersonated_and_bots(report):
    (imp,) = by_kind(report, "impersonated")
    assert (imp.time[:16], imp.entity_name, imp.details) == (
        "2026-09-03T10:00", "mlflow_prod.churn_predictor", {"user": "david.kim", "impersonator": "metadata-agent-bot"})
    bots = {f.details["user"]: f.details["changes"] for f in by_kind(report, "bot")}
    assert bots == {"ingestion-bot": 14, "urn:li:corpuser:datahub": 24, "urn:li:corpuser:svc_airflow": 23}
    assert all(len(f.events) == f.details["changes"] for f in by_kind(report, "bot"))


def test_schema_drops_lineage_removals_and_version_gap(report):
    drops = {(f.time[:16], f.details["field_name"], tuple(f.details["dependents"]))
             for f in by_kind(report, "schema-drop")}
    # ut13 #3: the Airflow job that builds customer_ltv read fct_orders then (its dataJobInputOutput)
    ltv_job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,shop_etl,prod),build_customer_ltv)"
    assert drops == {("2024-03-10T02:30", "urn:li:schemaField:(%s,discount)" % FCT, (ltv_job, LTV, DREV))}
    # ut12 #6: the orders -> daily_revenue edge lists its columns (corpus lines 7, 35), none of them this one
    (unused,) = by_kind(report, "schema-drop-unused")
    assert (unused.time[:16], unused.details["field_name"], unused.details["dependents"], unused.details["unused_by"]) \
        == ("2026-09-10T08:30", OM_ORDERS + ".legacy_coupon_code", [], [OM_DR])
    assert unused.severity == "low" and "no column-level dependency of " + OM_DR in unused.summary
    removed = {(f.time[:16], f.entity_name, f.details["up_name"], len(f.events))
               for f in by_kind(report, "lineage-removed")}
    assert removed == {
        ("2024-03-10T02:15", FCT, LEGACY, 2),  # upstreamLineage MCL + relationshipChangeEvent REMOVE
        # not the hard delete's DELETE of upstreamLineage (2024-03-20T00:05): the deletion is (rv35 #5)
        ("2026-09-09T10:00", "looker_prod.revenue_overview", OM_DR, 1),
    }
    (gap,) = by_kind(report, "version-gap")  # the datasetKey MCL that created orders_legacy is not in the log
    assert (gap.time[:16], gap.entity_name, gap.details["version"]) == (
        "2024-03-20T00:05", LEGACY, "datasetKey (previous aspect version)")


def test_every_finding_points_at_real_events(report, db):
    events = {ev for f in report.findings for ev in f.events}
    with open_store("embedded", path=db, read_only=True) as store:
        for ev in events:
            rows = store.select(f"SELECT ?e ?t WHERE {{ ?e a <{OM_EVENT}ChangeEvent> ; <{OM_EVENT}timestamp> ?t }}",
                                {"e": ox.NamedNode(ev)})
            assert len(rows.rows) == 1, ev
        total = store.select(f"SELECT (COUNT(?e) AS ?n) WHERE {{ ?e a <{OM_EVENT}ChangeEvent> }}").rows[0][0]
    assert sum(n for _, n, _ in report.by_day()) == int(total.value) == 167


def test_activity_and_top_entities(report):
    days = {d: n for d, n, _ in report.by_day()}
    assert days["2024-03-04"] == 21 and days["2026-09-10"] == 5 and len(days) == 24
    assert report.by_user()[0] == ("urn:li:corpuser:datahub", 24)
    assert report.top_entities[0]["entity"] == FCT and report.top_entities[0]["events"] == 36


def test_lineage_of_most_impacted_asset(report):
    lin = report.lineage
    # customers: four PII / classification findings (two on the dataset, two on its email column, which
    # count for the dataset as an OpenMetadata column's for its table: ut42d #1), ahead of the churn
    # model (sensitive tag, impersonation, soft delete) and fct_orders
    assert lin.entity == CUST
    edges = {(e["down_name"], e["up_name"], e["valid"]) for e in lin.edges}
    stg_c = DS("hive,staging.stg_customers")
    assert edges == {(stg_c, CUST, True), (FCT, stg_c, True), (LTV, FCT, True), (DREV, FCT, True)}


def test_time_window(db):
    with open_store("embedded", path=db, read_only=True) as store:
        om = run_audit(store, since="2026-09-01", now_ms=NOW_MS)
        march = run_audit(store, since="2024-03-15", until="2024-03-15", now_ms=NOW_MS)
    assert om.counts() == {"schema-drop-unused": 1, "lineage-removed": 1, "sensitive-tag": 2, "impersonated": 1,
                           "deletion": 6, "bot": 1}
    assert march.counts() == {"deletion": 2}
    assert march.by_day() == [("2024-03-15", 6, {"urn:li:corpuser:bob": 2, "urn:li:corpuser:carol": 4})]
    # ut42a #3: a date, a datetime or epoch ms, as run_query takes them (a date failed after every query ran)
    with open_store("embedded", path=db, read_only=True) as store:
        for since, until in ((dt.date(2024, 3, 15), dt.date(2024, 3, 15)),
                             (dt.datetime(2024, 3, 15), dt.datetime(2024, 3, 15, 23, 59, 59, 999000)),
                             (1_710_460_800_000, 1_710_547_199_999)):
            again = run_audit(store, since=since, until=until, now_ms=NOW_MS)
            assert (again.counts(), again.since, again.until) == (march.counts(), march.since, march.until)
        with pytest.raises(InputError, match="parameter since: expected a string, datetime, date or epoch ms"):
            run_audit(store, since=[2024], now_ms=NOW_MS)
        # ut42d #4: the lineage drawing's time was echoed as typed ("1710072000000", "now")
        for until, shown in (("1710072000000", "2024-03-10T12:00:00.000Z"), ("2024-03-10", "2024-03-10T23:59:59.999Z"),
                             (None, "2027-01-15T08:00:00.000Z")):
            assert run_audit(store, until=until, now_ms=NOW_MS).lineage.as_of == shown


@pytest.mark.parametrize("kind", ["remote", "memory"])
def test_endpoint_and_memory_store_give_the_same_report(corpus_endpoint, corpus_export_dir, report, kind):
    """ut42a #2: on the memory store (rdflib's engine then) the audit found 55 unknown entities."""
    if kind == "remote":
        other = run_audit(open_store("remote", endpoint=corpus_endpoint), now_ms=NOW_MS).to_dict()
    else:
        with open_store("memory") as store:
            load_export(store, corpus_export_dir)
            other = run_audit(store, now_ms=NOW_MS).to_dict()
    local = report.to_dict()
    for doc in (other, local):
        doc.pop("store")
    assert other == local


# ----------------------------------------------------------------------------- findings the corpus does not have


def _om(template: dict, **changes) -> dict:
    event = dict(template)
    event.pop("changeDescription", None)
    event.update(changes)
    return {k: v for k, v in event.items() if v is not None}


def _mapped_store(events: list[dict], work: Path) -> Path:
    """``events`` mapped by the reference mapper (none may be quarantined) into a store ``work/db``;
    the N-Triples stay in ``work/x.nt``."""
    src = work / "events.jsonl"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    counts = map_to_files([str(src)], work / "x.nt", work / "q.jsonl").as_dict()
    assert counts["quarantined"] == 0, (work / "q.jsonl").read_text()[:500]
    with open_store("embedded", path=work / "db", create=True) as store, (work / "x.nt").open("rb") as nt:
        store.load_ntriples(nt)
    return work / "db"


@pytest.fixture(scope="module")
def synthetic_db(shared_dir, tmp_path_factory) -> Path:
    """OpenMetadata events built from corpus lines: a version gap, a regression, out-of-order timestamps
    (and a use between two generations of one version, which is not out of order),
    an event without a user and a soft delete of a table that still feeds another one."""
    lines = [json.loads(line) for line in (shared_dir / "corpus/openmetadata/change_events.jsonl").open()]
    created = next(e for e in lines if e["eventType"] == "entityCreated" and e["entityType"] == "table")
    lineage = next(e for e in lines if e["eventType"] == "entityLineageAdded")
    base = dict(created, entity=None, domains=None)
    a, b = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
    t = 1_900_000_000_000
    events = [
        _om(base, id="e1", entityId=a, entityFullyQualifiedName="x.a", userName="alice", timestamp=t),
        _om(base, id="e2", eventType="entityUpdated", entityId=a, entityFullyQualifiedName="x.a", userName="alice",
            previousVersion=0.1, currentVersion=0.2, timestamp=t + 1000),
        _om(base, id="e3", eventType="entityUpdated", entityId=a, entityFullyQualifiedName="x.a", userName="alice",
            previousVersion=0.3, currentVersion=0.4, timestamp=t + 2000),  # gap: nothing generated 0.3
        _om(base, id="e10", eventType="entityUpdated", entityId=a, entityFullyQualifiedName="x.a", userName="alice",
            previousVersion=0.3, currentVersion=0.35, timestamp=t + 2100),  # the same gap: one finding (ut17 #5)
        _om(base, id="e4", eventType="entityUpdated", entityId=a, entityFullyQualifiedName="x.a", userName="alice",
            previousVersion=0.4, currentVersion=0.2, timestamp=t + 3000),  # regression; 0.2 generated twice
        _om(base, id="e9", eventType="entityUpdated", entityId=a, entityFullyQualifiedName="x.a", userName="alice",
            previousVersion=0.2, currentVersion=0.6, timestamp=t + 2500),  # uses 0.2 between its generations:
        # in order (a user's test: "generated only after" compared with e4, not with e2)
        _om(base, id="e5", entityId=b, entityFullyQualifiedName="x.b", userName="bob", timestamp=t + 5000),
        _om(base, id="e6", eventType="entityUpdated", entityId=b, entityFullyQualifiedName="x.b", userName=None,
            previousVersion=0.1, currentVersion=0.2, timestamp=t + 4000),  # before b was created; no user
        dict(lineage, id="e7", timestamp=t + 6000,
             entity=dict(lineage["entity"], fromEntity=dict(lineage["entity"]["fromEntity"], id=a,
                                                             fullyQualifiedName="x.a"))),
        _om(base, id="e8", eventType="entitySoftDeleted", entityId=a, entityFullyQualifiedName="x.a", userName="carol",
            previousVersion=0.2, currentVersion=0.5, timestamp=t + 7000),
    ]
    return _mapped_store(events, tmp_path_factory.mktemp("audit-synthetic"))


def test_synthetic_version_and_agent_findings(synthetic_db):
    with open_store("embedded", path=synthetic_db, read_only=True) as store:
        rep = run_audit(store, now_ms=2_000_000_000_000)
    got = sorted((f.kind, f.entity_name, f.details.get("version"), len(f.events)) for f in rep.findings
                 if f.kind in ("version-gap", "version-regression", "out-of-order"))
    assert got == [("out-of-order", "x.b", "0.1", 2), ("version-gap", "x.a", "0.3", 2),
                   ("version-regression", "x.a", "0.2", 1), ("version-regression", "x.a", "0.2", 2)]
    (no_user,) = rep.of_kind("no-user")
    assert no_user.entity_name == "x.b"
    (dep,) = rep.of_kind("deletion-with-dependents")
    assert dep.entity_name == "x.a" and dep.details["dependents"] == [OM_DR]
    assert rep.lineage.entity_name == "x.a"


def _mcl(urn: str, aspect: str, value: dict | None, at_ms: int, *, change: str = "UPSERT") -> dict:
    """A DataHub MetadataChangeLog line (the corpus's shape, systemMetadata trimmed)."""
    line = {"entityType": "dataset", "entityUrn": urn, "changeType": change, "aspectName": aspect,
            "systemMetadata": {"lastObserved": at_ms + 7, "runId": "r", "version": "1"},
            "created": {"time": at_ms, "actor": "urn:li:corpuser:dave"}}
    if value is not None:
        line["aspect"] = {"value": json.dumps(value), "contentType": "application/json"}
    return line


@pytest.fixture(scope="module")
def integrity_db(shared_dir, tmp_path_factory) -> Path:
    """A log no single live catalog could have written, beside its legitimate look-alikes."""
    lines = [json.loads(line) for line in (shared_dir / "corpus/openmetadata/change_events.jsonl").open()]
    created = next(e for e in lines if e["eventType"] == "entityCreated" and e["entityType"] == "table")
    lineage = next(e for e in lines if e["eventType"] == "entityLineageAdded")
    base = dict(created, entity=None, domains=None, userName="alice")
    t, ids = 1_900_000_000_000, [f"00000000-0000-4000-8000-0000000000{i:02d}" for i in range(10)]

    def om(n, eid, fqn, at, event_type="entityCreated", **kw):
        return _om(base, id=f"i{n}", eventType=event_type, entityId=ids[eid], entityFullyQualifiedName=fqn,
                   timestamp=t + at, **kw)

    key = {"platform": "urn:li:dataPlatform:hive", "name": "x", "origin": "PROD"}
    dh_back, dh_gone, dh_same = DS("hive,x.back"), DS("hive,x.gone"), DS("hive,x.same")
    events = [
        om(1, 0, "x.c", 0), om(2, 0, "x.c", 1000, "entityDeleted"),
        om(3, 0, "x.c", 2000, "entityUpdated", previousVersion=0.1, currentVersion=0.2),  # after the hard delete
        om(4, 1, "x.d", 0), om(5, 1, "x.d", 1000, "entityDeleted"), om(6, 2, "x.d", 2000),  # name reused: fine
        om(7, 3, "x.e", 0), om(8, 4, "x.e", 500),  # twins
        om(9, 5, "x.f", 0), om(10, 5, "x.f", 100, "entitySoftDeleted"), om(11, 6, "x.f", 200),  # soft: still named
        dict(lineage, id="i12", timestamp=t + 3000,
             entity=dict(lineage["entity"], fromEntity=dict(lineage["entity"]["fromEntity"], id=ids[9],
                                                             fullyQualifiedName="x.ghost"),
                         toEntity=dict(lineage["entity"]["toEntity"], id=ids[2], fullyQualifiedName="x.d"))),
        # ut42b #5: a second edge from the ghost in that millisecond made a second finding
        dict(lineage, id="i14", timestamp=t + 3000, entityId=ids[8],
             entity=dict(lineage["entity"], fromEntity=dict(lineage["entity"]["fromEntity"], id=ids[9],
                                                             fullyQualifiedName="x.ghost"),
                         toEntity=dict(lineage["entity"]["toEntity"], id=ids[7], fullyQualifiedName="x.g"))),
        # DataHub: deleted, written again (re-created), changed: fine; deleted, then changed: a finding
        _mcl(dh_back, "datasetKey", key, t), _mcl(dh_back, "datasetKey", None, t + 1000, change="DELETE"),
        _mcl(dh_back, "status", None, t + 1000, change="DELETE"),
        _mcl(dh_back, "datasetKey", key, t + 2000), _mcl(dh_back, "status", {"removed": False}, t + 3000),
        _mcl(dh_gone, "datasetKey", key, t), _mcl(dh_gone, "datasetKey", None, t + 1000, change="DELETE"),
        _mcl(dh_gone, "status", {"removed": False}, t + 3000),
        # ut18 #5: re-created with another aspect in the key aspect's millisecond (one request): fine
        _mcl(dh_same, "datasetKey", key, t), _mcl(dh_same, "datasetKey", None, t + 1000, change="DELETE"),
        _mcl(dh_same, "datasetKey", key, t + 2000), _mcl(dh_same, "status", {"removed": False}, t + 2000),
        # ua51 #1: x.e's id under another entity type: a second node, and its name ambiguous
        om(15, 3, "x.e", 6000, "entityUpdated", entityType="Table", previousVersion=0.1, currentVersion=0.2),
        om(13, 7, "x.g", 5000),  # last: sent again below
    ]
    db = _mapped_store(events, tmp_path_factory.mktemp("audit-integrity"))
    # ut8a #2: event i13 sent again with another time and user, mapped by another run (within one run
    # the reference mapper quarantines it), and loaded into the same store
    again = db.parent / "again"
    again.mkdir()
    (again / "events.jsonl").write_text(json.dumps(dict(events[-1], userName="bob", timestamp=t + 5500)) + "\n")
    map_to_files([str(again / "events.jsonl")], again / "x.nt", again / "q.jsonl")
    with open_store("embedded", path=db) as store, (again / "x.nt").open("rb") as nt:
        store.load_ntriples(nt)
    with (db.parent / "x.nt").open("ab") as both:  # the endpoint gets the same triples
        both.write((again / "x.nt").read_bytes())
    return db


@pytest.fixture(scope="module")
def integrity_endpoint(integrity_db):
    with oxigraph_server(integrity_db.parent / "served") as url:
        with (integrity_db.parent / "x.nt").open("rb") as nt:
            open_store("remote", endpoint=url).load_ntriples(nt)
        yield url


@pytest.mark.parametrize("kind", ["embedded", "remote"])
def test_integrity_findings(kind, request, integrity_db):
    """ut4a #4: an update after a hard delete, two live tables with one name and lineage from an entity no event
    mentions were reported by neither check nor audit. The corpus has none, so the endpoint is compared here."""
    if kind == "embedded":
        store = open_store("embedded", path=integrity_db, read_only=True)
    else:
        store = open_store("remote", endpoint=request.getfixturevalue("integrity_endpoint"))
    with store:
        rep = run_audit(store, now_ms=2_000_000_000_000)
        later = run_audit(store, since="2030-03-17T17:46:46.001Z", now_ms=2_000_000_000_000, lineage=False)
    assert later.of_kind("duplicate-id") == []  # its time is before the window
    got = sorted((f.kind, f.entity_name, f.time, len(f.events)) for f in rep.findings
                 if f.kind in ("change-after-delete", "duplicate-name", "duplicate-id", "unknown-entity",
                               "conflicting-event"))
    assert got == [("change-after-delete", DS("hive,x.gone"), "2030-03-17T17:46:43.000Z", 2),
                   ("change-after-delete", "x.c", "2030-03-17T17:46:42.000Z", 2),
                   ("conflicting-event", "x.g", "2030-03-17T17:46:45.000Z", 1),
                   ("duplicate-id", "x.e", "2030-03-17T17:46:46.000Z", 2),
                   ("duplicate-name", "x.e", "2030-03-17T17:46:40.500Z", 2),
                   ("duplicate-name", "x.f", "2030-03-17T17:46:40.200Z", 2),
                   ("unknown-entity", "x.ghost", "2030-03-17T17:46:43.000Z", 2)]
    (twin,) = [f for f in rep.of_kind("duplicate-name") if f.entity_name == "x.e"]
    assert twin.details["other_time"] == "2030-03-17T17:46:40.000Z"
    assert "another table with this fullyQualifiedName still existed: " in twin.summary
    assert twin.summary.endswith(" (there since 2030-03-17T17:46:40.000Z)")  # the time's display form
    (twin_id,) = rep.of_kind("duplicate-id")
    assert twin_id.summary == ("first event by alice; another entity has its entityId 00000000-0000-4000-8000-000000000003: "
                               "https://open-metadata.org/entity/table/00000000-0000-4000-8000-000000000003 "
                               "(since 2030-03-17T17:46:40.000Z)")
    assert twin_id.entity == "https://open-metadata.org/entity/Table/00000000-0000-4000-8000-000000000003"
    (conflict,) = rep.of_kind("conflicting-event")
    assert conflict.summary == ("one event id with 2 timestamps and 2 users: lines with this id and different content "
                                "were mapped by different export runs (times 2030-03-17T17:46:45.000Z to "
                                "2030-03-17T17:46:45.500Z; users alice, bob)")
    (after,) = [f for f in rep.of_kind("change-after-delete") if f.entity_name == "x.c"]
    assert "after its hard delete at 2030-03-17T17:46:41.000Z" in after.summary


# ----------------------------------------------------------------------------- CLI, HTML, browser


def test_reasoning_changes_no_finding(db, report, tmp_path):
    # `changeprov reason` adds the OWL 2 RL entailments (e.g. prov:used from om:affectsEntity); an audit of
    # the reasoned store must not read them as new problems (it once reported 130 version gaps more)
    from changeprov.sparql.reason import reason

    reasoned = tmp_path / "reasoned"
    shutil.copytree(db, reasoned)
    with open_store("embedded", path=reasoned) as store:
        assert reason(store).added > 0
        again = run_audit(store, now_ms=NOW_MS)
    assert [f.__dict__ for f in again.findings] == [f.__dict__ for f in report.findings]


def test_cli_writes_html_and_json_and_exit_codes(db, tmp_path, capsys):
    html = tmp_path / "report.html"
    assert main(["audit", "--store", str(db), "--out", str(html)]) == 1
    assert "25 finding(s)" in capsys.readouterr().err
    page = html.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="activity-chart"' in page and 'id="lineage-graph"' in page
    assert main(["audit", "--store", str(db), "--format", "json", "--since", "1710460800000", "--until", "2024-03-15"]) == 1
    doc = json.loads(capsys.readouterr().out)
    # ut12 #8: the window in the one form every other time has (it was shown as typed)
    assert (doc["since"], doc["until"]) == ("2024-03-15T00:00:00.000Z", "2024-03-15T23:59:59.999Z")
    assert doc["summary"]["by_kind"]["deletion"] == 2
    assert all(f["events"] and f["severity"] in ("high", "medium", "low") for f in doc["findings"])
    assert main(["audit", "--store", str(db), "--since", "2030-01-01", "--out", str(tmp_path / "e.html")]) == 0
    assert main(["audit", "--store", str(tmp_path / "missing"), "--out", str(html)]) == 2
    assert main(["audit", "--store", str(db), "--since", "yesterday-ish"]) == 2
    assert "not a time" in capsys.readouterr().err
    nested = tmp_path / "new" / "dir" / "r.json"
    assert main(["audit", "--store", str(db), "--format", "json", "--out", str(nested)]) == 1
    assert json.loads(nested.read_text())["summary"]["by_kind"], "missing folders are created"
    assert main(["audit", "--store", str(db), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    # ut42d #9: the flag as typed, not the query's parameter
    for bad, message in ((["--bot-pattern", "("], "error: --bot-pattern: not a valid regular expression"),
                         (["--tag-pattern", "["], "error: --tag-pattern: not a valid regular expression"),
                         (["--since", "garbage"], "error: --since: not a time"),
                         (["--since", "2024-03-15", "--until", "2024-03-01"], "is after until")):
        assert main(["audit", "--store", str(db), "--format", "json", *bad]) == 2, bad
        assert message in capsys.readouterr().err, bad


@pytest.mark.parametrize("options", [{"bot_pattern": "("}, {"tag_pattern": "["},
                                     {"since": "2024-03-15", "until": "2024-03-01"}])
def test_audit_checks_its_options_before_any_query(db, options):
    """ut48a #3: a bad --bot-pattern failed at query 6 of 11, since after until at query 2: minutes into
    an audit of a big store."""
    heard = []
    with open_store("embedded", path=db, read_only=True) as store, pytest.raises(InputError):
        run_audit(store, progress=heard.append, **options)
    assert heard == []


def test_audit_until_a_bare_date_is_that_day_s_end(db):
    """rv49 A2: the up-front window check must read until=2024-03-01 as the day's end, as the queries do."""
    with open_store("embedded", path=db, read_only=True) as store:
        report = run_audit(store, since="2024-03-01T12:00:00Z", until="2024-03-01", lineage=False)
    assert report.until == "2024-03-01T23:59:59.999Z"


def test_html_is_self_contained_and_escaped(report):
    page = render_html(report)
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\bsrc=|@import|url\((?!#)", page)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    for kind in report.counts():
        assert f'id="kind-{kind}"' in page
    for ev in {ev for f in report.findings for ev in f.events[:10]}:
        assert f'title="{ev}"' in page  # every finding names its evidence events
    assert "<script>alert" not in page


def test_html_links_to_nothing_outside_the_page(report):
    """rv40 M4: any IRI the store held was a link, a crafted javascript: one too, and the page's CSP
    ('unsafe-inline' scripts) let a click run it; the one inline script is allowed by its hash.
    ut47a #9: the http(s) IRIs, which name no web page, sent internal ids to open-metadata.org: no IRI
    is a link, each is shown on hover."""
    import dataclasses

    evil = "javascript:alert(document.domain)//x"
    finding = dataclasses.replace(report.findings[0], entity=evil, events=[evil, report.findings[0].events[0]])
    lineage = dataclasses.replace(report.lineage, edges=[dict(e, edge=evil) for e in report.lineage.edges])
    top = [dict(t, entity=evil) for t in report.top_entities]
    page = render_html(dataclasses.replace(report, findings=[finding], lineage=lineage, top_entities=top))
    assert "href=\"javascript" not in page and f'title="{evil}"' in page
    assert f'title="{report.findings[0].events[0]}"' in page
    assert set(re.findall(r'href="(.)', page)) == {"#"}, "a link out of the page"
    assert set(re.findall(r'href="(.)', render_html(report))) == {"#"}, "a link out of the page"
    csp = re.search(r'Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert "script-src 'sha256-" in csp and "'unsafe-inline'" not in csp.split("script-src")[1]


_ANY_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(?:Z|[+-][0-9]{2}:[0-9]{2})?")
_DISPLAY_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_every_time_in_the_report_has_the_one_display_form(report, fmt):
    """A user's test: the audit showed the store's shortest forms (…02:00:00Z beside …35.594Z, and
    the generated time with milliseconds), unlike the query table. Every time, in a column or in a
    finding's text, is RFC 3339 UTC with milliseconds."""
    text = json.dumps(report.to_dict()) if fmt == "json" else render_html(report)
    times = set(_ANY_TIME.findall(text))
    assert len(times) > 20
    assert sorted(t for t in times if not _DISPLAY_TIME.fullmatch(t)) == []


def test_layered_layout_orders_layers_and_survives_cycles():
    lay = layered_layout(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("a", "c"), ("d", "c")])
    assert {n: l for n, (l, _) in lay.items()} == {"a": 0, "b": 1, "c": 2, "d": 0}
    cyc = layered_layout(["x", "y"], [("x", "y"), ("y", "x")])
    assert set(cyc) == {"x", "y"}


def _chromium_or_skip() -> str:
    exe = str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium")
    if exe:
        return exe
    if os.environ.get("CI"):
        pytest.fail("CI is set but Chromium is missing: `make test` installs it with apt-get as root "
                    "(apt-get install -y chromium)")
    pytest.skip("headless Chromium not installed (apt-get install -y chromium); CI runs this test")


@pytest.mark.browser
def test_report_renders_in_headless_chromium(report, tmp_path):
    exe = _chromium_or_skip()
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    proc = subprocess.run([exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=2000", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert console == []
    attrs = dict(re.findall(r'\b(data-[a-z-]+)="([^"]*)"', dom.split("<head>", 1)[0]))
    assert attrs.get("data-rendered") == "yes", "the inline script did not run to the end"
    assert int(attrs["data-chart-bars"]) == len(report.by_day()) and int(attrs["data-chart-width"]) > 300
    assert int(attrs["data-lineage-nodes"]) == 5 and int(attrs["data-lineage-width"]) > 300
    assert '<svg id="activity-chart"' in dom and '<svg id="lineage-graph"' in dom


def test_a_tag_an_entity_was_created_with_says_so(tmp_path):
    """ut6a #10: a table created with PII columns read like a bot adding PII to a live table."""
    t = 1_900_000_000_000
    pii = [{"tagFQN": "PII.Sensitive", "source": "Classification"}]
    table = {"eventType": "entityCreated", "entityType": "table", "entityFullyQualifiedName": "s.d.x.t",
             "userName": "ingestion-bot", "previousVersion": 0.1, "currentVersion": 0.1}
    events = [
        dict(table, id="c1", entityId="t-1", timestamp=t, entity={"columns": [{"name": "email", "tags": pii}]}),
        dict(table, id="c2", entityId="t-1", eventType="entityUpdated", timestamp=t + 1000, currentVersion=0.2,
             changeDescription={"fieldsAdded": [{"name": "tags", "newValue": json.dumps(pii)}]}),
    ]
    with open_store("embedded", path=_mapped_store(events, tmp_path), read_only=True) as store:
        rep = run_audit(store, now_ms=2_000_000_000_000)
    got = sorted((f.summary, f.details["at_creation"]) for f in rep.of_kind("sensitive-tag"))
    assert got == [("tag PII.Sensitive added to columns.email.tags at creation by ingestion-bot", True),
                   ("tag PII.Sensitive added to tags by ingestion-bot", False)]


def test_a_datahub_column_tag_on_both_feeds_is_one_finding_about_the_dataset(tmp_path):
    """ut41c #1: DataHub sends a column tag added in its UI as an editableSchemaMetadata MCL of the dataset
    and a TAG event of the schemaField; the audit merged the two feeds for a dataset's tags only, so each
    column PII action was two findings. ut42d #1: a TAG event alone (one feed consumed, or the other one
    not loaded yet) was about the column, so the finding moved to the dataset when the MCL arrived and a
    baseline called it new: it is about the dataset from the start, naming the column."""
    ds = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.core.customers,PROD)"
    t, later = 1_770_023_700_000, 1_770_659_100_000

    def mcl(time, version, tags, previous=None):
        def value(tag_list):
            return {"value": json.dumps({"editableSchemaFieldInfo": [
                {"fieldPath": "email", "globalTags": {"tags": [{"tag": x} for x in tag_list]}}]}),
                "contentType": "application/json"}
        event = {"entityType": "dataset", "entityUrn": ds, "changeType": "UPSERT", "aspectName": "editableSchemaMetadata",
                 "aspect": value(tags), "systemMetadata": {"version": version},
                 "created": {"time": time, "actor": "urn:li:corpuser:alice" if time == t else "urn:li:corpuser:carol"}}
        if previous is not None:
            event.update(previousAspectValue=value(previous), previousSystemMetadata={"version": str(int(version) - 1)})
        return event

    def ece(time, operation, field="email"):
        return {"entityType": "schemaField", "entityUrn": f"urn:li:schemaField:({ds},{field})", "category": "TAG",
                "operation": operation, "modifier": "urn:li:tag:PII", "version": 0,
                "auditStamp": {"time": time, "actor": "urn:li:corpuser:alice" if time == t else "urn:li:corpuser:carol"},
                "parameters": {"tagUrn": "urn:li:tag:PII", "fieldPath": field, "parentUrn": ds}}

    events = [mcl(t, "1", ["urn:li:tag:PII"]), ece(t, "ADD"), mcl(later, "2", [], previous=["urn:li:tag:PII"]),
              ece(later, "REMOVE"), ece(later, "ADD", field="phone")]
    (tmp_path / "one-feed").mkdir()
    with open_store("embedded", path=_mapped_store(events[1:2], tmp_path / "one-feed"), read_only=True) as store:
        first = run_audit(store, now_ms=2_000_000_000_000)
    with open_store("embedded", path=_mapped_store(events, tmp_path), read_only=True) as store:
        rep = run_audit(store, now_ms=2_000_000_000_000)
    got = sorted((f.time[:16], f.summary, f.entity_name, len(f.events)) for f in rep.of_kind("sensitive-tag"))
    assert got == [
        ("2026-02-02T09:15", "tag urn:li:tag:PII added to editableSchemaMetadata.email.globalTags, email (TAG) by "
         "urn:li:corpuser:alice", ds, 2),
        ("2026-02-09T17:45", "tag urn:li:tag:PII added to phone (TAG) by urn:li:corpuser:carol", ds, 1),
        ("2026-02-09T17:45", "tag urn:li:tag:PII removed from editableSchemaMetadata.email.globalTags, email (TAG) by "
         "urn:li:corpuser:carol", ds, 2)]
    # the finding the TAG event alone made is the same one once the MCL is loaded beside it
    (alone,) = first.of_kind("sensitive-tag")
    assert alone.entity_name == ds and alone.summary == "tag urn:li:tag:PII added to email (TAG) by urn:li:corpuser:alice"
    compared = compare(rep, first.to_dict())
    assert [f.time[:16] for f in compared.known] == ["2026-02-02T09:15"] and not compared.gone


def test_a_dropped_column_used_by_another_table_is_not_used_by_this_one(tmp_path):
    """ut13 #2: a drop was "used" by every dependent once any column edge started at the column, even
    one into another table: c reads only a.y, so dropping a.x breaks b and not c."""
    t = 1_704_139_200_000

    def lineage(n, down, column):
        return {"id": f"lin-{n}", "eventType": "entityLineageAdded", "entityType": "lineage", "entityId": f"l-{n}",
                "entityFullyQualifiedName": f"s.d.x.a--upstream-->s.d.x.{down}", "userName": "alice", "timestamp": t,
                "entity": {"fromEntity": {"id": "a", "type": "table", "fullyQualifiedName": "s.d.x.a"},
                           "toEntity": {"id": down, "type": "table", "fullyQualifiedName": f"s.d.x.{down}"},
                           "lineageDetails": {"columnsLineage": [
                               {"fromColumns": [f"s.d.x.a.{column}"], "toColumn": f"s.d.x.{down}.{column}"}]}}}

    drop = {"id": "drop", "eventType": "entityUpdated", "entityType": "table", "entityId": "a",
            "entityFullyQualifiedName": "s.d.x.a", "userName": "bob", "timestamp": t + 60_000,
            "previousVersion": 0.1, "currentVersion": 0.2,
            "changeDescription": {"fieldsAdded": [], "fieldsUpdated": [], "previousVersion": 0.1, "fieldsDeleted": [
                {"name": "columns", "oldValue": json.dumps([{"name": "x", "fullyQualifiedName": "s.d.x.a.x"}])}]}}
    db = _mapped_store([lineage(1, "b", "x"), lineage(2, "c", "y"), drop], tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        (finding,) = run_audit(store, now_ms=NOW_MS).of_kind("schema-drop")
    assert (finding.details["dependents"], finding.details["unused_by"]) == (["s.d.x.b"], ["s.d.x.c"])


@pytest.mark.parametrize("log_starts_mid_history", [False, True])
def test_a_deleted_dataset_that_a_job_still_read_has_the_job_as_dependent(tmp_path, log_starts_mid_history):
    """ut13 #3: a DataHub job's inputs are no lineage edge, so deleting a dataset that only a job read
    was a plain deletion, while `impact --param jobs=true` named the job. rv49 LK7: a log that starts
    after the job first listed the input has it only as kept (om:keptInput), never added."""
    t, hour = 1_704_139_200_000, 3_600_000
    ds, job = DS("hive,db.src"), "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,prod),load)"

    def mcl(urn, kind, aspect, ms, change="UPSERT", value=None, previous=None):
        event = {"entityType": kind, "entityUrn": urn, "changeType": change, "aspectName": aspect,
                 "systemMetadata": {"lastObserved": ms, "version": "2" if previous else "1"},
                 "created": {"time": ms, "actor": "urn:li:corpuser:bob"}}
        if value is not None:
            event["aspect"] = {"value": json.dumps(value), "contentType": "application/json"}
        if previous is not None:
            event["previousAspectValue"] = {"value": json.dumps(previous), "contentType": "application/json"}
            event["previousSystemMetadata"] = {"version": "1"}
        return event

    events = [mcl(ds, "dataset", "datasetKey", t, value={"name": "src"}),
              mcl(job, "dataJob", "dataJobInputOutput", t, value={"inputDatasets": [ds], "outputDatasets": []},
                  previous={"inputDatasets": [ds], "outputDatasets": []} if log_starts_mid_history else None),
              mcl(ds, "dataset", "datasetKey", t + hour, change="DELETE", previous={"name": "src"})]
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:  # the case this test is for
        kept = {r["dataset"].value for r in store.select(
            "SELECT ?dataset WHERE { ?fc <https://open-metadata.org/schema/type/changeEvent/keptInput> ?dataset }"
        ).dicts()}
    assert kept == ({ds} if log_starts_mid_history else set())
    with open_store("embedded", path=db, read_only=True) as store:
        report = run_audit(store, now_ms=NOW_MS)
    (finding,) = report.of_kind("deletion-with-dependents")
    assert (finding.entity_name, finding.details["dependents"]) == (ds, [job])


@pytest.mark.parametrize("fail_on, code", [("low", 1), ("medium", 0), ("high", 0), ("never", 0)])
def test_fail_on_chooses_which_findings_make_exit_1(tmp_path, capsys, fail_on, code):
    """ut14 #7: every DataHub store has a low finding (its ingestion bot), so `audit` always exited 1
    and a nightly job under `set -e` always failed. A store whose only finding is a low deletion."""
    event = {"id": "d-1", "eventType": "entitySoftDeleted", "entityType": "table", "entityId": "t-1",
             "entityFullyQualifiedName": "s.d.x.t", "userName": "alice", "timestamp": 1_704_139_200_000,
             "previousVersion": 0.1, "currentVersion": 0.2}
    created = {**event, "id": "c-1", "eventType": "entityCreated", "timestamp": 1_704_139_100_000,
               "previousVersion": 0.1, "currentVersion": 0.1}
    db = _mapped_store([created, event], tmp_path)
    argv = ["audit", "--store", str(db), "--out", str(tmp_path / "r.json"), "--format", "json", "--fail-on", fail_on]
    assert main(argv) == code
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["by_kind"] == {"deletion": 1}


@pytest.mark.parametrize("fail_on, code", [("low", 1), ("medium", 1), ("high", 0), ("never", 0)])
def test_fail_on_medium_takes_a_medium_finding(tmp_path, fail_on, code):
    """rv46 #6: `--fail-on medium` read as high alone passed every test (the store above has only a low
    finding). A store whose findings are a medium impersonated change and a low deletion."""
    base = {"entityType": "table", "entityId": "t-1", "entityFullyQualifiedName": "s.d.x.t", "userName": "alice"}
    events = [{**base, "id": "c-1", "eventType": "entityCreated", "timestamp": 1_704_139_100_000,
               "previousVersion": 0.1, "currentVersion": 0.1},
              {**base, "id": "u-1", "eventType": "entityUpdated", "timestamp": 1_704_139_150_000, "impersonatedBy": "bob",
               "previousVersion": 0.1, "currentVersion": 0.2},
              {**base, "id": "d-1", "eventType": "entitySoftDeleted", "timestamp": 1_704_139_200_000,
               "previousVersion": 0.2, "currentVersion": 0.3}]
    db = _mapped_store(events, tmp_path)
    argv = ["audit", "--store", str(db), "--out", str(tmp_path / "r.json"), "--format", "json", "--fail-on", fail_on]
    assert main(argv) == code
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["by_kind"] == {"deletion": 1, "impersonated": 1}


def test_audit_says_which_query_runs(db, capsys):
    """ut46d #3: an audit was silent until its end (45 s on 2.3M triples)."""
    heard: list[str] = []
    with open_store("embedded", path=db, read_only=True) as store:
        run_audit(store, now_ms=NOW_MS, progress=heard.append, lineage=False)
    assert heard[0] == "audit-activity (1 of 11)" and heard[-1] == "audit-lineage-removed (11 of 11)"
    assert len(heard) == 11


def test_the_most_impacted_entity_weighs_its_findings_by_severity():
    """rv46 #8: the weights that choose the asset whose lineage the report draws were all 1 in a mutant,
    and no test saw it: one high finding outweighs two low ones, two medium ones one high."""
    from changeprov.sparql.audit import Finding, impact_ranking

    def finding(kind, entity):
        return Finding(kind, "2024-01-01T00:00:00.000Z", "x", [], entity=entity, entity_name=entity.rsplit("/", 1)[-1])

    high, lows = [finding("schema-drop", "urn:x/high")], [finding("deletion", "urn:x/low")] * 2
    assert [name for _, name, _ in impact_ranking(lows + high)] == ["high", "low"]
    mediums = [finding("impersonated", "urn:x/medium")] * 2
    assert [(name, score) for _, name, score in impact_ranking(high + mediums)] == [("medium", 4), ("high", 3)]


def test_a_column_dropped_from_a_dataset_a_job_reads_is_a_schema_drop(tmp_path):
    """ut13 #3: a column dropped from a dataset that only a DataHub job read was no finding at all."""
    t, hour = 1_704_139_200_000, 3_600_000
    ds, job = DS("hive,db.src"), "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,prod),load)"
    schema = lambda *names: {"fields": [{"fieldPath": n, "nativeDataType": "int"} for n in names]}

    def mcl(urn, kind, aspect, ms, version, value, previous=None):
        event = {"entityType": kind, "entityUrn": urn, "changeType": "UPSERT", "aspectName": aspect,
                 "systemMetadata": {"lastObserved": ms, "version": version},
                 "created": {"time": ms, "actor": "urn:li:corpuser:bob"},
                 "aspect": {"value": json.dumps(value), "contentType": "application/json"}}
        if previous is not None:
            event["previousAspectValue"] = {"value": json.dumps(previous[1]), "contentType": "application/json"}
            event["previousSystemMetadata"] = {"version": previous[0]}
        return event

    events = [mcl(ds, "dataset", "schemaMetadata", t, "1", schema("a", "b")),
              mcl(job, "dataJob", "dataJobInputOutput", t, "1", {"inputDatasets": [ds], "outputDatasets": []}),
              mcl(ds, "dataset", "schemaMetadata", t + hour, "2", schema("a"), previous=("1", schema("a", "b")))]
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        (drop,) = run_audit(store, now_ms=NOW_MS).of_kind("schema-drop")
    assert (drop.entity, drop.details["field"], drop.details["dependents"]) == (ds, f"urn:li:schemaField:({ds},b)", [job])


def _hard_delete(urn: str, ms: int, aspects: dict[str, dict], *, previous: bool = True) -> list[dict]:
    """DataHub's hard delete: a DELETE MCL per aspect (with its previous value), the key aspect's last."""
    return [{"entityType": "dataset", "entityUrn": urn, "changeType": "DELETE", "aspectName": aspect,
             "systemMetadata": {"lastObserved": ms + i}, "created": {"time": ms + i, "actor": "urn:li:corpuser:alice"},
             "previousSystemMetadata": {"version": "1"},
             **({"previousAspectValue": {"value": json.dumps(value), "contentType": "application/json"}}
                if previous else {})}
            for i, (aspect, value) in enumerate(aspects.items())]


@pytest.mark.parametrize("jobs", [False, True])
def test_a_datahub_hard_delete_is_one_deletion_not_a_drop_of_every_column(tmp_path, jobs):
    """ut16 #3: the schemaMetadata DELETE of a hard delete was a high schema-drop per column beside
    the deletion finding (an OpenMetadata hard delete gave the deletion alone)."""
    t, hour = 1_704_139_200_000, 3_600_000
    src, dst = DS("hive,db.src"), DS("hive,db.dst")
    job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,prod),load)"
    schema = {"fields": [{"fieldPath": n, "nativeDataType": "int"} for n in ("a", "b")]}
    reader = ({**_mcl(job, "dataJobInputOutput", {"inputDatasets": [src], "outputDatasets": []}, t), "entityType": "dataJob"}
              if jobs else _mcl(dst, "upstreamLineage", {"upstreams": [{"dataset": src, "type": "TRANSFORMED"}]}, t))
    events = [_mcl(src, "schemaMetadata", schema, t), reader,
              *_hard_delete(src, t + hour, {"schemaMetadata": schema, "datasetKey": {"name": "db.src"}})]
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        report = run_audit(store, now_ms=NOW_MS)
    assert not report.of_kind("schema-drop") and not report.of_kind("schema-drop-unused")
    (deletion,) = report.of_kind("deletion-with-dependents")
    assert deletion.entity == src


def test_an_edge_a_hard_delete_ended_is_not_removed_again_by_a_later_lineage(tmp_path):
    """ut16 #2: an upstreamLineage sent without its previous value, after the upstream's hard delete
    had ended the edge, was blamed for removing it."""
    t, day = 1_704_139_200_000, 86_400_000
    up, down, other = DS("hive,db.up"), DS("hive,db.down"), DS("hive,db.other")
    lineage = lambda *ups: {"upstreams": [{"dataset": u, "type": "TRANSFORMED"} for u in ups]}
    events = [_mcl(down, "upstreamLineage", lineage(up), t),
              *_hard_delete(up, t + day, {"datasetKey": {"name": "db.up"}}),
              _mcl(down, "upstreamLineage", lineage(other), t + 2 * day)]
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        assert not run_query(store, get_query("audit-lineage-removed"), {}).dicts()


@pytest.mark.parametrize("previous", [True, False])
def test_a_datahub_hard_delete_removes_no_edge_and_no_tag_beside_its_deletion(tmp_path, previous):
    """rv35 #5: the upstreamLineage DELETE of a hard delete (with its previous value) was a medium
    lineage-removed finding per upstream, beside the deletion, and (ut20 #9) its globalTags DELETE a
    sensitive tag removed; an OpenMetadata hard delete gives the deletion alone. rv36 #4: so was an
    upstreamLineage DELETE without its previous value (it ends every edge of the dataset)."""
    t, hour = 1_704_139_200_000, 3_600_000
    up, down = DS("hive,db.up"), DS("hive,db.down")
    lineage = {"upstreams": [{"dataset": up, "type": "TRANSFORMED"}]}
    tags = {"tags": [{"tag": "urn:li:tag:PII"}]}  # ut20 #9: its globalTags DELETE removed a sensitive tag
    events = [_mcl(down, "upstreamLineage", lineage, t), _mcl(down, "globalTags", tags, t),
              *_hard_delete(down, t + hour, {"upstreamLineage": lineage, "globalTags": tags,
                                             "datasetKey": {"name": "db.down"}}, previous=previous)]
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        report = run_audit(store, now_ms=NOW_MS)
        assert not run_query(store, get_query("audit-lineage-removed"), {}).dicts()
    assert not report.of_kind("lineage-removed") and [f.entity for f in report.of_kind("deletion")] == [down]
    assert [f.summary.split(" to ")[0] for f in report.of_kind("sensitive-tag")] == ["tag urn:li:tag:PII added"]


def test_a_nightly_audit_with_a_baseline_fails_on_what_the_night_added(tmp_path, capsys):
    """ut23 #2: on a store that grows, --fail-on high failed every night for an old finding, and a
    --since window by event time missed what a late file added (dated days before)."""
    t, day = 1_704_139_200_000, 86_400_000
    lineage = lambda up: {"upstreams": [{"dataset": up, "type": "TRANSFORMED"}]}  # noqa: E731

    def deleted_with_a_dependent(name: str, at: int) -> list[dict]:
        src, dst = DS(f"hive,db.{name}"), DS(f"hive,db.{name}_copy")
        return [_mcl(dst, "upstreamLineage", lineage(src), at),
                *_hard_delete(src, at + day, {"datasetKey": {"name": f"db.{name}"}})]

    def by_the_bot(name: str, at: int) -> dict:
        return {**_mcl(DS(f"hive,db.{name}"), "globalTags", {"tags": []}, at),
                "created": {"time": at, "actor": "urn:li:corpuser:datahub"}}

    nights = [[*deleted_with_a_dependent("a", t), by_the_bot("b", t)],
              # rv38 #1: the bot's finding says 2 changes on 2 entities now, and is the same finding
              [by_the_bot("c", t + 5 * day)],
              deleted_with_a_dependent("late", t - 3 * day)]  # a late file: events days before night 1
    events, codes, reports = [], [], []
    for n, night in enumerate(nights):
        events += night
        (tmp_path / f"n{n}").mkdir()
        db = _mapped_store(events, tmp_path / f"n{n}")
        report = tmp_path / f"n{n}.json"
        baseline = ["--baseline", str(reports[-1])] if reports else []
        codes.append(main(["audit", "--store", str(db), "--format", "json", "--out", str(report),
                           "--fail-on", "high", *baseline]))
        reports.append(report)
    assert codes == [1, 0, 1], "night 2 added no high finding; night 3's late file did"
    last = json.loads(reports[-1].read_text())
    new = [f for f in last["findings"] if f["new"]]
    assert [(f["kind"], f["entity"]) for f in new if f["severity"] == "high"] == [
        ("deletion-with-dependents", DS("hive,db.late"))]
    assert last["baseline"]["new"] == len(new) and last["baseline"]["known"] == len(last["findings"]) - len(new)
    assert "new since" in capsys.readouterr().err
    assert main(["audit", "--store", str(tmp_path / "n1" / "db"), "--format", "json", "--baseline", str(reports[0])]) == 0, \
        "night 2 added no finding at all: the bot's is the same one with another count"
    assert "0 new since" in capsys.readouterr().err
    html = tmp_path / "n2.html"
    assert main(["audit", "--store", str(tmp_path / "n2" / "db"), "--out", str(html), "--fail-on", "high",
                 "--baseline", str(reports[1])]) == 1
    page = html.read_text()
    assert f", {len(new)} new since the baseline</p>" in page and page.count('<span class="sev sev-new">new</span>') == len(new)
    # ut42d #3: the page names the baseline and says what the command line says of the comparison
    known = last["baseline"]["known"]
    assert (f"<p>against {reports[1]}: {len(new)} new, {known} known ({last['baseline']['changed']} with another "
            f"text), {len(last['baseline']['gone'])} gone</p>") in page
    assert '<p class="warning">warning: the baseline is a report of ' in page  # another store (n1's)
    # ut42d #2: a baseline of other patterns says so, in the report and on stderr
    capsys.readouterr()
    assert main(["audit", "--store", str(tmp_path / "n2" / "db"), "--format", "json", "--out", str(tmp_path / "p.json"),
                 "--baseline", str(reports[2]), "--tag-pattern", "pii", "--bot-pattern", "zzz"]) in (0, 1)
    patterned = json.loads((tmp_path / "p.json").read_text())
    assert (patterned["tag_pattern"], patterned["bot_pattern"]) == ("pii", "zzz")
    assert [w for w in patterned["baseline"]["warnings"] if "pattern" in w] == [
        f"the baseline chose bots by {last['bot_pattern']!r}, this report by 'zzz' (bot_pattern)",
        f"the baseline chose sensitive tags by {last['tag_pattern']!r}, this report by 'pii' (tag_pattern)"]
    assert "(bot_pattern)" in capsys.readouterr().err
    # ut42d #8: an empty --baseline (an unset variable) ran with no baseline, saying nothing
    assert main(["audit", "--store", str(tmp_path / "n2" / "db"), "--format", "json", "--baseline", ""]) == 2
    assert "--baseline '': give an earlier `audit --format json` report" in capsys.readouterr().err
    # rv40 m4: an entity or time that is a list was an internal error
    odd = [json.dumps(dict(last, findings=[dict(last["findings"][0], **{key: value})]))
           for key, value in (("entity", ["x"]), ("time", {"a": 1}), ("events", [["e"]]))]
    for bad in ("[1]", "null", '{"findings": "abc"}', '{"findings": [1]}', "[" * 100_000, *odd):  # rv38 #5
        (tmp_path / "not-a-report.json").write_text(bad)
        assert main(["audit", "--store", str(tmp_path / "n2" / "db"), "--baseline", str(tmp_path / "not-a-report.json"),
                     "--format", "json"]) == 2
        err = capsys.readouterr().err
        assert "not an audit report" in err or "nested too deep" in err, err


def test_a_baseline_of_the_same_store_named_from_another_folder_is_no_other_store(tmp_path, monkeypatch, capsys):
    """ut25 #2: a nightly audit run from another working folder (store1, ../store1) warned that the
    baseline was a report of another store."""
    (tmp_path / "w").mkdir()
    db = _mapped_store([_mcl(DS("hive,db.a"), "status", {"removed": True}, 1_704_139_200_000)], tmp_path / "w")
    monkeypatch.chdir(tmp_path / "w")
    assert main(["audit", "--store", "db", "--format", "json", "--out", "n1.json", "--fail-on", "never"]) == 0
    (tmp_path / "w" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "w" / "sub")
    capsys.readouterr()
    assert main(["audit", "--store", "../db", "--baseline", "../n1.json", "--format", "json", "--out", "n2.json",
                 "--fail-on", "never"]) == 0
    assert "warning" not in capsys.readouterr().err and db.is_dir()
    # rv43 L1: through a symbolic link, and a baseline from before e3d7454, which named it relatively
    (tmp_path / "w" / "link").symlink_to(db)
    old = json.loads((tmp_path / "w" / "n1.json").read_text())
    (tmp_path / "w" / "old.json").write_text(json.dumps(dict(old, store="embedded store db")))
    monkeypatch.chdir(tmp_path / "w")
    for baseline in ("n1.json", "old.json"):
        assert main(["audit", "--store", "link", "--baseline", baseline, "--format", "json", "--out", "n3.json",
                     "--fail-on", "never"]) == 0
        assert "warning" not in capsys.readouterr().err


def test_a_baseline_knows_findings_by_what_does_not_grow():
    """rv39 #1, #2: two regressions of one event were one finding to the baseline; a bot's and a
    gap's time is their first event's, which a late line dated earlier moves."""
    from changeprov.sparql.audit import AuditReport, Finding, compare

    def report(*findings):
        return AuditReport("s", None, None, "now", [], [], list(findings))

    def regression(other):
        return Finding("version-regression", "t1", f"0.3: generated again by {other}", ["e1", other], "x", "x",
                       {"version": "0.3"})

    bot = lambda time, n: Finding("bot", time, f"bot: {n} change(s)", [f"e{i}" for i in range(n)], None, None,  # noqa: E731
                                  {"user": "bot", "changes": n})
    earlier = report(regression("e2"), bot("t5", 3)).to_dict()
    tonight = report(regression("e2"), regression("e3"), bot("t2", 4))
    now = compare(tonight, earlier)
    assert [f.summary for f in now.new] == ["0.3: generated again by e3"]
    assert [f.kind for f in now.known] == ["version-regression", "bot"] and [f.kind for f in now.changed] == ["bot"]
    assert not now.gone
    assert len(compare(report(), earlier).gone) == 2
    # the JSON the command writes, from the library (mq1 #9): the new finding marked, the block read back
    written = tonight.to_dict(now, baseline="yesterday.json")
    assert [f["new"] for f in written["findings"]] == [False, True, False]
    assert (written["baseline"]["report"], written["baseline"]["new"], written["baseline"]["known"]) == ("yesterday.json", 1, 2)
    assert compare(tonight, written).new == []


def test_each_missing_datahub_aspect_version_is_its_own_gap(tmp_path):
    """rv35 #2: a DataHub gap's version text names only the aspect, so versions 2 and 4 of one aspect,
    missing a day apart, were one finding at the first."""
    t, day = 1_704_139_200_000, 86_400_000
    ds = DS("hive,db.t")

    def tags(ms, version, previous=None, *names):
        line = _mcl(ds, "globalTags", {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}, ms)
        line["systemMetadata"]["version"] = version
        if previous:
            line["previousSystemMetadata"] = {"version": previous}
        return line

    events = [tags(t, "1", None, "A"), tags(t + 1000, "3", "2", "A", "B"), tags(t + day, "5", "4", "B")]
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        gaps = run_audit(store, now_ms=NOW_MS).of_kind("version-gap")
    assert sorted(g.time[:19] for g in gaps) == ["2024-01-01T20:00:01", "2024-01-02T20:00:00"]


@pytest.mark.parametrize("whole_log", [False, True])
def test_a_datahub_entity_created_again_in_a_log_that_starts_late_is_a_gap_not_out_of_order(tmp_path, whole_log):
    """ut41a #1: the hard delete used datasetKey version 1 of the first life (its creation not in the log)
    and the re-creation generated version 1 twelve days later: check failed usage-before-generation and
    the audit said out-of-order. The earlier life's version is missing from the log: a gap, as without the
    re-creation; with the whole log, no finding at all."""
    from changeprov.sparql.check import run_checks

    t, day = 1_704_139_200_000, 86_400_000
    ds, key = DS("hive,db.again"), {"name": "db.again", "platform": "urn:li:dataPlatform:hive", "origin": "PROD"}
    gone = _mcl(ds, "datasetKey", None, t + day, change="DELETE")
    gone["previousAspectValue"] = {"value": json.dumps(key), "contentType": "application/json"}
    gone["previousSystemMetadata"] = {"version": "1"}
    gone["systemMetadata"]["version"] = "2"
    events = [gone, _mcl(ds, "datasetKey", key, t + 13 * day)] + ([_mcl(ds, "datasetKey", key, t)] if whole_log else [])
    db = _mapped_store(events, tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        report = run_checks(store, groups=("prov",))
        kinds = sorted(f.kind for f in run_audit(store, now_ms=NOW_MS).findings if f.kind in ("version-gap", "out-of-order"))
    assert report.ok, [r.as_dict() for r in report.findings]
    assert kinds == ([] if whole_log else ["version-gap"])


def test_an_event_with_two_contents_counts_once_per_user_in_the_activity(integrity_db):
    """ut18 #6: event i13 (alice, then bob and another time in a second run) counted 4 times for bob
    (2 users x 2 times), and the summary's events grew with it."""
    with open_store("embedded", path=integrity_db, read_only=True) as store:
        rows = run_query(store, get_query("audit-activity"), {}).dicts()
    assert [int(r["events"].value) for r in rows if r["user"].value == "bob"] == [1]


@pytest.mark.parametrize("days", [7, 90, 730])
def test_the_days_of_the_activity_chart_do_not_touch(days):
    """ut25 #8: over two years the date labels, rotated by 40 degrees 11 px apart, were a smear."""
    from changeprov.sparql.audit_html import bar_chart_svg

    svg = bar_chart_svg([(f"day {i}", i, "") for i in range(days)], svg_id="c", title="t")
    xs = [float(x) for x in re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" font-size="10" text-anchor="end" transform', svg)]
    assert len(xs) >= min(days, 30) and min(b - a for a, b in zip(xs, xs[1:])) >= 16  # enough labels, apart
    # rv43 L3: a library caller's chart narrower than its margins divided by zero
    assert bar_chart_svg([("day 1", 1, "")], svg_id="c", title="t", width=40).startswith("<svg")


def test_two_users_tagging_in_one_millisecond_are_two_findings(tmp_path):
    """ut44g #3: alice tagged columns.email and bob columns.phone with PII.Sensitive in one millisecond:
    one finding "... by alice" with both fields, and bob was never named."""
    pii = json.dumps([{"tagFQN": "PII.Sensitive", "source": "Classification", "labelType": "Manual", "state": "Confirmed"}])

    def tagged(n, user, column):
        return {"id": f"t-{n}", "eventType": "entityUpdated", "entityType": "table", "entityId": "tab-1",
                "entityFullyQualifiedName": "s.d.x.t", "userName": user, "timestamp": 1_772_409_600_000,
                "previousVersion": n / 10, "currentVersion": (n + 1) / 10,
                "changeDescription": {"fieldsAdded": [{"name": f"columns.{column}.tags", "newValue": pii}],
                                      "fieldsUpdated": [], "fieldsDeleted": []}}
    db = _mapped_store([tagged(1, "alice", "email"), tagged(2, "bob", "phone")], tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        found = sorted(f.summary for f in run_audit(store).findings if f.kind == "sensitive-tag")
    assert found == ["tag PII.Sensitive added to columns.email.tags by alice",
                     "tag PII.Sensitive added to columns.phone.tags by bob"], found


def test_a_blank_openmetadata_user_name_is_no_user(tmp_path):
    """ut44g #4 #5: userName "" and " " were users '' and ' ' (no finding), and an impersonated change
    without a user was "on behalf of None"."""
    def event(n, **extra):
        return {"id": f"b-{n}", "eventType": "entityUpdated", "entityType": "table", "entityId": "tab-1",
                "entityFullyQualifiedName": "s.d.x.t", "timestamp": 1_772_409_600_000 + n, "previousVersion": n / 10,
                "currentVersion": (n + 1) / 10, "changeDescription": {
                    "fieldsAdded": [], "fieldsDeleted": [],
                    "fieldsUpdated": [{"name": "description", "oldValue": "a", "newValue": str(n)}]}, **extra}
    pii = json.dumps([{"tagFQN": "PII.Sensitive", "source": "Classification", "labelType": "Manual", "state": "Confirmed"}])
    tagged = {**event(5, userName=" "), "changeDescription": {"fieldsAdded": [{"name": "tags", "newValue": pii}],
                                                               "fieldsUpdated": [], "fieldsDeleted": []}}
    db = _mapped_store([event(1, userName=""), event(2, userName="  "), event(3, userName="carol"),
                        event(4, impersonatedBy="agent-z"), tagged], tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        report = run_audit(store)
    # rv44b #6: every finding, not only the agents' ("… added to tags by ")
    assert [f.summary for f in report.findings if f.kind == "sensitive-tag"] == ["tag PII.Sensitive added to tags by (no user)"]
    assert len([f for f in report.findings if f.kind == "no-user"]) == 4
    assert [f.summary for f in report.findings if f.kind == "impersonated"] == ["made by agent-z on behalf of (no user)"]
    assert dict(report.by_user()) == {"(no user)": 4, "carol": 1}


def test_the_default_bot_pattern_takes_bot_as_a_word_not_inside_a_name(tmp_path):
    """ut44g #6: talbot and abbot.costello were reported as bots."""
    def event(n, user):
        return {"id": f"u-{n}", "eventType": "entityUpdated", "entityType": "table", "entityId": "tab-1",
                "entityFullyQualifiedName": "s.d.x.t", "userName": user, "timestamp": 1_772_409_600_000 + n,
                "previousVersion": n / 10, "currentVersion": (n + 1) / 10, "changeDescription": {
                    "fieldsAdded": [], "fieldsDeleted": [],
                    "fieldsUpdated": [{"name": "description", "oldValue": "a", "newValue": str(n)}]}}
    users = ["talbot", "abbot.costello", "ingestion-bot", "profiler-bot", "bot", "svc-loader", "alice"]
    db = _mapped_store([event(n, u) for n, u in enumerate(users, start=1)], tmp_path)
    with open_store("embedded", path=db, read_only=True) as store:
        bots = sorted(r["user"].value for r in run_query(store, "audit-bots", {}).dicts())
    assert bots == ["bot", "ingestion-bot", "profiler-bot", "svc-loader"]


def test_a_baseline_of_another_window_names_the_windows_in_words(tmp_path, capsys):
    """ut45e #7: a report without --since was "this one of None (since)"."""
    db = _mapped_store([_mcl(DS("hive,db.a"), "status", {"removed": True}, 1_704_139_200_000)], tmp_path)
    assert main(["audit", "--store", str(db), "--format", "json", "--out", str(tmp_path / "a.json"), "--fail-on",
                 "never", "--since", "2024-01-01"]) == 0
    capsys.readouterr()
    assert main(["audit", "--store", str(db), "--baseline", str(tmp_path / "a.json"), "--format", "json", "--out",
                 str(tmp_path / "b.json"), "--fail-on", "never"]) == 0
    err = capsys.readouterr().err
    assert ("the baseline is a report of '2024-01-01T00:00:00.000Z', this one of no start (the whole history) "
            "(since)") in err and "None" not in err
