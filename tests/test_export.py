"""mapping/export.py: JSON-LD / Turtle rendering round-trips exactly and never touches the network."""

from __future__ import annotations

import json
import socket

import pyoxigraph as ox
import pytest
from pyld import jsonld

from changeprov.mapping import export
from changeprov.mapping.export import (
    CONTEXT_IRI,
    JsonLdInputError,
    RemoteContextRefused,
    from_jsonld,
    to_jsonld,
    to_turtle,
)

OM = "https://open-metadata.org/schema/type/changeEvent/"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
ID = "https://w3id.org/changeprov/id/"


def n(iri: str) -> ox.NamedNode:
    return ox.NamedNode(iri)


def lit(value: str, dt: str | None = None, lang: str | None = None) -> ox.Literal:
    if lang:
        return ox.Literal(value, language=lang)
    return ox.Literal(value, datatype=n(dt) if dt else None)


E1 = n(ID + "event/0a1b2c3d4e5f60718293a4b5c6d7e8f9")
E2 = n(ID + "event/ffffffffffffffffffffffffffffffff")
X = n("https://open-metadata.org/entity/table/123e4567-e89b-12d3-a456-426614174000")
X2 = n("https://open-metadata.org/entity/table/sales%20db.ünïcødé%25tbl")
DH = n("urn:li:dataset:(urn:li:dataPlatform:hive,db.t%20x,PROD)")
FC = n(E1.value + "/change/updated/0")
CD = n(E1.value + "/changes")
V = n(ID + "version/00000000000000000000000000000003")
L = n(ID + "lineage/fedcba98765432100123456789abcdef")
RUN = n(ID + "run/44444444444444444444444444444444")

NASTY = 'quote " backslash \\ newline \n cr \r tab \t bell \x07 nul-free \x1f del \x7f — ünïcødé 😀 𝔘'
JSON_EXACT = '{"z":1,"a":[1.0E22,1.5,-0,true,null],"s":"line\\nbreak \\"q\\" \\u001F é"}'

