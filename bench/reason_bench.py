"""Benchmark of `changeprov reason` against owlrl and `reasonable`, and of `changeprov check` on a big store
(not a test).

    .venv/bin/python bench/reason_bench.py                         # reason on 50k and 200k triples
    .venv/bin/python bench/reason_bench.py --sizes 50000 --verify  # also compare with owlrl's triples
    .venv/bin/python bench/reason_bench.py --check 5000000         # check on a >= 5M-triple store

reason mode: generate events (changeprov.generate), map them with the reference mapper, take the
first N triples of its sorted N-Triples, then on the same triples, in this process:

  (a) changeprov reason   SPARQL updates in an embedded pyoxigraph store (load time excluded; the TBox
                          closure is computed once beforehand and reported on its own)
  (b) owlrl               owlrl.DeductiveClosure(OWLRL_Semantics) over data + TBox (the full closure)
  (c) reasonable          the Rust OWL 2 RL reasoner (pip install reasonable), data + TBox
                          (it computes more rules than (a), like owlrl)

and prints the times and the ratios b/a, c/a. --verify also checks that (a) adds exactly owlrl's
triples restricted to the rules (sparql/reason.py owlrl_reference).

check mode: generate ≈ N triples, load them into an embedded store, then run `changeprov check` in a
child process and report its wall time and peak memory (the rusage of that child alone, os.wait4).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRIPLES_PER_EVENT = 20  # what the generator's mix maps to, measured: ≈21


def make_triples(workdir: Path, triples: int, *, seed: int = 7) -> Path:
    """A sorted N-Triples file with at least ``triples`` lines (generated events, reference mapper)."""
    from changeprov.generate import generate
    from changeprov.mapping.reference import map_to_files

    events = triples // TRIPLES_PER_EVENT + 100
    while True:
        log, nt = workdir / f"events-{events}.jsonl", workdir / f"events-{events}.nt"
        if not nt.exists():
            t0 = time.perf_counter()
            generate(log, events=events, seed=seed)
            counts = map_to_files([str(log)], nt, workdir / "quarantine.jsonl").as_dict()
            print(f"  generated {events:,} events -> {counts['triples']:,} triples in {time.perf_counter() - t0:.1f} s",
                  flush=True)
        with nt.open("rb") as f:
            n = sum(1 for _ in f)
        if n >= triples:
            return nt
        events = int(events * triples / max(n, 1) * 1.1) + 100


def first_lines(path: Path, n: int) -> bytes:
    out = []
    with path.open("rb") as f:
        for line in f:
            out.append(line)
            if len(out) == n:
                break
    return b"".join(out)


def bench_reason(sizes: list[int], *, verify: bool, owlrl_max: int) -> None:
    import owlrl
    import rdflib

    from changeprov.ontology.tbox import tbox, tbox_graph
    from changeprov.sparql.reason import owlrl_reference, reason, restrict_to_data
    from changeprov.sparql.rdflib_store import to_rdflib
    from changeprov.sparql.stores import open_store

    t0 = time.perf_counter()
    tbox()
    print(f"TBox closure (owlrl, once): {time.perf_counter() - t0:.2f} s")
    with tempfile.TemporaryDirectory(prefix="reason-bench-") as tmp:
        work = Path(tmp)
        source = make_triples(work, max(sizes))
        for n in sizes:
            nt = first_lines(source, n)
            print(f"\n== {n:,} triples")
            with open_store("embedded", path=work / f"db-{n}", create=True) as store:
                store.load_ntriples(io.BytesIO(nt))
                before = {q for q in store._store} if verify else None
                report = reason(store)
                second = reason(store)
                added = ({tuple(to_rdflib(x) for x in (q.subject, q.predicate, q.object)) for q in store._store}
                         if verify else None)
            ours = report.seconds
            print(f"  (a) changeprov reason  {ours:8.2f} s   +{report.added:,} triples "
                  f"({report.updates} updates); second run +{second.added} in {second.seconds:.2f} s")
            data = rdflib.Graph().parse(data=nt.decode("utf-8"), format="nt")
            if n <= owlrl_max:
                g = tbox_graph() + data
                t0 = time.perf_counter()
                owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
                t_owlrl = time.perf_counter() - t0
                print(f"  (b) owlrl full closure {t_owlrl:8.2f} s   ({len(g):,} triples)  b/a = {t_owlrl / ours:6.1f}x")
                if verify:
                    base = {tuple(to_rdflib(x) for x in (q.subject, q.predicate, q.object)) for q in before}
                    mine = restrict_to_data(added - base)
                    expected = owlrl_reference(data, closure=g)
                    print(f"      equal to owlrl restricted to the rules: {mine == expected} "
                          f"({len(expected):,} triples; missing {len(expected - mine)}, extra {len(mine - expected)})")
            else:
                print(f"  (b) owlrl skipped above {owlrl_max:,} triples (--owlrl-max)")
            try:
                import reasonable
            except ImportError:
                print("  (c) reasonable not installed (pip install reasonable)")
                continue
            r = reasonable.PyReasoner()
            r.from_graph(tbox_graph() + data)
            t0 = time.perf_counter()
            out = r.reason()
            t_rs = time.perf_counter() - t0
            print(f"  (c) reasonable         {t_rs:8.2f} s   ({len(out):,} triples)  c/a = {t_rs / ours:6.1f}x")


def bench_check(triples: int, *, keep: Path | None) -> None:
    import pyoxigraph as ox

    work = keep or Path(tempfile.mkdtemp(prefix="check-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        nt = make_triples(work, triples)
        db = work / "db"
        if not db.exists():
            t0 = time.perf_counter()
            store = ox.Store(str(db))
            store.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
            store.flush()
            n = len(store)
            del store
            print(f"  loaded {n:,} triples in {time.perf_counter() - t0:.1f} s", flush=True)
        cmd = [sys.executable, "-m", "changeprov.cli", "check", "--store", str(db), "--format", "json"]
        t0 = time.perf_counter()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
            # the rusage of this one child: RUSAGE_CHILDREN would be the maximum over every child so
            # far, including the mapper processes that made the data
            _pid, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            code = os.waitstatus_to_exitcode(status)
            out.seek(0), err.seek(0)
            stdout, stderr = out.read().decode(), err.read().decode()
        peak = usage.ru_maxrss * 1024
        report = json.loads(stdout) if stdout.strip() else {}
        print(f"check: exit {code}, {wall:.1f} s wall, peak RSS {peak / 2**20:.0f} MiB, "
              f"{report.get('findings', '?')} finding(s) in {report.get('failed_checks', '?')}")
        if code == 2:
            print(stderr[-2000:])
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 200_000], help="triples per reason run")
    ap.add_argument("--verify", action="store_true", help="compare the added triples with owlrl's (slow)")
    ap.add_argument("--owlrl-max", type=int, default=200_000, help="skip owlrl above this many triples")
    ap.add_argument("--check", type=int, metavar="TRIPLES", help="measure `changeprov check` on a store this big")
    ap.add_argument("--keep", type=Path, help="work folder to keep (and reuse) for --check")
    args = ap.parse_args()
    if args.check:
        bench_check(args.check, keep=args.keep)
    else:
        bench_reason(sorted(args.sizes), verify=args.verify, owlrl_max=args.owlrl_max)


if __name__ == "__main__":
    main()
