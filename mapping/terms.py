"""Pure builders for the terms of the graph: IRI-safe strings, hashes, times, numbers, canonical JSON.

Every rule here is written so the Spark job can reproduce it with Spark SQL functions alone
(docs/model.md, sections "IRIs are deterministic", "Time" and "Values"). Nothing does I/O.

>>> iri_safe("orders v1#2")
'orders%20v1%232'
>>> len(digest("openmetadata", "e1"))
32
>>> ms_to_xsd(1709280000000)
'2024-03-01T08:00:00.000Z'
"""

from __future__ import annotations

import hashlib
import math
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pyoxigraph

ID = "https://w3id.org/changeprov/id/"
XSD_DATETIME = pyoxigraph.NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")

# ---------------------------------------------------------------- errors


class BadIdentifier(ValueError):
    """A string cannot become (part of) an IRI; the mapper quarantines the line as BAD_IDENTIFIER."""


class BadTimestamp(ValueError):
    """A time is outside 1970-01-01T00:00:00.000Z … 9999-12-31T23:59:59.999Z or not well formed;
    the mapper quarantines the line as BAD_TIMESTAMP."""


# ---------------------------------------------------------------- IRI-safe strings S(x)

# Code points an IRI (RFC 3987 ipath) cannot carry, even percent-free:
#   C0/C1 controls and DEL, surrogates, private use (BMP and planes 15-16), the non-characters
#   U+FDD0-FDEF and U+xFFFE/U+xFFFF of every plane, and - beyond the rule's first wording in
#   docs/model.md - the two other gaps of RFC 3987 `ucschar` that pyoxigraph enforces:
#   the BMP "Specials" U+FFF0-U+FFFD (U+FFFD REPLACEMENT CHARACTER included) and U+E0000-U+E0FFF
#   (tags, variation selectors supplement).
_FORBIDDEN_RANGES = [
    (0x00, 0x1F), (0x7F, 0x9F), (0xD800, 0xDFFF), (0xE000, 0xF8FF), (0xFDD0, 0xFDEF),
    (0xFFF0, 0xFFFF), (0xE0000, 0xE0FFF), (0xF0000, 0x10FFFF),
] + [(plane * 0x10000 + 0xFFFE, plane * 0x10000 + 0xFFFF) for plane in range(1, 15)]


def _class(ranges: list[tuple[int, int]]) -> str:
    return "".join(f"\\U{lo:08X}-\\U{hi:08X}" if lo != hi else f"\\U{lo:08X}" for lo, hi in ranges)


# The same class, as a Java/Spark regex, is FORBIDDEN_JAVA_REGEX below.
_FORBIDDEN = re.compile("[" + _class(_FORBIDDEN_RANGES) + "]")
FORBIDDEN_JAVA_REGEX = "[" + "".join(
    f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in _FORBIDDEN_RANGES) + "]"
"""`_FORBIDDEN` in java.util.regex syntax, for Spark's ``rlike`` (surrogates cannot occur in Spark)."""

# Percent-encoded (upper-case hex of the UTF-8 bytes), "%" first when done as successive replaces:
#   * the ASCII characters IRIs forbid or reserve for structure: space " # < > ? [ \ ] ^ ` { | }
#   * the non-ASCII Unicode white space that IRIs allow but rdflib's N-Triples parser does not
#     (its IRI pattern is [^\s"<>]*): U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
#     U+205F, U+3000 (an addition to docs/model.md's first wording, needed by the strict checker).
IRI_ESCAPED = ' "#<>?[\\]^`{|}'
IRI_ESCAPED_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
IRI_ESCAPES: dict[str, str] = {
    c: "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in "%" + IRI_ESCAPED + IRI_ESCAPED_SPACES
}
"""Character → escape, in the order the Spark job must apply them (``%`` first)."""
_ESCAPES = str.maketrans(IRI_ESCAPES)


