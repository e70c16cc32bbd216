"""Benchmark of the store and the named queries (`changeprov load`, `changeprov query`) (not a test).

    .venv/bin/python bench/query_bench.py                   # the issue's setting: export of 250k events
                                                            # (>= 5M triples), stores of 2M and 20M triples
    .venv/bin/python bench/query_bench.py --sizes 200000 2000000 --export-events 20000   # quick, end to end
    .venv/bin/python bench/query_bench.py --skip-load --queries upstream entity-history  # queries only

Data, made once and cached in --workdir (default /work/benchdata/query; the defaults need ≈ 25 GB):

  events-E-seedS.jsonl, export-E-seedS/   E generated events and their real Spark export
                                          (`changeprov export`, DIR/triples/source=*/date=*/part-*.nt)
  store-N-seedS/nt/part-*.nt              ≈ N triples: generated events mapped by the reference mapper
                                          (in chunks, in parallel; the chunks share entity triples, the
                                          store's set semantics removes the duplicates)
  store-N-seedS/db/                       those N-Triples in an embedded store, loaded with the store's
                                          own loader (EmbeddedStore.load_ntriples = pyoxigraph bulk load),
                                          then compacted as `changeprov load` does

1. load (on the export): `changeprov load EXPORT --store DB` (its default: two parallel file groups into
   the empty store, then compaction; also `--jobs 1` and `--no-optimize`) against `oxigraph load --file <the same
   part files>` (and, for reference, `oxigraph load` of the same triples as one concatenated file), and
   rdflib ``Graph.parse`` on the first 1M triples of the export (with changeprov and oxigraph on that
   1M file too). Each loader is a child process: wall time including the final flush, peak RSS.

2. queries, per store size: the required named queries with parameters picked from the data (the
   busiest entity for the per-entity queries, the busiest person for changes-by-user, the most changed
   tag, the entity with the longest upstream resp. downstream chain for the lineage queries, verified
   with the query itself; on the larger stores, the values whose answers are closest in size to those
   of the smallest store, so growth compares the same work on more data), through run_query as the
   CLI runs them, against
     embedded  the on-disk store (opened read-only, as `changeprov query --store` does)
     endpoint  `oxigraph serve` on the same store, through the remote store (SPARQL 1.1 protocol)
     rdflib    an rdflib in-memory Graph of the same N-Triples (sizes <= --rdflib-max only)
   Each engine runs in a child process; the first run of a query is reported as cold, the median of
   the next --repeat runs as the latency. A run longer than --timeout is killed (reported as ">T s");
   a query whose first run takes more than --slow seconds is not repeated (its median is that run).

3. growth: embedded (and endpoint) median latency at the largest size over the smallest.

Ends with a "targets" block (the issue's acceptance numbers), each marked met / NOT met, and writes the
numbers as JSON next to the data (results-*.json).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from changeprov.sparql.server import oxigraph_server

BIN = Path(sys.executable).parent
OXIGRAPH = BIN / "oxigraph"
CHANGEPROV = BIN / "changeprov"

REQUIRED = ("entity-history", "who-changed", "changes-by-user", "tag-changes", "upstream", "downstream",
            "impact", "entity-state", "deleted-entities")
# the queries whose latency must not grow with the store (their answer does not grow with it either);
# tag-changes (a fixed set of tags) and deleted-entities (global) legitimately grow
PER_ENTITY_OR_USER = ("entity-history", "who-changed", "changes-by-user", "upstream", "downstream", "impact",
                      "entity-state")
TRIPLES_PER_EVENT = 20  # the generator's mix maps to ≈ 20.8 distinct triples per event
CHUNK_EVENTS = 250_000  # chunks of the log, mapped in parallel processes
MIN_EXPORT_TRIPLES = 5_000_000
MIN_HOPS = 5

PREFIXES = ("PREFIX om: <https://open-metadata.org/schema/type/changeEvent/>\n"
            "PREFIX prov: <http://www.w3.org/ns/prov#>\n")


# ----------------------------------------------------------------------------- child processes


@dataclass
class ChildRun:
    seconds: float
    peak_rss: int
    returncode: int
    output: str


def run_child(cmd: list[str], *, log: Path) -> ChildRun:
    """Run ``cmd`` to completion: wall time, peak RSS of that child alone (wait4), output (kept in ``log``)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keeps Popen from waiting again
    return ChildRun(seconds, usage.ru_maxrss * 1024, proc.returncode, log.read_text("utf-8", errors="replace"))


def checked(run: ChildRun, what: str) -> ChildRun:
    if run.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {run.returncode}):\n{run.output[-3000:]}")
    return run


# a changeprov embedded store loaded from N-Triples files, one bulk load per file (as the store's loader),
# then compacted as `changeprov load` does (argv[1] = "optimize" | "no-optimize" | "optimize-only")
LOAD_NT_CHILD = """
import json, sys, time
from changeprov.sparql.stores import open_store
with open_store("embedded", path=sys.argv[2], create=True) as store:
    for name in sys.argv[3:] if sys.argv[1] != "optimize-only" else ():
        with open(name, "rb") as f:
            store.load_ntriples(f)
    optimize_seconds = None
    if sys.argv[1] != "no-optimize":
        t0 = time.perf_counter()
        store.optimize()
        optimize_seconds = time.perf_counter() - t0
    n = store.count()
print(json.dumps({"triples": n, "optimize_seconds": optimize_seconds}))
"""

