"""Parameter values: times, users, entities and tags resolved to the store's nodes (with suggestions
for a name not found), the other types checked, all bound by the engine (see query_files)."""

from __future__ import annotations

import datetime as _dt
import difflib
import re
import time
from decimal import Decimal
from typing import Mapping
from urllib.parse import unquote

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.mapping import terms
from changeprov.mapping.vocab import XSD_BOOLEAN, XSD_DECIMAL, XSD_INTEGER
from changeprov.sparql.formats import display_datetime, display_text
from changeprov.sparql.query_files import NamedQuery, ONE_OF, Param, get_query, lookup
from changeprov.sparql.stores import Rows, TripleStore

_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")  # a boolean parameter's words
OM_USER = "https://w3id.org/changeprov/id/om/user/"

def parse_time(value: str, *, end_of_day: bool = False, now_ms: int | None = None) -> ox.Literal:
    """ISO-8601 / RFC 3339, a bare date, epoch milliseconds or ``now`` → ``xsd:dateTime`` literal.

    Events are stamped in milliseconds: a finer start (``end_of_day`` false: since) is rounded up to
    the next millisecond, so that no event before it counts; a finer end (until, as_of) is cut.

    >>> parse_time("2024-03-05T12:00:00.0001Z").value, parse_time("2024-03-05T12:00:00.0001Z", end_of_day=True).value
    ('2024-03-05T12:00:00.001Z', '2024-03-05T12:00:00.000Z')
    >>> parse_time("2024-03-05T12:00+01:00").value
    '2024-03-05T11:00:00.000Z'
    >>> parse_time("2024-03-05 12:00:00Z").value
    '2024-03-05T12:00:00.000Z'
    """
    if not isinstance(value, str):  # run_query turns a date, datetime or int into text first (param_text)
        raise InputError(f"not a time: expected text (ISO-8601, a date, epoch ms or now), got {type(value).__name__}")
    v = value.strip()
    try:
        if v.lower() == "now":
            ms = now_ms if now_ms is not None else int(time.time() * 1000)
        elif re.fullmatch(r"-?[0-9]{1,40}", v):  # too many digits: the range message, not the format's
            ms = int(v)
            if 0 < ms < EPOCH_MS_FROM:
                raise InputError(_not_epoch_ms(v, ms))
        elif re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", v):
            ms = terms.rfc3339_to_ms(v + ("T23:59:59.999Z" if end_of_day else "T00:00:00Z"))
        else:
            # RFC 3339 allows a lower-case t and z (only those two letters change case), and a space
            # for the T (its section 5.6 note: "2024-03-05 12:00:00Z", as SQL and logs print times)
            t = v
            if re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[t ][0-9]", t):
                t = t[:10] + "T" + t[11:]
            if t.endswith("z"):
                t = t[:-1] + "Z"
            # ISO-8601 allows a time without seconds (RFC 3339 does not), with or without a zone
            hm = re.fullmatch(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?", t)
            if hm:
                t = hm.group(1) + ":00" + (hm.group(2) or "")
            if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?", t):
                t += "Z"  # no zone given: UTC
            ms = terms.rfc3339_to_ms(t)
            below_ms = re.search(r"\.[0-9]{3}([0-9]+)", t)
            if below_ms and not end_of_day and below_ms.group(1).strip("0"):
                ms = min(ms + 1, terms.MAX_MS)  # past the last millisecond: nothing is later anyway
        return terms.xsd_datetime(ms)
    except terms.BadTimestamp as exc:
        # every form taken (ut45e #10: "now" and a time without a zone were taken but not named), and
        # what is wrong in the value as given (ut48a #7: the text as rewritten, quoted a second time)
        raise InputError(f"not a time (ISO-8601 like 2024-03-05T12:00:00Z, or without a zone: UTC; a date; epoch ms; "
                         f"or now): {value[:80]!r}{_time_problem(str(exc))}") from None


def _time_problem(said: str) -> str:
    """What ``terms.rfc3339_to_ms`` found wrong, without its copy of the (rewritten) text.

    >>> _time_problem("not a valid date-time: '2024-13-01T23:59:59.999Z' (month must be in 1..12)")
    ' (month must be in 1..12)'
    >>> _time_problem("not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss[.f…](Z|±hh:mm)): 'tomorrow'")
    ''
    >>> _time_problem("epoch milliseconds out of range 0..253402300799999: huge")
    ': epoch milliseconds out of range 0..253402300799999: huge'
    """
    if said.startswith("not a valid date-time") and (m := re.search(r"\(([^()]*)\)$", said)):
        return f" ({m.group(1)})"
    if said.startswith("not a valid UTC offset"):
        return " (not a valid UTC offset)"
    if said.startswith("date-time out of range"):
        return " (out of range 1970-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z)"
    return "" if said.startswith("not an RFC 3339 date-time") else f": {said}"


EPOCH_MS_FROM = 100_000_000_000  # 1973-03-03 in epoch ms; smaller numbers are seconds or dates


def _not_epoch_ms(text: str, ms: int) -> str:
    """A number that, read as epoch ms, would mean the first years after 1970: say what it may be."""
    as_ms = terms.xsd_datetime(ms).value
    hint = f"a date? then {text[:4]}-{text[4:6]}-{text[6:]}" if len(text) == 8 else f"epoch seconds? then {text}000"
    return (f"{text!r} as epoch milliseconds is {as_ms}, before any change log; times are ISO-8601 "
            f"(2024-03-05, 2024-03-05T12:00:00Z) or epoch milliseconds ({hint}); 0 is taken, for the start of time")


def user_node(value: str) -> ox.NamedNode:
    """OpenMetadata userName → ``id:om/user/{S(name)}``; DataHub corpuser/corpGroup URN → the URN."""
    try:
        if value.lower().startswith("urn:"):
            return terms.urn_iri(value)
        return terms.named(OM_USER + terms.iri_safe(value))
    except terms.BadIdentifier as exc:
        raise InputError(f"not a user name or URN: {value[:80]!r} ({exc})") from None


def has_node(store: TripleStore, node: ox.NamedNode) -> bool:
    """Whether the store has ``node`` as a subject with a type (every node we mint is typed)."""
    return bool(store.select(lookup("typed-node"), {"iri": node}).rows)


def user_name(agent: str) -> str:
    """An agent IRI as a user types it: an OpenMetadata userName or the DataHub corpuser URN (``user_node``
    percent-encodes both: ut44c #6, the encoded URN was suggested, and refused when typed).

    >>> user_name("https://w3id.org/changeprov/id/om/user/jane%20doe"), user_name("urn:li:corpuser:odd%20%22u%22%2525")
    ('jane doe', 'urn:li:corpuser:odd "u"%25')
    """
    if agent.startswith(OM_USER):
        return unquote(agent.removeprefix(OM_USER))
    return unquote(agent) if agent[:4].lower() == "urn:" else agent


def resolve_user(store: TripleStore, value: str) -> ox.NamedNode:
    """The user node ``value`` names, if the store has it: a typo must not read as "changed nothing"."""
    node = user_node(value)
    if has_node(store, node):  # every user node is typed (prov:Agent)
        return node
    part = value.rsplit(":", 1)[-1].strip()
    like = store.select(lookup("agents-like"), {"part": ox.Literal(part)}).rows if part else []
    agents = [a.value for _part, a in like]
    similar = [user_name(a) for a in agents]
    hint = f"; users matching {part!r}: {', '.join(similar)}" if similar else ""
    if not similar:  # a typo inside the name (alice.wang): the closest names, by difflib's ratio
        # URNs compared by their last part: their shared prefix would make every corpuser look close
        every = [user_name(a.value) for (a,) in store.select(lookup("all-agents")).rows]
        close = _closest(part, every, n=5, cutoff=0.7,
                         key=lambda name: name.rsplit(":", 1)[-1])
        hint = f"; did you mean: {', '.join(close)}" if close else ""
    raise InputError(f"no user {value[:120]!r} in the store (an OpenMetadata userName or a DataHub "
                     f"corpuser URN){hint}")


#: a name column and the node column it names, in the named queries' results
NAME_OF = {"entity_name": "entity", "down_name": "down", "up_name": "up", "dependent_name": "dependent",
           "field_name": "field", "upstream_name": "upstream"}


def renamed_label(store: TripleStore, node: ox.NamedNode) -> str | None:
    """``CURRENT (formerly OLD, …)`` for an entity with several fullyQualifiedNames (renamed), the
    current one being its latest event's; None for an entity with one name or none."""
    names = sorted({r[1].value for r in store.select(lookup("node-names"), {"node": node}).rows if r[1] is not None})
    if len(names) < 2:
        return None
    current = _current_name(store, node) or names[-1]
    return f"{current} (formerly {', '.join(n for n in names if n != current)})"


def _renamed_shown_once(store: TripleStore, rows: Rows, *, at: str | None = None) -> Rows:
    """Rows whose name column joined a renamed entity's names (collect) show its current name and
    its former ones, so that two entities that swapped names still read apart (ut7b #5); with ``at``
    (a query's ``names-at:`` column of times), the name it had then (ut45a #1: a lineage event, which
    names its edge rather than its entity, showed a renamed table by its later name)."""
    pairs = [(rows.variables.index(name), rows.variables.index(node)) for name, node in NAME_OF.items()
             if name in rows.variables and node in rows.variables]
    if not pairs or not any(r[i] is not None and ", " in r[i].value for r in rows.rows for i, _ in pairs):
        return rows
    when = rows.variables.index(at) if at in rows.variables else None
    labels: dict = {}
    out = []
    for r in rows.rows:
        row = list(r)
        for i, j in pairs:
            if row[i] is not None and ", " in row[i].value and isinstance(row[j], ox.NamedNode):
                then = _name_at(store, row[j], row[when]) if when is not None and row[when] is not None else None
                if then is not None:
                    row[i] = ox.Literal(then)
                    continue
                if row[j] not in labels:
                    labels[row[j]] = renamed_label(store, row[j])
                if labels[row[j]]:
                    row[i] = ox.Literal(labels[row[j]])
        out.append(tuple(row))
    return Rows(rows.variables, out, rows.notes)


def _without_item(text: str, item: str) -> str:
    """``text`` (items joined by ", ") without the item ``item``, which may itself hold ", "."""
    if text == item:
        return ""
    if text.startswith(item + ", "):
        return text[len(item) + 2:]
    if text.endswith(", " + item):
        return text[:-len(item) - 2]
    return text.replace(", " + item + ", ", ", ", 1)


def _lineage_ends_named_once(store: TripleStore, rows: Rows) -> Rows:
    """A collected ``fields_changed`` whose lineage items name one renamed end of the row's event by each
    of its names ("+upstream s.d.x.old, +upstream s.d.x.new": one edge read as two, ut45a #2) keeps the
    name the end had at the row's ``time``. The ends are the event's own (a name a renamed entity gave
    up may name another one now: rv45 #1). Decided here, not in the queries: a per-row check of the names
    there made changes-by-user 3.5x slower for what only renamed entities need."""
    if not {"fields_changed", "time", "event"} <= set(rows.variables):
        return rows
    fi, ti, ei = (rows.variables.index(v) for v in ("fields_changed", "time", "event"))
    out = []
    for r in rows.rows:
        text = r[fi].value if r[fi] is not None else ""
        if text.count("upstream ") + text.count("downstream ") < 2 or r[ti] is None or not isinstance(r[ei], ox.NamedNode):
            out.append(r)
            continue
        names: dict[tuple, set[str]] = {}
        for row in store.select(lookup("event-ends"), {"event": r[ei]}).dicts():
            names.setdefault((row["node"], row["way"].value), set()).add(row["name"].value)
        for (node, way), known in names.items():
            then = _name_at(store, node, r[ti]) if len(known) > 1 else None
            if then is None:
                continue
            for sign in "+-":
                if f"{sign}{way} {then}" in text.split(", ") or (", " in then and f"{sign}{way} {then}" in text):
                    for other in sorted(known - {then}):
                        text = _without_item(text, f"{sign}{way} {other}")
        if r[fi] is not None and text != r[fi].value:
            r = (*r[:fi], ox.Literal(text), *r[fi + 1:])
        out.append(r)
    return Rows(rows.variables, out, rows.notes)


def _name_at(store: TripleStore, node: ox.NamedNode, at: ox.Literal) -> str | None:
    """The fullyQualifiedName an OpenMetadata entity's latest event at or before ``at`` gives it."""
    rows = store.select(lookup("name-at"), {"node": node, "at": at}).dicts()
    return rows[0]["name"].value if rows and rows[0]["name"] is not None else None


def _current_name(store: TripleStore, node: ox.NamedNode) -> str | None:
    """The fullyQualifiedName an OpenMetadata entity's latest event gives it (None: no event names it)."""
    rows = store.select(lookup("latest-name"), {"node": node}).rows
    return rows[0][1].value if rows and rows[0][1] is not None else None


def resolve_node(store: TripleStore, value: str, *, what: str = "entity",
                 notes: list[str] | None = None, at: ox.Literal | None = None) -> ox.NamedNode:
    """The one node an FQN / URN names (or the IRI itself, if the graph has it); InputError otherwise.

    An OpenMetadata entity dropped and re-created under its FQN is two entities (two ids): the FQN
    names the one not hard-deleted, and a line in ``notes`` says so and names the others. A name a
    renamed entity gave up names the entity that holds it now. With ``at`` (a query's as_of), the
    entity that held the name then, if one did: a question about the past is about that one."""
    if not value:
        raise InputError(f"empty {what}")
    rows = _raw(store, "resolve", {"key": value})
    nodes = sorted({r[rows.variables.index("node")] for r in rows.rows}, key=str)
    if len(nodes) > 1:
        # One OpenMetadata FQN can name two nodes: a glossary term (or classification tag) with events
        # of its own is an entity, and applying it as a tag makes a tag-reference node with the same
        # FQN. A tag parameter means the latter, an entity parameter the former.
        used = [n for n in nodes if store.select(lookup(f"used-as-{what}"), {"node": n}).rows]
        nodes = used if len(used) == 1 else nodes
    def only(picked: list[ox.NamedNode], others: str, answering: str, after: str = "") -> ox.NamedNode | None:
        """The one node picked, said in ``notes`` with the others; None unless exactly one."""
        if len(picked) != 1:
            return None
        rest = [n.value for n in nodes if n != picked[0]]
        if notes is not None:
            notes.append(f"{value[:120]!r} also named {len(rest)} {others}entit{'y' if len(rest) == 1 else 'ies'} "
                         f"({', '.join(rest[:5])}); answering for the one {answering}, {picked[0].value}{after}")
        return picked[0]

    if len(nodes) > 1 and what == "entity" and at is not None:
        held = [n for n in nodes if _name_at(store, n, at) == value]
        node = only(held, "other ", f"that held the name at {display_datetime(at.value)}")
        if node is not None:
            return node
    if len(nodes) > 1 and what == "entity":
        live = [n for n in nodes if not store.select(lookup("hard-deleted-node"), {"node": n}).rows]
        node = only(live, "hard-deleted ", "not deleted", "; pass an IRI for another")
        if node is not None:
            return node
    if len(nodes) > 1 and what == "entity":
        # a name a renamed entity once had: the entity whose last event names it holds it now
        now = {n: _current_name(store, n) for n in nodes}
        holders = [n for n in nodes if now[n] == value]
        if len(holders) == 1:
            others = [n for n in nodes if n != holders[0]]
            if notes is not None:
                notes.append(f"{value[:120]!r} also named {len(others)} other entit{'y' if len(others) == 1 else 'ies'} "
                             "before a rename (" + ", ".join(f"{n.value}, now {now[n] or 'unnamed'}" for n in others[:5])
                             + f"); answering for the one that holds the name now, {holders[0].value}")
            return holders[0]
        raise InputError(f"{what} {value[:120]!r} is ambiguous: "
                         + ", ".join(f"{n.value} (now {now[n] or 'unnamed'})" for n in nodes[:5])
                         + "; pass the IRI instead")
    if len(nodes) > 1:
        raise InputError(f"{what} {value[:120]!r} is ambiguous: {', '.join(n.value for n in nodes[:5])}; "
                         "pass the IRI instead")
    if nodes:
        return nodes[0]
    try:
        iri = ox.NamedNode(value)
    except ValueError:
        iri = None
    if iri is not None and ":" in value and has_node(store, iri):
        return iri
    hint = _close_tags(store, value) if what == "tag" else _close_entities(store, value) if what == "entity" else ""
    raise InputError(f"no {what} with fullyQualifiedName, URN or IRI {value[:120]!r} in the store{hint}")


#: above this many entities an unknown name gets a pointer to find-entity, not suggestions: each name
#: is read from the store to compare it (~30 µs a name: 1.5 s for 50,000)
SUGGEST_MAX_ENTITIES = 50_000


def _close_entities(store: TripleStore, value: str) -> str:
    """'; names containing …: …' (find-entity, any case) or '; did you mean: …' for an entity named
    in part, in another case or with a typo (ut22 M5: only users and tags had suggestions), else ''."""
    count = int(store.select(lookup("entity-count")).rows[0][0].value)
    if count > SUGGEST_MAX_ENTITIES:
        return (f"; to search the names of its {count:,} entities by a part, in any case: "
                f"changeprov query find-entity --param text=PART")
    found = [r[1].value for r in _raw(store, "find-entity", {"text": value}).rows]
    if found:
        return _containing(value, found, shown=5,
                           total=f"{len(found)}{'+' if len(found) == 200 else ''} in all: query find-entity")
    names = [n.value for (n,) in store.select(lookup("entity-names")).rows]
    # find-entity lists entities with events; a column has none, but can be queried (rv37 #7)
    part = sorted(n for n in names if value.lower() in n.lower())
    if part:
        return _containing(value, part, shown=5)
    close = _closest(value, names, n=3, cutoff=0.8)
    return f"; did you mean: {', '.join(close)}" if close else ""


def _containing(value: str, names: list[str], *, shown: int, total: str | None = None) -> str:
    """'; names containing …: a, b, … (N in all)': the first ``shown`` of ``names``."""
    more = f", … ({total or f'{len(names)} in all'})" if len(names) > shown else ""
    return f"; names containing {value[:80]!r}: {', '.join(names[:shown])}{more}"


def _closest(value: str, names: list[str], *, n: int, cutoff: float, key=lambda name: name) -> list[str]:
    """The ``names`` equal to ``value`` but for case, else difflib's closest (lower-cased), closest first;
    ``key``: the part of a name compared (a URN's last part). Users, tags and entities alike (mq1 #7:
    the users' own copy missed a typo in another case, ALICE.WANG)."""
    by_lower: dict[str, list[str]] = {}
    for name in names:
        by_lower.setdefault(key(name).lower(), []).append(name)
    return by_lower.get(value.lower()) or [
        name for k in difflib.get_close_matches(value.lower(), list(by_lower), n=n, cutoff=cutoff) for name in by_lower[k]]


def _close_tags(store: TripleStore, value: str) -> str:
    """'; names containing …' for a tag named in part (PII: ut25 #4), '; did you mean: …' for one named
    with another case (tier.tier2) or a typo, else ''."""
    names = [n.value for (n,) in store.select(lookup("all-tags")).rows if n is not None]
    same = sorted(n for n in names if n.lower() == value.lower())
    part = sorted(n for n in names if value.lower() in n.lower())
    if part and not same:
        return _containing(value, part, shown=8)
    close = _closest(value, names, n=5, cutoff=0.7)
    return f"; did you mean: {', '.join(sorted(close))}" if close else ""


def regex_literal(name: str, value: str) -> ox.Literal:
    """``value`` as a literal, if the SPARQL engine accepts it as a pattern (an invalid pattern is an
    evaluation error, which a FILTER turns into false, not into a message)."""
    term = ox.Literal(value)
    rows = list(ox.Store().query(lookup("regex-check"), substitutions={ox.Variable("pattern"): term}))
    if rows[0]["ok"] is None:
        raise InputError(f"parameter {name}: not a valid regular expression: {value[:80]!r}")
    return term


def convert(store: TripleStore, p: Param, value: str, *, now_ms: int | None = None,
            notes: list[str] | None = None, at: ox.Literal | None = None):
    t = p.type
    if t in ("entity", "tag"):
        return resolve_node(store, value, what=t, notes=notes, at=at if t == "entity" else None)
    if t == "user":
        return resolve_user(store, value)
    if t in ("time", "time-end"):
        return parse_time(value, end_of_day=(t == "time-end"), now_ms=now_ms)
    if t == "string":
        return ox.Literal(value)
    if t.startswith(ONE_OF):
        allowed = t[len(ONE_OF):].split("|")
        if value not in allowed:
            raise InputError(f"parameter {p.name}: {value[:80]!r} is not one of {', '.join(allowed)}")
        return ox.Literal(value)
    if t == "boolean":
        if value.strip().lower() not in _TRUE + _FALSE:
            raise InputError(f"parameter {p.name}: not a boolean (true, false, yes, no, 1 or 0): {value[:80]!r}")
        return ox.Literal("true" if value.strip().lower() in _TRUE else "false", datatype=XSD_BOOLEAN)
    if t == "regex":
        return regex_literal(p.name, value)
    if t == "decimal":
        # a decimal as people and xsd:decimal write it: Python's Decimal also read "1_0" as 10 and
        # "1e1" as 10 (ut46a #7)
        if not re.fullmatch(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)", value.strip()):
            raise InputError(f"parameter {p.name}: not a decimal number (such as 1.2): {value[:80]!r}")
        d = Decimal(value.strip())
        return ox.Literal(format(d, "f"), datatype=XSD_DECIMAL)
    if t == "integer":
        if not re.fullmatch(r"[+-]?[0-9]{1,18}", value.strip()):
            raise InputError(f"parameter {p.name}: not an integer: {value[:80]!r}")
        return ox.Literal(str(int(value)), datatype=XSD_INTEGER)
    if t == "iri":
        try:
            return ox.NamedNode(value)
        except ValueError as exc:
            raise InputError(f"parameter {p.name}: not an IRI: {value[:80]!r} ({exc})") from None
    raise InputError(f"parameter {p.name}: unsupported type {t}")  # pragma: no cover


def param_text(p: Param, value: object) -> str:
    """A parameter value given as a Python object, in the text the command line would take: a datetime
    (naive = UTC, as a time without zone is) or date, an int of epoch ms, a bool, a number."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate; from the command line, bytes not UTF-8
            raise InputError(f"parameter {p.name}: not valid text: {exc.object[exc.start]!r} at position "
                             f"{exc.start} is no Unicode character (bytes that are not UTF-8?)") from None
        return value
    # an answer's term passed back (asset, entity, event columns): as the command line would take it
    if isinstance(value, ox.NamedNode) and p.type in ("entity", "tag", "user", "iri"):
        return value.value
    if isinstance(value, ox.Literal):
        return value.value
    if isinstance(value, bool) and p.type == "boolean":
        return "true" if value else "false"
    timed = p.type in ("time", "time-end")
    if isinstance(value, _dt.datetime) and timed:
        try:
            if value.tzinfo is not None:
                value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        except OverflowError:
            raise InputError(f"parameter {p.name}: {value} is out of range in UTC") from None
        return value.isoformat(timespec="microseconds") + "Z"  # parse_time rounds a start up (ut40c #3)
    if isinstance(value, _dt.date) and timed:
        return value.isoformat()
    if isinstance(value, int) and not isinstance(value, bool) and p.type in ("time", "time-end", "decimal", "integer"):
        try:
            return str(value)
        except ValueError:  # more digits than Python turns into text
            raise InputError(f"parameter {p.name}: an int of more than 4300 digits is out of range") from None
    if isinstance(value, (Decimal, float)) and p.type == "decimal":
        return str(value)
    raise InputError(f"parameter {p.name}: expected a string{TYPE_HINTS.get(p.type, '')}, got {type(value).__name__}")


#: what else a parameter of a type takes from Python (``param_text``)
TYPE_HINTS = {"time": ", datetime, date or epoch ms (int)", "time-end": ", datetime, date or epoch ms (int)",
              "boolean": " or bool", "decimal": " or number", "integer": " or int",
              **{t: " or NamedNode" for t in ("entity", "tag", "user", "iri")}}


def bind_params(store: TripleStore, q: NamedQuery, values: Mapping[str, object], *,
                now_ms: int | None = None, notes: list[str] | None = None) -> dict[str, ox.NamedNode | ox.Literal]:
    unknown = sorted(set(values) - {p.name for p in q.params})
    if unknown:
        known = ", ".join(p.name for p in q.params) or "none"
        raise InputError(f"query {q.name}: unknown parameter(s) {', '.join(unknown)} (parameters: {known})")
    bound = {}
    # names last: an entity is looked up as of the query's as_of, when it has one
    for p in sorted(q.params, key=lambda p: p.type in ("entity", "tag")):
        value = values.get(p.name)
        if value is None:  # None is "not given" in Python: the default applies (rv36 #2)
            value = p.default
        if value is None:
            if p.required:
                raise InputError(f"query {q.name}: missing required parameter {p.name} ({p.type}: {p.description})")
            continue
        text = param_text(p, value)
        if p.required and p.type in ("string", "regex") and not text.strip():
            # ut48a #8: text= (an unset shell variable?) listed every entity; other types say what is wrong
            raise InputError(f"query {q.name}: required parameter {p.name} is empty ({p.type}: {p.description})")
        try:
            bound[p.name] = convert(store, p, text, now_ms=now_ms, notes=notes,
                                    at=bound.get("as_of") if values.get("as_of") is not None else None)
        except InputError as exc:  # a time's message says what is wrong, not which parameter (ut19 #3)
            if p.type not in ("time", "time-end"):
                raise
            raise InputError(f"parameter {p.name}: {exc}") from None
    _check_window(bound)
    return bound


def _check_window(bound: Mapping[str, ox.NamedNode | ox.Literal]) -> None:
    """An empty window is a typo, not a question: since after until answers nothing, silently."""
    since, until = bound.get("since"), bound.get("until")
    if isinstance(since, ox.Literal) and isinstance(until, ox.Literal) \
            and since.datatype == until.datatype == terms.XSD_DATETIME \
            and terms.rfc3339_to_ms(since.value) > terms.rfc3339_to_ms(until.value):
        raise InputError(f"since ({display_text(since)}) is after until ({display_text(until)})")


def _raw(store: TripleStore, name: str, values: Mapping[str, object]) -> Rows:
    """A bundled query's rows as the engine gives them (its parameters bound: no driver, no notes)."""
    q = get_query(name)
    return store.select(q.text, bind_params(store, q, values))


def parse_param_args(items: list[str] | None) -> dict[str, str]:
    """``--param k=v`` items → dict (a repeated key is an error)."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--param needs NAME=VALUE, got {item[:80]!r}")
        if key in out:
            raise InputError(f"--param {key} given twice")
        out[key] = value
    return out


