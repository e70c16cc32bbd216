"""SHACL validation of changeprov data against the bundled shapes (pyshacl).

The shapes run over the data *plus* the ontology (see the header of shapes.ttl): that is how
event-type individuals and subclass targets become visible without inference.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

import rdflib
from pyoxigraph import RdfFormat, Triple, serialize

from changeprov.ontology import ontology_graph, read_text


@dataclass(frozen=True)
class ShaclReport:
    conforms: bool
    text: str
    results: tuple[dict, ...]  # one dict per sh:ValidationResult: focus, path, message, shape


@lru_cache(maxsize=1)
def shapes_graph() -> rdflib.Graph:
    g = rdflib.Graph()
    g.parse(data=read_text("shapes.ttl"), format="turtle")
    return g


def to_rdflib(triples: Iterable[Triple]) -> rdflib.Graph:
    g = rdflib.Graph()
    data = serialize(triples, format=RdfFormat.N_TRIPLES) or b""
    g.parse(data=data.decode("utf-8"), format="nt")
    return g


def validate(data: rdflib.Graph | Iterable[Triple]) -> ShaclReport:
    """Validate ``data`` (an rdflib Graph or pyoxigraph triples) against ``shapes.ttl``."""
    import pyshacl

    graph = data if isinstance(data, rdflib.Graph) else to_rdflib(data)
    conforms, report, text = pyshacl.validate(graph + ontology_graph(), shacl_graph=shapes_graph(),
                                              inference="none", do_owl_imports=False)
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    results = tuple(
        {"focus": str(report.value(r, sh.focusNode)), "path": str(report.value(r, sh.resultPath)),
         "message": str(report.value(r, sh.resultMessage)), "shape": str(report.value(r, sh.sourceShape))}
        for r in report.subjects(rdflib.RDF.type, sh.ValidationResult))
    return ShaclReport(bool(conforms), text, results)
