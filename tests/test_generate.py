"""The synthetic event generator: deterministic, corpus-shaped, hostile lines as advertised."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter

import pytest

from changeprov.errors import InputError
from changeprov.generate import EXPECTED_REASONS, FAMILIES, HOSTILE_KINDS, generate, iter_lines
from changeprov.mapping.reference import map_to_files

N = 2000


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "events.jsonl"
    summary = generate(path, events=N, seed=0)
    return path, summary


@pytest.fixture(scope="module")
def tagged():
    """(kind, line) pairs of the same run, for per-line checks."""
    return list(iter_lines(N, seed=0))


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_deterministic_and_seed_sensitive(run, tmp_path):
    path, _ = run
    again = tmp_path / "again.jsonl"
    generate(again, events=N, seed=0)
    assert _sha(again) == _sha(path)
    other = tmp_path / "other.jsonl"
    generate(other, events=N, seed=1)
    assert _sha(other) != _sha(path)


def test_iter_lines_matches_file(run, tagged):
    path, _ = run
    assert path.read_text("utf-8") == "".join(line + "\n" for _, line in tagged)


def test_gzip_output_is_readable_and_identical(run, tmp_path):
    path, _ = run
    gz = tmp_path / "events.jsonl.gz"
    summary = generate(gz, events=N, seed=0)
    assert summary["compression"] == ".gz"
    assert gzip.decompress(gz.read_bytes()) == path.read_bytes()
    gz2 = tmp_path / "second.gz"
    generate(gz2, events=N, seed=0)
    assert _sha(gz2) == _sha(gz)  # mtime 0, no file name in the header


def test_summary_adds_up(run):
    path, s = run
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert s["lines"] == N == len(lines) - 1
    # the generator's own tally against what the reference mapper reads (rv45d #2: it was compared with
    # the sum it is computed from)
    counts = map_to_files([str(path)], path.parent / "summary.nt", path.parent / "summary-q.jsonl")
    assert s["unique_events"] == counts.events == sum(s["families"].values())
    # an exact re-send maps again (its triples once), a hostile line is quarantined
    assert (s["blank"], s["unique_events"] + s["duplicates"], sum(s["hostile"].values())) == \
        (counts.blank, counts.mapped, counts.quarantined_total)
    assert s["lines"] == s["unique_events"] + sum(s["hostile"].values()) + s["blank"] + s["duplicates"]
    assert sum(s["hostile"].values()) + s["blank"] + s["duplicates"] == round(N * 0.01)


def test_family_mix_and_hostile_kinds(run, tagged):
    _, s = run
    fam = s["families"]
    assert set(fam) == set(FAMILIES)
    total = sum(fam.values())
    assert 0.45 < fam["openmetadata"] / total < 0.65
    assert 0.22 < fam["datahub-mcl"] / total < 0.40
    assert 0.05 < fam["datahub-ece"] / total < 0.16
    assert 0.01 < fam["datahub-platform"] / total < 0.06
    kinds = Counter(k for k, _ in tagged)
    for kind in HOSTILE_KINDS:
        assert kinds[kind] >= 1, kind
    assert all("\n" not in line and "\r" not in line for _, line in tagged)


def test_shapes_follow_the_corpus(tagged):
    seen = Counter()
    for kind, line in tagged:
        if kind not in FAMILIES:
            continue
        ev = json.loads(line)
        if kind == "openmetadata":
            assert {"id", "eventType", "entityType", "entityId", "userName", "timestamp"} <= set(ev)
            if ev["entityType"] == "lineage":
                assert isinstance(ev["entity"], dict) and "--upstream-->" in ev["entityFullyQualifiedName"]
                assert {"fromEntity", "toEntity", "lineageDetails"} <= set(ev["entity"])
                seen["lineage:" + ev["eventType"]] += 1
            else:
                assert isinstance(ev["entity"], str) and json.loads(ev["entity"])["id"] == ev["entityId"]
                seen[ev["eventType"]] += 1
                for ch in ev.get("changeDescription", {}).get("fieldsAdded", []):
                    if ch["name"] in ("tags", "owners", "columns") or ch["name"].endswith(".tags"):
                        assert isinstance(ch["newValue"], str) and isinstance(json.loads(ch["newValue"]), list)
                if "previousVersion" not in ev:
                    seen["stored-form"] += 1
        elif kind == "datahub-mcl":
            if ev["changeType"] == "DELETE":
                assert "aspect" not in ev and isinstance(ev["previousAspectValue"]["value"], str)
            else:
                assert ev["aspect"]["contentType"] == "application/json"
                json.loads(ev["aspect"]["value"])
            seen["mcl:" + ev["aspectName"]] += 1
        elif kind == "datahub-ece":
            assert ev["version"] == 0 and set(ev["auditStamp"]) == {"time", "actor"}
            seen["ece:" + ev["category"]] += 1
        else:
            assert set(ev) == {"header", "name", "payload"}
            json.loads(ev["payload"]["value"])
            seen["pe:" + ev["name"]] += 1
    for key in ("entityCreated", "entityUpdated", "lineage:entityLineageAdded", "lineage:entityLineageDeleted",
                "mcl:datasetKey", "mcl:schemaMetadata", "mcl:upstreamLineage", "mcl:dataProcessInstanceRunEvent",
                "ece:TAG", "pe:relationshipChangeEvent", "pe:entityChangeEvent"):
        assert seen[key] > 0, key


def test_timeline_and_histories(tagged):
    """Time never goes back, OpenMetadata version chains hold, nothing follows a hard delete."""
    last, version, dead = 0, {}, set()
    for kind, line in tagged:
        if kind not in FAMILIES:
            continue
        ev = json.loads(line)
        if kind == "openmetadata":
            t = ev["timestamp"]
            if ev["entityType"] != "lineage":
                eid = ev["entityId"]
                assert eid not in dead
                prev = ev.get("previousVersion", ev.get("changeDescription", {}).get("previousVersion"))
                if ev["eventType"] != "entityCreated":
                    assert prev == version[eid]
                version[eid] = ev["currentVersion"]
                if ev["eventType"] == "entityDeleted":
                    dead.add(eid)
            else:
                assert ev["entity"]["fromEntity"]["id"] not in dead and ev["entity"]["toEntity"]["id"] not in dead
        elif kind == "datahub-mcl":
            t = ev["created"]["time"]
        elif kind == "datahub-ece":
            t = ev["auditStamp"]["time"]
        else:
            t = ev["header"]["timestampMillis"]
        assert t >= last
        last = t
    assert 1704067200000 <= last < 1704067200000 + 800 * 86_400_000


def test_every_line_maps_as_expected(tagged):
    """Valid lines map without quarantine; each hostile kind gets its quarantine reason."""
    from changeprov.mapping import mapper
    reasons = Counter()
    for kind, line in tagged:
        result = mapper.map_line(line.encode("utf-8"))
        expected = EXPECTED_REASONS.get(kind)
        if kind == "blank":
            assert result.blank
        elif expected is None:  # a family or a replayed duplicate
            assert result.quarantine is None, (kind, result.quarantine, line[:300])
        else:
            assert result.quarantine is not None and result.quarantine.reason in expected, (kind, line[:300])
            reasons[kind] += 1
    assert set(reasons) == {k for k, v in EXPECTED_REASONS.items() if v}


def test_small_and_degenerate_sizes(tmp_path):
    s = generate(tmp_path / "one.jsonl", events=1, seed=5)
    assert s["lines"] == 1 and s["unique_events"] == 1
    s = generate(tmp_path / "clean.jsonl", events=300, seed=5, hostile_share=0)
    assert s["unique_events"] == 300 and s["blank"] == s["duplicates"] == 0
    s = generate(tmp_path / "zero.jsonl", events=0, seed=5)
    assert s["lines"] == 0 and (tmp_path / "zero.jsonl").read_bytes() == b""


def test_days_sets_the_time_span():
    """--days packs the same log into fewer days: fewer date partitions for the export to write."""
    import datetime as dt

    def days_of(days):
        out = set()
        for kind, line in iter_lines(600, seed=3, hostile_share=0, days=days):
            if kind == "openmetadata":
                out.add(dt.datetime.fromtimestamp(json.loads(line)["timestamp"] / 1000, dt.timezone.utc).date())
        return out

    short, default = days_of(7), days_of(730)
    assert min(short) == dt.date(2024, 1, 1) and max(short) <= dt.date(2024, 1, 9)
    assert len(default) > 100
    with pytest.raises(InputError, match="days must be an int from 1"):
        list(iter_lines(10, days=0))


@pytest.mark.parametrize("options, says", [
    ({"events": -1}, "events must be an int >= 0, not -1"),
    ({"events": "5"}, "events must be an int >= 0, not '5'"),
    ({"hostile_share": 2}, "hostile share must be a number between 0 and 1, not 2"),
    ({"hostile_share": float("nan")}, "hostile share must be a number between 0 and 1, not nan"),
    ({"days": 0}, "days must be an int from 1 to"),
    ({"days": 100_000_000}, "days must be an int from 1 to 2,912,807 (the events end before year 10000)"),
    ({"part": "1/2"}, "part must be (i, k) with 1 <= i <= k, not '1/2'"),
])
def test_generate_from_python_checks_its_options_as_the_command_does(tmp_path, options, says):
    """ut40c #4, #5: generate() wrote an empty log for events=-1 and raised plain ValueError / TypeError for
    the others; --days 100000000 wrote times in the year 80,000, which map then quarantined."""
    with pytest.raises(InputError, match=re.escape(says)):
        generate(tmp_path / "e.jsonl", **{"events": 10, **options})
    assert not (tmp_path / "e.jsonl").exists()


@pytest.mark.parametrize("name", ["events.jsonl.bz2", "events.jsonl.deflate", "EVENTS.JSONL.GZ"])
def test_every_suffix_map_reads_is_written_compressed_so(run, tmp_path, name):
    """ut7a #9: `generate --out x.jsonl.bz2` wrote plain JSON under the name, which `map` then could not read."""
    from changeprov.mapping.inputs import open_input

    path, _ = run
    out = tmp_path / name
    summary = generate(out, events=N, seed=0)
    assert summary["compression"] == "." + name.lower().rsplit(".", 1)[1]
    assert out.read_bytes()[:64] != path.read_bytes()[:64]
    with open_input(out) as fh:
        assert fh.read() == path.read_bytes()


