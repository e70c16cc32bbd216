"""CLI subcommands over changeprov.sparql: load, query, describe."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from changeprov.errors import ConfigError
from changeprov.terminal import progress_lines, visible


def _store_args(p: argparse.ArgumentParser, *, update: bool = False, graph_store: bool = False) -> None:
    """--store | --endpoint, and --timeout; ``update`` / ``graph_store``: the command writes to an endpoint
    and takes its update / Graph Store URL (ut45e #13: every command listed them, "used for loading")."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--store", metavar="PATH", help="embedded pyoxigraph store folder (the default kind)")
    g.add_argument("--endpoint", metavar="URL",
                   help="SPARQL 1.1 query endpoint (credentials only from CHANGEPROV_ENDPOINT_TOKEN or "
                        "CHANGEPROV_ENDPOINT_USER / CHANGEPROV_ENDPOINT_PASSWORD)")
    if update:
        p.add_argument("--update-endpoint", metavar="URL", help="SPARQL 1.1 update endpoint (default: derived from --endpoint)")
    if graph_store:
        p.add_argument("--graph-store", metavar="URL",
                       help="Graph Store Protocol URL used for loading (default: derived from --endpoint)")
    p.add_argument("--timeout", type=_seconds, default=None, help="endpoint: request timeout in seconds (default 60)")


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):  # nan fails too
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds: {text!r}")
    return seconds


def _bytes(text: str) -> int:
    """``N``, ``NK``, ``NM`` or ``NG`` (powers of 1024) as a whole number of bytes, at least 1.

    >>> _bytes("900K"), _bytes("1m"), _bytes("4096")
    (921600, 1048576, 4096)
    """
    scale = {"k": 2**10, "m": 2**20, "g": 2**30}.get(text[-1:].lower(), 1)
    try:
        size = int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        size = 0
    if size < 1:
        raise argparse.ArgumentTypeError(f"expected a number of bytes such as 900K or 8M: {text!r}")
    return size


#: load --jobs: more threads than this only contend (each holds a bulk loader's buffers)
MAX_JOBS = 64


def _jobs(text: str) -> int | None:
    """``--jobs``: a count of load groups up to MAX_JOBS, or auto (None).

    >>> _jobs("64"), _jobs("auto"), _jobs("1")
    (64, None, 1)
    >>> _jobs("65")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number of at least 1 and at most 64, or auto: '65'
    """
    if text == "auto":
        return None
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= MAX_JOBS:  # ut43b #6: 100000 ran a thread per file, 20x slower
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1 and at most {MAX_JOBS}, or auto: {text!r}")
    return jobs


def configure_load(p: argparse.ArgumentParser) -> None:
    p.add_argument("export_dir", metavar="DIR|FILE.nt",
                   help="a committed `changeprov export` folder, or an N-Triples file (.nt, .nt.gz, .nt.bz2, .nt.deflate) such as "
                        "`changeprov map` writes")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N|auto",
                   help="embedded store: load the files in N groups by N threads, each group atomic. "
                        "Default auto, all-or-nothing: into an empty store 2 groups (fewer on one core; "
                        "a failed load empties it again), into a store that holds triples 1 (a bad line "
                        "leaves it unchanged)")
    p.add_argument("--no-optimize", dest="optimize", action="store_false",
                   help="embedded store: skip compacting the indexes after loading (faster load, slower "
                        "queries; worth it only before loading more exports, the last load compacts)")
    p.add_argument("--batch-bytes", type=_bytes, default=None, metavar="N",
                   help="endpoint: send the triples in requests of at most N bytes each (K, M, G suffixes; "
                        "default 8M): a server or gateway with a request size limit (nginx: 1M) needs less")
    _store_args(p, update=True, graph_store=True)


def run_load(args: argparse.Namespace) -> int:
    from changeprov.sparql.loader import export_root, load_export, loadable_files
    from changeprov.sparql.stores import refuse_endpoint_options, store_from_args

    refuse_endpoint_options(args)
    # ut43b #6: the other kind of store's options did nothing, without a word
    if args.endpoint and (args.jobs is not None or not args.optimize):
        raise ConfigError("--jobs and --no-optimize are for an embedded store (--store); an endpoint is loaded in "
                          "requests of --batch-bytes")
    if not args.endpoint and args.batch_bytes is not None:
        raise ConfigError("--batch-bytes is for an endpoint (--endpoint)")
    export_dir = export_root(args.export_dir)  # a file: URI as the plain path
    loadable_files(export_dir)  # refuse before creating or touching any store
    new_store = bool(args.store) and not args.endpoint and not Path(args.store).exists()
    try:
        with store_from_args(args, create=True) as store:
            report = load_export(store, export_dir, jobs=args.jobs, optimize=args.optimize, progress=_say)
    except BaseException:
        if new_store:  # an empty store left behind would answer every query with no rows, exit 0
            shutil.rmtree(args.store, ignore_errors=True)
        raise
    # the load stands, but files were changed after the export run: a script (a nightly load) must be
    # able to tell without reading stderr, so it is a finding (exit 1), not success; also when the
    # reader of stdout goes early (ut44c #2)
    args.verdict = 1 if report.warnings else 0
    if report.stopped is not None:
        from changeprov.cli import stop_word

        _say(f"{stop_word(report.stopped)} while compacting the indexes: the store holds the whole load (a compaction cut short only "
             "makes lookups slower, until a later load compacts)")
    print(f"loaded {report.files} file(s) into {store.description}: {report.triples_added:,} triples added, "
          f"{report.triples_after:,} in the store, {report.seconds:.2f} s")
    for warning in report.warnings:
        print(f"changeprov load: warning: {visible(warning)}", file=sys.stderr)
    return args.verdict


