"""Running named queries: ``run_query`` (SELECT), ``run_ask`` and ``run_construct`` (query files of
the other forms). The query files, parameters, notes and lineage drivers live in their own modules
(query_files, params, notes, lineage); the names other modules import from here stay importable."""

from __future__ import annotations

import datetime as _dt
import re
from collections import defaultdict
from typing import Mapping

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.mapping.openmetadata import ENTITY_LINK
from changeprov.mapping.vocab import OM_EVENT
from changeprov.sparql.lineage import DRIVERS, collect
from changeprov.sparql.notes import EMPTY_CHECKS, ROW_CHECKS, _instant
# parse_header … user_name: also what other modules and library callers import from here
from changeprov.sparql.params import (_current_name, _lineage_ends_named_once, _renamed_shown_once,  # noqa: F401
                                      bind_params, has_node, parse_param_args, parse_time, resolve_node, user_name)
from changeprov.sparql.query_files import (NamedQuery, get_query, list_queries, lookup,  # noqa: F401
                                           load_query_file, parse_header)
from changeprov.sparql.stores import Rows, TripleStore, query_form, refuse_service


def run_query(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None = None, *,
              allow_service: bool = False, raw: bool = False, now_ms: int | None = None) -> Rows:
    """Run a named query (``q``: its name, or a NamedQuery from ``get_query`` / ``load_query_file``):
    bind its parameters (``values``: strings as the command line takes them, or datetime, date, epoch ms
    as int, bool), run it with its driver and collected columns, drop the parameter columns. The answer's
    ``notes`` say what the CLI prints on stderr (that a load into the store did not finish, how the
    answer was reached, why it may be empty).

    >>> from changeprov.sparql.stores import open_store
    >>> with open_store("memory") as store:
    ...     rows = run_query(store, "deleted-entities", {"since": _dt.date(2024, 3, 1)})
    >>> len(rows), rows.notes[0][:35]
    (0, 'the store holds no triples: nothing')
    """
    q, bound, notes = _prepared(store, q, values, allow_service=allow_service, now_ms=now_ms, forms=("SELECT",))
    if raw:
        return store.select(q.text, bound)
    rows = _answer(store, q, bound)
    of_column = bool((q.column_field or q.column_link) and isinstance(bound.get("entity"), ox.NamedNode)
                     and store.ask(lookup("is-column"), {"entity": bound["entity"]}))
    if of_column:  # its own note says why it is empty, if it is: the entity's checks would not apply
        rows = (_about_column(store, q, bound, notes, own=rows) if q.column_field
                else _linked_to_column(store, q, bound, notes, own=rows))
    rows = _renamed_shown_once(store, _lineage_ends_named_once(store, rows), at=q.names_at)
    keep = [i for i, v in enumerate(rows.variables) if q.param(v) is None]
    for check in q.if_empty if not rows.rows and not of_column else []:
        notes += EMPTY_CHECKS[check](store, bound)
    for check in q.if_rows if rows.rows else []:
        notes += ROW_CHECKS[check](store, bound, rows)
    if not rows.rows and not store.ask(lookup("any-triple")):  # "(0 rows)" must not read as a true answer
        notes.append("the store holds no triples: nothing was loaded into it yet (changeprov load EXPORT), "
                     "or what was loaded mapped no event")
    return Rows([rows.variables[i] for i in keep], [tuple(r[i] for i in keep) for r in rows.rows], notes)


def run_ask(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None = None, *,
            allow_service: bool = False, now_ms: int | None = None, notes: list[str] | None = None) -> bool:
    """An ASK query file's answer, its parameters bound and SERVICE refused as ``run_query`` does;
    ``notes`` (a list, if given) receives what ``run_query`` puts in an answer's notes."""
    q, bound, said = _prepared(store, q, values, allow_service=allow_service, now_ms=now_ms, forms=("ASK",))
    if notes is not None:
        notes += said
    return store.ask(q.text, bound)


def run_construct(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None = None, *,
                  allow_service: bool = False, now_ms: int | None = None,
                  notes: list[str] | None = None) -> list[ox.Triple]:
    """A CONSTRUCT or DESCRIBE query file's triples, as ``run_ask`` runs an ASK (mq1 #9: a library
    caller had to repeat the command's steps, the SERVICE guard among them)."""
    q, bound, said = _prepared(store, q, values, allow_service=allow_service, now_ms=now_ms,
                               forms=("CONSTRUCT", "DESCRIBE"))
    if notes is not None:
        notes += said
    return store.construct(q.text, bound)


