"""Spark SQL versions of changeprov.mapping.terms / emit: IRIs, digests, literals, N-Triples lines,
and cheap typed access to variants.

Every function takes and returns pyspark Columns and uses native Spark SQL functions only, so
executors never need this package. Each mirrors a Python function of the reference mapper; the
equality is tested on the corpus and on tricky strings (tests/test_spark_*.py).

What costs what on the executors (measured, docs/export.md), and so how these are written:

* Reading a field of a variant column copies the whole variant out of the row first, so the
  fields of one JSON object are taken in one ``struct_of`` call, not one call per field.
* Java's regex engine tests a character class of single Latin-1 characters with one table lookup,
  but a class with ranges or characters past U+00FF with one test per member: 10-80 ns per
  character of input. So the checks use small classes, and the full classes of non-ASCII
  characters run only on text that has any (``is_ascii``, a length comparison).
* Most identifiers and literals need no escaping: one check decides, and the rewriting (chains of
  ``replace``) runs only on the few that do.
"""

from __future__ import annotations

import weakref

from pyspark import SparkContext
from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.terms import FORBIDDEN_JAVA_REGEX, IRI_ESCAPES
from changeprov.mapping.vocab import ID, OM_ENTITY, expand

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_JSON = "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"
MAX_MS = 253402300799999
ASCII_IRI_ESCAPED_CLASS = '[ "#%<>?\\[\\\\\\]^`{|}]'  # terms.IRI_ESCAPED plus %: single characters, one table
UNICODE_SPACE_CLASS = "[" + "".join(f"\\x{{{ord(c):X}}}" for c in IRI_ESCAPES if ord(c) > 0x7F) + "]"
CONTROL_CLASS = "[\\x00-\\x1f\\x7f]"  # C0 controls and DEL: never part of an IRI
# The literal escapes of pyoxigraph's N-Triples serializer, which the reference mapper writes with:
# ECHAR for these, \uXXXX for the other C0 controls and DEL, and \uFFFE / \uFFFF for the two
# BMP non-characters. The same bytes on both sides, so their outputs compare line by line.
ECHARS = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"),
          ("\f", "\\f"), ("\ufffe", "\\uFFFE"), ("\uffff", "\\uFFFF"))
UCHAR_CLASS = "[\\x00-\\x07\\x0b\\x0e-\\x1f\\x7f]"  # the characters escape_string writes as \u00XX
NEEDS_ESCAPE_CLASS = '[\\x{0}-\\x{1F}\\x{7F}\\\\"\\x{FFFE}\\x{FFFF}]'  # every character escape_string rewrites
# what canonical JSON text still needs (Spark writes every other control character as a JSON escape);
# the backslash first, so the ones the others add are not doubled. tests/test_terms.py holds all three
# tables to pyoxigraph's serializer, code point by code point, without Spark
JSON_ESCAPES = (("\\", "\\\\"), ('"', '\\"'), ("\x7f", "\\u007F"), ("\ufffe", "\\uFFFE"), ("\uffff", "\\uFFFF"))


# ---------------------------------------------------------------- binding


def let(values: dict, body) -> Column:
    """``body`` over the named values, each evaluated once (bound to a lambda variable): inside a
    higher-order function's lambda, where no staged column (changeprov.spark.stages) can be used."""
    names = list(values)
    packed = F.struct(*[values[n].alias(n) for n in names])
    return F.try_element_at(F.transform(F.array(packed), lambda s: body({n: s[n] for n in names})), F.lit(1))


def extend(items: Column, **fields) -> Column:
    """``transform(items, x -> x with the new fields)``; each field is a function of the element
    as it came in (a field that needs another takes a second ``extend``).

    Arrays of structs grow step by step this way, so that a value computed from an element is
    computed once and later expressions read it as a field."""
    def add(x: Column) -> Column:
        out = x
        for name, fn in fields.items():  # each from the element as it came: no field sees another
            out = out.withField(name, fn(x))
        return out

    return F.transform(items, add)


