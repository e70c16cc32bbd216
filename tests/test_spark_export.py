"""The Spark export job end to end: same triples as the reference mapper, strict output, accounting
that adds up, quarantine with line numbers, idempotent overwrite, append, commit marker."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from changeprov.generate import generate
from changeprov.errors import InputError
from changeprov.mapping.inputs import display_name
from changeprov.mapping.reference import map_to_files
from changeprov.spark import job as job_module
from changeprov.spark.fs import FileSystem, local_input
from changeprov.spark.job import export, outside_output, resolve_inputs
from changeprov.spark.session import (DEFAULTS, EXCLUDED_RULES, FEW_LINES, FEW_LINES_BELOW_BYTES, GZIP_FACTOR,
                                      INTERPRETED, INTERPRETED_BELOW_BYTES, evaluation_conf, export_settings)
from changeprov.sparql.formats import display_datetime
from spark_support import parse_nt

pytestmark = pytest.mark.spark


def read_triples(out: Path) -> set:
    lines = []
    for part in sorted((out / "triples").rglob("part-*.nt")):
        lines += part.read_text(encoding="utf-8").splitlines()
    return parse_nt(lines)


def reference_triples(inputs, tmp_path: Path) -> tuple[set, object]:
    counts = map_to_files(inputs, tmp_path / "ref.nt", tmp_path / "ref-q.jsonl")
    return parse_nt((tmp_path / "ref.nt").read_text(encoding="utf-8").splitlines()), counts


@pytest.fixture(scope="module")
def mixed_log(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("mixed") / "events.jsonl"
    # two weeks, not two years: a few dozen date partitions keep each export's write short
    summary = generate(path, events=2500, seed=11, hostile_share=0.03, days=14)
    return path, summary


CLUSTER_TEST = "test_spark_submit_on_a_local_cluster_gives_the_same_triples"


@pytest.fixture(scope="module", autouse=True)
def cluster_run(request, mixed_log, tmp_path_factory):
    """The spark-submit run of the local-cluster test, started as this module starts (when that test is
    selected): its own JVMs (a driver, two executors) then work while the module's other tests run, since
    alone it was the suite's longest test (~170 s of its ~15 minutes). Yields (input, output, process).

    The mixed log, with a line that is no JSON and one event id again with other content (the second
    pass): quarantined lines made the executors start pyspark.daemon (ut42e #1), so these executors
    cannot run Python at all (PYSPARK_PYTHON=/bin/false); the driver runs this Python. The cluster run
    uses generated code (what inputs above INTERPRETED_BELOW_BYTES get), the session's export
    interpreted expressions: the test also checks that both give the same triples."""
    if not any(item.name == CLUSTER_TEST for item in request.session.items):
        yield None
        return
    import pyspark

    work = tmp_path_factory.mktemp("cluster")
    lines = Path(mixed_log[0]).read_text().splitlines()
    event = {"id": "dup-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
             "entityFullyQualifiedName": "s.d.x.t", "timestamp": 1_709_280_000_000, "userName": "alice",
             "previousVersion": 0.1, "currentVersion": 0.1}
    path = work / "in.jsonl"
    path.write_text("\n".join(lines + ["{not json", json.dumps(event), json.dumps({**event, "userName": "bob"})]) + "\n")
    env = dict(os.environ, SPARK_HOME=os.path.dirname(pyspark.__file__), PYSPARK_PYTHON="/bin/false",
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    submit = Path(sys.executable).parent / "spark-submit"
    script = Path(job_module.__file__).parent / "submit.py"
    log = open(work / "submit.log", "w")  # a file, not a pipe: nobody reads a pipe while the tests above run
    proc = subprocess.Popen([str(submit), "--master", "local-cluster[2,1,1024]", "--conf", "spark.ui.enabled=false",
                             str(script), "--conf", "spark.sql.codegen.factoryMode=FALLBACK",
                             str(path), "--out", str(work / "cluster")],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield path, work / "cluster", proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()


@pytest.fixture(scope="module")
def mixed_export(spark, mixed_log, tmp_path_factory):
    """One export of the mixed log, shared by the tests that start from a committed export."""
    path, _ = mixed_log
    out = tmp_path_factory.mktemp("mixed-export") / "out"
    # small splits, so line numbers must be carried across split boundaries
    spark.conf.set("spark.sql.files.maxPartitionBytes", "262144")
    try:
        result = export(spark, resolve_inputs([str(path)]), str(out))
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    return out, result


def copy_of(export_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(export_dir, out)
    return out


def test_corpus_export_equals_the_reference_mapper(spark, shared_dir, tmp_path):
    inputs = resolve_inputs([str(shared_dir / "corpus")])
    result = export(spark, inputs, str(tmp_path / "out"))
    want, counts = reference_triples([str(shared_dir / "corpus")], tmp_path)
    got = read_triples(tmp_path / "out")
    assert got == want, f"missing {len(want - got)}, unexpected {len(got - want)}"
    assert result.counts["triples"] == len(want)
    assert result.counts["distinct_events"] == counts.events
    # the export's plan was analysed the fast way (spark.plans), not by the fallback
    from changeprov.spark.plans import FAST_PATH_ERRORS
    assert not FAST_PATH_ERRORS
    # the documented command, in its own process: other tests import owlrl, which changes how rdflib
    # (one of the checker's two parsers) converts literals in this process
    check = subprocess.run([sys.executable, str(shared_dir / "conformance" / "check_ntriples.py"), "check",
                            str(tmp_path / "out" / "triples"), "--require-success"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]


def test_mixed_hostile_log_counts_add_up_and_bad_lines_are_quarantined_with_line_numbers(
        mixed_log, mixed_export, tmp_path):
    path, summary = mixed_log
    out, result = mixed_export
    assert 10 < len(list((out / "triples").glob("source=*/date=*"))) < 100
    c = result.counts
    assert c["balanced"] and c["lines_read"] == summary["lines"] == c["blank"] + c["mapped"] + c["quarantined"]
    assert c["blank"] == summary["blank"]
    assert c["quarantined"] == sum(n for kind, n in summary["hostile"].items() if kind != "blank")
    assert c["distinct_events"] == summary["unique_events"]
    lines = path.read_bytes().split(b"\n")
    records = [json.loads(x) for q in sorted((out / "quarantine").glob("part-*.jsonl"))
               for x in q.read_text(encoding="utf-8").splitlines()]
    assert len(records) == c["quarantined"]
    for rec in records:
        assert rec["source"] == display_name(path)  # as the reference names it
        assert lines[rec["line"] - 1].decode("utf-8", "backslashreplace") == rec["raw"]
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    want, counts = reference_triples([str(path)], ref_dir)
    assert read_triples(out) == want
    assert dict(counts.quarantined) == c["quarantined_by_reason"]
    # the reference mapper's printed counts are the export's, per family too (a shared triple counts
    # once, for the earliest day and family it occurs in)
    keys = ("triples", "triples_by_source", "distinct_events", "lines_read", "quarantined_by_reason")
    assert {k: c[k] for k in keys} == {k: counts.as_dict()[k] for k in keys}
    # the same records as the reference's quarantine, details word for word but where they quote a JSON
    # parser's message (Python's names a position) or a byte the line's encoding could not hold
    parser_worded = {"MALFORMED_JSON", "BAD_ASPECT_JSON"}

    def comparable(rec):
        exact = rec["reason"] not in parser_worded and not rec["detail"].startswith("invalid UTF-8")
        return rec["line"], rec["reason"], rec["detail"] if exact else None, rec["raw"]

    ref_records = [json.loads(x) for x in (ref_dir / "ref-q.jsonl").read_text(encoding="utf-8").splitlines()]
    got, want = sorted(map(comparable, records)), sorted(map(comparable, ref_records))
    assert got == want, "\n".join(f"export {g}\n   ref {w}" for g, w in zip(got, want) if g != w)


def test_overwrite_is_idempotent_and_append_adds_only_new_partitions(spark, mixed_log, mixed_export, tmp_path):
    path, _ = mixed_log
    out = copy_of(mixed_export[0], tmp_path)  # committed by a run with other input splits
    first = {p.relative_to(out): p.read_bytes() for p in (out / "triples").rglob("part-*")}
    old = json.loads((out / "manifest.json").read_text())
    said = []
    export(spark, resolve_inputs([str(path)]), str(out), progress=said.append)
    second = {p.relative_to(out): p.read_bytes() for p in (out / "triples").rglob("part-*")}
    assert first == second  # byte-identical partitions, exactly one run's output
    # ut8a #1: an overwrite of a committed export says so, and the manifest keeps what it replaced
    assert not (out / "_export.lock").exists()  # released
    assert json.loads((out / "manifest.json").read_text())["replaced"] == {"runs": [
        {"run_id": old["run_id"], "finished": old["finished"], "triples": old["counts"]["triples"]}]}
    assert [m for m in said if "this run replaces it" in m] == [
        f"{out} holds a committed export (1 run(s), {old['counts']['triples']:,} triples written, the last run "
        f"{old['run_id'][:12]} finished {display_datetime(old['finished'])}): this run replaces it; append mode "
        "(--mode append) adds to it instead"]  # the time as people read times everywhere, not as the manifest stores it
    more = tmp_path / "more.jsonl"
    generate(more, events=300, seed=99, hostile_share=0, days=28)
    export(spark, resolve_inputs([str(more)]), str(out), mode="append")
    after = {p.relative_to(out): p.read_bytes() for p in (out / "triples").rglob("part-*")}
    assert all(after[k] == v for k, v in first.items())  # committed files untouched
    assert len(after) > len(first)
    assert read_triples(out) >= parse_nt(
        [line for k, v in first.items() for line in v.decode("utf-8").splitlines()])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["mode"] == "append" and len(manifest["previous_runs"]) == 1
    # ut43b #4: counts are the last run's; totals what the folder holds, by run
    runs = [manifest["counts"], manifest["previous_runs"][0]["counts"]]
    assert manifest["totals"]["runs"] == 2
    assert {k: manifest["totals"][k] for k in ("lines_read", "quarantined", "triples")} == {
        k: runs[0][k] + runs[1][k] for k in ("lines_read", "quarantined", "triples")}
    quarantined = sum(len(p.read_text().splitlines()) for p in (out / "quarantine").glob("part-*"))
    assert manifest["totals"]["quarantined"] == quarantined
    # ut23 #5: appending an input a run read already is said before Spark starts
    from changeprov.spark.job import read_before

    assert read_before(str(out), resolve_inputs([str(more), str(path)])) == sorted([display_name(more), display_name(path)])
    # ut47b #7: the manifest names its inputs as quarantine records do, not as Hadoop reads them (escaped)
    assert manifest["inputs"] == [display_name(more)] and manifest["previous_runs"][0]["inputs"] == [display_name(path)]
    assert read_before(str(tmp_path / "no-export"), ["file:///x.jsonl"]) == []
    assert (out / "_SUCCESS").exists()
    # each run lists the part files it wrote, so that load tells a missing or added one (ut7b #6)
    listed = [set(r["files"]) for r in (manifest, *manifest["previous_runs"])]
    assert listed[0].isdisjoint(listed[1]) and listed[0] | listed[1] == {f"triples/{k.relative_to('triples').as_posix()}"
                                                                      for k in after}
    from changeprov.sparql.loader import committed_partitions, manifest_warnings

    assert manifest_warnings(out, committed_partitions(out), before=0, after=0) == []
    gone = sorted(listed[1])[0]
    (out / gone).unlink()
    stray = out / "triples" / gone.split("/")[1] / gone.split("/")[2] / "part-00099.nt"
    stray.write_text("")
    assert manifest_warnings(out, committed_partitions(out), before=0, after=0) == [
        f"1 part file(s) that no run of manifest.json wrote: {stray.relative_to(out).as_posix()}",
        f"1 part file(s) that manifest.json lists are missing: {gone}"]
    # ut23 #1: a file cut short by a copy, in a folder of several runs loaded into any store
    assert all(set(r["file_bytes"]) == set(r["files"]) for r in (manifest, *manifest["previous_runs"]))
    cut = out / sorted(listed[0])[0]
    cut.write_bytes(cut.read_bytes()[:-1])
    assert manifest_warnings(out, committed_partitions(out), before=10, after=10)[-1] == (
        f"1 part file(s) differ in size from what their run wrote (cut short by a copy, or edited): "
        f"{sorted(listed[0])[0]}")


@pytest.mark.parametrize("mode, mine, named", [
    ("overwrite", {"triples/mine/data.ttl": "precious\n", "quarantine/notes.txt": "precious\n",
                   "manifest.json": '{"my": "own manifest"}\n', "other.txt": "keep\n"},
     "manifest.json (not an export manifest: it has no run_id), triples/mine, quarantine/notes.txt"),
    ("append", {"triples/mine/data.ttl": "precious\n", "quarantine/notes.txt": "precious\n",
                "manifest.json": '{"my": "own manifest"}\n', "other.txt": "keep\n"},
     "manifest.json (not an export manifest: it has no run_id), triples/mine, quarantine/notes.txt"),
    # ut41d #3: a file named triples was replaced by the folder, a hidden file in it deleted
    ("overwrite", {"triples": "hi\n"}, "triples (a file, where an export writes a folder)"),
    ("overwrite", {"triples/.keep": ""}, "triples/.keep"),
    # ut45b #1: named like an export's files, in a folder no export wrote (no manifest): deleted, and
    # called the leftovers of a run that did not finish
    ("overwrite", {"triples/part-mine-keep.txt": "x\n", "quarantine/part-notes.txt": "x\n",
                   "triples/source=openmetadata/date=2024-01-01/handmade.nt": "<a:b> <a:c> <a:d> .\n"},
     "triples/part-mine-keep.txt, triples/source=openmetadata/date=2024-01-01/handmade.nt, quarantine/part-notes.txt"),
])
def test_an_export_into_a_folder_of_other_files_deletes_none_of_them(spark, tmp_path, mode, mine, named):
    """ut41b #2: overwrite deleted a user's triples/, quarantine/ and manifest.json (none an export's) with
    exit 0; an append would have mixed its files with them."""
    from changeprov.errors import InputError

    src = tmp_path / "e.jsonl"
    generate(src, events=20, seed=3, hostile_share=0, days=2)
    out = tmp_path / "out"
    for name, text in mine.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    with pytest.raises(InputError, match=re.escape(f"holds files that no changeprov export writes ({named})")):
        export(spark, resolve_inputs([str(src)]), str(out), mode=mode)
    assert {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()} == mine


def test_a_run_that_dies_while_committing_leaves_no_success_marker(spark, mixed_log, mixed_export, tmp_path,
                                                                    monkeypatch):
    path, _ = mixed_log
    out = copy_of(mixed_export[0], tmp_path)
    assert (out / "_SUCCESS").exists()

    def dying_rename(self, src, dst):
        raise OSError("simulated crash while moving files")

    monkeypatch.setattr(job_module.FileSystem, "move", dying_rename)
    with pytest.raises(OSError):
        export(spark, resolve_inputs([str(path)]), str(out))
    assert not (out / "_SUCCESS").exists()


@contextlib.contextmanager
def crashing(monkeypatch, method: str, failing):
    """FileSystem.``method`` runs as ``failing(real_method, self, *args)`` in the block, which must end in
    the OSError that simulates the crash."""
    real = getattr(job_module.FileSystem, method)
    monkeypatch.setattr(job_module.FileSystem, method, lambda self, *args: failing(real, self, *args))
    with pytest.raises(OSError):
        yield
    monkeypatch.setattr(job_module.FileSystem, method, real)


def test_the_next_append_removes_what_a_run_killed_while_committing_had_moved(spark, mixed_log, mixed_export,
                                                                              tmp_path, monkeypatch):
    """A user's test: after an append killed mid-commit, the next append committed the dead run's
    files (some renamed with its own run id): 65,107 triples under a manifest counting 3,470."""
    path, _ = mixed_log
    out = copy_of(mixed_export[0], tmp_path)
    committed = read_triples(out)
    dead, fresh = tmp_path / "dead.jsonl", tmp_path / "fresh.jsonl"
    generate(dead, events=300, seed=98, hostile_share=0.05, days=28)
    (fresh).write_text(generate_lines(events=1)[0].decode() + "\n")
    moves = []

    def dies_midway(real, self, src, dst):  # the new folders moved, 5 files renamed, the rest not
        if dst[-1].endswith(".nt"):
            moves.append(dst)
            if len(moves) > 5:
                raise OSError("simulated crash while moving files")
        real(self, src, dst)

    with crashing(monkeypatch, "move", dies_midway):
        export(spark, resolve_inputs([str(dead)]), str(out), mode="append")
    assert not (out / "_SUCCESS").exists() and read_triples(out) > committed  # the dead run's files are there
    messages = []
    export(spark, resolve_inputs([str(fresh)]), str(out), mode="append", progress=messages.append)
    want, _ = reference_triples([str(fresh)], tmp_path)
    assert read_triples(out) == committed | want
    assert any(m.startswith("removed ") for m in messages), messages
    assert not [p for p in (out / "triples").rglob("*") if p.name.endswith(".txt")]
    assert [p.name for p in (out / "quarantine").glob("part-*")] == ["part-00000.jsonl"]  # the fresh line maps


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_run_stopped_before_its_commit_removes_its_staging(spark, mixed_export, tmp_path, mode):
    """ut43b #2: Ctrl-C or SIGTERM (a KeyboardInterrupt) left _staging-<run> behind, and the committed
    export it was appending to could no longer be loaded ("leftovers of a killed run") until a re-run."""
    out = copy_of(mixed_export[0], tmp_path)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    more = tmp_path / "more.jsonl"
    generate(more, events=50, seed=96, hostile_share=0, days=3)

    def level() -> str:
        return str(spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getLogger(
            "org.apache.spark.util.Utils").getLevel())
    levels = [level()]

    def stop_at_commit(message: str) -> None:
        if message == "committing":
            levels.append(level())
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        export(spark, resolve_inputs([str(more)]), str(out), mode=mode, progress=stop_at_commit)
    # a failed write's stack traces are silenced while the export runs, not for the session (rv43b #7)
    assert levels[1] == "OFF" and levels[0] != "OFF" and level() == levels[0], levels
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    from changeprov.sparql.loader import committed_partitions

    assert committed_partitions(out)  # loadable: no leftovers


def test_an_export_in_a_callers_session_gives_the_reference_and_leaves_its_settings(spark, tmp_path):
    """ut44f #1: get_session applied the export's SQL settings (ANSI off, UTC, ...) to a caller's running
    session for good. It now returns that session as it is, and the export sets what it needs (ANSI off:
    hostile values must give NULL, never fail the job) only while it runs."""
    from changeprov.spark.session import get_session

    caller = {"spark.sql.ansi.enabled": "true", "spark.sql.session.timeZone": "America/New_York",
              "spark.sql.sources.partitionOverwriteMode": "STATIC", "spark.sql.codegen.wholeStage": "true"}
    before = {k: spark.conf.get(k) for k in caller}
    log = tmp_path / "log.jsonl"
    generate(log, events=300, seed=44, hostile_share=0.2, days=3)
    try:
        for k, v in caller.items():
            spark.conf.set(k, v)
        assert get_session(conf={"spark.sql.ansi.enabled": "false"}) is spark
        assert {k: spark.conf.get(k) for k in caller} == caller, "get_session changed the caller's session"
        result = export(spark, resolve_inputs([str(log)]), str(tmp_path / "out"))
        assert {k: spark.conf.get(k) for k in caller} == caller, "the export left its settings behind"
    finally:
        for k, v in before.items():
            spark.conf.set(k, v)
    want, _ = reference_triples([str(log)], tmp_path)
    assert read_triples(tmp_path / "out") == want and result.counts["balanced"]


@pytest.mark.parametrize("theirs", ["org.apache.spark.sql.catalyst.optimizer.CollapseRepartition",
                                    FEW_LINES[EXCLUDED_RULES]])
def test_an_export_keeps_the_optimizer_rules_a_session_excludes_and_adds_its_own(spark, theirs):
    """The export's excluded rules are added to the session's, not put in their place: a small input's
    session excludes the expression-simplifying rules (FEW_LINES), which the export's own setting
    turned back on in every export."""
    before = spark.conf.get(EXCLUDED_RULES, None)
    spark.conf.set(EXCLUDED_RULES, theirs)
    try:
        restore = export_settings(spark)
        try:
            during = spark.conf.get(EXCLUDED_RULES)
        finally:
            restore()
        assert during.startswith(theirs) and set(DEFAULTS[EXCLUDED_RULES].split(",")) <= set(during.split(","))
        assert spark.conf.get(EXCLUDED_RULES) == theirs
    finally:
        if before is None:
            spark.conf.unset(EXCLUDED_RULES)
        else:
            spark.conf.set(EXCLUDED_RULES, before)


def test_failed_write_loggers_are_quiet_until_the_last_export_ends_and_then_not_pinned(spark):
    """rv44 #5: two exports at once share the silencing (the first to end must not turn it off for the
    other), and putting it back must not pin the loggers' levels (a later setLogLevel reached them no more)."""
    jvm = spark.sparkContext._jvm
    level = lambda: str(jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.util.Utils").getLevel())
    before = level()
    first, second = export_settings(spark), export_settings(spark)
    first()
    assert level() == "OFF"
    second()
    assert level() == before != "OFF"
    spark.sparkContext.setLogLevel("WARN")
    try:
        assert level() == "WARN"
    finally:
        spark.sparkContext.setLogLevel("ERROR")
    # rv44b #1: SQL settings are a session's: a second session of the context exporting at the same time
    other = spark.newSession()
    other.conf.set("spark.sql.ansi.enabled", "true")
    mine = spark.conf.get("spark.sql.ansi.enabled")
    first, second = export_settings(spark), export_settings(other)
    assert other.conf.get("spark.sql.ansi.enabled") == "false"
    first()
    assert other.conf.get("spark.sql.ansi.enabled") == "false" and level() == "OFF"
    second()
    assert other.conf.get("spark.sql.ansi.enabled") == "true" and spark.conf.get("spark.sql.ansi.enabled") == mine


def test_an_export_whose_jvm_is_gone_raises_a_spark_error(spark, tmp_path, monkeypatch):
    """rv44b #9: a library caller got py4j's raw ConnectionRefusedError when the JVM had stopped."""
    from changeprov.errors import SparkError

    def gone(*_args, **_kwargs):
        raise ConnectionRefusedError(111, "Connection refused")
    monkeypatch.setattr(job_module, "_export", gone)
    log = tmp_path / "log.jsonl"
    log.write_text("{}\n")
    with pytest.raises(SparkError, match="the Spark JVM is gone"):
        export(spark, resolve_inputs([str(log)]), str(tmp_path / "out"))


def test_get_session_from_another_thread_leaves_the_running_session_as_it_is(spark):
    """rv44b #2: getActiveSession sees the calling thread's session only; from another thread getOrCreate
    applied the export's settings to the running session."""
    import threading

    from changeprov.spark.session import get_session

    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    got = []
    try:
        thread = threading.Thread(target=lambda: got.append(get_session(conf={"spark.sql.ansi.enabled": "false"})))
        thread.start()
        thread.join()
        assert got and got[0]._jsparkSession.equals(spark._jsparkSession)
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def test_an_overwrite_killed_while_committing_leaves_what_it_replaced_to_the_next_run(spark, mixed_log, mixed_export,
                                                                                       tmp_path, monkeypatch):
    """ut42e #4: an overwrite deletes the old manifest before it moves its files; killed then, the run
    that finished the job had no record of the export it replaced (no ``replaced`` in its manifest)."""
    path, _ = mixed_log
    out = copy_of(mixed_export[0], tmp_path)
    old = json.loads((out / "manifest.json").read_text())

    def dies(real, self, src, dst):
        raise OSError("simulated kill while moving files")

    with crashing(monkeypatch, "move", dies):
        export(spark, resolve_inputs([str(path)]), str(out))
    assert not (out / "manifest.json").exists() and not (out / "_SUCCESS").exists()
    messages = []
    export(spark, resolve_inputs([str(path)]), str(out), progress=messages.append)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["replaced"]["runs"] == [{"run_id": old["run_id"], "finished": old["finished"],
                                             "triples": old["counts"]["triples"]}]
    assert any("a run killed while it replaced" in m for m in messages), messages
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "manifest.json", "quarantine", "triples"]


