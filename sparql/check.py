"""`changeprov check`: the report model, and the data and PROV checks run against a store.

Three groups of checks, each reporting a total count and the first N examples:

* ``ontology`` — :mod:`changeprov.ontology.checks` (no store needed);
* ``shacl`` — every constraint of ontology/shapes.ttl, run inside the store as SPARQL
  (:mod:`changeprov.sparql.shacl_sparql` says why and how);
* ``prov`` — the PROV-CONSTRAINTS violation queries ``sparql/queries/*-violation.rq`` (any row is a
  finding). Class membership: a VALUES line marked ``#@subclasses`` is widened here to the class and
  all its sub-classes in the ontology, so the queries see an om-event:ChangeEvent as a prov:Activity
  on a store that was never reasoned (the store holds only data; the ontology terms written into the
  query are bundled IRIs, not user input). On a reasoned store the widening changes nothing.

Library code: never exits; the CLI maps ``report.ok`` to exit 0 / 1.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.mapping.vocab import PROV, XSD
from changeprov.ontology.checks import ontology_checks
from changeprov.sparql import lexer
from changeprov.sparql.formats import display_text
from changeprov.sparql.queries import NamedQuery, get_query, list_queries, lookup
from changeprov.sparql.rdflib_store import _parse_lock, _rdflib_recursion
from changeprov.sparql.stores import TripleStore

GROUPS = ("ontology", "shacl", "prov")
VIOLATION_SUFFIX = "-violation"
_SUBCLASSES = re.compile(r"^(\s*)VALUES\s+(\?\w+)\s*\{\s*(\S+)\s*\}\s*#@subclasses\s*$", re.MULTILINE)


@dataclass
class CheckResult:
    name: str
    group: str
    description: str
    count: int
    examples: list[dict[str, str | None]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "count": self.count, "examples": self.examples}


@dataclass
class CheckReport:
    results: list[CheckResult]
    store: str | None
    seconds: float
    limit: int
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def findings(self) -> list[CheckResult]:
        return [r for r in self.results if r.count]

    def as_dict(self) -> dict:
        groups = {g: [r.as_dict() for r in self.results if r.group == g] for g in GROUPS}
        return {"ok": self.ok, "store": self.store, "seconds": round(self.seconds, 3),
                "examples_per_check": self.limit,
                "findings": sum(r.count for r in self.results),
                "failed_checks": [f"{r.group}/{r.name}" for r in self.findings],
                "checks": {g: v for g, v in groups.items() if v}, "notes": self.notes}

    def lines(self) -> list[str]:
        out = [f"changeprov check: {self.store or 'no store given: ontology checks only'}"]
        for group in GROUPS:
            results = [r for r in self.results if r.group == group]
            if not results:
                continue
            failed = [r for r in results if r.count]
            out.append(f"{group}: {len(results)} check(s), "
                       + (f"{len(failed)} failed, {sum(r.count for r in failed):,} finding(s)" if failed else "all sound"))
            for r in failed:
                out.append(f"  FAIL {r.name} ({r.count:,}): {r.description}")
                for ex in r.examples:
                    out.append("       " + "  ".join(f"{k}={v}" for k, v in ex.items() if v is not None))
                if r.count > len(r.examples):
                    out.append(f"       … {r.count - len(r.examples):,} more")
        out += [f"note: {note}" for note in self.notes]
        out.append(("SOUND" if self.ok else f"{len(self.findings)} check(s) failed") + f" ({self.seconds:.1f} s)")
        return out


_NUMBERS = {XSD + "integer": int, XSD + "int": int, XSD + "long": int, XSD + "double": float}


def _plain(term) -> str | int | float | bool | None:
    """An example value as JSON has it: an IRI or a literal's text, integers as numbers, booleans as such
    (a script reading ``--format json`` should not have to parse N-Triples)."""
    if term is None:
        return None
    if isinstance(term, ox.Literal):
        kind = term.datatype.value
        if kind == XSD + "boolean":
            return term.value in ("true", "1")
        if kind == XSD + "dateTime":
            return display_text(term)
        try:
            return _NUMBERS[kind](term.value) if kind in _NUMBERS else term.value
        except ValueError:  # an ill-typed literal (which a SHACL check may be reporting) stays text
            return term.value
    return term.value if isinstance(term, ox.NamedNode) else str(term)


def _label(store: TripleStore, node: ox.NamedNode, cache: dict) -> str | None:
    """What a hash IRI is, as a user knows it (the ``label`` query): event id, type, entity, user, time."""
    if node not in cache:
        rows = store.select(get_query("label").text, {"node": node}).dicts()
        r = {k: (display_text(v) if v is not None else "") for k, v in rows[0].items()} if rows else {}
        kind = r.get("kind")
        if kind == "event":
            # an event id that came with two contents holds both users and times: show both, never
            # one line's user beside the other's time (ut12 #11)
            users = sorted({display_text(x["user"]) for x in rows if x["user"] is not None})
            times = sorted({display_text(x["time"]) for x in rows if x["time"] is not None})
            parts = [f"event {r['event_id']}".rstrip(), r["event_type"], f"on {r['entity_name'] or '?'}",
                     f"by {' / '.join(users)}" if users else "", f"at {' / '.join(times)}"]
            conflict = " (one event id with several contents)" if len(users) > 1 or len(times) > 1 else ""
            cache[node] = " ".join(p for p in parts if p) + conflict
        elif kind == "version":
            aspect = f"{r['aspect']} " if r.get("aspect") else ""  # DataHub: which aspect's version (ut13 #7)
            cache[node] = f"{aspect}version {r['version'] or '?'} of {r['entity_name'] or '?'}"
        elif kind == "entity" and r["entity_name"] != node.value:
            cache[node] = r["entity_name"]
        else:
            cache[node] = None
    return cache[node]


def _example(store: TripleStore, row: Mapping, cache: dict) -> dict:
    """One finding row: plain values, and after each IRI that is an event, version or entity, what it is."""
    out: dict = {}
    for k, v in row.items():
        out[k] = _plain(v)
        label = _label(store, v, cache) if isinstance(v, ox.NamedNode) else None
        if label:
            out[f"{k}_is"] = label
    return out


# ----------------------------------------------------------------------------- PROV violation queries


def violation_queries() -> list[NamedQuery]:
    return [q for q in list_queries() if q.name.endswith(VIOLATION_SUFFIX)]


def expand_subclasses(text: str) -> str:
    """Widen each ``VALUES ?v { C }  #@subclasses`` line to C and its sub-classes in the ontology."""
    from changeprov.ontology.tbox import tbox

    prefixes = lexer.prefixes(text)

    def widen(m: re.Match) -> str:
        indent, var, term = m.groups()
        if term.startswith("<") and term.endswith(">"):
            iri = term[1:-1]
        else:
            prefix, _, local = term.partition(":")
            if prefix not in prefixes:
                raise InputError(f"#@subclasses line names {term!r} with an undeclared prefix")
            iri = prefixes[prefix] + local
        classes = " ".join(str(ox.NamedNode(c)) for c in sorted(tbox().subclasses(iri)))
        return f"{indent}VALUES {var} {{ {classes} }}"

    return _SUBCLASSES.sub(widen, text)


