"""`changeprov map` (and the output files it shares with `generate`): outputs never destroy inputs,
bad output paths are one-line errors before the work, interrupted runs leave no file, and the
counts printed are the lines written, attributed to families as the Spark export does."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat, serialize

import changeprov.generate as generate_module
import changeprov.mapping.reference as reference
from changeprov.cli import main
from changeprov.errors import InputError
from changeprov.generate import generate
from changeprov.mapping.mapper import map_line
from changeprov.mapping.inputs import display_name
from changeprov.mapping.reference import map_to_files

DAY = 86_400_000
URN = "urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)"


def ece_line(ms: int) -> str:
    return json.dumps({"entityType": "dataset", "entityUrn": URN, "category": "LIFECYCLE", "operation": "CREATE",
                       "auditStamp": {"time": ms, "actor": "urn:li:corpuser:ann"}, "version": 0})


def mcl_line(ms: int) -> str:
    return json.dumps({"entityType": "dataset", "entityUrn": URN, "changeType": "UPSERT", "aspectName": "status",
                       "aspect": {"value": '{"removed":false}', "contentType": "application/json"},
                       "systemMetadata": {"lastObserved": ms}, "created": {"time": ms, "actor": "urn:li:corpuser:ann"}})


@pytest.fixture
def log(tmp_path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text(ece_line(2 * DAY) + "\n" + mcl_line(DAY) + "\n[1]\n")
    return path


def files_in(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_map(log: Path, out, quarantine) -> int:
    return main(["map", str(log), "--out", str(out), "--quarantine", str(quarantine)])


# ---------------------------------------------------------------- outputs that are inputs


@pytest.mark.parametrize("out, quarantine", [
    ("events.jsonl", "q.jsonl"),                    # the input replaced by N-Triples
    ("o.nt", "events.jsonl"),                       # the input truncated to the quarantine
    ("o.nt", "sub/../events.jsonl"),                # the same file by a relative detour
    ("link.jsonl", "q.jsonl"),                      # through a symbolic link
    ("hard.jsonl", "q.jsonl"),                      # a hard link
    ("same.nt", "./same.nt"),                       # one file for both outputs
])
def test_map_refuses_outputs_that_are_inputs_or_each_other(log, tmp_path, monkeypatch, capsys, out, quarantine):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.jsonl").symlink_to("events.jsonl")
    os.link(log, tmp_path / "hard.jsonl")
    before = files_in(tmp_path)
    assert run_map(Path("events.jsonl"), out, quarantine) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "error:" in err
    assert files_in(tmp_path) == before, "nothing written, nothing destroyed"


# ---------------------------------------------------------------- bad output locations (map and generate)


def run_generate(out) -> int:
    return main(["generate", "--events", "20", "--out", str(out)])


RUNS = {  # command → how to run it with one output at ``target`` (the others fine)
    "generate": lambda log, tmp, target: run_generate(target),
    "map --out": lambda log, tmp, target: run_map(log, target, tmp / "q.jsonl"),
    "map --quarantine": lambda log, tmp, target: run_map(log, tmp / "o.nt", target),
}


@pytest.mark.parametrize("command", list(RUNS))
@pytest.mark.parametrize("where, message", [
    ("a-folder", "is a folder"),
    ("a-file/x", "a-file is a file, not a folder"),
    ("/proc/changeprov-test/x", "cannot write /proc/changeprov-test/x"),  # a location nobody can write
])
def test_bad_output_locations_are_one_line_errors_before_the_work(log, tmp_path, monkeypatch, capsys,
                                                                  command, where, message):
    if where.startswith("/proc") and not Path("/proc/self").exists():
        pytest.skip("no /proc on this system")
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("keep")
    target = tmp_path / where
    work = []
    monkeypatch.setattr(reference, "map_line", lambda *a, **k: work.append(1) or map_line(*a, **k))
    monkeypatch.setattr(generate_module, "iter_lines", lambda *a, **k: work.append(1) or iter([]))
    before = files_in(tmp_path)
    assert RUNS[command](log, tmp_path, target) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and message in err and str(target) in err
    assert work == [], "the error comes before any line is mapped or generated"
    assert files_in(tmp_path) == before, "no output, no stray temporary file"


@pytest.mark.parametrize("command", ["generate", "map"])
def test_missing_parent_folders_are_created_by_both_commands(log, tmp_path, command):
    out = tmp_path / "new" / "deeper" / ("events.jsonl" if command == "generate" else "o.nt")
    rc = run_generate(out) if command == "generate" else run_map(log, out, tmp_path / "new2" / "q.jsonl")
    assert rc == 0 and out.stat().st_size > 0
    assert command == "generate" or (tmp_path / "new2" / "q.jsonl").read_text().startswith('{"reason"')


def test_an_output_that_is_a_pipe_is_written_not_replaced(log, tmp_path):
    # `--quarantine /dev/null` or a named pipe: renaming a temporary file over it would replace it
    pipe = tmp_path / "q.pipe"
    os.mkfifo(pipe)
    got = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()), daemon=True)
    reader.start()
    try:
        assert run_map(log, tmp_path / "o.nt", pipe) == 0
    finally:
        if reader.is_alive() and stat.S_ISFIFO(os.lstat(pipe).st_mode):  # never written: let the reader go
            with open(pipe, "wb"):
                pass
        reader.join(timeout=10)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert json.loads(got[0])["raw"] == "[1]"


# ---------------------------------------------------------------- failed and interrupted runs


def interrupt_after(n: int, inner):
    """``inner`` that raises KeyboardInterrupt (Ctrl-C) on its call n + 1."""
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) > n:
            raise KeyboardInterrupt
        return inner(*args, **kwargs)
    return wrapped


def interrupted_after(n: int, lines):
    """The generator ``lines``, interrupted after n items (past the writer's first chunks)."""
    def wrapped(*args, **kwargs):
        for i, item in enumerate(lines(*args, **kwargs)):
            if i == n:
                raise KeyboardInterrupt
            yield item
    return wrapped


@pytest.mark.parametrize("command", ["generate", "map"])
@pytest.mark.parametrize("existing", [False, True])
def test_an_interrupted_run_leaves_no_file_and_keeps_the_old_one(log, tmp_path, monkeypatch, capsys,
                                                                 command, existing):
    out, quarantine = tmp_path / "out" / "events.jsonl.gz", tmp_path / "out" / "q.jsonl"
    if existing:
        out.parent.mkdir()
        out.write_bytes(b"old")
        quarantine.write_bytes(b"old q")
    if command == "generate":
        monkeypatch.setattr(generate_module, "iter_lines", interrupted_after(5000, generate_module.iter_lines))
        rc = main(["generate", "--events", "10000", "--out", str(out)])
    else:
        monkeypatch.setattr(reference, "map_line", interrupt_after(2, map_line))
        rc = run_map(log, out, quarantine)
    assert rc == 2 and "interrupted" in capsys.readouterr().err
    left = files_in(tmp_path / "out") if (tmp_path / "out").exists() else {}
    assert left == ({"events.jsonl.gz": b"old", "q.jsonl": b"old q"} if existing else {})


def test_generate_failing_while_writing_leaves_no_file(tmp_path, monkeypatch):
    def disk_full(_raw, _codec):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(generate_module, "compressing", disk_full)
    with pytest.raises(InputError, match="cannot write .*events.jsonl.gz: No space left"):
        generate(tmp_path / "events.jsonl.gz", events=10)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- what the counts count


def nt_lines(raw: str) -> set[bytes]:
    return set(serialize(map_line(raw.encode()).triples, format=RdfFormat.N_TRIPLES).splitlines(keepends=True))


@pytest.mark.parametrize("run_lines", [5, reference.RUN_LINES])  # sorted runs on disk, or one in memory
@pytest.mark.parametrize("ece_ms, mcl_ms, owner", [
    (2 * DAY, DAY, "datahub-mcl"),                          # earliest day wins
    (DAY, 2 * DAY, "datahub-ece"),
    (2 * DAY - 1000, DAY, "datahub-ece"),                   # the same UTC day: the family first by name,
])                                                          # although the datahub-mcl event came first
def test_shared_triples_count_once_for_the_earliest_day_and_family(tmp_path, ece_ms, mcl_ms, owner, run_lines):
    # the export's rule (spark/job.py): a triple goes to the least (UTC date, family by name) it occurs in
    src = tmp_path / "in.jsonl"
    src.write_text(mcl_line(mcl_ms) + "\n" + ece_line(ece_ms) + "\n")
    counts = map_to_files([str(src)], tmp_path / "o.nt", tmp_path / "q.jsonl", run_lines=run_lines).as_dict()
    ece, mcl = nt_lines(ece_line(ece_ms)), nt_lines(mcl_line(mcl_ms))
    shared = ece & mcl
    assert len(shared) >= 4
    written = (tmp_path / "o.nt").read_bytes().splitlines(keepends=True)
    assert counts["triples"] == len(written) == len(ece | mcl)
    own = {"datahub-ece": len(ece - mcl), "datahub-mcl": len(mcl - ece)}
    own[owner] += len(shared)
    assert counts["triples_by_source"] == own
    assert counts["distinct_events"] == 2


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_printed_total_is_the_number_of_lines_written(tmp_path, capsys, fmt):
    src = tmp_path / "events.jsonl"
    generate(src, events=400, seed=2, days=2)
    assert main(["map", str(src), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl"),
                 "--format", fmt]) == 0
    printed = capsys.readouterr().out
    if fmt == "json":
        counts = json.loads(printed)
        total, by_family = counts["triples"], list(counts["triples_by_source"].values())
    else:  # "  triples written   3,449" then one indented row per family
        rows = printed.splitlines()
        at = next(i for i, row in enumerate(rows) if row.split()[:2] == ["triples", "written"])
        total, by_family = int(rows[at].split()[-1].replace(",", "")), [
            int(row.split()[-1].replace(",", "")) for row in rows[at + 1:]]
    lines = (tmp_path / "o.nt").read_bytes().splitlines()
    assert len(set(lines)) == len(lines) == total == sum(by_family) and len(by_family) == 4


# ---------------------------------------------------------------- compressed inputs

COMPRESSORS = {".gz": "gzip", ".GZ": "gzip", ".bz2": "bz2", ".Bz2": "bz2", ".deflate": "zlib", ".DEFLATE": "zlib"}


@pytest.mark.parametrize("suffix", COMPRESSORS)
def test_compressed_inputs_are_read_by_their_suffix_in_any_case_as_hadoop_does(log, tmp_path, suffix):
    """A user's test: `export` (Hadoop's codecs) decompressed .bz2, .deflate and .GZ, `map` read their
    compressed bytes as lines; the same file gave 0 mapped lines on one side, 58 on the other."""
    import importlib

    plain = map_to_files([str(log)], tmp_path / "plain.nt", tmp_path / "plain-q.jsonl")
    (tmp_path / "in").mkdir()
    packed = tmp_path / "in" / f"events.jsonl{suffix}"
    packed.write_bytes(importlib.import_module(COMPRESSORS[suffix]).compress(log.read_bytes()))
    counts = map_to_files([str(packed)], tmp_path / "packed.nt", tmp_path / "packed-q.jsonl")
    assert counts.as_dict() == plain.as_dict() and counts.mapped == 2
    assert (tmp_path / "packed.nt").read_bytes() == (tmp_path / "plain.nt").read_bytes()
    # a folder contributes them too
    assert map_to_files([str(tmp_path / "in")], tmp_path / "o.nt", tmp_path / "o-q.jsonl").lines_read == 3


@pytest.mark.parametrize("suffix", COMPRESSORS)
def test_outputs_are_compressed_as_their_names_say_and_load_reads_them(log, tmp_path, suffix):
    """ut40b #1: `map --out o.nt.gz` wrote plain text under the .gz name, and `load` then failed with
    "Not a gzipped file"."""
    import importlib

    from changeprov.sparql.stores import open_store

    map_to_files([str(log)], tmp_path / "plain.nt", tmp_path / "plain-q.jsonl")
    out, quarantine = tmp_path / f"o.nt{suffix}", tmp_path / f"q.jsonl{suffix}"
    assert run_map(log, out, quarantine) == 0
    codec = importlib.import_module(COMPRESSORS[suffix])
    assert codec.decompress(out.read_bytes()) == (tmp_path / "plain.nt").read_bytes()
    assert codec.decompress(quarantine.read_bytes()) == (tmp_path / "plain-q.jsonl").read_bytes()
    assert main(["load", str(out), "--store", str(tmp_path / "st")]) == 0
    with open_store("embedded", path=tmp_path / "st", read_only=True) as store:
        assert store.count() == len((tmp_path / "plain.nt").read_bytes().splitlines())


def test_an_output_only_hadoop_compresses_is_refused_before_the_work(log, tmp_path, capsys):
    assert run_map(log, tmp_path / "o.nt.zst", tmp_path / "q.jsonl") == 2
    assert "o.nt.zst: cannot write Zstandard (.zst)" in capsys.readouterr().err
    assert not (tmp_path / "q.jsonl").exists()


def test_one_path_given_alone_is_one_input_and_earlier_exports_in_a_folder_are_not_events(log, tmp_path):
    """ut40c #1: map_to_files("/x/events.jsonl", ...) read the path character by character (the first
    input "/": a walk of the whole file system); ut40c #2: an earlier export below the input folder (its
    manifest.json and quarantine/part-*.jsonl) was read as events, and so were hidden folders' files."""
    from changeprov.mapping.inputs import expand_inputs

    folder = tmp_path / "in"
    (folder / "night1" / "triples").mkdir(parents=True)
    (folder / "night1" / "quarantine").mkdir()
    (folder / "night1" / "manifest.json").write_text('{"run": 1}\n')
    (folder / "night1" / "quarantine" / "part-00000.jsonl").write_text('{"reason": "X"}\n')
    for hidden in ("_temporary", ".spark"):
        (folder / hidden).mkdir()
        (folder / hidden / "part-00000.jsonl").write_text("{}\n")
    events = folder / "events.jsonl"
    events.write_bytes(log.read_bytes())
    assert expand_inputs(str(folder)) == expand_inputs([folder]) == [events.resolve()]
    alone = map_to_files(str(events), tmp_path / "a.nt", tmp_path / "a-q.jsonl")
    assert alone.as_dict() == map_to_files([str(folder)], tmp_path / "b.nt", tmp_path / "b-q.jsonl").as_dict()
    with pytest.raises(InputError, match="a changeprov export folder"):
        expand_inputs([str(folder / "night1")])
    with pytest.raises(InputError, match="an input must be a path"):
        expand_inputs([3])


def test_a_folder_with_no_event_files_is_an_error_not_an_empty_run(tmp_path, capsys):
    """ut40b #4: a folder holding only a readme mapped 0 lines with exit 0, where a glob that matches
    nothing is an error: a nightly job pointed at the wrong folder reported success."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "readme.txt").write_text("not events\n")
    assert run_map(tmp_path / "in", tmp_path / "o.nt", tmp_path / "q.jsonl") == 2
    assert "a folder with no event files" in capsys.readouterr().err


def test_a_deflate_input_cut_short_is_an_error_naming_the_file(log, tmp_path, capsys):
    import zlib

    cut = tmp_path / "events.jsonl.deflate"
    cut.write_bytes(zlib.compress(log.read_bytes() * 50)[:-20])
    assert main(["map", str(cut), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    assert "events.jsonl.deflate: cannot read: compressed file ended" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".lz4", ".snappy", ".ZST"])
def test_hadoop_only_codecs_are_refused_by_name_not_read_as_lines(tmp_path, capsys, suffix):
    packed = tmp_path / f"events.jsonl{suffix}"
    packed.write_bytes(b"\x04\x22\x4d\x18 not text")
    assert main(["map", str(packed), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"events.jsonl{suffix}:" in err and "which only `export` (Hadoop's codec) reads" in err
    assert not (tmp_path / "o.nt").exists()



# ---------------------------------------------------------------- file: URIs, as `export` takes them


@pytest.mark.parametrize("form", ["file://{path}", "file://localhost{path}", "file:{path}", "FILE://{path}"])
def test_a_file_uri_input_maps_like_the_plain_path(log, tmp_path, form):
    """A user's test: `export file:///abs/in.jsonl` worked, `map` said no such file or folder."""
    plain = map_to_files([str(log)], tmp_path / "plain.nt", tmp_path / "plain-q.jsonl")
    given = form.format(path=log)
    counts = map_to_files([given], tmp_path / "uri.nt", tmp_path / "uri-q.jsonl")
    assert counts.as_dict() == plain.as_dict() and counts.mapped == 2
    assert (tmp_path / "uri.nt").read_bytes() == (tmp_path / "plain.nt").read_bytes()
    assert (tmp_path / "uri-q.jsonl").read_bytes() == (tmp_path / "plain-q.jsonl").read_bytes()
    glob = form.format(path=tmp_path / "events.*")  # a glob, as in a plain path
    assert map_to_files([glob], tmp_path / "g.nt", tmp_path / "g-q.jsonl").as_dict() == plain.as_dict()


@pytest.mark.parametrize("given, said", [
    ("file://otherhost{path}", "a file: URI names a file on another machine (otherhost)"),
    ("file:events.jsonl", "a file: URI needs an absolute path (file:///abs/path)"),
    ("s3a://bucket/events.jsonl", "`map` reads local paths only, a plain path or a file: URI (file:///abs/path), "
                                  "not s3a://; `export` reads any Hadoop path"),
    ("hdfs://nn:8020/events/", "not hdfs://"),
])
def test_another_machines_or_file_systems_input_is_an_error_saying_what_map_reads(log, tmp_path, capsys, given, said):
    given = given.format(path=log)
    assert main(["map", given, "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"changeprov map: error: {given}: ") and said in err, err
    assert not (tmp_path / "o.nt").exists()


def test_export_reads_file_uris_as_map_does(log, tmp_path):
    """`export` took ``file://localhost/p`` for the relative path ``localhost/p`` (and ``file://host/p`` for
    ``host/p``): it now reads them as `map` does (no Spark session needed to resolve inputs)."""
    from changeprov.spark.fs import local_file, local_out
    from changeprov.spark.job import resolve_inputs

    for form in ("file://{path}", "file://localhost{path}", "file:{path}"):
        assert [local_file(f) for f in resolve_inputs([form.format(path=log)])] == [str(log)]
    assert resolve_inputs(["s3a://bucket/events/"]) == ["s3a://bucket/events/"]
    with pytest.raises(InputError, match="another machine"):
        resolve_inputs([f"file://otherhost{log}"])
    assert local_out(f"file://localhost{tmp_path}/out") == tmp_path / "out"
    assert local_out("hdfs://nn/out") is None


def test_quarantine_sources_are_absolute_whatever_the_working_folder(log, tmp_path, monkeypatch):
    """A user's test: the same input gave other quarantine records from another working folder
    (``source`` was relative to it: ``events.jsonl`` here, ``../events.jsonl`` one folder down)."""
    (tmp_path / "down").mkdir()
    records = []
    for cwd, given in ((tmp_path, "events.jsonl"), (tmp_path / "down", "../events.jsonl"), (Path("/"), str(log))):
        monkeypatch.chdir(cwd)
        map_to_files([given], tmp_path / "o.nt", tmp_path / "q.jsonl")
        records.append((tmp_path / "q.jsonl").read_text())
    assert records[0] == records[1] == records[2]
    assert [json.loads(r)["source"] for r in records[0].splitlines()] == [str(log.resolve())]


# ---------------------------------------------------------------- one event id, different content


def om_update(entity: str, *, ms: int = 1_700_000_000_000, user: str = "alice", event_id: str = "dup-1") -> str:
    return json.dumps({"id": event_id, "eventType": "entityUpdated", "entityType": "table", "entityId": entity,
                       "timestamp": ms, "userName": user, "currentVersion": 0.2, "previousVersion": 0.1})


def test_an_event_id_with_different_content_keeps_its_first_line_and_quarantines_the_others(tmp_path):
    """A user's test: three lines with one id and other entities, users and times became one event
    with three affectsEntity, two timestamps and two performers, silently."""
    first, again = om_update("e-a"), om_update("e-a", user="bob")
    (tmp_path / "a.jsonl").write_text("\n".join([first, again, om_update("e-b", ms=1_800_000_000_000), first]) + "\n")
    (tmp_path / "b.jsonl").write_text(again + "\n" + om_update("x", event_id="other") + "\n")
    counts = map_to_files([str(tmp_path)], tmp_path / "o.nt", tmp_path / "q.jsonl").as_dict()
    records = [json.loads(x) for x in (tmp_path / "q.jsonl").read_text().splitlines()]
    a, b = display_name(tmp_path / "a.jsonl"), display_name(tmp_path / "b.jsonl")
    detail = f"the same event id with different content was first seen at {a}:1; that line is kept"
    assert [(r["source"], r["line"], r["reason"], r["detail"]) for r in records] == [
        (a, 2, "DUPLICATE_EVENT", detail), (a, 3, "DUPLICATE_EVENT", detail), (b, 1, "DUPLICATE_EVENT", detail)]
    # the exact repeat of line 1 maps (a plain duplicate), and the graph is line 1's and the other event's
    assert (counts["mapped"], counts["quarantined"], counts["distinct_events"]) == (3, 3, 2)
    assert set((tmp_path / "o.nt").read_bytes().splitlines(keepends=True)) == nt_lines(first) | nt_lines(
        om_update("x", event_id="other"))


def test_an_empty_optional_text_is_as_absent(tmp_path):
    """ut46c #10: an empty id or userName was written as the text "" (eventId "", userName ""), though the
    empty id minted the IRI of an event without one and the empty name named no agent: the same event
    given once without an id and once with an empty one was quarantined as a duplicate with different content."""
    event = {"eventType": "entityCreated", "entityType": "table", "entityId": "t-1", "timestamp": 1_788_249_600_000,
             "userName": "", "userId": "", "entityFullyQualifiedName": "", "currentVersion": 0.1}
    (tmp_path / "a.jsonl").write_text(json.dumps({**event, "id": ""}) + "\n" + json.dumps(event) + "\n")
    counts = map_to_files([str(tmp_path / "a.jsonl")], tmp_path / "o.nt", tmp_path / "q.jsonl").as_dict()
    assert (counts["mapped"], counts["quarantined"], counts["distinct_events"]) == (2, 0, 1)
    text = (tmp_path / "o.nt").read_text()
    assert '""' not in text and "performedBy" not in text and "fullyQualifiedName" not in text
    assert "/om/table/t-1>" in text or "entity/table/t-1>" in text


def test_a_relationship_other_than_lineage_makes_no_node_of_its_destination(tmp_path):
    """ut46c #12: an OwnedBy change typed its destination (a user) as a metadata entity, a node nothing
    linked to; the URN is in the change's value. A DownstreamOf destination is the lineage edge's end."""
    def line(rel_type: str, destination: str) -> str:
        value = {"sourceUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)", "destinationUrn": destination,
                 "operation": "ADD", "relationshipType": rel_type,
                 "auditStamp": {"time": 1_710_036_900_000, "actor": "urn:li:corpuser:svc"}}
        return json.dumps({"header": {"timestampMillis": 1_710_036_900_000}, "name": "relationshipChangeEvent",
                           "payload": {"value": json.dumps(value), "contentType": "application/json"}})

    owner, upstream = "urn:li:corpuser:jane", "urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)"
    (tmp_path / "a.jsonl").write_text(line("OwnedBy", owner) + "\n" + line("DownstreamOf", upstream) + "\n")
    counts = map_to_files([str(tmp_path / "a.jsonl")], tmp_path / "o.nt", tmp_path / "q.jsonl").as_dict()
    assert (counts["mapped"], counts["quarantined"]) == (2, 0)
    text = (tmp_path / "o.nt").read_text()
    assert f"<{owner}>" not in text and owner in text  # in the change's JSON value only
    assert f"<{upstream}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>" in text


def test_datahub_change_events_that_differ_only_in_parameters_are_two_events(tmp_path):
    """ut14 #1: two owners given one owner type in one edit are two OWNERSHIP MODIFY events that differ
    only in parameters.ownerUrn; the event id left parameters out, so the second was DUPLICATE_EVENT."""
    from changeprov.mapping.reference import map_to_files

    event = {"entityType": "dataset", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)",
             "category": "OWNERSHIP", "operation": "MODIFY", "modifier": "BUSINESS_OWNER",
             "auditStamp": {"time": 1709546700000, "actor": "urn:li:corpuser:carol"},
             "parameters": {"ownerUrn": "urn:li:corpuser:alice"}}
    other = {**event, "parameters": {"ownerUrn": "urn:li:corpuser:bob"}}
    src = tmp_path / "ece.jsonl"
    src.write_text("".join(json.dumps(e) + "\n" for e in (event, other, event)))  # the last one a replay
    counts = map_to_files([str(src)], tmp_path / "x.nt", tmp_path / "q.jsonl").as_dict()
    assert (counts["mapped"], counts["quarantined"]) == (3, 0), (tmp_path / "q.jsonl").read_text()
    assert (tmp_path / "x.nt").read_text().count("> <https://open-metadata.org/schema/type/changeEvent/eventType>") == 2


def test_datahub_aspect_versions_set_changed_and_set_back_in_one_millisecond_are_three_events(tmp_path):
    """ut20 #6: globalTags {T0} → {T1} → {T0} in one millisecond by one actor, without previousAspectValue.
    The event id left the aspect versions out, so the third line was DUPLICATE_EVENT and the state {T1}."""
    def tags(tag: str, version: str, previous: str | None) -> dict:
        obj = {"entityType": "dataset", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)",
               "changeType": "UPSERT", "aspectName": "globalTags",
               "aspect": {"value": json.dumps({"tags": [{"tag": tag}]}), "contentType": "application/json"},
               "systemMetadata": {"lastObserved": 1709280000007, "version": version},
               "created": {"time": 1709280000000, "actor": "urn:li:corpuser:datahub"}}
        if previous:
            obj["previousSystemMetadata"] = {"version": previous}
        return obj

    src = tmp_path / "mcl.jsonl"
    lines = [tags("urn:li:tag:T0", "1", None), tags("urn:li:tag:T1", "2", "1"), tags("urn:li:tag:T0", "3", "2")]
    src.write_text("".join(json.dumps(e) + "\n" for e in [*lines, lines[2]]))  # the last one a replay
    counts = map_to_files([str(src)], tmp_path / "x.nt", tmp_path / "q.jsonl").as_dict()
    assert (counts["mapped"], counts["quarantined"], counts["distinct_events"]) == (4, 0, 3), (
        (tmp_path / "q.jsonl").read_text())


def test_map_warns_of_events_dated_before_2000(tmp_path, capsys):
    """ut22: a timestamp in seconds maps to January 1970 (documented), and nothing said so."""
    from changeprov.cli import main

    src = tmp_path / "s.jsonl"
    src.write_text(om_update("e-a", ms=1_788_249_600) + "\n" + om_update("e-b", event_id="dup-2") + "\n")
    assert main(["map", str(src), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 0
    assert ("changeprov map: warning: events dated before 2000 (1 day: 1970-01-21): timestamps in seconds rather "
            "than milliseconds?") in capsys.readouterr().err
    src.write_text(om_update("e-b", event_id="dup-2") + "\n")
    assert main(["map", str(src), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_map_line_takes_a_line_as_text_too(shared_dir):
    """ut19 #9: map_line(str) raised TypeError, although it "never raises on bad input"."""
    from changeprov.mapping.mapper import map_line

    line = (shared_dir / "corpus/openmetadata/change_events.jsonl").read_bytes().splitlines()[0]
    as_bytes, as_text = map_line(line), map_line(line.decode("utf-8"))
    assert as_bytes.triples and as_text.triples == as_bytes.triples and as_text.family == as_bytes.family
    assert map_line("{not json").quarantine.reason == map_line(b"{not json").quarantine.reason


def test_an_unknown_family_is_refused_before_any_line_is_read(tmp_path):
    """mq1 #4: map_to_files raised a plain ValueError, and only once a non-blank line was read."""
    from changeprov.errors import InputError
    from changeprov.mapping.reference import map_to_files

    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(InputError, match="unknown family 'datahub'; choose from auto, openmetadata"):
        map_to_files([str(tmp_path / "empty.jsonl")], tmp_path / "o.nt", tmp_path / "q.jsonl", family="datahub")
    assert not (tmp_path / "o.nt").exists()


@pytest.mark.parametrize("denied", ["walk", "look", "named"])
def test_a_folder_that_cannot_be_read_is_an_error_not_left_out(tmp_path, monkeypatch, capsys, denied):
    """ut41b #1: rglob skipped a subfolder the user could not open, so its lines were never read while the
    counts added up (exit 0); one that could be listed but not entered failed on an errno naming _SUCCESS.
    The tests run as root, whom permissions do not stop: the operating system's refusal is raised here."""
    sub = tmp_path / "in" / "sub"
    sub.mkdir(parents=True)
    line = (Path(__file__).parent / "golden" / "om-entity-created.jsonl").read_text()
    (tmp_path / "in" / "a.jsonl").write_text(line)
    (sub / "b.jsonl").write_text(line)

    def refused(path):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    if denied == "walk":  # chmod 000: the folder cannot be listed
        real = os.scandir
        monkeypatch.setattr(os, "scandir", lambda path=".": refused(path) if Path(path) == sub else real(path))
    else:  # chmod 644: listed, but nothing in it can be looked at (rv41 #8: the folder named itself)
        if denied == "named":
            sub = tmp_path / "in"
        real_is_file = Path.is_file
        monkeypatch.setattr(Path, "is_file", lambda self: refused(self) if self.parent == sub else real_is_file(self))
    code = main(["map", str(tmp_path / "in"), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")])
    assert code == 2
    assert capsys.readouterr().err == (f"changeprov map: error: cannot read folder {sub}: Permission denied (its event "
                                       "files would be left out)\n")


def test_a_file_whose_name_looks_like_a_glob_is_read_as_named(tmp_path):
    """ut41b #3: 'events[1].jsonl' was a glob: "no file matches" although it exists, or, with a sibling
    events1.jsonl, that sibling was read instead (by map and by the export's input list)."""
    from changeprov.spark.job import resolve_inputs

    golden = Path(__file__).parent / "golden"
    named, sibling = tmp_path / "events[1].jsonl", tmp_path / "events1.jsonl"
    named.write_text((golden / "om-entity-created.jsonl").read_text())
    sibling.write_text((golden / "ece-application-add.jsonl").read_text())
    counts = map_to_files([str(named)], tmp_path / "o.nt", tmp_path / "q.jsonl").as_dict()
    assert counts["mapped"] == 1
    assert b"open-metadata.org/entity/" in (tmp_path / "o.nt").read_bytes()  # the OpenMetadata event, not the ECE
    assert b"urn:li:" not in (tmp_path / "o.nt").read_bytes()
    (only,) = resolve_inputs([str(named)])
    assert only.endswith("events\\[1\\].jsonl"), only  # escaped for Hadoop, which reads globs too
    # a name that matches no file is still a glob
    assert sorted(map(os.path.basename, resolve_inputs([str(tmp_path / "events?.jsonl")]))) == ["events1.jsonl"]


def test_a_pipe_is_not_called_missing(tmp_path, capsys):
    """ut41b #5: a FIFO (or /dev/stdin, a process substitution) was 'no such file or folder'."""
    fifo = tmp_path / "events.jsonl"
    os.mkfifo(fifo)
    assert main(["map", str(fifo), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 2
    assert capsys.readouterr().err.startswith(f"changeprov map: error: {fifo}: not a file or folder (a pipe or a device)")


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".deflate"])
def test_an_empty_compressed_file_has_no_lines(tmp_path, suffix):
    """ut41b #4: a 0-byte .bz2 was an error for map ('ended before the end-of-stream marker') and 0 lines
    for export, as a 0-byte .gz was for both."""
    (tmp_path / f"e.jsonl{suffix}").write_bytes(b"")
    counts = map_to_files([str(tmp_path / f"e.jsonl{suffix}")], tmp_path / "o.nt", tmp_path / "q.jsonl").as_dict()
    assert counts["lines_read"] == 0 and (tmp_path / "o.nt").read_bytes() == b""


def test_a_folder_s_event_files_in_hadoop_codecs_and_dangling_links_are_not_skipped_without_a_word(log, tmp_path, capsys):
    """ut44e #3: a folder's events.jsonl.zst (which `export` reads when it is named) and a link to a file
    that is gone were left out of the folder's files without a word: their lines were lost while the counts
    added up. The compressed file is one of the folder's event files (`map` then says it cannot read it, as
    when it is named); the dangling link is an error naming it."""
    from changeprov.mapping.inputs import expand_inputs

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(log.read_bytes())
    (folder / "b.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    (folder / "notes.txt.zst").write_bytes(b"\x28\xb5\x2f\xfd")  # not an event file by its name
    assert expand_inputs(folder) == [(folder / "a.jsonl").resolve(), (folder / "b.jsonl.zst").resolve()]
    assert run_map(folder, tmp_path / "o.nt", tmp_path / "q.jsonl") == 2
    assert "b.jsonl.zst: Zstandard-compressed (.zst), which only `export` " in capsys.readouterr().err
    (folder / "b.jsonl.zst").unlink()
    (folder / "sub").mkdir()
    (folder / "sub" / "c.jsonl").symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(InputError, match=r"sub/c\.jsonl: a link to .*gone\.jsonl, which does not exist \(its events "
                                         r"would be left out\)"):
        expand_inputs(folder)


@pytest.mark.parametrize("raw, family, said", [
    (None, "auto", "map_line takes one line as bytes or str, got NoneType"),
    (123, "auto", "map_line takes one line as bytes or str, got int"),
    (b'{"id": 1}', "bogus", "unknown family 'bogus'; choose from auto, openmetadata"),
    (b"", "bogus", "unknown family 'bogus'"),
])
def test_map_line_says_what_is_wrong_with_an_argument(raw, family, said):
    """rv45d #9: map_line(None) was an AttributeError and an unknown family a plain ValueError, outside the
    ChangeprovError hierarchy; a bad line is still a quarantine, never an error."""
    from changeprov.mapping.mapper import map_line

    with pytest.raises(InputError) as error:
        map_line(raw, family=family)
    assert str(error.value).startswith(said)
    assert map_line(bytearray(b"{not json")).quarantine.reason == map_line("{not json").quarantine.reason


EVENT = (b'{"id":"e-1","eventType":"entityCreated","entityType":"table","entityId":"t-1","timestamp":1700000000000,'
         b'"userName":"a","currentVersion":0.1}')


@pytest.mark.parametrize("name, body, said", [
    ("zipped.jsonl", "gzip", "starts as a gzip file does, but its name does not end in .gz: its lines are read as text; name it .gz"),
    ("packed.json", "bzip2", "starts as a bzip2 file does, but its name does not end in .bz2"),
    ("mac.jsonl", "cr", "has line ends of CR alone (no LF in its first 423 bytes): it is read as one line"),
    ("fine.jsonl", "lf", None),
    ("fine.jsonl.gz", "gzip", None),
])
def test_map_says_when_a_file_is_framed_otherwise_than_its_name_says(tmp_path, capsys, name, body, said):
    """ut46a #8: a gzip file named .jsonl gave 21 BAD_ENCODING lines, a file of CR line ends one
    MALFORMED_JSON line, and nothing said why."""
    import bz2
    import gzip

    from changeprov.cli import main

    lines = b"\n".join([EVENT] * 3) + b"\n"
    data = {"gzip": gzip.compress(lines), "bzip2": bz2.compress(lines), "cr": lines.replace(b"\n", b"\r"),
            "lf": lines}[body]
    (tmp_path / name).write_bytes(data)
    assert main(["map", str(tmp_path / name), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("changeprov map: warning: ")]
    if said is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warnings[0].startswith(f"changeprov map: warning: {tmp_path / name} {said}"), warnings


def test_a_framing_warning_shows_the_files_name_escaped(tmp_path, capsys):
    """rv46b #4: the warning printed a file name's escape sequence and line separator raw."""
    import gzip

    from changeprov.cli import main

    name = tmp_path / "ev\u2028il\x1b[31mred.jsonl"
    name.write_bytes(gzip.compress(EVENT + b"\n"))
    assert main(["map", str(name), "--out", str(tmp_path / "o.nt"), "--quarantine", str(tmp_path / "q.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "ev\\u2028il\\u001B[31mred.jsonl starts as a gzip file does" in err and "\x1b" not in err


def _mcl(aspect: str, value: dict, *, previous: dict | None = None, version: str = "2", previous_version: str = "1",
         actor: str = "urn:li:corpuser:datahub") -> str:
    obj = {"entityType": "dataset", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)",
           "changeType": "UPSERT", "aspectName": aspect,
           "aspect": {"value": json.dumps(value), "contentType": "application/json"},
           "systemMetadata": {"lastObserved": 1709280000007, "version": version},
           "previousSystemMetadata": {"version": previous_version},
           "created": {"time": 1709280000000, "actor": actor}}
    if previous is not None:
        obj["previousAspectValue"] = {"value": json.dumps(previous), "contentType": "application/json"}
    return json.dumps(obj)


def _nt(line: str) -> str:
    from changeprov.mapping.mapper import map_line

    result = map_line(line)
    assert result.quarantine is None, result.quarantine
    return "".join(str(t) + " .\n" for t in result.triples)


def test_a_status_sent_again_while_removed_is_no_second_soft_delete():
    """rv47 MD2: a status aspect re-sent with removed: true while already removed is no new lifecycle change."""
    assert "SoftDeleted" in _nt(_mcl("status", {"removed": True}, previous={"removed": False}))
    assert "lifecycleChange" not in _nt(_mcl("status", {"removed": True}, previous={"removed": True}))


def test_an_mcl_of_the_version_it_revises_generates_no_version():
    """rv47 MD3: version = previous version (a re-sent aspect) minted a version revising itself."""
    text = _nt(_mcl("globalTags", {"tags": []}, version="3", previous_version="3"))
    assert "wasRevisionOf" not in text and "AspectVersion" not in text and "/ns/prov#used>" in text


def test_a_group_actor_is_an_organization_and_an_unknown_relationship_operation_is_quarantined():
    """rv47 MD1 MD5: caught by the Spark comparison alone; the reference's own rules, without Spark."""
    from changeprov.mapping.mapper import map_line

    text = _nt(_mcl("globalTags", {"tags": []}, actor="urn:li:corpGroup:data-eng"))
    assert "<urn:li:corpGroup:data-eng> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/ns/prov#Organization>" in text
    value = {"sourceUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)", "operation": "MODIFY",
             "destinationUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)", "relationshipType": "DownstreamOf",
             "auditStamp": {"time": 1_710_036_900_000, "actor": "urn:li:corpuser:svc"}}
    line = json.dumps({"header": {"timestampMillis": 1_710_036_900_000}, "name": "relationshipChangeEvent",
                       "payload": {"value": json.dumps(value), "contentType": "application/json"}})
    q = map_line(line).quarantine
    assert (q.reason, q.detail) == ("UNKNOWN_EVENT_TYPE", "payload.operation: 'MODIFY' is not ADD or REMOVE")