def test_a_run_killed_while_writing_its_manifest_keeps_the_earlier_record(spark, mixed_log, mixed_export, tmp_path,
                                                                          monkeypatch):
    """ut41b #6: manifest.json was written in place: a kill while writing it left it empty, and for an
    append the record of every earlier run was gone. It is written whole, then renamed over the old one."""
    out = copy_of(mixed_export[0], tmp_path)
    before = (out / "manifest.json").read_text()
    more = tmp_path / "more.jsonl"
    generate(more, events=50, seed=97, hostile_share=0, days=3)
    def killed_halfway(real, self, name, data):
        if "manifest" in name:
            real(self, name, data[:len(data) // 2])
            raise OSError("simulated kill while writing the manifest")
        real(self, name, data)

    with crashing(monkeypatch, "write_bytes", killed_halfway):
        export(spark, resolve_inputs([str(more)]), str(out), mode="append")
    assert (out / "manifest.json").read_text() == before and not (out / "_SUCCESS").exists()
    export(spark, resolve_inputs([str(more)]), str(out), mode="append")  # reads the record, appends again
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["previous_runs"][-1]["run_id"] == json.loads(before)["run_id"]
    assert not (out / "_manifest.json.partial").exists() and (out / "_SUCCESS").exists()


@pytest.mark.parametrize("through, as_uri", [("os", False), ("os", True), ("hadoop", False)])
def test_the_commit_file_operations_agree_locally_and_through_hadoop(spark, tmp_path, through, as_uri):
    # a space in a plain path: the local folder must be Hadoop's decoded path, not its URI text
    root = tmp_path / ("out" if as_uri else "out dir")
    fs = FileSystem(spark, f"file://{root}" if as_uri else str(root))
    assert fs.local == root
    if through == "hadoop":
        fs.local = None  # what a remote file system (hdfs://, s3a://) takes
    fs.mkdirs("a", "b")
    fs.write_text("a/b/x.txt", "x")
    fs.write_text("a/y.txt", "y")
    fs.write_text("a/.y.txt.crc", "")  # what Hadoop's checksummed local file system adds
    assert fs.names("a") == ["b", "y.txt"]
    assert fs.names("missing") == [] and not fs.exists("missing")
    fs.move(("a", "b"), ("c",))
    assert fs.exists("c", "x.txt") and not fs.exists("a", "b")
    assert fs.read_text("c/x.txt") == "x"
    with pytest.raises(OSError):
        fs.move(("a", "y.txt"), ("c", "x.txt"))  # never onto an existing file
    fs.delete("a")
    fs.delete("a")  # deleting what is gone is no error
    assert not fs.exists("a") and fs.exists("c") and sorted(p.name for p in root.iterdir()) == ["c"]
    # ut41b #6: a file replaced whole or not at all, and a killed replacement's leftovers sorted out
    fs.replace_text("m.json", "one")
    fs.replace_text("m.json", "two")
    assert fs.read_text("m.json") == "two" and not fs.exists("_m.json.partial")
    fs.delete("m.json")
    from changeprov.spark.commit import _recover_manifest

    def after_a_kill(partial: str, old: str | None) -> str | None:
        """manifest.json once the next run has read it, after a kill left these files"""
        for name, text in (("_manifest.json.partial", partial), ("manifest.json", old)):
            fs.delete(name)
            if text is not None:
                fs.write_text(name, text)
        _recover_manifest(fs)
        assert not fs.exists("_manifest.json.partial")
        return fs.read_text("manifest.json") if fs.exists("manifest.json") else None

    whole = '{"run_id": "b"}'
    assert after_a_kill('{"run_i', '{"run_id": "a"}') == '{"run_id": "a"}'  # killed while writing the new one
    assert after_a_kill(whole, None) == whole  # killed between the delete and the rename (HDFS)
    assert after_a_kill('{"run_i', None) is None  # rv41 #7: an overwrite had deleted the old one first
    fs.delete("manifest.json")
    assert sorted(p.name for p in root.iterdir()) == ["c"]


def test_missing_input_is_a_clear_error(tmp_path):
    from changeprov.cli import main

    assert main(["export", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")]) == 2


def test_export_warns_of_events_dated_before_2000(spark, tmp_path, capsys):
    """ut22: a timestamp in seconds maps to January 1970 (documented), and nothing said so."""
    from changeprov.cli import main

    event = {"id": "s-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
             "timestamp": 1_788_249_600, "userName": "alice", "currentVersion": 0.1}
    (tmp_path / "in.jsonl").write_text(json.dumps(event) + "\n")
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "o")]) == 0
    assert ("changeprov export: warning: events dated before 2000 (1 day: 1970-01-21): timestamps in seconds "
            "rather than milliseconds?") in capsys.readouterr().err


@pytest.mark.parametrize("after_commit", [True, False])
def test_a_sigterm_after_the_commit_is_a_complete_export_not_a_failure(spark, tmp_path, capsys, monkeypatch, after_commit):
    """ut46d #1: SIGTERM 0.6 s after "committing" said "terminated", exit 2, of a run that was committed,
    and the nightly job that retried it appended the night twice. Before the commit it stays a stop."""
    import changeprov.spark.job as job
    from changeprov.cli import Terminated, main

    real = job.export

    def stopped(*args, **kwargs):
        if after_commit:
            real(*args, **kwargs)
        raise Terminated()

    monkeypatch.setattr(job, "export", stopped)
    event = {"id": "s-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
             "timestamp": 1_788_249_600_000, "userName": "alice", "currentVersion": 0.1}
    (tmp_path / "in.jsonl").write_text(json.dumps(event) + "\n")
    code = main(["export", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    if after_commit:
        run = json.loads((tmp_path / "o" / "manifest.json").read_text())["run_id"]
        assert code == 0 and f"terminated after run {run} was committed: the export is complete" in err
        assert f"export {run}: {tmp_path / 'o'}" in out and "lines read" in out
    else:
        assert code == 2 and err.endswith("changeprov export: terminated\n") and not (tmp_path / "o" / "_SUCCESS").exists()
        assert not (tmp_path / "o").exists(), "the folder the run created, empty, stays (ut47b #7)"


def test_a_stop_while_committing_says_the_folder_needs_another_run(spark, tmp_path, capsys, monkeypatch):
    """ut47b #5: SIGTERM while committing (the commit removes _SUCCESS first) said only "terminated";
    `load` alone told later that only a run that commits makes the folder loadable again."""
    import changeprov.spark.job as job
    from changeprov.cli import Terminated, main

    out = tmp_path / "o"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"run_id": "ab" * 16}))
    (out / "_SUCCESS").write_text("")

    def stopped(*_args, **_kwargs):
        (out / "_SUCCESS").unlink()
        raise Terminated()

    monkeypatch.setattr(job, "export", stopped)
    (tmp_path / "in.jsonl").write_text("{}\n")
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"[export] {out} holds no committed export now (this run had begun to commit): run the export "
                        "again, which finishes or undoes what this run began; until then `load` refuses the folder\n"
                        "changeprov export: terminated\n"), err