def flat(arrays: Column) -> Column:
    """Concatenated inner arrays; null inner arrays and a null outer array count as empty."""
    return F.coalesce(F.flatten(F.filter(arrays, lambda a: a.isNotNull())), F.array().cast("array<string>"))


def cat(*arrays: Column) -> Column:
    """Concatenation of arrays of strings (triples), null arrays counting as empty."""
    empty = F.array().cast("array<string>")
    return F.concat(*[F.coalesce(a, empty) for a in arrays])


def first_error(errors: Column) -> Column:
    """The first non-null element of an array of errors (null if none, or if the array is null)."""
    return F.try_element_at(F.filter(errors, lambda e: e.isNotNull()), F.lit(1))


# ---------------------------------------------------------------- variants


def struct_of(x: Column, names, *, nested: dict | None = None) -> Column:
    """The fields ``names`` of the JSON object ``x`` as struct<name variant, …> in one read of ``x``
    (a field is SQL NULL when absent or when ``x`` is no object; JSON null stays a variant null).
    ``nested`` adds struct fields: ``{"a": "struct<b:variant>"}`` reads ``x.a.b`` in the same pass
    (NULL unless ``a`` is an object)."""
    names = list(dict.fromkeys(names))
    fields = [f"`{n}`:variant" for n in names] + [f"`{k}`:{t}" for k, t in (nested or {}).items()]
    return F.try_variant_get(x, "$", "struct<" + ",".join(fields) + ">")


def items(x: Column) -> Column:
    """array<variant> of a JSON array (null for anything else)."""
    return F.try_variant_get(x, "$", "array<variant>")


_SCALAR_KINDS = {"STRING": "string", "BOOLEAN": "boolean", "VOID": "null", "TINYINT": "integer",
                 "SMALLINT": "integer", "INT": "integer", "BIGINT": "integer", "DOUBLE": "double", "FLOAT": "double"}


def schema_kind(schema: Column) -> Column:
    """The kind (see ``variant_kind``) a schema_of_variant text names: prefix tests and one lookup
    in a constant map, no regex."""
    digits = F.substring_index(F.substring(schema, 9, 10), ",", 1).try_cast("int")
    return (F.when(F.startswith(schema, F.lit("ARRAY")), F.lit("array"))
            .when(F.startswith(schema, F.lit("OBJECT")), F.lit("object"))
            .when(F.startswith(schema, F.lit("DECIMAL")),
                  F.when(~F.endswith(schema, F.lit(",0)")), F.lit("decimal"))
                  .when(digits >= 19, F.lit("integer")).otherwise(F.lit("integral")))
            .otherwise(F.try_element_at(table(_SCALAR_KINDS), schema)))


def variant_kind(x: Column) -> Column:
    """The JSON type of a variant: 'null', 'string', 'boolean', 'integer' (an integer token),
    'integral' (a number with a fraction of zeros, ``1.0``: Spark stores it as DECIMAL(p,0), the
    reference keeps it a Decimal), 'decimal', 'double', 'object' or 'array'; SQL NULL if absent.

    An object is told by a cast to an empty struct (no field is read); schema_of_variant, which
    walks the whole value, runs for scalars and arrays only. A 19-38 digit DECIMAL(p,0) counts as
    an integer token: Spark stores both ``10**20`` and ``1e20``-free ``100…0.0`` that way, and only
    the former is plausible in an event."""
    return (F.when(x.isNull(), F.lit(None).cast("string"))
            .when(F.try_variant_get(x, "$", "struct<>").isNotNull(), F.lit("object"))
            .otherwise(schema_kind(F.schema_of_variant(x))))


NUMBER_KINDS = ("integer", "integral", "decimal", "double")


def string_of(x: Column, kind: Column) -> Column:
    """The text of a variant string (``kind`` its variant_kind); null for other types."""
    return F.when(kind == "string", x.cast("string"))


# ---------------------------------------------------------------- identifiers


