"""Strict decoding of one input line (and of JSON embedded in strings) into Python values.

Bad input never raises anything but ``Rejected`` (with a reason from ``REASONS``); the mapper turns
that into a ``Quarantine`` record. Numbers keep their spelling: integers are ``int``, every other
number is a ``JsonDecimal`` (a Decimal that remembers its source token), so ``terms.canonical_json``
can write them exactly as Spark's ``to_json(parse_json(…))`` does.

>>> decode_line(b'{"a": 1.50, "b": [1, "x"]}\\n')
{'a': JsonDecimal('1.50'), 'b': [1, 'x']}
>>> try: decode_line(b'{"a": 1, "a": 2}')
... except Rejected as e: print(e.reason, "-", e.detail)
MALFORMED_JSON - duplicate key 'a'
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

REASONS: dict[str, str] = {
    "MALFORMED_JSON": "the line is not valid JSON (syntax error, duplicate key, NaN/Infinity, a number "
                      "no double can hold or of more than 1000 digits, a key of more than 50000 UTF-16 units)",
    "NOT_AN_OBJECT": "the line is valid JSON but not a JSON object",
    "UNKNOWN_FAMILY": "the object matches no known event family (OpenMetadata, DataHub MCL / "
                      "EntityChangeEvent / PlatformEvent)",
    "MISSING_FIELD": "a required field is absent, null or empty",
    "BAD_TYPE": "a field has the wrong JSON type or an unusable value",
    "UNKNOWN_EVENT_TYPE": "the event type / change type / category is not in the vocabulary",
    "BAD_TIMESTAMP": "a time is not epoch ms in 0..253402300799999 or not an RFC 3339 date-time",
    "BAD_IDENTIFIER": "a name, id or URN cannot become an IRI (empty, control or forbidden characters, "
                      "not a URN)",
    "BAD_ASPECT_JSON": "JSON embedded in a string (aspect value, entity, payload) is not valid JSON",
    "TOO_LARGE": "the line is longer than the byte limit or nested deeper than the depth limit",
    "BAD_ENCODING": "the line is not UTF-8 (invalid bytes, BOM, NUL bytes, lone surrogate escapes)",
    "DUPLICATE_EVENT": "an earlier line is the same event (same event id) with different content; the first "
                       "is kept, so that no event mixes the contents of two",
}

MAX_BYTES = 8 * 2**20
MAX_DEPTH = 128
# Object keys longer than this are refused: it is the limit of the JSON parser under Spark (Jackson's
# StreamReadConstraints.maxNameLength), and both implementations must quarantine the same lines.
MAX_KEY_CHARS = 50_000
# A key over that limit as both implementations find it in the text of a line that failed to parse
# (Spark's parser says only that it failed): each escape made one character, then a string of more
# than MAX_KEY_CHARS characters followed by a colon. Python's and Java's regex syntax alike.
KEY_ESCAPE = r"\\u[0-9a-fA-F]{4}|\\."
LONG_KEY = '"[^"]{%d,}"[ \t\r\n]*:' % (MAX_KEY_CHARS + 1)
LONG_KEY_DETAIL = f"an object key exceeds the limit of {MAX_KEY_CHARS} characters"
RAW_LIMIT = 64 * 1024  # bytes of the raw line kept in a quarantine record
BOM = b"\xef\xbb\xbf"
BOM_DETAIL = "UTF-8 byte order mark at the start of the line"  # the export writes the same (spark/)


class Rejected(Exception):
    """A line (or event) that must be quarantined: ``reason`` (a key of REASONS) and a ``detail``."""

    def __init__(self, reason: str, detail: str) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown quarantine reason {reason!r}")
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def _clean(text: str) -> str:
    """``text`` without lone surrogates (shown as backslash escapes), so it can be written as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Quarantine:
    """The record written for a line that could not be mapped."""

    reason: str
    detail: str
    source: str
    line: int
    raw: str

    def to_json(self) -> str:
        """One JSON object line (no newline). ``raw`` is cut to 64 KiB of UTF-8 with a marker.

        >>> Quarantine("BAD_ENCODING", "invalid UTF-8", "in.jsonl", 3, b"{\\xff}".decode("utf-8", "backslashreplace")).to_json()
        '{"reason": "BAD_ENCODING", "detail": "invalid UTF-8", "source": "in.jsonl", "line": 3, "raw": "{\\\\\\\\xff}"}'
        """
        raw = _clean(self.raw)
        data = raw.encode("utf-8")
        if len(data) > RAW_LIMIT:
            raw = data[:RAW_LIMIT].decode("utf-8", "ignore") + f"…[truncated, {len(data)} bytes in all]"
        return json.dumps({"reason": self.reason, "detail": _clean(self.detail), "source": _clean(self.source),
                           "line": self.line, "raw": raw}, ensure_ascii=False)


