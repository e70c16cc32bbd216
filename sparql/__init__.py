"""Stores (embedded pyoxigraph, remote SPARQL 1.1, rdflib in memory), the loader and the named queries."""

from changeprov.sparql.stores import open_store  # noqa: F401