def is_ascii(text: Column) -> Column:
    """True when every character of ``text`` is ASCII (one UTF-8 byte each): no byte scan by regex."""
    return F.octet_length(text) == F.char_length(text)


def bad_identifier(text: Column) -> Column:
    """True when ``text`` cannot become part of an IRI (empty or a forbidden code point)."""
    return ((F.length(text) == 0) | text.rlike(CONTROL_CLASS)
            | (~is_ascii(text) & text.rlike(FORBIDDEN_JAVA_REGEX)))


def needs_iri_escape(text: Column) -> Column:
    """True when ``iri_safe`` changes ``text`` (a character of terms.IRI_ESCAPES in it)."""
    return text.rlike(ASCII_IRI_ESCAPED_CLASS) | (~is_ascii(text) & text.rlike(UNICODE_SPACE_CLASS))


def _code_points(text: Column) -> Column:
    return F.regexp_extract_all(text, F.lit("(?s)."), F.lit(0))


# Constant maps already built, per SparkContext: the mappers ask for the same few tables ~640
# times while the driver builds the plan, and each build is ~40 py4j round trips (a literal per
# key and value, a list element each): half of all literals built. A Column is immutable, so one
# object serves every expression that uses the table.
_TABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def table(mapping) -> Column:
    """A constant ``map<string,string>`` of a dict (or of (key, value) pairs), for lookups with
    ``try_element_at``."""
    pairs = dict(mapping)
    if not pairs:
        return F.create_map().cast("map<string,string>")
    context = SparkContext._active_spark_context
    built = _TABLES.setdefault(context, {}) if context is not None else {}
    key = tuple(pairs.items())
    if key not in built:
        built[key] = F.create_map(*[F.lit(x) for kv in pairs.items() for x in kv])
    return built[key]


def truthy(text: Column) -> Column:
    """Python's ``bool(text)`` for a string that may be null: not null and not empty."""
    return F.coalesce(F.length(text) > 0, F.lit(False))


def iri_safe(text: Column) -> Column:
    """``S(x)``: each character of terms.IRI_ESCAPES percent-encoded. Most identifiers have none:
    one check decides, and only the others are rewritten, character by character."""
    escaped = F.array_join(F.transform(_code_points(text), lambda c: F.coalesce(
        F.try_element_at(table(IRI_ESCAPES), c), c)), "")
    return F.when(needs_iri_escape(text), escaped).otherwise(text)


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
    """emit.om_entity: a ``/`` in the type is ``%2F`` (one type and id, one node)."""
    return F.concat(F.lit(OM_ENTITY), F.replace(iri_safe(entity_type), F.lit("/"), F.lit("%2F")), F.lit("/"),
                    iri_safe(entity_id))


def om_named(kind: str, name: Column) -> Column:
    return F.concat(F.lit(ID + "om/" + kind + "/"), iri_safe(name))


def is_urn(text: Column) -> Column:
    """What terms.urn_iri accepts (before iri_safe): starts with ``urn:`` (any case) and has more."""
    return (F.lower(F.substring(text, 1, 4)) == F.lit("urn:")) & (F.length(text) > 4)


def bad_urn(text: Column) -> Column:
    """terms.urn_iri would raise BadIdentifier: empty/forbidden code point, not a URN, or an
    ``urn://authority`` that is no valid IRI authority (pyoxigraph's check in terms.named)."""
    authority = F.regexp_extract(text, r"^(?i:urn)://([^/]*)", 1)
    bad_authority = F.lower(F.substring(text, 1, 6)).eqNullSafe("urn://") & ~authority.rlike(
        r"^([^@]*@)?[^@:]*(:[0-9]*)?$")
    return bad_identifier(text) | ~is_urn(text) | bad_authority


# ---------------------------------------------------------------- N-Triples terms


def iri(text: Column) -> Column:
    """An IRI term ``<…>``; null stays null (so the triple is dropped)."""
    return F.concat(F.lit("<"), text, F.lit(">"))


def term(curie: str) -> Column:
    return F.lit("<" + expand(curie) + ">")


