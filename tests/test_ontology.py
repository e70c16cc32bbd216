"""The bundled ontology: it parses everywhere, declares what docs/model.md uses, stays consistent
with W3C PROV-O under OWL 2 RL, and prov-axioms.ttl states nothing PROV-O does not."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import owlrl
import pyoxigraph
import pytest
import rdflib
from rdflib import URIRef
from rdflib.namespace import OWL, RDF, RDFS, SKOS

from changeprov.cli import main
from changeprov.ontology import (
    OM_EVENT, ONTOLOGY_IRI, PROV, declared_terms, is_declared, ontology_graph, read_text, resource_path,
    standard_vocabularies,
)
from changeprov.ontology import summary

OM = rdflib.Namespace(OM_EVENT)
P = rdflib.Namespace(PROV)
XSD = rdflib.Namespace(str(rdflib.namespace.XSD))  # a plain Namespace: pytest probes module attributes
AGENT_ONT = "http://www.daml.org/2002/03/agents/agent-ont#"  # where owlrl reports clashes

# The 26 values of OpenMetadata 2.x type/changeEventType.json (accepted by openmetadata-ingestion 2.0.7).
OPENMETADATA_EVENT_TYPES = """
entityCreated entityUpdated entityFieldsChanged entityNoChange entitySoftDeleted entityDeleted entityRestored
entityLineageAdded entityLineageUpdated entityLineageDeleted threadCreated threadUpdated postCreated postUpdated
taskCreated taskUpdated taskResolved taskClosed logicalTestCaseAdded suggestionCreated suggestionUpdated
suggestionAccepted suggestionRejected suggestionDeleted userLogin userLogout""".split()

# scheme -> {notation: local name}
SCHEMES = {
    "OpenMetadataEventTypes": {v: v[0].upper() + v[1:] for v in OPENMETADATA_EVENT_TYPES},
    "DataHubChangeTypes": {
        "UPSERT": "MclUpsert", "CREATE": "MclCreate", "UPDATE": "MclUpdate", "DELETE": "MclDelete",
        "PATCH": "MclPatch", "RESTATE": "MclRestate", "CREATE_ENTITY": "MclCreateEntity"},
    "DataHubChangeCategories": {
        "TAG": "EceTag", "GLOSSARY_TERM": "EceGlossaryTerm", "DOMAIN": "EceDomain", "OWNER": "EceOwner",
        "OWNERSHIP": "EceOwnership", "STRUCTURED_PROPERTY": "EceStructuredProperty",
        "DEPRECATION": "EceDeprecation", "DOCUMENTATION": "EceDocumentation",
        "TECHNICAL_SCHEMA": "EceTechnicalSchema", "LIFECYCLE": "EceLifecycle", "RUN": "EceRun",
        "INCIDENT": "EceIncident", "APPLICATION": "EceApplication"},
    "DataHubRelationshipChanges": {"relationshipChangeEvent": "RelationshipChange"},
    "DataHubOperations": {
        "ADD": "OpAdd", "REMOVE": "OpRemove", "MODIFY": "OpModify", "CREATE": "OpCreate",
        "HARD_DELETE": "OpHardDelete", "SOFT_DELETE": "OpSoftDelete", "REINSTATE": "OpReinstate",
        "STARTED": "OpStarted", "COMPLETED": "OpCompleted", "ACTIVE": "OpActive", "RESOLVED": "OpResolved",
        "PENDING": "OpPending"},
    "LifecycleChanges": {
        "CREATED": "Created", "SOFT_DELETED": "SoftDeleted", "HARD_DELETED": "HardDeleted", "RESTORED": "Restored"},
}
SCHEME_CLASS = {"DataHubOperations": "Operation", "LifecycleChanges": "LifecycleChange"}  # others: EventType

# Every term of the seed ontology (seeds/000_b077d04f16898d43.txt); checked against the seed itself below.
SEED_TERMS = """ChangeEvent EventType FieldChange ChangeDescription eventType entityType entityId
entityFullyQualifiedName previousVersion currentVersion timestamp userName userId hasChangeDescription
affectsEntity performedBy fieldName oldValue newValue fieldsAdded fieldsUpdated fieldsDeleted
EntityCreated EntityUpdated EntitySoftDeleted EntityDeleted""".split()

# subject, predicate, object as CURIEs: the axioms docs/model.md relies on.
AXIOMS = """
ChangeEvent subClassOf prov:Activity | EventType subClassOf skos:Concept | MetadataEntity subClassOf prov:Entity
EntityVersion subClassOf prov:Entity | AspectVersion subClassOf EntityVersion | LineageEdge subClassOf prov:Derivation
Run subClassOf prov:Activity | Operation subClassOf skos:Concept | LifecycleChange subClassOf skos:Concept
Tag subClassOf MetadataEntity | GlossaryTerm subClassOf MetadataEntity | Column subClassOf MetadataEntity
timestamp subPropertyOf prov:startedAtTime | timestamp subPropertyOf prov:endedAtTime
affectsEntity subPropertyOf prov:used | performedBy subPropertyOf prov:wasAssociatedWith
impersonatedBy subPropertyOf prov:wasAssociatedWith
"""

# property: domain -> range (object properties) -- from the design brief.
OBJECT_PROPERTIES = """
eventType ChangeEvent EventType | hasChangeDescription ChangeEvent ChangeDescription
affectsEntity ChangeEvent MetadataEntity | performedBy ChangeEvent prov:Agent
fieldsAdded ChangeDescription FieldChange | fieldsUpdated ChangeDescription FieldChange
fieldsDeleted ChangeDescription FieldChange
impersonatedBy ChangeEvent prov:Agent | operation ChangeEvent Operation | lifecycleChange ChangeEvent LifecycleChange
addedTag FieldChange Tag | removedTag FieldChange Tag | addedGlossaryTerm FieldChange GlossaryTerm
removedGlossaryTerm FieldChange GlossaryTerm | addedOwner FieldChange prov:Agent | removedOwner FieldChange prov:Agent
addedDomain FieldChange MetadataEntity | removedDomain FieldChange MetadataEntity
addedSchemaField FieldChange Column | removedSchemaField FieldChange Column | changedSchemaField FieldChange Column
addedInput FieldChange MetadataEntity | removedInput FieldChange MetadataEntity
addedOutput FieldChange MetadataEntity | removedOutput FieldChange MetadataEntity
keptTag FieldChange Tag | keptGlossaryTerm FieldChange GlossaryTerm | keptOwner FieldChange prov:Agent
keptDomain FieldChange MetadataEntity | keptSchemaField FieldChange Column | keptInput FieldChange MetadataEntity
keptOutput FieldChange MetadataEntity
addedBy LineageEdge ChangeEvent | removedBy LineageEdge ChangeEvent | setsUpstreamsOf ChangeEvent MetadataEntity | setsMembersOf ChangeEvent MetadataEntity
viaPipeline LineageAssertion MetadataEntity | runOf Run MetadataEntity | runRecord Run MetadataEntity
proposalFor ChangeEvent MetadataEntity | cascadesTo ChangeEvent MetadataEntity | aboutColumn FieldChange Column
assertion LineageEdge LineageAssertion | assertedBy LineageAssertion ChangeEvent
"""
DATATYPE_PROPERTIES = """
entityType ChangeEvent xsd:string | entityId ChangeEvent xsd:string | entityFullyQualifiedName ChangeEvent xsd:string
previousVersion ChangeEvent xsd:decimal | currentVersion ChangeEvent xsd:decimal | timestamp ChangeEvent xsd:dateTime
userName ChangeEvent xsd:string | userId ChangeEvent xsd:string | fieldName FieldChange xsd:string
oldValue FieldChange - | newValue FieldChange -
eventId ChangeEvent xsd:string | entityState ChangeEvent rdf:JSON | changeSummary ChangeEvent rdf:JSON
recursive ChangeEvent xsd:boolean | aspectName ChangeEvent xsd:string | previousVersionLabel ChangeEvent xsd:string | versionNumber EntityVersion xsd:decimal
versionLabel EntityVersion xsd:string | assetType MetadataEntity xsd:string
fullyQualifiedName MetadataEntity xsd:string | urn MetadataEntity xsd:string | sqlQuery LineageAssertion xsd:string
aboutEntityLink MetadataEntity xsd:string | aboutFullyQualifiedName MetadataEntity xsd:string
lineageSource LineageAssertion xsd:string | columnLineage LineageEdge rdf:JSON
transformOperation LineageAssertion xsd:string
executionStatus Run xsd:string | inputFQN Run xsd:string | outputFQN Run xsd:string
"""
_CURIES = {"prov": P, "skos": SKOS, "xsd": XSD, "rdf": RDF}


def iri(curie: str) -> URIRef:
    if curie in ("subClassOf", "subPropertyOf"):
        return RDFS[curie]
    prefix, sep, local = curie.partition(":")
    return URIRef(_CURIES[prefix][local]) if sep else OM[curie]


def rows(table: str) -> list[list[str]]:
    return [row.split() for row in table.replace("\n", " | ").split("|") if row.strip()]


@lru_cache(maxsize=None)
def om_graph() -> rdflib.Graph:
    return ontology_graph(with_prov=False)


def own_terms(*types: URIRef) -> list[URIRef]:
    g = om_graph()
    return sorted({s for t in types for s in g.subjects(RDF.type, t) if str(s).startswith(OM_EVENT)})


def individuals() -> list[URIRef]:
    g = om_graph()
    return sorted({s for c in own_terms(OWL.Class) for s in g.subjects(RDF.type, c)})


def clashes(graph: rdflib.Graph) -> list[str]:
    """owlrl's inconsistency reports: triples whose predicate or rdf:type is in the agent-ont namespace."""
    return sorted(f"{s} {p} {o}" for s, p, o in graph
                  if str(p).startswith(AGENT_ONT) or (p == RDF.type and str(o).startswith(AGENT_ONT)))


