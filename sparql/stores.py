"""Triple stores behind one interface, chosen by a ``kind`` string (OpenLineage-transport style).

* ``embedded`` (default): an on-disk pyoxigraph ``Store`` at a path (created by ``load`` if missing).
* ``remote``: any SPARQL 1.1 server. Queries go through SPARQLWrapper (POST, JSON results); loading
  uses the SPARQL 1.1 Graph Store HTTP Protocol (``POST`` of N-Triples batches to the default graph)
  or, without a graph store URL, ``INSERT DATA`` batches to the update endpoint. Credentials come only
  from the environment: ``CHANGEPROV_ENDPOINT_TOKEN`` (bearer) or ``CHANGEPROV_ENDPOINT_USER`` /
  ``CHANGEPROV_ENDPOINT_PASSWORD`` (basic).
* ``memory``: an rdflib in-memory ``Graph`` (used by the benchmark to compare engines).

Parameters are bound by the engine, never by string formatting: pyoxigraph ``substitutions``,
rdflib ``initBindings``, and for remote endpoints a ``VALUES`` block of pyoxigraph-serialised terms
inserted at each ``#@bindings`` marker line of the query (see :func:`with_values`).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import functools
import io
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Callable, Iterator, Mapping, Sequence

import pyoxigraph as ox

from changeprov.errors import ChangeprovError, ConfigError, InputError, StoreError
from changeprov.mapping.vocab import XSD, XSD_STRING
from changeprov.sparql import loading
from changeprov.sparql.lexer import PIECES, blank

#: the store kinds and the options of open_store that each takes (the rest is an error, not ignored)
_OPTIONS = {"embedded": {"path", "create", "read_only"},
            "remote": {"endpoint", "update_endpoint", "graph_store", "timeout", "batch_bytes"},
            "memory": set(), "rdflib": set()}
KINDS = tuple(_OPTIONS)
BINDINGS_MARKER = "#@bindings"
ENV_USER, ENV_PASSWORD, ENV_TOKEN = "CHANGEPROV_ENDPOINT_USER", "CHANGEPROV_ENDPOINT_PASSWORD", "CHANGEPROV_ENDPOINT_TOKEN"
#: a remote load's request size: nginx's default limit is 1 MB, many servers take far more
DEFAULT_BATCH_BYTES = 8 * 2**20
DEFAULT_TIMEOUT = 60.0  # seconds per request to an endpoint

Term = ox.NamedNode | ox.Literal | ox.BlankNode

# Where SERVICE may stand, read as the engine reads it, no regular reading can tell: "<" opens an IRI
# where the grammar wants a term and compares where it wants an expression, and a "#" or a quote
# inside what one reading takes for an IRI opens a comment or a string in the other. Every reading
# that blanked strings, IRIs or comments was bypassed (rv40 H1: ".SERVICE"; rv41 H1: keywords glued
# to a name; rv42 H1: "<?a#>" read as a comparison hid the rest of its line; and mixing an IRI with
# "#" and a comparison with a quote hides a SERVICE from both readings at once). So the word counts
# wherever it is but in a variable's name ("?service" is never the keyword): in strings, IRIs and
# comments too. A value that holds it (databaseService) goes in as a parameter, which the engine
# binds and never reads as query text; a query meant to federate takes --allow-service.
_VARIABLE = re.compile(r"(?<!\\)" + PIECES["var"])
# ... and a line that starts with "#" is a comment, or inside a long string, whatever came before. A
# long string may end on it, though, and code follow ('BIND("""' LF '#""" AS ?x) SERVICE …'), so the
# line counts as a comment only if it holds no triple quote and no backslash (an escape that an engine
# decoding the whole text first turns into a quote or a line break), and no CR, where the engine ends a
# comment (rv40 H1), nor any other character at which Python's splitlines breaks a line: no step after
# the guard may turn the text into another one by splitting it (rv43 H1).
# A query file's header is such lines, so a parameter named service, or a summary that names one, is
# no SERVICE (ut25 #1)
_COMMENT_LINE = re.compile(r"(?m)^[ \t]*#(?:(?!\"\"\"|''')[^\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029\\])*(?=\n|\Z)")
# How engines may decode escapes in the whole text before parsing: the SPARQL text's way (\uXXXX and
# \UXXXXXXXX), and rdflib's (the memory store): either case, four digits and four more if there are
# (rv44 H1: \U0053ERVICE and \u00000053ERVICE ran there). The word counts in any of the readings.
_CODEPOINTS = (re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})"),
               re.compile(r"\\[uU]([0-9A-Fa-f]{4}(?:[0-9A-Fa-f]{4})?)()"))


def _codepoint(m: re.Match) -> str:
    value = int(m.group(1) or m.group(2), 16)
    return chr(value) if value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF else m.group(0)


def _has_word(code: str) -> bool:
    # rdflib matches keywords by str.upper(), which makes "ſ" an S and "ı" an I (ſERVICE ran on the
    # memory store); pyoxigraph matches ASCII letters only
    return "service" in code.lower() or "SERVICE" in code.upper()


def has_service(query: str) -> bool:
    """Whether ``query`` has a SERVICE clause. SPARQL applies ``\\uXXXX`` escapes to the whole text
    before parsing (Jena does; a query could spell ``\\u0053ERVICE``), so they are applied first.

    >>> has_service('SELECT * WHERE { SERVICE <http://x/sparql> { ?s ?p ?o } }')
    True
    >>> has_service('SELECT ?service WHERE { ?service ?p ?o }'), has_service('SELECT * { ?s ?p "databaseService" }')
    (False, True)
    """
    return _service_at(query) is not None


def _service_at(query: str) -> tuple[int, str] | None:
    """(line number, the line) of the first "service" that counts, else None. Line by line as written:
    an escape or a variable never spans a line, so a decoded ``\\u000A`` moves no line (rv43 L2)."""
    lines = query.split("\n")
    for number, line in enumerate(_COMMENT_LINE.sub("", query).split("\n"), start=1):
        if any(_has_word(_VARIABLE.sub(" ", decoding.sub(_codepoint, line))) for decoding in _CODEPOINTS):
            return number, lines[number - 1].strip()
    return None


def refuse_service(query: str, *, allow_service: bool = False) -> None:
    """Refuse query text with a SERVICE clause (an outbound request, ANCHORS.md §D)."""
    found = None if allow_service else _service_at(query)
    if found is not None:
        number, line = found
        raise InputError(f"query text contains SERVICE (line {number}: {line[:120]!r}): a federated query is an "
                         "outbound HTTP request, refused unless --allow-service (allow_service=True) is given. The "
                         "word counts wherever it is but in a variable's name and a line that is a comment, strings, "
                         "IRIs and comments after code included (no reader of the text can tell them from query "
                         "code as the engine does): pass a value such as databaseService as a parameter (# param: "
                         "in the file's header)")


