"""The ontology half of `changeprov check` (no store needed).

* ``owl-rl-consistency``: om-event.ttl + the bundled W3C PROV-O, closed under OWL 2 RL by owlrl, yield
  no inconsistency (owlrl reports e.g. an individual in two disjoint classes).
* ``declared-terms``: every om-event / PROV / RDF / RDFS / OWL / XSD / SKOS IRI used by the mapping
  rules (rules.json), the shapes (incl. their SPARQL), the JSON-LD context, the named queries (and any
  extra query files given) and om-event.ttl itself is declared by the ontology, PROV-O or the standard
  vocabulary (:func:`changeprov.ontology.is_declared`).
* ``satisfiable``: no om-event class, and no subject or object of an om-event property, falls into two
  disjoint classes through its super-classes, or its property's (and super-properties') domains and
  ranges. owlrl finds inconsistencies only on individuals, and the TBox has none of these (rv45c #3:
  ChangeEvent made an Entity too, or affectsEntity given a range of prov:Activity, passed).
* ``context-terms``: every term of the JSON-LD context names a declared term, each IRI has one term,
  every om-event property has a term, and a property's term coerces to its range (a datatype, or
  ``@id`` for a class) (rv45c #1, #2: a changed prefix, a swapped IRI or a wrong datatype passed).
* ``shape-terms``: every class, property and datatype a SHACL shape targets or constrains is declared
  (rv45c #1: with a changed prefix the shapes targeted nothing, and every store passed them).

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


def _context_prefixes(ctx: Mapping) -> dict[str, str]:
    """A JSON-LD context's prefix definitions (a term whose IRI ends in / or #)."""
    return {k: v for k, v in ctx.items() if isinstance(v, str) and v.endswith(("/", "#"))}


def _expand(value: str, prefixes: Mapping[str, str]) -> str:
    """``value`` with its prefix expanded by ``prefixes`` (a compact IRI), else as it is."""
    prefix, sep, local = value.partition(":")
    return prefixes[prefix] + local if sep and prefix in prefixes else value


def _context_terms(ctx: dict) -> set[str]:
    prefixes = _context_prefixes(ctx)

    def expand(value: str) -> str:
        return _expand(value, prefixes)

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
    """The named queries and the lookups the library runs (``lookups/NAME.rq``, their parts included)."""
    from changeprov.sparql.query_files import lookup

    folder = resources.files("changeprov.sparql").joinpath("queries")
    named = {e.name: e.read_text("utf-8") for e in sorted(folder.iterdir(), key=lambda e: e.name)
             if e.name.endswith(".rq")}
    lookups = {f"lookups/{e.name}": lookup(e.name[:-3]) for e in sorted(folder.joinpath("lookups").iterdir(),
                                                                      key=lambda e: e.name) if e.name.endswith(".rq")}
    return {**named, **lookups}


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


def _short(iri: str) -> str:
    from changeprov.mapping.vocab import PREFIXES

    return next((f"{prefix}:{iri[len(ns):]}" for prefix, ns in PREFIXES.items() if iri.startswith(ns)), f"<{iri}>")


def check_satisfiable(t=None) -> OntologyCheck:
    """``t``: a TBox (:func:`changeprov.ontology.tbox.build_tbox`), the bundled one by default."""
    from changeprov.ontology.tbox import tbox

    problems = []
    try:
        t = t or tbox()
        disjoint = {(str(a), str(b)) for a, b in t.graph.subject_objects(OWL.disjointWith)
                    if isinstance(a, rdflib.URIRef) and isinstance(b, rdflib.URIRef)}

        def clashes(types) -> list[str]:
            return [f"{_short(a)} and {_short(b)}" for a, b in sorted(disjoint) if a in types and b in types]

        for c in sorted(c for c in t.classes if c.startswith(OM_EVENT)):
            problems += [f"class {_short(c)}: its instances would be {x}, which are disjoint"
                         for x in clashes({c} | t.superclasses[c])]
        for p in sorted(p for p in t.properties if p.startswith(OM_EVENT)):
            for side, table in (("subject", t.domains), ("object", t.ranges)):
                problems += [f"property {_short(p)}: its {side} would be {x}, which are disjoint (the "
                             f"{'domains' if side == 'subject' else 'ranges'} of it and its super-properties)"
                             for x in clashes(table[p])]
    except Exception as exc:  # noqa: BLE001 - a broken file is a finding, not a crash
        problems = [f"the ontology cannot be closed: {type(exc).__name__}: {exc}"]
    return OntologyCheck("satisfiable", "no om-event class, and no subject or object of an om-event property, is "
                         "in two disjoint classes", tuple(problems))


