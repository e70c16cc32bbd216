"""The ``rdflib`` store kind: an rdflib in-memory graph (the benchmarks' baseline), and the term conversions
between pyoxigraph and rdflib."""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Callable, Iterator

import pyoxigraph as ox

from changeprov.errors import ChangeprovError, InputError, StoreError
from changeprov.mapping.vocab import XSD_STRING
from changeprov.sparql.stores import (NTriplesSyntaxError, Rows, Term, TripleStore, _binary, checked_bindings,
                                      first_text, sparql_syntax_error)


def to_rdflib(term: Term):
    import rdflib

    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language)
        if term.datatype.value == XSD_STRING:
            # RDF 1.1: "x" and "x"^^xsd:string are one term, but rdflib parses "x" without a datatype
            # and matches only that form in a graph pattern
            return rdflib.Literal(term.value)
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    raise TypeError(f"unsupported term {term!r}")


def from_rdflib(term) -> Term | None:
    import rdflib

    if term is None:
        return None
    if isinstance(term, rdflib.URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return ox.BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        if term.datatype is not None:
            return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
        return ox.Literal(str(term))
    raise TypeError(f"unsupported rdflib term {term!r}")


#: the stack frames rdflib may use while it parses and evaluates a query (see RdflibStore._answer)
_RDFLIB_FRAMES = 8_000
_deep = {"users": 0, "saved": 0}
_deep_lock = threading.Lock()
#: rdflib's SPARQL grammar (pyparsing) keeps parse state in shared objects: two threads parsing at
#: once failed with nonsense "syntax errors" (rv43 #5), so one parses at a time
_parse_lock = threading.Lock()


@contextlib.contextmanager
def _rdflib_recursion() -> Iterator[None]:
    """Python's recursion limit raised to _RDFLIB_FRAMES while any thread runs rdflib, put back when
    the last one is done (one thread putting back the limit while another recursed deep aborted the
    process: rv43 #5)."""
    with _deep_lock:
        if _deep["users"] == 0:
            _deep["saved"] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_deep["saved"], _RDFLIB_FRAMES))
        _deep["users"] += 1
    try:
        yield
    finally:
        with _deep_lock:
            _deep["users"] -= 1
            if _deep["users"] == 0:
                sys.setrecursionlimit(_deep["saved"])


class RdflibStore(TripleStore):
    """rdflib in-memory graph (parameters through prepareQuery + initBindings): the baseline of the
    benchmarks, or a graph of your own. rdflib's SPARQL engine answers the lineage queries as the
    embedded store does, not every named query (docs/library.md)."""

    kind = "rdflib"
    description = "rdflib in-memory graph"

    def __init__(self, graph=None):
        import rdflib

        self._graph = graph if graph is not None else rdflib.Graph()

    def _query(self, query, bindings):
        from rdflib.plugins.sparql import prepareQuery

        self._check_open()
        try:
            with _parse_lock:
                prepared = prepareQuery(query)
        except RecursionError:
            raise
        except Exception as exc:  # pyparsing errors
            raise sparql_syntax_error(str(exc), query) from None
        return self._graph.query(prepared, initBindings={k: to_rdflib(v) for k, v in checked_bindings(bindings).items()})

    def _answer(self, query, bindings, forms: tuple[str, ...], convert: Callable):
        """The answer of a query of one of ``forms``, ``convert``ed; rdflib's own errors while it evaluates
        (ut42a #1: NotBoundError on who-changed) as a StoreError. rdflib's parser and evaluator recurse
        once per level of nesting, a few dozen frames each: entity-state needs more than Python's
        default 1,000 frames, so the limit is raised while rdflib works, and put back."""
        try:
            with _rdflib_recursion():
                res = self._query(query, bindings)
                if res.type not in forms:
                    raise InputError(f"expected a{'n' if forms[0] == 'ASK' else ''} {' or '.join(forms)} query")
                return convert(res)
        except ChangeprovError:
            raise
        except RecursionError:
            raise StoreError(f"rdflib's SPARQL engine ran out of stack (over {_RDFLIB_FRAMES:,} frames: a query nested "
                             "this deeply, or a path through this much data); the memory and embedded stores "
                             "(pyoxigraph) answer every named query") from None
        except Exception as exc:  # noqa: BLE001 - any error of rdflib's engine, which has no base class
            raise StoreError(f"rdflib's SPARQL engine failed on this query ({type(exc).__name__}: {first_text(exc)}); "
                             "the memory and embedded stores (pyoxigraph) answer every named query") from None

    def select(self, query, bindings=None) -> Rows:
        return self._answer(query, bindings, ("SELECT",), lambda res: Rows(
            [str(v) for v in res.vars], [tuple(from_rdflib(x) for x in row) for row in res]))

    def ask(self, query, bindings=None) -> bool:
        return self._answer(query, bindings, ("ASK",), lambda res: bool(res.askAnswer))

    def construct(self, query, bindings=None):
        return self._answer(query, bindings, ("CONSTRUCT", "DESCRIBE"),
                            lambda res: [ox.Triple(*(from_rdflib(x) for x in t)) for t in res])

    def load_ntriples(self, stream) -> None:
        self._check_open()
        stream = _binary(stream)
        try:
            data = stream.read() if hasattr(stream, "read") else b"".join(stream)
        except TypeError as exc:  # an iterator of something else than lines of bytes
            raise InputError(f"load_ntriples takes an open stream of N-Triples (open(path, 'rb')): {exc}") from None
        # validate strictly with pyoxigraph first (rdflib's N-Triples parser is more lenient)
        try:
            triples = list(ox.parse(data, format=ox.RdfFormat.N_TRIPLES))
        except SyntaxError as exc:
            raise NTriplesSyntaxError(str(exc), line=exc.lineno) from None
        for t in triples:
            self._graph.add((to_rdflib(t.subject), to_rdflib(t.predicate), to_rdflib(t.object)))

    def count(self) -> int:
        self._check_open()
        return len(self._graph)

    def clear(self) -> None:
        self._check_open()
        self._graph.remove((None, None, None))