#: pyoxigraph lists the code point ranges a SPARQL name may start with (PN_CHARS_BASE), over 4 lines
_NAME_RANGES = re.compile(r"\[\s*'A'\s*\.\.=\s*'Z'.*?\]", re.S)
_AT = re.compile(r"error at (\d+):(\d+): ")


def sparql_syntax_error(detail: str, query: str) -> InputError:
    """The engine's syntax error in one line: where (line, column and the text before it) and a
    shortened list of what the parser expected there.

    >>> print(sparql_syntax_error("error at 1:25: expected one of \\"?\\", FILTER, ['A' ..= 'Z' | 'a'\\n| 'b'], [_]",
    ...                         "SELECT ?s WHERE { ?s ?p "))
    SPARQL syntax error at the end of the query, after 'SELECT ?s WHERE { ?s ?p': expected one of "?", FILTER, a name, [_]
    """
    text = " ".join(_NAME_RANGES.sub("a name", detail).replace("['0'..='9']", "a digit").split())
    where = _AT.match(text)
    if where:
        line_no, column = int(where.group(1)), int(where.group(2))
        lines = query.splitlines() or [""]
        at_end = line_no > len(lines) or (line_no == len(lines) and column > len(lines[-1]))
        before = (" ".join(query.split()) if at_end else
                  lines[line_no - 1][:column - 1] if line_no >= 1 else "")
        text = ("at the end of the query" if at_end else f"at line {line_no}, column {column}") \
            + (f", after '{'…' if len(before) > 40 else ''}{before[-40:]}'" if before.strip() else "") \
            + ": " + text[where.end():]
    if len(text) > 400:
        text = text[:400] + " …"
    # the two slips the parser's list of expected tokens hides (ut13 #10)
    if where and "Prefix not found" in detail:
        prefix = re.search(r"([A-Za-z][\w.-]*)?:[\w.%-]*$", before.rstrip())
        name = prefix.group(1) or "" if prefix else None
        if name is not None:
            return InputError(f"SPARQL syntax error at line {line_no}, column {column}: the prefix {name}: is not "
                              f"declared (add PREFIX {name}: <…> before the query)")
    # (not when the parser still wanted a term: the query stops inside a pattern, say)
    if where and at_end and query.count("{") > query.count("}") and '"?"' not in text and "a name" not in text:
        text += f" (a closing '}}' is missing: {query.count('{')} '{{' against {query.count('}')} '}}')"
    return InputError(f"SPARQL syntax error {text}" if where else f"SPARQL syntax error: {text}")


