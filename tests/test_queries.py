"""Named queries on the corpus, on the embedded store and on a real `oxigraph serve` endpoint.

Lineage answers are the EXPECTED LINEAGE ANSWERS of ../shared/corpus/datahub/SOURCES.md and the
OpenMetadata lineage story of ../shared/corpus/openmetadata/SOURCES.md.
"""

from __future__ import annotations

import concurrent.futures
import csv
import datetime as _dt
import io
import json
import re
import sys
from importlib import resources
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from changeprov.cli import main
from changeprov.errors import InputError, StoreError
from changeprov.mapping.terms import rfc3339_to_ms, urn_iri
from changeprov.sparql import notes
from changeprov.sparql.describe import describe_triples, render_graph
from changeprov.sparql.loader import load_export
from changeprov.sparql.queries import get_query, list_queries, load_query_file, run_ask, run_construct, run_query
from changeprov.sparql.stores import open_store
from changeprov.sparql.values import values_block

DS = "urn:li:dataset:(urn:li:dataPlatform:{},PROD)".format
LTV, ORDERS = DS("snowflake,analytics.marts.customer_ltv"), DS("postgres,shop.public.orders")
FCT, STG_O, STG_C = DS("snowflake,analytics.core.fct_orders"), DS("hive,staging.stg_orders"), DS("hive,staging.stg_customers")
LEGACY, RAW, PAY = DS("hive,staging.orders_legacy"), DS("s3,datalake/raw/orders"), DS("kafka,shop.payments")
CUST, DREV = DS("postgres,shop.public.customers"), DS("snowflake,analytics.marts.daily_revenue")
OM_DR = "mysql_prod.ecommerce.analytics.daily_revenue"
OM_ORDERS = "mysql_prod.ecommerce.sales.orders"

UPSTREAM_LTV = {
    "2024-03-05": {FCT: 1, LEGACY: 2, STG_C: 2, ORDERS: 3, CUST: 3},
    "2024-03-12": {FCT: 1, STG_O: 2, STG_C: 2, RAW: 3, PAY: 3, CUST: 3, ORDERS: 4},
    "2024-03-21": {FCT: 1, STG_O: 2, STG_C: 2, RAW: 3, PAY: 3, CUST: 3, ORDERS: 4},
}
DOWNSTREAM_ORDERS = {
    "2024-03-05": {RAW: 1, LEGACY: 1, STG_O: 2, FCT: 2, LTV: 3, DREV: 3},
    "2024-03-12": {RAW: 1, LEGACY: 1, STG_O: 2, FCT: 3, LTV: 4, DREV: 4},
    "2024-03-21": {RAW: 1, STG_O: 2, FCT: 3, LTV: 4, DREV: 4},
}


@pytest.fixture(scope="module")
def export(corpus_export_dir) -> Path:
    return corpus_export_dir


@pytest.fixture(scope="module")
def db(corpus_db) -> Path:
    return corpus_db


@pytest.fixture(scope="module")
def embedded(db):
    with open_store("embedded", path=db, read_only=True) as store:
        yield store


@pytest.fixture(scope="module")
def endpoint(corpus_endpoint):
    return corpus_endpoint


@pytest.fixture(scope="module")
def remote(endpoint):
    return open_store("remote", endpoint=endpoint)


@pytest.fixture(params=["embedded", "remote"])
def store(request):
    return request.getfixturevalue(request.param)


def hops(rows) -> dict[str, int]:
    return {r["asset"].value: int(r["hops"].value) for r in rows.dicts()}


def texts(rows) -> list[tuple]:
    return [tuple(None if t is None else t.value for t in r) for r in rows.rows]


# ----------------------------------------------------------------------------- lineage acceptance


@pytest.mark.parametrize("as_of", sorted(UPSTREAM_LTV))
def test_datahub_upstream_of_customer_ltv(store, as_of):
    rows = run_query(store, get_query("upstream"), {"entity": LTV, "as_of": as_of})
    assert hops(rows) == UPSTREAM_LTV[as_of]


@pytest.mark.parametrize("as_of", sorted(DOWNSTREAM_ORDERS))
def test_datahub_downstream_of_orders(store, as_of):
    rows = run_query(store, get_query("downstream"), {"entity": ORDERS, "as_of": as_of})
    assert hops(rows) == DOWNSTREAM_ORDERS[as_of]


JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,shop_etl,prod),{})".format
# DataHub's lineage graph through the corpus's Airflow jobs: a job is one hop from what it reads and writes
JOBS_DOWNSTREAM_ORDERS = {
    "2024-03-05": {JOB("load_raw_orders"): 1, JOB("build_fct_orders"): 2, JOB("build_stg_orders"): 2,
                   JOB("build_customer_ltv"): 3},  # build_fct_orders read orders_legacy then
    "2024-03-21": {JOB("load_raw_orders"): 1, JOB("build_stg_orders"): 2, JOB("build_fct_orders"): 3,
                   JOB("build_customer_ltv"): 4},  # it reads stg_orders since 03-10; orders_legacy is gone
}


@pytest.mark.parametrize("as_of", sorted(JOBS_DOWNSTREAM_ORDERS))
def test_datahub_lineage_through_jobs(store, as_of):
    """ut10a #10: DataHub's Airflow lineage is a job's inputs and outputs (dataJobInputOutput); with
    jobs=true the walk goes through them as DataHub's own lineage graph does, and the datasets' hops
    from upstreamLineage stay the minimum."""
    down = run_query(store, get_query("downstream"), {"entity": ORDERS, "as_of": as_of, "jobs": "true"})
    assert hops(down) == DOWNSTREAM_ORDERS[as_of] | JOBS_DOWNSTREAM_ORDERS[as_of]
    up = run_query(store, get_query("upstream"), {"entity": LTV, "as_of": as_of, "jobs": "yes"})
    assert {a: h for a, h in hops(up).items() if a.startswith("urn:li:dataJob:")} == (
        {JOB("build_customer_ltv"): 1, JOB("build_fct_orders"): 2, JOB("build_stg_orders"): 3, JOB("load_raw_orders"): 4}
        if as_of > "2024-03-10" else {JOB("build_customer_ltv"): 1, JOB("build_fct_orders"): 2})
    assert hops(run_query(store, get_query("downstream"), {"entity": ORDERS, "as_of": as_of, "jobs": "false"})) \
        == DOWNSTREAM_ORDERS[as_of]


@pytest.mark.parametrize("param, value, message", [
    ("jobs", "maybe", "parameter jobs: not a boolean (true, false, yes, no, 1 or 0): 'maybe'"),
])
def test_a_bad_boolean_is_an_error(embedded, param, value, message):
    with pytest.raises(InputError, match=re.escape(message)):
        run_query(embedded, get_query("upstream"), {"entity": LTV, param: value})
    for word, bound in (("yes", "true"), ("1", "true"), ("No", "false")):  # the words the message names
        assert run_query(embedded, get_query("upstream"), {"entity": LTV, param: word}).rows == \
            run_query(embedded, get_query("upstream"), {"entity": LTV, param: bound}).rows
    with pytest.raises(InputError, match=re.escape("parameter only: 'inputs' is not one of input, output")):
        run_query(embedded, get_query("job-io"), {"job": JOB("build_fct_orders"), "only": "inputs"})


@pytest.mark.parametrize("value", ["1_0", "1e1", "0x1", "nan", "Infinity", "١", " ", "1.2.3"])
def test_a_decimal_parameter_is_a_decimal_as_people_write_it(embedded, value):
    """ut46a #7: version=1_0 was read as version 10 (Python's Decimal takes underscores and exponents)."""
    with pytest.raises(InputError, match=re.escape(f"parameter version: not a decimal number (such as 1.2): {value!r}")):
        run_query(embedded, get_query("entity-state"), {"entity": OM_ORDERS, "version": value})


def test_job_lists_follow_the_aspect_history(tmp_path):
    """A job's inputs at a time: removed with a previous value, dropped by an MCL that is the whole
    aspect, back when listed again, gone with a DELETE of the aspect and with a hard delete of either end."""
    t, hour = 1_704_139_200_000, 3_600_000
    job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,prod),j)"
    a, b, c = (DS(f"hive,db.{n}") for n in "abc")

    def io(ms, version, ins, *, previous=None, change="UPSERT"):
        value = None if change == "DELETE" else {"inputDatasets": ins, "outputDatasets": [c]}
        return {**_dh_mcl(job, "dataJobInputOutput", ms, version, value=value, change=change,
                          previous=previous and (previous[0], {"inputDatasets": previous[1], "outputDatasets": [c]})),
                "entityType": "dataJob"}

    events = [
        io(t, "1", [a, b]),
        io(t + hour, "2", [a], previous=("1", [a, b])),           # b removed
        io(t + 2 * hour, "3", [b]),                              # the whole aspect, without its previous value: a gone
        io(t + 3 * hour, "4", None, previous=("3", [b]), change="DELETE"),
        io(t + 4 * hour, "5", [a, b]),
        _dh_mcl(b, "datasetKey", t + 5 * hour, "2", change="DELETE", previous=("1", {"name": "b"})),
    ]
    store = _store_of(events, tmp_path)

    def inputs(k):
        rows = run_query(store, get_query("job-io"), {"job": job, "only": "input", "as_of": str(t + k * hour)})
        return {r["dataset_name"].value for r in rows.dicts()}

    assert [inputs(k) for k in range(6)] == [{a, b}, {a}, {b}, set(), {a, b}, {a}]
    assert {r["role"].value for r in run_query(store, get_query("job-io"), {"job": job}).dicts()} == {"input", "output"}
    up = lambda k: hops(run_query(store, get_query("upstream"), {"entity": c, "as_of": str(t + k * hour), "jobs": "true"}))
    assert up(0) == {job: 1, a: 2, b: 2} and up(3) == {} and up(5) == {job: 1, a: 2}  # the DELETE took c too
    assert [r["job"].value for r in run_query(store, get_query("job-candidates"), {"dataset": b}).dicts()] == [job]
    # ut13 #8: the wrong kind of entity answers nothing, and says where to ask
    assert run_query(store, get_query("job-io"), {"job": b}).notes[0].startswith("this is a dataset that jobs read")
    assert run_query(store, get_query("job-candidates"), {"dataset": job}).notes == [
        "this is a job, not a dataset: its inputs and outputs are in `changeprov query job-io --param job=…`"]


@pytest.mark.parametrize("column_name, name, column, want", [
    ("customer_email", "who-changed", "field_name", ["columns", "columns.customer_email.tags"]),
    ("customer_email", "entity-history", "fields_changed",
     ["+columns, +domains", "+columns.customer_email.tags, +columns.order_total.description"]),
    ("customer_email", "entity-state", "value", [OM_ORDERS + ".customer_email", "PII.Sensitive"]),
    # ut13 #1: a column that was added or dropped, with no field change about it otherwise
    ("legacy_coupon_code", "who-changed", "change", ["added", "deleted"]),
    ("legacy_coupon_code", "entity-state", "value", []),  # dropped
])
def test_a_column_answers_with_its_tables_rows_about_it(store, column_name, name, column, want):
    """ut12 #4: "who tagged customer_email as PII?" answered 0 rows and no note: a column has no events;
    its changes are its table's (columns.customer_email.tags, corpus line 14, alice.wong), and so are
    its creation and its drop (the table's columns)."""
    rows = run_query(store, get_query(name), {"entity": f"{OM_ORDERS}.{column_name}"})
    assert [r[column].value for r in rows.dicts()] == want
    assert len(rows.notes) == 1 and rows.notes[0].startswith("this is a column: it has no events of its own; ")


def test_a_datahub_column_with_change_events_of_its_own_also_has_its_tables_rows(store):
    """ut14 #5: a schemaField with its own TAG / GLOSSARY_TERM change events lost the table's rows about
    it (its creation in schemaMetadata), and a note said it had no events of its own."""
    email = "urn:li:schemaField:(%s,email)" % CUST
    rows = run_query(store, get_query("entity-history"), {"entity": email})
    assert [(r["time"].value[:10], r["event_type"].value) for r in rows.dicts()] == [
        ("2024-03-01", "MclUpsert"), ("2024-03-04", "EceTag"), ("2024-03-04", "EceGlossaryTerm")]
    assert rows.notes == [f"this is a column: its own rows and the rows of {CUST} about it (schemaMetadata)"]
    # ut41c #3: before its tags (or after they are gone) its own events answer nothing; it still has them
    rows = run_query(store, get_query("entity-state"), {"entity": email, "as_of": "2024-03-02"})
    assert [r["field"].value for r in rows.dicts()] == ["schemaMetadata"]
    assert rows.notes == [f"this is a column: none of its own events answers this; these are the rows of {CUST} "
                          "about it (schemaMetadata)"]


