"""sparql.lexer: what of a SPARQL text is not query code, for the SERVICE guard, the query-file
checks and the ontology's term check (three copies had drifted: mq1 #3)."""

from __future__ import annotations

import pytest

from changeprov.errors import InputError
from changeprov.sparql.check import expand_subclasses
from changeprov.sparql.lexer import blank, prefixes
from changeprov.sparql.queries import parse_header
from changeprov.sparql.stores import has_service


@pytest.mark.parametrize("text, words", [
    ("SELECT ?s # a comment\rWHERE {}", ["SELECT", "?s", "WHERE", "{}"]),  # the engine ends a comment at CR
    ('SELECT """x\\"""" ?b {}', ["SELECT", "?b", "{}"]),                   # an escaped quote in a long string
    ('SELECT "a" ?b {}', ["SELECT", "?b", "{}"]),
    ("?s <http://x/a#b> ?o", ["?s", "?o"]),
    ("ex:a\\#b ?o", ["ex:a\\#b", "?o"]),                                   # an escaped # in a name: no comment
])
def test_blank_keeps_only_query_code(text, words):
    assert blank(text).split() == words


def test_a_less_than_sign_before_a_variable_is_read_both_ways():
    """Only the grammar tells "<?a#>" (an IRI, where a term stands) from "?t<?as_of" (a comparison). The
    default reading takes an IRI wherever one can be, so that what is left as code is never less than
    the engine's (rv42 H1: read as a comparison, the "#" hid the rest of the line); the query-file
    checks read a comparison, to see the parameter (rv38 #4)."""
    assert blank("<?a#> ?p ?o . SERVICE").split() == ["?p", "?o", ".", "SERVICE"]
    assert blank("FILTER(?t<?as_of&&?x>1)", comparisons=True).split() == ["FILTER(?t<?as_of&&?x>1)"]


def test_a_string_does_not_run_over_a_carriage_return():
    assert blank('"a\rb" ?x').split() == ['"a', 'b"', "?x"]  # the engine ends a short string at CR too


def test_prefixes_are_read_wherever_the_engine_reads_them():
    text = ('PREFIX a: <http://a/> PREFIX : <http://b/>  # PREFIX c: <http://c/>\n'
            'prefix d:<http://d/>\nSELECT * { ?s ?p "PREFIX e: <http://e/>" }')
    assert prefixes(text) == {"a": "http://a/", "": "http://b/", "d": "http://d/"}


def test_consumers_agree_on_a_comment_ended_by_a_carriage_return():
    """The query-file check read a query whose comment ended at CR as having no SELECT list, so a
    parameter outside it was not caught; #@subclasses needed each PREFIX on its own line."""
    with pytest.raises(InputError, match="must be in the SELECT list"):
        parse_header("adhoc", "# param: since time optional  from\n# note\rSELECT ?e WHERE {\n#@bindings\n"
                              "?e ?p ?t FILTER(COALESCE(?t >= ?since, true)) }\n")
    assert has_service("SELECT * { # note\rSERVICE <http://127.0.0.1:9/s> { ?s ?p ?o } }")
    widened = expand_subclasses("PREFIX prov: <http://www.w3.org/ns/prov#> "
                                "PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
                                "SELECT * {\n  VALUES ?c { om:MetadataEntity }  #@subclasses\n  ?x a ?c }")
    assert "om:MetadataEntity" not in widened and "<https://open-metadata.org/schema/type/changeEvent/Tag>" in widened


def test_the_term_check_reads_past_an_iri_that_starts_with_a_question_mark():
    """rv42 L1: after "<?x#>", read as a comparison and a comment, a misspelt term went unvetted."""
    from changeprov.ontology.checks import check_declared

    text = ("BASE <http://e/>\nPREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
            "SELECT ?s WHERE { ?s <?x#> ?o . ?s om:affectsEntiy ?y }")
    assert check_declared({"typo.rq": text}).problems == (
        "typo.rq: https://open-metadata.org/schema/type/changeEvent/affectsEntiy",)


def test_the_service_error_names_the_line_as_written():
    """rv43 L2: lines were counted after decoding escapes, so a "\\u000A" moved the line the error named."""
    from changeprov.sparql.stores import refuse_service

    with pytest.raises(InputError, match=r"line 2: 'SERVICE <http://127.0.0.1:9/s> \{\} }'"):
        refuse_service('SELECT * { ?s ?p "a\\u000Ab\\u000Ac" .\nSERVICE <http://127.0.0.1:9/s> {} }')
