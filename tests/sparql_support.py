"""Helpers for the store / query tests: export-shaped folders from the reference mapper (the real
``oxigraph serve`` endpoint is changeprov.sparql.server)."""

from __future__ import annotations

import gzip
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def make_export(out: Path, nt_files: dict[str, bytes], *, gz: bool = False, success: bool = True) -> Path:
    """An export-shaped folder: triples/source=S/date=D/part-NNNNN.nt[.gz] (keys "S/D/part-00000"), _SUCCESS."""
    for key, data in nt_files.items():
        source, date, part = key.split("/")
        d = out / "triples" / f"source={source}" / f"date={date}"
        d.mkdir(parents=True, exist_ok=True)
        if gz:
            (d / (part + ".nt.gz")).write_bytes(gzip.compress(data))
        else:
            (d / (part + ".nt")).write_bytes(data)
    (out / "triples").mkdir(parents=True, exist_ok=True)
    (out / "quarantine").mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text("{}\n")
    if success:
        (out / "triples" / "_SUCCESS").write_bytes(b"")
        (out / "_SUCCESS").write_bytes(b"")
    return out


def map_corpus(workdir: Path) -> Path:
    """The reference mapper over both corpora → one N-Triples file."""
    from changeprov.mapping.reference import map_to_files

    nt = workdir / "corpus.nt"
    if not nt.exists():
        map_to_files([str(CORPUS / "datahub"), str(CORPUS / "openmetadata")], nt, workdir / "corpus-q.jsonl")
    return nt


def corpus_export(workdir: Path) -> Path:
    """The corpus as a two-partition export (split by line, one plain, one gzipped partition)."""
    lines = map_corpus(workdir).read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    out = workdir / "corpus-export"
    if not (out / "_SUCCESS").exists():
        make_export(out, {"corpus/2024-03-01/part-00000": b"".join(lines[:half])})
        make_export(out, {"corpus/2026-09-01/part-00001": b"".join(lines[half:])}, gz=True)
    return out
