"""Analysing the mapping's plan cheaply: stage by stage, and once per Spark application.

Spark analyses a DataFrame at every ``withColumns``, and each analysis walks the whole plan built so
far (``DeduplicateRelations``, the checks), so the mapping's ~40 stages of large expressions took
~12 s of analysis before an export read a line, in every export (docs/export.md). Two remedies,
both producing the very plan ``withColumns`` would:

* :func:`add_stages` analyses each stage (a ``Project``) over a stand-in leaf holding its input's
  attributes, not over the whole plan, and then puts the analysed stage on top of the real plan.
* :func:`reuse` analyses a whole DataFrame → DataFrame transform once per application over a
  stand-in input, and gives each later input the analysed plan with that input put in place of the
  stand-in (the test suite exports dozens of inputs in one session).

Both reach into Spark's logical plans through py4j (``Project``, ``LocalRelation``, ``Alias`` and
``Dataset.ofRows``). Where that fails (a Spark whose internals differ), they fall back to the plain
DataFrame calls, which give the same plan, only more slowly; ``FAST_PATH_ERRORS`` counts it, and a
test requires the fast path on the Spark we pin.
"""

from __future__ import annotations

import itertools
from typing import Callable, Hashable, Iterable, Mapping, Sequence

from py4j.protocol import Py4JError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

#: how often the fast path failed and the plain DataFrame calls were used instead (for tests)
FAST_PATH_ERRORS: list[str] = []
#: what a Spark whose internals differ raises on the fast path: a py4j error, Spark's own error
#: (an analysis of the stand-in plan that fails), or a TypeError (a class py4j cannot find is a
#: JavaPackage, which cannot be called)
_INTERNALS_DIFFER = (Py4JError, CapturedException, TypeError)


def add_stages(df: DataFrame, stages: Iterable[Mapping[str, Column]], *, drop: Sequence[str] = ()) -> DataFrame:
    """``df.withColumns(stage)`` for each stage in turn, then ``.drop(*drop)``: the same plan,
    analysed one stage at a time (see module doc). A column of a stage may use the columns of
    earlier stages, not those of its own."""
    stages = [dict(s) for s in stages if s]
    try:
        return _add_stages(df, stages, drop)
    except _INTERNALS_DIFFER as exc:
        FAST_PATH_ERRORS.append(f"add_stages: {_first_line(exc)}")
        for stage in stages:
            df = df.withColumns(stage)
        return df.drop(*drop)


def _add_stages(df: DataFrame, stages: list[dict[str, Column]], drop: Sequence[str]) -> DataFrame:
    spark = df.sparkSession
    jvm, jss = spark._jvm, spark._jsparkSession
    plan = df._jdf.queryExecution().analyzed()
    names = list(df.columns)
    for i, stage in enumerate(stages, start=1):
        exprs = [stage[n].alias(n) if n in stage else F.col(_quoted(n)) for n in names]
        exprs += [c.alias(n) for n, c in stage.items() if n not in names]
        names += [n for n in stage if n not in names]
        plan = _stage_over(jvm, jss, plan, exprs)
        if i % STAGES_PER_BARRIER == 0:
            plan = _barrier(spark, plan)
    if drop:
        names = [n for n in names if n not in set(drop)]
        plan = _stage_over(jvm, jss, plan, [F.col(_quoted(n)) for n in names])
    return _frame(spark, plan)


#: a CollectMetrics node after every so many stages (see ``_barrier``)
STAGES_PER_BARRIER = 2
_BARRIERS = itertools.count()


def _barrier(spark: SparkSession, plan):
    """``plan`` under an ``observe`` (a CollectMetrics node counting rows, which nobody reads).

    Spark's physical planner tries its scan strategies on every node, and each try walks down the
    chain of Projects below it to the first node of another kind, merging their expressions as it
    goes (``PhysicalOperation``): over the mapping's ~40 stacked stages that is quadratic, ~2 s per
    query. A CollectMetrics node ends the walk there: 0.2 s. It costs one count per row, and the
    mapping of 20k events got faster with it (14.1 against 16.5 s, a ``noop`` write, steady)."""
    jvm = spark._jvm
    leaf = _leaf(jvm, plan)
    stand_in = DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, leaf), spark)
    observed = stand_in.observe(f"changeprov_stage_{next(_BARRIERS)}", F.count(F.lit(1)).alias("rows"))
    return _replace(jvm, observed._jdf.queryExecution().analyzed(), leaf, plan)


