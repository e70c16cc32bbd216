"""Read JSONL lines and decode them in Spark SQL with the reference decoder's rules and reasons.

Mirrors changeprov.mapping.decode.decode_line / map_line: blank lines, TOO_LARGE (bytes, depth),
BAD_ENCODING (invalid UTF-8, BOM, NUL, lone surrogate escapes), MALFORMED_JSON (syntax, trailing
data, duplicate keys, NaN, numbers beyond a double), NOT_AN_OBJECT, and family detection.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeprov.mapping.decode import BOM_DETAIL, KEY_ESCAPE, LONG_KEY, LONG_KEY_DETAIL, MAX_BYTES, MAX_DEPTH
from changeprov.mapping.vocab import rules
from changeprov.spark.checks import reject
from changeprov.spark.plans import add_stages
from changeprov.spark.sqlterms import let, struct_of

WS = " \t\r\n"


def _count(text: Column, chars: str) -> Column:
    """How many of ``chars`` (plain characters) ``text`` holds: translate is one pass, no regex."""
    return F.length(text) - F.length(F.translate(text, chars, ""))


def max_depth(text: Column) -> Column:
    """decode.nesting_depth's exact answer (needed only past the limit): brackets outside strings."""
    no_escapes = F.regexp_replace(text, r"\\.", "")  # escapes first: no recursion-heavy string regex
    bare = F.regexp_replace(no_escapes, r'"[^"]*"', "")
    bare = F.substring_index(bare, '"', 1)  # an unterminated string: the rest is not JSON anyway
    skeleton = F.regexp_replace(bare, r"[^\[\]{}]", "")
    state = F.aggregate(
        F.split(skeleton, ""),
        F.struct(F.lit(0).alias("d"), F.lit(0).alias("m")),
        lambda acc, c: F.struct(
            (acc["d"] + F.when(c.isin("[", "{"), 1).otherwise(-1)).alias("d"),
            F.greatest(acc["m"], acc["d"] + F.when(c.isin("[", "{"), 1).otherwise(-1)).alias("m")),
    )
    return state["m"]


# No alternation inside a repetition anywhere: Java's regex engine recurses once per repetition of
# such a group, and a long string of escapes overflows the stack. Escapes go first, then strings.
_ESCAPE = r"\\."
_NOT_SKELETON = r'"[^"]*"|[^\[\]{}"]+'


def _skeleton_length(text: Column) -> Column:
    """How many brackets ``text`` has outside JSON strings (plus any stray, unterminated quote)."""
    return F.length(F.regexp_replace(F.regexp_replace(text, _ESCAPE, ""), _NOT_SKELETON, ""))


def _trailing_data(text: Column, parsed: Column) -> Column:
    """try_parse_json accepts `{..}garbage` and `{..}{..}`; json.loads does not.

    For a parsed object or array, trailing data shows either as a last character that is no closing
    bracket or as brackets (or a stray quote) the parsed value does not have: its canonical JSON
    keeps exactly the first value's brackets, string contents aside, so the counts differ.
    """
    # Anchored regexes, not btrim: trimming a string with a set of characters copies it (a few
    # percent of the whole export's time), and `\\z` is the very end (`$` also matches before a
    # final U+2028). Whitespace is never a bracket, so the raw text has the trimmed text's skeleton.
    extra = _skeleton_length(text) != _skeleton_length(F.to_json(parsed))
    starts_structured = text.rlike(f"^[{WS}]*[\\[{{]")
    closed = text.rlike(f"[\\]}}][{WS}]*\\z")
    scalar = r'^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null|"[^"]*")$'
    trimmed = F.btrim(text, F.lit(WS))
    return F.when(starts_structured, ~closed | F.coalesce(extra, F.lit(True))).otherwise(~F.regexp_replace(trimmed, _ESCAPE, "").rlike(scalar))


def _json_kind(text: Column) -> Column:
    """The type of the valid JSON value ``text``, as the reference names it, from its first character."""
    first = F.regexp_extract(text, f"^[{WS}]*(.)", 1)
    return (F.when(first == "[", "an array").when(first == '"', "a string").when(first.isin("t", "f"), "a boolean")
            .when(first == "n", "null").otherwise("a number"))


_BIG_NUMBER = r"[0-9]{300}|[eE][+-]?0*[0-9]{3}"


