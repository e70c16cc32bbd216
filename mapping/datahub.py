"""DataHub MetadataChangeLog, EntityChangeEvent_v1 and PlatformEvent envelopes → triples."""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from changeprov.mapping import terms
from changeprov.mapping.aspects import map_aspect, run_node
from changeprov.mapping.decode import Rejected, loads_strict
from changeprov.mapping.emit import Graph, minted, urn
from changeprov.mapping.events import event_node, field_change
from changeprov.mapping.fields import checked, get, integer
from changeprov.mapping.vocab import event_rule, om, prov, rules, term

MCL, ECE, PLATFORM = "datahub-mcl", "datahub-ece", "datahub-platform"


def agent_node(g: Graph, path: str, value: str) -> NamedNode:
    """A DataHub actor URN as an agent (groups are organisations)."""
    node = checked(path, urn, value)
    return g.agent(node, organization=value.startswith("urn:li:corpGroup:"))


def actor_node(g: Graph, event: NamedNode, path: str, value: str | None) -> NamedNode | None:
    """The agent of an event's actor URN, if any; the event keeps the URN as the source gave it in
    ``om-event:userName`` (the agent's IRI escapes characters such as spaces: ut14 #8)."""
    if not value:
        return None
    g.lit(event, om("userName"), value)
    return agent_node(g, path, value)


def entity_node(g: Graph, path: str, value: str, *, asset_type: str | None = None,
                cls: NamedNode | None = None) -> NamedNode:
    return g.entity(checked(path, urn, value), asset_type=asset_type, urn_text=value, cls=cls)


def _time(obj: dict, path: str, *, at: str = "") -> int:
    ms = integer(obj, path, required=True, at=at)  # as the export reads it (rv48 #4)
    checked(at + path, terms.ms_to_xsd, ms)
    return ms


def _rule(family: str, field: str, value: str) -> dict:
    rule = event_rule(family, value)
    if rule is None:
        raise Rejected("UNKNOWN_EVENT_TYPE", f"{field}: '{value[:200]}' is not a known {family} value")
    return rule


# ---------------------------------------------------------------- MetadataChangeLog


def map_mcl(obj: dict) -> Graph:
    change_type = get(obj, "changeType", str, required=True)
    rule = _rule(MCL, "changeType", change_type)
    entity_urn = get(obj, "entityUrn", str, required=True)
    entity_type = get(obj, "entityType", str, required=True)
    aspect_name = get(obj, "aspectName", str, required=True)
    if get(obj, "created", dict) is not None:
        ms = _time(obj, "created.time")
    else:  # `created` is optional in the PDL; lastObserved is when GMS wrote the aspect
        ms = _time(obj, "systemMetadata.lastObserved")
    actor = get(obj, "created.actor", str)
    new_text = get(obj, "aspect.value", str)
    old_text = get(obj, "previousAspectValue.value", str)
    deleting = rule["pattern"] == "aspect-delete"
    if not deleting and new_text is None:
        raise Rejected("MISSING_FIELD", f"aspect.value is required for changeType {change_type}")
    new = loads_strict(new_text, what="aspect.value") if new_text is not None and not deleting else None
    old = loads_strict(old_text, what="previousAspectValue.value") if old_text is not None else None

    # the aspect versions belong to the id: a value set, changed and set back in one millisecond by
    # one actor is three events, told apart only by the versions they write
    event = minted("event", MCL, entity_urn, aspect_name, change_type, str(ms), actor or "",
                   new_text or "", old_text or "", _unchecked(obj, "systemMetadata.version"),
                   _unchecked(obj, "previousSystemMetadata.version"))
    g = Graph()
    entity = entity_node(g, "entityUrn", entity_urn, asset_type=entity_type)
    agent = actor_node(g, event, "created.actor", actor)
    lifecycle = _mcl_lifecycle(aspect_name, deleting, new, old)
    event_node(g, event, event_type=rule["eventType"], ms=ms, entity=entity, agent=agent, lifecycle=lifecycle)
    g.lit(event, om("aspectName"), aspect_name)
    g.lit(event, om("entityType"), entity_type)
    impersonator = get(obj, "created.impersonator", str)
    if impersonator:
        g.add(event, om("impersonatedBy"), agent_node(g, "created.impersonator", impersonator))
    _aspect_versions(g, event, entity, obj, aspect_name, deleting)

    if deleting:
        change = field_change(g, event, "deleted", 0, aspect_name, old=old)
    elif old is not None:
        change = field_change(g, event, "updated", 0, aspect_name, old=old, new=new)
    else:
        change = field_change(g, event, "added", 0, aspect_name, new=new)
    map_aspect(g, event, entity, entity_urn, change, aspect_name, old=old, new=None if deleting else new,
               deleting=deleting)
    return g


