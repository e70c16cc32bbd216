"""ontology/shapes.ttl: parses, accepts a graph shaped as docs/model.md describes, rejects broken ones.

pyshacl is run as shapes.ttl documents: on the data graph UNIONED with the bundled ontology
(om-event.ttl + prov-axioms.ttl), ``inference="none"``. The ontology supplies the typed event-type
individuals (for ``sh:class om-event:EventType``) and the rdfs:subClassOf triples (so
``sh:targetClass om-event:EntityVersion`` reaches ``om-event:AspectVersion`` nodes). pyshacl's own
``ont_graph`` is not enough: it copies only RDFS/OWL axioms and owl:NamedIndividual nodes, not the
``om-event:EventType`` individuals. No entailment is needed because the data carries explicit
rdf:type triples; RDFS inference would only hide missing types (rdfs:domain) and cost time.
"""

from __future__ import annotations

import pytest
import rdflib
from pyshacl import validate
from rdflib.namespace import RDF, SH

from changeprov.ontology import ontology_graph, read_text

PREFIXES = """
@prefix om-event: <https://open-metadata.org/schema/type/changeEvent/> .
@prefix prov:     <http://www.w3.org/ns/prov#> .
@prefix rdf:      <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs:     <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos:     <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd:      <http://www.w3.org/2001/XMLSchema#> .
@prefix id:       <https://w3id.org/changeprov/id/> .
@prefix omx:      <https://open-metadata.org/entity/> .
"""

