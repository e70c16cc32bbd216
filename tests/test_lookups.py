"""The lookups (``sparql/queries/lookups/*.rq``): the queries the code runs for notes, hints and checks.
Each one's header is checked as a named query's is, it runs on a store with its parameters bound by
the engine, and its endpoint form (a VALUES block at each marker) is valid SPARQL."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib.plugins.sparql as rdflib_sparql

from changeprov.mapping.vocab import ID, XSD_DECIMAL
from changeprov.sparql.embedded import MemoryStore
from changeprov.sparql.query_files import lookup, parse_header
from changeprov.sparql.values import with_values

FOLDER = resources.files("changeprov.sparql").joinpath("queries", "lookups")
NAMES = sorted(e.name[:-3] for e in FOLDER.iterdir() if e.name.endswith(".rq"))
PARTS = sorted(e.name[:-3] for e in FOLDER.joinpath("parts").iterdir() if e.name.endswith(".rq"))
SOURCES = {p.name: p.read_text("utf-8") for p in (Path(__file__).parents[1] / "sparql").glob("*.py")}
DUMMY = {"iri": ox.NamedNode("urn:x:node"), "decimal": ox.Literal("1.0", datatype=XSD_DECIMAL),
         "string": ox.Literal("x"),
         "time": ox.Literal("2026-01-01T00:00:00Z", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#dateTime"))}


def test_there_are_lookups():
    assert len(NAMES) >= 45 and PARTS == ["tied-add"]


@pytest.mark.parametrize("name", NAMES)
def test_a_lookup_has_a_header_and_runs_with_its_parameters_bound(name):
    q = parse_header(name, lookup(name))  # parameters used, projected, marked in sub-selects
    assert q.summary, f"{name}.rq has no '# summary:' line"
    assert not (q.if_empty or q.if_rows or q.driver or q.collect), "a lookup runs no notes or driver of its own"
    assert all(p.type in DUMMY for p in q.params), [p.type for p in q.params]
    bound = {p.name: DUMMY[p.type] for p in q.params}
    store = MemoryStore()
    store._store.add(ox.Quad(ox.NamedNode("urn:x:node"), ox.NamedNode("urn:x:p"), ox.Literal("o")))
    if q.text.lstrip("# \n").count("ASK") and re.search(r"(?m)^\s*ASK\b", q.text):
        assert store.ask(q.text, bound) in (True, False)
    else:
        store.select(q.text, bound)
    # the endpoint form: the values at every marker line, parsed by another engine
    rdflib_sparql.prepareQuery(with_values(q.text, bound))


def test_every_lookup_and_part_is_used():
    """A name in ``lookup("…")``, or one an f-string there makes (``lookup(f"{side}-edge-adds")``)."""
    code = "\n".join(SOURCES.values())
    literal = set(re.findall(r'lookup\("([a-z-]+)"\)', code))
    made = [re.compile(re.sub(r"\\\{[^}]*\\\}", "[a-z]+", re.escape(t)) + r"\Z")
            for t in re.findall(r'lookup\(f"([^"]+)"\)', code)]
    assert literal - set(NAMES) == set(), "named in the code, no such file"
    unused = [n for n in NAMES if n not in literal and not any(m.match(n) for m in made)]
    assert unused == []
    included = set(re.findall(r"(?m)^#@include ([a-z-]+)$", "\n".join(
        FOLDER.joinpath(f"{n}.rq").read_text("utf-8") for n in NAMES)))
    assert included == set(PARTS)


def test_includes_are_expanded_and_the_minted_namespace_is_ours():
    text = lookup("tied-of-member")
    assert "#@include" not in text and FOLDER.joinpath("parts", "tied-add.rq").read_text("utf-8") in text
    assert f'STRSTARTS(STR(?node), "{ID}")' in lookup("untyped-prov-node")
