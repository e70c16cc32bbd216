"""The TBox (om-event.ttl + the bundled W3C PROV-O) and its OWL 2 RL closure, computed once with owlrl.

`changeprov check` tests the closure for inconsistencies; `changeprov reason` and the SHACL and PROV
checks read the tables below (super-classes, super-properties, domains, ranges) instead of reasoning
over the data.

>>> t = tbox()
>>> PROV + "Activity" in t.superclasses[OM_EVENT + "ChangeEvent"]
True
>>> PROV + "wasDerivedFrom" in t.superproperties[PROV + "wasRevisionOf"]
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from changeprov.ontology import OM_EVENT, PROV, ontology_graph  # noqa: F401 (OM_EVENT: the doctests)

PROV_O_FILE = "prov-o.ttl"
#: Classes every individual belongs to; membership in them says nothing, so it is never materialised.
TRIVIAL_CLASSES = frozenset({str(OWL.Thing), str(RDFS.Resource)})
_ERROR_NS = "http://www.daml.org/2002/03/agents/agent-ont#"


def prov_o_graph() -> rdflib.Graph:
    """The W3C PROV-O (Recommendation 2013-04-30) bundled as ontology/prov-o.ttl."""
    text = resources.files("changeprov.ontology").joinpath(PROV_O_FILE).read_text(encoding="utf-8")
    return rdflib.Graph().parse(data=text, format="turtle", publicID=PROV)


def tbox_graph() -> rdflib.Graph:
    """om-event.ttl + PROV-O (the real one; prov-axioms.ttl states a subset of it)."""
    graph = ontology_graph(with_prov=False)
    graph += prov_o_graph()
    return graph


@dataclass(frozen=True)
class TBox:
    """Named terms and their closed hierarchies (each table maps an IRI string to a frozenset of IRI strings)."""

    graph: rdflib.Graph                           # the TBox as written
    classes: frozenset[str]                       # named classes (trivial ones excluded)
    properties: frozenset[str]                    # named object / datatype / rdf properties
    individuals: dict[str, frozenset[str]]        # ontology individual -> its classes (closed)
    superclasses: dict[str, frozenset[str]]       # strict, transitive, named, non-trivial
    superproperties: dict[str, frozenset[str]]    # strict, transitive, named
    domains: dict[str, frozenset[str]]            # own + inherited from super-properties, closed upwards
    ranges: dict[str, frozenset[str]]             # the same for rdfs:range (classes only, no datatypes)
    errors: tuple[str, ...]                       # owlrl's inconsistency messages (empty = consistent)

    def subclasses(self, cls: str) -> frozenset[str]:
        """``cls`` and every named class below it."""
        return frozenset({cls} | {c for c, sup in self.superclasses.items() if cls in sup})


def _named(node) -> bool:
    return isinstance(node, rdflib.URIRef)


def _direct_supers(graph: rdflib.Graph, members: set[str], sub_of, equivalent) -> dict[str, set[str]]:
    """Each member's direct super-terms among ``members``: by ``sub_of``, and both ways by ``equivalent``."""
    supers: dict[str, set[str]] = {m: set() for m in members}

    def edges(predicate):
        return ((str(s), str(o)) for s, o in graph.subject_objects(predicate)
                if _named(s) and _named(o) and str(s) in members and str(o) in members)

    for s, o in edges(sub_of):
        supers[s].add(o)
    for s, o in edges(equivalent):
        supers[s].add(o)
        supers[o].add(s)
    return supers


def _transitive(direct: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    out = {}
    for start in direct:
        seen, todo = set(), list(direct[start])
        while todo:
            n = todo.pop()
            if n not in seen and n != start:
                seen.add(n)
                todo.extend(direct.get(n, ()))
        out[start] = frozenset(seen)
    return out


@lru_cache(maxsize=1)
def tbox() -> TBox:
    """The bundled TBox (:func:`tbox_graph`) closed under OWL 2 RL once (see :func:`build_tbox`)."""
    return build_tbox(tbox_graph())


def build_tbox(graph: rdflib.Graph) -> TBox:
    """Close ``graph`` (a TBox) under OWL 2 RL (owlrl), and read the tables from the closure.

    owlrl handles equivalences and the schema rules (scm-sco, scm-spo, scm-dom1/2, scm-rng1/2); the
    tables are closed again here so that one pass of `changeprov reason` reaches the fixpoint even if
    owlrl left a step out.
    """
    import owlrl

    closed = rdflib.Graph()
    for t in graph:
        closed.add(t)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(closed)
    errors = tuple(sorted(str(m) for node in closed.subjects(RDF.type, rdflib.URIRef(_ERROR_NS + "ErrorMessage"))
                          for m in closed.objects(node, rdflib.URIRef(_ERROR_NS + "error"))))

    class_types = (OWL.Class, RDFS.Class)
    prop_types = (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property)
    classes = {str(s) for t in class_types for s in graph.subjects(RDF.type, t) if _named(s)}
    classes |= {str(o) for o in graph.objects(None, RDFS.subClassOf) if _named(o)}
    classes -= TRIVIAL_CLASSES
    properties = {str(s) for t in prop_types for s in graph.subjects(RDF.type, t) if _named(s)}
    datatypes = {str(s) for s in closed.subjects(RDF.type, RDFS.Datatype) if _named(s)}

    superclasses = _transitive(_direct_supers(closed, classes, RDFS.subClassOf, OWL.equivalentClass))
    superproperties = _transitive(_direct_supers(closed, properties, RDFS.subPropertyOf, OWL.equivalentProperty))

    def up(cs) -> frozenset[str]:
        return frozenset(c2 for c in cs if c in classes for c2 in {c} | superclasses[c])

    def table(pred) -> dict[str, frozenset[str]]:
        own = {p: {str(o) for o in closed.objects(rdflib.URIRef(p), pred)
                   if _named(o) and str(o) not in datatypes} for p in properties}
        return {p: up(set().union(*(own[q] for q in {p} | superproperties[p]))) for p in properties}

    individuals = {}
    for s, o in graph.subject_objects(RDF.type):
        if _named(s) and str(o) in classes and str(s) not in classes and str(s) not in properties:
            individuals.setdefault(str(s), set()).add(str(o))
    return TBox(graph=graph, classes=frozenset(classes), properties=frozenset(properties),
                individuals={i: up(cs) for i, cs in individuals.items()},
                superclasses=superclasses, superproperties=superproperties,
                domains=table(RDFS.domain), ranges=table(RDFS.range), errors=errors)


@lru_cache(maxsize=1)
def tbox_terms() -> frozenset[str]:
    """Every IRI the TBox mentions (a node that is one of these is not a data node)."""
    graph = tbox().graph
    return frozenset(str(n) for t in graph for n in t if _named(n))


__all__ = ["TBox", "tbox", "build_tbox", "tbox_graph", "prov_o_graph", "tbox_terms", "TRIVIAL_CLASSES"]