class JsonDecimal(Decimal):
    """A JSON number with a fraction or an exponent; ``lexical`` is its exact source token.

    >>> d = JsonDecimal("1.0E-7")
    >>> d.lexical, d == Decimal("1e-7")
    ('1.0E-7', True)
    """

    lexical: str

    def __new__(cls, token: str) -> "JsonDecimal":
        self = super().__new__(cls, token)
        self.lexical = token
        return self

    def __repr__(self) -> str:
        return f"JsonDecimal({self.lexical!r})"

    def __reduce__(self):
        return (JsonDecimal, (self.lexical,))


# JSON's names of the decoded values' types (bool before int: a bool is an int in Python)
JSON_TYPES = ((bool, "a boolean"), (int, "an integer"), (Decimal, "a number"), (str, "a string"),
              (dict, "an object"), (list, "an array"))


def json_type(value) -> str:
    """What a decoded JSON value is, in JSON's words: quarantine details are read by users, who know
    no Python class names.

    >>> json_type(True), json_type(JsonDecimal("1.5")), json_type(7), json_type([]), json_type(None)
    ('a boolean', 'a number', 'an integer', 'an array', 'null')
    """
    if value is None:
        return "null"
    for t, name in JSON_TYPES:
        if isinstance(value, t):
            return name
    return type(value).__name__


# ---------------------------------------------------------------- json.loads hooks

_DOUBLE_SAFE_DIGITS = 300  # integers/decimals with fewer integer digits cannot overflow a double
#: the longest number Spark's JSON parser (Jackson's maxNumberLength) reads: digits of the integer part
#: (none for a lone 0), of the fraction and of the exponent, signs and points not counted (ut21 #2)
MAX_NUMBER_DIGITS = 1000


def _number_digits(token: str) -> int:
    """
    >>> _number_digits("-0.0012e-5"), _number_digits("120.5E+10"), _number_digits("42")
    (5, 6, 2)
    """
    mantissa, _, exponent = token.lower().partition("e")
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    return (0 if whole == "0" else len(whole)) + len(fraction) + len(exponent.lstrip("+-"))


def _too_long(token: str) -> None:
    if len(token) > MAX_NUMBER_DIGITS and _number_digits(token) > MAX_NUMBER_DIGITS:
        raise Rejected("MALFORMED_JSON", f"number of {_number_digits(token)} digits is longer than the "
                                         f"{MAX_NUMBER_DIGITS} a JSON parser reads")


def _parse_float(token: str) -> JsonDecimal:
    _too_long(token)
    value = JsonDecimal(token)
    if "e" in token or "E" in token or len(token) > _DOUBLE_SAFE_DIGITS:
        shown = f"{token[:40]}{'…' if len(token) > 40 else ''}"
        as_double = float(token)
        if math.isinf(as_double):
            raise Rejected("MALFORMED_JSON", f"number {shown} overflows a double")
        if as_double == 0 and value != 0:  # rv48 #2: Spark's parser reads it as 0 (a version 1e-400 became 0.0)
            raise Rejected("MALFORMED_JSON", f"number {shown} underflows a double (it would read as 0)")
    return value