def _split_prologue(text: str) -> tuple[str, str]:
    prologue, body = [], []
    for line in text.splitlines():
        stripped = line.strip()
        if not body and (not stripped or stripped.startswith("#") or stripped.upper().startswith(("PREFIX", "BASE"))):
            if not stripped.startswith("#"):
                prologue.append(line)
            continue
        body.append(line)
    return "\n".join(prologue), "\n".join(body)


def _count_and_examples(store: TripleStore, prologue: str, select: str, limit: int,
                        examples_query: str | None = None) -> tuple[int, list[dict]]:
    rows = store.select(f"{prologue}\nSELECT (COUNT(*) AS ?n) WHERE {{\n{select}\n}}")
    n = int(rows.rows[0][0].value) if rows.rows and rows.rows[0][0] is not None else 0
    if not n or limit <= 0:
        return n, []
    found = store.select(examples_query or f"{prologue}\n{select}\nLIMIT {int(limit)}")
    cache: dict = {}
    return n, [_example(store, row, cache) for row in found.dicts()[:limit]]


def prov_checks(store: TripleStore, *, limit: int) -> list[CheckResult]:
    out = []
    for q in violation_queries():
        prologue, select = _split_prologue(expand_subclasses(q.text))
        n, examples = _count_and_examples(store, prologue, select, limit)
        out.append(CheckResult(q.name.removesuffix(VIOLATION_SUFFIX), "prov", q.summary, n, examples))
    return out


# ----------------------------------------------------------------------------- SHACL, in the store


def shacl_checks(store: TripleStore, *, limit: int) -> list[CheckResult]:
    from changeprov.sparql.shacl_sparql import shape_constraints

    out = []
    for c in shape_constraints():
        query = f"{c.query}\nLIMIT {int(limit)}"
        n, examples = _count_and_examples(store, c.prologue, c.select, limit, examples_query=query)
        out.append(CheckResult(c.name, "shacl", c.message, n, examples))
    return out


# ----------------------------------------------------------------------------- the data's vocabulary


