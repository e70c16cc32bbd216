"""Golden tests: each tests/golden/NAME.jsonl (one event) maps to exactly tests/golden/NAME.ttl.

The graphs have no blank nodes, so isomorphism is set equality; a failure prints the missing and
the unexpected triples in Turtle-like lines. Regenerate after a deliberate model change with
`CHANGEPROV_REGEN_GOLDEN=1 pytest tests/test_golden.py` and review the diff in git.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat, Triple, parse

from changeprov.mapping.export import to_turtle
from changeprov.mapping.mapper import map_line

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.jsonl"))


def _show(triples) -> str:
    return "\n".join(sorted(f"  {t.subject} {t.predicate} {t.object} ." for t in triples))


@pytest.mark.parametrize("name", CASES)
def test_golden(name):
    raw = (GOLDEN / f"{name}.jsonl").read_bytes().strip(b"\n")
    result = map_line(raw, source=f"{name}.jsonl", line=1)
    expected_path = GOLDEN / f"{name}.ttl"
    if result.quarantine is not None:
        pytest.fail(f"{name}: quarantined: {result.quarantine.reason}: {result.quarantine.detail}")
    got = set(result.triples)
    if os.environ.get("CHANGEPROV_REGEN_GOLDEN"):
        expected_path.write_text(to_turtle(got), encoding="utf-8")
    expected = {Triple(q.subject, q.predicate, q.object)
                for q in parse(expected_path.read_bytes(), format=RdfFormat.TURTLE)}
    missing, extra = expected - got, got - expected
    assert not missing and not extra, (
        f"{name}: graph differs from {expected_path.name}\n"
        f"missing ({len(missing)}):\n{_show(missing)}\nunexpected ({len(extra)}):\n{_show(extra)}")


def test_there_are_golden_cases_for_every_family():
    families = {map_line((GOLDEN / f"{n}.jsonl").read_bytes().strip()).family for n in CASES}
    assert families == {"openmetadata", "openmetadata-legacy", "datahub-mcl", "datahub-ece", "datahub-platform"}
