"""Result output: aligned table, CSV and TSV (SPARQL 1.1 CSV/TSV), SPARQL 1.1 Query Results JSON."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import unicodedata
import re

import pyoxigraph as ox

from changeprov.mapping.emit import value_literal
from changeprov.mapping.vocab import XSD_DATETIME, XSD_DECIMAL, XSD_STRING
from changeprov.sparql.stores import Rows
from changeprov.terminal import visible

FORMATS = ("table", "csv", "tsv", "json")
_DATETIME = re.compile(r"(-?[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?"
                       r"(Z|[+-][0-9]{2}:[0-9]{2})?")


def display_datetime(lexical: str) -> str:
    """An ``xsd:dateTime`` as people are shown it everywhere (table, CSV, audit, check, notes): RFC 3339
    in UTC with milliseconds and ``Z``, the form the mapper writes.

    The store gives times in their shortest form (``…05Z`` beside ``…05.5Z`` and ``…05.123Z``), so
    the same instant would read differently in a query's table and in an audit, and a column of
    times would sort wrongly as text. More than three fraction digits (no mapped time has them) are
    kept rather than hidden; a time without a zone keeps none (its zone is unknown, not UTC); a
    lexical form that is no valid date-time (a check may be reporting it) stays as it is.

    >>> display_datetime("2024-01-13T08:29:05.5Z")
    '2024-01-13T08:29:05.500Z'
    >>> display_datetime("2024-01-13T08:29:05Z")
    '2024-01-13T08:29:05.000Z'
    >>> display_datetime("2024-01-13T09:29:05.120+01:00")
    '2024-01-13T08:29:05.120Z'
    >>> display_datetime("2024-01-13T08:29:05.123456Z")
    '2024-01-13T08:29:05.123456Z'
    >>> display_datetime("2024-13-45T08:29:05Z")
    '2024-13-45T08:29:05Z'
    >>> display_datetime("2024-01-13T08:29:05")
    '2024-01-13T08:29:05.000'
    """
    m = _DATETIME.fullmatch(lexical)
    if not m:
        return lexical
    seconds, fraction, zone = m.groups()
    seconds = _in_utc(seconds, zone)
    if seconds is None:
        return lexical
    fraction = (fraction or "").rstrip("0").ljust(3, "0")
    return f"{seconds}.{fraction}{'Z' if zone else ''}"


def _in_utc(seconds: str, zone: str | None) -> str | None:
    """``YYYY-MM-DDThh:mm:ss`` at ``zone`` as the same instant in UTC (without a zone: as it is);
    None for an invalid date or what Python cannot say (year 0 or > 9999, hour 24)."""
    try:
        instant = _dt.datetime.fromisoformat(seconds + ("+00:00" if zone == "Z" else zone or ""))
        if zone:
            instant = instant.astimezone(_dt.timezone.utc)
        return instant.strftime("%Y-%m-%dT%H:%M:%S") if instant.year >= 1000 else None
    except (ValueError, OverflowError):
        return None


def display_text(term) -> str:
    """A term's text for people, date-times in their one display form (:func:`display_datetime`)."""
    if isinstance(term, ox.Literal) and term.datatype == XSD_DATETIME:
        return display_datetime(term.value)
    return term.value


def display_value(term) -> str:
    """A term's text in the table and CSV: times as :func:`display_datetime`, decimals with a point.

    Same value, one width: the store gives version ``2`` for OpenMetadata's 2.0. JSON and TSV keep
    the store's forms (they carry typed terms).

    >>> display_value(ox.Literal("2024-01-13T08:29:05.5Z", datatype=XSD_DATETIME))
    '2024-01-13T08:29:05.500Z'
    >>> display_value(ox.Literal("2", datatype=XSD_DECIMAL)), display_value(ox.Literal("-2", datatype=XSD_DECIMAL))
    ('2.0', '-2.0')
    """
    text = display_text(term)
    if isinstance(term, ox.Literal) and term.datatype == XSD_DECIMAL and re.fullmatch(r"-?[0-9]+", text):
        text += ".0"
    return text


