"""Parameters as ``VALUES`` blocks of pyoxigraph-serialised terms, put at a query's ``#@bindings`` marker
lines: how an endpoint gets them (and an embedded ASK or CONSTRUCT with a marker), never by formatting a
value into the query's text."""

from __future__ import annotations

from typing import Mapping

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.sparql.stores import BINDINGS_MARKER, Term


def values_block(bindings: Mapping[str, Term], *more: Mapping[str, Term]) -> str:
    """``VALUES (?a ?b) { (<…> "…"^^<…>) }`` with terms serialised by pyoxigraph (N-Triples escaped); ``more``:
    further rows of the same variables (one request for many lookups on an endpoint)."""
    names = []
    for name in bindings:
        ox.Variable(name)  # validates the variable name
        names.append("?" + name)
    rows = []
    for row in (bindings, *more):
        terms = []
        for name, term in row.items():
            if not isinstance(term, (ox.NamedNode, ox.Literal)):
                raise InputError(f"parameter {name}: only IRIs and literals can be bound")
            terms.append(_inert(name, term))
        rows.append(f"({' '.join(terms)})")
    return f"VALUES ({' '.join(names)}) {{ {' '.join(rows)} }}"


def with_rows(query: str, rows: list[Mapping[str, Term]]) -> str:
    """``query`` with a VALUES block of all ``rows`` (of the same variables) at every marker line: on an
    endpoint, one request answers what a store answers with one substitution per row."""
    block = values_block(*rows)
    return "\n".join(block if line.strip() == BINDINGS_MARKER else line for line in query.split("\n"))


def _inert(name: str, term: ox.NamedNode | ox.Literal) -> str:
    """``term`` serialised so that it cannot end a long string either: a query file may hold its
    marker line inside one, and a value with three quotes would end it there and be read as query code
    (rv43 M1). N-Triples escapes a literal's double quote, and its single quote becomes the escape
    ``\\'``; inside an IRI no escape is read alike by every engine, so three single quotes are refused."""
    literal = isinstance(term, ox.Literal)
    iri = term.datatype.value if literal else term.value
    if "'''" in iri or (literal and "'" in iri):
        raise InputError(f"parameter {name}: a value with ''' in an IRI cannot be bound")
    return str(term).replace("'", "\\'") if literal else str(term)


def with_values(query: str, bindings: Mapping[str, Term] | None) -> str:
    """Put the VALUES block at every marker line (every named query with parameters has one at the start
    of its WHERE group).

    A VALUES block binds only the group it is in: a UNION branch, a nested group or a sub-select is
    evaluated on its own, so a FILTER there sees its parameters unbound (wrong rows), and the engine
    does not push the outer block into a sub-select (a scan of the store where a substitution is one
    lookup). Such a group that uses a parameter starts with a marker line of its own (docs/queries.md,
    rule 8); the block binds the same values there as at the top, so the results are those of a
    substitution.
    """
    if not bindings:
        return query
    # only where the engine and the SERVICE guard break lines (rv43 H1)
    if not any(line.strip() == BINDINGS_MARKER for line in query.split("\n")):
        raise InputError(f"a query with parameters needs a line `{BINDINGS_MARKER}` at the start "
                         "of its WHERE group (where the remote VALUES block goes)")
    return with_rows(query, [bindings])