def _leaf(jvm, plan):
    """A stand-in leaf with ``plan``'s output attributes (same names, same expression ids)."""
    logical = jvm.org.apache.spark.sql.catalyst.plans.logical
    return logical.LocalRelation(plan.output(), _seq(jvm, []), False, jvm.scala.Option.empty())


def _stage_over(jvm, jss, plan, exprs: list[Column]):
    """``Project(exprs)`` over ``plan``, analysed over a stand-in leaf with ``plan``'s attributes."""
    leaf = _leaf(jvm, plan)
    project = jvm.org.apache.spark.sql.catalyst.plans.logical.Project(_seq(jvm, [jss.expression(e._jc) for e in exprs]), leaf)
    analysed = jvm.org.apache.spark.sql.classic.Dataset.ofRows(jss, project).queryExecution().analyzed()
    return _replace(jvm, analysed, leaf, plan)


def _replace(jvm, plan, leaf, by):
    """``plan`` with the node ``leaf`` replaced by ``by`` (the analysed stage may be more than one
    ``Project``: a column using another of its own stage is resolved as a lateral alias)."""
    if plan.equals(leaf):
        return by
    children = plan.children()
    if children.size() == 0:
        return plan
    kids = [_replace(jvm, children.apply(i), leaf, by) for i in range(children.size())]
    return plan.withNewChildren(_seq(jvm, kids))


def _frame(spark: SparkSession, plan) -> DataFrame:
    """A DataFrame of an analysed plan, without analysing it again."""
    plan.setAnalyzed()
    return DataFrame(spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, plan), spark)


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__


def _seq(jvm, items: list):
    return jvm.PythonUtils.toSeq(items)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# ---------------------------------------------------------------- once per application

_REUSED: dict[tuple, tuple] = {}


def reuse(df: DataFrame, key: Hashable, transform: Callable[[DataFrame], DataFrame]) -> DataFrame:
    """``transform(df)``, with the analysed plan of ``transform`` built once per Spark application
    and input schema (``key`` names the transform) and reused for every later ``df``.

    ``transform`` must read its input once (no self-join or union of it with itself: both sides
    would get the same attributes) and build the same plan for every input of that schema."""
    spark = df.sparkSession
    schema = df.schema
    cache_key = (spark.sparkContext.applicationId, key, schema.simpleString())
    try:
        if cache_key not in _REUSED:
            # A stand-in input: the same columns, all nullable (the analysed plan must not assume a
            # column non-null that some input has nulls in).
            nullable = ", ".join(f"{_quoted(f.name)} {f.dataType.simpleString()}" for f in schema.fields)
            stand_in = spark.createDataFrame([], nullable)
            built = transform(stand_in)
            _REUSED[cache_key] = (stand_in._jdf.queryExecution().analyzed(), built._jdf.queryExecution().analyzed())
        leaf, built = _REUSED[cache_key]
        return _frame(spark, _replace(spark._jvm, built, leaf, _renamed_as(spark, df, leaf)))
    except _INTERNALS_DIFFER as exc:
        FAST_PATH_ERRORS.append(f"reuse: {_first_line(exc)}")
        return transform(df)


def _renamed_as(spark: SparkSession, df: DataFrame, leaf):
    """``df``'s plan under a ``Project`` whose output attributes are ``leaf``'s (same names, same
    expression ids), so the reused plan's references find the new input."""
    jvm = spark._jvm
    expressions = jvm.org.apache.spark.sql.catalyst.expressions
    plan = df._jdf.queryExecution().analyzed()
    ours, theirs = plan.output(), leaf.output()
    empty = _seq(jvm, [])
    aliases = [expressions.Alias(ours.apply(i), theirs.apply(i).name(), theirs.apply(i).exprId(), empty,
                                 jvm.scala.Option.empty(), empty)
               for i in range(theirs.size())]
    return jvm.org.apache.spark.sql.catalyst.plans.logical.Project(_seq(jvm, aliases), plan)
