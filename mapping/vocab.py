"""Namespaces, well-known terms and the mapping rules table (rules.json), loaded once."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from pyoxigraph import NamedNode

OM_EVENT = "https://open-metadata.org/schema/type/changeEvent/"
PROV = "http://www.w3.org/ns/prov#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
SKOS = "http://www.w3.org/2004/02/skos/core#"
OM_ENTITY = "https://open-metadata.org/entity/"
ID = "https://w3id.org/changeprov/id/"

PREFIXES = {"om-event": OM_EVENT, "prov": PROV, "rdf": RDF, "rdfs": RDFS, "xsd": XSD, "skos": SKOS}


def expand(curie: str) -> str:
    """``"om-event:ChangeEvent"`` → full IRI string.

    >>> expand("prov:used")
    'http://www.w3.org/ns/prov#used'
    """
    prefix, _, local = curie.partition(":")
    return PREFIXES[prefix] + local


@lru_cache(maxsize=None)
def term(curie: str) -> NamedNode:
    return NamedNode(expand(curie))


def om(local: str) -> NamedNode:
    return term("om-event:" + local)


def prov(local: str) -> NamedNode:
    return term("prov:" + local)


RDF_TYPE = term("rdf:type")
RDF_JSON = term("rdf:JSON")
XSD_BOOLEAN = term("xsd:boolean")
XSD_INTEGER = term("xsd:integer")
XSD_DECIMAL = term("xsd:decimal")
XSD_DOUBLE = term("xsd:double")
XSD_DATETIME = term("xsd:dateTime")


@lru_cache(maxsize=1)
def rules() -> dict:
    """The declarative mapping table, shared with the Spark job."""
    return json.loads(resources.files("changeprov.mapping").joinpath("rules.json").read_text("utf-8"))


@lru_cache(maxsize=None)
def event_rule(family: str, value: str) -> dict | None:
    for row in rules()["eventTypes"]:
        if row["family"] == family and row["value"] == value:
            return row
    return None


def rule_curies() -> set[str]:
    """Every prefixed term the rules table uses (for the 'declared by the ontology' test)."""
    found: set[str] = set()

    def walk(x):
        if isinstance(x, str) and x.split(":", 1)[0] in PREFIXES and ":" in x:
            found.add(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk({k: v for k, v in rules().items() if not k.startswith("_")})
    return found
