"""The export job: JSONL event logs in, committed N-Triples partitions, quarantine and manifest out.

One pass over the input: every line becomes rows of one DataFrame — its triples, or its quarantine
record, plus an accounting row and a split-statistics row — which one aggregation deduplicates and
counts, and one write stages. The driver then only moves files and reads a few tiny statistics
files to number the quarantined lines and fill the manifest; ``_SUCCESS`` is written last.

Layout of DIR:
    triples/source=<family>/date=<YYYY-MM-DD>/part-NNNNN.nt[.gz]   (+ triples/_SUCCESS)
    triples/part-00000.nt[.gz]     (only when no line mapped: one empty file, an empty graph)
    quarantine/part-NNNNN.jsonl                                     (+ quarantine/_SUCCESS)
    manifest.json
    _SUCCESS
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence
from urllib.parse import unquote, urlparse

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from changeprov import __version__
from changeprov.errors import InputError, SparkError
from changeprov.exportlayout import COMPRESSIONS, MODES, iso_time, manifest_runs, parse_manifest
from changeprov.mapping.decode import BOM, BOM_DETAIL, RAW_LIMIT, REASONS
from changeprov.mapping.inputs import codec_of, input_list
from changeprov.mapping.vocab import rules
from changeprov.ontology import VERSION_IRI
from changeprov.spark.commit import (_commit, committed_manifest, describe_replaced, foreign_files,
                                     interrupted_replacement, remove_uncommitted, replaced_export)
from changeprov.spark.exportlock import acquire_lock, release_lock
from changeprov.spark.fs import FileSystem, display_input, display_source, local_file, local_input, local_out
from changeprov.spark.plans import add_stages, reuse
from changeprov.spark.session import export_settings, first_line

EVENT_TYPE_TRIPLE_END = (" <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
                         "<https://open-metadata.org/schema/type/changeEvent/ChangeEvent> .")
FAMILIES = tuple(rules()["families"])


@dataclass
class ExportResult:
    out: str
    run_id: str
    manifest: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict:
        return self.manifest["counts"]


# ---------------------------------------------------------------- the data path (DataFrame → DataFrame)


def _scan(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    if not paths:  # (no createDataFrame of a Python list: executors would run Python, see _small_table)
        return spark.range(0).select(F.lit(None).cast("string").alias("value"), F.lit(None).cast("string").alias("file"),
                                     F.lit(None).cast("long").alias("block"), F.lit(None).cast("long").alias("mono"))
    return (spark.read.option("lineSep", "\n").option("recursiveFileLookup", "true").text(list(paths))
            .select("value",
                    F.col("_metadata.file_path").alias("file"),
                    F.col("_metadata.file_block_start").alias("block"),
                    F.monotonically_increasing_id().alias("mono")))


def read_lines(spark: SparkSession, inputs: Sequence[str], bom_files: Sequence[str] = ()) -> DataFrame:
    """Raw lines (``value``) with their ``file``, split start (``block``), a per-partition running id
    (``mono``, for line numbers) and ``bom`` (see below).

    ``bom_files`` (see ``find_boms``) start with a UTF-8 byte order mark, which Hadoop's line reader
    strips from line 1 of every file, compressed or not: Spark never sees it, and the reference
    quarantines that line. They are read as a scan of their own, with ``bom`` true on their line 1:
    the row of split 0 with the smallest running id, found by a small aggregation over that same
    scan (broadcast; it reads those files once more, and nothing else). Other lines have ``bom``
    false. Every input has the same columns, so the export's analysed plan serves them all
    (spark.plans.reuse).
    """
    plain = _scan(spark, inputs).withColumn("bom", F.lit(False))
    if not bom_files:
        return plain
    marked = _scan(spark, bom_files)
    # No filter before the aggregation: a filter on the scan could be pushed into it and change
    # its splits, and with them the running ids the two branches must agree on.
    firsts = marked.groupBy("file").agg(F.min(F.when(F.col("block") == 0, F.col("mono"))).alias("_line1"))
    marked = (marked.join(F.broadcast(firsts), "file", "left")
              .select("value", "file", "block", "mono",
                      F.coalesce((F.col("block") == 0) & (F.col("mono") == F.col("_line1")), F.lit(False))
                      .alias("bom")))
    if not inputs:
        return marked
    # the running ids of the two scans overlap; every use of them is per (file, split), as is every key
    return plain.unionByName(marked)


def _first_bytes(spark: SparkSession, path: str) -> bytes:
    """The first 4 bytes of a file as Spark's line reader sees it (decompressed by Hadoop's codec for
    its suffix: .gz and others). Local files are read directly, unless only Hadoop has their codec;
    other paths through Hadoop."""
    from changeprov.mapping.inputs import HADOOP_ONLY_CODECS, READ_ERRORS, codec_of, open_input

    if path.startswith("file:") and codec_of(path) not in HADOOP_ONLY_CODECS:
        try:
            with open_input(local_file(path)) as fh:
                return fh.read(4)
        except READ_ERRORS:
            return b""  # unreadable: Spark's read reports it
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    stream = hpath.getFileSystem(conf).open(hpath)
    try:
        codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(conf).getCodec(hpath)
        if codec is not None and codec.getClass().getSimpleName() == "ZStandardCodec":
            # Hadoop's zstd stream needs its native library, which pip's pyspark has not; Spark's
            # text reader decompresses .zst anyway, and zstd-jni (on Spark's class path) does here
            stream = jvm.com.github.luben.zstd.ZstdInputStream(stream)
        elif codec is not None:
            stream = codec.createInputStream(stream)
        out = []
        for _ in range(4):
            b = stream.read()
            if b < 0:
                break
            out.append(b)
        return bytes(out)
    finally:
        stream.close()


@dataclass
class Inputs:
    """What the export reads: ``plain`` paths as given, ``bom`` files whose line 1 starts with a
    byte order mark, ``bom_only`` files of nothing but one (Spark reads no line from those)."""
    plain: list[str]
    bom: list[str] = field(default_factory=list)
    bom_only: list[str] = field(default_factory=list)


#: how files that are not Hadoop's .lz4 / .snappy block streams start: the lz4 tool's frames (and its
#: legacy format), snappy's framing format, and text (a block stream starts with its 4-byte big-endian
#: block length, so with a zero byte below 16 MB; a larger block is legitimate: rv44b #4)
FOREIGN_STARTS = {".lz4": (b"\x04\x22\x4d\x18", b"\x02\x21\x4c\x18"), ".snappy": (b"\xff\x06\x00\x00sNaPpY",)}
TEXT_STARTS = tuple(b"{[ \t\r\n")


def refuse_foreign_blocks(inputs: Sequence[str]) -> None:
    """A local .lz4 or .snappy file that does not start as Hadoop's block streams do: the lz4 tool's
    frames (magic 04 22 4D 18), snappy's framing format or plain text. Hadoop's codec read no line from
    one without an error (ut44e #1: exit 0, "balanced", 305 lines lost), or ran out of memory on a block
    size read from text."""
    for item in inputs:
        codec = codec_of(item)
        if not item.startswith("file:") or codec not in (".lz4", ".snappy"):
            continue
        try:
            with open(local_file(item), "rb") as fh:
                head = fh.read(10)
        except OSError:
            continue  # Spark's read reports it
        if head.startswith(FOREIGN_STARTS[codec]) or (head[:1] and head[0] in TEXT_STARTS):
            raise InputError(f"{display_input(item)}: not in Hadoop's {codec} block format, which is the only one "
                             f"Spark reads (the {codec[1:]} tool's own format, or not compressed?): decompress it, "
                             f"or compress it with gzip, bzip2 or zstd")


def find_boms(spark: SparkSession, inputs: Sequence[str]) -> Inputs:
    """Split the inputs by their first bytes: one small read per input file, on the driver.

    Local inputs are files already (resolve_inputs); a remote folder or glob is listed through
    Spark's own file listing and passed on as it is when none of its files starts with a BOM."""
    refuse_foreign_blocks(inputs)
    listed = {item: [item] if item.startswith("file:")  # hdfs://, s3a://, …: the files Spark would read
              else list(spark.read.option("recursiveFileLookup", "true").text(item).inputFiles())
              for item in inputs}
    every = [f for files in listed.values() for f in files]
    with ThreadPoolExecutor(16) as pool:  # remote: one small ranged read per file, 16 at a time
        heads = dict(zip(every, pool.map(lambda f: _first_bytes(spark, f), every)))
    found = Inputs(plain=[])
    for item, files in listed.items():
        marked = {f for f in files if heads[f].startswith(BOM)}
        found.plain.extend([item] if not marked else [f for f in files if f not in marked])
        for f in files:
            if f in marked:
                (found.bom_only if heads[f] == BOM else found.bom).append(f)
    return found


def force_family(family: str) -> Callable[[DataFrame], DataFrame]:
    """--family X: lines of another family are quarantined as UNKNOWN_FAMILY (as the reference does)."""
    from changeprov.spark.checks import reject

    def apply(df: DataFrame) -> DataFrame:
        wrong = F.col("rejected").isNull() & ~F.col("blank") & (
            F.col("family").isNull() | (F.col("family") != family))
        looks_like = F.coalesce(F.col("family"), F.lit("no known family"))
        detail = F.concat(F.lit(f"not an event of the {family} family (looks like "), looks_like, F.lit(")"))
        return add_stages(df, [{"rejected": F.when(wrong, reject("UNKNOWN_FAMILY", detail)).otherwise(F.col("rejected"))},
                               {"family": F.when(~wrong, F.col("family"))}])

    return apply


# A triple's partition (family, UTC day) as one long, ``day * 8 + family``: the aggregation below
# can then keep its running minimum in a hash table (Spark's hash aggregation needs fixed-width
# buffers; a minimum of strings or structs falls back to sorting every row).
_PART_FAMILIES = 8
_PART_ORDER = sorted(FAMILIES)  # a shared triple seen on one day in two families goes to the first by name
assert len(_PART_ORDER) <= _PART_FAMILIES


def _part_code() -> Column:
    family = F.lit(None).cast("long")
    for i, name in enumerate(_PART_ORDER):
        family = F.when(F.col("family") == name, F.lit(i)).otherwise(family)
    return (F.floor(F.col("ms") / 86_400_000) * _PART_FAMILIES + family).cast("long")


def capped_raw(raw: Column) -> Column:
    """A quarantine record's raw text as the reference writes it (mapping.decode.Quarantine.to_json):
    past RAW_LIMIT bytes of UTF-8, the first RAW_LIMIT bytes without a character the cut splits,
    then a marker with the whole size. Huge hostile lines must not make a quarantine as big as them.

    The split character's bytes are found in the hex of the last three bytes kept: a lead byte at the
    end (1 byte to drop), a 3- or 4-byte lead before one continuation byte (2), a 4-byte lead before
    two (3)."""
    size = F.octet_length(raw)
    data = F.encode(raw, "UTF-8")
    tail = F.hex(F.substring(data, RAW_LIMIT - 2, 3))
    split = (F.when(tail.rlike("[C-F][0-9A-F]$"), 1)
             .when(tail.rlike("[EF][0-9A-F][89AB][0-9A-F]$"), 2)
             .when(tail.rlike("^F[0-7][89AB][0-9A-F][89AB][0-9A-F]$"), 3).otherwise(0))
    cut = F.decode(F.substring(data, 1, F.lit(RAW_LIMIT) - split), "UTF-8")
    marker = F.concat(F.lit("…[truncated, "), size.cast("string"), F.lit(" bytes in all]"))
    return F.when(size > RAW_LIMIT, F.concat(cut, marker)).otherwise(raw)


def output_rows(mapped: DataFrame) -> DataFrame:
    """Every line → its output rows: kind t (triple), q (quarantine), a (accounting), s (split stats),
    d (a mapped line's event and a digest of its triples: see ``aggregate``)."""
    status = (F.when(F.col("blank"), F.lit("blank"))
              .when(F.col("reason").isNotNull(), F.lit("quarantined")).otherwise(F.lit("mapped")))
    row = "struct<kind:string,key:string,part:bigint,fp:bigint>"

    def r(kind, key, part=None, fp=None):
        return F.struct(F.lit(kind).alias("kind"), key.alias("key"),
                        (part if part is not None else F.lit(None).cast("long")).alias("part"),
                        (fp if fp is not None else F.lit(None).cast("long")).alias("fp"))

    part = F.col("_part")
    # line 1 of a file with a BOM: the reference's raw text has the BOM Hadoop stripped (read_lines)
    raw = (F.when(F.col("bom"), F.concat(F.lit("\ufeff"), F.col("value"))).otherwise(F.col("value"))
           if "bom" in mapped.columns else F.col("value"))
    triples = F.transform(F.coalesce(F.col("triples"), F.array().cast("array<string>")),
                          lambda t: r("t", t, part))
    quarantine = F.when(F.col("reason").isNotNull(), F.array(r("q", F.to_json(F.struct(
        F.col("reason"), F.col("detail"), F.col("file").alias("source"), F.col("block"), F.col("mono"),
        capped_raw(raw).alias("raw")))))).otherwise(F.array().cast(f"array<{row}>"))
    account = F.array(r("a", F.concat_ws("|", status, F.coalesce(F.col("reason"), F.lit("")),
                                         F.coalesce(F.col("family"), F.lit("")))))
    split = F.array(r("s", F.concat_ws("|", F.col("block").cast("string"), F.col("file"))))
    event = F.when(F.size(F.col("triples")) > 0,
                   F.array(r("d", _event_of(F.col("triples")), fp=_digest_of(F.col("triples"))))
                   ).otherwise(F.array().cast(f"array<{row}>"))
    return (mapped
            .withColumn("_part", _part_code())
            .select(F.col("mono"), F.explode(F.concat(triples, quarantine, account, split, event)).alias("o"))
            .select("o.*", "mono"))


def _event_of(triples: Column) -> Column:
    """The line's event IRI (``<…>``): the subject of its one ``rdf:type om-event:ChangeEvent`` triple."""
    typed = F.filter(triples, lambda t: t.endswith(EVENT_TYPE_TRIPLE_END))
    return F.substring_index(F.element_at(typed, 1), " ", 1)


def _digest_of(triples: Column) -> Column:
    """A digest of the line's set of triples: equal sets, equal digests (reference: ``_FirstSeen``).

    The distinct triples' hashes combined by XOR: no order needed (nor an overflow to fail under
    ANSI mode); ~1 s per 100k lines where hashing the sorted triples took ~3.3 s (stop 24)."""
    hashes = F.array_distinct(F.transform(triples, lambda t: F.xxhash64(t)))
    return F.aggregate(hashes, F.lit(0).cast("long"), lambda total, h: total.bitwiseXOR(h))


def aggregate(rows: DataFrame) -> DataFrame:
    """Distinct triples (each in the earliest date/source it occurs in), counted statistics."""
    # Shuffled by key first, so that the aggregation runs once, after the shuffle (the plan has one
    # HashAggregate: the input is already partitioned by its keys). Without it Spark adds a partial
    # aggregation before the shuffle, which removed only a quarter of the rows (most triples occur
    # once) and, on 1M events with a 2 GB heap, spilled 7.5 GB from its hash table in the map tasks.
    #
    # Rows of kind d (one per mapped line, keyed by its event) find events whose lines map to
    # different triples: their digests' minimum and maximum differ. Only those are kept (normally
    # none), and the export then quarantines the later lines (``duplicate_losers``).
    agg = (rows.repartition("kind", "key").groupBy("kind", "key")
           .agg(F.min("part").alias("part"), F.count(F.lit(1)).alias("n"), F.min("mono").alias("first"),
                F.min("fp").alias("fp_min"), F.max("fp").alias("fp_max"))
           .where((F.col("kind") != "d") | (F.col("fp_min") != F.col("fp_max"))))
    text = (F.when(F.col("kind").isin("t", "q"), F.col("key"))
            .otherwise(F.concat_ws("|", F.col("n").cast("string"), F.col("first").cast("string"), F.col("key"))))
    source = F.element_at(F.array(*[F.lit(f) for f in _PART_ORDER]),
                          (F.col("part") % _PART_FAMILIES).cast("int") + 1)
    date = F.date_from_unix_date(F.floor(F.col("part") / _PART_FAMILIES).cast("int")).cast("string")
    return agg.select("kind", F.when(F.col("part").isNotNull(), source).alias("source"),
                      F.when(F.col("part").isNotNull(), date).alias("date"), text.alias("value"))


# ---------------------------------------------------------------- the job


def resolve_inputs(inputs: Sequence[str]) -> list[str]:
    """Local files/folders/globs → the sorted list of JSONL files (what the reference mapper reads);
    other Hadoop paths (scheme://…) are passed to Spark as they are."""
    from changeprov.mapping.inputs import expand_inputs, scheme_of

    inputs = input_list(inputs)
    remote = [i for i in inputs if scheme_of(i)]
    local = [i for i in inputs if i not in remote]  # plain paths and file: URIs, as `map` reads them
    files = [local_input(p) for p in expand_inputs(local)] if local else []
    if local and not files:
        raise InputError("no JSONL input files found in " + ", ".join(local))
    # Spark's file listing drops such names even when they are named (Hadoop's hidden files): the
    # export read none of their lines and called itself balanced (ut10b #1)
    hidden = [f for f in files if Path(local_file(f)).name.startswith((".", "_"))]
    hidden += [r for r in remote if not any(c in r for c in "*?[{") and r.rstrip("/").rsplit("/", 1)[-1].startswith((".", "_"))]
    if hidden:
        raise InputError(f"export cannot read {hidden[0]}{f' (and {len(hidden) - 1} more)' if len(hidden) > 1 else ''}: "
                         "Spark skips a file whose name starts with '_' or '.' even when it is named; rename it "
                         "(`changeprov map` reads it)")
    return files + remote


def outside_output(inputs: Sequence[str], out: str) -> tuple[list[str], int]:
    """``inputs`` (from resolve_inputs) without the local files under ``out``, and how many those were.

    An export's manifest and quarantine are JSON and JSON lines: with --out inside an input folder,
    every later run read the earlier runs' output as events (and its quarantine grew each time)."""
    local = local_out(out)
    if local is None:
        return list(inputs), 0
    root = local.resolve()
    kept = [i for i in inputs if not (i.startswith("file://") and Path(local_file(i)).is_relative_to(root))]
    if inputs and not kept:
        raise InputError(f"every input file is under --out {out}")
    return kept, len(inputs) - len(kept)


def export(spark: SparkSession, inputs: Sequence[str], out: str, *, family: str = "auto",
           mode: str = "overwrite", compress: str = "none",
           progress: Callable[[str], None] = lambda msg: None) -> ExportResult:
    """Run the export of ``inputs`` (files, folders, globs, any Hadoop path) into ``out``."""
    if mode not in MODES:
        raise InputError(f"mode (--mode) must be one of {', '.join(MODES)}")
    if compress not in COMPRESSIONS:
        raise InputError(f"compress (--compress) must be one of {', '.join(COMPRESSIONS)}")
    if family != "auto" and family not in FAMILIES:
        raise InputError(f"family (--family) must be auto or one of {', '.join(FAMILIES)}")
    inputs = input_list(inputs)  # one path given alone is one input
    if not inputs:
        raise InputError("no input given")
    check_out_folder(out)
    started = time.time()
    run_id = uuid.uuid4().hex
    folder = local_out(out)
    created = folder is not None and not folder.exists()  # removed again if a failed run leaves it empty
    fs = FileSystem(spark, out)
    acquire_lock(fs, out, run_id, progress=progress)
    committing: list[bool] = []
    group = f"changeprov-export-{run_id}"  # this run's jobs, to cancel them and no caller's others
    caller = {key: spark.sparkContext.getLocalProperty(key) for key in _JOB_GROUP_PROPERTIES}
    spark.sparkContext.setJobGroup(group, "changeprov export", interruptOnCancel=True)
    put_back: Callable[[], None] = lambda: None
    try:
        put_back = export_settings(spark)
        return _export(spark, inputs, out, fs, run_id, started, family=family, mode=mode, compress=compress,
                       progress=progress, committing=committing)
    except BaseException as exc:
        if not committing:  # from the commit on, only a run that commits makes the folder whole again
            _discard_staging(spark, fs, run_id, group)
        from py4j.protocol import Py4JNetworkError

        if isinstance(exc, (ConnectionRefusedError, Py4JNetworkError)):  # rv44b #9: raw to a library caller
            raise SparkError("the Spark JVM is gone (out of memory? if it printed OutOfMemoryError, give it more with "
                             "--conf spark.driver.memory=8g, spark.executor.memory on a cluster): "
                             f"{type(exc).__name__}: {exc}") from None
        raise
    finally:
        try:
            release_lock(fs, run_id)
            if created and not committing:  # ut47b #7, ut48a #4: a failed run left an empty out folder
                _remove_if_empty(folder)
        finally:  # also when the lock could not be removed (rv44 #5: the loggers stayed off)
            put_back()  # after _discard_staging: cancelled write tasks report their abort too
            try:  # the caller's own job group, if it had one
                for key, value in caller.items():
                    spark.sparkContext.setLocalProperty(key, value)
            except Exception:  # noqa: BLE001 - the JVM stopped with an interrupt
                pass


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:  # not empty (a run's leftovers, for the next run to find), or gone
        pass


#: what SparkContext.setJobGroup sets (a thread's local properties)
_JOB_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def _discard_staging(spark: SparkSession, fs: FileSystem, run_id: str, group: str) -> None:
    """A run stopped or failed before its commit removes what it staged (ut43b #2: after Ctrl-C or
    SIGTERM the export it appended to could not be loaded, "leftovers of a killed run", until a re-run).
    Its jobs are cancelled (their tasks interrupted) and awaited, at most 10 s, so that no task writes
    on into the folder after it is gone. Best effort: the JVM may be gone (Ctrl-C reaches it too), and
    the next run removes what is left."""
    try:
        sc = spark.sparkContext
        sc.cancelJobGroup(group)
        tracker, deadline = sc.statusTracker(), time.monotonic() + 10
        while set(tracker.getJobIdsForGroup(group)) & set(tracker.getActiveJobsIds()) and time.monotonic() < deadline:
            time.sleep(0.2)
    except Exception:  # noqa: BLE001 - the JVM stopped with the interrupt
        pass
    prefix = f"_staging-{run_id}"
    try:
        if fs.local is not None:  # locally without the JVM, which may be gone
            for path in fs.local.glob(prefix + "*"):
                shutil.rmtree(path, ignore_errors=True)
        else:
            for name in fs.names():
                if name.startswith(prefix):
                    fs.delete(name)
    except Exception:  # noqa: BLE001 - best effort, see above
        pass


def _some(names: list[str]) -> str:
    """The first three ``names`` and how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


_HADOOP_SPECIAL = re.compile(r"[:\[\]{}*?\\]")


def check_out_folder(out: str) -> None:
    """Refuse a local ``out`` that is a file, under one, or an export's own triples/quarantine folder:
    Spark would fail only after mapping everything (the command checks it before Spark starts, and
    ``export`` again for a library caller)."""
    path = local_out(out)
    if path is None:
        return  # another file system: Hadoop's business
    # ut47b #1 #2: Hadoop reads a ':' in a path's name as a URI scheme and [ ] { } * ? \ as a pattern when
    # the run reads its staged files back: "internal error" at the commit, after the whole job
    odd = _HADOOP_SPECIAL.search(str(Path(os.path.abspath(path))))
    if odd:
        raise InputError(f"--out {out}: the folder's path holds {odd.group()!r}, which Hadoop reads as "
                         f"{'a URI scheme' if odd.group() == ':' else 'a file name pattern'} where the export reads "
                         "its own files back: choose a folder whose path has none of : [ ] { } * ? \\")
    if path.name in ("triples", "quarantine") and (path.parent / "manifest.json").is_file():
        # ut9a #3: its own _SUCCESS made it look like an export to replace, inside the real one
        raise InputError(f"--out {out} is the {path.name} folder of the export {path.parent}: give the export's "
                         "folder itself")
    if path.is_dir():
        from changeprov.spark.commit import not_an_export

        foreign = not_an_export(sorted(os.listdir(path)))
        if foreign:
            raise InputError(f"--out {out} holds files that no changeprov export writes ({_some(foreign)}): it is no "
                             "export folder; give a new or empty folder, or an earlier export's")
    for where in (path, *path.parents):
        if where.exists():
            if not where.is_dir():
                raise InputError(f"--out {out}: {where} is a file, not a folder")
            # ut43b #3: a folder the run cannot write in failed after Spark started, as a bare errno.
            # Not where only the root exists or Hadoop is configured: a plain path may then be on
            # Hadoop's default file system (HDFS on a cluster's edge node), not this machine's (rv43b #1)
            if where.parent != where and not os.environ.get("HADOOP_CONF_DIR"):
                try:
                    os.rmdir(tempfile.mkdtemp(prefix=".changeprov-probe-", dir=where))
                except OSError as exc:
                    raise InputError(f"--out {out}: cannot write in {where}: {exc.strerror or exc}") from None
            return


def read_before(out: str, inputs: Sequence[str]) -> list[str]:
    """The ``inputs`` whose paths a committed run of the local export ``out`` read already: appended
    again with the same lines, their triples are written twice (a store holds them once) and their
    lines counted twice (ut23 #5). By path only: a file rotated under one name is another file."""
    local = local_out(out)
    try:
        manifest = parse_manifest((local / "manifest.json").read_text("utf-8"), "") if local is not None else {}
    except (OSError, InputError):  # the run itself will say
        return []
    seen = {i for run in manifest_runs(manifest) for i in run.get("inputs") or [] if isinstance(i, str)}
    # a manifest names its inputs as quarantine records do (before stop 47: as given to Hadoop, escaped)
    return sorted({display_input(i) for i in inputs if i in seen or display_input(i) in seen})


def _export(spark: SparkSession, inputs: Sequence[str], out: str, fs: FileSystem, run_id: str, started: float, *,
            family: str, mode: str, compress: str, progress: Callable[[str], None],
            committing: list[bool]) -> ExportResult:
    staging = f"_staging-{run_id}"
    foreign = foreign_files(fs)
    if foreign:
        raise InputError(f"{out} holds files that no changeprov export writes ({_some(foreign)}), which this run "
                         f"would delete or mix its own with: give a new or empty folder, or an earlier export's")
    for name in fs.names():
        if name.startswith("_staging-"):
            fs.delete(name)  # a killed run's leftovers (this run holds the lock): never committed
    # read once, before anything moves: an append names every run's files in it, and a damaged one
    # would fail the commit after the part files were moved (mq1 #2)
    previous = committed_manifest(fs, out, required=mode == "append")
    if not fs.exists("_SUCCESS"):
        removed = remove_uncommitted(fs, previous)
        if removed:
            progress(f"removed {removed} file(s) that an export run which did not finish had moved into {out}")
        if mode == "append" and fs.exists("manifest.json"):  # ut8a #4: say what stays, and why
            progress(f"{out} has no _SUCCESS: the part files its manifest.json lists stay, as committed by "
                     "its runs; this run appends to them")
    replaces = replaced_export(fs, previous) if mode == "overwrite" else None
    if mode == "overwrite" and replaces is None and (replaces := interrupted_replacement(fs)) is not None:
        progress(f"{out} has what is left of an export that a run killed while it replaced it had begun to delete "
                 f"({describe_replaced(replaces)}): this run finishes the replacement and keeps its record")
    elif replaces:
        progress(f"{out} holds a committed export ({describe_replaced(replaces)}): this run replaces it; "
                 "append mode (--mode append) adds to it instead")

    progress(f"reading {len(inputs)} input file(s)")
    try:
        found = find_boms(spark, inputs)
        lines = read_lines(spark, found.plain, found.bom)
    except InputError:
        raise
    except Exception as exc:  # AnalysisException: path does not exist, …
        raise InputError(f"cannot read the input: {first_line(exc)}") from None

    progress("planning the job")
    metrics = _write(spark, with_duplicates(lines, None), family, fs, staging, compress,
                     lambda: progress("mapping, deduplicating and writing (one Spark job)"))
    if fs.exists(staging, "kind=d"):
        # Rare: one event id on lines with different content. Which line is first needs line
        # numbers, known only now: the later lines are found (a second pass, no shuffle of triples)
        # and the job runs again with them quarantined.
        progress("some event ids occur with different content: quarantining the later lines")
        dups = f"{staging}-duplicates"
        losers = duplicate_losers(spark, reuse(with_duplicates(lines, None), ("mapped", family), map_lines_for(family)),
                                  fs.path(staging, "kind=d").toString(),
                                  _offsets(spark, fs, f"{dups}-tables/offsets.json",
                                           _read_stats(spark, fs, staging)["splits"], inputs),
                                  fs.path(dups).toString())
        fs.delete(staging)  # the overwrite is per partition (dynamic): a date of the losers alone would stay
        metrics = _write(spark, with_duplicates(lines, losers), family, fs, staging, compress,
                         lambda: progress("mapping, deduplicating and writing again"))
        fs.delete(dups)
        fs.delete(f"{dups}-tables")

    progress("committing")
    stats = _read_stats(spark, fs, staging)
    _refuse_unread(inputs, stats["splits"], found.bom_only)
    # a file of nothing but a BOM: Hadoop reads no line from it, the reference one (quarantined)
    stats["accounting"] += [("quarantined", "BAD_ENCODING", "", 1) for _ in found.bom_only]
    counts = _counts(stats, metrics)
    quarantine_rows = _number_quarantine(spark, fs, staging, stats["splits"], found.bom_only, inputs)
    manifest = {
        "run_id": run_id, "tool": "changeprov", "tool_version": __version__, "ontology_version": VERSION_IRI,
        "started": iso_time(started), "finished": None, "inputs": [display_input(i) for i in inputs],
        "mode": mode, "family": family, "compress": compress, "counts": counts,
    }
    if replaces:
        manifest["replaced"] = replaces
    committing.append(True)
    _commit(spark, fs, staging, mode=mode, compress=compress, run_id=run_id, quarantine_rows=quarantine_rows,
            manifest=manifest, previous=previous)
    return ExportResult(out=out, run_id=run_id, manifest=manifest)


def write_rows(family: str) -> Callable[[DataFrame], DataFrame]:
    """Lines (read_lines' columns and ``dup``) → the export's output rows, deduplicated, counted and in write
    order (kind, source, date, then by hash: files come out in the same order every run)."""
    def apply(lines: DataFrame) -> DataFrame:
        mapped = reuse(lines, ("mapped", family), map_lines_for(family))
        return add_stages(
            mapped.transform(output_rows).transform(aggregate).repartition(F.col("kind"), F.col("source"), F.col("date")),
            # The hash is a column, computed once per row: as a sort expression it was computed again
            # in every comparison (two hashes per comparison, ~3% of the map stage's task time on 100k
            # events); the sort compares numbers instead of long strings sharing their first 40 characters.
            [{"_h": F.xxhash64("value")}]).sortWithinPartitions("kind", "source", "date", "_h", "value").drop("_h")

    return apply


def _write(spark: SparkSession, lines: DataFrame, family: str, fs: FileSystem, staging: str, compress: str,
           starting: Callable[[], None] = lambda: None) -> dict:
    """Stage the output rows of ``lines`` (with ``dup``) under ``staging`` (partitioned by kind,
    source, date); returns the observed triple and event counts. ``starting`` is called when the
    plan is built and the job is about to start."""
    observed = _observation(spark)
    # analysed once per Spark application, whatever the input (spark.plans): seconds per export
    rows = reuse(lines, ("write", family), write_rows(family))
    writer = rows.observe(observed[0], *observed[1]).write.mode("overwrite").partitionBy("kind", "source", "date")
    if compress == "gzip":
        writer = writer.option("compression", "gzip")
    starting()
    try:
        writer.text(fs.path(staging).toString())
    except Exception as exc:  # a failed task (disk full, lost executor, …): nothing was committed
        raise SparkError(f"the export job failed, nothing was committed: {first_line(exc)}") from None
    try:
        return observed[0].get
    except Exception as exc:
        # only empty (0-byte) files: Spark plans no partition, so no task ran and reported the
        # observed counts (a user's test: a traceback and a left-over staging folder)
        if not any(n.startswith("kind=") for n in fs.names(staging)):
            return {name: 0 for name in (*(f"triples:{fam}" for fam in FAMILIES), "events")}
        raise SparkError(f"the export job reported no counts: {first_line(exc)}") from None


_LOSERS = "file string, block long, mono long, detail string"


def duplicate_losers(spark: SparkSession, mapped: DataFrame, conflicts: str, offsets: DataFrame,
                     out: str) -> DataFrame:
    """The lines to quarantine as DUPLICATE_EVENT: of the events listed in ``conflicts`` (the staged
    rows of kind d), every mapped line whose triples differ from those of the event's first line in
    the reference's reading order (input order, then line number). Written to ``out`` and read back,
    so that the second run of the job does not compute them again."""
    from changeprov.mapping.reference import DUPLICATE_DETAIL

    events = spark.read.text(conflicts).select(F.split(F.col("value"), "[|]", 3)[2].alias("event"))
    lines = (mapped.where(F.col("reason").isNull() & (F.size(F.col("triples")) > 0))
             .select(_event_of(F.col("triples")).alias("event"), _digest_of(F.col("triples")).alias("fp"),
                     "file", "block", "mono")
             .join(F.broadcast(events), "event")
             .join(F.broadcast(offsets), ["file", "block"])
             .withColumn("line", F.col("before") + F.col("mono") - F.col("first") + 1))
    first = Window.partitionBy("event").orderBy("rank", "file", "line")
    before, after = DUPLICATE_DETAIL.split("{where}")
    detail = F.concat(F.lit(before), F.first("display").over(first), F.lit(":"),
                      F.first("line").over(first).cast("string"), F.lit(after))
    try:
        (lines.select("file", "block", "mono", "fp", F.first("fp").over(first).alias("first_fp"),
                      detail.alias("detail"))
         .where(F.col("fp") != F.col("first_fp")).select("file", "block", "mono", "detail")
         .write.mode("overwrite").json(out))
    except Exception as exc:
        raise SparkError(f"the export job failed, nothing was committed: {first_line(exc)}") from None
    return spark.read.schema(_LOSERS).json(out)


def with_duplicates(lines: DataFrame, losers: DataFrame | None) -> DataFrame:
    """``lines`` with ``dup``: the DUPLICATE_EVENT detail of the lines ``losers`` (from
    duplicate_losers) names, null on the others (``losers`` None: on every line)."""
    if losers is None:
        return lines.withColumn("dup", F.lit(None).cast("string"))
    return (lines.join(F.broadcast(losers.withColumnRenamed("detail", "dup")), ["file", "block", "mono"], "left")
            .select(*lines.columns, "dup"))


def quarantine_duplicates(mapped: DataFrame) -> DataFrame:
    """Mapped lines → the same, with the lines whose ``dup`` is set quarantined as DUPLICATE_EVENT."""
    dup = F.col("dup").isNotNull()
    return add_stages(mapped, [{"reason": F.when(dup, F.lit("DUPLICATE_EVENT")).otherwise(F.col("reason")),
                                "detail": F.when(dup, F.col("dup")).otherwise(F.col("detail")),
                                "triples": F.when(~dup, F.col("triples"))}])


def map_lines_for(family: str) -> Callable[[DataFrame], DataFrame]:
    """Lines → mapped lines (``family`` auto: every family; else that one, the rest quarantined),
    with the lines marked in ``dup`` quarantined as DUPLICATE_EVENT."""
    def apply(lines: DataFrame) -> DataFrame:
        from changeprov.spark.decode import decode
        from changeprov.spark.transform import map_events

        decoded = lines.transform(decode)
        if family != "auto":
            decoded = decoded.transform(force_family(family))
        mapped = map_events(decoded, families=None if family == "auto" else [family])
        return mapped.transform(quarantine_duplicates) if "dup" in lines.columns else mapped

    return apply


def _observation(spark: SparkSession):
    from pyspark.sql import Observation

    obs = Observation(f"changeprov-{uuid.uuid4().hex[:8]}")
    is_t = F.col("kind") == "t"
    exprs = [F.sum(F.when(is_t & (F.col("source") == fam), 1).otherwise(0)).alias(f"triples:{fam}")
             for fam in FAMILIES]
    exprs.append(F.sum(F.when(is_t & F.col("value").endswith(EVENT_TYPE_TRIPLE_END), 1).otherwise(0))
                 .alias("events"))
    return obs, exprs


def _read_stats(spark: SparkSession, fs: FileSystem, staging: str) -> dict:
    """The tiny accounting and split-statistics rows (a few per reason/family and per input split)."""
    def read(kind: str) -> list[str]:
        if not fs.exists(staging, f"kind={kind}"):
            return []
        return [r.value for r in spark.read.text(fs.path(staging, f"kind={kind}").toString()).collect()]

    accounting = []
    for line in read("a"):
        n, _first, status, reason, fam = line.split("|", 4)
        accounting.append((status, reason, fam, int(n)))
    splits: dict[str, list[tuple[int, int, int]]] = {}
    for line in read("s"):
        n, first, block, path = line.split("|", 3)
        splits.setdefault(path, []).append((int(block), int(n), int(first)))
    return {"accounting": accounting, "splits": splits}


def _refuse_unread(inputs: Sequence[str], splits: dict, bom_only: Sequence[str]) -> None:
    """A local input of some bytes that gave no line was not read: Hadoop's .lz4 and .snappy codecs read
    only Hadoop's own block formats, and a file in the lz4 tool's frames, or not compressed, gave no line
    and no error (ut44e #1: 305 lines lost, "balanced"). Any byte of a plain file makes a line, so this
    is never a file of blank lines; a file of nothing but a BOM is quarantined apart (``bom_only``); a
    gzip, bzip2 or zstd stream of nothing has some bytes and rightly no line."""
    read = {unquote(urlparse(path).path) for path in splits}
    skipped = {local_file(b) for b in bom_only if b.startswith("file:")}
    for item in inputs:
        if not item.startswith("file:"):
            continue  # a remote file's size would cost a listing; its codec is the cluster's business
        path = local_file(item)
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        if path in read or path in skipped or size == 0:
            continue
        codec = codec_of(path)
        if codec not in (None, ".lz4", ".snappy"):  # gzip, bzip2, zstd of no line: some bytes, no line
            continue
        if codec is not None and size <= 64:
            with open(path, "rb") as fh:
                if not fh.read().strip(b"\x00"):  # Hadoop's empty block stream: zero block lengths (rv44b #3)
                    continue
        why = (f"Hadoop's {codec} codec reads only Hadoop's own block format (the {codec[1:]} tool writes another): "
               f"decompress it, or compress it with gzip, bzip2 or zstd" if codec in (".lz4", ".snappy")
               else "nothing was read from it")
        raise InputError(f"{display_input(item)}: {size:,} bytes but no line read, so its lines would "
                         f"be lost: {why}; nothing was committed")


def _small_table(spark: SparkSession, fs: FileSystem, name: str, rows: list[tuple], columns: str) -> DataFrame:
    """A small driver-side table as a DataFrame that executors read as a JSON file ``name`` (on the
    output's file system): ``spark.createDataFrame`` of a Python list runs pyspark.daemon on the
    executors, which then need Python (ut42e #1: a cluster export failed at its commit whenever a line
    was quarantined, the executors' Python being none or another). Spark skips files whose names start
    with ``_`` or ``.``: ``name``'s last part must not."""
    fields = [c.split()[0] for c in columns.split(",")]
    fs.write_text(name, "".join(json.dumps(dict(zip(fields, r)), ensure_ascii=False) + "\n" for r in rows))
    return spark.read.schema(columns).json(fs.path(name).toString())


def _offsets(spark: SparkSession, fs: FileSystem, name: str, splits: dict, inputs: Sequence[str] = ()) -> DataFrame:
    """Per input split (file, block): the lines before it (``before``) and its first running id
    (``first``), so a line's number is before + mono - first + 1; the file's name as the reference
    writes it (``display``) and its ``rank`` in the reference's reading order (``inputs``' order;
    files Spark found in a folder come after, by name). Written to ``name`` (``_small_table``)."""
    rank = {local_file(item): i for i, item in enumerate(inputs) if item.startswith("file:")}
    rows = []
    for path, blocks in splits.items():
        before = 0
        here = rank.get(unquote(urlparse(path).path), len(rank)) if path.startswith("file:") else len(rank)
        for block, n, first in sorted(blocks):
            rows.append((path, display_source(path), block, before, first, here))
            before += n
    return _small_table(spark, fs, name, rows, "file string, display string, block long, before long, first long, rank long")


def _counts(stats: dict, metrics: dict) -> dict:
    acc = stats["accounting"]
    by_reason: dict[str, int] = {}
    for status, reason, _fam, n in acc:
        if status == "quarantined":
            by_reason[reason] = by_reason.get(reason, 0) + n
    unknown = sorted(set(by_reason) - set(REASONS))
    if unknown:  # a bug, not bad input: every reason must be documented
        raise AssertionError(f"undocumented quarantine reasons {unknown}")
    triples = {fam: int(metrics.get(f"triples:{fam}") or 0) for fam in FAMILIES}
    counts = {
        "lines_read": sum(n for *_, n in acc),
        "blank": sum(n for s, _r, _f, n in acc if s == "blank"),
        "mapped": sum(n for s, _r, _f, n in acc if s == "mapped"),
        "quarantined": sum(by_reason.values()),
        "quarantined_by_reason": dict(sorted(by_reason.items())),
        "mapped_by_source": dict(sorted(
            (f, sum(n for s, _r, ff, n in acc if s == "mapped" and ff == f)) for f in FAMILIES)),
        "triples_by_source": {f: n for f, n in triples.items() if n},
        "triples": sum(triples.values()),
        "distinct_events": int(metrics.get("events") or 0),
    }
    counts["balanced"] = counts["lines_read"] == counts["blank"] + counts["mapped"] + counts["quarantined"]
    return counts


def _number_quarantine(spark: SparkSession, fs: FileSystem, staging: str, splits: dict,
                       bom_only: Sequence[str] = (), inputs: Sequence[str] = ()) -> DataFrame | None:
    """Quarantine records with real line numbers: lines before the split + row index in it + 1.
    ``bom_only``: files whose one line, a lone BOM, Spark never read (their record is made here).
    ``_r``, ``_s`` and ``_l`` order them as the reference writes them: by the file's rank in ``inputs``
    (the order the files were given; a remote folder's files after them), its displayed name (one form
    for both: Spark's file paths are URIs, ``bom_only`` the paths given: ut42e #6) and the line."""
    extra = None
    if bom_only:
        rank = {f: i for i, f in enumerate(inputs)}
        names = [(f, display_input(f), rank.get(f, len(rank))) for f in bom_only]
        extra = (_small_table(spark, fs, f"{staging}/tables/bom-only.json", names,
                              "source string, display string, rank long")
                 .select(F.to_json(F.struct(F.lit("BAD_ENCODING").alias("reason"),
                                            F.lit(BOM_DETAIL).alias("detail"), F.col("display").alias("source"),
                                            F.lit(1).cast("long").alias("line"), F.lit("\ufeff").alias("raw")))
                         .alias("value"), F.col("rank").alias("_r"), F.col("display").alias("_s"),
                         F.lit(1).cast("long").alias("_l")))
    if not fs.exists(staging, "kind=q"):
        return extra
    table = _offsets(spark, fs, f"{staging}/tables/offsets.json", splits, inputs).withColumnRenamed("file", "path")
    recs = spark.read.text(fs.path(staging, "kind=q").toString()).select(
        F.from_json("value", "reason string, detail string, source string, block long, mono long, raw string")
        .alias("r")).select("r.*")
    numbered = (recs.join(F.broadcast(table), (recs.source == table.path) & (recs.block == table.block))
            .select(F.to_json(F.struct("reason", "detail", F.col("display").alias("source"),
                                       (F.col("before") + F.col("mono") - F.col("first") + 1).alias("line"),
                                       "raw")).alias("value"),
                    F.col("rank").alias("_r"), F.col("display").alias("_s"), (F.col("before") + F.col("mono") - F.col("first") + 1).alias("_l")))
    return numbered if extra is None else numbered.unionByName(extra)


