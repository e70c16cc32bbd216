"""Subcommand table: each entry names a library call and how to print its result."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _configure_vocab(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["text", "json"], default="text")


def _run_vocab(args: argparse.Namespace) -> int:
    import json

    from changeprov.ontology.summary import vocabulary_report

    report = vocabulary_report()
    if args.format == "json":
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        for line in report["lines"]:
            print(line)
    return 0 if report["ok"] else 1


COMMANDS: tuple[Command, ...] = (
    Command("vocab", "Validate the bundled ontology, JSON-LD context and SHACL shapes; print a summary.",
            _configure_vocab, _run_vocab),
)