def iri_safe(s: str) -> str:
    """``S(x)`` of docs/model.md: the IRI-safe, injective form of a non-empty string.

    Raises BadIdentifier for "" and for code points no IRI may contain (see ``_FORBIDDEN_RANGES``).
    ``%`` becomes ``%25`` and each of ``space " # < > ? [ \\ ] ^ ` { | }`` its ``%XX`` form, the
    non-ASCII white space of ``IRI_ESCAPED_SPACES`` its UTF-8 ``%XX%XX…`` form (``U+00A0`` →
    ``%C2%A0``); everything else, unicode included, is kept.

    >>> iri_safe("sample_data.ecommerce_db.shopify.orders")
    'sample_data.ecommerce_db.shopify.orders'
    >>> iri_safe('a b"c#d%e<f>g?h[i\\\\j]k^l`m{n|o}p')
    'a%20b%22c%23d%25e%3Cf%3Eg%3Fh%5Bi%5Cj%5Dk%5El%60m%7Bn%7Co%7Dp'
    >>> iri_safe("100%")
    '100%25'
    >>> iri_safe("no\u00a0break\u3000space")
    'no%C2%A0break%E3%80%80space'
    >>> iri_safe("café/日本:x@y!")
    'café/日本:x@y!'
    >>> try: iri_safe("tab\\there")
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadIdentifier: forbidden code point U+0009 at position 3
    >>> try: iri_safe("")
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadIdentifier: empty identifier
    """
    if not isinstance(s, str):
        raise TypeError(f"iri_safe needs a str, got {type(s).__name__}")
    if not s:
        raise BadIdentifier("empty identifier")
    m = _FORBIDDEN.search(s)
    if m:
        raise BadIdentifier(f"forbidden code point U+{ord(m.group()):04X} at position {m.start()}")
    return s.translate(_ESCAPES)


def named(iri_text: str) -> pyoxigraph.NamedNode:
    """A NamedNode, with pyoxigraph's IRI validation error turned into BadIdentifier.

    >>> named("https://open-metadata.org/entity/table/t1")
    <NamedNode value=https://open-metadata.org/entity/table/t1>
    >>> try: named("no-scheme")
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadIdentifier: not a valid IRI: 'no-scheme' (No scheme found in an absolute IRI)
    """
    try:
        return pyoxigraph.NamedNode(iri_text)
    except ValueError as exc:
        raise BadIdentifier(f"not a valid IRI: {iri_text[:200]!r} ({exc})") from None


def urn_iri(urn: str) -> pyoxigraph.NamedNode:
    """A DataHub URN as an IRI: ``S(urn)``, which must start with ``urn:`` (any case) and go on.

    >>> urn_iri("urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)").value
    'urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)'
    >>> urn_iri("urn:li:tag:a b").value
    'urn:li:tag:a%20b'
    >>> try: urn_iri("https://x.example/")
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadIdentifier: not a URN (must start with 'urn:'): 'https://x.example/'
    """
    safe = iri_safe(urn)
    if safe[:4].lower() != "urn:" or len(safe) == 4:
        raise BadIdentifier(f"not a URN (must start with 'urn:'): '{urn[:200]}'")
    return named(safe)


# ---------------------------------------------------------------- hashes H(…)


def digest(*parts: str) -> str:
    """``H(p1, …, pn)``: first 32 hex digits of SHA-256 over ``len(p1) ":" p1 …`` (UTF-8; len in code points).

    Spark: ``substr(sha2(concat(length(p1), ':', p1, …), 256), 1, 32)``.

    >>> digest("a", "bc") == hashlib.sha256(b"1:a2:bc").hexdigest()[:32]
    True
    >>> digest("ab", "c") != digest("a", "bc")
    True
    >>> digest("é") == hashlib.sha256("1:é".encode()).hexdigest()[:32]
    True
    >>> try: digest(1)
    ... except Exception as e: print(type(e).__name__ + ":", e)
    TypeError: digest parts must be str, got int
    """
    for p in parts:
        if not isinstance(p, str):
            raise TypeError(f"digest parts must be str, got {type(p).__name__}")
    data = "".join(f"{len(p)}:{p}" for p in parts).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:32]


# ---------------------------------------------------------------- time

MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def ms_to_xsd(ms: int) -> str:
    """Epoch milliseconds → ``YYYY-MM-DDThh:mm:ss.mmmZ`` (UTC, always 3 fraction digits).

    >>> ms_to_xsd(0)
    '1970-01-01T00:00:00.000Z'
    >>> ms_to_xsd(253402300799999)
    '9999-12-31T23:59:59.999Z'
    >>> try: ms_to_xsd(-1)
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadTimestamp: epoch milliseconds out of range 0..253402300799999: -1
    >>> try: ms_to_xsd(1.5e12)
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadTimestamp: epoch milliseconds must be an integer, got float
    """
    if not isinstance(ms, int) or isinstance(ms, bool):
        raise BadTimestamp(f"epoch milliseconds must be an integer, got {type(ms).__name__}")
    if not 0 <= ms <= MAX_MS:
        raise BadTimestamp(f"epoch milliseconds out of range 0..{MAX_MS}: {ms if abs(ms) < 10**30 else 'huge'}")
    t = _EPOCH + timedelta(milliseconds=ms)
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
            f".{ms % 1000:03d}Z")


def xsd_datetime(ms: int) -> pyoxigraph.Literal:
    """``ms_to_xsd`` as an ``xsd:dateTime`` literal.

    >>> xsd_datetime(1709280000000).value
    '2024-03-01T08:00:00.000Z'
    """
    return pyoxigraph.Literal(ms_to_xsd(ms), datatype=XSD_DATETIME)


# RFC 3339 §5.6: any number of fraction digits; "T" and "Z" may be lower case (§5.6 NOTE). Also the
# Spark mapping's pattern (spark.openmetadata.rfc3339_ms, a Java regex): groups 1-11 are the same there.
RFC3339_PATTERN = (r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})"
                   r"(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))")
_RFC3339 = re.compile(RFC3339_PATTERN)


def rfc3339_to_ms(s: str) -> int:
    """An RFC 3339 date-time → UTC epoch ms, truncated (any number of fraction digits; ``t``/``z``
    as ``T``/``Z``).

    Invalid calendar dates, hour 24, leap second 60 and offsets beyond ±23:59 are BadTimestamp,
    as is a result outside ``0 … 253402300799999``.

    >>> rfc3339_to_ms("2024-03-01T08:00:00Z")
    1709280000000
    >>> rfc3339_to_ms("2024-03-01T09:30:00.123999+01:30")
    1709280000123
    >>> rfc3339_to_ms("1970-01-01T00:00:00.000-00:01")
    60000
    >>> rfc3339_to_ms("2024-03-01t08:00:00.1234567891234z")
    1709280000123
    >>> try: rfc3339_to_ms("2023-02-29T00:00:00Z")
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadTimestamp: not a valid date-time: '2023-02-29T00:00:00Z' (day is out of range for month)
    >>> try: rfc3339_to_ms("2024-03-01 08:00:00Z")
    ... except Exception as e: print(type(e).__name__ + ":", e)
    BadTimestamp: not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss[.f…](Z|±hh:mm)): '2024-03-01 08:00:00Z'
    """
    if not isinstance(s, str):
        raise BadTimestamp(f"date-time must be a string, got {type(s).__name__}")
    m = _RFC3339.fullmatch(s)
    if not m:
        raise BadTimestamp(f"not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss[.f…](Z|±hh:mm)): {s[:100]!r}")
    year, month, day, hour, minute, second, frac, _z, sign, oh, om = m.groups()
    try:
        local = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                         tzinfo=timezone.utc)
    except ValueError as exc:
        raise BadTimestamp(f"not a valid date-time: {s!r} ({exc})") from None
    offset_min = 0
    if sign:
        if int(oh) > 23 or int(om) > 59:
            raise BadTimestamp(f"not a valid UTC offset: {s!r}")
        offset_min = (int(oh) * 60 + int(om)) * (1 if sign == "+" else -1)
    delta = local - _EPOCH
    ms = ((delta.days * 86400 + delta.seconds) * 1000 + int((frac or "").ljust(3, "0")[:3])
          - offset_min * 60000)
    if not 0 <= ms <= MAX_MS:
        raise BadTimestamp(f"date-time out of range 1970-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z: {s!r}")
    return ms


# ---------------------------------------------------------------- OpenMetadata versions (xsd:decimal)

MAX_VERSION_FRACTION_DIGITS = 15