# An OpenMetadata entityUpdated event (tag added, version 0.2 → 0.3) following docs/model.md,
# an earlier lineage event, a DataHub aspect version and a pipeline run.
CONFORMING = PREFIXES + r"""
id:event\/0a1b2c3d4e5f60718293a4b5c6d7e8f9 a om-event:ChangeEvent ;
    om-event:eventType om-event:EntityUpdated ;
    om-event:timestamp "2024-01-17T12:00:00.000Z"^^xsd:dateTime ;
    om-event:affectsEntity omx:table\/123e4567-e89b-12d3-a456-426614174000 ;
    om-event:performedBy id:om\/user\/compliance.officer ;
    om-event:userName "compliance.officer" ;
    om-event:userId "abc12345-e89b-12d3-a456-426614174333" ;
    om-event:eventId "5f1e9f2a-0000-4000-8000-000000000001" ;
    om-event:entityId "123e4567-e89b-12d3-a456-426614174000" ;
    om-event:entityType "table" ;
    om-event:entityFullyQualifiedName "snowflake_prod.sales.public.customers" ;
    om-event:previousVersion 0.2 ;
    om-event:currentVersion 0.3 ;
    om-event:entityState "{\"id\":\"123e4567-e89b-12d3-a456-426614174000\",\"name\":\"customers\"}"^^rdf:JSON ;
    om-event:hasChangeDescription <https://w3id.org/changeprov/id/event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/changes> ;
    prov:used id:version\/00000000000000000000000000000002 .

omx:table\/123e4567-e89b-12d3-a456-426614174000 a om-event:MetadataEntity ;
    om-event:assetType "table" ;
    om-event:fullyQualifiedName "snowflake_prod.sales.public.customers" ;
    prov:wasDerivedFrom omx:table\/99999999-e89b-12d3-a456-426614174000 ;
    prov:qualifiedDerivation id:lineage\/fedcba98765432100123456789abcdef .

omx:table\/99999999-e89b-12d3-a456-426614174000 a om-event:MetadataEntity ;
    om-event:assetType "table" .

id:om\/user\/compliance.officer a prov:Agent .

<https://w3id.org/changeprov/id/event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/changes> a om-event:ChangeDescription ;
    om-event:fieldsAdded <https://w3id.org/changeprov/id/event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/change/added/0> .

<https://w3id.org/changeprov/id/event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/change/added/0> a om-event:FieldChange ;
    om-event:fieldName "tags" ;
    om-event:newValue "[{\"source\":\"Classification\",\"tagFQN\":\"PII.Sensitive\"}]"^^rdf:JSON ;
    om-event:addedTag id:om\/tag\/PII.Sensitive .

id:version\/00000000000000000000000000000002 a om-event:EntityVersion ;
    prov:specializationOf omx:table\/123e4567-e89b-12d3-a456-426614174000 ;
    om-event:versionNumber 0.2 ;
    prov:wasGeneratedBy id:event\/11111111111111111111111111111111 .

id:version\/00000000000000000000000000000003 a om-event:EntityVersion ;
    prov:specializationOf omx:table\/123e4567-e89b-12d3-a456-426614174000 ;
    om-event:versionNumber 0.3 ;
    prov:wasGeneratedBy id:event\/0a1b2c3d4e5f60718293a4b5c6d7e8f9 ;
    prov:wasRevisionOf id:version\/00000000000000000000000000000002 .

id:event\/11111111111111111111111111111111 a om-event:ChangeEvent ;
    om-event:eventType om-event:EntityLineageAdded ;
    om-event:timestamp "2024-01-16T12:00:00.000Z"^^xsd:dateTime ;
    om-event:affectsEntity omx:table\/123e4567-e89b-12d3-a456-426614174000 .

id:lineage\/fedcba98765432100123456789abcdef a om-event:LineageEdge ;
    prov:entity omx:table\/99999999-e89b-12d3-a456-426614174000 ;
    om-event:addedBy id:event\/11111111111111111111111111111111 ;
    om-event:sqlQuery "INSERT INTO customers SELECT * FROM raw" ;
    om-event:lineageSource "QueryLineage" .

id:event\/22222222222222222222222222222222 a om-event:ChangeEvent ;
    om-event:eventType om-event:MclUpsert ;
    om-event:operation om-event:OpModify ;
    om-event:aspectName "ownership" ;
    om-event:timestamp "2024-01-18T12:00:00.000Z"^^xsd:dateTime ;
    om-event:affectsEntity <urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)> ;
    om-event:performedBy <urn:li:corpuser:datahub> .

<urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)> a om-event:MetadataEntity ;
    om-event:urn "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)" .

id:version\/33333333333333333333333333333333 a om-event:AspectVersion ;
    om-event:aspectName "ownership" ;
    prov:specializationOf <urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)> ;
    prov:wasGeneratedBy id:event\/22222222222222222222222222222222 .

id:run\/44444444444444444444444444444444 a om-event:Run ;
    om-event:runOf omx:pipeline\/p1 ;
    prov:startedAtTime "2024-01-18T12:00:00.000Z"^^xsd:dateTime ;
    prov:endedAtTime "2024-01-18T12:05:00.000Z"^^xsd:dateTime ;
    om-event:executionStatus "Successful" ;
    prov:used omx:table\/99999999-e89b-12d3-a456-426614174000 .
"""

EV = "id:event\\/0a1b2c3d4e5f60718293a4b5c6d7e8f9"
FC = "<https://w3id.org/changeprov/id/event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/change/added/0>"
V3 = "id:version\\/00000000000000000000000000000003"
LIN = "id:lineage\\/fedcba98765432100123456789abcdef"
RUN = "id:run\\/44444444444444444444444444444444"
D = "omx:table\\/123e4567-e89b-12d3-a456-426614174000"
U = "omx:table\\/99999999-e89b-12d3-a456-426614174000"