RDFLIB_PARSE_CHILD = """
import json, sys
import rdflib
g = rdflib.Graph()
for name in sys.argv[1:]:
    g.parse(name, format="nt")
print(json.dumps({"triples": len(g)}))
"""


def last_json(output: str) -> dict:
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON result in the child's output:\n{output[-2000:]}")


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ----------------------------------------------------------------------------- formatting


def fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(r: float | None, *, lower_bound: bool = False) -> str:
    if r is None:
        return "-"
    return (">" if lower_bound else "") + (f"{r:.1f}x" if r >= 10 else f"{r:.2f}x")


def table(headers: list[str], rows: list[list], *, indent: str = "  ") -> str:
    cells = [[str(c) for c in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = []
    for n, r in enumerate(cells):
        out.append(indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            out.append(indent + "  ".join("-" * w for w in widths))
    return "\n".join(out)


def say(text: str = "") -> None:
    print(text, flush=True)


# ----------------------------------------------------------------------------- data


def generate_log(path: Path, events: int, seed: int) -> None:
    from changeprov.generate import generate

    if path.exists():
        return
    tmp = path.with_name(path.name + ".tmp")
    t0 = time.perf_counter()
    generate(tmp, events=events, seed=seed)
    tmp.rename(path)  # a killed run leaves no half log that a later run would reuse
    say(f"  generated {events:,} events -> {path} in {time.perf_counter() - t0:.1f} s")


def ensure_export(work: Path, events: int, seed: int) -> Path:
    """The real Spark export of ``events`` generated events (made once: it takes minutes)."""
    out = work / f"export-{events}-seed{seed}"
    if (out / "_SUCCESS").is_file():
        return out
    log = work / f"events-{events}-seed{seed}.jsonl"
    generate_log(log, events, seed)
    say(f"  changeprov export {log.name} --out {out.name} (Spark, local[*]; minutes) ...")
    run = checked(run_child([CHANGEPROV, "export", log, "--out", out, "--mode", "overwrite"],
                            log=work / "logs" / f"export-{events}.log"), "changeprov export")
    say(f"  exported in {run.seconds:.0f} s")
    return out


def _map_chunk(args: tuple[str, str, str]) -> dict:
    from changeprov.mapping.reference import map_to_files

    log, nt, quarantine = args
    tmp = Path(nt + ".tmp")
    counts = map_to_files([log], tmp, Path(quarantine)).as_dict()
    tmp.rename(nt)
    return counts


def ensure_store_data(work: Path, triples: int, seed: int, *, jobs: int) -> tuple[list[Path], Path, dict]:
    """(N-Triples parts, embedded store, facts) for a store of ≈ ``triples`` triples; made once."""
    root = work / f"store-{triples}-seed{seed}"
    nt_dir, db, facts_file = root / "nt", root / "db", root / "facts.json"
    done = nt_dir / "_DONE"
    if not done.exists():
        shutil.rmtree(nt_dir, ignore_errors=True)
        nt_dir.mkdir(parents=True)
        events = triples // TRIPLES_PER_EVENT + 100
        log = root / "events.jsonl"
        generate_log(log, events, seed)
        # chunks of the log, mapped in parallel by the reference mapper (one process per core)
        chunks, out = [], None
        with log.open("rb") as f:
            for i, line in enumerate(f):
                if i % CHUNK_EVENTS == 0:
                    if out:
                        out.close()
                    chunks.append(root / f"chunk-{len(chunks):03d}.jsonl")
                    out = chunks[-1].open("wb")
                out.write(line)
        if out:
            out.close()
        t0 = time.perf_counter()
        work_items = [(str(c), str(nt_dir / f"part-{i:03d}.nt"), str(root / f"quarantine-{i:03d}.jsonl"))
                      for i, c in enumerate(chunks)]
        with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(chunks)))) as pool:
            counts = list(pool.map(_map_chunk, work_items))
        mapped = sum(c["triples"] for c in counts)
        say(f"  reference mapper: {events:,} events in {len(chunks)} chunk(s) -> {mapped:,} triples "
            f"(before cross-chunk dedup) in {time.perf_counter() - t0:.0f} s")
        for c in chunks:
            c.unlink()
        log.unlink()  # the N-Triples are what the benchmark needs; the log is cheap to regenerate
        done.write_text(json.dumps({"events": events, "mapped_triples": mapped}) + "\n")
    parts = sorted(nt_dir.glob("part-*.nt"))
    if not facts_file.exists():
        shutil.rmtree(db, ignore_errors=True)
        run = checked(run_child([sys.executable, "-c", LOAD_NT_CHILD, "optimize", db, *parts],
                                log=work / "logs" / f"store-{triples}-load.log"), "store load")
        out = last_json(run.output)
        n = out["triples"]
        facts = {"triples": n, "load_seconds": run.seconds, "optimize_seconds": out["optimize_seconds"],
                 "peak_rss": run.peak_rss, "bytes": dir_size(db), **json.loads(done.read_text())}
        facts_file.write_text(json.dumps(facts) + "\n")
        say(f"  embedded store {db}: {n:,} triples loaded and compacted in {run.seconds:.1f} s "
            f"({n / run.seconds:,.0f} triples/s, peak RSS {run.peak_rss / 2**30:.2f} GiB)")
    facts = json.loads(facts_file.read_text())
    if "optimize_seconds" not in facts:  # a store cached before `load` compacted: compact it now
        run = checked(run_child([sys.executable, "-c", LOAD_NT_CHILD, "optimize-only", db],
                                log=work / "logs" / f"store-{triples}-optimize.log"), "store compaction")
        facts.update(optimize_seconds=last_json(run.output)["optimize_seconds"], bytes=dir_size(db))
        facts_file.write_text(json.dumps(facts) + "\n")
        say(f"  compacted the cached store {db} in {facts['optimize_seconds']:.1f} s")
    if facts["triples"] < triples:
        say(f"  note: {facts['triples']:,} distinct triples, fewer than the {triples:,} asked for")
    return parts, db, facts


