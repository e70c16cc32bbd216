"""An entity's provenance subgraph (``describe.rq``) rendered as Turtle, JSON-LD or N-Triples."""

from __future__ import annotations

import json

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.sparql.queries import get_query, run_query
from changeprov.sparql.stores import TripleStore

DESCRIBE_FORMATS = ("turtle", "jsonld", "nt")


def describe_triples(store: TripleStore, entity: str, *, notes: list[str] | None = None) -> list[ox.Triple]:
    rows = run_query(store, get_query("describe"), {"entity": entity})
    if notes is not None:
        notes += rows.notes
    out = set()
    for r in rows.dicts():
        s, p, o = r["s"], r["p"], r["o"]
        if s is None or p is None or o is None:
            continue
        out.add(ox.Triple(s, p, o))
    if not out:  # an empty document would read as "this entity has no history"
        raise InputError(_not_an_entity(store, entity))
    return sorted(out, key=str)


_KIND = """PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?node ?agent ?team ?user_name ?event ?affected ?version_of WHERE {
  #@bindings
  BIND(EXISTS { ?node a prov:Agent } AS ?agent)
  BIND(EXISTS { ?node a prov:Organization } AS ?team)
  # nested, one pattern per OPTIONAL: a two-pattern body is evaluated for the whole store (docs/queries.md)
  OPTIONAL { ?by om:performedBy ?node OPTIONAL { ?by om:userName ?user_name } }
  BIND(EXISTS { ?node a om:ChangeEvent } || EXISTS { ?node a prov:Activity } AS ?event)
  OPTIONAL { ?node om:affectsEntity ?affected }
  OPTIONAL { ?node prov:specializationOf ?version_of }
} LIMIT 1"""


def _not_an_entity(store: TripleStore, value: str) -> str:
    """Why ``value`` (which resolved to a node of the store) has no provenance subgraph, and what to ask."""
    from changeprov.sparql.queries import resolve_node

    node = resolve_node(store, value)
    row = store.select(_KIND, {"node": node}).dicts()[0]
    name = value[:120]
    if row["team"] is not None and row["team"].value == "true":
        return f"{name!r} is a team (a prov:Organization), not a metadata entity"
    if row["agent"] is not None and row["agent"].value == "true":
        user = row["user_name"].value if row["user_name"] is not None else name
        return (f"{name!r} is a user (a prov:Agent), not a metadata entity: its changes are "
                f"`changeprov query changes-by-user --param user={user}`")
    if row["version_of"] is not None:
        return f"{name!r} is a version of {row['version_of'].value}: describe that entity"
    if row["event"] is not None and row["event"].value == "true":
        of = f" ({row['affected'].value})" if row["affected"] is not None else ""
        return f"{name!r} is a change event, not a metadata entity: describe the entity it affected{of}"
    return f"{name!r} is in the store but has no provenance of its own (no event affects it)"


def render_graph(triples: list[ox.Triple], fmt: str) -> str:
    """``triples`` as Turtle, N-Triples or compacted JSON-LD. The JSON-LD document carries our
    context itself, not its IRI: that IRI is not served anywhere, so any other JSON-LD processor
    (rdflib, pyld, jsonld.js) could not expand a document that only named it."""
    from changeprov.mapping.export import CONTEXT_IRI, bundled_context, to_jsonld, to_turtle

    if fmt == "turtle":
        return to_turtle(triples)
    if fmt == "jsonld":
        doc = to_jsonld(triples)
        if doc.get("@context") == CONTEXT_IRI:  # the same terms, so the compacted keys stay valid
            doc["@context"] = bundled_context()["@context"]
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt == "nt":
        return ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")
    raise InputError(f"unknown format {fmt!r} (one of {', '.join(DESCRIBE_FORMATS)})")