@dataclass
class Rows:
    """A SELECT result: variable names and rows of pyoxigraph terms (None = unbound)."""

    variables: list[str]
    rows: list[tuple[Term | None, ...]] = field(default_factory=list)
    #: what the user should know about how the answer was reached (shown on stderr by the CLI)
    notes: list[str] = field(default_factory=list)

    def dicts(self) -> list[dict[str, Term | None]]:
        return [dict(zip(self.variables, row)) for row in self.rows]

    def column(self, name: str) -> list[Term | None]:
        i = self.variables.index(name)
        return [row[i] for row in self.rows]

    def python(self) -> list[dict[str, object]]:
        """The rows as dicts of plain Python values (``python_value``): what a caller that is not an
        RDF tool wants. A column the query collected (``via``, ``owners``, ``fields_changed``) stays
        one ``", "``-joined string, as every output format shows it."""
        return [{k: python_value(v) for k, v in zip(self.variables, row)} for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __bool__(self) -> bool:  # "if rows:" asks whether there is an answer
        return bool(self.rows)

    def __iter__(self) -> Iterator[dict[str, Term | None]]:
        return iter(self.dicts())


def python_value(term: Term | None) -> object:
    """A result term as a plain Python value: an IRI's text; xsd:integer → int, xsd:decimal → Decimal,
    xsd:double / xsd:float → float, xsd:boolean → bool, xsd:dateTime → an aware UTC datetime, xsd:date →
    date; any other literal (strings, rdf:JSON) its lexical form; unbound → None.

    >>> python_value(ox.Literal("2024-03-05T12:00:00.000Z", datatype=ox.NamedNode(XSD + "dateTime")))
    datetime.datetime(2024, 3, 5, 12, 0, tzinfo=datetime.timezone.utc)
    >>> python_value(ox.Literal("2024-03-05T12:00:00", datatype=ox.NamedNode(XSD + "dateTime"))).hour
    12
    >>> python_value(ox.Literal("3", datatype=ox.NamedNode(XSD + "integer"))), python_value(None)
    (3, None)
    >>> python_value(ox.NamedNode("urn:li:corpuser:alice"))
    'urn:li:corpuser:alice'
    """
    if term is None:
        return None
    if not isinstance(term, ox.Literal):
        return term.value
    kind = term.datatype.value.removeprefix(XSD) if term.datatype.value.startswith(XSD) else None
    text = term.value
    try:
        if kind in ("integer", "int", "long", "short", "nonNegativeInteger", "positiveInteger"):
            return int(text)
        if kind == "decimal":
            return Decimal(text)
        if kind in ("double", "float"):
            return float(text)
        if kind == "boolean":
            return text.strip() in ("true", "1")
        if kind == "dateTime":
            when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            # without a zone it is UTC, as the parameters take it (not the machine's zone: rv36 #6)
            return when.replace(tzinfo=_dt.timezone.utc) if when.tzinfo is None else when.astimezone(_dt.timezone.utc)
        if kind == "date":
            return _dt.date.fromisoformat(text[:10])  # its zone, if any, says nothing about the day
    except (ValueError, OverflowError):  # a lexical form outside Python's range (a year 0): as written
        return text
    return text


def checked_bindings(bindings) -> dict:
    """``bindings`` as every store takes them: a mapping of variable names to pyoxigraph terms; an
    InputError naming what is wrong otherwise (ut44f #6: TypeErrors, AttributeErrors and the engine's
    "failed to extract enum PyTerm" reached the caller).

    >>> checked_bindings({"x": "a"})
    Traceback (most recent call last):
    ...
    changeprov.errors.InputError: binding ?x: a pyoxigraph term (NamedNode, Literal, BlankNode) is needed, got str 'a'
    """
    if bindings is None:
        return {}
    if not isinstance(bindings, Mapping):
        raise InputError(f"bindings must be a mapping of variable names to terms, got {type(bindings).__name__}")
    for name, value in bindings.items():
        try:
            ox.Variable(name)  # the engine's own rule for a variable's name
        except (TypeError, ValueError):
            raise InputError(f"binding name {name!r}: a SPARQL variable name (letters, digits, _) is needed") from None
        if not isinstance(value, (ox.NamedNode, ox.Literal, ox.BlankNode)):
            raise InputError(f"binding ?{name}: a pyoxigraph term (NamedNode, Literal, BlankNode) is needed, got "
                             f"{type(value).__name__} {str(value)[:80]!r}")
    return dict(bindings)


def _binary(stream):
    """``stream`` itself, unless it is a path or text given where an open stream belongs: the path's
    text would be read as N-Triples ("the subject of a triple must be an IRI")."""
    if isinstance(stream, (str, Path)):
        raise InputError("load_ntriples takes an open stream of N-Triples (open(path, 'rb')), not a path or "
                         f"a string: {str(stream)[:80]!r}")
    if isinstance(stream, (bytes, bytearray)):
        return io.BytesIO(stream)
    # a file object, or an iterator of lines (ut42a #6: None reached the engine; rv42 #5: a list too)
    if not (hasattr(stream, "read") or hasattr(stream, "__next__")):
        raise InputError(f"load_ntriples takes an open stream of N-Triples (open(path, 'rb')), got {type(stream).__name__}")
    if not hasattr(stream, "read"):  # the engine reads file objects (ut44f #5: an AttributeError from it)
        return io.BufferedReader(_LinesReader(stream))
    return stream


class _LinesReader(io.RawIOBase):
    """An iterator of lines (bytes or str) as a readable raw stream."""

    def __init__(self, lines):
        self._lines, self._rest = lines, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._rest:
            line = next(self._lines, None)
            if line is None:
                return 0
            self._rest = line.encode("utf-8") if isinstance(line, str) else bytes(line)
        n = min(len(buffer), len(self._rest))
        buffer[:n], self._rest = self._rest[:n], self._rest[n:]
        return n


def shift_lines(problem: str, by: int) -> str:
    """A parser's message with each ``line N`` moved by ``by`` (a part's lines counted in the whole)."""
    return re.sub(r"\bline (\d+)", lambda m: f"line {int(m.group(1)) + by}", problem)


class NTriplesSyntaxError(InputError):
    """N-Triples that do not parse: ``line`` counts lines of the stream given to ``load_ntriples``, or,
    from ``load_export``, of the file ``source`` (relative to the export) names."""

    def __init__(self, problem: str, *, line: int | None = None, source: str | None = None):
        super().__init__(f"invalid N-Triples{f' in {source}' if source else ''}: {problem}")
        self.problem = problem
        self.line = line
        self.source = source


class TripleStore:
    """The interface every store kind implements."""

    kind = "?"
    description = "?"

    def select(self, query: str, bindings: Mapping[str, Term] | None = None) -> Rows:
        raise NotImplementedError

    def ask(self, query: str, bindings: Mapping[str, Term] | None = None) -> bool:
        raise NotImplementedError

    def construct(self, query: str, bindings: Mapping[str, Term] | None = None) -> list[ox.Triple]:
        raise NotImplementedError

    #: whether load_ntriples may run in several threads at once (see loader.load_export)
    parallel_load = False
    #: whether one load_ntriples call adds all of its stream or nothing (else the loader checks first)
    atomic_load = True

    def load_ntriples(self, stream: IO[bytes]) -> None:
        """Add every triple of one N-Triples byte stream (set semantics: duplicates are no-ops)."""
        raise NotImplementedError

    def clear(self) -> None:
        """Remove every triple (undoes a failed parallel load into a store that was empty)."""
        raise NotImplementedError

    #: whether optimize() compacts anything (not in memory; on an endpoint it is the server's business)
    compacts = False

    def mark_loading(self, export: str | Path) -> None:
        """Mark the store as being loaded with ``export`` until ``unmark_loading`` (see sparql.loading)."""

    def unmark_loading(self) -> None:
        """The store holds the whole export, or is as it was before the load."""

    def unfinished_load(self) -> str | None:
        """What a reader should know about a load into this store that has not finished, or None."""
        return None

    def optimize(self) -> None:
        """Compact the store's indexes after a bulk load (see ``compacts``)."""

    def count(self) -> int:
        rows = self.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        return int(rows.rows[0][0].value) if rows.rows and rows.rows[0][0] is not None else 0

    #: set by close(): a closed store refuses every call, as the engine's own store does (ut40c #7)
    closed = False

    def close(self) -> None:
        self.closed = True

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"{self.description} is closed")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.close()
            return
        try:
            self.close()
        except ChangeprovError:
            pass  # the error on its way out says more than a failed flush after it


def query_form(query: str) -> str:
    """SELECT / ASK / CONSTRUCT / DESCRIBE, after the prologue (comments, PREFIX, BASE); else raise."""
    text = blank(query, keep=("long", "string", "iri", "var"))  # the comments only
    text = re.sub(r"(?is)^\s*((PREFIX\s+[^\s:]*:\s*<[^>]*>|BASE\s*<[^>]*>)\s*)*", "", text)
    m = re.match(r"\s*(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", text, re.IGNORECASE)
    if m:
        return m.group(1).upper()
    if re.match(r"\s*(INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH)\b", text, re.IGNORECASE):
        raise InputError("a SPARQL update: updates are refused (queries only: SELECT, ASK, CONSTRUCT or DESCRIBE)")
    start = " ".join(text.split())[:40]
    raise InputError(f"not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE after the prefixes, "
                     f"found {start!r}" if start else "not a SPARQL query: it is empty (or only comments and prefixes)")


# ----------------------------------------------------------------------------- embedded (pyoxigraph)


