"""ontology/context.jsonld: every term expands (by pyld itself) to a declared IRI, with the right coercion.

The check expands one document that uses every term, so what is tested is pyld's own reading of the
context (CURIEs, ``@version`` 1.1, term-shaped keys such as ``prov:entity``), not a hand resolver.
Expected coercion, from the bundled ontology (om-event.ttl + prov-axioms.ttl):
owl:ObjectProperty → ``"@id"``; owl:DatatypeProperty with an rdfs:range → that datatype, except
xsd:string; anything else (classes, properties without range such as oldValue/newValue, rdfs:label,
skos annotation properties) → no ``@type`` coercion.

No term is coerced to xsd:string: in RDF 1.1 a plain literal is an xsd:string, and the mapper writes
plain literals. A coercion makes a JSON-LD reader turn ``"userName": "alice"`` into
``"alice"^^xsd:string`` (rdflib then holds a literal unequal to the mapper's ``"alice"``), and a
standard compaction of the mapper's plain strings skip the term (``"om-event:userName": "alice"``).
The round-trip tests below read ``describe --format jsonld`` output the way other tools do.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pyld import jsonld
from rdflib import Graph, URIRef
from rdflib.compare import to_isomorphic
from rdflib.namespace import OWL, RDF, RDFS, XSD

from changeprov.mapping.mapper import map_line
from changeprov.ontology import OM_EVENT, PROV, is_declared, ontology_graph, read_text
from changeprov.sparql.describe import render_graph

PROBE = "http://example.org/probe/"
GOLDEN = Path(__file__).parent / "golden"

#: Prefix terms the context may define, and the only namespaces they may map to.
ALLOWED_PREFIXES = {
    "om-event": OM_EVENT,
    "prov": PROV,
    "rdf": str(RDF),
    "rdfs": str(RDFS),
    "owl": str(OWL),
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dcterms": "http://purl.org/dc/terms/",
    "id": "https://w3id.org/changeprov/id/",
    "omx": "https://open-metadata.org/entity/",
}

#: Term names of the seed context (seeds/000_…txt) that must keep working.
SEED_TERMS = {
    "ChangeEvent": OM_EVENT + "ChangeEvent",
    "eventType": OM_EVENT + "eventType",
    "entityType": OM_EVENT + "entityType",
    "entityId": OM_EVENT + "entityId",
    "entityFullyQualifiedName": OM_EVENT + "entityFullyQualifiedName",
    "previousVersion": OM_EVENT + "previousVersion",
    "currentVersion": OM_EVENT + "currentVersion",
    "timestamp": OM_EVENT + "timestamp",
    "userName": OM_EVENT + "userName",
    "userId": OM_EVENT + "userId",
    "changeDescription": OM_EVENT + "hasChangeDescription",
    "affectsEntity": OM_EVENT + "affectsEntity",
    "performedBy": OM_EVENT + "performedBy",
    "entity": OM_EVENT + "entityState",
}

#: Non-om-event terms the data uses (docs/model.md) and that need a term.
EXTERNAL_TERMS = [PROV + t for t in (
    "Entity Activity Agent Organization Derivation used wasGeneratedBy wasAssociatedWith "
    "wasDerivedFrom wasRevisionOf specializationOf qualifiedDerivation entity startedAtTime "
    "endedAtTime wasInvalidatedBy").split()] + [str(RDFS.label), "http://www.w3.org/2004/02/skos/core#inScheme"]


def _refuse(url, options=None):
    raise AssertionError(f"the context check must not load {url}")


def _expected_type(iri: str, graph) -> str | None:
    node = URIRef(iri)
    if (node, RDF.type, OWL.ObjectProperty) in graph:
        return "@id"
    if (node, RDF.type, OWL.DatatypeProperty) in graph:
        rng = graph.value(node, RDFS.range)
        # a plain JSON string already is an xsd:string literal; coercing it would type it explicitly
        return str(rng) if rng is not None and rng != XSD.string else None
    return None


def _expand_terms(ctx: dict, terms: list[str]) -> dict[str, tuple[str | None, str | None]]:
    doc = {"@context": ctx, "@id": PROBE + "subject", **{t: PROBE + "v/" + t for t in terms}}
    [node] = jsonld.expand(doc, {"documentLoader": _refuse})
    found: dict[str, tuple[str | None, str | None]] = {t: (None, None) for t in terms}
    for iri, values in node.items():
        if iri.startswith("@"):
            continue
        for v in values:
            raw = v.get("@id", v.get("@value"))
            found[raw[len(PROBE + "v/"):]] = (iri, "@id" if "@id" in v else v.get("@type"))
    return found


def resolve_terms(ctx: dict) -> dict[str, tuple[str | None, str | None]]:
    """term → (IRI it expands to or None, "@id" / datatype IRI / None), as pyld reads the context.

    If pyld rejects the whole context, each term is read alone (with the prefixes and keywords) so
    the offending terms come back as (None, None)."""
    terms = [k for k, v in ctx.items() if not k.startswith("@") and k not in _prefixes(ctx)]
    try:
        return _expand_terms(ctx, terms)
    except jsonld.JsonLdError:
        base = {k: v for k, v in ctx.items() if k.startswith("@") or k in _prefixes(ctx)}
        found = {}
        for t in terms:
            try:
                found.update(_expand_terms({**base, t: ctx[t]}, [t]))
            except jsonld.JsonLdError:
                found[t] = (None, None)
        return found


def _prefixes(ctx: dict) -> dict[str, str]:
    return {k: v for k, v in ctx.items()
            if not k.startswith("@") and isinstance(v, str) and v.endswith(("/", "#"))}


def check_context(ctx: dict, graph) -> list[str]:
    """Problems with a context: empty list when every term is sound."""
    problems = []
    if "@vocab" in ctx:
        problems.append("@vocab is set: unknown keys would silently become om-event: IRIs")
    for name, ns in _prefixes(ctx).items():
        if ALLOWED_PREFIXES.get(name) != ns:
            problems.append(f"prefix {name!r} → {ns!r} is not one of the allowed namespaces")
    for term, (iri, coercion) in sorted(resolve_terms(ctx).items()):
        if iri is None:
            problems.append(f"term {term!r} does not expand to an absolute IRI")
            continue
        if not is_declared(iri):
            problems.append(f"term {term!r} → {iri} is not declared by the ontology or a standard vocabulary")
        expected = _expected_type(iri, graph)
        if coercion != expected:
            problems.append(f"term {term!r} → {iri}: @type {coercion!r}, expected {expected!r}")
    return problems


@pytest.fixture(scope="module")
def graph():
    return ontology_graph()


@pytest.fixture(scope="module")
def context() -> dict:
    return json.loads(read_text("context.jsonld"))["@context"]


def test_context_is_sound(context, graph):
    assert check_context(context, graph) == []


def test_context_settings(context):
    assert context.get("@version") == 1.1
    assert "@vocab" not in context
    assert _prefixes(context) == ALLOWED_PREFIXES


def test_seed_term_names_kept(context):
    resolved = resolve_terms(context)
    for term, iri in SEED_TERMS.items():
        assert resolved[term][0] == iri, term


def test_every_ontology_term_and_used_external_term_has_a_term(context, graph):
    covered = {iri for iri, _ in resolve_terms(context).values()}
    wanted = {str(s) for t in (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)
              for s in graph.subjects(RDF.type, t) if str(s).startswith(OM_EVENT)}
    wanted |= set(EXTERNAL_TERMS)
    assert sorted(wanted - covered) == []


def test_rdf_json_terms_are_not_json_keyword(context):
    """rdf:JSON-ranged properties keep exact strings: coerced to the rdf:JSON IRI, never "@json"."""
    for term in ("entity", "changeSummary", "columnLineage"):
        assert context[term]["@type"] == "rdf:JSON"
    assert "@json" not in json.dumps(context)
    [node] = jsonld.expand({"@context": context, "@id": PROBE + "s", "entity": '{"b": 1, "a": 1.0}'},
                           {"documentLoader": _refuse})
    assert node[OM_EVENT + "entityState"] == [{"@value": '{"b": 1, "a": 1.0}', "@type": str(RDF) + "JSON"}]


def test_negative_control(context, graph):
    bad = copy.deepcopy(context)
    bad["om"] = "https://open-metadata.org/schema/"                       # seed prefix, not allowed
    bad["currentState"] = {"@id": "om:currentState", "@type": "@id"}      # seed IRI, undeclared
    bad["nonsense"] = "om-event:noSuchProperty"                           # undeclared om-event term
    bad["timestamp"] = {"@id": "om-event:timestamp", "@type": "xsd:string"}  # wrong datatype
    bad["userName"] = {"@id": "om-event:userName", "@type": "xsd:string"}    # types plain strings
    bad["performedBy"] = {"@id": "om-event:performedBy"}                  # object property, no @id
    bad["notAnIri"] = {"@id": "nowhere"}                                  # relative, not an IRI
    problems = check_context(bad, graph)
    text = "\n".join(problems)
    for fragment in ("prefix 'om'", "term 'currentState' → https://open-metadata.org/schema/currentState is not declared",
                     "'nonsense' → https://open-metadata.org/schema/type/changeEvent/noSuchProperty is not declared",
                     "'timestamp' → https://open-metadata.org/schema/type/changeEvent/timestamp: @type",
                     "'performedBy' → https://open-metadata.org/schema/type/changeEvent/performedBy: @type None",
                     "'userName' → https://open-metadata.org/schema/type/changeEvent/userName: "
                     "@type 'http://www.w3.org/2001/XMLSchema#string', expected None",
                     "'notAnIri' does not expand"):
        assert fragment in text, f"{fragment} not reported:\n{text}"


def test_vocab_would_invent_terms(context, graph):
    """Why the context has no @vocab: with it, a misspelt key silently becomes an om-event: IRI."""
    doc = {"@id": PROBE + "s", "userNmae": "alice"}
    with_vocab = dict(context, **{"@vocab": OM_EVENT})
    [node] = jsonld.expand({"@context": with_vocab, **doc}, {"documentLoader": _refuse})
    assert OM_EVENT + "userNmae" in node                   # invented, undeclared
    assert "@vocab is set" in "\n".join(check_context(with_vocab, graph))
    assert jsonld.expand({"@context": context, **doc}, {"documentLoader": _refuse}) == []  # dropped instead


# ----------------------------------------------------------------------------- round trips


def _string_terms(graph) -> list[str]:
    """Terms of the properties whose values are xsd:string (rdfs:range in the ontology)."""
    ctx = json.loads(read_text("context.jsonld"))["@context"]
    return sorted(t for t, (iri, _) in resolve_terms(ctx).items()
                  if iri and (URIRef(iri), RDFS.range, XSD.string) in graph)


@pytest.fixture(scope="module")
def golden_triples():
    """Every golden event mapped by the reference mapper: the graph `describe` renders from."""
    out = set()
    for path in sorted(GOLDEN.glob("*.jsonl")):
        out.update(map_line(path.read_bytes().strip(b"\n")).triples)
    return sorted(out, key=str)


def _rdflib(text: str, fmt: str) -> Graph:
    return to_isomorphic(Graph().parse(data=text, format=fmt))


def test_there_are_string_terms(graph):
    assert {"userName", "fieldName", "urn", "fullyQualifiedName"} <= set(_string_terms(graph))


@pytest.mark.parametrize("term", _string_terms(ontology_graph()))
def test_plain_string_round_trips_through_each_string_term(term, context):
    """A plain N-Triples string compacts (standard from_rdf + compact) to a plain JSON string under
    its term, and that document reads back (rdflib) as the same plain literal."""
    iri = resolve_terms(context)[term][0]
    nquads = f'<{PROBE}s> <{iri}> "v" .\n'
    compacted = jsonld.compact(jsonld.from_rdf(nquads, {"format": "application/n-quads"}),
                               {"@context": context}, {"documentLoader": _refuse})
    assert compacted[term] == "v"
    assert _rdflib(json.dumps(compacted), "json-ld") == _rdflib(nquads, "nt")


def test_describe_jsonld_compacts_strings_to_plain_json(golden_triples, graph):
    """Each string property's values are plain JSON strings in `describe --format jsonld`."""
    doc = json.loads(render_graph(golden_triples, "jsonld"))
    terms = set(_string_terms(graph))
    values = [v for node in doc["@graph"] for k, vs in node.items() if k in terms
              for v in (vs if isinstance(vs, list) else [vs])]
    assert values and all(isinstance(v, str) for v in values)


