"""CLI subcommands `check` (ontology, SHACL and PROV checks; exit 0 sound / 1 findings) and `reason`."""

from __future__ import annotations

import argparse
import json
import sys

from changeprov.store_commands import _store_args
from changeprov.terminal import visible


def configure_check(p: argparse.ArgumentParser) -> None:
    _store_args(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="examples shown per failed check (default 10)")
    p.add_argument("--query-file", action="append", default=[], metavar="QUERY.rq",
                   help="also vet this query's terms against the ontology (repeatable; one of the ontology checks)")
    p.add_argument("--only", action="append", choices=["ontology", "shacl", "prov"], default=[],
                   help="run only this group of checks (repeatable; default all); shacl includes undeclared-terms, "
                        "the data's properties and classes in the om-event, PROV and W3C namespaces that no "
                        "ontology declares, and misused-terms, om-event and PROV terms used as what they are not "
                        "declared as (a class as a property)")


def _progress(msg: str) -> None:
    print(f"[check] {msg}", file=sys.stderr, flush=True)


def run_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from changeprov.errors import InputError
    from changeprov.sparql.check import GROUPS, run_checks, sparql_syntax_problem
    from changeprov.sparql.stores import refuse_endpoint_options, store_from_args

    if args.limit < 0:
        raise InputError("--limit must be >= 0")
    extra = {}
    for name in args.query_file:
        try:
            extra[Path(name).name] = Path(name).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read query file {name}: {exc}") from None
        problem = sparql_syntax_problem(extra[Path(name).name])
        if problem:  # its terms cannot be vetted, and "SOUND" would read as "this query is fine"
            raise InputError(f"{name}: not valid SPARQL: {problem}")
    groups = tuple(args.only) or GROUPS
    if extra and "ontology" not in groups:  # ut45e #4: vetted by the ontology checks, so left out unread, SOUND
        raise InputError("--query-file is vetted by the ontology checks: add --only ontology (or drop --only)")
    if not (args.store or args.endpoint) and set(groups) - {"ontology"}:
        if args.only:
            raise InputError("the shacl and prov checks need a store: give --store PATH or --endpoint URL")
        groups = ("ontology",)
    progress = _progress if sys.stderr.isatty() else None
    if args.store or args.endpoint:
        with store_from_args(args, read_only=True) as store:
            report = run_checks(store, limit=args.limit, extra_queries=extra, groups=groups, progress=progress)
    else:
        refuse_endpoint_options(args)
        report = run_checks(None, limit=args.limit, extra_queries=extra, groups=groups, progress=progress)
    args.verdict = 0 if report.ok else 1  # also when the reader goes early (`check … | head`: ut44c #2)
    if args.format == "json":
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(visible("\n".join(report.lines())))  # values from the store (rv41 M1)
    return args.verdict


def configure_reason(p: argparse.ArgumentParser) -> None:
    _store_args(p, update=True)
    p.add_argument("--format", choices=["text", "json"], default="text")


def run_reason(args: argparse.Namespace) -> int:
    from changeprov.sparql.reason import reason
    from changeprov.sparql.stores import store_from_args

    with store_from_args(args) as store:
        report = reason(store, progress=_progress if sys.stderr.isatty() else None)
    if args.format == "json":
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(f"reasoned {store.description}: {report.added:,} triples added ({report.before:,} → {report.after:,}) "
              f"by {report.updates} updates, {report.seconds:.2f} s")
    return 0
