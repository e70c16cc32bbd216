"""OpenMetadata ChangeEvent 2.x and the older (dateTime) change event → triples."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from pyoxigraph import NamedNode

from changeprov.mapping import terms
from changeprov.mapping.decode import Rejected, json_type, loads_strict
from changeprov.mapping.emit import Graph, datetime_literal, decimal_literal, minted, om_entity, om_named
from changeprov.mapping.events import event_node, field_change, member_changes
from changeprov.mapping.fields import checked, get, integer, number
from changeprov.mapping.vocab import event_rule, om, prov, rules

FAMILY, LEGACY = "openmetadata", "openmetadata-legacy"
CASCADING = ("om-event:SoftDeleted", "om-event:HardDeleted")  # lifecycles a recursive event passes on


def map_openmetadata(obj: dict, *, legacy: bool = False) -> Graph:
    family = LEGACY if legacy else FAMILY
    event_type = get(obj, "eventType", str, required=True)
    rule = event_rule(family, event_type)
    if rule is None:
        raise Rejected("UNKNOWN_EVENT_TYPE", f"eventType: '{event_type[:200]}' is not an event type of {family}")
    entity_type = get(obj, "entityType", str, required=True)
    entity_id = get(obj, "entityId", str, required=True)
    if legacy:
        ms = checked("dateTime", terms.rfc3339_to_ms, get(obj, "dateTime", str, required=True))
    else:
        ms = get(obj, "timestamp", int, required=True)
    checked("dateTime" if legacy else "timestamp", terms.ms_to_xsd, ms)
    user = get(obj, "userName", str)
    event_id = get(obj, "id", str)
    current = _version(obj, "currentVersion")
    previous = _version(obj, "previousVersion")
    if previous is None:  # the stored form keeps it only in the change description
        previous = _version(obj, "changeDescription.previousVersion")
    state = _entity_state(obj)

    if event_id:
        event = minted("event", FAMILY, event_id)
    else:
        event = minted("event", FAMILY, entity_id, event_type, str(ms), user or "", current or "")

    g = Graph()
    pattern = rule["pattern"]
    if pattern in ("lineage-add", "lineage-remove"):
        entity = _lineage(g, event, state, removed=pattern == "lineage-remove")
    else:
        entity = checked("entityId", om_entity, entity_type, entity_id)
        g.entity(entity, asset_type=entity_type, fqn=get(obj, "entityFullyQualifiedName", str) or None)
    agent = g.agent(checked("userName", om_named, "user", user)) if user else None
    event_node(g, event, event_type=rule["eventType"], ms=ms, entity=entity, agent=agent,
               lifecycle=rule.get("lifecycle"))
    # an empty optional text is as absent (ut46c #10): an empty id mints the event IRI an event without
    # one gets, and an empty userName names no agent, so the text "" was a value of nothing
    g.lit(event, om("eventId"), event_id or None)
    for key in ("entityId", "entityType", "entityFullyQualifiedName", "userName", "userId"):
        g.lit(event, om(key), get(obj, key, str) or None)
    impersonator = get(obj, "impersonatedBy", str)
    if impersonator:
        g.add(event, om("impersonatedBy"), g.agent(checked("impersonatedBy", om_named, "user", impersonator)))
    g.lit(event, om("recursive"), get(obj, "recursive", bool))
    g.json(event, om("changeSummary"), get(obj, "changeDescription.changeSummary", dict))
    g.json(event, om("entityState"), state)
    if pattern not in ("lineage-add", "lineage-remove"):
        _about(g, entity, entity_type, state)
    if previous is not None:
        g.add(event, om("previousVersion"), decimal_literal(Decimal(previous)))
    if current is not None:
        g.add(event, om("currentVersion"), decimal_literal(Decimal(current)))
        _versions(g, event, entity, current, previous, lifecycle=rule.get("lifecycle"))
    # A hard delete's changeDescription repeats the entity's last change (SOURCES.md; it is how the
    # server keeps the entity): checked like any other, but not a change the deleting user made.
    hard = rule.get("lifecycle") == "om-event:HardDeleted"
    _field_changes(Graph() if hard else g, event, entity, obj, fqn=get(obj, "entityFullyQualifiedName", str),
                   created=rule.get("lifecycle") == "om-event:Created")
    if rule.get("lifecycle") == "om-event:Created":
        _initial_values(g, event, entity, state, get(obj, "changeDescription", dict),
                        fqn=get(obj, "entityFullyQualifiedName", str))
    if rule.get("lifecycle") in CASCADING and get(obj, "recursive", bool):
        _cascade(g, event, state)
    return g


# ---------------------------------------------------------------- pieces


def _cascade(g: Graph, event: NamedNode, state: Any) -> None:
    """A recursive (soft or hard) delete deletes the entity's children too, and OpenMetadata sends no
    event for them: each child reference in ``entity.children`` with a type and an id is
    ``om-event:cascadesTo`` of the event, so deleted-entities and entity-history see it."""
    children = state.get("children") if isinstance(state, dict) else None
    for i, ref in enumerate(children if isinstance(children, list) else []):
        if not isinstance(ref, dict):
            continue
        at = f"entity.children[{i}]."
        ref_type, ref_id = get(ref, "type", str, at=at), get(ref, "id", str, at=at)
        if not ref_type or not ref_id:
            continue
        child = checked(f"{at}id", om_entity, ref_type, ref_id)
        g.add(event, om("cascadesTo"), g.entity(child, asset_type=ref_type,
                                                 fqn=get(ref, "fullyQualifiedName", str, at=at)))


#: an entity link, <#E::TYPE::FQN> or <#E::TYPE::FQN::FIELD…>: the FQN is what comes before the first "::"
#: after the type (any character, line breaks too, as the export's pattern reads it)
ENTITY_LINK = r"<#E::[^:]+::([\s\S]+?)(?:::[\s\S]*)?>"


def _about(g: Graph, entity: NamedNode, entity_type: str, state: Any) -> None:
    """A thread's ``about`` (its entity link) on the thread, with the FQN it names, so that the threads
    about an entity are found by its name (ut47a #4: the link was only inside entityState). A link of
    another form is kept as given, without a name; ``about`` of another type is left in entityState."""
    about = state.get("about") if isinstance(state, dict) and entity_type.lower() == "thread" else None
    if not isinstance(about, str) or not about:  # an empty text is as absent (ut46c #10)
        return
    g.lit(entity, om("aboutEntityLink"), about)
    named = re.fullmatch(ENTITY_LINK, about)
    if named:
        g.lit(entity, om("aboutFullyQualifiedName"), named.group(1))


def _version(obj: dict, path: str) -> str | None:
    value = number(obj, path)
    if value is None:
        return None
    try:
        return terms.decimal_lexical(value)
    except ValueError as exc:
        raise Rejected("BAD_TYPE", f"{path}: {exc}") from None


def _entity_state(obj: dict) -> Any:
    entity = obj.get("entity")
    if isinstance(entity, str):  # the server stores JsonUtils.pojoToMaskedJson(entity)
        state = loads_strict(entity, what="entity")
        if state is None or isinstance(state, (dict, list)):
            return state
        # ut46a #1: "42" or a JSON string in the string held no state, and the creation lost its columns unseen
        raise Rejected("BAD_ASPECT_JSON", f"entity: expected an object, got {json_type(state)}")
    if entity is None or isinstance(entity, (dict, list)):
        return entity
    raise Rejected("BAD_TYPE", f"entity: expected an object or a JSON string, got {json_type(entity)}")


def _versions(g: Graph, event: NamedNode, entity: NamedNode, current: str, previous: str | None,
              *, lifecycle: str | None) -> None:
    now = minted("version", entity.value, current)
    # A hard delete never makes a version, even in the stored form, whose changeDescription
    # repeats the last change (and so an older previousVersion).
    versioned = lifecycle != "om-event:HardDeleted" and previous is not None and previous != current
    if lifecycle == "om-event:Created" or versioned:
        g.a(now, om("EntityVersion"))
        g.add(now, prov("specializationOf"), entity)
        g.add(now, om("versionNumber"), decimal_literal(Decimal(current)))
        g.add(now, prov("wasGeneratedBy"), event)
        if versioned:
            before = minted("version", entity.value, previous)
            g.add(now, prov("wasRevisionOf"), before)
            g.add(event, prov("used"), before)
    else:  # followers, pipeline status, hard delete: the version stays
        g.add(event, prov("used"), now)


def _lineage(g: Graph, event: NamedNode, edge: Any, *, removed: bool) -> NamedNode:
    """OpenMetadata lineage events: ``entity`` is the edge (fromEntity → toEntity)."""
    if not isinstance(edge, dict):
        raise Rejected("MISSING_FIELD" if edge is None else "BAD_TYPE", "entity: a lineage event needs the edge object")
    ends = {}
    for end in ("fromEntity", "toEntity"):
        ref = get(edge, end, dict, required=True, at="entity.")
        ref_type = get(ref, "type", str, required=True, at=f"entity.{end}.")
        ref_id = get(ref, "id", str, required=True, at=f"entity.{end}.")
        node = checked(f"entity.{end}.id", om_entity, ref_type, ref_id)
        ends[end] = g.entity(node, asset_type=ref_type, fqn=get(ref, "fullyQualifiedName", str, at=f"entity.{end}."))
    down, up = ends["toEntity"], ends["fromEntity"]
    details = get(edge, "lineageDetails", dict, at="entity.") or {}
    at = "entity.lineageDetails."
    sql, source = get(details, "sqlQuery", str, at=at), get(details, "source", str, at=at)
    pipeline = get(details, "pipeline", dict, at=at)
    via = None
    if pipeline:
        via = checked("entity.lineageDetails.pipeline.id", om_entity, get(pipeline, "type", str, required=True, at=at + "pipeline."),
                      get(pipeline, "id", str, required=True, at=at + "pipeline."))
        g.entity(via, asset_type=pipeline["type"], fqn=get(pipeline, "fullyQualifiedName", str, at=at + "pipeline."))
    g.lineage(event, down, up, removed=removed, details={"sqlQuery": sql, "lineageSource": source, "viaPipeline": via})
    for i, col in enumerate(get(details, "columnsLineage", list, at=at) or []):
        path = f"entity.lineageDetails.columnsLineage[{i}]"
        if not isinstance(col, dict):
            raise Rejected("BAD_TYPE", f"{path}: expected an object")
        to_fqn = get(col, "toColumn", str, at=f"{path}.")
        if not to_fqn:
            continue
        to_col = _column(g, f"{path}.toColumn", to_fqn)
        for j, from_fqn in enumerate(get(col, "fromColumns", list, at=f"{path}.") or []):
            if not isinstance(from_fqn, str):
                raise Rejected("BAD_TYPE", f"{path}.fromColumns[{j}]: expected a string, got {json_type(from_fqn)}")
            g.lineage(event, to_col, _column(g, f"{path}.fromColumns[{j}]", from_fqn), removed=removed,
                      details={"transformOperation": get(col, "function", str, at=f"{path}.")})
    return down


def _column(g: Graph, path: str, fqn: str) -> NamedNode:
    node = checked(path, om_named, "column", fqn)
    return g.entity(node, fqn=fqn, cls=om("Column"))


def _field_changes(g: Graph, event: NamedNode, entity: NamedNode, obj: dict, *, fqn: str | None,
                   created: bool = False) -> None:
    description = get(obj, "changeDescription", dict)
    if not description:
        return
    for kind, key in (("added", "fieldsAdded"), ("updated", "fieldsUpdated"), ("deleted", "fieldsDeleted")):
        for i, item in enumerate(get(description, key, list, at="changeDescription.") or []):
            path = f"changeDescription.{key}[{i}]"
            if not isinstance(item, dict):
                raise Rejected("BAD_TYPE", f"{path}: expected an object")
            name = get(item, "name", str, required=True, at=f"{path}.")
            old, new = _field_value(name, item, "oldValue"), _field_value(name, item, "newValue")
            change = field_change(g, event, kind, i, name, old=old, new=new)
            _about_column(g, change, name, fqn)
            _structured(g, event, entity, change, path, name, kind, old, new, fqn=fqn, appeared=not created)


#: what a creation sets besides column tags, in this order; then the column tags, level by level
INITIAL_FIELDS = ("tags", "owners", "domains", "columns")
#: the fields whose value is a list of member objects (or one object): anything else is BAD_ASPECT_JSON
MEMBER_LISTS = ("tags", "owners", "domains")
#: levels of columns whose tags a creation sets: top-level columns and three levels of ``children``
COLUMN_LEVELS = 4


def _quoted(name: str) -> str:
    return f'"{name}"' if "." in name else name


def _walk_columns(level: list[tuple[str, str, str, Any]]) -> list[tuple[str, str, str, dict]]:
    """(local name, path in the event, index, column) of each column of ``level`` (path, prefix of its
    name, index, column) and of its nested columns (``children``, down to ``COLUMN_LEVELS`` levels in
    all), level by level. The local name is as OpenMetadata names the column in a field change
    (``A.B`` for a nested one, a name with a dot in double quotes); a nested column's index is its
    parent's, ``-``, its own. A column without a name is skipped with its nested columns."""
    found = []
    for _ in range(COLUMN_LEVELS):
        below = []
        for path, prefix, index, column in level:
            name = column.get("name") if isinstance(column, dict) else None
            if not isinstance(name, str) or not name:
                continue
            local = prefix + _quoted(name)
            found.append((local, path, index, column))
            children = column.get("children")
            below += [(f"{path}.children[{k}]", local + ".", f"{index}-{k}", child)
                      for k, child in enumerate(children if isinstance(children, list) else [])]
        level = below
    return found


def column_tags(level: list[tuple[str, str, str, Any]]) -> list[tuple[str, str, str, Any]]:
    """(field name, path in the event, index, tags) of each column of ``level`` and of its nested
    columns (``_walk_columns``): ``columns.NAME.tags``, ``columns.A.B.tags``. The tags are as found
    (any JSON value)."""
    return [(f"columns.{local}.tags", f"{path}.tags", index, column.get("tags"))
            for local, path, index, column in _walk_columns(level)]


def initial_fields(state: Any) -> list[tuple[str, str, list]]:
    """(field name, path in the event, value) of what a creation set: the entity's tags, owners,
    domains and columns, then the tags of each column and nested column (``column_tags``), then the
    nested columns of each struct column (``columns.A``, ``columns.A.B``: its ``children``, as
    OpenMetadata names their changes); each when a non-empty list, and a member list (tags, owners,
    domains, a column's tags) also when it is any other value but null or "": one object is one
    member, anything else BAD_ASPECT_JSON (``_members``; rv46b #1: a created entity's tags given as a
    string or an object were left in its state without a word)."""
    if not isinstance(state, dict):
        return []
    fields = [(name, f"entity.{name}", state.get(name), name in MEMBER_LISTS) for name in INITIAL_FIELDS]
    columns = state.get("columns")
    walked = _walk_columns([(f"entity.columns[{j}]", "", str(j), c)
                            for j, c in enumerate(columns if isinstance(columns, list) else [])])
    fields += [(f"columns.{local}.tags", f"{path}.tags", column.get("tags"), True) for local, path, _, column in walked]
    fields += [(f"columns.{local}", f"{path}.children", column.get("children"), False) for local, path, _, column in walked]
    return [(name, path, value) for name, path, value, listed in fields
            if (isinstance(value, list) and value) or (listed and not isinstance(value, list) and value not in (None, ""))]


def _initial_values(g: Graph, event: NamedNode, entity: NamedNode, state: Any, description: Any, *,
                    fqn: str | None) -> None:
    """An entityCreated event comes without a change description, yet its entity's tags, owners,
    domains, columns and column tags were set by it: each non-empty list is a field change
    ``{event}/change/initial/{i}`` (listed as fieldsAdded) whose members were added, so that tag,
    owner and state queries see what an entity was created with (docs/model.md, "Field changes").
    A field the event's own change description adds or updates is left to it (not counted twice)."""
    described = {item.get("name") for key in ("fieldsAdded", "fieldsUpdated")
                 for item in ((description or {}).get(key) or []) if isinstance(item, dict)}
    fields = [f for f in initial_fields(state) if f[0] not in described]
    for i, (name, path, value) in enumerate(fields):
        change = field_change(g, event, "initial", i, name, new=value)
        _about_column(g, change, name, fqn)
        _structured(g, event, entity, change, path, name, "added", None, value, fqn=fqn, new_path=path)


#: an OpenMetadata field of a column: ``columns.COLUMN.FIELD``, COLUMN a name, a quoted name or a
#: nested path (``A.B``, ``"a.b"``), FIELD a plain name (the Spark mapper uses the same pattern)
COLUMN_FIELD = r'columns\.(.+)\.([^."]+)'


def nested_columns(name: str) -> str | None:
    """The struct column whose nested columns (``children``) a change named ``name`` changes, as
    OpenMetadata names such a change: ``columns.PATH`` (``columns.addr``, ``columns.addr.geo``,
    ``columns."a.b"``) where the last name is none of a column's own fields (``columns.addr.tags``
    is addr's tags); None for any other name."""
    if not name.startswith("columns.") or len(name) == len("columns."):
        return None
    match = re.fullmatch(COLUMN_FIELD, name, re.S)
    if match is not None and match.group(2) in rules()["openmetadataColumnFields"]:
        return None
    return name[len("columns."):]


def _below(fqn: str | None, nested: str | None) -> str | None:
    """What a change's columns are keyed below: the entity's FQN, or its struct column's (``nested``)."""
    return f"{fqn}.{nested}" if fqn and nested is not None else fqn


def _about_column(g: Graph, change: NamedNode, name: str, fqn: str | None) -> None:
    """A change of a column's own field (``columns.NAME.tags``, ``columns.A.B.description``), or of a
    struct column's nested columns (``columns.addr``), points to the column node, ``{entity
    FQN}.NAME`` as OpenMetadata names it (om-event:aboutColumn), so that `describe` and `resolve` find
    a column known only from such changes. A name that cannot become an IRI leaves the change
    unlinked rather than the event quarantined: the field change itself is mapped either way."""
    nested = nested_columns(name)
    match = re.fullmatch(COLUMN_FIELD, name, re.S)
    if not fqn or (match is None and nested is None):
        return
    col_fqn = f"{fqn}.{nested if nested is not None else match.group(1)}"
    try:
        node = om_named("column", col_fqn)
    except terms.BadIdentifier:
        return
    g.add(change, om("aboutColumn"), g.entity(node, fqn=col_fqn, cls=om("Column")))


def _field_value(name: str, item: dict, key: str) -> Any:
    """FieldChange values are untyped; JSON-encoded lists of known fields (and of a struct column's
    nested columns) are decoded."""
    value = item.get(key)
    last = name.rsplit(".", 1)[-1]
    if isinstance(value, str) and value[:1] in "[{" and (
            last in rules()["openmetadataJsonFields"] or nested_columns(name) is not None):
        try:
            return loads_strict(value, what=key)
        except Rejected:
            return value  # not JSON after all: keep the text as it is
    return value


def _structured(g: Graph, event: NamedNode, entity: NamedNode, change: NamedNode, path: str, name: str,
                kind: str, old: Any, new: Any, *, fqn: str | None, new_path: str | None = None,
                appeared: bool = False) -> None:
    """``appeared``: the tags of columns the change adds become field changes of their own (not in a
    creation, whose column tags are its initial values)."""
    # a struct column's nested columns are columns, keyed below it (``{fqn}.addr.NAME``)
    nested = nested_columns(name)
    handler = "columns" if nested is not None else rules()["openmetadataStructuredFields"].get(name.rsplit(".", 1)[-1])
    if handler is None:
        return
    keys_fqn = _below(fqn, nested)
    if handler == "pipeline-status":
        if isinstance(new, dict):
            _pipeline_run(g, entity, f"{path}.newValue", new)
        return
    before = _members(g, handler, f"{path}.oldValue", old, keys_fqn) if kind != "added" else {}
    after = _members(g, handler, new_path or f"{path}.newValue", new, keys_fqn) if kind != "deleted" else {}
    if handler == "tags":
        for cls, added, removed in (("Tag", "om-event:addedTag", "om-event:removedTag"),
                                    ("GlossaryTerm", "om-event:addedGlossaryTerm", "om-event:removedGlossaryTerm")):
            member_changes(g, change, old={k: n for k, (c, n) in before.items() if c == cls},
                           new={k: n for k, (c, n) in after.items() if c == cls}, added=added, removed=removed)
    elif handler in ("owners", "domains"):
        member_changes(g, change, old={k: n for k, (_, n) in before.items()},
                       new={k: n for k, (_, n) in after.items()},
                       added=_LIST_MEMBERS[handler][0], removed=_LIST_MEMBERS[handler][1])
    elif handler == "columns":
        old_nodes = {k: n for k, (_, n) in before.items()}
        new_nodes = {k: n for k, (_, n) in after.items()}
        member_changes(g, change, old=old_nodes, new=new_nodes,
                       added="om-event:addedSchemaField", removed="om-event:removedSchemaField")
        for k in sorted(old_nodes.keys() & new_nodes.keys()):
            if before[k][0] != after[k][0]:
                g.add(change, om("changedSchemaField"), new_nodes[k])
        _dropped_column_tags(g, event, change, f"{path}.oldValue", old, set(old_nodes) - set(new_nodes), fqn=fqn,
                             nested=nested)
        if appeared:
            _dropped_column_tags(g, event, change, f"{path}.newValue", new, set(new_nodes) - set(old_nodes), fqn=fqn,
                                 nested=nested, side="appeared")


#: the member properties of the lists whose members are entity references
_LIST_MEMBERS = {"owners": ("om-event:addedOwner", "om-event:removedOwner"),
                 "domains": ("om-event:addedDomain", "om-event:removedDomain")}


def _dropped_column_tags(g: Graph, event: NamedNode, change: NamedNode, path: str, old: Any, dropped: set[str], *,
                         fqn: str | None, nested: str | None = None, side: str = "dropped") -> None:
    """A dropped column's tags go with it, and so do its nested columns' tags: for each dropped column
    (the last element with its key) and each of its nested columns (``column_tags``) that has a name
    and tags, a field change ``columns.NAME.tags`` (``columns.A.B.tags``) listed as fieldsDeleted
    (``{change}`` kind and index, then the column's index and its nested columns' indexes:
    ``{event}/change/dropped/{kind}-{i}-{j}[-{k}…]``) removes them, so that no state or tag query keeps
    PII on a column that no longer exists. Nested columns dropped from a struct column that stays
    (``nested``, the change ``columns.addr``) are named below it: ``columns.addr.zip.tags``.

    ``side="appeared"``: the same for the columns a change adds (``old`` is then the new value, and
    ``dropped`` the added keys): ``{event}/change/appeared/…`` listed as fieldsAdded adds their tags
    (ut44g #1: a column added with PII.Sensitive was in no tag query or audit)."""
    appeared = side == "appeared"
    items = [old] if isinstance(old, dict) else old if isinstance(old, list) else []
    keys_fqn = _below(fqn, nested)
    prefix = f"{nested}." if nested is not None else ""
    last = {}
    for j, item in enumerate(items):
        key = _column_key(item, keys_fqn)
        if key in dropped:
            last[key] = j
    source = change.value.rsplit("/change/", 1)[1].replace("/", "-")
    for j in sorted(last.values()):
        for field, at, index, tags in column_tags([(f"{path}[{j}]", prefix, str(j), items[j])]):
            if not isinstance(tags, list) or not tags:
                continue
            dropped_change = (field_change(g, event, side, f"{source}-{index}", field, new=tags) if appeared
                              else field_change(g, event, side, f"{source}-{index}", field, old=tags))
            _about_column(g, dropped_change, field, fqn)
            members = _members(g, "tags", at, tags, fqn)
            for cls, added, removed in (("Tag", "om-event:addedTag", "om-event:removedTag"),
                                        ("GlossaryTerm", "om-event:addedGlossaryTerm", "om-event:removedGlossaryTerm")):
                of_class = {k: n for k, (c, n) in members.items() if c == cls}
                member_changes(g, dropped_change, old={} if appeared else of_class, new=of_class if appeared else {},
                               added=added, removed=removed)


def _column_key(item: Any, fqn: str | None) -> str | None:
    """A column element's key, its FQN: its own, else the entity's FQN and its name; or None."""
    if not isinstance(item, dict):
        return None
    col_fqn, col_name = item.get("fullyQualifiedName"), item.get("name")
    if isinstance(col_fqn, str) and col_fqn:
        return col_fqn
    if isinstance(col_name, str) and col_name and fqn:  # quoted as OpenMetadata does (ut46a #3: "x.y" of t was y of t.x)
        return f"{fqn}.{_quoted(col_name)}"
    return None


def _members(g: Graph, handler: str, path: str, value: Any, fqn: str | None) -> dict[str, tuple[Any, NamedNode]]:
    """Key → (class or column JSON, node) for the members of a tags / owners / domains / columns value.

    A domain (an entity reference, ut44b #1: a later change hid the domains still there) is keyed by its
    id, its node the domain entity's own IRI."""
    listed = handler in MEMBER_LISTS
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        # ut46a #1: a tag list sent as "PII.Sensitive", 42 or JSON in JSON held no tag, and the line
        # mapped; nothing (null, absent, "") holds no member
        if listed and value is not None and value != "":
            raise Rejected("BAD_ASPECT_JSON", f"{path}: expected a list of objects, got {json_type(value)}")
        return {}
    out: dict[str, tuple[Any, NamedNode]] = {}
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            if listed:
                raise Rejected("BAD_ASPECT_JSON", f"{path}[{i}]: expected an object, got {json_type(item)}")
            continue
        where = f"{path}[{i}]"
        if handler == "tags":
            tag_fqn = get(item, "tagFQN", str, at=f"{where}.")
            if tag_fqn:
                glossary = get(item, "source", str, at=f"{where}.") == "Glossary"
                cls = "GlossaryTerm" if glossary else "Tag"
                node = checked(f"{where}.tagFQN", om_named, "glossaryTerm" if glossary else "tag", tag_fqn)
                out[tag_fqn] = (cls, g.entity(node, fqn=tag_fqn, cls=om(cls)))
        elif handler == "owners":
            name = get(item, "name", str, at=f"{where}.")
            if name:
                team = get(item, "type", str, at=f"{where}.") == "team"
                node = checked(f"{where}.name", om_named, "team" if team else "user", name)
                out[("team:" if team else "user:") + name] = (None, g.agent(node, organization=team))
        elif handler == "domains":
            domain_id = get(item, "id", str, at=f"{where}.")
            if domain_id:
                domain_fqn = get(item, "fullyQualifiedName", str, at=f"{where}.")
                node = checked(f"{where}.id", om_entity, "domain", domain_id)
                out[domain_id] = (None, g.entity(node, fqn=domain_fqn))
        elif handler == "columns":
            get(item, "fullyQualifiedName", str, at=f"{where}.")  # both must be strings (or absent) before they make a key
            get(item, "name", str, at=f"{where}.")
            col_fqn = _column_key(item, fqn)
            if col_fqn:
                out[col_fqn] = (terms.canonical_json(item), _column(g, f"{where}.fullyQualifiedName", col_fqn))
    return out


def _pipeline_run(g: Graph, pipeline: NamedNode, path: str, status: dict) -> None:
    """A pipelineStatus value is a run: an activity that used and produced datasets (named by FQN)."""
    at = f"{path}."
    started = integer(status, "timestamp", at=at)  # as the export reads it (rv48 #4)
    execution = get(status, "executionId", str, at=at) or (str(started) if started is not None else None)
    if execution is None:
        return
    run = minted("run", pipeline.value, execution)
    g.a(run, om("Run"))
    g.add(run, om("runOf"), pipeline)
    g.lit(run, om("executionStatus"), get(status, "executionStatus", str, at=at))
    if started is not None:
        g.add(run, prov("startedAtTime"), checked(f"{path}.timestamp", datetime_literal, started))
    ended = integer(status, "endTime", at=at)
    if ended is not None:
        g.add(run, prov("endedAtTime"), checked(f"{path}.endTime", datetime_literal, ended))
    executor = get(status, "executedBy", dict, at=at)
    if executor and get(executor, "name", str, at=at + "executedBy."):
        team = get(executor, "type", str, at=at + "executedBy.") == "team"
        agent = checked(f"{path}.executedBy.name", om_named, "team" if team else "user", executor["name"])
        g.add(run, prov("wasAssociatedWith"), g.agent(agent, organization=team))
    for key, prop in (("inputs", "inputFQN"), ("outputs", "outputFQN")):
        for k, item in enumerate(get(status, key, list, at=at) or []):
            if isinstance(item, dict):
                g.lit(run, om(prop), get(item, "datasetFQN", str, at=f"{at}{key}[{k}]."))
