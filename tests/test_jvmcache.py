"""The driver's py4j lookup cache (changeprov.spark.jvmcache): the same classes as py4j's own
lookup, no reflection round trip once a function is known, and the same Columns."""

from __future__ import annotations

import pytest
from py4j.java_gateway import JVMView
from pyspark import SparkContext
from pyspark.sql import functions as F

from changeprov.spark.jvmcache import CLASSES, _RememberingClass, remember_static_members

pytestmark = pytest.mark.spark


@pytest.fixture
def commands(spark, monkeypatch):
    """Every py4j command the driver sends while the test runs."""
    client = SparkContext._jvm._gateway_client
    sent: list[str] = []
    original = type(client).send_command

    def send(self, command, *args, **kwargs):
        sent.append(command)
        return original(self, command, *args, **kwargs)

    monkeypatch.setattr(type(client), "send_command", send)
    return sent


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_each_class_is_what_py4j_itself_resolves(spark, name):
    assert JVMView.__getattr__(SparkContext._jvm, name)._fqn == CLASSES[name]


def test_the_session_remembers_the_classes(spark):
    assert all(isinstance(SparkContext._jvm.__dict__.get(n), _RememberingClass) for n in CLASSES)


def test_known_functions_need_no_reflection(spark, commands):
    remember_static_members(SparkContext._jvm)  # idempotent
    F.concat(F.lit("a"), F.when(F.col("x") == 1, F.lit("b")))  # first use: members looked up once
    commands.clear()
    column = F.concat(F.lit("a"), F.when(F.col("x") == 1, F.lit("b")))
    reflection = [c.split("\n")[:3] for c in commands if c.startswith("r\n")]
    assert reflection == []
    assert commands  # the calls themselves still go to the JVM
    assert str(column) == str(F.concat(F.lit("a"), F.when(F.col("x") == 1, F.lit("b"))))


def test_columns_evaluate_the_same(spark):
    row = spark.range(3).select(F.concat_ws("|", F.lit("x"), F.col("id").cast("string"),
                                            F.when(F.col("id") > 0, F.lit("pos")).otherwise("zero"))
                                .alias("v")).orderBy("v").collect()
    assert [r.v for r in row] == ["x|0|zero", "x|1|pos", "x|2|pos"]
