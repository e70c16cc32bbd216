"""Finding and reading input lines: files, folders and globs of JSONL, optionally gzip-compressed."""

from __future__ import annotations

import glob
import gzip
import os
from pathlib import Path
from typing import Iterable, Iterator

from changeprov.errors import InputError

SUFFIXES = (".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz", ".ndjson.gz")


def expand_inputs(inputs: Iterable[str]) -> list[Path]:
    """Files named directly, every JSONL file under named folders, and glob matches; sorted, unique."""
    found: list[Path] = []
    for item in inputs:
        matches = sorted(glob.glob(item, recursive=True)) if glob.has_magic(item) else [item]
        if not matches:
            raise InputError(f"{item}: no file matches")
        for m in matches:
            p = Path(m)
            if p.is_dir():
                found.extend(sorted(q for q in p.rglob("*") if q.is_file() and q.name.endswith(SUFFIXES)
                                    and not q.name.startswith((".", "_"))))
            elif p.is_file():
                found.append(p)
            else:
                raise InputError(f"{item}: no such file or folder")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def read_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw bytes without the newline). Only b"\\n" ends a line."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                yield number, raw[:-1] if raw.endswith(b"\n") else raw
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def display_name(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