def escape_string(text: Column) -> Column:
    """The body of an N-Triples string literal, byte for byte as pyoxigraph writes it (ECHARS, then
    the remaining controls as \\u00XX): files stay plain text. One check for the common case."""
    simple = text
    for a, b in ECHARS:
        simple = F.replace(simple, F.lit(a), F.lit(b))
    full = F.array_join(F.transform(_code_points(simple), lambda c: F.when(
        c.rlike(UCHAR_CLASS), F.format_string("\\u%04X", F.ascii(c))).otherwise(c)), "")
    # the common case (nothing to escape) costs one regex search; the \u00XX controls are a subset
    return F.when(text.rlike(NEEDS_ESCAPE_CLASS), F.when(text.rlike(UCHAR_CLASS), full).otherwise(simple)) \
        .otherwise(text)


def literal(lexical: Column, datatype: str | None = None) -> Column:
    """A literal term; ``datatype`` is a full IRI or a CURIE; None = xsd:string (plain)."""
    body = F.concat(F.lit('"'), escape_string(lexical), F.lit('"'))
    if datatype is None:
        return body
    dt = datatype if "://" in datatype else expand(datatype)
    return F.concat(body, F.lit(f"^^<{dt}>"))


def safe_literal(lexical: Column, datatype: str) -> Column:
    """A typed literal whose lexical form never needs escaping (numbers, times, booleans)."""
    return F.concat(F.lit('"'), lexical, F.lit(f'"^^<{datatype}>'))


def json_literal(text: Column) -> Column:
    """An rdf:JSON literal of canonical JSON text: only its quotes, backslashes, DEL and U+FFFE/U+FFFF
    need escaping (Spark writes every other control character as a JSON escape)."""
    # One chain of replaces that reads ``text`` once: a condition on ``text`` beside the rewrite made
    # Spark evaluate a ``to_json`` argument twice (subexpression elimination does not reach CASE
    # branches), ~2% of the map stage's time on OpenMetadata events. Backslashes go first, so the
    # ones added for quotes, DEL and the non-characters (written as escape_string does) are not doubled.
    body = text
    for a, b in JSON_ESCAPES:
        body = F.replace(body, F.lit(a), F.lit(b))
    return F.concat(F.lit('"'), body, F.lit(f'"^^<{RDF_JSON}>'))


def triple(s: Column, p: Column, o: Column) -> Column:
    """One N-Triples line (without newline); null when any term is null."""
    return F.concat(s, F.lit(" "), p, F.lit(" "), o, F.lit(" ."))


# ---------------------------------------------------------------- values


def valid_ms(ms: Column) -> Column:
    return ms.between(0, MAX_MS)