def _unchecked(obj: dict, path: str) -> str:
    """A version for the event id, "" if absent or of the wrong type: it is checked where the export
    checks it (_aspect_versions, after the URNs), so that a line with two faults gets the same reason
    in both (rv37 #1)."""
    try:
        return get(obj, path, str) or ""
    except Rejected:
        return ""


def _mcl_lifecycle(aspect: str, deleting: bool, new: Any, old: Any) -> str | None:
    if aspect.endswith(rules()["keyAspectSuffix"]):
        if deleting:
            return "om-event:HardDeleted"
        return "om-event:Created" if old is None else None
    if aspect == "status":
        removed_now = isinstance(new, dict) and new.get("removed") is True
        removed_before = isinstance(old, dict) and old.get("removed") is True
        if removed_now and not removed_before:
            return "om-event:SoftDeleted"
        if removed_before and not removed_now and not deleting:
            return "om-event:Restored"
    return None


def _aspect_versions(g: Graph, event: NamedNode, entity: NamedNode, obj: dict, aspect: str,
                     deleting: bool) -> None:
    """Versioned aspects: the MCL generates version `systemMetadata.version`, a revision of the previous."""
    version = get(obj, "systemMetadata.version", str)
    previous = get(obj, "previousSystemMetadata.version", str)
    before = minted("version", entity.value, aspect, previous) if previous else None
    if before is not None:
        g.add(event, prov("used"), before)
        # on the event, not the version: a label there types it an EntityVersion, which the shapes then
        # require the log to have generated (ut26 R3, reverted in 09a1d57)
        g.lit(event, om("previousVersionLabel"), previous)
    if deleting:
        if before is not None:
            g.add(before, prov("wasInvalidatedBy"), event)
        return
    if not version or version == previous:
        return
    now = minted("version", entity.value, aspect, version)
    g.a(now, om("EntityVersion"), om("AspectVersion"))
    g.add(now, prov("specializationOf"), entity)
    g.lit(now, om("versionLabel"), version)
    g.add(now, prov("wasGeneratedBy"), event)
    if before is not None:
        g.add(now, prov("wasRevisionOf"), before)


# ---------------------------------------------------------------- EntityChangeEvent


def map_ece(obj: dict, *, at: str = "") -> Graph:
    category = get(obj, "category", str, required=True, at=at)
    rule = _rule(ECE, at + "category", category)
    operation = get(obj, "operation", str, required=True, at=at)
    op = rules()["operations"].get(operation)
    if op is None:
        raise Rejected("UNKNOWN_EVENT_TYPE", f"{at}operation: '{operation[:200]}' is not a known operation")
    entity_urn = get(obj, "entityUrn", str, required=True, at=at)
    entity_type = get(obj, "entityType", str, at=at)
    ms = _time(obj, "auditStamp.time", at=at)
    actor = get(obj, "auditStamp.actor", str, at=at)
    modifier = get(obj, "modifier", str, at=at)
    parameters = get(obj, "parameters", dict, at=at)
    impersonator = get(obj, "auditStamp.impersonator", str, at=at)

    # parameters are part of the event: two owners given one owner type in one edit differ only there
    event = minted("event", ECE, entity_urn, category, operation, modifier or "", str(ms), actor or "",
                   terms.canonical_json(parameters) if parameters is not None else "")
    g = Graph()
    entity = entity_node(g, at + "entityUrn", entity_urn, asset_type=entity_type)
    agent = actor_node(g, event, at + "auditStamp.actor", actor)
    if impersonator:  # as an MCL's created.impersonator (rv48 #6: a change event's was dropped)
        g.add(event, om("impersonatedBy"), agent_node(g, at + "auditStamp.impersonator", impersonator))
    pattern = rule["pattern"]
    lifecycle = rules()["eceLifecycle"].get(operation) if pattern == "lifecycle" else None
    event_node(g, event, event_type=rule["eventType"], ms=ms, entity=entity, agent=agent,
               lifecycle=lifecycle, operation=op["operation"])
    g.lit(event, om("entityType"), entity_type)
    payload = {k: v for k, v in (("modifier", modifier), ("parameters", parameters)) if v is not None}
    kind = op["fieldKind"]
    values = {"old": payload} if kind == "deleted" else {"new": payload}
    change = field_change(g, event, kind, 0, category, **(values if payload else {}))
    _ece_structure(g, event, entity, change, pattern, operation, modifier, parameters or {}, at=at)
    return g