def closure(*sources: str | Path) -> rdflib.Graph:
    g = ontology_graph(with_prov=False)
    for src in sources:
        if isinstance(src, Path):
            g.parse(src, format="turtle")
        else:
            g.parse(data=src, format="turtle")
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    return g


@pytest.fixture(scope="module")
def real_prov_o(shared_dir) -> Path:
    path = shared_dir / "conformance" / "prov-o" / "prov-o.ttl"
    if not path.is_file():
        pytest.skip("the real PROV-O (../shared/conformance/prov-o/prov-o.ttl) is absent")
    return path


@pytest.fixture(scope="module", params=["prov-axioms.ttl", "real prov-o.ttl"])
def prov_source(request):
    if request.param == "prov-axioms.ttl":
        return read_text("prov-axioms.ttl")
    return request.getfixturevalue("real_prov_o")


# ---------------------------------------------------------------- parsing


def test_om_event_parses_in_rdflib_and_pyoxigraph_alike():
    text = read_text("om-event.ttl")
    ox = {str(t) for t in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.TURTLE, base_iri=ONTOLOGY_IRI)}
    rl = rdflib.Graph().parse(data=text, format="turtle")
    assert len(ox) == len(rl) > 500
    assert not any(isinstance(n, rdflib.BNode) for t in rl for n in t), "no blank nodes in the ontology"


