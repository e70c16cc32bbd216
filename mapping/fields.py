"""Typed access to decoded event objects: every failure names the field it is about."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, TypeVar

from changeprov.mapping.decode import JSON_TYPES, Rejected, json_type
from changeprov.mapping.terms import BadIdentifier, BadTimestamp, variant_integer

T = TypeVar("T")
_MISSING = object()

_TYPE_NAMES = dict(JSON_TYPES)


def _is(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):  # bool is an int in Python, never in JSON
        return bool in types
    return isinstance(value, types)


def get(obj: dict, path: str, types: type | tuple[type, ...], *, required: bool = False, at: str = "") -> Any:
    """Value at dotted ``path`` in ``obj`` (``None`` when absent or null and not required).

    Raises Rejected(MISSING_FIELD) / Rejected(BAD_TYPE) naming the path (prefixed by ``at`` for
    objects nested in the event), and for a value in the way of the path, where it is and what it is:

    >>> get({"aspect": {"value": "{}"}}, "aspect.value", str)
    '{}'
    >>> try: get({"aspect": "{}"}, "aspect.value", str)
    ... except Rejected as e: print(e.reason, "-", e.detail)
    BAD_TYPE - aspect.value: expected an object at 'aspect', got a string
    >>> try: get({"name": 7}, "name", str, at="changeDescription.fieldsAdded[0].")
    ... except Rejected as e: print(e.reason, "-", e.detail)
    BAD_TYPE - changeDescription.fieldsAdded[0].name: expected a string, got an integer
    """
    path_name = at + path
    types = types if isinstance(types, tuple) else (types,)
    cur: Any = obj
    parts = path.split(".")
    for i, part in enumerate(parts):
        if not isinstance(cur, dict):
            # name the value that is in the way, not the key that could not be looked up in it
            where = (at + ".".join(parts[:i])).rstrip(".") or "the event"
            raise Rejected("BAD_TYPE", f"{path_name}: expected an object at '{where}', got {json_type(cur)}")
        cur = cur.get(part, _MISSING)
        if cur is _MISSING or cur is None:
            if required:
                raise Rejected("MISSING_FIELD", f"{path_name} is required")
            return None
    if not _is(cur, types):
        want = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
        raise Rejected("BAD_TYPE", f"{path_name}: expected {want}, got {json_type(cur)}")
    if str in types and isinstance(cur, str) and required and not cur:
        raise Rejected("MISSING_FIELD", f"{path_name} is empty")
    return cur


_ANY_JSON = (str, int, Decimal, bool, list, dict)


def integer(obj: dict, path: str, *, required: bool = False, at: str = "") -> int | None:
    """An integer field (a time in epoch ms) as the export's variant reads it: ``1e18.0`` is the integer
    10**18 there, an integer of more than 38 digits a number (rv48 #4: BAD_TYPE in one mapper was
    BAD_TIMESTAMP in the other, both ways). Other values as ``get(obj, path, int)`` takes them.

    >>> from changeprov.mapping.decode import JsonDecimal
    >>> integer({"t": JsonDecimal("1" + "0" * 18 + ".0")}, "t"), integer({"t": 5}, "t")
    (1000000000000000000, 5)
    >>> try: integer({"t": 10**40}, "t")
    ... except Rejected as e: print(e.reason, "-", e.detail)
    BAD_TYPE - t: expected an integer, got a number
    """
    value = get(obj, path, _ANY_JSON, required=required, at=at)
    if isinstance(value, Decimal) and (as_int := variant_integer(value)) is not None:
        return as_int
    if isinstance(value, int) and not isinstance(value, bool) and variant_integer(value) is None:
        raise Rejected("BAD_TYPE", f"{at}{path}: expected an integer, got a number")
    return get(obj, path, int, required=required, at=at)


def number(obj: dict, path: str, *, required: bool = False, at: str = "") -> int | Decimal | None:
    return get(obj, path, (int, Decimal), required=required, at=at)


def checked(path: str, fn: Callable[..., T], *args: Any) -> T:
    """Run an IRI/time builder, turning its ValueError into a quarantine reason for ``path``."""
    try:
        return fn(*args)
    except BadIdentifier as exc:
        raise Rejected("BAD_IDENTIFIER", f"{path}: {exc}") from None
    except BadTimestamp as exc:
        raise Rejected("BAD_TIMESTAMP", f"{path}: {exc}") from None