def concat_files(files: list[Path], out: Path, *, max_lines: int | None = None) -> int:
    """Concatenate N-Triples files (newline-safe), optionally only the first ``max_lines`` lines; lines written."""
    if out.exists():
        with out.open("rb") as f:
            return sum(1 for _ in f)
    from changeprov.sparql.loader import iter_partition_lines

    tmp = out.with_name(out.name + ".tmp")
    n = 0
    with tmp.open("wb") as dst:
        for line in iter_partition_lines(files):  # the loader's reader: .nt and .nt.gz alike
            if not line.strip():
                continue
            dst.write(line if line.endswith(b"\n") else line + b"\n")
            n += 1
            if max_lines is not None and n >= max_lines:
                break
    tmp.rename(out)
    return n


# ----------------------------------------------------------------------------- 1. load


def bench_load(work: Path, export: Path, *, rdflib_triples: int, skip_rdflib: bool) -> dict:
    from changeprov.sparql.loader import committed_partitions

    parts = committed_partitions(export)
    manifest = json.loads((export / "manifest.json").read_text())
    total = manifest["counts"]["triples"]
    size = sum(p.stat().st_size for p in parts)
    say(f"\n== 1. load: Spark export {export}\n   {len(parts):,} part file(s), {total:,} triples, {size / 2**30:.2f} GiB")
    if total < MIN_EXPORT_TRIPLES:
        say(f"   note: fewer than {MIN_EXPORT_TRIPLES:,} triples (the issue's minimum); use --export-events 250000")
    whole = work / f"{export.name}.nt"
    small = work / f"{export.name}-{rdflib_triples // 1000}k.nt"
    concat_files(parts, whole)
    small_n = concat_files(parts, small, max_lines=rdflib_triples)
    tmp = work / "tmp-load"
    shutil.rmtree(tmp, ignore_errors=True)
    logs = work / "logs"
    results: dict = {"export": str(export), "files": len(parts), "triples": total, "bytes": size,
                     "small_triples": small_n, "runs": {}}

    def one(key: str, label: str, cmd: list, triples: int, db: Path | None, *, keep: bool = False) -> None:
        say(f"   {label} ...")
        run = checked(run_child(cmd, log=logs / f"load-{key}.log"), label)
        results["runs"][key] = {"label": label, "seconds": run.seconds, "peak_rss": run.peak_rss,
                                "triples": triples, "rate": triples / run.seconds,
                                "store_bytes": dir_size(db) if db else None}
        if db is not None and not keep:
            shutil.rmtree(db, ignore_errors=True)  # the stores are big; only their timings are kept

    one("changeprov", "changeprov load EXPORT --store DB", [CHANGEPROV, "load", export, "--store", tmp / "cp"],
        total, tmp / "cp")
    one("changeprov-noopt", "changeprov load --no-optimize (no compaction)",
        [CHANGEPROV, "load", export, "--store", tmp / "cp-noopt", "--no-optimize"], total, tmp / "cp-noopt")
    one("changeprov-serial", "changeprov load --jobs 1 (one bulk load)",
        [CHANGEPROV, "load", export, "--store", tmp / "cp-serial", "--jobs", "1"], total, tmp / "cp-serial")
    one("oxigraph-parts", "oxigraph load --file <the same part files>",
        [OXIGRAPH, "load", "--location", tmp / "ox-parts", "--file", *parts], total, tmp / "ox-parts", keep=True)
    # `oxigraph load` ends advising `oxigraph optimize` before read-heavy work; `changeprov load` does it
    one("oxigraph-optimize", "  then oxigraph optimize (compaction)",
        [OXIGRAPH, "optimize", "--location", tmp / "ox-parts"], total, tmp / "ox-parts")
    one("oxigraph-file", "oxigraph load --file <them as one file>",
        [OXIGRAPH, "load", "--location", tmp / "ox-file", "--file", whole], total, tmp / "ox-file")
    one("changeprov-small", f"changeprov embedded loader, first {small_n:,}",
        [sys.executable, "-c", LOAD_NT_CHILD, "optimize", tmp / "cp-small", small], small_n, tmp / "cp-small")
    one("oxigraph-small", f"oxigraph load, first {small_n:,}",
        [OXIGRAPH, "load", "--location", tmp / "ox-small", "--file", small], small_n, tmp / "ox-small")
    if not skip_rdflib:
        one("rdflib-small", f"rdflib Graph.parse, first {small_n:,}",
            [sys.executable, "-c", RDFLIB_PARSE_CHILD, small], small_n, None)
    shutil.rmtree(tmp, ignore_errors=True)

    runs = results["runs"]
    ours = runs["changeprov"]
    rows = []
    for key, r in runs.items():
        ref = ours if not key.endswith("-small") else runs["changeprov-small"]
        compaction = key == "oxigraph-optimize"  # a step of the run above, not a loader of its own
        rows.append([r["label"], f"{r['triples']:,}", fmt_s(r["seconds"]), "-" if compaction else f"{r['rate']:,.0f}",
                     f"{r['peak_rss'] / 2**30:.2f} GiB",
                     f"{r['store_bytes'] / 2**30:.2f} GiB" if r["store_bytes"] else "-",
                     "-" if compaction else fmt_ratio(ref["rate"] / r["rate"])])
    say("\n" + table(["loader (child process, wall time incl. flush)", "triples", "time", "triples/s", "peak RSS",
                      "store", "changeprov faster by"], rows))
    if "rdflib-small" in runs:
        r = ours["rate"] / runs["rdflib-small"]["rate"]
        results["vs_rdflib"] = r
        results["noopt_vs_rdflib"] = runs["changeprov-noopt"]["rate"] / runs["rdflib-small"]["rate"]
        say(f"\n   changeprov load on the export ({ours['rate']:,.0f} triples/s) vs rdflib Graph.parse on "
            f"{small_n:,} triples ({runs['rdflib-small']['rate']:,.0f} triples/s): {fmt_ratio(r)} "
            f"(without compaction, which rdflib does not do: {fmt_ratio(results['noopt_vs_rdflib'])})")
    results["vs_oxigraph_parts"] = runs["oxigraph-parts"]["seconds"] / ours["seconds"]
    results["vs_oxigraph_file"] = runs["oxigraph-file"]["seconds"] / ours["seconds"]
    results["noopt_vs_oxigraph_parts"] = runs["oxigraph-parts"]["seconds"] / runs["changeprov-noopt"]["seconds"]
    results["vs_oxigraph_parts_optimized"] = (runs["oxigraph-parts"]["seconds"]
                                              + runs["oxigraph-optimize"]["seconds"]) / ours["seconds"]
    say(f"   changeprov load vs oxigraph load on the same {len(parts):,} files: "
        f"{fmt_ratio(results['vs_oxigraph_parts'])} (as one file: {fmt_ratio(results['vs_oxigraph_file'])}; "
        f"both without compaction: {fmt_ratio(results['noopt_vs_oxigraph_parts'])}; both with: "
        f"{fmt_ratio(results['vs_oxigraph_parts_optimized'])})")
    return results