def test_ontology_header():
    g, ont = om_graph(), URIRef(ONTOLOGY_IRI)
    assert (ont, RDF.type, OWL.Ontology) in g
    assert g.value(ont, OWL.versionIRI) == URIRef("https://w3id.org/changeprov/ontology/0.1.0")
    assert str(g.value(ont, OWL.versionInfo)) == "0.1.0"
    assert g.value(ont, OWL.imports) == URIRef("http://www.w3.org/ns/prov-o#")
    assert g.value(ont, RDFS.label) and g.value(ont, RDFS.comment)


def test_imported_iri_is_the_real_prov_o_ontology(real_prov_o):
    real = rdflib.Graph().parse(real_prov_o, format="turtle")
    (imported,) = om_graph().objects(URIRef(ONTOLOGY_IRI), OWL.imports)
    assert (imported, RDF.type, OWL.Ontology) in real
    assert real.value(imported, OWL.versionIRI) is not None  # the documented PROV-O header, not a stub


# ---------------------------------------------------------------- declarations


@pytest.mark.parametrize("kind, types, minimum", [
    ("classes", (OWL.Class,), 14),
    ("properties", (OWL.ObjectProperty, OWL.DatatypeProperty), 60),
    ("schemes", (SKOS.ConceptScheme,), 6),
    ("individuals", None, 63),
])
def test_every_term_is_labelled_commented_and_defined_here(kind, types, minimum):
    g = om_graph()
    terms = individuals() if types is None else own_terms(*types)
    assert len(terms) >= minimum
    problems = []
    for t in terms:
        labels = list(g.objects(t, RDFS.label))
        if not any(getattr(label, "language", None) == "en" for label in labels):
            problems.append(f"{t}: no English rdfs:label")
        if (t, RDFS.isDefinedBy, URIRef(ONTOLOGY_IRI)) not in g:
            problems.append(f"{t}: rdfs:isDefinedBy is not the ontology")
        if types is not None and kind != "schemes" and not g.value(t, RDFS.comment):
            problems.append(f"{t}: no rdfs:comment")
    assert not problems, "\n".join(problems)


