"""The contract between the Spark job and its per-family mappers.

A family mapper is a function ``(v: Column) -> Family`` over the decoded event (a variant). Its
columns are evaluated only for rows of that family (inside CASE WHEN), with Spark SQL functions
only, and must reproduce changeprov.mapping's output for the same event exactly:

* ``triples``: array<string> of N-Triples lines (sqlterms.triple), as the reference mapper emits;
* ``rejected``: null, or struct<reason string, detail string> with the reason the reference
  mapper would quarantine the event for (the first failing check in the reference's order);
* ``ms``: the event time in epoch milliseconds (long), for the date partition.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from pyspark.sql import Column


class Family(NamedTuple):
    triples: Column
    rejected: Column
    ms: Column


FamilyMapper = Callable[[Column], Family]


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