def test_a_creation_comes_first_in_its_millisecond(store):
    """ut14 #9: a proposal created and set PENDING in one millisecond read PENDING before CREATED (the
    two events were ordered by IRI)."""
    rows = run_query(store, get_query("entity-history"),
                     {"entity": "urn:li:actionRequest:0b6f2a7e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}).dicts()
    assert [r["operation"].value for r in rows] == ["OpCreate", "OpPending", "OpCompleted"]


@pytest.mark.parametrize("name", ["downstream", "impact"])
def test_lineage_says_which_assets_were_soft_deleted_then(store, name):
    """ut41c #7: impact listed a soft-deleted asset with its owners as if it were live. orders_legacy was
    soft-deleted at 08:00 on 2024-03-15 (and never restored), daily_revenue at 08:30, restored at 08:45."""
    legacy, drev = DS("hive,staging.orders_legacy"), DS("snowflake,analytics.marts.daily_revenue")

    def note(as_of):
        rows = run_query(store, get_query(name), {"entity": ORDERS, "as_of": as_of})
        assert {legacy, drev} <= {r["asset"].value for r in rows.dicts()}, "the edges still count"
        return [n for n in rows.notes if n.startswith("soft-deleted")]

    assert note("2024-03-15T07:59:59Z") == []
    assert note("2024-03-15T08:40:00Z") == [
        f"soft-deleted at this time and not restored: {legacy} (since 2024-03-15T08:00:00.000Z), {drev} (since "
        "2024-03-15T08:30:00.000Z); their lineage edges still count here (no event ended them), while OpenMetadata "
        "and DataHub hide a soft-deleted asset from lineage"]
    assert note("2024-03-15T08:45:00Z") == [
        f"soft-deleted at this time and not restored: {legacy} (since 2024-03-15T08:00:00.000Z); their lineage edges "
        "still count here (no event ended them), while OpenMetadata and DataHub hide a soft-deleted asset from lineage"]


def test_a_table_a_recursive_soft_delete_took_is_soft_deleted_until_its_parent_is_restored(tmp_path):
    """rv41 #3: the note looked at the asset's own deletes only, not a recursive one of its parent."""
    t, hour = 1_709_280_000_000, 3_600_000
    schema = {"eventType": "entitySoftDeleted", "entityType": "databaseSchema", "entityId": "sch", "recursive": True,
              "entityFullyQualifiedName": "s.d.x", "userName": "bob", "previousVersion": 0.1, "currentVersion": 0.2,
              "entity": {"id": "sch", "children": [{"id": "q", "type": "table", "fullyQualifiedName": "s.d.x.q"}]}}
    events = [_om_lineage(1, "entityLineageAdded", t, "p", "q", []),
              {**schema, "id": "del", "timestamp": t + hour},
              {**schema, "id": "back", "eventType": "entityRestored", "timestamp": t + 3 * hour, "previousVersion": 0.2,
               "currentVersion": 0.3}]
    with _store_of(events, tmp_path) as store:
        def note(hours):
            rows = run_query(store, "downstream", {"entity": "s.d.x.p", "as_of": t + int(hours * hour)})
            assert [r["asset_name"].value for r in rows.dicts()] == ["s.d.x.q"]
            return [n.split(";")[0] for n in rows.notes if n.startswith("soft-deleted")]

        assert note(0.5) == [] and note(3) == []
        assert note(2) == ["soft-deleted at this time and not restored: s.d.x.q (since 2024-03-01T09:00:00.000Z)"]


@pytest.mark.parametrize("query, start, expected", [
    # a <- b, a <- c <- e <- d, b <- d: d is two hops above a (through b), not three (through c and e)
    ("upstream", "a", {"b": (1, ""), "c": (1, ""), "e": (2, "s.d.x.c"), "d": (2, "s.d.x.b")}),
    ("downstream", "d", {"b": (1, ""), "e": (1, ""), "a": (2, "s.d.x.b"), "c": (2, "s.d.x.e")}),
])
def test_lineage_gives_each_asset_its_fewest_hops_and_the_assets_one_hop_closer(tmp_path, query, start, expected):
    """rv46 #1 #2: the walk taken depth first gave d three hops; `via` (the assets one hop closer to the
    start, through which the asset is reached) was never compared, empty or holding a farther asset."""
    t = 1_709_280_000_000
    edges = [("b", "a"), ("c", "a"), ("e", "c"), ("d", "e"), ("d", "b")]
    events = [_om_lineage(n, "entityLineageAdded", t, up, down, []) for n, (up, down) in enumerate(edges, 1)]
    with _store_of(events, tmp_path) as store:
        rows = run_query(store, query, {"entity": f"s.d.x.{start}", "as_of": t + 1}).dicts()
    got = {r["asset_name"].value.rsplit(".", 1)[-1]: (int(r["hops"].value), r["via"].value if r.get("via") else "")
           for r in rows}
    assert got == expected


@pytest.mark.parametrize("query, start, other", [("upstream", "q", "p"), ("downstream", "p", "q")])
@pytest.mark.parametrize("end", ["lineage deleted", "upstream hard-deleted", "downstream hard-deleted"])
def test_an_edge_ends_at_the_very_millisecond_of_its_removal_or_an_ends_hard_delete(tmp_path, query, start, other, end):
    """rv46 #3 #4: as of the removal's (or a hard delete's) own millisecond the edge is gone, both ways:
    upstream kept an edge removed exactly at as_of, or whose upstream table was hard-deleted then."""
    t, hour = 1_709_280_000_000, 3_600_000
    events = [_om_lineage(1, "entityLineageAdded", t, "p", "q", [])]
    if end == "lineage deleted":
        events.append(_om_lineage(2, "entityLineageDeleted", t + hour, "p", "q", []))
    else:
        gone = "p" if end.startswith("upstream") else "q"
        events.append({"id": "del", "eventType": "entityDeleted", "entityType": "table", "entityId": gone,
                       "entityFullyQualifiedName": f"s.d.x.{gone}", "userName": "bob", "timestamp": t + hour,
                       "previousVersion": 0.1, "currentVersion": 0.1})
    with _store_of(events, tmp_path) as store:
        def names(as_of):
            return [r["asset_name"].value for r in run_query(store, query, {"entity": f"s.d.x.{start}", "as_of": as_of}).dicts()]

        assert names(t + hour - 1) == [f"s.d.x.{other}"]
        assert names(t + hour) == []


@pytest.mark.parametrize("query, start", [("downstream", "s.d.x.p"), ("upstream", "s.d.x.r")])
def test_a_table_a_recursive_hard_delete_took_leaves_the_lineage(tmp_path, query, start):
    """ut41d #1: a table deleted with its schema (entity.children, recursive) stayed in lineage as live."""
    t, hour = 1_709_280_000_000, 3_600_000
    events = [_om_lineage(1, "entityLineageAdded", t, "p", "q", [("a", "b")]),
              _om_lineage(2, "entityLineageAdded", t, "q", "r", []),
              {"id": "del", "eventType": "entityDeleted", "entityType": "databaseSchema", "entityId": "sch",
               "entityFullyQualifiedName": "s.d.x", "userName": "bob", "timestamp": t + hour, "recursive": True,
               "previousVersion": 0.1, "currentVersion": 0.1,
               "entity": {"id": "sch", "children": [{"id": "q", "type": "table", "fullyQualifiedName": "s.d.x.q"}]}}]
    with _store_of(events, tmp_path) as store:
        def names(as_of):
            return [r["asset_name"].value for r in run_query(store, query, {"entity": start, "as_of": as_of}).dicts()]

        assert names(t + hour - 1) == ["s.d.x.q", "s.d.x.r" if query == "downstream" else "s.d.x.p"]
        assert names(t + hour) == []
        if query == "upstream":  # lineage-details: the direct edges, with what was said of them
            details = [run_query(store, "lineage-details", {"entity": "s.d.x.r", "as_of": at}).dicts()
                       for at in (t + hour - 1, t + hour)]
            assert [[r["upstream_name"].value for r in d] for d in details] == [["s.d.x.q"], []]
        # rv42 #2: a column edge of q's ended with q's own hard delete, not with the recursive one
        column, other = ("s.d.x.p.a", "s.d.x.q.b") if query == "downstream" else ("s.d.x.q.b", "s.d.x.p.a")
        for name in (query, "lineage-details") if query == "upstream" else (query,):
            key = "upstream_name" if name == "lineage-details" else "asset_name"
            got = [[r[key].value for r in run_query(store, name, {"entity": column, "as_of": at}).dicts()]
                   for at in (t + hour - 1, t + hour)]
            assert got == [[other], []], (name, got)
        # audit-lineage marks both edges removed once the delete took q (it looked at own deletes only)
        audit = lambda at: {(r["down_name"].value, r["up_name"].value): r["valid"].value
                            for r in run_query(store, "audit-lineage", {"entity": start, "as_of": at}).dicts()}
        assert audit(t + hour - 1) == {("s.d.x.q", "s.d.x.p"): "true", ("s.d.x.r", "s.d.x.q"): "true"}
        assert audit(t + hour) == {("s.d.x.q", "s.d.x.p"): "false", ("s.d.x.r", "s.d.x.q"): "false"}


def test_a_dependent_a_recursive_hard_delete_took_is_no_dependent_of_later_drops_and_deletes(tmp_path):
    """audit-deletions called q a "still" dependent of p at p's deletion, and audit-schema-drops a dependent of
    p's column drop, although the recursive delete of q's schema had ended it an hour before (both looked at
    q's own hard deletes only)."""
    t, hour = 1_709_280_000_000, 3_600_000
    events = [_om_lineage(1, "entityLineageAdded", t, "p", "q", []),
              {"id": "del", "eventType": "entityDeleted", "entityType": "databaseSchema", "entityId": "sch",
               "entityFullyQualifiedName": "s.d.x", "userName": "bob", "timestamp": t + hour, "recursive": True,
               "previousVersion": 0.1, "currentVersion": 0.1,
               "entity": {"id": "sch", "children": [{"id": "q", "type": "table", "fullyQualifiedName": "s.d.x.q"}]}},
              {"id": "p-drop", "eventType": "entityUpdated", "entityType": "table", "entityId": "p",
               "entityFullyQualifiedName": "s.d.x.p", "userName": "bob", "timestamp": t + 90 * 60_000,
               "previousVersion": 0.1, "currentVersion": 1.1,
               "changeDescription": {"fieldsAdded": [], "fieldsUpdated": [], "fieldsDeleted": [
                   {"name": "columns", "oldValue": json.dumps([{"name": "a", "fullyQualifiedName": "s.d.x.p.a"}])}]}},
              {"id": "p-gone", "eventType": "entitySoftDeleted", "entityType": "table", "entityId": "p",
               "entityFullyQualifiedName": "s.d.x.p", "userName": "bob", "timestamp": t + 2 * hour,
               "previousVersion": 1.1, "currentVersion": 1.2}]
    with _store_of(events, tmp_path) as store:
        rows = run_query(store, "audit-deletions", {}).dicts()
        assert {(r["entity_name"].value, r["dependent_name"].value, r["dependency"].value) for r in rows
                if r["entity_name"].value == "s.d.x.p"} == {("s.d.x.p", "s.d.x.q", "former")}
        assert run_query(store, "audit-schema-drops", {}).dicts() == []


def test_lineage_before_any_edge_and_default_now(embedded):
    assert hops(run_query(embedded, get_query("upstream"), {"entity": LTV, "as_of": "2024-03-01"})) == {}
    assert hops(run_query(embedded, get_query("upstream"), {"entity": LTV})) == UPSTREAM_LTV["2024-03-21"]
    # epoch ms works too: 2024-03-10T02:15:00Z is the migration itself (edges at t <= as_of count)
    assert hops(run_query(embedded, get_query("upstream"), {"entity": LTV, "as_of": "1710036900000"})) \
        == UPSTREAM_LTV["2024-03-12"]
    assert hops(run_query(embedded, get_query("upstream"), {"entity": LTV, "as_of": "1710036899999"})) \
        == UPSTREAM_LTV["2024-03-05"]


def _names(rows) -> dict[str, int]:
    return {r["asset_name"].value: int(r["hops"].value) for r in rows.dicts()}


def test_openmetadata_lineage_of_daily_revenue_with_deleted_dashboard_edge(store):
    down = lambda t: _names(run_query(store, get_query("downstream"), {"entity": OM_DR, "as_of": t}))
    up = lambda t: _names(run_query(store, get_query("upstream"), {"entity": OM_DR, "as_of": t}))
    assert down("2026-09-01T08:10:00Z") == {"looker_prod.revenue_overview": 1}
    assert down("2026-09-08") == {"looker_prod.revenue_overview": 1, "mlflow_prod.churn_predictor": 1}
    # entityLineageDeleted at 2026-09-09T10:00:00Z removes the dashboard edge
    assert down("2026-09-09T09:59:59Z") == {"looker_prod.revenue_overview": 1, "mlflow_prod.churn_predictor": 1}
    assert down("2026-09-09T10:00:00Z") == {"mlflow_prod.churn_predictor": 1}
    assert down("now") == {"mlflow_prod.churn_predictor": 1}
    assert up("2026-09-01T09:00:00Z") == {OM_ORDERS: 1}
    assert up("2026-09-10") == {OM_ORDERS: 1, "kafka_prod.orders_events": 2}


@pytest.mark.parametrize("name, entity, first", [
    ("upstream", "looker_prod.revenue_overview", "2026-09-01T"),  # its one edge deleted on 2026-09-09
    ("downstream", LEGACY, "2024-03-0"),  # its one edge left out of a later upstreamLineage
    ("impact", LEGACY, "2024-03-0"),
])
def test_an_empty_lineage_answer_says_when_the_edges_ended_or_began(store, name, entity, first):
    """ut42a #10: upstream of revenue_overview was 0 rows and no note, which reads as "never had any"."""
    side = "upstream" if name == "upstream" else "downstream"
    now = run_query(store, name, {"entity": entity})
    before = run_query(store, name, {"entity": entity, "as_of": "2020-01-01"})
    assert not now.rows and not before.rows
    assert f"it had 1 direct {side} edge(s) by this time, none still valid" in " ".join(now.notes), now.notes
    assert f"its next {side} edge after this time was added at {first}" in " ".join(before.notes), before.notes


def test_the_note_of_an_empty_lineage_answer_names_an_edge_added_again(tmp_path):
    """ut44b #5: a -> b removed at 12:00 and added again at 13:00, a -> d added at 17:00: as of 12:30 the
    note named 17:00 as the next edge's addition (it counted first additions only)."""
    t, hour = 1_788_249_600_000, 3_600_000
    events = [_om_lineage(1, "entityLineageAdded", t, "a", "b", []), _om_lineage(2, "entityLineageDeleted", t + 2 * hour, "a", "b", []),
              _om_lineage(3, "entityLineageAdded", t + 3 * hour, "a", "b", []),
              _om_lineage(4, "entityLineageAdded", t + 7 * hour, "a", "d", [])]
    with _store_of(events, tmp_path) as store:
        answer = run_query(store, "downstream", {"entity": "s.d.x.a", "as_of": t + 2 * hour + hour // 2})
        assert not answer.rows
        assert "its next downstream edge after this time was added at 2026-09-01T11:00:00.000Z (2 edge(s) added, or " \
               "added again, later in all)" in answer.notes, answer.notes
        assert "it had 1 direct downstream edge(s) by this time, none still valid" in " ".join(answer.notes)
        later = run_query(store, "downstream", {"entity": "s.d.x.a", "as_of": t + 4 * hour})
        assert [r["asset_name"].value for r in later.dicts()] == ["s.d.x.b"] and not later.notes


def test_a_column_computed_from_a_whole_dataset_is_no_ended_downstream_edge(tmp_path):
    """rv42 #3: the note said u2 had a downstream edge that no longer held, counting the edge of a column
    computed from the whole dataset (fineGrainedLineages upstreamType DATASET), which downstream of a table
    never follows."""
    field = f"urn:li:schemaField:({DS('hive,d')},n)"
    lineage = {"upstreams": [{"dataset": DS("hive,u1"), "type": "TRANSFORMED"}],
               "fineGrainedLineages": [{"upstreamType": "DATASET", "downstreamType": "FIELD",
                                        "upstreams": [DS("hive,u2")], "downstreams": [field]}]}
    with _store_of([_dh_mcl(DS("hive,d"), "upstreamLineage", 1_709_280_000_000, "1", value=lineage)], tmp_path) as store:
        answer = run_query(store, "downstream", {"entity": DS("hive,u2")})
        assert not answer.rows and not [n for n in answer.notes if "edge" in n], answer.notes
        assert [r["asset_name"].value for r in run_query(store, "upstream", {"entity": field}).dicts()] == [DS("hive,u2")]


def test_impact_lists_current_owners(store):
    rows = {r["asset"].value: r for r in run_query(store, get_query("impact"), {"entity": ORDERS}).dicts()}
    assert {k: int(v["hops"].value) for k, v in rows.items()} == DOWNSTREAM_ORDERS["2024-03-21"]
    assert rows[FCT]["owners"].value == "urn:li:corpuser:alice"
    assert rows[LTV]["owners"].value == "urn:li:corpuser:carol, urn:li:corpuser:dave"
    assert rows[RAW]["owners"] is None


# ----------------------------------------------------------------------------- golden rows


def test_entity_history_golden(store):
    rows = run_query(store, get_query("entity-history"), {"entity": OM_ORDERS})
    got = [(r["time"].value[:16], r["event_type"].value, r["user"].value,
            r["previous_version"] and r["previous_version"].value, r["current_version"] and r["current_version"].value,
            r["fields_changed"] and r["fields_changed"].value) for r in rows.dicts()]
    assert got == [
        ("2026-09-01T08:00", "EntityCreated", "ingestion-bot", "0.1", "0.1", "+columns, +domains"),  # created with
        # ut41c #5: a lineage event of its downstream table that added an edge from it
        ("2026-09-01T08:06", "EntityLineageAdded", "ingestion-bot", None, None,
         "+downstream mysql_prod.ecommerce.analytics.daily_revenue"),
        ("2026-09-01T10:15", "EntityUpdated", "alice.wong", "0.1", "0.2", "+description"),
        ("2026-09-01T10:40", "EntityUpdated", "alice.wong", "0.2", "0.3", "+owners, +tags"),
        ("2026-09-02T09:00", "EntityUpdated", "alice.wong", "0.3", "0.4",
         "+columns.customer_email.tags, +columns.order_total.description"),
        ("2026-09-02T10:35", "EntityUpdated", "carol.chen", "0.4", "0.4", "+followers"),
        # ut12 #9: which edge a lineage event added (it has no change description)
        ("2026-09-02T11:00", "EntityLineageAdded", "bob.martinez", None, None, "+upstream kafka_prod.orders_events"),
        ("2026-09-04T08:30", "EntityUpdated", "ingestion-bot", "0.4", "0.5", "+columns"),
        ("2026-09-04T09:00", "EntityLineageUpdated", "ingestion-bot", None, None,
         "+downstream mysql_prod.ecommerce.analytics.daily_revenue"),
        ("2026-09-10T08:30", "EntityUpdated", "ingestion-bot", "0.5", "1.5", "-columns"),
        ("2026-09-10T09:10", "EntityUpdated", "carol.chen", "1.5", "1.5", "-followers"),
    ]


def test_entity_history_of_an_upstream_table_lists_who_cut_its_edges(store):
    """ut41c #5: a lineage event affects the edge's downstream end only, so the upstream table's history
    never showed bob.martinez deleting its edge to the dashboard (corpus, 2026-09-09)."""
    rows = run_query(store, get_query("entity-history"), {"entity": "mysql_prod.ecommerce.analytics.daily_revenue"})
    got = [(r["time"].value[:16], r["user"].value, r["fields_changed"].value) for r in rows.dicts()
           if "stream " in (r["fields_changed"].value if r["fields_changed"] else "")]
    assert got == [("2026-09-01T08:06", "ingestion-bot", "+upstream mysql_prod.ecommerce.sales.orders"),
                   ("2026-09-01T08:07", "ingestion-bot", "+downstream looker_prod.revenue_overview"),
                   ("2026-09-03T10:30", "david.kim", "+downstream mlflow_prod.churn_predictor"),
                   ("2026-09-04T09:00", "ingestion-bot", "+upstream mysql_prod.ecommerce.sales.orders"),
                   ("2026-09-09T10:00", "bob.martinez", "-downstream looker_prod.revenue_overview")]


def test_tag_changes_golden_datahub_and_openmetadata(store):
    rows = run_query(store, get_query("tag-changes"), {"tag": "urn:li:tag:PII"})
    got = {(r["time"].value[:16], r["action"].value, r["entity_name"].value, r["field"].value, r["user"].value)
           for r in rows.dicts()}
    assert got == {
        ("2024-03-04T10:05", "added", CUST, "globalTags", "urn:li:corpuser:bob"),
        ("2024-03-04T10:05", "added", CUST, "TAG", "urn:li:corpuser:bob"),
        ("2024-03-04T10:20", "added", "urn:li:schemaField:(%s,email)" % CUST, "TAG", "urn:li:corpuser:bob"),
    }
    om = run_query(store, get_query("tag-changes"), {"tag": "PII.Sensitive"})
    assert [(r["action"].value, r["kind"].value, r["entity_name"].value, r["field"].value, r["user"].value)
            for r in om.dicts()] == [("added", "tag", OM_ORDERS, "columns.customer_email.tags", "alice.wong")]


def test_entity_state_golden(store):
    q = get_query("entity-state")
    v2 = run_query(store, q, {"entity": OM_ORDERS, "version": "0.2"})
    created = ["created_at", "customer_email", "customer_id", "legacy_coupon_code", "order_id", "order_status",
               "order_total"]  # the columns the table was created with (ut6a #3)
    assert texts(v2) and [r["field"].value for r in v2.dicts()] == ["columns"] * 7 + ["description", "domains"]
    assert [r["value"].value for r in v2.dicts()][:7] == [f"{OM_ORDERS}.{c}" for c in created]
    assert v2.dicts()[7]["value"].value.startswith("One row per customer order")
    v3 = run_query(store, q, {"entity": OM_ORDERS, "version": "0.3"})
    assert [r["field"].value for r in v3.dicts()][7:] == ["description", "domains", "owners", "tags"]
    latest = run_query(store, q, {"entity": OM_ORDERS})
    # list fields by member: the column added in 0.5 is still there (1.5 deleted another one, which
    # no change had added); followers (no member triples) show their last change, a deletion: absent
    # the columns it was created with, the one added in 0.5, not the one 1.5 dropped
    assert [(r["field"].value, r["value"].value) for r in latest.dicts()
            if r["field"].value in ("columns", "owners", "tags")] == [
        ("columns", f"{OM_ORDERS}.{c}") for c in sorted(set(created) - {"legacy_coupon_code"} | {"loyalty_tier"})] + [
        ("owners", "team:DataPlatform"), ("tags", "Tier.Tier1")]
    assert sorted({r["field"].value for r in latest.dicts()}) == [
        "columns", "columns.customer_email.tags", "columns.order_total.description", "description", "domains", "owners",
        "tags"]
    by_time = run_query(store, q, {"entity": OM_ORDERS, "as_of": "2026-09-05"})
    assert sorted({r["field"].value for r in by_time.dicts()}) == [
        "columns", "columns.customer_email.tags", "columns.order_total.description", "description", "domains",
        "followers", "owners", "tags"]
    assert len([r for r in by_time.dicts() if r["field"].value == "columns"]) == 8


@pytest.mark.parametrize("as_of, expected", [
    ("2024-03-08", {("OWNERSHIP", "urn:li:corpuser:alice"), ("STRUCTURED_PROPERTY", "io.acme.data_tier=GOLD"),
                    ("STRUCTURED_PROPERTY", "io.acme.retention_days=365.0")}),
    ("2024-03-19", {("OWNERSHIP", "urn:li:corpuser:alice"), ("OWNERSHIP", "urn:li:corpuser:bob"),
                    ("STRUCTURED_PROPERTY", "io.acme.data_tier=GOLD")}),
    # alice's owner type changed (OWNERSHIP MODIFY, modifier BUSINESS_OWNER): still alice, no row of
    # its own, which a later REMOVE of alice would not hide (ut10a #5)
    ("2026-06-01", {("OWNERSHIP", "urn:li:corpuser:alice"), ("STRUCTURED_PROPERTY", "io.acme.data_tier=GOLD")}),
])
def test_entity_state_of_datahub_change_event_categories(store, as_of, expected):
    """ut5a #2, #3: bob, removed by an OWNERSHIP REMOVE (the category OWNER was renamed), stayed an owner;
    each structured property hid the others, and removing one removed them all."""
    rows = run_query(store, get_query("entity-state"), {"entity": FCT, "as_of": as_of}).dicts()
    got = set()
    for r in rows:
        field, value = r["field"].value, r["value"].value
        if field == "STRUCTURED_PROPERTY":
            p = json.loads(value)["parameters"]
            values = ",".join(str(v) for v in json.loads(p["propertyValues"]))
            got.add((field, f"{p['propertyUrn'].rsplit(':', 1)[1]}={values}"))
        elif field == "OWNERSHIP":  # DataHub's OWNER and OWNERSHIP (its newer name): one list (ut14 #3)
            got.add((field, value))
    assert got == expected


@pytest.mark.parametrize("as_of, fields, note", [
    ("2024-03-15", ["DEPRECATION", "deprecation", "status", "upstreamLineage"], None),
    # hard-deleted on 03-20: its ECE-view deprecation (no DELETE of its own) stayed (ut10a #6)
    ("2024-03-21", [], "it was hard-deleted at 2024-03-20T00:05:00.000Z: a hard delete ends every value set before it"),
])
def test_entity_state_ends_with_a_hard_delete(store, as_of, fields, note):
    legacy = "urn:li:dataset:(urn:li:dataPlatform:hive,staging.orders_legacy,PROD)"
    rows = run_query(store, get_query("entity-state"), {"entity": legacy, "as_of": as_of})
    assert [r["field"].value for r in rows.dicts()] == fields
    assert (note in rows.notes) if note else not any("hard-deleted" in n for n in rows.notes)


def test_a_state_asked_by_version_is_not_said_to_be_ended_by_a_later_hard_delete(store):
    """ut26 D5: with a version alone a hard delete does not count, but the empty answer's note said it ended
    every value."""
    legacy = "urn:li:dataset:(urn:li:dataPlatform:hive,staging.orders_legacy,PROD)"
    rows = run_query(store, get_query("entity-state"), {"entity": legacy, "version": "1"})
    assert rows.rows == [] and rows.notes and not any("hard-deleted" in n for n in rows.notes), rows.notes


BUILD_FCT = "urn:li:dataJob:(urn:li:dataFlow:(airflow,shop_etl,prod),build_fct_orders)"
JOB_IN, JOB_OUT = "dataJobInputOutput.inputDatasets", "dataJobInputOutput.outputDatasets"


@pytest.mark.parametrize("as_of, expected", [
    ("2024-03-05", {(JOB_IN, LEGACY), (JOB_IN, STG_C), (JOB_OUT, FCT)}),
    # 03-10: the job reads stg_orders instead of orders_legacy; what it writes is unchanged
    (None, {(JOB_IN, STG_O), (JOB_IN, STG_C), (JOB_OUT, FCT)}),
])
def test_entity_state_tells_a_jobs_inputs_from_its_outputs(store, as_of, expected):
    """A user's test: a DataHub job's inputs and outputs were one list, dataJobInputOutput, so what the
    job reads could not be told from what it writes (the mapping has addedInput / addedOutput)."""
    params = {"entity": BUILD_FCT} | ({"as_of": as_of} if as_of else {})
    rows = run_query(store, get_query("entity-state"), params).dicts()
    assert {(r["field"].value, r["value"].value) for r in rows} == expected


def test_entity_history_shows_datahub_aspect_versions(store):
    """ut10a #16: a DataHub MCL's versions (systemMetadata.version, the previous one) were in the store
    and in no answer."""
    legacy = "urn:li:dataset:(urn:li:dataPlatform:hive,staging.orders_legacy,PROD)"
    rows = run_query(store, get_query("entity-history"), {"entity": legacy}).dicts()
    status = [(r["fields_changed"].value, r["previous_version"] and r["previous_version"].value,
               r["current_version"] and r["current_version"].value)
              for r in rows if "status" in r["fields_changed"].value]
    assert status == [("+status", None, "1"), ("~status", "1", "2"), ("-status", "2", None)]
    # ut26 R3: the corpus lacks the line that generated its datasetKey's version 1, which the DELETE revises
    key = [(r["fields_changed"].value, r["previous_version"] and r["previous_version"].value)
           for r in rows if "datasetKey" in r["fields_changed"].value]
    assert key == [("-datasetKey", "1")]


def test_tags_and_owners_a_corpus_entity_was_created_with(store):
    """The corpus's dashboard was created with Tier.Tier2, which bob.martinez removed on 2026-09-04: the
    removal alone was listed, and no state ever showed the tag; glossary terms are created with an owner."""
    rows = run_query(store, get_query("tag-changes"), {"tag": "Tier.Tier2"}).dicts()
    assert [(r["action"].value, r["entity_name"].value, r["field"].value) for r in rows] == [
        ("added", "looker_prod.revenue_overview", "tags"), ("removed", "looker_prod.revenue_overview", "tags")]
    q = get_query("entity-state")
    first = run_query(store, q, {"entity": "looker_prod.revenue_overview", "version": "0.1"}).dicts()
    assert [(r["field"].value, r["value"].value) for r in first if r["field"].value != "domains"] == [
        ("tags", "Tier.Tier2")]
    assert [r["value"].value for r in first if r["field"].value == "domains"] == ["Sales"]
    term = run_query(store, q, {"entity": "BusinessGlossary.Revenue", "version": "0.1"}).dicts()
    assert [(r["field"].value, r["value"].value) for r in term] == [("owners", "alice.wong")]


def test_a_glossary_term_fqn_names_the_term_as_a_tag_and_as_an_entity(store):
    """BusinessGlossary.Revenue is an entity (its own events) and a tag reference (applied to a table),
    both with that FQN: every query said "ambiguous". The parameter's type picks the node."""
    tags = run_query(store, get_query("tag-changes"), {"tag": "BusinessGlossary.Revenue"}).dicts()
    assert [(r["action"].value, r["kind"].value, r["entity_name"].value) for r in tags] == [
        ("added", "glossaryTerm", OM_DR)]
    history = run_query(store, get_query("entity-history"), {"entity": "BusinessGlossary.Revenue"}).dicts()
    assert [r["event_type"].value for r in history][:2] == ["EntityCreated", "EntityUpdated"]


def _om_update(n: int, ms: int, version: float, *, added=(), updated=(), deleted=()) -> dict:
    """An OpenMetadata entityUpdated event of one table, with its change description."""
    return {"id": f"u-{n}", "eventType": "entityUpdated", "entityType": "table", "entityId": "t-1",
            "entityFullyQualifiedName": "svc.db.sch.t", "userName": "alice", "timestamp": ms,
            "previousVersion": round(version - 0.1, 1), "currentVersion": version,
            "changeDescription": {"fieldsAdded": list(added), "fieldsUpdated": list(updated),
                                  "fieldsDeleted": list(deleted), "previousVersion": round(version - 0.1, 1)}}


def test_a_reused_version_is_the_finding_of_the_event_that_reused_it(tmp_path):
    """ut44g #2: 0.1 -> 0.2 -> 0.3 (alice), 0.3 -> 0.2 (bob), 0.2 -> 0.3 (carol): the reuse of 0.3 was dated
    at alice's event or carol's by the order of their IRIs, and a --since window of carol's left it out."""
    day = 86_400_000
    t = 1_782_864_000_000
    steps = [(0.2, "alice", 0), (0.3, "alice", 1), (0.2, "bob", 3), (0.3, "carol", 4)]
    events = []
    for n, (version, user, d) in enumerate(steps, start=1):
        e = _om_update(n, t + d * day, version, updated=[{"name": "description", "oldValue": "a", "newValue": str(n)}])
        e["userName"] = user
        if n == 3:
            e["previousVersion"] = e["changeDescription"]["previousVersion"] = 0.3
        events.append(e)
    # carol's event IRI sorts after alice's: by IRI order the finding was alice's
    from changeprov.mapping.emit import minted
    iri = lambda event: minted("event", "openmetadata", event["id"]).value
    events[3]["id"] = next(f"u-4-{k}" for k in range(1000) if iri({"id": f"u-4-{k}"}) > iri(events[1]))
    with _store_of(events, tmp_path) as store:
        rows = [r for r in run_query(store, "audit-versions", {}).dicts() if "reused" in r["detail"].value
                and r["version"].value == "0.3"]
        assert [(r["user"].value, r["time"].value) for r in rows] == [("carol", "2026-07-05T00:00:00Z")], rows


def test_the_tags_of_a_column_an_update_adds_are_added(tmp_path):
    """ut44g #1: a column added with PII.Sensitive (ingestion classifies it) was in no tag query, state or
    audit: only the tags of dropped columns had field changes of their own."""
    day = 1_788_249_600_000
    pii = [{"tagFQN": "PII.Sensitive", "source": "Classification", "labelType": "Automated", "state": "Suggested"}]
    added = _om_update(1, day, 0.2, added=[{"name": "columns", "newValue": json.dumps([
        {"name": "email", "fullyQualifiedName": "svc.db.sch.t.email", "tags": pii},
        {"name": "addr", "fullyQualifiedName": "svc.db.sch.t.addr", "children": [{"name": "street", "tags": pii}]}])}])
    dropped = _om_update(2, day + 1000, 0.3, deleted=[{"name": "columns", "oldValue": json.dumps([
        {"name": "email", "fullyQualifiedName": "svc.db.sch.t.email", "tags": pii}])}])
    with _store_of([added, dropped], tmp_path) as store:
        changes = run_query(store, "tag-changes", {"tag": "PII.Sensitive"}).dicts()
        assert [(r["action"].value, r["field"].value, r["user"].value) for r in changes] == [
            ("added", "columns.addr.street.tags", "alice"), ("added", "columns.email.tags", "alice"),
            ("removed", "columns.email.tags", "alice")]
        state = run_query(store, "entity-state", {"entity": "svc.db.sch.t", "version": "0.2"}).dicts()
        assert {(r["field"].value, r["value"].value) for r in state if r["field"].value.endswith(".tags")} == {
            ("columns.email.tags", "PII.Sensitive"), ("columns.addr.street.tags", "PII.Sensitive")}
        audit = run_query(store, "audit-sensitive-tags", {}).dicts()
        assert sorted(r["action"].value for r in audit) == ["added", "added", "removed"]


def test_entity_state_says_when_a_label_it_shows_was_hard_deleted(tmp_path):
    """ut44b #6: a glossary term deleted (hard) stayed on the tables it was applied to, without a word:
    OpenMetadata takes it off every asset without a change event for each."""
    day = 1_788_249_600_000
    term = lambda n, event_type, ms, version: {
        "id": f"g-{n}", "eventType": event_type, "entityType": "glossaryTerm", "entityId": "term-1",
        "entityFullyQualifiedName": "G.Revenue", "userName": "admin", "timestamp": ms,
        "previousVersion": version, "currentVersion": version}
    tagged = _om_update(1, day + 1000, 0.2, added=[{"name": "tags", "newValue": json.dumps(
        [{"tagFQN": "G.Revenue", "source": "Glossary", "labelType": "Manual", "state": "Confirmed"}])}])
    events = [term(1, "entityCreated", day, 0.1), tagged, term(2, "entityDeleted", day + 5000, 0.1)]
    said = "G.Revenue was hard-deleted at 2026-09-01T08:00:05.000Z: OpenMetadata takes a deleted tag or glossary term"
    # rv44b #5: another entity of that name (a database G.Revenue) deleted is not the term
    database = lambda n, event_type, ms: {**term(n, event_type, ms, 0.1), "entityType": "database", "entityId": "db-1"}
    with _store_of([*events, database(3, "entityCreated", day + 100), database(4, "entityDeleted", day + 3000)],
                   tmp_path / "two") as store:
        notes = run_query(store, "entity-state", {"entity": "svc.db.sch.t"}).notes
        assert [n[:60] for n in notes if "hard-deleted" in n] == [said[:60]], notes
    with _store_of(events, tmp_path) as store:
        now = run_query(store, "entity-state", {"entity": "svc.db.sch.t"})
        assert [r["value"].value for r in now.dicts()] == ["G.Revenue"]
        assert any(n.startswith(said) for n in now.notes), now.notes
        before = run_query(store, "entity-state", {"entity": "svc.db.sch.t", "as_of": day + 2000})
        assert before.rows and not any("hard-deleted" in n for n in before.notes), before.notes


def test_an_openmetadata_entitys_domains_are_its_members_added_and_not_removed(tmp_path):
    """ut44b #1: domains kept only their JSON, so the state showed the last change's domains: created in
    Sales, Marketing added, then Sales removed showed Marketing alone at 0.2 and no domain at all later."""
    day = 1_788_249_600_000
    ref = lambda i, name: {"id": f"dom-{i}", "type": "domain", "name": name, "fullyQualifiedName": name}
    created = {"id": "c-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
               "entityFullyQualifiedName": "svc.db.sch.t", "userName": "bot", "timestamp": day - 1000,
               "previousVersion": 0.1, "currentVersion": 0.1,
               "entity": {"id": "t-1", "fullyQualifiedName": "svc.db.sch.t", "domains": [ref(1, "Sales")]}}
    events = [created, _om_update(1, day, 0.2, added=[{"name": "domains", "newValue": json.dumps([ref(2, "Marketing")])}]),
              _om_update(2, day + 1000, 0.3, deleted=[{"name": "domains", "oldValue": json.dumps([ref(1, "Sales")])}])]
    with _store_of(events, tmp_path) as store:
        def domains(**at):
            rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", **at}).dicts()
            return sorted(r["value"].value for r in rows if r["field"].value == "domains")
        assert domains(version="0.1") == ["Sales"]
        assert domains(version="0.2") == ["Marketing", "Sales"]
        assert domains() == domains(version="0.3") == ["Marketing"]
    # rv44 #1: a domain renamed later (the name another entity's event gives it) is one row, not two
    renamed = {**_om_update(3, day + 2000, 0.4, added=[{"name": "domains", "newValue": json.dumps([ref(2, "Marketing2")])}]),
               "entityId": "u-1", "entityFullyQualifiedName": "svc.db.sch.u", "id": "u-3"}
    with _store_of([*events, renamed], tmp_path / "renamed") as store:
        rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", "version": "0.2"}).dicts()
        assert sorted(r["value"].value for r in rows if r["field"].value == "domains") == ["Marketing2", "Sales"]


def _tags(*fqns: str) -> str:
    return json.dumps([{"tagFQN": f, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}
                       for f in fqns])


@pytest.fixture(scope="module")
def state_store(tmp_path_factory):
    """One table: tags added and removed over several changes (OpenMetadata lists each change, not the
    whole list), then four description updates in the same millisecond (versions 1.1 to 1.4)."""
    work = tmp_path_factory.mktemp("state")
    day = 1_700_000_000_000
    events = [
        _om_update(1, day, 0.2, added=[{"name": "tags", "newValue": _tags("PII.Sensitive", "Tier.Tier1")}]),
        _om_update(2, day + 1000, 0.3, added=[{"name": "tags", "newValue": _tags("Retention.Short")}]),
        _om_update(3, day + 2000, 0.4, deleted=[{"name": "tags", "oldValue": _tags("Tier.Tier1")}]),
        _om_update(4, day + 3000, 0.5, added=[{"name": "tags", "newValue": _tags("Tier.Tier2")}]),
    ] + [_om_update(5 + i, day + 9000, round(1.1 + i / 10, 1),
                    updated=[{"name": "description", "oldValue": "x", "newValue": text}])
         for i, text in enumerate("ABCD")]
    events.reverse()  # the file's order must not matter
    return _store_of(events, work)


def _store_of(events: list[dict], work: Path):
    """An embedded store of these events, mapped by the reference mapper (every one must map)."""
    from changeprov.mapping.reference import map_to_files

    work.mkdir(parents=True, exist_ok=True)
    src = work / "events.jsonl"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    counts = map_to_files([str(src)], work / "x.nt", work / "q.jsonl").as_dict()
    assert counts["mapped"] == len(events), (work / "q.jsonl").read_text()[:500]
    store = open_store("embedded", path=work / "db", create=True)
    with (work / "x.nt").open("rb") as nt:
        store.load_ntriples(nt)
    return store


@pytest.mark.parametrize("params, tags, description", [
    ({"version": "0.2"}, ["PII.Sensitive", "Tier.Tier1"], None),
    ({"version": "0.3"}, ["PII.Sensitive", "Retention.Short", "Tier.Tier1"], None),
    ({"version": "0.4"}, ["PII.Sensitive", "Retention.Short"], None),
    ({}, ["PII.Sensitive", "Retention.Short", "Tier.Tier2"], "D"),
    ({"version": "1.2"}, ["PII.Sensitive", "Retention.Short", "Tier.Tier2"], "B"),
])
def test_entity_state_rebuilds_list_fields_from_their_changes(state_store, params, tags, description):
    """A user's test: the state showed only the last change's tags, one removal hid the whole field,
    and same-millisecond versions were ordered by IRI (description "B" instead of "D")."""
    rows = run_query(state_store, get_query("entity-state"), {"entity": "svc.db.sch.t", **params}).dicts()
    assert [r["value"].value for r in rows if r["field"].value == "tags"] == tags
    assert [r["value"].value for r in rows if r["field"].value == "description"] == ([description] if description else [])
    history = run_query(state_store, get_query("entity-history"), {"entity": "svc.db.sch.t"}).dicts()
    assert [r["current_version"].value for r in history] == ["0.2", "0.3", "0.4", "0.5", "1.1", "1.2", "1.3", "1.4"]


def test_deleted_entities_golden(store):
    rows = run_query(store, get_query("deleted-entities"), {})
    got = [(r["time"].value[:16], r["deletion"].value, r["entity_name"].value, r["user"].value,
            r["restored_at"] and r["restored_at"].value[:16], r["cascaded_from"] and r["cascaded_from"].value)
           for r in rows.dicts()]
    assert got == [
        ("2024-03-15T08:00", "SoftDeleted", LEGACY, "urn:li:corpuser:bob", None, None),
        ("2024-03-15T08:30", "SoftDeleted", DREV, "urn:li:corpuser:carol", "2024-03-15T08:45", None),
        ("2024-03-20T00:05", "HardDeleted", LEGACY, "urn:li:corpuser:bob", None, None),
        ("2026-09-01T14:10", "SoftDeleted", "mysql_prod.ecommerce.sales.orders_staging_tmp", "admin", "2026-09-03T09:00",
         None),
        ("2026-09-04T13:00", "SoftDeleted", "mysql_prod.ecommerce.sales.orders_staging_tmp", "admin", None, None),
        ("2026-09-04T13:05", "HardDeleted", "mysql_prod.ecommerce.sales.orders_staging_tmp", "admin", None, None),
        ("2026-09-08T10:00", "HardDeleted", "BusinessGlossary.LegacyKPI", "admin", None, None),
        # ut5a #8: the child term the recursive delete took with it (it had only been listed in the event)
        ("2026-09-08T10:00", "HardDeleted", "BusinessGlossary.LegacyKPI.OldMargin", "admin", None,
         "BusinessGlossary.LegacyKPI"),
        ("2026-09-08T11:00", "SoftDeleted", "mlflow_prod.churn_predictor", "david.kim", "2026-09-09T09:00", None),
    ]
    since = run_query(store, get_query("deleted-entities"), {"since": "2026-09-08"})
    assert len(since.rows) == 3
    # ut12 #9: a window, as every other windowed query has
    window = run_query(store, get_query("deleted-entities"), {"since": "2026-09-08", "until": "2026-09-08T10:30:00Z"})
    assert [r["entity_name"].value for r in window.dicts()] == ["BusinessGlossary.LegacyKPI", "BusinessGlossary.LegacyKPI.OldMargin"]
    history = run_query(store, get_query("entity-history"), {"entity": "BusinessGlossary.LegacyKPI.OldMargin"}).dicts()
    assert [(r["event_type"].value, r["lifecycle"].value) for r in history][-1] == ("EntityDeleted", "HardDeleted")


def test_a_recursive_soft_delete_takes_the_children_and_their_root_brings_them_back(tmp_path):
    """ut5a #8: a recursive delete listed only its root; the children it deleted were in the event's entity."""
    t = 1_704_067_200_000
    kids = [{"type": "glossaryTerm", "id": f"k-{i}", "fullyQualifiedName": f"G.Root.K{i}"} for i in (1, 2)]

    def event(n, event_type, entity_id, fqn, ms, previous, current, **extra):
        return {"id": f"c-{n}", "eventType": event_type, "entityType": "glossaryTerm", "entityId": entity_id,
                "entityFullyQualifiedName": fqn, "userName": "admin", "timestamp": ms,
                "previousVersion": previous, "currentVersion": current, **extra}

    events = [event(1, "entityCreated", "root", "G.Root", t, 0.1, 0.1),
              event(2, "entityCreated", "k-1", "G.Root.K1", t + 10, 0.1, 0.1),
              event(3, "entitySoftDeleted", "root", "G.Root", t + 1000, 0.1, 0.2, recursive=True,
                    entity={"id": "root", "children": kids}),
              event(4, "entityRestored", "root", "G.Root", t + 2000, 0.2, 0.3),
              event(5, "entityDeleted", "root", "G.Root", t + 3000, 0.3, 0.3, recursive=True,
                    entity={"id": "root", "children": kids[:1]})]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("deleted-entities"), {}).dicts()
    assert [(r["deletion"].value, r["entity_name"].value, r["restored_at"] is not None,
             r["cascaded_from"] and r["cascaded_from"].value) for r in rows] == [
        ("SoftDeleted", "G.Root", True, None), ("SoftDeleted", "G.Root.K1", True, "G.Root"),
        ("SoftDeleted", "G.Root.K2", True, "G.Root"), ("HardDeleted", "G.Root", False, None),
        ("HardDeleted", "G.Root.K1", False, "G.Root")]
    history = run_query(store, get_query("entity-history"), {"entity": "G.Root.K1"}).dicts()
    assert [r["event_type"].value for r in history] == [  # the root's restore brought it back (ut7b #7)
        "EntityCreated", "EntitySoftDeleted", "EntityRestored", "EntityDeleted"]


def _om_lifecycle(n: int, event_type: str, entity_id: str, ms: int, previous: float, current: float) -> dict:
    return {"id": f"l-{n}", "eventType": event_type, "entityType": "table", "entityId": entity_id,
            "entityFullyQualifiedName": f"svc.db.sch.{entity_id}", "userName": "bob", "timestamp": ms,
            "previousVersion": previous, "currentVersion": current}


def _dh_mcl(urn: str, aspect: str, ms: int, version: str, *, value=None, previous=None, change="UPSERT") -> dict:
    event = {"entityType": "dataset", "entityUrn": urn, "changeType": change, "aspectName": aspect,
             "systemMetadata": {"lastObserved": ms, "version": version},
             "created": {"time": ms, "actor": "urn:li:corpuser:bob"}}
    if value is not None:
        event["aspect"] = {"value": json.dumps(value), "contentType": "application/json"}
    if previous is not None:
        event["previousAspectValue"] = {"value": json.dumps(previous[1]), "contentType": "application/json"}
        event["previousSystemMetadata"] = {"version": previous[0]}
    return event


@pytest.mark.parametrize("v1, v2, v3, want_upstream, want_tags", [
    # version 2 adds v and PII, version 3 takes them out again, in one millisecond
    ([], ["v"], [], {"u"}, set()),
    # version 2 takes them out, version 3 puts them back, in one millisecond
    (["v"], [], ["v"], {"u", "v"}, {"urn:li:tag:PII"}),
])
def test_datahub_aspect_versions_order_changes_in_one_millisecond(tmp_path, v1, v2, v3, want_upstream, want_tags):
    """ut10a #1, #2: two versions of one aspect in one millisecond were ordered by event IRI (entity-state)
    or the add won (lineage), so an upstream removed by version 3 stayed and a re-added tag was lost on
    some datasets. Six datasets, so that an order by IRI gets some of them wrong."""
    t, hour = 1_704_139_200_000, 3_600_000
    up = {n: {"dataset": DS(f"hive,db.{n}"), "type": "TRANSFORMED"} for n in ("u", "v")}

    def lineage(names):
        return {"upstreams": [up["u"]] + [up[n] for n in names]}

    def tags(names):
        return {"tags": [{"tag": "urn:li:tag:PII"} for _ in names]}

    events, names = [], [DS(f"hive,db.d{i}") for i in range(6)]
    for d in names:
        for aspect, value in (("upstreamLineage", lineage), ("globalTags", tags)):
            events += [_dh_mcl(d, aspect, t, "1", value=value(v1)),
                       _dh_mcl(d, aspect, t + hour, "2", value=value(v2), previous=("1", value(v1))),
                       _dh_mcl(d, aspect, t + hour, "3", value=value(v3), previous=("2", value(v2)))]
    store = _store_of(events, tmp_path)
    for d in names:
        rows = run_query(store, get_query("upstream"), {"entity": d}).dicts()
        assert {r["asset_name"].value for r in rows} == {DS(f"hive,db.{n}") for n in want_upstream}, d
        details = run_query(store, get_query("lineage-details"), {"entity": d}).dicts()
        assert {r["upstream_name"].value for r in details} == {DS(f"hive,db.{n}") for n in want_upstream}, d
        audit = run_query(store, get_query("audit-lineage"), {"entity": d}).dicts()
        assert {r["up_name"].value for r in audit if r["valid"].value == "true"} == {
            DS(f"hive,db.{n}") for n in want_upstream}, d
        state = run_query(store, get_query("entity-state"), {"entity": d}).dicts()
        assert {r["value"].value for r in state if r["field"].value == "globalTags"} == want_tags, d


def test_audit_lineage_removed_lists_edges_an_upstream_lineage_left_out_without_naming_them(tmp_path):
    """ut10a #7: upstream ended an edge that a later upstreamLineage without its previous value (or a
    DELETE without one) left out, and audit-lineage-removed, which read only removedBy, did not list it."""
    t, hour = 1_704_139_200_000, 3_600_000
    d, e = DS("hive,db.d"), DS("hive,db.e")
    u, v = ({"dataset": DS(f"hive,db.{n}"), "type": "TRANSFORMED"} for n in ("u", "v"))
    events = [
        _dh_mcl(d, "upstreamLineage", t, "1", value={"upstreams": [u, v]}),
        # no previousAspectValue: v is left out without a removedBy
        _dh_mcl(d, "upstreamLineage", t + hour, "2", value={"upstreams": [u]}),
        # still without v: not a second removal
        _dh_mcl(d, "upstreamLineage", t + 2 * hour, "3", value={"upstreams": [u]}),
        # with its previous value: u removed by name, listed once
        _dh_mcl(d, "upstreamLineage", t + 3 * hour, "4", value={"upstreams": []}, previous=("3", {"upstreams": [u]})),
        _dh_mcl(e, "upstreamLineage", t, "1", value={"upstreams": [u]}),
        _dh_mcl(e, "upstreamLineage", t + 4 * hour, "2", change="DELETE"),
    ]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("audit-lineage-removed"), {}).dicts()
    assert [(r["down_name"].value, r["up_name"].value, r["time"].value) for r in rows] == [
        (d, DS("hive,db.v"), "2024-01-01T21:00:00Z"),
        (d, DS("hive,db.u"), "2024-01-01T23:00:00Z"),
        (e, DS("hive,db.u"), "2024-01-02T00:00:00Z")]
    assert run_query(store, get_query("upstream"), {"entity": e}).rows == []


def test_tag_changes_in_one_millisecond_are_listed_in_version_order(tmp_path):
    """ut42b #4: a tag added by one version and removed by the next in one millisecond was listed removed
    first on some entities (ordered by event IRI), which reads as if the tag were still there. Six
    OpenMetadata tables and six DataHub datasets, so that an order by IRI gets some of them wrong."""
    t = 1_714_521_600_000
    tags = lambda *names: json.dumps([{"tagFQN": n, "source": "Classification"} for n in names])
    gt = lambda *names: {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}
    events = []
    for i in range(6):
        table = {"entityType": "table", "entityId": f"t{i}", "entityFullyQualifiedName": f"s.d.x.t{i}", "userName": "ann",
                 "timestamp": t, "eventType": "entityUpdated"}
        events += [{**table, "id": f"rm-{i}", "previousVersion": 0.2, "currentVersion": 0.3, "changeDescription": {
                        "fieldsAdded": [], "fieldsUpdated": [], "fieldsDeleted": [{"name": "tags", "oldValue": tags("A.x")}]}},
                   {**table, "id": f"add-{i}", "previousVersion": 0.1, "currentVersion": 0.2, "changeDescription": {
                        "fieldsAdded": [{"name": "tags", "newValue": tags("A.x")}], "fieldsUpdated": [], "fieldsDeleted": []}}]
        d = DS(f"hive,db.e{i}")
        events += [_dh_mcl(d, "globalTags", t, "3", value=gt("Y"), previous=("2", gt("X"))),
                   _dh_mcl(d, "globalTags", t, "2", value=gt("X"), previous=("1", gt())),
                   _dh_mcl(d, "globalTags", t - 1, "1", value=gt())]
    with _store_of(events, tmp_path) as store:
        for tag in ("A.x", "urn:li:tag:X"):
            rows = run_query(store, "tag-changes", {"tag": tag}).dicts()
            by_entity: dict[str, list[str]] = {}
            for r in rows:
                by_entity.setdefault(r["entity_name"].value, []).append(r["action"].value)
            assert len(by_entity) == 6 and all(actions == ["added", "removed"] for actions in by_entity.values()), \
                (tag, by_entity)


def test_a_tag_left_out_by_a_higher_version_in_the_same_millisecond_is_removed(tmp_path):
    """ut42f #2: globalTags version 9 [PII] and version 10 [Gold], both without their previous values, in one
    millisecond (10 first in the file): entity-state said Gold (the higher version is later), while
    tag-changes and the audit listed PII added and never removed."""
    t = 1_743_465_600_000
    d = DS("hive,db.p")
    gt = lambda name: {"tags": [{"tag": f"urn:li:tag:{name}"}]}
    events = [_dh_mcl(d, "globalTags", t, "10", value=gt("Gold")), _dh_mcl(d, "globalTags", t, "9", value=gt("PII"))]
    with _store_of(events, tmp_path) as store:
        state = run_query(store, "entity-state", {"entity": d}).dicts()
        assert {r["value"].value for r in state if r["field"].value == "globalTags"} == {"urn:li:tag:Gold"}
        rows = run_query(store, "tag-changes", {"tag": "urn:li:tag:PII"}).dicts()
        assert [r["action"].value for r in rows] == ["added", "removed"]
        audit = run_query(store, "audit-sensitive-tags", {}).dicts()
        assert sorted(r["action"].value for r in audit if r["tag"].value == "urn:li:tag:PII") == ["added", "removed"]


def test_a_status_sent_without_its_previous_value_that_says_not_removed_restores(tmp_path):
    """ut42f #3: status removed:true (version 1, 2), then removed:false (version 3), each sent without its
    previous value: entity-state said live, deleted-entities said never restored, and lineage called the
    dataset soft-deleted."""
    t, day = 1_738_972_800_000, 86_400_000
    d = DS("hive,db.s")
    events = [_dh_mcl(d, "status", t, "1", value={"removed": True}),
              _dh_mcl(d, "status", t + day, "2", value={"removed": True}),
              _dh_mcl(d, "status", t + 2 * day, "3", value={"removed": False}),
              _dh_mcl(DS("hive,db.down"), "upstreamLineage", t - day, "1",
                      value={"upstreams": [{"dataset": d, "type": "TRANSFORMED"}]})]
    with _store_of(events, tmp_path) as store:
        rows = run_query(store, "deleted-entities", {}).dicts()
        assert [(r["deletion"].value, r["restored_at"] and r["restored_at"].value) for r in rows] == [
            ("SoftDeleted", "2025-02-10T00:00:00Z"), ("SoftDeleted", "2025-02-10T00:00:00Z")]
        for at, deleted in ((t + day, True), (t + 3 * day, False)):
            notes = run_query(store, "upstream", {"entity": DS("hive,db.down"), "as_of": at}).notes
            assert bool([n for n in notes if n.startswith("soft-deleted")]) == deleted, (at, notes)


def test_entity_history_orders_aspect_versions_in_one_millisecond_as_numbers(tmp_path):
    """ut42f #5: versions 9 (8 -> 9) and 10 (9 -> 10) of one aspect in one millisecond were listed 10 first."""
    t = 1_743_465_600_000
    d = DS("hive,db.r")
    gt = lambda name: {"tags": [{"tag": f"urn:li:tag:{name}"}]}
    events = [_dh_mcl(d, "globalTags", t, "10", value=gt("B"), previous=("9", gt("A"))),
              _dh_mcl(d, "globalTags", t, "9", value=gt("A"), previous=("8", gt("Z")))]
    with _store_of(events, tmp_path) as store:
        rows = run_query(store, "entity-history", {"entity": d}).dicts()
        assert [r["current_version"].value for r in rows] == ["9", "10"]


def test_audit_lineage_removed_lists_an_edge_a_version_removed_in_its_adds_millisecond_once(tmp_path):
    """ut42b #1: version 3 removed u1 in the millisecond of version 2, which had kept it; the restatement at
    03:00 (version 4, without u1) was listed as a second removal, since "nothing ended the edge in between"
    did not count the removal in the add's own millisecond that upstream counts (it revises the add)."""
    t, hour = 1_714_521_600_000, 3_600_000
    d = DS("hive,d")
    up = lambda *ns: {"upstreams": [{"dataset": DS(f"hive,{n}"), "type": "TRANSFORMED"} for n in ns]}
    events = [_dh_mcl(d, "upstreamLineage", t + hour, "1", value=up("u1")),
              _dh_mcl(d, "upstreamLineage", t + 2 * hour, "2", value=up("u1", "u3"), previous=("1", up("u1"))),
              _dh_mcl(d, "upstreamLineage", t + 2 * hour, "3", value=up("u3"), previous=("2", up("u1", "u3"))),
              _dh_mcl(d, "upstreamLineage", t + 3 * hour, "4", value=up("u3"), previous=("3", up("u3"))),
              # the same without previous values (setsUpstreamsOf only) on a second dataset
              _dh_mcl(DS("hive,e"), "upstreamLineage", t + hour, "1", value=up("u1")),
              _dh_mcl(DS("hive,e"), "upstreamLineage", t + 2 * hour, "2", value=up("u1", "u3")),
              _dh_mcl(DS("hive,e"), "upstreamLineage", t + 2 * hour, "3", value=up("u3"), previous=("2", up("u1", "u3"))),
              _dh_mcl(DS("hive,e"), "upstreamLineage", t + 3 * hour, "4", value=up("u3"))]
    with _store_of(events, tmp_path) as store:
        rows = run_query(store, "audit-lineage-removed", {}).dicts()
        assert [(r["down_name"].value, r["up_name"].value, r["time"].value) for r in rows] == [
            (d, DS("hive,u1"), "2024-05-01T02:00:00Z"), (DS("hive,e"), DS("hive,u1"), "2024-05-01T02:00:00Z")]
        for at in (t + 2 * hour, t + 3 * hour):
            assert [r["asset_name"].value for r in run_query(store, "upstream", {"entity": d, "as_of": at}).dicts()] \
                == [DS("hive,u3")]


def test_an_edge_a_version_removed_in_its_adds_millisecond_is_no_dependency_in_the_audit(tmp_path):
    """rv42 #4: version 3 took u out of d's upstreams in the millisecond of version 2, which added it; upstream
    and audit-lineage knew, but audit-deletions called d a "still" dependent at u's soft delete and
    audit-schema-drops reported u's column drop as hitting d."""
    t, hour = 1_714_521_600_000, 3_600_000
    d, u = DS("hive,d"), DS("hive,u")
    up = lambda *ns: {"upstreams": [{"dataset": DS(f"hive,{n}"), "type": "TRANSFORMED"} for n in ns]}
    schema = lambda *fs: {"schemaName": "u", "platform": "urn:li:dataPlatform:hive", "version": 0, "hash": "",
                          "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
                          "fields": [{"fieldPath": f, "nativeDataType": "int",
                                      "type": {"type": {"com.linkedin.schema.NumberType": {}}}} for f in fs]}
    events = [_dh_mcl(d, "upstreamLineage", t, "1", value=up("w")),
              _dh_mcl(d, "upstreamLineage", t + hour, "2", value=up("w", "u"), previous=("1", up("w"))),
              _dh_mcl(d, "upstreamLineage", t + hour, "3", value=up("w"), previous=("2", up("w", "u"))),
              _dh_mcl(u, "schemaMetadata", t, "1", value=schema("a", "b")),
              _dh_mcl(u, "schemaMetadata", t + 2 * hour, "2", value=schema("a"), previous=("1", schema("a", "b"))),
              _dh_mcl(u, "status", t + 3 * hour, "1", value={"removed": True})]
    with _store_of(events, tmp_path) as store:
        assert [r["asset_name"].value for r in run_query(store, "upstream", {"entity": d}).dicts()] == [DS("hive,w")]
        deletions = run_query(store, "audit-deletions", {}).dicts()
        assert {(r["entity_name"].value, r["dependency"].value) for r in deletions} == {(u, "former")}
        assert run_query(store, "audit-schema-drops", {}).dicts() == []


def test_a_removal_in_the_millisecond_of_the_only_add_is_no_removal_in_the_audit_either(tmp_path):
    """ut42b #2: m -> o added and deleted in one millisecond (OpenMetadata events carry no version to order
    them): the lineage queries keep the edge (an add and a removal in one millisecond end it only when the
    removal revises the add), while audit-lineage-removed listed the removal."""
    t = 1_714_521_600_000
    events = [_om_lineage(1, "entityLineageAdded", t, "m", "o", []), _om_lineage(2, "entityLineageDeleted", t, "m", "o", []),
              # an edge added before and removed later is listed, as one whose add the log lacks
              _om_lineage(3, "entityLineageAdded", t, "m", "p", []), _om_lineage(4, "entityLineageDeleted", t + 1, "m", "p", []),
              _om_lineage(5, "entityLineageDeleted", t + 2, "m", "q", [])]
    with _store_of(events, tmp_path) as store:
        assert [r["asset_name"].value for r in run_query(store, "downstream", {"entity": "s.d.x.m"}).dicts()] == ["s.d.x.o"]
        rows = run_query(store, "audit-lineage-removed", {}).dicts()
        assert [(r["down_name"].value, r["up_name"].value) for r in rows] == [("s.d.x.p", "s.d.x.m"), ("s.d.x.q", "s.d.x.m")]


def _fine_and_coarse() -> tuple[dict, dict]:
    """A DataHub upstreamLineage of db.d from db.u with the column edge u.f -> d.g, and one without it."""
    fine = {"upstreams": [{"dataset": DS("hive,db.u"), "type": "TRANSFORMED"}],
            "fineGrainedLineages": [{"upstreamType": "FIELD_SET", "downstreamType": "FIELD",
                                     "upstreams": [f"urn:li:schemaField:({DS('hive,db.u')},f)"],
                                     "downstreams": [f"urn:li:schemaField:({DS('hive,db.d')},g)"]}]}
    return fine, {"upstreams": fine["upstreams"]}


def test_audit_lineage_removed_lists_column_edges_a_restatement_of_their_lineage_ends(tmp_path):
    """ut40 #1: upstream and downstream end an OpenMetadata column edge that a later lineage event on its
    table edge states without it (or that deletes the table edge without listing its columns), and a
    DataHub fine-grained edge that a later upstreamLineage without its previous value leaves out; the
    audit listed none of these (only removals by name), so "which column lineage was cut" went silent."""
    t, hour = 1_704_139_200_000, 3_600_000
    fine, coarse = _fine_and_coarse()
    events = [
        _om_lineage(1, "entityLineageAdded", t, "p", "q", [("a", "x"), ("b", "y")]),
        _om_lineage(2, "entityLineageUpdated", t + hour, "p", "q", [("a", "x")]),  # b -> y cut
        _om_lineage(3, "entityLineageUpdated", t + 2 * hour, "p", "q", [("a", "x")]),  # nothing more
        _om_lineage(4, "entityLineageDeleted", t + 3 * hour, "p", "q", []),  # the table edge, and a -> x with it
        _om_lineage(5, "entityLineageAdded", t + 4 * hour, "p", "q", [("b", "y")]),
        # q hard-deleted: that ends b -> y; the later lineage delete is no second end
        {"id": "h-6", "eventType": "entityDeleted", "entityType": "table", "entityId": "q",
         "entityFullyQualifiedName": "s.d.x.q", "userName": "bob", "timestamp": t + 5 * hour,
         "previousVersion": 0.1, "currentVersion": 0.2},
        _om_lineage(7, "entityLineageDeleted", t + 6 * hour, "p", "q", []),
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t, "1", value=fine),
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t + hour, "2", value=coarse),  # f -> g cut
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t + 2 * hour, "3", value=coarse),  # nothing more
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t + 3 * hour, "4", value=fine),
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t + 4 * hour, "5", change="DELETE"),  # f -> g and u -> d
    ]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("audit-lineage-removed"), {}).dicts()
    field = "urn:li:schemaField:({},{})".format
    assert [(r["time"].value[11:16], r["level"].value, r["down_name"].value, r["up_name"].value, r["event_type"].value)
            for r in rows] == [
        ("21:00", "column", "s.d.x.q.y", "s.d.x.p.b", "EntityLineageUpdated"),
        ("21:00", "column", field(DS("hive,db.d"), "g"), field(DS("hive,db.u"), "f"), "MclUpsert"),
        ("23:00", "dataset", "s.d.x.q", "s.d.x.p", "EntityLineageDeleted"),
        ("23:00", "column", "s.d.x.q.x", "s.d.x.p.a", "EntityLineageDeleted"),
        ("00:00", "dataset", DS("hive,db.d"), DS("hive,db.u"), "MclDelete"),
        ("00:00", "column", field(DS("hive,db.d"), "g"), field(DS("hive,db.u"), "f"), "MclDelete"),
        # the table edge's delete names it (the first branch), b -> y ended with q's hard delete at 01:00
        ("02:00", "dataset", "s.d.x.q", "s.d.x.p", "EntityLineageDeleted")]
    # the lineage queries agree: nothing downstream of p.b after 21:00, of p.a after 23:00
    for column, cut in (("s.d.x.p.b", "2024-01-01T21:00:00Z"), ("s.d.x.p.a", "2024-01-01T23:00:00Z")):
        assert run_query(store, get_query("downstream"), {"entity": column, "as_of": cut}).rows == []


