"""Where the export's time goes, stage by stage (not a test).

    .venv/bin/python bench/export_stages.py EVENTS.jsonl

Runs, in one SparkSession, a count after each stage of the export's data path (read_lines →
map_lines → output_rows → aggregate) and prints each time and its ratio to reading the input
once. Run it on 100 lines and on 20k lines: the difference separates the fixed cost (planning and
compiling the mapping's expressions) from the per-event cost.
"""

from __future__ import annotations

import argparse
import os
import time

from changeprov.spark.job import aggregate, map_lines_for, output_rows, read_lines
from changeprov.spark.session import get_session


def main(path: str) -> None:
    spark = get_session(master="local[*]", app_name="changeprov-export-stages")
    lines = read_lines(spark, [path])
    map_lines = map_lines_for("auto")
    stages = {
        "read": lambda: lines,
        "decode + map": lambda: lines.transform(map_lines),
        "+ output_rows": lambda: lines.transform(map_lines).transform(output_rows),
        "+ aggregate": lambda: lines.transform(map_lines).transform(output_rows).transform(aggregate),
    }
    base = None
    for label, build in stages.items():
        t0 = time.perf_counter()
        n = build().count()
        took = time.perf_counter() - t0
        base = base or took
        print(f"{label:16} {took:8.1f} s  {took / base:6.1f}x read  ({n:,} rows)", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("events", metavar="EVENTS.jsonl", help="an event log (e.g. from changeprov generate)")
    args = ap.parse_args()
    if not os.path.isfile(args.events):  # before Spark starts (ut45e #9: --help was read as the input)
        ap.error(f"no such file: {args.events}")
    main(args.events)