def decimal_lexical(x: int | Decimal) -> str:
    """Canonical ``xsd:decimal`` text of an OpenMetadata version: at least one fraction digit, no
    superfluous trailing zeros, no sign on zero, never an exponent.

    Input is a JSON number as ``decode`` yields it: an int or a Decimal (``JsonDecimal``; its value
    counts, not its spelling, so ``1.5e0`` → ``1.5``). ValueError when it is not finite, when
    ``|x| ≥ 10^15`` or when it needs more than 15 fraction digits; TypeError for other types.

    >>> [decimal_lexical(v) for v in (Decimal("0.1"), Decimal("1.5"), 2, Decimal("1.50"), Decimal("-0.0"))]
    ['0.1', '1.5', '2.0', '1.5', '0.0']
    >>> decimal_lexical(Decimal("12E-1")), decimal_lexical(Decimal("1E+2")), decimal_lexical(-3)
    ('1.2', '100.0', '-3.0')
    >>> try: decimal_lexical(Decimal("1e15"))
    ... except Exception as e: print(type(e).__name__ + ":", e)
    ValueError: version out of range (|v| < 1e15 required)
    """
    if isinstance(x, bool) or not isinstance(x, (int, Decimal)):
        raise TypeError(f"a version must be an int or a Decimal, got {type(x).__name__}")
    d = Decimal(x)
    if not d.is_finite():
        raise ValueError("version is not a finite number")
    if d == 0:
        return "0.0"
    if abs(d) >= Decimal(10) ** 15:
        raise ValueError("version out of range (|v| < 1e15 required)")
    sign, digits, exp = d.as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    exp += len(digits) - len(text)
    if -exp > MAX_VERSION_FRACTION_DIGITS:
        raise ValueError(f"version has more than {MAX_VERSION_FRACTION_DIGITS} fraction digits")
    return ("-" if sign else "") + _plain(text, exp, min_fraction=1)


def _plain(digits: str, exp: int, *, min_fraction: int) -> str:
    """Plain notation of ``digits × 10^exp`` (digits without leading/trailing zeros)."""
    if exp >= 0:
        out = digits + "0" * exp
        return out + ".0" if min_fraction else out
    point = len(digits) + exp
    if point > 0:
        return digits[:point] + "." + digits[point:]
    return "0." + "0" * -point + digits


# ---------------------------------------------------------------- canonical JSON (= Spark to_json(parse_json(…)))

MAX_DECIMAL_DIGITS = 38  # Spark's variant decimal: precision ≤ 38 and scale ≤ 38


def _escape_char(c: str) -> str:
    return {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t"}.get(c, f"\\u{ord(c):04X}")


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_string(s: str) -> str:
    r"""A JSON string the way Spark writes it: ``\"`` ``\\`` ``\b\f\n\r\t``, other C0 controls as
    ``\u00XX`` (upper-case hex), everything else raw (``/``, DEL, U+2028 and non-BMP included).

    >>> print(json_string('a"b\\c\n\x1f/é'))
    "a\"b\\c\n\u001F/é"
    >>> json_string("\x7f\u2028\U0001F600") == '"\x7f\u2028\U0001F600"'
    True
    """
    if _SURROGATE.search(s):
        raise ValueError("string contains a lone surrogate")
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _escape_char(m.group()), s) + '"'


