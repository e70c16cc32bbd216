"""What the export job and the loader both know of an export folder's part files.

>>> written_by_a_run("part-00003.nt", set()), written_by_a_run("part-0123456789ab-00000.nt.gz", {"0123456789ab"})
(True, True)
>>> written_by_a_run("part-ffffffffffff-00000.nt", {"0123456789ab"}), written_by_a_run("part-9.nt", set())
(False, False)
"""

from __future__ import annotations

import re

#: a part file as `changeprov export` names it: part-NNNNN (an overwrite run) or part-<the first 12 hex
#: digits of its run id>-NNNNN (an append run), .nt[.gz] under triples/, .jsonl under quarantine/
PART_NAME = re.compile(r"part-(?:([0-9a-f]{12})-)?[0-9]{5}\.(?:nt|nt\.gz|jsonl)")


def run_ids(manifest: dict) -> set[str]:
    """The 12-digit run ids in an append run's file names, of every run a manifest records."""
    return {str(r["run_id"])[:12] for r in [manifest, *manifest.get("previous_runs", [])] if r.get("run_id")}


def written_by_a_run(name: str, ids: set[str], *, overwrite_run: bool = True) -> bool:
    """Whether a part file's name is one a run of the manifest gave it: an append run's names carry its
    id; an overwrite run's carry none (``overwrite_run``: the manifest records one)."""
    m = PART_NAME.fullmatch(name)
    return m is not None and (m.group(1) in ids if m.group(1) else overwrite_run)
