"""The ontology half of `changeprov check` (no store needed).

* ``owl-rl-consistency``: om-event.ttl + the bundled W3C PROV-O, closed under OWL 2 RL by owlrl, yield
  no inconsistency (owlrl reports e.g. an individual in two disjoint classes).
* ``declared-terms``: every om-event / PROV / RDF / RDFS / OWL / XSD / SKOS IRI used by the mapping
  rules (rules.json), the shapes (incl. their SPARQL), the JSON-LD context, the named queries (and any
  extra query files given) and om-event.ttl itself is declared by the ontology, PROV-O or the standard
  vocabulary (:func:`changeprov.ontology.is_declared`).
* ``labels``: every om-event class, property and individual has an rdfs:label.

Each check returns its problems as short strings; nothing here raises on a broken file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping

import rdflib
from rdflib.namespace import OWL, RDF, RDFS, SKOS, XSD

from changeprov.ontology import OM_EVENT, PROV, is_declared, ontology_graph, read_text
from changeprov.sparql import lexer

#: Namespaces whose terms must be declared; IRIs elsewhere (data, SHACL, shapes' own names) are not vetted.
VETTED = (OM_EVENT, PROV, str(RDF), str(RDFS), str(OWL), str(XSD), str(SKOS))

# the lexer's pieces (strings, IRIs, comments, variables) and a prefixed name, which is what is vetted
_TOKENS = re.compile(lexer.TOKENS.pattern + r"|(?P<pname>(?:[A-Za-z][\w.-]*)?:(?:[\w][\w.-]*)?)", re.DOTALL)


@dataclass(frozen=True)
class OntologyCheck:
    name: str
    description: str
    problems: tuple[str, ...]


def query_terms(text: str, prefixes: Mapping[str, str] | None = None) -> set[str]:
    """The IRIs a SPARQL text names (full IRIs and prefixed names), outside strings and comments."""
    known = dict(prefixes or {})
    known.update(lexer.prefixes(text))
    found = set()
    for m in _TOKENS.finditer(text):
        if m.lastgroup == "iri":
            found.add(m.group()[1:-1])
        elif m.lastgroup == "pname":
            prefix, _, local = m.group().rstrip(".").partition(":")
            if prefix in known and local:
                found.add(known[prefix] + local)
    return found


def _vetted(iris: Iterable[str]) -> set[str]:
    return {i for i in iris if i.startswith(VETTED) and i not in VETTED}  # a namespace itself is no term


@lru_cache(maxsize=1)
def _prov_o_declared() -> frozenset[str]:
    from changeprov.ontology.tbox import prov_o_graph

    g = prov_o_graph()
    return frozenset(str(s) for s in g.subjects(RDF.type, None) if isinstance(s, rdflib.URIRef))


_PROPERTY_TYPES = {OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty, RDF.Property}
_CLASS_TYPES = {OWL.Class, RDFS.Class}


@lru_cache(maxsize=1)
def _kinds() -> dict[str, str]:
    from changeprov.ontology.tbox import prov_o_graph

    out: dict[str, str] = {}
    for graph in (prov_o_graph(), ontology_graph()):
        for s, t in graph.subject_objects(RDF.type):
            if isinstance(s, rdflib.URIRef) and str(s).startswith((OM_EVENT, PROV)):
                kind = "property" if t in _PROPERTY_TYPES else "class" if t in _CLASS_TYPES else None
                if kind is not None:
                    out[str(s)] = kind
                elif t not in (OWL.NamedIndividual,) and str(s) not in out:
                    out[str(s)] = "individual"  # an event type, operation, lifecycle concept
    return out


def declared_kind(iri: str) -> str | None:
    """``property``, ``class`` or ``individual`` for a term of om-event or PROV-O the ontologies
    declare; None for other terms (the standard vocabularies are not sorted here).

    >>> declared_kind(OM_EVENT + "timestamp"), declared_kind(PROV + "Activity"), declared_kind(OM_EVENT + "EntityCreated")
    ('property', 'class', 'individual')
    """
    return _kinds().get(iri)


def declared(iri: str) -> bool:
    return is_declared(iri) or iri in _prov_o_declared()


def _context_terms(ctx: dict) -> set[str]:
    prefixes = {k: v for k, v in ctx.items() if isinstance(v, str) and v.endswith(("/", "#"))}

    def expand(value: str) -> str:
        prefix, sep, local = value.partition(":")
        return prefixes[prefix] + local if sep and prefix in prefixes else value

    out = set()
    for key, value in ctx.items():
        if key.startswith("@") or key in prefixes:
            continue
        for v in ([value] if isinstance(value, str) else
                  [value.get("@id"), value.get("@type")] if isinstance(value, dict) else []):
            if isinstance(v, str) and not v.startswith("@"):
                out.add(expand(v))
    return out


def _bundled_queries() -> dict[str, str]:
    folder = resources.files("changeprov.sparql").joinpath("queries")
    return {e.name: e.read_text("utf-8") for e in sorted(folder.iterdir(), key=lambda e: e.name)
            if e.name.endswith(".rq")}


def term_uses(extra_queries: Mapping[str, str] | None = None) -> dict[str, set[str]]:
    """Vetted IRIs used per source file."""
    from changeprov.mapping.vocab import expand, rule_curies

    uses: dict[str, set[str]] = {"rules.json": _vetted(expand(c) for c in rule_curies())}
    shapes = rdflib.Graph().parse(data=read_text("shapes.ttl"), format="turtle")
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    shape_terms = {str(n) for t in shapes for n in t if isinstance(n, rdflib.URIRef)}
    ns = {str(p): str(n) for p, n in shapes.namespaces()}
    for select in shapes.objects(None, sh.select):
        shape_terms |= query_terms(str(select), ns)
    uses["shapes.ttl"] = _vetted(shape_terms)
    uses["context.jsonld"] = _vetted(_context_terms(json.loads(read_text("context.jsonld"))["@context"]))
    om = ontology_graph(with_prov=False)
    uses["om-event.ttl"] = {str(n) for t in om for n in t if isinstance(n, rdflib.URIRef) and str(n).startswith(OM_EVENT)}
    for name, text in {**_bundled_queries(), **(extra_queries or {})}.items():
        uses[name] = _vetted(query_terms(text))
    return uses


def check_consistency() -> OntologyCheck:
    from changeprov.ontology.tbox import tbox

    try:
        problems = tuple(f"OWL 2 RL inconsistency: {m}" for m in tbox().errors)
    except Exception as exc:  # noqa: BLE001 - a broken file is a finding, not a crash
        problems = (f"the ontology cannot be closed: {type(exc).__name__}: {exc}",)
    return OntologyCheck("owl-rl-consistency", "om-event.ttl + PROV-O are consistent under OWL 2 RL (owlrl)", problems)


def check_declared(extra_queries: Mapping[str, str] | None = None) -> OntologyCheck:
    problems = []
    try:
        for source, iris in sorted(term_uses(extra_queries).items()):
            problems += [f"{source}: {iri}" for iri in sorted(iris) if not declared(iri)]
    except Exception as exc:  # noqa: BLE001
        problems.append(f"cannot read the vocabulary files: {type(exc).__name__}: {exc}")
    return OntologyCheck("declared-terms", "every om-event / PROV / standard term used by the rules, shapes, "
                         "context and queries is declared", tuple(problems))


def check_labels() -> OntologyCheck:
    from changeprov.ontology.summary import _om_terms

    graph = ontology_graph(with_prov=False)
    unlabelled = sorted(str(t) for found in _om_terms(graph).values() for t in found
                        if (t, RDFS.label, None) not in graph)
    return OntologyCheck("labels", "every om-event class, property and individual has an rdfs:label",
                         tuple(f"no rdfs:label: {iri}" for iri in unlabelled))


def ontology_checks(*, extra_queries: Mapping[str, str] | None = None) -> list[OntologyCheck]:
    """All ontology checks; ``extra_queries`` (name → SPARQL text) are vetted like the bundled queries."""
    return [check_consistency(), check_declared(extra_queries), check_labels()]