def java_double(d: float) -> str:
    """``Double.toString(d)`` as Spark on Java 17 writes it.

    Layout: plain with at least one fraction digit when ``1e-3 ≤ |d| < 1e7``, else ``d.dddE±n``
    (no ``+``, no leading exponent zeros). Digits: Python's shortest round-trip digits, except

    * integers ``1 ≤ |d| < 2^63`` print their exact digits as Java 17's FloatingDecimal does
      (``1.61304845894623136E17``, where the shortest form is ``1.6130484589462314E17``), with the
      last one or two digits rounded off (half up) for ``2^58 ≤ |d| < 2^63``;
    * a one-digit shortest form becomes the closest two-digit form when that differs (``4.9E-324``).

    **Known mismatch (not reproduced):** outside the integer case Java 17's FloatingDecimal
    (JDK-4511638, fixed in JDK 19) sometimes prints a non-shortest digit string, e.g. ``1e23`` →
    ``9.999999999999999E22``, ``8.41e21`` → ``8.409999999999999E21``, ``3.0617315596860196E25`` →
    ``3.0617315596860195E25``: about 1 in 4000 random doubles, nearly all ≥ 1e21. Here they get
    the shortest digits. Such doubles only come from exponent-form or > 38-digit JSON numbers;
    reproducing them exactly would mean porting FloatingDecimal's digit loop (GPL code).

    >>> [java_double(v) for v in (12.5, 2000.0, 0.001, 1e22, 1e-7, 12345678.9, 1.2345e10, -0.0, 5e-324)]
    ['12.5', '2000.0', '0.001', '1.0E22', '1.0E-7', '1.23456789E7', '1.2345E10', '-0.0', '4.9E-324']
    """
    if not math.isfinite(d):
        raise ValueError(f"not a finite number: {d!r}")
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    a = abs(d)
    if a.is_integer() and 1 <= a < 2.0**63:
        # Java 17's "easy case": an integer below 2^63 prints its exact digits, except that for
        # binary exponents 58..62 the last 1 or 2 digits are rounded off (half up) - not the
        # shortest form (e.g. 1.61304845894623136E17).
        exact = int(a)
        p2 = exact.bit_length() - 1 - 54
        drop = len(str(2**p2)) - 1 if p2 > 1 else 0
        if drop:
            exact, rest = divmod(exact, 10**drop)
            exact += rest >= 10**drop // 2
        text = str(exact)
        digits, sci = text.rstrip("0"), len(text) - 1 + drop
    else:
        _, dig, exp = Decimal(repr(a)).as_tuple()  # shortest round-trip digits
        digits = "".join(map(str, dig)).rstrip("0")
        sci = exp + len(dig) - 1  # decimal exponent of the first digit
        if len(digits) == 1:
            two = f"{a:.1e}"  # the correctly rounded two-digit decimal
            if float(two) == a and two[2] != "0":
                digits, sci = two[0] + two[2], int(two[4:])
    if 1e-3 <= a < 1e7:
        if sci >= 0:
            ip = digits[: sci + 1].ljust(sci + 1, "0")
            fp = digits[sci + 1:] or "0"
        else:
            ip, fp = "0", "0" * (-sci - 1) + digits
        return f"{sign}{ip}.{fp}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{sci}"


def json_number(x: int | Decimal | float) -> str:
    """A JSON number as Spark's variant writes it (see ``canonical_json``).

    >>> [json_number(v) for v in (7, -0, 10**38 - 1, 10**38)]
    ['7', '0', '99999999999999999999999999999999999999', '1.0E38']
    >>> from changeprov.mapping.decode import JsonDecimal
    >>> [json_number(JsonDecimal(t)) for t in ("1.50", "100.0", "0.0010", "0.00001", "-0.0", "2e3", "1.0E-7")]
    ['1.5', '100', '0.001', '0.00001', '0', '2000.0', '1.0E-7']
    """
    if isinstance(x, bool):
        raise TypeError("a bool is not a number")
    if isinstance(x, int):
        if not is_double(x):
            return str(x)
        try:
            return java_double(float(x))
        except OverflowError:
            raise ValueError("integer too large for a double") from None
    if isinstance(x, float):
        return java_double(x)
    if isinstance(x, Decimal):
        if not x.is_finite():
            raise ValueError(f"not a finite number: {x}")
        lexical = getattr(x, "lexical", None)
        if is_double(x):
            return java_double(float(lexical if lexical is not None else x))
        sign, digits, exp = x.as_tuple()
        if x == 0:
            return "0"
        text = "".join(map(str, digits)).rstrip("0")
        exp += len(digits) - len(text)
        return ("-" if sign else "") + _plain(text, exp, min_fraction=0)
    raise TypeError(f"not a JSON number: {type(x).__name__}")


