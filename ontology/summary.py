"""`changeprov vocab`: check the bundled vocabulary files and summarise them.

Never raises on a broken file: problems come back as lines with ``ok=False``.
"""

from __future__ import annotations

import json
from collections import Counter

import rdflib
from rdflib.namespace import OWL, RDF, RDFS, SKOS

from changeprov.ontology import OM_EVENT, ONTOLOGY_IRI, read_text, resource_path

_KINDS = {
    "classes": (OWL.Class,),
    "object_properties": (OWL.ObjectProperty,),
    "datatype_properties": (OWL.DatatypeProperty,),
    "schemes": (SKOS.ConceptScheme,),
}


def _om_terms(graph: rdflib.Graph) -> dict[str, set[rdflib.URIRef]]:
    """om-event terms of om-event.ttl by kind; individuals are instances of om-event classes."""
    def own(nodes):
        return {n for n in nodes if isinstance(n, rdflib.URIRef) and str(n).startswith(OM_EVENT)}

    kinds = {k: own(s for t in types for s in graph.subjects(RDF.type, t)) for k, types in _KINDS.items()}
    classes = kinds["classes"]
    kinds["individuals"] = own(s for c in classes for s in graph.subjects(RDF.type, c))
    return kinds


def _process_context(data: dict, problem) -> None:
    """Have pyld process the context as a JSON-LD 1.1 processor would, on a document that uses each
    of its terms: json.loads alone passed a ``"@type": "@idd"`` that made every JSON-LD output fail."""
    from pyld import jsonld

    context = data["@context"]
    keys = [k for k, v in context.items() if isinstance(context, dict) and not k.startswith("@")
            and not (isinstance(v, str) and v.endswith(("/", "#")))] if isinstance(context, dict) else []
    try:
        jsonld.expand({"@context": context, "@id": "urn:x:check", **{k: "x" for k in keys}},
                      {"base": "urn:x:"})
    except Exception as exc:  # noqa: BLE001 - pyld's errors carry the cause in their text
        problem(f"context.jsonld is no valid JSON-LD 1.1 context: {' '.join(str(exc).split())[:300]}")


def vocabulary_report() -> dict:
    """Parse om-event.ttl (rdflib and pyoxigraph), count its terms, check every term is labelled,
    and check that prov-axioms.ttl, context.jsonld and shapes.ttl (when present) parse.

    Returns ``{"ok": bool, "lines": [str, ...], "counts": {...}}``.
    """
    lines: list[str] = []
    counts: dict[str, int] = {}
    problems: list[str] = []

    def problem(text: str) -> None:
        problems.append(text)
        lines.append("PROBLEM: " + text)

    graph = rdflib.Graph()
    try:
        graph.parse(data=read_text("om-event.ttl"), format="turtle", publicID=ONTOLOGY_IRI)
    except Exception as exc:  # noqa: BLE001 - reported, never raised
        problem(f"om-event.ttl does not parse (rdflib): {type(exc).__name__}: {exc}")
        graph = None
    try:
        import pyoxigraph

        n_ox = sum(1 for _ in pyoxigraph.parse(read_text("om-event.ttl"), format=pyoxigraph.RdfFormat.TURTLE,
                                               base_iri=ONTOLOGY_IRI))
        counts["triples_pyoxigraph"] = n_ox
    except Exception as exc:  # noqa: BLE001
        problem(f"om-event.ttl does not parse (pyoxigraph): {type(exc).__name__}: {exc}")

    if graph is not None:
        counts["triples"] = len(graph)
        if "triples_pyoxigraph" in counts and counts["triples_pyoxigraph"] != len(graph):
            problem(f"rdflib reads {len(graph)} triples but pyoxigraph {counts['triples_pyoxigraph']}")
        if (rdflib.URIRef(ONTOLOGY_IRI), RDF.type, OWL.Ontology) not in graph:
            problem(f"om-event.ttl does not declare the ontology {ONTOLOGY_IRI}")
        terms = _om_terms(graph)
        for kind, found in terms.items():
            counts[kind] = len(found)
        counts["properties"] = counts["object_properties"] + counts["datatype_properties"]
        per_scheme = Counter(str(s).removeprefix(OM_EVENT) for s in graph.objects(None, SKOS.inScheme))
        version = graph.value(rdflib.URIRef(ONTOLOGY_IRI), OWL.versionInfo)
        lines.append(f"om-event.ttl {version or '(no version)'}: {len(graph)} triples, "
                     f"{counts['classes']} classes, {counts['object_properties']} object + "
                     f"{counts['datatype_properties']} datatype properties, {counts['individuals']} individuals, "
                     f"{counts['schemes']} concept schemes")
        for scheme, n in sorted(per_scheme.items()):
            lines.append(f"  {scheme}: {n} concepts")
        unlabelled = sorted(str(t) for found in terms.values() for t in found
                            if (t, RDFS.label, None) not in graph)
        for iri in unlabelled:
            problem(f"no rdfs:label: {iri}")
        counts["unlabelled"] = len(unlabelled)

    for name, fmt in (("prov-axioms.ttl", "turtle"), ("shapes.ttl", "turtle"), ("context.jsonld", "json")):
        if not resource_path(name).is_file():
            lines.append(f"{name}: absent")
            continue
        try:
            text = read_text(name)
            if fmt == "json":
                data = json.loads(text)
                if not isinstance(data, dict) or "@context" not in data:
                    problem(f"{name} has no top-level @context")
                    continue
                counts["context_terms"] = len(data["@context"]) if isinstance(data["@context"], dict) else 0
                lines.append(f"{name}: JSON-LD context, {counts['context_terms']} entries")
                _process_context(data, problem)
            else:
                n = len(rdflib.Graph().parse(data=text, format="turtle"))
                counts[name.removesuffix(".ttl").replace("-", "_") + "_triples"] = n
                lines.append(f"{name}: {n} triples")
        except Exception as exc:  # noqa: BLE001
            problem(f"{name} does not parse: {type(exc).__name__}: {exc}")

    # the cross-checks `changeprov check --only ontology` runs (every term the context, shapes, rules
    # and queries use is declared, ...): vocab and check must not disagree (ut42c #4)
    try:
        from changeprov.ontology.checks import ontology_checks

        for check in ontology_checks():
            for text in check.problems:
                problem(f"{check.name}: {text}")
    except Exception as exc:  # noqa: BLE001 - reported, never raised
        problem(f"the ontology checks could not run: {type(exc).__name__}: {exc}")

    ok = not problems
    lines.append("vocabulary OK" if ok else f"vocabulary has {len(problems)} problem(s)")
    return {"ok": ok, "lines": lines, "counts": counts}
