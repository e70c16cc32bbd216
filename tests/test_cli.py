"""The CLI shell: version, help, exit codes, and the one-line Java error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from py4j.protocol import Py4JNetworkError

from changeprov import __version__
from changeprov.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"changeprov {__version__}"


def test_help_lists_the_commands(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for name in ("demo", "export", "generate", "map", "vocab"):
        assert name in out


def test_bad_input_is_exit_2_with_a_message_not_a_traceback(tmp_path, capsys):
    assert main(["map", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.nt"),
                 "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "Traceback" not in err


@pytest.mark.parametrize("error, said", [
    (OSError(39, "Directory not empty"), "changeprov map: error: [Errno 39] Directory not empty"),
    (KeyError("x"), "changeprov map: internal error (a bug in changeprov, please report it): KeyError: 'x' "
                    "(set CHANGEPROV_TRACEBACK=1 to see where)"),
    # rv29 #6: the JVM gone (OOM-killed) outside a job is not a bug of ours
    (Py4JNetworkError("Answer from Java side is empty\n\tat frame"),
     "changeprov map: error: the Spark JVM failed or stopped (out of memory, killed?): Py4JNetworkError: "
     "Answer from Java side is empty (set CHANGEPROV_TRACEBACK=1 to see where)"),
])
def test_an_unexpected_error_is_exit_2_in_one_line(error, said, tmp_path, monkeypatch, capsys):
    """ut8b #4: a file system error no command checked for ended with a traceback and exit 1, which
    means findings."""
    import changeprov.mapping.reference as reference

    def fail(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(reference, "map_to_files", fail)
    assert main(["map", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o.nt"),
                 "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == said
    monkeypatch.setenv("CHANGEPROV_TRACEBACK", "1")  # the traceback, on request, still exit 2 (ut47b #1: it was 1)
    assert main(["map", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o.nt"),
                 "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and f"{type(error).__name__}" in err
    assert err.strip().endswith(said)


@pytest.mark.parametrize("family, warned", [("openmetadata", True), ("datahub-ece", False), ("auto", False)])
def test_map_says_how_many_lines_a_forced_family_quarantined(tmp_path, capsys, family, warned):
    """ut43b #5: --family openmetadata on a mixed log quarantined 459 of 1,000 lines with exit 0 and no word."""
    line = ('{"entityType":"dataset","entityUrn":"urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)",'
            '"category":"TAG","operation":"ADD","modifier":"urn:li:tag:PII",'
            '"auditStamp":{"time":1709546400000,"actor":"urn:li:corpuser:a"},"parameters":{"tagUrn":"urn:li:tag:PII"}}')
    (tmp_path / "x.jsonl").write_text(line + "\n")
    assert main(["map", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o.nt"),
                 "--quarantine", str(tmp_path / "q.jsonl"), "--family", family]) == 0
    err = capsys.readouterr().err
    assert ("1 of 1 lines (100.0%) are not openmetadata events and were quarantined as UNKNOWN_FAMILY" in err) == warned, err
    assert "none of the 1 lines was mapped" not in err, err  # ua51 #6: the note above says why, once