def test_stage_reports_say_how_far_the_running_stages_are(spark):
    """ut46d #2: with stderr no terminal, the export said nothing during its one Spark job (50-105 s)."""
    from changeprov.spark.status import stage_line, stage_reports

    said: list[str] = []
    with stage_reports(spark.sparkContext, said.append, every=0.25):
        # four tasks of 0.6 s each on two slots: at least 1.2 s of running stage
        (spark.range(0, 4, numPartitions=4)
         .selectExpr("reflect('java.lang.Thread', 'sleep', cast(600 as bigint))").collect())
    assert said, "no report during a job of more than a second"
    assert all(re.fullmatch(r"Spark stage [0-9]+: [0-9] of 4 tasks done, [0-9] running \([0-9]+ s\)", line)
               for line in said), said
    assert stage_line(spark.sparkContext) is None  # nothing runs: nothing to say
    before = len(said)
    with stage_reports(spark.sparkContext, said.append, every=0.1):
        time.sleep(0.5)
    assert len(said) == before, "a report with no stage running"


def test_export_says_when_a_file_is_compressed_but_named_as_text(spark, tmp_path, capsys):
    """ut46a #8: a gzip file named .jsonl gave BAD_ENCODING lines and nothing said why."""
    import gzip

    from changeprov.cli import main

    event = {"id": "z-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
             "timestamp": 1_788_249_600_000, "userName": "alice", "currentVersion": 0.1}
    (tmp_path / "in.jsonl").write_bytes(gzip.compress((json.dumps(event) + "\n").encode()))
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert (f"changeprov export: warning: {tmp_path / 'in.jsonl'} starts as a gzip file does, but its name does not "
            "end in .gz: its lines are read as text; name it .gz") in err, repr(err[-400:])


