"""Named intermediate columns, added in stages: how the family mappers keep Spark's plans small.

A Column tree does not share subtrees: a value used k times is analysed, optimised and generated k
times, and a mapper written as one expression grows multiplicatively (minutes to plan, generated
methods too large to compile). A :class:`Plan` instead binds each value that is used more than once
to a real column of the DataFrame (``plan.bind(name, expr)`` returns ``F.col(name)``, a leaf), and
adds the columns stage by stage with ``withColumns``. Spark's CollapseProject never inlines an
expensive column referenced more than once, so each value is computed once per row and every
expression stays small.

Every column of a family's plan is guarded by ``family = <name>``: it is null (and not computed) on
the other families' rows, so all families share one pass over the input, with no union or cache.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeprov.spark.plans import add_stages


class Plan:
    """The staged columns of one family mapper (see module doc).

    ``bind`` adds to the current stage; a value that uses another bound in the same stage needs
    ``next()`` in between (``withColumns`` evaluates a stage against the previous one).
    """

    def __init__(self, family: str, *, prefix: str | None = None, guard: Column | None = None) -> None:
        self.family = family
        self.prefix = prefix if prefix is not None else "_" + "".join(c if c.isalnum() else "_" for c in family) + "_"
        self.guard = guard if guard is not None else F.col("family") == F.lit(family)
        self._stages: list[dict[str, Column]] = [{}]
        self._names: set[str] = set()

    def bind(self, name: str, value: Column) -> Column:
        full = self.prefix + name
        if full in self._names:
            raise ValueError(f"{full} is bound twice")
        self._names.add(full)
        self._stages[-1][full] = value
        return F.col(full)

    def binds(self, **values: Column) -> dict[str, Column]:
        return {k: self.bind(k, v) for k, v in values.items()}

    def next(self) -> "Plan":
        if self._stages[-1]:
            self._stages.append({})
        return self

    @property
    def columns(self) -> list[str]:
        return [name for stage in self._stages for name in stage]

    def guarded(self, i: int) -> dict[str, Column]:
        """Stage ``i`` (empty past the last), each column null off this plan's family."""
        stage = self._stages[i] if i < len(self._stages) else {}
        return {name: F.when(self.guard, value) for name, value in stage.items()}

    @property
    def depth(self) -> int:
        return len(self._stages)


def apply_together(df: DataFrame, plans: list[Plan]) -> DataFrame:
    """The plans' stages side by side: stage i of every plan in one ``withColumns``.

    Plans of different families share no columns, so their stages can run together; every stage
    copies the whole row (the raw line and the parsed event included), and stacking the families'
    stages one after another made about 70 copies of each row instead of about 20."""
    depth = max((p.depth for p in plans), default=0)
    return add_stages(df, ({name: value for plan in plans for name, value in plan.guarded(i).items()}
                           for i in range(depth)))
