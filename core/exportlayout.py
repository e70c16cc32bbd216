"""What the export job and the loader both know of an export folder's part files.

>>> written_by_a_run("part-00003.nt", set()), written_by_a_run("part-0123456789ab-00000.nt.gz", {"0123456789ab"})
(True, True)
>>> written_by_a_run("part-ffffffffffff-00000.nt", {"0123456789ab"}), written_by_a_run("part-9.nt", set())
(False, False)
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import socket
from pathlib import Path

from changeprov.errors import InputError

#: how an export run treats a folder's committed export, and how it writes part files
MODES = ("overwrite", "append")
COMPRESSIONS = ("none", "gzip")

#: the lock a running export holds in its folder (run id, host, pid, start: spark.exportlock.acquire_lock)
LOCK = "_export.lock"

#: a part file as `changeprov export` names it: part-NNNNN (an overwrite run) or part-<the first 12 hex
#: digits of its run id>-NNNNN (an append run), .nt[.gz] under triples/, .jsonl under quarantine/
PART_NAME = re.compile(r"part-(?:([0-9a-f]{12})-)?[0-9]{5}\.(?:nt|nt\.gz|jsonl)")


#: what a run's record holds, where present, for the readers of a manifest (each reads some)
_RUN_FIELDS = {"inputs": list, "files": list, "file_bytes": dict, "counts": dict}


def parse_manifest(text: str, where: str) -> dict:
    """An export's ``manifest.json``, checked for the shape its readers rely on; InputError naming
    ``where`` otherwise. One reader for the export job and the loader: five had four policies, and an
    append into an export with a damaged manifest failed after moving its files (mq1 #2).

    >>> parse_manifest('{"run_id": "a", "previous_runs": [{"run_id": "b"}]}', "m.json")["run_id"]
    'a'
    >>> parse_manifest('{"previous_runs": 5}', "m.json")
    Traceback (most recent call last):
    ...
    changeprov.errors.InputError: m.json is not an export manifest: previous_runs is not a list of runs
    """
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise InputError(f"{where} is not an export manifest: not JSON ({type(exc).__name__})") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{where} is not an export manifest: not a JSON object")
    previous = manifest.get("previous_runs", [])
    if not isinstance(previous, list) or not all(isinstance(r, dict) for r in previous):
        raise InputError(f"{where} is not an export manifest: previous_runs is not a list of runs")
    for run in (manifest, *previous):
        for key, kind in _RUN_FIELDS.items():
            if run.get(key) is not None and not isinstance(run[key], kind):
                raise InputError(f"{where} is not an export manifest: a run's {key} is not a JSON {kind.__name__}")
    return manifest


def manifest_runs(manifest: dict) -> list[dict]:
    """Every run a (parsed) manifest records: its own and the earlier ones an append kept."""
    return [manifest, *manifest.get("previous_runs", [])]


def run_totals(manifest: dict) -> dict:
    """The counts of every run a manifest records, summed: what the folder holds after appends (ut43b #4:
    ``counts`` is the last run's alone). Triples are as written, each run's once (a triple two runs wrote
    counts twice; a store holds it once).

    >>> run_totals({"counts": {"lines_read": 3, "blank": 0, "mapped": 2, "quarantined": 1, "triples": 9,
    ...                        "quarantined_by_reason": {"MALFORMED_JSON": 1}},
    ...             "previous_runs": [{"counts": {"lines_read": 2, "blank": 1, "mapped": 0, "quarantined": 1,
    ...                                           "triples": 0, "quarantined_by_reason": {"BAD_ENCODING": 1}}}]})
    {'runs': 2, 'lines_read': 5, 'blank': 1, 'mapped': 2, 'quarantined': 2, 'quarantined_by_reason': {'BAD_ENCODING': 1, 'MALFORMED_JSON': 1}, 'triples': 9}
    >>> run_totals({"counts": {"lines_read": "3", "quarantined_by_reason": {"X": None}}})["lines_read"]
    0
    """
    def number(value) -> int:  # an earlier manifest edited by hand must not fail a commit (rv43b #5)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    runs = [r.get("counts") if isinstance(r.get("counts"), dict) else {} for r in manifest_runs(manifest)]
    total = {"runs": len(runs)}
    for key in ("lines_read", "blank", "mapped", "quarantined"):
        total[key] = sum(number(c.get(key)) for c in runs)
    reasons: dict[str, int] = {}
    for c in runs:
        by_reason = c.get("quarantined_by_reason")
        for reason, n in (by_reason.items() if isinstance(by_reason, dict) else ()):
            reasons[str(reason)] = reasons.get(str(reason), 0) + number(n)
    total["quarantined_by_reason"] = dict(sorted(reasons.items()))
    total["triples"] = sum(number(c.get("triples")) for c in runs)
    return total


def run_ids(manifest: dict) -> set[str]:
    """The 12-digit run ids in an append run's file names, of every run a manifest records."""
    return {str(r["run_id"])[:12] for r in manifest_runs(manifest) if r.get("run_id")}


def written_by_a_run(name: str, ids: set[str], *, overwrite_run: bool = True) -> bool:
    """Whether a part file's name is one a run of the manifest gave it: an append run's names carry its
    id; an overwrite run's carry none (``overwrite_run``: the manifest records one)."""
    m = PART_NAME.fullmatch(name)
    return m is not None and (m.group(1) in ids if m.group(1) else overwrite_run)


def lock_fields(text: str) -> dict:
    try:
        fields = json.loads(text)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


def alive(pid) -> bool:
    # a pid the OS cannot hold (a crafted or corrupt lock: 10**30 raised OverflowError, rv40 m5) is no process
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def lock_holder(root: Path) -> dict | None:
    """The fields of ``root``'s export lock, unless there is none or its process is known to be gone
    (of this host, not running)."""
    try:
        held = lock_fields((root / LOCK).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if held.get("host") == socket.gethostname() and not alive(held.get("pid")):
        return None
    return held


def dead_run(root: Path) -> str | None:
    """What a dead export run left beside a committed export (its lock, of a process of this host
    that no longer runs; its top-level staging folders), said for a load, or None. With _SUCCESS there,
    the committed runs are whole: a run removes _SUCCESS before it moves anything (ut47b #4: a load
    after an append was kill -9'd refused the committed runs, exit 2)."""
    if not (root / "_SUCCESS").is_file():
        return None
    try:
        held = lock_fields((root / LOCK).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        held = None
    gone = held is not None and held.get("host") == socket.gethostname() and not alive(held.get("pid"))
    staging = sorted(p.name for p in root.iterdir() if p.name.startswith("_staging-") and p.is_dir()
                     and not (held and not gone and p.name.startswith(f"_staging-{held.get('run_id')}")))
    if not gone and not staging:
        return None
    left = ([f"its lock ({describe_holder(held)}; that process no longer runs)"] if gone else []) + (
        [f"{len(staging)} staging folder(s) ({', '.join(staging[:2])}{' …' if len(staging) > 2 else ''})"]
        if staging else [])
    return (f"an export run into {root} died and left {' and '.join(left)}: this load has the runs committed "
            "before it; the next export into the folder removes what it left")


def partition_days(files: list[str]) -> set[str]:
    """The days of a run's part files (``triples/source=S/date=YYYY-MM-DD/part-…``).

    >>> sorted(partition_days(["triples/source=openmetadata/date=2024-03-01/part-00000.nt", "triples/part-00000.nt"]))
    ['2024-03-01']
    """
    return {m.group(1) for f in files for m in [re.search(r"/date=(\d{4}-\d{2}-\d{2})/", f)] if m}


def iso_time(t: float) -> str:
    """A manifest's or lock's time, in the one form people read times in (ut48a #8: ``…T12:13:38+00:00``
    here, ``…T12:13:38.000Z`` in every message).

    >>> iso_time(1_709_280_000.1234)
    '2024-03-01T08:00:00.123Z'
    """
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe_holder(held: dict) -> str:
    """"run 0123456789ab, pid 7 on host, started 2026-01-02T03:04:05.000Z": a lock's holder, as every
    message names it, its time in the form people read times in everywhere (three copies had
    drifted: the load's showed the raw stamp; mq1 #6)."""
    return (f"run {str(held.get('run_id'))[:12]}, pid {held.get('pid')} on {held.get('host')}, "
            f"started {shown_time(held.get('started'))}")


def shown_time(stamp) -> str:
    """A manifest's or lock's time (seconds, ``+00:00``) in the form people read times in everywhere."""
    from changeprov.sparql.formats import display_datetime  # pyoxigraph: only for a message

    return display_datetime(stamp) if isinstance(stamp, str) else str(stamp)


def running_export(root: Path) -> str | None:
    """Who holds ``root``'s export lock, unless its process is known to be gone: a load meanwhile
    reads the last committed run, not the one being written (ut15 #10)."""
    held = lock_holder(root)
    if held is None:
        return None
    return (f"an export ({describe_holder(held)}) is writing into {root}: this load has the runs committed before "
            "it, not its triples")
