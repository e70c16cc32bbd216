"""Building blocks shared by the family mappers: IRI factories and a triple collector."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable

from pyoxigraph import Literal, NamedNode, Triple

from changeprov.mapping import terms
from changeprov.mapping.vocab import (
    ID, OM_ENTITY, RDF_JSON, RDF_TYPE, XSD_BOOLEAN, XSD_DATETIME, XSD_DECIMAL, XSD_DOUBLE, XSD_INTEGER,
    om, prov, term,
)

# ---------------------------------------------------------------- IRIs (docs/model.md, "IRIs are deterministic")


def om_entity(entity_type: str, entity_id: str) -> NamedNode:
    """OpenMetadata's own RDF instance IRI for an entity. A ``/`` in the type is ``%2F``: the type
    ``table/a`` with the id ``b`` was the type ``table`` with the id ``a/b``, two entities in one node
    (ut46a #2); ``S`` writes ``%`` as ``%25``, so the form stays injective.

    >>> om_entity("table/a", "b").value, om_entity("table", "a/b").value
    ('https://open-metadata.org/entity/table%2Fa/b', 'https://open-metadata.org/entity/table/a/b')
    """
    return terms.named(OM_ENTITY + terms.iri_safe(entity_type).replace("/", "%2F") + "/" + terms.iri_safe(entity_id))


def om_named(kind: str, name: str) -> NamedNode:
    """Things OpenMetadata events only name (users, teams, tags, columns): ``id:om/{kind}/{S(name)}``."""
    return terms.named(ID + "om/" + kind + "/" + terms.iri_safe(name))


def minted(kind: str, *parts: str) -> NamedNode:
    """Opaque deterministic IRI ``id:{kind}/{H(parts)}``."""
    return NamedNode(ID + kind + "/" + terms.digest(*parts))


def urn(value: str) -> NamedNode:
    return terms.urn_iri(value)


def lineage_edge(down: NamedNode, up: NamedNode) -> NamedNode:
    return minted("lineage", down.value, up.value)


def lineage_assertion(edge: NamedNode, event: NamedNode) -> NamedNode:
    return minted("assertion", edge.value, event.value)


# ---------------------------------------------------------------- literals


def json_literal(value: Any) -> Literal:
    return Literal(terms.canonical_json(value), datatype=RDF_JSON)


def value_literal(value: Any) -> Literal:
    """A JSON value as the literal docs/model.md prescribes (scalars typed, structures rdf:JSON)."""
    if isinstance(value, bool):
        return Literal("true" if value else "false", datatype=XSD_BOOLEAN)
    if isinstance(value, str):
        return Literal(value)
    if isinstance(value, (int, Decimal)):
        # Exactly Spark's variant typing: an exponent (either case) or more than decimal(38) holds makes a
        # double; a decimal whose canonical form is integral (1.0 → 1) is an integer; otherwise a decimal.
        text = terms.json_number(value)
        if terms.is_double(value):
            return Literal(text, datatype=XSD_DOUBLE)
        return Literal(text, datatype=XSD_DECIMAL if "." in text else XSD_INTEGER)
    return json_literal(value)


def decimal_literal(value: int | Decimal) -> Literal:
    return Literal(terms.decimal_lexical(value), datatype=XSD_DECIMAL)


def datetime_literal(ms: int) -> Literal:
    return Literal(terms.ms_to_xsd(ms), datatype=XSD_DATETIME)


# ---------------------------------------------------------------- collector


class Graph:
    """Ordered, duplicate-free collection of triples for one event."""

    __slots__ = ("_seen", "triples")

    def __init__(self) -> None:
        self.triples: list[Triple] = []
        self._seen: set[Triple] = set()

    def add(self, s: NamedNode, p: NamedNode, o) -> None:
        t = Triple(s, p, o)
        if t not in self._seen:
            self._seen.add(t)
            self.triples.append(t)

    def a(self, s: NamedNode, *classes: NamedNode) -> None:
        for c in classes:
            self.add(s, RDF_TYPE, c)

    def lit(self, s: NamedNode, p: NamedNode, value: Any) -> None:
        """``s p value`` with the value's natural literal; nothing when the value is None."""
        if value is not None:
            self.add(s, p, value_literal(value))

    def json(self, s: NamedNode, p: NamedNode, value: Any) -> None:
        if value is not None:
            self.add(s, p, json_literal(value))

    def extend(self, triples: Iterable[Triple]) -> None:
        for t in triples:
            self.add(t.subject, t.predicate, t.object)

    # ------------------------------------------------------------ shared node shapes

    def entity(self, node: NamedNode, *, asset_type: str | None = None, fqn: str | None = None,
               urn_text: str | None = None, cls: NamedNode | None = None) -> NamedNode:
        self.a(node, om("MetadataEntity"))
        if cls is not None:
            self.a(node, cls)
        self.lit(node, om("assetType"), asset_type)
        self.lit(node, om("fullyQualifiedName"), fqn)
        self.lit(node, om("urn"), urn_text)
        return node

    def agent(self, node: NamedNode, *, organization: bool = False) -> NamedNode:
        self.a(node, prov("Agent"))
        if organization:
            self.a(node, prov("Organization"))
        return node

    def lineage(self, event: NamedNode, down: NamedNode, up: NamedNode, *, removed: bool = False,
                details: dict[str, Any] | None = None) -> NamedNode:
        """A time-bounded derivation ``down ← up`` asserted (or retracted) by ``event``.

        ``details`` (property local name → a value for ``lit`` or a node; None: none) are what an
        adding event says of the edge (its SQL, source, pipeline, transform). They go on the node of
        that event's assertion, ``id:assertion/{H(edge, event)}``, not on the edge: an edge re-added
        with another SQL keeps each SQL with the event and time that stated it."""
        edge = lineage_edge(down, up)
        self.a(edge, om("LineageEdge"))
        self.add(down, prov("qualifiedDerivation"), edge)
        self.add(edge, prov("entity"), up)
        # PROV: a qualified derivation implies the unqualified one; a removed edge did exist.
        self.add(down, prov("wasDerivedFrom"), up)
        self.add(edge, om("removedBy") if removed else om("addedBy"), event)
        stated = {k: v for k, v in (details or {}).items() if v is not None}
        if stated and not removed:
            assertion = lineage_assertion(edge, event)
            self.a(assertion, om("LineageAssertion"))
            self.add(edge, om("assertion"), assertion)
            self.add(assertion, om("assertedBy"), event)
            for name, value in stated.items():
                if isinstance(value, NamedNode):
                    self.add(assertion, om(name), value)
                else:
                    self.lit(assertion, om(name), value)
        return edge

    def concept(self, s: NamedNode, p: NamedNode, curie: str) -> None:
        self.add(s, p, term(curie))
