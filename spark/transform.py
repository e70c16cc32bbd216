"""DataFrame → DataFrame steps of the export after decoding: map per family, and the row-level outcome."""

from __future__ import annotations

from typing import Iterable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeprov.spark.checks import readable, reject, verbatim
from changeprov.spark.family import mappers
from changeprov.spark.plans import add_stages
from changeprov.spark.stages import Plan, apply_together


def map_events(decoded: DataFrame, *, families: Iterable[str] | None = None) -> DataFrame:
    """Adds ``reason``, ``detail`` (quarantine), ``ms`` and ``triples`` to decoded lines.

    A row ends up blank, quarantined (reason not null) or mapped (triples not empty). Each family
    adds its staged columns (guarded by its name, so one pass serves all families); the outcome is
    then picked by family and the intermediate columns dropped. ``families`` restricts the mappers
    built (rows of other families are left unmapped: for tests of one family).
    """
    table = mappers()
    names = list(table) if families is None else list(families)
    fam = F.col("family")
    rejected = F.col("rejected")
    triples = F.lit(None).cast("array<string>")
    ms = F.lit(None).cast("long")
    plans = []
    for name in names:
        plan, (rej, t, m) = _planned(name, table[name])
        plans.append(plan)
        rejected = F.when(fam == name, F.coalesce(F.col("rejected"), rej)).otherwise(rejected)
        triples = F.when(fam == name, t).otherwise(triples)
        ms = F.when(fam == name, m).otherwise(ms)
    df = apply_together(decoded, plans)
    staged = [c for plan in plans for c in plan.columns]
    unknown = F.col("rejected").isNull() & ~F.col("blank") & fam.isNull()
    # the reference's detail: the object's first 12 keys by code point (UTF-8 byte order is the same)
    keys = F.array_join(F.slice(F.array_sort(F.json_object_keys(F.col("value"))), 1, 12), ", ")
    # the keys are the input's: verbatim, so that readable() takes no mark in them for its own (rv36 #3)
    rejected = F.when(unknown, reject("UNKNOWN_FAMILY", verbatim(F.lit("no event family matches the keys "), keys,
                                                                 _nearest_family(F.json_object_keys(F.col("value")))))) \
        .otherwise(rejected)
    return add_stages(df, [
        {"_rejected": rejected},
        {"reason": F.col("_rejected.reason"), "detail": readable(F.col("_rejected.detail"))},
        {"ms": F.when(F.col("reason").isNull(), ms),
         "triples": F.when(F.col("reason").isNull() & ~F.col("blank"), triples)},
    ], drop=("_rejected", *staged))


def _nearest_family(keys: Column) -> Column:
    """changeprov.mapping.mapper.nearest_family: the first family lacking one detection key, or ""."""
    from changeprov.mapping.mapper import FAMILIES
    from changeprov.mapping.vocab import rules

    hint = F.lit("")
    for family in reversed(FAMILIES):  # the first in detectOrder is tested last, so it wins
        wanted = rules()["families"][family]["detect"]
        missing = F.array_except(F.array(*[F.lit(k) for k in wanted]), keys)
        hint = F.when(F.size(missing) == 1, F.concat(F.lit(f"; nearest: {family}, which also needs "),
                                                     F.element_at(missing, 1))).otherwise(hint)
    return hint


_PLANS: dict[tuple[str, str], tuple[Plan, tuple]] = {}


def _planned(name: str, mapper) -> tuple[Plan, tuple]:
    """The family's plan and its three output columns, built once per Spark application: building
    the Column trees costs seconds of py4j calls, and the job and the tests reuse them."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    key = (sc.applicationId if sc is not None else "", name)
    if key not in _PLANS:
        plan = Plan(name)
        out = mapper(plan)
        plan.next()
        _PLANS[key] = (plan, (plan.bind("out_rejected", out.rejected), plan.bind("out_triples", out.triples),
                              plan.bind("out_ms", out.ms)))
    return _PLANS[key]