def _prepared(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None, *,
              allow_service: bool, now_ms: int | None, forms: tuple[str, ...]) -> tuple[NamedQuery, dict, list[str]]:
    """(the query, its bound parameters, the notes so far), SERVICE refused first. A value of the wrong
    kind is an InputError naming it, not an AttributeError from deep inside (ut40c #6)."""
    if not isinstance(store, TripleStore):
        raise InputError(f"store must be an open store (open_store(...)), not {type(store).__name__}")
    if isinstance(q, str):
        q = get_query(q)
    elif not isinstance(q, NamedQuery):
        raise InputError(f"query must be a name or a NamedQuery (get_query, load_query_file), not {type(q).__name__}")
    if values is not None and not isinstance(values, Mapping):
        raise InputError(f"parameters must be a mapping of name to value, not {type(values).__name__}")
    if values is not None and any(not isinstance(k, str) for k in values):  # ut44f #6: a TypeError
        raise InputError(f"parameter names are strings, got {next(k for k in values if not isinstance(k, str))!r:.80}")
    refuse_service(q.text, allow_service=allow_service)
    form = query_form(q.text)
    if form not in forms:  # ut48a #7: a SELECT given to run_ask failed on binding its parameters
        runner = {"SELECT": "run_query", "ASK": "run_ask"}.get(form, "run_construct")
        raise InputError(f"{q.name} is {'an' if form == 'ASK' else 'a'} {form} query: {runner} runs it")
    unfinished = store.unfinished_load()  # a library caller sees no warning on stderr (ut19 #5)
    notes: list[str] = [unfinished] if unfinished else []
    return q, bind_params(store, q, values or {}, now_ms=now_ms, notes=notes), notes


def _answer(store: TripleStore, q: NamedQuery, bound: Mapping) -> Rows:
    if q.driver:
        kind, *args = q.driver.split()
        rows = DRIVERS[kind](store, q, bound, *args)
    else:
        rows = store.select(q.text, bound)
    return collect(rows, q.collect) if q.collect else rows


def _about_column(store: TripleStore, q: NamedQuery, bound: Mapping, notes: list[str], *, own: Rows) -> Rows:
    """A column's changes are its table's, about it (columns.NAME.FIELD) or adding, dropping or changing
    it (``# column-field:`` names the answer's column of field names): the table's answer, only the
    rows of those fields and events, after the column's own rows (``own``: DataHub change events on a
    schemaField are the column's; OpenMetadata columns have none)."""
    column = bound["entity"]
    tables: dict = defaultdict(lambda: (set(), set()))
    schema_fields = set()  # fields whose members are the table's columns: a row there is about one column
    drops = set()
    for r in store.select(lookup("column-fields"), {"entity": column}).dicts():
        tables[r["table"]][0].add(r["field"].value)
        tables[r["table"]][1].add(r["event"])
        if r["rel"].value != OM_EVENT + "aboutColumn":
            schema_fields.add(r["field"].value)
        if r["rel"].value == OM_EVENT + "removedSchemaField":
            drops.add(r["event"])
    names = _names_of(store, column)
    out, variables = list(own.rows), own.variables or None
    for table, (fields, events) in tables.items():
        rows = _answer(store, q, {**bound, "entity": table})
        variables, i = rows.variables, rows.variables.index(q.column_field)
        e = rows.variables.index("event") if "event" in rows.variables else None
        v = rows.variables.index("value") if "value" in rows.variables else None
        # a collected column holds "+a, ~b": the names after their mark; a member row (a table's
        # columns) is about this column only when it names it
        out += [r for r in rows.rows if r[i] is not None and (e is None or r[e] in events)
                and fields & {name.lstrip("+~-") for name in r[i].value.split(", ")}
                and (v is None or r[i].value not in schema_fields or (r[v] is not None and r[v].value in names))]
    if not tables:
        return own
    table_names = ", ".join(sorted(_current_name(store, table) or table.value for table in tables))
    about = sorted(set().union(*(f for f, _ in tables.values())))
    if own.rows:  # ut14 #5: a DataHub schemaField has change events of its own
        notes.append(f"this is a column: its own rows and the rows of {table_names} about it ({', '.join(about)})")
        if "time" in variables:  # one history, in time order (a stable sort keeps each part's order)
            t = variables.index("time")
            out.sort(key=lambda r: _instant(r[t].value) if r[t] is not None else _dt.datetime.max.replace(tzinfo=_dt.timezone.utc))
    else:
        # its own events may answer nothing here (a tag it no longer has as of then): ut41c #3
        has_events = store.ask(lookup("has-events"), {"entity": column})
        notes.append("this is a column: " + ("none of its own events answers this; " if has_events else
                                             "it has no events of its own; ") + (
            f"these are the rows of {table_names} about it ({', '.join(about)})" if out
            else f"{table_names} has no rows about it here" + _dropped(store, drops)))
    return Rows(variables, out)


