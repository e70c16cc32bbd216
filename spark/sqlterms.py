"""Spark SQL versions of changeprov.mapping.terms / emit: IRIs, digests, literals, N-Triples lines.

Every function takes and returns pyspark Columns and uses native Spark SQL functions only, so
executors never need this package. Each mirrors a Python function of the reference mapper; the
equality is tested on the corpus (tests/test_spark_*.py).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.terms import FORBIDDEN_JAVA_REGEX, IRI_ESCAPES
from changeprov.mapping.vocab import ID, OM_ENTITY, expand

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_JSON = "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"
MAX_MS = 253402300799999
IRI_ESCAPED_CLASS = "[" + "".join(f"\\x{{{ord(c):X}}}" for c in IRI_ESCAPES) + "]"
CONTROL_CLASS = "[\\x00-\\x1f\\x7f]"  # the characters escape_string writes as \uXXXX
# every character escape_string rewrites: backslash, quote and the C0 controls (LF, CR included) and DEL
NEEDS_ESCAPE_CLASS = '[\\x{0}-\\x{1F}\\x{7F}\\\\"]'


def lit(value) -> Column:
    return F.lit(value)


# ---------------------------------------------------------------- identifiers


def bad_identifier(text: Column) -> Column:
    """True when ``text`` cannot become part of an IRI (empty or a forbidden code point)."""
    return (F.length(text) == 0) | text.rlike(FORBIDDEN_JAVA_REGEX)


def iri_safe(text: Column) -> Column:
    """``S(x)``: percent-encode the characters of terms.IRI_ESCAPES, ``%`` first.

    Most identifiers have none of them: one regex search then replaces 33 passes over the text."""
    out = text
    for char, escape in IRI_ESCAPES.items():
        out = F.replace(out, F.lit(char), F.lit(escape))
    return F.when(text.rlike(IRI_ESCAPED_CLASS), out).otherwise(text)


def digest(*parts: Column) -> Column:
    """``H(p1, …)``: first 32 hex digits of SHA-256 over ``len(p):p`` pieces (null parts = "")."""
    pieces = []
    for p in parts:
        p = F.coalesce(p.cast("string"), F.lit(""))
        pieces += [F.char_length(p).cast("string"), F.lit(":"), p]
    return F.substring(F.sha2(F.concat(*pieces), 256), 1, 32)


def minted(kind: str, *parts: Column) -> Column:
    """IRI text ``id:{kind}/{H(parts)}``."""
    return F.concat(F.lit(ID + kind + "/"), digest(*parts))


def om_entity(entity_type: Column, entity_id: Column) -> Column:
    return F.concat(F.lit(OM_ENTITY), iri_safe(entity_type), F.lit("/"), iri_safe(entity_id))


def om_named(kind: str, name: Column) -> Column:
    return F.concat(F.lit(ID + "om/" + kind + "/"), iri_safe(name))


def is_urn(text: Column) -> Column:
    """What terms.urn_iri accepts (before iri_safe): starts with ``urn:`` (any case) and has more."""
    return (F.lower(F.substring(text, 1, 4)) == F.lit("urn:")) & (F.length(text) > 4)


# ---------------------------------------------------------------- N-Triples terms


def iri(text: Column) -> Column:
    """An IRI term ``<…>``; null stays null (so the triple is dropped)."""
    return F.concat(F.lit("<"), text, F.lit(">"))


def term(curie: str) -> Column:
    return F.lit("<" + expand(curie) + ">")


_SIMPLE_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r")]
_CONTROL_ESCAPES = [(chr(c), "\\u%04X" % c) for c in range(0x20) if chr(c) not in "\n\r"] + [("\x7f", "\\u007F")]


def escape_string(text: Column) -> Column:
    """The body of an N-Triples string literal (controls as \\uXXXX, so files stay plain text)."""
    simple = text
    for a, b in _SIMPLE_ESCAPES:
        simple = F.replace(simple, F.lit(a), F.lit(b))
    full = simple
    for a, b in _CONTROL_ESCAPES:
        full = F.replace(full, F.lit(a), F.lit(b))
    # most values need no escape at all: one regex search instead of four passes of replace
    return (F.when(text.rlike(CONTROL_CLASS), full)
            .when(text.rlike(NEEDS_ESCAPE_CLASS), simple).otherwise(text))


def literal(lexical: Column, datatype: str | None = None) -> Column:
    """A literal term; ``datatype`` is a full IRI or a CURIE; None = xsd:string (plain)."""
    body = F.concat(F.lit('"'), escape_string(lexical), F.lit('"'))
    if datatype is None:
        return body
    dt = datatype if "://" in datatype else expand(datatype)
    return F.concat(body, F.lit(f"^^<{dt}>"))


def triple(s: Column, p: Column, o: Column) -> Column:
    """One N-Triples line (without newline); null when any term is null."""
    return F.concat(s, F.lit(" "), p, F.lit(" "), o, F.lit(" ."))


def triples(*items: Column) -> Column:
    """array<string> of the non-null triples among ``items`` (each a triple or an array of triples)."""
    arrays = [i if _is_array(i) else F.array(i) for i in items]
    return F.filter(F.flatten(F.array(*arrays)) if len(arrays) > 1 else arrays[0], lambda x: x.isNotNull())


def _is_array(col: Column) -> bool:
    # not getattr: a Column answers any unknown attribute with a field reference
    return bool(col.__dict__.get("_changeprov_array", False))


def array_of(col: Column) -> Column:
    """Mark a Column holding array<string> of triples, for ``triples``."""
    col._changeprov_array = True  # type: ignore[attr-defined]
    return col


# ---------------------------------------------------------------- values


def valid_ms(ms: Column) -> Column:
    return ms.between(0, MAX_MS)


def ms_to_xsd(ms: Column) -> Column:
    """Epoch ms → ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC; the session time zone must be UTC)."""
    # guarded: staged columns are computed for events that a later check quarantines
    return F.date_format(F.timestamp_millis(F.when(valid_ms(ms), ms)), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def datetime_literal(ms: Column) -> Column:
    return literal(ms_to_xsd(ms), XSD + "dateTime")


def json_text(v: Column) -> Column:
    """Canonical JSON of a variant (terms.canonical_json == Spark's to_json of a variant)."""
    return F.to_json(v)


def json_literal(v: Column) -> Column:
    return literal(json_text(v), RDF_JSON)


def variant_kind(v: Column) -> Column:
    """'null', 'string', 'boolean', 'integer', 'decimal', 'double', 'object' or 'array' (null if absent)."""
    text = F.to_json(v)
    first = F.substring(text, 1, 1)
    number_schema = F.schema_of_variant(v)  # cheap here: only reached for scalars
    return (F.when(v.isNull(), F.lit(None))
            .when(first == "{", "object").when(first == "[", "array").when(first == '"', "string")
            .when(first == "n", "null").when((first == "t") | (first == "f"), "boolean")
            .when(number_schema.rlike("^(TINYINT|SMALLINT|INT|BIGINT|DECIMAL\\(\\d+,0\\))$"), "integer")
            .when(number_schema.startswith("DECIMAL"), "decimal")
            .otherwise("double"))


def value_literal(v: Column) -> Column:
    """emit.value_literal: scalars typed, structures rdf:JSON, JSON null → null (no triple)."""
    kind = variant_kind(v)
    text = F.to_json(v)
    string = v.cast("string")  # a variant string cast to string is its unquoted value
    return (F.when(kind == "string", literal(string))
            .when(kind == "boolean", literal(text, XSD + "boolean"))
            .when(kind == "integer", literal(text, XSD + "integer"))
            .when(kind == "decimal", literal(F.when(text.contains("."), text).otherwise(F.concat(text, F.lit(".0"))),
                                             XSD + "decimal"))
            .when(kind == "double", literal(text, XSD + "double"))
            .when(kind.isin("object", "array"), literal(text, RDF_JSON)))


def decimal_lexical(v: Column) -> Column:
    """terms.decimal_lexical for a numeric variant: at least one fractional digit, no trailing zeros."""
    text = F.to_json(v)
    return F.when(text.contains("."), text).otherwise(F.concat(text, F.lit(".0")))
