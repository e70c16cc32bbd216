"""The mapping rules table and the mapper's output use only terms the ontology declares."""

from __future__ import annotations

import pytest
import rdflib
from pyoxigraph import Literal, NamedNode

from changeprov.mapping.mapper import map_line
from changeprov.mapping.vocab import OM_EVENT, RDF_TYPE, expand, rule_curies, rules
from changeprov.ontology import is_declared, ontology_graph

SKOS_NOTATION = rdflib.SKOS.notation


def test_every_term_in_the_rules_table_is_declared():
    undeclared = sorted(c for c in rule_curies() if not is_declared(expand(c)))
    assert not undeclared, f"rules.json uses terms the ontology does not declare: {undeclared}"


def test_the_declared_check_can_fail():
    assert not is_declared(OM_EVENT + "NoSuchTerm")


@pytest.mark.parametrize("row", [r for r in rules()["eventTypes"] if r["eventType"]],
                         ids=lambda r: f"{r['family']}:{r['value']}")
def test_event_type_rows_match_the_ontology_notation(row):
    g = ontology_graph(with_prov=False)
    notations = {str(o) for o in g.objects(rdflib.URIRef(expand(row["eventType"])), SKOS_NOTATION)}
    assert row["value"] in notations, f"{row['eventType']} has skos:notation {notations}, rules say {row['value']}"


@pytest.mark.parametrize("value", sorted(rules()["operations"]))
def test_operation_rows_match_the_ontology_notation(value):
    g = ontology_graph(with_prov=False)
    iri = rdflib.URIRef(expand(rules()["operations"][value]["operation"]))
    assert value in {str(o) for o in g.objects(iri, SKOS_NOTATION)}


def test_mapper_output_uses_only_declared_terms(shared_dir):
    """Predicates, classes and vocabulary individuals in the corpus output are all declared."""
    used: set[str] = set()
    for path in sorted((shared_dir / "corpus").rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            for t in map_line(raw).triples:
                used.add(t.predicate.value)
                if t.predicate == RDF_TYPE or (isinstance(t.object, NamedNode) and t.object.value.startswith(OM_EVENT)):
                    used.add(t.object.value)
                if isinstance(t.object, Literal):
                    used.add(t.object.datatype.value)
    undeclared = sorted(u for u in used if not is_declared(u))
    assert not undeclared, f"the mapper emits undeclared terms: {undeclared}"
