"""Ordered quarantine checks for the Spark mappers: the reference's first failing check wins.

A mapper adds (condition, reason, detail) in the order the reference mapper would raise them;
``Checks.column()`` is one ``CASE WHEN`` over them (null when all pass). ``typed`` mirrors
changeprov.mapping.fields.get for a value whose JSON kind (sqlterms.variant_kind) is known.
"""

from __future__ import annotations

from contextlib import contextmanager

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.spark.sqlterms import NUMBER_KINDS, bad_identifier, bad_urn

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
        self.add(~absent(kind) & ~kind.isin(*types), "BAD_TYPE", at(path, f": expected {_TYPE_NAMES[types]}"))
        if required and types == STR:
            self.add(text == "", "MISSING_FIELD", at(path, " is empty"))

    def walk(self, kind: Column, path, part: str) -> None:
        """fields.get walking a dotted path through a value that is there but no object."""
        self.add(~absent(kind) & (kind != "object"), "BAD_TYPE", at(path, f": expected an object at '{part}'"))

    def ident(self, text: Column, path) -> None:
        """checked(...)'s BAD_IDENTIFIER for a text that goes into an IRI through iri_safe."""
        self.add(bad_identifier(text), "BAD_IDENTIFIER", at(path, ": empty or forbidden code point"))

    def urn(self, text: Column, path) -> None:
        """checked(..., urn, …)'s BAD_IDENTIFIER."""
        self.add(bad_urn(text), "BAD_IDENTIFIER", at(path, ": not a usable URN"))

    def column(self) -> Column:
        out = None
        for cond, reason, detail in self.items:
            value = detail if reason == "" else reject(reason, detail)
            out = F.when(cond, value) if out is None else out.when(cond, value)
        return out if out is not None else no_reject()
