"""docs/model.md's Turtle parses, its worked examples conform to the shapes and are exactly what
the reference mapper produces for the golden inputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat, Triple, parse

from changeprov.mapping.mapper import map_line
from changeprov.ontology.shacl import validate

ROOT = Path(__file__).resolve().parents[1]
MODEL = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"(?:<!-- golden: ([\w-]+) -->\n)?```turtle\n(.*?)```", MODEL, flags=re.S)
EXAMPLES = [(name, body) for name, body in BLOCKS if name]


def triples(text: str) -> set[Triple]:
    return {Triple(q.subject, q.predicate, q.object) for q in parse(text.encode(), format=RdfFormat.TURTLE)}


def test_model_has_examples_for_every_family():
    assert len(EXAMPLES) >= 12
    families = {map_line((ROOT / "tests" / "golden" / f"{n}.jsonl").read_bytes().strip()).family for n, _ in EXAMPLES}
    assert families == {"openmetadata", "openmetadata-legacy", "datahub-mcl", "datahub-ece", "datahub-platform"}


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_turtle_block_parses(index):
    name, body = BLOCKS[index]
    prefixes = BLOCKS[0][1] if not name else ""
    triples(prefixes + body)


@pytest.mark.parametrize("name, body", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_example_conforms_and_is_the_mapper_output(name, body):
    shown = triples(body)
    report = validate(shown)
    assert report.conforms, report.text[:3000]
    mapped = set(map_line((ROOT / "tests" / "golden" / f"{name}.jsonl").read_bytes().strip()).triples)
    assert shown == mapped, f"docs/model.md example {name} is stale: run python docs/examples.py"


def test_the_library_query_example_runs_as_written(tmp_path, monkeypatch, capsys):
    """ut19 #1: nothing showed how to load and query from Python; docs/library.md's example must run."""
    library = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    example = re.search(r"## Querying\n.*?```python\n(.*?)```", library, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/library.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert len(out) > 2 and re.fullmatch(r"[0-9]+ events;.*", out[-1]) and int(out[-1].split()[0]) > 0


def test_every_dotted_name_the_library_page_gives_exists():
    """ut41a #5b: docs/library.md named NTriplesSyntaxError as a changeprov.errors class, which no import found."""
    import importlib

    library = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    names = set(re.findall(r"`(changeprov(?:\.\w+)+)", library))
    assert len(names) > 5
    for name in sorted(names):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                found = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attr in parts[cut:]:
                assert hasattr(found, attr), f"docs/library.md names {name}: {'.'.join(parts[:cut])} has no {attr}"
                found = getattr(found, attr)
            break


def test_readme_gives_every_audit_kind_its_severity():
    """rv46 #7: a kind's severity decides `audit --fail-on`; a severity changed in the code changed no
    test, and README did not say which kind was which."""
    from changeprov.sparql.audit import KINDS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = {severity: set(re.findall(r"`([\w-]+)`", kinds))
             for severity, kinds in re.findall(r"^\| (high|medium|low) \| (.+) \|$", readme, flags=re.M)}
    assert table == {severity: {k for k, kind in KINDS.items() if kind.severity == severity}
                     for severity in ("high", "medium", "low")}