@pytest.mark.parametrize("as_of, want", [
    ("2024-01-01T20:30:00Z", {("globalTags", "urn:li:tag:PII")}),
    # version 2 has no previousAspectValue: it is the whole aspect, PII is gone (ut10a #9)
    ("2024-01-01T21:30:00Z", {("globalTags", "urn:li:tag:Gold")}),
    ("2024-01-01T22:30:00Z", {("globalTags", "urn:li:tag:Silver")}),
    # a DELETE without its previous value takes every tag
    ("2024-01-01T23:30:00Z", set()),
])
def test_entity_state_of_a_datahub_aspect_sent_without_its_previous_value(tmp_path, as_of, want):
    t, hour = 1_704_139_200_000, 3_600_000
    d = DS("hive,db.c")

    def tags(*names):
        return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}

    events = [
        _dh_mcl(d, "globalTags", t, "1", value=tags("PII")),
        {**_dh_mcl(d, "globalTags", t + hour, "2", value=tags("Gold")), "previousSystemMetadata": {"version": "1"}},
        _dh_mcl(d, "globalTags", t + 2 * hour, "3", value=tags("Silver"), previous=("2", tags("Gold"))),
        _dh_mcl(d, "globalTags", t + 3 * hour, "4", change="DELETE"),
    ]
    rows = run_query(_store_of(events, tmp_path), get_query("entity-state"), {"entity": d, "as_of": as_of})
    assert {(r["field"].value, r["value"].value) for r in rows.dicts()} == want


@pytest.mark.parametrize("as_of, want", [
    # second life: version 1 added A, version 3 (the line of 2 missing) keeps A and adds B
    (None, {("urn:li:tag:A", "2024-06-03T00:00:01Z"), ("urn:li:tag:B", "2024-06-03T00:00:03Z")}),
    # first life, between its versions 4 (3 missing) and the hard delete: version 4 keeps A of version 2
    ("2024-06-01T12:00:00Z", {("urn:li:tag:A", "2024-06-01T00:00:02Z")}),
])
def test_entity_state_of_a_recreated_datahub_entity_shows_each_member_once(tmp_path, as_of, want):
    """rv36 #1, ut20 #5: the versions of a DataHub entity created again are numbered from 1 again, so a
    kept member looked up the version of the other life, and the member was listed twice."""
    t, day = 1_717_200_000_000, 86_400_000
    d = DS("hive,db.recreated")

    def tags(*names):
        return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}

    events = [_dh_mcl(d, "globalTags", t + 2000, "2", value=tags("A")),
              _dh_mcl(d, "globalTags", t + 4000, "4", value=tags("A"), previous=("3", tags("A"))),
              _dh_mcl(d, "globalTags", t + day, "5", change="DELETE", previous=("4", tags("A"))),
              _dh_mcl(d, "datasetKey", t + day + 1, "2", change="DELETE", previous=("1", {"name": "db.recreated"})),
              _dh_mcl(d, "datasetKey", t + 2 * day, "1", value={"name": "db.recreated"}),
              _dh_mcl(d, "globalTags", t + 2 * day + 1000, "1", value=tags("A")),
              _dh_mcl(d, "globalTags", t + 2 * day + 3000, "3", value=tags("A", "B"), previous=("2", tags("A"))),
              _dh_mcl(d, "globalTags", t + 2 * day + 5000, "4", value=tags("A", "B"), previous=("3", tags("A", "B")))]
    with _store_of(events, tmp_path) as store:
        answer = run_query(store, "entity-state", {"entity": d, **({"as_of": as_of} if as_of else {})})
    got = [(r["value"].value, r["set_at"].value) for r in answer.dicts() if r["field"].value == "globalTags"]
    assert sorted(got) == sorted(want), got
    # rv37 #2: the next life's generator of a version number is no sign of a clock running behind
    assert not any("version chain" in n for n in answer.notes), answer.notes


def test_entity_state_of_a_datahub_entity_hard_deleted_in_the_millisecond_of_its_last_version(tmp_path):
    """rv37 #3: the old life's version 2 and the hard delete in one millisecond: the kept member looked
    up the old life, and the event IRIs decided whether A was listed twice (5 of 8 datasets)."""
    t, day = 1_717_200_000_000, 86_400_000

    def tags(*names):
        return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}

    events, names = [], [DS(f"hive,db.same_ms_{i}") for i in range(8)]
    for i, d in enumerate(names):
        key = {"name": f"db.same_ms_{i}"}
        events += [_dh_mcl(d, "datasetKey", t, "1", value=key),
                   _dh_mcl(d, "globalTags", t + 1000, "1", value=tags("A")),
                   _dh_mcl(d, "globalTags", t + day, "2", value=tags("A"), previous=("1", tags("A"))),
                   _dh_mcl(d, "datasetKey", t + day, "2", change="DELETE", previous=("1", key)),
                   _dh_mcl(d, "datasetKey", t + 2 * day, "1", value=key),
                   _dh_mcl(d, "globalTags", t + 2 * day + 1000, "1", value=tags("A")),
                   _dh_mcl(d, "globalTags", t + 2 * day + 3000, "3", value=tags("A", "B"), previous=("2", tags("A")))]
    with _store_of(events, tmp_path) as store:
        for d in names:
            rows = run_query(store, "entity-state", {"entity": d}).dicts()
            assert sorted((r["value"].value, r["set_at"].value) for r in rows if r["field"].value == "globalTags") == [
                ("urn:li:tag:A", "2024-06-03T00:00:01Z"), ("urn:li:tag:B", "2024-06-03T00:00:03Z")], d


def test_entity_state_says_when_a_change_revises_a_version_stamped_later(tmp_path):
    """ut20 #8: version 3 revises version 2 but is stamped 10 s before it. The state follows the
    timestamps (version 2's tags); the answer must say that the writer had replaced them."""
    t = 1_704_139_200_000
    d = DS("hive,db.skew")

    def tags(*names):
        return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}

    events = [_dh_mcl(d, "globalTags", t, "1", value=tags("T1")),
              _dh_mcl(d, "globalTags", t + 20_000, "2", value=tags("T1", "T2"), previous=("1", tags("T1"))),
              _dh_mcl(d, "globalTags", t + 10_000, "3", value=tags("T2", "T3"), previous=("2", tags("T1", "T2")))]
    with _store_of(events, tmp_path) as store:
        rows = run_query(store, "entity-state", {"entity": d})
        assert {r["value"].value for r in rows.dicts()} == {"urn:li:tag:T1", "urn:li:tag:T2"}
        assert any("2024-01-01T20:00:10Z (of globalTags) revises a version stamped 2024-01-01T20:00:20Z"
                   in n for n in rows.notes), rows.notes
        before = run_query(store, "entity-state", {"entity": d, "as_of": "2024-01-01T20:00:15Z"})
        assert not any("version chain" in n for n in before.notes), "version 2 is after as_of: no disagreement yet"


def test_entity_state_of_an_openmetadata_version_follows_the_version_chain(tmp_path):
    """ut41c #2: 0.4 -> 0.5 stamped a day before 0.3 -> 0.4 (a writer's clock behind). At version 0.5, and
    for the latest state, the description is 0.5's, not 0.4's; as of a time after both too (ut42b #3: as of
    now it was 0.4's); as of a time between them the timestamps decide which changes count, and the note
    says that the one 0.5 revises is not among them."""
    day = 1_772_409_600_000

    def described(n, ms, version, text):
        return _om_update(n, ms, version, updated=[{"name": "description", "oldValue": "x", "newValue": text}])

    events = [described(1, day, 0.2, "v2"), described(2, day + 86_400_000, 0.3, "v3"),
              described(3, day + 3 * 86_400_000, 0.4, "v4"), described(4, day + 2 * 86_400_000, 0.5, "v5")]
    with _store_of(events, tmp_path) as store:
        def state(**params):
            answer = run_query(store, "entity-state", {"entity": "svc.db.sch.t", **params})
            (row,) = [r for r in answer.dicts() if r["field"].value == "description"]
            return row["value"].value, row["set_in_version"].value, any("version chain" in n for n in answer.notes)

        assert state(version="0.5") == ("v5", "0.5", False)
        assert state(version="0.4") == ("v4", "0.4", False)
        assert state(version="0.2") == ("v2", "0.2", False)
        assert state() == ("v5", "0.5", False)
        # as of a time after both: what had happened by then, in version order
        assert state(as_of="2026-03-10") == state(as_of="now") == ("v5", "0.5", False)
        assert state(as_of="2026-03-10", version="0.5") == ("v5", "0.5", False)  # rv41 #5: no contradicting note
        assert state(as_of="2026-03-04T12:00:00Z") == ("v5", "0.5", True)


def test_a_same_version_change_stamped_earlier_still_follows_the_change_it_revises(tmp_path):
    """ut41d #2: 0.1 -> 0.2 (description B) at 10:00, then 0.2 -> 0.2 (B2) stamped 09:00: the latest state
    and version 0.2 said B, ordering the two changes of version 0.2 by time."""
    t, hour = 1_788_249_600_000, 3_600_000

    def described(n, ms, version, previous, text):
        event = _om_update(n, ms, version, updated=[{"name": "description", "oldValue": "x", "newValue": text}])
        event["previousVersion"] = event["changeDescription"]["previousVersion"] = previous
        return event

    events = [described(1, t + 2 * hour, 0.2, 0.1, "B"), described(2, t + hour, 0.2, 0.2, "B2")]
    with _store_of(events, tmp_path) as store:
        for params in ({}, {"version": "0.2"}):
            rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", **params}).dicts()
            assert [r["value"].value for r in rows if r["field"].value == "description"] == ["B2"], params
        rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", "as_of": t + 90 * 60_000}).dicts()
        assert [r["value"].value for r in rows if r["field"].value == "description"] == ["B2"]  # B not yet


def test_a_column_dropped_at_a_lower_version_stamped_later_does_not_hide_its_re_adding(tmp_path):
    """rv41 #4: 0.4 drops column c, 0.5 adds it back with a description but is stamped a day earlier: at
    version 0.5 (and for the latest state) the drop, stamped later, still hid the description."""
    day = 1_772_409_600_000
    column = lambda **more: json.dumps([{"name": "c", "dataType": "INT", **more}])
    events = [_om_update(1, day, 0.2, added=[{"name": "columns", "newValue": column()}]),
              _om_update(2, day + 3 * 86_400_000, 0.4, deleted=[{"name": "columns", "oldValue": column()}]),
              _om_update(3, day + 2 * 86_400_000, 0.5, added=[{"name": "columns", "newValue": column()},
                                                             {"name": "columns.c.description", "newValue": "back"}])]
    with _store_of(events, tmp_path) as store:
        for params in ({"version": "0.5"}, {}):
            rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", **params}).dicts()
            assert ("columns.c.description", "back") in {(r["field"].value, r["value"].value) for r in rows}, params
        rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", "version": "0.4"}).dicts()
        assert not [r for r in rows if r["field"].value.startswith("columns.c")]


def test_entity_state_after_a_column_type_change_shows_the_columns_not_the_aspect(tmp_path):
    """ut10a #15: a schemaMetadata that only changed a column's type showed the whole aspect as one more
    value beside its columns."""
    t, hour = 1_704_139_200_000, 3_600_000
    d = DS("hive,db.s")

    def schema(kind):
        return {"schemaName": "s", "fields": [{"fieldPath": "id", "nativeDataType": kind}]}

    events = [_dh_mcl(d, "schemaMetadata", t, "1", value=schema("int")),
              _dh_mcl(d, "schemaMetadata", t + hour, "2", value=schema("bigint"), previous=("1", schema("int")))]
    rows = run_query(_store_of(events, tmp_path), get_query("entity-state"), {"entity": d}).dicts()
    assert [(r["field"].value, r["value"].value) for r in rows] == [
        ("schemaMetadata", f"urn:li:schemaField:({d},id)")]


@pytest.fixture(scope="module")
def column_tags_store(tmp_path_factory):
    """A dataset's column PII as DataHub's UI (editableSchemaMetadata) and ingestion (schemaMetadata
    fields) write it: version 1 tags email; version 2 (with its previous value) adds Gold to email;
    version 3, without its previous value, is the whole aspect: only ssn is tagged."""
    t, hour = 1_704_139_200_000, 3_600_000
    d = DS("hive,db.people")

    def info(**columns):
        return {"editableSchemaFieldInfo": [
            {"fieldPath": c, "globalTags": {"tags": [{"tag": f"urn:li:tag:{x}"} for x in tags]}} for c, tags in columns.items()]}

    v1, v2 = info(email=["PII"]), info(email=["PII", "Gold"])
    events = [
        _dh_mcl(d, "editableSchemaMetadata", t, "1", value=v1),
        _dh_mcl(d, "editableSchemaMetadata", t + hour, "2", value=v2, previous=("1", v1)),
        {**_dh_mcl(d, "editableSchemaMetadata", t + 2 * hour, "3", value=info(ssn=["PII"])),
         "previousSystemMetadata": {"version": "2"}},
        _dh_mcl(d, "schemaMetadata", t, "1", value={"schemaName": "p", "fields": [
            {"fieldPath": "ssn", "nativeDataType": "string",
             "glossaryTerms": {"terms": [{"urn": "urn:li:glossaryTerm:SSN"}]}}]}),
    ]
    return _store_of(events, tmp_path_factory.mktemp("column-tags")), d


@pytest.mark.parametrize("as_of, want", [
    ("2024-01-01T20:30:00Z", {("editableSchemaMetadata.email.globalTags", "urn:li:tag:PII")}),
    # version 2 lists its change against version 1: PII stays
    ("2024-01-01T21:30:00Z", {("editableSchemaMetadata.email.globalTags", "urn:li:tag:PII"),
                              ("editableSchemaMetadata.email.globalTags", "urn:li:tag:Gold")}),
    # version 3 is the whole aspect: email has no tags any more
    ("2024-01-01T22:30:00Z", {("editableSchemaMetadata.ssn.globalTags", "urn:li:tag:PII")}),
])
def test_column_tags_of_a_datahub_dataset_are_in_its_state(column_tags_store, as_of, want):
    """ut10a #3: column tags and terms in editableSchemaMetadata and schemaMetadata were raw JSON only."""
    store, d = column_tags_store
    rows = run_query(store, get_query("entity-state"), {"entity": d, "as_of": as_of}).dicts()
    got = {(r["field"].value, r["value"].value) for r in rows if r["field"].value.endswith(("Tags", "Terms"))}
    assert got == want | {("schemaMetadata.ssn.glossaryTerms", "urn:li:glossaryTerm:SSN")}


def test_column_tags_of_a_datahub_dataset_are_tag_changes_and_audited(column_tags_store):
    store, d = column_tags_store
    rows = run_query(store, get_query("tag-changes"), {"tag": "urn:li:tag:PII"}).dicts()
    # version 3, the whole aspect, leaves email's PII out: a removal no change names (ut26 R1)
    assert [(r["time"].value, r["action"].value, r["field"].value) for r in rows] == [
        ("2024-01-01T20:00:00Z", "added", "editableSchemaMetadata.email.globalTags"),
        ("2024-01-01T22:00:00Z", "added", "editableSchemaMetadata.ssn.globalTags"),
        ("2024-01-01T22:00:00Z", "removed", "editableSchemaMetadata.email.globalTags")]
    audit = run_query(store, get_query("audit-sensitive-tags"), {}).dicts()
    assert {(r["action"].value, r["field"].value, r["tag_name"].value) for r in audit} >= {
        ("added", "editableSchemaMetadata.email.globalTags", "urn:li:tag:PII"),
        ("removed", "editableSchemaMetadata.email.globalTags", "urn:li:tag:PII")}
    terms = run_query(store, get_query("tag-changes"), {"tag": "urn:li:glossaryTerm:SSN"}).dicts()
    assert [r["field"].value for r in terms] == ["schemaMetadata.ssn.glossaryTerms"]


def test_who_changed_a_datahub_columns_tags_lists_the_tags_removed_and_added(column_tags_store, tmp_path):
    """ut40 #4: a change of a column's tags showed the aspect's kind of change and no values at all; its
    values are now the URNs it removed and added (JSON arrays), as OpenMetadata's column tag changes."""
    store, d = column_tags_store
    rows = run_query(store, get_query("who-changed"), {"entity": d, "field": "globalTags"}).dicts()

    def members(value):
        return None if value is None else sorted(json.loads(value.value))

    assert [(r["time"].value, r["field_name"].value, r["change"].value, members(r["old_value"]),
             members(r["new_value"])) for r in rows] == [
        ("2024-01-01T20:00:00Z", "editableSchemaMetadata.email.globalTags", "added", None, ["urn:li:tag:PII"]),
        ("2024-01-01T21:00:00Z", "editableSchemaMetadata.email.globalTags", "updated", None, ["urn:li:tag:Gold"]),
        ("2024-01-01T22:00:00Z", "editableSchemaMetadata.ssn.globalTags", "added", None, ["urn:li:tag:PII"])]
    t = 1_704_139_200_000
    before = {"editableSchemaFieldInfo": [{"fieldPath": "email", "globalTags": {"tags": [
        {"tag": "urn:li:tag:PII"}, {"tag": "urn:li:tag:Gold"}]}}]}
    # ut41d #5: by URN, not by the IRI made of it (%20 for the space)
    after = {"editableSchemaFieldInfo": [{"fieldPath": "email", "globalTags": {"tags": [{"tag": "urn:li:tag:My Tag%"}]}}]}
    removal = _store_of([_dh_mcl(d, "editableSchemaMetadata", t, "4", value=after, previous=("3", before))], tmp_path)
    rows = run_query(removal, get_query("who-changed"), {"entity": d, "field": "email.globalTags"}).dicts()
    assert [(r["change"].value, members(r["old_value"]), members(r["new_value"])) for r in rows] == [
        ("updated", ["urn:li:tag:Gold", "urn:li:tag:PII"], ["urn:li:tag:My Tag%"])]
    # an aspect's own change keeps its values: the aspect's JSON
    rows = run_query(removal, get_query("who-changed"), {"entity": d, "field": "editableSchemaMetadata"}).dicts()
    assert [json.loads(r["new_value"].value) for r in rows] == [after]


@pytest.mark.parametrize("restored_later, want", [
    (False, [("2024-03-05T00:53:20Z", "2024-03-05T00:53:20Z"), ("2024-03-05T00:53:20Z", None)]),
    (True, [("2024-03-05T00:53:20Z", "2024-03-05T00:53:20Z"), ("2024-03-05T00:53:20Z", "2024-03-06T04:40:00Z")]),
])
def test_two_soft_deletes_in_one_millisecond_are_two_rows_each_with_its_restore(tmp_path, restored_later, want):
    """ut26 R6: delete (0.2), restore (0.3) and delete (0.4) of one table in one millisecond were one row,
    restored by 0.3, although the table stayed deleted after it."""
    t = 1_709_600_000_000

    def event(n, kind, ms, version, deleted):
        flag = [{"name": "deleted", "oldValue": not deleted, "newValue": deleted}]
        return {**_om_update(n, ms, version, updated=flag), "eventType": kind}

    events = [event(1, "entitySoftDeleted", t, 0.2, True), event(2, "entityRestored", t, 0.3, False),
              event(3, "entitySoftDeleted", t, 0.4, True)]
    if restored_later:
        events.append(event(4, "entityRestored", t + 100_000_000, 0.5, False))
    rows = run_query(_store_of(events, tmp_path), get_query("deleted-entities"), {}).dicts()
    assert [(r["time"].value, r["restored_at"] and r["restored_at"].value) for r in rows] == want


def _dh_tags(names):
    return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}


@pytest.mark.parametrize("case, events, want", [
    # ut26 R1: the second globalTags, sent without its previous value, is the whole list: PII is gone
    ("whole list", [("1", ["PII"], None, "UPSERT"), ("2", ["Gold"], None, "UPSERT")],
     [(0, "added"), (1, "removed")]),
    # a DELETE of the aspect without its previous value takes every tag
    ("delete", [("1", ["PII"], None, "UPSERT"), ("2", None, None, "DELETE")], [(0, "added"), (1, "removed")]),
    # an earlier removal named it: the whole list that follows removes nothing more
    ("named before", [("1", ["PII"], None, "UPSERT"), ("2", [], ("1", ["PII"]), "UPSERT"), ("3", ["Gold"], None, "UPSERT")],
     [(0, "added"), (1, "removed")]),
    # listed again by each whole list: no removal until the one that leaves it out
    ("restated", [("1", ["PII"], None, "UPSERT"), ("2", ["PII", "Gold"], None, "UPSERT"),
                  ("3", ["Gold"], ("2", ["PII", "Gold"]), "UPSERT"), ("4", ["Gold"], None, "UPSERT")],
     [(0, "added"), (1, "added"), (2, "removed")]),
    # kept by a change with its previous value, then left out by a whole list
    ("kept", [("1", ["PII"], None, "UPSERT"), ("2", ["PII", "Gold"], ("1", ["PII"]), "UPSERT"),
              ("3", ["Gold"], None, "UPSERT")],
     [(0, "added"), (2, "removed")]),
    # a hard delete between ended the tag with the entity: the re-created entity's list removes nothing
    ("hard delete", [("1", ["PII"], None, "UPSERT"), ("2", "datasetKey", None, "DELETE"), ("1", ["Gold"], None, "UPSERT")],
     [(0, "added")]),
])
def test_a_tag_a_whole_datahub_list_leaves_out_is_a_removal(tmp_path, case, events, want):
    """ut26 R1: a DataHub globalTags aspect sent without its previous value states the whole list, so a
    tag it leaves out is gone (entity-state); tag-changes and audit-sensitive-tags list that removal, by
    the user of the event that left it out, once."""
    t, hour = 1_704_139_200_000, 3_600_000
    d = DS("hive,db.r1")
    lines = []
    for i, (version, tags, previous, change) in enumerate(events):
        if tags == "datasetKey":
            line = _dh_mcl(d, "datasetKey", t + i * hour, version, change=change, previous=("1", {"name": "r1"}))
        else:
            line = _dh_mcl(d, "globalTags", t + i * hour, version, value=None if tags is None else _dh_tags(tags),
                           previous=previous and (previous[0], _dh_tags(previous[1])), change=change)
        line["created"]["actor"] = f"urn:li:corpuser:u{i}"
        lines.append(line)
    store = _store_of(lines, tmp_path)
    expected = [(t + i * hour, action, f"urn:li:corpuser:u{i}") for i, action in want]
    rows = run_query(store, get_query("tag-changes"), {"tag": "urn:li:tag:PII"}).dicts()
    assert [(rfc3339_to_ms(r["time"].value), r["action"].value, r["user"].value) for r in rows] == expected
    audit = run_query(store, get_query("audit-sensitive-tags"), {}).dicts()
    assert [(rfc3339_to_ms(r["time"].value), r["action"].value, r["user"].value) for r in audit] == expected


@pytest.mark.parametrize("as_of, want", [
    ("2024-01-01T19:00:00Z", []),
    ("2024-01-01T21:30:00Z", [("urn:li:chart:(looker,c1)", "1", "urn:li:corpuser:carol"),
                              ("urn:li:dashboard:(looker,d1)", "1", None)]),
    # the chart's second chartInfo reads another dataset: the dashboard still reads the dataset
    ("2024-01-01T22:30:00Z", [("urn:li:dashboard:(looker,d1)", "1", None)]),
])
def test_impact_of_a_dataset_reaches_the_charts_and_dashboards_that_read_it(tmp_path, as_of, want):
    """ut10a #10: chartInfo / dashboardInfo inputs were JSON only, so impact of a dataset named no dashboard."""
    t, hour = 1_704_139_200_000, 3_600_000
    ds, other = DS("hive,db.sessions"), DS("hive,db.other")
    chart, dash = "urn:li:chart:(looker,c1)", "urn:li:dashboard:(looker,d1)"

    def mcl(urn, kind, aspect, ms, version, **kw):
        return {**_dh_mcl(urn, aspect, ms, version, **kw), "entityType": kind}

    c1 = {"title": "c", "inputs": [{"string": ds}]}
    events = [
        mcl(chart, "chart", "chartInfo", t, "1", value=c1),
        mcl(chart, "chart", "ownership", t, "1", value={"owners": [{"owner": "urn:li:corpuser:carol"}]}),
        mcl(dash, "dashboard", "dashboardInfo", t + hour, "1",
            value={"chartEdges": [{"destinationUrn": chart}], "datasetEdges": [{"destinationUrn": ds}]}),
        mcl(chart, "chart", "chartInfo", t + 2 * hour, "2", value={"title": "c", "inputEdges": [{"destinationUrn": other}]},
            previous=("1", c1)),
    ]
    rows = run_query(_store_of(events, tmp_path), get_query("impact"), {"entity": ds, "as_of": as_of}).dicts()
    assert [(r["asset_name"].value, r["hops"].value, r["owners"] and r["owners"].value) for r in rows] == want


def test_a_status_delete_after_a_soft_delete_restores_but_not_inside_a_hard_delete(tmp_path):
    """ut10a #14: DataHub undoes a soft delete by deleting the status aspect (its StatusChangeEventGenerator
    emits REINSTATE), which was not a restore; a hard delete deletes the status aspect too, in its own
    millisecond, and that is none."""
    t, hour = 1_704_139_200_000, 3_600_000
    removed = {"removed": True}
    # ut13 #4: a hard delete deletes the aspects one by one, each with its own clock reading
    status_then_key = {"back": None, "gone": 0, "before": 3, "after": -4}  # ms from the status DELETE to the key's
    events = []
    for name, key_after in status_then_key.items():
        ds = DS(f"hive,db.{name}")
        events += [_dh_mcl(ds, "status", t, "1", value=removed),
                   _dh_mcl(ds, "status", t + hour, "2", change="DELETE", previous=("1", removed))]
        if key_after is not None:
            events.append(_dh_mcl(ds, "datasetKey", t + hour + key_after, "2", change="DELETE", previous=("1", {"name": name})))
    rows = run_query(_store_of(events, tmp_path), get_query("deleted-entities"), {}).dicts()
    got = {(r["entity_name"].value, r["deletion"].value): r["restored_at"] and r["restored_at"].value for r in rows}
    assert got == {(DS("hive,db.back"), "SoftDeleted"): "2024-01-01T21:00:00Z",
                   **{(DS(f"hive,db.{n}"), kind): None for n in ("gone", "before", "after")
                      for kind in ("SoftDeleted", "HardDeleted")}}


def test_the_corpus_owner_change_sent_with_its_previous_value_states_the_owner_it_keeps(store):
    """ut16 #1: DataHub's own sample (ownership {jdoe, datahub} -> {datahub}) left no owner at all."""
    rows = run_query(store, get_query("entity-state"),
                     {"entity": "urn:li:dataset:(urn:li:dataPlatform:hdfs,SampleHdfsDataset,PROD)"}).dicts()
    assert [r["value"].value for r in rows if r["field"].value == "ownership"] == ["urn:li:corpuser:datahub"]


def _tags_mcl(ms: int, version: str, tags: list[str], previous: tuple[str, list[str]] | None = None) -> dict:
    def value(names):
        return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}
    return _dh_mcl(DS("hive,db.m"), "globalTags", ms, version, value=value(tags),
                   previous=(previous[0], value(previous[1])) if previous else None)


def _unversioned(mcl: dict) -> dict:
    mcl["systemMetadata"].pop("version")
    mcl.pop("previousSystemMetadata", None)
    return mcl


@pytest.mark.parametrize("events, want", [
    # a log that starts with an MCL sent with its previous value: every member it lists
    ([_tags_mcl(2000, "7", ["PII", "Gold", "Tier1"], ("6", ["PII", "Gold"]))],
     {("Gold", 2000), ("PII", 2000), ("Tier1", 2000)}),
    # a whole log: a member keeps the time of the change that added it
    ([_tags_mcl(1000, "1", ["PII"]), _tags_mcl(2000, "2", ["PII", "Gold"], ("1", ["PII"])),
      _tags_mcl(3000, "3", ["PII", "Gold"], ("2", ["PII", "Gold"]))],
     {("Gold", 2000), ("PII", 1000)}),
    # kept twice, the first statement is the row
    ([_tags_mcl(2000, "7", ["PII"], ("6", ["PII"])), _tags_mcl(3000, "8", ["PII", "Gold"], ("7", ["PII"]))],
     {("Gold", 3000), ("PII", 2000)}),
    # kept, then removed, then added again
    ([_tags_mcl(2000, "7", ["PII", "Gold"], ("6", ["PII", "Gold"])), _tags_mcl(3000, "8", ["Gold"], ("7", ["PII", "Gold"])),
      _tags_mcl(4000, "9", ["PII", "Gold"], ("8", ["Gold"]))],
     {("Gold", 2000), ("PII", 4000)}),
    # an empty list is no member, and not its JSON either (ut16 #5)
    ([_tags_mcl(2000, "7", ["PII"], ("6", ["PII"])), _tags_mcl(3000, "8", [], ("7", ["PII"]))], set()),
    # lines missing (ut17 #1): added, taken out, put back by a line the log lacks, kept: the latest says it is there
    ([_tags_mcl(1000, "1", ["Tier1"]), {**_tags_mcl(2000, "2", [], ("1", ["Tier1"])), "changeType": "DELETE"},
      _tags_mcl(4000, "4", ["Tier1", "Legacy"], ("3", ["Tier1"]))],
     {("Legacy", 4000), ("Tier1", 4000)}),
    # ... the same without aspect versions (older DataHub): the earlier changes tell
    ([_unversioned(_tags_mcl(1000, "1", ["Tier1"])),
      _unversioned({**_tags_mcl(2000, "2", [], ("1", ["Tier1"])), "changeType": "DELETE"}),
      _unversioned(_tags_mcl(4000, "4", ["Tier1", "Legacy"], ("3", ["Tier1"]))),
      _unversioned(_tags_mcl(5000, "5", ["Tier1", "Legacy"], ("4", ["Tier1", "Legacy"])))],
     {("Legacy", 4000), ("Tier1", 4000)}),
    # lines missing (ut17 #2): an MCL is the whole aspect, with or without its previous value
    ([_tags_mcl(1000, "1", ["Carol"]), _tags_mcl(3000, "3", ["Bob", "Frank"], ("2", ["Bob"]))],
     {("Bob", 3000), ("Frank", 3000)}),
])
def test_a_datahub_mcl_with_its_previous_value_keeps_the_members_it_restates(tmp_path, events, want):
    t0 = 1_704_067_200_000
    for e in events:
        e["created"]["time"] += t0
    rows = run_query(_store_of(events, tmp_path), get_query("entity-state"), {"entity": DS("hive,db.m")}).dicts()
    got = {(r["value"].value.removeprefix("urn:li:tag:"), rfc3339_to_ms(r["set_at"].value) - t0) for r in rows}
    assert got == want and all(r["field"].value == "globalTags" for r in rows)