def test_seed_terms_are_all_still_declared():
    declared = declared_terms()
    missing = [t for t in SEED_TERMS if OM_EVENT + t not in declared]
    assert not missing


def test_seed_term_list_matches_the_seed_file(shared_dir):
    text = (shared_dir / "seeds" / "000_b077d04f16898d43.txt").read_text("utf-8")
    start = text.index("@prefix om: ")
    end = text.index("\n{", start)
    seed = rdflib.Graph().parse(data=text[start:end], format="turtle")
    seed_terms = {str(s).removeprefix(OM_EVENT) for s in seed.subjects(RDF.type, None)}
    assert seed_terms == set(SEED_TERMS)
    g = om_graph()
    for s, p, o in seed.triples((None, None, None)):  # kinds and structure survive; labels may be reworded
        if p in (RDF.type, RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range):
            assert (s, p, o) in g, (s, p, o)


def test_every_om_event_iri_used_is_declared_and_every_prov_iri_is_in_prov_axioms():
    g, declared = om_graph(), declared_terms()
    used = {n for t in g for n in t if isinstance(n, URIRef)}
    undeclared = sorted(str(n) for n in used if str(n).startswith((OM_EVENT, PROV)) and str(n) not in declared)
    assert not undeclared
    nonstandard = sorted(str(n) for n in used
                         if not str(n).startswith((OM_EVENT, PROV, ONTOLOGY_IRI)) and not is_declared(str(n))
                         and str(n) not in {"http://www.w3.org/ns/prov-o#", "https://www.w3.org/TR/prov-o/",
                                            "https://w3id.org/changeprov/ontology/0.1.0"})
    assert not nonstandard


def test_declared_terms_and_standard_vocabularies_are_separate_and_closed():
    declared = declared_terms()
    assert str(OM.ChangeEvent) in declared and str(P.wasRevisionOf) in declared
    assert ONTOLOGY_IRI not in declared
    assert str(RDF.JSON) in standard_vocabularies() and str(SKOS.notation) in standard_vocabularies()
    assert not is_declared(str(RDFS) + "labell") and not is_declared(OM_EVENT + "changeEvent")
    with pytest.raises(ValueError):
        resource_path("../pyproject.toml")


@pytest.mark.parametrize("s, p, o", rows(AXIOMS), ids=lambda x: x)
def test_axiom(s, p, o):
    assert (iri(s), iri(p), iri(o)) in om_graph()


@pytest.mark.parametrize("prop, domain, range_, kind, other", [
    *[(*r, OWL.ObjectProperty, OWL.DatatypeProperty) for r in rows(OBJECT_PROPERTIES)],
    *[(*r, OWL.DatatypeProperty, OWL.ObjectProperty) for r in rows(DATATYPE_PROPERTIES)],
], ids=lambda x: x if isinstance(x, str) else "")
def test_property(prop, domain, range_, kind, other):
    g = om_graph()
    assert (iri(prop), RDF.type, kind) in g
    assert (iri(prop), RDF.type, other) not in g
    assert set(g.objects(iri(prop), RDFS.domain)) == {iri(domain)}
    assert set(g.objects(iri(prop), RDFS.range)) == (set() if range_ == "-" else {iri(range_)})


def test_every_declared_property_is_in_the_tables():
    listed = {r[0] for r in rows(OBJECT_PROPERTIES) + rows(DATATYPE_PROPERTIES)}
    declared = {str(t).removeprefix(OM_EVENT) for t in own_terms(OWL.ObjectProperty, OWL.DatatypeProperty)}
    assert declared == listed


# ---------------------------------------------------------------- concepts


