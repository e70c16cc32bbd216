"""Subcommand table: each entry names a library call and how to print its result."""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import changeprov.audit_commands as _audit_cmds
import changeprov.check_commands as _check_cmds
import changeprov.store_commands as _store_cmds
from changeprov.exportlayout import COMPRESSIONS, MODES, partition_days
from changeprov.mapping.vocab import rules
from changeprov.terminal import progress_lines, visible


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def output_file(text: str) -> str:
    """argparse type of an output file: a path ending in a separator names a folder (``--out dir/``
    wrote a file named ``dir``)."""
    if text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text!r} ends with '/', so it names a folder: name a file to write")
    return text


def _configure_vocab(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["text", "json"], default="text")


def _run_vocab(args: argparse.Namespace) -> int:
    import json

    from changeprov.ontology.summary import vocabulary_report

    report = vocabulary_report()
    args.verdict = 0 if report["ok"] else 1  # also when the reader goes early (rv44 #6)
    if args.format == "json":
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        for line in report["lines"]:
            print(line)
    return args.verdict


def _configure_map(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="JSONL files (optionally .gz), folders or globs")
    p.add_argument("--out", required=True, type=output_file,
                   help="N-Triples file to write (distinct triples, sorted; .gz, .bz2 or .deflate compresses; "
                        "missing folders are created)")
    p.add_argument("--quarantine", required=True, type=output_file,
                   help="JSONL file for the quarantined lines (not an input, not --out; compressed by its suffix too)")
    p.add_argument("--family", default="auto", choices=["auto", *rules()["families"]],
                   help="the family of every input line (default auto: each line's own; a line of another family is "
                        "quarantined as UNKNOWN_FAMILY)")
    p.add_argument("--format", choices=["text", "json"], default="text")


def print_counts(counts: dict, *, title: str) -> None:
    print(title)
    rows = [("lines read", counts["lines_read"]), ("blank", counts["blank"]), ("mapped", counts["mapped"]),
            ("quarantined", counts["quarantined"])]
    rows += [(f"  {reason}", n) for reason, n in counts["quarantined_by_reason"].items()]
    rows += [("distinct events", counts["distinct_events"]), ("triples written", counts["triples"])]
    rows += [(f"  {source}", n) for source, n in counts["triples_by_source"].items()]
    width = max(len(name) for name, _ in rows)
    for name, n in rows:
        print(f"  {name:<{width}}  {n:>10,}")


def no_lines_warning(counts: dict, *, explained: bool = False, family: str = "auto") -> str | None:
    """Inputs without a line (empty files): a nightly job fed an empty file by a broken upstream
    reported success without a word (ut47b #7).

    ... or lines none of which mapped: a wrong file (ut48a #6: a Markdown file's 97 lines, all
    MALFORMED_JSON, read as a run that succeeded), unless another warning ``explained`` why (a file
    framed otherwise than its name says), or lines all of another ``family`` than asked, which
    ``other_families_note`` tells (ua51 #6: two warnings for one cause).

    >>> no_lines_warning({"lines_read": 0})
    'the inputs hold no line (empty files?): nothing was mapped'
    >>> no_lines_warning({"lines_read": 3, "mapped": 1}) is None
    True
    >>> no_lines_warning({"lines_read": 97, "mapped": 0, "quarantined_by_reason": {"MALFORMED_JSON": 96, "BAD_TYPE": 1}})
    'none of the 97 lines was mapped (quarantined: MALFORMED_JSON 96, BAD_TYPE 1): are these OpenMetadata or DataHub event logs?'
    >>> no_lines_warning({"lines_read": 58, "mapped": 0, "quarantined_by_reason": {"UNKNOWN_FAMILY": 58}},
    ...                  family="openmetadata") is None
    True
    """
    if counts.get("lines_read") == 0:
        return "the inputs hold no line (empty files?): nothing was mapped"
    reasons = counts.get("quarantined_by_reason") or {}
    if family != "auto" and set(reasons) == {"UNKNOWN_FAMILY"}:
        return None
    if counts.get("mapped") == 0 and reasons and not explained:
        shown = ", ".join(f"{reason} {n:,}" for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:4])
        return (f"none of the {counts['lines_read']:,} lines was mapped (quarantined: {shown}): are these "
                "OpenMetadata or DataHub event logs?")
    return None