class EmbeddedStore(TripleStore):
    kind = "embedded"
    parallel_load = True
    _store: ox.Store | None = None

    def __init__(self, path: str | Path, *, create: bool = False, read_only: bool = False):
        self.path = Path(path)
        # absolute: an audit's baseline names the store it ran on, compared by this text (ut25 #2: the
        # same store named from another folder read as another store)
        self.description = f"embedded store {os.path.realpath(self.path)}"
        if not create and not self.path.exists():
            raise StoreError(f"no store at {self.path} (run `changeprov load DIR --store {self.path}` first)")
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path} is not a store directory")
        if self.path.is_dir() and not (self.path / "CURRENT").is_file():  # the engine's (RocksDB's) marker
            if any(self.path.iterdir()):  # never put a store's files among someone's other files
                export = (self.path / "_SUCCESS").exists() and (self.path / "triples").is_dir()
                what = "an export folder" if export else "a folder of other files"
                advice = ("give a new or empty folder for the store" if create else "give the store's folder"
                          + (f" (load this export: changeprov load {self.path} --store STORE)" if export else ""))
                raise StoreError(f"{self.path} is {what}, not a store: {advice}")
            if not create:
                raise StoreError(f"no store at {self.path} (an empty folder; run `changeprov load DIR "
                                 f"--store {self.path}` first)")
        if create and not read_only:
            try:  # like `mkdir -p`: the engine creates only the last level
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create store {self.path}: {exc}") from None
        self._read_only = read_only
        try:
            self._store = self._open(read_only)
        except RuntimeError as exc:  # the engine's files are there but unreadable (ut13 #5)
            raise StoreError(f"cannot open store {self.path}: it is damaged ({exc}); load the export again into "
                             "a new store, or restore a copy taken while no changeprov was writing it") from None
        except OSError as exc:
            # only a lock failure is another process's doing (ut12 #10: an unusable path was not)
            hint = (" (one writer per on-disk store: is another changeprov, or another open handle of this "
                    "process, using it?)"
                    if "lock" in str(exc).lower() else "")
            raise StoreError(f"cannot open store {self.path}: {exc}{hint}") from None

    #: a read-only open that found a file of the store gone, tried again: a writer's compaction deletes
    #: files between the reader's listing and its opening them (ut44f #2: "it is damaged", which it was not)
    OPEN_RETRIES = 10

    def _open(self, read_only: bool) -> ox.Store:
        for attempt in range(self.OPEN_RETRIES if read_only else 1):
            try:
                return ox.Store.read_only(str(self.path)) if read_only else ox.Store(str(self.path))
            except RuntimeError as exc:
                vanished = "No such file or directory" in str(exc)
                if not vanished or attempt + 1 == self.OPEN_RETRIES:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _query(self, query: str, bindings):
        bindings = checked_bindings(bindings)  # before with_values below, which serialises them (rv44b #7)
        if bindings and any(line.strip() == BINDINGS_MARKER for line in query.split("\n")) \
                and query_form(query) != "SELECT":
            # pyoxigraph 0.5 substitutes in an ASK or CONSTRUCT only variables of its triple patterns:
            # such a query file with a marker takes its parameters as on an endpoint, a VALUES block
            # there (rv37 #4); without one (DESCRIBE ?entity) the substitution does (rv38 #3)
            query, bindings = with_values(query, bindings), None
        substitutions = {ox.Variable(k): v for k, v in (bindings or {}).items()}  # names checked above
        try:
            return self._live().query(query, substitutions=substitutions)
        except SyntaxError as exc:
            raise sparql_syntax_error(str(exc), query) from None
        except (RuntimeError, ValueError, OSError) as exc:
            unbound = re.search(r"does not contains? variable (\?\w+) in its SELECT projection", str(exc))
            if unbound:  # a query file's parameter the engine cannot bind: the file's to fix, not the store
                raise InputError(f"parameter {unbound.group(1)} cannot be bound: name it in a SELECT list "
                                 "(SELECT * returns only the variables of its patterns, not one used in a FILTER "
                                 "alone), or, in an ASK, CONSTRUCT or DESCRIBE, put a #@bindings line first in the "
                                 "WHERE group") from None
            raise StoreError(f"query failed: {exc}") from None

    def select(self, query, bindings=None) -> Rows:
        res = self._query(query, bindings)
        if not isinstance(res, ox.QuerySolutions):
            raise InputError("expected a SELECT query")
        names = [v.value for v in res.variables]
        return Rows(names, _drained(lambda: [tuple(sol[n] for n in names) for sol in res], "query failed"))

    def ask(self, query, bindings=None) -> bool:
        res = self._query(query, bindings)
        if not isinstance(res, ox.QueryBoolean):
            raise InputError("expected an ASK query")
        return bool(res)

    def construct(self, query, bindings=None):
        res = self._query(query, bindings)
        if not isinstance(res, ox.QueryTriples):
            raise InputError("expected a CONSTRUCT or DESCRIBE query")
        return _drained(lambda: list(res), "query failed")

    def _writable(self, what: str) -> ox.Store:
        """The engine's store, unless this handle is a reader (ut42a #6: the engine's RuntimeError)."""
        store = self._live()
        if self._read_only:
            raise StoreError(f"cannot {what} {self.description}: it was opened read_only=True")
        return store

    def load_ntriples(self, stream) -> None:
        stream = _binary(stream)
        self._writable("load into")
        try:
            # bulk_load is atomic in pyoxigraph 0.5: a bad line leaves the store unchanged; never lenient.
            # No local holds the engine's store: an error's traceback would keep it (and its lock) alive
            # after close() until the garbage collector breaks the cycle through the loader's futures
            self._live().bulk_load(stream, format=ox.RdfFormat.N_TRIPLES)
        except SyntaxError as exc:
            raise NTriplesSyntaxError(str(exc), line=exc.lineno) from None
        except TypeError as exc:  # an iterator of something else than lines of bytes
            raise InputError(f"load_ntriples takes an open stream of N-Triples (open(path, 'rb')): {exc}") from None
        except (OSError, RuntimeError, ValueError) as exc:
            raise StoreError(f"loading failed: {exc}") from None

    def clear(self) -> None:
        try:
            self._writable("empty").clear()
        except OSError as exc:
            raise StoreError(f"emptying {self.path} failed: {exc}") from None

    compacts = True

    def mark_loading(self, export: str | Path) -> None:
        self._writable("load into")  # ut42a #11: a reader wrote the marker into the store's folder
        loading.begin(self.path, export)

    def unmark_loading(self) -> None:
        loading.finish(self.path)

    def unfinished_load(self) -> str | None:
        return loading.unfinished(self.path)

    def optimize(self) -> None:
        # every bulk_load ingests sorted files whose key ranges overlap the earlier loads' files, so
        # after a big load one index lookup reads many files: on a 20M-triple store compaction made
        # per-entity queries 2.5-5x faster (docs/queries.md, "Compaction after loading")
        try:
            self._writable("compact").optimize()
        except OSError as exc:
            raise StoreError(f"compacting {self.path} failed: {exc}") from None

    def count(self) -> int:
        return len(self._live())

    def _live(self) -> ox.Store:
        if self._store is None:
            raise StoreError(f"{self.description} is closed")
        return self._store

    def close(self) -> None:
        """Flush and release the store (its lock, for a writer); closing again does nothing. A writer's
        failed flush (a full disk) is a StoreError: it was swallowed with a reader's (mq1 #11)."""
        self.closed = True
        if self._store is None:
            return
        store, self._store = self._store, None
        if self._read_only:  # a reader has nothing to flush (the engine refuses)
            return
        failed = None
        try:
            store.flush()
        except (OSError, RuntimeError) as exc:
            failed = first_text(exc)
        # raised below, not in the except: the error's traceback holds this frame, which must not hold
        # the engine's store (and its lock) after the caller caught the error (rv42 L3)
        del store
        if failed is not None:
            raise StoreError(f"flushing {self.path} failed: {failed}; the last changes may not be on disk: load again")