@pytest.mark.parametrize("reader", ["pyld", "rdflib"])
def test_describe_jsonld_round_trips_to_the_same_triples(golden_triples, reader):
    """`describe --format jsonld` read back gives exactly the triples of `describe --format nt`:
    through changeprov's own reader (pyld) and through rdflib, which tells "x" from "x"^^xsd:string."""
    from changeprov.mapping.export import from_jsonld

    notes = []
    text = render_graph(golden_triples, "jsonld", notes=notes)
    assert notes == []  # compacted with our context
    if reader == "pyld":
        assert from_jsonld(json.loads(text)) == golden_triples
    else:
        assert _rdflib(text, "json-ld") == _rdflib(render_graph(golden_triples, "nt"), "nt")


@pytest.mark.parametrize("iri", ["prov:x", "id:x", "om-event:y", "xsd:z"])
def test_jsonld_of_an_iri_named_like_a_prefix_is_the_expanded_document(iri):
    """ut42c #2: an IRI whose scheme is one of the context's prefixes (valid RDF loaded beside an export)
    made describe --format jsonld an internal error: JSON-LD 1.1 cannot compact it with the context."""
    import pyoxigraph as ox

    triples = [ox.Triple(ox.NamedNode("urn:li:dataset:x"), ox.NamedNode(str(RDFS.seeAlso)), ox.NamedNode(iri)),
               ox.Triple(ox.NamedNode("urn:li:dataset:x"), ox.NamedNode(str(RDFS.label)), ox.Literal("x"))]
    notes = []
    doc = json.loads(render_graph(triples, "jsonld", notes=notes))
    back = jsonld.to_rdf(doc, {"format": "application/n-quads"})
    assert sorted(back.splitlines()) == sorted(str(t) + " ." for t in triples)
    # ut45c #8: said, not left to the reader to notice the full IRIs
    assert notes == [f"JSON-LD written expanded (full IRIs, no @context): <{iri}>'s scheme is named like a prefix "
                     "of the context, which JSON-LD 1.1 cannot compact"]