# ----------------------------------------------------------------------------- query engines


def _query_worker(conn, kind: str, target) -> None:
    """Child process: open one store, then run (query, parameters) requests until None."""
    from changeprov.sparql.queries import get_query, run_query
    from changeprov.sparql.rdflib_store import RdflibStore
    from changeprov.sparql.stores import open_store

    t0 = time.perf_counter()
    if kind == "embedded":
        store = open_store("embedded", path=target, read_only=True)  # as `changeprov query --store`
    elif kind == "endpoint":
        store = open_store("remote", endpoint=target, timeout=7 * 86400)  # the parent enforces the timeout
    else:
        import rdflib

        graph = rdflib.Graph()
        for name in target:  # rdflib's own parser (RdflibStore.load_ntriples validates with pyoxigraph first)
            graph.parse(name, format="nt")
        store = RdflibStore(graph)
    conn.send(("ready", time.perf_counter() - t0, len(store._graph) if kind == "rdflib" else None))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        name, params = msg
        t0 = time.perf_counter()
        try:
            rows = run_query(store, get_query(name), params)
        except Exception as exc:  # reported, not fatal: the other queries still run
            conn.send(("error", time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"[:400]))
            continue
        seconds = time.perf_counter() - t0
        hops = None
        if "hops" in rows.variables:
            hops = max((int(h.value) for h in rows.column("hops") if h is not None), default=0)
        conn.send(("ok", seconds, len(rows.rows), hops))
    store.close()


@dataclass
class Outcome:
    status: str  # ok | error | timeout
    seconds: float = 0.0
    rows: int | None = None
    hops: int | None = None
    detail: str = ""


class Engine:
    """One store kind in a child process, restarted after a run is killed for taking too long."""

    def __init__(self, kind: str, target, *, ready_timeout: float = 7200.0):
        self.kind, self.target, self.ready_timeout = kind, target, ready_timeout
        self.proc = self.conn = None
        self.open_seconds: float | None = None
        self.triples: int | None = None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_query_worker, args=(child, self.kind, self.target), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(self.ready_timeout):
            self._kill()
            raise RuntimeError(f"{self.kind}: the store did not open within {self.ready_timeout:.0f} s")
        try:
            _, self.open_seconds, self.triples = self.conn.recv()
        except EOFError:
            self._kill()
            raise RuntimeError(f"{self.kind}: the query process died while opening the store") from None

    def _kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
        self.proc = self.conn = None

    def run(self, name: str, params: dict[str, str], timeout: float) -> Outcome:
        if self.proc is None:
            self._start()
        self.conn.send((name, params))
        if not self.conn.poll(timeout):
            self._kill()
            return Outcome("timeout", timeout)
        try:
            status, seconds, *rest = self.conn.recv()
        except EOFError:
            self._kill()
            return Outcome("error", detail="the query process died (out of memory?)")
        if status == "error":
            return Outcome("error", seconds, detail=rest[0])
        return Outcome("ok", seconds, rows=rest[0], hops=rest[1])

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.conn.send(None)
                self.proc.join(30)
            except (BrokenPipeError, OSError):
                pass
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join()
        self.proc = self.conn = None


@dataclass
class Timing:
    runs: list[float] = field(default_factory=list)
    rows: int | None = None
    hops: int | None = None
    timeout: float | None = None
    error: str | None = None

    @property
    def cold(self) -> float | None:
        return self.runs[0] if self.runs else None

    @property
    def median(self) -> float | None:
        if self.timeout is not None or self.error is not None:
            return None if len(self.runs) < 2 else statistics.median(self.runs[1:])
        if not self.runs:
            return None
        return statistics.median(self.runs[1:]) if len(self.runs) > 1 else self.runs[0]

    def show_cold(self) -> str:
        if self.runs:
            return fmt_s(self.cold)
        return self._failure()

    def show_median(self) -> str:
        if self.timeout is not None or self.error is not None:
            return self._failure()
        return fmt_s(self.median) + ("" if len(self.runs) > 1 else " (1 run)")

    def _failure(self) -> str:
        if self.timeout is not None:
            return f">{self.timeout:.0f} s"
        return "error" if self.error else "-"


def measure(engine: Engine, name: str, params: dict[str, str], *, repeat: int, timeout: float,
            slow: float) -> Timing:
    t = Timing()
    for i in range(1 + repeat):
        out = engine.run(name, params, timeout)
        if out.status == "timeout":
            t.timeout = timeout
            break
        if out.status == "error":
            t.error = out.detail
            break
        t.runs.append(out.seconds)
        t.rows, t.hops = out.rows, out.hops
        if i == 0 and out.seconds > slow:
            break
    return t


# ----------------------------------------------------------------------------- parameters


def _select(store, text: str, bindings=None) -> list[tuple]:
    return store.select(PREFIXES + text, bindings).rows


def _name_of(store, node) -> str | None:
    """The FQN or URN that names ``node`` (what a user passes on the CLI), if it resolves back to it."""
    from changeprov.errors import InputError
    from changeprov.sparql.queries import resolve_node

    rows = _select(store, "SELECT ?node ?name WHERE { #@bindings\n"
                          "OPTIONAL { ?node om:fullyQualifiedName ?f } OPTIONAL { ?node om:urn ?u } "
                          "BIND(COALESCE(?f, ?u) AS ?name) }", {"node": node})
    name = rows[0][1].value if rows and rows[0][1] is not None else None
    if name is None:
        return None
    try:
        return name if resolve_node(store, name) == node else None
    except InputError:  # ambiguous name
        return None


def longest_paths(adj: dict) -> dict:
    """Longest path length (in edges) from every node along ``adj`` (cycles are cut where met)."""
    depth: dict = {}
    state: dict = {}
    for root in adj:
        if root in depth:
            continue
        stack = [(root, iter(adj.get(root, ())))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                depth[node] = max((depth.get(c, 0) + 1 for c in adj.get(node, ()) if c in depth), default=0)
                state[node] = 2
            elif state.get(nxt) is None:
                state[nxt] = 1
                stack.append((nxt, iter(adj.get(nxt, ()))))
    return depth


def pick_lineage(store, adj: dict, query: str, *, like: dict | None = None,
                 candidates: int = 8) -> tuple[str | None, str, dict | None]:
    """The entity whose ``query`` answer reaches furthest (min hops, as the query counts them), among the
    ``candidates`` with the longest raw prov:wasDerivedFrom chains (removed edges included, so verified).
    With ``like`` (the smaller store's pick), the entity with >= MIN_HOPS whose answer is closest in
    size to it, among the first 3 x ``candidates`` reaching MIN_HOPS (of at most 6 x ``candidates``
    tried) in order of how close their raw chain is to its raw chain."""
    from changeprov.sparql.queries import get_query, run_query

    depth = longest_paths(adj)
    if like is None:
        order = sorted(depth, key=lambda n: (-depth[n], n.value))
    else:
        order = sorted(depth, key=lambda n: (abs(depth[n] - like["raw"]), -depth[n], n.value))
    best: tuple | None = None
    tried = reaching = 0
    for node in order:
        if like is None and (tried >= candidates or (best and best[0] >= MIN_HOPS and depth[node] < best[0])):
            break
        if like is not None and (reaching >= 3 * candidates or tried >= 6 * candidates):
            break
        name = _name_of(store, node)
        if name is None:
            continue
        tried += 1
        rows = run_query(store, get_query(query), {"entity": name})
        hops = max((int(h.value) for h in rows.column("hops") if h is not None), default=0)
        reaching += hops >= MIN_HOPS
        gap = None if like is None else (hops < MIN_HOPS, abs(len(rows.rows) - like["rows"]), abs(hops - like["hops"]))
        if best is None or ((hops, len(rows.rows)) > best[:2] if like is None else gap < best[4]):
            best = (hops, len(rows.rows), name, depth[node], gap)
    if best is None:
        return None, "no named entity with lineage", None
    size = {"hops": best[0], "rows": best[1], "raw": best[3]}
    how = "longest chain" if like is None else f"closest to {like['rows']} assets / {like['hops']} hops"
    return best[2], f"{how}: {best[0]} hops, {best[1]} assets (raw chain {best[3]})", size


def _closest_count(store, counted: str, target: int | None, *, limit: int) -> list[tuple]:
    """(node, count) rows of the ``counted`` group query (?x, ?n), the biggest first, or with ``target``
    the closest to it first."""
    import pyoxigraph as ox

    if target is None:
        return _select(store, f"SELECT ?x ?n WHERE {{ {counted} }} ORDER BY DESC(?n) ?x LIMIT {limit}")
    # a substituted variable must be projected (pyoxigraph 0.5)
    rows = _select(store, f"SELECT ?x ?n ?target WHERE {{ #@bindings\n{counted} }} "
                          f"ORDER BY ABS(?n - ?target) ?x LIMIT {limit}",
                   {"target": ox.Literal(str(target), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))})
    return [row[:2] for row in rows]


def pick_params(db: Path, queries: list[str], *, like: dict | None = None
                ) -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, dict]]:
    """Parameters per query, chosen from the data, a note per query saying why, and the size of what
    was picked. Without ``like`` (the smallest store): the busiest entity / person, the longest chains.
    With ``like`` (the smallest store's sizes): the values whose answers are closest in size to those,
    so that latency growth compares the same amount of answer on a bigger store."""
    from changeprov.sparql.stores import open_store

    like = like or {}
    params: dict[str, dict[str, str]] = {}
    notes: dict[str, str] = {}
    sizes: dict[str, dict] = {}
    entity_queries = ("entity-history", "who-changed", "entity-state")
    with open_store("embedded", path=db, read_only=True) as store:
        if set(entity_queries) & set(queries):
            target = like.get("entity", {}).get("events")
            rows = _closest_count(store, "{ SELECT ?x (COUNT(?ev) AS ?n) WHERE { ?ev om:affectsEntity ?x } GROUP BY ?x }",
                                  target, limit=50)
            for node, n in rows:
                name = _name_of(store, node)
                if name:
                    how = "busiest entity" if target is None else f"entity with closest to {target} events"
                    for q in entity_queries:
                        params[q], notes[q] = {"entity": name}, f"{how} ({n.value} events)"
                    sizes["entity"] = {"events": int(n.value)}
                    break
        if "changes-by-user" in queries:
            # people (first.last); service accounts (bots, svc_*) act in proportion to the whole log
            target = like.get("user", {}).get("events")
            rows = _closest_count(store, "{ SELECT ?x (COUNT(?ev) AS ?n) WHERE { ?ev om:userName ?x "
                                         "FILTER(REGEX(?x, \"^[a-z]+[.][a-z]+[0-9]*$\")) } GROUP BY ?x }",
                                  target, limit=1)
            if rows:
                how = "busiest person" if target is None else f"person with closest to {target} events"
                params["changes-by-user"] = {"user": rows[0][0].value}
                notes["changes-by-user"] = f"{how} ({rows[0][1].value} OpenMetadata events)"
                sizes["user"] = {"events": int(rows[0][1].value)}
        if "tag-changes" in queries:
            rows = _select(store, "SELECT ?t (COUNT(?fc) AS ?n) WHERE { ?fc om:addedTag|om:removedTag|"
                                  "om:addedGlossaryTerm|om:removedGlossaryTerm ?t } "
                                  "GROUP BY ?t ORDER BY DESC(?n) ?t LIMIT 20")
            for node, n in rows:
                name = _name_of(store, node)
                if name:
                    params["tag-changes"], notes["tag-changes"] = {"tag": name}, f"most changed tag ({n.value} changes)"
                    break
        lineage = [q for q in ("upstream", "downstream", "impact") if q in queries]
        if lineage:
            up, down = {}, {}
            for d, u in _select(store, "SELECT ?d ?u WHERE { ?d prov:wasDerivedFrom ?u "
                                       "FILTER NOT EXISTS { ?d a om:Column } FILTER NOT EXISTS { ?u a om:Column } }"):
                up.setdefault(d, set()).add(u)
                down.setdefault(u, set()).add(d)
            if "upstream" in lineage:
                name, note, sizes["upstream"] = pick_lineage(store, up, "upstream", like=like.get("upstream"))
                if name:
                    params["upstream"] = {"entity": name}
                notes["upstream"] = note
            if {"downstream", "impact"} & set(lineage):
                name, note, sizes["downstream"] = pick_lineage(store, down, "downstream", like=like.get("downstream"))
                for q in ("downstream", "impact"):
                    if name:
                        params[q] = {"entity": name}
                    notes[q] = note
        if "deleted-entities" in queries:
            params["deleted-entities"], notes["deleted-entities"] = {}, "no parameters (every delete)"
    return params, notes, sizes