def test_a_suffix_only_hadoop_reads_is_refused_and_nothing_written(tmp_path):
    with pytest.raises(InputError, match=r"not \.zst \(Zstandard\)"):
        generate(tmp_path / "e.jsonl.zst", events=5, seed=0)
    assert list(tmp_path.iterdir()) == []


def test_parts_are_the_nights_of_one_log_and_count_what_each_file_holds(tmp_path):
    """ut25 #3: a second night had to be another seed: another world, whose reused ids and versions the
    audit rightly flagged. The parts of one log are its nights; a replay of an event from an earlier
    night is that event's first copy in its file, and the mapper counts it so."""
    from changeprov.mapping.reference import map_to_files

    whole = generate(tmp_path / "all.jsonl", events=3000, seed=4, hostile_share=0.1)
    parts = [generate(tmp_path / f"p{i}.jsonl", events=3000, seed=4, hostile_share=0.1, part=(i, 3))
             for i in (1, 2, 3)]
    assert b"".join((tmp_path / f"p{i}.jsonl").read_bytes() for i in (1, 2, 3)) == (tmp_path / "all.jsonl").read_bytes()
    assert sum(p["unique_events"] for p in parts) > whole["unique_events"]  # a replay across nights is here
    for i, p in enumerate(parts, start=1):
        counts = map_to_files([str(tmp_path / f"p{i}.jsonl")], tmp_path / f"p{i}.nt", tmp_path / f"q{i}.jsonl").as_dict()
        assert (counts["distinct_events"], counts["blank"], counts["quarantined"]) == (
            p["unique_events"], p["blank"], sum(p["hostile"].values())), i
        assert p["lines"] == p["unique_events"] + sum(p["hostile"].values()) + p["blank"] + p["duplicates"]
    with pytest.raises(InputError, match="1 <= i <= k"):
        generate(tmp_path / "x.jsonl", events=10, part=(4, 3))
