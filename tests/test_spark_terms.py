"""The Spark SQL term builders (changeprov.spark.sqlterms) on tricky strings: the N-Triples they
write parse strictly back to the same value. The mapper parity tests cover them on whole events;
these pin the escaping rules one value at a time, with a readable failure."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, RdfFormat, parse, serialize
from pyspark.sql import functions as F

from changeprov.spark import sqlterms as T

pytestmark = pytest.mark.spark

RDF_JSON = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")
TRICKY = [
    "",
    "plain",
    'a "quoted" word',
    "back\\slash and \\\" both",
    "\\u0041 is not an escape here",
    "del \x7f inside",
    "\x7f",
    "tab\tnew\nline\rcr",
    "\x00\x01\x1f nul and friends",
    "é ✓ 😀 \u2028 \ufeff",
    "\b\f\t\x0b\x0c\x0e bs ff tab vt so",
    "non-characters \ufffe \uffff \U0001fffe \ufdd0",
    '{"k":"v\\"q","d":"\x7f"}',
]


def _values(spark, column) -> list:
    """``column`` computed on each string of TRICKY (as ``s``), in order."""
    rows = spark.createDataFrame(list(enumerate(TRICKY)), "i int, s string") \
        .select("i", column.alias("v")).orderBy("i").collect()
    return [r.v for r in rows]


def _objects(spark, column) -> list:
    """Each row's ``<s> <p> OBJECT .`` line parsed strictly by pyoxigraph; the objects in order.
    Each line must also be the bytes pyoxigraph's serializer writes for it, as the reference mapper's
    output is: the two outputs compare line by line."""
    lines = _values(spark, T.triple(F.lit("<urn:s>"), F.lit("<urn:p>"), column))
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    # files stay plain text: controls and DEL are written as escapes, never raw
    assert not [line for line in lines if any(ord(c) < 0x20 or ord(c) == 0x7F for c in line)]
    triples = list(parse(data, format=RdfFormat.N_TRIPLES))
    reference = [serialize([t], format=RdfFormat.N_TRIPLES).decode("utf-8").rstrip("\n") for t in triples]
    assert [(a, b) for a, b in zip(lines, reference) if a != b] == []
    return [t.object for t in triples]


def test_plain_literals_round_trip(spark):
    assert _objects(spark, T.literal(F.col("s"))) == [Literal(s) for s in TRICKY]


def test_json_literals_round_trip(spark):
    # json_literal's input is JSON text from to_json (no raw controls but DEL); the literal keeps it as is
    got = _objects(spark, T.json_literal(F.to_json(F.struct(F.col("s")))))
    want = [Literal(j, datatype=RDF_JSON) for j in _values(spark, F.to_json(F.struct(F.col("s"))))]
    assert got == want
    assert "\x7f" in want[-1].value  # a raw DEL really is in the JSON text (the literal writes it \u007F)


def test_a_constant_table_is_built_once_and_looks_up(spark):
    table = T.table({"integer": "xsd:integer", "double": "xsd:double"})
    assert T.table([("integer", "xsd:integer"), ("double", "xsd:double")]) is table  # no new py4j calls
    row = spark.range(1).select(F.try_element_at(table, F.lit("double")).alias("hit"),
                                F.try_element_at(table, F.lit("string")).alias("miss")).first()
    assert (row.hit, row.miss) == ("xsd:double", None)


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_date_times_are_utc_whatever_the_session_time_zone(spark, zone):
    from changeprov.mapping.terms import ms_to_xsd
    values = [0, 1709280000123, 951782400000, 253402300799999, -1, None]
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        rows = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i int, ms long") \
            .select("i", T.ms_to_xsd(F.col("ms")).alias("v")).orderBy("i").collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert [r.v for r in rows] == [ms_to_xsd(v) for v in values[:4]] + [None, None]