TRIPLES = [
    ox.Triple(E1, n(RDF + "type"), n(OM + "ChangeEvent")),
    ox.Triple(E1, n(OM + "eventType"), n(OM + "EntityUpdated")),
    ox.Triple(E1, n(OM + "timestamp"), lit("2024-03-01T08:00:00.000Z", XSD + "dateTime")),
    ox.Triple(E1, n(OM + "affectsEntity"), X),
    ox.Triple(E1, n(OM + "performedBy"), n(ID + "om/user/jöhn%20doe")),
    ox.Triple(E1, n(OM + "userName"), lit(NASTY)),
    ox.Triple(E1, n(OM + "entityId"), lit("123e4567-e89b-12d3-a456-426614174000")),
    ox.Triple(E1, n(OM + "previousVersion"), lit("0.2", XSD + "decimal")),
    ox.Triple(E1, n(OM + "currentVersion"), lit("1.50", XSD + "decimal")),   # non-canonical stays as is
    ox.Triple(E1, n(OM + "entityState"), lit(JSON_EXACT, RDF + "JSON")),
    ox.Triple(E1, n(OM + "changeSummary"), lit("not even JSON {", RDF + "JSON")),  # kept verbatim too
    ox.Triple(E1, n(OM + "recursive"), lit("true", XSD + "boolean")),
    ox.Triple(E1, n(OM + "hasChangeDescription"), CD),
    ox.Triple(E1, n(PROV + "used"), n(ID + "version/00000000000000000000000000000002")),
    ox.Triple(CD, n(RDF + "type"), n(OM + "ChangeDescription")),
    ox.Triple(CD, n(OM + "fieldsUpdated"), FC),
    ox.Triple(FC, n(RDF + "type"), n(OM + "FieldChange")),
    ox.Triple(FC, n(OM + "fieldName"), lit("description")),
    ox.Triple(FC, n(OM + "oldValue"), lit("old \"text\"\nline 2")),
    ox.Triple(FC, n(OM + "newValue"), lit('[{"tagFQN":"PII.Sensitive"}]', RDF + "JSON")),
    ox.Triple(FC, n(OM + "addedTag"), n(ID + "om/tag/PII.Sensitive")),
    ox.Triple(X, n(RDF + "type"), n(OM + "MetadataEntity")),
    ox.Triple(X, n(RDF + "type"), n(PROV + "Entity")),
    ox.Triple(X, n(OM + "fullyQualifiedName"), lit("snowflake_prod.sales.public.customers")),
    ox.Triple(X, n(PROV + "wasDerivedFrom"), X2),
    ox.Triple(X, n(PROV + "qualifiedDerivation"), L),
    ox.Triple(X, n(RDFS + "label"), lit("Kunden", lang="de")),
    ox.Triple(X2, n(OM + "assetType"), lit("table")),
    ox.Triple(L, n(RDF + "type"), n(OM + "LineageEdge")),
    ox.Triple(L, n(PROV + "entity"), X2),
    ox.Triple(L, n(OM + "addedBy"), E1),
    ox.Triple(L, n(OM + "removedBy"), E2),
    ox.Triple(L, n(OM + "columnLineage"), lit('[{"fromColumns":["a"],"toColumn":"b"}]', RDF + "JSON")),
    ox.Triple(V, n(RDF + "type"), n(OM + "EntityVersion")),
    ox.Triple(V, n(OM + "versionNumber"), lit("0.3", XSD + "decimal")),
    ox.Triple(V, n(PROV + "wasGeneratedBy"), E1),
    ox.Triple(V, n(PROV + "specializationOf"), X),
    ox.Triple(E2, n(RDF + "type"), n(OM + "ChangeEvent")),
    ox.Triple(E2, n(OM + "affectsEntity"), DH),
    ox.Triple(E2, n(OM + "timestamp"), lit("1970-01-01T00:00:00.000Z", XSD + "dateTime")),
    ox.Triple(E2, n(OM + "newValue"), lit("42", XSD + "integer")),
    ox.Triple(E2, n(OM + "oldValue"), lit("0.5", XSD + "double")),          # pyld would write 5.0E-1
    ox.Triple(E2, n(PROV + "value"), lit("1e22", XSD + "double")),
    ox.Triple(E2, n(OM + "aspectName"), lit("")),                             # empty string
    ox.Triple(DH, n(OM + "urn"), lit("urn:li:dataset:(urn:li:dataPlatform:hive,db.t x,PROD)")),
    ox.Triple(RUN, n(RDF + "type"), n(OM + "Run")),
    ox.Triple(RUN, n(PROV + "startedAtTime"), lit("2024-03-01T08:00:00.000Z", XSD + "dateTime")),
    ox.Triple(RUN, n(PROV + "endedAtTime"), lit("2024-03-01T08:05:00.123Z", XSD + "dateTime")),
    ox.Triple(RUN, n(OM + "executionStatus"), lit("Successful")),
]