def test_there_are_exactly_26_openmetadata_event_types():
    g = om_graph()
    members = set(g.subjects(SKOS.inScheme, OM.OpenMetadataEventTypes))
    assert len(members) == 26 == len(set(OPENMETADATA_EVENT_TYPES))
    assert {str(g.value(m, SKOS.notation)) for m in members} == set(OPENMETADATA_EVENT_TYPES)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_concept_scheme_members(scheme):
    g, expected = om_graph(), SCHEMES[scheme]
    assert (OM[scheme], RDF.type, SKOS.ConceptScheme) in g and g.value(OM[scheme], RDFS.label)
    members = set(g.subjects(SKOS.inScheme, OM[scheme]))
    assert {str(m).removeprefix(OM_EVENT) for m in members} == set(expected.values())
    cls = OM[SCHEME_CLASS.get(scheme, "EventType")]
    for notation, local in expected.items():
        node = OM[local]
        assert [str(n) for n in g.objects(node, SKOS.notation)] == [notation]
        assert (node, RDF.type, cls) in g
        assert list(g.objects(node, SKOS.inScheme)) == [OM[scheme]]
        assert g.value(node, SKOS.prefLabel) and g.value(node, SKOS.definition) and g.value(node, RDFS.label)


def test_every_individual_is_in_exactly_one_scheme():
    g = om_graph()
    everything = {OM[local] for members in SCHEMES.values() for local in members.values()}
    assert set(individuals()) == everything
    assert all(len(list(g.objects(i, SKOS.inScheme))) == 1 for i in everything)


def test_every_corpus_event_type_has_an_individual(shared_dir):
    path = shared_dir / "corpus" / "openmetadata" / "change_events.jsonl"
    used = {json.loads(line)["eventType"] for line in path.read_text("utf-8").splitlines() if line.strip()}
    assert len(used) >= 5
    g = om_graph()
    missing = [v for v in sorted(used)
               if not any((s, RDF.type, OM.EventType) in g for s in g.subjects(SKOS.notation, rdflib.Literal(v)))]
    assert not missing


def test_pascal_case_iris_of_openmetadata_event_types():
    for value in OPENMETADATA_EVENT_TYPES:
        assert re.fullmatch(r"[a-z]+[A-Za-z]*", value)
        assert (OM[value[0].upper() + value[1:]], SKOS.notation, rdflib.Literal(value)) in om_graph()


# ---------------------------------------------------------------- OWL 2 RL


def test_owl_rl_closure_has_no_clash(prov_source):
    assert clashes(closure(prov_source)) == []


_INSTANCE = """
@prefix om-event: <https://open-metadata.org/schema/type/changeEvent/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<urn:e> a om-event:ChangeEvent ; om-event:eventType om-event:EntityUpdated ;
    om-event:timestamp "2024-03-01T08:00:00.000Z"^^xsd:dateTime ;
    om-event:affectsEntity <urn:x> ; om-event:performedBy <urn:alice> ; om-event:lifecycleChange om-event:Restored .
<urn:v2> a om-event:AspectVersion ; prov:specializationOf <urn:x> ; prov:wasGeneratedBy <urn:e> ;
    prov:wasRevisionOf <urn:v1> .
<urn:d> prov:qualifiedDerivation <urn:l> . <urn:l> a om-event:LineageEdge ; prov:entity <urn:u> ; om-event:addedBy <urn:e> .
<urn:r> a om-event:Run ; om-event:runRecord <urn:dpi> .
"""
_ENTAILED = """
<urn:e> prov:used <urn:x> | <urn:e> prov:wasAssociatedWith <urn:alice> | <urn:alice> rdf:type prov:Agent
<urn:e> prov:startedAtTime "2024-03-01T08:00:00.000Z"^^xsd:dateTime
<urn:e> prov:endedAtTime "2024-03-01T08:00:00.000Z"^^xsd:dateTime
<urn:x> rdf:type om-event:MetadataEntity | <urn:x> rdf:type prov:Entity | <urn:e> rdf:type prov:Activity
<urn:v2> rdf:type prov:Entity | <urn:v2> prov:wasDerivedFrom <urn:v1> | <urn:v1> rdf:type prov:Entity
<urn:l> rdf:type prov:Derivation | <urn:u> rdf:type prov:Entity | <urn:d> rdf:type prov:Entity
om-event:EntityUpdated rdf:type skos:Concept | om-event:Restored rdf:type skos:Concept
<urn:dpi> rdf:type prov:Entity | <urn:r> rdf:type prov:Activity
"""