def ms_to_xsd(ms: Column) -> Column:
    """Epoch ms → ``YYYY-MM-DDTHH:MM:SS.mmmZ`` in UTC, whatever the session's time zone.

    A TIMESTAMP (``timestamp_millis``) is formatted in ``spark.sql.session.timeZone``: a notebook's
    session in another zone shifted every date-time while still writing ``Z`` (ut11 #1), and the
    export's plan, analysed once per application, kept the zone of its first export. Milliseconds
    added to a TIMESTAMP_NTZ epoch are formatted as they are."""
    # guarded: staged columns are computed for events that a later check quarantines
    epoch = F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")
    return F.date_format(F.timestamp_add("MILLISECOND", F.when(valid_ms(ms), ms), epoch),
                         "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def datetime_literal(ms: Column) -> Column:
    return safe_literal(ms_to_xsd(ms), XSD + "dateTime")


_SUFFIX = {"boolean": f"^^<{XSD}boolean>", "integer": f"^^<{XSD}integer>", "integral": f"^^<{XSD}integer>",
           "decimal": f"^^<{XSD}decimal>", "double": f"^^<{XSD}double>"}


def value_literal(x: Column, kind: Column) -> Column:
    """emit.value_literal of a variant (``kind`` its variant_kind): strings plain, other scalars
    typed (Spark's typing: ``1.0`` is an integer), objects and arrays rdf:JSON; JSON null or absent
    → null (no triple)."""
    def body(c):
        k, j = c["k"], c["j"]
        number = F.when(k == "decimal", F.when(j.contains("."), j).otherwise(F.concat(j, F.lit(".0")))).otherwise(j)
        return (F.when(k == "string", literal(c["x"].cast("string")))
                .when(k.isin("object", "array"), json_literal(j))
                .when(k != "null", F.concat(F.lit('"'), number, F.lit('"'), F.try_element_at(table(_SUFFIX), k))))

    # a string's literal is its text: its JSON form is written only for the other kinds
    return let({"x": x, "k": kind, "j": F.when(kind != "string", F.to_json(x))}, body)


def decimal_lexical(x: Column) -> Column:
    """struct<lexical, bad, range>: terms.decimal_lexical of a numeric variant (at least one fraction
    digit, no trailing zeros; ``bad`` when |v| ≥ 1e15 (``range``, the reference's first check) or
    more than 15 fraction digits).

    Spark writes a decimal variant without trailing zeros, so its JSON text is the lexical form
    but for a missing ``.0``; only doubles (exponent form) take the general path."""
    def fast(t: Column) -> Column:
        whole = F.substring_index(F.regexp_replace(t, "^-", ""), ".", 1)
        frac = F.when(t.contains("."), F.substring_index(t, ".", -1)).otherwise(F.lit(""))
        out_of_range = F.length(whole) > 15
        bad = out_of_range | (F.length(frac) > 15)
        lexical = F.when(t == "0", F.lit("0.0")).when(t.contains("."), t).otherwise(F.concat(t, F.lit(".0")))
        return F.struct(F.when(~bad, lexical).alias("lexical"), bad.alias("bad"), out_of_range.alias("range"))

    def body(c):
        return F.when(c["t"].rlike(r"^-?[0-9]+(\.[0-9]+)?$"), fast(c["t"])).otherwise(_decimal_lexical_general(c["t"]))

    return let({"t": F.to_json(x)}, body)


def _decimal_lexical_general(t: Column) -> Column:
    """decimal_lexical of any JSON number text (exponent form included), by its digits and exponent."""
    rx = r"^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$"

    def parts(c):
        frac = F.regexp_extract(c["t"], rx, 3)
        exp_text = F.regexp_replace(F.regexp_extract(c["t"], rx, 4), r"^\+", "")
        return {"neg": F.regexp_extract(c["t"], rx, 1) == "-",
                "d1": F.regexp_replace(F.concat(F.regexp_extract(c["t"], rx, 2), frac), "^0+", ""),
                "exp0": F.coalesce(exp_text.try_cast("int"), F.lit(0)) - F.length(frac)}

    def strip(c):
        d2 = F.regexp_replace(c["d1"], "0+$", "")
        return {"neg": c["neg"], "d2": d2, "exp": c["exp0"] + (F.length(c["d1"]) - F.length(d2))}

    def out(c):
        d2, exp = c["d2"], c["exp"]
        n = F.length(d2)
        point = n + exp
        plain = (F.when(exp >= 0, F.concat(d2, F.repeat(F.lit("0"), exp), F.lit(".0")))
                 .when(point > 0, F.concat(F.substring(d2, F.lit(1), point), F.lit("."),
                                           F.substring(d2, point + 1, F.lit(1 << 30))))
                 .otherwise(F.concat(F.lit("0."), F.repeat(F.lit("0"), -point), d2)))
        zero = n == 0
        out_of_range = ~zero & (point >= 16)
        bad = out_of_range | (~zero & (-exp > 15))
        lexical = F.when(zero, F.lit("0.0")).when(~bad, F.concat(F.when(c["neg"], "-").otherwise(""), plain))
        return F.struct(lexical.alias("lexical"), bad.alias("bad"), out_of_range.alias("range"))

    return let({"t": t}, lambda c: let(parts(c), lambda c2: let(strip(c2), out)))