def is_double(x: int | Decimal | float) -> bool:
    """Whether Spark's variant holds the JSON number ``x`` as a double: an exponent (``5E-1``), more than 38
    digits, a scale beyond decimal(38), a Python float (rv48 #3: map typed ``5E-1`` and a 39-digit integer
    as decimal and integer, Spark as doubles).

    >>> from changeprov.mapping.decode import JsonDecimal
    >>> [is_double(v) for v in (7, 10**38, JsonDecimal("5E-1"), JsonDecimal("1.5"), JsonDecimal("1." + "0" * 39))]
    [False, True, True, False, True]
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return len(str(x).lstrip("-")) > MAX_DECIMAL_DIGITS
    if isinstance(x, Decimal):
        lexical = getattr(x, "lexical", None)
        if lexical is not None and ("e" in lexical or "E" in lexical):
            return True
        _sign, digits, exp = x.as_tuple()
        precision, scale = len(digits), -exp
        if lexical is None and exp > 0:  # a computed Decimal like 1E+2: its plain spelling's precision
            precision, scale = len(digits) + exp, 0
        return precision > MAX_DECIMAL_DIGITS or scale > MAX_DECIMAL_DIGITS or scale < 0
    return isinstance(x, float)


def variant_integer(x) -> int | None:
    """``x`` as an int where Spark's variant holds the JSON number as an integer token (sqlterms.variant_kind:
    a long, or a DECIMAL(p,0) of 19-38 digits, which a zero fraction becomes too), else None: an integer of
    more than 38 digits is a double there, ``1e18.0`` an integer (rv48 #1: a run's time mapped by one
    mapper and quarantined by the other).

    >>> from changeprov.mapping.decode import JsonDecimal
    >>> [variant_integer(v) for v in (7, 10**38, JsonDecimal("1" + "0" * 18 + ".0"), JsonDecimal("1.0"), JsonDecimal("1e18"))]
    [7, None, 1000000000000000000, None, None]
    >>> [variant_integer(v) for v in (JsonDecimal("1" + "0" * 18 + ".5"), JsonDecimal("-1" + "0" * 17 + ".0"), True)]
    [None, None, None]
    >>> variant_integer(JsonDecimal("-1" + "0" * 18 + ".0"))
    -1000000000000000000
    """
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return None if is_double(x) else x
    if isinstance(x, Decimal) and x.is_finite() and not is_double(x) and x == x.to_integral_value():
        value = int(x)
        return value if len(str(abs(value))) >= 19 else None
    return None


def canonical_json(value) -> str:
    """Canonical JSON (docs/model.md "Values"), equal to Spark 4's ``to_json(parse_json(text))``.

    Objects get their keys sorted by UTF-16 code unit (Java's String order, as Spark does; this
    differs from code point order only when a key has a non-BMP character where another has one
    in U+E000–U+FFFF — docs/model.md says "by code point"), nothing is indented, strings as ``json_string``,
    numbers as ``json_number``: integers of ≤ 38 digits as written; decimals written without an
    exponent, when they fit Spark's decimal(38) (precision ≤ 38 and scale ≤ 38 as written),
    normalised without trailing zeros (``1.50`` → ``1.5``, ``1.0`` → ``1``, ``-0.0`` → ``0``);
    every other number (exponent form, > 38 digits, Python floats) as a double in Java notation
    (``2e3`` → ``2000.0``, ``1e22`` → ``1.0E22``). A plain ``Decimal`` (no ``lexical``) counts as
    written in plain notation. Non-finite numbers raise ValueError.

    >>> canonical_json({"b": 1, "a": [True, None, "x"], "A": {}})
    '{"A":{},"a":[true,null,"x"],"b":1}'
    >>> canonical_json({"\uffef": 1, "\U0001F600": 2}) == '{"\U0001F600":2,"\uffef":1}'
    True
    """
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def _utf16_key(key: str) -> bytes:
    """Java's String order (UTF-16 code units), which Spark uses: it differs from code point order
    only between U+E000–U+FFFF and non-BMP characters (``"\U0001F600" < "\uffef"`` here)."""
    return key.encode("utf-16-be", "surrogatepass")


def _write(v, out: list[str]) -> None:
    if isinstance(v, str):
        out.append(json_string(v))
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, (int, float, Decimal)):
        out.append(json_number(v))
    elif isinstance(v, dict):
        out.append("{")
        for key in v:
            if not isinstance(key, str):
                raise TypeError(f"object keys must be str, got {type(key).__name__}")
        for i, key in enumerate(sorted(v, key=_utf16_key)):
            if i:
                out.append(",")
            out.append(json_string(key))
            out.append(":")
            _write(v[key], out)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"not a JSON value: {type(v).__name__}")
