"""Synthetic, deterministic change-event logs at scale (OpenMetadata + DataHub, with hostile lines).

``generate(path, events=N, seed=S)`` writes N lines of JSONL that look exactly like the conformance
corpus in ``../shared/corpus`` (same keys, nesting and JSON-string encodings) but tell a long story:
a population of tables / datasets, dashboards, pipelines, topics, ML models, glossary terms, users and
teams evolves over ~2 years from 2024-01-01 UTC — creations, descriptions, tags (PII, tiers, glossary
terms), owners, column changes, followers, soft deletes, restores, hard deletes, lineage that is
re-wired over time, schema versions, pipeline / job runs.

Size: ~1.5 KB per line on average (OpenMetadata lines ~1-3.5 KB). To stay near that, an OpenMetadata
``entity`` string is the entity state after the change: it does not repeat the change description
(changeDescription / incrementalChangeDescription), carries ``followers`` only on follower changes,
``domains`` only at creation, no ``pipelineStatus`` (a field OpenMetadata loads only on request), and tag labels without their description (change values keep it).

Families (shares of the valid lines, roughly): OpenMetadata 2.x ChangeEvent ~56 %, DataHub
MetadataChangeLog ~31 %, EntityChangeEvent_v1 ~10 %, PlatformEvent envelopes ~3 %. A further
``hostile_share`` of all lines is hostile, spread evenly and cycling through ``HOSTILE_KINDS``.

Deterministic: the output depends only on (events, seed, hostile_share, days) — one ``random.Random(seed)``,
no wall clock, no set iteration, uuid5 ids. Plain output is byte-identical everywhere; gzip output is
written with mtime 0 and no file name, so it is byte-identical for a given zlib.

The code is split by what it holds: this module has the public API, the generator ``_Gen`` (populations,
scheduler, main step, hostile lines); ``generate_openmetadata`` and ``generate_datahub`` /
``generate_datahub_jobs`` hold its event builders as mixins, ``generate_state`` the records and id/JSON
helpers they share, ``generate_vocab`` the fake company's names.

>>> kinds = [k for k, _ in iter_lines(200, seed=1)]
>>> len(kinds), kinds.count("openmetadata") > 50
(200, True)
"""

from __future__ import annotations

import heapq
import json
import queue
import random
import threading
from collections import deque
from pathlib import Path
from typing import Iterator

from changeprov.generate_datahub import _DataHubEvents
from changeprov.generate_datahub_jobs import _DataHubJobs
from changeprov.generate_openmetadata import _OpenMetadataEvents
from changeprov.generate_state import CT, _OM_PATH, _Pool, _ref, _uid, _uuid5, dumps
from changeprov.generate_vocab import DB_SERVICES, DH_DOMAINS, DOMAINS, FIRST, LAST, OTHER_TAGS, PII_DESC, TEAMS, TIERS
from changeprov.errors import InputError
from changeprov.mapping.inputs import HADOOP_ONLY_CODECS, codec_of, compressing, replaced_on_success
from changeprov.mapping.terms import MAX_MS

__all__ = ["generate", "iter_lines", "FAMILIES", "HOSTILE_KINDS", "EXPECTED_REASONS"]

FAMILIES = ("openmetadata", "datahub-mcl", "datahub-ece", "datahub-platform")
HOSTILE_KINDS = ("malformed_json", "not_an_object", "blank", "missing_field", "unknown_event_type",
                 "bad_timestamp", "bad_timestamp_type", "bad_aspect_json", "duplicate")
#: the quarantine reason(s) the reference mapper should give each hostile kind (None: not quarantined)
EXPECTED_REASONS = {
    "malformed_json": ("MALFORMED_JSON",),
    "not_an_object": ("NOT_AN_OBJECT",),
    "missing_field": ("MISSING_FIELD",),
    "unknown_event_type": ("UNKNOWN_EVENT_TYPE",),
    "bad_timestamp": ("BAD_TIMESTAMP",),
    "bad_timestamp_type": ("BAD_TYPE", "BAD_TIMESTAMP"),
    "bad_aspect_json": ("BAD_ASPECT_JSON",),
    "blank": None,
    "duplicate": None,
}

