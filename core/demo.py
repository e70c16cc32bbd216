"""`changeprov demo`: the main job end to end on sample data, step by step, printing what it does.

vocabulary → sample events → Spark export → embedded store → named queries → check → audit.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

DEMO_EVENTS = 3000
DEMO_SEED = 7
#: the file that says a folder is the demo's own, whose files a next run may replace
MARK = ".changeprov-demo"


def check_workdir(out: Path) -> None:
    """Refuse a folder the demo did not make that holds anything: the demo replaces its ``events.jsonl``
    and deletes its ``store`` (ut48a #1: a user's store in ``--workdir DIR/store`` was deleted, exit 0).
    A folder the demo made holds its mark file."""
    from changeprov.errors import InputError

    if out.exists() and not out.is_dir():
        raise InputError(f"--workdir {out} is a file, not a folder")
    if not out.is_dir() or (out / MARK).is_file():
        return
    found = sorted(p.name for p in out.iterdir())
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise InputError(f"--workdir {out} holds files the demo did not write ({shown}); the demo replaces its "
                         f"events.jsonl and deletes its store folder, so give a new or empty folder (an earlier "
                         f"demo's folder holds the file {MARK}; delete one from before that file first)")


def _pick_parameters(events: Path) -> dict[str, str]:
    """Query parameters worth showing: the busiest OpenMetadata entity and user, and the table
    with the most downstream lineage events (chosen from the sample, so the answers are not empty)."""
    entities, users, sources = Counter(), Counter(), Counter()
    for raw in events.read_bytes().splitlines():
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(e, dict) or not isinstance(e.get("eventType"), str):
            continue
        if isinstance(e.get("entityFullyQualifiedName"), str):
            entities[e["entityFullyQualifiedName"]] += 1
        if isinstance(e.get("userName"), str):
            users[e["userName"]] += 1
        edge = e.get("entity")
        if e["eventType"] == "entityLineageAdded" and isinstance(edge, dict):
            src = edge.get("fromEntity") or {}
            if isinstance(src, dict) and isinstance(src.get("fullyQualifiedName"), str):
                sources[src["fullyQualifiedName"]] += 1
    return {"entity": entities.most_common(1)[0][0], "user": users.most_common(1)[0][0],
            "lineage": sources.most_common(1)[0][0]}


def _say(text: str) -> None:
    print(text, flush=True)


def run_demo(workdir: str) -> int:
    from changeprov.commands import print_counts
    from changeprov.generate import generate
    from changeprov.ontology.summary import vocabulary_report
    from changeprov.spark.job import export
    from changeprov.spark.session import evaluation_conf, get_session
    from changeprov.sparql.formats import to_table
    from changeprov.sparql.audit import run_audit
    from changeprov.sparql.audit_html import render_html
    from changeprov.sparql.check import run_checks
    from changeprov.sparql.loader import load_export
    from changeprov.sparql.queries import get_query, run_query
    from changeprov.sparql.stores import open_store

    out = Path(workdir).resolve()
    check_workdir(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARK).write_text("written by `changeprov demo`: its next run replaces the files of this folder\n",
                            encoding="utf-8")
    _say("== 1. vocabulary: ontology, JSON-LD context, SHACL shapes")
    report = vocabulary_report()
    for line in report["lines"]:
        _say("  " + line)
    if not report["ok"]:
        return 1

    events = out / "events.jsonl"
    _say(f"\n== 2. sample events: {DEMO_EVENTS} OpenMetadata + DataHub lines (seed {DEMO_SEED}) -> {events}")
    summary = generate(events, events=DEMO_EVENTS, seed=DEMO_SEED)
    _say(f"  families: {summary['families']}; hostile lines: {sum(summary['hostile'].values())}")

    export_dir = out / "export"
    _say(f"\n== 3. Spark export (local[*]) -> {export_dir}")
    spark = get_session(master="local[*]", app_name="changeprov-demo", conf=evaluation_conf([events.as_uri()]))
    result = export(spark, [events.as_uri()], export_dir.as_uri(), progress=lambda m: _say(f"  [export] {m}"))
    print_counts(result.counts, title=f"  run {result.run_id}")
    _say(f"  the quarantined lines, each with its reason, file and line: {export_dir / 'quarantine'}")
    if not result.counts["balanced"]:
        _say("  accounting does not add up")
        return 1

    store_dir = out / "store"
    _say(f"\n== 4. load the export into an embedded store -> {store_dir}")
    shutil.rmtree(store_dir, ignore_errors=True)  # a fresh store: the demo shows one run's answers
    with open_store("embedded", path=store_dir, create=True) as store:
        loaded = load_export(store, export_dir)
        _say(f"  {loaded.triples_after:,} triples from {loaded.files} file(s) in {loaded.seconds:.2f} s")
        params = _pick_parameters(events)
        for i, (name, values) in enumerate((("entity-history", {"entity": params["entity"]}),
                                            ("changes-by-user", {"user": params["user"]}),
                                            ("downstream", {"entity": params["lineage"]})), start=1):
            shown = " ".join(f"--param {k}={v}" for k, v in values.items())
            _say(f"\n== 5.{i} changeprov query {name} {shown} --store {store_dir}")
            rows = run_query(store, get_query(name), values)
            head = type(rows)(rows.variables, rows.rows[:8])
            sys.stdout.write(to_table(head, total=len(rows.rows)))

        _say(f"\n== 6. changeprov check --store {store_dir}")
        checked = run_checks(store)
        for line in checked.lines():
            _say("  " + line)

        report_path = out / "audit.html"
        _say(f"\n== 7. changeprov audit --store {store_dir} --out {report_path}")
        audit = run_audit(store)
        report_path.write_text(render_html(audit), encoding="utf-8")
        counts = ", ".join(f"{kind} {n}" for kind, n in audit.counts().items()) or "none"
        _say(f"  {len(audit.findings)} finding(s): {counts}")
    _say(f"\nThe audit report is {report_path} (open it in a browser); the store is {store_dir}.")
    _say(f"Next: changeprov query --list (every question it answers, with its parameters), and README.md's "
         f"'Common questions', each with --store {store_dir}.")
    bin_dir = Path(sys.executable).parent
    if shutil.which("changeprov") is None and (bin_dir / "activate").is_file():
        # `make demo` installs into .venv, which is not on PATH (ut22 M1)
        _say(f"To run the commands above yourself: . {bin_dir / 'activate'} (or call {bin_dir / 'changeprov'})")
    # the sample log is generated with findings for the audit to show; only an unsound graph is a failure
    return 0 if checked.ok else 1
