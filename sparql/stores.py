"""Triple stores behind one interface, chosen by a ``kind`` string (OpenLineage-transport style).

* ``embedded`` (default): an on-disk pyoxigraph ``Store`` at a path (created by ``load`` if missing).
* ``remote``: any SPARQL 1.1 server. Queries go through SPARQLWrapper (POST, JSON results); loading
  uses the SPARQL 1.1 Graph Store HTTP Protocol (``POST`` of N-Triples batches to the default graph)
  or, without a graph store URL, ``INSERT DATA`` batches to the update endpoint. Credentials come only
  from the environment: ``CHANGEPROV_ENDPOINT_TOKEN`` (bearer) or ``CHANGEPROV_ENDPOINT_USER`` /
  ``CHANGEPROV_ENDPOINT_PASSWORD`` (basic).
* ``memory``: pyoxigraph in memory, the embedded store's engine.
* ``rdflib``: an rdflib in-memory ``Graph`` (the benchmarks' baseline).

This module holds the interface (:class:`TripleStore`, :class:`Rows`), what every kind shares and the
factory (:func:`open_store`); each kind lives in a module of its own (``embedded``, ``remote``,
``rdflib_store``), imported when a store of that kind is opened.

Parameters are bound by the engine, never by string formatting: pyoxigraph ``substitutions``,
rdflib ``initBindings``, and for remote endpoints a ``VALUES`` block of pyoxigraph-serialised terms
inserted at each ``#@bindings`` marker line of the query (``changeprov.sparql.values``).
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import re
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Iterator, Mapping, Sequence

import pyoxigraph as ox

from changeprov.errors import ChangeprovError, ConfigError, InputError, StoreError
from changeprov.mapping.vocab import XSD
from changeprov.sparql.lexer import PIECES, blank

#: the store kinds and the options of open_store that each takes (the rest is an error, not ignored)
_OPTIONS = {"embedded": {"path", "create", "read_only"},
            "remote": {"endpoint", "update_endpoint", "graph_store", "timeout", "batch_bytes"},
            "memory": set(), "rdflib": set()}
KINDS = tuple(_OPTIONS)
BINDINGS_MARKER = "#@bindings"
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


def _drained(read, what: str):
    """``read()`` (which iterates a lazy result), its errors as a StoreError: the engine reports a
    failing SERVICE call or a broken results document only while its rows are read."""
    try:
        return read()
    except (SyntaxError, RuntimeError, ValueError, OSError) as exc:
        raise StoreError(f"{what}: {first_text(exc)}") from None


def first_text(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


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
        from changeprov.sparql.embedded import EmbeddedStore

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
        from changeprov.sparql.remote import RemoteStore

        return RemoteStore(endpoint, **options)
    if kind == "memory":
        from changeprov.sparql.embedded import MemoryStore

        return MemoryStore()
    from changeprov.sparql.rdflib_store import RdflibStore

    return RdflibStore()


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


#: the kinds' classes and the VALUES helpers, which this module held before each kind had its own: still
#: importable from here (imported when asked for, as the kinds' modules import this one)
_MOVED = {"EmbeddedStore": "embedded", "MemoryStore": "embedded", "RemoteStore": "remote", "RdflibStore": "rdflib_store",
          "to_rdflib": "rdflib_store", "from_rdflib": "rdflib_store", "values_block": "values", "with_values": "values",
          "with_rows": "values"}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"changeprov.sparql.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__: Sequence[str] = ["KINDS", "BINDINGS_MARKER", "Rows", "TripleStore", "NTriplesSyntaxError", "open_store",
                          "store_from_args", "refuse_service", "query_form", "python_value"]