# (id, triples to remove, triples to add, expected sh:message fragment, expected sourceShape local name
#  in the cps: namespace, or None when the rule is a blank-node property shape)
BROKEN = [
    ("two event types", "", f"{EV} om-event:eventType om-event:EntityCreated .",
     "exactly one om-event:eventType", "ChangeEvent-eventType"),
    ("undeclared event type", f"{EV} om-event:eventType om-event:EntityUpdated .",
     f"{EV} om-event:eventType om-event:EntityUpdatd .",
     "declared as an om-event:EventType", "ChangeEvent-eventType"),
    ("no timestamp", f'{EV} om-event:timestamp "2024-01-17T12:00:00.000Z"^^xsd:dateTime .', "",
     "exactly one om-event:timestamp", "ChangeEvent-timestamp"),
    ("timestamp as plain string", f'{EV} om-event:timestamp "2024-01-17T12:00:00.000Z"^^xsd:dateTime .',
     f'{EV} om-event:timestamp "2024-01-17T12:00:00.000Z" .',
     "exactly one om-event:timestamp, an xsd:dateTime", "ChangeEvent-timestamp"),
    ("two performedBy", "", f"{EV} om-event:performedBy id:om\\/user\\/mallory .",
     "at most one om-event:performedBy", "ChangeEvent-performedBy"),
    ("affected entity untyped", f"{U} a om-event:MetadataEntity . {D} a om-event:MetadataEntity .", "",
     "typed om-event:MetadataEntity", "ChangeEvent-affectsEntity"),
    ("event is also an entity", "", f"{EV} a prov:Entity .",
     "must not also be a prov:Entity", "ChangeEventShape"),
    ("field change without fieldName", f'{FC} om-event:fieldName "tags" .', "",
     "exactly one om-event:fieldName", "FieldChange-fieldName"),
    ("field change with two new values", "", f'{FC} om-event:newValue "x" .',
     "at most one om-event:newValue", "FieldChange-newValue"),
    ("field change in no description",
     f"<https://w3id.org/changeprov/id/event/0a1b2c3d4e5f60718293a4b5c6d7e8f9/changes> om-event:fieldsAdded {FC} .",
     "", "listed in exactly one change description", "FieldChange-description"),
    ("version generated by two events", "", f"{V3} prov:wasGeneratedBy id:event\\/11111111111111111111111111111111 .",
     "generated by exactly one change event", "EntityVersionShape"),  # the SPARQL constraint (hard deletes)
    ("aspect version without generation",
     "id:version\\/33333333333333333333333333333333 prov:wasGeneratedBy id:event\\/22222222222222222222222222222222 .",
     "", "generated by a change event (prov:wasGeneratedBy)", "EntityVersion-wasGeneratedBy"),
    ("version number as double", f"{V3} om-event:versionNumber 0.3 .", f'{V3} om-event:versionNumber "0.3"^^xsd:double .',
     "at most one om-event:versionNumber, an xsd:decimal", "EntityVersion-versionNumber"),
    ("lineage edge without prov:entity", f"{LIN} prov:entity {U} .", "",
     "exactly one prov:entity", "LineageEdge-entity"),
    ("lineage edge without events", f"{LIN} om-event:addedBy id:event\\/11111111111111111111111111111111 .", "",
     "at least one change event", "LineageEdge-events"),
    ("lineage edge without wasDerivedFrom", f"{D} prov:wasDerivedFrom {U} .", "",
     "must also state prov:wasDerivedFrom", "LineageEdgeShape"),  # SPARQL constraint: reported by its node shape
    ("run ends before it starts", f'{RUN} prov:endedAtTime "2024-01-18T12:05:00.000Z"^^xsd:dateTime .',
     f'{RUN} prov:endedAtTime "2024-01-18T11:00:00.000Z"^^xsd:dateTime .',
     "not after its prov:endedAtTime", "Run-startedAtTime"),
    ("entityState as plain string",
     f'{EV} om-event:entityState "{{\\"id\\":\\"123e4567-e89b-12d3-a456-426614174000\\",\\"name\\":\\"customers\\"}}"^^rdf:JSON .',
     f'{EV} om-event:entityState "{{}}" .',
     "Values of om-event:entityState are rdf:JSON literals", None),  # a blank property shape
]


