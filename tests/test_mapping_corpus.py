"""The reference mapper on the real-shaped corpus: every line maps, output is strict N-Triples,
conforms to the shapes, and does not depend on line order."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from changeprov.mapping.mapper import map_line
from changeprov.mapping.reference import map_to_files

CORPUS_FILES = [
    "openmetadata/change_events.jsonl",
    "datahub/metadata_change_log.jsonl",
    "datahub/entity_change_events.jsonl",
    "datahub/platform_events.jsonl",
]


def corpus_lines(shared_dir: Path, name: str) -> list[bytes]:
    return (shared_dir / "corpus" / name).read_bytes().splitlines()


@pytest.fixture(scope="module")
def corpus_triples(shared_dir):
    triples = set()
    for name in CORPUS_FILES:
        for i, raw in enumerate(corpus_lines(shared_dir, name), start=1):
            triples.update(map_line(raw, source=name, line=i).triples)
    return triples


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_every_corpus_line_maps_without_quarantine(shared_dir, name):
    bad = []
    families = Counter()
    for i, raw in enumerate(corpus_lines(shared_dir, name), start=1):
        result = map_line(raw, source=name, line=i)
        if result.quarantine is not None:
            bad.append(f"line {i}: {result.quarantine.reason} {result.quarantine.detail}")
        families[result.family] += 1
        assert result.triples or result.quarantine
    assert not bad, "\n".join(bad)
    assert None not in families


def test_corpus_output_is_strict_ntriples(shared_dir, check_ntriples, tmp_path):
    counts = map_to_files([str(shared_dir / "corpus")], tmp_path / "out.nt", tmp_path / "bad.jsonl")
    assert counts.balanced() and counts.quarantined_total == 0 and counts.blank == 0
    assert counts.lines_read == sum(len(corpus_lines(shared_dir, n)) for n in CORPUS_FILES)
    verdict = check_ntriples.accept((tmp_path / "out.nt").read_bytes(), "nt")
    assert verdict["ok"], (verdict["ox_err"], verdict["rl_err"])
    assert (tmp_path / "bad.jsonl").read_text() == ""


def test_mapping_does_not_depend_on_line_order(shared_dir, tmp_path):
    """The whole run (map_to_files: its duplicate tracking and partition accounting, rv45d #3), not only
    map_line, over the corpus with its files and each file's lines in reverse order."""
    backwards = tmp_path / "backwards"
    backwards.mkdir()
    for i, name in enumerate(reversed(CORPUS_FILES)):  # files are read in sorted order: prefixed to reverse it
        (backwards / f"{i}-{Path(name).name}").write_bytes(b"\n".join(reversed(corpus_lines(shared_dir, name))) + b"\n")
    runs = []
    for label, inputs in (("forwards", [str(shared_dir / "corpus" / n) for n in CORPUS_FILES]), ("backwards", [str(backwards)])):
        counts = map_to_files(inputs, tmp_path / f"{label}.nt", tmp_path / f"{label}-q.jsonl")
        runs.append((sorted((tmp_path / f"{label}.nt").read_bytes().splitlines()),
                     counts.as_dict()))
    assert runs[0][1]["mapped"] > 0
    assert runs[0] == runs[1]


def test_no_blank_nodes_and_no_relative_iris(corpus_triples):
    for t in corpus_triples:
        for term in (t.subject, t.predicate, t.object):
            if isinstance(term, NamedNode):
                assert ":" in term.value
            else:
                assert term.__class__.__name__ == "Literal", t


def test_platform_event_payloads_map_like_the_bare_entity_change_events(shared_dir):
    """8 PlatformEvent envelopes wrap lines of entity_change_events.jsonl: same event, same triples."""
    bare = set()
    for raw in corpus_lines(shared_dir, "datahub/entity_change_events.jsonl"):
        bare.update(map_line(raw).triples)
    wrapped_ece = [raw for raw in corpus_lines(shared_dir, "datahub/platform_events.jsonl")
                   if b'"entityChangeEvent"' in raw]
    assert len(wrapped_ece) == 8
    for raw in wrapped_ece:
        assert set(map_line(raw).triples) <= bare


def test_corpus_output_conforms_to_the_shapes(corpus_triples):
    from changeprov.ontology.shacl import validate

    report = validate(corpus_triples)
    assert report.conforms, report.text[:4000]


def test_shapes_catch_a_broken_corpus_graph(corpus_triples):
    """Negative control: drop every event's timestamp and the same check must fail."""
    from changeprov.mapping.vocab import om
    from changeprov.ontology.shacl import validate

    broken = [t for t in corpus_triples if t.predicate != om("timestamp")]
    report = validate(broken)
    assert not report.conforms and any("timestamp" in r["path"] for r in report.results)


def test_jsonld_round_trip_of_every_corpus_event(shared_dir):
    from changeprov.mapping.export import from_jsonld, to_jsonld

    for name in CORPUS_FILES:
        for i, raw in enumerate(corpus_lines(shared_dir, name), start=1):
            triples = set(map_line(raw).triples)
            back = set(from_jsonld(to_jsonld(triples)))
            assert back == triples, f"{name}:{i}: {len(triples ^ back)} triples differ after the JSON-LD round trip"