@pytest.mark.parametrize("conf, said", [
    (["spark.eventLog.enabled=true", "spark.eventLog.dir={tmp}/no-such-dir"], "no-such-dir"),
    # a SQL setting is checked only when the session state is built: it failed the first read, as
    # "cannot read the input" (ut40c #8)
    (["spark.sql.shuffle.partitions=abc"], "The value 'abc' in the config \"spark.sql.shuffle.partitions\" is invalid"),
])
def test_spark_that_cannot_start_is_a_clear_error_not_a_stack_trace(tmp_path, conf, said):
    # its own process: in this one a SparkSession is already running and would be reused
    (tmp_path / "in.jsonl").write_text("\n")
    options = [arg for item in conf for arg in ("--conf", item.format(tmp=tmp_path))]
    proc = subprocess.run([sys.executable, "-m", "changeprov.cli", "export", str(tmp_path / "in.jsonl"),
                           "--out", str(tmp_path / "o"), *options],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "changeprov export: error: Spark could not start:" in proc.stderr
    assert said in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_exports_stderr_holds_its_own_lines_not_sparks_start_up_banner(tmp_path):
    """ut45e #11: Spark said which log4j profile it took and how to set the log level, and warned of
    Hadoop's native library, before the export's first progress line. (Which interval each case of
    --status-every gets: tests/test_cli.py.)"""
    event = {"id": "b-1", "eventType": "entityCreated", "entityType": "table", "entityId": "t-1",
             "timestamp": 1_788_249_600_000, "userName": "alice", "currentVersion": 0.1}
    (tmp_path / "in.jsonl").write_text(json.dumps(event) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONF_DIR", "SPARK_HOME")}
    proc = subprocess.run([sys.executable, "-m", "changeprov.cli", "export", str(tmp_path / "in.jsonl"),
                           "--out", str(tmp_path / "o"), "--status-every", "0.1"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    # the JVM's own warning of the incubator module Spark's launcher adds cannot be turned off
    foreign = [line for line in proc.stderr.splitlines()
               if not line.startswith("[export] ") and line != "WARNING: Using incubator modules: jdk.incubator.vector"]
    assert foreign == []
    assert "[export] committing" in proc.stderr
    # ut46d #2: stderr is no terminal here (a cron log): the running stages are reported, whole lines
    stages = [line for line in proc.stderr.splitlines() if line.startswith("[export] Spark stage")]
    assert stages and all(re.fullmatch(r"\[export\] Spark stages? [0-9, ]+: [0-9,]+ of [0-9,]+ tasks done, [0-9,]+ "
                                       r"running(, [0-9,]+ failed)? \((?:[0-9]+ min )?[0-9]+ s\)", line)
                          for line in stages), proc.stderr


@pytest.mark.parametrize("files, defaults, ours", [
    ({}, None, True),
    ({"log4j2.properties": "rootLogger.level = info\n"}, None, False),
    ({"log4j2.xml": "<Configuration/>\n"}, None, False),
    ({"log4j2.properties.template": "rootLogger.level = info\n"}, None, True),  # a distribution's conf/ (rv46b #3)
    ({}, "spark.master local[2]\n", True),
    ({}, "spark.driver.extraJavaOptions -Dsite=1\n", False),
    ({}, "  spark.driver.defaultJavaOptions=-Dsite=1\n", False),
])
def test_a_sites_spark_conf_folder_keeps_its_own_logging(tmp_path, files, defaults, ours):
    from changeprov.spark.session import _driver_logging

    conf = tmp_path / "home" / "conf"
    conf.mkdir(parents=True)
    for name, text in files.items():
        (conf / name).write_text(text)
    if defaults is not None:
        (conf / "spark-defaults.conf").write_text(defaults)
    for environ in ({"SPARK_CONF_DIR": str(conf)}, {"SPARK_HOME": str(tmp_path / "home")}):
        assert bool(_driver_logging({}, environ)) is ours, environ


@pytest.mark.parametrize("physical_gib, heap", [(2, "1024m"), (8, "2048m"), (12, "3072m"), (64, "4096m")])
def test_a_local_run_gets_a_quarter_of_the_memory_between_1_and_4_gb(physical_gib, heap):
    from changeprov.spark.session import local_driver_memory

    assert local_driver_memory(physical=physical_gib * 2**30) == heap


@pytest.mark.parametrize("master, slots", [("local", 1), ("local[3]", 3), ("local[4,2]", 4),
                                           ("local-cluster[2,1,1024]", 2), ("local-cluster[3,2,512]", 6)])
def test_local_cores(master, slots):
    from changeprov.spark.session import local_cores

    assert local_cores(master) == slots


def test_local_star_is_every_core():
    import os

    from changeprov.spark.session import local_cores

    every = os.cpu_count() or 1
    assert local_cores("local[*]") == local_cores("local[*,3]") == every
    # text Spark itself will refuse with its own message: no error of ours before it
    assert local_cores("local-cluster[a,b]") == local_cores("local[x]") == local_cores("local-cluster[2]") == every


@pytest.mark.parametrize("files, want", [
    ({"a.jsonl": 1000}, {**INTERPRETED, **FEW_LINES}),
    ({"a.jsonl": FEW_LINES_BELOW_BYTES - 1}, {**INTERPRETED, **FEW_LINES}),
    ({"a.jsonl": FEW_LINES_BELOW_BYTES // 2, "b.jsonl": FEW_LINES_BELOW_BYTES // 2}, INTERPRETED),
    ({"a.jsonl.gz": FEW_LINES_BELOW_BYTES // GZIP_FACTOR + 1}, INTERPRETED),
    ({"a.jsonl": INTERPRETED_BELOW_BYTES - 1}, INTERPRETED),
    ({"a.jsonl": INTERPRETED_BELOW_BYTES // 2, "b.jsonl": INTERPRETED_BELOW_BYTES // 2}, {}),
    ({"a.jsonl.gz": INTERPRETED_BELOW_BYTES // GZIP_FACTOR + 1}, {}),
])
def test_inputs_below_the_thresholds_are_mapped_interpreted_and_the_smallest_without_subexpressions(
        tmp_path, files, want):
    paths = []
    for name, size in files.items():
        with open(tmp_path / name, "wb") as fh:
            fh.truncate(size)  # sparse: no disk used
        paths.append(local_input(tmp_path / name))
    assert evaluation_conf(paths) == want
    assert evaluation_conf(paths + ["s3a://bucket/events/"]) == {}  # remote: size unknown, Spark's default


def test_a_local_session_asks_for_two_input_splits_per_task_slot(spark):
    # local[2]: at least 4 splits, each at most Spark's 128 MB (no smaller cap of ours)
    assert spark.conf.get("spark.sql.files.minPartitionNum") == "4"
    assert spark.conf.get("spark.sql.files.maxPartitionBytes") in ("134217728", "128m", "134217728b")


def _bom_inputs(folder: Path, *, too_large: bool) -> None:
    """Files whose line 1 starts with a UTF-8 BOM (plain and gzip), a file without one, a BOM in the
    middle of a file, a BOM before a blank line, a file of a lone BOM, and line 1 repeated later;
    ``too_large``: and a line 1 that is over the byte limit only with its BOM (TOO_LARGE is checked first)."""
    import gzip

    generate(folder / "src.jsonl", events=120, seed=5, hostile_share=0, days=3)
    lines = (folder / "src.jsonl").read_bytes().split(b"\n")[:-1]
    (folder / "src.jsonl").unlink()
    bom = b"\xef\xbb\xbf"
    body = lambda ls: b"".join(x + b"\n" for x in ls)  # noqa: E731
    # line 1 again, without its BOM, later in the same split: the same text must still be mapped there
    (folder / "a-bom.jsonl").write_bytes(bom + body(lines[0:2] + [lines[0]] + lines[2:30]
                                                    + [lines[0], lines[31], bom + lines[32]]))
    with gzip.open(folder / "b-bom.jsonl.gz", "wb") as fh:
        fh.write(bom + body(lines[40:70]))
    (folder / "c-plain.jsonl").write_bytes(body(lines[70:100] + [bom + lines[100], b"", bom + b"  "]))
    (folder / "d-bom-blank.jsonl").write_bytes(bom + body([b"", lines[101]] + lines[102:110]))
    (folder / "e-bom-only.jsonl").write_bytes(bom)
    with gzip.open(folder / "f-bom-only.jsonl.gz", "wb") as fh:
        fh.write(bom)
    if too_large:
        (folder / "g-bom-too-large.jsonl").write_bytes(
            bom + b'{"x": "' + b"y" * (8 * 2**20 - 11) + b'"}\n' + body(lines[110:112]))


@pytest.mark.parametrize("split_bytes", [None, "16384"])
def test_a_byte_order_mark_on_line_1_of_a_file_is_quarantined_as_the_reference_does(spark, tmp_path,
                                                                                        split_bytes):
    """Hadoop's line reader drops a BOM at the start of a file (gzip too) before Spark sees it; the
    reference quarantines that line (BAD_ENCODING). Small splits: files are split and packed, so
    line 1 of a file need not be the first row of its task."""
    folder = tmp_path / "in"
    folder.mkdir()
    _bom_inputs(folder, too_large=split_bytes is None)
    if split_bytes:
        spark.conf.set("spark.sql.files.maxPartitionBytes", split_bytes)
    try:
        result = export(spark, resolve_inputs([str(folder)]), str(tmp_path / "out"))
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    want, counts = reference_triples([str(folder)], tmp_path)
    assert read_triples(tmp_path / "out") == want
    c = result.counts
    assert c["balanced"]
    for key in ("lines_read", "blank", "mapped", "quarantined", "quarantined_by_reason", "triples",
                "triples_by_source", "distinct_events"):
        assert c[key] == counts.as_dict()[key], key

    def records(paths):
        out = []
        for p in paths:
            for x in p.read_text(encoding="utf-8").splitlines():
                r = json.loads(x)
                out.append((Path(r["source"]).name, r["line"], r["reason"], r["detail"], r["raw"]))
        return sorted(out)

    got = records(sorted((tmp_path / "out" / "quarantine").glob("part-*.jsonl")))
    assert got == records([tmp_path / "ref-q.jsonl"])
    # in the reference's order, by file and line (ut42e #6: the lone BOMs' records came first)
    order = lambda p: [(Path(r["source"]).name, r["line"]) for r in map(json.loads, p.read_text(encoding="utf-8").splitlines())]
    (part,) = (tmp_path / "out" / "quarantine").glob("part-*.jsonl")
    assert order(part) == order(tmp_path / "ref-q.jsonl")
    boms = {(name, line) for name, line, reason, detail, raw in got if "byte order mark" in detail}
    assert boms == {("a-bom.jsonl", 1), ("a-bom.jsonl", 34), ("b-bom.jsonl.gz", 1), ("c-plain.jsonl", 31),
                    ("c-plain.jsonl", 33), ("d-bom-blank.jsonl", 1), ("e-bom-only.jsonl", 1),
                    ("f-bom-only.jsonl.gz", 1)}
    if split_bytes is None:
        assert ("g-bom-too-large.jsonl", 1, "TOO_LARGE") in {(n, line, reason) for n, line, reason, *_ in got}


def test_quarantine_records_come_in_the_order_the_reference_reads_the_files(spark, tmp_path):
    """rv43 #6: the records were sorted by file name; the reference reads the files in the order they
    were given, and a folder's by path parts (logs/ before logs-2024/), and writes its records so."""
    folder = tmp_path / "in"
    for name in ("z.jsonl", "a.jsonl", "d/logs/x.jsonl", "d/logs-2024/x.jsonl", "d/logs.jsonl"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("not json\n{}\n")
    (folder / "d" / "bom.jsonl").write_bytes(b"\xef\xbb\xbf")
    inputs = [str(folder / "z.jsonl"), str(folder / "d"), str(folder / "a.jsonl")]
    export(spark, resolve_inputs(inputs), str(tmp_path / "out"))
    reference_triples(inputs, tmp_path)
    order = lambda p: [(r["source"], r["line"]) for r in map(json.loads, p.read_text(encoding="utf-8").splitlines())]
    (part,) = (tmp_path / "out" / "quarantine").glob("part-*.jsonl")
    want = order(tmp_path / "ref-q.jsonl")
    assert [Path(s).name for s, _ in want][:3] == ["z.jsonl", "z.jsonl", "bom.jsonl"]
    assert order(part) == want


def test_a_bom_file_and_a_re_sent_event_id_export_as_the_reference_does(spark, tmp_path):
    """ut8b #1: a file starting with a BOM and one event id on two lines with different content: the
    duplicate-event pass filled a 4 GB heap while planning (InjectRuntimeFilter) on a 3-line input."""
    generate(tmp_path / "src.jsonl", events=40, seed=5, hostile_share=0, days=3)
    lines = (tmp_path / "src.jsonl").read_bytes().split(b"\n")[:-1]
    first, second = next((a, b) for a, b in zip(lines, lines[1:]) if b'"userName"' in b)
    again = json.loads(second)
    again["userName"] = "someone.else"
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\xef\xbb\xbf" + first + b"\n" + second + b"\n" + json.dumps(again).encode() + b"\n")
    result = export(spark, [local_input(src)], str(tmp_path / "out"))
    want, counts = reference_triples([str(src)], tmp_path)
    assert read_triples(tmp_path / "out") == want
    assert result.counts["quarantined_by_reason"] == counts.as_dict()["quarantined_by_reason"] == {
        "BAD_ENCODING": 1, "DUPLICATE_EVENT": 1}


def test_files_starting_with_a_bom_are_found_through_hadoop_too(spark, tmp_path):
    """Paths Spark reads through Hadoop (hdfs://, s3a://, or no scheme) are listed and their first
    bytes read through Hadoop's FileSystem and codecs; a folder without a BOM is passed on as given."""
    from changeprov.spark.job import find_boms

    folder = tmp_path / "in"
    folder.mkdir()
    _bom_inputs(folder, too_large=False)
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "x.jsonl").write_bytes(b"{}\n")
    found = find_boms(spark, [str(folder), str(clean)])
    name = lambda paths: sorted(p.rsplit("/", 1)[-1] for p in paths)  # noqa: E731
    assert name(found.bom) == ["a-bom.jsonl", "b-bom.jsonl.gz", "d-bom-blank.jsonl"]
    assert name(found.bom_only) == ["e-bom-only.jsonl", "f-bom-only.jsonl.gz"]
    assert name(found.plain[:-1]) == ["c-plain.jsonl"] and found.plain[-1] == str(clean)
    local = find_boms(spark, resolve_inputs([str(folder)]))
    assert (name(local.bom), name(local.bom_only), name(local.plain)) == (
        name(found.bom), name(found.bom_only), ["c-plain.jsonl"])


def test_hadoop_block_streams_with_a_large_first_block_are_not_taken_for_foreign(tmp_path):
    """rv44b #4: a Hadoop .lz4 whose first block is over 32 MB (one long line) was refused by its size."""
    from changeprov.spark.fs import local_input
    from changeprov.spark.job import refuse_foreign_blocks

    big = tmp_path / "big.jsonl.lz4"
    big.write_bytes((40 * 2**20).to_bytes(4, "big") + b"\x00" * 8)
    refuse_foreign_blocks([local_input(str(big))])


@pytest.mark.parametrize("name, data", [
    ("frames.jsonl.lz4", b"\x04\x22\x4d\x18" + b"\x00" * 40),  # the lz4 tool's frame format (its magic number)
    ("plain.jsonl.snappy", b'{"not": "snappy"}\n' * 20),
])
def test_an_lz4_or_snappy_input_not_in_hadoops_block_format_is_refused(spark, tmp_path, name, data):
    """ut44e #1: a .lz4 file from the lz4 tool gave no line and no error (exit 0, "balanced", its 305 lines
    lost); plain text named .snappy ran out of memory on a block size read from its first bytes."""
    (tmp_path / name).write_bytes(data)
    with pytest.raises(InputError, match=re.escape(f"{name}: not in Hadoop's .{name.rsplit('.', 1)[1]} block format")):
        export(spark, resolve_inputs([str(tmp_path / name)]), str(tmp_path / "out"))
    assert not any((tmp_path / "out").glob("_SUCCESS")) and not any((tmp_path / "out").glob("_staging-*"))


def test_a_local_input_of_some_bytes_and_no_line_read_is_refused(tmp_path):
    """The net under the check above: a plain or .lz4/.snappy file of some bytes from which no line was
    read would lose its lines; a gzip stream of nothing rightly has none, a file of only a BOM is counted
    apart."""
    import gzip

    from changeprov.spark.fs import local_input
    from changeprov.spark.job import _refuse_unread

    plain, hadoop, empty_gz, bom, empty_lz4 = (tmp_path / n for n in ("a.jsonl", "b.jsonl.lz4", "c.jsonl.gz", "d.jsonl",
                                                                      "e.jsonl.lz4"))
    plain.write_text("{}\n")
    hadoop.write_bytes(b"\x00\x00\x00\x08" + b"x" * 12)
    empty_gz.write_bytes(gzip.compress(b""))
    bom.write_bytes(b"\xef\xbb\xbf")
    empty_lz4.write_bytes(b"\x00" * 4)  # what Hadoop writes for an empty .lz4 (rv44b #3)
    inputs = [local_input(str(p)) for p in (plain, hadoop, empty_gz, bom, empty_lz4)]
    read = {inputs[0]: [(0, 1, 0)], inputs[1]: [(0, 1, 1)]}
    _refuse_unread(inputs, read, [inputs[3]])  # every file with bytes read, or rightly without a line
    with pytest.raises(InputError, match=r"b\.jsonl\.lz4: 16 bytes but no line read, so its lines would be lost: "
                                         r"Hadoop's \.lz4 codec reads only Hadoop's own block format"):
        _refuse_unread(inputs, {inputs[0]: [(0, 1, 0)]}, [inputs[3]])
    with pytest.raises(InputError, match=r"a\.jsonl: 3 bytes but no line read"):
        _refuse_unread(inputs, {}, [inputs[3]])


def test_a_corrupt_gzip_input_fails_the_job_naming_the_file_and_the_cause(spark, tmp_path):
    from changeprov.errors import SparkError

    (tmp_path / "fake.jsonl.gz").write_bytes(b"not gzip at all\n")
    with pytest.raises(SparkError) as err:
        export(spark, resolve_inputs([str(tmp_path / "fake.jsonl.gz")]), str(tmp_path / "out"))
    message = str(err.value)
    assert message.startswith("the export job failed, nothing was committed: cannot read input file /"), message
    assert f"{tmp_path}/fake.jsonl.gz: " in message and "FAILED_READ_FILE" not in message  # ut6a #8: no Spark jargon
    assert message.endswith("(corrupt or truncated? fix it or move it out of the inputs, and run again)")
    assert "\n" not in message
    assert not (tmp_path / "out" / "_SUCCESS").exists()


def test_a_truncated_gzip_input_fails_the_job_even_where_spark_skips_corrupt_files(spark, tmp_path):
    """ut45b #2: with spark.sql.files.ignoreCorruptFiles=true (a cluster's spark-defaults.conf often sets
    it) a .gz cut short lost its tail without a word: exit 0, "balanced"."""
    from changeprov.errors import SparkError

    src = tmp_path / "e.jsonl"
    generate(src, events=300, seed=21, hostile_share=0, days=2)
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(src.read_bytes())[:3000])
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        with pytest.raises(SparkError, match=r"cannot read input file .*cut\.jsonl\.gz"):
            export(spark, resolve_inputs([str(tmp_path / "cut.jsonl.gz")]), str(tmp_path / "out"))
        assert spark.conf.get("spark.sql.files.ignoreCorruptFiles") == "true"  # the caller's, put back
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")
    assert not (tmp_path / "out" / "_SUCCESS").exists()


def test_quarantined_raw_text_is_capped_as_the_reference_caps_it(spark):
    # every way the 64 KiB cut can fall: between characters, or inside a 2-, 3- or 4-byte character
    from changeprov.mapping.decode import RAW_LIMIT, Quarantine
    from changeprov.spark.job import capped_raw

    texts = ["x" * 10, "x" * RAW_LIMIT, "\ufeff" + "x" * RAW_LIMIT]
    for char in ("é", "€", "😀"):
        for pad in range(len(char.encode())):
            texts.append("x" * pad + char * (RAW_LIMIT // len(char.encode()) + 2))
    got = [r[0] for r in spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, t string")
           .orderBy("i").select(capped_raw(F.col("t"))).collect()]
    want = [json.loads(Quarantine("X", "", "", 1, t).to_json())["raw"] for t in texts]
    assert [len(g) for g in got] == [len(w) for w in want]
    assert got == want


ODD_NAMES = ["a b.jsonl", "été.jsonl", "q?x.jsonl", "hash#x.jsonl", "pct%20x.jsonl", "br[1].jsonl", "cur{a,b}.jsonl",
             "star*.jsonl", "colon:x.jsonl", "back\\slash.jsonl", "plus+x.jsonl"]


def test_local_file_names_with_spaces_escapes_and_glob_characters_are_read_as_named(spark, tmp_path):
    """Spark took ``file:`` URIs literally (``a%20b``) and globbed ``[1]``/``*``: such inputs were
    "not found". Each file here holds two events and a bad line; a file starting with a BOM goes
    through the other read path. Triples and quarantine records (file names included) are the reference's."""
    lines = list(generate_lines(events=2 * len(ODD_NAMES) + 2))
    folder = tmp_path / "my events"
    folder.mkdir()
    for i, name in enumerate(ODD_NAMES):
        (folder / name).write_bytes(lines[2 * i] + b"\n" + b"{not json\n" + lines[2 * i + 1] + b"\n")
    (folder / "bom é.jsonl").write_bytes(b"\xef\xbb\xbf" + lines[-2] + b"\n" + lines[-1] + b"\n")
    out = tmp_path / "my export"  # and an output folder with a space
    result = export(spark, resolve_inputs([str(folder)]), str(out))
    want, counts = reference_triples([str(folder)], tmp_path)
    assert read_triples(out) == want
    assert result.counts["mapped"] == counts.as_dict()["mapped"] == 2 * len(ODD_NAMES) + 1

    def records(paths):
        return sorted((r["source"], r["line"], r["reason"], r["raw"]) for p in paths
                      for r in map(json.loads, p.read_text(encoding="utf-8").splitlines()))

    got = records(sorted((out / "quarantine").glob("part-*.jsonl")))
    assert got == records([tmp_path / "ref-q.jsonl"])
    assert {src for src, *_ in got} == {display_name(folder / n) for n in ODD_NAMES + ["bom é.jsonl"]}


def generate_lines(*, events: int) -> list[bytes]:
    """``events`` valid event lines (no hostile ones) from the generator."""
    from changeprov.generate import iter_lines

    return [line.encode("utf-8") for _family, line in iter_lines(events, seed=3, hostile_share=0)][:events]


def test_an_output_folder_inside_an_input_folder_is_not_read_as_input(tmp_path):
    """A user's second run of `export data --out data/prov` read the first run's manifest and
    quarantine as events: lines read went from 7 to 46, and the quarantine grew on every run."""
    data = tmp_path / "data"
    (data / "prov" / "quarantine").mkdir(parents=True)
    (data / "ev.jsonl").write_text("{}\n")
    (data / "prov" / "manifest.json").write_text("{}\n")
    (data / "prov" / "quarantine" / "part-00000.jsonl").write_text("{}\n")
    inputs = resolve_inputs([str(data)])
    assert len(inputs) == 3
    assert outside_output(inputs, str(data / "prov")) == ([local_input(data / "ev.jsonl")], 2)
    assert outside_output(inputs, "s3a://bucket/prov") == (inputs, 0)
    with pytest.raises(InputError, match="every input file is under --out"):
        outside_output(resolve_inputs([str(data / "prov")]), str(data / "prov"))


@pytest.mark.parametrize("text, lines, compress", [('[1]\n\n{"eventType": "entityCreated"}\n', 3, "none"),
                                                   ('[1]\n\n{"eventType": "entityCreated"}\n', 3, "gzip"),
                                                   ("", 0, "none")])
def test_an_export_with_no_triples_is_an_empty_graph_that_checks_and_loads(spark, shared_dir, tmp_path, text, lines,
                                                                           compress):
    """A user's test: a day of only bad lines exported fine but failed the strict check ("no files
    matched"), as a folder with no files is not a graph to the checker. Another: a 0-byte file (an
    empty hourly dump) ended in a Java traceback, as Spark ran no task to report the counts."""
    from changeprov.sparql.loader import load_export
    from changeprov.sparql.stores import open_store

    src = tmp_path / "day.jsonl"
    src.write_text(text)
    out = tmp_path / "out"
    result = export(spark, resolve_inputs([str(src)]), str(out), compress=compress)
    assert result.counts["lines_read"] == lines and result.counts["triples"] == 0 and result.counts["balanced"]
    assert not [p.name for p in out.iterdir() if p.name.startswith("_staging")]
    suffix = ".nt.gz" if compress == "gzip" else ".nt"
    assert sorted(p.name for p in (out / "triples").iterdir()) == ["_SUCCESS", f"part-00000{suffix}"]
    check = subprocess.run([sys.executable, str(shared_dir / "conformance" / "check_ntriples.py"), "check",
                            str(out / "triples"), "--require-success"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]
    with open_store("embedded", path=tmp_path / "db", create=True) as store:
        assert load_export(store, out).triples_added == 0
    # appending a day with triples keeps the committed empty file and adds the partitions
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"".join(line + b"\n" for line in generate_lines(events=20)))
    export(spark, resolve_inputs([str(good)]), str(out), mode="append", compress=compress)
    assert (out / "triples" / f"part-00000{suffix}").exists() and list((out / "triples").glob("source=*/date=*/part-*"))


def test_compressed_inputs_give_the_reference_mappers_triples_and_quarantine(spark, tmp_path):
    """`.GZ`, `.bz2` and `.deflate` (Hadoop's codecs, matched in any case) read as `map` reads them."""
    import bz2
    import gzip
    import zlib

    lines = b"".join(line + b"\n" for line in generate_lines(events=30)) + b"[1]\n\n"
    folder = tmp_path / "in"
    folder.mkdir()
    for name, compress in (("a.jsonl.GZ", gzip.compress), ("b.jsonl.bz2", bz2.compress),
                           ("c.jsonl.Deflate", zlib.compress)):
        (folder / name).write_bytes(compress(lines))
    result = export(spark, resolve_inputs([str(folder)]), str(tmp_path / "out"))
    want, counts = reference_triples([str(folder)], tmp_path)
    assert counts.lines_read == result.counts["lines_read"] == 96
    assert read_triples(tmp_path / "out") == want
    records = sorted((r["source"], r["line"], r["reason"]) for part in (tmp_path / "out" / "quarantine").glob("part-*")
                     for r in map(json.loads, part.read_text().splitlines()))
    assert records == sorted((r["source"], r["line"], r["reason"])
                             for r in map(json.loads, (tmp_path / "ref-q.jsonl").read_text().splitlines()))


def test_an_event_id_with_different_content_is_quarantined_after_its_first_line_as_the_reference_does(
        spark, tmp_path):
    """One id on lines that map to different triples: the first line in the reference's reading
    order (files by name, then line) is kept and the later ones quarantined as DUPLICATE_EVENT. Spark
    reads the larger file b first, so its running ids do not give that order. A losing line has a
    date of its own: its partition from the first pass must not survive the second."""
    def update(entity, *, ms=1_700_000_000_000, user="alice"):
        return json.dumps({"id": "dup-1", "eventType": "entityUpdated", "entityType": "table", "entityId": entity,
                           "timestamp": ms, "userName": user, "currentVersion": 0.2, "previousVersion": 0.1})

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text(update("e-a") + "\n" + update("e-b", ms=1_800_000_000_000) + "\n")
    padding = [line.decode() for line in generate_lines(events=40)]
    (folder / "b.jsonl").write_text("\n".join([update("e-c", user="bob"), *padding, update("e-a")]) + "\n")
    result = export(spark, resolve_inputs([str(folder)]), str(tmp_path / "out"))
    want, counts = reference_triples([str(folder)], tmp_path)
    assert read_triples(tmp_path / "out") == want
    assert result.counts["quarantined_by_reason"] == dict(counts.quarantined) == {"DUPLICATE_EVENT": 2}
    assert result.counts["distinct_events"] == counts.events and result.counts["triples"] == len(want)
    assert not list((tmp_path / "out" / "triples").glob("*/date=2027-*")), "the loser's date partition survived"
    got = [json.loads(x) for part in sorted((tmp_path / "out" / "quarantine").glob("part-*"))
           for x in part.read_text().splitlines()]
    assert got == [json.loads(x) for x in (tmp_path / "ref-q.jsonl").read_text().splitlines()]
    assert [(r["source"], r["line"]) for r in got] == [(display_name(folder / "a.jsonl"), 2),
                                                        (display_name(folder / "b.jsonl"), 1)]


def test_a_zstd_input_is_read_and_its_byte_order_mark_found_without_hadoops_native_library(spark, tmp_path):
    """A user's test: `export x.jsonl.zst` failed in the byte order mark check ("o65.createInputStream"):
    Hadoop's zstd codec needs a native library that pip's pyspark lacks, though Spark reads the file."""
    from changeprov.mapping.decode import BOM

    lines = BOM + b"".join(line + b"\n" for line in generate_lines(events=5))
    packed = tmp_path / "events.jsonl.zst"
    packed.write_bytes(bytes(spark._jvm.com.github.luben.zstd.Zstd.compress(bytearray(lines))))
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "events.jsonl").write_bytes(lines)
    result = export(spark, resolve_inputs([str(packed)]), str(tmp_path / "out"))
    want, counts = reference_triples([str(tmp_path / "plain")], tmp_path)
    assert read_triples(tmp_path / "out") == want and counts.mapped == 4
    assert result.counts["quarantined_by_reason"] == dict(counts.quarantined) == {"BAD_ENCODING": 1}


def test_an_export_refuses_a_folder_another_export_is_writing(spark, tmp_path):
    """ut8b #4: a second export into the same --out deleted the first one's staging as a dead run's
    leftovers; both failed, the second with a traceback. A live run's lock is refused; a dead one's
    (a process of this host that is gone) is taken over."""
    import socket

    from changeprov.exportlayout import LOCK
    from changeprov.spark.exportlock import acquire_lock, release_lock

    fs = FileSystem(spark, str(tmp_path / "out"))
    acquire_lock(fs, str(tmp_path / "out"), "a" * 32)
    held = json.loads((tmp_path / "out" / LOCK).read_text())
    assert held["pid"] == os.getpid() and held["run_id"] == "a" * 32
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:  # another live process's run
        (tmp_path / "out" / LOCK).write_text(json.dumps(dict(held, pid=running.pid)))
        with pytest.raises(InputError, match=r"another export \(run aaaaaaaaaaaa, pid \d+ on .*\) is writing into "
                                             r".*: let it finish; if it is not running any more, delete .*_export.lock"):
            acquire_lock(fs, str(tmp_path / "out"), "b" * 32)
        # ut23 #8: the command refuses before Spark starts, not after a second JVM's ~20 s
        from changeprov.spark.exportlock import refuse_if_busy

        with pytest.raises(InputError, match=r"another export \(run aaaaaaaaaaaa"):
            refuse_if_busy(str(tmp_path / "out"))
    finally:
        running.kill()
        running.wait()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "out" / LOCK).write_text(json.dumps({"run_id": "c" * 32, "host": socket.gethostname(),
                                                     "pid": gone.pid, "started": "x"}))
    acquire_lock(fs, str(tmp_path / "out"), "d" * 32)
    assert json.loads((tmp_path / "out" / LOCK).read_text())["run_id"] == "d" * 32
    # a run releases only its own lock (review: a run whose lock was taken over removed the new one)
    release_lock(fs, "a" * 32)
    assert (tmp_path / "out" / LOCK).exists()
    release_lock(fs, "d" * 32)
    assert not (tmp_path / "out" / LOCK).exists()
    # this host and this very pid, another run: a restarted container's leftover, taken over
    (tmp_path / "out" / LOCK).write_text(json.dumps({"run_id": "e" * 32, "host": socket.gethostname(),
                                                     "pid": os.getpid(), "started": "x"}))
    acquire_lock(fs, str(tmp_path / "out"), "f" * 32)
    # a lock that is no JSON object: refused, saying it cannot be read
    (tmp_path / "out" / LOCK).write_text("[]")
    with pytest.raises(InputError, match="_export.lock cannot be read"):
        acquire_lock(fs, str(tmp_path / "out"), "g" * 32)


def test_the_library_example_in_the_docs_runs_as_written(spark, tmp_path, capsys):
    import gzip
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "library.md").read_text(encoding="utf-8")
    code = re.search(r"## Exporting with Spark\n.*?```python\n(.*?)```", text, flags=re.S).group(1)
    (tmp_path / "events").mkdir()
    generate(tmp_path / "plain.jsonl", events=120, seed=4, hostile_share=0.05, days=3)
    (tmp_path / "events" / "a.jsonl.gz").write_bytes(gzip.compress((tmp_path / "plain.jsonl").read_bytes()))
    assert 'base = "/data/changeprov"' in code
    exec(compile(code.replace('base = "/data/changeprov"', f"base = {str(tmp_path)!r}"), "docs/library.md", "exec"), {})
    assert (tmp_path / "out" / "_SUCCESS").exists()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    c = manifest["counts"]
    assert c["balanced"] and c["lines_read"] == 120
    assert capsys.readouterr().out.strip().endswith(manifest["run_id"])


def test_a_library_export_into_a_file_is_refused_before_any_work(spark, tmp_path):
    """The command refused an --out that is a file before Spark started; export() itself, as a notebook
    calls it, failed only in Spark's writer after mapping everything (mq1 #9)."""
    (tmp_path / "events.jsonl").write_text("{}\n")
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(InputError, match="a-file is a file, not a folder"):
        export(spark, [str(tmp_path / "events.jsonl")], str(tmp_path / "a-file" / "out"))
    assert not (tmp_path / "a-file.lock").exists() and (tmp_path / "a-file").read_text() == "x"


# last in the module: the cluster run (cluster_run) works while the tests above run
def test_spark_submit_on_a_local_cluster_gives_the_same_triples(spark, cluster_run, tmp_path):
    """Separate executor JVMs: the job must not need changeprov (or Python) on the executors (the run
    itself: the cluster_run fixture)."""
    path, cluster, proc = cluster_run
    local = export(spark, resolve_inputs([str(path)]), str(tmp_path / "local"))
    assert local.counts["quarantined_by_reason"].get("DUPLICATE_EVENT") and local.counts["quarantined"] >= 2
    proc.wait(timeout=600)
    assert proc.returncode == 0, (cluster.parent / "submit.log").read_text()[-3000:]
    assert read_triples(cluster) == read_triples(tmp_path / "local")
    quarantine = lambda out: sorted(line for f in sorted((out / "quarantine").glob("*.jsonl"))  # noqa: E731
                                    for line in f.read_text().splitlines())
    assert quarantine(cluster) == quarantine(tmp_path / "local") != []


def test_a_failed_library_export_removes_the_folder_it_created(spark, tmp_path):
    """ut48a #4: the command removed it (ut47b #7), a notebook's export() left it; a folder that was
    there stays."""
    with pytest.raises(InputError, match="cannot read the input"):
        export(spark, [str(tmp_path / "missing.jsonl")], str(tmp_path / "o"))
    assert not (tmp_path / "o").exists()
    (tmp_path / "mine").mkdir()
    with pytest.raises(InputError, match="cannot read the input"):
        export(spark, [str(tmp_path / "missing.jsonl")], str(tmp_path / "mine"))
    assert (tmp_path / "mine").is_dir() and not any((tmp_path / "mine").iterdir())
