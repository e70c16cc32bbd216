"""Committing an export run: the manifest it reads first, what it replaces or removes, and the moves of
its staged files into the final layout, ``_SUCCESS`` last (see spark.job for the layout)."""

from __future__ import annotations

import gzip
import json
import re
import time

from pyspark.sql import DataFrame

from changeprov.errors import InputError
from changeprov.exportlayout import (PART_NAME, iso_time, manifest_runs, parse_manifest, run_ids, run_totals,
                                     shown_time, written_by_a_run)
from changeprov.spark.fs import FileSystem, partial_name


def committed_manifest(fs: FileSystem, out: str, *, required: bool) -> dict | None:
    """The folder's manifest, None if it has none. A damaged one is an InputError where the run needs
    it (``required``: an append), else treated as none: an overwrite replaces it with the files."""
    _recover_manifest(fs)
    if not fs.exists("manifest.json"):
        return None
    try:
        return parse_manifest(fs.read_text("manifest.json"), f"{out}/manifest.json")
    except InputError as exc:
        if required:
            raise InputError(f"{exc}; restore it, or export with --mode overwrite (which replaces the folder's "
                             "export)") from None
        return None


def _recover_manifest(fs: FileSystem) -> None:
    """Put back a complete ``_manifest.json.partial`` whose rename a killed run did not do
    (``FileSystem.replace_text``); drop one a run was killed while writing (rv41 #7: the manifest it
    would replace may be gone too, as an overwrite deletes the old one first)."""
    partial = partial_name("manifest.json")
    if not fs.exists(partial):
        return
    if fs.exists("manifest.json") or _run_manifest(fs.read_text(partial)) is not True:
        fs.delete(partial)
    else:
        fs.move((partial,), ("manifest.json",))


def _run_manifest(text: str) -> bool | None:
    """Whether ``text`` is a manifest an export wrote (a JSON object with a run_id); None: not JSON (a
    run killed while writing it)."""
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return isinstance(manifest, dict) and "run_id" in manifest


#: the names an export gives what it writes, level by level, beside its part files (PART_NAME, or as
#: Spark named them, which a run killed while committing leaves: _SPARK_NAME); a hidden file only as
#: Hadoop's checksum
_SPARK_NAME = re.compile(r"part-[0-9]{5}-[0-9a-f-]{36}\.c[0-9]{3}\.txt(?:\.gz)?")
_FOLDERS = {"triples": re.compile(r"_SUCCESS|source=[a-z][a-z-]*"), "source": re.compile(r"date=[0-9]{4}-[0-9]{2}-[0-9]{2}"),
            "date": None, "quarantine": re.compile(r"_SUCCESS")}


def _ours(level: str, name: str) -> bool:
    if name.startswith(".") and name.endswith(".crc"):
        return True
    if level == "source":  # date folders only
        return _FOLDERS[level].fullmatch(name) is not None
    return bool(PART_NAME.fullmatch(name) or _SPARK_NAME.fullmatch(name)
                or (_FOLDERS[level] and _FOLDERS[level].fullmatch(name)))


#: what an export or its runs put beside triples/ and quarantine/ (a run's staging folders, the lock,
#: the record of an overwrite, a file written whole through its partial, the write probe)
_TOP = re.compile(r"triples|quarantine|manifest\.json|_SUCCESS|_export\.lock|_replacing\.json|_staging-[0-9a-f]{32}.*"
                  r"|_.+\.partial|\.changeprov-probe-.*|\..+\.crc")


def not_an_export(names: list[str]) -> list[str]:
    """The names of a folder's top level that no export writes, when the folder is no export (no
    manifest.json, no _SUCCESS): an export into a pyoxigraph store or into the folder of its own input
    files wrote beside them and exited 0 (ut47b #3). Beside a committed export, a user's own files
    stay (no run touches that level)."""
    if "manifest.json" in names or "_SUCCESS" in names:
        return []
    return [n for n in names if not _TOP.fullmatch(n)]


