"""`changeprov check`: the corpus is sound, and each kind of violation injected into it is reported —
exactly that one — by the library and by the CLI (exit 1). The SHACL-as-SPARQL translation agrees
with pyshacl; the same checks give the same answers on a real `oxigraph serve` endpoint."""

from __future__ import annotations

import contextlib
import io
import json
import re
import urllib.request
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from changeprov.cli import main
from changeprov import sparql as sparql_package
from changeprov.sparql.check import _plain, expand_subclasses, sparql_syntax_problem, violation_queries
from changeprov.sparql.loader import load_export
from changeprov.sparql.queries import get_query, run_query
from changeprov.sparql.rdflib_store import from_rdflib
from changeprov.sparql.remote import RemoteStore
from changeprov.sparql.stores import open_store
from changeprov.sparql.server import oxigraph_server
from sparql_support import CORPUS, corpus_export, map_corpus

OM = "https://open-metadata.org/schema/type/changeEvent/"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
PREFIXES = f"PREFIX om: <{OM}>\nPREFIX prov: <{PROV}>\n"


def N(iri: str) -> ox.NamedNode:
    return ox.NamedNode(iri)


def dt(value: str, datatype: str = XSD + "dateTime") -> ox.Literal:
    return ox.Literal(value, datatype=N(datatype))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared is absent (a user's clone has none); CI always has it")
    return tmp_path_factory.mktemp("check")


@pytest.fixture(scope="module")
def corpus_nt(work) -> bytes:
    return map_corpus(work).read_bytes()


@pytest.fixture(scope="module")
def picks(corpus_nt) -> dict[str, ox.NamedNode]:
    """Real nodes of the corpus the injections attach to (chosen so only the intended check fires)."""
    store = ox.Store()
    store.bulk_load(corpus_nt, format=ox.RdfFormat.N_TRIPLES)

    def one(where: str, order: str = "?x") -> dict:
        rows = list(store.query(PREFIXES + f"SELECT * WHERE {{ {where} }} ORDER BY {order} LIMIT 1"))
        assert rows, where
        return rows[0]

    first_event = one("?x om:timestamp ?t", "?t ?x")["x"]
    cycle = one("?x prov:wasRevisionOf ?first . FILTER NOT EXISTS { ?first prov:wasRevisionOf ?y }")
    return {
        "event": first_event,
        "unused_version": one("?x a om:EntityVersion ; prov:wasGeneratedBy ?g . "
                              f"FILTER(?g != <{first_event.value}>) FILTER NOT EXISTS {{ ?a prov:used ?x }}")["x"],
        "late_version": one("VALUES ?c { om:EntityVersion om:AspectVersion } ?x a ?c ; prov:wasGeneratedBy ?g . "
                            "?g om:timestamp ?t", "DESC(?t) ?x")["x"],
        "first_version": cycle["first"],
        "revision": cycle["x"],
    }


def inject(kind: str, p: dict) -> list[ox.Triple]:
    prov, om = (lambda local: N(PROV + local)), (lambda local: N(OM + local))
    return {
        "generation-unique": [ox.Triple(p["unused_version"], prov("wasGeneratedBy"), p["event"])],
        # ut42c #1: a second generator without a time (or with one that is no xsd:dateTime) passed, since
        # the hard-delete exception compared the two generators' times
        "generation-untimed": [ox.Triple(p["unused_version"], prov("wasGeneratedBy"), N(OM + "untimed")),
                               ox.Triple(N(OM + "untimed"), N(RDF_TYPE), prov("Activity"))],
        "usage-before-generation": [ox.Triple(p["event"], prov("used"), p["late_version"])],
        "revision-cycle": [ox.Triple(p["first_version"], prov("wasRevisionOf"), p["revision"])],
        "start-after-end": [ox.Triple(p["event"], prov("startedAtTime"), dt("2030-01-01T00:00:00.000Z")),
                            ox.Triple(p["event"], prov("endedAtTime"), dt("2020-01-01T00:00:00.000Z"))],
        "entity-activity": [ox.Triple(p["unused_version"], N(RDF_TYPE), prov("Activity"))],
        "shacl": [ox.Triple(p["event"], om("eventType"), om("EntityUpdated")),
                  ox.Triple(p["event"], om("eventType"), om("EntityDeleted"))],
        "undeclared-term": [],
        # ut42c #3: declared terms used as what they are not: a class and an event type as properties,
        # a property as a class
        "misused-terms": [ox.Triple(p["event"], om("ChangeEvent"), p["event"]),
                          ox.Triple(p["event"], om("EntityCreated"), p["event"]),
                          ox.Triple(p["event"], N(RDF_TYPE), om("timestamp")),
                          # rv45c #5: a literal as a class passed every check
                          ox.Triple(p["event"], N(RDF_TYPE), ox.Literal("literal-type"))],
        # a misspelt property and class in vetted namespaces; a term of the user's own namespace is fine
        "misspelt-data": [ox.Triple(p["event"], om("timestmp"), dt("2024-01-01T00:00:00.000Z")),
                          ox.Triple(p["event"], N(RDF_TYPE), prov("Activty")),
                          ox.Triple(p["event"], N("http://example.org/mine#note"), ox.Literal("ours")),
                          # ut41d #4: terms of the PROV Notes and PROV-O's inverse names are PROV's own
                          ox.Triple(p["event"], prov("mentionOf"), p["event"]),
                          ox.Triple(p["event"], prov("hadDelegate"), p["event"])],
    }[kind]


# kind -> the failed checks `check --format json` must list, and nothing else.
EXPECTED = {
    # an EntityVersion: the shape's SPARQL constraint on prov:wasGeneratedBy states the same PROV constraint
    "generation-unique": {"prov/generation-unique", "shacl/cps:EntityVersion-generation SPARQL"},
    "generation-untimed": {"prov/generation-unique", "shacl/cps:EntityVersion-generation SPARQL",
                           "shacl/cps:EntityVersion-wasGeneratedBy Class"},
    "usage-before-generation": {"prov/usage-before-generation"},
    "revision-cycle": {"prov/revision-cycle"},
    "start-after-end": {"prov/start-after-end"},
    "entity-activity": {"prov/entity-activity"},
    "shacl": {"shacl/cps:ChangeEvent-eventType MaxCount"},
    "undeclared-term": {"ontology/declared-terms"},
    "misspelt-data": {"shacl/undeclared-terms"},
    "misused-terms": {"shacl/misused-terms"},
}
BAD_QUERY = PREFIXES + "SELECT ?e WHERE { ?e om:affectedEntity ?x ; a prov:Activity }\n"


def make_store(path: Path, nt: bytes, extra: list[ox.Triple]) -> Path:
    with open_store("embedded", path=path, create=True) as store:
        store.load_ntriples(io.BytesIO(nt + ox.serialize(extra, format=ox.RdfFormat.N_TRIPLES)))
    return path


@pytest.fixture(scope="module")
def clean_db(work) -> Path:
    """The corpus export (reference mapper output of every corpus file) loaded like `changeprov load` does."""
    path = work / "clean-db"
    with open_store("embedded", path=path, create=True) as store:
        load_export(store, corpus_export(work))
    return path


def test_corpus_export_is_sound(clean_db, capsys):
    assert main(["check", "--store", str(clean_db), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["findings"] == 0 and report["failed_checks"] == []
    assert set(report["checks"]) == {"ontology", "shacl", "prov"}
    assert len(report["checks"]["shacl"]) > 50 and len(report["checks"]["prov"]) == 5
    assert report["notes"] == []  # an export states every type: nothing to say of reasoning


def test_check_says_when_prov_nodes_have_only_the_types_reasoning_would_give(tmp_path, capsys):
    """ut45c #4: on data written by another tool (a derivation between two untyped nodes) the PROV checks
    read stated types only, which README says and the report did not; after `reason` nothing is said."""
    a, b = N("https://example.org/a"), N("https://example.org/b")
    db = make_store(tmp_path / "db", b"", [ox.Triple(a, N(PROV + "wasDerivedFrom"), b)])
    assert main(["check", "--store", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == [
        "https://example.org/a (and maybe more subjects of PROV relations) has no stated type: the PROV checks count "
        "the types PROV-O's domains and ranges give only after `changeprov reason` (a store not reasoned)"]
    assert main(["check", "--store", str(db), "--only", "shacl"]) == 0  # the note is the PROV checks'
    assert "note:" not in capsys.readouterr().out
    assert main(["reason", "--store", str(db)]) == 0
    capsys.readouterr()
    assert main(["check", "--store", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == []


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_violation_is_reported_exactly(kind, picks, corpus_nt, tmp_path, capsys):
    db = make_store(tmp_path / "db", corpus_nt, inject(kind, picks))
    argv = ["check", "--store", str(db), "--format", "json", "--limit", "4" if kind == "misused-terms" else "3"]
    if kind == "undeclared-term":
        (tmp_path / "mine.rq").write_text(BAD_QUERY)
        argv += ["--query-file", str(tmp_path / "mine.rq")]
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report["failed_checks"]) == EXPECTED[kind]
    failed = [c for group in report["checks"].values() for c in group if c["count"]]
    if kind == "undeclared-term":
        assert failed[0]["examples"] == [{"problem": f"mine.rq: {OM}affectedEntity"}]
    elif kind == "misspelt-data":  # ut40b #3: the open shapes passed them, and no query sees them
        assert failed[0]["count"] == 2 and failed[0]["examples"] == [
            {"term": f"{PROV}Activty", "used_as": "class", "triples": 1},
            {"term": f"{OM}timestmp", "used_as": "property", "triples": 1}]
    elif kind == "misused-terms":
        assert failed[0]["count"] == 4 and failed[0]["examples"] == [
            {"term": '"literal-type"', "used_as": "class", "declared_as": "a literal (rdf:type takes a class)",
             "triples": 1},
            {"term": f"{OM}ChangeEvent", "used_as": "property", "declared_as": "class", "triples": 1},
            {"term": f"{OM}EntityCreated", "used_as": "property", "declared_as": "individual", "triples": 1},
            {"term": f"{OM}timestamp", "used_as": "class", "declared_as": "property", "triples": 1}]
    else:  # the examples name the node the violation was injected on
        injected = {t.subject.value for t in inject(kind, picks)}
        for c in failed:
            assert c["count"] >= 1 and injected & {v for ex in c["examples"] for v in ex.values()}, c


def test_examples_are_plain_json_and_say_what_each_hash_iri_is(picks, corpus_nt, tmp_path, capsys):
    """A user's test: examples named hash IRIs only, and JSON carried N-Triples literals
    ("generations": "\\"2\\"^^<…#integer>"), so acting on a finding meant writing SPARQL first."""
    db = make_store(tmp_path / "db", corpus_nt, inject("generation-unique", picks))
    assert main(["check", "--store", str(db), "--format", "json", "--only", "prov"]) == 1
    report = json.loads(capsys.readouterr().out)
    (ex,) = next(c for c in report["checks"]["prov"] if c["name"] == "generation-unique")["examples"]
    assert ex["generations"] == 2 and ex["version"] == picks["unused_version"].value
    assert re.fullmatch(r"(\w+ )?version \S+ of \S+", ex["version_is"]), ex  # DataHub: the aspect first
    assert re.fullmatch(r"event \S* ?\w+ on \S+ (by \S+ )?at \d{4}-\d\d-\d\dT[\d:.]+Z", ex["first_activity_is"]), ex


def test_text_report_names_the_failed_check(picks, corpus_nt, tmp_path, capsys):
    db = make_store(tmp_path / "db", corpus_nt, inject("revision-cycle", picks))
    assert main(["check", "--store", str(db)]) == 1
    out = capsys.readouterr().out
    assert "FAIL revision-cycle" in out and picks["first_version"].value in out and "prov: 5 check(s), 1 failed" in out


def test_text_report_shows_control_characters_escaped(picks, corpus_nt, tmp_path, capsys):
    """rv41 M1: the text report printed a failing value raw, an escape sequence in it included."""
    bad = ox.Literal("x\x1b[2J\x1b]0;pwned\x07", language="en")  # a name must be a plain string
    db = make_store(tmp_path / "db", corpus_nt, [ox.Triple(picks["event"], N(OM + "entityFullyQualifiedName"), bad)])
    assert main(["check", "--store", str(db), "--only", "shacl"]) == 1
    out = capsys.readouterr().out
    assert "x\\u001B[2J\\u001B]0;pwned\\u0007" in out and "\x1b" not in out


def test_ontology_only_without_a_store_and_errors_exit_2(tmp_path, capsys):
    assert main(["check"]) == 0
    assert "ontology: 6 check(s), all sound" in capsys.readouterr().out
    assert main(["check", "--store", str(tmp_path / "missing")]) == 2
    assert "no store at" in capsys.readouterr().err
    assert main(["check", "--only", "prov"]) == 2
    assert "need a store" in capsys.readouterr().err


def test_a_query_file_that_does_not_parse_is_an_error_not_sound(tmp_path, capsys):
    """A user's test: `check --query-file` of `SELECT WHERE {` said SOUND (exit 0)."""
    bad = tmp_path / "bad.rq"
    bad.write_text("SELECT WHERE {\n")
    assert main(["check", "--query-file", str(bad)]) == 2
    assert "bad.rq: not valid SPARQL: Expected SelectQuery, found 'WHERE'" in capsys.readouterr().err
    # ut40b #2: a prefix used and not declared parses, yet no engine runs it (query --file refuses it)
    undeclared = tmp_path / "undeclared.rq"
    undeclared.write_text("SELECT ?x WHERE { ?x om-event:nosuchTerm ?y }\n")
    assert main(["check", "--query-file", str(undeclared)]) == 2
    assert "undeclared.rq: not valid SPARQL: the prefix om-event: is not declared" in capsys.readouterr().err
    good = tmp_path / "good.rq"
    good.write_text(PREFIXES + "SELECT ?e WHERE { ?e om:timestamp ?t }\n")
    assert main(["check", "--query-file", str(good)]) == 0


def test_subclass_widening_sees_subclass_instances_without_reasoning():
    text = expand_subclasses(get_query("entity-activity-violation").text)
    assert f"<{OM}ChangeEvent>" in text and f"<{OM}EntityVersion>" in text and f"<{PROV}Activity>" in text
    # run as is (`changeprov query`), the query only knows the asserted PROV classes
    assert f"<{OM}ChangeEvent>" not in get_query("entity-activity-violation").text


@pytest.mark.parametrize("generations, findings", [
    (["10:00"], 1),            # used at 09:00, generated only at 10:00
    (["08:00", "10:00"], 0),   # generated at 08:00, used at 09:00, generated again at 10:00 (a revert)
])
def test_usage_before_generation_compares_with_the_first_generation(generations, findings, tmp_path):
    """A user's test: 0.1 → 0.2 → 0.1 made the 09:00 update "use a version generated only after it",
    though 0.1 was first generated at 08:00 (the reused version is generation-unique's finding)."""
    om, prov = (lambda local: N(OM + local)), (lambda local: N(PROV + local))
    version, user = N("https://example.org/v0.1"), N("https://example.org/update")
    triples = [ox.Triple(version, N(RDF_TYPE), om("EntityVersion")), ox.Triple(user, prov("used"), version),
               ox.Triple(user, om("timestamp"), dt("2026-09-01T09:00:00.000Z"))]
    for i, at in enumerate(generations):
        gen = N(f"https://example.org/gen{i}")
        triples += [ox.Triple(version, prov("wasGeneratedBy"), gen),
                    ox.Triple(gen, om("timestamp"), dt(f"2026-09-01T{at}:00.000Z"))]
    with open_store("embedded", path=make_store(tmp_path / "db", b"", triples), read_only=True) as store:
        rows = store.select(expand_subclasses(get_query("usage-before-generation-violation").text)).rows
    assert len(rows) == findings
    if findings:
        assert rows[0][3].value == "https://example.org/gen0"


@pytest.mark.parametrize("generated, deleted, findings", [
    ("09:00:00.000", None, 0),           # generated in the use's millisecond: not after it
    ("09:00:00.001", None, 1),
    ("09:00:00.001", "09:00:00.000", 0),  # a hard delete in the use's millisecond: the earlier life's version
    ("09:00:00.001", "09:00:00.001", 0),  # ... or in the generation's
    ("09:00:00.001", "08:59:59.999", 1),  # before the use: no earlier life in between
])
def test_usage_before_generation_at_the_boundaries(generated, deleted, findings, tmp_path):
    """rv46 #5: the comparisons at equal times (the use and the generation, a hard delete and either)
    changed nothing any test saw."""
    om, prov = (lambda local: N(OM + local)), (lambda local: N(PROV + local))
    version, entity = N("https://example.org/v1"), N("https://example.org/e")
    user, gen = N("https://example.org/update"), N("https://example.org/gen")
    at = lambda t: dt(f"2026-09-01T{t}Z")
    triples = [ox.Triple(version, N(RDF_TYPE), om("EntityVersion")), ox.Triple(version, prov("specializationOf"), entity),
               ox.Triple(user, prov("used"), version), ox.Triple(user, om("timestamp"), at("09:00:00.000")),
               ox.Triple(version, prov("wasGeneratedBy"), gen), ox.Triple(gen, om("timestamp"), at(generated))]
    if deleted:
        gone = N("https://example.org/delete")
        triples += [ox.Triple(gone, om("affectsEntity"), entity), ox.Triple(gone, om("lifecycleChange"), om("HardDeleted")),
                    ox.Triple(gone, om("timestamp"), at(deleted))]
    with open_store("embedded", path=make_store(tmp_path / "db", b"", triples), read_only=True) as store:
        rows = store.select(expand_subclasses(get_query("usage-before-generation-violation").text)).rows
    assert len(rows) == findings


@pytest.mark.parametrize("q", violation_queries(), ids=lambda q: q.name)
def test_violation_queries_have_headers_and_no_parameters(q):
    assert q.summary and q.returns and not q.params


def test_query_list_shows_the_violation_queries(capsys):
    assert main(["query", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(f"{q.name}: {q.summary}" in out for q in violation_queries())


# ----------------------------------------------------------------------------- SHACL as SPARQL == pyshacl

def _mutations(store: ox.Store) -> tuple[list[ox.Triple], list[ox.Triple]]:
    """(triples to add, triples to remove): one violation per constraint component the shapes use."""
    def one(where: str):
        return list(store.query(PREFIXES + f"SELECT * WHERE {{ {where} }} LIMIT 1"))[0]

    om, prov = (lambda local: N(OM + local)), (lambda local: N(PROV + local))
    e = [r["e"] for r in store.query(PREFIXES + "SELECT ?e WHERE { ?e om:timestamp ?t } ORDER BY ?e LIMIT 5")]
    ts = one(f"<{e[0].value}> om:timestamp ?t")["t"]
    edge = one("?d prov:qualifiedDerivation ?l . ?l prov:entity ?u . ?d prov:wasDerivedFrom ?u")
    fc = one("?f a om:FieldChange")["f"]
    version = one("?v om:versionNumber ?n")["v"]
    run = one("?r a om:Run")["r"]
    add = [
        ox.Triple(e[1], om("timestamp"), dt("yesterday")),                            # maxCount + ill-typed datatype
        ox.Triple(e[2], om("eventType"), ox.Literal("EntityUpdated")),                # nodeKind, class, maxCount
        ox.Triple(e[3], N(RDF_TYPE), om("EntityVersion")),                           # sh:not [sh:class prov:Entity]
        ox.Triple(fc, om("fieldName"), dt("42", XSD + "integer")),                    # datatype, maxCount
        ox.Triple(version, om("versionNumber"), ox.Literal("1.0")),                   # datatype
        ox.Triple(N("https://example.org/orphan"), N(RDF_TYPE), om("ChangeDescription")),  # inverse-path minCount
        ox.Triple(run, prov("startedAtTime"), dt("2099-01-01T00:00:00.000Z")),       # lessThanOrEquals
        ox.Triple(run, prov("endedAtTime"), dt("2000-01-01T00:00:00.000Z")),
        ox.Triple(e[4], om("performedBy"), ox.Literal("bob")),                        # nodeKind, maxCount
        ox.Triple(version, prov("wasGeneratedBy"), e[4]),                             # SPARQL: a second generation
    ]
    remove = [ox.Triple(e[0], om("timestamp"), ts),                                   # minCount
              ox.Triple(edge["d"], prov("wasDerivedFrom"), edge["u"])]                # the SPARQL constraint
    return add, remove


def test_shacl_translation_agrees_with_pyshacl(corpus_nt, tmp_path):
    import pyshacl

    from changeprov.ontology import ontology_graph
    from changeprov.ontology.shacl import shapes_graph
    from changeprov.sparql.check import shacl_checks

    mem = ox.Store()
    mem.bulk_load(corpus_nt, format=ox.RdfFormat.N_TRIPLES)
    add, remove = _mutations(mem)
    for t in remove:
        mem.remove(ox.Quad(t.subject, t.predicate, t.object))
    mem.extend([ox.Quad(t.subject, t.predicate, t.object) for t in add])
    nt = ox.serialize(mem, format=ox.RdfFormat.N_QUADS)

    with open_store("embedded", path=tmp_path / "db", create=True) as store:
        store.load_ntriples(io.BytesIO(nt))
        results = shacl_checks(store, limit=1000)
    ours = {(ex["focus"], r.name.rsplit(" ", 1)[1] + "ConstraintComponent", ex["value"])
            for r in results for ex in r.examples}
    # the same data through pyshacl, as ontology/shacl.py runs it (data + ontology, no inference)
    data = rdflib.Graph().parse(data=nt.decode(), format="nt")
    _, report, _ = pyshacl.validate(data + ontology_graph(), shacl_graph=shapes_graph(), inference="none")
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    theirs = set()
    for r in report.subjects(rdflib.RDF.type, sh.ValidationResult):
        value = report.value(r, sh.value)
        component = str(report.value(r, sh.sourceConstraintComponent)).rsplit("#", 1)[1]
        if component in ("MinCountConstraintComponent", "MaxCountConstraintComponent"):
            value = None
        # our examples carry plain values (JSON-friendly): compare pyshacl's terms in the same form
        # (rdflib normalises a UTC dateTime's "Z" to "+00:00"; the store keeps the lexical form)
        plain = _plain(from_rdflib(value))
        plain = plain.replace("+00:00", "Z") if isinstance(plain, str) else plain
        theirs.add((str(report.value(r, sh.focusNode)), component, plain))
    assert len({c for _, c, _ in theirs}) >= 8, "the mutations exercise most components"
    assert ours == theirs
    assert len({f for f, c, _ in ours if c == "SPARQLConstraintComponent"}) == 2, "both SPARQL constraints fire"


# ----------------------------------------------------------------------------- remote endpoint


def test_check_on_endpoint_equals_embedded(work, picks, corpus_nt, tmp_path, capsys):
    injected = inject("entity-activity", picks) + inject("shacl", picks) + inject("misspelt-data", picks)
    db = make_store(tmp_path / "db", corpus_nt, injected)
    assert main(["check", "--store", str(db), "--format", "json"]) == 1
    embedded = json.loads(capsys.readouterr().out)
    with oxigraph_server(tmp_path / "served") as url:
        store = open_store("remote", endpoint=url)
        store.load_ntriples(io.BytesIO(corpus_nt + ox.serialize(injected, format=ox.RdfFormat.N_TRIPLES)))
        assert main(["check", "--endpoint", url, "--format", "json", "--only", "shacl", "--only", "prov"]) == 1
        remote = json.loads(capsys.readouterr().out)
        rows = run_query(store, get_query("entity-activity-violation"))
    # rv41 #1: undeclared-terms counted each term with a parameter an endpoint could not take
    assert remote["failed_checks"] == embedded["failed_checks"] == [
        "shacl/cps:ChangeEvent-eventType MaxCount", "shacl/undeclared-terms", "prov/entity-activity"]
    assert remote["checks"]["prov"] == embedded["checks"]["prov"]
    assert [c for c in remote["checks"]["shacl"] if c["name"] == "undeclared-terms"] == \
        [c for c in embedded["checks"]["shacl"] if c["name"] == "undeclared-terms"]
    assert rows.rows == [], "unwidened and unreasoned, the raw query sees asserted types only"


@pytest.mark.parametrize("options, says", [
    ({"groups": ("provv",)}, "unknown check group(s) 'provv' (groups: ontology, shacl, prov)"),
    ({"groups": ("ontology", "SHACL")}, "unknown check group(s) 'SHACL'"),
    ({"limit": "5"}, "limit must be an int >= 0 (examples per check), got '5'"),
    ({"limit": -1}, "limit must be an int >= 0 (examples per check), got -1"),
    ({"groups": ()}, "no check group given (groups: ontology, shacl, prov)"),  # rv42 #5: ran nothing, said sound
])
def test_run_checks_refuses_what_it_cannot_run(options, says):
    """ut42a #5: a misspelt group ran only the ontology checks and said sound; limit='5' was a TypeError."""
    from changeprov.errors import InputError
    from changeprov.sparql.check import run_checks

    with pytest.raises(InputError, match=re.escape(says)):
        run_checks(open_store("memory"), **options)


def test_run_checks_takes_one_group_as_a_string():
    from changeprov.sparql.check import run_checks

    report = run_checks(open_store("memory"), groups="prov")
    assert report.results and {r.group for r in report.results} == {"prov"}


_BUNDLED = sorted((Path(sparql_package.__file__).parent / "queries").glob("*.rq"))


@pytest.mark.parametrize("path", _BUNDLED, ids=[p.stem for p in _BUNDLED])
def test_every_bundled_query_passes_the_syntax_check_of_query_files(path):
    """ut44c #1: `check --query-file` of a copy of impact.rq or entity-state.rq said "not valid SPARQL:
    maximum recursion depth exceeded" (rdflib's parser, without the rdflib store's deeper limit)."""
    assert sparql_syntax_problem(path.read_text(encoding="utf-8")) is None


def test_check_takes_a_copy_of_the_largest_bundled_query(tmp_path, capsys):
    largest = max(_BUNDLED, key=lambda p: p.stat().st_size)
    mine = tmp_path / "mine.rq"
    mine.write_text(largest.read_text(encoding="utf-8"))
    main(["check", "--query-file", str(mine)])
    assert "not valid SPARQL" not in capsys.readouterr().err


def test_a_check_read_by_a_reader_that_stops_early_keeps_its_verdict(tmp_path):
    """ut44c #2: `check … | head -2` (or `| grep -q`) exited 0, "sound", for a store with findings: the
    broken pipe was taken for success."""
    import subprocess
    import sys

    db = make_store(tmp_path / "db", b"", [ox.Triple(ox.NamedNode("https://example.org/e"),
                                                     ox.NamedNode(f"{OM}timestmp"), ox.Literal("1"))])
    proc = subprocess.Popen([sys.executable, "-m", "changeprov.cli", "check", "--store", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1, err
    assert "Traceback" not in err


def test_check_says_that_named_graphs_are_not_read(tmp_path, capsys):
    """ut44c #3: a bad triple in a named graph passed unseen, and check said SOUND without a word."""
    db = make_store(tmp_path / "db", b"", [])
    with open_store("embedded", path=db) as store:
        assert main(["check", "--store", str(db), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["notes"] == []
        store._store.add(ox.Quad(ox.NamedNode("https://example.org/e"), ox.NamedNode(f"{OM}timestmp"), ox.Literal("1"),
                                 ox.NamedNode("https://example.org/g")))
        store._store.flush()
    assert main(["check", "--store", str(db)]) == 0
    assert "note: the store also has named graphs: the checks read its default graph only" in capsys.readouterr().out


@pytest.mark.parametrize("extra, said", [({"x.rq": "SELEC ?x"}, "x.rq: not valid SPARQL"),
                                         (["x"], "extra_queries must be a mapping"),
                                         ({"y.rq": 5}, "y.rq: not valid SPARQL: not a string but int")])
def test_run_checks_vets_the_extra_queries_as_the_command_does(extra, said):
    """ut44f #7: run_checks(None, extra_queries={"x": "SELEC ?x"}) was ok, a list a failed check."""
    from changeprov.errors import InputError
    from changeprov.sparql.check import run_checks

    with pytest.raises(InputError, match=re.escape(said)):
        run_checks(None, extra_queries=extra, groups=("ontology",))


def test_a_query_file_without_the_ontology_checks_is_an_error_not_left_unread(tmp_path, capsys):
    """ut45e #4: `check --only shacl --query-file bad.rq` said SOUND: only the ontology checks vet a file."""
    bad = tmp_path / "bad.rq"
    bad.write_text(BAD_QUERY)
    assert main(["check", "--only", "prov", "--query-file", str(bad)]) == 2
    assert "--query-file is vetted by the ontology checks: add --only ontology" in capsys.readouterr().err
    assert main(["check", "--only", "ontology", "--query-file", str(bad)]) == 1


@pytest.mark.parametrize("limit", ["-1", "x"])
def test_a_negative_limit_is_an_error(tmp_path, capsys, limit):
    """rv47 CK1: --limit -1 would be taken as 0, and the JSON would say examples_per_check: -1."""
    from changeprov.cli import main

    with pytest.raises(SystemExit) if limit == "x" else contextlib.nullcontext():
        assert main(["check", "--store", str(tmp_path / "none"), "--limit", limit]) == 2
    assert "--limit" in capsys.readouterr().err


def test_check_names_a_union_default_graph(tmp_path, capsys):
    """ut48b #6: on a server whose default graph is the union of its graphs, "the checks read its default
    graph only" was false: the named graphs' triples were read too."""
    from changeprov.sparql.server import oxigraph_server

    with oxigraph_server(tmp_path / "srv", union_default_graph=True) as url:
        RemoteStore(url).load_ntriples(io.BytesIO(b"<https://example.org/a> <https://example.org/p> <https://example.org/b> .\n"))
        urllib.request.urlopen(urllib.request.Request(
            url.rsplit("/", 1)[0] + "/store?graph=https%3A%2F%2Fexample.org%2Fg", method="POST",
            data=b"<https://example.org/e> <https://example.org/q> \"1\" .\n",
            headers={"Content-Type": "application/n-triples"})).read()
        main(["check", "--endpoint", url])
        assert "holds the triples of its named graphs too (a union default graph" in capsys.readouterr().out