@pytest.fixture
def no_network(monkeypatch):
    """Any socket connection or use of pyld's default (networked) loader fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(jsonld, "_default_document_loader", refuse)


def test_jsonld_round_trip_is_exact(no_network):
    doc = to_jsonld(TRIPLES)
    text = json.dumps(doc, ensure_ascii=False)            # plain JSON, serialisable
    back = from_jsonld(json.loads(text))
    assert set(back) == set(TRIPLES)
    assert len(back) == len(TRIPLES)


def test_jsonld_uses_context_terms(no_network):
    doc = to_jsonld(TRIPLES)
    assert doc["@context"] == CONTEXT_IRI
    nodes = {node["@id"]: node for node in doc["@graph"]}
    ev = nodes["id:event/0a1b2c3d4e5f60718293a4b5c6d7e8f9"]
    assert ev["@type"] == "ChangeEvent"
    assert ev["eventType"] == "om-event:EntityUpdated"
    assert ev["timestamp"] == "2024-03-01T08:00:00.000Z"
    assert ev["userName"] == NASTY
    assert ev["entity"] == JSON_EXACT                     # rdf:JSON stays the exact string
    assert ev["currentVersion"] == "1.50"
    assert ev["recursive"] == "true"
    assert ev["changeDescription"] == E1.value.replace(ID, "id:") + "/changes"
    lineage = nodes["id:lineage/fedcba98765432100123456789abcdef"]
    assert lineage["prov:entity"] == "omx:table/sales%20db.ünïcødé%25tbl"
    fc = nodes["id:event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/change/updated/0"]
    assert fc["newValue"] == {"@type": "rdf:JSON", "@value": '[{"tagFQN":"PII.Sensitive"}]'}
    assert fc["oldValue"] == "old \"text\"\nline 2"


@pytest.mark.parametrize("kind", ["triples", "quads", "dataset", "rdflib"])
def test_accepted_inputs_render_the_same(kind, no_network, monkeypatch):
    if kind == "triples":
        data = iter(TRIPLES)
    elif kind == "quads":
        data = [ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph()) for t in TRIPLES]
    elif kind == "dataset":
        data = ox.Dataset(ox.Quad(t.subject, t.predicate, t.object) for t in TRIPLES)
    else:
        import rdflib

        # rdflib rewrites typed lexical forms on parse unless told not to
        # ("2024-03-01T08:00:00.000Z" -> "2024-03-01T08:00:00+00:00").
        monkeypatch.setattr(rdflib, "NORMALIZE_LITERALS", False)
        data = rdflib.Graph().parse(data=to_turtle(TRIPLES), format="turtle")
    assert to_jsonld(data) == to_jsonld(TRIPLES)


def test_store_input_is_canonicalised_by_oxigraph(no_network):
    """A pyoxigraph Store keeps typed literals by value: lexical forms come back canonical
    ("….000Z" loses its zero milliseconds, "1.50" becomes "1.5"). Export renders what the store
    holds, and that round-trips exactly."""
    store = ox.Store()
    store.extend(ox.Quad(t.subject, t.predicate, t.object) for t in TRIPLES)
    doc = to_jsonld(store)
    ev = next(x for x in doc["@graph"] if x["@id"] == "id:event/0a1b2c3d4e5f60718293a4b5c6d7e8f9")
    assert ev["timestamp"] == "2024-03-01T08:00:00Z"
    assert ev["currentVersion"] == "1.5"
    assert ev["entity"] == JSON_EXACT                     # rdf:JSON is not touched
    held = {q.triple for q in store}
    assert set(from_jsonld(doc)) == held


def test_frame(no_network):
    doc = to_jsonld(TRIPLES, frame={"@type": "EntityVersion"})
    assert doc["@context"] == CONTEXT_IRI
    version = doc["@graph"][0] if "@graph" in doc else doc
    assert version["versionNumber"] == "0.3"
    generator = version["wasGeneratedBy"]                 # embedded once, elsewhere a reference
    assert (generator["@id"] if isinstance(generator, dict) else generator) == \
        "id:event/0a1b2c3d4e5f60718293a4b5c6d7e8f9"


def test_remote_context_refused(no_network):
    doc = {"@context": "http://example.org/ctx", "@id": "http://example.org/s", "p": "v"}
    with pytest.raises(RemoteContextRefused, match="http://example.org/ctx"):
        from_jsonld(doc)


@pytest.mark.parametrize("context", [
    ["https://w3id.org/changeprov/context.jsonld", "https://evil.example/ctx.jsonld"],
    {"@version": 1.1, "@import": "https://evil.example/ctx.jsonld"},
    {"scoped": {"@id": "http://example.org/p", "@context": "https://evil.example/ctx.jsonld"}},
])
def test_nested_remote_contexts_refused(context, no_network):
    doc = {"@context": context, "@id": "http://example.org/s", "scoped": {"@id": "http://example.org/o"}}
    with pytest.raises(RemoteContextRefused, match="evil.example"):
        from_jsonld(doc)


@pytest.mark.parametrize("doc, said", [
    ({"@context": 5}, "not valid JSON-LD: Invalid JSON-LD syntax; @context must be an object. (invalid local context)"),
    ({"@id": "urn:x", "urn:p": {"@value": 1, "@type": 5}}, "not valid JSON-LD: Invalid JSON-LD syntax; \"@type\" value"),
])
def test_invalid_json_ld_is_an_input_error_of_one_line(doc, said, no_network):
    """rv45d #10: pyld's JsonLdError, outside the ChangeprovError hierarchy and with its multi-line
    message, reached the caller; the refusals were plain ValueErrors."""
    from changeprov.errors import InputError

    with pytest.raises(JsonLdInputError) as error:
        from_jsonld(doc)
    assert str(error.value).startswith(said) and "\n" not in str(error.value)
    assert issubclass(JsonLdInputError, InputError) and issubclass(RemoteContextRefused, InputError)


def test_loader_serves_only_the_bundled_context():
    assert export.document_loader(CONTEXT_IRI)["document"] == export.bundled_context()
    with pytest.raises(RemoteContextRefused):
        export.document_loader("https://w3id.org/changeprov/context.jsonld?x=1")


def test_unknown_key_is_an_error_not_dropped(no_network):
    doc = {"@context": CONTEXT_IRI, "@id": "id:event/x", "userNmae": "alice"}
    with pytest.raises(JsonLdInputError, match="dropped"):
        from_jsonld(doc)


@pytest.mark.parametrize("doc", [
    {"@context": CONTEXT_IRI, "@id": "event/x", "userName": "alice"},
    {"@context": CONTEXT_IRI, "@id": "id:event/x", "affectsEntity": "table/y"},
    {"@context": CONTEXT_IRI, "@id": "id:event/x", "@type": "NoSuchClass"},
])
def test_relative_iri_is_an_error(doc, no_network):
    """pyld would resolve these against http://example.org/base/ (its default base) or drop them."""
    with pytest.raises(JsonLdInputError, match="relative"):
        from_jsonld(doc)