def _tag_values(*names: str) -> dict:
    return {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}


def test_a_kept_member_after_a_removal_in_its_own_millisecond_stays(tmp_path):
    """rv35 #1: {A}, then {A} -> {} and {A} -> {A, B} in one millisecond, without aspect versions (so
    ordered by IRI): with the removal first, A was lost (the add's row was hidden by the removal, the kept
    A by the add); with the removal last, nothing is right. Eight datasets, so that both orders occur."""
    t0 = 1_704_067_200_000
    events = []
    for i in range(8):
        ds = DS(f"hive,db.m{i}")
        add, gap, keep = (_unversioned(_dh_mcl(ds, "globalTags", t0 + ms, "1", value=v, previous=p))
                          for ms, v, p in ((1000, _tag_values("A"), None), (2000, _tag_values(), ("1", _tag_values("A"))),
                                           (2000, _tag_values("A", "B"), ("1", _tag_values("A")))))
        gap["created"]["actor"] = "urn:li:corpuser:gap"
        events += [add, gap, keep]
    store = _store_of(events, tmp_path)
    orders = set()
    for i in range(8):
        ds = DS(f"hive,db.m{i}")
        history = run_query(store, get_query("entity-history"), {"entity": ds}).dicts()
        (gap,) = [r["event"].value for r in history if r["user"].value == "urn:li:corpuser:gap"]
        (keep,) = [r["event"].value for r in history if r["user"].value != "urn:li:corpuser:gap"
                   and rfc3339_to_ms(r["time"].value) == t0 + 2000]
        orders.add(gap < keep)
        rows = run_query(store, get_query("entity-state"), {"entity": ds}).dicts()
        want = {("urn:li:tag:A", t0 + 2000), ("urn:li:tag:B", t0 + 2000)} if gap < keep else set()
        assert {(r["value"].value, rfc3339_to_ms(r["set_at"].value)) for r in rows} == want, (i, gap < keep)
    assert orders == {True, False}


@pytest.mark.parametrize("versions, want", [
    # ut20 #1: a log cut before version 1, versions 2 and 3 in one millisecond: keep was lost on some datasets
    ([("2", ("1", ["keep", "gone"]), ["keep", "old"]), ("3", ("2", ["keep", "old"]), ["keep", "new"])], ["keep", "new"]),
    # ut20 #2: versions 1 and 3 in one millisecond, the line of 2 missing: 1 was current on some datasets
    ([("1", None, ["old"]), ("3", ("2", ["gone"]), ["new"])], ["new"]),
])
def test_versions_in_one_millisecond_with_a_line_missing_order_by_their_numbers(tmp_path, versions, want):
    """A missing line breaks the chain of aspect versions; DataHub numbers them upwards, so the higher
    version is the later one, in entity-state and in impact's owners alike (six datasets: an order by
    IRI gets some of them wrong)."""
    t = 1_717_200_000_000
    src = DS("hive,db.src")
    owners = lambda names: {"owners": [{"owner": f"urn:li:corpuser:{n}", "type": "DATAOWNER"} for n in names]}
    events, datasets = [], [DS(f"hive,db.d{i}") for i in range(6)]
    for ds in datasets:
        events.append(_dh_mcl(ds, "upstreamLineage", t, "1", value={"upstreams": [{"dataset": src, "type": "TRANSFORMED"}]}))
        events += [_dh_mcl(ds, "ownership", t + 1000, v, value=owners(new),
                           previous=(prev[0], owners(prev[1])) if prev else None) for v, prev, new in versions]
    store = _store_of(events, tmp_path)
    expected = [f"urn:li:corpuser:{n}" for n in want]
    for ds in datasets:
        state = run_query(store, "entity-state", {"entity": ds}).python()
        assert sorted(r["value"] for r in state if r["field"] == "ownership") == expected, ds
    assert {r["asset"]: r["owners"] for r in run_query(store, "impact", {"entity": src}).python()} == \
        {ds: ", ".join(expected) for ds in datasets}


def test_a_kept_member_shows_when_the_version_it_revises_lies_after_as_of(tmp_path):
    """rv35 #4: version 1 {A} at 5 s, version 2 {A} -> {A, B} at 2 s (a writer's clock ahead): at 3 s only
    version 2 is in scope and it states A and B; A was hidden by version 1's row, which is not."""
    t0 = 1_704_067_200_000
    ds = DS("hive,db.m")
    events = [_dh_mcl(ds, "globalTags", t0 + 5000, "1", value=_tag_values("A")),
              _dh_mcl(ds, "globalTags", t0 + 2000, "2", value=_tag_values("A", "B"), previous=("1", _tag_values("A")))]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("entity-state"), {"entity": ds, "as_of": str(t0 + 3000)}).dicts()
    assert {(r["value"].value.removeprefix("urn:li:tag:"), rfc3339_to_ms(r["set_at"].value) - t0)
            for r in rows} == {("A", 2000), ("B", 2000)}


def test_impact_owners_follow_the_whole_ownership_aspect(tmp_path):
    """ut17 #3: an ownership MCL without its previous value (UPSERT, DELETE) left the owners it no longer
    listed in impact (entity-state dropped them); and one with it, where a line is missing (#2)."""
    t = 1_717_200_000_000
    src, dst = DS("hive,db.src"), DS("hive,db.dst")
    owners = lambda *names: {"owners": [{"owner": f"urn:li:corpuser:{n}", "type": "DATAOWNER"} for n in names]}
    events = [_dh_mcl(dst, "upstreamLineage", t, "1", value={"upstreams": [{"dataset": src, "type": "TRANSFORMED"}]}),
              _dh_mcl(dst, "ownership", t + 1000, "1", value=owners("carol")),
              _dh_mcl(dst, "ownership", t + 2000, "2", value=owners("bob")),
              _dh_mcl(dst, "ownership", t + 4000, "4", value=owners("bob", "frank"), previous=("3", owners("bob", "dave"))),
              _dh_mcl(dst, "ownership", t + 5000, "5", change="DELETE")]
    store = _store_of(events, tmp_path)
    want = {t + 1500: "urn:li:corpuser:carol", t + 2500: "urn:li:corpuser:bob",
            t + 4500: "urn:li:corpuser:bob, urn:li:corpuser:frank", t + 5500: ""}
    for as_of, owner_list in want.items():
        (row,) = run_query(store, get_query("impact"), {"entity": src, "as_of": str(as_of)}).dicts()
        assert (row["owners"].value if row["owners"] else "") == owner_list, as_of


def _owner_ece(ds: str, ms: int, operation: str, owner: str, owner_type: str | None, *, category="OWNERSHIP") -> dict:
    owner = owner if owner.startswith("urn:") else f"urn:li:corpuser:{owner}"
    params = {"ownerUrn": owner}
    if owner_type:
        params |= {"ownerType": owner_type, "ownerTypeUrn": f"urn:li:ownershipType:__system__{owner_type.lower()}"}
    return {"entityType": "dataset", "entityUrn": ds, "category": category, "operation": operation,
            "modifier": owner_type if operation == "MODIFY" else owner,
            "auditStamp": {"time": ms, "actor": "urn:li:corpuser:admin"}, "version": 0,
            **({"parameters": params} if owner_type or operation != "MODIFY" else {})}


def test_a_datahub_owner_removed_as_one_ownership_type_keeps_the_others(tmp_path):
    """ut42f #1: DataHub keys an owner by person and ownership type; a change event removing alice as
    technical owner ended her ownership in impact and entity-state although she stayed business owner.
    A removal ends an addition of the same owner when their types match, when either names none, when an
    OWNERSHIP MODIFY of the owner to the removed type lies between, or when nothing else gave the owner the
    removed type (a type change sent as an MCL alone, as the generator's logs have)."""
    t = 1_717_200_000_000
    src, dst = DS("hive,db.src"), DS("hive,db.dst")
    T, B = "TECHNICAL_OWNER", "BUSINESS_OWNER"
    events = [_dh_mcl(dst, "upstreamLineage", t, "1", value={"upstreams": [{"dataset": src, "type": "TRANSFORMED"}]}),
              # alice: technical, then business too, then no longer technical: business owner
              _owner_ece(dst, t + 1000, "ADD", "alice", T, category="OWNER"), _owner_ece(dst, t + 2000, "ADD", "alice", B),
              _owner_ece(dst, t + 3000, "REMOVE", "alice", T),
              # bob: technical, then removed as technical: gone
              _owner_ece(dst, t + 1000, "ADD", "bob", T), _owner_ece(dst, t + 3000, "REMOVE", "bob", T),
              # carol: technical, then business too, then no longer business: technical owner
              _owner_ece(dst, t + 1000, "ADD", "carol", T), _owner_ece(dst, t + 2000, "ADD", "carol", B),
              _owner_ece(dst, t + 3000, "REMOVE", "carol", B),
              # dave: technical, changed to business, removed as business: gone
              _owner_ece(dst, t + 1000, "ADD", "dave", T), _owner_ece(dst, t + 2000, "MODIFY", "dave", B),
              _owner_ece(dst, t + 3000, "REMOVE", "dave", B),
              # erin: technical, removed as business owner with nothing else making her one: her type changed
              # where the log has no change event (the ownership MCL alone): gone
              _owner_ece(dst, t + 1000, "ADD", "erin", T), _owner_ece(dst, t + 3000, "REMOVE", "erin", B),
              # ivan: technical, business too, business removed, then removed as business again: his type changed
              # where the log has no change event; the first business addition, ended, says nothing (rv43 #2)
              _owner_ece(dst, t + 1000, "ADD", "ivan", T), _owner_ece(dst, t + 1500, "ADD", "ivan", B),
              _owner_ece(dst, t + 2000, "REMOVE", "ivan", B), _owner_ece(dst, t + 3000, "REMOVE", "ivan", B),
              # hana: technical and business; losing technical, DataHub's change events say MODIFY to business
              # and REMOVE business in one millisecond (it pairs owners by URN): one ownership left (ut43a #2)
              _owner_ece(dst, t + 1000, "ADD", "hana", T), _owner_ece(dst, t + 2000, "ADD", "hana", B),
              _owner_ece(dst, t + 3000, "MODIFY", "hana", B), _owner_ece(dst, t + 3000, "REMOVE", "hana", B),
              # gina: technical, changed to business, technical again, removed as business: technical owner
              _owner_ece(dst, t + 500, "ADD", "gina", T), _owner_ece(dst, t + 1000, "MODIFY", "gina", B),
              _owner_ece(dst, t + 2000, "ADD", "gina", T), _owner_ece(dst, t + 3000, "REMOVE", "gina", B),
              # the same for groups whose URNs the IRI escapes (a space, a quote): matched in the JSON (rv43 #1)
              *[e for g in ('urn:li:corpGroup:data eng', 'urn:li:corpGroup:o"k\\x')
                for e in (_owner_ece(dst, t + 500, "ADD", g, T), _owner_ece(dst, t + 1000, "MODIFY", g, B),
                          _owner_ece(dst, t + 2000, "ADD", g, T), _owner_ece(dst, t + 3000, "REMOVE", g, B))],
              # frank: added with no type named; any removal of his ends him
              _owner_ece(dst, t + 1000, "ADD", "frank", None), _owner_ece(dst, t + 3000, "REMOVE", "frank", T)]
    store = _store_of(events, tmp_path)
    groups = ["urn:li:corpGroup:data%20eng", "urn:li:corpGroup:o%22k%5Cx"]  # named by their IRIs (docs/model.md S(x))
    for as_of, want in {t + 2500: ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "hana", "ivan"],
                        t + 3500: ["alice", "carol", "gina", "hana"]}.items():
        (row,) = run_query(store, get_query("impact"), {"entity": src, "as_of": str(as_of)}).dicts()
        assert row["owners"].value == ", ".join(sorted(groups + [f"urn:li:corpuser:{n}" for n in want])), as_of
        state = run_query(store, get_query("entity-state"), {"entity": dst, "as_of": str(as_of)}).dicts()
        owners = {r["value"].value.removeprefix("urn:li:corpuser:") for r in state if r["field"].value == "OWNERSHIP"}
        assert sorted(owners) == sorted(groups + want), as_of
    # who still owns it as what: alice's row is her business ownership, carol's her technical one
    state = run_query(store, get_query("entity-state"), {"entity": dst}).dicts()
    assert sorted((r["value"].value.removeprefix("urn:li:corpuser:"), rfc3339_to_ms(r["set_at"].value) - t)
                  for r in state if r["field"].value == "OWNERSHIP") == [("alice", 2000), ("carol", 1000), ("gina", 2000), ("hana", 1000),
                                                              (groups[0], 2000), (groups[1], 2000)]



def test_a_change_event_add_and_remove_in_one_millisecond_come_with_a_note(tmp_path):
    """ut43a #3: DataHub change events carry no version; a TAG ADD and a TAG REMOVE of one tag in one
    millisecond have no order, and the state showed the tag on some datasets and not on others (by IRI)
    with no word on it. The answers stay, with a note naming the tie."""
    t = 1_709_546_400_000
    tag = lambda ds, ms, op: {"entityType": "dataset", "entityUrn": ds, "category": "TAG", "operation": op,
                              "modifier": "urn:li:tag:PII", "auditStamp": {"time": ms, "actor": "urn:li:corpuser:admin"},
                              "parameters": {"tagUrn": "urn:li:tag:PII"}}
    tied, ordered, settled, typed = DS("hive,db.tied"), DS("hive,db.ordered"), DS("hive,db.settled"), DS("hive,db.typed")
    stated = DS("hive,db.stated")
    pii = {"tags": [{"tag": "urn:li:tag:PII"}]}
    embedded = _store_of([tag(tied, t, "ADD"), tag(tied, t, "REMOVE"), tag(ordered, t, "ADD"), tag(ordered, t + 1, "REMOVE"),
                          # rv43 #3: a tie that a later change settles, and owners of two types (two ownerships)
                          tag(settled, t, "ADD"), tag(settled, t, "REMOVE"), tag(settled, t + 5, "ADD"),
                          _owner_ece(typed, t, "ADD", "alice", "BUSINESS_OWNER"),
                          _owner_ece(typed, t, "REMOVE", "alice", "TECHNICAL_OWNER"),
                          # rv49 LK11: an MCL adding the tag in that millisecond is the aspect after it, no tie
                          tag(stated, t, "REMOVE"), _dh_mcl(stated, "globalTags", t, "2", value=pii, previous=("1", {"tags": []}))],
                         tmp_path)
    want = ("change events in one millisecond (2024-03-04T10:00:00.000Z) add and remove urn:li:tag:PII: DataHub "
            "gives them no order, so which came last is not known (taken by IRI)")
    from changeprov.sparql.server import oxigraph_server
    with oxigraph_server(tmp_path / "served") as url:
        remote = open_store("remote", endpoint=url)
        remote.load_ntriples((tmp_path / "x.nt").open("rb"))
        rdflib_store = open_store("rdflib")
        rdflib_store.load_ntriples((tmp_path / "x.nt").open("rb"))
        for store in (embedded, remote, rdflib_store):
            rows = run_query(store, get_query("entity-state"), {"entity": tied})
            assert [n for n in rows.notes if n.startswith("change events in one")] == [want + "; `entity-history` lists both"]
            for entity in (ordered, settled, typed, stated):
                assert not [n for n in run_query(store, get_query("entity-state"), {"entity": entity}).notes
                            if "one millisecond" in n], entity
            assert [n for n in run_query(store, get_query("entity-state"), {"entity": settled, "as_of": str(t + 1)}).notes
                    if "one millisecond" in n]
            # before the tie: no note
            assert not [n for n in run_query(store, get_query("entity-state"), {"entity": tied, "as_of": str(t - 1)}).notes
                        if "one millisecond" in n]
            if store.kind == "rdflib":  # its engine fails on tag-changes itself (docs/library.md)
                continue
            notes = run_query(store, get_query("tag-changes"), {"tag": "urn:li:tag:PII"}).notes
            assert notes == [f"{want} on {tied}"], store.kind

def test_an_ownership_mcl_states_the_owners_after_a_change_event_of_its_millisecond(tmp_path):
    """ut43a #1: alice technical and business owner (ownership MCL), then no longer technical: the MCL of
    that change still lists her, and the change event of the same millisecond removing her as technical
    owner emptied impact's owners (by IRI order). The MCL is the aspect after the change."""
    t = 1_717_200_000_000
    src, dst = DS("hive,db.src"), DS("hive,db.dst")
    owner = lambda kind: {"owner": "urn:li:corpuser:alice", "type": kind,
                          "typeUrn": f"urn:li:ownershipType:__system__{kind.lower()}"}
    both = {"owners": [owner("TECHNICAL_OWNER"), owner("BUSINESS_OWNER")]}
    events = [_dh_mcl(dst, "upstreamLineage", t, "1", value={"upstreams": [{"dataset": src, "type": "TRANSFORMED"}]}),
              _dh_mcl(dst, "ownership", t + 1000, "2", value=both),
              _dh_mcl(dst, "ownership", t + 2000, "3", value={"owners": [owner("BUSINESS_OWNER")]}, previous=("2", both)),
              _owner_ece(dst, t + 2000, "REMOVE", "alice", "TECHNICAL_OWNER")]
    for n in range(8):  # IRIs differ with the actor: each order of the two IRIs
        events[-1]["auditStamp"]["actor"] = f"urn:li:corpuser:admin{n}"
        store = _store_of(events, tmp_path / str(n))
        (row,) = run_query(store, get_query("impact"), {"entity": src}).dicts()
        assert row["owners"] and row["owners"].value == "urn:li:corpuser:alice", n


@pytest.mark.parametrize("with_previous", [True, False])
def test_impact_owners_of_an_ownership_revision_in_its_own_millisecond(tmp_path, with_previous):
    """rv35 #3: version 2 of the ownership aspect ({x} -> {y}) in version 1's millisecond left x an owner in
    impact (entity-state said y): impact's removal checks wanted a strictly later time."""
    t = 1_717_200_000_000
    src, dst = DS("hive,db.src"), DS("hive,db.dst")
    owners = lambda *names: {"owners": [{"owner": f"urn:li:corpuser:{n}", "type": "DATAOWNER"} for n in names]}
    events = [_dh_mcl(dst, "upstreamLineage", t, "1", value={"upstreams": [{"dataset": src, "type": "TRANSFORMED"}]}),
              _dh_mcl(dst, "ownership", t + 1000, "1", value=owners("x")),
              _dh_mcl(dst, "ownership", t + 1000, "2", value=owners("y"),
                      previous=("1", owners("x")) if with_previous else None)]
    store = _store_of(events, tmp_path)
    (row,) = run_query(store, get_query("impact"), {"entity": src}).dicts()
    state = run_query(store, get_query("entity-state"), {"entity": dst}).dicts()
    assert row["owners"].value == "urn:li:corpuser:y"
    assert [r["value"].value for r in state if r["field"].value == "ownership"] == ["urn:li:corpuser:y"]


def test_a_job_io_mcl_with_its_previous_value_keeps_the_datasets_it_restates(tmp_path):
    """ut16 #1, for a job's lists: job-io and the jobs=true walks read them."""
    job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,etl,PROD),load)"
    value = {"inputDatasets": [DS("hive,db.a"), DS("hive,db.b")], "outputDatasets": [DS("hive,db.c")]}
    mcl = {**_dh_mcl(job, "dataJobInputOutput", 1_704_067_200_000, "5", value=value,
                     previous=("4", {**value, "inputDatasets": [DS("hive,db.a")]})), "entityType": "dataJob"}
    # ... and one sent before it that the log lacks the line between: the later one is the whole aspect
    older = {**_dh_mcl(job, "dataJobInputOutput", 1_704_000_000_000, "1",
                       value={"inputDatasets": [DS("hive,db.gone")], "outputDatasets": [DS("hive,db.c")]}), "entityType": "dataJob"}
    rows = run_query(_store_of([older, mcl], tmp_path), get_query("job-io"), {"job": job}).dicts()
    assert {(r["role"].value, r["dataset_name"].value) for r in rows} == {
        ("input", DS("hive,db.a")), ("input", DS("hive,db.b")), ("output", DS("hive,db.c"))}


def test_entity_state_of_an_openmetadata_entity_whose_log_starts_later_says_so(tmp_path):
    """ut17 #4: an OpenMetadata log cut after the creation answered its one change's field and nothing
    else, silently (its events list changes, not whole lists)."""
    update = _om_update(1, 1_704_067_200_000, 0.3, added=[{"name": "description", "newValue": "x"}])
    created = {**_om_update(0, 1_704_060_000_000, 0.1), "eventType": "entityCreated"}
    created.pop("changeDescription", None)
    for events, noted in (([update], True), ([created, update], False)):
        rows = run_query(_store_of(events, tmp_path / str(len(events))), get_query("entity-state"),
                         {"entity": update["entityFullyQualifiedName"]})
        assert rows.rows and any("no creation event" in n for n in rows.notes) == noted
    # ut44b #8: a creation event without its entity is no better: what it was created with is unknown
    bare = "the creation event of this OpenMetadata entity carries no entity (no `entity` field)"
    with_entity = {**created, "id": "c-2", "entity": {"id": "t-1", "tags": []}}
    for name, events, noted in (("bare", [created, update], True), ("whole", [with_entity, update], False)):
        rows = run_query(_store_of(events, tmp_path / name), get_query("entity-state"),
                         {"entity": update["entityFullyQualifiedName"]})
        assert rows.rows and any(n.startswith(bare) for n in rows.notes) == noted, rows.notes


def test_a_datahub_user_is_named_by_the_urn_as_given_not_its_escaped_iri(tmp_path):
    """ut14 #8: an actor URN with a space was shown as its agent IRI (urn:li:corpuser:b%20ob), which
    neither DataHub nor changes-by-user's readers would recognise."""
    t, who = 1_704_139_200_000, "urn:li:corpuser:b ob"
    ds = DS("hive,db.t")
    mcl = {**_dh_mcl(ds, "globalTags", t, "1", value={"tags": [{"tag": "urn:li:tag:PII"}]}),
           "created": {"time": t, "actor": who}}
    ece = {"entityUrn": ds, "entityType": "dataset", "category": "TAG", "operation": "ADD",
           "modifier": "urn:li:tag:Gold", "auditStamp": {"time": t + 1000, "actor": who}, "version": 0}
    store = _store_of([mcl, ece], tmp_path)
    for name, params in (("who-changed", {"entity": ds}), ("entity-history", {"entity": ds}),
                         ("tag-changes", {"tag": "urn:li:tag:Gold"})):
        rows = run_query(store, get_query(name), params).dicts()
        assert rows and {r["user"].value for r in rows} == {who}, name
    assert len(run_query(store, get_query("changes-by-user"), {"user": who}).dicts()) == 2


def test_deleted_entities_sees_restores_in_the_same_millisecond_and_re_creation(tmp_path):
    """A user's test: a restore in the delete's millisecond was not seen (it has the higher version),
    and a DataHub dataset re-created after a hard delete (same URN, live again) showed as never restored."""
    t = 1_704_139_200_000
    same, dh, both = (DS(f"hive,db.{name}") for name in ("same", "recreated", "tie"))
    events = [
        # OpenMetadata: soft delete and restore in one millisecond (versions 0.2, 0.3); one restored
        # in the same millisecond but listed with a lower version than its delete is not after it
        _om_lifecycle(1, "entityRestored", "a", t, 0.2, 0.3),
        _om_lifecycle(2, "entitySoftDeleted", "a", t, 0.1, 0.2),
        _om_lifecycle(3, "entitySoftDeleted", "b", t, 0.3, 0.4),
        _om_lifecycle(4, "entityRestored", "b", t, 0.2, 0.3),
        # DataHub status removed and back in one millisecond (aspect versions 2, 3)
        _dh_mcl(same, "status", t, "3", value={"removed": False}, previous=("2", {"removed": True})),
        _dh_mcl(same, "status", t, "2", value={"removed": True}, previous=("1", {"removed": False})),
        # DataHub hard delete (key aspect), re-created an hour later; another re-created in the same
        # millisecond, which is not known to be after the delete
        _dh_mcl(dh, "datasetKey", t, "1", value={"name": "x"}),
        _dh_mcl(dh, "datasetKey", t + 1000, "2", change="DELETE", previous=("1", {"name": "x"})),
        _dh_mcl(dh, "datasetKey", t + 3_600_000, "1", value={"name": "x"}),
        _dh_mcl(both, "datasetKey", t, "2", change="DELETE", previous=("1", {"name": "x"})),
        _dh_mcl(both, "datasetKey", t, "1", value={"name": "x"}),
    ]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("deleted-entities"), {}).dicts()
    got = {(r["entity_name"].value, r["deletion"].value): r["restored_at"] and r["restored_at"].value for r in rows}
    assert got == {
        ("svc.db.sch.a", "SoftDeleted"): "2024-01-01T20:00:00Z",
        ("svc.db.sch.b", "SoftDeleted"): None,
        (same, "SoftDeleted"): "2024-01-01T20:00:00Z",
        (dh, "HardDeleted"): "2024-01-01T21:00:00Z",
        (both, "HardDeleted"): None,
    }


@pytest.mark.parametrize("hard_deleted", [True, False], ids=["re-created", "reused"])
def test_aspect_versions_numbered_again_after_a_hard_delete_are_no_finding(tmp_path, hard_deleted):
    """ut10a #4: DataHub hard-deletes an entity's aspect rows, so the entity created again under its URN
    numbers its aspect versions from 1 again and the same version IRIs are generated a second time.
    `check` (PROV and SHACL) and `audit` reported that as a reused version; without the hard delete
    between the two generations it still is one."""
    from changeprov.sparql.check import run_checks

    t, hour = 1_704_139_200_000, 3_600_000
    ds = DS("hive,db.recreated")
    tags = lambda *names: {"tags": [{"tag": f"urn:li:tag:{n}"} for n in names]}
    life = lambda t0, a, b: [
        _dh_mcl(ds, "datasetKey", t0, "1", value={"name": "x"}),
        _dh_mcl(ds, "globalTags", t0, "1", value=tags(a)),
        _dh_mcl(ds, "globalTags", t0 + hour, "2", value=tags(a, b), previous=("1", tags(a))),
    ]
    delete = [_dh_mcl(ds, "globalTags", t + 2 * hour, "3", change="DELETE", previous=("2", tags("A", "B"))),
              _dh_mcl(ds, "datasetKey", t + 2 * hour, "2", change="DELETE", previous=("1", {"name": "x"}))]
    events = life(t, "A", "B") + (delete if hard_deleted else []) + life(t + 3 * hour, "C", "D")
    store = _store_of(events, tmp_path)
    failed = set(run_checks(store, groups=("shacl", "prov")).as_dict()["failed_checks"])
    reused = [r for r in run_query(store, get_query("audit-versions"), {}).dicts()
              if "version number reused" in r["detail"].value]
    if hard_deleted:
        assert failed == set() and reused == []
        state = run_query(store, get_query("entity-state"), {"entity": ds}).dicts()
        assert sorted(r["value"].value for r in state if r["field"].value == "globalTags") \
            == ["urn:li:tag:C", "urn:li:tag:D"]
    else:  # versions 1 (key and tags) and 2 (tags) generated twice in one life
        assert failed == {"prov/generation-unique", "shacl/cps:EntityVersion-generation SPARQL"}
        assert sorted(r["version"].value for r in reused) == ["datasetKey 1", "globalTags 1", "globalTags 2"]


def test_a_hard_delete_repeats_the_last_change_but_makes_none(tmp_path):
    """ut12 #1, #3: OpenMetadata's entityDeleted repeats the entity's last changeDescription; it was
    mapped as a change by whoever deleted ("admin added PII.Sensitive" at the drop), and entity-state at
    the last version counted the delete, which carries that version's number."""
    t, minute = 1_704_139_200_000, 60_000
    pii = [{"tagFQN": "PII.Sensitive", "source": "Classification"}]
    tagged = {"fieldsAdded": [{"name": "columns.email.tags", "newValue": json.dumps(pii)}],
              "fieldsUpdated": [], "fieldsDeleted": [], "previousVersion": 0.1}

    def event(n, event_type, ms, user, previous, current, description):
        return {"id": f"h-{n}", "eventType": event_type, "entityType": "table", "entityId": "t-1",
                "entityFullyQualifiedName": "s.d.x.t", "userName": user, "timestamp": ms,
                "previousVersion": previous, "currentVersion": current, "changeDescription": description}

    store = _store_of([event(1, "entityUpdated", t, "alice", 0.1, 0.2, tagged),
                       event(2, "entityDeleted", t + minute, "admin", 0.2, 0.2, tagged)], tmp_path)
    rows = run_query(store, get_query("tag-changes"), {"tag": "PII.Sensitive"}).dicts()
    assert [(r["action"].value, r["user"].value) for r in rows] == [("added", "alice")]
    rows = run_query(store, get_query("who-changed"), {"entity": "s.d.x.t"}).dicts()
    assert [r["user"].value for r in rows] == ["alice"]
    state = lambda **p: {(r["field"].value, r["value"].value)
                         for r in run_query(store, get_query("entity-state"), {"entity": "s.d.x.t", **p}).dicts()}
    assert state(version="0.2") == {("columns.email.tags", "PII.Sensitive")}
    assert state(version="0.2", as_of=str(t + 2 * minute)) == set()  # ut13 #9: as of after the hard delete
    assert state(as_of=str(t)) == {("columns.email.tags", "PII.Sensitive")}
    assert state() == set()  # hard-deleted now


def test_one_event_id_with_two_contents_gives_no_duplicate_rows_and_an_honest_label(tmp_path):
    """ut12 #11: one event id mapped from two exports with another time and user: who-changed gave each
    (time, user) pair twice, and check's label mixed one line's user with the other's time."""
    from changeprov.mapping.reference import map_to_files
    from changeprov.sparql.check import _label

    t = 1_704_139_200_000
    line = {"id": "c-1", "eventType": "entityUpdated", "entityType": "table", "entityId": "t-1",
            "entityFullyQualifiedName": "s.d.x.t", "userName": "alice", "timestamp": t,
            "previousVersion": 0.1, "currentVersion": 0.2,
            "changeDescription": {"fieldsAdded": [{"name": "description", "newValue": "d"}], "fieldsUpdated": [],
                                  "fieldsDeleted": [], "previousVersion": 0.1}}
    store = open_store("embedded", path=tmp_path / "db", create=True)
    for i, other in enumerate([{}, {"timestamp": t + 3_600_000, "userName": "mallory"}]):
        src = tmp_path / f"e{i}.jsonl"
        src.write_text(json.dumps({**line, **other}) + "\n")
        map_to_files([str(src)], tmp_path / f"x{i}.nt", tmp_path / f"q{i}.jsonl")
        with (tmp_path / f"x{i}.nt").open("rb") as nt:
            store.load_ntriples(nt)
    rows = run_query(store, get_query("who-changed"), {"entity": "s.d.x.t"})
    assert len(rows.rows) == len(set(rows.rows)) == 4  # the documented cross product, each once
    (event,) = {r["event"] for r in rows.dicts()}
    assert _label(store, event, {}) == ("event c-1 EntityUpdated on s.d.x.t by alice / mallory at "
                                        "2024-01-01T20:00:00.000Z / 2024-01-01T21:00:00.000Z (one event id with several contents)")


UP_DOWN = {"up": "11111111-0000-0000-0000-000000000001", "down": "11111111-0000-0000-0000-000000000002"}


def _up_to_down(t: int) -> dict:
    """An OpenMetadata lineage event at ``t``: table s.d.x.up feeds s.d.x.down (ids UP_DOWN)."""
    return {"id": "e-1", "eventType": "entityLineageAdded", "entityType": "lineage", "entityId": "l-1",
            "entityFullyQualifiedName": "s.d.x.up--upstream-->s.d.x.down", "userName": "alice", "timestamp": t,
            "entity": {"fromEntity": {"id": UP_DOWN["up"], "type": "table", "fullyQualifiedName": "s.d.x.up"},
                       "toEntity": {"id": UP_DOWN["down"], "type": "table", "fullyQualifiedName": "s.d.x.down"}}}


def test_impact_names_openmetadata_owners_as_users_do(tmp_path):
    """A user's test: OpenMetadata owners were shown as internal IRIs (…/id/om/user/bob.tanaka), while
    every other query names an OpenMetadata user by userName."""
    t, ref = 1_704_139_200_000, UP_DOWN
    owners = [{"id": "u1", "type": "user", "name": "bob.tanaka"}, {"id": "t1", "type": "team", "name": "Finance"}]
    events = [
        _up_to_down(t),
        {"id": "e-2", "eventType": "entityUpdated", "entityType": "table", "entityId": ref["down"],
         "entityFullyQualifiedName": "s.d.x.down", "userName": "alice", "timestamp": t + 1000,
         "previousVersion": 0.1, "currentVersion": 0.2,
         "changeDescription": {"fieldsAdded": [{"name": "owners", "newValue": json.dumps(owners)}],
                               "fieldsUpdated": [], "fieldsDeleted": [], "previousVersion": 0.1}},
    ]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("impact"), {"entity": "s.d.x.up"}).dicts()
    assert [(r["asset_name"].value, r["owners"].value) for r in rows] == [("s.d.x.down", "bob.tanaka, team:Finance")]
    state = run_query(store, get_query("entity-state"), {"entity": "s.d.x.down"}).dicts()
    assert [r["value"].value for r in state if r["field"].value == "owners"] == ["bob.tanaka", "team:Finance"]