class MemoryStore(EmbeddedStore):
    """pyoxigraph's in-memory store: the embedded store's engine, so every named query answers as there
    (ut42a #1, #2: rdflib's engine, which ``memory`` was, failed or differed on a third of them)."""

    kind = "memory"
    description = "pyoxigraph in-memory store"
    compacts = False  # nothing to compact in memory

    def __init__(self):
        self.path = None
        self._read_only = False
        self._store = ox.Store()

    def mark_loading(self, export: str | Path) -> None:
        self._check_open()

    def unmark_loading(self) -> None:
        pass

    def unfinished_load(self) -> str | None:
        return None

    def optimize(self) -> None:
        self._check_open()

    def close(self) -> None:
        self.closed = True
        self._store = None


# ----------------------------------------------------------------------------- rdflib


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


# ----------------------------------------------------------------------------- remote (SPARQL 1.1)


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


_BARE_DESCRIBE = re.compile(r"(?is)\s*((PREFIX\s+[\w.-]*:|BASE)\s*)*DESCRIBE(\s+(\?\w+|\$\w+|\*|[\w.-]*:[\w.-]*))*\s*")


def _with_where(query: str) -> str:
    r"""A DESCRIBE with no WHERE group (``DESCRIBE ?entity``), which a store binds in place, with one
    holding the marker line, where an endpoint's VALUES block binds the same (ut41a #4); any other
    query as it is.

    >>> _with_where("PREFIX x: <urn:x#>  # the entity\nDESCRIBE ?entity")
    'PREFIX x: <urn:x#>  # the entity\nDESCRIBE ?entity\nWHERE {\n#@bindings\n}\n'
    """
    if any(line.strip() == BINDINGS_MARKER for line in query.split("\n")) \
            or not _BARE_DESCRIBE.fullmatch(blank(query, keep=("var",))):
        return query
    return f"{query.rstrip()}\nWHERE {{\n{BINDINGS_MARKER}\n}}\n"


def _derive(endpoint: str) -> tuple[str | None, str | None]:
    """Update and graph-store URLs for the common layouts (Oxigraph /query, Fuseki /sparql), with the
    endpoint's query string (an API key a gateway wants on every request: ut41a #3).

    >>> _derive("http://h:7878/query?apikey=k")
    ('http://h:7878/update?apikey=k', 'http://h:7878/store?apikey=k')
    """
    parts = urllib.parse.urlsplit(endpoint)
    base, _, last = parts.path.rstrip("/").rpartition("/")
    names = {"query": ("update", "store"), "sparql": ("update", "data")}.get(last)  # oxigraph serve, Fuseki
    if names is None:
        return None, None
    return tuple(urllib.parse.urlunsplit(parts._replace(path=f"{base}/{name}", fragment="")) for name in names)


#: the longest request timeout taken (a larger one overflows the socket's clock)
MAX_TIMEOUT = 7 * 86_400


def _check_url(url, option: str) -> None:
    """An endpoint URL: http(s) with a host, no space or control character (ut44a #1 #4 #5: a file: URL
    "took" a load, a space was an internal error, HTTP:// was refused saying http://)."""
    if not isinstance(url, str):  # rv42 #5: a TypeError
        raise ConfigError(f"the URL ({option}) must be a string, got {type(url).__name__}")
    bad = re.search(r"[\x00-\x20\x7f]|[^\x00-\x7f]", url)
    if bad:  # HTTP sends the URL as ASCII (rv44 #4: a path with é was a UnicodeEncodeError, "a bug")
        what = "space" if bad.group() == " " else "control character" if bad.group() < "\x80" else "non-ASCII character"
        raise ConfigError(f"the URL ({option}) has a {what} at character {bad.start() + 1}: remove it, or "
                          f"percent-encode it (%20 for a space, %C3%A9 for é)")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port
    except ValueError as exc:  # an unclosed [IPv6 host, a port out of range (rv44 #4)
        raise ConfigError(f"the URL ({option}) is not a valid URL: {exc}") from None  # shown: it may hold a key
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the URL ({option}) must be an http(s) URL with a host, got {redacted(url)!r}")


def redacted(url: str) -> str:
    """``url`` for messages: its user part (a user name may be a token) and its query's values (an API
    key) hidden (rv40 m1).

    >>> redacted("http://tok3n@host:7878/query?apikey=k3y&x=1")
    'http://***@host:7878/query?apikey=***&x=***'
    >>> redacted("https://host/sparql?S3CR3T#t0ken")
    'https://host/sparql?***#***'
    >>> redacted("http://host/store?default")  # the Graph Store Protocol's own parameter (ut44a #10)
    'http://host/store?default'
    """
    parts = urllib.parse.urlsplit(url)
    netloc = "***@" + parts.netloc.rsplit("@", 1)[1] if "@" in parts.netloc else parts.netloc
    # a value without a name (?KEY) is hidden whole; a fragment too (rv41 M2)
    query = "&".join(f"{k.split('=', 1)[0]}=***" if "=" in k else k if k == "default" else "***"
                     for k in parts.query.split("&")) \
        if parts.query else ""
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query,
                                                  fragment="***" if parts.fragment else ""))


def _drained(read, what: str):
    """``read()`` (which iterates a lazy result), its errors as a StoreError: the engine reports a
    failing SERVICE call or a broken results document only while its rows are read."""
    try:
        return read()
    except (SyntaxError, RuntimeError, ValueError, OSError) as exc:
        raise StoreError(f"{what}: {first_text(exc)}") from None


#: a server out of threads or processes (EAGAIN): impact, the lineage walks and audit send a request per
#: asset, and `oxigraph serve --timeout-s T` keeps a thread per request for T seconds
_EXHAUSTED_HINT = ("; the server ran out of threads or processes: impact, upstream / downstream and audit send "
                   "one request per asset, and an `oxigraph serve --timeout-s T` keeps a thread per request for "
                   "T seconds (start it without --timeout-s, or with a short one)")


def _server_said(body: bytes | None) -> str:
    """The first line of an error response's body (a server's own reason), or ""."""
    text = (body or b"")[:2000].decode("utf-8", "replace").strip()
    if text.lstrip().startswith("<"):  # an HTML error page: its text, without the tags
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", text)).strip()
    return (text.splitlines() or [""])[0][:300]


def _tls_timeout(exc: BaseException) -> bool:
    reason = getattr(exc, "reason", exc)
    return isinstance(reason, (TimeoutError, OSError)) and "handshake" in str(reason).lower()


def _no_handshake(where: str, timeout: float) -> StoreError:
    """https:// to a plain-http port: the handshake never gets an answer."""
    return StoreError(f"{where}: no TLS handshake within {timeout:g} s: is it a plain-http server (http://), or "
                      "the wrong port?")


def _credential(name: str) -> str | None:
    """A credential from the environment: a trailing line break (a secret mounted from a file) dropped,
    any other control character refused, naming the variable and never showing the value."""
    value = os.environ.get(name)
    if value is None:
        return None
    value = value.rstrip("\r\n")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(f"{name} contains a control character (a line break inside it?): fix the variable")
    return value


