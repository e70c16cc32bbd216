"""The one SparkSession factory: UTC, quiet, and failing early when Java is missing."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Callable, Mapping, Sequence

from changeprov.errors import SparkError
from changeprov.javacheck import java_version
from changeprov.mapping.inputs import codec_of
from changeprov.spark.fs import local_file

EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
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
    # A join above the mapping (the export's duplicate-event pass) made these two optimizer rules walk
    # every staged projection under its keys: dynamic partition pruning ran for over 15 minutes
    # (alias lineage, once per projection level), constraint propagation doubled the planning time.
    # Our inputs are no partitioned tables, and no filter of ours needs inferred constraints.
    "spark.sql.optimizer.dynamicPartitionPruning.enabled": "false",
    "spark.sql.constraintPropagation.enabled": "false",
    # The runtime bloom filter rule does the same walk (InjectRuntimeFilter, alias lineage under the
    # join keys): with a file that starts with a BOM (a join inside the scan) the duplicate-event
    # pass on a 3-line input filled a 4 GB heap (ut8b #1). Our joins are broadcasts of small tables.
    "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
    # Planning the mapping's plan is a fixed cost of every export (docs/export.md): after every
    # optimizer rule that changed it, Spark checked that the whole plan is still resolved (~0.3 s
    # a query), and three rules for columnar, variant and partitioned scans walked it for nothing (a
    # text scan without partition columns: recursiveFileLookup turns partition discovery off; ~0.6 s).
    "spark.sql.lightweightPlanChangeValidation": "false",
    # Every line is mapped or quarantined: a corrupt or vanished input fails the run. With these true
    # (a cluster's spark-defaults.conf often sets them) a .gz cut short lost its tail without a word, and
    # the counts still added up (ut45b #2); an export sets them back to false while it runs.
    "spark.sql.files.ignoreCorruptFiles": "false",
    "spark.sql.files.ignoreMissingFiles": "false",
    EXCLUDED_RULES: ",".join(
        "org.apache.spark.sql.execution.datasources." + rule
        for rule in ("SchemaPruning", "PushVariantIntoScan", "PruneFileSourcePartitions")),
}
# Compile failures are followed by Spark's own interpreted fallback (correct, only slower): the
# compiler's stack traces are noise to a user, so its logger is silenced.
_QUIET_LOGGERS = ("org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator",
                  # a failed task's stack trace, printed where a local run's executor lives: the
                  # driver's console. The job's error (first_line) names the failure and its cause.
                  "org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
                  # Ctrl-C: the cancelled tasks' listeners fail on freed broadcast blocks, with a stack
                  # trace each (ut8b #3); the CLI says "interrupted"
                  "org.apache.spark.TaskContextImpl")


# A failed write's stack trace, once per task and job (ut42e #2: a full disk, or Ctrl-C during the write,
# printed "ERROR Utils: Aborting task" and "ERROR FileFormatWriter" with Java stack frames): silenced only
# while an export runs, since Utils also reports other failures of the session (rv43b #7).
_WRITE_LOGGERS = ("org.apache.spark.util.Utils", "org.apache.spark.sql.execution.datasources.FileFormatWriter")
_quieting = threading.Lock()
_quiet_writers: dict[tuple, tuple[int, dict]] = {}  # per scope: exports running, what was there before


#: what an export needs of a session it did not start (a caller's): the SQL settings of DEFAULTS that a
#: running session takes. ANSI off is the one its output depends on (hostile values give NULL, never
#: fail the job); the others are its speed.
EXPORT_SQL = {k: v for k, v in DEFAULTS.items() if k.startswith("spark.sql.")}


def export_settings(spark) -> Callable[[], None]:
    """While an export runs: the loggers of a failed write silenced (per SparkContext, which the loggers
    are), and the session's SQL settings the export's (EXPORT_SQL; per session, which the settings are:
    rv44b #1, two sessions of one context exporting at once got each other's); returns what puts both back
    when the last export of the context, or of the session, ends. A logger that had no level of its own
    gets none again, so that a later ``setLogLevel`` reaches it (rv44 #5); a setting the session did not
    set is unset again (ut44f #1). Best effort after that: the JVM may be gone."""
    jvm = spark.sparkContext._jvm
    config, level = jvm.org.apache.logging.log4j.core.config.Configurator, jvm.org.apache.logging.log4j.Level

    def silence() -> dict:
        configured = jvm.org.apache.logging.log4j.LogManager.getContext(False).getConfiguration()
        # a level of its own (a LoggerConfig of that name), or None: it inherits one
        before = {name: configured.getLoggerConfig(name).getLevel()
                  if configured.getLoggerConfig(name).getName() == name else None for name in _WRITE_LOGGERS}
        for name in _WRITE_LOGGERS:
            config.setLevel(name, level.OFF)
        return before

    def unsilence(before: dict) -> None:
        context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
        for name, was in before.items():
            if was is not None:
                config.setLevel(name, was)
            else:
                context.getConfiguration().removeLogger(name)
        context.updateLoggers()

    def set_sql() -> dict:
        jconf, before = spark._jsparkSession.conf(), {}
        for name, value in EXPORT_SQL.items():
            if name == EXCLUDED_RULES:  # the session's exclusions and ours (FEW_LINES adds some)
                value = with_rules(spark.conf.get(name, None), value)
            if spark.conf.get(name, None) == value:
                continue
            was = jconf.getOption(name)
            before[name] = was.get() if was.isDefined() else None
            spark.conf.set(name, value)
        return before

    def unset_sql(before: dict) -> None:
        for name, was in before.items():
            if was is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, was)

    scopes = ((("loggers", id(spark.sparkContext)), silence, unsilence), (("sql", id(spark)), set_sql, unset_sql))
    with _quieting:
        for key, enter, _ in scopes:
            running, saved = _quiet_writers.get(key, (0, None))
            _quiet_writers[key] = (running + 1, saved if running else enter())

    def restore() -> None:
        with _quieting:
            for key, _, leave in scopes:
                running, saved = _quiet_writers.pop(key, (0, None))
                if running > 1:
                    _quiet_writers[key] = (running - 1, saved)
                    continue
                try:
                    if saved is not None:
                        leave(saved)
                except Exception:  # noqa: BLE001 - the JVM stopped with an interrupt
                    pass

    return restore


#: The driver's log4j2 settings when changeprov starts Spark: errors only, no start-up banner.
LOG4J2_PROPERTIES = Path(__file__).with_name("log4j2.properties")
_DRIVER_OPTIONS = "spark.driver.extraJavaOptions"
_LOG4J2_FILE = re.compile(r"log4j2(-test)?\.(properties|xml|json|jsn|yaml|yml)")


def _driver_logging(settings: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The driver option that points log4j2 at :data:`LOG4J2_PROPERTIES`, or nothing.

    Spark without a log4j2 file of its own printed which default it took and how to change the log
    level before an export's first line (ut45e #11). A site's own logging settings win: a log4j2
    option in the options given, or a Spark conf folder with a log4j2 file or its own driver options
    (a ``--conf`` of them would replace its spark-defaults.conf line).

    >>> _driver_logging({}, {})[_DRIVER_OPTIONS].startswith("-Dlog4j2.configurationFile=file:")
    True
    >>> opts = _driver_logging({_DRIVER_OPTIONS: "-Dx=1"}, {})[_DRIVER_OPTIONS]
    >>> opts.startswith("-Dx=1 -Dlog4j2.configurationFile=")
    True
    >>> _driver_logging({_DRIVER_OPTIONS: "-Dlog4j2.configurationFile=mine.xml"}, {})
    {}
    """
    given = settings.get(_DRIVER_OPTIONS, "")
    if "log4j2.configurationFile" in given or _site_logging(environ):
        return {}
    ours = f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES.as_uri()}"
    return {_DRIVER_OPTIONS: f"{given} {ours}" if given else ours}


def _site_logging(environ: Mapping[str, str]) -> bool:
    """Whether the Spark conf folder spark-submit reads sets logging or the driver's Java options."""
    folder = environ.get("SPARK_CONF_DIR") or (
        str(Path(environ["SPARK_HOME"]) / "conf") if environ.get("SPARK_HOME") else "")
    if not folder or not os.path.isdir(folder):
        return False
    # the names log4j2 reads; a Spark distribution's conf/ ships log4j2.properties.template (rv46b #3)
    if any(_LOG4J2_FILE.fullmatch(name) for name in os.listdir(folder)):
        return True
    try:
        defaults = Path(folder, "spark-defaults.conf").read_text(errors="replace")
    except OSError:
        return False
    return bool(re.search(r"^\s*spark\.driver\.(extra|default)JavaOptions\b", defaults, re.MULTILINE))


def get_session(*, master: str | None = "local[*]", app_name: str = "changeprov",
                conf: Mapping[str, str] | None = None):
    """Create (or return the active) SparkSession with changeprov's settings.

    ``master=None`` keeps the master spark-submit chose.
    """
    from pyspark.sql import SparkSession

    check_spark_version()
    if master:
        check_master(master)
    # this thread's session, or the one another thread started (rv44b #2: getOrCreate would change it)
    active = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if active is not None:
        # a caller's session (a notebook's, a scheduler's) stays as it is (ut44f #1: its SQL settings,
        # log level and loggers were changed); the export sets what it needs while it runs (export_settings)
        from changeprov.spark.jvmcache import remember_static_members

        remember_static_members(active.sparkContext._jvm)
        return active
    java_version()
    if master and master.startswith("local"):
        # Keep a local run on the loopback interface (no hostname lookups, no warnings about them).
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    builder = SparkSession.builder.appName(app_name)
    settings = {**DEFAULTS, **(conf or {})}
    if master:
        builder = builder.master(master)
        if master.startswith("local"):
            settings.setdefault("spark.driver.memory", local_driver_memory())
            settings.setdefault("spark.sql.files.minPartitionNum", str(2 * local_cores(master)))
    settings.update(_driver_logging(settings, os.environ))
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
        # the SQL settings are checked when the session state is first built, which is lazy: without
        # this, a bad --conf of spark.sql.* failed the first read, as "cannot read the input" (ut40c #8)
        session.conf.get("spark.sql.shuffle.partitions")
    except Exception as exc:  # the JVM's own error, e.g. a bad --conf or an event log dir that is missing
        raise SparkError(f"Spark could not start: {first_line(exc)}") from None
    session.sparkContext.setLogLevel("ERROR")
    from changeprov.spark.jvmcache import remember_static_members

    jvm = session.sparkContext._jvm
    remember_static_members(jvm)
    for name in _QUIET_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            name, jvm.org.apache.logging.log4j.Level.OFF)
    return session


#: Local input below this size is mapped with interpreted expressions (see ``evaluation_conf``).
INTERPRETED_BELOW_BYTES = 512 * 2**20
#: A gzip-compressed event log counts as this many times its size (JSON lines compress ~10x).
GZIP_FACTOR = 10
#: Spark's interpreted expression evaluation (an internal setting: its fallback mode for generated code).
INTERPRETED = {"spark.sql.codegen.factoryMode": "NO_CODEGEN"}
#: Local input below this size is also mapped without looking for common subexpressions.
FEW_LINES_BELOW_BYTES = 16 * 2**20
#: The optimizer rules that only simplify expressions: on a few lines there is nothing for them to
#: save, and each walks the mapping's large expressions, ~5 s of every export (docs/export.md, stop 50).
SIMPLIFYING_RULES = tuple("org.apache.spark.sql.catalyst.optimizer." + rule for rule in (
    "SimplifyConditionals", "RemoveRedundantAliases", "ConstantFolding", "FoldablePropagation",
    "BooleanSimplification", "NullPropagation", "PushFoldableIntoBranches", "CombineConcats",
    "SimplifyBinaryComparison", "OptimizeCsvJsonExprs", "SimplifyExtractValueOps", "SimplifyCasts", "OptimizeIn",
    "ReorderAssociativeOperator", "UnwrapCastInBinaryComparison", "NullDownPropagation",
    "EliminateAggregateFilter", "ReplaceNullWithFalseInPredicate"))
#: What inputs of a few thousand events get on top of INTERPRETED (see ``evaluation_conf``).
FEW_LINES = {"spark.sql.subexpressionElimination.enabled": "false",
             EXCLUDED_RULES: ",".join((DEFAULTS[EXCLUDED_RULES], *SIMPLIFYING_RULES))}


def with_rules(given: str | None, ours: str) -> str:
    """The optimizer rules of ``given`` (a session's ``spark.sql.optimizer.excludedRules``) and then
    those of ``ours`` it lacks, comma-separated.

    >>> with_rules(None, "a,b")
    'a,b'
    >>> with_rules("c, a", "a,b")
    'c,a,b'
    """
    rules = [r.strip() for text in (given or "", ours) for r in text.split(",") if r.strip()]
    return ",".join(dict.fromkeys(rules))


def evaluation_conf(inputs: Sequence[str]) -> dict[str, str]:
    """Spark settings for how expressions are evaluated, chosen by the size of the local input.

    Each run compiles the mapping's ~34 generated projection classes (Janino), and then the JIT
    spends about 30 s of CPU compiling their very large methods on cores the tasks need. Below a few
    hundred MB of events that warm-up outweighs what generated code saves: Spark's interpreted
    evaluation (``spark.sql.codegen.factoryMode=NO_CODEGEN``) made a 100k-event export 12-14% faster
    and the Spark tests 18%. On 1M events generated code wins (interpreted: 491.5 s against 460.8 s,
    the deduplication and sort lose more than the mapping gains). Same triples either way (MD5 of
    every part file). Remote inputs (``s3a://``, ``hdfs://``, …) keep Spark's default; a ``--conf``
    of the user's wins over both.

    Every task of an interpreted projection first looks for common subexpressions in it, which
    canonicalises the whole mapping: ~10 s of CPU per export whatever its size. Below
    ``FEW_LINES_BELOW_BYTES`` that search is off (``FEW_LINES``): on the corpus (175 lines) a warm
    export took 30-32 s instead of 41-43 s; on 30k events (44 MB) the search pays for itself
    (110.7 s with it, 124.4 s without). Same triples either way.

    The optimizer's expression-simplifying rules are off below that size too (``SIMPLIFYING_RULES``):
    warm exports of 3, 175 and 2,000 lines took 24.5 s on average with them, 22.3 s without (the
    rules' own time 7-10 s against 4-5 s), with the same triples and quarantine (docs/export.md, stop 50).

    >>> sorted(evaluation_conf([]))
    ['spark.sql.codegen.factoryMode', 'spark.sql.optimizer.excludedRules', 'spark.sql.subexpressionElimination.enabled']
    >>> evaluation_conf(["hdfs://nn/events/"])
    {}
    """
    total = 0
    for item in inputs:
        if "://" in item and not item.startswith("file:"):
            return {}
        path = local_file(item) if item.startswith("file:") else item
        try:
            size = os.path.getsize(path)
        except OSError:
            return {}  # Spark will say what is wrong with the path
        total += size * (GZIP_FACTOR if codec_of(path) else 1)  # any codec: roughly gzip's ratio
    if total < FEW_LINES_BELOW_BYTES:
        return {**INTERPRETED, **FEW_LINES}
    return dict(INTERPRETED) if total < INTERPRETED_BELOW_BYTES else {}


def check_spark_version(version: str | None = None, where: str | None = None) -> None:
    """Refuse a Spark older than 4.0 in one line: under spark-submit the cluster's pyspark (SPARK_HOME)
    is imported, whatever the package requires, and Spark 3.5 failed as "internal error (a bug in
    changeprov): AttributeError: module 'pyspark.sql.functions' has no attribute 'is_valid_utf8'" (ut49 #1).

    >>> check_spark_version("4.0.1", "x")
    >>> check_spark_version("3.5.9", "/opt/spark/python/pyspark")
    Traceback (most recent call last):
    changeprov.errors.ConfigError: changeprov needs Spark 4.0 or newer; this is Spark 3.5.9 (/opt/spark/python/pyspark): under spark-submit the cluster's Spark (SPARK_HOME) decides
    """
    from changeprov.errors import ConfigError

    if version is None:
        import pyspark

        version, where = pyspark.__version__, os.path.dirname(pyspark.__file__)
    major = re.match(r"\d+", version)
    if major is not None and int(major.group(0)) < 4:
        raise ConfigError(f"changeprov needs Spark 4.0 or newer; this is Spark {version} ({where}): under spark-submit "
                          "the cluster's Spark (SPARK_HOME) decides")


_LOCAL_MASTER = re.compile(r"local(\[\s*([0-9]+|\*)\s*(,\s*[0-9]+\s*)?\]|-cluster\[\s*[0-9]+\s*,\s*[0-9]+\s*,\s*[0-9]+\s*\])?")


def check_master(master: str) -> None:
    """Refuse a master Spark would refuse, before the JVM starts: Spark said so in a Java stack trace on
    stderr, then "Java gateway process exited" (ut48a #2). The forms of Spark's SparkContext and
    spark-submit.

    >>> check_master("local[*, 3]"), check_master("spark://h:7077"), check_master("yarn")
    (None, None, None)
    >>> check_master("bogus")
    Traceback (most recent call last):
    changeprov.errors.InputError: master 'bogus' is no Spark master: local, local[N], local[*], local[N,F], local-cluster[W,C,MB], spark://HOST:PORT, yarn or k8s://URL
    """
    from changeprov.errors import InputError

    if master == "yarn" or master.startswith(("spark://", "k8s://")) or _LOCAL_MASTER.fullmatch(master):
        return
    raise InputError(f"master {master[:80]!r} is no Spark master: local, local[N], local[*], local[N,F], "
                     "local-cluster[W,C,MB], spark://HOST:PORT, yarn or k8s://URL")


def local_cores(master: str) -> int:
    """The task slots of a local master: ``local`` 1, ``local[N]`` N, ``local[*]`` every core,
    ``local-cluster[W,C,M]`` W×C (every core when the text is not understood: Spark then says
    what is wrong with it).

    The export sizes its input splits from this (``spark.sql.files.minPartitionNum`` = 2 × slots,
    with Spark's 128 MB cap per split). Every map task first generates the Java source of each of
    the mapping's projections again (Spark caches the compiled class by its source, not the
    source). With 32 MB splits a 1.4 GB log made 45 tasks; now 12, and the map stage's task CPU
    went from 482.6 to 461.2 s (docs/export.md). Two splits per slot still keep a 300 MB log
    balanced (4 tasks of 75 MB, not 3 of 128, 128 and 44 MB).

    >>> local_cores("local[3]"), local_cores("local"), local_cores("local-cluster[2,1,1024]")
    (3, 1, 2)
    """
    every = max(1, os.cpu_count() or 1)
    if "[" not in master:
        return 1 if master == "local" else every
    fields = master[master.find("[") + 1:master.rfind("]")].split(",")
    try:
        if master.startswith("local-cluster"):
            return max(1, int(fields[0]) * int(fields[1]))
        return every if fields[0].strip() == "*" else max(1, int(fields[0]))
    except (ValueError, IndexError):
        return every


def local_driver_memory(*, physical: int | None = None) -> str:
    """Heap for a ``local[*]`` run (driver and tasks share one JVM): a quarter of the machine's
    memory, between Spark's own default of 1 GB and 4 GB.

    With 1 GB the deduplicating aggregation keeps the heap so full that G1 marks concurrently all
    the time and the tasks got about half of the CPU (200k events: 203 s with 1 GB, 165 s with 2 GB,
    153 s with 4 GB). ``--conf spark.driver.memory=…`` still decides.

    >>> local_driver_memory(physical=8 * 2**30), local_driver_memory(physical=64 * 2**30)
    ('2048m', '4096m')
    >>> local_driver_memory(physical=2 * 2**30)
    '1024m'
    """
    if physical is None:
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # not a POSIX system: Spark's default
            physical = 4 * 2**30
    mb = min(max(physical // 4 // 2**20, 1024), 4096)
    return f"{mb}m"


def first_line(exc: BaseException) -> str:
    """The message of a Spark/py4j exception without the Java stack trace that follows it, and its
    root cause when the trace has one: "Encountered error while reading file x.gz" says which file,
    only its cause ("Unexpected end of input stream") says what is wrong with it.

    >>> first_line(RuntimeError("An error occurred while calling o53.count.\\n: SparkException: cannot read f\\n"
    ...                         "\\tat a.b(C.scala:1)\\nCaused by: java.io.EOFException: Unexpected end of input stream"))
    'SparkException: cannot read f (caused by java.io.EOFException: Unexpected end of input stream)'

    Spark's error for an input file it cannot read names the file; we say what to do about it:

    >>> first_line(RuntimeError("org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error "
    ...                         "while reading file file:///in/x.jsonl.gz.  SQLSTATE: KD001\\nCaused by: "
    ...                         "java.io.EOFException: Unexpected end of input stream"))
    'cannot read input file /in/x.jsonl.gz: Unexpected end of input stream (corrupt or truncated? fix it or move it out of the inputs, and run again)'
    >>> first_line(RuntimeError("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
    ...                         "file:///in/a%20b/x.jsonl.gz.  SQLSTATE: KD001"))[:45]
    'cannot read input file /in/a b/x.jsonl.gz: un'

    Out of memory, it says which setting gives more:

    >>> first_line(RuntimeError("SparkException: Job aborted due to stage failure: java.lang.OutOfMemoryError: "
    ...                         "Java heap space"))[-66:]
    'spark.executor.memory on a cluster; very long lines need the most)'

    ... and so when the JVM's out-of-memory handler stopped the context (ut44e #2):

    >>> first_line(RuntimeError("SparkException: Job 0 cancelled because SparkContext was shut down"))[-80:]
    'n local mode, spark.executor.memory on a cluster; very long lines need the most)'
    """
    lines = [line.strip().lstrip(": ") for line in str(exc).splitlines() if line.strip().lstrip(": ")]
    message = next((line for line in lines if not line.startswith(("at ", "...", "Traceback", "File "))
                    and "An error occurred while calling" not in line and not line.startswith("Caused by:")),
                   lines[0] if lines else type(exc).__name__)
    causes = [line.removeprefix("Caused by:").strip() for line in lines if line.startswith("Caused by:")]
    unreadable = _READ_FAILED.search(message)
    if unreadable:  # one input file cannot be read (a corrupt or truncated .gz): say which, in our words
        cause = causes[-1].split(": ", 1)[-1][:300] if causes else "unreadable"
        where = unreadable.group("path")
        if where.startswith("file:"):  # the path as typed, not its URI's %20 (ut45b #3)
            from urllib.parse import unquote

            where = unquote(where.removeprefix("file://"))
        return (f"cannot read input file {where}: {cause} "
                "(corrupt or truncated? fix it or move it out of the inputs, and run again)")
    if causes and causes[-1] not in message:
        message += f" (caused by {causes[-1][:300]})"
    if "OutOfMemoryError" in message or any("OutOfMemoryError" in c for c in causes):  # ut21 #3
        message += (" (Spark ran out of memory: give it more with --conf spark.driver.memory=8g in local mode, "
                    "spark.executor.memory on a cluster; very long lines need the most)")
    elif "SparkContext was shut down" in message:  # ut44e #2: the JVM's out-of-memory handler stopped it
        message += (" (the Spark JVM stopped while the job ran: if it printed OutOfMemoryError above, give it more "
                    "memory with --conf spark.driver.memory=8g in local mode, spark.executor.memory on a cluster; "
                    "very long lines need the most)")
    return message


_READ_FAILED = re.compile(r"\[FAILED_READ_FILE[.A-Z_]*\] Encountered error while reading file (?P<path>.+?)\.\s+SQLSTATE")