def test_what_a_creation_set_counts_for_tags_owners_and_state(tmp_path):
    """ut5a #4: an entity created with tags and owners (OpenMetadata sends no change description with a
    creation) had no owners in impact, no tags in tag-changes and neither in entity-state."""
    t, ref = 1_704_139_200_000, UP_DOWN
    alice, finance = {"id": "u1", "type": "user", "name": "alice.wong"}, {"id": "t1", "type": "team", "name": "Finance"}
    pii = {"tagFQN": "PII.Sensitive", "source": "Classification"}
    events = [
        _up_to_down(t),
        {"id": "e-2", "eventType": "entityCreated", "entityType": "table", "entityId": ref["down"],
         "entityFullyQualifiedName": "s.d.x.down", "userName": "ingestion-bot", "timestamp": t - 1000,
         "previousVersion": 0.1, "currentVersion": 0.1,
         "entity": json.dumps({"id": ref["down"], "name": "down", "owners": [alice, finance],
                               "tags": [{"tagFQN": "Tier.Tier1", "source": "Classification"}],
                               "columns": [{"name": "email", "tags": [pii]}, {"name": "id", "tags": []},
                                           {"name": "address", "children": [{"name": "street", "tags": [pii]}]}]})},
        {"id": "e-3", "eventType": "entityUpdated", "entityType": "table", "entityId": ref["down"],
         "entityFullyQualifiedName": "s.d.x.down", "userName": "bob", "timestamp": t + 60_000,
         "previousVersion": 0.1, "currentVersion": 0.2,
         "changeDescription": {"fieldsAdded": [], "fieldsUpdated": [], "previousVersion": 0.1,
                               "fieldsDeleted": [{"name": "owners", "oldValue": json.dumps([alice])}]}},
    ]
    store = _store_of(events, tmp_path)
    tags = run_query(store, get_query("tag-changes"), {"tag": "PII.Sensitive"}).dicts()
    assert [(r["action"].value, r["entity_name"].value, r["field"].value, r["user"].value) for r in tags] == [
        ("added", "s.d.x.down", "columns.address.street.tags", "ingestion-bot"),  # a nested column (ut6a #1)
        ("added", "s.d.x.down", "columns.email.tags", "ingestion-bot")]
    impact = {as_of: [(r["asset_name"].value, r["owners"].value)
                      for r in run_query(store, get_query("impact"), {"entity": "s.d.x.up", "as_of": as_of}).dicts()]
              for as_of in (str(t + 1000), str(t + 120_000))}
    assert impact == {str(t + 1000): [("s.d.x.down", "alice.wong, team:Finance")],
                      str(t + 120_000): [("s.d.x.down", "team:Finance")]}
    state = run_query(store, get_query("entity-state"), {"entity": "s.d.x.down", "version": "0.1"}).dicts()
    assert [(r["field"].value, r["value"].value) for r in state] == [
        ("columns", "s.d.x.down.address"), ("columns", "s.d.x.down.email"), ("columns", "s.d.x.down.id"),
        ("columns.address", "s.d.x.down.address.street"),  # a struct column's nested columns
        ("columns.address.street.tags", "PII.Sensitive"), ("columns.email.tags", "PII.Sensitive"),
        ("owners", "alice.wong"), ("owners", "team:Finance"), ("tags", "Tier.Tier1")]
    # an entityCreated that carries a change description of its own (a replay, another server version)
    # counts a field once: the description's (ut6a #6)
    from changeprov.mapping.mapper import map_line

    created = dict(events[1], changeDescription={"fieldsAdded": [{"name": "tags", "newValue": "[]"}]})
    fields = {str(t.object) for t in map_line(json.dumps(created).encode()).triples
              if t.predicate.value.endswith("/fieldName")}
    assert fields == {'"tags"', '"owners"', '"columns"', '"columns.email.tags"', '"columns.address.street.tags"',
                      '"columns.address"'}
    names = [str(t.subject) for t in map_line(json.dumps(created).encode()).triples
             if t.predicate.value.endswith("/fieldName") and str(t.object) == '"tags"']
    assert len(names) == 1 and "/change/added/0" in names[0]
    latest = run_query(store, get_query("entity-state"), {"entity": "s.d.x.down"}).dicts()
    assert [r["value"].value for r in latest if r["field"].value == "owners"] == ["team:Finance"]


def test_a_dropped_column_takes_its_tags_with_it(tmp_path):
    """ut6a #2: a column created with PII.Sensitive and later dropped kept PII in the table's state for
    good, and no query ever showed the tag removed ("does this table still hold PII?" answered yes)."""
    t = 1_704_139_200_000
    email = {"name": "email", "fullyQualifiedName": "s.d.x.t.email", "tags": [{"tagFQN": "PII.Sensitive"}]}
    events = [
        {"id": "d-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
         "entityFullyQualifiedName": "s.d.x.t", "userName": "ingestion-bot", "timestamp": t,
         "previousVersion": 0.1, "currentVersion": 0.1,
         "entity": {"id": "t-1", "columns": [{"name": "id", "fullyQualifiedName": "s.d.x.t.id"}, email]}},
        {"id": "d-2", "eventType": "entityUpdated", "entityType": "table", "entityId": "t-1",
         "entityFullyQualifiedName": "s.d.x.t", "userName": "bob", "timestamp": t + 60_000,
         "previousVersion": 0.1, "currentVersion": 1.1,
         "changeDescription": {"fieldsAdded": [], "fieldsUpdated": [], "previousVersion": 0.1,
                               "fieldsDeleted": [{"name": "columns", "oldValue": json.dumps([email])}]}},
    ]
    store = _store_of(events, tmp_path)
    state = {v: [(r["field"].value, r["value"].value) for r in run_query(
        store, get_query("entity-state"), {"entity": "s.d.x.t", "version": v}).dicts()] for v in ("0.1", "1.1")}
    assert state == {"0.1": [("columns", "s.d.x.t.email"), ("columns", "s.d.x.t.id"), ("columns.email.tags", "PII.Sensitive")],
                     "1.1": [("columns", "s.d.x.t.id")]}
    tags = run_query(store, get_query("tag-changes"), {"tag": "PII.Sensitive"}).dicts()
    assert [(r["action"].value, r["field"].value, r["user"].value) for r in tags] == [
        ("added", "columns.email.tags", "ingestion-bot"), ("removed", "columns.email.tags", "bob")]


def _created_described_dropped(columns: list, described: dict, dropped: list, *, last: float) -> list[dict]:
    """Table s.d.x.t created with ``columns`` (0.1), ``described`` (field name → value) added (0.2), then
    ``dropped`` columns deleted (``last``)."""
    t = 1_704_139_200_000
    common = {"entityType": "table", "entityId": "t-1", "entityFullyQualifiedName": "s.d.x.t"}
    return [
        {**common, "id": "c-1", "eventType": "entityCreated", "userName": "ingestion-bot", "timestamp": t,
         "previousVersion": 0.1, "currentVersion": 0.1, "entity": {"id": "t-1", "columns": columns}},
        {**common, "id": "c-2", "eventType": "entityUpdated", "userName": "ann", "timestamp": t + 60_000,
         "previousVersion": 0.1, "currentVersion": 0.2,
         "changeDescription": {"fieldsAdded": [{"name": k, "newValue": v} for k, v in described.items()],
                               "fieldsUpdated": [], "fieldsDeleted": []}},
        {**common, "id": "c-3", "eventType": "entityUpdated", "userName": "bob", "timestamp": t + 120_000,
         "previousVersion": 0.2, "currentVersion": last,
         "changeDescription": {"fieldsAdded": [], "fieldsUpdated": [],
                               "fieldsDeleted": [{"name": "columns", "oldValue": json.dumps(dropped)}]}},
    ]


def test_a_dropped_columns_description_goes_with_it(tmp_path):
    """ut6a, left open in stop 27: a dropped column's description stayed in the table's state for good."""
    t = 1_704_139_200_000
    email = {"name": "email", "fullyQualifiedName": "s.d.x.t.email"}
    events = _created_described_dropped([{"name": "id", "fullyQualifiedName": "s.d.x.t.id"}, email],
                                        {"columns.email.description": "e-mail", "columns.id.description": "key"},
                                        [email], last=1.2)
    store = _store_of(events, tmp_path)

    def state(**at):
        return [(r["field"].value, r["value"].value) for r in run_query(
            store, get_query("entity-state"), {"entity": "s.d.x.t", **at}).dicts()]

    before = [("columns", "s.d.x.t.email"), ("columns", "s.d.x.t.id"), ("columns.email.description", "e-mail"),
              ("columns.id.description", "key")]
    after = [("columns", "s.d.x.t.id"), ("columns.id.description", "key")]
    assert state(version="0.2") == state(as_of=str(t + 60_000)) == before
    assert state(version="1.2") == state(as_of=str(t + 120_000)) == state() == after


def test_an_fqn_dropped_and_re_created_names_the_entity_not_deleted_with_a_note(tmp_path, capsys):
    """A user's test: a table hard-deleted and re-created (a new id, the same FQN) could no longer be
    queried by its FQN at all ("ambiguous" in every query)."""
    t = 1_704_067_200_000
    old, new = "11111111-0000-0000-0000-00000000000a", "11111111-0000-0000-0000-00000000000b"

    def event(n, event_type, entity_id, ms, previous, current):
        return {"id": f"r-{n}", "eventType": event_type, "entityType": "table", "entityId": entity_id,
                "entityFullyQualifiedName": "svc.db.sch.u2", "userName": "bob", "timestamp": ms,
                "previousVersion": previous, "currentVersion": current}

    events = [event(1, "entityCreated", old, t, 0.1, 0.1), event(2, "entityDeleted", old, t + 1000, 0.1, 0.1),
              event(3, "entityCreated", new, t + 2000, 0.1, 0.1)]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("entity-history"), {"entity": "svc.db.sch.u2"})
    assert [r["event_type"].value for r in rows.dicts()] == ["EntityCreated"]
    assert len(rows.notes) == 1 and "also named 1 hard-deleted entity" in rows.notes[0] and old in rows.notes[0]
    # ut19 #10: describe's notes were lost unless a list was passed in
    described = describe_triples(store, "svc.db.sch.u2")
    assert described and described.notes == rows.notes
    given: list = []  # ... and a list passed in receives them (ms51 #5)
    assert describe_triples(store, "svc.db.sch.u2", notes=given) == described and given == rows.notes
    assert list(described) == sorted(described, key=str)  # one order, whatever the hash seed (ms51 #6)
    store.close()
    assert main(["query", "entity-history", "--param", "entity=svc.db.sch.u2", "--store", str(tmp_path / "db"),
                 "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 2 and err.startswith("note: 'svc.db.sch.u2' also named 1 hard-deleted entity")
    # two incarnations, neither deleted (an event missing from the log): still ambiguous
    events.pop(1)
    with pytest.raises(InputError, match="is ambiguous"):
        run_query(_store_of(events, tmp_path / "two"), get_query("entity-history"), {"entity": "svc.db.sch.u2"})


@pytest.mark.parametrize("column, table, drop", [
    ("mysql_prod.ecommerce.sales.orders.legacy_coupon_code", "mysql_prod.ecommerce.sales.orders",
     "2026-09-10T08:30:00.000Z by ingestion-bot"),
    # told by the MCL and the change event alike: said once
    ("urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.core.fct_orders,PROD),discount)",
     "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.core.fct_orders,PROD)",
     "2024-03-10T02:30:00.000Z by urn:li:corpuser:datahub")])
def test_the_state_of_a_dropped_column_says_who_dropped_it_and_when(store, column, table, drop):
    """ut47a #2: no rows and "its table has no rows about it here", where a hard-deleted entity's note says when."""
    rows = run_query(store, "entity-state", {"entity": column})
    assert not rows.rows and rows.notes[-1] == (f"this is a column: it has no events of its own; {table} has no rows "
                                                f"about it here; dropped from the schema at {drop}"), rows.notes


@pytest.mark.parametrize("params, said", [
    ({"as_of": "2026-09-02T14:59:59.999Z"}, "entityStatus = 'Draft' (until 2026-09-02T15:00:00.000Z)"),
    ({"version": "0.2"}, "entityStatus = 'Draft' (until 2026-09-02T15:00:00.000Z)"),
    ({"as_of": "2026-09-02T15:00:00Z"}, None),  # the change itself is in the state
    ({"as_of": "2026-08-01"}, None),  # before the term was created: it had no values
    ({}, None)])
def test_the_state_at_a_past_point_names_the_values_a_later_change_replaced(store, params, said):
    """ut47a #3: the glossary term as of before its status changed showed owners and synonyms, not its
    status "Draft", which it had from its creation (corpus line 11) and line 22 replaced (oldValue "Draft")."""
    rows = run_query(store, "entity-state", {"entity": "BusinessGlossary.Revenue", **params})
    notes = [n for n in rows.notes if n.startswith("fields no change at or before this point set")]
    if said is None:
        assert not notes, rows.notes
    else:
        assert notes == ["fields no change at or before this point set, with the value the first later change "
                         f"replaced (set when the entity was created, or before the log begins): {said}"]
        assert "entityStatus" not in {r["field"].value for r in rows.dicts()}


def test_label_gives_a_run_its_time_and_says_when_the_store_has_no_such_node(store):
    """ut47a #8: a run's row had no time though the run has its start; an IRI the store does not hold
    was kind "other" and nothing more."""
    runs = store.select("PREFIX prov: <http://www.w3.org/ns/prov#>\n"
                        "SELECT ?r ?t WHERE { ?r prov:startedAtTime ?t } ORDER BY ?r LIMIT 1").rows
    (run, started), = runs
    rows = run_query(store, "label", {"node": run.value})
    assert [(r["kind"].value, r["time"]) for r in rows.dicts()] == [("run", started)] and not rows.notes
    nothing = "https://w3id.org/changeprov/id/nothing"
    rows = run_query(store, "label", {"node": nothing})
    assert [r["kind"].value for r in rows.dicts()] == ["other"] and rows.notes == [f"the store has no triple with {nothing}"]


def test_a_field_added_after_the_point_had_no_earlier_value(tmp_path):
    """The note reads a value from the first change after the point only when that change replaced one:
    a description added after it (no old value), then updated, had none then."""
    def event(n, ms, version, kind=None, old=None, new=None):
        e = {"id": f"e-{n}", "eventType": "entityCreated" if kind is None else "entityUpdated", "entityType": "table",
             "entityId": "t-1", "entityFullyQualifiedName": "svc.db.sch.t", "timestamp": ms, "userName": "alice",
             "previousVersion": round(version - 0.1, 1) if kind else version, "currentVersion": version}
        if kind:
            change = {"name": "description", **({"oldValue": old} if old else {}), **({"newValue": new} if new else {})}
            e["changeDescription"] = {"fieldsAdded": [change] if kind == "added" else [], "fieldsDeleted": [],
                                      "fieldsUpdated": [change] if kind == "updated" else []}
        return e

    day = 86_400_000
    store = _store_of([event(1, 1_700_000_000_000, 0.1), event(2, 1_700_000_000_000 + 2 * day, 0.2, "added", new="a"),
                       event(3, 1_700_000_000_000 + 3 * day, 0.3, "updated", old="a", new="b")], tmp_path)
    with store:
        for as_of, said in ((1_700_000_000_000 + day, []), (1_700_000_000_000 + 2 * day, [])):
            rows = run_query(store, "entity-state", {"entity": "svc.db.sch.t", "as_of": str(as_of)})
            assert [n for n in rows.notes if n.startswith("fields no change")] == said, rows.notes


def test_who_changed_and_the_history_name_the_bot_that_acted_for_the_user(store):
    """ut47a #1: who changed the model's tags said david.kim, and nothing said metadata-agent-bot acted
    for him (corpus line 28: impersonatedBy); only the audit and changes-by-user of the bot told."""
    rows = run_query(store, "who-changed", {"entity": "mlflow_prod.churn_predictor", "field": "tags"}).dicts()
    assert [(r["user"].value, r["impersonator"].value) for r in rows] == [("david.kim", "metadata-agent-bot")]
    history = run_query(store, "entity-history", {"entity": "mlflow_prod.churn_predictor"}).dicts()
    acted = {(r["user"].value, r["impersonator"] and r["impersonator"].value) for r in history}
    assert ("david.kim", "metadata-agent-bot") in acted and any(imp is None for _, imp in acted)
    assert all(r["impersonator"] is None for r in run_query(store, "who-changed", {"entity": OM_ORDERS}).dicts())


def test_who_changed_and_changes_by_user(store):
    rows = run_query(store, get_query("who-changed"), {"entity": OM_ORDERS, "field": "tags"})
    assert [(r["user"].value, r["field_name"].value) for r in rows.dicts()] == [
        ("alice.wong", "tags"), ("alice.wong", "columns.customer_email.tags")]
    assert len(run_query(store, get_query("who-changed"), {"entity": OM_ORDERS}).rows) == 11  # 2 at creation
    # ut22 M3: "who changed it last week" takes a window; and so does the history
    all_times = [r["time"].value for r in run_query(store, "who-changed", {"entity": OM_ORDERS}).dicts()]
    since, until = all_times[3], all_times[-3]
    window = run_query(store, "who-changed", {"entity": OM_ORDERS, "since": since, "until": until})
    assert [r["time"].value for r in window.dicts()] == [t for t in all_times if since <= t <= until]
    history = [r["time"].value for r in run_query(store, "entity-history", {"entity": OM_ORDERS}).dicts()]
    cut = run_query(store, "entity-history", {"entity": OM_ORDERS, "since": since, "until": until})
    assert [r["time"].value for r in cut.dicts()] == [t for t in history if since <= t <= until] != history
    outside = run_query(store, "who-changed", {"entity": OM_ORDERS, "field": "tags", "until": "2000-01-01"})
    assert not outside and outside.notes == ["'tags' changed on this entity, but not between since and until"]
    quiet = run_query(store, "entity-history", {"entity": OM_ORDERS, "since": "2030-01-01"})
    # its own events: the history also lists the 2 lineage events of its downstream table (ut41c #5)
    assert not quiet and quiet.notes[0].startswith(f"the entity has {len(history) - 2} event(s) of its own, from ") and \
        quiet.notes[0].endswith(", none between since and until"), quiet.notes
    q = get_query("changes-by-user")
    dh = run_query(store, q, {"user": "urn:li:corpuser:dave"})
    assert dh.rows and all(r["time"].value.startswith("2026-05-12") for r in dh.dicts())
    window = run_query(store, q, {"user": "alice.wong", "since": "2026-09-01T10:30:00Z", "until": "2026-09-02"})
    assert [r["time"].value[:16] for r in window.dicts()] == [
        "2026-09-01T10:40", "2026-09-01T11:30", "2026-09-02T09:00", "2026-09-02T09:45", "2026-09-02T11:30",
        "2026-09-02T15:30"]


@pytest.mark.parametrize("user, message", [
    ("alice", "no user 'alice' in the store (an OpenMetadata userName or a DataHub corpuser URN); "
              "users matching 'alice': alice.wong, urn:li:corpuser:alice"),
    ("urn:li:corpuser:alice.wong", "no user 'urn:li:corpuser:alice.wong' in the store (an OpenMetadata userName "
                                   "or a DataHub corpuser URN); users matching 'alice.wong': alice.wong"),
    ("zed", "no user 'zed' in the store (an OpenMetadata userName or a DataHub corpuser URN)"),
    # ut5a #9: a typo inside the name found no substring, so no suggestion
    ("alice.wang", "no user 'alice.wang' in the store (an OpenMetadata userName or a DataHub corpuser URN); "
                   "did you mean: alice.wong"),
    ("urn:li:corpuser:alce", "no user 'urn:li:corpuser:alce' in the store (an OpenMetadata userName or a DataHub "
                             "corpuser URN); did you mean: urn:li:corpuser:alice"),
    # mq1 #7: a typo in another case found nothing (entities and tags had the case-blind search)
    ("ALICE.WANG", "no user 'ALICE.WANG' in the store (an OpenMetadata userName or a DataHub corpuser URN); "
                   "did you mean: alice.wong"),
])
def test_an_unknown_user_is_an_error_not_an_empty_record(store, user, message):
    """A user's test: a typo in a user name answered "0 rows", which reads as "changed nothing"."""
    with pytest.raises(InputError) as err:
        run_query(store, get_query("changes-by-user"), {"user": user})
    assert str(err.value) == message


# ----------------------------------------------------------------------------- every .rq: embedded == remote

EXAMPLES = {
    "audit-activity": {"since": "2024-03-04", "until": "2024-03-10"},
    "audit-agents": {"since": "2026-09-01"},
    "audit-bots": {"since": "2026-09-01"},
    "audit-deletions": {"until": "2024-03-31"},
    "audit-integrity": {"until": "2026-12-31"},  # no rows: see NO_CORPUS_ROWS
    "audit-lineage": {"entity": LEGACY, "as_of": "2024-03-12"},
    "audit-lineage-removed": {"since": "2024-03-10", "until": "2024-03-31"},  # cuts: 2 of 3 removals
    "audit-schema-drops": {"until": "2026-12-31"},
    "audit-sensitive-tags": {"tag_pattern": "^urn:li:tag:PII$"},
    "audit-top-entities": {"since": "2026-09-01"},
    "audit-versions": {"until": "2024-03-21"},
    "changes-by-user": {"user": "alice.wong", "since": "2026-09-02"},
    "column-table": {"entity": OM_DR + ".net_revenue"},
    "deleted-entities": {"since": "2024-03-15"},
    "describe": {"entity": FCT},
    "downstream": {"entity": ORDERS, "as_of": "2024-03-12"},
    "entity-history": {"entity": FCT},
    "entity-threads": {"entity": OM_ORDERS},
    "entity-state": {"entity": OM_ORDERS, "as_of": "2026-09-03"},
    "event-types": {"since": "2024-03-10", "until": "2026-09-05"},
    "find-entity": {"text": "Orders"},
    "impact": {"entity": OM_ORDERS},
    "job-candidates": {"dataset": STG_C},
    "job-io": {"job": JOB("build_fct_orders"), "as_of": "2024-03-05"},
    "label": {"node": FCT},
    "lineage-details": {"entity": OM_DR, "as_of": "2026-09-05"},
    "resolve": {"key": OM_DR},
    "tag-changes": {"tag": "urn:li:glossaryTerm:Classification.PersonalInformation"},
    "upstream": {"entity": LTV, "as_of": "2024-03-05"},
    "who-changed": {"entity": FCT, "field": "schemaMetadata"},
}
# the corpus has none of what these find; the named test runs them on both stores with data that has
NO_CORPUS_ROWS = {"audit-integrity": "tests/test_audit.py::test_integrity_findings"}
# *-violation.rq (PROV constraint checks) return no rows on sound data; tests/test_check.py runs them
RQ_FILES = sorted(p.name[:-3] for p in resources.files("changeprov.sparql").joinpath("queries").iterdir()
                  if p.name.endswith(".rq") and not p.name.endswith("-violation.rq"))


@pytest.fixture(scope="module")
def memory(export):
    with open_store("memory") as store:
        load_export(store, export)
        yield store


@pytest.mark.parametrize("name", RQ_FILES)
def test_every_query_same_on_embedded_memory_and_endpoint(name, embedded, memory, remote):
    """ut42a #1, #2: on the memory store (rdflib's engine then) who-changed failed and the audit's queries
    differed; it is pyoxigraph in memory now, and checked here with the others."""
    assert name in EXAMPLES, f"add example parameters for {name}.rq"
    q = get_query(name)
    assert q.summary and all(p.description for p in q.params), f"{name}.rq needs a header"
    a = run_query(embedded, q, EXAMPLES[name], now_ms=1_800_000_000_000)
    b = run_query(remote, q, EXAMPLES[name], now_ms=1_800_000_000_000)
    c = run_query(memory, q, EXAMPLES[name], now_ms=1_800_000_000_000)
    assert a.variables == b.variables == c.variables

    def same(rows):  # GROUP_CONCAT joins in the order the store reads: its members are a set
        return sorted((tuple(" ".join(sorted(v.value.split(" "))) if n == "events" and v is not None else v
                             for n, v in zip(a.variables, row)) for row in rows), key=str)
    assert same(a.rows) == same(b.rows) == same(c.rows)
    assert bool(a.rows) != (name in NO_CORPUS_ROWS), f"{name}: example parameters should return rows"
    assert a.variables == documented_columns(q.returns), f"{name}.rq: its `returns:` header names other columns"


def _params_in(node, names: set[str]) -> set[str]:
    """The parameter variables anywhere under an rdflib algebra node or expression (EXISTS bodies too)."""
    if isinstance(node, rdflib.Variable):
        return {str(node)} & names
    if isinstance(node, dict):  # CompValue
        node = [v for k, v in node.items() if k != "_vars"]
    if isinstance(node, (list, tuple, set)):
        return set().union(*(_params_in(x, names) for x in node))
    if hasattr(node, "args"):  # a property path (sequence, alternative, inverse, * / +)
        return _params_in(list(node.args), names)
    return set()


def _bound(node, names: set[str], *, patterns: bool = True) -> set[str]:
    """The parameters every solution of ``node`` binds: from a VALUES block in its own groups, and with
    ``patterns`` also from its triple patterns (not from OPTIONALs or one UNION branch alone)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if not isinstance(node, CompValue):
        return set()
    if node.name == "values":
        return {str(v) for row in node.res for v in row} & names
    if node.name == "BGP":
        return _params_in([t[0] for t in node.triples] + [t[2] for t in node.triples], names) if patterns else set()
    if node.name == "Join":
        return _bound(node.p1, names, patterns=patterns) | _bound(node.p2, names, patterns=patterns)
    if node.name == "Union":
        return _bound(node.p1, names, patterns=patterns) & _bound(node.p2, names, patterns=patterns)
    if node.name in ("LeftJoin", "Minus"):
        return _bound(node.p1, names, patterns=patterns)
    if node.name == "Project":
        return _bound(node.p, names, patterns=patterns) & {str(v) for v in node.PV}
    return _bound(node.get("p"), names, patterns=patterns)


def unbound_parameter_uses(text: str, names: set[str]) -> list[str]:
    """Where the remote form of a query (a VALUES block at each ``#@bindings`` line) leaves a parameter
    unbound that a substitution binds: an expression in a group without the block (it then sees the
    parameter unbound: other rows), or a pattern in a sub-select without it (the engine does not push an
    outer block into a sub-select: a scan of the store)."""
    from rdflib.plugins.sparql import prepareQuery
    from rdflib.plugins.sparql.parserutils import CompValue

    from changeprov.sparql.values import with_values

    algebra = prepareQuery(with_values(text, {n: ox.Literal("x") for n in names})).algebra
    problems: list[str] = []

    def walk(node, top: bool) -> None:
        if not isinstance(node, CompValue):
            return
        if node.name == "Project" and not top:
            missing = _params_in(node.p, names) - _bound(node.p, names, patterns=False)
            problems.extend(f"?{n} in a sub-select" for n in sorted(missing))
        if node.name in ("Filter", "Extend"):
            missing = _params_in(node.expr, names) - _bound(node.p, names)
            problems.extend(f"?{n} in a {'FILTER' if node.name == 'Filter' else 'BIND'}" for n in sorted(missing))
        if node.name == "LeftJoin":
            missing = _params_in(node.expr, names) - _bound(node.p1, names) - _bound(node.p2, names)
            problems.extend(f"?{n} in an OPTIONAL's FILTER" for n in sorted(missing))
        for key in ("p", "p1", "p2"):
            walk(node.get(key), top and node.name != "Project" and key == "p")

    walk(algebra, True)
    return problems


@pytest.mark.parametrize("name", sorted(q.name for q in list_queries() if q.params))
def test_an_endpoint_binds_every_parameter_where_a_substitution_does(name):
    """ut10b #2: a VALUES block binds only its own group. With one block at the top, the window FILTERs
    inside audit-lineage-removed's UNION branches saw ?since / ?until unbound (every removal ever
    listed), and audit-lineage's sub-selects walked lineage paths from every node (100k events: 104 s
    against 2 s substituted). Each such group has its own #@bindings line (docs/queries.md, rule 8)."""
    from changeprov.sparql.rdflib_store import _rdflib_recursion  # rdflib's parser recurses per nesting level

    q = get_query(name)
    with _rdflib_recursion():
        assert unbound_parameter_uses(q.text, {p.name for p in q.params}) == []


def test_the_parameter_guard_finds_what_one_outer_block_leaves_unbound():
    text = ("SELECT ?since ?entity ?x WHERE {\n#@bindings\n"
            "{ ?x ?p ?t FILTER(?t >= ?since) } UNION { ?x ?q ?t }\n"
            "{ SELECT ?entity ?x WHERE { ?entity <http://ex.org/d>* ?x } }\n"
            "OPTIONAL { ?x ?r ?u FILTER(?u > ?since) } }")
    assert unbound_parameter_uses(text, {"since", "entity"}) == ["?since in a FILTER", "?entity in a sub-select"]
    fixed = text.replace("{ ?x ?p", "{\n#@bindings\n?x ?p").replace("WHERE { ?entity", "WHERE {\n#@bindings\n?entity")
    assert unbound_parameter_uses(fixed, {"since", "entity"}) == []


def documented_columns(returns: str) -> list[str]:
    """The column names of a `returns:` header: the first word of each top-level comma-separated item."""
    items, depth, cur = [], 0, ""
    for ch in returns:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    return [re.match(r"\s*(\w+)", item).group(1) for item in items + [cur]]


def test_rdflib_backend_agrees_on_lineage_and_fails_as_a_store_error(export):
    mem = open_store("rdflib")
    load_export(mem, export)
    assert hops(run_query(mem, get_query("upstream"), {"entity": LTV, "as_of": "2024-03-12"})) == UPSTREAM_LTV["2024-03-12"]
    assert hops(run_query(mem, get_query("downstream"), {"entity": ORDERS, "as_of": "2024-03-21"})) \
        == DOWNSTREAM_ORDERS["2024-03-21"]
    # ut42a #1: rdflib's engine raised its own NotBoundError here, outside ChangeprovError
    with pytest.raises(StoreError, match="rdflib's SPARQL engine failed on this query .NotBoundError"):
        run_query(mem, "who-changed", {"entity": OM_ORDERS})
    # a query nested beyond any stack: a StoreError that says so (not a syntax error), the limit put back
    limit = sys.getrecursionlimit()
    deep = "SELECT ?x WHERE { BIND(" + "(" * 30_000 + "1" + ")" * 30_000 + " AS ?x) }"
    with pytest.raises(StoreError, match="ran out of stack .* a query nested this deeply"):
        mem.select(deep)
    assert sys.getrecursionlimit() == limit
    # rv43 #5: threads each restoring the limit they found left it raised, or aborted the process
    nested = "SELECT ?x WHERE { BIND(" + "(" * 120 + "1" + ")" * 120 + " AS ?x) }"
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: open_store("rdflib").select(nested).rows, range(24)))
    assert answers == [[(ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),)]] * 24
    assert sys.getrecursionlimit() == limit


# ----------------------------------------------------------------------------- injection and query safety

HOSTILE = ['x" || true || "', "> } ; DROP ALL", "http://ex.org/a b", 'http://ex.org/"q"', "http://ex.org/a\nb",
           "urn:li:tag:PII> ?p ?o } #", "') } UNION { ?s ?p ?o } #", "*", ""]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_parameter_values(store, value):
    """Each value is a value: no rows, or the error that names it as not found (rv45d #6: any message
    with "no " in it passed)."""
    for name, param, kind in [("entity-history", "entity", "entity"), ("tag-changes", "tag", "tag"),
                              ("upstream", "entity", "entity")]:
        with pytest.raises(InputError) as error:
            run_query(store, get_query(name), {param: value})
        said = str(error.value)
        assert said == f"empty {kind}" if not value else \
            said.startswith(f"no {kind} with fullyQualifiedName, URN or IRI {value!r} in the store"), said
    for name, params in [("who-changed", {"entity": OM_ORDERS, "field": value}), ("resolve", {"key": value})]:
        if not value and name == "resolve":  # a required text given empty (ut48a #8)
            with pytest.raises(InputError, match="required parameter key is empty"):
                run_query(store, get_query(name), params)
            continue
        rows = run_query(store, get_query(name), params)
        assert rows.rows == [], (name, value, rows.rows[:2])
    with pytest.raises(InputError) as error:
        run_query(store, get_query("changes-by-user"), {"user": value})
    assert str(error.value).startswith((f"no user {value!r} in the store", f"not a user name or URN: {value!r}")), \
        str(error.value)
    with pytest.raises(InputError, match="not a time"):
        run_query(store, get_query("upstream"), {"entity": LTV, "as_of": value or "x"})


def test_unknown_and_missing_parameters(embedded, capsys, db):
    with pytest.raises(InputError, match="missing required parameter entity"):
        run_query(embedded, get_query("upstream"), {})
    with pytest.raises(InputError, match="unknown parameter.*bogus"):
        run_query(embedded, get_query("upstream"), {"entity": LTV, "bogus": "1"})
    with pytest.raises(InputError, match="not a decimal"):
        run_query(embedded, get_query("entity-state"), {"entity": OM_ORDERS, "version": "1; DROP"})
    with pytest.raises(InputError, match="unknown query"):
        get_query("../etc/passwd")
    with pytest.raises(InputError, match="unknown query"):  # rv40 m3: an OSError, "File name too long"
        get_query("x" * 5000)
    assert main(["query", "upstream", "--param", "as_of=2024-03-05", "--store", str(db)]) == 2
    assert "missing required parameter entity" in capsys.readouterr().err


@pytest.mark.parametrize("query, values, message", [
    ("audit-bots", {"bot_pattern": "("}, "bot_pattern: not a valid regular expression"),
    ("audit-sensitive-tags", {"tag_pattern": "[pii"}, "tag_pattern: not a valid regular expression"),
    ("changes-by-user", {"user": "alice.wong", "since": "2024-03-05", "until": "2024-03-01"},
     "since .2024-03-05T00:00:00.000Z. is after until .2024-03-01T23:59:59.999Z."),
    ("upstream", {"entity": LTV, "as_of": "yesterday"}, "or now.: 'yesterday'$"),
    ("upstream", {"entity": LTV, "as_of": "99999999999999999"}, "epoch milliseconds out of range"),
    # ut5a #6: epoch seconds and compact dates read as epoch ms are 1970, and lineage then is empty
    ("upstream", {"entity": LTV, "as_of": "1709683200"}, "1970-01-20.*epoch seconds. then 1709683200000"),
    ("changes-by-user", {"user": "alice.wong", "since": "20260902"}, "a date. then 2026-09-02"),
])
def test_parameter_values_that_would_silently_answer_nothing_are_errors(embedded, query, values, message):
    # an invalid REGEX pattern is an evaluation error, which FILTER turns into "no match": no message
    with pytest.raises(InputError, match=message):
        run_query(embedded, get_query(query), values)


def test_a_valid_pattern_still_matches(embedded):
    rows = run_query(embedded, get_query("audit-bots"), {"bot_pattern": "ingestion|bot([-_.]|$)"})
    assert any(r for r in rows.rows)


def test_service_refused_unless_allowed(tmp_path, db, capsys):
    rq = tmp_path / "svc.rq"
    rq.write_text("# summary: x\nSELECT * WHERE {\n  SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }\n")
    assert main(["query", "--file", str(rq), "--store", str(db)]) == 2
    # ut25 #1: which line, in a long file
    assert "query text contains SERVICE (line 3: 'SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }')" in capsys.readouterr().err
    with pytest.raises(InputError, match="SERVICE"):
        run_query(open_store("memory"), load_query_file(rq))


