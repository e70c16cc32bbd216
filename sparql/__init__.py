"""Stores (pyoxigraph on disk or in memory, a SPARQL 1.1 endpoint, rdflib), the loader and the named queries.

The library's query side in one import (docs/library.md): ``open_store(kind, ...)`` and
``run_query(store, name, params)``; ``list_queries()`` / ``get_query(name)`` / ``load_query_file(path)``
for the queries themselves."""

from changeprov.sparql.queries import get_query, list_queries, load_query_file, run_ask, run_construct, run_query
from changeprov.sparql.stores import NTriplesSyntaxError, Rows, open_store, python_value

__all__ = ["open_store", "run_query", "run_ask", "run_construct", "get_query", "list_queries", "load_query_file", "Rows",
           "python_value", "NTriplesSyntaxError"]
