"""Ordered quarantine checks for the Spark mappers: the reference's first failing check wins.

A mapper adds (condition, reason, detail) in the order the reference mapper would raise them;
``Checks.column()`` is one ``CASE WHEN`` over them (null when all pass). ``typed`` mirrors
changeprov.mapping.fields.get for a value whose JSON kind (sqlterms.variant_kind) is known.
"""

from __future__ import annotations

from contextlib import contextmanager

from pyspark.sql import Column
from pyspark.sql import functions as F

from decimal import Decimal

from changeprov.mapping.terms import FORBIDDEN_JAVA_REGEX
from changeprov.spark.sqlterms import MAX_MS, NUMBER_KINDS, bad_identifier, bad_urn, is_urn, let, schema_kind

REJECTED = "struct<reason:string,detail:string>"
STR, INT, NUM, OBJ, LIST, BOOL = (("string",), ("integer",), NUMBER_KINDS, ("object",), ("array",), ("boolean",))
_TYPE_NAMES = {STR: "a string", INT: "an integer", NUM: "an integer or a number", OBJ: "an object",
               LIST: "an array", BOOL: "a boolean"}


def reject(reason: str, detail) -> Column:
    detail = detail if isinstance(detail, Column) else F.lit(detail)
    return F.struct(F.lit(reason).alias("reason"), detail.alias("detail"))


def no_reject() -> Column:
    return F.lit(None).cast(REJECTED)


def at(path, suffix: str) -> Column | str:
    """``path + suffix`` for a path that is text or a Column (paths with list indices)."""
    return F.concat(path, F.lit(suffix)) if isinstance(path, Column) else path + suffix


def _col(text) -> Column:
    """A detail part that is text or already a Column, as a Column."""
    return text if isinstance(text, Column) else F.lit(text)


# A check's detail ends in ", got " + this mark + the value's variant_kind; readable() words the kind
# once on the chosen detail, so that no check carries its own CASE over the kinds in the plan.
_KIND_MARK = "\u001f"


def kind_words(kind: Column) -> Column:
    """The JSON type ``kind`` (a variant_kind) as json_type words it, at the end of a detail
    (after readable())."""
    return F.concat(F.lit(_KIND_MARK), kind)


# ... or the value's schema_of_variant text after this mark, for a value whose kind no stage has
# computed: variant_kind is a large expression, and a detail's copy of it is planned in every export
_SCHEMA_MARK = "\u001c"


def schema_words(value: Column) -> Column:
    """The JSON type of the variant ``value`` (SQL NULL: JSON null) as json_type words it, at the end
    of a detail (after readable())."""
    return F.concat(F.lit(_SCHEMA_MARK), F.coalesce(F.schema_of_variant(value), F.lit("VOID")))


def got(detail, kind: Column) -> Column:
    """``detail`` + ", got <the JSON type of kind>" as fields.get words it (after readable())."""
    return F.concat(_col(detail), F.lit(", got "), kind_words(kind))


# An identifier check's detail is its path, a mark and the offending text; readable() words it as
# terms.iri_safe / terms.urn_iri do ("forbidden code point U+0009 at position 3").
_IDENT_MARK, _URN_MARK = "\u001e", "\u001d"


def ident_detail(path, text: Column) -> Column:
    """The BAD_IDENTIFIER detail of ``text`` at ``path`` (worded by readable())."""
    return _marked(path, _IDENT_MARK, text)


def urn_detail(path, text: Column) -> Column:
    """The BAD_IDENTIFIER detail of the URN ``text`` at ``path`` (worded by readable())."""
    return _marked(path, _URN_MARK, text)


def bad_urn_in(urns: Column, path, text=lambda x: x) -> Column:
    """A BAD_IDENTIFIER rejection (for Checks.error) naming the first element of ``urns`` whose
    ``text`` bad_urn() rejects, or null: one copy of bad_urn in the plan where a condition and its
    detail would be two (a copy is planned again in every export)."""
    first = F.try_element_at(F.filter(urns, lambda x: bad_urn(text(x))), F.lit(1))
    return let({"f": first}, lambda c: F.when(c["f"].isNotNull(), reject("BAD_IDENTIFIER", urn_detail(path, text(c["f"])))))


def _marked(path, mark: str, text: Column) -> Column:
    return F.concat(_col(path), F.lit(": " + mark), text)


def _ident_words(text: Column) -> Column:
    """iri_safe's BadIdentifier message for a ``text`` that bad_identifier() rejects."""
    first = F.regexp_extract(text, "(" + FORBIDDEN_JAVA_REGEX + ")", 1)
    before = F.regexp_extract(text, "^(?s)(.*?)" + FORBIDDEN_JAVA_REGEX, 1)
    code = F.hex(F.ascii(first))
    return F.when(F.length(text) == 0, F.lit("empty identifier")).otherwise(F.concat(
        # lpad cuts a longer text to its length: U+10FFFF was U+10FF (ut21 #6)
        F.lit("forbidden code point U+"), F.lpad(code, F.greatest(F.lit(4), F.length(code)), "0"),
        F.lit(" at position "), F.length(before).cast("string")))


def _urn_words(text: Column) -> Column:
    """urn_iri's BadIdentifier message for a ``text`` that bad_urn() rejects."""
    shown = F.concat(F.lit("'"), F.substring(text, 1, 200), F.lit("'"))
    return (F.when(bad_identifier(text), _ident_words(text))
            .when(~is_urn(text), F.concat(F.lit("not a URN (must start with 'urn:'): "), shown))
            .otherwise(F.concat(F.lit("not a valid IRI: "), shown, F.lit(" (its authority is not a valid one)"))))