@pytest.mark.parametrize("where", ["subject", "object", "datatype"])
def test_jsonld_of_an_iri_whose_suffix_starts_with_two_slashes_is_the_same_graph(where):
    """ut44c #4: an entity type "//weird" made <https://open-metadata.org/entity///weird/abc>, which pyld
    compacted to "omx://weird/abc": JSON-LD reads that back as an IRI of the scheme omx, another graph."""
    import pyoxigraph as ox

    odd = "https://open-metadata.org/entity///weird/abc"
    subject = ox.NamedNode(odd if where == "subject" else "urn:li:dataset:x")
    obj = (ox.NamedNode(odd) if where == "object" else ox.Literal("1", datatype=ox.NamedNode(odd)) if where == "datatype"
           else ox.Literal("x"))
    triples = [ox.Triple(subject, ox.NamedNode(str(RDFS.seeAlso)), obj)]
    notes = []
    text = render_graph(triples, "jsonld", notes=notes)
    back = jsonld.to_rdf(json.loads(text), {"format": "application/n-quads"})
    assert sorted(back.splitlines()) == sorted(str(t) + " ." for t in triples)
    assert _rdflib(text, "json-ld") == _rdflib(render_graph(triples, "nt"), "nt")
    assert notes == [f"JSON-LD written expanded (full IRIs, no @context): <{odd}> would compact to a string "
                     "JSON-LD reads back as another IRI"]
