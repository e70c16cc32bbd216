"""Result output: aligned table, CSV and TSV (SPARQL 1.1 CSV/TSV), SPARQL 1.1 Query Results JSON."""

from __future__ import annotations

import csv
import io
import json
import re

import pyoxigraph as ox

from changeprov.mapping.emit import value_literal
from changeprov.mapping.vocab import XSD_DATETIME, XSD_DECIMAL, XSD_STRING
from changeprov.sparql.stores import Rows

FORMATS = ("table", "csv", "tsv", "json")
_SECONDS = re.compile(r"(T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,3}))?Z$")


def display_value(term) -> str:
    """A term's text in the table and CSV: times always with milliseconds, decimals with a point.

    The store gives values in their shortest form (``…05Z`` beside ``…05.5Z`` and ``…05.123Z``,
    version ``2`` for OpenMetadata's 2.0): a column of times then sorts wrongly as text. Same value,
    one width. JSON and TSV keep the engine's forms (they carry typed terms).

    >>> display_value(ox.Literal("2024-01-13T08:29:05.5Z", datatype=XSD_DATETIME))
    '2024-01-13T08:29:05.500Z'
    >>> display_value(ox.Literal("2", datatype=XSD_DECIMAL))
    '2.0'
    """
    text = term.value
    if isinstance(term, ox.Literal):
        if term.datatype == XSD_DATETIME:
            text = _SECONDS.sub(lambda m: f"{m.group(1)}.{(m.group(2) or '').ljust(3, '0')}Z", text)
        elif term.datatype == XSD_DECIMAL and re.fullmatch(r"-?[0-9]+", text):
            text += ".0"
    return text


def term_json(term) -> dict:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != XSD_STRING:
        out["datatype"] = term.datatype.value
    return out


def to_json(rows: Rows) -> str:
    bindings = [{v: term_json(t) for v, t in zip(rows.variables, r) if t is not None} for r in rows.rows]
    return json.dumps({"head": {"vars": rows.variables}, "results": {"bindings": bindings}},
                      indent=2, ensure_ascii=False)


def to_csv(rows: Rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(rows.variables)
    for r in rows.rows:  # SPARQL 1.1 CSV: blank nodes as _:label, every other term as its plain value
        w.writerow(["" if t is None else "_:" + t.value if isinstance(t, ox.BlankNode) else display_value(t)
                    for t in r])
    return buf.getvalue()


def to_tsv(rows: Rows) -> str:
    lines = ["\t".join("?" + v for v in rows.variables)]
    for r in rows.rows:
        lines.append("\t".join("" if t is None else str(t) for t in r))
    return "\n".join(lines) + "\n"


_IDENTIFIER = re.compile(r"[^\s{\[\"][^\s]*")


def _cell(term, width: int = 80) -> str:
    if term is None:
        return ""
    text = display_value(term).replace("\n", "\\n").replace("\t", " ").replace("\r", "\\r")
    # IRIs, URNs and FQNs stay whole: they are what a user copies into the next query (ut5a #11);
    # long values (JSON, descriptions) are cut, --format csv has them whole
    if len(text) <= width or isinstance(term, ox.NamedNode) or _IDENTIFIER.fullmatch(text):
        return text
    return text[: width - 1] + "…"


def to_table(rows: Rows) -> str:
    cells = [[_cell(t) for t in r] for r in rows.rows]
    widths = [max([len(v)] + [len(c[i]) for c in cells]) for i, v in enumerate(rows.variables)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()
    out = [line(rows.variables), line(["-" * w for w in widths])] + [line(c) for c in cells]
    out.append(f"({len(rows.rows)} row{'s' if len(rows.rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def render(rows: Rows, fmt: str) -> str:
    return {"table": to_table, "csv": to_csv, "tsv": to_tsv, "json": to_json}[fmt](rows)


def render_boolean(answer: bool, fmt: str) -> str:
    """An ASK answer: SPARQL 1.1 Query Results JSON has a boolean form; CSV and TSV define none, so
    those (and the table) show one ``answer`` column."""
    if fmt == "json":
        return json.dumps({"head": {}, "boolean": bool(answer)}, indent=2) + "\n"
    return render(Rows(["answer"], [(value_literal(bool(answer)),)]), fmt)