def check_context(context: Mapping | None = None, t=None) -> OntologyCheck:
    """``context``: a JSON-LD ``@context`` object, the bundled one by default."""
    from changeprov.ontology.tbox import tbox

    problems: list[str] = []
    try:
        ctx = context if context is not None else json.loads(read_text("context.jsonld"))["@context"]
        t = t or tbox()
        prefixes = _context_prefixes(ctx)

        def expand(value: str) -> str:
            return _expand(value, prefixes)

        terms: dict[tuple, list[str]] = {}
        for key, value in ctx.items():
            if key.startswith("@") or key in prefixes or value is None:  # null: a term undefined on purpose
                continue
            if isinstance(value, str) and value.startswith("@") or isinstance(value, dict) and (
                    "@reverse" in value or str(value.get("@id", "")).startswith("@")):
                continue  # a keyword alias ("type": "@type"), a reverse property: no IRI of their own to check
            named = value if isinstance(value, str) else value.get("@id") if isinstance(value, dict) else None
            if named is None and isinstance(value, dict) and ":" in key:
                named = key  # a compact IRI as the term, with only its coercion given
            if not isinstance(named, str):
                problems.append(f"term {key}: no IRI (@id) given")
                continue
            iri = expand(named)
            coerce = value.get("@type") if isinstance(value, dict) else None
            shape = (iri, coerce, value.get("@container") if isinstance(value, dict) else None)
            terms.setdefault(shape, []).append(key)
            if not declared(iri):
                problems.append(f"term {key}: {iri} is no declared class, property or individual")
                continue
            ranges = {str(o) for o in t.graph.objects(rdflib.URIRef(iri), RDFS.range) if isinstance(o, rdflib.URIRef)}
            if not iri.startswith(OM_EVENT) or declared_kind(iri) != "property" or len(ranges) != 1:
                continue
            (rng,) = ranges
            got = coerce if coerce in (None, "@id", "@vocab", "@json") else expand(coerce)
            if rng in t.classes:  # an object property: its values are nodes
                want: tuple = ("@id", "@vocab")
            elif rng == str(RDF.JSON):
                want = (rng, "@json")
            elif rng.startswith(str(XSD)):
                want = (None, rng) if rng == str(XSD.string) else (rng,)
            else:  # rdfs:Literal, rdf:langString, …: any literal, no coercion to check
                continue
            if got not in want:
                problems.append(f"term {key}: coerced to {got or 'no type'}, but {_short(iri)} has the range "
                                f"{_short(rng)}" + (" (give \"@type\": \"@id\")" if "@id" in want else ""))
        problems += [f"terms {', '.join(keys)}: one IRI, {_short(shape[0])}" for shape, keys in sorted(terms.items(), key=str)
                     if len(keys) > 1]
        covered = {shape[0] for shape in terms}
        problems += [f"no term for the property {_short(p)}" for p in sorted(t.properties)
                     if p.startswith(OM_EVENT) and p not in covered]
    except Exception as exc:  # noqa: BLE001 - a broken file is a finding, not a crash
        problems = [f"cannot read the JSON-LD context: {type(exc).__name__}: {exc}"]
    return OntologyCheck("context-terms", "every JSON-LD context term names a declared term, with its range's "
                         "type; one term per IRI, one for every om-event property", tuple(problems))


_SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")
#: what a shape targets or constrains by name (a path may be a structure of these: sh:inversePath, lists)
_SHAPE_TERMS = (_SH.targetClass, _SH["class"], _SH.targetSubjectsOf, _SH.targetObjectsOf, _SH.datatype)
#: the kind of term a target or constraint names (rv45 #7: a class as a path passed)
_SHAPE_KIND = {_SH.targetClass: "class", _SH["class"]: "class", _SH.targetSubjectsOf: "property",
               _SH.targetObjectsOf: "property"}
_PATH_PARTS = (_SH.inversePath, _SH.alternativePath, _SH.zeroOrMorePath, _SH.oneOrMorePath, _SH.zeroOrOnePath,
               RDF.first, RDF.rest)


def check_shapes(shapes_text: str | None = None) -> OntologyCheck:
    """``shapes_text``: SHACL shapes in Turtle, the bundled shapes.ttl by default."""
    problems: set[str] = set()
    try:
        shapes = rdflib.Graph().parse(data=shapes_text if shapes_text is not None else read_text("shapes.ttl"),
                                      format="turtle")

        def path_terms(node, seen=()) -> set[str]:
            if isinstance(node, rdflib.URIRef):
                return set() if node == RDF.nil else {str(node)}
            if node in seen:
                return set()
            return {i for p in _PATH_PARTS for o in shapes.objects(node, p) for i in path_terms(o, (*seen, node))}

        for predicate in _SHAPE_TERMS:
            want = _SHAPE_KIND.get(predicate)
            for o in shapes.objects(None, predicate):
                if isinstance(o, rdflib.URIRef) and not declared(str(o)):
                    problems.add(f"sh:{predicate[len(str(_SH)):]} {o}: no declared term")
                elif isinstance(o, rdflib.URIRef) and want and declared_kind(str(o)) not in (None, want):
                    problems.add(f"sh:{predicate[len(str(_SH)):]} {o}: a {declared_kind(str(o))}, not a {want}")
        for o in shapes.objects(None, _SH.path):
            problems |= {f"sh:path {iri}: no declared property" if not declared(iri) else
                         f"sh:path {iri}: a {declared_kind(iri)}, not a property"
                         for iri in path_terms(o) if not declared(iri) or declared_kind(iri) not in (None, "property")}
        if not any(True for _ in shapes.objects(None, _SH.targetClass)):
            problems.add("no shape targets a class")
    except Exception as exc:  # noqa: BLE001 - a broken file is a finding, not a crash
        problems = {f"cannot read the shapes: {type(exc).__name__}: {exc}"}
    return OntologyCheck("shape-terms", "every class, property and datatype the SHACL shapes name is declared",
                         tuple(sorted(problems)))


def ontology_checks(*, extra_queries: Mapping[str, str] | None = None) -> list[OntologyCheck]:
    """All ontology checks; ``extra_queries`` (name → SPARQL text) are vetted like the bundled queries."""
    return [check_consistency(), check_satisfiable(), check_declared(extra_queries), check_context(), check_shapes(),
            check_labels()]
