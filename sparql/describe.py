"""An entity's provenance subgraph (``describe.rq``) rendered as Turtle, JSON-LD or N-Triples."""

from __future__ import annotations

import json

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.sparql.queries import get_query, run_query
from changeprov.sparql.stores import TripleStore

DESCRIBE_FORMATS = ("turtle", "jsonld", "nt")


def describe_triples(store: TripleStore, entity: str) -> list[ox.Triple]:
    rows = run_query(store, get_query("describe"), {"entity": entity})
    out = set()
    for r in rows.dicts():
        s, p, o = r["s"], r["p"], r["o"]
        if s is None or p is None or o is None:
            continue
        out.add(ox.Triple(s, p, o))
    return sorted(out, key=str)


def render_graph(triples: list[ox.Triple], fmt: str) -> str:
    from changeprov.mapping.export import to_jsonld, to_turtle

    if fmt == "turtle":
        return to_turtle(triples)
    if fmt == "jsonld":
        return json.dumps(to_jsonld(triples), indent=2, ensure_ascii=False) + "\n"
    if fmt == "nt":
        return ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")
    raise InputError(f"unknown format {fmt!r} (one of {', '.join(DESCRIBE_FORMATS)})")
