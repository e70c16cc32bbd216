"""Notes on an answer: why it is empty (``if-empty:`` checks) or what to know of its rows (``if-rows:``),
named in a query file's header and run by ``run_query``."""

from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal
from typing import Mapping

import pyoxigraph as ox

from changeprov.mapping.vocab import OM_ENTITY, OM_EVENT, XSD_DECIMAL
from changeprov.sparql.formats import display_text, display_value
from changeprov.sparql.params import _current_name, user_name
from changeprov.sparql.query_files import lookup
from changeprov.sparql.stores import Rows, TripleStore
from changeprov.sparql.values import with_rows


def _instant(lexical: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(lexical)


def _unversioned(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """A version asked of an entity whose events carry none (DataHub's; only OpenMetadata events
    have a currentVersion), or a time before the entity's first event: the empty answer says nothing
    a user could see without this note."""
    if "version" in bound and not store.ask(lookup("entity-versioned"), {"entity": bound["entity"]}):
        return ["no event of this entity has a version (only OpenMetadata events carry a currentVersion), "
                "so version= selects none of them; as_of=TIME asks for its state at a time"]
    if "as_of" in bound:
        rows = store.select(lookup("entity-first-event"), {"entity": bound["entity"]}).rows
        first = rows[0][1] if rows else None
        if first is not None and _instant(first.value) > _instant(bound["as_of"].value):
            return [f"as_of {display_text(bound['as_of'])} is before the entity's first event ({display_text(first)}): "
                    "the log knows nothing of it yet"]
    return []


def _unchanged_field(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """A field name that no change of the entity has: most often a typo or another tool's name for it
    (OpenMetadata ``owners``, DataHub ``ownership`` / ``OWNER``), which an empty answer would hide."""
    if "field" not in bound:
        return []
    names = [r[1].value for r in store.select(lookup("entity-changed-fields"), {"entity": bound["entity"]}).rows]
    if not names:
        return ["no event of this entity changed any field"]
    field = bound["field"].value
    owners = ("OWNER", "OWNERSHIP")
    if ("since" in bound or "until" in bound) and any(
            n == field or n.endswith("." + field) or (n in owners and field in owners) for n in names):
        return [f"{field!r} changed on this entity, but not between since and until"]
    shown = ", ".join(names[:40]) + (f", … ({len(names)} in all)" if len(names) > 40 else "")
    return [f"no change of a field named {bound['field'].value!r} on this entity (names are case-sensitive; "
            f"a name also matches nested names ending in .NAME); its changed fields are: {shown}"]


def _versions_note(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """A version the entity never had (ut7a #7): version=1.0 of an entity at 0.5 then 1.5 answers
    the state at 0.5, which is right, but it must not read as "1.0 looked like this"."""
    if "version" not in bound:
        return []
    asked = Decimal(bound["version"].value)
    rows = store.select(lookup("entity-versions"), {"entity": bound["entity"]}).rows
    known = sorted({Decimal(r[1].value) for r in rows})
    if not known or asked in known:
        return []
    def text(v: Decimal) -> str:  # as the tables show versions: 2.0, not 2
        return display_value(ox.Literal(f"{v:f}", datatype=XSD_DECIMAL))

    shown = ", ".join(text(v) for v in known[:12]) + (f", … ({len(known)} in all)" if len(known) > 12 else "")
    before = [v for v in known if v < asked]
    where = (f"the state shown is at {text(before[-1])}, its last version before it" if before
             else "it is before the entity's first version")
    return [f"version {bound['version'].value} is not a version of this entity ({shown}): {where}"]


def _unversioned_or_unknown(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    return _unversioned(store, bound) or _versions_note(store, bound)


def _impersonations(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal],
                    _rows: Rows | None = None) -> list[str]:
    """A bot that acts on behalf of users is the changes' impersonator, not their performer (ut7a #6):
    say how many changes it made that way, or its "(0 rows)" reads as "it changed nothing"."""
    window = {k: v for k, v in bound.items() if k in ("user", "since", "until")}
    found = store.select(lookup("impersonated-changes"), window).rows
    n = int(found[0][-1].value) if found else 0
    if not n:
        return []
    return [f"{user_name(bound['user'].value)} also made {n} change(s) on behalf of other users "
            "(om-event:impersonatedBy), listed under the users they acted for; `changeprov audit` lists them "
            "as impersonated"]


def _identity_key(name: str) -> str:
    """A user name as both tools may spell it: no corpuser prefix, no mail domain, letters and digits only.

    >>> _identity_key("alice.wong"), _identity_key("urn:li:corpuser:alice_wong"), _identity_key("Alice-Wong@x.io")
    ('alicewong', 'alicewong', 'alicewong')
    """
    name = name.removeprefix("urn:li:corpuser:").split("@", 1)[0]
    return re.sub(r"[\W_]+", "", name.lower())


def _other_identities(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal],
                      _rows: Rows | None = None) -> list[str]:
    """One person is two users when both tools' events are loaded (alice.wong in OpenMetadata,
    urn:li:corpuser:alice_wong in DataHub), and an answer for one is half of what they changed
    (ut45e #2): name the users spelt alike, which changeprov does not merge on a guess."""
    asked = bound.get("user")
    if not isinstance(asked, ox.NamedNode) or not (key := _identity_key(user_name(asked.value))):
        return []

    def tool(name: str) -> str:
        return "DataHub" if name.startswith("urn:li:corpuser:") else "OpenMetadata"

    alike = sorted(user_name(a.value) for (a,) in store.select(lookup("all-agents")).rows
                   if isinstance(a, ox.NamedNode) and a != asked and _identity_key(user_name(a.value)) == key)
    if not alike:
        return []
    shown = ", ".join(f"{name} ({tool(name)})" for name in alike[:5]) + (f" and {len(alike) - 5} more" if len(alike) > 5 else "")
    return [f"{user_name(asked.value)} ({tool(user_name(asked.value))}) is spelt like {shown}: the same person? "
            "changeprov keeps users apart; ask for that name for its changes"]


def _column_lineage(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """Of a column, lineage follows column-level edges only: an empty answer does not mean that its
    table has no lineage (ut7a #5)."""
    if not store.ask(lookup("is-column"), {"entity": bound["entity"]}):
        return []
    if not store.ask(lookup("has-column-edge"), {"entity": bound["entity"]}):  # ut9a #4: unknown is not "nothing"
        return ["this is a column with no column-level lineage in the store (OpenMetadata columnsLineage, DataHub "
                "fineGrainedLineages): the empty answer says nothing of what depends on it; the lineage of its "
                "table is in upstream/downstream of the table"]
    return ["this is a column: its lineage follows column-level edges (OpenMetadata columnsLineage, DataHub "
            "fineGrainedLineages), and none of them was valid at that time; the lineage of its table is in "
            "upstream/downstream of the table"]


def _ended_lineage(side: str):
    def check(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
        """An empty lineage answer of an entity whose edges had all ended by as_of, or came only after
        it (ut42a #10): say so, or "no upstream" reads as "never had any"."""
        if store.ask(lookup("is-column"), {"entity": bound["entity"]}):
            return []  # column-lineage says it
        rows = store.select(lookup(f"{side}-edge-adds"), {k: bound[k] for k in ("entity", "as_of") if k in bound})
        edges = [r for r in rows.dicts() if r["first"] is not None]
        before = [r for r in edges if r["by_then"].value == "true"]
        notes = []
        if before:
            notes.append(f"it had {len(before)} direct {side} edge(s) by this time, none still valid (each removed, "
                         f"left out of a later upstreamLineage, or ended by a hard delete of an end): audit-lineage "
                         f"with this as_of says which, and an earlier as_of shows them here")
        if "as_of" in bound:
            later = [r for r in store.select(lookup(f"{side}-edge-adds-after"),
                                             {k: bound[k] for k in ("entity", "as_of")}).dicts()
                     if r["next"] is not None]
            if later:
                count = int(later[0]["edges"].value)
                notes.append(f"its next {side} edge after this time was added at {display_value(later[0]['next'])}"
                             + (f" ({count} edge(s) added, or added again, later in all)" if count > 1 else ""))
        return notes
    return check


def _not_a_job(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """job-io of a dataset answers nothing: say where its jobs are (ut13 #8)."""
    job = {"entity": bound["job"]}
    if store.ask(lookup("in-job-lists"), job) and not store.ask(lookup("has-job-lists"), job):
        return ["this is a dataset that jobs read or write, not a job: its jobs are in "
                "`changeprov query job-candidates --param dataset=…` (every job that ever named it) and in "
                "upstream/downstream with --param jobs=true"]
    return []


def _not_a_dataset(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """job-candidates of a job answers nothing: say where its datasets are (ut13 #8)."""
    if store.ask(lookup("has-job-lists"), {"entity": bound["dataset"]}):
        return ["this is a job, not a dataset: its inputs and outputs are in "
                "`changeprov query job-io --param job=…`"]
    return []


def _hard_deleted(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """An empty state after a hard delete is that delete, not "no field changes" (ut10a #6). Not with a
    version alone, which entity-state answers without counting a hard delete (ut26 D5: a re-created
    DataHub entity asked by version was said to be ended by one)."""
    if "version" in bound and "as_of" not in bound:
        return []
    found = store.select(lookup("last-hard-delete"), {k: v for k, v in bound.items() if k in ("entity", "as_of")}).rows
    if not found:
        return []
    return [f"it was hard-deleted at {display_text(found[0][-1])}: a hard delete ends every value set before it"]


def _no_creation(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """An OpenMetadata entity whose log starts after its creation: its lists are what the log changed
    (its events list changes, not whole lists), which must not read as its whole state (ut17 #4)."""
    if not isinstance(bound.get("entity"), ox.NamedNode):
        return []
    if store.ask(lookup("no-creation"), {"entity": bound["entity"]}):
        return ["the store has no creation event of this OpenMetadata entity (the log starts later): its list fields "
                "(tags, owners, columns, ...) hold only the members its events added, and values it was created with "
                "are unknown; each event keeps the whole entity as it stood then (om-event:entityState, shown by "
                "`changeprov describe`)"]
    if store.ask(lookup("bare-creation"), {"entity": bound["entity"]}):
        return ["the creation event of this OpenMetadata entity carries no entity (no `entity` field): the values "
                "it was created with (tags, owners, columns, ...) are unknown, and its list fields hold only the "
                "members later events added"]
    return []


def _outside_window(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """An entity with events, none in the window asked (rv37 #7): not 'nothing ever happened'."""
    if "since" not in bound and "until" not in bound:
        return []
    rows = store.select(lookup("entity-span"), {"entity": bound["entity"]}).rows
    if not rows or rows[0][1] is None or int(rows[0][1].value) == 0:
        return []
    _, n, first, last = rows[0]
    # "of its own": entity-history also lists other entities' lineage events that added or cut an edge
    # from it (rv41 #9), and those are not counted here
    return [f"the entity has {int(n.value):,} event(s) of its own, from {display_text(first)} to "
            f"{display_text(last)}, none between since and until"]


#: ``# if-empty: NAME`` checks: (store, bound parameters) → notes explaining an empty answer
EMPTY_CHECKS = {"unversioned": _unversioned_or_unknown, "unchanged-field": _unchanged_field,
                "impersonations": _impersonations, "column-lineage": _column_lineage,
                "hard-deleted": _hard_deleted, "not-a-job": _not_a_job, "not-a-dataset": _not_a_dataset,
                "no-creation": _no_creation, "window": _outside_window, "other-identities": _other_identities,
                "ended-upstream": _ended_lineage("upstream"), "ended-downstream": _ended_lineage("downstream")}


_CATEGORY = re.compile(r"[A-Z][A-Z_]*")

#: a change-event category → the aspects whose MCLs report the same changes, as DataHub's change-event
#: generators pair them (a column's tags and descriptions in the schema aspects; LIFECYCLE also from
#: any key aspect, ``…Key``: see _twins)
_TWIN_ASPECTS = {"TAG": {"globalTags", "schemaMetadata", "editableSchemaMetadata"},
                 "GLOSSARY_TERM": {"glossaryTerms", "schemaMetadata", "editableSchemaMetadata"},
                 "DOMAIN": {"domains"}, "OWNER": {"ownership"}, "OWNERSHIP": {"ownership"},
                 "STRUCTURED_PROPERTY": {"structuredProperties"}, "DEPRECATION": {"deprecation"},
                 "DOCUMENTATION": {"editableDatasetProperties", "datasetProperties", "editableSchemaMetadata",
                                   "schemaMetadata", "documentation", "institutionalMemory", "glossaryTermInfo"},
                 "TECHNICAL_SCHEMA": {"schemaMetadata"}, "LIFECYCLE": {"status"},
                 "RUN": {"dataProcessInstanceRunEvent", "assertionRunEvent"}, "INCIDENT": {"incidentInfo"},
                 "APPLICATION": {"applications"}}


def _twins(category: str, aspect: str) -> bool:
    """Whether DataHub reports changes of ``aspect`` (a field name: its first part) as ``category`` too."""
    name = aspect.split(".")[0]
    return name in _TWIN_ASPECTS.get(category, ()) or (category == "LIFECYCLE" and name.endswith("Key"))


def _datahub_views(_store: TripleStore, _bound: Mapping, rows: Rows) -> list[str]:
    """A DataHub entity's state mixes two views of the same changes (ut6a #7): say so, or "who owns
    it?" reads as two different answers."""
    if "field" not in rows.variables:
        return []
    i = rows.variables.index("field")
    names = {r[i].value for r in rows.rows if r[i] is not None}
    categories = sorted(n for n in names if _CATEGORY.fullmatch(n))
    # an aspect's name starts in lower case (ownership, upstreamLineage); a relationship change's type
    # (DownstreamOf) is neither view (ut41c #9)
    aspects = sorted(n for n in names if n[:1].islower())
    # only where a change is in both (ut43a #4: upstreamLineage beside OWNERSHIP is no change reported twice)
    if not any(_twins(c, a) for c in categories for a in aspects):
        return []
    return [f"DataHub reports a change twice and both views are listed: as an aspect (its MetadataChangeLog; "
            f"here {', '.join(aspects[:6])}{', …' if len(aspects) > 6 else ''}: the aspect's value, list aspects "
            f"one row per member) and as a change-event category (its EntityChangeEvent; here "
            f"{', '.join(categories[:6])}{', …' if len(categories) > 6 else ''}: one row per member or modifier)"
            + _owner_views(rows, i, aspects, categories)]


def _owner_views(rows: Rows, i: int, aspects: list[str], categories: list[str]) -> str:
    """Whether the two views of the owners agree here: each view has only the changes DataHub sent in
    it, so an owner added by one event alone is in one view only (ut25 #5: the note said "the same
    owners" of rows that named two different ones)."""
    if "ownership" not in aspects or not {"OWNER", "OWNERSHIP"} & set(categories) or "value" not in rows.variables:
        return ""  # a user's query file may ask for the note without the values (rv43 M2)
    j = rows.variables.index("value")
    views = {view: {r[j].value for r in rows.rows if r[i] is not None and r[i].value in names and r[j] is not None}
             for view, names in (("aspect", {"ownership"}), ("events", {"OWNER", "OWNERSHIP"}))}
    if views["aspect"] == views["events"]:
        return "; OWNERSHIP (also the older OWNER) and ownership list the same owners"
    return ("; OWNERSHIP (also the older OWNER) and ownership name different owners here: each view has only the "
            "changes DataHub sent in it (impact names the owners of both)")


def _clock_skew(store: TripleStore, bound: Mapping, _rows: Rows) -> list[str]:
    """A change that revises a version stamped later (ut20 #8). A DataHub entity's changes are ordered
    by time (its versions count per aspect), so the state may show a value its writer had already
    replaced. An OpenMetadata entity's are ordered by the version chain (ut41c #2, ut42b #3); only as of
    a time between the two may the state lack the change that made the version a change in it revises.
    At a version the chain decides alone (rv41 #5)."""
    entity = bound.get("entity")
    if "version" in bound:
        return []
    openmetadata = isinstance(entity, ox.NamedNode) and entity.value.startswith(OM_ENTITY)
    if openmetadata and "as_of" not in bound:
        return []
    rows = store.select(lookup("clock-skew-past-as-of") if openmetadata else lookup("clock-skew"),
                        {k: bound[k] for k in ("entity", "as_of") if k in bound}).rows
    if not rows:
        return []
    *_, time, later, aspect = rows[0]
    where = f" (of {aspect.value})" if aspect is not None else ""
    if openmetadata:
        return [f"the timestamps and the version chain disagree here: a change at {time.value} revises a version "
                f"stamped {later.value}, after as_of (a writer's clock ran behind?); as of this time the state has "
                f"that change but not the one that made the version it revises; `changeprov audit` lists each such "
                f"change as out-of-order"]
    return [f"the timestamps and the version chain disagree here: a change at {time.value}{where} revises a "
            f"version stamped {later.value} (a writer's clock ran behind?); the state follows the timestamps, "
            f"so a value its writer had already replaced may be shown; `changeprov audit` lists each such "
            f"change as out-of-order"]


def _same_millisecond(store: TripleStore, bound: Mapping, _rows: Rows | None) -> list[str]:
    """Change events in one millisecond that add and remove one member (ut43a #3): the answer takes
    one order (by IRI), which the log does not give; say so rather than let a tag or owner come and go
    from one dataset to the next of identical input."""
    if "entity" in bound:
        query, params = lookup("tied-of-entity"), {k: bound[k] for k in ("entity", "as_of") if k in bound}
    elif "tag" in bound:
        query, params = lookup("tied-of-member"), {"member": bound["tag"]}
    else:
        return []
    notes = []
    if "entity" in bound:
        tie = store.select(lookup("unversioned-tie"), params).dicts()
        if tie:
            notes.append(f"changes of {display_text(tie[0]['aspect'])} in one millisecond ({display_text(tie[0]['time'])}) "
                         f"carry no aspect version (systemMetadata.version) or previous version that orders them, so "
                         f"which came last is not known (taken by IRI); `entity-history` lists them")
    rows = store.select(query, params).dicts()
    if not rows:
        return notes
    if "entity" in bound:
        where = "; `entity-history` lists both"
    else:
        names = sorted({display_text(r["entity"]) for r in rows})
        where = " on " + ", ".join(names[:3]) + (" and more" if len(names) > 3 else "")
    return [f"change events in one millisecond ({display_text(rows[0]['time'])}) add and remove "
            f"{display_text(rows[0]['member'])}: DataHub gives them no order, so which came last is not known "
            f"(taken by IRI){where}", *notes]


def _deleted_labels(store: TripleStore, bound: Mapping, rows: Rows) -> list[str]:
    """A tag or glossary term in the state that was itself hard-deleted by then (ut44b #6): OpenMetadata
    takes a deleted label off every asset without a change event for each, so the log cannot end it."""
    if "entity" not in bound:
        return []
    shown: dict[str, list] = {}  # a label's FQN → when the rows showing it set it
    for r in rows.dicts():
        if r.get("value") is not None and r.get("field") is not None and r["field"].value.rsplit(".", 1)[-1] == "tags":
            shown.setdefault(r["value"].value, []).append(r.get("set_at"))
    if not shown:
        return []
    # deleted after a row set it (a term re-created and applied again after the delete is no such case)
    at = {k: bound[k] for k in ("entity", "as_of") if k in bound}
    gone = [r for r in store.select(lookup("deleted-labels"), at).dicts()
            if any(t is None or t.value < r["time"].value for t in shown.get(r["fqn"].value, []))]
    return [f"{r['fqn'].value} was hard-deleted at {display_text(r['time'])}: OpenMetadata takes a deleted tag or "
            f"glossary term off every asset without a change event for each, so the log does not end it here"
            for r in gone[:5]]


def _former_names(store: TripleStore, _bound: Mapping, rows: Rows) -> list[str]:
    """A row found by a name a renamed OpenMetadata entity gave up: passed as entity=, that name names
    the entity that holds it now (ut40 #6), so say which name names this one."""
    out = []
    for r in rows.dicts():
        node, name = r.get("entity"), r.get("name")
        if not isinstance(node, ox.NamedNode) or name is None or not node.value.startswith(OM_ENTITY):
            continue
        now = _current_name(store, node)
        if now is not None and now != name.value:
            out.append(f"{name.value[:120]!r} is a name {node.value} had before a rename (now {now}): as entity= it "
                       f"names the entity that holds it now, if one does; pass {now!r} or the IRI for this one")
    return out[:5] + ([f"... and {len(out) - 5} more former names"] if len(out) > 5 else [])


def _soft_deleted_since(store: TripleStore, assets: list[ox.NamedNode], as_of: ox.Literal | None) -> dict[ox.NamedNode, str]:
    """The assets soft-deleted at ``as_of`` (None: now) and not restored by then → since when (the first
    soft delete still in force). One lookup per asset (0.55 ms on 2.26M triples); on an endpoint one
    request per 200 assets."""
    at = {"as_of": as_of} if as_of is not None else {}
    if store.kind == "remote":  # ut41d #6: a request per asset, 2 s for 1,500; a VALUES block of 200 rows each
        found = [row for i in range(0, len(assets), 200) for row in store.select(
            with_rows(lookup("soft-deleted"), [{"entity": a, **at} for a in assets[i:i + 200]])).rows]
    else:
        found = [row for a in assets for row in store.select(lookup("soft-deleted"), {"entity": a, **at}).rows]
    first: dict[ox.NamedNode, ox.Literal] = {}
    for entity, _, time in found:
        if entity not in first or _instant(time.value) < _instant(first[entity].value):
            first[entity] = time
    return {entity: display_text(time) for entity, time in first.items()}


def _soft_deleted(store: TripleStore, bound: Mapping, rows: Rows) -> list[str]:
    """Assets of a lineage answer that were soft-deleted at its time (ut41c #7): their edges still count,
    as the log never ended them, but OpenMetadata and DataHub hide such an asset from lineage, and
    impact listed it with its owners as if it were live."""
    if "asset" not in rows.variables:
        return []
    a = rows.variables.index("asset")
    named = rows.variables.index("asset_name") if "asset_name" in rows.variables else a
    assets = [r[a] for r in rows.rows if isinstance(r[a], ox.NamedNode)]
    since = _soft_deleted_since(store, assets, bound.get("as_of"))
    found = [f"{display_text(r[named])} (since {since[r[a]]})" for r in rows.rows if r[a] in since]
    if not found:
        return []
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return [f"soft-deleted at this time and not restored: {shown}; their lineage edges still count here (no event "
            "ended them), while OpenMetadata and DataHub hide a soft-deleted asset from lineage"]


EMPTY_CHECKS["same-millisecond"] = lambda store, bound: _same_millisecond(store, bound, None)


def _earlier_values(store: TripleStore, bound: Mapping, rows: Rows | None = None) -> list[str]:
    """entity-state at a past point showed only fields some change at or before it had set: a value the
    entity had from its creation and that a later change replaced (a glossary term's status "Draft") was
    missing, though that change's old value tells it (ut47a #3). Said in a note, not as a row: no event
    of the log set it. Only where the field's first change after the point replaced a value (an update
    with an old value), and no change at or before the point touched the field."""
    if "as_of" not in bound and "version" not in bound:
        return []
    params = {k: bound[k] for k in ("entity", "as_of", "version") if k in bound}
    if not store.ask(lookup("events-by"), params):
        return []
    shown = {r[rows.variables.index("field")].value for r in rows.rows} if rows and rows.rows else set()
    changes = store.select(lookup("field-changes"), params).dicts()
    # the fields some change at or before the point touched: their state is the query's to tell
    shown |= {r["fname"].value for r in changes if r["after"].value != "true"}
    first: dict[str, tuple] = {}
    for r in changes:
        name = r["fname"].value
        # a DataHub change event's value of one modifier (one of several under its category) says
        # nothing of the whole field's value either
        if name in shown or r["member"].value == "true" or (r.get("old") or ox.Literal("")).value.startswith('{"modifier"'):
            continue
        # OpenMetadata's changes in version order, DataHub's (no version) by time
        key = (Decimal(r["v"].value) if r.get("v") is not None else Decimal(0), _instant(r["time"].value))
        old = r["old"].value if r["kind"].value == OM_EVENT + "fieldsUpdated" and r.get("old") is not None else None
        if name not in first or key < first[name][0]:
            first[name] = (key, old, r["time"])
    said = [f"{name} = {_short(old)} (until {display_text(time)})"
            for name, (_, old, time) in sorted(first.items()) if old is not None]
    if not said:
        return []
    more = f" and {len(said) - 5} more" if len(said) > 5 else ""
    return ["fields no change at or before this point set, with the value the first later change replaced (set "
            "when the entity was created, or before the log begins): " + "; ".join(said[:5]) + more]


def _short(text: str, width: int = 80) -> str:
    return repr(text if len(text) <= width else text[:width - 1] + "…")


EMPTY_CHECKS["earlier-values"] = lambda store, bound: _earlier_values(store, bound, None)


def _unknown_node(store: TripleStore, bound: Mapping, rows: Rows) -> list[str]:
    """label's row of a node the store does not hold at all reads as a kind of node (ut47a #8)."""
    kinds = {r[rows.variables.index("kind")].value for r in rows.rows if r[rows.variables.index("kind")] is not None}
    if kinds != {"other"} or store.ask(lookup("mentioned"), {"node": bound["node"]}):
        return []
    return [f"the store has no triple with {bound['node'].value}"]


#: ``# if-rows: NAME`` checks: rows → notes explaining an answer
ROW_CHECKS = {"datahub-views": _datahub_views, "impersonations": _impersonations, "clock-skew": _clock_skew,
              "other-identities": _other_identities,
              "former-names": _former_names, "soft-deleted": _soft_deleted, "same-millisecond": _same_millisecond,
              "deleted-labels": _deleted_labels, "earlier-values": _earlier_values, "unknown-node": _unknown_node,
              "unknown-version": lambda store, bound, _rows: _versions_note(store, bound),
              "no-creation": lambda store, bound, _rows: _no_creation(store, bound)}