def _parse_int(token: str) -> int:
    _too_long(token)
    try:
        value = int(token)
    except ValueError as exc:  # more than sys.get_int_max_str_digits() digits
        raise Rejected("MALFORMED_JSON", f"integer too long: {exc}") from None
    if len(token) > _DOUBLE_SAFE_DIGITS:
        try:
            float(value)
        except OverflowError:
            raise Rejected("MALFORMED_JSON", f"integer of {len(token)} digits overflows a double") from None
    return value


def _parse_constant(token: str) -> Any:
    raise Rejected("MALFORMED_JSON", f"{token} is not JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    for key, _ in pairs:
        if len(key) > MAX_KEY_CHARS:
            raise Rejected("TOO_LARGE", f"object key of {len(key)} characters exceeds the limit of {MAX_KEY_CHARS}")
        # Spark's parser counts a key in UTF-16 units: a character beyond U+FFFF is two (ut21 #2)
        units = len(key.encode("utf-16-le", "surrogatepass")) // 2 if 2 * len(key) > MAX_KEY_CHARS else 0
        if units > MAX_KEY_CHARS:
            raise Rejected("MALFORMED_JSON", f"object key of {units} UTF-16 units is longer than the "
                                             f"{MAX_KEY_CHARS} a JSON parser reads")
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Rejected("MALFORMED_JSON", f"duplicate key {key[:100]!r}")
            seen.add(key)
    return obj


# ---------------------------------------------------------------- checks around json.loads

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def nesting_depth(text: str, limit: int) -> int:
    """Nesting depth of ``[``/``{`` outside strings, as far as it matters against ``limit``: the exact
    depth when it exceeds ``limit`` (the scan stops there, so 10^5-deep input is cheap), otherwise
    some value ≤ ``limit`` (the bracket count when that is small enough). The top-level object is 1.

    >>> nesting_depth('{"a": [1, {"b": "[[[["}]}', 2), nesting_depth("[" * 100_000, 128)
    (3, 129)
    """
    if text.count("[") + text.count("{") <= limit:
        return text.count("[") + text.count("{")  # an upper bound, within the limit: no scan needed
    bare = _STRING.sub("", text)
    quote = bare.find('"')
    if quote >= 0:  # an unterminated string: the rest is not JSON anyway
        bare = bare[:quote]
    depth = deepest = 0
    for m in _BRACKET.finditer(bare):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


_KEY_ESCAPE = re.compile(KEY_ESCAPE)
_LONG_KEY = re.compile(LONG_KEY)


def _parse(text: str, max_depth: int) -> Any:
    """json.loads with every strictness rule; raises Rejected only."""
    depth = nesting_depth(text, max_depth)
    if depth > max_depth:
        raise Rejected("TOO_LARGE", f"nested deeper than {max_depth} levels")
    try:
        return _loads(text)
    except Rejected as exc:
        # rv48 #7: a long key is TOO_LARGE wherever the line's other fault is (a NaN before it was
        # MALFORMED_JSON here and TOO_LARGE in the export, which cannot tell which came first)
        if exc.reason == "MALFORMED_JSON" and _LONG_KEY.search(_KEY_ESCAPE.sub("_", text)):
            raise Rejected("TOO_LARGE", LONG_KEY_DETAIL) from None
        raise


def _loads(text: str) -> Any:
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_float=_parse_float, parse_int=_parse_int,
                           parse_constant=_parse_constant)
    except json.JSONDecodeError as exc:
        raise Rejected("MALFORMED_JSON", str(exc)) from None
    except RecursionError:
        raise Rejected("TOO_LARGE", "nested too deeply for the parser") from None
    except ValueError as exc:  # defensive: json raises nothing else for str input
        raise Rejected("MALFORMED_JSON", str(exc)[:200]) from None
    if _SURROGATE_ESCAPE.search(text) and _has_surrogate(value):
        raise Rejected("BAD_ENCODING", "lone UTF-16 surrogate escape (\\uD800-\\uDFFF not in a valid pair)")
    return value