UNDECLARED = "undeclared-terms"
MISUSED = "misused-terms"


#: terms of the PROV namespace beside PROV-O's: PROV-AQ, PROV-DC, PROV-Dictionary and PROV-Links (W3C
#: Notes, 2013; http://www.w3.org/ns/prov lists them), which data may use (ut41d #4)
PROV_NOTES = frozenset(PROV + name for name in (
    "Accept", "Contribute", "Contributor", "Copyright", "Create", "Creator", "Dictionary", "DirectQueryService",
    "EmptyDictionary", "Insertion", "KeyEntityPair", "Modify", "Publish", "Publisher", "Removal", "Replace",
    "RightsAssignment", "RightsHolder", "ServiceDescription", "Submit", "asInBundle", "derivedByInsertionFrom",
    "derivedByRemovalFrom", "describesService", "dictionary", "hadDictionaryMember", "has_anchor", "has_provenance",
    "has_query_service", "insertedKeyEntityPair", "mentionOf", "pairEntity", "pairKey", "pingback",
    "provenanceUriTemplate", "qualifiedInsertion", "qualifiedRemoval", "removedKey"))


@functools.cache
def _prov_inverse_names() -> frozenset[str]:
    """The names PROV-O gives its properties' inverses (prov:inverse, e.g. hadDelegate), for data that
    states them."""
    from rdflib import URIRef

    from changeprov.ontology.tbox import prov_o_graph

    graph = prov_o_graph()
    return frozenset(PROV + str(name) for name in graph.objects(None, URIRef(PROV + "inverse")))


def vocabulary_checks(store: TripleStore, *, limit: int) -> list[CheckResult]:
    """The data's properties and classes in the om-event, PROV, RDF, RDFS, OWL, XSD and SKOS namespaces
    that none of them declares (``undeclared-terms``), and the om-event and PROV terms used as what
    they are not declared as (``misused-terms``: a class or an event type as a property, a property as
    a class). The shapes are open, so a triple with a misspelt property (``om-event:timestmp``)
    passed every check, and no named query ever sees it (ut40b #3); nor one with a class as its
    predicate (ut42c #3). Terms of other namespaces are the user's own business. Two scans of the
    store's predicates and types (1.5 s on 2.26M triples), not one query per term."""
    from changeprov.ontology.checks import VETTED, declared, declared_kind

    found: dict[str, str] = {}
    misused: dict[str, str] = {}
    literals: dict[str, ox.Literal] = {}  # rdf:type's objects that are literals (rv45c #5: no check saw one)
    for role in ("property", "class"):
        for (term,) in store.select(lookup(f"{role}-terms")).rows:
            if isinstance(term, ox.Literal):
                literals[str(term)] = term
                misused.setdefault(str(term), role)
                continue
            if not (isinstance(term, ox.NamedNode) and term.value.startswith(VETTED) and term.value not in VETTED):
                continue
            if not declared(term.value) and term.value not in PROV_NOTES | _prov_inverse_names():
                found.setdefault(term.value, role)
            elif declared_kind(term.value) not in (None, role):
                misused.setdefault(term.value, role)

    def declared_as(term: str) -> str | None:
        return "a literal (rdf:type takes a class)" if term in literals else declared_kind(term)

    def examples(terms: dict[str, str], **more) -> list[dict]:
        out = []
        for key in sorted(terms)[:max(limit, 0)]:
            rows = store.select(lookup(f"term-uses-{terms[key]}"), {"term": literals.get(key) or ox.NamedNode(key)})
            out.append({"term": key, "used_as": terms[key], **{k: f(key) for k, f in more.items()},
                        "triples": int(rows.rows[0][1].value)})
        return out

    return [CheckResult(UNDECLARED, "shacl", "properties and classes of the om-event, PROV, RDF, RDFS, OWL, XSD "
                        "and SKOS namespaces that the data uses and no ontology declares (a misspelt term or another "
                        "tool's: no named query sees those triples)", len(found), examples(found)),
            CheckResult(MISUSED, "shacl", "om-event and PROV terms the data uses as what the ontologies do not "
                        "declare them as (a class or an event type as a property, a property or an event type as a "
                        "class), and literals as classes", len(misused), examples(misused, declared_as=declared_as))]


# ----------------------------------------------------------------------------- everything


def sparql_syntax_problem(text: str) -> str | None:
    """None when ``text`` parses as a SPARQL 1.1 query or update, else the parser's message (line,
    column), or the prefix it uses without declaring it (which no engine runs: ut40b #2)."""
    # rdflib's parser recurses deeper than Python's default limit on the larger bundled queries (ut44c #1:
    # "not valid SPARQL: maximum recursion depth exceeded" for impact.rq and entity-state.rq), and keeps
    # its state in shared objects: the rdflib store's guards
    try:
        with _rdflib_recursion(), _parse_lock:
            return _syntax_problem(text)
    except RecursionError:
        return "nested too deeply for rdflib's parser, which checks the syntax"


