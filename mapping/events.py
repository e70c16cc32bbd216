"""The part of the graph every event family shares: the event node and its field changes."""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from changeprov.mapping.emit import Graph, datetime_literal
from changeprov.mapping.vocab import om, term

# "initial": what an OpenMetadata creation set (openmetadata._initial_values), listed as added
# "dropped": the tags a dropped column took with it (openmetadata._dropped_column_tags), listed as deleted
FIELD_KINDS = {"added": "fieldsAdded", "updated": "fieldsUpdated", "deleted": "fieldsDeleted", "initial": "fieldsAdded",
               "dropped": "fieldsDeleted", "appeared": "fieldsAdded"}
_UNSET = object()


def event_node(g: Graph, event: NamedNode, *, event_type: str, ms: int, entity: NamedNode,
               agent: NamedNode | None = None, lifecycle: str | None = None,
               operation: str | None = None) -> NamedNode:
    """The ChangeEvent with its exactly-one type, time and affected entity."""
    g.a(event, om("ChangeEvent"))
    g.add(event, om("eventType"), term(event_type))
    g.add(event, om("timestamp"), datetime_literal(ms))
    g.add(event, om("affectsEntity"), entity)
    if agent is not None:
        g.add(event, om("performedBy"), agent)
    if lifecycle:
        g.add(event, om("lifecycleChange"), term(lifecycle))
    if operation:
        g.add(event, om("operation"), term(operation))
    return event


def field_change(g: Graph, event: NamedNode, kind: str, index: int | str, name: str, *,
                 old: Any = _UNSET, new: Any = _UNSET) -> NamedNode:
    """``{event}/change/{kind}/{index}``, linked through the event's change description."""
    description = NamedNode(event.value + "/changes")
    change = NamedNode(f"{event.value}/change/{kind}/{index}")
    g.add(event, om("hasChangeDescription"), description)
    g.a(description, om("ChangeDescription"))
    g.add(description, om(FIELD_KINDS[kind]), change)
    g.a(change, om("FieldChange"))
    g.lit(change, om("fieldName"), name)
    if old is not _UNSET:
        g.lit(change, om("oldValue"), old)
    if new is not _UNSET:
        g.lit(change, om("newValue"), new)
    return change


def member_changes(g: Graph, change: NamedNode, *, old: dict[str, NamedNode], new: dict[str, NamedNode],
                   added: str, removed: str, kept: str | None = None) -> None:
    """Structured add/remove triples for set-valued fields: new − old added, old − new removed, and
    with ``kept`` (a DataHub aspect, whose values are whole lists) old ∩ new kept.

    ``old``/``new`` map a member's key (tag FQN, URN, …) to its node; keys order the output.
    """
    for key in sorted(new.keys() - old.keys()):
        g.add(change, term(added), new[key])
    for key in sorted(old.keys() - new.keys()):
        g.add(change, term(removed), old[key])
    if kept:
        for key in sorted(old.keys() & new.keys()):
            g.add(change, term(kept), new[key])