def test_owl_rl_entails_the_prov_reading_of_the_model(prov_source):
    g = closure(prov_source, _INSTANCE)
    assert clashes(g) == []
    head = "@prefix om-event: <%s> . @prefix prov: <%s> . @prefix xsd: <%s> . @prefix skos: <%s> . @prefix rdf: <%s> ." % (
        OM_EVENT, PROV, XSD, SKOS, RDF)
    for stmt in (r.strip() for r in _ENTAILED.replace("\n", "|").split("|") if r.strip()):
        (triple,) = rdflib.Graph().parse(data=f"{head} {stmt} .", format="turtle")
        assert triple in g, stmt


_CLASHES = {
    "entity and activity": "<urn:z> a <http://www.w3.org/ns/prov#Entity>, <http://www.w3.org/ns/prov#Activity> .",
    "event that is an asset": ("<urn:z> a <https://open-metadata.org/schema/type/changeEvent/ChangeEvent>, "
                               "<https://open-metadata.org/schema/type/changeEvent/MetadataEntity> ."),
    "asset used as a run via runRecord": ("<urn:z> a <https://open-metadata.org/schema/type/changeEvent/Run> . "
                                          "<urn:r> <https://open-metadata.org/schema/type/changeEvent/runRecord> <urn:z> ."),
}


@pytest.mark.parametrize("name", sorted(_CLASHES))
def test_negative_control_owl_rl_reports_the_clash(prov_source, name):
    found = clashes(closure(prov_source, _CLASHES[name]))
    assert found and any("urn:z" in line for line in found)


def test_prov_axioms_only_state_what_prov_o_states(real_prov_o):
    ours = rdflib.Graph().parse(data=read_text("prov-axioms.ttl"), format="turtle")
    real = rdflib.Graph().parse(real_prov_o, format="turtle")
    assert len(ours) > 100
    extra = sorted(f"{s.n3()} {p.n3()} {o.n3()}" for s, p, o in ours if (s, p, o) not in real)
    assert not extra
    assert (P.Activity, OWL.disjointWith, P.Entity) in ours  # the disjointness the negative control needs


# ---------------------------------------------------------------- the vocab command


def test_changeprov_vocab_exits_0(capsys):
    assert main(["vocab"]) == 0
    out = capsys.readouterr().out
    assert "vocabulary OK" in out and "OpenMetadataEventTypes: 26" in out


def test_vocabulary_report_reports_a_broken_file_instead_of_raising(monkeypatch):
    real = summary.read_text
    monkeypatch.setattr(summary, "read_text",
                        lambda name: "om-event:broken a ." if name == "om-event.ttl" else real(name))
    report = summary.vocabulary_report()
    assert report["ok"] is False
    assert any("does not parse" in line for line in report["lines"])


def _inline_queries() -> dict[str, str]:
    """The SPARQL texts the library keeps as Python strings: none, they live in sparql/queries/lookups/."""
    import importlib
    import pkgutil

    import changeprov.sparql as package

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"changeprov.sparql.{info.name}")
        for name, value in vars(module).items():
            if name.startswith("__"):
                continue
            for i, text in enumerate(value.values() if isinstance(value, dict) else [value]):
                if isinstance(text, str) and re.search(r"\bPREFIX\b", text) and re.search(r"\b(SELECT|ASK)\b", text):
                    found[f"{info.name}.{name}[{i}]"] = text
    return found


def test_no_query_is_kept_as_a_python_string():
    """The guide: queries live as .rq files with a header; the lookups the code runs for notes, hints and
    checks were 45 Python strings (rv45d #11), now sparql/queries/lookups/*.rq."""
    assert _inline_queries() == {}


