"""What in a SPARQL text is not query code: strings, IRIs, comments and variables, read as the engine
reads them. One reader for the SERVICE guard, the query-file parameter checks and the ontology's
term check: three copies had drifted apart (a comment ended by a lone CR, ``\\"`` in a long string;
mq1 #3).

>>> blank('SELECT ?s WHERE { ?s <http://x/p> "a # b" } # note\\rLIMIT 1').split()
['SELECT', '?s', 'WHERE', '{', '?s', '}', 'LIMIT', '1']
>>> blank('SELECT ?service WHERE {}', keep=()).split()
['SELECT', 'WHERE', '{}']
>>> prefixes('PREFIX a: <http://a/> PREFIX : <http://b/> # PREFIX c: <http://c/>\\nSELECT * {}')
{'a': 'http://a/', '': 'http://b/'}
"""

from __future__ import annotations

import re

#: each piece at most once, in the order the engine would read it: a backslash before one (outside a
#: string it escapes a character of a prefixed name, ``ex:a\\'``, ``ex:a\\#``) makes it no piece
PIECES = {
    "long": r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\'',
    "string": r'"(?:[^"\\\n\r]|\\.)*"|\'(?:[^\'\\\n\r]|\\.)*\'',  # the engine ends a short string at CR too
    "iri": r'<[^<>"{}|^`\\\x00-\x20]*>',  # no space in an IRI: "?a < ?b" is a comparison
    "comment": r"#[^\n\r]*",  # the engine ends a comment at CR as well as LF (rv40 H1)
    "var": r"[?$][\w\u00b7\u0300-\u036f\u203f-\u2040]+",
}
TOKENS = re.compile("|".join(rf"(?<!\\)(?P<{name}>{rx})" for name, rx in PIECES.items()), re.DOTALL)
# "?t<?as_of&&?x>1" is a comparison where the engine reads an expression, but "<?a#>" an IRI where it
# reads a term, and only the grammar knows which. TOKENS reads an IRI wherever one can be, so that a
# "#" inside "<?a#>" hides nothing from the term check (rv42 L1); the query-file checks read "<?x" as
# a comparison (COMPARISONS), to see the parameter ?x (rv38 #4). Neither reading is safe enough for
# the SERVICE guard, which blanks only variables (stores.has_service).
COMPARISONS = re.compile(TOKENS.pattern.replace("(?P<iri><", "(?P<iri><(?![?$])"), re.DOTALL)
_PREFIX = re.compile(r"(?i)\bPREFIX\s+([A-Za-z][\w.-]*)?:\s*$")


def blank(text: str, *, keep: tuple[str, ...] = ("var",), comparisons: bool = False) -> str:
    """``text`` with its strings, IRIs and comments (and variables, unless kept) each replaced by a
    space; ``comparisons``: ``<?x`` is a comparison, not the start of an IRI (see COMPARISONS)."""
    return (COMPARISONS if comparisons else TOKENS).sub(lambda m: m.group() if m.lastgroup in keep else " ", text)


def prefixes(text: str) -> dict[str, str]:
    """The ``PREFIX p: <ns>`` declarations of ``text``, any number on a line, none in a comment or string."""
    found: dict[str, str] = {}
    tail, last = "", 0  # the code before each IRI (comments count as a space)
    for m in TOKENS.finditer(text):
        tail = (tail + text[last:m.start()])[-200:]
        last = m.end()
        if m.lastgroup == "iri":
            declared = _PREFIX.search(tail)
            if declared:
                found[declared.group(1) or ""] = m.group()[1:-1]
        tail = "" if m.lastgroup in ("iri", "string", "long", "var") else tail + " "
    return found