def test_a_py4j_error_raised_while_handling_ctrl_c_is_an_interruption(tmp_path, monkeypatch, capsys):
    """test_ctrl_c_during_an_export… failed now and then: py4j's clean-up after the KeyboardInterrupt
    raised "Gateway must be connected to send cancel cmd" (the JVM had the SIGINT too), and that
    error, not the interruption, reached the user."""
    from py4j.protocol import Py4JError

    import changeprov.mapping.reference as reference

    def fail(*_args, **_kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise Py4JError("Gateway must be connected to send cancel cmd.")

    monkeypatch.setattr(reference, "map_to_files", fail)
    assert main(["map", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o.nt"),
                 "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    assert capsys.readouterr().err == "changeprov map: interrupted\n"


@pytest.mark.parametrize("given", ["_events.jsonl", "*.jsonl", ".hidden.jsonl"])
def test_export_refuses_a_file_spark_would_skip(tmp_path, capsys, given):
    """ut10b #1: Spark drops a file whose name starts with '_' or '.' even when it is named or matched
    by a glob: the export read none of its lines, listed it as an input and called itself balanced."""
    for name in ("_events.jsonl", ".hidden.jsonl", "ok.jsonl"):
        (tmp_path / name).write_text("{}\n")
    assert main(["export", str(tmp_path / given), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Spark skips a file whose name starts with '_' or '.' even when it is named" in err, err
    assert not (tmp_path / "out").exists()


def test_export_into_the_triples_folder_of_an_export_is_refused(tmp_path, capsys):
    """ut9a #3: --out EXPORT/triples (a tab-completion slip) was taken for an export to replace."""
    (tmp_path / "exp" / "triples").mkdir(parents=True)
    (tmp_path / "exp" / "manifest.json").write_text("{}")
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "exp" / "triples")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"changeprov export: error: --out {tmp_path / 'exp' / 'triples'} is the triples folder of the export "
        f"{tmp_path / 'exp'}: give the export's folder itself")


@pytest.mark.parametrize("names, said", [
    (["in.jsonl"], "in.jsonl"),  # the folder of its own input (ut47b #3)
    (["CURRENT", "LOCK", "MANIFEST-000005", "000004.log"], "000004.log, CURRENT, LOCK and 1 more"),  # a pyoxigraph store
    (["notes.txt", "_export.lock", "_staging-" + "0" * 32], "notes.txt")])
def test_export_into_a_folder_of_other_files_is_refused_before_spark_starts(tmp_path, capsys, names, said):
    """ut47b #3: an export into a pyoxigraph store or into its input's folder wrote beside their files
    and exited 0 (the input folder then failed every later run that read it)."""
    out = tmp_path / "out"
    out.mkdir()
    for name in names:
        (out / name).write_text("x\n")
    (tmp_path / "in.jsonl").write_text("{}\n")
    before = sorted(p.name for p in out.iterdir())
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"changeprov export: error: --out {out} holds files that no changeprov export writes ({said}): it is no "
        "export folder; give a new or empty folder, or an earlier export's")
    assert sorted(p.name for p in out.iterdir()) == before


def test_files_beside_a_committed_export_stay_allowed(tmp_path):
    from changeprov.spark.commit import not_an_export

    assert not_an_export(["README.md", "manifest.json", "_SUCCESS", "triples", "quarantine"]) == []
    assert not_an_export(["_SUCCESS", "notes.txt"]) == []
    assert not_an_export([]) == [] and not_an_export(["_temporary"]) == ["_temporary"]


@pytest.mark.parametrize("name, char, what", [("O[1]", "[", "a file name pattern"), ("a{b,c}", "{", "a file name pattern"),
                                              ("q?", "?", "a file name pattern"), ("x:y", ":", "a URI scheme"),
                                              ("back\\slash", "\\", "a file name pattern")])
def test_export_refuses_an_out_folder_hadoop_would_read_as_a_pattern(tmp_path, capsys, monkeypatch, name, char, what):
    """ut47b #1 #2: such an --out failed at the commit, after the whole job, as "internal error"."""
    (tmp_path / "in.jsonl").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    for out in (str(tmp_path / name), name):  # also relative: Hadoop makes it absolute
        assert main(["export", str(tmp_path / "in.jsonl"), "--out", out]) == 2
        assert capsys.readouterr().err.strip() == (
            f"changeprov export: error: --out {out}: the folder's path holds {char!r}, which Hadoop reads as {what} "
            "where the export reads its own files back: choose a folder whose path has none of : [ ] { } * ? \\")
        assert not (tmp_path / name).exists()


def _corrupt_gzip(data: bytes) -> bytes:
    """``data`` gzipped, with bytes in the middle of the deflate stream flipped: zlib fails mid-file."""
    import gzip

    raw = bytearray(gzip.compress(data))
    for i in range(200, 260):
        raw[i] ^= 0x55
    return bytes(raw)


@pytest.mark.parametrize("command", ["map", "load"])
def test_a_corrupt_gzip_input_is_exit_2_naming_the_file(tmp_path, capsys, command):
    """zlib.error is neither OSError nor EOFError: it escaped as a traceback with exit 1 ("findings")."""
    if command == "map":
        lines = b"".join(b'{"id":"e%d","eventType":"entityCreated","entityType":"table","entityId":"x",'
                         b'"timestamp":1700000000000,"entityFullyQualifiedName":"s.d.t%d"}\n' % (i, i)
                         for i in range(3000))
        (tmp_path / "bad.jsonl.gz").write_bytes(_corrupt_gzip(lines))
        argv = ["map", str(tmp_path / "bad.jsonl.gz"), "--out", str(tmp_path / "o.nt"),
                "--quarantine", str(tmp_path / "q.jsonl")]
    else:
        from sparql_support import make_export

        nt = b"".join(b'<http://ex.org/%d> <http://ex.org/p> "%d" .\n' % (i, i) for i in range(20000))
        export = make_export(tmp_path / "export", {"x/2024-01-01/part-00000": nt}, gz=True)
        part = next(export.rglob("part-00000.nt.gz"))
        part.write_bytes(_corrupt_gzip(nt))
        argv = ["load", str(export), "--store", str(tmp_path / "store")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl.gz" in err or "part-00000.nt.gz" in err
    assert "cannot read" in err and "Traceback" not in err


@pytest.mark.parametrize("out", ["events.nt", "events.nt/sub", "file://{tmp}/events.nt"])
def test_export_to_a_file_fails_before_spark_starts(tmp_path, capsys, monkeypatch, out):
    import changeprov.spark.session as session

    def no_spark(**_kwargs):
        raise AssertionError("Spark started")

    monkeypatch.setattr(session, "get_session", no_spark)
    (tmp_path / "events.nt").write_text("x\n")
    (tmp_path / "in.jsonl").write_text("\n")
    target = out.format(tmp=tmp_path) if "://" in out else str(tmp_path / out)
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", target]) == 2
    assert "events.nt is a file, not a folder" in capsys.readouterr().err


def test_missing_java_is_one_line_saying_what_to_install(tmp_path):
    env = {"PATH": str(tmp_path), "JAVA_HOME": str(tmp_path / "no-java")}
    proc = subprocess.run([sys.executable, "-m", "changeprov.javacheck"], env=env, capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Java 17" in lines[0] and "install" in lines[0]


def test_reference_map_command_counts_add_up(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text('{"eventType":"entityCreated","entityType":"table","entityId":"a","timestamp":1}\n\n[1]\n')
    assert main(["map", str(src), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl"),
                 "--format", "json"]) == 0
    import json

    counts = json.loads(capsys.readouterr().out)
    assert (counts["lines_read"], counts["blank"], counts["mapped"], counts["quarantined"]) == (3, 1, 1, 1)
    assert json.loads((tmp_path / "q.jsonl").read_text())["line"] == 3


def test_reference_mapper_sorts_in_bounded_runs(tmp_path):
    # the external sort (runs of a few lines, merged) writes the same bytes and counts as one run
    from changeprov.generate import generate
    from changeprov.mapping.reference import map_to_files

    src = tmp_path / "events.jsonl"
    generate(src, events=300, seed=5, days=3)
    one = map_to_files([str(src)], tmp_path / "one.nt", tmp_path / "q1.jsonl")
    many = map_to_files([str(src)], tmp_path / "many.nt", tmp_path / "q2.jsonl", run_lines=50)
    assert one.as_dict() == many.as_dict() and one.balanced()
    data = (tmp_path / "many.nt").read_bytes()
    assert data == (tmp_path / "one.nt").read_bytes()
    lines = data.splitlines()
    assert lines == sorted(set(lines)) and len(lines) > 1000
    assert (tmp_path / "q1.jsonl").read_bytes() == (tmp_path / "q2.jsonl").read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [], "the runs are cleaned up"


def test_a_reader_that_stops_early_is_no_error():
    # `changeprov query --list | head -1`: the listing (~10 KB) outgrows stdout's buffer, so the
    # write after the reader has gone fails with EPIPE
    proc = subprocess.Popen([sys.executable, "-m", "changeprov.cli", "query", "--list"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


def _wait_for(predicate, proc: subprocess.Popen, what: str, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(0.05)


def test_sigterm_ends_a_run_like_ctrl_c_and_leaves_no_temporary_file(tmp_path):
    """A run stopped by SIGTERM (a scheduler, `kill`) left its half-written `.NAME.….tmp` beside the
    output: Python's default SIGTERM ends the process without running any cleanup."""
    import signal

    out = tmp_path / "events.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "changeprov.cli", "generate", "--events", "5000000", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: any(p.name.endswith(".tmp") for p in tmp_path.iterdir()), proc, "temporary file")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (2, "changeprov generate: terminated\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spark
@pytest.mark.slow
def test_ctrl_c_during_an_export_is_one_line_not_py4j_tracebacks(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) during the Spark job printed
    four py4j tracebacks: PySpark's handler cancels the jobs through py4j while the main thread waits
    in another py4j call, and py4j logs both failures with their tracebacks."""
    import os
    import signal

    events = tmp_path / "events.jsonl"
    assert main(["generate", "--events", "50000", "--seed", "3", "--out", str(events)]) == 0
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "changeprov.cli", "export", str(events), "--out",
                                 str(tmp_path / "out")], stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        _wait_for(lambda: "[export] mapping" in log.read_text(), proc, "mapping step", timeout=300)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
    text = log.read_text()
    assert proc.returncode == 2, text
    assert "Traceback" not in text and "ERROR:root" not in text, text
    assert "\tat org.apache" not in text, text  # ut8b #3: a cancelled task's listener's stack trace
    assert text.rstrip("\n").splitlines()[-1] == "changeprov export: interrupted"
    assert not (tmp_path / "out" / "_SUCCESS").exists()


def test_export_to_a_folder_it_cannot_write_in_fails_before_spark_starts(tmp_path, capsys, monkeypatch):
    """ut43b #3: a read-only --out failed after Spark had started, as '[Errno 1] Operation not permitted'."""
    import changeprov.spark.session as session

    def no_spark(**_kwargs):
        raise AssertionError("Spark started")

    monkeypatch.setattr(session, "get_session", no_spark)
    (tmp_path / "in.jsonl").write_text("\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    immutable = False
    if os.access(locked, os.W_OK):  # root: file modes do not stop it, an immutable folder does
        immutable = subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode == 0
        if not immutable:
            pytest.skip("no way to make a folder this process cannot write in (root without chattr)")
    try:
        assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(locked / "sub")]) == 2
        err = capsys.readouterr().err
        assert f"--out {locked / 'sub'}: cannot write in {locked}: " in err and "Errno" not in err, err
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(locked)], check=True)
        locked.chmod(0o755)


@pytest.mark.parametrize("argv", [
    ["generate", "--events", "5", "--out", "{d}/"],
    ["map", "{d}/in.jsonl", "--out", "{d}/out/", "--quarantine", "{d}/q.jsonl"],
    ["map", "{d}/in.jsonl", "--out", "{d}/o.nt", "--quarantine", "{d}/q/"],
    ["audit", "--store", "{d}/db", "--out", "{d}/report/"],
])
def test_an_output_file_ending_in_a_slash_is_refused(tmp_path, capsys, argv):
    """ut6a #9: `--out dir/` wrote a file named dir (pathlib drops the trailing slash)."""
    (tmp_path / "in.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main([a.format(d=tmp_path) for a in argv])
    assert exit_.value.code == 2
    assert "ends with '/', so it names a folder: name a file to write" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_the_cli_offers_what_the_library_knows():
    """mq1 #4: the commands' choices were written out by hand beside the library's own lists (the CLI
    imports the library lazily, so the lists cannot be read there without slowing every command)."""
    import argparse

    from changeprov.cli import build_parser
    from changeprov.exportlayout import COMPRESSIONS, MODES
    from changeprov.mapping.mapper import MAPPERS
    from changeprov.mapping.vocab import rules
    from changeprov.spark.family import mappers
    from changeprov.sparql.check import GROUPS
    from changeprov.sparql.describe import DESCRIBE_FORMATS
    from changeprov.sparql.formats import FORMATS

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices

    def choices(command: str, option: str) -> tuple:
        return tuple(next(a for a in commands[command]._actions if option in a.option_strings).choices)

    assert set(MAPPERS) == set(mappers()) == set(rules()["families"])
    assert choices("map", "--family") == choices("export", "--family") == ("auto", *rules()["families"])
    assert (choices("export", "--mode"), choices("export", "--compress")) == (MODES, COMPRESSIONS)
    assert choices("query", "--format") == FORMATS and choices("describe", "--format") == DESCRIBE_FORMATS
    assert choices("check", "--only") == GROUPS


@pytest.mark.parametrize("argv, option", [
    (["query", "deleted-entities", "--store", "{tmp}/a", "--store", "{tmp}/b"], "--store"),
    (["query", "deleted-entities", "--store", "{tmp}/a", "--format", "csv", "--format", "json"], "--format"),
    (["generate", "--events", "5", "--events", "6", "--out", "{tmp}/e.jsonl"], "--events"),
    (["map", "{tmp}/e.jsonl", "--out", "{tmp}/a.nt", "--out", "{tmp}/b.nt", "--quarantine", "{tmp}/q.jsonl"], "--out"),
])
def test_a_single_valued_option_given_twice_is_refused(tmp_path, capsys, argv, option):
    """ut42d #8: argparse keeps the last value, so `--store a … --store b` queried b without a word."""
    with pytest.raises(SystemExit) as exc:
        main([a.format(tmp=tmp_path) for a in argv])
    assert exc.value.code == 2
    assert f"argument {option}: given twice" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_given_twice_names_no_value_an_endpoint_key_included(capsys):
    """rv44 #3: the refusal repeated both values, API keys in endpoint URLs included."""
    with pytest.raises(SystemExit):
        main(["query", "deleted-entities", "--endpoint", "http://h/q?apikey=S3CR3T", "--endpoint", "http://h/q?apikey=OTHER"])
    err = capsys.readouterr().err
    assert "argument --endpoint: given twice, with different values: give it once" in err
    assert "S3CR3T" not in err and "OTHER" not in err


def test_repeatable_options_flags_and_positionals_still_parse():
    """The once-only action replaces argparse's store; append (--param, --only, --conf), store_true and
    positionals must not be touched by it."""
    from changeprov.cli import build_parser

    args = build_parser().parse_args(["query", "entity-state", "--param", "entity=a", "--param", "version=0.1",
                                      "--allow-service", "--allow-service", "--store", "s", "--store", "s"])
    assert args.param == ["entity=a", "version=0.1"] and args.allow_service and args.store == "s" and args.name == "entity-state"
    args = build_parser().parse_args(["check", "--only", "shacl", "--only", "prov"])
    assert args.only == ["shacl", "prov"]
    args = build_parser().parse_args(["export", "a.jsonl", "b.jsonl", "--out", "o", "--conf", "a=1", "--conf", "b=2"])
    assert args.inputs == ["a.jsonl", "b.jsonl"] and args.conf == ["a=1", "b=2"]


@pytest.mark.parametrize("given, tty, every", [([], False, 30.0), (["--status-every", "2.5"], False, 2.5),
                                               (["--status-every", "0"], False, 0.0), ([], True, 0.0),
                                               (["--status-every", "5"], True, 0.0)])
def test_export_status_every_is_for_logs_only(given, tty, every):
    """ut46d #2: a log gets a stage line every --status-every seconds; a terminal Spark's progress bar."""
    from changeprov.cli import build_parser
    from changeprov.commands import status_every

    args = build_parser().parse_args(["export", "a.jsonl", "--out", "o", *given])
    assert status_every(args.status_every, tty=tty) == every


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "90000", "soon"])
def test_export_status_every_refuses_what_is_no_interval(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["export", "a.jsonl", "--out", "o", "--status-every", value])
    assert exc.value.code == 2
    assert f"argument --status-every: a number of seconds from 0 to 86400, got '{value}'" in capsys.readouterr().err


def test_a_single_valued_option_given_twice_alike_is_taken(tmp_path, capsys):
    out = tmp_path / "e.jsonl"
    assert main(["generate", "--events", "5", "--events", "5", "--out", str(out), "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 5


def test_an_export_whose_spark_jvm_is_gone_says_so(monkeypatch, capsys):
    """ut44e #2: after the JVM's out-of-memory handler stopped it, the export's last line was "error:
    [Errno 111] Connection refused" (py4j's gateway), which names no cause."""
    import dataclasses

    from changeprov import commands

    def gone(_args):
        raise ConnectionRefusedError(111, "Connection refused")
    monkeypatch.setattr(commands, "COMMANDS", tuple(dataclasses.replace(c, run=gone) if c.name == "export" else c
                                                    for c in commands.COMMANDS))
    assert main(["export", "in.jsonl", "--out", "o"]) == 2
    assert "error: the Spark JVM is gone (out of memory? if it printed OutOfMemoryError above" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["spark.driver.memory=lots", "spark.executor.memory=4gb", "spark.driver.memory="])
def test_a_bad_memory_size_is_refused_before_spark_starts(tmp_path, capsys, option):
    """ut45b #4: "--conf spark.driver.memory=lots" ended with "Java gateway process exited before sending its
    port number"; the JVM's reason (Invalid maximum heap size) was only in its output above."""
    (tmp_path / "in.jsonl").write_text("\n")
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "o"), "--conf", option]) == 2
    key, _, value = option.partition("=")
    assert f"--conf {key}={value!r}: a size such as 4g, 512m or 2048 (MiB)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_demo_refuses_a_workdir_of_other_files(tmp_path, capsys):
    """ut48a #1: the demo deleted DIR/store and replaced DIR/events.jsonl of a folder it had not made."""
    from changeprov.demo import MARK, check_workdir

    work = tmp_path / "w"
    (work / "store").mkdir(parents=True)
    (work / "store" / "precious.txt").write_text("notes")
    assert main(["demo", "--workdir", str(work)]) == 2
    err = capsys.readouterr().err
    assert "holds files the demo did not write (store)" in err and "Traceback" not in err
    assert (work / "store" / "precious.txt").read_text() == "notes"
    (work / MARK).write_text("")
    check_workdir(work)  # an earlier demo's folder
    check_workdir(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    check_workdir(tmp_path / "empty")


def test_export_refuses_a_bad_master_before_the_jvm_starts(tmp_path, capsys):
    """ut48a #2: Spark printed a Java stack trace, then "Java gateway process exited"."""
    (tmp_path / "in.jsonl").write_text("{}\n")
    assert main(["export", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "o"), "--master", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "master 'bogus' is no Spark master" in err and "Exception in thread" not in err
    assert not (tmp_path / "o").exists()


def test_map_warns_of_an_output_load_will_not_read_and_of_lines_none_of_which_mapped(tmp_path, capsys):
    """ut48a #5, #6: `--out m.ttl` mapped, then `load m.ttl` refused it; a Markdown file's lines, all
    MALFORMED_JSON, read as a run that succeeded."""
    (tmp_path / "notes.md").write_text("# notes\n\nnot an event\n")
    assert main(["map", str(tmp_path / "notes.md"), "--out", str(tmp_path / "m.ttl"),
                 "--quarantine", str(tmp_path / "q.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "none of the 3 lines was mapped (quarantined: MALFORMED_JSON 2): are these OpenMetadata" in err, err
    assert "m.ttl is N-Triples, named otherwise: `changeprov load` reads a file named *.nt" in err


def test_query_with_a_name_and_a_file_says_not_both(tmp_path, capsys):
    (tmp_path / "q.rq").write_text("SELECT * WHERE { ?s ?p ?o }\n")
    assert main(["query", "downstream", "--file", str(tmp_path / "q.rq"), "--store", str(tmp_path / "s")]) == 2
    assert "give a query NAME or --file QUERY.rq, not both ('downstream' and" in capsys.readouterr().err


def test_a_java_home_without_java_is_named(tmp_path, monkeypatch):
    from changeprov.errors import ConfigError
    from changeprov.javacheck import java_version

    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=f"JAVA_HOME is {tmp_path}, which has no bin/java"):
        java_version()


def test_python_dash_m_changeprov_is_the_command():
    """ut49 #10: wrappers that run modules got "No module named changeprov.__main__"."""
    proc = subprocess.run([sys.executable, "-m", "changeprov", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == f"changeprov {__version__}", proc.stderr


@pytest.mark.parametrize("master, ok", [
    ("local", True), ("local[4]", True), ("local[*]", True), ("local[4,2]", True), ("local[*, 3]", True),
    ("local-cluster[2,1,1024]", True), ("spark://h:7077", True), ("yarn", True), ("k8s://https://h:443", True),
    ("local[4]x", False), ("yarn-client", False), ("bogus", False), ("local-cluster[2,1]", False), ("", False),
])
def test_check_master_takes_every_form_spark_takes(master, ok):
    """rv49 S2, S3: a master Spark takes must not be refused, nor one it refuses be taken."""
    from changeprov.errors import InputError
    from changeprov.spark.session import check_master

    if ok:
        check_master(master)
    else:
        with pytest.raises(InputError, match="is no Spark master"):
            check_master(master)


def test_the_demo_marks_its_folder_and_refuses_a_file(tmp_path, capsys, monkeypatch):
    """rv49 D1: without its mark, the second `make demo` refused its own folder; D2: a file."""
    import changeprov.ontology.summary as summary
    from changeprov.demo import MARK, check_workdir, run_demo

    monkeypatch.setattr(summary, "vocabulary_report", lambda: {"ok": False, "lines": []})  # stop at step 1
    work = tmp_path / "w"
    assert run_demo(str(work)) == 1
    assert (work / MARK).is_file()
    (work / "store").mkdir()
    check_workdir(work)  # its own folder, with what an earlier run wrote
    (tmp_path / "f").write_text("x")
    assert main(["demo", "--workdir", str(tmp_path / "f")]) == 2
    assert f"--workdir {tmp_path / 'f'} is a file, not a folder" in capsys.readouterr().err
