"""Benchmark of `changeprov export` against its floor and two baselines (not a test).

    .venv/bin/python bench/export_bench.py                    # 1M events (≈1.5 GB), the issue's setting
    .venv/bin/python bench/export_bench.py --events 200000    # quicker

All runs happen in this one process and one SparkSession, on the same generated input, so the
ratios are comparable even on a noisy machine:

  (a) floor    parse the input once as the export does (a variant per line) and write it back as
               JSON text, plus read the produced N-Triples as text and write them back (touching
               input and output once)
  (b) export   changeprov export (mapping, dedup, quarantine, manifest, partitioned by date)
  (c) rdflib   on --small-events: the naive single-process baseline, one rdflib Graph, N-Triples
  (d) mapper   the reference mapper as one Python process writing N-Triples (changeprov map)

Prints events/s, triples/s, peak memory (RSS of this process and its JVM children) and the
ratios b/a, c/b and b/d style speed-ups.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path


class PeakRss:
    """Peak resident memory of this process tree, sampled from /proc (Linux).

    Only processes seen in two consecutive samples count: the JVM starts a short-lived ``chmod``
    process for every file and folder it writes locally (README), and a sample that catches one
    between fork and exec sees a second copy of the JVM's resident pages, shared, not new."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval, self.peak, self._stop = interval, 0, threading.Event()
        self._previous: set[int] = set()

    def _tree_rss(self) -> dict[int, int]:
        sizes: dict[int, int] = {}
        pids = {os.getpid()}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    # the command name may hold spaces and parentheses: fields start after the last ")"
                    stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                    if int(stat[1]) in pids or int(entry) in pids:
                        pids.add(int(entry))
                except OSError:
                    continue
        for pid in pids:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        sizes[pid] = int(line.split()[1]) * 1024
            except OSError:
                continue
        return sizes

    def __enter__(self):
        self.peak = 0
        self._previous = set()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            sizes = self._tree_rss()
            self.peak = max(self.peak, sum(rss for pid, rss in sizes.items()
                                           if pid in self._previous or pid == os.getpid()))
            self._previous = set(sizes)
            time.sleep(self.interval)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def timed(label: str, fn):
    with PeakRss() as mem:
        t0 = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - t0
    print(f"  {label:<44} {seconds:8.1f} s   peak RSS {mem.peak / 2**30:5.2f} GiB", flush=True)
    return seconds, result, mem.peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--small-events", type=int, default=100_000, help="input size of the rdflib baseline")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--skip-mapper", action="store_true", help="skip (d), the slowest part")
    args = parser.parse_args()

    from changeprov.generate import generate
    from changeprov.mapping.reference import map_inputs, map_to_files
    from changeprov.spark.job import export, resolve_inputs
    from changeprov.spark.session import evaluation_conf, get_session

    work = Path(args.workdir or tempfile.mkdtemp(prefix="changeprov-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    big, small = work / "events.jsonl", work / "events-small.jsonl"
    print(f"workdir {work}")
    if not big.exists():
        timed(f"generate {args.events:,} events", lambda: generate(big, events=args.events, seed=args.seed))
    if not small.exists():
        timed(f"generate {args.small_events:,} events", lambda: generate(small, events=args.small_events,
                                                                          seed=args.seed))
    print(f"input: {big.stat().st_size / 2**30:.2f} GiB")

    spark = get_session(master="local[*]", app_name="changeprov-bench",
                        conf={**evaluation_conf([big.as_uri()]), "spark.driver.memory": args.driver_memory})
    def floor():
        # the input parsed once the way the export parses it (a variant per line) and written back
        # as JSON text, then the output read and written back once
        from pyspark.sql import functions as F

        events = spark.read.option("singleVariantColumn", "v").json(str(big))
        events.select(F.to_json("v").alias("value")).write.mode("overwrite").text(str(work / "floor-in"))
        nt = spark.read.text(str(work / "export" / "triples"))
        nt.select("value").write.mode("overwrite").text(str(work / "floor-out"))

    print("\n(b) changeprov export")
    tb, result, mem_b = timed("export", lambda: export(spark, resolve_inputs([str(big)]), str(work / "export")))
    counts = result.counts
    print(f"      {counts['lines_read']:,} lines, {counts['triples']:,} triples, "
          f"{counts['quarantined']:,} quarantined, balanced={counts['balanced']}")
    print("(a) floor: the same input read and written once + the output read and written once")
    ta, _, _ = timed("floor", floor)

    print(f"(c) naive rdflib baseline on {args.small_events:,} events")

    def rdflib_baseline():
        import rdflib

        g = rdflib.Graph()
        n = 0

        def term(t):
            from pyoxigraph import Literal, NamedNode
            if isinstance(t, NamedNode):
                return rdflib.URIRef(t.value)
            if isinstance(t, Literal):
                return rdflib.Literal(t.value, datatype=rdflib.URIRef(t.datatype.value))
            raise TypeError(t)

        for _src, _line, res in map_inputs([str(small)]):
            for t in res.triples:
                g.add((term(t.subject), term(t.predicate), term(t.object)))
                n += 1
        g.serialize(destination=str(work / "rdflib.nt"), format="nt")
        return n

    tc, _, mem_c = timed("rdflib Graph + serialize", rdflib_baseline)
    td = None
    if not args.skip_mapper:
        print(f"(d) reference mapper, one Python process, {args.events:,} events")
        td, ref_counts, mem_d = timed("changeprov map", lambda: map_to_files(
            [str(big)], work / "ref.nt", work / "ref-q.jsonl"))

    ev = counts["lines_read"]
    print("\nresults")
    print(f"  export: {ev / tb:,.0f} events/s, {counts['triples'] / tb:,.0f} triples/s, peak {mem_b / 2**30:.2f} GiB")
    print(f"  export / floor          b/a = {tb / ta:.2f}x   (target <= 2.0)")
    rate_c = args.small_events / tc
    print(f"  rdflib baseline: {rate_c:,.0f} events/s; export is {(ev / tb) / rate_c:.1f}x faster (target >= 20)")
    if td:
        print(f"  reference mapper: {ev / td:,.0f} events/s; export is {td / tb:.2f}x faster (target >= 2)")
    if os.environ.get("CHANGEPROV_BENCH_KEEP") is None and args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
