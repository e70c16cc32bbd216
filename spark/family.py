"""The contract between the Spark job and its per-family mappers.

A family mapper is a function ``(plan: Plan) -> Family``. It reads the decoded event from the
columns ``v`` (the variant) and ``value`` (the raw line), binds every intermediate value it uses more
than once to a staged column (``plan.bind``, see changeprov.spark.stages), and returns the three
outputs as expressions over those columns. Plan columns are guarded by ``family = <name>``, so they
are evaluated only for rows of that family. Spark SQL functions only; the outputs must reproduce
changeprov.mapping's output for the same event exactly:

* ``triples``: array<string> of N-Triples lines (sqlterms.triple), as the reference mapper emits;
* ``rejected``: null, or struct<reason string, detail string> with the reason the reference
  mapper would quarantine the event for (the first failing check in the reference's order);
* ``ms``: the event time in epoch milliseconds (long), for the date partition.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from pyspark.sql import Column

from changeprov.spark.stages import Plan


class Family(NamedTuple):
    triples: Column
    rejected: Column
    ms: Column


FamilyMapper = Callable[[Plan], Family]


def mappers() -> dict[str, FamilyMapper]:
    """family name → mapper; imported lazily so each family lives in its own module."""
    from changeprov.spark import datahub, openmetadata

    return {
        "openmetadata": openmetadata.openmetadata,
        "openmetadata-legacy": openmetadata.openmetadata_legacy,
        "datahub-mcl": datahub.mcl,
        "datahub-ece": datahub.ece,
        "datahub-platform": datahub.platform,
    }