def out_name_warning(out: str) -> str | None:
    """map writes N-Triples under any name, and ``load`` takes a file by its name (ut48a #5: ``--out m.ttl``
    mapped, then ``load m.ttl`` refused it).

    >>> out_name_warning("m.nt.gz") is None, out_name_warning("m.ttl")[:60]
    (True, 'm.ttl is N-Triples, named otherwise: `changeprov load` reads')
    """
    from changeprov.mapping.inputs import codec_of

    name = Path(out).name.lower()
    codec = codec_of(Path(out))
    if name[:len(name) - len(codec or "")].endswith(".nt"):
        return None
    return (f"{out} is N-Triples, named otherwise: `changeprov load` reads a file named *.nt (or *.nt.gz, "
            "*.nt.bz2), so rename it to load it")


def other_families_note(counts: dict, family: str) -> str | None:
    """With --family, the lines of other families are quarantined (UNKNOWN_FAMILY): say how many, or a
    wrong --family on a log reads as a successful run (ut43b #5).

    >>> other_families_note({"lines_read": 1000, "quarantined_by_reason": {"UNKNOWN_FAMILY": 459}}, "openmetadata")
    '459 of 1,000 lines (45.9%) are not openmetadata events and were quarantined as UNKNOWN_FAMILY, as --family openmetadata asks (--family auto maps every family; some may be of none)'
    >>> other_families_note({"lines_read": 10, "quarantined_by_reason": {"UNKNOWN_FAMILY": 3}}, "auto") is None
    True
    """
    n = counts["quarantined_by_reason"].get("UNKNOWN_FAMILY", 0)
    if family == "auto" or not n:
        return None
    return (f"{n:,} of {counts['lines_read']:,} lines ({100 * n / max(counts['lines_read'], 1):.1f}%) are not "
            f"{family} events and were quarantined as UNKNOWN_FAMILY, as --family {family} asks (--family auto "
            "maps every family; some may be of none)")


def early_days_warning(days: Iterable[str]) -> str | None:
    """A warning for events dated before 2000: epoch seconds where milliseconds belong map to January
    1970 (README), which nothing else would point out (ut22).

    >>> early_days_warning(["1970-01-21", "2024-03-05"])[:62]
    'events dated before 2000 (1 day: 1970-01-21): timestamps in se'
    >>> early_days_warning(["2024-03-05"]) is None
    True
    """
    early = sorted(d for d in days if d < "2000-01-01")
    if not early:
        return None
    shown = ", ".join(early[:3]) + (", …" if len(early) > 3 else "")
    return (f"events dated before 2000 ({len(early)} day{'s' if len(early) != 1 else ''}: {shown}): timestamps in "
            "seconds rather than milliseconds? OpenMetadata and DataHub write epoch milliseconds")


def _run_map(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from changeprov.mapping.inputs import expand_inputs, framing_warnings
    from changeprov.mapping.reference import map_to_files

    counts = map_to_files(args.inputs, Path(args.out), Path(args.quarantine), family=args.family)
    if args.format == "json":
        print(json.dumps(counts.as_dict(), indent=2))
    else:
        print_counts(counts.as_dict(), title=f"reference mapper: {args.out}")
    framing = framing_warnings(expand_inputs(args.inputs))
    for warning in (*framing, other_families_note(counts.as_dict(), args.family), early_days_warning(counts.days),
                    no_lines_warning(counts.as_dict(), explained=bool(framing), family=args.family),
                    out_name_warning(args.out)):
        if warning:
            print(f"changeprov map: warning: {visible(warning)}", file=sys.stderr)
    return 0


def _configure_generate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, required=True, help="number of lines to write")
    p.add_argument("--seed", type=int, default=0, help="the same seed writes the same file (default: 0)")
    p.add_argument("--hostile-share", type=float, default=0.01,
                   help="share of hostile lines, 0..1 (default: 0.01)")
    p.add_argument("--days", type=int, default=730,
                   help="days the events span on average, from 2024-01-01 (default: 730; random gaps between "
                        "events: the last may fall a day or so later; the export writes a partition per family "
                        "and day)")
    p.add_argument("--part", type=_part, metavar="I/K",
                   help="write only the I-th of K consecutive slices of the log, later in time with the same "
                        "entities, each over its share of --days (1/2 then 2/2 with --days 2 rehearse two nights "
                        "of export --mode append; together the parts' lines are the whole log's)")
    p.add_argument("--out", required=True, type=output_file,
                   help="JSONL file to write (.gz or .bz2 compresses; missing folders are created; written only "
                        "if complete)")


def _part(text: str) -> tuple[int, int]:
    nth, _, parts = text.partition("/")
    if nth.isdigit() and parts.isdigit() and 1 <= int(nth) <= int(parts):
        return int(nth), int(parts)
    raise argparse.ArgumentTypeError(f"{text!r} is not I/K with 1 <= I <= K (e.g. 2/3)")


