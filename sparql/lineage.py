"""Lineage drivers: a query file that is one breadth-first step (``driver: lineage``, ``impact``) is
run level by level from the entity, with the minimum hops per asset; ``collect`` merges rows."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Iterator, Mapping

import pyoxigraph as ox

from changeprov.mapping.vocab import XSD_INTEGER
from changeprov.sparql.params import renamed_label
from changeprov.sparql.query_files import NamedQuery, get_query, lookup
from changeprov.sparql.stores import Rows, TripleStore

def _text(term) -> str:
    return "" if term is None else term.value


def collect(rows: Rows, columns: list[str]) -> Rows:
    """Merge rows that differ only in ``columns``; their distinct values are sorted and joined by ', '."""
    idx = [rows.variables.index(c) for c in columns if c in rows.variables]
    if not idx:
        return rows
    groups: dict[tuple, list[set]] = {}
    for r in rows.rows:
        key = tuple(v for i, v in enumerate(r) if i not in idx)
        bucket = groups.setdefault(key, [set() for _ in idx])
        for slot, i in enumerate(idx):
            if r[i] is not None:
                bucket[slot].add(r[i].value)
    out = []
    for key, bucket in groups.items():
        it = iter(key)
        row = []
        for i in range(len(rows.variables)):
            if i in idx:
                vals = bucket[idx.index(i)]
                row.append(ox.Literal(", ".join(sorted(vals))) if vals else None)
            else:
                row.append(next(it))
        out.append(tuple(row))
    return Rows(rows.variables, out)


def _job_neighbours(store: TripleStore, node, direction: str, as_of) -> Iterator[tuple]:
    """One hop through DataHub data jobs (job-io.rq): from a job the datasets it reads (``up``) or
    writes (``down``); from a dataset the jobs that write (``up``) or read (``down``) it."""
    q = get_query("job-io")
    at = {"as_of": as_of} if as_of is not None else {}
    reads, writes = ox.Literal("input"), ox.Literal("output")
    for r in store.select(q.text, {**at, "job": node, "only": reads if direction == "up" else writes}).dicts():
        yield r["dataset"], _text(r["dataset_name"])
    # the other way round, job-io from each job that ever named the dataset: one query that starts
    # from either end is planned from the job's end whichever is bound (2.8 s against 9 ms)
    for c in store.select(get_query("job-candidates").text, {"dataset": node}).dicts():
        if store.select(q.text, {**at, "job": c["job"], "dataset": node,
                                 "only": writes if direction == "up" else reads}).rows:
            yield c["job"], _text(c["job_name"])


def _through_jobs(bound: Mapping) -> bool:
    flag = bound.get("jobs")
    return flag is not None and flag.value == "true"


def lineage_bfs(store: TripleStore, q: NamedQuery, bound: Mapping, direction: str | None = None) -> Rows:
    """Breadth-first search with ``q`` as the step: minimum hops per asset from the start entity.

    ``q`` binds ``?entity`` to the asset being expanded and returns its neighbours ``?next`` (with
    ``?next_name``) over the edges valid at ``?as_of``. Each asset is expanded once, in hop order, so
    the cost follows the answer, not the store. With ``jobs`` true and a ``direction`` (``up`` or
    ``down``), DataHub data jobs are assets too, one hop from the datasets they read and write, as in
    DataHub's own lineage graph.
    """
    jobs = direction is not None and _through_jobs(bound)
    bound = {k: v for k, v in bound.items() if k != "jobs"}
    start = bound["entity"]
    names: dict = defaultdict(set)  # a renamed OpenMetadata entity has a name per name it had
    hops = {start: 0}
    via: dict = defaultdict(set)
    queue = deque([start])

    labels: dict = {}

    def name_of(node) -> str:
        if len(names.get(node, ())) > 1:  # renamed: its current name, then the former ones
            if node not in labels:
                labels[node] = renamed_label(store, node) or ", ".join(sorted(names[node]))
            return labels[node]
        return next(iter(names[node])) if names.get(node) else node.value

    def neighbours(node) -> Iterator[tuple]:
        for r in store.select(q.text, {**bound, "entity": node}).dicts():
            yield r["next"], _text(r["next_name"])
        if jobs:
            yield from _job_neighbours(store, node, direction, bound.get("as_of"))

    while queue:
        node = queue.popleft()
        for nxt, name in neighbours(node):
            names[nxt].add(name)
            if nxt not in hops:
                hops[nxt] = hops[node] + 1
                queue.append(nxt)
            if hops[nxt] == hops[node] + 1 and node != start:
                via[nxt].add(name_of(node))
    assets = sorted((n for n in hops if n != start), key=lambda n: (hops[n], name_of(n), n.value))
    return Rows(["asset_name", "hops", "via", "asset"],
                [(ox.Literal(name_of(n)), ox.Literal(str(hops[n]), datatype=XSD_INTEGER),
                  ox.Literal(", ".join(sorted(via[n]))) if via[n] else None, n) for n in assets])


def lineage_with_owners(store: TripleStore, q: NamedQuery, bound: Mapping, step: str,
                        direction: str | None = None) -> Rows:
    """The lineage of the named ``step`` query, plus an ``owners`` column: ``q`` run once per asset
    (for a column, once per table the ``column-table`` query finds).

    An OPTIONAL owner lookup inside the step query would be evaluated by the engine once for the
    whole store (docs/queries.md); one query per asset found keeps the cost per answer.
    """
    lineage = lineage_bfs(store, get_query(step), bound, direction)
    bound = {k: v for k, v in bound.items() if k != "jobs"}
    tables = get_query("column-table")
    out = []
    for *head, asset in lineage.rows:
        owned = [asset]
        if store.ask(lookup("is-column"), {"entity": asset}):  # a column has no owners: its table has
            owned = [r["table"] for r in store.select(tables.text, {"entity": asset}).dicts()]
        owners = sorted({r["owner"].value for node in owned
                         for r in store.select(q.text, {**bound, "entity": node}).dicts() if r.get("owner") is not None})
        out.append((*head, ox.Literal(", ".join(owners)) if owners else None, asset))
    return Rows(lineage.variables[:-1] + ["owners", "asset"], out)


DRIVERS = {"lineage": lineage_bfs, "impact": lineage_with_owners}
