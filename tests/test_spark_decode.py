"""Spark's line decoding gives the reference decoder's outcome for every hostile case."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from changeprov.mapping.mapper import map_line
from changeprov.spark.decode import decode
from conftest import load_shared_module

pytestmark = pytest.mark.spark

EXTRA = {
    "ok": b'{"eventType":"entityCreated","entityType":"t","entityId":"a","timestamp":1}',
    "scalar-with-trailing-data": b"1 2",
    "deep-unbalanced": b'{"a":' + b"[" * 200,
    "blank-spaces": b"  \t ",
    "datahub-mcl": b'{"entityUrn":"urn:li:x","aspectName":"status","changeType":"UPSERT"}',
    "unknown-family": b'{"hello":"world"}',
}
# ut21 #2: the longest number and key Spark's parser reads (digits of the integer part, none for a lone
# 0, of the fraction and the exponent; a key in UTF-16 units), on both sides of each limit
_NUMBERS = [f(n) for n in (999, 1000, 1001) for f in (
    lambda n: "1" * n, lambda n: "-1" + "0" * (n - 1), lambda n: "1." + "0" * (n - 1), lambda n: "0." + "0" * (n - 1) + "1",
    lambda n: "12." + "0" * (n - 2), lambda n: "1." + "0" * (n - 2) + "e5", lambda n: "1." + "0" * (n - 3) + "e-12")]
EXTRA.update({f"number-{i}": ('{"entityUrn":"urn:li:x","aspectName":"status","changeType":"UPSERT","n":%s}' % t).encode()
              for i, t in enumerate(_NUMBERS)})
EXTRA.update({f"key-{name}": ('{"entityUrn":"urn:li:x","aspectName":"status","changeType":"UPSERT","%s":1}' % key)
              .encode("utf-8") for name, key in (("bmp", "k" * 50_000), ("astral-over", "k" * 49_999 + "\U0001F600"),
                                                 ("astral-at", "\U0001F600" * 25_000))})
# rv48 #7: a long key beside another fault, before or after it; escapes count one character each
EXTRA.update({f"long-key-{name}": raw for name, raw in (
    ("nan-after", b'{"' + b"k" * 50_001 + b'": 1, "a": NaN}'),
    ("nan-before", b'{"a": NaN, "' + b"k" * 50_001 + b'": 1}'),
    ("escaped-nested", b'{"a": NaN, "b": {"' + b"k\\n" * 25_001 + b'" : 1}}'),
    ("escaped-over", b'{"entityUrn":"urn:li:x","aspectName":"status","changeType":"UPSERT","' + b"\\u00e9" * 50_001 + b'":1}'),
    ("escapes-short", b'{"a": NaN, "' + b"\\u00e9" * 10_000 + b'": 1}'),
    ("long-value", b'{"a": NaN, "b": "' + b"k" * 50_001 + b'"}'))})

# ut21 #8: a number out of a double's range beside values of other kinds (the schema says VARIANT, not DOUBLE)
EXTRA.update({f"overflow-{i}": ('{"entityUrn":"urn:li:x","aspectName":"status","changeType":"UPSERT","n":%s}' % t)
              .encode() for i, t in enumerate(('[1e400, "a"]', '[{"t": -1e400}, {"t": "a"}]', '[1, 2e308]', '[1, 1e308]'))})


def reference_decode_outcome(raw: bytes) -> str:
    result = map_line(raw)
    if result.blank:
        return "blank"
    if result.quarantine and result.quarantine.reason in (
            "BAD_ENCODING", "TOO_LARGE", "MALFORMED_JSON", "NOT_AN_OBJECT", "UNKNOWN_FAMILY"):
        return result.quarantine.reason
    return "decoded"


def test_decode_matches_the_reference_on_hostile_lines(spark, tmp_path):
    hostile = load_shared_module("conformance/fuzz/hostile_events.py", "hostile_events")
    cases = {k: v.encode("utf-8", "surrogatepass") for k, v in hostile.RAW_CASES.items() if len(v) < 1_000_000}
    cases.update(hostile.RAW_BYTES_CASES)
    cases.update(EXTRA)
    names = sorted(cases)
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(cases[n] + b"\n" for n in names))
    rows = (decode(spark.read.option("lineSep", "\n").text(str(path))
                   .withColumn("_n", F.monotonically_increasing_id()))
            .orderBy("_n").select("blank", "rejected", "family").collect())
    got = {}
    for name, r in zip(names, rows):
        if r.blank:
            got[name] = "blank"
        elif r.rejected is not None:
            got[name] = r.rejected.reason
        else:
            got[name] = "decoded" if r.family else "UNKNOWN_FAMILY"
    want = {name: reference_decode_outcome(cases[name]) for name in names}
    assert got == want