def ms_out_of_range(path, ms: Column) -> Column:
    """terms.ms_to_xsd's detail for the epoch milliseconds ``ms`` (decimal(38,0), null when larger)
    at ``path``: the value, or "huge" beyond 30 digits."""
    shown = F.when(F.abs(ms) < F.lit(Decimal(10 ** 30)), ms.cast("string")).otherwise(F.lit("huge"))
    return F.concat(_col(at(path, f": epoch milliseconds out of range 0..{MAX_MS}: ")), shown)


#: the first character of a detail that quotes a value as given (an unknown eventType, changeType, ...):
#: readable() drops it and rewrites nothing, since the value may hold the marks above (ut21 #4)
_VERBATIM = "\u0000"


def verbatim(*parts: Column) -> Column:
    """A detail that quotes the input: readable() leaves it as it is."""
    return F.concat(F.lit(_VERBATIM), *parts)


def readable(detail: Column) -> Column:
    """The chosen quarantine detail in the reference's words: a marked kind as json_type words it
    ("got an integer"), a marked identifier as iri_safe / urn_iri word their errors. Runs once, on
    the detail a line ends up with, so the checks' own expressions stay small."""
    return F.when(detail.startswith(_VERBATIM), F.substring(detail, 2, 1 << 30)).otherwise(_worded(detail))


def _worded(detail: Column) -> Column:
    kinded = F.when(detail.contains(_SCHEMA_MARK), F.concat(
        F.regexp_extract(detail, "^(?s)(.*)" + _SCHEMA_MARK, 1), F.lit(_KIND_MARK),
        schema_kind(F.regexp_extract(detail, _SCHEMA_MARK + "(.*)$", 1)))).otherwise(detail)
    worded = F.regexp_replace(kinded, _KIND_MARK + "(integral|decimal|double)$", "a number")
    worded = F.regexp_replace(worded, _KIND_MARK + "(integer|object|array)$", "an $1")
    worded = F.regexp_replace(worded, _KIND_MARK + "(string|boolean)$", "a $1")
    worded = F.regexp_replace(worded, _KIND_MARK + "null$", "null")
    # the path ends at the first mark; the identifier after it may hold any character, marks too
    head = F.regexp_extract(detail, "^(?s)(.*?)[" + _IDENT_MARK + _URN_MARK + "]", 1)
    tail = F.substring(detail, F.length(head) + 2, F.lit(1 << 30))
    mark = F.substring(detail, F.length(head) + 1, F.lit(1))
    return (F.when(detail.rlike("[" + _IDENT_MARK + _URN_MARK + "]"),
                   F.concat(head, F.when(mark == _IDENT_MARK, _ident_words(tail)).otherwise(_urn_words(tail))))
            .when(detail.contains(_KIND_MARK) | detail.contains(_SCHEMA_MARK), worded)
            .otherwise(detail))


def absent(kind: Column) -> Column:
    """fields.get's "not there": absent (SQL NULL kind) or JSON null."""
    return F.coalesce(kind == "null", F.lit(True))


class Checks:
    """(condition, reason, detail) in the reference's order; ``column()`` = the first that holds."""

    def __init__(self) -> None:
        self.items: list[tuple[Column, str, Column | str]] = []
        self._guards: list[Column] = []

    @contextmanager
    def guard(self, cond: Column):
        """Checks added inside apply only where ``cond`` holds (the reference's ``if``)."""
        self._guards.append(cond)
        try:
            yield
        finally:
            self._guards.pop()

    def add(self, cond: Column, reason: str, detail) -> None:
        for g in self._guards:
            cond = g & cond
        self.items.append((F.coalesce(cond, F.lit(False)), reason, detail))

    def error(self, err: Column) -> None:
        """A nested check result (a struct<reason, detail> or null) at this point of the order."""
        for g in self._guards:
            err = F.when(g, err)
        self.items.append((err.isNotNull(), "", err))

    def typed(self, kind: Column, types: tuple, path, *, required: bool = False, text: Column | None = None) -> None:
        """fields.get's checks on a fetched value: MISSING_FIELD / BAD_TYPE (/ empty string)."""
        if required:
            self.add(absent(kind), "MISSING_FIELD", at(path, " is required"))
        self.add(~absent(kind) & ~kind.isin(*types), "BAD_TYPE", got(at(path, f": expected {_TYPE_NAMES[types]}"), kind))
        if required and types == STR:
            self.add(text == "", "MISSING_FIELD", at(path, " is empty"))

    def walk(self, kind: Column, path, where: str) -> None:
        """fields.get walking a dotted path through a value (at ``where``) that is there but no object."""
        self.add(~absent(kind) & (kind != "object"), "BAD_TYPE", got(at(path, f": expected an object at '{where}'"), kind))

    def ident(self, text: Column, path) -> None:
        """checked(...)'s BAD_IDENTIFIER for a text that goes into an IRI through iri_safe."""
        self.add(bad_identifier(text), "BAD_IDENTIFIER", ident_detail(path, text))

    def ident_pair(self, first: Column, second: Column, path) -> None:
        """``ident`` for an IRI made of two texts (om_entity's type and id): the first bad one is named."""
        bad = bad_identifier(first)
        self.add(bad | bad_identifier(second), "BAD_IDENTIFIER", ident_detail(path, F.when(bad, first).otherwise(second)))

    def urn(self, text: Column, path) -> None:
        """checked(..., urn, …)'s BAD_IDENTIFIER."""
        self.add(bad_urn(text), "BAD_IDENTIFIER", urn_detail(path, text))

    def column(self) -> Column:
        out = None
        for cond, reason, detail in self.items:
            value = detail if reason == "" else reject(reason, detail)
            out = F.when(cond, value) if out is None else out.when(cond, value)
        return out if out is not None else no_reject()
