"""Query files (``sparql/queries/NAME.rq`` and ``--file``): their header and the checks of their text.

Each ``.rq`` file starts with a comment header that :func:`parse_header` reads::

    # summary: one line saying what the query answers
    # param: NAME TYPE required|optional[=DEFAULT]  description
    # returns: the columns
    # collect: COLUMN          (optional: rows differing only in COLUMN are merged, values joined)
    # driver: KIND [ARGS]      (optional: Python that runs the query, e.g. as the step of a breadth-first search)
    # if-empty: CHECK...       (optional: checks that explain an empty answer in a note, see notes.EMPTY_CHECKS)
    # if-rows: CHECK...        (optional: checks that explain a non-empty answer in a note, see notes.ROW_CHECKS)
    # column-field: COLUMN     (optional: of a column, its own rows and its table's answer, only the rows
    #                           whose COLUMN names a field change about, adding or dropping the column)
    # column-link: COLUMN      (optional: of a column, its tables' rows whose entity link in COLUMN names
    #                           the column: <#E::table::FQN::columns::NAME…>)
    # names-at: COLUMN         (optional: a renamed entity's collected names in a row: the one it had at
    #                           the row's time in COLUMN, not its current and former ones)
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

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from changeprov.errors import InputError
from changeprov.sparql.lexer import blank
from changeprov.sparql.stores import BINDINGS_MARKER, query_form

PARAM_TYPES = ("entity", "tag", "user", "time", "time-end", "string", "regex", "decimal", "integer", "iri", "boolean")
#: a parameter whose values are listed in its type: ``one-of:input|output``
ONE_OF = "one-of:"
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
    column_link: str | None = None
    names_at: str | None = None
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
        elif key == "column-link":
            q.column_link = value.split()[0]
        elif key == "names-at":
            q.names_at = value.split()[0]
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
    from changeprov.sparql.lineage import DRIVERS  # they import this module
    from changeprov.sparql.notes import EMPTY_CHECKS, ROW_CHECKS

    if q.driver and q.driver.split()[0] not in DRIVERS:
        raise InputError(f"{name}: unknown driver {q.driver!r}")
    for check in q.if_empty:
        if check not in EMPTY_CHECKS:
            raise InputError(f"{name}: unknown if-empty check {check!r}")
    for check in q.if_rows:
        if check not in ROW_CHECKS:
            raise InputError(f"{name}: unknown if-rows check {check!r}")
    code = blank(text, comparisons=True)  # the query's words: no string, IRI or comment
    unused = [p.name for p in q.params if not _uses(code, p.name)]
    if unused and not q.driver:  # a driver's own parameters (jobs=) are its business
        raise InputError(f"{name}: parameter(s) {', '.join('?' + n for n in unused)} declared in the header but "
                         "not used by the query")
    try:
        select = query_form(text) == "SELECT"  # an ASK or CONSTRUCT takes any (a VALUES block: embedded.EmbeddedStore)
    except InputError:  # not a query: the engine says what is wrong with it
        select = False
    unprojected = [p.name for p in q.params if select and _uses(code, p.name) and not _projected(code, p.name)]
    if unprojected:  # pyoxigraph binds only projected variables (ut22 M4: its own words were the error)
        listed = ["?" + n for n in unprojected]
        raise InputError(f"{name}: parameter(s) {', '.join(listed)} must be in the SELECT list (SELECT "
                         f"{' '.join(listed)} … WHERE …): the engine binds only variables the query returns, "
                         "and the answer leaves parameter columns out")
    marked = "\n".join(" __BINDINGS__ " if line.strip() == BINDINGS_MARKER else line for line in text.split("\n"))
    unmarked = ([p.name for p in q.params if _unmarked_subselect(blank(marked, comparisons=True), p.name)]
                if marked != text else [])
    if unmarked:  # an endpoint's VALUES block goes at each marker: the sub-select would run unbound (ut44f #3)
        raise InputError(f"{name}: a sub-select uses parameter(s) {', '.join('?' + n for n in unmarked)} without a "
                         f"`{BINDINGS_MARKER}` line of its own at the start of its WHERE group: an endpoint gets the "
                         "parameters as a VALUES block at each such line, and the sub-select would run without them "
                         "(docs/queries.md, rule 8)")
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
    for after, group in _subselect_groups(code):  # the outer SELECT is _projected's
        returned = _select_vars(code[after:])
        if returned is not None and name not in returned and _uses(group, name):
            return True
    return False


def _subselect_groups(code: str) -> list[tuple[int, str]]:
    """Of each sub-select of ``code`` (a query without strings, IRIs and comments): where its SELECT
    keyword ends, and its WHERE group (to the brace that closes it)."""
    groups = []
    for m in list(re.finditer(r"(?<![:\w])SELECT\b", code, re.IGNORECASE))[1:]:  # the outer one is not
        # the first brace outside parentheses: an EXISTS { … } in the SELECT list is not its group (rv44b #8)
        depth, start = 0, -1
        for i in range(m.end(), len(code)):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            if code[i] == "{" and depth == 0:
                start = i
                break
        if start < 0:
            continue
        depth, end = 0, len(code)
        for i in range(start, len(code)):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                end = i
                break
        groups.append((m.end(), code[start:end]))
    return groups


def _unmarked_subselect(code: str, name: str) -> bool:
    """Whether a sub-select's group in ``code`` (markers as the word ``__BINDINGS__``) uses ``?name``
    without a marker of its own.

    >>> _unmarked_subselect("SELECT ?s { __BINDINGS__ { SELECT ?s ?e { ?e ?p ?t FILTER(?t > ?s) } } }", "s")
    True
    >>> _unmarked_subselect("SELECT ?s { __BINDINGS__ { SELECT ?s ?e { __BINDINGS__ ?e ?p ?t FILTER(?t > ?s) } } }", "s")
    False
    """
    return any(_uses(group, name) and "__BINDINGS__" not in group for _, group in _subselect_groups(code))


def _projected(code: str, name: str) -> bool:
    """Whether the outer SELECT's list in ``code`` (a SELECT query without its strings, IRIs and
    comments) returns ``?name``, or is ``*``.

    >>> projected = lambda query, name: _projected(blank(query, comparisons=True), name)
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
    if not isinstance(name, str):  # ut44f #6: a TypeError
        raise InputError(f"a query name is a string (see `changeprov query --list`, or list_queries()), got {name!r:.80}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,99}", name or ""):
        raise InputError(f"unknown query {name[:120]!r} (see `changeprov query --list`, or list_queries())")
    entry = _queries_dir().joinpath(name + ".rq")
    if not entry.is_file():
        known = ", ".join(q.name for q in list_queries())
        raise InputError(f"unknown query {name!r}; known: {known}")
    return parse_header(name, entry.read_text("utf-8"))


