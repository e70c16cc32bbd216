"""`changeprov reason`: materialise, inside the store, the OWL 2 RL entailments the queries and checks use.

Rules (W3C OWL 2 RL/RDF names), applied to the data with the TBox (om-event.ttl + PROV-O) closed once
by owlrl (:func:`changeprov.ontology.tbox.tbox`):

* prp-spo1 — ``s p o`` and p ⊑ q gives ``s q o`` (so ``prov:wasRevisionOf`` ⇒ ``prov:wasDerivedFrom``,
  ``om-event:timestamp`` ⇒ ``prov:startedAtTime`` / ``prov:endedAtTime``);
* prp-dom / prp-rng — ``s p o`` gives ``s a D`` / ``o a R`` for every class domain / range of p;
* cax-sco — ``s a C`` and C ⊑ D gives ``s a D``.

Equivalent classes and properties count as mutual sub-classes / sub-properties. Not materialised:
``owl:Thing`` membership, datatype ranges (a literal is not typed), inverse properties (prp-inv:
``prov:influenced`` would double the graph and no query uses it), property chains (prp-spo2: the
mapper states their conclusions itself, e.g. ``prov:wasDerivedFrom`` next to each qualified
derivation, and the shapes check it), owl:sameAs.

Why one pass is the fixpoint: the tables are transitive, a property's domains and ranges include
those of its super-properties, and every class set is closed upwards. So the types a node gets from
its asserted types, its properties' domains and ranges, and the super-properties of its triples are
complete after one evaluation of two queries (:func:`reasoning_queries`): nothing new can follow.

How the triples get in: on an embedded store the two SELECTs stream into pyoxigraph's bulk loader
(the transactional update path costs 3-4x more for the same triples); on an endpoint (and the rdflib
memory store) they run as two ``INSERT … WHERE … FILTER NOT EXISTS`` updates. The ontology terms are
written into the query text as VALUES rows: serialised IRIs of the bundled ontology, never user input.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

import pyoxigraph as ox

from changeprov.errors import StoreError
from changeprov.ontology.tbox import TRIVIAL_CLASSES, TBox, tbox, tbox_terms
from changeprov.sparql.embedded import EmbeddedStore
from changeprov.sparql.rdflib_store import RdflibStore
from changeprov.sparql.remote import RemoteStore, redacted
from changeprov.sparql.stores import TripleStore

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def _iri(value: str) -> str:
    return str(ox.NamedNode(value))


def _pairs(table: dict[str, frozenset[str]]) -> str:
    return " ".join(f"({_iri(k)} {_iri(v)})" for k in sorted(table) for v in sorted(table[k] - TRIVIAL_CLASSES))


def _bodies(t: TBox | None = None) -> tuple[str, str]:
    t = t or tbox()
    properties = f"VALUES (?p ?q) {{ {_pairs(t.superproperties)} }}\n  ?s ?p ?o"
    types = (f"{{ VALUES (?p ?c) {{ {_pairs(t.domains)} }}\n    ?s ?p ?o }}\n"
             f"  UNION {{ VALUES (?p ?c) {{ {_pairs(t.ranges)} }}\n    ?x ?p ?s FILTER(!isLiteral(?s)) }}\n"
             f"  UNION {{ VALUES (?a ?c) {{ {_pairs(t.superclasses)} }}\n    ?s a ?a }}")
    return properties, types


def reasoning_queries(t: TBox | None = None) -> dict[str, str]:
    """The entailments as two SELECTs: ``properties`` (?s ?q ?o: prp-spo1) and ``types`` (?s ?c: prp-dom,
    prp-rng, cax-sco). Independent of each other: the tables are already closed (module docstring)."""
    properties, types = _bodies(t)
    return {"properties": f"SELECT DISTINCT ?s ?q ?o WHERE {{\n  {properties}\n}}",
            "types": f"SELECT DISTINCT ?s ?c WHERE {{\n  {types}\n}}"}


def reasoning_updates(t: TBox | None = None) -> list[str]:
    """The same entailments as SPARQL 1.1 updates (for endpoints; they insert only what is missing)."""
    properties, types = _bodies(t)
    return [f"INSERT {{ ?s ?q ?o }}\nWHERE {{\n  {properties}\n  FILTER NOT EXISTS {{ ?s ?q ?o }}\n}}",
            f"INSERT {{ ?s a ?c }}\nWHERE {{\n  {types}\n  FILTER NOT EXISTS {{ ?s a ?c }}\n}}"]


def _bulk(store: EmbeddedStore) -> None:
    """Embedded store: stream the two SELECTs into pyoxigraph's bulk loader. Its transactional update
    path costs 3-4x more for the same triples; the loader ignores triples already present, and a run
    cut short is completed by the next one (reasoning is monotone)."""
    rdf_type = ox.NamedNode(RDF_TYPE)
    queries = reasoning_queries()

    def quads():
        for row in store._store.query(queries["properties"]):
            yield ox.Quad(row["s"], row["q"], row["o"])
        for row in store._store.query(queries["types"]):
            yield ox.Quad(row["s"], rdf_type, row["c"])

    try:
        store._store.bulk_extend(quads())
    except (OSError, RuntimeError, ValueError) as exc:
        raise StoreError(f"reasoning failed on {store.description}: {exc}") from None


def updater(store: TripleStore) -> Callable[[str], None]:
    """A function running one SPARQL 1.1 update on ``store``; StoreError up front if it takes none."""
    if isinstance(store, RdflibStore):
        return store._graph.update
    if isinstance(store, RemoteStore):
        if not store.update_endpoint:
            raise StoreError(f"{store.description} has no known SPARQL update endpoint: give --update-endpoint URL")
        done: list[int] = []

        def run(update: str) -> None:
            # ut44a #3: "no batch was stored" after the first update had added 26,406 triples
            store._post(store.update_endpoint, update.encode("utf-8"), "application/sparql-update",
                        before=f"the {len(done)} update(s) before it stay applied: reason again to complete it "
                               f"(reasoning again adds only what is missing)" if done else "no update was applied")
            done.append(1)
        return run
    raise StoreError(f"{store.description} does not accept updates")


@dataclass(frozen=True)
class ReasonReport:
    before: int
    after: int
    updates: int
    seconds: float

    @property
    def added(self) -> int:
        return self.after - self.before

    def as_dict(self) -> dict:
        return {"triples_before": self.before, "triples_after": self.after, "triples_added": self.added,
                "updates": self.updates, "seconds": round(self.seconds, 3)}


def reason(store: TripleStore, *, progress: Callable[[str], None] | None = None) -> ReasonReport:
    """Add the entailments of the module docstring to ``store``; running it again adds nothing."""
    start = time.perf_counter()
    if isinstance(store, EmbeddedStore):
        before = store.count()
        _bulk(store)
        steps = 2
    else:
        run = updater(store)
        updates = reasoning_updates()
        before = store.count()
        for i, update in enumerate(updates, 1):
            if progress:
                progress(f"update {i}/{len(updates)}")
            run(update)
        steps = len(updates)
    after = store.count()
    if isinstance(store, RemoteStore) and after == before and store.ask(_missing_entailment()):
        # ut46b #1: a gateway answering the updates with HTTP 200 and a login page, "0 triples added", exit 0
        raise StoreError(f"{redacted(store.update_endpoint)} accepted the updates, but their triples are not in the store the "
                         f"endpoint {store.shown} queries: a gateway answering in its place (a login page?), "
                         "--update-endpoint of another dataset, or a read replica behind the writer")
    return ReasonReport(before, after, steps, time.perf_counter() - start)


def _missing_entailment(t: TBox | None = None) -> str:
    """ASK whether the store lacks an entailment the updates insert."""
    properties, types = _bodies(t)
    return (f"ASK {{\n  {{ {properties}\n  FILTER NOT EXISTS {{ ?s ?q ?o }} }}\n"
            f"  UNION {{ {types}\n  FILTER NOT EXISTS {{ ?s a ?c }} }}\n}}")


# ----------------------------------------------------------------------------- the reference (owlrl)


def owlrl_closure(data: Iterable[tuple], *, t: TBox | None = None):
    """owlrl's full OWL 2 RL closure of data + TBox (an rdflib Graph)."""
    import owlrl
    import rdflib

    graph = rdflib.Graph()
    for triple in (t or tbox()).graph:
        graph.add(triple)
    for triple in data:
        graph.add(triple)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
    return graph


