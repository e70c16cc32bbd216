"""Spark SQL mapper stub (being written)."""

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.spark.decode import reject
from changeprov.spark.family import Family


def _todo(v: Column) -> Family:
    return Family(F.array().cast("array<string>"), reject("UNKNOWN_FAMILY", "not implemented yet"),
                  F.lit(None).cast("long"))
mcl = ece = platform = _todo