def first_text(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


_REDIRECTS = (301, 302, 303, 307, 308)


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the HTTP error it is: urllib would send the credentials on to the new
    address (another host, or http after https) and turn a POST into a GET without its body, so a
    load would "succeed" having sent nothing (ut8a #3)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_OPENER = urllib.request.build_opener(_RefuseRedirects)


def _redirected(url: str, exc: urllib.error.HTTPError) -> StoreError:
    # the target keeps the query string of the URL given (an http -> https redirect): its key too (ut41a #2)
    target = redacted(exc.headers.get("Location")) if exc.headers.get("Location") else "?"
    return StoreError(f"{url} redirects (HTTP {exc.code}) to {target}: give that URL "
                      "instead (changeprov follows no redirect, so that credentials and data go only where you "
                      "said)")


@functools.cache
def _sparql_wrapper_class():
    """SPARQLWrapper, opening its requests with _OPENER (its own ``_query`` uses urllib's global opener,
    which follows redirects); its HTTP errors are mapped as SPARQLWrapper maps them."""
    from SPARQLWrapper import SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import (EndPointInternalError, EndPointNotFound, QueryBadFormed,
                                                Unauthorized, URITooLong)

    errors = {400: QueryBadFormed, 401: Unauthorized, 404: EndPointNotFound, 414: URITooLong,
              500: EndPointInternalError}

    class _NoRedirectWrapper(SPARQLWrapper):
        def _query(self):
            request = self._createRequest()
            try:
                response = _OPENER.open(request, timeout=self.timeout) if self.timeout else _OPENER.open(request)
                return response, self.returnFormat
            except urllib.error.HTTPError as exc:
                if exc.code in errors:
                    error = errors[exc.code](body := exc.read())
                    error.response = body  # the server's reason, for the message (_server_said)
                    raise error from None
                raise

    return _NoRedirectWrapper


class RemoteStore(TripleStore):
    kind = "remote"
    atomic_load = False  # sent in batches of at most batch_bytes (of N-Triples, before the request's wrapping)

    def __init__(self, endpoint: str, *, update_endpoint: str | None = None, graph_store: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, batch_bytes: int = DEFAULT_BATCH_BYTES):
        for url, option in ((endpoint, "endpoint=, --endpoint"), (update_endpoint, "update_endpoint=, --update-endpoint"),
                            (graph_store, "graph_store=, --graph-store")):
            if url is not None or option.startswith("endpoint"):
                _check_url(url, option)
        for url in (endpoint, update_endpoint, graph_store):
            if url and (urllib.parse.urlsplit(url).username is not None):
                raise ConfigError(f"credentials in an endpoint URL are refused ({redacted(url)}): they would show in "
                                  f"process lists and shell history; set {ENV_USER} and {ENV_PASSWORD}, or {ENV_TOKEN}")
        for name, value in (("timeout", timeout), ("batch_bytes", batch_bytes)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
        if timeout > MAX_TIMEOUT:  # ut44a #4: 1e12 s overflowed the socket's clock, "internal error"
            raise ConfigError(f"timeout must be at most {MAX_TIMEOUT:,} seconds (a week), got {timeout!r}")
        self.endpoint = endpoint
        upd, gsp = _derive(endpoint)
        self.update_endpoint = update_endpoint or upd
        self.graph_store = graph_store or (gsp if not update_endpoint else None)
        self._derived = {url for url, given in ((upd, update_endpoint), (gsp, graph_store)) if url and not given}
        self.timeout = timeout
        self.batch_bytes = batch_bytes
        self.shown = redacted(endpoint)  # for messages
        self.description = f"SPARQL endpoint {self.shown}"
        self._headers = self._auth_headers()

    @staticmethod
    def _auth_headers() -> dict[str, str]:
        token, user, password = (_credential(name) for name in (ENV_TOKEN, ENV_USER, ENV_PASSWORD))
        if token:
            if not token.isascii():  # an HTTP header carries Latin-1 at most; a bearer token is ASCII
                raise ConfigError(f"{ENV_TOKEN} has a character that is not ASCII (a typographic quote?): fix the variable")
            return {"Authorization": "Bearer " + token}
        # a missing variable, not an empty value: say so instead of being refused (or sending nothing)
        if user is not None and password is None:
            raise ConfigError(f"{ENV_USER} is set but {ENV_PASSWORD} is not")
        if password is not None and user is None:
            raise ConfigError(f"{ENV_PASSWORD} is set but {ENV_USER} is not")
        if user is not None:
            cred = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            return {"Authorization": "Basic " + cred}
        return {}

    def _refused(self, url: str, code: int) -> str:
        """What to do about a 401 / 403: which credentials went, and where they come from."""
        sent = self._headers.get("Authorization", "").split(" ")[0]
        what = "a bearer token from the environment was" if sent == "Bearer" else \
            "basic credentials from the environment were"
        how = (f"{what} sent" if sent else f"no credentials were sent: set {ENV_TOKEN}, or {ENV_USER} and {ENV_PASSWORD}")
        return f"{url} refused access (HTTP {code}): {how}"

    def _wrapper(self, query: str, accept: str):
        from SPARQLWrapper import POST

        sw = _sparql_wrapper_class()(self.endpoint)
        sw.setMethod(POST)
        # the documented attribute; setTimeout() truncates to int, and 0 means no timeout at all
        sw.timeout = self.timeout
        sw.setQuery(query)
        sw.clearCustomHttpHeader("Accept")
        for k, v in self._headers.items():
            sw.addCustomHttpHeader(k, v)
        sw.addCustomHttpHeader("Accept", accept)
        if sw.queryType not in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
            raise InputError("only SELECT, ASK, CONSTRUCT and DESCRIBE queries are sent to an endpoint")
        return sw

    def _fetch(self, query: str, bindings, accept: str) -> bytes:
        from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

        self._check_open()
        bindings = checked_bindings(bindings)
        text = with_values(_with_where(query) if bindings else query, bindings)
        # the leading comment header is documentation; dropping it keeps SPARQLWrapper's query-type sniffing
        # right. Lines end only at LF, and one with a CR is kept: the engine ends a comment there, and the
        # text sent must be the text the SERVICE guard read (rv43 H1)
        lines = text.split("\n")
        while lines and "\r" not in lines[0] and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
            lines.pop(0)
        text = "\n".join(lines)
        try:
            return self._wrapper(text, accept).query().response.read()
        except SPARQLWrapperException as exc:
            msg = str(exc).splitlines()[0][:500].strip()
            said = _server_said(getattr(exc, "response", None))
            if "QueryBadFormed" in type(exc).__name__:
                raise InputError(f"endpoint refused the query: {said or msg}") from None
            if type(exc).__name__ == "Unauthorized":
                raise StoreError(self._refused(f"endpoint {self.shown}", 401)) from None
            if type(exc).__name__ == "EndPointNotFound":  # HTTP 404, most often a server's base URL
                raise StoreError(f"endpoint {self.shown} answered 404 Not Found: --endpoint must be the "
                                 "SPARQL query URL (oxigraph serve: http://HOST:PORT/query; Fuseki: "
                                 "http://HOST:PORT/DATASET/sparql)") from None
            raise StoreError(f"endpoint {self.shown} failed: {msg}{f' ({said})' if said else ''}"
                             f"{_EXHAUSTED_HINT if 'temporarily unavailable' in said.lower() else ''}") from None
        except urllib.error.HTTPError as exc:
            if exc.code in _REDIRECTS:
                raise _redirected(self.shown, exc) from None
            if exc.code == 403:
                raise StoreError(self._refused(f"endpoint {self.shown}", 403)) from None
            said = _server_said(exc.read())
            raise StoreError(f"endpoint {self.shown} failed: HTTP {exc.code} {exc.reason}"
                             f"{f' ({said})' if said else ''}") from None
        except (urllib.error.URLError, OSError) as exc:
            if _tls_timeout(exc):  # https:// to a plain-http port: the handshake never gets an answer
                raise _no_handshake(f"endpoint {self.shown}", self.timeout) from None
            if isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError):
                # ut10b #2: "cannot reach" while the server was still computing the answer
                raise StoreError(f"endpoint {self.shown} gave no answer within {self.timeout:g} s (timeout=, --timeout): "
                                 "the query may still be running there; a longer timeout waits for it") from None
            raise StoreError(f"cannot reach endpoint {self.shown}: {exc}") from None

    def _results(self, data: bytes):
        try:
            return ox.parse_query_results(data, format=ox.QueryResultsFormat.JSON)
        except (SyntaxError, ValueError) as exc:  # a login page, a proxy's error page, another service
            raise StoreError(f"endpoint {self.shown} did not answer with SPARQL results JSON ({first_text(exc)}; "
                             f"it sent {data[:60]!r})") from None

    def select(self, query, bindings=None) -> Rows:
        data = self._fetch(query, bindings, "application/sparql-results+json")
        res = self._results(data)
        if not isinstance(res, ox.QuerySolutions):
            raise InputError("expected a SELECT query")
        names = [v.value for v in res.variables]
        # an error found while the server was already streaming its results ends the body (oxigraph)
        return Rows(names, _drained(lambda: [tuple(sol[n] for n in names) for sol in res],
                                    f"endpoint {self.shown} broke off its results (it ended with {data[-120:]!r})"))

    def ask(self, query, bindings=None) -> bool:
        res = self._results(self._fetch(query, bindings, "application/sparql-results+json"))
        if not isinstance(res, ox.QueryBoolean):
            raise InputError("expected an ASK query")
        return bool(res)

    def construct(self, query, bindings=None):
        data = self._fetch(query, bindings, "application/n-triples")
        try:  # triples, as the other stores give them (ut44f #4: quads)
            return [quad.triple for quad in ox.parse(data, format=ox.RdfFormat.N_TRIPLES)]
        except SyntaxError as exc:
            raise StoreError(f"endpoint {self.shown} did not answer with N-Triples ({first_text(exc)}; "
                             f"it sent {data[:60]!r})") from None

    def _post(self, url: str, body: bytes, content_type: str, *, sent: int = 0, before: str | None = None) -> None:
        """POST one request; ``sent`` batches of a load went before it (``before``: what other requests say
        of those, e.g. reason's updates)."""
        self._check_open()
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type, **self._headers})
        if before is None:
            before = (f"the {sent} batch(es) sent before it stay in the store (a remote load is not atomic): load "
                      "again to complete it (loading is idempotent)" if sent else "no earlier batch was stored")
        try:
            with _OPENER.open(req, timeout=self.timeout) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code in _REDIRECTS:
                raise _redirected(redacted(url), exc) from None
            if exc.code in (401, 403):
                raise StoreError(f"{self._refused(redacted(url), exc.code)}; {before}") from None
            derived = url.split("?")[0] in {u.split("?")[0] for u in self._derived}
            hint = {404: (f": is it the Graph Store URL? --graph-store URL gives it (derived from --endpoint: {redacted(url)})"
                          if derived else ": is it the right URL?"),
                    413: f": the server takes smaller requests; --batch-bytes N sends less at a time (now {self.batch_bytes:,})"
                    }.get(exc.code, "")
            said = _server_said(exc.read())
            raise StoreError(f"{redacted(url)} refused the data: HTTP {exc.code}{f' ({said})' if said else ''}{hint}; {before}") from None
        except (urllib.error.URLError, OSError) as exc:
            if _tls_timeout(exc):
                raise _no_handshake(redacted(url), self.timeout) from None
            if isinstance(exc, TimeoutError):  # sent whole, no answer yet (ut44a #3: it was stored moments later)
                raise StoreError(f"{redacted(url)} gave no answer within {self.timeout:g} s (timeout=, --timeout): "
                                 f"this request may still be applied there; {before}") from None
            if isinstance(getattr(exc, "reason", None), TimeoutError):  # urllib: while connecting or sending (rv44 #7)
                raise StoreError(f"cannot send to {redacted(url)} within {self.timeout:g} s (timeout=, --timeout): "
                                 f"this request was not applied; {before}") from None
            raise StoreError(f"cannot reach {redacted(url)}: {exc}; {before}") from None

    def _batches(self, stream) -> Iterator[bytes]:
        """The stream's lines in chunks of at most batch_bytes (a longer line alone): a gateway's limit of N
        bytes must take --batch-bytes N (rv35 #8)."""
        batch: list[bytes] = []
        size = 0
        for line in _binary(stream):
            line = line.encode("utf-8") if isinstance(line, str) else line  # a text stream, as the others take
            line = line if line.endswith(b"\n") else line + b"\n"
            if batch and size + len(line) > self.batch_bytes:
                yield b"".join(batch)
                batch, size = [], 0
            batch.append(line)
            size += len(line)
        if batch:
            yield b"".join(batch)

    def _requests(self, triples: list) -> Iterator[bytes]:
        """Request bodies of at most batch_bytes where the triples allow: the canonical serialisation and
        the SPARQL Update wrapping can make a chunk larger than its lines."""
        body = ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES)
        if not self.graph_store:
            body = b"INSERT DATA {\n" + body + b"}\n"
        if len(body) > self.batch_bytes and len(triples) > 1:
            half = len(triples) // 2
            yield from self._requests(triples[:half])
            yield from self._requests(triples[half:])
        else:
            yield body

    def load_ntriples(self, stream) -> None:
        if not (self.graph_store or self.update_endpoint):
            raise ConfigError("cannot load into this endpoint: give --graph-store URL or --update-endpoint URL")
        sent = lines = 0
        for chunk in self._batches(stream):
            try:  # validate strictly before sending (and serialise canonically)
                triples = list(ox.parse(chunk, format=ox.RdfFormat.N_TRIPLES))
            except SyntaxError as exc:  # the stream's line, as the other kinds say it
                raise NTriplesSyntaxError(shift_lines(str(exc), lines),
                                          line=lines + exc.lineno if exc.lineno else None) from None
            lines += chunk.count(b"\n")
            for body in self._requests(triples) if triples else ():
                if self.graph_store:
                    sep = "&" if "?" in self.graph_store else "?"
                    self._post(self.graph_store + sep + "default", body, "application/n-triples", sent=sent)
                else:
                    self._post(self.update_endpoint, body, "application/sparql-update", sent=sent)
                if not sent:
                    self._check_stored(triples)
                sent += 1

    def _check_stored(self, triples: list[ox.Triple]) -> None:
        """After the first request of a load, a subject it wrote must be in the store the queries read: a
        gateway answering the upload with HTTP 200 and its login page made a load "succeed" with nothing
        stored (ut44a #2), as would a --graph-store of another dataset. Servers answer writes in many ways
        (Fuseki an HTML page, Oxigraph no body), so the data is checked, not the answer: by an IRI subject
        alone (rv44 #2: a blank node cannot be asked for, and a server may rewrite a literal's form)."""
        subject = next((t.subject for t in triples if isinstance(t.subject, ox.NamedNode)), None)
        if subject is None:
            return
        where = redacted(self.graph_store or self.update_endpoint)
        try:
            stored = self.ask("ASK {\n#@bindings\n?s ?p ?o }", {"s": subject})
        except ChangeprovError as exc:
            raise StoreError(f"{where} accepted the first batch, which stays in the store, but checking that it can be "
                             f"queried failed: {exc}") from None
        if not stored:
            raise StoreError(f"{where} accepted the first batch, but its triples are not in the store the endpoint "
                             f"{self.shown} queries: a gateway answering in its place (a login page?), "
                             f"{'--graph-store' if self.graph_store else '--update-endpoint'} of another dataset, "
                             f"or a read replica behind the writer")


