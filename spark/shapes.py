"""The node shapes every Spark family mapper emits (emit.Graph and events.py, as N-Triples text).

Nodes are IRI terms (``<…>``, see sqlterms.iri) except where a function says "IRI text"; a null
term makes its triple null, and the mappers drop null triples at the end.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.events import FIELD_KINDS
from changeprov.mapping.vocab import expand
from changeprov.spark.sqlterms import cat, datetime_literal, iri, let, literal, minted, table, term, triple

FIELD_LISTS = {k: FIELD_KINDS[k] for k in ("added", "updated", "deleted")}  # a change description's own lists


def RDF_TYPE() -> Column:  # noqa: N802 - a constant, built when a session is active
    return term("rdf:type")


def om(local: str) -> Column:
    return term("om-event:" + local)


def prov(local: str) -> Column:
    return term("prov:" + local)


def om_term(local: Column) -> Column:
    """The om-event: term whose local name is the text ``local``."""
    return F.concat(F.lit("<" + expand("om-event:")), local, F.lit(">"))


def entity_triples(node: Column, *, asset_type: Column | None = None, fqn: Column | None = None,
                   urn_text: Column | None = None, cls: str | Column | None = None) -> list[Column]:
    """Graph.entity."""
    out = [triple(node, RDF_TYPE(), om("MetadataEntity"))]
    if cls is not None:
        out.append(triple(node, RDF_TYPE(), om(cls) if isinstance(cls, str) else cls))
    if asset_type is not None:
        out.append(triple(node, om("assetType"), literal(asset_type)))
    if fqn is not None:
        out.append(triple(node, om("fullyQualifiedName"), literal(fqn)))
    if urn_text is not None:
        out.append(triple(node, om("urn"), literal(urn_text)))
    return out


def agent_triples(node: Column, organization: Column | None = None) -> list[Column]:
    """Graph.agent."""
    out = [triple(node, RDF_TYPE(), prov("Agent"))]
    if organization is not None:
        out.append(F.when(organization, triple(node, RDF_TYPE(), prov("Organization"))))
    return out


def lineage_triples(event: Column, down: Column, up: Column, removed, details=None) -> Column:
    """array of Graph.lineage's triples (``event``, ``down``, ``up`` are IRI texts); ``removed`` a
    bool or a boolean Column; ``details(assertion_term)`` the detail triples an adding event states,
    on its assertion node, which exists when one of them does (a null triple is none)."""
    edge_text = minted("lineage", down, up)
    names = {"e": iri(edge_text), "d": iri(down), "u": iri(up)}
    stating = details is not None and removed is not True
    if stating:
        names["a"] = iri(minted("assertion", edge_text, event))

    def body(c):
        e, d, u = c["e"], c["d"], c["u"]
        by = om("removedBy" if removed else "addedBy") if isinstance(removed, bool) else \
            F.when(removed, om("removedBy")).otherwise(om("addedBy"))
        edge = F.array(triple(e, RDF_TYPE(), om("LineageEdge")), triple(d, prov("qualifiedDerivation"), e),
                       triple(e, prov("entity"), u), triple(d, prov("wasDerivedFrom"), u), triple(e, by, iri(event)))
        if not stating:
            return edge
        a = c["a"]
        stated = F.filter(F.array(*details(a)), lambda t: t.isNotNull())
        adding = F.lit(True) if removed is False else ~removed
        return cat(edge, F.when(adding & (F.size(stated) > 0), F.concat(F.array(
            triple(a, RDF_TYPE(), om("LineageAssertion")), triple(e, om("assertion"), a),
            triple(a, om("assertedBy"), iri(event))), stated)))

    return let(names, body)


def event_triples(ev: Column, *, event_type: Column, ms: Column, entity: Column, agent: Column | None = None,
                  lifecycle: Column | None = None, operation: Column | None = None) -> list[Column]:
    """events.event_node (every argument a term)."""
    out = [triple(ev, RDF_TYPE(), om("ChangeEvent")), triple(ev, om("eventType"), event_type),
           triple(ev, om("timestamp"), datetime_literal(ms)), triple(ev, om("affectsEntity"), entity)]
    if agent is not None:
        out.append(triple(ev, om("performedBy"), agent))
    if lifecycle is not None:
        out.append(triple(ev, om("lifecycleChange"), lifecycle))
    if operation is not None:
        out.append(triple(ev, om("operation"), operation))
    return out


def change_node(event: Column, kind: Column | str, index: Column | int = 0) -> Column:
    """The IRI text of ``{event}/change/{kind}/{index}``."""
    kind = F.lit(kind) if isinstance(kind, str) else kind
    index = F.lit(str(index)) if isinstance(index, int) else index.cast("string")
    return F.concat(event, F.lit("/change/"), kind, F.lit("/"), index)


def field_change_triples(event: Column, kind: Column | str, name: Column, *, index: Column | int = 0,
                         old: Column | None = None, new: Column | None = None) -> list[Column]:
    """events.field_change: the change description of the event (IRI text) and the field change
    ``kind``/``index`` named ``name``, with its old and new value literals (null: none)."""
    ev = iri(event)
    desc = iri(F.concat(event, F.lit("/changes")))
    change = iri(change_node(event, kind, index))
    kind_col = F.lit(kind) if isinstance(kind, str) else kind
    lists = table(FIELD_KINDS)
    out = [triple(ev, om("hasChangeDescription"), desc), triple(desc, RDF_TYPE(), om("ChangeDescription")),
           triple(desc, om_term(F.try_element_at(lists, kind_col)), change),
           triple(change, RDF_TYPE(), om("FieldChange")), triple(change, om("fieldName"), literal(name))]
    if old is not None:
        out.append(triple(change, om("oldValue"), old))
    if new is not None:
        out.append(triple(change, om("newValue"), new))
    return out