# ----------------------------------------------------------------------------- 2. queries


def bench_queries(work: Path, size: int, parts: list[Path], db: Path, facts: dict, queries: list[str], *,
                  repeat: int, rdflib_repeat: int, timeout: float, slow: float, rdflib: bool,
                  endpoint: bool, like: dict | None = None) -> dict:
    say(f"\n== 2. queries on the {size:,}-triple store ({facts['triples']:,} triples, "
        f"{facts['bytes'] / 2**30:.2f} GiB on disk; reference-mapper N-Triples loaded with the store's loader "
        f"in {facts['load_seconds']:.0f} s)")
    t0 = time.perf_counter()
    params, notes, sizes = pick_params(db, queries, like=like)
    say(f"   parameters (picked from the data in {time.perf_counter() - t0:.0f} s):")
    for q in queries:
        shown = " ".join(f"--param {k}={v}" for k, v in params.get(q, {}).items()) or "-"
        say(f"     {q:<17} {shown}   [{notes.get(q, 'no suitable value found: skipped')}]")
    runnable = [q for q in queries if q in params]
    result: dict = {"size": size, "facts": facts, "params": params, "notes": notes, "sizes": sizes, "engines": {}}

    def run_engine(kind: str, target, reps: int) -> None:
        engine = Engine(kind, target)
        timings = {}
        try:
            for q in runnable:
                timings[q] = measure(engine, q, params[q], repeat=reps, timeout=timeout, slow=slow)
                t = timings[q]
                say(f"   {kind:<8} {q:<17} rows {t.rows if t.rows is not None else '-':>6}  cold {t.show_cold():>10}"
                    f"  median {t.show_median():>16}" + (f"  {t.error}" if t.error else ""))
        finally:
            engine.close()
        if engine.open_seconds is not None:
            say(f"   ({kind}: store opened in {engine.open_seconds:.1f} s"
                + (f", {engine.triples:,} triples in rdflib" if engine.triples else "") + ")")
        result["engines"][kind] = {"open_seconds": engine.open_seconds,
                                   "timings": {q: {**asdict(t), "cold": t.cold, "median": t.median}
                                               for q, t in timings.items()},
                                   "_t": timings}

    run_engine("embedded", str(db), repeat)
    if endpoint:
        # no --timeout-s: oxigraph 0.5 keeps a thread per request for that long, and impact's ~2,200
        # requests a run exhausted them (HTTP 500 "Resource temporarily unavailable"); a run longer than
        # --timeout is killed on this side
        with oxigraph_server(db, log=work / "logs" / f"serve-{size}.log") as url:
            run_engine("endpoint", url, repeat)
    if rdflib:
        run_engine("rdflib", [str(p) for p in parts], rdflib_repeat)

    eng = result["engines"]
    headers = ["query", "rows", "embedded cold", "embedded median"]
    if "endpoint" in eng:
        headers += ["endpoint cold", "endpoint median"]
    if "rdflib" in eng:
        headers += ["rdflib cold", "rdflib median", "rdflib / embedded"]
    rows = []
    result["vs_rdflib"] = {}
    for q in runnable:
        e = eng["embedded"]["_t"][q]
        counts = {k: v["_t"][q].rows for k, v in eng.items() if v["_t"][q].rows is not None}
        mismatch = len(set(counts.values())) > 1
        row = [q, f"{e.rows if e.rows is not None else '-'}" + (" !=" if mismatch else ""), e.show_cold(),
               e.show_median()]
        if "endpoint" in eng:
            p = eng["endpoint"]["_t"][q]
            row += [p.show_cold(), p.show_median()]
        if "rdflib" in eng:
            r = eng["rdflib"]["_t"][q]
            ratio, lower = None, False
            if e.median:
                if r.timeout is not None:
                    ratio, lower = r.timeout / e.median, True
                elif r.median is not None:
                    ratio = r.median / e.median
            result["vs_rdflib"][q] = {"ratio": ratio, "lower_bound": lower}
            row += [r.show_cold(), r.show_median(), fmt_ratio(ratio, lower_bound=lower)]
        rows.append(row)
        if mismatch:
            say(f"   note: {q} row counts differ between engines: {counts}")
    say(f"\n   {size:,}-triple store, latency of run_query (parameter resolution + query + driver); "
        f"median of {repeat} runs after the cold one (rdflib: {rdflib_repeat})")
    say(table(headers, rows))
    return result