START_MS = 1704067200000  # 2024-01-01T00:00:00Z
DAYS = 730  # ~2 years by default; the export writes one partition per family and day
RING = 512  # a replayed (duplicate) line is one of the last RING valid lines


# ------------------------------------------------------------------ the generator


class _Gen(_OpenMetadataEvents, _DataHubEvents, _DataHubJobs):
    """The generator: one random stream, a clock, the populations and a scheduler; the event builders are the
    mixins'. ``step`` makes the next valid line(s), ``hostile`` a hostile one."""

    def __init__(self, events: int, seed: int, days: int = DAYS):
        self.events = max(int(events), 1)
        self.seed = seed
        self.rng = rng = random.Random(seed)
        self.random = rng.random
        self.randrange = rng.randrange
        self.clock = START_MS
        self.mean_gap = days * 86_400_000 / self.events
        self.done = 0         # valid lines produced so far
        self.counter = 0      # event-id counter
        self.heap = []
        self.hseq = 0
        n = self.events
        # --- people
        n_users = n // 5000 + 5
        self.users = []
        for i in range(n_users):
            first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST) + i * 7) % len(LAST)]
            name = f"{first}.{last}" + (str(i // (len(FIRST) * len(LAST))) if i >= len(FIRST) * len(LAST) else "")
            self.users.append((name, f"{first.title()} {last.title()}"))
        self.user_names = [u[0] for u in self.users]
        self.user_refs = [_ref(_uid("user", u), "user", u, u, d, "users") for u, d in self.users]
        self.user_ref_json = [dumps(r) for r in self.user_refs]
        n_teams = min(len(TEAMS), n // 50000 + 3)
        self.team_ref_json = [dumps(_ref(_uid("team", t), "team", t, t, t, "teams")) for t in TEAMS[:n_teams]]
        self.bot_ref = _ref(_uid("user", "ingestion-bot"), "user", "ingestion-bot", "ingestion-bot",
                            "ingestion-bot", "users")
        self.dh_users = ["urn:li:corpuser:" + u.replace(".", "_") for u in self.user_names]
        self.dh_groups = ["urn:li:corpGroup:" + t.lower() for t in TEAMS[:n_teams]]
        # --- tags
        label = lambda fqn, name, desc, source="Classification", disp=None: dumps(  # noqa: E731
            {"tagFQN": fqn, "name": name, **({"displayName": disp} if disp else {}), "description": desc,
             "source": source, "labelType": "Manual", "state": "Confirmed"})
        self.pii_label = {k: label(k, v[0], v[1]) for k, v in PII_DESC.items()}
        self.short_labels = {}
        self.pii_obj = {k: json.loads(self._short_label(v)) for k, v in self.pii_label.items()}
        self.tier_labels = [label(*t) for t in TIERS]
        self.other_labels = [label(*t) for t in OTHER_TAGS]
        self.glossary_labels = []  # filled as glossary terms are created
        self.domains = [(d, _uid("domain", d)) for d in DOMAINS]
        self.domain_refs = [dumps(_ref(i, "domain", d, d, d, "domains")) for d, i in self.domains]
        # --- services
        self.db_services = []
        for name, stype, dbs in DB_SERVICES:
            sid = _uid("service", name)
            svc = _ref(sid, "databaseService", name, name, name, "services/databaseServices")
            self.db_services.append((name, stype, dbs, dumps(svc)))
        self.other_services = {}
        for kind, name, stype, path in (("topic", "kafka_prod", "Kafka", "messagingServices"),
                                         ("dashboard", "looker_prod", "Looker", "dashboardServices"),
                                         ("pipeline", "airflow_prod", "Airflow", "pipelineServices"),
                                         ("mlmodel", "mlflow_prod", "Mlflow", "mlmodelServices")):
            sid = _uid("service", name)
            self.other_services[kind] = (name, stype, dumps(_ref(sid, kind + "Service", name, name, name,
                                                                  "services/" + path)))
        self.glossary_ref = dumps(_ref(_uid("glossary", "BusinessGlossary"), "glossary", "BusinessGlossary",
                                       "BusinessGlossary", "Business Glossary", "glossaries"))
        # --- populations and targets
        self.om = _Pool()
        self.om_by_kind = {k: _Pool() for k in _OM_PATH}
        self.om_created = 0
        self.om_target = max(12, int(n / 80 / 0.5))
        self.om_upstreams = _Pool()  # tables/topics usable as lineage sources  (separate pos -> wrapper)
        self.edges = {}   # key -> [from, to, details]
        self.edge_keys = []
        self.edge_pos = {}
        self.ds = _Pool()
        self.ds_all = []
        self.ds_created = 0
        self.ds_target = max(8, n // 80)
        self.jobs = []
        self.job_by_ds = {}
        self.ring = [None] * RING
        self.ring_n = 0
        self.last_om = None
        self.last_mcl = None
        for j, d in enumerate(DH_DOMAINS):  # the domains exist in DataHub from the start
            self._schedule(START_MS + 1000 * j, self._dh_domain, d)

    # ---------------------------------------------------------------- helpers
    def _schedule(self, t, fn, *args):
        self.hseq += 1
        heapq.heappush(self.heap, (t, self.hseq, fn, args))

    def _eid(self) -> str:
        self.counter += 1
        return _uuid5(f"{self.seed}/event/{self.counter}")

    def _user(self) -> str:
        return self.user_names[self.randrange(len(self.user_names))]

    def _progress(self) -> float:
        return self.done / self.events

    def _want_create(self, created, target, alive) -> bool:
        if alive < 4:
            return True
        p = self._progress()
        quota = target * min(1.0, (p * 1.35) ** 0.75) + 4
        return created < quota

    # ---------------------------------------------------------------- main step
    def step(self) -> list:
        gap = self.mean_gap * (0.25 + 1.5 * self.random())
        t_next = self.clock + int(gap) + 1
        heap = self.heap
        if heap and heap[0][0] <= t_next:
            t, _, fn, args = heapq.heappop(heap)
            if t > self.clock:
                self.clock = t
            out = fn(self.clock, *args)
        else:
            self.clock = t_next
            r = self.random()
            if r < 0.66:
                out = self._om_action(t_next)
            elif r < 0.898:
                out = self._mcl_action(t_next)
            elif r < 0.965:
                out = self._ece_action(t_next)
            else:
                out = self._platform_action(t_next)
        n = len(out)
        if n > 1:  # a burst stands for n lines of the timeline
            self.clock += int(self.mean_gap * (n - 1))
        self.done += n
        return out

    # ================================================================ hostile lines
    def hostile(self, kind, n) -> tuple:
        om = self.last_om or _FALLBACK_OM
        if kind == "duplicate":
            if self.ring_n == 0:
                return "blank", ""
            k = min(self.ring_n, len(self.ring))
            return "duplicate", self.ring[(self.ring_n - 1 - self.randrange(k)) % len(self.ring)]
        if kind == "blank":
            return "blank", ("", "   ", "\t")[n % 3]
        if kind == "malformed_json":
            src = self.ring[(self.ring_n - 1) % len(self.ring)] if self.ring_n else dumps(om)
            cut = 1 + self.randrange(max(1, len(src) - 2))
            return kind, src[:cut]
        if kind == "not_an_object":
            return kind, ("[" + dumps(om) + "]", "null", '"entityCreated"', "42", "true", "[]")[n % 6]
        ev = dict(om)
        ev["id"] = _uuid5(f"{self.seed}/hostile/{n}")
        if kind == "missing_field":
            del ev["entityId"]
            return kind, dumps(ev)
        if kind == "unknown_event_type":
            ev["eventType"] = ("entityArchived", "entityTeleported", "ENTITY_CREATED")[n % 3]
            return kind, dumps(ev)
        if kind == "bad_timestamp":
            ev["timestamp"] = -1 - self.randrange(START_MS) if n % 2 == 0 else 253402300800000 + self.randrange(10**9)
            return kind, dumps(ev)
        if kind == "bad_timestamp_type":
            ev["timestamp"] = str(ev["timestamp"]) if n % 2 == 0 else "2024-05-01T12:00:00Z"
            return kind, dumps(ev)
        if kind == "bad_aspect_json":
            mcl = self.last_mcl or _FALLBACK_MCL
            ev = dict(mcl)
            v = mcl["aspect"]["value"]
            ev["aspect"] = {"value": v[: max(1, len(v) // 2)], "contentType": CT}
            ev["created"] = {"time": mcl["created"]["time"], "actor": "urn:li:corpuser:replayer"}
            return kind, dumps(ev)
        raise ValueError(kind)


_FALLBACK_OM = {"id": "00000000-0000-5000-8000-000000000000", "eventType": "entityUpdated", "entityType": "table",
                "entityId": _uid("fallback"), "entityFullyQualifiedName": "mysql_prod.ecommerce.sales.orders",
                "previousVersion": 0.1, "currentVersion": 0.1, "userName": "admin", "timestamp": START_MS}
_FALLBACK_MCL = {"entityType": "dataset", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,fallback,PROD)",
                 "changeType": "UPSERT", "aspectName": "status",
                 "aspect": {"value": '{"removed":false}', "contentType": CT},
                 "created": {"time": START_MS, "actor": "urn:li:corpuser:datahub"}}


# ------------------------------------------------------------------ public API


#: the most days the events may span: the last (a day or so after the span) stays a valid time
MAX_DAYS = (MAX_MS - START_MS) // 86_400_000 - 366


def check_options(events: object, hostile_share: object, days: object) -> None:
    """InputError naming the option that is out of range or of the wrong type (the library's and the
    CLI's one check: ut40c #4, #5)."""
    if isinstance(events, bool) or not isinstance(events, int) or events < 0:
        raise InputError(f"events must be an int >= 0, not {events!r:.40}")
    if isinstance(hostile_share, bool) or not isinstance(hostile_share, (int, float)) \
            or not 0 <= hostile_share <= 1:  # NaN fails both comparisons
        raise InputError(f"hostile share must be a number between 0 and 1, not {hostile_share!r:.40}")
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise InputError(f"days must be an int from 1 to {MAX_DAYS:,} (the events end before year 10000), "
                         f"not {days!r:.40}")


def iter_lines(events: int, seed: int = 0, hostile_share: float = 0.01, *,
               days: int = DAYS) -> Iterator[tuple[str, str]]:
    """Yield (kind, line) for each of ``events`` lines; kind is a family name or a hostile kind.

    ``days``: the time span the events are spread over (from 2024-01-01)."""
    check_options(events, hostile_share, days)
    if events == 0:
        return
    g = _Gen(events, seed, days)
    n_hostile = min(events, int(round(events * hostile_share)))
    pending = deque()
    ring, ring_len = g.ring, len(g.ring)
    hk = 0
    for i in range(events):
        if n_hostile and (i * n_hostile) // events != ((i + 1) * n_hostile) // events:
            kind = HOSTILE_KINDS[hk % len(HOSTILE_KINDS)]
            yield g.hostile(kind, hk)
            hk += 1
            continue
        while not pending:
            pending.extend(g.step())
        item = pending.popleft()
        ring[g.ring_n % ring_len] = item[1]
        g.ring_n += 1
        yield item


def generate(path, *, events: int, seed: int = 0, hostile_share: float = 0.01, days: int = DAYS,
             gzip: bool | None = None, part: tuple[int, int] | None = None) -> dict:
    """Write ``events`` JSONL lines to ``path``, compressed by its suffix as `map` and `export` read
    it (``.gz``, ``.bz2``, ``.deflate``, any case; ``gzip=True`` forces gzip, ``False`` plain text);
    return a summary. A suffix only Hadoop reads (``.zst``, ``.lz4``, ``.snappy``) is refused: a
    file named so would be plain text that no reader takes for what its name says.

    The file appears at ``path`` only when every line is written: a failed or interrupted run leaves
    none (``replaced_on_success``: missing parent folders are created, a folder is refused, OSError
    is InputError).

    The summary: ``lines`` (all lines written), ``families`` (valid lines per family, replays excluded),
    ``hostile`` (lines per hostile kind, blank lines and replays excluded), ``blank``, ``duplicates`` and
    ``unique_events`` (= sum of ``families``, what a correct pipeline should count). ``lines`` equals
    ``unique_events + sum(hostile) + blank + duplicates``.

    ``part=(i, k)`` writes only the i-th of k consecutive slices of the ``events`` lines: the parts of
    one log, in order, are its nights (the same entities, users and version histories, later in
    time), and their lines, in order, are the whole log's (plain files concatenate to it byte for
    byte; each compressed part is a stream of its own). Each part generates the log up to its end, so
    writing all k parts costs about k/2 whole logs. A part's summary counts what that file holds: a
    replay of an event from an earlier part is that event's first copy in this file, so it counts as
    the event (``unique_events``), not as a duplicate.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> whole = generate(os.path.join(d, "all.jsonl"), events=300, seed=2)
    >>> parts = [generate(os.path.join(d, f"p{i}.jsonl"), events=300, seed=2, part=(i, 3)) for i in (1, 2, 3)]
    >>> b"".join(open(os.path.join(d, f"p{i}.jsonl"), "rb").read() for i in (1, 2, 3)) == open(
    ...     os.path.join(d, "all.jsonl"), "rb").read()
    True
    >>> [p["lines"] for p in parts], parts[1]["part"]
    ([100, 100, 100], [2, 3])
    """
    check_options(events, hostile_share, days)
    # one check of part: anything but a pair of ints 1 <= i <= k (None: the whole log) is refused
    nth, parts = (1, 1) if part is None else part if isinstance(part, tuple) and len(part) == 2 else (0, 0)
    if not (isinstance(nth, int) and isinstance(parts, int) and 1 <= nth <= parts):
        raise InputError(f"part must be (i, k) with 1 <= i <= k, not {part!r:.40}")
    codec = codec_of(path) if gzip is None else ".gz" if gzip else None
    if codec in HADOOP_ONLY_CODECS:
        raise InputError(f"{path}: generate writes plain JSONL or .gz, .bz2 or .deflate, not {codec} "
                         f"({HADOOP_ONLY_CODECS[codec]}); name the file .jsonl or .jsonl.gz")
    first, end = events * (nth - 1) // parts, events * nth // parts
    families = {f: 0 for f in FAMILIES}
    hostile = {k: 0 for k in HOSTILE_KINDS if k not in ("blank", "duplicate")}
    blank = dup = lines = 0
    # a replay repeats one of the last RING valid lines: the family of each, and which are in this file
    earlier: deque = deque(maxlen=RING)
    family_of: dict[int, str] = {}
    in_file: set[int] = set()
    q: queue.Queue = queue.Queue(maxsize=8)
    error = []

    with replaced_on_success(Path(path)) as raw:
        sink = compressing(raw, codec)

        def writer():
            try:
                while True:
                    chunk = q.get()
                    if chunk is None:
                        return
                    sink.write(chunk)
            except BaseException as exc:  # surfaced below, in the caller's thread
                error.append(exc)
                while q.get() is not None:
                    pass

        th = threading.Thread(target=writer, name="changeprov-generate-writer", daemon=True)
        th.start()
        try:
            buf = []
            for n, (kind, line) in enumerate(iter_lines(events, seed, hostile_share, days=days)):
                if n < first:
                    if kind in families:
                        earlier.append((hash(line), kind))
                    continue
                if n >= end:
                    break
                if n == first and first:
                    family_of = dict(earlier)
                lines += 1
                if kind in families:
                    families[kind] += 1
                    if first:
                        in_file.add(hash(line))
                elif kind == "blank":
                    blank += 1
                elif kind == "duplicate":
                    h = hash(line) if first else None
                    if h is None or h in in_file:
                        dup += 1
                    else:  # its first copy in this file: the event is new here
                        families[family_of[h]] += 1
                        in_file.add(h)
                else:
                    hostile[kind] += 1
                buf.append(line)
                if len(buf) >= 2048:
                    buf.append("")
                    q.put("\n".join(buf).encode("utf-8"))
                    buf = []
                    if error:
                        break
            if buf:
                buf.append("")
                q.put("\n".join(buf).encode("utf-8"))
        finally:
            q.put(None)
            th.join()
        if error:  # raised inside the block, so that the partial file is removed
            raise error[0]
        if sink is not raw:
            sink.close()
    return {"path": str(path), "lines": lines, "seed": seed, "compression": codec or None, "part": [nth, parts],
            "families": families,
            "hostile": hostile, "blank": blank, "duplicates": dup, "unique_events": sum(families.values())}