# ----------------------------------------------------------------------------- factory


def open_store(kind: str = "embedded", *, path: str | Path | None = None, endpoint: str | None = None,
               create: bool = False, read_only: bool = False, **options) -> TripleStore:
    """One entry point: ``kind`` selects the store (``embedded`` | ``remote`` | ``memory`` | ``rdflib``).

    embedded: ``path`` (``create``: make it if missing; ``read_only``: a snapshot of the store as it was
    when opened, which other processes may read beside); remote: ``endpoint`` (the SPARQL query URL),
    ``update_endpoint``, ``graph_store``, ``timeout`` (seconds per request), ``batch_bytes`` (largest
    load request); memory: pyoxigraph in memory, the embedded store's engine; rdflib: an rdflib graph,
    whose SPARQL engine answers only some named queries as the others do. An option the kind does not
    take is a ConfigError.

    >>> open_store("embedded", path="db", timeout=5)
    Traceback (most recent call last):
    ...
    changeprov.errors.ConfigError: option(s) timeout do not apply to an embedded store (it takes create, path, read_only)
    """
    if kind not in _OPTIONS:
        raise ConfigError(f"unknown store kind {kind!r} (one of {', '.join(KINDS)})")
    for name, value in (("create", create), ("read_only", read_only)):
        if not isinstance(value, bool):  # rv42 #5: create="no" created the store
            raise ConfigError(f"{name} must be True or False, got {value!r}")
    given = {name for name, value in (("path", path), ("endpoint", endpoint), ("create", create),
                                      ("read_only", read_only)) if value} | set(options)
    if given - _OPTIONS[kind]:
        raise ConfigError(f"option(s) {', '.join(sorted(given - _OPTIONS[kind]))} do not apply to a{'n' if kind[0] in 'ae' else ''} "
                          f"{kind} store (it takes {', '.join(sorted(_OPTIONS[kind])) or 'none'})")
    if kind == "embedded":
        if path is None:
            raise ConfigError("the embedded store needs a path (path=, --store PATH)")
        if not isinstance(path, (str, os.PathLike)):  # ut42a #6: a TypeError from pathlib
            raise ConfigError(f"the embedded store's path must be a str or a path, got {type(path).__name__}")
        if create and read_only:
            raise ConfigError("a store cannot be created read-only: open it with create=True first")
        return EmbeddedStore(path, create=create, read_only=read_only)
    if kind == "remote":
        if not endpoint:
            raise ConfigError("the remote store needs an endpoint (endpoint=, --endpoint URL)")
        if not isinstance(endpoint, str):  # rv42 #5: a TypeError
            raise ConfigError(f"the endpoint must be a URL string, got {type(endpoint).__name__}")
        return RemoteStore(endpoint, **options)
    return MemoryStore() if kind == "memory" else RdflibStore()