def test_lookups_use_declared_terms_only(monkeypatch):
    """mq1 #5: the .rq files were vetted, the query strings in Python were not: a typo there
    (om:affectsEntiy) would match nothing, quietly. The lookups are vetted as the named queries are."""
    from changeprov.ontology import checks
    from changeprov.ontology.checks import check_declared

    uses = checks.term_uses()
    assert len([source for source in uses if source.startswith("lookups/")]) >= 45
    assert "https://open-metadata.org/schema/type/changeEvent/impersonatedBy" in uses["lookups/impersonated-changes.rq"]
    assert check_declared().problems == ()
    assert check_declared({"typo": "PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                                   "SELECT ?e WHERE { ?e om:affectsEntiy ?x }"}).problems == (
        "typo: https://open-metadata.org/schema/type/changeEvent/affectsEntiy",)
    real = checks._bundled_queries()
    monkeypatch.setattr(checks, "_bundled_queries", lambda: {
        **real, "lookups/is-column.rq": real["lookups/is-column.rq"].replace("om:Column", "om:Colum")})
    assert check_declared().problems == ("lookups/is-column.rq: https://open-metadata.org/schema/type/changeEvent/Colum",)


@pytest.mark.parametrize("name, change, says", [
    # ut42c #4: json.loads alone passed a context no JSON-LD processor accepts
    ("context.jsonld", lambda text: text.replace('"@type": "@id"', '"@type": "@idd"', 1),
     "context.jsonld is no valid JSON-LD 1.1 context"),
    # ... and a term the context and queries use but the ontology no longer declares (check said so)
    ("om-event.ttl", lambda text: text.replace("om-event:setsMembersOf\n    a owl:ObjectProperty", "om-event:setsMembersOfX\n    a owl:ObjectProperty"),
     "declared-terms: "),
])
def test_vocab_runs_the_checks_a_jsonld_processor_and_check_run(monkeypatch, name, change, says):
    real = summary.read_text
    assert change(real(name)) != real(name), "the test's edit must apply"
    monkeypatch.setattr(summary, "read_text", lambda n: change(real(n)) if n == name else real(n))
    if name == "om-event.ttl":  # the checks read the ontology through the package
        import changeprov.ontology as ontology

        monkeypatch.setattr(ontology, "read_text", lambda n: change(real(n)) if n == name else real(n))
        ontology._declared.cache_clear()
    try:
        report = summary.vocabulary_report()
    finally:
        if name == "om-event.ttl":
            ontology._declared.cache_clear()
    assert report["ok"] is False and any(says in line for line in report["lines"]), report["lines"][-5:]


def _context() -> dict:
    from changeprov.ontology import read_text

    return json.loads(read_text("context.jsonld"))["@context"]


def _edited_context(edit) -> dict:
    ctx = _context()
    edit(ctx)
    return ctx


@pytest.mark.parametrize("edit, says", [
    # rv45c #1: a prefix off by one character, and an @id that JSON-LD reads as the absolute IRI om:timestamp
    (lambda c: c.update({"om-event": "https://open-metadata.org/schema/type/changeEvent#"}),
     "term ChangeEvent: https://open-metadata.org/schema/type/changeEvent#ChangeEvent is no declared class"),
    (lambda c: c.update({"timestamp": {"@id": "om:timestamp", "@type": "xsd:dateTime"}}),
     "term timestamp: om:timestamp is no declared class, property or individual"),
    # rv45c #2: a term gone, a datatype against the range, two terms for one IRI
    (lambda c: c.pop("affectsEntity"), "no term for the property om-event:affectsEntity"),
    (lambda c: c["currentVersion"].update({"@type": "xsd:string"}),
     "term currentVersion: coerced to http://www.w3.org/2001/XMLSchema#string, but om-event:currentVersion has the "
     "range xsd:decimal"),
    (lambda c: c["addedTag"].update({"@id": "om-event:removedTag"}), "terms addedTag, removedTag: one IRI, om-event:removedTag"),
    (lambda c: c["affectsEntity"].pop("@type"),
     'term affectsEntity: coerced to no type, but om-event:affectsEntity has the range om-event:MetadataEntity (give "@type": "@id")'),
])
def test_the_context_check_finds_terms_that_do_not_fit_the_ontology(edit, says):
    from changeprov.ontology.checks import check_context

    assert check_context(_context()).problems == ()
    problems = check_context(_edited_context(edit)).problems
    assert any(p.startswith(says) for p in problems), problems


@pytest.mark.parametrize("edit", [
    # rv45 #3: JSON-LD 1.1 that is right, which the check refused
    lambda c: c["entity"].update({"@type": "@json"}),
    lambda c: c.update({"type": "@type", "iri": "@id"}),
    lambda c: c.update({"generated": {"@reverse": "prov:wasGeneratedBy"}}),
    lambda c: c["eventType"].update({"@type": "@vocab"}),
    lambda c: c.update({"label": None}),
    lambda c: c["timestamp"].update({"@type": "http://www.w3.org/2001/XMLSchema#dateTime"}),
    lambda c: c.update({"fieldsAddedSet": {"@id": "om-event:fieldsAdded", "@type": "@id", "@container": "@set"}}),
])
def test_the_context_check_takes_every_form_json_ld_gives_a_term(edit):
    from changeprov.ontology.checks import check_context

    assert check_context(_edited_context(edit)).problems == ()

@pytest.mark.parametrize("old, new, says", [
    # rv45c #1: with this prefix every shape targeted classes no data has, and every store passed
    ("@prefix om-event: <https://open-metadata.org/schema/type/changeEvent/> .",
     "@prefix om-event: <https://open-metadata.org/schema/type/changeEvent#> .",
     "sh:targetClass https://open-metadata.org/schema/type/changeEvent#ChangeEvent: no declared term"),
    ("sh:path om-event:timestamp", "sh:path om-event:timestmp",
     "sh:path https://open-metadata.org/schema/type/changeEvent/timestmp: no declared property"),
    # rv45 #7: a declared class as a path passed
    ("sh:path om-event:timestamp", "sh:path om-event:ChangeEvent",
     "sh:path https://open-metadata.org/schema/type/changeEvent/ChangeEvent: a class, not a property"),
])
def test_the_shape_check_finds_shapes_that_name_undeclared_terms(old, new, says):
    from changeprov.ontology import read_text
    from changeprov.ontology.checks import check_shapes

    text = read_text("shapes.ttl")
    assert old in text and check_shapes(text).problems == ()
    assert says in check_shapes(text.replace(old, new)).problems


@pytest.mark.parametrize("old, new, says", [
    # rv45c #3: owlrl reports inconsistencies of individuals only, and the TBox has none of these
    ("    rdfs:subClassOf prov:Activity ;\n    rdfs:label \"Change Event\"@en",
     "    rdfs:subClassOf prov:Activity , prov:Entity ;\n    rdfs:label \"Change Event\"@en",
     "class om-event:ChangeEvent: its instances would be prov:Activity and prov:Entity, which are disjoint"),
    ("rdfs:subPropertyOf prov:used ;\n    rdfs:label \"affects entity\"@en ;\n    rdfs:comment \"The metadata entity affected by this change (exactly one per event).\"@en ;\n    rdfs:domain om-event:ChangeEvent ;\n    rdfs:range om-event:MetadataEntity",
     "rdfs:subPropertyOf prov:used ;\n    rdfs:label \"affects entity\"@en ;\n    rdfs:comment \"The metadata entity affected by this change (exactly one per event).\"@en ;\n    rdfs:domain om-event:ChangeEvent ;\n    rdfs:range prov:Activity",
     "property om-event:affectsEntity: its object would be prov:Activity and prov:Entity, which are disjoint"),
    ("om-event:affectsEntity\n    a owl:ObjectProperty ;\n    rdfs:subPropertyOf prov:used",
     "om-event:affectsEntity\n    a owl:ObjectProperty ;\n    rdfs:subPropertyOf prov:wasGeneratedBy",
     "property om-event:affectsEntity: its subject would be prov:Activity and prov:Entity, which are disjoint"),
])
def test_the_satisfiability_check_finds_classes_and_properties_no_individual_can_have(old, new, says):
    from changeprov.ontology import ONTOLOGY_IRI, read_text
    from changeprov.ontology.checks import check_satisfiable
    from changeprov.ontology.tbox import build_tbox, prov_o_graph

    text = read_text("om-event.ttl")
    assert old in text and check_satisfiable().problems == ()
    graph = rdflib.Graph().parse(data=text.replace(old, new), format="turtle", publicID=ONTOLOGY_IRI)
    graph += prov_o_graph()
    problems = check_satisfiable(build_tbox(graph)).problems
    assert any(p.startswith(says) for p in problems), problems


def test_vocab_reports_shapes_that_target_nothing(monkeypatch):
    from changeprov.ontology import checks

    real = checks.read_text
    monkeypatch.setattr(checks, "read_text", lambda n: real(n).replace(
        "changeEvent/> .", "changeEvent#> .") if n == "shapes.ttl" else real(n))
    report = summary.vocabulary_report()
    assert report["ok"] is False
    assert any("shape-terms" in line for line in report["lines"]), report["lines"]