def _run_generate(args: argparse.Namespace) -> int:
    import json

    from changeprov.generate import generate

    summary = generate(args.out, events=args.events, seed=args.seed, hostile_share=args.hostile_share,
                       days=args.days, part=args.part)
    print(json.dumps(summary, indent=2, sort_keys=True))
    return 0


def _configure_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="JSONL files (optionally .gz), folders or globs; any Hadoop path (s3a://, hdfs://)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (any Hadoop path)")
    p.add_argument("--family", default="auto", choices=["auto", *rules()["families"]],
                   help="the family of every input line (default auto: each line's own; a line of another family is "
                        "quarantined as UNKNOWN_FAMILY)")
    p.add_argument("--master", default="local[*]",
                   help="Spark master (default local[*]; empty = the one spark-submit chose)")
    p.add_argument("--mode", choices=MODES, default="overwrite",
                   help="overwrite (default): replace the export --out holds; append: add this run's partitions to it")
    p.add_argument("--compress", choices=COMPRESSIONS, default="none",
                   help="gzip writes part-*.nt.gz (load reads both); default none")
    p.add_argument("--conf", action="append", default=[], metavar="K=V", help="Spark configuration, repeatable")
    p.add_argument("--format", choices=["text", "json"], default="text", help="how to print the final counts")
    p.add_argument("--status-every", type=_seconds, default=30.0, metavar="SECONDS",
                   help="when stderr is no terminal (a cron or orchestrator log), a line on the running Spark "
                        "stages every SECONDS (default 30; 0: none); a terminal shows Spark's progress bar")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86_400:  # NaN too
        raise argparse.ArgumentTypeError(f"a number of seconds from 0 to 86400, got {text!r}")
    return value


def status_every(given: float, *, tty: bool) -> float:
    """Seconds between stage reports: none on a terminal, which shows Spark's progress bar instead."""
    return 0.0 if tty else given


def _stage_reports(spark, say, *, every: float):
    """Spark's stages reported every ``every`` seconds (ut46d #2), or nothing for 0."""
    from contextlib import nullcontext

    from changeprov.spark.status import stage_reports

    return stage_reports(spark.sparkContext, say, every=every) if every else nullcontext()


def _run_export(args: argparse.Namespace) -> int:
    import json
    import sys

    from changeprov.errors import InputError
    from changeprov.spark.exportlock import refuse_if_busy
    from changeprov.spark.job import check_out_folder, export, outside_output, read_before, resolve_inputs
    from changeprov.spark.session import evaluation_conf, get_session

    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--conf needs K=V, got {item!r}")
        # a JVM size Spark passes to java as -Xmx: a bad one was "Java gateway process exited before sending
        # its port number", the JVM's own reason in its output above (ut45b #4)
        if key in ("spark.driver.memory", "spark.executor.memory") and not re.fullmatch(r"[0-9]+[kmgtKMGT]?", value):
            raise InputError(f"--conf {key}={value!r}: a size such as 4g, 512m or 2048 (MiB)")
        conf[key] = value
    if sys.stderr.isatty():
        conf.setdefault("spark.ui.showConsoleProgress", "true")
    progress = progress_lines("export")

    check_out_folder(args.out)
    refuse_if_busy(args.out)
    inputs, own = outside_output(resolve_inputs(args.inputs), args.out)
    if own:
        progress(f"skipping {own} file(s) under --out {args.out} (an export's own manifest and quarantine)")
    again = read_before(args.out, inputs) if args.mode == "append" else []
    if again:
        progress(f"warning: an earlier run of this export read {len(again)} file(s) of these paths ({again[0]}"
                 + (", …" if len(again) > 1 else "") + "): if they hold the same lines, their triples are written "
                 "again (a store holds each once) and their lines and quarantine records counted again")
    conf = {**evaluation_conf(inputs), **conf}

    from pyspark.sql import SparkSession

    progress(f"starting Spark ({args.master or 'master from spark-submit'})")
    owned = SparkSession.getActiveSession() is None
    spark = get_session(master=args.master or None, app_name="changeprov-export", conf=conf)
    before = _committed_run(args.out)
    try:
        try:
            with _stage_reports(spark, progress, every=status_every(args.status_every, tty=sys.stderr.isatty())):
                manifest = export(spark, inputs, args.out, family=args.family, mode=args.mode,
                                  compress=args.compress, progress=progress).manifest
        finally:
            if owned:  # a clean stop: left to the JVM's exit hook, a cluster logs launch failures and FAILED
                spark.stop()
    except KeyboardInterrupt as exc:
        # ut46d #1: a SIGTERM after the commit said "terminated", exit 2, of a committed run, and a nightly
        # job that ran it again appended the night twice
        manifest = _committed_run(args.out)
        if manifest is None or manifest.get("run_id") == (before or {}).get("run_id"):
            if before is not None and manifest is None:
                # ut47b #5: stopped while committing (it removes _SUCCESS first); the log said "terminated" only
                progress(f"{args.out} holds no committed export now (this run had begun to commit): run the export "
                         "again, which finishes or undoes what this run began; until then `load` refuses the folder")
            raise
        from changeprov.cli import stop_word

        progress(f"{stop_word(exc)} after run {manifest['run_id']} was committed: the export is complete")
    if args.format == "json":
        print(json.dumps(manifest, indent=2, sort_keys=True))
    else:
        print_counts(manifest["counts"], title=f"export {manifest['run_id']}: {args.out}")
        totals = manifest.get("totals") or {}
        if totals.get("runs", 1) > 1:  # ut43b #4: the table is this run's; say what the folder holds
            print(f"  the export holds {totals['runs']} runs: {totals['lines_read']:,} lines read, "
                  f"{totals['quarantined']:,} quarantined, {totals['triples']:,} triples written (manifest.json: totals)")
        if manifest.get("replaced"):
            from changeprov.spark.commit import describe_replaced

            print(f"  replaced the export that was there ({describe_replaced(manifest['replaced'])});"
                  " --mode append adds to an export")
    from changeprov.mapping.inputs import framing_warnings

    framing = framing_warnings(inputs)
    for warning in (*framing, other_families_note(manifest["counts"], args.family),
                    early_days_warning(partition_days(manifest.get("files", []))),
                    no_lines_warning(manifest["counts"], explained=bool(framing), family=args.family)):
        if warning:
            print(f"changeprov export: warning: {visible(warning)}", file=sys.stderr)
    return 0 if manifest["counts"]["balanced"] else 2


