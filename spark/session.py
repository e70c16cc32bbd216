"""The one SparkSession factory: UTC, quiet, and failing early when Java is missing."""

from __future__ import annotations

import os
from typing import Mapping

from changeprov.javacheck import java_version

DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # v1 commits move task output into place only at job commit: no partial visible output (ANCHORS §B)
    "spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version": "1",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    # The family mappers compute their staged columns for every row of the family, also for events
    # a later check quarantines: a hostile value must give NULL there, never fail the job.
    "spark.sql.ansi.enabled": "false",
    # The mapping's projections are too large for one generated method (Java's 64 KB limit): Spark
    # would try, fail and fall back for every stage; per-expression code generation is faster here.
    "spark.sql.codegen.wholeStage": "false",
    # PySpark records the Python call site of every Column operation for error messages: five more
    # py4j round trips per operation, which made building the mappers' plans take ~40 s. Our
    # Column trees are built by the package, not typed by users, so the call sites say nothing.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Local paths without Hadoop's checksum files: half the files to create (each creation also
    # starts a chmod process where Hadoop has no native library, as here).
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    # Input splits of 32 MB, not 128: a 300 MB log then makes ~10 map tasks instead of 3, and the
    # last task does not run alone on one core while the others idle.
    "spark.sql.files.maxPartitionBytes": str(32 * 2**20),
}
# Compile failures are followed by Spark's own interpreted fallback (correct, only slower): the
# compiler's stack traces are noise to a user, so that one logger is silenced.
_QUIET_LOGGERS = ("org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator",)


def get_session(*, master: str | None = "local[*]", app_name: str = "changeprov",
                conf: Mapping[str, str] | None = None):
    """Create (or return the active) SparkSession with changeprov's settings.

    ``master=None`` keeps the master spark-submit chose.
    """
    java_version()
    if master and master.startswith("local"):
        # Keep a local run on the loopback interface (no hostname lookups, no warnings about them).
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    for key, value in {**DEFAULTS, **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    jvm = session.sparkContext._jvm
    for name in _QUIET_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            name, jvm.org.apache.logging.log4j.Level.OFF)
    return session
