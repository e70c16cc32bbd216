"""Time each query of `changeprov audit` on a store (not a test).

    .venv/bin/python bench/audit_bench.py --store STORE                 # every audit query, no window
    .venv/bin/python bench/audit_bench.py --store STORE --query audit-deletions --file old.rq

Prints, per query: seconds, rows and a digest of the sorted rows, so a rewritten query (``--file``,
run after the named one) can be checked to give the same rows. ``audit-lineage`` runs on the entity
the audit would draw (the most impacted one) unless ``--entity`` names one. Each query runs once: the
point is the order of magnitude (docs/queries.md, rules 6 and 7), not a latency median.
"""

from __future__ import annotations

import argparse
import hashlib
import time

from changeprov.sparql.audit import impact_ranking, run_audit
from changeprov.sparql.queries import get_query, list_queries, load_query_file, run_query
from changeprov.sparql.stores import open_store

NOW_MS = 1_800_000_000_000


def timed(store, q, params: dict) -> tuple[float, int, str]:
    start = time.perf_counter()
    rows = run_query(store, q, params, now_ms=NOW_MS)
    seconds = time.perf_counter() - start
    lines = sorted("\t".join("" if v is None else str(v) for v in r) for r in rows.rows)
    return seconds, len(lines), hashlib.sha1("\n".join(lines).encode()).hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True, help="embedded store folder")
    ap.add_argument("--query", action="append", help="only these audit queries (repeatable)")
    ap.add_argument("--file", action="append", default=[],
                    help="also run these .rq files after the --query one, with its parameters")
    ap.add_argument("--entity", help="entity for audit-lineage (default: the audit's most impacted one)")
    ap.add_argument("--until", help="as_of for audit-lineage (default: now)")
    args = ap.parse_args()
    if args.file and not args.query:
        ap.error("--file runs beside a named query, with its parameters: give --query NAME too")
    store = open_store("embedded", path=args.store, read_only=True)
    names = args.query or [q.name for q in list_queries() if q.name.startswith("audit-")]
    entity = args.entity
    if "audit-lineage" in names and not entity:
        # the findings without the lineage step: the same ranking run_audit uses to pick the entity
        report = run_audit(store, until=args.until, now_ms=NOW_MS, lineage=False)
        ranking = impact_ranking(report.findings)
        entity = ranking[0][0] if ranking else None
    for name in names:
        params = {"entity": entity, "as_of": args.until or "now"} if name == "audit-lineage" else {}
        if name == "audit-lineage" and not entity:
            print(f"{name:24} skipped: no finding names an entity")
            continue
        queries = [(name, get_query(name))] + [(f, load_query_file(f)) for f in args.file]
        for label, q in queries:
            seconds, n, digest = timed(store, q, {k: v for k, v in params.items() if v})
            print(f"{label:24} {seconds:8.2f} s {n:8d} rows  digest {digest}", flush=True)


if __name__ == "__main__":
    main()