_say = progress_lines("load")


def configure_query(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", metavar="NAME", help="a named query (see --list)")
    p.add_argument("--list", action="store_true", help="list the named queries with their parameters")
    p.add_argument("--file", metavar="QUERY.rq", help="run an ad hoc SPARQL query from a file")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a query parameter, repeatable")
    p.add_argument("--format", choices=["table", "csv", "tsv", "json"], default="table",
                   help="table and csv print plain values; json is SPARQL 1.1 Query Results JSON (typed values); "
                        "tsv is the W3C SPARQL results TSV (RDF terms). CONSTRUCT prints N-Triples. csv and tsv keep "
                        "values exactly: a cell may start with =, +, - or @ (a formula to a spreadsheet)")
    p.add_argument("--allow-service", action="store_true",
                   help="allow SERVICE clauses (federated queries make outbound HTTP requests)")
    _store_args(p)


def _print_list(fmt: str, name: str | None) -> None:
    """The named queries (or the one named) with their parameters; ``--format json``: as JSON (ut42d #6:
    it printed the text, and a name given beside --list was ignored)."""
    import json

    from changeprov.sparql.queries import get_query, list_queries

    queries = [get_query(name)] if name else list_queries()
    if fmt == "json":
        print(json.dumps([{"name": q.name, "summary": q.summary, "returns": q.returns,
                           "params": [{"name": p.name, "type": p.type, "required": p.required, "default": p.default,
                                       "description": p.description} for p in q.params]} for q in queries],
                         indent=2, ensure_ascii=False))
        return
    for q in queries:
        print(f"{q.name}: {q.summary}")
        for p in q.params:
            flag = "required" if p.required else ("optional" + (f", default {p.default}" if p.default else ""))
            print(f"    {p.name} ({p.type}, {flag}): {p.description}")
        if q.returns:
            print(f"    returns: {q.returns}")


def run_query_cmd(args: argparse.Namespace) -> int:
    from changeprov.errors import InputError
    from changeprov.sparql.describe import render_graph
    from changeprov.sparql.formats import render, render_boolean
    from changeprov.sparql.queries import (get_query, load_query_file, parse_param_args, run_ask, run_construct,
                                           run_query)
    from changeprov.sparql.stores import query_form, refuse_service, store_from_args

    if args.list:
        if args.file:
            raise InputError("--list lists the named queries: give it alone or with a query NAME, not --file")
        _print_list(args.format, args.name)
        return 0
    if args.name and args.file:  # ut48a #7: both given read "give a query NAME or --file"
        raise InputError(f"give a query NAME or --file QUERY.rq, not both ({args.name!r} and {args.file})")
    if not args.name and not args.file:
        raise InputError("give a query NAME or --file QUERY.rq (see --list)")
    q = load_query_file(args.file) if args.file else get_query(args.name)
    refuse_service(q.text, allow_service=args.allow_service)
    params = parse_param_args(args.param)
    notes: list[str] = []
    with store_from_args(args, read_only=True) as store:
        form = query_form(q.text)
        if form == "SELECT":
            rows = run_query(store, q, params, allow_service=args.allow_service)
            notes = rows.notes
            out = render(rows, args.format)
        elif form == "ASK":
            out = render_boolean(run_ask(store, q, params, allow_service=args.allow_service, notes=notes), args.format)
        else:  # CONSTRUCT / DESCRIBE: the graph as N-Triples
            out = render_graph(run_construct(store, q, params, allow_service=args.allow_service, notes=notes), "nt")
        warned = store.unfinished_load()  # store_from_args has printed it as a warning
    notes = [n for n in notes if n != warned]
    for note in notes:
        print(f"note: {visible(note)}", file=sys.stderr)
    sys.stdout.write(out)
    return 0


def configure_describe(p: argparse.ArgumentParser) -> None:
    p.add_argument("entity", metavar="ENTITY", help="OpenMetadata FQN, DataHub URN or entity IRI")
    p.add_argument("--format", choices=["turtle", "jsonld", "nt"], default="turtle")
    _store_args(p)


def run_describe(args: argparse.Namespace) -> int:
    from changeprov.sparql.describe import describe_triples, render_graph
    from changeprov.sparql.stores import store_from_args

    notes: list[str] = []
    with store_from_args(args, read_only=True) as store:
        triples = describe_triples(store, args.entity, notes=notes)
    text = render_graph(triples, args.format, notes=notes)
    for note in notes:
        print(f"note: {visible(note)}", file=sys.stderr)
    sys.stdout.write(text)
    return 0