@pytest.mark.parametrize("text, refused", [
    ("select * where {service<http://127.0.0.1:9/s>{?s ?p ?o}}", True),
    ("SELECT * WHERE { # a comment\n SERVICE SILENT <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { \\u0053ERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),  # Jena applies \u first
    ("SELECT * WHERE { ?s <http://x/p> ex:a\\# . SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { ?s ?p \"a\" . SERVICE ?endpoint { ?s ?p ?o } }", True),
    # rv40 H1: SERVICE right after a "." (the triple separator, after a term or a number) ran
    ("SELECT * WHERE { {} .SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { ?a ?b 1.SERVICE SILENT <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { ?a ?b true.SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { ?a ?b \"x\".SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { _:b ?b ?c .SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    # rv41 H1: the engine needs no word boundary around the keyword
    ("PREFIX : <http://127.0.0.1:9/> SELECT * WHERE { SERVICE:sparql { ?s ?p ?o } }", True),
    ("PREFIX s: <http://127.0.0.1:9/> SELECT * WHERE { SERVICEs:sparql { ?s ?p ?o } }", True),
    ("SELECT * WHERE { SERVICESILENT<http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("PREFIX ex: <http://x/> SELECT * WHERE { ?a ?b ex:.SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { ?a ?b trueSERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    # rv42 H1: "<?a#>" is an IRI where the engine reads a term; read as a comparison, its "#" hid the rest
    ("BASE <http://e/> SELECT * WHERE { <?a#> ?p ?o . SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    # ... and an IRI with "#" beside a comparison with a quote hid a SERVICE from both readings
    ("PREFIX ex: <http://x/> SELECT * WHERE { ?s <http://x#> ?a . FILTER(?a<ex:f('>')) "
     "SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } } #'", True),
    # the price: the word is refused wherever it is but in a variable's name (a value goes in as a parameter)
    ("PREFIX ex: <http://example.org/> SELECT * WHERE { ?s ex:customerService ?o }", True),
    ("SELECT * WHERE { ?s ?p \"databaseService\" }", True),
    ("SELECT * WHERE { ?s <http://example.org/service> ?o }", True),
    ("SELECT ?service WHERE { ?service ?p $service }", False),
    # ut25 #1: a comment line (a query file's header: a parameter named service, a summary naming one)
    ("# summary: events of an entity type (e.g. databaseService)\n# param: service string optional  a type\n"
     "SELECT ?service ?e WHERE { ?e ?p ?service }", False),
    ("SELECT ?e WHERE { ?e ?p ?o }  # after code, a '#' may be inside an IRI: the service counts", True),
    ("SELECT * WHERE {\n  # note\rSERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),  # the engine ends it at CR
    # ... but a long string may end on a line that starts with "#", and code follow it
    ('SELECT * WHERE { BIND("""\n#""" AS ?x) SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }', True),
    ("SELECT * WHERE { BIND('''\n#''' AS ?x) SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ('SELECT * WHERE { BIND("""\n#\\u0022\\u0022\\u0022 AS ?x) SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }', True),
    ('SELECT * WHERE { ?s ?p "a\\u000A#" . SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }', True),
    ("# param: service string optional  a type\r\nSELECT ?service WHERE { ?e ?p ?service }", False),
    # rv44 H1: rdflib (this memory store) reads \\U with four digits and \\u with eight too
    ("SELECT * WHERE { \\U0053ERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { \\u00000053ERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    # ... and its keywords by str.upper(): a long s is an S, a dotless i an I
    ("SELECT * WHERE { \u017fERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
    ("SELECT * WHERE { SERV\u0131CE <http://127.0.0.1:9/s> { ?s ?p ?o } }", True),
])
def test_service_is_refused_wherever_the_word_is_but_in_a_variable(tmp_path, text, refused):
    """The guard searched the whole text for the word, and refused ?service; each reading that then
    blanked strings, IRIs or comments was bypassed (rv40, rv41, rv42)."""
    rq = tmp_path / "q.rq"
    rq.write_text(text, encoding="utf-8")
    q = load_query_file(rq)
    if refused:  # the guard's own error: the engine's syntax errors name SERVICE too
        with pytest.raises(InputError, match="query text contains SERVICE"):
            run_query(open_store("memory"), q)
    else:
        run_query(open_store("memory"), q)


def test_a_comment_ended_by_a_carriage_return_hides_no_service():
    """rv40 H1: the engine ends a comment at CR, the guard read on to the next LF (library callers'
    text; a file is read with universal newlines)."""
    from changeprov.sparql.queries import parse_header

    q = parse_header("adhoc", "SELECT * WHERE { {} # note\rSERVICE <http://127.0.0.1:9/s> { ?s ?p ?o }\n}\n")
    with pytest.raises(InputError, match="SERVICE"):
        run_query(open_store("memory"), q)


def test_escape_sequences_in_names_do_not_reach_the_terminal(tmp_path, capsys):
    """rv40 M1: a catalog name with an escape sequence (clear screen, window title) or a bidi override
    was printed raw in the table and in the error's suggestions; CSV keeps the data as it is."""
    fqn = "svc.db.sch.t\x1b[2J\x1b]0;pwned\x07\u202eFAKE"
    event = _om_lifecycle(1, "entityCreated", "t-1", 1_704_139_200_000, 0.1, 0.1)
    store = _store_of([dict(event, entityFullyQualifiedName=fqn)], tmp_path)
    store.close()
    db = str(tmp_path / "db")
    assert main(["query", "find-entity", "--param", "text=FAKE", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "svc.db.sch.t\\u001B[2J\\u001B]0;pwned\\u0007\\u202EFAKE" in out and "\x1b" not in out
    assert main(["query", "entity-history", "--param", "entity=FAKE", "--store", db]) == 2
    err = capsys.readouterr().err
    assert "names containing 'FAKE': svc.db.sch.t\\u001B[2J" in err and "\x1b" not in err and "\u202e" not in err
    assert main(["query", "find-entity", "--param", "text=FAKE", "--store", db, "--format", "csv"]) == 0
    assert fqn in capsys.readouterr().out


def test_ask_and_construct_files_run_from_the_library_as_from_the_command(tmp_path, embedded):
    """mq1 #9: only the CLI bound an ASK or CONSTRUCT file's parameters; a library caller repeated its
    steps, the SERVICE guard among them."""
    from changeprov.sparql import run_ask, run_construct

    head = "# param: who user required  a user\nPREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
    (tmp_path / "ask.rq").write_text(head + "ASK WHERE {\n#@bindings\n?e om:performedBy ?who }\n")
    (tmp_path / "c.rq").write_text(head + "CONSTRUCT { ?e om:performedBy ?who } WHERE {\n#@bindings\n?e om:performedBy ?who }\n")
    assert run_ask(embedded, load_query_file(tmp_path / "ask.rq"), {"who": "alice.wong"}) is True
    notes: list[str] = []
    triples = run_construct(embedded, load_query_file(tmp_path / "c.rq"), {"who": "urn:li:corpuser:bob"}, notes=notes)
    assert triples and {t.object.value for t in triples} == {"urn:li:corpuser:bob"}
    with pytest.raises(InputError, match="missing required parameter who"):
        run_ask(embedded, load_query_file(tmp_path / "ask.rq"))
    (tmp_path / "s.rq").write_text("ASK { SERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }\n")
    with pytest.raises(InputError, match="SERVICE"):
        run_ask(embedded, load_query_file(tmp_path / "s.rq"))


def test_adhoc_file_query_with_header_params(tmp_path, db, capsys):
    rq = tmp_path / "mine.rq"
    rq.write_text("# summary: events of one user\n# param: who user required  a user\n"
                  "PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                  "SELECT ?who (COUNT(?e) AS ?n) WHERE {\n#@bindings\n?e om:performedBy ?who } GROUP BY ?who\n")
    assert main(["query", "--file", str(rq), "--param", "who=urn:li:corpuser:bob", "--store", str(db),
                 "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "n" and int(out[1]) > 5


@pytest.mark.parametrize("value, bound", [("123456789012", "123456789012"), ("-7", "-7"), ("1" * 18, "1" * 18)])
def test_an_integer_parameter_takes_up_to_18_digits(tmp_path, db, capsys, value, bound):
    """rv47 P5: no bundled query has an integer parameter; a --file query's must take large counts."""
    rq = tmp_path / "n.rq"
    rq.write_text("# summary: echo\n# param: n integer required  a number\n"
                  "SELECT ?n ?v WHERE {\n#@bindings\nBIND(CONCAT(STR(?n), \" \", STR(DATATYPE(?n))) AS ?v)\n}\n")
    assert main(["query", "--file", str(rq), "--param", f"n={value}", "--store", str(db), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{bound} http://www.w3.org/2001/XMLSchema#integer"


def test_a_window_of_one_instant_is_taken_and_a_parameter_given_twice_is_not(db, embedded, capsys):
    """rv47 P3 P6: since = until is a window (of one instant), not "since is after until"; --param given
    twice with two values is an error, not the last one silently."""
    rows = run_query(embedded, "changes-by-user", {"user": "urn:li:corpuser:bob", "since": "2024-03-04T10:05:00Z",
                                             "until": "2024-03-04T10:05:00Z"})
    assert len(rows.rows) == 2 and {r["time"].value for r in rows.dicts()} == {"2024-03-04T10:05:00Z"}
    assert main(["query", "who-changed", "--param", "entity=a", "--param", "entity=b", "--store", str(db)]) == 2
    assert capsys.readouterr().err.strip() == "changeprov query: error: --param entity given twice"


@pytest.mark.parametrize("where", ["--store", "--endpoint"])
def test_a_describe_file_takes_its_entity_as_a_parameter(tmp_path, db, endpoint, capsys, where):
    """rv38 #3: DESCRIBE ?entity, with no WHERE group for a #@bindings line, took it before rv37 #4; ut41a #4:
    an endpoint refused it, asking for a marker line in a WHERE group the documented file has none of."""
    rq = tmp_path / "d.rq"
    rq.write_text("# summary: d\n# param: entity entity required  the entity\nDESCRIBE ?entity  # whole\n")
    assert main(["query", "--file", str(rq), "--param", f"entity={FCT}", where,
                 str(db) if where == "--store" else endpoint]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"<{FCT}> ") and len(out.splitlines()) > 5


def test_an_adhoc_parameter_outside_the_select_list_is_a_clear_error(tmp_path, db, capsys):
    """ut22 M4: pyoxigraph's "does not contains variable ?who in its SELECT projection" was the message."""
    rq = tmp_path / "mine.rq"
    rq.write_text("# param: who user required  a user\n# param: since time optional  from\n"
                  "PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                  "SELECT (COUNT(?e) AS ?n) WHERE {\n#@bindings\n?e om:performedBy ?who ; om:timestamp ?t "
                  "FILTER(COALESCE(?t >= ?since, true)) }\n")
    assert main(["query", "--file", str(rq), "--param", "who=urn:li:corpuser:bob", "--store", str(db)]) == 2
    assert ("mine: parameter(s) ?who, ?since must be in the SELECT list (SELECT ?who ?since … WHERE …)"
            in capsys.readouterr().err)


_HEAD = "# param: since time optional  from\nPREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
_WINDOW = "\n#@bindings\n?e om:timestamp ?t FILTER(COALESCE(?t >= ?since, true)) }\n"


@pytest.mark.parametrize("text, rows", [
    # rv37 #4, #5: ASK and CONSTRUCT took no parameters on the embedded store; a "{" in a string, a
    # comment or a product in the SELECT list fooled the check
    ("ASK WHERE {" + _WINDOW, 1),
    ("CONSTRUCT { ?e om:timestamp ?t } WHERE {\n#@bindings\n{ SELECT ?e ?t WHERE { ?e om:timestamp ?t } }\n"
     "FILTER(COALESCE(?t >= ?since, true)) }\n", None),
    ('SELECT (CONCAT("{", STR(?t)) AS ?x) ?since WHERE {' + _WINDOW, None),
    ("SELECT ?e ?t  # ?since is the start\nWHERE {" + _WINDOW, "must be in the SELECT list"),
    ("SELECT ?e (?since * 2 AS ?twice) WHERE {" + _WINDOW, "must be in the SELECT list"),
    ("SELECT ?e WHERE { ?e om:timestamp ?t }\n", "declared in the header but not used by the query"),
    # rv38 #3, #4: a DESCRIBE without a marker, an EXISTS in the SELECT list, a comparison without spaces
    ("DESCRIBE ?e WHERE {" + _WINDOW.replace(" }", " } LIMIT 1"), None),
    ("SELECT (EXISTS { ?e om:userName ?u } AS ?named) ?since WHERE {" + _WINDOW, None),
    ("SELECT (EXISTS { SELECT ?u WHERE { ?e om:userName ?u } } AS ?named) ?since WHERE {" + _WINDOW, None),  # rv39 #3
    ("SELECT ?since ?e WHERE {\n#@bindings\n?e om:timestamp ?t FILTER(?t>=?since&&?t<\"2030-01-01T00:00:00Z\"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }\n", None),
    ("SELECT * WHERE {" + _WINDOW, "parameter ?since cannot be bound: name it in a SELECT list"),
    # rv39: a sub-select that does not return the parameter saw it unbound on the embedded store (all rows)
    ("SELECT ?since (COUNT(?e) AS ?n) WHERE {\n#@bindings\n{ SELECT ?e WHERE {" + _WINDOW + "} } GROUP BY ?since\n",
     "a sub-select uses parameter(s) ?since without returning them"),
    ("SELECT ?since (COUNT(?e) AS ?n) WHERE {\n#@bindings\n{ SELECT ?e ?since WHERE {" + _WINDOW + "} } GROUP BY ?since\n",
     None),
    # rv44b #8: an EXISTS { … } in a sub-select's SELECT list is not its WHERE group
    ("SELECT ?since (COUNT(?e) AS ?n) WHERE {\n#@bindings\n{ SELECT ?e ?since (EXISTS { ?e om:timestamp ?t "
     "FILTER(?t >= ?since) } AS ?f) WHERE {" + _WINDOW + "} } GROUP BY ?since\n", None),
    # ut44f #3: a sub-select without its own marker ran without the parameter on an endpoint: no rows there
    ("SELECT ?since (COUNT(?e) AS ?n) WHERE {\n#@bindings\n{ SELECT ?e ?since WHERE { ?e om:timestamp ?t "
     "FILTER(COALESCE(?t >= ?since, true)) } } } GROUP BY ?since\n",
     "a sub-select uses parameter(s) ?since without a `#@bindings` line of its own at the start of its WHERE group"),
])
def test_query_file_parameters_in_every_form(tmp_path, db, capsys, text, rows):
    rq = tmp_path / "q.rq"
    rq.write_text(_HEAD + text)
    code = main(["query", "--file", str(rq), "--param", "since=2026-09-01", "--store", str(db), "--format", "csv"])
    out, err = capsys.readouterr()
    if isinstance(rows, str):
        assert code == 2 and rows in err, err
    else:
        assert code == 0 and len(out.splitlines()) > 1, err


@pytest.mark.parametrize("pattern, expected", [("?e om:performedBy ?who", True), ("?who om:performedBy ?e", False)])
def test_adhoc_ask_query_in_every_format(tmp_path, db, capsys, pattern, expected):
    rq = tmp_path / "ask.rq"
    rq.write_text("# param: who user required  a user\n"
                  "PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                  f"ASK WHERE {{\n#@bindings\n{pattern} }}\n")
    outputs = {}
    for fmt in ("json", "csv", "tsv", "table"):
        assert main(["query", "--file", str(rq), "--param", "who=urn:li:corpuser:bob", "--store", str(db),
                     "--format", fmt]) == 0
        outputs[fmt] = capsys.readouterr().out
    assert json.loads(outputs["json"]) == {"head": {}, "boolean": expected}  # SPARQL 1.1 Query Results JSON
    assert outputs["csv"].splitlines() == ["answer", str(expected).lower()]
    assert outputs["tsv"].splitlines()[1].startswith(f'"{str(expected).lower()}"^^')


# ----------------------------------------------------------------------------- CLI and formats


def test_query_list_prints_every_query(capsys):
    assert main(["query", "--list"]) == 0
    out = capsys.readouterr().out
    for q in list_queries():
        assert f"{q.name}: {q.summary}" in out
    assert "as_of (time-end, optional, default now)" in out


def test_query_list_takes_a_name_and_json_and_json_answers_end_a_line(db, capsys):
    """ut42d #5, #6: --list --format json printed the text, a name beside --list was ignored, and a SELECT's
    JSON answer had no final newline (every other output has one)."""
    assert main(["query", "--list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [q["name"] for q in listed] == [q.name for q in list_queries()]
    assert main(["query", "who-changed", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("who-changed: ") and "upstream:" not in out
    assert main(["query", "deleted-entities", "--store", str(db), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and json.loads(out)["results"]["bindings"]


def test_an_empty_answer_from_an_empty_store_says_so(embedded, tmp_path):
    """ut5a #5: a store loaded from an export that mapped nothing answered "(0 rows)" like a true answer."""
    with open_store("embedded", path=tmp_path / "empty", create=True) as empty:
        rows = run_query(empty, get_query("deleted-entities"), {})
    assert rows.rows == [] and [n for n in rows.notes if "the store holds no triples" in n]
    rows = run_query(embedded, get_query("deleted-entities"), {"since": "2030-01-01"})
    assert rows.rows == [] and rows.notes == []


def test_table_aligns_wide_characters_by_their_columns():
    """ut42d #7: a Japanese user name was padded by characters, so its row's next column stood 7 to the left."""
    from changeprov.sparql.formats import to_table
    from changeprov.sparql.stores import Rows

    text = to_table(Rows(["user", "events"], [(ox.Literal("日本語ユーザー"), ox.Literal("3")),
                                              (ox.Literal("bob"), ox.Literal("12"))]))
    header, _, wide, narrow, _ = text.splitlines()
    # the events column starts in the same terminal column on every line (each wide character takes two)
    starts = {wide.index("3") + len("日本語ユーザー"), narrow.index("12"), header.index("events")}
    assert len(starts) == 1, text


def test_one_very_long_name_widens_its_own_row_only():
    """ut46a #4: a 100 KB name (kept whole, an identifier) padded every row of the table to 100 KB."""
    from changeprov.sparql.formats import to_table
    from changeprov.sparql.stores import Rows

    long_name = "svc.db.sch." + "x" * 5000
    text = to_table(Rows(["name", "events"], [(ox.Literal(long_name), ox.Literal("3")),
                                              (ox.Literal("svc.db.sch.short"), ox.Literal("12"))]))
    header, rule, wide, narrow, _ = text.splitlines()
    assert long_name in wide and wide.endswith("3")
    assert len(narrow) < 200 and narrow.index("12") == header.index("events") and len(rule) < 200


def test_table_keeps_iris_urns_and_names_whole_and_cuts_long_text():
    """ut5a #11: DataHub URNs over 80 characters came out cut (…PRO…) and could not be pasted into the next query."""
    from changeprov.sparql.formats import to_table
    from changeprov.sparql.stores import Rows

    urn = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.marts.daily_revenue_with_a_long_name,PROD)"
    iri = ox.NamedNode("https://open-metadata.org/entity/glossaryTerm/" + "1f6ed1aa-d1cb-5731-87e1-a7d40e7df7b4" * 2)
    text = ox.Literal("a long description " * 10)
    out = to_table(Rows(["name", "node", "text"], [(ox.Literal(urn), iri, text)]))
    assert urn in out and iri.value in out and text.value not in out and "a long description a" in out


def test_query_formats(db, capsys):
    base = ["query", "upstream", "--param", f"entity={LTV}", "--param", "as_of=2024-03-05", "--store", str(db)]
    assert main(base + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["head"]["vars"] == ["asset_name", "hops", "via", "asset"]
    first = doc["results"]["bindings"][0]
    assert first["hops"] == {"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}
    assert first["asset"] == {"type": "uri", "value": FCT}
    assert main(base + ["--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "asset_name,hops,via,asset"
    assert main(base + ["--format", "tsv"]) == 0
    tsv = capsys.readouterr().out.splitlines()
    assert tsv[0] == "?asset_name\t?hops\t?via\t?asset" and f"<{FCT}>" in tsv[1]
    assert main(base) == 0
    assert "(5 rows)" in capsys.readouterr().out


def test_csv_and_tsv_write_blank_nodes_as_the_standard_says(tmp_path, db, capsys):
    rq = tmp_path / "b.rq"
    rq.write_text('SELECT ?b ?v WHERE { BIND(BNODE("x") AS ?b) BIND("a,b" AS ?v) }\n')
    assert main(["query", "--file", str(rq), "--store", str(db), "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["b", "v"] and rows[1][0].startswith("_:") and rows[1][1] == "a,b"
    assert main(["query", "--file", str(rq), "--store", str(db), "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("_:")


def _rdflib_graph(text: str, fmt: str):
    """``text`` as rdflib reads it. rdflib tells "x" from "x"^^xsd:string (RDF 1.1 makes them one
    term), so comparing two of its readings catches a JSON-LD context that types plain strings."""
    from rdflib.compare import to_isomorphic

    return to_isomorphic(rdflib.Graph().parse(data=text, format=fmt))


def test_describe_formats_and_content(embedded, remote, db, capsys):
    a = describe_triples(embedded, FCT)
    assert {str(t) for t in a} == {str(t) for t in describe_triples(remote, FCT)}
    preds = {t.predicate.value.rsplit("/", 1)[-1].rsplit("#", 1)[-1] for t in a}
    assert {"affectsEntity", "performedBy", "fieldsAdded", "fieldName", "qualifiedDerivation", "addedBy",
            "wasDerivedFrom", "timestamp"} <= preds
    assert any(t.predicate.value.endswith("wasDerivedFrom") and t.object.value == FCT for t in a)  # downstream edges
    assert main(["describe", FCT, "--store", str(db), "--format", "turtle"]) == 0
    ttl = capsys.readouterr().out
    assert len(list(ox.parse(ttl, format=ox.RdfFormat.TURTLE))) == len(a)
    assert main(["describe", FCT, "--store", str(db), "--format", "jsonld"]) == 0
    text = capsys.readouterr().out
    doc = json.loads(text)
    assert isinstance(doc["@context"], dict), "self-contained: no context IRI to fetch"
    # any JSON-LD processor, offline: rdflib's own parser reads back exactly the described triples
    assert _rdflib_graph(text, "json-ld") == _rdflib_graph(render_graph(a, "nt"), "nt")
    nt = render_graph(a, "nt")
    assert len(list(ox.parse(nt, format=ox.RdfFormat.N_TRIPLES))) == len(a)
    assert main(["describe", "no.such.entity", "--store", str(db)]) == 2
    assert "no entity with" in capsys.readouterr().err


def test_describe_has_the_events_and_names_around_an_entitys_edges_and_its_jobs(embedded):
    """ut18 #1: the events that added or removed an edge out of the entity were not in its subgraph, nor
    the names of the assets at the other end; #2: nor a DataHub job that reads or writes a dataset."""
    described = describe_triples(embedded, STG_O)
    subjects = {t.subject.value for t in described}
    outgoing = embedded.select("PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                               "SELECT ?up ?ev ?down WHERE { ?edge prov:entity ?up ; om:addedBy|om:removedBy ?ev . ?down prov:qualifiedDerivation ?edge }",
                               {"up": ox.NamedNode(STG_O)}).dicts()
    assert outgoing and {r["ev"].value for r in outgoing} <= subjects
    named = {t.subject.value for t in described if t.predicate.value.endswith("/urn")}
    assert {r["down"].value for r in outgoing} <= named
    jobs = run_query(embedded, get_query("job-candidates"), {"dataset": STG_O}).dicts()
    assert jobs and {r["job"].value for r in jobs} <= {t.object.value for t in described
                                                       if t.predicate.value.endswith("/affectsEntity")}


@pytest.mark.parametrize("pattern, says", [
    ("?x <https://open-metadata.org/schema/type/changeEvent/runOf> ?y", "is a run (a prov:Activity) of "),
    ("?y <http://www.w3.org/ns/prov#qualifiedDerivation> ?x", "is a lineage edge from "),
])
def test_describe_of_a_run_or_an_edge_says_what_to_describe(embedded, pattern, says):
    """ut18 #10: both were "in the store but [with] no provenance of its own"."""
    node = embedded.select(f"SELECT ?x WHERE {{ {pattern} }} LIMIT 1").rows[0][0]
    with pytest.raises(InputError, match=re.escape(says) + ".*: describe "):
        describe_triples(embedded, node.value)


def test_describe_of_a_datahub_run_names_its_job_not_its_record(tmp_path):
    """rv35 #7: a run with both om:runOf (its job) and om:runRecord (its dataProcessInstance) was said to
    be "of" whichever row came first."""
    t = 1_704_139_200_000
    job, dpi = "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,prod),load)", "urn:li:dataProcessInstance:abc123"
    events = [{**_dh_mcl(dpi, aspect, t, "1", value=value), "entityType": "dataProcessInstance"}
              for aspect, value in (("dataProcessInstanceRelationships", {"parentTemplate": job}),
                                    ("dataProcessInstanceRunEvent", {"timestampMillis": t, "status": "STARTED"}))]
    store = _store_of(events, tmp_path)
    (run,) = store.select("SELECT DISTINCT ?run WHERE { ?run <https://open-metadata.org/schema/type/changeEvent/runRecord> ?r }").rows
    with pytest.raises(InputError, match=re.escape(f"is a run (a prov:Activity) of {job}: describe ")):
        describe_triples(store, run[0].value)


def test_describe_says_when_its_jsonld_is_expanded(tmp_path, capsys):
    """ut45c #8: an entity whose subgraph has an IRI our context cannot compact came out as expanded
    JSON-LD (full IRIs, no @context) without a word; the same entity's Turtle needs no note. The mapper
    mints no such IRI (ut46a #2), another tool's triple beside an export can."""
    event = {"id": "w-1", "eventType": "entityCreated", "entityType": "table", "entityId": "abc",
             "entityFullyQualifiedName": "svc.weird", "timestamp": 1_704_139_200_000, "userName": "alice",
             "currentVersion": 0.1}
    odd = "https://open-metadata.org/entity///weird/abc"
    with _store_of([event], tmp_path) as store:
        store._store.add(ox.Quad(ox.NamedNode("https://open-metadata.org/entity/table/abc"),
                                 ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#seeAlso"), ox.NamedNode(odd)))
    assert main(["describe", "svc.weird", "--store", str(tmp_path / "db"), "--format", "jsonld"]) == 0
    out, err = capsys.readouterr()
    assert "@context" not in json.dumps(json.loads(out)) and odd in out
    assert err == (f"note: JSON-LD written expanded (full IRIs, no @context): <{odd}> "
                   "would compact to a string JSON-LD reads back as another IRI\n")
    assert main(["describe", "svc.weird", "--store", str(tmp_path / "db"), "--format", "turtle"]) == 0
    assert capsys.readouterr().err == ""


DISPLAY_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def _first_cell(fmt: str, out: str) -> str:
    if fmt == "json":
        return json.loads(out)["results"]["bindings"][0]["time"]["value"]
    if fmt == "csv":
        return list(csv.reader(io.StringIO(out)))[1][0]
    return out.splitlines()[2 if fmt == "table" else 1].split("\t" if fmt == "tsv" else "  ")[0]


@pytest.mark.parametrize("fmt, form", [("table", "display"), ("csv", "display"), ("tsv", "term"),
                                       ("json", "store"), ("nt", "term"), ("turtle", "store"), ("jsonld", "store")])
def test_one_time_reads_the_same_in_each_human_form_and_as_stored_in_machine_forms(db, embedded, capsys,
                                                                                    fmt, form):
    """A user's test: one om-event:timestamp read 2026-09-01T08:00:00.000Z in the table and
    2026-09-01T08:00:00Z in the audit. People see RFC 3339 UTC with milliseconds everywhere;
    SPARQL JSON, TSV and the RDF syntaxes carry the store's own lexical form."""
    from changeprov.sparql.formats import display_datetime

    term = run_query(embedded, get_query("entity-history"), {"entity": OM_ORDERS}).rows[0][0]
    assert term.datatype.value.endswith("#dateTime") and term.value == "2026-09-01T08:00:00Z"  # shortest
    expected = {"display": display_datetime(term.value), "store": term.value, "term": str(term)}[form]
    if fmt in ("nt", "turtle", "jsonld"):
        assert main(["describe", OM_ORDERS, "--store", str(db), "--format", fmt]) == 0
        assert expected in capsys.readouterr().out
        return
    assert main(["query", "entity-history", "--param", f"entity={OM_ORDERS}", "--store", str(db),
                 "--format", fmt]) == 0
    cell = _first_cell(fmt, capsys.readouterr().out)
    assert cell == expected and (form != "display" or DISPLAY_TIME.fullmatch(cell))


@pytest.mark.parametrize("node, relation", [
    ("urn:li:tag:PII", "addedTag"),
    ("PII.Sensitive", "addedTag"),
    ("Tier.Tier2", "removedTag"),
    ("urn:li:glossaryTerm:Finance.GrossMerchandiseValue", "removedGlossaryTerm"),
    ("urn:li:glossaryTerm:Classification.PersonalInformation", "addedGlossaryTerm"),
    ("https://w3id.org/changeprov/id/om/column/mysql_prod.ecommerce.sales.orders.legacy_coupon_code",
     "removedSchemaField"),
    # ut6a #4: a column known only from `columns.NAME.tags` changes, by the FQN a user types
    ("mysql_prod.ecommerce.sales.orders.customer_email", "aboutColumn"),
    # ut12 #5: a glossary term with events of its own: its FQN named the entity only, not where it was applied
    ("BusinessGlossary.Revenue", "addedGlossaryTerm"),
    # ut44c #7: a domain gave its type and URN alone
    ("urn:li:domain:marketing", "addedDomain"),
    ("urn:li:domain:finance", "removedDomain"),
])
def test_describe_of_a_tag_term_or_column_has_the_events_that_added_or_removed_it(embedded, remote, node, relation):
    """ut4a #5: a tag, glossary term or column gave a 3-triple stub with none of the events that used it.
    ut6a #4: a column that was only tagged was "no entity"."""
    a = describe_triples(embedded, node)
    assert {str(t) for t in a} == {str(t) for t in describe_triples(remote, node)}
    g = ox.Store()
    g.extend(ox.Quad(t.subject, t.predicate, t.object) for t in a)
    rows = list(g.query("PREFIX om: <https://open-metadata.org/schema/type/changeEvent/> "
                        "SELECT ?time ?name ?who WHERE { ?fc om:%s ?x . ?cd ?fields ?fc . "
                        "?ev om:hasChangeDescription ?cd ; om:timestamp ?time ; om:affectsEntity ?e ; "
                        "om:performedBy ?who . ?e om:fullyQualifiedName|om:urn ?name }" % relation))
    assert rows, f"describe {node}: no {relation} event with its time, user and the changed entity's name"


def test_describe_has_every_triple_of_the_versions_the_entitys_events_used(embedded):
    """ut44c #5: a version the log knows only as used and invalidated by an event (its generation is not
    in the log) lost its prov:wasInvalidatedBy."""
    entity = "urn:li:dataset:(urn:li:dataPlatform:hive,staging.orders_legacy,PROD)"
    shown = {str(t) for t in describe_triples(embedded, entity)}
    used = embedded.select("PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                           "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
                           "SELECT ?e ?s ?p ?o WHERE {\n#@bindings\n?ev om:affectsEntity ?e ; prov:used ?s . ?s ?p ?o }",
                           {"e": urn_iri(entity)}).dicts()
    assert any(r["p"].value.endswith("wasInvalidatedBy") for r in used)
    missing = {str(ox.Triple(r["s"], r["p"], r["o"])) for r in used} - shown
    assert not missing, missing


def test_entity_state_says_when_unversioned_changes_of_one_aspect_share_a_millisecond(tmp_path):
    """ut44d #1: two MCLs of globalTags in one millisecond without systemMetadata.version (the later one with
    the other's value as its previous value) were ordered by IRI, and the superseded tag was shown without a
    word."""
    t, urn = 1_719_792_000_000, DS("hive,db.m4")
    first = _dh_mcl(urn, "globalTags", t, "1", value={"tags": [{"tag": "urn:li:tag:PII"}]})
    later = _dh_mcl(urn, "globalTags", t, "2", value={"tags": [{"tag": "urn:li:tag:Gold"}]},
                    previous=("1", {"tags": [{"tag": "urn:li:tag:PII"}]}))
    said = "changes of globalTags in one millisecond (2024-07-01T00:00:00.000Z) carry no aspect version"
    for name, events, noted in (("versioned", [first, later], False), ("unversioned", [first, later], True)):
        if noted:
            for e in events:
                del e["systemMetadata"]["version"]
                e.pop("previousSystemMetadata", None)
        with _store_of(events, tmp_path / name) as store:
            answer = run_query(store, "entity-state", {"entity": urn})
            assert any(n.startswith(said) for n in answer.notes) == noted, answer.notes
            if not noted:
                assert [r["value"].value for r in answer.dicts()] == ["urn:li:tag:Gold"]


def test_a_datahub_user_with_odd_characters_is_named_as_typed(tmp_path):
    """ut44c #6: describe of the URN as typed said "no entity"; of its IRI form it suggested
    changes-by-user with the percent-encoded name, which that query then refused while suggesting it
    again; the suggested command was not quoted for a shell."""
    odd = 'urn:li:corpuser:odd "u" #1%'
    event = _dh_mcl(DS("hive,db.t"), "globalTags", 1_709_280_000_000, "1", value={"tags": [{"tag": "urn:li:tag:x"}]})
    event["created"]["actor"] = odd
    with _store_of([event], tmp_path) as store:
        for typed in (odd, urn_iri(odd).value):
            with pytest.raises(InputError) as exc:
                describe_triples(store, typed)
            assert str(exc.value).endswith("is a user (a prov:Agent), not a metadata entity: its changes are "
                                           "`changeprov query changes-by-user --param 'user=urn:li:corpuser:odd \"u\" #1%'`")
        rows = run_query(store, "changes-by-user", {"user": odd}).dicts()
        assert len(rows) == 1
        with pytest.raises(InputError, match=re.escape(f"users matching 'odd%20%22u%22%20%231%25': {odd}")):
            run_query(store, "changes-by-user", {"user": urn_iri(odd).value})


_NODE_OF = {  # a node of the corpus that is no metadata entity, found the way a user would meet it
    "event": f"SELECT ?node WHERE {{ ?node om:affectsEntity <{FCT}> }} ORDER BY ?node LIMIT 1",
    "version": f"SELECT ?node WHERE {{ ?node prov:specializationOf <{FCT}> }} ORDER BY ?node LIMIT 1",
    "team": "SELECT ?node WHERE { ?node a prov:Organization } ORDER BY ?node LIMIT 1",
    "om-user": "SELECT ?node WHERE { ?e om:userName 'alice.wong' ; om:performedBy ?node } LIMIT 1",
}


@pytest.mark.parametrize("kind, message", [
    ("datahub-user", "'urn:li:corpuser:alice' is a user (a prov:Agent), not a metadata entity: its changes are "
                     "`changeprov query changes-by-user --param user=urn:li:corpuser:alice`"),
    ("om-user", "is a user (a prov:Agent), not a metadata entity: its changes are "
                "`changeprov query changes-by-user --param user=alice.wong`"),
    ("team", "is a team (a prov:Organization), not a metadata entity"),
    # ut5a #10: the names a user types, not only the IRIs
    ("om-user-name", "'alice.wong' is a user (a prov:Agent), not a metadata entity: its changes are "
                     "`changeprov query changes-by-user --param user=alice.wong`"),
    ("team-name", "'DataPlatform' is a team (a prov:Organization), not a metadata entity"),
    # ut22 m7: impact and entity-state show a team owner so
    ("team-shown", "'team:DataPlatform' is a team (a prov:Organization), not a metadata entity"),
    ("event", f"is a change event, not a metadata entity: describe the entity it affected ({FCT})"),
    ("version", f"is a version of {FCT}: describe that entity"),
])
def test_describe_of_a_node_that_is_no_entity_says_what_it_is(store, kind, message):
    """A user's test: describe of a user, team, event or version IRI printed an empty document, exit 0."""
    named = {"datahub-user": "urn:li:corpuser:alice", "om-user-name": "alice.wong", "team-name": "DataPlatform",
             "team-shown": "team:DataPlatform"}
    if kind in named:
        value = named[kind]
    else:
        prefixes = "PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n" \
                   "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
        value = store.select(prefixes + _NODE_OF[kind]).rows[0][0].value
    with pytest.raises(InputError) as err:
        describe_triples(store, value)
    assert message in str(err.value)


def test_csv_and_table_times_have_milliseconds_and_versions_a_point(db, capsys):
    """A user's test: the store gives values in their shortest form (…05Z beside …05.13Z, version 2
    for OpenMetadata's 2.0), so a CSV time column sorted as text came out of order."""
    assert main(["query", "entity-history", "--param", f"entity={OM_ORDERS}", "--store", str(db),
                 "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["time"]) for r in rows)
    assert all("." in r["current_version"] for r in rows if r["current_version"])  # lineage events have none
    assert [r["time"] for r in rows] == sorted(r["time"] for r in rows)
    assert main(["query", "entity-history", "--param", f"entity={OM_ORDERS}", "--store", str(db)]) == 0
    assert "T08:00:00.000Z" in capsys.readouterr().out


@pytest.mark.parametrize("entity, note", [(ORDERS, True), (OM_ORDERS, False)])
def test_entity_state_at_a_version_of_an_unversioned_entity_says_why_it_is_empty(embedded, entity, note):
    """A user's test: version=… on a DataHub URN answered 0 rows, with nothing to say that DataHub
    events carry no version. An OpenMetadata entity before its first version says that (ut7a #7)."""
    rows = run_query(embedded, get_query("entity-state"), {"entity": entity, "version": "0.01"})
    assert rows.rows == [] and len(rows.notes) == 1
    assert ("only OpenMetadata events carry a currentVersion" in rows.notes[0]) == note
    assert rows.notes[0].endswith("it is before the entity's first version") != note


@pytest.mark.parametrize("entity, field, listed", [(OM_ORDERS, "TAGS", "columns.customer_email.tags, "),
                                                  (FCT, "owners", "OWNER, OWNERSHIP"),
                                                  (OM_ORDERS, "tags", None)])
def test_who_changed_a_field_the_entity_never_had_lists_the_fields_it_has(store, entity, field, listed):
    """ut5a #7: a misspelt or other tool's field name answered (0 rows) like "nobody changed it"."""
    rows = run_query(store, get_query("who-changed"), {"entity": entity, "field": field})
    if listed is None:
        assert rows.rows and rows.notes == []
    else:
        (note,) = rows.notes
        assert rows.rows == [] and f"no change of a field named {field!r}" in note and listed in note


def test_a_failing_service_call_is_a_clear_error_on_both_engines(store, tmp_path):
    """A user's test: with --allow-service, a SERVICE to a closed port gave a Python traceback and exit
    1 (embedded: the engine raises while rows are read; remote: oxigraph breaks off its streamed results)."""
    import socket

    from changeprov.errors import StoreError

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rq = tmp_path / "q.rq"
    rq.write_text(f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }} LIMIT 1\n")
    with pytest.raises(StoreError) as err:
        run_query(store, load_query_file(rq), allow_service=True)
    assert "\n" not in str(err.value) and "Connection refused" in str(err.value), str(err.value)


@pytest.mark.parametrize("brk", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_a_comment_line_with_a_line_break_python_splits_at_hides_no_service(store, tmp_path, brk):
    """rv43 H1: the guard read '# note<U+2028>SERVICE …' as one comment line; the remote store (and a
    VALUES block on the embedded one) split the text with splitlines, which put SERVICE on a line of its
    own: the request was sent."""
    from changeprov.sparql.queries import run_ask

    rq = tmp_path / "q.rq"
    rq.write_text(f"# summary: ask\n# param: x string required  a value\nASK WHERE {{\n#@bindings\n"
                  f"# note{brk}SERVICE <http://127.0.0.1:9/s> {{}}\nFILTER(?x = \"a\")\n}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="query text contains SERVICE"):
        run_ask(store, load_query_file(rq), {"x": "a"})


def test_a_value_cannot_end_a_long_string_that_holds_the_marker(store, tmp_path):
    """rv43 M1: a marker line inside a ''' string took the VALUES block there, and a value with '''
    ended the string: the rest of the value ran as query code (a SERVICE the guard never saw)."""
    from changeprov.sparql.queries import run_ask

    rq = tmp_path / "q.rq"
    rq.write_text("# summary: t\n# param: v string required  a value\nASK WHERE {\n#@bindings\n"
                  "  BIND('''\n#@bindings\n''' AS ?z)\n  FILTER(BOUND(?v) && CONTAINS(?z, \"AS ?y\"))\n}\n")
    value = "x''' AS ?y) SERVICE <http://127.0.0.1:9/s> {} BIND('''"
    assert run_ask(store, load_query_file(rq), {"v": value}) is True  # the value stayed in the string
    with pytest.raises(InputError, match="''' in an IRI"):
        values_block({"v": ox.NamedNode("http://x/a'''b")})


@pytest.mark.parametrize("tag, hint", [
    ("tier.tier2", "; did you mean: Tier.Tier2"),  # ut6a #11: users got suggestions, tags none
    ("PII.Sensitiv", "; names containing 'PII.Sensitiv': PII.Sensitive"),
    # ut25 #4: a tag named by a part of its name got no hint
    ("PII", "; names containing 'PII': PII.NonSensitive, PII.Sensitive, urn:li:tag:PII, urn:li:tag:pii"),
    ("urn:li:tag:Pii", "; did you mean: urn:li:tag:PII, urn:li:tag:pii"),
    ("Nothing.Like.It", ""),
])
def test_an_unknown_tag_gets_the_closest_names(embedded, tag, hint):
    with pytest.raises(InputError) as err:
        run_query(embedded, get_query("tag-changes"), {"tag": tag})
    assert str(err.value) == f"no tag with fullyQualifiedName, URN or IRI {tag!r} in the store{hint}"


@pytest.mark.parametrize("entity, hint", [
    # ut22 M5: an entity named in another case, in part or with a typo got no suggestion
    ("MYSQL_PROD.ecommerce.sales.orders", "; names containing 'MYSQL_PROD.ecommerce.sales.orders': "
                                          "mysql_prod.ecommerce.sales.orders, mysql_prod.ecommerce.sales.orders_staging_tmp"),
    ("mysql_prod.ecommerce.analytics.daily_revenu", "; names containing 'mysql_prod.ecommerce.analytics.daily_revenu': "
                                                    "mysql_prod.ecommerce.analytics.daily_revenue"),
    ("mysql_prod.ecomerce.sales.orders", "; did you mean: mysql_prod.ecommerce.sales.orders, "  # the closest first
                                         "mysql_prod.ecommerce.sales.orders.order_id, "
                                         "mysql_prod.ecommerce.sales.orders.created_at"),
    # rv37 #7: a column has no events of its own, so find-entity does not list it
    ("sales.orders.customer_email", "; names containing 'sales.orders.customer_email': "
                                    "mysql_prod.ecommerce.sales.orders.customer_email"),
    ("Nothing.Like.It", ""),
])
def test_an_unknown_entity_gets_the_closest_names(embedded, entity, hint):
    with pytest.raises(InputError) as err:
        run_query(embedded, "entity-history", {"entity": entity})
    assert str(err.value) == f"no entity with fullyQualifiedName, URN or IRI {entity!r} in the store{hint}"


def test_an_unknown_entity_in_a_big_store_gets_a_pointer_to_find_entity(embedded, monkeypatch):
    """Comparing names reads each from the store (~5 s for the 150k entities of a 22M-triple store)."""
    monkeypatch.setattr("changeprov.sparql.params.SUGGEST_MAX_ENTITIES", 10)
    with pytest.raises(InputError, match=r"; to search the names of its \d+ entities by a part, in any case: "
                                         r"changeprov query find-entity --param text=PART$"):
        run_query(embedded, "entity-history", {"entity": "mysql_prod.ecomerce.sales.orders"})


def test_event_types_count_the_corpus_lines_by_type(embedded, shared_dir):
    """What a store holds, counted from the corpus's lines without the mapper: an OpenMetadata
    eventType (entityUpdated is EntityUpdated) and a DataHub MCL changeType (UPSERT is MclUpsert)."""
    want: dict[str, list[str]] = {}
    for path, key, name in (("openmetadata/change_events.jsonl", "eventType", lambda v: v[0].upper() + v[1:]),
                            ("datahub/metadata_change_log.jsonl", "changeType", lambda v: "Mcl" + v.title())):
        for line in (shared_dir / "corpus" / path).read_text().splitlines():
            event = json.loads(line)
            time = event.get("timestamp") or event["created"]["time"]
            want.setdefault(name(event[key]), []).append(time)
    rows = {r["event_type"]: r for r in run_query(embedded, "event-types").python()}
    for kind, times in want.items():
        got = rows[kind]
        assert (got["events"], rfc3339_to_ms(got["first"].isoformat()), rfc3339_to_ms(got["last"].isoformat())) == (
            len(times), min(times), max(times)), kind
    # every event of the store has a type, so the types add up to all of them (platform events too)
    (total,) = embedded.select("PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                               "SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE { ?e om:timestamp ?t }").rows
    assert sum(r["events"] for r in rows.values()) == int(total[0].value) > sum(map(len, want.values()))


def test_find_entity_finds_names_by_part_in_any_case(embedded):
    rows = run_query(embedded, "find-entity", {"text": "CUSTOMER_LTV"}).python()
    assert [r["name"] for r in rows] == [JOB("build_customer_ltv"), LTV] and all(r["events"] > 0 for r in rows)


def test_a_time_before_the_entity_existed_says_so(embedded):
    """ut6a #11: as_of before the entity's first event answered '(0 rows)' like a state with nothing set."""
    rows = run_query(embedded, get_query("entity-state"), {"entity": OM_ORDERS, "as_of": "2020-01-01"})
    assert rows.rows == [] and rows.notes == [
        "as_of 2020-01-01T23:59:59.999Z is before the entity's first event (2026-09-01T08:00:00.000Z): "
        "the log knows nothing of it yet"]
    at_creation = run_query(embedded, get_query("entity-state"), {"entity": OM_ORDERS, "as_of": "1788249600000"})
    assert at_creation.rows and not at_creation.notes


@pytest.mark.parametrize("field", ["OWNER", "OWNERSHIP"])
def test_who_changed_owners_under_either_name_of_the_category(store, field):
    """ut14 #3: DataHub renamed the change category OWNER to OWNERSHIP; field=OWNER missed every change
    after the rename (fct_orders: bob removed and alice's type changed in 2026)."""
    rows = run_query(store, get_query("who-changed"), {"entity": FCT, "field": field}).dicts()
    assert sorted((r["time"].value[:4], r["field_name"].value, r["change"].value) for r in rows) == [
        ("2024", "OWNER", "added"), ("2024", "OWNER", "added"), ("2026", "OWNERSHIP", "deleted"),
        ("2026", "OWNERSHIP", "updated")]


def test_the_owners_note_says_when_the_two_views_disagree(tmp_path):
    """ut25 #5: the note said OWNERSHIP and ownership "list the same owners" of rows that named two: an
    owner added by a change event alone is in that view only."""
    t, ds = 1_704_139_200_000, DS("hive,db.t")
    owners = {"owners": [{"owner": "urn:li:corpuser:erin", "type": "TECHNICAL_OWNER"}]}
    ece = {"entityType": "dataset", "entityUrn": ds, "category": "OWNER", "operation": "ADD",
           "modifier": "urn:li:corpuser:frank", "auditStamp": {"time": t + 1000, "actor": "urn:li:corpuser:frank"},
           "parameters": {"ownerUrn": "urn:li:corpuser:frank", "ownerType": "BUSINESS_OWNER"}}
    store = _store_of([_dh_mcl(ds, "ownership", t, "1", value=owners), ece], tmp_path)
    rows = run_query(store, "entity-state", {"entity": ds})
    assert sorted((r["field"], r["value"]) for r in rows.python()) == [
        ("OWNERSHIP", "urn:li:corpuser:frank"), ("ownership", "urn:li:corpuser:erin")]
    (note,) = rows.notes
    assert note.endswith("ownership name different owners here: each view has only the changes DataHub sent in "
                         "it (impact names the owners of both)")
    # rv43 M2: a user's query file asks for the note without the values: no word on the owners, no crash
    rq = tmp_path / "views.rq"
    rq.write_text('# summary: fields only\n# if-rows: datahub-views\nSELECT ?field WHERE { VALUES ?field { "ownership" "OWNER" } }\n')
    (note,) = run_query(store, load_query_file(rq)).notes
    assert note.startswith("DataHub reports a change twice") and "list the same owners" not in note, note
    # ut43a #4: an aspect and a category that report different changes are not one change twice
    rq.write_text('# summary: fields only\n# if-rows: datahub-views\nSELECT ?field WHERE { VALUES ?field { "upstreamLineage" "OWNER" } }\n')
    assert run_query(store, load_query_file(rq)).notes == []
    # rv43 #4: a run's events and its run-event aspect, a key aspect and LIFECYCLE are one change twice
    for pair in (("dataProcessInstanceRunEvent", "RUN"), ("datasetKey", "LIFECYCLE"), ("institutionalMemory", "DOCUMENTATION")):
        rq.write_text('# summary: fields only\n# if-rows: datahub-views\nSELECT ?field WHERE { VALUES ?field { "%s" "%s" } }\n' % pair)
        assert len(run_query(store, load_query_file(rq)).notes) == 1, pair


def test_a_datahub_state_says_it_lists_aspects_and_change_categories(embedded):
    """ut6a #7: fct_orders' state lists OWNER and ownership (and DOMAIN and domains) with no word on why."""
    rows = run_query(embedded, get_query("entity-state"), {"entity": FCT})
    fields = {r[0].value for r in rows.rows}
    assert {"OWNERSHIP", "ownership", "DOMAIN", "domains"} <= fields and "OWNER" not in fields
    (note,) = rows.notes
    assert note.startswith("DataHub reports a change twice and both views are listed: as an aspect")
    assert "here datasetKey, domains, glossaryTerms, ownership," in note and "APPLICATION, DOMAIN," in note
    assert note.endswith("; OWNERSHIP (also the older OWNER) and ownership list the same owners")
    # one view only (before fct_orders' first change event), or an OpenMetadata entity: no note
    early = run_query(embedded, get_query("entity-state"), {"entity": FCT, "as_of": "2024-03-03"})
    assert early.rows and not early.notes
    assert not run_query(embedded, get_query("entity-state"), {"entity": OM_ORDERS}).notes


def test_a_relationship_change_is_neither_view_of_a_datahub_state():
    """ut41c #9: a relationship change (DownstreamOf) beside change-event categories was called an aspect
    from a MetadataChangeLog."""
    from changeprov.sparql.stores import Rows

    def note(*fields):
        return notes.ROW_CHECKS["datahub-views"](None, {}, Rows(["field"], [(ox.Literal(f),) for f in fields]))

    assert note("DownstreamOf", "OWNERSHIP") == []
    (both,) = note("DownstreamOf", "OWNERSHIP", "ownership")
    assert "as an aspect (its MetadataChangeLog; here ownership:" in both


def _renamed_table_events() -> list[dict]:
    """A table created as s.d.x.old_name with PII, lineage to s.d.x.down, renamed (the id stays, the
    FQN changes: OpenMetadata's fieldsUpdated name), then soft-deleted under its new name."""
    t = 1_704_139_200_000
    common = {"entityType": "table", "entityId": "t-9"}
    old, new = "s.d.x.old_name", "s.d.x.new_name"
    return [
        {**common, "id": "r-1", "eventType": "entityCreated", "entityFullyQualifiedName": old, "userName": "ann",
         "timestamp": t, "previousVersion": 0.1, "currentVersion": 0.1,
         "entity": {"id": "t-9", "tags": [{"tagFQN": "PII.Sensitive"}],
                    "columns": [{"name": "email", "fullyQualifiedName": old + ".email"}]}},
        {"id": "r-2", "eventType": "entityLineageAdded", "entityType": "table", "entityId": "t-10",
         "userName": "ann", "timestamp": t + 1000,
         "entity": {"fromEntity": {"type": "table", "id": "t-9", "fullyQualifiedName": old},
                    "toEntity": {"type": "table", "id": "t-10", "fullyQualifiedName": "s.d.x.down"}}},
        {**common, "id": "r-3", "eventType": "entityUpdated", "entityFullyQualifiedName": new, "userName": "bob",
         "timestamp": t + 2000, "previousVersion": 0.1, "currentVersion": 0.2,
         "changeDescription": {"fieldsAdded": [], "fieldsDeleted": [], "previousVersion": 0.1,
                               "fieldsUpdated": [{"name": "name", "oldValue": "old_name", "newValue": "new_name"}]}},
        {**common, "id": "r-4", "eventType": "entitySoftDeleted", "entityFullyQualifiedName": new, "userName": "bob",
         "timestamp": t + 3000, "previousVersion": 0.2, "currentVersion": 0.3},
    ]


def test_a_renamed_entity_is_one_row_per_change_named_as_it_was_then(tmp_path):
    """ut7a #1: a renamed OpenMetadata entity has two fullyQualifiedNames, and every query that showed
    its name answered each row once per name (changes-by-user: 6 rows for 3 changes)."""
    store = _store_of(_renamed_table_events(), tmp_path)
    by_bob = run_query(store, get_query("changes-by-user"), {"user": "ann"}).dicts()
    assert [r["entity_name"].value for r in by_bob] == ["s.d.x.old_name", "s.d.x.down"]
    top = run_query(store, get_query("audit-top-entities"), {}).dicts()
    assert [(r["entity_name"].value, r["events"].value) for r in top] == [
        ("s.d.x.new_name (formerly s.d.x.old_name)", "3"), ("s.d.x.down", "1")]
    down = run_query(store, get_query("upstream"), {"entity": "s.d.x.down"}).dicts()
    assert [r["asset_name"].value for r in down] == ["s.d.x.new_name (formerly s.d.x.old_name)"]
    # no named query answers a row twice, once per name
    values = {"entity": "s.d.x.new_name", "user": "bob", "tag": "PII.Sensitive"}
    for q in list_queries():
        required = [p for p in q.params if p.required]
        if any(p.name not in values for p in required):
            continue
        rows = run_query(store, q, {p.name: values[p.name] for p in q.params if p.name in values})
        keep = [i for i, v in enumerate(rows.variables) if not v.endswith("_name") and v not in ("via", "cascaded_from")]
        seen = [tuple(r[i] for i in keep) for r in rows.rows]
        assert len(seen) == len(set(seen)), (q.name, rows.rows)
    assert main(["check", "--store", str(tmp_path / "db")]) == 0  # a rename is no broken provenance


def test_lineage_events_name_a_renamed_end_as_it_was_named_then(tmp_path):
    """ut45a #1, #2: a lineage event names no entity of its own (its name is the edge's), so changes-by-user
    named its renamed entity by its later name, and entity-history listed a renamed end once per name it
    ever had ("+upstream s.d.x.old_name, +upstream s.d.x.new_name": one edge read as two)."""
    t = 1_704_139_200_000

    def lineage(n: int, at: int, user: str, up: tuple[str, str], down: tuple[str, str]) -> dict:
        return {"id": f"l-{n}", "eventType": "entityLineageAdded", "entityType": "table", "entityId": down[0],
                "userName": user, "timestamp": at,
                "entity": {"fromEntity": {"type": "table", "id": up[0], "fullyQualifiedName": up[1]},
                           "toEntity": {"type": "table", "id": down[0], "fullyQualifiedName": down[1]}}}

    events = _renamed_table_events() + [
        lineage(1, t + 500, "cy", ("t-20", "s.d.x.src"), ("t-9", "s.d.x.old_name")),  # into t-9 before its rename
        lineage(2, t + 2500, "cy", ("t-9", "s.d.x.new_name"), ("t-11", "s.d.x.down2"))]  # from it after
    store = _store_of(events, tmp_path)
    by_cy = run_query(store, get_query("changes-by-user"), {"user": "cy"}).dicts()
    assert [(r["entity_name"].value, r["fields_changed"].value) for r in by_cy] == [
        ("s.d.x.old_name", "+upstream s.d.x.src"), ("s.d.x.down2", "+upstream s.d.x.new_name")]
    by_ann = run_query(store, get_query("changes-by-user"), {"user": "ann"}).dicts()
    assert [r["fields_changed"].value for r in by_ann if r["entity_name"].value == "s.d.x.down"] == [
        "+upstream s.d.x.old_name"]
    history = lambda entity: [r["fields_changed"].value for r in  # noqa: E731
                              run_query(store, get_query("entity-history"), {"entity": entity}).dicts()
                              if r["fields_changed"] is not None]
    assert history("s.d.x.down") == ["+upstream s.d.x.old_name"]
    assert history("s.d.x.down2") == ["+upstream s.d.x.new_name"]
    assert history("s.d.x.src") == ["+downstream s.d.x.old_name"]
    assert "+downstream s.d.x.down" in history("s.d.x.new_name")


@pytest.mark.parametrize("variant", ["name reused", "comma in the name"])
def test_a_renamed_end_is_named_once_when_its_old_name_is_reused_or_holds_a_comma(tmp_path, variant):
    """rv45 #1, #2: the ends were found by name (a name a later entity took named two nodes, and was left
    alone) and items split at ", " (a quoted OpenMetadata name holds one)."""
    t = 1_704_139_200_000
    events = _renamed_table_events()
    old = "s.d.x.old_name"
    if variant == "name reused":
        events.append({"id": "r-9", "eventType": "entityCreated", "entityType": "table", "entityId": "t-30",
                       "entityFullyQualifiedName": old, "userName": "zed", "timestamp": t + 2500,
                       "previousVersion": 0.1, "currentVersion": 0.1, "entity": {"id": "t-30"}})
    else:
        old = 's.d.x."old, name"'
        events = json.loads(json.dumps(events).replace("s.d.x.old_name", 's.d.x.\\"old, name\\"'))
    store = _store_of(events, tmp_path)
    by_ann = run_query(store, get_query("changes-by-user"), {"user": "ann"}).dicts()
    assert [r["fields_changed"].value for r in by_ann if r["entity_name"].value == "s.d.x.down"] == [f"+upstream {old}"]
    history = run_query(store, get_query("entity-history"), {"entity": "s.d.x.down"}).dicts()
    assert [r["fields_changed"].value for r in history if r["fields_changed"] is not None] == [f"+upstream {old}"]


@pytest.mark.parametrize("entity, runs", [
    ("airflow_prod.daily_revenue_etl", 2),  # OpenMetadata pipelineStatus: its runs (runOf)
    (FCT, 1),  # the DataHub dataProcessInstance run that generated it
    ("urn:li:dataJob:(urn:li:dataFlow:(airflow,shop_etl,prod),build_fct_orders)", 1),  # runOf
])
def test_describe_shows_the_runs_of_a_pipeline_and_of_what_they_used_or_made(embedded, remote, entity, runs):
    """ut7a #3: describe named a run (fct_orders prov:wasGeneratedBy run) but never described one."""
    triples = describe_triples(embedded, entity)
    assert {str(t) for t in triples} == {str(t) for t in describe_triples(remote, entity)}
    run_type = "https://open-metadata.org/schema/type/changeEvent/Run"
    described = {t.subject for t in triples if t.predicate.value.endswith("#type") and t.object.value == run_type}
    assert len(described) == runs
    for run in described:  # its status and times, not only its type
        props = {t.predicate.value.rsplit("/", 1)[-1].rsplit("#", 1)[-1] for t in triples if t.subject == run}
        assert {"executionStatus", "startedAtTime"} <= props, props


def test_describe_has_the_datahub_proposals_for_the_entity(embedded, remote):
    """ut14 #4: proposals (action requests) for customer_ltv were written (om:proposalFor) but nothing
    read them: describe of the dataset now has the events that proposed something on it."""
    triples = describe_triples(embedded, LTV)
    assert {str(t) for t in triples} == {str(t) for t in describe_triples(remote, LTV)}
    g = ox.Store()
    g.extend(ox.Quad(t.subject, t.predicate, t.object) for t in triples)
    rows = list(g.query("PREFIX om: <https://open-metadata.org/schema/type/changeEvent/> SELECT ?who ?what WHERE { "
                        f"?ev om:proposalFor <{LTV}> ; om:performedBy ?who ; om:hasChangeDescription ?cd . "
                        "?cd ?rel ?fc . ?fc om:newValue ?what }"))
    assert len(rows) == 4 and all("actionRequestType" in r["what"].value for r in rows)


def test_describe_of_a_child_a_recursive_delete_took_has_the_delete(embedded):
    """ut7a #4: entity-history showed the cascading delete of OldMargin, describe did not."""
    triples = describe_triples(embedded, "BusinessGlossary.LegacyKPI.OldMargin")
    cascades = [t for t in triples if t.predicate.value.endswith("/cascadesTo")]
    assert len(cascades) == 1
    event = cascades[0].subject
    assert any(t.subject == event and t.predicate.value.endswith("/lifecycleChange")
               and t.object.value.endswith("/HardDeleted") for t in triples)


@pytest.mark.parametrize("version, note", [
    ("1.0", "version 1.0 is not a version of this entity (0.1, 0.2, 0.3, 0.4, 0.5, 1.5): the state shown is at 0.5, "
            "its last version before it"),
    ("9", "version 9 is not a version of this entity (0.1, 0.2, 0.3, 0.4, 0.5, 1.5): the state shown is at 1.5, "
          "its last version before it"),
    ("-1", "version -1 is not a version of this entity (0.1, 0.2, 0.3, 0.4, 0.5, 1.5): it is before the entity's "
           "first version"),
    ("0.5", None),
])
def test_a_version_the_entity_never_had_says_so(store, version, note):
    """ut7a #7: version=1.0 of an entity at 0.5 then 1.5 answered 0.5's state as if 1.0 had existed."""
    rows = run_query(store, get_query("entity-state"), {"entity": OM_ORDERS, "version": version})
    assert bool(rows.rows) == (version != "-1")
    assert rows.notes == ([note] if note else [])


def test_an_impersonator_is_told_where_its_changes_are(store):
    """ut7a #6: the bot that audit says made a change on behalf of david.kim had "(0 rows)"."""
    bot = run_query(store, get_query("changes-by-user"), {"user": "metadata-agent-bot"})
    assert bot.rows == [] and bot.notes == [
        "metadata-agent-bot also made 1 change(s) on behalf of other users (om-event:impersonatedBy), listed under "
        "the users they acted for; `changeprov audit` lists them as impersonated"]
    before = run_query(store, get_query("changes-by-user"), {"user": "metadata-agent-bot", "until": "2020-01-01"})
    assert before.rows == [] and before.notes == []
    assert not run_query(store, get_query("changes-by-user"), {"user": "david.kim"}).notes


@pytest.mark.parametrize("query, entity, as_of, want", [
    # OpenMetadata: entityLineageUpdated (09-04) restated the column lineage with order_status added
    ("upstream", OM_DR + ".net_revenue", "2026-09-02", {OM_ORDERS + ".order_total": 1}),
    ("upstream", OM_DR + ".net_revenue", "2026-09-05", {OM_ORDERS + ".order_total": 1, OM_ORDERS + ".order_status": 1}),
    ("downstream", OM_ORDERS + ".order_total", "2026-09-05", {OM_DR + ".gross_revenue": 1, OM_DR + ".net_revenue": 1}),
    ("impact", OM_ORDERS + ".order_status", "2026-09-05", {OM_DR + ".net_revenue": 1}),
    # DataHub: fineGrainedLineages from 2024-03-10 on
    ("upstream", f"urn:li:schemaField:({FCT},net_amount)", "2024-03-05", {}),
    ("upstream", f"urn:li:schemaField:({FCT},net_amount)", "2024-03-12",
     {f"urn:li:schemaField:({STG_O},amount)": 1, f"urn:li:schemaField:({STG_O},discount)": 1}),
])
def test_the_lineage_of_a_column_in_the_corpus(store, query, entity, as_of, want):
    """ut7a #5: upstream of a column answered "(0 rows)" though the column has lineage edges."""
    rows = run_query(store, get_query(query), {"entity": entity, "as_of": as_of})
    assert {r["asset_name"].value: int(r["hops"].value) for r in rows.dicts()} == want
    assert rows.notes == ([] if want else [
        "this is a column: its lineage follows column-level edges (OpenMetadata columnsLineage, DataHub "
        "fineGrainedLineages), and none of them was valid at that time; the lineage of its table is in "
        "upstream/downstream of the table"])
    table = run_query(store, get_query(query), {"entity": OM_DR, "as_of": as_of})
    assert not [n for n in table.notes if "column" in n]  # (before 2026 its edges' first add is the note)


@pytest.mark.parametrize("entity, as_of, want", [
    # OpenMetadata: daily_revenue <- orders, added 09-01 with one SQL, updated 09-04 with another
    (OM_DR, "2026-09-02", [("mysql_prod.ecommerce.sales.orders", "SUM(order_total) * 0.97", "PipelineLineage",
                            "airflow_prod.daily_revenue_etl", None)]),
    (OM_DR, "2026-09-05", [("mysql_prod.ecommerce.sales.orders", "SUM(refund_total)", "PipelineLineage",
                            "airflow_prod.daily_revenue_etl", None)]),
    # a column edge's transform
    (OM_DR + ".gross_revenue", "2026-09-02", [("mysql_prod.ecommerce.sales.orders.order_total", None, None, None,
                                                "SUM")]),
])
def test_lineage_details_are_those_stated_last_by_the_time_asked(store, entity, as_of, want):
    """ut7a #2: after entityLineageUpdated the edge held both SQL texts, with nothing saying which held when."""
    rows = run_query(store, get_query("lineage-details"), {"entity": entity, "as_of": as_of}).dicts()
    got = [(r["upstream_name"].value, r["sql"] and r["sql"].value, r["source"] and r["source"].value,
            r["pipeline_name"] and r["pipeline_name"].value, r["transform"] and r["transform"].value) for r in rows]
    assert len(got) == len(want)
    for (name, sql, source, pipeline, transform), (w_name, w_sql, w_source, w_pipeline, w_transform) in zip(got, want):
        assert (name, source, pipeline, transform) == (w_name, w_source, w_pipeline, w_transform)
        assert (w_sql is None and sql is None) or (w_sql in sql and sql.count("INSERT") == 1)


def test_lineage_details_of_a_datahub_edge_give_its_type(store):
    rows = run_query(store, get_query("lineage-details"), {"entity": FCT, "as_of": "2024-03-12"}).dicts()
    assert rows and all(r["source"] is not None and r["sql"] is None for r in rows)
    assert len({r["upstream"] for r in rows}) == len(rows)


def test_a_dropped_struct_column_takes_its_nested_columns_values_with_it(tmp_path):
    """ut7b #2: dropping addr kept columns.addr.zip.tags PII.Sensitive and addr.street's description for good."""
    addr = {"name": "addr", "fullyQualifiedName": "s.d.x.t.addr", "children": [
        {"name": "zip", "fullyQualifiedName": "s.d.x.t.addr.zip", "tags": [{"tagFQN": "PII.Sensitive"}]},
        {"name": "street", "fullyQualifiedName": "s.d.x.t.addr.street"}]}
    events = _created_described_dropped([{"name": "id", "fullyQualifiedName": "s.d.x.t.id"}, addr],
                                        {"columns.addr.street.description": "street"}, [addr], last=0.3)
    store = _store_of(events, tmp_path)

    def fields(version):
        return sorted({r["field"].value for r in run_query(
            store, get_query("entity-state"), {"entity": "s.d.x.t", "version": version}).dicts()})

    assert fields("0.2") == ["columns", "columns.addr", "columns.addr.street.description", "columns.addr.zip.tags"]
    assert fields("0.3") == ["columns"]
    # ut26 R2: and the tag a nested column took with it is removed, by whom and when
    tags = run_query(store, get_query("tag-changes"), {"tag": "PII.Sensitive"}).dicts()
    assert [(r["action"].value, r["field"].value, r["user"].value) for r in tags] == [
        ("added", "columns.addr.zip.tags", "ingestion-bot"), ("removed", "columns.addr.zip.tags", "bob")]


def test_a_nested_column_dropped_from_a_struct_that_stays_takes_its_tags_with_it(tmp_path):
    """OpenMetadata names a change of a struct column's nested columns after the struct (fieldsDeleted
    ``columns.addr``, its oldValue the nested columns dropped). Such a change was a plain value: the
    dropped zip kept PII.Sensitive in the table's state for good, no removal was listed, and the state
    showed the change's JSON text as the value of ``columns.addr``."""
    t = 1_704_139_200_000
    pii = [{"tagFQN": "PII.Sensitive", "source": "Classification"}]
    zip_ = {"name": "zip", "fullyQualifiedName": "s.d.x.t.addr.zip", "tags": pii, "children": [
        {"name": "plus4", "fullyQualifiedName": "s.d.x.t.addr.zip.plus4", "tags": [{"tagFQN": "PII.NonSensitive"}]}]}
    geo = {"name": "geo", "fullyQualifiedName": "s.d.x.t.addr.geo", "children": [{"name": "lat"}]}
    addr = {"name": "addr", "fullyQualifiedName": "s.d.x.t.addr", "dataType": "STRUCT",
            "children": [zip_, {"name": "street", "fullyQualifiedName": "s.d.x.t.addr.street"}, geo]}
    common = {"entityType": "table", "entityId": "t-1", "entityFullyQualifiedName": "s.d.x.t"}
    events = [
        {**common, "id": "n-1", "eventType": "entityCreated", "userName": "ingestion-bot", "timestamp": t,
         "previousVersion": 0.1, "currentVersion": 0.1, "entity": {"id": "t-1", "columns": [addr]}},
        # zip dropped and zip5 added below addr; a nested column without its FQN is keyed below its struct
        {**common, "id": "n-2", "eventType": "entityUpdated", "userName": "bob", "timestamp": t + 60_000,
         "previousVersion": 0.1, "currentVersion": 1.1,
         "changeDescription": {"previousVersion": 0.1, "fieldsUpdated": [],
                               "fieldsAdded": [{"name": "columns.addr", "newValue": json.dumps([{"name": "zip5"}])}],
                               "fieldsDeleted": [{"name": "columns.addr", "oldValue": json.dumps([zip_])}]}},
        # two levels down: geo's lat dropped (its change named columns.addr.geo)
        {**common, "id": "n-3", "eventType": "entityUpdated", "userName": "cy", "timestamp": t + 120_000,
         "previousVersion": 1.1, "currentVersion": 2.1,
         "changeDescription": {"previousVersion": 1.1, "fieldsUpdated": [], "fieldsAdded": [],
                               "fieldsDeleted": [{"name": "columns.addr.geo", "oldValue": json.dumps([{"name": "lat"}])}]}},
    ]
    store = _store_of(events, tmp_path)

    def state(version):
        return [(r["field"].value, r["value"].value) for r in run_query(
            store, get_query("entity-state"), {"entity": "s.d.x.t", "version": version}).dicts()]

    assert state("0.1") == [
        ("columns", "s.d.x.t.addr"), ("columns.addr", "s.d.x.t.addr.geo"), ("columns.addr", "s.d.x.t.addr.street"),
        ("columns.addr", "s.d.x.t.addr.zip"), ("columns.addr.geo", "s.d.x.t.addr.geo.lat"),
        ("columns.addr.zip", "s.d.x.t.addr.zip.plus4"), ("columns.addr.zip.plus4.tags", "PII.NonSensitive"),
        ("columns.addr.zip.tags", "PII.Sensitive")]
    assert state("1.1") == [
        ("columns", "s.d.x.t.addr"), ("columns.addr", "s.d.x.t.addr.geo"), ("columns.addr", "s.d.x.t.addr.street"),
        ("columns.addr", "s.d.x.t.addr.zip5"), ("columns.addr.geo", "s.d.x.t.addr.geo.lat")]
    assert state("2.1") == [
        ("columns", "s.d.x.t.addr"), ("columns.addr", "s.d.x.t.addr.geo"), ("columns.addr", "s.d.x.t.addr.street"),
        ("columns.addr", "s.d.x.t.addr.zip5")]
    for tag, field in (("PII.Sensitive", "columns.addr.zip.tags"), ("PII.NonSensitive", "columns.addr.zip.plus4.tags")):
        rows = run_query(store, get_query("tag-changes"), {"tag": tag}).dicts()
        assert [(r["action"].value, r["field"].value, r["user"].value) for r in rows] == [
            ("added", field, "ingestion-bot"), ("removed", field, "bob")]


def _renamed_and_name_reused_events() -> list[dict]:
    """_renamed_table_events, then t-11 created under t-9's former name s.d.x.old_name (20:00:02.5)."""
    return _renamed_table_events() + [
        {"id": "r-5", "eventType": "entityCreated", "entityType": "table", "entityId": "t-11",
         "entityFullyQualifiedName": "s.d.x.old_name", "userName": "cy", "timestamp": 1_704_139_200_000 + 2500,
         "previousVersion": 0.1, "currentVersion": 0.1, "entity": {"id": "t-11"}}]


def test_a_name_reused_after_a_rename_names_the_entity_that_holds_it_now(tmp_path):
    """ut7b #4: after t-9 was renamed away from s.d.x.old_name and t-11 was created under it, every
    command refused s.d.x.old_name as ambiguous."""
    store = _store_of(_renamed_and_name_reused_events(), tmp_path)
    rows = run_query(store, get_query("entity-history"), {"entity": "s.d.x.old_name"})
    assert [r["user"].value for r in rows.dicts()] == ["cy"]
    assert rows.notes == [
        "'s.d.x.old_name' also named 1 other entity before a rename (https://open-metadata.org/entity/table/t-9, "
        "now s.d.x.new_name); answering for the one that holds the name now, https://open-metadata.org/entity/table/t-11"]
    # ut40 #6: find-entity lists t-9 under the name it gave up; passing that name would name t-11
    found = run_query(store, get_query("find-entity"), {"text": "old_name"})
    assert [(r["name"].value, r["entity"].value.rsplit("/", 1)[1]) for r in found.dicts()] == [
        ("s.d.x.old_name", "t-11"), ("s.d.x.old_name", "t-9")]
    assert found.notes == ["'s.d.x.old_name' is a name https://open-metadata.org/entity/table/t-9 had before a rename "
                           "(now s.d.x.new_name): as entity= it names the entity that holds it now, if one does; "
                           "pass 's.d.x.new_name' or the IRI for this one"]


@pytest.mark.parametrize("as_of, holder, down", [
    ("2024-01-01T20:00:01.500Z", "t-9", ["s.d.x.down"]),  # before the rename: t-9 held the name
    ("2024-01-01T20:00:02.700Z", "t-11", []),  # t-11 holds it since 20:00:02.5
    (None, "t-11", []),
])
def test_a_question_as_of_a_time_is_about_the_entity_that_held_the_name_then(tmp_path, as_of, holder, down):
    """ut40 #2: downstream and impact of s.d.x.old_name as of a time when t-9 held the name answered for
    t-11, which held it only later: 0 rows, where t-9's lineage was in the store."""
    store = _store_of(_renamed_and_name_reused_events(), tmp_path)
    for query in ("downstream", "impact"):
        rows = run_query(store, get_query(query), {"entity": "s.d.x.old_name", "as_of": as_of})
        assert [r["asset_name"].value for r in rows.dicts()] == down
        assert rows.notes[0].endswith("https://open-metadata.org/entity/table/" + holder)
        assert ("held the name at" in rows.notes[0]) == (as_of is not None)


def test_as_of_before_a_hard_delete_is_about_the_entity_deleted_not_the_one_created_again(column_lineage_store):
    """ut40 #2: s.d.x.down2 was hard-deleted on day 3 and created again (a new id) half a day later; its
    upstream as of day 2 answered for the new table, which had no lineage then."""
    rows = run_query(column_lineage_store, get_query("upstream"), {"entity": "s.d.x.down2", "as_of": "2024-01-03T12:00:00Z"})
    assert [(r["asset_name"].value, r["hops"].value) for r in rows.dicts()] == [("s.d.x.down", "1"), ("s.d.x.up", "2")]
    assert rows.notes[0].endswith("held the name at 2024-01-03T12:00:00.000Z, https://open-metadata.org/entity/table/down2")
    later = run_query(column_lineage_store, get_query("upstream"), {"entity": "s.d.x.down2", "as_of": "2024-01-05T12:00:00Z"})
    assert later.notes[0].endswith("https://open-metadata.org/entity/table/down2new")


def test_a_cascaded_child_shows_its_parents_delete_and_restore_without_the_parents_versions(tmp_path):
    """ut7b #7: the child's history showed the parent's versions on the cascading delete (0.1 -> 0.2, as if
    the child reached 0.2 twice) and never the parent's restore, which deleted-entities said restored it."""
    t = 1_704_139_200_000
    common = {"entityType": "glossaryTerm", "entityId": "p-1", "entityFullyQualifiedName": "G.P", "userName": "ann"}
    kid = {"entityType": "glossaryTerm", "entityId": "k-1", "entityFullyQualifiedName": "G.P.K", "userName": "ann"}
    events = [
        {**kid, "id": "c-1", "eventType": "entityCreated", "timestamp": t, "previousVersion": 0.1,
         "currentVersion": 0.1, "entity": {"id": "k-1"}},
        {**common, "id": "c-2", "eventType": "entitySoftDeleted", "timestamp": t + 1000, "previousVersion": 0.1,
         "currentVersion": 0.2, "recursive": True,
         "entity": {"id": "p-1", "children": [{"type": "glossaryTerm", "id": "k-1", "fullyQualifiedName": "G.P.K"}]}},
        {**common, "id": "c-3", "eventType": "entityRestored", "timestamp": t + 2000, "previousVersion": 0.2,
         "currentVersion": 0.3},
    ]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("entity-history"), {"entity": "G.P.K"}).dicts()
    assert [(r["event_type"].value, r["previous_version"] and r["previous_version"].value,
             r["current_version"] and r["current_version"].value) for r in rows] == [
        ("EntityCreated", "0.1", "0.1"), ("EntitySoftDeleted", None, None), ("EntityRestored", None, None)]
    described = describe_triples(store, "G.P.K")
    assert any(t.predicate.value.endswith("/lifecycleChange") and t.object.value.endswith("/Restored")
               for t in described)


def test_the_version_note_writes_versions_as_the_tables_do(tmp_path):
    """ut7b #8: the note said "at 2" where entity-history shows 2.0."""
    t = 1_704_139_200_000
    common = {"entityType": "table", "entityId": "t-1", "entityFullyQualifiedName": "s.d.x.v", "userName": "ann"}
    store = _store_of([
        {**common, "id": "v-1", "eventType": "entityCreated", "timestamp": t, "previousVersion": 1.0,
         "currentVersion": 1.0, "entity": {"id": "t-1", "tags": [{"tagFQN": "A.B"}]}},
        {**common, "id": "v-2", "eventType": "entityUpdated", "timestamp": t + 1, "previousVersion": 1.0,
         "currentVersion": 2.0, "changeDescription": {"fieldsAdded": [{"name": "description", "newValue": "d"}],
                                                     "fieldsUpdated": [], "fieldsDeleted": []}}], tmp_path)
    rows = run_query(store, get_query("entity-state"), {"entity": "s.d.x.v", "version": "2.5"})
    assert rows.notes == ["version 2.5 is not a version of this entity (1.0, 2.0): the state shown is at 2.0, "
                          "its last version before it"]


@pytest.mark.parametrize("created_at, duplicate", [(2500, False), (1500, True)])
def test_a_name_given_up_by_a_rename_is_no_duplicate_name(tmp_path, created_at, duplicate):
    """ut7b #3: t-9, renamed from s.d.x.old_name to s.d.x.new_name, and t-11, created as s.d.x.old_name an
    hour later, were "two live entities with one fullyQualifiedName". Before the rename they are."""
    t = 1_704_139_200_000
    events = _renamed_table_events() + [
        {"id": "r-5", "eventType": "entityCreated", "entityType": "table", "entityId": "t-11",
         "entityFullyQualifiedName": "s.d.x.old_name", "userName": "cy", "timestamp": t + created_at,
         "previousVersion": 0.1, "currentVersion": 0.1, "entity": {"id": "t-11"}}]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("audit-integrity"), {}).dicts()
    assert [r["entity"].value for r in rows if r["problem"].value == "duplicate-name"] == (
        ["https://open-metadata.org/entity/table/t-11"] if duplicate else [])


def _om_lineage(n: int, event_type: str, t: int, up: str, down: str, columns: list[tuple[str, str]]) -> dict:
    """An OpenMetadata lineage event on table edge s.d.x.UP -> s.d.x.DOWN (ids = the names) whose
    columnsLineage maps column UP.a to DOWN.b for each (a, b)."""
    return {"id": f"lin-{n}", "eventType": event_type, "entityType": "lineage", "entityId": f"l-{up}-{down}",
            "entityFullyQualifiedName": f"s.d.x.{up}--upstream-->s.d.x.{down}", "userName": "alice", "timestamp": t,
            "entity": {"fromEntity": {"id": up, "type": "table", "fullyQualifiedName": f"s.d.x.{up}"},
                       "toEntity": {"id": down, "type": "table", "fullyQualifiedName": f"s.d.x.{down}"},
                       "lineageDetails": {"columnsLineage": [
                           {"fromColumns": [f"s.d.x.{up}.{a}"], "toColumn": f"s.d.x.{down}.{b}"} for a, b in columns]}}}


@pytest.mark.parametrize("q", ["q", "struct_col,inner", "map(k,v)"])  # rv41 L1: a field path with commas
def test_a_column_edge_ends_with_the_hard_delete_of_the_dataset_its_urn_names(tmp_path, q):
    """ut24 F1: a fine-grained edge from a column of u3, a dataset the aspect's upstreams do not list,
    outlived u3's hard delete: the column's table was looked for only among the table edges."""
    t, hour = 1_709_280_000_000, 3_600_000
    field = lambda ds, name: f"urn:li:schemaField:({DS(f'hive,{ds}')},{name})"
    lineage = {"upstreams": [{"dataset": DS("hive,u1"), "type": "TRANSFORMED"}],
               "fineGrainedLineages": [
                   {"upstreamType": "FIELD_SET", "downstreamType": "FIELD", "upstreams": [field(u, c)],
                    "downstreams": [field("d", dc)]} for u, c, dc in (("u3", q, "z"), ("u1", "a", "x"))]}
    key = {"platform": "urn:li:dataPlatform:hive", "name": "u3", "origin": "PROD"}
    store = _store_of([_dh_mcl(DS("hive,d"), "upstreamLineage", t, "1", value=lineage),
                       _dh_mcl(DS("hive,u3"), "datasetKey", t, "1", value=key),
                       _dh_mcl(DS("hive,u3"), "datasetKey", t + hour, "2", previous=("1", key), change="DELETE")],
                      tmp_path)
    for as_of, up_z in ((t + hour - 1, {field("u3", q)}), (t + hour, set())):
        assert {r["asset"] for r in run_query(store, "upstream", {"entity": field("d", "z"), "as_of": as_of}).python()} == up_z
        down_q = {field("d", "z")} if up_z else set()
        assert {r["asset"] for r in run_query(store, "downstream", {"entity": field("u3", q), "as_of": as_of}).python()} == down_q
        assert {r["upstream"] for r in run_query(store, "lineage-details", {"entity": field("d", "z"), "as_of": as_of}).python()} == up_z
        assert {r["asset"] for r in run_query(store, "upstream", {"entity": field("d", "x"), "as_of": as_of}).python()} == {
            field("u1", "a")}


@pytest.fixture(scope="module")
def column_lineage_store(tmp_path_factory):
    """Column lineage that changes: up.a -> down.x and up.b -> down.y (day 0), restated with a -> x only
    (day 1), down.x -> down2.z (day 0) until down2 is hard-deleted (day 3), the table edge up -> down
    deleted (day 4); a DataHub dataset whose upstreamLineage loses its fineGrainedLineages (day 2)."""
    t, day = 1_704_139_200_000, 86_400_000
    fine, coarse = _fine_and_coarse()
    events = [
        _om_lineage(1, "entityLineageAdded", t, "up", "down", [("a", "x"), ("b", "y")]),
        _om_lineage(2, "entityLineageUpdated", t + day, "up", "down", [("a", "x")]),
        _om_lineage(3, "entityLineageAdded", t, "down", "down2", [("x", "z")]),
        _om_lifecycle(4, "entityDeleted", "down2", t + 3 * day, 0.1, 0.2),
        _om_lineage(5, "entityLineageDeleted", t + 4 * day, "up", "down", [("a", "x")]),
        # after its hard delete, a new table takes down2's name and its column's lineage (ut9a #2)
        dict(_om_lineage(6, "entityLineageAdded", t + 3 * day + day // 2, "down", "down2new", [("x", "z")]),
             entity={"fromEntity": {"id": "down", "type": "table", "fullyQualifiedName": "s.d.x.down"},
                     "toEntity": {"id": "down2new", "type": "table", "fullyQualifiedName": "s.d.x.down2"},
                     "lineageDetails": {"columnsLineage": [{"fromColumns": ["s.d.x.down.x"],
                                                            "toColumn": "s.d.x.down2.z"}]}}),
        *[{"id": f"own-{table}", "eventType": "entityUpdated", "entityType": "table", "entityId": table,
           "entityFullyQualifiedName": "s.d.x.down2", "userName": "alice", "timestamp": at,
           "previousVersion": 0.1, "currentVersion": 0.2,
           "changeDescription": {"fieldsAdded": [{"name": "owners", "newValue": json.dumps(
               [{"id": owner, "type": "user", "name": owner}])}], "fieldsUpdated": [], "fieldsDeleted": [],
               "previousVersion": 0.1}}
          for table, owner, at in (("down2", "erin", t - day), ("down2new", "frank", t + 3 * day + day // 2))],
        {"id": "own-1", "eventType": "entityUpdated", "entityType": "table", "entityId": "down",
         "entityFullyQualifiedName": "s.d.x.down", "userName": "alice", "timestamp": t - day,
         "previousVersion": 0.1, "currentVersion": 0.2,
         "changeDescription": {"fieldsAdded": [{"name": "owners", "newValue": json.dumps(
             [{"id": "u1", "type": "user", "name": "carol"}])}], "fieldsUpdated": [], "fieldsDeleted": [],
             "previousVersion": 0.1}},
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t, "1", value=fine),
        _dh_mcl(DS("hive,db.d"), "upstreamLineage", t + 2 * day, "2", value=coarse, previous=("1", fine)),
        # a fine-grained upstream that is a whole dataset (upstreamType DATASET) stays a dataset (ut9a #1)
        _dh_mcl(DS("hive,db.e"), "upstreamLineage", t, "1", value={
            "upstreams": [{"dataset": DS("hive,db.u2"), "type": "TRANSFORMED"}],
            "fineGrainedLineages": [{"upstreamType": "DATASET", "upstreams": [DS("hive,db.u2")],
                                     "downstreamType": "FIELD", "downstreams": [f"urn:li:schemaField:({DS('hive,db.e')},h)"]}]}),
    ]
    return _store_of(events, tmp_path_factory.mktemp("column-lineage"))


@pytest.mark.parametrize("query, entity, as_of, want", [
    ("downstream", "s.d.x.up.a", "2024-01-02T12:00:00Z", {"s.d.x.down.x": 1, "s.d.x.down2.z": 2}),
    ("downstream", "s.d.x.up.b", "2024-01-02T12:00:00Z", {"s.d.x.down.y": 1}),
    # restated on day 1 without b -> y; a -> x stated again
    ("downstream", "s.d.x.up.b", "2024-01-03T12:00:00Z", {}),
    ("downstream", "s.d.x.up.a", "2024-01-03T12:00:00Z", {"s.d.x.down.x": 1, "s.d.x.down2.z": 2}),
    # down2 hard-deleted on day 3, the table edge up -> down deleted on day 4
    ("downstream", "s.d.x.up.a", "2024-01-05T06:00:00Z", {"s.d.x.down.x": 1}),
    # a new table of down2's name has the column again from 01-05T08:00
    ("downstream", "s.d.x.up.a", "2024-01-05T12:00:00Z", {"s.d.x.down.x": 1, "s.d.x.down2.z": 2}),
    ("downstream", "s.d.x.up.a", "2024-01-06T12:00:00Z", {}),
    ("upstream", "s.d.x.down2.z", "2024-01-02T12:00:00Z", {"s.d.x.down.x": 1, "s.d.x.up.a": 2}),
    ("upstream", "s.d.x.down.y", "2024-01-02T12:00:00Z", {"s.d.x.up.b": 1}),
    ("upstream", "s.d.x.down.y", "2024-01-03T12:00:00Z", {}),
    # DataHub: the dataset's second upstreamLineage keeps the upstream but has no fineGrainedLineages
    ("upstream", f"urn:li:schemaField:({DS('hive,db.d')},g)", "2024-01-03T12:00:00Z",
     {f"urn:li:schemaField:({DS('hive,db.u')},f)": 1}),
    ("upstream", f"urn:li:schemaField:({DS('hive,db.d')},g)", "2024-01-04T12:00:00Z", {}),
    ("upstream", DS("hive,db.d"), "2024-01-04T12:00:00Z", {DS("hive,db.u"): 1}),
    ("upstream", DS("hive,db.e"), "2024-01-02T12:00:00Z", {DS("hive,db.u2"): 1}),
    ("downstream", DS("hive,db.u2"), "2024-01-02T12:00:00Z", {DS("hive,db.e"): 1}),
    # a column computed from that whole dataset has it upstream (rv29 #3: lineage-details listed it, upstream not)
    ("upstream", f"urn:li:schemaField:({DS('hive,db.e')},h)", "2024-01-02T12:00:00Z", {DS("hive,db.u2"): 1}),
])
def test_the_lineage_of_a_column_follows_column_edges_as_of_a_time(column_lineage_store, query, entity, as_of, want):
    """ut7a #5: upstream / downstream of a column answered nothing; a column edge ends when its table
    edge is stated again without it, deleted, or one of the tables is hard-deleted."""
    rows = run_query(column_lineage_store, get_query(query), {"entity": entity, "as_of": as_of})
    assert {r["asset_name"].value: int(r["hops"].value) for r in rows.dicts()} == want
    details = run_query(column_lineage_store, get_query("lineage-details"), {"entity": entity, "as_of": as_of})
    if query == "upstream":  # the direct edges are the same ones
        assert {r["upstream_name"].value for r in details.dicts()} == {k for k, v in want.items() if v == 1}


@pytest.mark.parametrize("as_of, want", [
    ("2024-01-02T12:00:00Z", [("s.d.x.down.x", "1", "carol"), ("s.d.x.down2.z", "2", "erin")]),
    # down2 hard-deleted, a new table of that name has the column: its owners only (ut9a #2)
    ("2024-01-05T12:00:00Z", [("s.d.x.down.x", "1", "carol"), ("s.d.x.down2.z", "2", "frank")]),
])
def test_impact_of_a_column_names_the_owners_of_each_columns_table(column_lineage_store, as_of, want):
    rows = run_query(column_lineage_store, get_query("impact"), {"entity": "s.d.x.up.a", "as_of": as_of})
    assert [(r["asset_name"].value, r["hops"].value, r["owners"] and r["owners"].value) for r in rows.dicts()] == want


def test_a_column_without_column_lineage_says_so(column_lineage_store, store):
    """ut9a #4: "none of them was valid at that time" read as if every column had had lineage."""
    ended = run_query(column_lineage_store, get_query("downstream"), {"entity": "s.d.x.up.b", "as_of": "2024-01-06"})
    assert ended.rows == [] and ended.notes[0].startswith("this is a column: its lineage follows column-level edges")
    never = run_query(store, get_query("downstream"), {"entity": OM_ORDERS + ".customer_email"})
    assert never.rows == [] and never.notes == [
        "this is a column with no column-level lineage in the store (OpenMetadata columnsLineage, DataHub "
        "fineGrainedLineages): the empty answer says nothing of what depends on it; the lineage of its table is "
        "in upstream/downstream of the table"]


def test_impact_owners_end_with_a_hard_delete_and_come_with_a_re_creation(tmp_path):
    """A review of ut9a #2's fix: a hard delete takes the owners added before it; owners added after a
    re-creation count."""
    t, day = 1_704_139_200_000, 86_400_000
    up, x = DS("hive,db.up"), DS("hive,db.x")
    key = {"platform": "urn:li:dataPlatform:hive", "name": "x", "origin": "PROD"}
    events = [
        _dh_mcl(x, "datasetKey", t - day, "1", value=key),
        _dh_mcl(x, "upstreamLineage", t, "1", value={"upstreams": [{"dataset": up}]}),
        _dh_mcl(x, "ownership", t, "1", value={"owners": [{"owner": "urn:li:corpuser:erin"}]}),
        _dh_mcl(x, "datasetKey", t + day, "2", change="DELETE", previous=("1", key)),
        _dh_mcl(x, "datasetKey", t + 2 * day, "1", value=key),
        _dh_mcl(x, "upstreamLineage", t + 2 * day, "2", value={"upstreams": [{"dataset": up}]}),
        _dh_mcl(x, "ownership", t + 2 * day + 1000, "2", value={"owners": [{"owner": "urn:li:corpuser:frank"}]}),
    ]
    store = _store_of(events, tmp_path)
    for as_of, owners in (("2024-01-02T12:00:00Z", "urn:li:corpuser:erin"), ("2024-01-04T12:00:00Z", "urn:li:corpuser:frank")):
        rows = run_query(store, get_query("impact"), {"entity": up, "as_of": as_of}).dicts()
        assert [(r["asset_name"].value, r["owners"] and r["owners"].value) for r in rows] == [(x, owners)], as_of


def test_the_three_lineage_steps_share_one_column_edge_rule():
    """upstream, downstream and lineage-details each hold the column-edge validity checks (a .rq file
    includes nothing): they must stay the same text, up to lineage-details' variable names."""
    def block(name: str, end: str) -> str:
        text = get_query(name).text
        start = text.index("  # A column edge (OpenMetadata columnsLineage")
        return text[start:text.index(end, start)]

    up, down = (block(n, "  OPTIONAL { ?next om:fullyQualifiedName") for n in ("upstream", "downstream"))
    details = block("lineage-details", "  # what that event said")
    for ours, theirs in (("?stated_at", "?t"), ("?event", "?added"), ("?upstream", "?next")):
        details = details.replace(ours, theirs)
    assert up == down == details


# ----------------------------------------------------------------------------- from Python (ut19)


@pytest.mark.parametrize("as_of", ["2024-03-05", _dt.date(2024, 3, 5), _dt.datetime(2024, 3, 5, 23, 59, 59),
                                   _dt.datetime(2024, 3, 6, 0, 59, 59, tzinfo=_dt.timezone(_dt.timedelta(hours=1))),
                                   1_709_683_199_000])
def test_a_library_caller_names_the_query_and_gives_python_values(store, as_of):
    """ut19 #1-#3: run_query wanted a NamedQuery and strings only, and its answer only pyoxigraph terms."""
    rows = run_query(store, "upstream", {"entity": LTV, "as_of": as_of, "jobs": False})
    assert len(rows) == len(rows.rows) > 0 and rows and list(rows) == rows.dicts()
    values = rows.python()
    assert {type(r["hops"]) for r in values} == {int} and all(isinstance(r["asset"], str) for r in values)
    assert {r["asset"]: r["hops"] for r in values} == hops(run_query(store, get_query("upstream"),
                                                                     {"entity": LTV, "as_of": "2024-03-05"}))
    history = run_query(store, "entity-history", {"entity": LTV}).python()
    assert all(r["time"].tzinfo == _dt.timezone.utc for r in history)
    assert not run_query(store, "deleted-entities", {"since": _dt.datetime(2100, 1, 1)})


def test_an_answers_terms_can_be_passed_back_as_parameters(store):
    """An asset of one answer is the entity of the next question: run_query refused the NamedNode
    ("expected a string, got NamedNode") and the literal of a version or time."""
    down = run_query(store, "downstream", {"entity": ORDERS}).dicts()
    asset = down[0]["asset"]
    assert isinstance(asset, ox.NamedNode)
    assert run_query(store, "entity-history", {"entity": asset}).rows == \
        run_query(store, "entity-history", {"entity": asset.value}).rows
    history = run_query(store, "entity-history", {"entity": OM_ORDERS}).dicts()
    version, time = history[2]["current_version"], history[2]["time"]
    assert isinstance(version, ox.Literal) and isinstance(time, ox.Literal)
    assert run_query(store, "entity-state", {"entity": OM_ORDERS, "version": version}).rows == \
        run_query(store, "entity-state", {"entity": OM_ORDERS, "version": version.value}).rows
    assert run_query(store, "entity-state", {"entity": OM_ORDERS, "as_of": time}).rows == \
        run_query(store, "entity-state", {"entity": OM_ORDERS, "as_of": time.value}).rows
    with pytest.raises(InputError, match=re.escape("parameter since: expected a string, datetime, date or epoch ms "
                                                   "(int), got NamedNode")):
        run_query(store, "deleted-entities", {"since": asset})


@pytest.mark.parametrize("value, says", [
    ("yesterday", "parameter as_of: not a time"),
    (True, "parameter as_of: expected a string, datetime, date or epoch ms (int), got bool"),
    ([2024], "parameter as_of: expected a string, datetime, date or epoch ms (int), got list"),
    # rv36 #5: these raised OverflowError / ValueError / pyoxigraph's ValueError
    (_dt.datetime(1, 1, 1, tzinfo=_dt.timezone(_dt.timedelta(hours=1))), "parameter as_of: 0001-01-01 00:00:00+01:00 "
                                                                        "is out of range in UTC"),
    pytest.param(10 ** 5000, "parameter as_of: an int of more than 4300 digits is out of range", id="huge-int"),
    ("2024\ud800", r"parameter as_of: not valid text: '\ud800' at position 4 is no Unicode character"),
])
def test_a_bad_time_from_python_names_its_parameter(embedded, value, says):
    with pytest.raises(InputError, match=re.escape(says)):
        run_query(embedded, "upstream", {"entity": LTV, "as_of": value})


@pytest.mark.parametrize("value, says", [
    # ut48a #7: the value quoted twice; a bare date quoted as the time it was rewritten to
    ("tomorrow", "parameter as_of: not a time (ISO-8601 like 2024-03-05T12:00:00Z, or without a zone: UTC; a date; "
                 "epoch ms; or now): 'tomorrow'"),
    ("2024-13-01", "(month must be in 1..12)"),
    ("2024-03-05T10:00:00+25:00", "'2024-03-05T10:00:00+25:00' (not a valid UTC offset)"),
    ("1969-12-31T23:00:00Z", "'1969-12-31T23:00:00Z' (out of range 1970-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z)"),
])
def test_a_bad_time_is_quoted_once_as_given(embedded, value, says):
    with pytest.raises(InputError) as caught:
        run_query(embedded, "upstream", {"entity": LTV, "as_of": value})
    said = str(caught.value)
    assert said.endswith(says) and said.count(value) == 1, said
    assert value != "2024-13-01" or "T23:59" not in said, said  # not the end of day it was rewritten to


def test_a_query_of_another_form_names_the_function_that_runs_it_and_an_empty_required_value_is_refused(embedded):
    """ut48a #7: run_ask of a SELECT failed on binding its parameters; #8: find-entity text= listed every
    entity."""
    with pytest.raises(InputError, match=r"^downstream is a SELECT query: run_query runs it$"):
        run_ask(embedded, "downstream", {"entity": LTV})
    with pytest.raises(InputError, match=r"^entity-history is a SELECT query: run_query runs it$"):
        run_construct(embedded, "entity-history", {"entity": LTV})
    with pytest.raises(InputError, match="required parameter text is empty"):
        run_query(embedded, "find-entity", {"text": " "})
    assert run_query(embedded, "find-entity", {"text": "orders"}).rows


def test_parse_time_takes_text_and_says_so():
    """ut42a #3: parse_time, which the library still gives, raised AttributeError on a date or an int."""
    from changeprov.sparql.queries import parse_time

    for value in (_dt.date(2024, 3, 5), 1_709_596_800_000, None):
        with pytest.raises(InputError, match="not a time: expected text .ISO-8601, a date, epoch ms or now., got "):
            parse_time(value)


@pytest.mark.parametrize("value, want", [
    ("0", "1970-01-01T00:00:00.000Z"),  # what the error for 1..EPOCH_MS_FROM offers for the start of time
    ("2024-03-05T12:00z", "2024-03-05T12:00:00.000Z"),  # a lower-case zone on a time without seconds
    ("2024-03-05t12:00:00z", "2024-03-05T12:00:00.000Z"),
])
def test_parse_time_takes_the_forms_its_messages_offer(value, want):
    """Mutation survey ms51 #7, #8: since=0 and a lower-case z after hours and minutes had no test."""
    from changeprov.sparql.queries import parse_time

    assert parse_time(value).value == want


@pytest.mark.parametrize("kind, value, want", [
    ("decimal", "0.0000001", "0.0000001"),  # not 1E-7, which is no xsd:decimal
    ("integer", "-" + "9" * 18, "-" + "9" * 18),
    ("integer", "9" * 19, None),  # beyond a 64-bit integer: refused here, not left to the engine
])
def test_numeric_parameters_are_bound_as_valid_literals(kind, value, want, tmp_path):
    """ms51: a decimal bound in exponent form, and a 19-digit integer let through, had no test."""
    from changeprov.sparql.params import Param, convert

    p = Param("n", kind, False, None, "a number")
    with open_store("memory") as store:
        if want is None:
            with pytest.raises(InputError, match="parameter n: not an integer"):
                convert(store, p, value)
        else:
            assert convert(store, p, value).value == want


@pytest.mark.parametrize("entity", [FCT, LTV, OM_ORDERS])
def test_entity_state_names_the_version_each_value_was_set_in_as_entity_history_does(embedded, entity):
    """ut40 #5: entity-state left set_in_version empty on every DataHub row, where entity-history shows the
    aspect version the same MCL generated."""
    history = {r["event"]: r["current_version"] for r in run_query(embedded, "entity-history", {"entity": entity}).dicts()}
    rows = run_query(embedded, "entity-state", {"entity": entity}).dicts()
    assert rows and all(r["set_in_version"] == history[r["event"]] for r in rows)
    assert any(r["set_in_version"] is not None for r in rows)


def test_a_bound_finer_than_a_millisecond_counts_no_event_outside_it(embedded):
    """ut40 #3: since 08:00:00.0005 listed the events of 08:00:00.000, which lie before it (the fraction
    was cut); and 08:00Z, ISO-8601 without seconds, was refused though 08:00 without a zone was read."""
    rows = run_query(embedded, "entity-history", {"entity": OM_ORDERS}).dicts()
    first, user = rows[0]["time"].value, rows[0]["user"].value  # 2026-09-01T08:00:00Z
    at = first.replace("Z", "")

    def times(**bounds):
        return [r["time"].value for r in run_query(embedded, "changes-by-user", {"user": user, **bounds}).dicts()]

    assert first in times(since=at + ".000Z") and first in times(since=at[:16] + "Z") == times(since=at[:16])
    assert first not in times(since=at + ".0005Z") and first not in times(since=at[:16] + ":00.000001+00:00")
    assert first in times(until=at + ".0005Z") and first not in times(until=at[:16] + ":00+00:01")  # 07:59Z
    assert times(since=at[:16] + "+00:00") == times(since=first)
    # ut40c #3: a datetime with microseconds is the same bound as its text (it was cut to milliseconds)
    instant = _dt.datetime.fromisoformat(first.replace("Z", "+00:00"))
    assert first not in times(since=instant + _dt.timedelta(microseconds=1))
    assert first in times(since=instant) and first in times(until=instant + _dt.timedelta(microseconds=999))


@pytest.mark.parametrize("args, says", [
    ((None, "entity-history", {}), "store must be an open store"),
    (("STORE", None, {}), "query must be a name or a NamedQuery"),
    (("STORE", 5, {}), "query must be a name or a NamedQuery (get_query, load_query_file), not int"),
    (("STORE", "entity-history", [("entity", OM_ORDERS)]), "parameters must be a mapping of name to value, not list"),
])
def test_arguments_of_the_wrong_kind_from_python_are_input_errors(embedded, args, says):
    """ut40c #6: these were AttributeError / TypeError from deep inside run_query."""
    store, *rest = args
    with pytest.raises(InputError, match=re.escape(says)):
        run_query(embedded if store == "STORE" else store, *rest)


@pytest.mark.parametrize("query, params", [("entity-history", {"entity": "ab\udcffcd"}),
                                           ("tag-changes", {"tag": "\ud800"}),
                                           ("resolve", {"key": _dt.date(2024, 3, 5)})])
def test_a_value_no_parameter_takes_is_an_input_error(embedded, query, params):
    """rv36 #5: a lone surrogate (from the command line: bytes that are not UTF-8) was an internal error,
    and a date was taken as text by any parameter."""
    with pytest.raises(InputError, match=r"parameter \w+: (not valid text|expected a string)"):
        run_query(embedded, query, params)


def test_none_for_a_parameter_with_a_default_is_the_default(embedded):
    """rv36 #2: as_of=None left the parameter unbound, and impact answered nothing."""
    given = run_query(embedded, "impact", {"entity": ORDERS, "as_of": None})
    assert given.rows == run_query(embedded, "impact", {"entity": ORDERS}).rows
    assert given, "ORDERS has downstream assets"


def test_a_query_file_may_start_with_a_byte_order_mark(tmp_path):
    """rv44: a file saved with a BOM was 'not a SPARQL query … \\ufeff SELECT'."""
    rq = tmp_path / "bom.rq"
    rq.write_bytes(b"\xef\xbb\xbf# summary: t\nSELECT * WHERE { ?s ?p ?o } LIMIT 1\n")
    q = load_query_file(rq)
    assert q.summary == "t" and run_query(open_store("memory"), q).rows == []


def test_changes_by_user_names_the_same_spelling_in_the_other_tool(tmp_path):
    """ut45e #2: alice.wong's OpenMetadata changes and urn:li:corpuser:alice_wong's DataHub ones are one
    person's; an answer for one was half of it without a word. changeprov keeps the users apart (a guess
    must not merge two people), and names the other spelling."""
    ds = "urn:li:dataset:(urn:li:dataPlatform:hive,db.a,PROD)"
    events = [{**_om_update(1, 1_704_067_200_000, 0.2, added=[{"name": "description", "newValue": "x"}]),
               "userName": "alice.wong"},
              {"entityType": "dataset", "entityUrn": ds, "category": "TAG", "operation": "ADD",
               "modifier": "urn:li:tag:PII", "version": 0, "auditStamp": {"time": 1_704_067_300_000,
                                                                         "actor": "urn:li:corpuser:alice_wong"}},
              {"entityType": "dataset", "entityUrn": ds, "category": "TAG", "operation": "ADD",
               "modifier": "urn:li:tag:Tier1", "version": 0, "auditStamp": {"time": 1_704_067_400_000,
                                                                           "actor": "urn:li:corpuser:alicewong2"}}]
    store = _store_of(events, tmp_path)
    rows = run_query(store, get_query("changes-by-user"), {"user": "alice.wong"})
    assert len(rows) == 1 and rows.notes == [
        "alice.wong (OpenMetadata) is spelt like urn:li:corpuser:alice_wong (DataHub): the same person? changeprov "
        "keeps users apart; ask for that name for its changes"]
    other = run_query(store, get_query("changes-by-user"), {"user": "urn:li:corpuser:alice_wong"})
    assert len(other) == 1 and "urn:li:corpuser:alice_wong (DataHub) is spelt like alice.wong (OpenMetadata)" in other.notes[0]
    assert run_query(store, get_query("changes-by-user"), {"user": "urn:li:corpuser:alicewong2"}).notes == []


def test_entity_threads_are_the_threads_whose_link_names_the_entity(embedded):
    """ut47a #4: a thread's events named the thread as their entity, and its `about` link (the table it
    is about) was only inside its entity JSON: no query could find a table's conversations."""
    rows = run_query(embedded, "entity-threads", {"entity": OM_ORDERS}).dicts()
    link = "<#E::table::mysql_prod.ecommerce.sales.orders::columns::customer_email::tags>"
    assert [(r["time"].value, r["event_type"].value, r["user"].value, r["about"].value) for r in rows] == [
        ("2026-09-02T09:20:00Z", "ThreadCreated", "carol.chen", link),
        ("2026-09-02T09:45:00Z", "PostCreated", "alice.wong", link),
        ("2026-09-10T09:00:00Z", "ThreadUpdated", "carol.chen", link)]
    assert {r["thread"].value for r in rows} == {"https://open-metadata.org/entity/THREAD/92b8813e-9e41-5640-96c9-1eaa23ea7bf8"}
    assert not run_query(embedded, "entity-threads", {"entity": OM_DR}).rows  # a table no thread is about


def test_a_columns_threads_are_its_tables_threads_whose_link_names_it(embedded):
    """ua51 #2: a column's threads were an empty answer without a note, though the link names it."""
    table = run_query(embedded, "entity-threads", {"entity": OM_ORDERS})
    column = run_query(embedded, "entity-threads", {"entity": OM_ORDERS + ".customer_email"})
    assert column.rows == table.rows and len(column.rows) == 3
    assert column.notes == [f"this is a column: the rows of {OM_ORDERS} whose link names it"]
    other = run_query(embedded, "entity-threads", {"entity": OM_ORDERS + ".order_id"})
    assert other.rows == [] and other.notes == [f"this is a column: {OM_ORDERS} has no rows whose link names it"]


def test_an_unknown_user_is_matched_in_any_case(embedded):
    """rv49 LK3: agents-like matched in any case; a case-sensitive lookup found no user for ALICE."""
    with pytest.raises(InputError, match=r"users matching 'ALICE': alice\.wong"):
        run_query(embedded, "changes-by-user", {"user": "ALICE"})