# ----------------------------------------------------------------------------- 3. growth and targets


def growth(results: list[dict], queries: list[str]) -> dict:
    small, large = results[0], results[-1]
    say(f"\n== 3. growth: median latency on the {large['size']:,}-triple store over the {small['size']:,}-triple store")
    rows, out = [], {}
    kinds = [k for k in ("embedded", "endpoint") if k in small["engines"] and k in large["engines"]]
    for q in queries:
        row = [q + (" *" if q in PER_ENTITY_OR_USER else "")]
        ok = True
        for kind in kinds:
            a = small["engines"][kind]["_t"].get(q)
            b = large["engines"][kind]["_t"].get(q)
            if a is None or b is None:
                ok = False
                row += ["-", "-", "-", "-", "-"]
                continue
            ratio = b.median / a.median if (a.median and b.median) else None
            per_row = ratio * a.rows / b.rows if (ratio and a.rows and b.rows) else None
            if kind == "embedded":
                out[q] = {"ratio": ratio, "per_row": per_row, "small": a.median, "large": b.median,
                          "rows": [a.rows, b.rows], "hops": [a.hops, b.hops]}
            row += [f"{a.rows}/{b.rows}" + (f" ({a.hops}/{b.hops} hops)" if a.hops is not None else ""),
                    a.show_median(), b.show_median(), fmt_ratio(ratio), fmt_ratio(per_row)]
        if ok:
            rows.append(row)
    headers = ["query (* = per entity/user)"]
    for kind in kinds:
        headers += [f"{kind} rows", f"{small['size'] // 1000:,}k", f"{large['size'] // 1000:,}k", "growth",
                    "per row"]
    say(table(headers, rows))
    say("   (on the larger store the parameters are the values whose answers are closest in size to the smaller "
        "store's picks; rows small/large show how the answers compare; per row = growth x small rows / large rows)")
    return out


