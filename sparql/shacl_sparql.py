"""The SHACL shapes (ontology/shapes.ttl) as SPARQL queries that run inside the store.

Why translate instead of running pyshacl: `changeprov check` must work on stores far larger than
memory. pyshacl needs the data in an rdflib graph; feeding it batches means re-building, for every
batch of focus nodes, the neighbourhood each shape reads (types of value nodes, inverse paths, the
2-hop SPARQL constraint) and paying pyshacl's per-node cost in Python — minutes per million triples.
As SPARQL, each constraint is one query the store answers from its indexes, streaming; violations are
counted by the store (``COUNT``) and only the first N are fetched, so memory is O(N) whatever the
store size, and the same queries run on an embedded store and on a remote endpoint.

Fidelity: each constraint component the shapes use has one query template that follows the SHACL
definition (value nodes are a set; SHACL instance = ``rdf:type/rdfs:subClassOf*``, with the
sub-classes and the ontology's own individuals — event types, lifecycle changes — written in from the
ontology, since the store holds only data; ``sh:datatype`` also rejects ill-typed lexical forms).
tests/test_check.py checks that the translation reports the same (focus, component, value) results as
pyshacl on the corpus with injected violations. A shape using a SHACL feature without a template
raises ConfigError rather than being skipped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pyoxigraph as ox
import rdflib
from rdflib.namespace import RDF, XSD

from changeprov.errors import ConfigError
from changeprov.ontology.shacl import shapes_graph
from changeprov.ontology.tbox import tbox

SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")
_CASTABLE = {XSD.dateTime, XSD.decimal, XSD.integer, XSD.boolean, XSD.double, XSD.float, XSD.date}
_NODE_KINDS = {
    SH.IRI: "isIRI(?value)", SH.Literal: "isLiteral(?value)", SH.BlankNode: "isBlank(?value)",
    SH.BlankNodeOrIRI: "(isIRI(?value) || isBlank(?value))",
    SH.BlankNodeOrLiteral: "(isBlank(?value) || isLiteral(?value))",
    SH.IRIOrLiteral: "(isIRI(?value) || isLiteral(?value))",
}
# Keys a shape may carry that are not constraints (or are handled by the shape walk itself).
_NON_CONSTRAINTS = {RDF.type, SH.targetClass, SH.targetSubjectsOf, SH.property, SH.path, SH.message, SH.name,
                    SH.description, SH.severity, SH.deactivated, SH.order, SH.group,
                    rdflib.RDFS.label, rdflib.RDFS.comment}


@dataclass(frozen=True)
class ShapeConstraint:
    """One constraint of one shape, as a SPARQL query returning ``?focus ?value`` per violation."""

    shape: str        # the shape's IRI, or "<node shape> <path>" for a blank property shape
    component: str    # SHACL constraint component, e.g. "MinCountConstraintComponent"
    path: str | None  # SPARQL property path of a property shape
    message: str
    prologue: str     # PREFIX lines (SPARQL-based constraints)
    select: str       # SELECT DISTINCT ?focus ?value WHERE { … }

    @property
    def name(self) -> str:
        return f"{self.shape} {self.component.removesuffix('ConstraintComponent')}"

    @property
    def query(self) -> str:
        """The violations, ordered (for stable examples)."""
        return f"{self.prologue}\n{self.select}\nORDER BY ?focus ?value"

    def count_query(self) -> str:
        return f"{self.prologue}\nSELECT (COUNT(*) AS ?n) WHERE {{ {self.select} }}"


def _n3(term) -> str:
    if isinstance(term, rdflib.URIRef):
        return str(ox.NamedNode(str(term)))
    if isinstance(term, rdflib.Literal):
        return term.n3()
    raise ConfigError(f"shapes.ttl: unsupported term {term!r} in a translated position")


def _iri_list(iris) -> str:
    return " ".join(str(ox.NamedNode(i)) for i in sorted(iris))


def _path(g: rdflib.Graph, node) -> str:
    """A SHACL path as a SPARQL 1.1 property path."""
    if isinstance(node, rdflib.URIRef):
        return _n3(node)
    inverse = g.value(node, SH.inversePath)
    if inverse is not None:
        return f"^({_path(g, inverse)})"
    alternatives = g.value(node, SH.alternativePath)
    if alternatives is not None:
        return "(" + "|".join(_path(g, n) for n in rdflib.collection.Collection(g, alternatives)) + ")"
    if (node, RDF.first, None) in g:
        return "(" + "/".join(_path(g, n) for n in rdflib.collection.Collection(g, node)) + ")"
    raise ConfigError(f"shapes.ttl: unsupported SHACL path {node!r} (no SPARQL template)")


def _instance_filter(var: str, cls: str, *, negate: bool) -> str:
    """SHACL instance of ``cls``: typed with it or a sub-class, or an ontology individual of it."""
    t = tbox()
    individuals = sorted(i for i, cs in t.individuals.items() if cls in cs)
    typed = f"EXISTS {{ VALUES ?shacl_class {{ {_iri_list(t.subclasses(cls))} }} {var} a ?shacl_class }}"
    member = f"({var} IN ({', '.join(str(ox.NamedNode(i)) for i in individuals)}) || {typed})" if individuals \
        else typed
    return f"FILTER({'!' if negate else ''}{member})"


def _target(g: rdflib.Graph, shape, var: str) -> str:
    t = tbox()
    parts = []
    for cls in g.objects(shape, SH.targetClass):
        parts.append(f"VALUES ?target_class {{ {_iri_list(t.subclasses(str(cls)))} }} {var} a ?target_class .")
    for prop in g.objects(shape, SH.targetSubjectsOf):
        parts.append(f"{var} {_n3(prop)} ?target_object .")
    if not parts:
        raise ConfigError(f"shapes.ttl: node shape {shape} has no sh:targetClass / sh:targetSubjectsOf target")
    return parts[0] if len(parts) == 1 else "{ " + " } UNION { ".join(parts) + " }"


def _select(body: str, *, focus: str = "?focus") -> str:
    projection = "?focus" if focus == "?focus" else f"({focus} AS ?focus)"
    return f"SELECT DISTINCT {projection} ?value WHERE {{\n  {body}\n}}"


def _value_constraints(g, shape, target: str, values: str) -> list[tuple[str, str]]:
    """(component, WHERE body) for the value-node components of a node or property shape."""
    out = []
    for kind in g.objects(shape, SH.nodeKind):
        if kind not in _NODE_KINDS:
            raise ConfigError(f"shapes.ttl: unknown sh:nodeKind {kind}")
        out.append(("NodeKindConstraintComponent", f"{target} {values} FILTER(!{_NODE_KINDS[kind]})"))
    for cls in g.objects(shape, SH["class"]):
        out.append(("ClassConstraintComponent", f"{target} {values} {_instance_filter('?value', str(cls), negate=True)}"))
    for dt in g.objects(shape, SH.datatype):
        ok = f"(isLiteral(?value) && DATATYPE(?value) = {_n3(dt)}"
        if dt in _CASTABLE:  # an ill-typed lexical form ("yesterday"^^xsd:dateTime) fails the cast
            ok += f" && COALESCE(isLiteral({_n3(dt)}(STR(?value))), false)"
        out.append(("DatatypeConstraintComponent", f"{target} {values} FILTER(!{ok}))"))
    for negated in g.objects(shape, SH["not"]):
        keys = {p for p in g.predicates(negated) if p not in (RDF.type,)}
        if keys != {SH["class"]}:
            raise ConfigError(f"shapes.ttl: sh:not is translated only around a single sh:class, got {sorted(keys)}")
        (cls,) = list(g.objects(negated, SH["class"]))
        out.append(("NotConstraintComponent", f"{target} {values} {_instance_filter('?value', str(cls), negate=False)}"))
    return out


def _prologue(g: rdflib.Graph, constraint) -> str:
    lines = []
    for owner in g.objects(constraint, SH.prefixes):
        for decl in g.objects(owner, SH.declare):
            lines.append(f"PREFIX {g.value(decl, SH.prefix)}: {_n3(rdflib.URIRef(str(g.value(decl, SH.namespace))))}")
    return "\n".join(sorted(set(lines)))


def _check_known(g, shape, handled: set) -> None:
    unknown = {p for p in g.predicates(shape) if p not in _NON_CONSTRAINTS and p not in handled}
    if unknown:
        raise ConfigError(f"shapes.ttl: shape {shape} uses SHACL features without a SPARQL template: "
                          f"{', '.join(sorted(str(u) for u in unknown))}")


_VALUE_KEYS = {SH.nodeKind, SH["class"], SH.datatype, SH["not"]}


def _message(g, shape) -> str:
    return str(g.value(shape, SH.message) or "")


@lru_cache(maxsize=1)
def shape_constraints() -> tuple[ShapeConstraint, ...]:
    """Every constraint of shapes.ttl, translated (cached: the shapes and the ontology are bundled)."""
    g = shapes_graph()
    out: list[ShapeConstraint] = []
    node_shapes = sorted({s for s in g.subjects(RDF.type, SH.NodeShape)}, key=str)
    for ns in node_shapes:
        if g.value(ns, SH.deactivated) == rdflib.Literal(True):
            continue
        _check_known(g, ns, _VALUE_KEYS | {SH.sparql})
        name = g.namespace_manager.normalizeUri(ns) if isinstance(ns, rdflib.URIRef) else str(ns)
        target = _target(g, ns, "?focus")
        for component, body in _value_constraints(g, ns, target, "BIND(?focus AS ?value)"):
            out.append(ShapeConstraint(name, component, None, _message(g, ns), "", _select(body)))
        for sparql in g.objects(ns, SH.sparql):
            select = str(g.value(sparql, SH.select))
            body = f"{_target(g, ns, '?this')} {{ {select} }}"
            out.append(ShapeConstraint(g.namespace_manager.normalizeUri(sparql) if isinstance(sparql, rdflib.URIRef)
                                       else name, "SPARQLConstraintComponent", None, _message(g, sparql),
                                       _prologue(g, sparql), _select(body, focus="?this")))
        for ps in sorted(g.objects(ns, SH.property), key=str):
            _check_known(g, ps, _VALUE_KEYS | {SH.minCount, SH.maxCount, SH.lessThanOrEquals})
            path = _path(g, g.value(ps, SH.path))
            pname = (g.namespace_manager.normalizeUri(ps) if isinstance(ps, rdflib.URIRef) else f"{name} {path}")
            msg = _message(g, ps)
            values = f"?focus {path} ?value ."
            for n in g.objects(ps, SH.minCount):
                n = int(n)
                body = (f"{target} FILTER NOT EXISTS {{ ?focus {path} ?any_value }}" if n == 1 else
                        f"{{ SELECT ?focus (COUNT(DISTINCT ?v) AS ?c) WHERE {{ {target} OPTIONAL {{ ?focus {path} ?v }} }} "
                        f"GROUP BY ?focus }} FILTER(?c < {n})")
                out.append(ShapeConstraint(pname, "MinCountConstraintComponent", path, msg, "", _select(body)))
            for n in g.objects(ps, SH.maxCount):
                body = (f"{{ SELECT ?focus WHERE {{ {target} ?focus {path} ?v }} GROUP BY ?focus "
                        f"HAVING (COUNT(DISTINCT ?v) > {int(n)}) }}")
                out.append(ShapeConstraint(pname, "MaxCountConstraintComponent", path, msg, "", _select(body)))
            for component, body in _value_constraints(g, ps, target, values):
                out.append(ShapeConstraint(pname, component, path, msg, "", _select(body)))
            for other in g.objects(ps, SH.lessThanOrEquals):
                body = f"{target} {values} ?focus {_n3(other)} ?other FILTER(!COALESCE(?value <= ?other, false))"
                out.append(ShapeConstraint(pname, "LessThanOrEqualsConstraintComponent", path, msg, "", _select(body)))
    return tuple(out)