_INCLUDE = re.compile(r"^#@include ([a-z][a-z-]*)\n", re.MULTILINE)


@functools.cache
def lookup(name: str) -> str:
    """The text of ``sparql/queries/lookups/NAME.rq``: a query the Python code runs for a note, a hint or a
    check, not a named query (``query --list`` leaves it out). Its header is a named query's (summary,
    parameters), and tests/test_lookups.py checks it as ``parse_header`` checks one. A line
    ``#@include PART`` stands for ``lookups/parts/PART.rq``, a group two lookups share.

    >>> print(lookup("any-triple").splitlines()[-1])
    ASK { ?s ?p ?o }
    >>> "#@include" in lookup("tied-of-entity"), "?add ?member" in lookup("tied-of-entity")
    (False, True)
    """
    folder = _queries_dir().joinpath("lookups")
    text = folder.joinpath(f"{name}.rq").read_text("utf-8")
    return _INCLUDE.sub(lambda m: folder.joinpath("parts", f"{m[1]}.rq").read_text("utf-8"), text)


def load_query_file(path: str | Path) -> NamedQuery:
    p = Path(path)
    try:
        text = p.read_text("utf-8-sig")  # an editor's byte order mark is no query text (rv44)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read query file {p}: {exc}") from None
    return parse_header(p.stem, text, p)


