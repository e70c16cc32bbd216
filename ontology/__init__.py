"""The bundled vocabulary: ``om-event.ttl`` (the changeprov ontology), ``prov-axioms.ttl`` (the PROV-O
facts it relies on), ``context.jsonld`` and ``shapes.ttl``, with small loaders.

>>> OM_EVENT + "ChangeEvent" in declared_terms()
True
>>> is_declared("http://www.w3.org/ns/prov#used"), is_declared(OM_EVENT + "NoSuchTerm")
(True, False)
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable

import rdflib
from rdflib.namespace import OWL, RDF, RDFS, SKOS, XSD

ONTOLOGY_IRI = "https://open-metadata.org/schema/type/changeEvent"
VERSION_IRI = "https://w3id.org/changeprov/ontology/0.1.0"
OM_EVENT = "https://open-metadata.org/schema/type/changeEvent/"
PROV = "http://www.w3.org/ns/prov#"

#: The files shipped in this package, by name.
BUNDLED = ("om-event.ttl", "prov-axioms.ttl", "context.jsonld", "shapes.ttl")

#: Vocabularies whose terms count as declared without being in om-event.ttl (rdflib's own term lists).
STANDARD_NAMESPACES = {"rdf": RDF, "rdfs": RDFS, "owl": OWL, "xsd": XSD, "skos": SKOS}

# rdf:type objects that make a subject a declared term of om-event.ttl / prov-axioms.ttl.
_DECLARING_TYPES = frozenset({
    OWL.Class, RDFS.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty,
    RDF.Property, OWL.NamedIndividual, SKOS.ConceptScheme, SKOS.Concept,
})


def resource_path(name: str) -> Traversable:
    """The bundled file ``name`` (one of :data:`BUNDLED`); it may not exist yet.

    >>> resource_path("om-event.ttl").name
    'om-event.ttl'
    """
    if name not in BUNDLED:
        raise ValueError(f"not a bundled vocabulary file: {name!r} (one of {', '.join(BUNDLED)})")
    return resources.files(__name__).joinpath(name)


def read_text(name: str) -> str:
    """The UTF-8 text of the bundled file ``name``."""
    return resource_path(name).read_text(encoding="utf-8")


def ontology_graph(*, with_prov: bool = True) -> rdflib.Graph:
    """A fresh rdflib graph of om-event.ttl, plus prov-axioms.ttl unless ``with_prov=False``.

    >>> len(ontology_graph()) > len(ontology_graph(with_prov=False)) > 0
    True
    """
    graph = rdflib.Graph()
    graph.parse(data=read_text("om-event.ttl"), format="turtle", publicID=ONTOLOGY_IRI)
    if with_prov:
        graph.parse(data=read_text("prov-axioms.ttl"), format="turtle", publicID=PROV)
    for prefix, ns in (("om-event", OM_EVENT), ("prov", PROV), ("skos", str(SKOS))):
        graph.bind(prefix, ns)
    return graph


@lru_cache(maxsize=1)
def _declared() -> frozenset[str]:
    graph = ontology_graph()
    types = _DECLARING_TYPES | set(graph.subjects(RDFS.subClassOf, SKOS.Concept))
    found = {str(s) for t in types for s in graph.subjects(RDF.type, t) if isinstance(s, rdflib.URIRef)}
    return frozenset(found)


def declared_terms() -> set[str]:
    """Every IRI declared in om-event.ttl (class, property, individual, concept scheme) or in
    prov-axioms.ttl. The ontology's own IRI is not a term."""
    return set(_declared())


@lru_cache(maxsize=1)
def standard_vocabularies() -> frozenset[str]:
    """Every term IRI of RDF, RDFS, OWL, XSD and SKOS, as rdflib lists them; they count as declared.

    >>> str(RDF.JSON) in standard_vocabularies(), str(RDFS) + "nope" in standard_vocabularies()
    (True, False)
    """
    return frozenset(str(term) for ns in STANDARD_NAMESPACES.values() for term in dir(ns))


def is_standard_term(iri: str) -> bool:
    """Whether ``iri`` is a term of one of :data:`STANDARD_NAMESPACES`."""
    return any(iri.startswith(str(ns)) and rdflib.URIRef(iri) in ns for ns in STANDARD_NAMESPACES.values())


def is_declared(iri: str) -> bool:
    """Whether a graph may use ``iri`` as a class, property or individual: declared by the bundled
    vocabulary or a standard term."""
    return iri in _declared() or is_standard_term(iri)