def test_iris_under_pylds_default_base_round_trip(no_network):
    t = [ox.Triple(n("http://example.org/base/x"), n("http://example.org/base/p"), n("http://example.org/base/y"))]
    assert from_jsonld(to_jsonld(t)) == t


def test_native_float_under_decimal_is_an_error(no_network):
    doc = {"@context": CONTEXT_IRI, "@id": "id:event/x", "currentVersion": 0.1}
    with pytest.raises(JsonLdInputError, match="as a string"):
        from_jsonld(doc)


def test_seed_style_document_reads(no_network):
    doc = {"@context": CONTEXT_IRI, "@id": "id:event/x", "@type": "ChangeEvent",
           "eventType": "om-event:EntityCreated", "timestamp": "2024-01-15T12:00:00.000Z",
           "userName": "john.doe", "currentVersion": "0.1"}
    got = set(from_jsonld(doc))
    ev = n(ID + "event/x")
    assert ox.Triple(ev, n(OM + "userName"), lit("john.doe")) in got   # xsd:string == simple literal
    assert ox.Triple(ev, n(OM + "currentVersion"), lit("0.1", XSD + "decimal")) in got
    assert ox.Triple(ev, n(OM + "eventType"), n(OM + "EntityCreated")) in got
    assert len(got) == 5


def test_turtle_round_trip():
    text = to_turtle(TRIPLES)
    for prefix in ("om-event", "prov", "rdf", "rdfs", "skos", "xsd"):
        assert f"@prefix {prefix}: " in text
    assert "\\/" not in text  # minted IRIs are written in full, never with escaped slashes
    back = {q.triple if isinstance(q, ox.Quad) else q for q in ox.parse(text, format=ox.RdfFormat.TURTLE)}
    assert back == set(TRIPLES)
    assert to_turtle(reversed(TRIPLES)) == text           # stable order