def _committed_run(out: str) -> dict | None:
    """The manifest of the run last committed into a local ``out`` (its _SUCCESS, written last, is there),
    or None (none, or another file system)."""
    from changeprov.errors import ChangeprovError
    from changeprov.exportlayout import parse_manifest
    from changeprov.spark.fs import local_out

    folder = local_out(out)
    try:
        if folder is None or not (folder / "_SUCCESS").is_file():
            return None
        return parse_manifest((folder / "manifest.json").read_text(encoding="utf-8"), str(folder / "manifest.json"))
    except (OSError, ValueError, ChangeprovError):
        return None


def _configure_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workdir", default="build/demo",
                   help="where the demo writes its files (default build/demo under the current folder; a new or "
                        "empty folder, or an earlier demo's)")


def _run_demo(args: argparse.Namespace) -> int:
    from changeprov.demo import run_demo

    return run_demo(args.workdir)


COMMANDS: tuple[Command, ...] = (
    Command("demo", "Run the main job end to end on sample events (the README's first command).",
            _configure_demo, _run_demo),
    Command("export", "Map event logs to N-Triples partitions with Spark (the main job).",
            _configure_export, _run_export),
    Command("generate", "Write a realistic synthetic OpenMetadata + DataHub event log (deterministic per seed).",
            _configure_generate, _run_generate),
    Command("map", "Map events with the single-process reference mapper (N-Triples + quarantine).",
            _configure_map, _run_map),
    Command("vocab", "Validate the bundled ontology, JSON-LD context and SHACL shapes; print a summary.",
            _configure_vocab, _run_vocab),
    Command("load", "Load a committed export (N-Triples partitions) into a store (--store PATH | --endpoint URL).",
            _store_cmds.configure_load, _store_cmds.run_load),
    Command("query", "Run a named SPARQL query (--list shows them) or an ad hoc one (--file) on a store.",
            _store_cmds.configure_query, _store_cmds.run_query_cmd),
    Command("describe", "Print an entity's provenance subgraph as Turtle, JSON-LD or N-Triples.",
            _store_cmds.configure_describe, _store_cmds.run_describe),
    Command("check", "Check the ontology and a store's data (SHACL shapes, PROV constraints); exit 1 on findings.",
            _check_cmds.configure_check, _check_cmds.run_check),
    Command("reason", "Materialise the OWL 2 RL entailments (sub-classes, sub-properties, domains, ranges) in a store.",
            _check_cmds.configure_reason, _check_cmds.run_reason),
    Command("audit", "Write an audit report (HTML or JSON): activity, findings with their events, lineage; exit 1 on findings.",
            _audit_cmds.configure_audit, _audit_cmds.run_audit),
)
