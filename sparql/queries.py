"""Named queries (``sparql/queries/NAME.rq``): header parsing, typed parameters, engine binding, drivers.

Each ``.rq`` file starts with a comment header that :func:`parse_header` reads::

    # summary: one line saying what the query answers
    # param: NAME TYPE required|optional[=DEFAULT]  description
    # returns: the columns
    # collect: COLUMN          (optional: rows differing only in COLUMN are merged, values joined)
    # driver: KIND [ARGS]      (optional: Python that runs the query, e.g. as the step of a breadth-first search)
    # if-empty: CHECK...       (optional: checks that explain an empty answer in a note, see EMPTY_CHECKS)
    # if-rows: CHECK...        (optional: checks that explain a non-empty answer in a note, see ROW_CHECKS)
    # column-field: COLUMN     (optional: of a column, its own rows and its table's answer, only the rows
    #                           whose COLUMN names a field change about, adding or dropping the column)
    # any other comment line is free documentation

Parameter TYPEs: ``entity`` and ``tag`` (an OpenMetadata FQN or a DataHub URN, resolved to the node
through ``om-event:fullyQualifiedName`` / ``om-event:urn``, or an IRI that is in the graph),
``user`` (OpenMetadata userName or DataHub corpuser URN → the agent IRI of docs/model.md), ``time``
and ``time-end`` (ISO-8601, epoch ms or now → ``xsd:dateTime``; a bare date is its start resp. its end),
``string``, ``regex`` (a string that must be a valid SPARQL ``REGEX`` pattern: an invalid one would
make every ``FILTER`` using it false, i.e. silently match nothing), ``decimal``, ``integer``, ``iri``,
``boolean`` (true/false, yes/no, 1/0) and ``one-of:A|B|…`` (one of the listed words).

The SPARQL variable of a parameter has the parameter's name and is bound by the engine (pyoxigraph
``substitutions``, rdflib ``initBindings``, or a ``VALUES`` block at each ``#@bindings`` marker line for a
remote endpoint) — values never become query text. pyoxigraph requires a substituted variable in the
SELECT projection, so every named query projects its parameters; they are dropped from the output.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Iterator, Mapping
from urllib.parse import unquote

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.mapping import terms
from changeprov.mapping.vocab import OM_EVENT, XSD_BOOLEAN, XSD_DECIMAL, XSD_INTEGER
from changeprov.sparql.formats import display_text, display_value
from changeprov.sparql.stores import Rows, TripleStore, query_form, refuse_service
from changeprov.sparql.lexer import blank

OM_USER = "https://w3id.org/changeprov/id/om/user/"

PARAM_TYPES = ("entity", "tag", "user", "time", "time-end", "string", "regex", "decimal", "integer", "iri", "boolean")
#: a parameter whose values are listed in its type: ``one-of:input|output``
ONE_OF = "one-of:"
#: the prologue of the lookups kept here as Python strings (each one vetted by tests/test_ontology.py)
OM_PREFIX = f"PREFIX om: <{OM_EVENT}>\n"
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    required: bool
    default: str | None
    description: str


@dataclass
class NamedQuery:
    name: str
    text: str
    summary: str = ""
    params: list[Param] = field(default_factory=list)
    returns: str = ""
    collect: list[str] = field(default_factory=list)
    driver: str | None = None
    if_empty: list[str] = field(default_factory=list)
    if_rows: list[str] = field(default_factory=list)
    column_field: str | None = None
    notes: list[str] = field(default_factory=list)
    path: Path | None = None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def parse_header(name: str, text: str, path: Path | None = None) -> NamedQuery:
    """Read the comment header of a query (see the module docstring)."""
    q = NamedQuery(name=name, text=text, path=path)
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("#") or line == "#@bindings":
            break
        body = line[1:].strip()
        key, sep, value = body.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep or " " in key:
            q.notes.append(body)
        elif key == "summary":
            q.summary = value
        elif key == "returns":
            q.returns = value
        elif key == "collect":
            q.collect = value.replace(",", " ").split()
        elif key == "driver":
            q.driver = value
        elif key == "if-empty":
            q.if_empty = value.split()
        elif key == "if-rows":
            q.if_rows = value.split()
        elif key == "column-field":
            q.column_field = value.split()[0]
        elif key == "param":
            parts = value.split(None, 3)
            if len(parts) < 3:
                raise InputError(f"{name}: bad param line {line!r} (want: # param: NAME TYPE required|optional[=DEFAULT] text)")
            pname, ptype, flag = parts[:3]
            if not _NAME.match(pname):
                raise InputError(f"{name}: bad parameter name {pname!r}")
            if ptype not in PARAM_TYPES and not (ptype.startswith(ONE_OF) and all(ptype[len(ONE_OF):].split("|"))):
                raise InputError(f"{name}: parameter {pname} has unknown type {ptype!r} "
                                 f"(one of {', '.join(PARAM_TYPES)}, or {ONE_OF}A|B|…)")
            flag, _, default = flag.partition("=")
            if flag not in ("required", "optional"):
                raise InputError(f"{name}: parameter {pname} must be 'required' or 'optional', got {flag!r}")
            q.params.append(Param(pname, ptype, flag == "required", default or None,
                                  parts[3] if len(parts) > 3 else ""))
        else:
            q.notes.append(body)
    if q.driver and q.driver.split()[0] not in DRIVERS:
        raise InputError(f"{name}: unknown driver {q.driver!r}")
    for check in q.if_empty:
        if check not in EMPTY_CHECKS:
            raise InputError(f"{name}: unknown if-empty check {check!r}")
    for check in q.if_rows:
        if check not in ROW_CHECKS:
            raise InputError(f"{name}: unknown if-rows check {check!r}")
    code = blank(text)  # the query's words: no string, IRI or comment
    unused = [p.name for p in q.params if not _uses(code, p.name)]
    if unused and not q.driver:  # a driver's own parameters (jobs=) are its business
        raise InputError(f"{name}: parameter(s) {', '.join('?' + n for n in unused)} declared in the header but "
                         "not used by the query")
    try:
        select = query_form(text) == "SELECT"  # an ASK or CONSTRUCT takes any (a VALUES block: stores.EmbeddedStore)
    except InputError:  # not a query: the engine says what is wrong with it
        select = False
    unprojected = [p.name for p in q.params if select and _uses(code, p.name) and not _projected(code, p.name)]
    if unprojected:  # pyoxigraph binds only projected variables (ut22 M4: its own words were the error)
        raise InputError(f"{name}: parameter(s) {', '.join('?' + n for n in unprojected)} must be in the SELECT "
                         "list (SELECT ?since ?x WHERE …): the engine binds only variables the query returns, "
                         "and the answer leaves parameter columns out")
    hidden = [p.name for p in q.params if _hidden_in_subselect(code, p.name)]
    if hidden:  # substituted in the outer query only, it is unbound there: all rows, silently
        raise InputError(f"{name}: a sub-select uses parameter(s) {', '.join('?' + n for n in hidden)} without "
                         "returning them (SELECT ?since ?x WHERE { … } inside): the engine binds a sub-select's "
                         "variables only through what it returns")
    return q


def _uses(code: str, name: str) -> bool:
    return re.search(rf"[?$]{re.escape(name)}\b", code) is not None


def _hidden_in_subselect(code: str, name: str) -> bool:
    """Whether a sub-select's group in ``code`` (a query without strings, IRIs and comments) uses
    ``?name`` that its SELECT list does not return.

    >>> _hidden_in_subselect("SELECT ?s WHERE { { SELECT ?e WHERE { ?e ?p ?t FILTER(?t > ?s) } } }", "s")
    True
    >>> _hidden_in_subselect("SELECT ?s WHERE { { SELECT ?e ?s WHERE { ?e ?p ?t FILTER(?t > ?s) } } }", "s")
    False
    """
    selects = list(re.finditer(r"(?<![:\w])SELECT\b", code, re.IGNORECASE))
    for m in selects[1:]:  # the outer one is _projected's
        returned = _select_vars(code[m.end():])
        if returned is None or name in returned:
            continue
        start = code.find("{", m.end())
        depth, end = 0, len(code)
        for i in range(start, len(code)):  # its group: to the brace that closes it
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                end = i
                break
        if start >= 0 and _uses(code[start:end], name):
            return True
    return False


def _projected(code: str, name: str) -> bool:
    """Whether the outer SELECT's list in ``code`` (a SELECT query without its strings, IRIs and
    comments) returns ``?name``, or is ``*``.

    >>> projected = lambda query, name: _projected(blank(query), name)
    >>> projected("# x\\nSELECT ?a (COUNT(?b) AS ?n) WHERE { ?a ?p ?b }", "a"), projected("SELECT ?a { ?a ?p ?b }", "b")
    (True, False)
    >>> projected('SELECT (CONCAT("{", ?t) AS ?s) ?b WHERE { ?a ?p ?b }', "b")  # a brace in a string
    True
    >>> projected("SELECT ?a # ?b\\n(?b * 2 AS ?m) WHERE { ?a ?p ?b }", "b")  # a comment, a product
    False
    >>> projected("SELECT (EXISTS { ?a ?p ?o } AS ?e) ?b WHERE { ?a ?p ?b FILTER(?a<?b&&?b>0) }", "b")
    True
    """
    m = re.search(r"(?<![:\w])SELECT\b", code, re.IGNORECASE)
    returned = _select_vars(code[m.end():]) if m else None
    return returned is None or name in returned


def _select_vars(rest: str) -> set[str] | None:
    """The variables the SELECT list at the start of ``rest`` returns: ``?v`` and ``(… AS ?v)``, not
    those inside an expression; None for ``*``. The list ends at its WHERE or its group's "{" outside
    parentheses (an EXISTS { … } in an expression belongs to it: rv38 #4).

    >>> sorted(_select_vars("?a (COUNT(?b) AS ?n) (?c * 2 AS ?d) (EXISTS { ?e ?p ?o } AS ?f) WHERE { ?g }"))
    ['a', 'd', 'f', 'n']
    >>> sorted(_select_vars("(EXISTS { SELECT ?x WHERE { ?x ?p ?o } } AS ?any) (ex:where(?y) AS ?w) ?z { }"))
    ['any', 'w', 'z']
    >>> _select_vars(" DISTINCT * { ?a ?p ?o }") is None
    True
    """
    out, depth, alias = set(), 0, False
    for m in re.finditer(r"\(|\)|\{|(?<![:\w])WHERE\b|[?$]\w+|\bAS\b|\*", rest, re.IGNORECASE):
        token = m.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif token == "{" or token.upper() == "WHERE":
            if depth == 0:  # inside an expression: an EXISTS { SELECT … WHERE … } (rv39 #3)
                break
        elif token == "*":
            if depth == 0:
                return None
        elif token.upper() == "AS":
            alias = depth == 1
        else:
            if depth == 0 or alias:
                out.add(token[1:])
            alias = False
    return out


def _queries_dir():
    return resources.files("changeprov.sparql").joinpath("queries")


def list_queries() -> list[NamedQuery]:
    """Every bundled named query, sorted by name."""
    out = []
    for entry in sorted(_queries_dir().iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".rq"):
            out.append(parse_header(entry.name[:-3], entry.read_text("utf-8")))
    return out


def get_query(name: str) -> NamedQuery:
    # bounded: a name longer than a file name can be made the OS refuses (rv40 m3)
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,99}", name or ""):
        raise InputError(f"unknown query {name[:120]!r} (see `changeprov query --list`, or list_queries())")
    entry = _queries_dir().joinpath(name + ".rq")
    if not entry.is_file():
        known = ", ".join(q.name for q in list_queries())
        raise InputError(f"unknown query {name!r}; known: {known}")
    return parse_header(name, entry.read_text("utf-8"))


def load_query_file(path: str | Path) -> NamedQuery:
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read query file {p}: {exc}") from None
    return parse_header(p.stem, text, p)


# ----------------------------------------------------------------------------- parameter values


def parse_time(value: str, *, end_of_day: bool = False, now_ms: int | None = None) -> ox.Literal:
    """ISO-8601 / RFC 3339, a bare date, epoch milliseconds or ``now`` → ``xsd:dateTime`` literal."""
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
            t = v  # RFC 3339 allows a lower-case t and z; only those two letters change case
            if re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}t", t):
                t = t[:10] + "T" + t[11:]
            if t.endswith("z"):
                t = t[:-1] + "Z"
            if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}", t):
                t += ":00"
            if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?", t):
                t += "Z"  # no zone given: UTC
            ms = terms.rfc3339_to_ms(t)
        return terms.xsd_datetime(ms)
    except terms.BadTimestamp as exc:
        raise InputError(f"not a time (ISO-8601 like 2024-03-05T12:00:00Z, a date, or epoch ms): {value[:80]!r}: {exc}") from None


EPOCH_MS_FROM = 100_000_000_000  # 1973-03-03 in epoch ms; smaller numbers are seconds or dates


def _not_epoch_ms(text: str, ms: int) -> str:
    """A number that, read as epoch ms, would mean the first years after 1970: say what it may be."""
    as_ms = terms.xsd_datetime(ms).value
    hint = f"a date? then {text[:4]}-{text[4:6]}-{text[6:]}" if len(text) == 8 else f"epoch seconds? then {text}000"
    return (f"{text!r} as epoch milliseconds is {as_ms}, before any change log; times are ISO-8601 "
            f"(2024-03-05, 2024-03-05T12:00:00Z) or epoch milliseconds ({hint})")


def user_node(value: str) -> ox.NamedNode:
    """OpenMetadata userName → ``id:om/user/{S(name)}``; DataHub corpuser/corpGroup URN → the URN."""
    try:
        if value.lower().startswith("urn:"):
            return terms.urn_iri(value)
        return terms.named(OM_USER + terms.iri_safe(value))
    except terms.BadIdentifier as exc:
        raise InputError(f"not a user name or URN: {value[:80]!r} ({exc})") from None


_IRI_CHECK = "SELECT ?iri ?t WHERE {\n#@bindings\n?iri a ?t\n} LIMIT 1\n"


def has_node(store: TripleStore, node: ox.NamedNode) -> bool:
    """Whether the store has ``node`` as a subject with a type (every node we mint is typed)."""
    return bool(store.select(_IRI_CHECK, {"iri": node}).rows)
_AGENTS_LIKE = (OM_PREFIX +
                "SELECT DISTINCT ?part ?agent WHERE {\n#@bindings\n?event om:performedBy ?agent\n"
                "FILTER(CONTAINS(LCASE(STR(?agent)), LCASE(?part)))\n} ORDER BY ?agent LIMIT 5\n")


def user_name(agent: str) -> str:
    """An agent IRI as a user types it: an OpenMetadata userName (``user_node`` percent-encodes it)
    or the DataHub corpuser URN.

    >>> user_name("https://w3id.org/changeprov/id/om/user/jane%20doe"), user_name("urn:li:corpuser:bob")
    ('jane doe', 'urn:li:corpuser:bob')
    """
    return unquote(agent.removeprefix(OM_USER)) if agent.startswith(OM_USER) else agent


_ALL_AGENTS = ("PREFIX prov: <http://www.w3.org/ns/prov#>\n"
               "SELECT DISTINCT ?agent WHERE { ?agent a prov:Agent } LIMIT 200000\n")


def resolve_user(store: TripleStore, value: str) -> ox.NamedNode:
    """The user node ``value`` names, if the store has it: a typo must not read as "changed nothing"."""
    node = user_node(value)
    if has_node(store, node):  # every user node is typed (prov:Agent)
        return node
    part = value.rsplit(":", 1)[-1].strip()
    agents = [a.value for _part, a in store.select(_AGENTS_LIKE, {"part": ox.Literal(part)}).rows] if part else []
    similar = [user_name(a) for a in agents]
    hint = f"; users matching {part!r}: {', '.join(similar)}" if similar else ""
    if not similar:  # a typo inside the name (alice.wang): the closest names, by difflib's ratio
        # URNs compared by their last part: their shared prefix would make every corpuser look close
        close = _closest(part, [user_name(a.value) for (a,) in store.select(_ALL_AGENTS).rows], n=5, cutoff=0.7,
                         key=lambda name: name.rsplit(":", 1)[-1])
        hint = f"; did you mean: {', '.join(close)}" if close else ""
    raise InputError(f"no user {value[:120]!r} in the store (an OpenMetadata userName or a DataHub "
                     f"corpuser URN){hint}")


_USE_CHECK = {  # how a node is used as what the parameter names
    "entity": OM_PREFIX +
              "SELECT ?node WHERE {\n#@bindings\n?event om:affectsEntity|om:cascadesTo ?node\n} LIMIT 1\n",
    "tag": OM_PREFIX +
           "SELECT ?node WHERE {\n#@bindings\n?fc ?rel ?node\nVALUES ?rel { om:addedTag om:removedTag "
           "om:addedGlossaryTerm om:removedGlossaryTerm }\n} LIMIT 1\n",
}


_HARD_DELETED = (OM_PREFIX +
                 "SELECT ?node WHERE {\n#@bindings\n?event om:affectsEntity|om:cascadesTo ?node\n"
                 "FILTER EXISTS { ?event om:lifecycleChange om:HardDeleted }\n} LIMIT 1\n")


#: a name column and the node column it names, in the named queries' results
NAME_OF = {"entity_name": "entity", "down_name": "down", "up_name": "up", "dependent_name": "dependent",
           "field_name": "field", "upstream_name": "upstream"}
_NAMES = (OM_PREFIX +
          "SELECT ?node ?name WHERE {\n#@bindings\n?node om:fullyQualifiedName ?name }")


def renamed_label(store: TripleStore, node: ox.NamedNode) -> str | None:
    """``CURRENT (formerly OLD, …)`` for an entity with several fullyQualifiedNames (renamed), the
    current one being its latest event's; None for an entity with one name or none."""
    names = sorted({r[1].value for r in store.select(_NAMES, {"node": node}).rows if r[1] is not None})
    if len(names) < 2:
        return None
    current = _current_name(store, node) or names[-1]
    return f"{current} (formerly {', '.join(n for n in names if n != current)})"


def _renamed_shown_once(store: TripleStore, rows: Rows) -> Rows:
    """Rows whose name column joined a renamed entity's names (collect) show its current name and
    its former ones, so that two entities that swapped names still read apart (ut7b #5)."""
    pairs = [(rows.variables.index(name), rows.variables.index(node)) for name, node in NAME_OF.items()
             if name in rows.variables and node in rows.variables]
    if not pairs or not any(r[i] is not None and ", " in r[i].value for r in rows.rows for i, _ in pairs):
        return rows
    labels: dict = {}
    out = []
    for r in rows.rows:
        row = list(r)
        for i, j in pairs:
            if row[i] is not None and ", " in row[i].value and isinstance(row[j], ox.NamedNode):
                if row[j] not in labels:
                    labels[row[j]] = renamed_label(store, row[j])
                if labels[row[j]]:
                    row[i] = ox.Literal(labels[row[j]])
        out.append(tuple(row))
    return Rows(rows.variables, out, rows.notes)


_LATEST_NAME = (OM_PREFIX +
                "SELECT ?node ?name WHERE {\n#@bindings\n"
                "?event om:affectsEntity ?node ; om:entityFullyQualifiedName ?name ; om:timestamp ?t .\n"
                "?node om:fullyQualifiedName ?name\n"  # not a lineage event's name of its edge
                "} ORDER BY DESC(?t) DESC(STR(?event)) LIMIT 1\n")


def _current_name(store: TripleStore, node: ox.NamedNode) -> str | None:
    """The fullyQualifiedName an OpenMetadata entity's latest event gives it (None: no event names it)."""
    rows = store.select(_LATEST_NAME, {"node": node}).rows
    return rows[0][1].value if rows and rows[0][1] is not None else None


def resolve_node(store: TripleStore, value: str, *, what: str = "entity",
                 notes: list[str] | None = None) -> ox.NamedNode:
    """The one node an FQN / URN names (or the IRI itself, if the graph has it); InputError otherwise.

    An OpenMetadata entity dropped and re-created under its FQN is two entities (two ids): the FQN
    names the one not hard-deleted, and a line in ``notes`` says so and names the others."""
    if not value:
        raise InputError(f"empty {what}")
    rows = run_query(store, get_query("resolve"), {"key": value}, raw=True)
    nodes = sorted({r[rows.variables.index("node")] for r in rows.rows}, key=str)
    if len(nodes) > 1:
        # One OpenMetadata FQN can name two nodes: a glossary term (or classification tag) with events
        # of its own is an entity, and applying it as a tag makes a tag-reference node with the same
        # FQN. A tag parameter means the latter, an entity parameter the former.
        used = [n for n in nodes if store.select(_USE_CHECK[what], {"node": n}).rows]
        nodes = used if len(used) == 1 else nodes
    if len(nodes) > 1 and what == "entity":
        live = [n for n in nodes if not store.select(_HARD_DELETED, {"node": n}).rows]
        if len(live) == 1:
            others = [n.value for n in nodes if n != live[0]]
            if notes is not None:
                notes.append(f"{value[:120]!r} also named {len(others)} hard-deleted "
                             f"entit{'y' if len(others) == 1 else 'ies'} ({', '.join(others[:5])}); "
                             f"answering for the one not deleted, {live[0].value}; pass an IRI for another")
            return live[0]
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


_ENTITY_NAMES = (OM_PREFIX +
                 "SELECT DISTINCT ?name WHERE { ?entity a om:MetadataEntity ; om:fullyQualifiedName|om:urn ?name }\n")
_ENTITY_COUNT = (OM_PREFIX +
                 "SELECT (COUNT(*) AS ?n) WHERE { ?entity a om:MetadataEntity }\n")
#: above this many entities an unknown name gets a pointer to find-entity, not suggestions: each name
#: is read from the store to compare it (~30 µs a name: 1.5 s for 50,000)
SUGGEST_MAX_ENTITIES = 50_000


def _close_entities(store: TripleStore, value: str) -> str:
    """'; names containing …: …' (find-entity, any case) or '; did you mean: …' for an entity named
    in part, in another case or with a typo (ut22 M5: only users and tags had suggestions), else ''."""
    count = int(store.select(_ENTITY_COUNT).rows[0][0].value)
    if count > SUGGEST_MAX_ENTITIES:
        return (f"; to search the names of its {count:,} entities by a part, in any case: "
                f"changeprov query find-entity --param text=PART")
    found = [r[1].value for r in run_query(store, "find-entity", {"text": value}, raw=True).rows]
    if found:
        more = f", … ({len(found)}{'+' if len(found) == 200 else ''} in all: query find-entity)" if len(found) > 5 else ""
        return f"; names containing {value[:80]!r}: {', '.join(found[:5])}{more}"
    names = [n.value for (n,) in store.select(_ENTITY_NAMES).rows]
    # find-entity lists entities with events; a column has none, but can be queried (rv37 #7)
    part = sorted(n for n in names if value.lower() in n.lower())
    if part:
        more = f", … ({len(part)} in all)" if len(part) > 5 else ""
        return f"; names containing {value[:80]!r}: {', '.join(part[:5])}{more}"
    close = _closest(value, names, n=3, cutoff=0.8)
    return f"; did you mean: {', '.join(close)}" if close else ""


def _closest(value: str, names: list[str], *, n: int, cutoff: float, key=lambda name: name) -> list[str]:
    """The ``names`` equal to ``value`` but for case, else difflib's closest (lower-cased), closest first;
    ``key``: the part of a name compared (a URN's last part). Users, tags and entities alike (mq1 #7:
    the users' own copy missed a typo in another case, ALICE.WANG)."""
    by_lower: dict[str, list[str]] = {}
    for name in names:
        by_lower.setdefault(key(name).lower(), []).append(name)
    return by_lower.get(value.lower()) or [
        name for k in difflib.get_close_matches(value.lower(), list(by_lower), n=n, cutoff=cutoff) for name in by_lower[k]]


_ALL_TAGS = (OM_PREFIX +
             "SELECT DISTINCT ?name WHERE { VALUES ?c { om:Tag om:GlossaryTerm } ?tag a ?c .\n"
             "?tag om:fullyQualifiedName|om:urn ?name } LIMIT 200000\n")


def _close_tags(store: TripleStore, value: str) -> str:
    """'; did you mean: …' for a tag named with another case (tier.tier2) or a typo, else ''."""
    close = _closest(value, [n.value for (n,) in store.select(_ALL_TAGS).rows if n is not None], n=5, cutoff=0.7)
    return f"; did you mean: {', '.join(sorted(close))}" if close else ""


_REGEX_CHECK = 'SELECT ?pattern ?ok WHERE { BIND(REGEX("", ?pattern, "i") AS ?ok) }'


def regex_literal(name: str, value: str) -> ox.Literal:
    """``value`` as a literal, if the SPARQL engine accepts it as a pattern (an invalid pattern is an
    evaluation error, which a FILTER turns into false, not into a message)."""
    term = ox.Literal(value)
    rows = list(ox.Store().query(_REGEX_CHECK, substitutions={ox.Variable("pattern"): term}))
    if rows[0]["ok"] is None:
        raise InputError(f"parameter {name}: not a valid regular expression: {value[:80]!r}")
    return term


def convert(store: TripleStore, p: Param, value: str, *, now_ms: int | None = None,
            notes: list[str] | None = None):
    t = p.type
    if t in ("entity", "tag"):
        return resolve_node(store, value, what=t, notes=notes)
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
            raise InputError(f"parameter {p.name}: not a boolean (true or false): {value[:80]!r}")
        return ox.Literal("true" if value.strip().lower() in _TRUE else "false", datatype=XSD_BOOLEAN)
    if t == "regex":
        return regex_literal(p.name, value)
    if t == "decimal":
        try:
            d = Decimal(value.strip())
            if not d.is_finite():
                raise InvalidOperation
        except (InvalidOperation, ValueError):
            raise InputError(f"parameter {p.name}: not a decimal number: {value[:80]!r}") from None
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


def _as_text(p: Param, value: object) -> str:
    """A parameter value given as a Python object, in the text the command line would take: a datetime
    (naive = UTC, as a time without zone is) or date, an int of epoch ms, a bool, a number."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate; from the command line, bytes not UTF-8
            raise InputError(f"parameter {p.name}: not valid text: {exc.object[exc.start]!r} at position "
                             f"{exc.start} is no Unicode character (bytes that are not UTF-8?)") from None
        return value
    if isinstance(value, bool) and p.type == "boolean":
        return "true" if value else "false"
    timed = p.type in ("time", "time-end")
    if isinstance(value, _dt.datetime) and timed:
        try:
            if value.tzinfo is not None:
                value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        except OverflowError:
            raise InputError(f"parameter {p.name}: {value} is out of range in UTC") from None
        return value.isoformat(timespec="milliseconds") + "Z"
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


#: what else a parameter of a type takes from Python (``_as_text``)
TYPE_HINTS = {"time": ", datetime, date or epoch ms (int)", "time-end": ", datetime, date or epoch ms (int)",
              "boolean": " or bool", "decimal": " or number", "integer": " or int"}


def bind_params(store: TripleStore, q: NamedQuery, values: Mapping[str, object], *,
                now_ms: int | None = None, notes: list[str] | None = None) -> dict[str, ox.NamedNode | ox.Literal]:
    unknown = sorted(set(values) - {p.name for p in q.params})
    if unknown:
        known = ", ".join(p.name for p in q.params) or "none"
        raise InputError(f"query {q.name}: unknown parameter(s) {', '.join(unknown)} (parameters: {known})")
    bound = {}
    for p in q.params:
        value = values.get(p.name)
        if value is None:  # None is "not given" in Python: the default applies (rv36 #2)
            value = p.default
        if value is None:
            if p.required:
                raise InputError(f"query {q.name}: missing required parameter {p.name} ({p.type}: {p.description})")
            continue
        text = _as_text(p, value)
        try:
            bound[p.name] = convert(store, p, text, now_ms=now_ms, notes=notes)
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


# ----------------------------------------------------------------------------- running


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
    q, bound, notes = _prepared(store, q, values, allow_service=allow_service, now_ms=now_ms)
    if raw:
        return store.select(q.text, bound)
    rows = _answer(store, q, bound)
    of_column = bool(q.column_field and isinstance(bound.get("entity"), ox.NamedNode)
                     and store.ask(_IS_COLUMN, {"entity": bound["entity"]}))
    if of_column:  # its own note says why it is empty, if it is: the entity's checks would not apply
        rows = _about_column(store, q, bound, notes, own=rows)
    rows = _renamed_shown_once(store, rows)
    keep = [i for i, v in enumerate(rows.variables) if q.param(v) is None]
    for check in q.if_empty if not rows.rows and not of_column else []:
        notes += EMPTY_CHECKS[check](store, bound)
    for check in q.if_rows if rows.rows else []:
        notes += ROW_CHECKS[check](store, bound, rows)
    if not rows.rows and not store.ask("ASK { ?s ?p ?o }"):  # "(0 rows)" must not read as a true answer
        notes.append("the store holds no triples: nothing was loaded into it yet (changeprov load EXPORT), "
                     "or what was loaded mapped no event")
    return Rows([rows.variables[i] for i in keep], [tuple(r[i] for i in keep) for r in rows.rows], notes)


def run_ask(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None = None, *,
            allow_service: bool = False, now_ms: int | None = None, notes: list[str] | None = None) -> bool:
    """An ASK query file's answer, its parameters bound and SERVICE refused as ``run_query`` does;
    ``notes`` (a list, if given) receives what ``run_query`` puts in an answer's notes."""
    q, bound, said = _prepared(store, q, values, allow_service=allow_service, now_ms=now_ms)
    if notes is not None:
        notes += said
    return store.ask(q.text, bound)


def run_construct(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None = None, *,
                  allow_service: bool = False, now_ms: int | None = None,
                  notes: list[str] | None = None) -> list[ox.Triple]:
    """A CONSTRUCT or DESCRIBE query file's triples, as ``run_ask`` runs an ASK (mq1 #9: a library
    caller had to repeat the command's steps, the SERVICE guard among them)."""
    q, bound, said = _prepared(store, q, values, allow_service=allow_service, now_ms=now_ms)
    if notes is not None:
        notes += said
    return store.construct(q.text, bound)


def _prepared(store: TripleStore, q: NamedQuery | str, values: Mapping[str, object] | None, *,
              allow_service: bool, now_ms: int | None) -> tuple[NamedQuery, dict, list[str]]:
    """(the query, its bound parameters, the notes so far), SERVICE refused first."""
    if isinstance(q, str):
        q = get_query(q)
    refuse_service(q.text, allow_service=allow_service)
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


# the field changes about a column (docs/model.md "Which column a field change is about") or that
# added, removed or changed it (a table's columns, a dataset's schemaMetadata), with their events
# and the entities those affect: the first pattern alone, the rest nested (docs/queries.md rule 1)
_COLUMN_FIELDS = (OM_PREFIX +
                  "SELECT DISTINCT ?entity ?table ?field ?event ?rel WHERE {\n#@bindings\n"
                  "?fc ?rel ?entity\n"
                  "FILTER(?rel IN (om:aboutColumn, om:addedSchemaField, om:removedSchemaField, om:changedSchemaField))\n"
                  "OPTIONAL { ?fc om:fieldName ?field }\n"
                  "OPTIONAL { ?cd om:fieldsAdded|om:fieldsUpdated|om:fieldsDeleted ?fc\n"
                  "  OPTIONAL { ?event om:hasChangeDescription ?cd OPTIONAL { ?event om:affectsEntity ?table } } }\n"
                  "FILTER(BOUND(?table) && BOUND(?field)) } ORDER BY ?table ?field")


_NAMES_OF = (OM_PREFIX +
             "SELECT ?node ?fqn ?urn WHERE {\n#@bindings\n"
             "OPTIONAL { ?node om:fullyQualifiedName ?fqn } OPTIONAL { ?node om:urn ?urn } }")


def _about_column(store: TripleStore, q: NamedQuery, bound: Mapping, notes: list[str], *, own: Rows) -> Rows:
    """A column's changes are its table's, about it (columns.NAME.FIELD) or adding, dropping or changing
    it (``# column-field:`` names the answer's column of field names): the table's answer, only the
    rows of those fields and events, after the column's own rows (``own``: DataHub change events on a
    schemaField are the column's; OpenMetadata columns have none)."""
    column = bound["entity"]
    tables: dict = defaultdict(lambda: (set(), set()))
    schema_fields = set()  # fields whose members are the table's columns: a row there is about one column
    for r in store.select(_COLUMN_FIELDS, {"entity": column}).dicts():
        tables[r["table"]][0].add(r["field"].value)
        tables[r["table"]][1].add(r["event"])
        if r["rel"].value != OM_EVENT + "aboutColumn":
            schema_fields.add(r["field"].value)
    names = {column.value}
    for row in store.select(_NAMES_OF, {"node": column}).dicts():
        names |= {row[k].value for k in ("fqn", "urn") if row.get(k) is not None}
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
        notes.append(f"this is a column: it has no events of its own; " + (
            f"these are the rows of {table_names} about it ({', '.join(about)})" if out
            else f"{table_names} has no rows about it here"))
    return Rows(variables, out)


_VERSIONED = (OM_PREFIX +
              "ASK {\n#@bindings\n?event om:affectsEntity ?entity ; om:currentVersion ?v }")


_FIRST_EVENT = (OM_PREFIX +
                "SELECT ?entity (MIN(?t) AS ?first) WHERE {\n#@bindings\n"
                "?event om:affectsEntity ?entity ; om:timestamp ?t }\n"
                "GROUP BY ?entity")


def _instant(lexical: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(lexical)


def _unversioned(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """A version asked of an entity whose events carry none (DataHub's; only OpenMetadata events
    have a currentVersion), or a time before the entity's first event: the empty answer says nothing
    a user could see without this note."""
    if "version" in bound and not store.ask(_VERSIONED, {"entity": bound["entity"]}):
        return ["no event of this entity has a version (only OpenMetadata events carry a currentVersion), "
                "so version= selects none of them; as_of=TIME asks for its state at a time"]
    if "as_of" in bound:
        rows = store.select(_FIRST_EVENT, {"entity": bound["entity"]}).rows
        first = rows[0][1] if rows else None
        if first is not None and _instant(first.value) > _instant(bound["as_of"].value):
            return [f"as_of {display_text(bound['as_of'])} is before the entity's first event ({display_text(first)}): "
                    "the log knows nothing of it yet"]
    return []


_FIELDS = (OM_PREFIX +
           "SELECT DISTINCT ?entity ?name WHERE {\n#@bindings\n?event om:affectsEntity ?entity ; om:hasChangeDescription ?cd .\n"
           "?cd om:fieldsAdded|om:fieldsUpdated|om:fieldsDeleted ?fc . ?fc om:fieldName ?name\n} ORDER BY ?name")


def _unchanged_field(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """A field name that no change of the entity has: most often a typo or another tool's name for it
    (OpenMetadata ``owners``, DataHub ``ownership`` / ``OWNER``), which an empty answer would hide."""
    if "field" not in bound:
        return []
    names = [r[1].value for r in store.select(_FIELDS, {"entity": bound["entity"]}).rows]
    if not names:
        return ["no event of this entity changed any field"]
    field = bound["field"].value
    owners = ("OWNER", "OWNERSHIP")
    if ("since" in bound or "until" in bound) and any(
            n == field or n.endswith("." + field) or (n in owners and field in owners) for n in names):
        return [f"{field!r} changed on this entity, but not between since and until"]
    shown = ", ".join(names[:40]) + (f", … ({len(names)} in all)" if len(names) > 40 else "")
    return [f"no change of a field named {bound['field'].value!r} on this entity (names are case-sensitive; "
            f"a name also matches nested names ending in .NAME); its changed fields are: {shown}"]


_VERSIONS = (OM_PREFIX +
             "SELECT DISTINCT ?entity ?v WHERE {\n#@bindings\n?event om:affectsEntity ?entity ; om:currentVersion ?v }")


def _versions_note(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """A version the entity never had (ut7a #7): version=1.0 of an entity at 0.5 then 1.5 answers
    the state at 0.5, which is right, but it must not read as "1.0 looked like this"."""
    if "version" not in bound:
        return []
    asked = Decimal(bound["version"].value)
    known = sorted({Decimal(r[1].value) for r in store.select(_VERSIONS, {"entity": bound["entity"]}).rows})
    if not known or asked in known:
        return []
    def text(v: Decimal) -> str:  # as the tables show versions: 2.0, not 2
        return display_value(ox.Literal(f"{v:f}", datatype=XSD_DECIMAL))

    shown = ", ".join(text(v) for v in known[:12]) + (f", … ({len(known)} in all)" if len(known) > 12 else "")
    before = [v for v in known if v < asked]
    where = (f"the state shown is at {text(before[-1])}, its last version before it" if before
             else "it is before the entity's first version")
    return [f"version {bound['version'].value} is not a version of this entity ({shown}): {where}"]


def _unversioned_or_unknown(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    return _unversioned(store, bound) or _versions_note(store, bound)


_IMPERSONATED = (OM_PREFIX +
                 "SELECT ?user ?since ?until (COUNT(DISTINCT ?event) AS ?n) WHERE {\n#@bindings\n"
                 "?event om:impersonatedBy ?user ; om:timestamp ?time .\n"
                 "FILTER(COALESCE(?time >= ?since, true)) FILTER(COALESCE(?time <= ?until, true)) }\n"
                 "GROUP BY ?user ?since ?until")


def _impersonations(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal],
                    _rows: Rows | None = None) -> list[str]:
    """A bot that acts on behalf of users is the changes' impersonator, not their performer (ut7a #6):
    say how many changes it made that way, or its "(0 rows)" reads as "it changed nothing"."""
    found = store.select(_IMPERSONATED, {k: v for k, v in bound.items() if k in ("user", "since", "until")}).rows
    n = int(found[0][-1].value) if found else 0
    if not n:
        return []
    return [f"{user_name(bound['user'].value)} also made {n} change(s) on behalf of other users "
            "(om-event:impersonatedBy), listed under the users they acted for; `changeprov audit` lists them "
            "as impersonated"]


_IS_COLUMN = (OM_PREFIX +
              "ASK {\n#@bindings\n?entity a om:Column }")
_HAS_COLUMN_EDGE = ("PREFIX prov: <http://www.w3.org/ns/prov#>\n"
                    "ASK {\n#@bindings\n?entity prov:qualifiedDerivation|^prov:entity ?edge }")


def _column_lineage(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """Of a column, lineage follows column-level edges only: an empty answer does not mean that its
    table has no lineage (ut7a #5)."""
    if not store.ask(_IS_COLUMN, {"entity": bound["entity"]}):
        return []
    if not store.ask(_HAS_COLUMN_EDGE, {"entity": bound["entity"]}):  # ut9a #4: unknown is not "nothing"
        return ["this is a column with no column-level lineage in the store (OpenMetadata columnsLineage, DataHub "
                "fineGrainedLineages): the empty answer says nothing of what depends on it; the lineage of its "
                "table is in upstream/downstream of the table"]
    return ["this is a column: its lineage follows column-level edges (OpenMetadata columnsLineage, DataHub "
            "fineGrainedLineages), and none of them was valid at that time; the lineage of its table is in "
            "upstream/downstream of the table"]


_LAST_HARD_DELETE = (OM_PREFIX +
                     "SELECT ?entity ?as_of ?time WHERE {\n#@bindings\n"
                     "?event om:affectsEntity|om:cascadesTo ?entity ; om:lifecycleChange om:HardDeleted ;\n"
                     "om:timestamp ?time . FILTER(COALESCE(?time <= ?as_of, true)) } ORDER BY DESC(?time) LIMIT 1")


_NAMED_IN_JOB_LISTS = (OM_PREFIX +
                       "ASK {\n#@bindings\n?fc om:addedInput|om:addedOutput|om:keptInput|om:keptOutput ?entity }")
_HAS_JOB_LISTS = (OM_PREFIX +
                  "ASK {\n#@bindings\n?event om:affectsEntity ?entity FILTER EXISTS { ?event om:aspectName \"dataJobInputOutput\" } }")


def _not_a_job(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """job-io of a dataset answers nothing: say where its jobs are (ut13 #8)."""
    if store.ask(_NAMED_IN_JOB_LISTS, {"entity": bound["job"]}) and not store.ask(_HAS_JOB_LISTS, {"entity": bound["job"]}):
        return ["this is a dataset that jobs read or write, not a job: its jobs are in "
                "`changeprov query job-candidates --param dataset=…` (every job that ever named it) and in "
                "upstream/downstream with --param jobs=true"]
    return []


def _not_a_dataset(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """job-candidates of a job answers nothing: say where its datasets are (ut13 #8)."""
    if store.ask(_HAS_JOB_LISTS, {"entity": bound["dataset"]}):
        return ["this is a job, not a dataset: its inputs and outputs are in "
                "`changeprov query job-io --param job=…`"]
    return []


def _hard_deleted(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """An empty state after a hard delete is that delete, not "no field changes" (ut10a #6)."""
    found = store.select(_LAST_HARD_DELETE, {k: v for k, v in bound.items() if k in ("entity", "as_of")}).rows
    if not found:
        return []
    return [f"it was hard-deleted at {display_text(found[0][-1])}: a hard delete ends every value set before it"]


_NO_CREATION = (OM_PREFIX +
                "ASK {\n#@bindings\n?event om:affectsEntity ?entity FILTER EXISTS { ?event om:currentVersion ?v }\n"
                "FILTER NOT EXISTS { ?created om:affectsEntity ?entity FILTER EXISTS { ?created om:lifecycleChange om:Created } } }")


def _no_creation(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """An OpenMetadata entity whose log starts after its creation: its lists are what the log changed
    (its events list changes, not whole lists), which must not read as its whole state (ut17 #4)."""
    if not isinstance(bound.get("entity"), ox.NamedNode) or not store.ask(_NO_CREATION, {"entity": bound["entity"]}):
        return []
    return ["the store has no creation event of this OpenMetadata entity (the log starts later): its list fields "
            "(tags, owners, columns, ...) hold only the members its events added, and values it was created with "
            "are unknown; each event keeps the whole entity as it stood then (om-event:entityState, shown by "
            "`changeprov describe`)"]


_SPAN = (OM_PREFIX +
         "SELECT ?entity (COUNT(?event) AS ?n) (MIN(?time) AS ?first) (MAX(?time) AS ?last) WHERE {\n#@bindings\n"
         "?event om:affectsEntity ?entity ; om:timestamp ?time } GROUP BY ?entity\n")


def _outside_window(store: TripleStore, bound: Mapping[str, ox.NamedNode | ox.Literal]) -> list[str]:
    """An entity with events, none in the window asked (rv37 #7): not 'nothing ever happened'."""
    if "since" not in bound and "until" not in bound:
        return []
    rows = store.select(_SPAN, {"entity": bound["entity"]}).rows
    if not rows or rows[0][1] is None or int(rows[0][1].value) == 0:
        return []
    _, n, first, last = rows[0]
    return [f"the entity has {int(n.value):,} event(s), from {display_text(first)} to {display_text(last)}, "
            "none between since and until"]


#: ``# if-empty: NAME`` checks: (store, bound parameters) → notes explaining an empty answer
EMPTY_CHECKS = {"unversioned": _unversioned_or_unknown, "unchanged-field": _unchanged_field,
                "impersonations": _impersonations, "column-lineage": _column_lineage,
                "hard-deleted": _hard_deleted, "not-a-job": _not_a_job, "not-a-dataset": _not_a_dataset,
                "no-creation": _no_creation, "window": _outside_window}


_CATEGORY = re.compile(r"[A-Z][A-Z_]*")


def _datahub_views(_store: TripleStore, _bound: Mapping, rows: Rows) -> list[str]:
    """A DataHub entity's state mixes two views of the same changes (ut6a #7): say so, or "who owns
    it?" reads as two different answers."""
    if "field" not in rows.variables:
        return []
    i = rows.variables.index("field")
    names = {r[i].value for r in rows.rows if r[i] is not None}
    categories = sorted(n for n in names if _CATEGORY.fullmatch(n))
    aspects = sorted(n for n in names if not _CATEGORY.fullmatch(n))
    if not categories or not aspects:
        return []
    return [f"DataHub reports a change twice and both views are listed: as an aspect (its MetadataChangeLog; "
            f"here {', '.join(aspects[:6])}{', …' if len(aspects) > 6 else ''}: the aspect's value, list aspects "
            f"one row per member) and as a change-event category (its EntityChangeEvent; here "
            f"{', '.join(categories[:6])}{', …' if len(categories) > 6 else ''}: one row per member or modifier)"
            + ("; OWNERSHIP (also the older OWNER) and ownership list the same owners" if "ownership" in aspects
               and {"OWNER", "OWNERSHIP"} & set(categories) else "")]


_SKEWED = (OM_PREFIX +
           "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
           "SELECT ?entity ?as_of ?time ?other_time ?aspect WHERE {\n#@bindings\n"
           "?event om:affectsEntity ?entity ; prov:used ?v ; om:timestamp ?time .\n"
           "?v prov:wasGeneratedBy ?g . ?g om:timestamp ?other_time .\n"
           "FILTER(?other_time > ?time && COALESCE(?other_time <= ?as_of, true))\n"
           "FILTER NOT EXISTS { ?event om:affectsEntity ?v }\n"
           # a DataHub entity created again numbers its versions from 1 again: the version's other
           # generator may be the next life's, after a hard delete (rv37 #2)
           "FILTER NOT EXISTS { ?gone om:affectsEntity ?entity ; om:lifecycleChange om:HardDeleted ;\n"
           "  om:timestamp ?t9 FILTER(?t9 >= ?time && ?t9 <= ?other_time) }\n"
           "OPTIONAL { ?event om:aspectName ?aspect }\n"
           "} ORDER BY ?time LIMIT 3\n")


def _clock_skew(store: TripleStore, bound: Mapping, _rows: Rows) -> list[str]:
    """A change that revises a version stamped later (ut20 #8): the state follows the timestamps,
    so it may show a value its writer had already replaced."""
    rows = store.select(_SKEWED, {k: bound[k] for k in ("entity", "as_of") if k in bound}).rows
    if not rows:
        return []
    *_, time, later, aspect = rows[0]
    where = f" (of {aspect.value})" if aspect is not None else ""
    return [f"the timestamps and the version chain disagree here: a change at {time.value}{where} revises a "
            f"version stamped {later.value} (a writer's clock ran behind?); the state follows the timestamps, "
            f"so a value its writer had already replaced may be shown; `changeprov audit` lists each such "
            f"change as out-of-order"]


#: ``# if-rows: NAME`` checks: rows → notes explaining an answer
ROW_CHECKS = {"datahub-views": _datahub_views, "impersonations": _impersonations, "clock-skew": _clock_skew,
              "unknown-version": lambda store, bound, _rows: _versions_note(store, bound),
              "no-creation": lambda store, bound, _rows: _no_creation(store, bound)}


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
        if store.ask(_IS_COLUMN, {"entity": asset}):  # a column has no owners: its table has
            owned = [r["table"] for r in store.select(tables.text, {"entity": asset}).dicts()]
        owners = sorted({r["owner"].value for node in owned
                         for r in store.select(q.text, {**bound, "entity": node}).dicts() if r.get("owner") is not None})
        out.append((*head, ox.Literal(", ".join(owners)) if owners else None, asset))
    return Rows(lineage.variables[:-1] + ["owners", "asset"], out)


DRIVERS = {"lineage": lineage_bfs, "impact": lineage_with_owners}