_MEMBER_PATTERNS = {
    "tag": ("tagUrn", "om-event:addedTag", "om-event:removedTag", "om-event:Tag"),
    "glossary-term": ("termUrn", "om-event:addedGlossaryTerm", "om-event:removedGlossaryTerm", "om-event:GlossaryTerm"),
    "domain": ("domainUrn", "om-event:addedDomain", "om-event:removedDomain", None),
    "owner": ("ownerUrn", "om-event:addedOwner", "om-event:removedOwner", "agent"),
    "schema-field": ("fieldUrn", "om-event:addedSchemaField", "om-event:removedSchemaField", "om-event:Column"),
}


def _ece_structure(g: Graph, event: NamedNode, entity: NamedNode, change: NamedNode, pattern: str,
                   operation: str, modifier: str | None, params: dict, *, at: str) -> None:
    if pattern in _MEMBER_PATTERNS:
        key, added, removed, cls = _MEMBER_PATTERNS[pattern]
        value = get(params, key, str, at=at + "parameters.") or modifier
        prop = {"ADD": added, "REMOVE": removed}.get(operation)
        if pattern == "schema-field" and operation == "MODIFY":
            prop = "om-event:changedSchemaField"
        if prop is None:
            return
        # ut46c #1: a tag ADD without its tag, or with a tag that is no URN, was a change of nothing
        if not value:
            raise Rejected("MISSING_FIELD", f"{at}parameters.{key}: absent, and no {at}modifier names the member either")
        path = at + ("parameters." + key if params.get(key) else "modifier")
        if cls == "agent":
            node = agent_node(g, path, value)
        else:
            node = entity_node(g, path, value, cls=term(cls) if cls else None)
        g.add(change, term(prop), node)
    elif pattern == "lifecycle":
        resource = get(params, "resourceUrn", str, at=at + "parameters.")
        if operation == "CREATE" and resource:  # an action request (proposal) about a resource
            g.add(event, om("proposalFor"), entity_node(g, at + "parameters.resourceUrn", resource))
    elif pattern == "run":
        job = get(params, "dataJobUrn", str, at=at + "parameters.")
        if job and entity.value.startswith("urn:li:dataProcessInstance:"):
            run = run_node(g, entity)
            g.add(run, om("runOf"), entity_node(g, at + "parameters.dataJobUrn", job))


# ---------------------------------------------------------------- PlatformEvent


def map_platform(obj: dict) -> Graph:
    name = get(obj, "name", str, required=True)
    rule = _rule(PLATFORM, "name", name)
    text = get(obj, "payload.value", str, required=True)
    payload = loads_strict(text, what="payload.value")
    if not isinstance(payload, dict):
        raise Rejected("BAD_ASPECT_JSON", "payload.value: expected a JSON object")
    if rule["pattern"] == "envelope-ece":
        return map_ece(payload, at="payload.")
    return _relationship(obj, payload, rule)


def _relationship(obj: dict, payload: dict, rule: dict) -> Graph:
    at = "payload."
    source = get(payload, "sourceUrn", str, required=True, at=at)
    destination = get(payload, "destinationUrn", str, required=True, at=at)
    rel_type = get(payload, "relationshipType", str, required=True, at=at)
    operation = get(payload, "operation", str, required=True, at=at)
    op = rules()["operations"].get(operation)
    if op is None or operation not in ("ADD", "REMOVE"):
        raise Rejected("UNKNOWN_EVENT_TYPE", f"{at}operation: '{operation[:200]}' is not ADD or REMOVE")
    if get(payload, "auditStamp", dict, at=at) is not None:
        ms = _time(payload, "auditStamp.time", at=at)
    else:
        ms = _time(obj, "header.timestampMillis")
    actor = get(payload, "auditStamp.actor", str, at=at)

    event = minted("event", "datahub-rel", source, rel_type, destination, operation, str(ms), actor or "")
    g = Graph()
    src = entity_node(g, at + "sourceUrn", source)
    direction = rules()["relationshipLineageTypes"].get(rel_type)
    # the destination is a node of the graph only as a lineage edge's end: of another relationship
    # (OwnedBy: a user) nothing links it, and it was typed a metadata entity (ut46c #12); its URN is
    # in the change's value
    dst = (entity_node(g, at + "destinationUrn", destination) if direction
           else checked(at + "destinationUrn", urn, destination))
    agent = actor_node(g, event, at + "auditStamp.actor", actor)
    event_node(g, event, event_type=rule["eventType"], ms=ms, entity=src, agent=agent, operation=op["operation"])
    kind = op["fieldKind"]
    summary = {"destinationUrn": destination, "relationshipType": rel_type, "sourceUrn": source}
    field_change(g, event, kind, 0, rel_type, **({"old": summary} if kind == "deleted" else {"new": summary}))
    if direction == "source-is-downstream":
        g.lineage(event, src, dst, removed=operation == "REMOVE")
    elif direction == "source-is-upstream":
        g.lineage(event, dst, src, removed=operation == "REMOVE")
    return g