def targets(load: dict | None, results: list[dict], grow: dict | None, queries: list[str]) -> list[tuple]:
    marks = []

    def mark(ok: bool | None, text: str) -> None:
        marks.append((ok, text))

    if load is not None:
        mark(load["triples"] >= MIN_EXPORT_TRIPLES, f"export has >= 5M triples: {load['triples']:,}")
        if "vs_rdflib" in load:
            mark(load["vs_rdflib"] >= 8, f"load >= 8x rdflib Graph.parse ({load['small_triples']:,} triples): "
                                         f"{fmt_ratio(load['vs_rdflib'])}")
        else:
            mark(None, "load >= 8x rdflib: not measured (--skip-rdflib)")
        mark(load["vs_oxigraph_parts"] >= 1.0,
             f"load at least as fast as `oxigraph load` on the same {load['files']:,} files: "
             f"{fmt_ratio(load['vs_oxigraph_parts'])} (one concatenated file: {fmt_ratio(load['vs_oxigraph_file'])})")
    else:
        mark(None, "load targets: not measured (--skip-load)")
    with_rdflib = [r for r in results if "rdflib" in r["engines"]]
    if with_rdflib:
        r = with_rdflib[-1]
        for q in queries:
            v = r["vs_rdflib"].get(q)
            if v is None or v["ratio"] is None:
                mark(False, f"{q}: not measured against rdflib (failed or skipped) on {r['size']:,}")
                continue
            mark(v["ratio"] >= 5, f"{q} >= 5x faster than rdflib on {r['size']:,} triples: "
                                  f"{fmt_ratio(v['ratio'], lower_bound=v['lower_bound'])}")
    else:
        mark(None, "queries >= 5x rdflib: not measured (--skip-rdflib or no size <= --rdflib-max)")
    for r in results:
        if "upstream" in queries:
            t = r["engines"]["embedded"]["_t"].get("upstream")
            hops = t.hops if t else None
            mark(bool(hops and hops >= MIN_HOPS), f"upstream query reaches >= {MIN_HOPS} hops on {r['size']:,}: {hops}")
    if grow is not None:
        sizes = f"{results[0]['size']:,} -> {results[-1]['size']:,}"
        mark(results[0]["size"] <= 2_000_000 and results[-1]["size"] >= 20_000_000,
             f"growth measured from <= 2M to >= 20M triples: {sizes}")
        for q in queries:
            if q in PER_ENTITY_OR_USER:
                g = grow.get(q)
                if not g or g["ratio"] is None:
                    mark(False, f"{q} growth {sizes}: not measured")
                else:
                    mark(g["ratio"] < 2, f"{q} grows < 2x ({sizes}): {fmt_ratio(g['ratio'])} "
                                         f"({fmt_s(g['small'])} -> {fmt_s(g['large'])}; rows {g['rows'][0]} -> "
                                         f"{g['rows'][1]}, per row {fmt_ratio(g['per_row'])})")
    else:
        mark(None, "growth: needs two --sizes")
    say("\n== targets")
    for ok, text in marks:
        say(f"   [{'met' if ok else 'NOT met' if ok is False else 'n/a'}] {text}")
    return marks