def foreign_files(fs: FileSystem) -> list[str]:
    """What an export never writes among the files a run deletes or moves into (``manifest.json``,
    ``triples/``, ``quarantine/``): an overwrite deleted a user's ``triples/mine/data.ttl`` and own
    manifest.json with exit 0 (ut41b #2), and, named like an export's (``part-mine.txt``,
    ``date=…/handmade.nt``), files of a folder no export wrote (ut45b #1). Names are an export's exact
    ones; with a manifest, ``triples/`` is checked two levels down (a listing per source family, not per
    date folder: an object store lists slowly), without one, its date folders too. A manifest.json that
    is not JSON is a damaged export's (a run killed while writing it), which an overwrite replaces."""
    found = not_an_export(fs.names())
    manifest = fs.exists("manifest.json")
    if manifest:
        if _run_manifest(fs.read_text("manifest.json")) is False:
            found.append("manifest.json (not an export manifest: it has no run_id)")

    def foreign(level: str, *where: str) -> list[str]:
        return ["/".join((*where, n)) for n in fs.names(*where) if not _ours(level, n)]

    found += [f"{name} (a file, where an export writes a folder)" for name in ("triples", "quarantine")
              if fs.exists(name) and not fs.is_folder(name)]  # ut41d #3: replaced without a word
    found += foreign("triples", "triples")
    for source in (n for n in fs.names("triples") if _ours("triples", n) and n.startswith("source=")):
        found += foreign("source", "triples", source)
        if not manifest:
            for date in (n for n in fs.names("triples", source) if _ours("source", n)):
                found += foreign("date", "triples", source, date)
    found += foreign("quarantine", "quarantine")
    return found


def replaced_export(fs: FileSystem, manifest: dict | None) -> dict | None:
    """What an overwrite run would replace: the committed export's runs (id, finish time, triples), or
    None when the folder holds no committed export. An operator who forgot ``--mode append`` must
    see it, and the new manifest keeps the record (``replaced``). ``manifest``: the folder's, parsed
    (None: none, or damaged; still a committed export)."""
    if not fs.exists("_SUCCESS"):
        return None
    if manifest is None:
        return {"runs": []}
    runs = manifest_runs(manifest)[1:] + manifest_runs(manifest)[:1]  # the oldest first
    return {"runs": [{"run_id": r.get("run_id"), "finished": r.get("finished"),
                      "triples": (r.get("counts") or {}).get("triples")} for r in runs]}


#: an overwrite's record of the export it replaces, written before it deletes that export's manifest
#: and removed after its own _SUCCESS: a run killed between leaves the record to the next (ut42e #4)
REPLACING = "_replacing.json"


def interrupted_replacement(fs: FileSystem) -> dict | None:
    """The record an overwrite killed while committing left (see REPLACING), or None."""
    if fs.exists("_SUCCESS") or not fs.exists(REPLACING):
        return None
    try:
        record = json.loads(fs.read_text(REPLACING))
    except ValueError:  # killed while writing it: replace_text writes whole files, but a copy may not
        return None
    return record if isinstance(record, dict) and isinstance(record.get("runs"), list) else None


def describe_replaced(replaced: dict) -> str:
    runs = replaced.get("runs", [])
    if not runs:
        return "no readable manifest.json"
    triples = sum(r.get("triples") or 0 for r in runs)
    last = runs[-1]
    return (f"{len(runs)} run(s), {triples:,} triples written, the last run {str(last.get('run_id'))[:12]} "
            f"finished {shown_time(last.get('finished'))}")


def remove_uncommitted(fs: FileSystem, manifest: dict | None) -> int:
    """Delete the files of ``triples/`` and ``quarantine/`` that no committed run wrote; returns how many.

    A run killed while committing (DIR/_SUCCESS is removed first) leaves some of its files moved
    into place, some renamed, some with Spark's names. The manifest, written after every move, names
    the committed runs: an append run's files carry its id (part-<12 hex>-NNNNN), an overwrite run's
    none (part-NNNNN, and only with a manifest: overwrite deletes the manifest before the files).
    Anything else would otherwise be committed by the next append with no manifest counting it.
    ``manifest``: the folder's, parsed (None: it has none)."""
    runs = run_ids(manifest) if manifest is not None else set()

    def committed(name: str) -> bool:
        return written_by_a_run(name, runs, overwrite_run=manifest is not None)

    removed = 0

    def sweep(*where: str) -> bool:
        """Remove the uncommitted files under ``where``; True if the folder is empty after."""
        nonlocal removed
        names = fs.names(*where)
        kept = len(names)
        for name in names:
            if name.startswith(("source=", "date=")):
                if sweep(*where, name):
                    fs.delete(*where, name)
                    kept -= 1
            elif name.startswith("part-") and not committed(name):
                fs.delete(*where, name)
                removed += 1
                kept -= 1
        return kept == 0

    sweep("triples")
    sweep("quarantine")
    return removed