def term_json(term) -> dict:
    """A term as SPARQL 1.1 Query Results JSON gives it.

    >>> term_json(ox.Literal("x", language="en")), term_json(ox.Literal("1", datatype=XSD_DECIMAL))["datatype"][-7:]
    ({'type': 'literal', 'value': 'x', 'xml:lang': 'en'}, 'decimal')
    """
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
    # ending in a newline as every other output (ut42d #5: the prompt landed after the closing brace)
    return json.dumps({"head": {"vars": rows.variables}, "results": {"bindings": bindings}},
                      indent=2, ensure_ascii=False) + "\n"


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
    """A table cell: a long value cut to ``width`` columns, an identifier whole.

    >>> _cell(ox.Literal("a b" * 26 + "cd")) == "a b" * 26 + "cd", _cell(ox.Literal("a b" * 27))[-3:]
    (True, 'ba…')
    """
    if term is None:
        return ""
    text = visible(display_value(term).replace("\n", "\\n").replace("\t", " ").replace("\r", "\\r"))
    # IRIs, URNs and FQNs stay whole: they are what a user copies into the next query (ut5a #11);
    # long values (JSON, descriptions) are cut, --format csv has them whole
    if len(text) <= width or isinstance(term, ox.NamedNode) or _IDENTIFIER.fullmatch(text):
        return text
    return text[: width - 1] + "…"


def display_width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide and fullwidth characters take two, combining marks
    none (ut42d #7: a Japanese user name shifted its row's later columns).

    >>> display_width("日本語"), display_width("abc"), display_width("e\u0301"), display_width("ＡＢ")
    (6, 3, 1, 4)
    """
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


#: the widest a table column is padded to (DataHub URNs and our IRIs fit)
_WIDEST = 120


def to_table(rows: Rows, *, total: int | None = None) -> str:
    """``rows`` as an aligned text table; ``total``: how many rows the answer has, when ``rows`` are its first.

    >>> print(to_table(Rows(["a"], [(ox.Literal("x"),)] * 3), total=3), end="")
    a
    -
    x
    x
    x
    (3 rows)
    >>> to_table(Rows(["a"], [(ox.Literal("x"),)] * 3), total=8).splitlines()[-1]
    '(8 rows, the first 3 shown)'
    """
    cells = [[_cell(t) for t in r] for r in rows.rows]
    # a column is as wide as its widest cell up to _WIDEST: a longer one (kept whole, an identifier) runs
    # past its column in its own row only (ut46a #4: one 100 KB name padded every row to 100 KB)
    widths = [max([display_width(v)] + [min(display_width(c[i]), _WIDEST) for c in cells])
              for i, v in enumerate(rows.variables)]
    line = lambda vals: "  ".join(v + " " * (w - display_width(v)) for v, w in zip(vals, widths)).rstrip()
    out = [line(rows.variables), line(["-" * w for w in widths])] + [line(c) for c in cells]
    n = len(rows.rows)
    out.append(f"({total} rows, the first {n} shown)" if total is not None and total > n
               else f"({n} row{'s' if n != 1 else ''})")
    return "\n".join(out) + "\n"


def render(rows: Rows, fmt: str) -> str:
    return {"table": to_table, "csv": to_csv, "tsv": to_tsv, "json": to_json}[fmt](rows)


def render_boolean(answer: bool, fmt: str) -> str:
    """An ASK answer: SPARQL 1.1 Query Results JSON has a boolean form; CSV and TSV define none, so
    those (and the table) show one ``answer`` column."""
    if fmt == "json":
        return json.dumps({"head": {}, "boolean": bool(answer)}, indent=2) + "\n"
    return render(Rows(["answer"], [(value_literal(bool(answer)),)]), fmt)
