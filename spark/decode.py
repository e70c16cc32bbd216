"""Read JSONL lines and decode them in Spark SQL with the reference decoder's rules and reasons.

Mirrors changeprov.mapping.decode.decode_line / map_line: blank lines, TOO_LARGE (bytes, depth),
BAD_ENCODING (invalid UTF-8, BOM, NUL, lone surrogate escapes), MALFORMED_JSON (syntax, trailing
data, duplicate keys, NaN, numbers beyond a double), NOT_AN_OBJECT, and family detection.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeprov.mapping.decode import MAX_BYTES, MAX_DEPTH, MAX_KEY_CHARS
from changeprov.mapping.vocab import rules

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


def _trailing_data(text: Column, parsed: Column | None = None) -> Column:
    """try_parse_json accepts `{..}garbage` and `{..}{..}`; json.loads does not.

    For a parsed object or array, trailing data shows either as a last character that is no closing
    bracket or as brackets (or a stray quote) the parsed value does not have: its canonical JSON
    keeps exactly the first value's brackets, string contents aside, so the counts differ.
    """
    parsed = F.try_parse_json(text) if parsed is None else parsed
    # Anchored regexes, not btrim: trimming a string with a set of characters copies it (a few
    # percent of the whole export's time), and `\\z` is the very end (`$` also matches before a
    # final U+2028). Whitespace is never a bracket, so the raw text has the trimmed text's skeleton.
    extra = _skeleton_length(text) != _skeleton_length(F.to_json(parsed))
    starts_structured = text.rlike(f"^[{WS}]*[\\[{{]")
    closed = text.rlike(f"[\\]}}][{WS}]*\\z")
    scalar = r'^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null|"[^"]*")$'
    trimmed = F.btrim(text, F.lit(WS))
    return F.when(starts_structured, ~closed | F.coalesce(extra, F.lit(True))).otherwise(~F.regexp_replace(trimmed, _ESCAPE, "").rlike(scalar))


_BIG_NUMBER = r"[0-9]{300}|[eE][+]?0*[0-9]{3}"


def _overflowing_number(text: Column) -> Column:
    """A number Spark would turn into a string "Infinity" (json.loads gives inf or a huge int).

    The raw-text guard is cheap and rarely true; only then are the number tokens looked at."""
    def exact() -> Column:
        bare = F.regexp_replace(F.regexp_replace(text, r"\\.", ""), r'"[^"]*"', '""')
        tokens = F.regexp_extract_all(bare, F.lit(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?"), 0)
        return F.when(bare.rlike(_BIG_NUMBER),
                      F.exists(tokens, lambda t: F.abs(t.cast("double")) == F.lit(float("inf"))))
    return F.coalesce(F.when(text.rlike(_BIG_NUMBER), exact()), F.lit(False))


def _lone_surrogate_only(text: Column) -> Column:
    """The line parses once its \\uD800-\\uDFFF escapes are neutralised: json.loads would accept it
    and the reference decoder then rejects the lone surrogate as BAD_ENCODING."""
    fixed = F.regexp_replace(text, r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}", "x")
    return text.rlike(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}") & F.try_parse_json(fixed).isNotNull()


def _long_key(text: Column) -> Column:
    """A string longer than MAX_KEY_CHARS followed by a colon: an object key Spark's parser refuses."""
    return F.regexp_replace(text, _ESCAPE, "_").rlike('"[^"]{%d,}"[ \t\r\n]*:' % (MAX_KEY_CHARS + 1))


def reject(reason: str, detail) -> Column:
    detail = detail if isinstance(detail, Column) else F.lit(detail)
    return F.struct(F.lit(reason).alias("reason"), detail.alias("detail"))


def decode(lines: DataFrame) -> DataFrame:
    """`value` (the raw line) → adds `blank`, `v` (variant), `family`, `rejected` (struct reason, detail)."""
    value = F.col("value")
    bytes_ = F.octet_length(value)
    brackets = _count(value, "[{")
    # `v` (added before `rejected`, and only null here when the line is no JSON) is the parse: the
    # checks below reuse it instead of parsing the line again in each branch.
    parsed = F.col("v")
    check = (
        F.when(bytes_ > MAX_BYTES, reject("TOO_LARGE", F.format_string(
            f"line of %d bytes exceeds the limit of {MAX_BYTES} bytes", bytes_)))
        .when(value.startswith("\ufeff"), reject("BAD_ENCODING", "UTF-8 byte order mark at the start of the line"))
        .when(value.contains("\u0000"), reject("BAD_ENCODING", "NUL byte (UTF-16/32 text?)"))
        .when(~F.is_valid_utf8(value), reject("BAD_ENCODING", "invalid UTF-8"))
        .when((brackets > MAX_DEPTH) & (max_depth(value) > MAX_DEPTH),
              reject("TOO_LARGE", f"nested deeper than {MAX_DEPTH} levels"))
        .when(parsed.isNull() & _lone_surrogate_only(value),
              reject("BAD_ENCODING", "lone UTF-16 surrogate escape (\\uD800-\\uDFFF not in a valid pair)"))
        .when(parsed.isNull() & _long_key(value),
              reject("TOO_LARGE", f"an object key exceeds the limit of {MAX_KEY_CHARS} characters"))
        .when(parsed.isNull() | _trailing_data(value, parsed) | _overflowing_number(value),
              reject("MALFORMED_JSON", "not one valid JSON value (syntax, trailing data, duplicate key, NaN or "
                                       "a number out of range)"))
        .when(F.try_variant_get(parsed, "$", "struct<>").isNull(),  # an object: no field is read
              reject("NOT_AN_OBJECT", "the line holds a JSON value that is not an object"))
    )
    return (lines
            .withColumn("blank", ~value.rlike(f"[^{WS}]"))  # found at once on a real line
            .withColumn("v", F.when(~F.col("blank"), F.try_parse_json(value)))
            .withColumn("rejected", F.when(~F.col("blank"), check))
            .withColumn("family", F.when(F.col("rejected").isNull() & ~F.col("blank"), detect_family(F.col("v")))))


def detect_family(v: Column) -> Column:
    """mapper.detect_family: the first family (rules.json detectOrder) whose keys are all present."""
    table = rules()["families"]
    out = F.lit(None).cast("string")
    for family in reversed(rules()["detectOrder"]):
        present = None
        for key in table[family]["detect"]:
            has = F.variant_get(v, f"$['{key}']", "variant").isNotNull()  # SQL NULL only when the key is absent
            present = has if present is None else present & has
        out = F.when(present, F.lit(family)).otherwise(out)
    return out