# ---------------------------------------------------------------- public entry points


def is_blank(raw: bytes) -> bool:
    """True for an empty line or one of JSON whitespace only (space, tab, CR, LF).

    >>> is_blank(b" \\t\\r\\n"), is_blank(b""), is_blank(b"\\x0c"), is_blank(b"{}")
    (True, True, False, False)
    """
    return not raw.strip(b" \t\r\n")


def decode_line(raw: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> dict:
    """One input line (bytes, with or without its line end) → the JSON object it holds.

    Raises Rejected: TOO_LARGE (over ``max_bytes`` bytes or nested deeper than ``max_depth``),
    BAD_ENCODING (UTF-8 BOM, invalid UTF-8 incl. CESU-8 surrogate bytes, NUL bytes as in UTF-16/32
    text, lone surrogate escapes), MALFORMED_JSON (syntax, duplicate keys at any depth,
    NaN/Infinity, numbers of more than 1000 digits or beyond a double's range, keys of more than 50000
    UTF-16 units), NOT_AN_OBJECT.

    >>> decode_line(b'{"t": 1e3, "n": null}')
    {'t': JsonDecimal('1e3'), 'n': None}
    >>> for bad in (b"\\xef\\xbb\\xbf{}", b'{"a": NaN}', b"[1]", b"[" * 200, b'{"a": "\\\\ud800"}'):
    ...     try: decode_line(bad)
    ...     except Rejected as e: print(e.reason)
    BAD_ENCODING
    MALFORMED_JSON
    NOT_AN_OBJECT
    TOO_LARGE
    BAD_ENCODING
    """
    if len(raw) > max_bytes:
        raise Rejected("TOO_LARGE", f"line of {len(raw)} bytes exceeds the limit of {max_bytes} bytes")
    if raw.endswith(b"\r\n"):
        raw = raw[:-2]
    elif raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.startswith(BOM):
        raise Rejected("BAD_ENCODING", BOM_DETAIL)
    if b"\x00" in raw:
        raise Rejected("BAD_ENCODING", f"NUL byte at offset {raw.find(bytes(1))} (UTF-16/32 text?)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected("BAD_ENCODING", f"invalid UTF-8 at byte {exc.start}: {exc.reason}") from None
    value = _parse(text, max_depth)
    if not isinstance(value, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
        raise Rejected("NOT_AN_OBJECT", f"the line holds {kind}, not an object")
    return value


def loads_strict(text: str, *, what: str, max_depth: int = MAX_DEPTH) -> Any:
    """JSON embedded in a string field (aspect value, ``entity``, payload) with decode_line's
    strictness; every problem is Rejected("BAD_ASPECT_JSON", "{what}: …").

    >>> loads_strict('{"tags": [{"tag": "urn:li:tag:pii"}]}', what="aspect.value")
    {'tags': [{'tag': 'urn:li:tag:pii'}]}
    >>> try: loads_strict('{"a": 1,}', what="aspect.value")
    ... except Rejected as e: print(e.reason, "-", e.detail)
    BAD_ASPECT_JSON - aspect.value: Expecting property name enclosed in double quotes: line 1 column 9 (char 8)
    """
    if not isinstance(text, str):
        raise Rejected("BAD_ASPECT_JSON", f"{what}: expected a JSON string, got {json_type(text)}")
    if _SURROGATE.search(text):
        raise Rejected("BAD_ASPECT_JSON", f"{what}: lone UTF-16 surrogate")
    try:
        return _parse(text, max_depth)
    except Rejected as exc:
        raise Rejected("BAD_ASPECT_JSON", f"{what}: {exc.detail}") from None
