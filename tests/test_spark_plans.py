"""spark.plans: stage-wise analysis and plans reused across inputs give what the plain calls give."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from changeprov.spark import plans

pytestmark = pytest.mark.spark


def _rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _stages():
    return [
        {"b": F.col("a") * 2, "s": F.upper(F.col("s"))},  # a new column, and one replaced in place
        {"c": F.col("b") + F.length(F.col("s")), "n": F.transform(F.col("xs"), lambda x: x + F.col("b"))},
        {"a": F.col("c") - 1},  # replaces a column of the input, using an earlier stage's
    ]


def test_add_stages_is_with_columns_stage_by_stage(spark):
    df = spark.createDataFrame([(1, "x", [1, 2]), (2, None, []), (None, "yz", None)], "a int, s string, xs array<int>")
    errors = len(plans.FAST_PATH_ERRORS)
    got = plans.add_stages(df, _stages(), drop=("b",))
    want = df
    for stage in _stages():
        want = want.withColumns(stage)
    want = want.drop("b")
    assert got.columns == want.columns == ["a", "s", "xs", "c", "n"]
    assert got.schema == want.schema
    assert _rows(got) == _rows(want)
    assert len(plans.FAST_PATH_ERRORS) == errors, plans.FAST_PATH_ERRORS  # the fast path, not the fallback


def test_a_reused_plan_serves_every_input_and_is_built_once(spark):
    built = []

    def transform(df):
        built.append(1)
        return plans.add_stages(df, _stages()).where(F.col("c") > 2).groupBy("s").agg(F.sum("c").alias("t"))

    errors = len(plans.FAST_PATH_ERRORS)
    schema = "a int, s string, xs array<int>"
    first = spark.createDataFrame([(1, "x", [1]), (5, "x", [2]), (3, "q", None)], schema)
    second = spark.createDataFrame([(7, "k", [])], schema).union(spark.createDataFrame([(8, None, [3])], schema))
    for df in (first, second, first):
        assert _rows(plans.reuse(df, "test-reuse", transform)) == _rows(transform(df))
    # three direct calls above and one build for the reused plan
    assert len(built) == 4
    assert len(plans.FAST_PATH_ERRORS) == errors, plans.FAST_PATH_ERRORS


def test_another_schema_is_another_plan(spark):
    calls = []

    def transform(df):
        calls.append(df.columns)
        return df.withColumn("twice", F.col("a") * 2)

    a = spark.createDataFrame([(1,)], "a int")
    b = spark.createDataFrame([(2, "z")], "a int, extra string")
    assert plans.reuse(a, "test-schemas", transform).columns == ["a", "twice"]
    assert plans.reuse(b, "test-schemas", transform).collect()[0].asDict() == {"a": 2, "extra": "z", "twice": 4}
    assert len(calls) == 2
