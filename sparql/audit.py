"""The audit: named ``audit-*`` queries → activity counts, findings with their evidence events, and the
lineage around the most impacted asset. Rendering lives in :mod:`changeprov.sparql.audit_html`.

Every finding names the event IRIs that prove it, so a reviewer can ``changeprov describe`` them.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.mapping import terms
from changeprov.sparql.formats import display_datetime, display_text
from changeprov.sparql.notes import _instant
from changeprov.sparql.params import _check_window, param_text, regex_literal
from changeprov.sparql.queries import get_query, lookup, parse_time, run_query, user_name
from changeprov.sparql.stores import Rows, TripleStore


@dataclass(frozen=True)
class Kind:
    title: str
    severity: str  # high | medium | low
    description: str


KINDS: dict[str, Kind] = {
    "schema-drop": Kind("Schema fields dropped on entities with downstream dependents", "high",
                        "A column / schema field was removed while other assets still derived from the entity."),
    "deletion-with-dependents": Kind(
        "Deletions of entities that still had downstream dependents", "high",
        "A soft or hard delete while some asset still derived from the entity."),
    "version-regression": Kind("Version regressions", "high",
                               "A version number went down, or one version was generated twice."),
    "version-gap": Kind("Version gaps", "medium",
                        "An event revises or uses a version that no event in the log generated (missing history)."),
    "out-of-order": Kind("Out-of-order timestamps", "medium",
                         "An event is timestamped before the event that generated the version it revises or uses."),
    "change-after-delete": Kind("Changes to hard-deleted entities", "medium",
                                "An event changed an entity after its hard delete, with no re-creation in "
                                "between: the log misses events or mixes two catalogs."),
    "duplicate-name": Kind("Two live entities with one name", "medium",
                           "Two entities of one type had the same fullyQualifiedName at the same time "
                           "(OpenMetadata keeps names unique; a soft-deleted entity keeps its name)."),
    "duplicate-id": Kind("One entity id, two entities", "medium",
                         "Events give one OpenMetadata entityId to two entities (the id under two entity "
                         "types, say table and Table): ids are unique, so each entity holds part of one "
                         "history, and names resolve to both."),
    "conflicting-event": Kind("One event id with two contents", "high",
                              "Lines with one event id and different content (time, user) were mapped by "
                              "different export runs or loaded from two exports: the event holds both, "
                              "so every answer about it is in doubt."),
    "lineage-removed": Kind("Lineage edges removed", "medium",
                            "A lineage edge was removed (lineage delete, upstreamLineage change, "
                            "relationship REMOVE), or a column edge its table edge's lineage no longer "
                            "states."),
    "sensitive-tag": Kind("Classification / PII tags added or removed", "medium",
                          "A classification or PII tag or glossary term was assigned or taken away."),
    "impersonated": Kind("Impersonated changes", "medium", "A change made by one agent on behalf of another."),
    "no-user": Kind("Changes with no user", "medium", "A change event that names no user or agent."),
    "schema-drop-unused": Kind("Schema fields dropped that column-level lineage shows no dependent used", "low",
                               "A column / schema field was removed from an entity with downstream dependents, "
                               "but the lineage of each dependent lists its columns, and none is from this one."),
    "deletion": Kind("Deletions (no remaining downstream dependents)", "low",
                     "A soft or hard delete; nothing derived from the entity any more at that time."),
    "unknown-entity": Kind("Lineage to entities with no events", "low",
                           "A lineage edge names an entity that no event in the log affects: nothing is "
                           "known of it but its name (a missing history, or a typo in the lineage)."),
    "bot": Kind("Changes by bots and technical accounts", "low",
                "Changes made by a user whose name matches the bot pattern; one finding per bot."),
}
SEVERITY_WEIGHT = {"high": 3, "medium": 2, "low": 1}

_DATASET = re.compile(r"urn:li:dataset:\(urn:li:dataPlatform:([^,]+),(.+),([A-Z_]+)\)\Z")
_FIELD = re.compile(r"urn:li:schemaField:\((urn:li:dataset:\(.+\)),(.+)\)\Z")


def short_name(name: str | None) -> str:
    """A readable label: DataHub dataset URN → ``platform:name``, schemaField URN → ``dataset.field``."""
    if not name:
        return "?"
    m = _FIELD.match(name)
    if m:
        return f"{short_name(m.group(1))}.{m.group(2)}"
    m = _DATASET.match(name)
    if m:
        return f"{m.group(1)}:{m.group(2)}"
    return name


@dataclass
class Finding:
    kind: str
    time: str
    summary: str
    events: list[str]
    entity: str | None = None
    entity_name: str | None = None
    details: dict = field(default_factory=dict)

    @property
    def severity(self) -> str:
        return KINDS[self.kind].severity


@dataclass
class Lineage:
    entity: str
    entity_name: str
    as_of: str
    edges: list[dict]  # down, up, down_name, up_name, valid, edge


@dataclass
class AuditReport:
    store: str
    since: str | None
    until: str | None
    generated_at: str
    activity: list[tuple[str, str, int]]  # (day, user, events)
    top_entities: list[dict]
    findings: list[Finding]
    lineage: Lineage | None = None
    #: the patterns that chose bots and sensitive tags (ut42d #2: a baseline of other patterns differs)
    bot_pattern: str | None = None
    tag_pattern: str | None = None

    def counts(self) -> dict[str, int]:
        n = defaultdict(int)
        for f in self.findings:
            n[f.kind] += 1
        return {k: n[k] for k in KINDS if n[k]}

    def by_day(self) -> list[tuple[str, int, dict[str, int]]]:
        days: dict[str, dict[str, int]] = defaultdict(dict)
        for day, user, count in self.activity:
            days[day][user] = days[day].get(user, 0) + count
        return [(d, sum(u.values()), u) for d, u in sorted(days.items())]

    def by_user(self) -> list[tuple[str, int]]:
        users: dict[str, int] = defaultdict(int)
        for _, user, count in self.activity:
            users[user] += count
        return sorted(users.items(), key=lambda kv: (-kv[1], kv[0]))

    def of_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def to_dict(self, compared: Comparison | None = None, *, baseline: str | None = None) -> dict:
        """The JSON report (``audit --format json``); with ``compared`` (``compare(self, earlier)``), each
        finding marked ``new`` and a ``baseline`` block naming ``baseline`` (the earlier report's file):
        what ``baseline_findings`` reads back, written beside it (mq1 #9)."""
        data = {
            "store": self.store, "since": self.since, "until": self.until, "generated_at": self.generated_at,
            "bot_pattern": self.bot_pattern, "tag_pattern": self.tag_pattern,
            "summary": {"events": sum(c for _, _, c in self.activity), "findings": len(self.findings),
                        "by_kind": self.counts()},
            "kinds": {k: asdict(v) for k, v in KINDS.items()},
            "activity": {"by_day": [{"day": d, "events": n, "by_user": u} for d, n, u in self.by_day()],
                         "by_user": [{"user": u, "events": n} for u, n in self.by_user()]},
            "top_entities": self.top_entities,
            "findings": [{**asdict(f), "severity": f.severity} for f in self.findings],
            "lineage": asdict(self.lineage) if self.lineage else None,
        }
        if compared is not None:
            new = {id(f) for f in compared.new}
            for record, finding in zip(data["findings"], self.findings):
                record["new"] = id(finding) in new
            data["baseline"] = {"report": baseline, "new": len(compared.new), "known": len(compared.known),
                                "changed": len(compared.changed), "gone": compared.gone,
                                "warnings": compared.warnings}
        return data


@dataclass
class Comparison:
    """A report against an earlier one (``audit --baseline``): which findings are new since it."""
    new: list[Finding]
    known: list[Finding]
    #: the earlier report's findings that this one no longer has (their JSON records)
    gone: list[dict]
    #: known findings whose text changed (a bot's count, a drop's dependents)
    changed: list[Finding] = field(default_factory=list)
    #: what makes the comparison doubtful (another store, another window)
    warnings: list[str] = field(default_factory=list)


#: the details that tell two findings of a kind apart at one time and entity; the summaries hold
#: counts and lists that grow with the store, and a bot's events grow with it (rv38 #1)
_IDENTITY = {"bot": ("user",), "sensitive-tag": ("tag", "action", "user"), "schema-drop": ("field",),
             "schema-drop-unused": ("field",), "deletion": ("deletion",), "deletion-with-dependents": ("deletion",),
             "lineage-removed": ("edge",), "version-gap": ("missing",)}
#: kinds whose time is their first event's, which a late line dated earlier moves (rv39 #2)
_TIMELESS = {"bot", "version-gap"}


def identity(kind: str, time: str | None, entity: str | None, details: dict, events: list, summary: str) -> tuple:
    """What makes a finding the same one in two reports: its kind, time and entity, and the details
    that tell it apart; a kind without such details by its events and its text, which do not grow
    (two regressions of one event differ in both: rv39 #1)."""
    names = _IDENTITY.get(kind)
    if names:
        rest = tuple(json.dumps(details.get(n), sort_keys=True) for n in names)
    else:
        rest = (json.dumps(sorted(map(str, events))), summary)
    return (kind, None if kind in _TIMELESS else time, entity, *rest)


def _identity_of(f: Finding) -> tuple:
    return identity(f.kind, f.time, f.entity, f.details, f.events, f.summary)


def compare(report: AuditReport, baseline: object) -> Comparison:
    """Split ``report``'s findings into new and known by an earlier report's JSON (``to_dict``): a
    finding is known when the earlier one has one of the same ``identity``. A nightly audit of a store
    that grows then fails on what last night added, including late lines dated earlier, which a
    --since window by event time misses (ut23 #2)."""
    before: dict[tuple, list[dict]] = {}
    for f in baseline_findings(baseline):
        key = identity(f["kind"], f.get("time"), f.get("entity"), f["details"], f["events"], f.get("summary"))
        before.setdefault(key, []).append(f)
    keyed = [(f, _identity_of(f)) for f in report.findings]
    now = {key for _, key in keyed}
    new = [f for f, key in keyed if key not in before]
    known = [f for f, key in keyed if key in before]
    changed = [f for f, key in keyed if key in before and all(b.get("summary") != f.summary for b in before[key])]
    def shown(value, key: str) -> str:  # ut45e #7: "this one of None (since)"
        return repr(value) if value is not None else {"store": "no store", "since": "no start (the whole history)",
                                                      "until": "no end (up to now)"}[key]

    warnings = [f"the baseline is a report of {shown(baseline.get(k), k)}, this one of {shown(getattr(report, k), k)} "
                f"({k})" for k in ("store", "since", "until")
                if _same_store(baseline.get(k)) != _same_store(getattr(report, k))]
    # (a baseline written before the patterns were recorded says nothing of them)
    warnings += [f"the baseline chose {what} by {baseline.get(k)!r}, this report by {getattr(report, k)!r} ({k})"
                 for k, what in (("bot_pattern", "bots"), ("tag_pattern", "sensitive tags"))
                 if k in baseline and baseline.get(k) != getattr(report, k)]
    gone = [f for key, group in before.items() if key not in now for f in group]
    return Comparison(new, known, gone, changed, warnings)


def _same_store(description: object) -> object:
    """An embedded store by its real path: named through a link, or relatively as reports before
    e3d7454 named it (from the folder the audit ran in), it is the same store (rv43 L1)."""
    prefix = "embedded store "
    if isinstance(description, str) and description.startswith(prefix):
        return prefix + os.path.realpath(description[len(prefix):])
    return description


def baseline_findings(baseline: object) -> list[dict]:
    """The finding records of an earlier report's JSON; InputError for anything else (checked before
    the audit runs, too)."""
    records = baseline.get("findings") if isinstance(baseline, dict) else None
    if not isinstance(records, list) or not all(
            isinstance(f, dict) and isinstance(f.get("kind"), str) and isinstance(f.get("details"), dict)
            and isinstance(f.get("events"), list) and all(isinstance(e, str) for e in f["events"])
            # compared as keys: a list or an object here was an internal error (rv40 m4)
            and all(isinstance(f.get(k), (str, type(None))) for k in ("time", "entity", "summary"))
            for f in records):
        raise InputError("the baseline is not an audit report (changeprov audit --format json)")
    return records


# ----------------------------------------------------------------------------- running the queries


def _v(term) -> str | None:
    # times as the query table shows them, not in the store's shortest forms (…05Z beside …05.5Z)
    return None if term is None else display_text(term)


def _rows(store: TripleStore, name: str, params: dict, *, now_ms: int | None) -> list[dict]:
    rows: Rows = run_query(store, get_query(name), {k: v for k, v in params.items() if v is not None},
                           now_ms=now_ms)
    out = [{k: _v(t) for k, t in r.items()} for r in rows.dicts()]
    for r in out:  # a blank OpenMetadata userName names no user, in every finding (rv44b #6: "… by ")
        if isinstance(r.get("user"), str) and not r["user"].strip():
            r["user"] = "(no user)"
    return out


def _short_list(names: Iterable[str]) -> str:
    return ", ".join(short_name(n) for n in names)


def _group(rows: Iterable[dict], key) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def _events(rows: list[dict], column: str = "event") -> list[str]:
    return sorted({r[column] for r in rows if r.get(column)})


def _with_other(r: dict, **details) -> tuple[list[str], dict]:
    """A finding's evidence: its event and the one it conflicts with (``other_event``), and the
    ``details`` with that event's time, when the row has one."""
    events = [r["event"]] + ([r["other_event"]] if r.get("other_event") else [])
    return events, details | ({"other_time": r["other_time"]} if r.get("other_time") else {})


def _version_findings(rows: list[dict]) -> list[Finding]:
    kinds = {"gap": "version-gap", "regression": "version-regression", "out-of-order": "out-of-order"}
    out = []
    # one gap per missing version, however many events used it (an OpenMetadata pipeline's status
    # events all use its last version: ut17 #5), at the first of them; the version node, not its text,
    # which for DataHub names only the aspect (rv35 #2)
    gaps = _group((r for r in rows if r["problem"] == "gap"), lambda r: r["missing"])
    for group in gaps.values():
        group.sort(key=lambda r: (r["time"], r["event"]))
        first = group[0]
        entity, version = first["entity"], first["version"]
        more = f" (used by {len(group)} events, the first at this time)" if len(group) > 1 else ""
        out.append(Finding("version-gap", first["time"], f"{version}: {first['detail']}{more}", _events(group),
                           entity, first["entity_name"], {"version": version, "user": first["user"],
                                                          "missing": first["missing"]}))
    for r in rows:
        if r["problem"] == "gap":
            continue
        events, details = _with_other(r, version=r["version"], user=r["user"])
        out.append(Finding(kinds[r["problem"]], r["time"], f"{r['version']}: {r['detail']}", events,
                           r["entity"], r["entity_name"], details))
    return out


def _agent_findings(rows: list[dict]) -> list[Finding]:
    out = []
    for r in rows:
        if r["problem"] == "no-user":
            out.append(Finding("no-user", r["time"], "change event without a user", [r["event"]],
                               r["entity"], r["entity_name"]))
        elif r["problem"] == "impersonated":
            by = user_name(r["impersonator"])
            # no user (its own no-user finding too): not "on behalf of None" (ut44g #5)
            out.append(Finding("impersonated", r["time"], f"made by {by} on behalf of {r['user'] or '(no user)'}",
                               [r["event"]], r["entity"], r["entity_name"],
                               {"user": r["user"], "impersonator": by}))
    return out


def _duplicate_id_findings(store: TripleStore, times: dict) -> list[Finding]:
    """Events that give one OpenMetadata entityId to two entities (ua51 #1: an entityType "Table" beside
    "table" made a second node of one table, and every query by its name failed as ambiguous, while the
    audit found nothing): a finding for each entity after the first, at its first event with the id."""
    out = []
    for (entity_id,) in store.select(lookup("duplicate-ids")).rows:
        first: dict = {}
        for r in store.select(lookup("id-events"), {"id": entity_id}).dicts():  # in time order
            first.setdefault(r["entity"], r)
        if len(first) < 2:  # its events have no time (no export writes such): nothing to order
            continue
        earliest, *later = first.values()
        for r in later:
            at = _instant(r["time"].value)
            if (times["since"] is not None and at < _instant(times["since"].value)
                    or times["until"] is not None and at > _instant(times["until"].value)):
                continue
            user = (r["user"].value.strip() if r["user"] is not None else "") or "no user"
            summary = (f"first event by {user}; another entity has its entityId {entity_id.value}: "
                       f"{earliest['entity'].value} (since {_v(earliest['time'])})")
            out.append(Finding("duplicate-id", _v(r["time"]), summary, [_v(r["event"]), _v(earliest["event"])],
                               _v(r["entity"]), _v(r["entity_name"]) or _v(r["entity"]),
                               {"user": _v(r["user"]), "other_time": _v(earliest["time"])}))
    return out


def _integrity_findings(rows: list[dict]) -> list[Finding]:
    out = []
    # a conflicting event has a row per user: one finding naming them all
    conflicting = _group((r for r in rows if r["problem"] == "conflicting-event"), lambda r: r["event"])
    # an unknown entity has a row per event that first named it in that millisecond (ut42b #5)
    unknown = _group((r for r in rows if r["problem"] == "unknown-entity"), lambda r: r["entity"])
    for r in rows:
        user = r["user"] or "no user"
        if r["problem"] == "change-after-delete":
            summary = f"changed by {user} after its hard delete at {r['other_time']}"
        elif r["problem"] == "duplicate-name":
            summary = f"created by {user}; {r['detail']} (there since {r['other_time']})"
        elif r["problem"] == "conflicting-event":
            group = conflicting[r["event"]]
            if group[0] is not r:
                continue  # its first row made the finding
            users = sorted({x["user"] or "no user" for x in group})
            summary = f"{r['detail']} (times {r['time']} to {r['other_time']}; users {', '.join(users)})"
        else:
            group = unknown[r["entity"]]
            if group[0] is not r:
                continue
            users = ", ".join(sorted({x["user"] or "no user" for x in group}))
            summary = f"in lineage first added by {users}, but no event affects it"
            out.append(Finding(r["problem"], r["time"], summary, _events(group), r["entity"], r["entity_name"],
                               {"user": r["user"]}))
            continue
        events, details = _with_other(r, user=r["user"])
        out.append(Finding(r["problem"], r["time"], summary, events, r["entity"], r["entity_name"], details))
    return out


def _bot_findings(rows: list[dict]) -> list[Finding]:
    return [Finding("bot", r["first"], f"{r['user']}: {r['changes']} change(s) on {r['entities']} entit(ies) "
                    f"from {r['first']} to {r['last']}", sorted(r["events"].split()),
                    details={"user": r["user"], "changes": int(r["changes"]), "entities": int(r["entities"]),
                             "last": r["last"]})
            for r in rows]


_SCHEMA_FIELD = re.compile(r"urn:li:schemaField:\((urn:li:dataset:\(.*\)),(.*)\)")
_COLUMN_TAGS = re.compile(r"(?:editableSchemaMetadata|schemaMetadata)\.(.+)\.(?:globalTags|glossaryTerms)")


def _tagged(r: dict) -> tuple:
    """What a tag row is about: a DataHub column as (dataset URN, field path), whether the row is the
    dataset's schema MCL (``editableSchemaMetadata.email.globalTags``) or the column's own TAG event, so
    that one user action on DataHub's two feeds is one finding (ut41c #1); else the entity."""
    name = r["entity_name"] or ""
    column = _SCHEMA_FIELD.fullmatch(name)
    if column:
        return column.groups()
    on_field = _COLUMN_TAGS.fullmatch(r["field"] or "")
    if on_field and name.startswith("urn:li:dataset:"):
        return name, on_field.group(1)
    return (r["entity"],)


def _tag_findings(rows: list[dict]) -> list[Finding]:
    out = []
    # by user too: two users tagging two columns in one millisecond are two findings (ut44g #3: bob's went
    # into alice's); DataHub's two feeds of one action name the same actor
    groups = _group(rows, lambda r: (r["time"], _tagged(r), r["action"], r["tag"], r["user"]))
    for (t, about, action, tag, _user), group in groups.items():
        # a DataHub column's finding is about its dataset, as OpenMetadata's about the table, whichever
        # of the two feeds the store has (ut42d #1: the finding moved from the schemaField to the dataset
        # when the second feed arrived, and a baseline called it new)
        r = min(group, key=lambda g: (bool(_SCHEMA_FIELD.fullmatch(g["entity_name"] or "")), g["field"]))
        column = about[1] if len(about) == 2 else None
        entity, entity_name = (about[0], about[0]) if column is not None else (r["entity"], r["entity_name"])
        # a schemaField's own event names the change category (TAG): say which column
        fields = sorted({f"{column} ({g['field']})" if _SCHEMA_FIELD.fullmatch(g["entity_name"] or "") else g["field"]
                         for g in group})
        prep = "to" if action == "added" else "from"
        created = r.get("at_creation") == "true"  # not a change to a live entity: it was created so
        out.append(Finding("sensitive-tag", t, f"{r['kind']} {short_name(r['tag_name'])} {action} {prep} "
                           f"{', '.join(fields)}{' at creation' if created else ''} by {r['user']}", _events(group),
                           entity, entity_name,
                           {"tag": tag, "tag_name": r["tag_name"], "action": action, "kind": r["kind"],
                            "fields": fields, "user": r["user"], "at_creation": created}))
    return out


def _job_inputs(store: TripleStore) -> dict[ox.NamedNode, set[ox.NamedNode]]:
    """Every dataset any DataHub job ever read -> those jobs (one query for the whole store)."""
    readers: dict = defaultdict(set)
    for r in store.select(lookup("job-inputs")).dicts():
        readers[r["dataset"]].add(r["job"])
    return readers


def _still_read_by(store: TripleStore, readers: dict, dataset: ox.NamedNode, t: str) -> list[str]:
    """The jobs whose inputs listed ``dataset`` just before ``t`` (the change at t itself, a delete,
    ends what it deletes)."""
    before = terms.xsd_datetime(terms.rfc3339_to_ms(t) - 1)
    io = get_query("job-io")
    return sorted(user_name(job.value) for job in readers.get(dataset, ()) if store.select(
        io.text, {"job": job, "dataset": dataset, "only": ox.Literal("input"), "as_of": before}).rows)


def _job_readers(store: TripleStore, readers: dict, rows: list[dict]) -> dict[tuple[str, str], list[str]]:
    """(entity, time) of each deletion -> the DataHub jobs that still read it just before (ut13 #3):
    a job's inputs are no lineage edge, yet the job breaks like a dependent does."""
    out: dict[tuple[str, str], list[str]] = {}
    for entity, t in {(r["entity"], r["time"]) for r in rows}:
        if ox.NamedNode(entity) in readers:
            out[(entity, t)] = _still_read_by(store, readers, ox.NamedNode(entity), t)
    return out


def _job_read_drops(store: TripleStore, readers: dict, findings: list[Finding], since: str | None,
                    until: str | None) -> list[Finding]:
    """Schema drops of datasets that DataHub jobs still read (ut13 #3): the jobs join the drop's
    dependents (which columns a job reads is not known), or make a schema-drop finding of their own."""
    by_key = {(f.time, f.entity, f.details["field"]): f for f in findings if f.kind in ("schema-drop", "schema-drop-unused")}
    out = []
    for r in store.select(lookup("schema-removals")).dicts():
        entity, t = r["entity"], display_datetime(r["time"].value)
        if entity not in readers or (since and t < since) or (until and t > until):
            continue
        jobs = _still_read_by(store, readers, entity, t)
        if not jobs:
            continue
        field_iri, user = r["field"].value, display_text(r["user_name"] or r["agent"]) if (r["user_name"] or r["agent"]) else ""
        known = by_key.get((t, entity.value, field_iri))
        if known is not None:
            known.kind = "schema-drop"
            known.details["dependents"] = sorted(set(known.details["dependents"]) | set(jobs))
            known.details["unused_by"] = [d for d in known.details["unused_by"] if d not in jobs]
            known.summary = _drop_summary(known.details)
            continue
        details = {"field": field_iri, "field_name": field_iri, "dependents": jobs, "unused_by": [], "user": user}
        by_key[(t, entity.value, field_iri)] = finding = Finding(
            "schema-drop", t, _drop_summary(details), [r["event"].value], entity.value, entity.value, details)
        out.append(finding)
    return out


def _restores(rows: list[dict]) -> dict[tuple, str]:
    """(time, entity, deletion) → when a deletion (deleted-entities rows) was restored; not when one of
    two deletions in that millisecond never was (the entity stayed deleted)."""
    out: dict[tuple, str] = {}
    for key, group in _group(rows, lambda r: (r["time"], r["entity"], r["deletion"])).items():
        if all(g.get("restored_at") for g in group):
            out[key] = max(g["restored_at"] for g in group)
    return out


def _deletion_findings(rows: list[dict], jobs: dict[tuple[str, str], list[str]] | None = None,
                       restores: dict[tuple, str] | None = None) -> list[Finding]:
    out = []
    for (t, entity, deletion), group in _group(rows, lambda r: (r["time"], r["entity"], r["deletion"])).items():
        state: dict[str, str] = {}
        names: dict[str, str] = {}
        for job in (jobs or {}).get((entity, t), []):
            names[job], state[job] = job, "still"
        for r in group:
            dep, how = r.get("dependent"), r.get("dependency")
            if dep and how in ("still", "former"):
                names[dep] = r["dependent_name"]
                if state.get(dep) != "still":
                    state[dep] = how
        still = sorted(names[d] for d, s in state.items() if s == "still")
        former = sorted(names[d] for d, s in state.items() if s == "former")
        r = group[0]
        summary = f"{deletion} by {r['user']}"
        if r.get("cascaded_from"):
            summary += f" with its parent {r['cascaded_from']} (a recursive delete)"
        if still:
            summary += f"; still derived from it: {_short_list(still)}"
        if former:
            summary += f"; formerly derived from it (edge removed before): {_short_list(former)}"
        # ut41c #6: a soft delete undone the next day read like one that stands
        restored = (restores or {}).get((t, entity, deletion))
        # (after a hard delete: DataHub keeps the URN of an entity created again)
        again = "created again" if deletion == "HardDeleted" else "restored"
        summary += f"; {again} at {restored}" if restored else ""
        out.append(Finding("deletion-with-dependents" if still else "deletion", t, summary, _events(group),
                           entity, r["entity_name"],
                           {"deletion": deletion, "user": r["user"], "dependents": still,
                            "former_dependents": former, "cascaded_from": r.get("cascaded_from"),
                            "restored_at": restored}))
    return out


_COLUMN_EVIDENCE = ("used", "unknown", "not-used")  # the strongest of a dependent's rows wins


def _schema_findings(rows: list[dict]) -> list[Finding]:
    out = []
    for (t, entity, fld), group in _group(rows, lambda r: (r["time"], r["entity"], r["field"])).items():
        r = group[0]
        evidence: dict[str, str] = {}
        for g in group:
            name, said = g["dependent_name"], g.get("column_lineage") or "unknown"
            if name not in evidence or _COLUMN_EVIDENCE.index(said) < _COLUMN_EVIDENCE.index(evidence[name]):
                evidence[name] = said
        deps = sorted(d for d, said in evidence.items() if said != "not-used")
        unused = sorted(d for d, said in evidence.items() if said == "not-used")
        details = {"field": r["field"], "field_name": r["field_name"], "dependents": deps, "unused_by": unused,
                   "user": r["user"]}
        out.append(Finding("schema-drop" if deps else "schema-drop-unused", t, _drop_summary(details), _events(group),
                           entity, r["entity_name"], details))
    return out


def _drop_summary(d: dict) -> str:
    """A schema drop's summary from its details: who dropped what, and which dependents it affects."""
    summary = f"dropped {short_name(d['field_name'])} by {d['user']}; "
    if not d["dependents"]:  # ut12 #6: column lineage shows the column fed none of them
        return summary + f"no column-level dependency of {_short_list(d['unused_by'])}"
    summary += f"downstream: {_short_list(d['dependents'])}"
    return summary + (f"; no column-level dependency: {_short_list(d['unused_by'])}" if d["unused_by"] else "")


def _lineage_removed_findings(rows: list[dict]) -> list[Finding]:
    out = []
    for (t, edge), group in _group(rows, lambda r: (r["time"], r["edge"])).items():
        r = group[0]
        types = sorted({g["event_type"] for g in group})
        edge_text = f"{short_name(r['down_name'])} ← {short_name(r['up_name'])}"
        out.append(Finding("lineage-removed", t, f"{r['level']} edge {edge_text} removed "
                           f"by {r['user']} ({', '.join(types)})", _events(group), r["down"], r["down_name"],
                           {"edge": edge, "level": r["level"], "up": r["up"], "up_name": r["up_name"],
                            "user": r["user"], "event_types": types}))
    return out


def impact_ranking(findings: list[Finding]) -> list[tuple[str, str, int]]:
    """Entities by severity-weighted finding count (entity IRI, name, score), highest first."""
    score: dict[str, int] = defaultdict(int)
    names: dict[str, str] = {}
    for f in findings:
        if f.entity:
            score[f.entity] += SEVERITY_WEIGHT[f.severity]
            names[f.entity] = f.entity_name or f.entity
    return sorted(((e, names[e], s) for e, s in score.items()), key=lambda x: (-x[2], x[1], x[0]))


def _lineage(store: TripleStore, findings: list[Finding], as_of: str, label: str, *, now_ms: int | None,
             candidates: int = 5) -> Lineage | None:
    """The lineage of the most impacted asset that has any lineage at all (first few candidates tried)."""
    for entity, name, _ in impact_ranking(findings)[:candidates]:
        try:
            rows = _rows(store, "audit-lineage", {"entity": entity, "as_of": as_of}, now_ms=now_ms)
        except InputError:  # a dataset known only from its columns' events (ut42d #1) names no node
            continue
        if rows:
            edges = [{**r, "valid": r["valid"] == "true"} for r in rows]
            return Lineage(entity, name, label, edges)
    return None


def _default(query: str, name: str) -> str | None:
    return next(p.default for p in get_query(query).params if p.name == name)


def run_audit(store: TripleStore, *, since: str | None = None, until: str | None = None,
              bot_pattern: str | None = None, tag_pattern: str | None = None,
              now_ms: int | None = None, lineage: bool = True,
              progress: Callable[[str], None] | None = None) -> AuditReport:
    """Run every audit query on ``store`` for the window [since, until] and assemble the report
    (``lineage=False``: without the lineage drawing around the most impacted asset). ``progress``
    hears the name of each query before it runs (ut46d #3: 45 s without a word on 2.3M triples)."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    done, calls = [0], 11  # the queries below (a test holds the count to them)

    def rows(name: str, params: dict, *, now_ms: int | None) -> list[dict]:
        done[0] += 1
        if progress:
            progress(f"{name} ({done[0]} of {calls})")
        return _rows(store, name, params, now_ms=now_ms)

    # a date, datetime or epoch ms as run_query takes them, checked before any query runs (ut42a #3:
    # the window's display at the end failed on a date, after every query had run)
    params = {p.name: p for p in get_query("audit-deletions").params}
    window = {k: None if v is None else param_text(params[k], v) for k, v in (("since", since), ("until", until))}
    since, until = window["since"], window["until"]
    # ... and the window's order and the patterns (ut48a #3: a bad --bot-pattern failed at query 6 of 11,
    # since after until at query 2, minutes into an audit of a big store)
    times = {}
    for k, v in window.items():
        try:
            times[k] = parse_time(v, end_of_day=(k == "until"), now_ms=now_ms) if v else None
        except InputError as exc:
            raise InputError(f"parameter {k}: {exc}") from None
    _check_window(times)
    for name, pattern in (("bot_pattern", bot_pattern), ("tag_pattern", tag_pattern)):
        if pattern is not None:
            regex_literal(name, pattern)
    activity = [(r["day"], r["user"], int(r["events"]))
                for r in rows("audit-activity", window, now_ms=now_ms)]
    top = [{"entity": r["entity"], "entity_name": r["entity_name"], "events": int(r["events"]),
            "users": int(r["users"]), "last_change": r["last_change"]}
           for r in rows("audit-top-entities", window, now_ms=now_ms)]
    findings: list[Finding] = []
    findings += _version_findings(rows("audit-versions", window, now_ms=now_ms))
    findings += _integrity_findings(rows("audit-integrity", window, now_ms=now_ms))
    findings += _duplicate_id_findings(store, times)
    findings += _agent_findings(rows("audit-agents", window, now_ms=now_ms))
    findings += _bot_findings(rows("audit-bots", {**window, "bot_pattern": bot_pattern}, now_ms=now_ms))
    findings += _tag_findings(rows("audit-sensitive-tags", {**window, "tag_pattern": tag_pattern},
                                    now_ms=now_ms))
    readers = _job_inputs(store)
    deletions = rows("audit-deletions", window, now_ms=now_ms)
    findings += _deletion_findings(deletions, _job_readers(store, readers, deletions),
                                   _restores(rows("deleted-entities", window, now_ms=now_ms)))
    findings += _schema_findings(rows("audit-schema-drops", window, now_ms=now_ms))
    # the window as people read every other time (ut12 #8: an epoch or a bare date was shown as typed)
    shown = {k: display_datetime(parse_time(v, end_of_day=(k == "until"), now_ms=now_ms).value) if v else None
             for k, v in window.items()}
    findings += _job_read_drops(store, readers, findings, shown["since"], shown["until"])
    findings += _lineage_removed_findings(rows("audit-lineage-removed", window, now_ms=now_ms))
    order = list(KINDS)
    findings.sort(key=lambda f: (order.index(f.kind), f.time, f.entity_name or "", f.events))
    generated = terms.xsd_datetime(now_ms).value
    patterns = {name: value if value is not None else _default(query, name)
                for name, value, query in (("bot_pattern", bot_pattern, "audit-bots"),
                                           ("tag_pattern", tag_pattern, "audit-sensitive-tags"))}
    return AuditReport(store=store.description, since=shown["since"], until=shown["until"], generated_at=generated,
                       **patterns,
                       activity=activity, top_entities=top, findings=findings,
                       lineage=_lineage(store, findings, until or "now", shown["until"] or display_datetime(generated),
                                       now_ms=now_ms)
                       if lineage else None)