def _syntax_problem(text: str) -> str | None:
    from rdflib.plugins.sparql import processor
    from rdflib.plugins.sparql.parser import parseQuery, parseUpdate

    try:
        parseQuery(text)
        translate = processor.prepareQuery
    except RecursionError:
        raise
    except Exception as query_error:  # noqa: BLE001 - pyparsing's exceptions carry the position
        try:
            parseUpdate(text)
            translate = processor.prepareUpdate
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001
            return " ".join(str(query_error).split())

    try:
        translate(text)
    except RecursionError:
        raise
    except Exception as exc:  # noqa: BLE001 - only an undeclared prefix is the query's fault for sure
        if "Unknown namespace prefix" in str(exc):
            return f"the prefix {str(exc).rsplit(':', 1)[-1].strip()}: is not declared"
    return None


def run_checks(store: TripleStore | None, *, limit: int = 10, extra_queries: Mapping[str, str] | None = None,
               groups: tuple[str, ...] | str | None = GROUPS, progress: Callable[[str], None] | None = None) -> CheckReport:
    """Run the check groups (the store ones only with a store); ``limit`` examples per check.

    >>> run_checks(None, groups=("provv",))
    Traceback (most recent call last):
    ...
    changeprov.errors.InputError: unknown check group(s) 'provv' (groups: ontology, shacl, prov)
    """
    # ut42a #5: a misspelt group ran nothing and reported sound; a string matched as a substring
    groups = GROUPS if groups is None else (groups,) if isinstance(groups, str) else tuple(groups)
    unknown = [g for g in groups if g not in GROUPS]
    if not groups:  # rv42 #5: no group ran no check and said sound
        raise InputError(f"no check group given (groups: {', '.join(GROUPS)})")
    if unknown:
        raise InputError(f"unknown check group(s) {', '.join(map(repr, unknown))} (groups: {', '.join(GROUPS)})")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InputError(f"limit must be an int >= 0 (examples per check), got {limit!r}")
    # vetted as the command vets --query-file (ut44f #7: "SELEC ?x" was sound, a list a failed check)
    if extra_queries is not None and not isinstance(extra_queries, Mapping):
        raise InputError(f"extra_queries must be a mapping of name to query text, got {type(extra_queries).__name__}")
    for qname, text in (extra_queries or {}).items():
        problem = sparql_syntax_problem(text) if isinstance(text, str) else f"not a string but {type(text).__name__}"
        if problem:  # its terms cannot be vetted, and "sound" would read as "this query is fine"
            raise InputError(f"{qname}: not valid SPARQL: {problem}")
    start = time.perf_counter()
    say = progress or (lambda _msg: None)
    results: list[CheckResult] = []
    if "ontology" in groups:
        say("ontology checks")
        for c in ontology_checks(extra_queries=extra_queries):
            results.append(CheckResult(c.name, "ontology", c.description, len(c.problems),
                                       [{"problem": p} for p in c.problems[:limit]]))
    if store is not None and "shacl" in groups:
        say("SHACL shapes")
        results += shacl_checks(store, limit=limit)
        results += vocabulary_checks(store, limit=limit)
    if store is not None and "prov" in groups:
        say("PROV constraints")
        results += prov_checks(store, limit=limit)
    notes = []
    if store is not None and "prov" in groups:
        untyped = store.select(lookup("untyped-prov-node")).rows
        if untyped:  # ut45c #4: README says so, the report did not
            notes.append(f"{display_text(untyped[0][0])} (and maybe more subjects of PROV relations) has no stated type: "
                         "the PROV checks count the types PROV-O's domains and ranges give only after `changeprov "
                         "reason` (a store not reasoned)")
    if store is not None and {"shacl", "prov"} & set(groups) and store.ask(lookup("named-graphs")):
        if store.ask(lookup("named-graphs-apart")):
            notes.append("the store also has named graphs: the checks read its default graph only, as the named "
                         "queries do (triples in a named graph are not checked)")
        else:  # ut48b #6: a server whose default graph is the union of its graphs
            notes.append("the store's default graph holds the triples of its named graphs too (a union default graph: "
                         "oxigraph serve --union-default-graph, Fuseki's unionDefaultGraph): the checks and the named "
                         "queries read every graph's triples")
    return CheckReport(results, store.description if store is not None else None, time.perf_counter() - start, limit,
                       notes)