def _overflowing_number(text: Column) -> Column:
    """A number Spark would turn into a string "Infinity" (json.loads gives inf or a huge int), or one
    not zero that a double reads as 0 (rv48 #2: a version 1e-400 became the version "0.0").

    The raw-text guard is cheap and rarely true; only then are the number tokens looked at."""
    def out_of_range(t: Column) -> Column:
        d = t.cast("double")
        return (F.abs(d) == F.lit(float("inf"))) | ((d == 0) & F.regexp_extract(t, r"^-?([0-9.]*)", 1).rlike("[1-9]"))

    def exact() -> Column:
        bare = F.regexp_replace(F.regexp_replace(text, r"\\.", ""), r'"[^"]*"', '""')
        tokens = F.regexp_extract_all(bare, F.lit(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?"), 0)
        return F.when(bare.rlike(_BIG_NUMBER), F.exists(tokens, out_of_range))
    return F.coalesce(F.when(text.rlike(_BIG_NUMBER), exact()), F.lit(False))


def _lone_surrogate_only(text: Column) -> Column:
    """The line parses once its \\uD800-\\uDFFF escapes are neutralised: json.loads would accept it
    and the reference decoder then rejects the lone surrogate as BAD_ENCODING."""
    fixed = F.regexp_replace(text, r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}", "x")
    return text.rlike(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}") & F.try_parse_json(fixed).isNotNull()


def _long_key(text: Column) -> Column:
    """A string longer than MAX_KEY_CHARS followed by a colon: an object key Spark's parser refuses."""
    return F.regexp_replace(text, KEY_ESCAPE, "_").rlike(LONG_KEY)




# ---------------------------------------------------------------- one parse per text
#
# Spark's parser reads the first JSON value of a text and ignores whatever follows it, so the
# reference's "trailing data" rule needs a check of its own. Parsing the text inside an array
# with a sentinel after it, ``[TEXT,"\\u0000"]``, does both jobs in one pass: the array has
# exactly two elements, the second the sentinel, only when TEXT is one JSON value and nothing
# else (trailing data either breaks the syntax or adds elements). Only a text that itself
# holds the escape ``\\u0000`` could fake the sentinel; such texts take the exact, slower checks.
SENTINEL = "\\u0000"  # the JSON escape of U+0000, as text
_NUL = "\u0000"  # the character it decodes to


def wrapped_parse(text: Column) -> Column:
    """try_parse_json of ``[text,"\\u0000"]`` (see above)."""
    return F.try_parse_json(F.concat(F.lit("["), text, F.lit(',"' + SENTINEL + '"]')))


def wrap_ok(wrapped: Column, text: Column) -> Column:
    """True when ``wrapped`` (of ``text``) proves that ``text`` is exactly one JSON value."""
    return (wrapped.isNotNull() & ~text.contains(SENTINEL)
            & F.try_variant_get(wrapped, "$[2]", "variant").isNull()
            & F.coalesce(F.try_variant_get(wrapped, "$[1]", "string") == F.lit(_NUL), F.lit(False)))


def _schema_opens(schema: Column) -> Column:
    """How many containers a variant's schema names: an upper bound of the value's nesting depth.
    Counted only in a schema long enough to name MAX_DEPTH of them ("ARRAY<" is the shortest)."""
    return F.when(F.octet_length(schema) > 6 * MAX_DEPTH,
                  F.octet_length(schema) - F.octet_length(F.replace(schema, F.lit("<"), F.lit("")))).otherwise(0)


def schema_suspicious(schema: Column) -> tuple[Column, Column]:
    """(may be nested too deep, may hold a number that overflowed) for a parsed value's schema.

    A number beyond a double's range parses to an infinite DOUBLE, and the schema names every
    container, so both exact checks (on the raw text) run only when these cheap ones say so. Where
    an array mixes kinds its elements' schema is VARIANT, which may hide a DOUBLE (ut21 #8)."""
    return _schema_opens(schema) > MAX_DEPTH, schema.contains("DOUBLE") | schema.contains("VARIANT")


def _loads_strict_slow(text: Column) -> Column:
    """struct<v, bad> for a text whose wrapped parse proves nothing (see above): the exact checks."""
    parsed = F.try_parse_json(text)
    bad = (parsed.isNull()
           | ((_count(text, "[{") > MAX_DEPTH) & (max_depth(text) > MAX_DEPTH))
           | _trailing_data(text, parsed) | _overflowing_number(text))
    return F.struct(F.when(~bad, parsed).alias("v"), bad.alias("bad"))


def strict_json(text: Column) -> Column:
    """struct<v variant, bad boolean>: decode.loads_strict's verdict on JSON held in a string (``v``
    null when ``bad``). One parse on the common path; the exact checks only where needed."""
    def checked(c):
        deep, double = schema_suspicious(c["s"])
        t, x = c["t"], c["x"]
        fast_bad = (deep & (max_depth(t) > MAX_DEPTH)) | (double & _overflowing_number(t))
        slow = F.when(t.contains(SENTINEL), _loads_strict_slow(t)).otherwise(
            F.struct(F.lit(None).cast("variant").alias("v"), F.lit(True).alias("bad")))
        return F.when(x.isNotNull(), F.struct(F.when(~fast_bad, x).alias("v"), fast_bad.alias("bad"))) \
            .otherwise(slow)

    return let({"w": wrapped_parse(text), "t": text}, lambda c: let(
        {"x": F.when(wrap_ok(c["w"], c["t"]), F.try_variant_get(c["w"], "$[0]", "variant")), "t": c["t"]},
        lambda d: let({"x": d["x"], "t": d["t"], "s": F.schema_of_variant(d["x"])}, checked)))


def decode(lines: DataFrame) -> DataFrame:
    """`value` (the raw line) → adds `blank`, `v` (variant), `family`, `rejected` (struct reason, detail).

    One parse per line (``wrapped_parse``); the exact checks of the reference decoder run on the
    few lines the cheap ones cannot clear (see ``schema_suspicious``)."""
    value = F.col("value")
    bytes_ = F.octet_length(value)
    starts_with_bom = value.startswith("\ufeff")
    blank_line = ~value.rlike(f"[^{WS}]")  # found at once on a real line
    if "bom" in lines.columns:
        # line 1 of a file that starts with a BOM, which Hadoop's line reader strips (see
        # job.read_lines): the reference sees the three bytes, so they count and it is never blank
        bom = F.col("bom")
        bytes_ = bytes_ + F.when(bom, 3).otherwise(0)
        starts_with_bom = bom | starts_with_bom
        blank_line = blank_line & ~bom
    parsed, fast, schema = F.col("v"), F.col("_fast"), F.col("_schema")
    deep_guard, double_guard = schema_suspicious(schema)
    brackets = F.octet_length(value) - F.octet_length(F.replace(F.replace(value, F.lit("["), F.lit("")),
                                                                F.lit("{"), F.lit("")))
    check = (
        F.when(bytes_ > MAX_BYTES, reject("TOO_LARGE", F.format_string(
            f"line of %d bytes exceeds the limit of {MAX_BYTES} bytes", bytes_)))
        .when(starts_with_bom, reject("BAD_ENCODING", BOM_DETAIL))
        .when(value.contains("\u0000"), reject("BAD_ENCODING", F.format_string(
            # a byte offset, as the reference's; a line with a stripped BOM never gets here (checked above)
            "NUL byte at offset %d (UTF-16/32 text?)", F.octet_length(F.substring_index(value, "\u0000", 1)))))
        .when(~F.is_valid_utf8(value), reject("BAD_ENCODING", "invalid UTF-8"))
        .when(F.when(fast, deep_guard).otherwise(brackets > MAX_DEPTH) & (max_depth(value) > MAX_DEPTH),
              reject("TOO_LARGE", f"nested deeper than {MAX_DEPTH} levels"))
        .when(parsed.isNull() & _lone_surrogate_only(value),
              reject("BAD_ENCODING", "lone UTF-16 surrogate escape (\\uD800-\\uDFFF not in a valid pair)"))
        .when(parsed.isNull() & _long_key(value),
              reject("TOO_LARGE", LONG_KEY_DETAIL))
        .when(parsed.isNull() | (~fast & _trailing_data(value, parsed))
              | (F.when(fast, double_guard).otherwise(F.lit(True)) & _overflowing_number(value)),
              reject("MALFORMED_JSON", "not one valid JSON value (syntax, trailing data, duplicate key, NaN or "
                                       "a number out of range)"))
        .when(F.when(fast, ~schema.startswith("OBJECT<"))
              .otherwise(F.try_variant_get(parsed, "$", "struct<>").isNull()),  # an object: no field is read
              reject("NOT_AN_OBJECT", F.concat(F.lit("the line holds "), _json_kind(value), F.lit(", not an object"))))
    )
    blank = F.col("blank")
    return add_stages(lines, [
        {"blank": blank_line},
        {"_w": F.when(~blank, wrapped_parse(value))},
        {"_fast": F.coalesce(wrap_ok(F.col("_w"), value), F.lit(False))},
        # the slow path parses the line alone: what the exact checks below need
        {"v": F.when(fast, F.try_variant_get("_w", "$[0]", "variant")).when(~blank, F.try_parse_json(value))},
        {"_schema": F.when(fast, F.schema_of_variant(parsed))},
        {"rejected": F.when(~blank, check)},
        {"family": F.when(F.col("rejected").isNull() & ~blank, detect_family(parsed))},
    ], drop=("_w", "_fast", "_schema"))


def detect_family(v: Column) -> Column:
    """mapper.detect_family: the first family (rules.json detectOrder) whose keys are all present.

    Every family's keys are read in one pass over the event (a struct of variants): a key is
    present when its field is not SQL NULL (a JSON null is a variant null, and present)."""
    table = rules()["families"]
    keys = [k for family in rules()["detectOrder"] for k in table[family]["detect"]]
    found = struct_of(v, keys)

    def body(c):
        out = F.lit(None).cast("string")
        for family in reversed(rules()["detectOrder"]):
            present = None
            for key in table[family]["detect"]:
                has = c["f"][key].isNotNull()
                present = has if present is None else present & has
            out = F.when(present, F.lit(family)).otherwise(out)
        return out

    return let({"f": found}, body)
