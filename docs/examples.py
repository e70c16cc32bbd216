"""Regenerate the worked examples of docs/model.md from the golden files (tests/golden/).

    python docs/examples.py        # rewrites the block between the examples markers

Each example is the reference mapper's exact output for the golden input; tests/test_docs.py
checks that the Turtle in model.md parses, conforms to the shapes and equals that output.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "docs" / "model.md"
GOLDEN = ROOT / "tests" / "golden"
BEGIN, END = "<!-- examples:begin -->", "<!-- examples:end -->"

EXAMPLES = [
    ("OpenMetadata: entity created", "om-entity-created"),
    ("OpenMetadata: entity created with tags and owners", "om-entity-created-with-tags"),
    ("OpenMetadata: entity updated (fields added: owners, tags)", "om-updated-fields-added"),
    ("OpenMetadata: entity soft-deleted", "om-soft-deleted"),
    ("OpenMetadata: entity restored", "om-restored"),
    ("OpenMetadata: entity deleted (hard)", "om-hard-deleted"),
    ("OpenMetadata: lineage added (with column lineage and SQL)", "om-lineage-added"),
    ("OpenMetadata: lineage deleted", "om-lineage-deleted"),
    ("OpenMetadata legacy event (dateTime)", "om-legacy-datetime-event"),
    ("DataHub MCL: UPSERT of upstreamLineage with previousAspectValue", "mcl-upsert-with-previous-lineage"),
    ("DataHub MCL: DELETE with previousAspectValue", "mcl-delete-with-previous"),
    ("DataHub EntityChangeEvent: TAG ADD", "ece-tag-add"),
    ("DataHub PlatformEvent envelope: entityChangeEvent", "platform-entity-change-event"),
    ("DataHub PlatformEvent envelope: relationshipChangeEvent ADD", "platform-relationship-add"),
]

#: what the Turtle alone does not say, under an example's input line (kept here: a regeneration
#: rewrites everything between the markers)
NOTES = {
    "om-hard-deleted": "Its `changeDescription` repeats the entity's last change (here the soft delete's `deleted`: "
                       "false → true; SOURCES.md): it is checked like any other, but maps to no field change, since "
                       "the user who deleted did not make that change again. The event's `entityState` keeps it.",
}


def render() -> str:
    parts = [BEGIN, ""]
    for title, name in EXAMPLES:
        event = json.loads((GOLDEN / f"{name}.jsonl").read_text(encoding="utf-8"))
        keys = ", ".join(f"`{k}`" for k in event)
        parts += [f"### {title}", "",
                  f"Input: [`tests/golden/{name}.jsonl`](../tests/golden/{name}.jsonl) (keys: {keys}).", "",
                  *([NOTES[name], ""] if name in NOTES else []),
                  f"<!-- golden: {name} -->", "```turtle",
                  (GOLDEN / f"{name}.ttl").read_text(encoding="utf-8").rstrip("\n"), "```", ""]
    parts.append(END)
    return "\n".join(parts)


def main() -> None:
    text = MODEL.read_text(encoding="utf-8")
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
    else:
        head, tail = text.rstrip("\n") + "\n\n## Worked examples\n\n", "\n"
    MODEL.write_text(head + render() + tail, encoding="utf-8")


if __name__ == "__main__":
    main()
