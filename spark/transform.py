"""DataFrame → DataFrame steps of the export: decode, map per family, and the row-level outcome."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeprov.spark.decode import decode, reject
from changeprov.spark.family import mappers


def map_events(decoded: DataFrame) -> DataFrame:
    """Adds ``reason``, ``detail`` (quarantine), ``ms`` and ``triples`` to decoded lines.

    A row ends up blank, quarantined (reason not null) or mapped (triples not empty).
    """
    fam = F.col("family")
    v = F.col("v")
    rejected = F.col("rejected")
    triples = F.lit(None).cast("array<string>")
    ms = F.lit(None).cast("long")
    for name, mapper in mappers().items():
        f = mapper(v)
        rejected = F.when(rejected.isNull() & (fam == name), f.rejected).otherwise(rejected)
        triples = F.when(fam == name, f.triples).otherwise(triples)
        ms = F.when(fam == name, f.ms).otherwise(ms)
    unknown = F.col("rejected").isNull() & ~F.col("blank") & fam.isNull()
    rejected = F.when(unknown, reject("UNKNOWN_FAMILY", "no event family matches the keys of the line")) \
        .otherwise(rejected)
    return (decoded
            .withColumn("_rejected", rejected)
            .withColumn("reason", F.col("_rejected.reason"))
            .withColumn("detail", F.col("_rejected.detail"))
            .withColumn("ms", F.when(F.col("reason").isNull(), ms))
            .withColumn("triples", F.when(F.col("reason").isNull() & ~F.col("blank"), triples))
            .drop("_rejected"))


def map_lines(lines: DataFrame) -> DataFrame:
    """`value` lines → decoded and mapped rows (the whole per-line pipeline)."""
    return lines.transform(decode).transform(map_events)