def _commit(spark, fs: FileSystem, staging: str, *, mode: str, compress: str, run_id: str,
            quarantine_rows: DataFrame | None, manifest: dict, previous: dict | None) -> None:
    """Move staged files into the final layout; _SUCCESS is written last and removed first."""
    for marker in ("_SUCCESS", "triples/_SUCCESS", "quarantine/_SUCCESS"):
        fs.delete(marker)
    if mode == "overwrite":
        if manifest.get("replaced"):
            fs.replace_text(REPLACING, json.dumps(manifest["replaced"], sort_keys=True) + "\n")
        # the manifest first: without it, the next run treats every file left here as uncommitted
        for name in ("manifest.json", "triples", "quarantine"):
            fs.delete(name)
    prefix = "part" if mode == "overwrite" else f"part-{run_id[:12]}"
    suffix = ".nt.gz" if compress == "gzip" else ".nt"
    # Whole folders are moved where the target has none yet: creating thousands of partition
    # folders one by one costs a chmod process each on a local file system (see README).
    if fs.exists(staging, "kind=t") and not fs.exists("triples"):
        fs.move((staging, "kind=t"), ("triples",))
    elif fs.exists(staging, "kind=t"):
        for source in fs.names(staging, "kind=t"):  # source=<family>
            if not fs.exists("triples", source):
                fs.move((staging, "kind=t", source), ("triples", source))
                continue
            for date in fs.names(staging, "kind=t", source):  # date=YYYY-MM-DD
                if not fs.exists("triples", source, date):
                    fs.move((staging, "kind=t", source, date), ("triples", source, date))
                    continue
                for name in fs.names(staging, "kind=t", source, date):
                    fs.move((staging, "kind=t", source, date, name), ("triples", source, date, name))
    committed = [n for n in fs.names("triples") if n.startswith("part-")]
    written: dict[str, int] = {}
    for source in fs.names("triples"):  # name this run's files: part-NNNNN.nt (append: part-<run>-NNNNN.nt)
        for date in fs.names("triples", source):
            where = ("triples", source, date)
            sizes = fs.sizes(*where)
            committed += [name for name in sizes if name.startswith("part-")]
            fresh = [name for name in sizes if _spark_part(name)]
            for i, name in enumerate(fresh):
                fs.move((*where, name), (*where, f"{prefix}-{i:05d}{suffix}"))
                written[f"triples/{source}/{date}/{prefix}-{i:05d}{suffix}"] = sizes[name]
    if not committed:
        # No line mapped: one empty file, as Spark writes for an empty output, so that the export is
        # still a valid (empty) graph to a strict checker, which refuses a folder with no files
        fs.mkdirs("triples")
        empty = gzip.compress(b"", mtime=0) if compress == "gzip" else b""
        fs.write_bytes(f"triples/{prefix}-00000{suffix}", empty)
        written[f"triples/{prefix}-00000{suffix}"] = len(empty)
    # the part files this run wrote and their sizes, so that `load` can tell a missing, added or
    # changed file (sparql.loader; ut23 #1: a file cut short by a copy loaded without a word)
    manifest["files"] = sorted(written)
    manifest["file_bytes"] = dict(sorted(written.items()))
    fs.mkdirs("quarantine")
    if quarantine_rows is not None:
        q_staging = f"{staging}/quarantine"
        (quarantine_rows.coalesce(1).sortWithinPartitions("_r", "_s", "_l").select("value")
         .write.mode("overwrite").text(fs.path(q_staging).toString()))
        parts = [n for n in fs.names(staging, "quarantine") if n.startswith("part-")]
        for i, name in enumerate(parts):
            fs.move((staging, "quarantine", name), ("quarantine", f"{prefix}-{i:05d}.jsonl"))
    if mode == "append" and previous is not None:
        manifest["previous_runs"] = previous.get("previous_runs", []) + [
            {k: previous.get(k) for k in ("run_id", "started", "finished", "inputs", "mode", "family", "compress",
                                          "counts", "files", "file_bytes")}]
    manifest["totals"] = run_totals(manifest)
    fs.delete(staging)
    manifest["finished"] = iso_time(time.time())
    fs.replace_text("manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    # Each output folder is committed like a Spark job directory (readers of DIR/triples alone check
    # DIR/triples/_SUCCESS); DIR/_SUCCESS, last, commits the whole export.
    fs.mkdirs("triples")
    fs.write_text("triples/_SUCCESS", "")
    fs.write_text("quarantine/_SUCCESS", "")
    fs.write_text("_SUCCESS", "")
    fs.delete(REPLACING)


def _spark_part(name: str) -> bool:
    """A file as Spark's text writer names it (part-NNNNN-<uuid>.c000.txt[.gz]), not yet renamed."""
    return name.startswith("part-") and (name.endswith(".txt") or name.endswith(".txt.gz"))
