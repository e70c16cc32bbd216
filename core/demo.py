"""`changeprov demo`: the main job end to end on sample data, step by step, printing what it does."""

from __future__ import annotations

from pathlib import Path


def run_demo(workdir: str) -> int:
    from changeprov.ontology.summary import vocabulary_report

    out = Path(workdir)
    out.mkdir(parents=True, exist_ok=True)
    print("== 1. vocabulary: ontology, JSON-LD context, SHACL shapes")
    report = vocabulary_report()
    for line in report["lines"]:
        print("  " + line)
    if not report["ok"]:
        return 1
    return 0