# ----------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=Path("/work/benchdata/query"), help="data cache (reused)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2_000_000, 20_000_000], help="store sizes (triples)")
    ap.add_argument("--export-events", type=int, default=250_000, help="events in the exported log (load section)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5, help="runs after the cold one; the median is reported")
    ap.add_argument("--rdflib-repeat", type=int, default=None, help="the same for rdflib (default: min(repeat, 2))")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a query run is killed")
    ap.add_argument("--slow", type=float, default=60.0, help="a query whose cold run takes longer is not repeated")
    ap.add_argument("--rdflib-max", type=int, default=2_500_000, help="run rdflib on store sizes up to this")
    ap.add_argument("--rdflib-load", type=int, default=1_000_000, help="triples of the rdflib load comparison")
    ap.add_argument("--skip-rdflib", action="store_true")
    ap.add_argument("--skip-endpoint", action="store_true")
    ap.add_argument("--skip-load", action="store_true", help="skip section 1 (and the Spark export)")
    ap.add_argument("--queries", nargs="+", default=list(REQUIRED), choices=REQUIRED, metavar="NAME",
                    help=f"subset of: {' '.join(REQUIRED)}")
    ap.add_argument("--jobs", type=int, default=2, help="processes for the reference mapper")
    args = ap.parse_args()
    rdflib_repeat = min(args.repeat, 2) if args.rdflib_repeat is None else args.rdflib_repeat
    queries = [q for q in REQUIRED if q in args.queries]
    sizes = sorted(set(args.sizes))
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)

    import pyoxigraph
    import rdflib

    say(f"query_bench: workdir {work}, sizes {', '.join(f'{s:,}' for s in sizes)}, export {args.export_events:,} "
        f"events, {os.cpu_count()} CPU(s); pyoxigraph {pyoxigraph.__version__}, rdflib {rdflib.__version__}, "
        f"{subprocess.run([str(OXIGRAPH), '--version'], capture_output=True, text=True).stdout.strip()}")
    started = time.perf_counter()
    load = None
    if not args.skip_load:
        export = ensure_export(work, args.export_events, args.seed)
        load = bench_load(work, export, rdflib_triples=args.rdflib_load, skip_rdflib=args.skip_rdflib)
    results = []
    for size in sizes:
        say(f"\n-- data for the {size:,}-triple store")
        parts, db, facts = ensure_store_data(work, size, args.seed, jobs=args.jobs)
        results.append(bench_queries(work, size, parts, db, facts, queries, repeat=args.repeat,
                                     rdflib_repeat=rdflib_repeat, timeout=args.timeout, slow=args.slow,
                                     rdflib=not args.skip_rdflib and size <= args.rdflib_max,
                                     endpoint=not args.skip_endpoint,
                                     like=results[0]["sizes"] if results else None))
    grow = growth(results, queries) if len(results) > 1 else None
    marks = targets(load, results, grow, queries)
    for r in results:
        for e in r["engines"].values():
            e.pop("_t", None)
    out = work / f"results-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "load": load, "queries": results,
                               "growth": grow, "targets": marks}, indent=1, default=str) + "\n")
    say(f"\n{time.perf_counter() - started:.0f} s in all; numbers in {out}")


if __name__ == "__main__":
    main()