def owlrl_reference(data: Iterable[tuple], *, t: TBox | None = None, closure=None) -> set[tuple]:
    """What :func:`reason` must add to ``data`` (rdflib triples), computed by owlrl's full closure.

    From ``owlrl.DeductiveClosure(OWLRL_Semantics)`` over data + TBox keep the new triples whose
    subject is a data node (an IRI of the data that the TBox does not mention) and whose predicate is
    either ``rdf:type`` with a named, non-trivial class as object, or a super-property (or the
    property itself) of a property the data uses. That drops owlrl's other output: owl:sameAs
    reflexivity, owl:Thing and anonymous-class membership, literal datatype triples, TBox-level
    triples and inverse properties (prp-inv) of properties the data does not use. The classes and
    super-properties are owlrl's (its closure's ``owl:Class`` and ``rdfs:subPropertyOf`` triples), not
    the TBox tables :func:`reason` uses: a super-property those tables missed must show as missing
    (rv45d #1).
    """
    import rdflib
    from rdflib.namespace import OWL, RDF, RDFS

    t = t or tbox()
    data = list(data)
    graph = closure if closure is not None else owlrl_closure(data, t=t)
    terms = tbox_terms()
    nodes = {n for s, _, o in data for n in (s, o) if isinstance(n, rdflib.URIRef) and str(n) not in terms}
    used = {p for _, p, _ in data}
    props = used | {q for p in used for q in graph.objects(p, RDFS.subPropertyOf) if isinstance(q, rdflib.URIRef)}
    classes = {c for c in graph.subjects(RDF.type, OWL.Class) if isinstance(c, rdflib.URIRef)
               and str(c) not in TRIVIAL_CLASSES}
    given = set(data)
    keep = set()
    for s, p, o in graph:
        if s not in nodes or (s, p, o) in given:
            continue
        if p == RDF.type:
            if o in classes:
                keep.add((s, p, o))
        elif p in props:
            keep.add((s, p, o))
    return keep


def restrict_to_data(triples: Iterable[tuple]) -> set[tuple]:
    """The triples whose subject is a data node (not a TBox term); the other side of the comparison."""
    terms = tbox_terms()
    return {tr for tr in triples if str(tr[0]) not in terms}