@pytest.fixture(scope="module")
def shapes() -> rdflib.Graph:
    return rdflib.Graph().parse(data=read_text("shapes.ttl"), format="turtle")


@pytest.fixture(scope="module")
def ontology() -> rdflib.Graph:
    return ontology_graph()


def _graph(text: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=text, format="turtle")


def _run(data: rdflib.Graph, shapes, ontology):
    conforms, report, text = validate(
        data + ontology if ontology is not None else data, shacl_graph=shapes, inference="none",
        do_owl_imports=False, allow_warnings=False,
    )
    results = []
    for r in report.subjects(RDF.type, SH.ValidationResult):
        results.append((str(report.value(r, SH.resultMessage)), str(report.value(r, SH.sourceShape))))
    return conforms, results, text


def test_shapes_parse_and_every_shape_has_a_message(shapes):
    assert len(shapes) > 100
    node_shapes = set(shapes.subjects(RDF.type, SH.NodeShape))
    prop_shapes = set(shapes.objects(None, SH.property))
    assert node_shapes and prop_shapes
    for ps in prop_shapes:
        assert shapes.value(ps, SH.message), f"property shape {ps} has no sh:message"
    for ns in node_shapes:
        if (ns, SH["not"], None) in shapes:
            assert shapes.value(ns, SH.message), f"node shape {ns} has sh:not but no sh:message"
    for target in ("ChangeEvent", "ChangeDescription", "FieldChange", "EntityVersion", "LineageEdge",
                   "MetadataEntity", "Run"):
        iri = rdflib.URIRef("https://open-metadata.org/schema/type/changeEvent/" + target)
        assert (None, SH.targetClass, iri) in shapes, target


def test_datatype_shapes_cover_every_ranged_datatype_property(shapes, ontology):
    from rdflib.namespace import OWL, RDFS

    checked = {(p, d) for s in shapes.subjects(SH.targetSubjectsOf, None)
               for ps in shapes.objects(s, SH.property)
               for p in shapes.objects(ps, SH.path) for d in shapes.objects(ps, SH.datatype)}
    for p in ontology.subjects(RDF.type, OWL.DatatypeProperty):
        rng = ontology.value(p, RDFS.range)
        if rng is not None and (str(p).startswith("https://open-metadata.org/") or
                                 p in (rdflib.PROV.startedAtTime, rdflib.PROV.endedAtTime)):
            assert (p, rng) in checked, f"no sh:datatype {rng} check for {p}"


def test_conforming_graph(shapes, ontology):
    conforms, results, text = _run(_graph(CONFORMING), shapes, ontology)
    assert conforms, text


def test_ontology_is_needed_for_event_types(shapes, ontology):
    """Documents the requirement: without the ontology in the data graph (alone, or passed as
    pyshacl's ont_graph) the declared event types are not visible."""
    conforms, results, _ = _run(_graph(CONFORMING), shapes, None)
    assert not conforms
    assert any(src.endswith("ChangeEvent-eventType") for _, src in results)
    conforms, _, _ = validate(_graph(CONFORMING), shacl_graph=shapes, ont_graph=ontology, inference="none")
    assert not conforms


def test_ontology_alone_has_no_results(shapes, ontology):
    conforms, results, text = _run(rdflib.Graph(), shapes, ontology)
    assert conforms, text


@pytest.mark.parametrize("remove, add, message, source", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_broken_variants(shapes, ontology, remove, add, message, source):
    data = _graph(CONFORMING)
    for t in _graph(PREFIXES + remove):
        assert t in data, f"test bug: {t} not in the conforming graph"
        data.remove(t)
    data += _graph(PREFIXES + add)
    conforms, results, text = _run(data, shapes, ontology)
    assert not conforms
    matching = [(m, s) for m, s in results if message in m]
    assert matching, f"expected a result with message containing {message!r}; got:\n{text}"
    if source is not None:
        assert any(s == "https://w3id.org/changeprov/shapes#" + source for _, s in matching), matching