def refuse_endpoint_options(args) -> None:
    """An argparse namespace without --endpoint must not carry the endpoint's own options: they would do
    nothing, without a word (rv43b #6: `--store … --timeout 5`)."""
    given = [option for option, dest in (("--update-endpoint", "update_endpoint"), ("--graph-store", "graph_store"),
                                         ("--timeout", "timeout")) if getattr(args, dest, None) is not None]
    if given and not getattr(args, "endpoint", None):
        raise ConfigError(f"{', '.join(given)}: for an endpoint (--endpoint URL) only")


def store_from_args(args, *, create: bool = False, read_only: bool = False) -> TripleStore:
    """The store an argparse namespace names (--store PATH | --endpoint URL)."""
    refuse_endpoint_options(args)
    if getattr(args, "endpoint", None):
        return open_store("remote", endpoint=args.endpoint, update_endpoint=getattr(args, "update_endpoint", None),
                          graph_store=getattr(args, "graph_store", None),
                          timeout=getattr(args, "timeout", None) or DEFAULT_TIMEOUT,
                          batch_bytes=getattr(args, "batch_bytes", None) or DEFAULT_BATCH_BYTES)
    if getattr(args, "store", None):
        store = open_store("embedded", path=args.store, create=create, read_only=read_only)
        note = store.unfinished_load()
        if note:  # this helper is the command line's: it tells the user, on stderr, before any answer
            print(f"changeprov: warning: {note}", file=sys.stderr, flush=True)
        return store
    raise ConfigError("give --store PATH (embedded store) or --endpoint URL (SPARQL 1.1 server)")


__all__: Sequence[str] = ["KINDS", "BINDINGS_MARKER", "Rows", "TripleStore", "EmbeddedStore", "MemoryStore",
                          "RdflibStore", "RemoteStore", "open_store", "store_from_args", "refuse_service", "values_block",
                          "with_values", "query_form"]