def _linked_to_column(store: TripleStore, q: NamedQuery, bound: Mapping, notes: list[str], *, own: Rows) -> Rows:
    """A thread about a column names it in its entity link, ``<#E::table::FQN::columns::NAME…>``, and is
    found from the table (``# column-link:`` names the answer's column of links): of a column, its
    tables' rows whose link names it, the table's FQN then and the column's name giving the column's
    FQN (ua51 #2: a column's threads were an empty answer, and no word of asking for the table)."""
    column = bound["entity"]
    names = _names_of(store, column)
    tables = {r["table"] for r in store.select(lookup("column-fields"), {"entity": column}).dicts()}
    out, variables = list(own.rows), own.variables
    for table in sorted(tables, key=lambda t: t.value):
        rows = _answer(store, q, {**bound, "entity": table})
        variables, i = rows.variables, rows.variables.index(q.column_link)
        out += [r for r in rows.rows if r[i] is not None and _linked_column(r[i].value) in names]
    table_names = ", ".join(sorted(_current_name(store, table) or table.value for table in tables))
    notes.append(f"this is a column: the rows of {table_names} whose link names it" if out else
                 f"this is a column: {table_names or 'no table of its'} has no rows whose link names it")
    return Rows(variables, out)


def _names_of(store: TripleStore, node: ox.NamedNode) -> set[str]:
    """The node's IRI and every FQN and URN it was given."""
    names = {node.value}
    for row in store.select(lookup("names-of"), {"node": node}).dicts():
        names |= {row[k].value for k in ("fqn", "urn") if row.get(k) is not None}
    return names


def _linked_column(link: str) -> str | None:
    """The FQN of the column an OpenMetadata entity link names, or None; a name with a dot is quoted in
    an FQN, as OpenMetadata's ``FullyQualifiedName.quoteName`` quotes it.

    >>> _linked_column("<#E::table::s.d.x.orders::columns::email::tags>"), _linked_column("<#E::table::s.d.x.t>")
    ('s.d.x.orders.email', None)
    >>> _linked_column("<#E::table::s.d.x.t::columns::a.b>"), _linked_column('<#E::table::s.d.x.t::columns::"a.b">')
    ('s.d.x.t."a.b"', 's.d.x.t."a.b"')
    """
    named = re.fullmatch(ENTITY_LINK, link)  # the FQN as the mapping reads it (aboutFullyQualifiedName)
    rest = link[named.end(1):-1].split("::") if named else []  # "", "columns", NAME, …
    if len(rest) < 3 or rest[1] != "columns":
        return None
    fqn, name = named.group(1), rest[2]
    quoted = "." in name and not (len(name) > 1 and name[0] == name[-1] == '"')
    return f'{fqn}."{name}"' if quoted else f"{fqn}.{name}"


def _dropped(store: TripleStore, drops: set) -> str:
    """``; dropped from the schema at T by U[, …]`` of the events in ``drops``, in time order, or nothing:
    an empty answer about a dropped column said only that its table had no rows about it (ut47a #2)."""
    from changeprov.sparql.formats import display_text

    said = set()  # a DataHub drop is told by its MCL and its change event alike
    for event in drops:
        for r in store.select(lookup("event-time-user"), {"event": event}).dicts():
            user = r["user_name"].value if r.get("user_name") is not None else (
                user_name(r["agent"].value) if r.get("agent") is not None else "no user named")
            said.add((_instant(r["time"].value), f"{display_text(r['time'])} by {user}"))
    return "; dropped from the schema at " + ", at ".join(text for _, text in sorted(said)) if said else ""


