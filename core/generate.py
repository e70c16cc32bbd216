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

>>> kinds = [k for k, _ in iter_lines(200, seed=1)]
>>> len(kinds), kinds.count("openmetadata") > 50
(200, True)
"""

from __future__ import annotations

import gzip as _gzip
import heapq
import json
import queue
import random
import threading
import uuid
from hashlib import sha1 as _sha1
from collections import deque
from pathlib import Path
from typing import Iterator

from changeprov.mapping.inputs import replaced_on_success

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
NS = uuid.UUID("1b4e28ba-2fa1-51d2-883f-0016d3cca427")
HREF = "http://localhost:8585/api/v1/"
CT = "application/json"

_enc = json.JSONEncoder(separators=(",", ":"))
dumps = _enc.encode

# ------------------------------------------------------------------ vocabulary of the fake company

FIRST = ("alice", "bob", "carol", "david", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
         "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yusuf", "zoe",
         "amara", "bruno", "chen", "dmitri", "elena", "farah", "goran", "hana", "ines", "jonas", "kenji",
         "lena", "marco", "nadia", "oscar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "vera")
LAST = ("wong", "martinez", "chen", "kim", "smith", "mueller", "rossi", "tanaka", "silva", "novak",
        "patel", "garcia", "dubois", "larsen", "okafor", "ivanova", "nguyen", "cohen", "haddad", "kowalski")
TEAMS = ("DataPlatform", "Finance", "Marketing", "Sales", "Operations", "Growth", "Risk", "Logistics",
         "CustomerSuccess", "Security", "Product", "Research")
DOMAINS = ("Sales", "Finance", "Marketing", "Operations", "Platform")
NOUNS = ("orders", "customers", "payments", "invoices", "shipments", "products", "sessions", "clicks",
         "refunds", "subscriptions", "inventory", "accounts", "campaigns", "tickets", "returns", "events",
         "carts", "reviews", "suppliers", "stores")
SUFFIXES = ("daily", "raw", "stg", "agg", "hist", "snapshot", "v2", "latest", "by_region", "weekly", "core")
TERMS = ("Revenue", "NetRevenue", "GrossMargin", "Churn", "CustomerLifetimeValue", "ActiveUser",
         "Conversion", "Basket", "Refund", "Chargeback", "Cohort", "Retention", "Invoice", "Shipment")
# (name, dataType, display, extra, pii)
COLUMNS = (
    ("id", "BIGINT", "bigint", {}, None),
    ("customer_id", "BIGINT", "bigint", {}, None),
    ("email", "VARCHAR", "varchar(255)", {"dataLength": 255}, "PII.Sensitive"),
    ("full_name", "VARCHAR", "varchar(200)", {"dataLength": 200}, "PII.Sensitive"),
    ("phone", "VARCHAR", "varchar(32)", {"dataLength": 32}, "PII.Sensitive"),
    ("birth_date", "DATE", "date", {}, "PII.Sensitive"),
    ("zip_code", "VARCHAR", "varchar(16)", {"dataLength": 16}, "PII.NonSensitive"),
    ("country", "VARCHAR", "varchar(2)", {"dataLength": 2}, "PII.NonSensitive"),
    ("amount", "DECIMAL", "decimal(12,2)", {"precision": 12, "scale": 2}, None),
    ("status", "VARCHAR", "varchar(32)", {"dataLength": 32}, None),
    ("quantity", "INT", "int", {}, None),
    ("created_at", "TIMESTAMP", "timestamp", {}, None),
    ("updated_at", "TIMESTAMP", "timestamp", {}, None),
    ("payload", "JSON", "json", {}, None),
    ("channel", "VARCHAR", "varchar(64)", {"dataLength": 64}, None),
    ("discount", "DECIMAL", "decimal(10,2)", {"precision": 10, "scale": 2}, None),
)
DB_SERVICES = (("mysql_prod", "Mysql", ("ecommerce", "crm")), ("postgres_prod", "Postgres", ("shop", "billing")),
               ("snowflake_prod", "Snowflake", ("analytics", "raw")), ("bigquery_prod", "BigQuery", ("marketing",)))
SCHEMAS = ("sales", "public", "staging", "marts", "core", "finance")
DESCRIPTIONS = (
    "One row per {n}, loaded nightly from the operational store.",
    "Deduplicated {n} with late-arriving updates merged; source of truth for reporting.",
    "Staging copy of {n}; do not query directly, use the mart instead.",
    "Aggregated {n} per calendar day in UTC.",
    "Raw {n} as received from the upstream system, append-only.",
    "{n} enriched with customer and region attributes for the analytics team.",
)
PII_DESC = {
    "PII.Sensitive": ("Sensitive", "PII which if lost, compromised, or disclosed without authorization, could "
                      "result in substantial harm, embarrassment, inconvenience, or unfairness to an individual."),
    "PII.NonSensitive": ("NonSensitive", "PII which is easily accessible from public sources and can include "
                         "zip code, race, gender, and date of birth."),
}
TIERS = (("Tier.Tier1", "Tier1", "**Critical Source of Truth business data assets of an organization**"),
         ("Tier.Tier2", "Tier2", "**Important business datasets for your company (not as critical as Tier 1)**"),
         ("Tier.Tier3", "Tier3", "**Department/group level datasets that are typically non-business and general**"),
         ("Tier.Tier4", "Tier4", "**Datasets that are not important or are used for ad-hoc analysis**"))
OTHER_TAGS = (("PersonalData.Personal", "Personal", "Data that can be used to identify a natural person."),
              ("Quality.Certified", "Certified", "Checked by the data quality team."),
              ("Retention.Short", "Short", "Deleted after 90 days."))
DH_PLATFORMS = ("postgres", "mysql", "snowflake", "hive", "kafka", "s3", "bigquery")
DH_TAGS = ("urn:li:tag:PII", "urn:li:tag:Tier1", "urn:li:tag:Gold", "urn:li:tag:Silver", "urn:li:tag:Legacy",
           "urn:li:tag:Sensitive")
DH_TERMS = ("urn:li:glossaryTerm:Classification.PersonalInformation", "urn:li:glossaryTerm:Classification.Email",
            "urn:li:glossaryTerm:Finance.Revenue", "urn:li:glossaryTerm:Finance.GrossMerchandiseValue",
            "urn:li:glossaryTerm:Finance.NetRevenue", "urn:li:glossaryTerm:Customer.CustomerAccount",
            "urn:li:glossaryTerm:Customer.Churn")
DH_DOMAINS = ("finance", "marketing", "sales", "operations", "platform")
OWNER_TYPES = ("TECHNICAL_OWNER", "BUSINESS_OWNER", "DATA_STEWARD")
DH_TYPES = (("com.linkedin.schema.StringType", ("varchar(64)", "string", "text", "VARCHAR(36)")),
            ("com.linkedin.schema.NumberType", ("numeric(10,2)", "double", "bigint", "NUMBER(18,2)")),
            ("com.linkedin.schema.TimeType", ("timestamp", "TIMESTAMP_TZ")),
            ("com.linkedin.schema.DateType", ("date",)),
            ("com.linkedin.schema.BooleanType", ("boolean",)))
DH_FIELDS = ("order_id", "customer_id", "email", "amount", "discount", "created_at", "status", "country",
             "net_amount", "gross_amount", "signup_date", "is_active", "event_ts", "sku", "region")
STRUCT_PROPS = (("urn:li:structuredProperty:io.acme.retention_days", ("[365.0]", "[90.0]", "[30.0]")),
                ("urn:li:structuredProperty:io.acme.data_tier", ('["GOLD"]', '["SILVER"]', '["BRONZE"]')))
FUNCTIONS = ("SUM", "COUNT", "DATE", "MAX", "IDENTITY", "CONCAT")
SYS_COMMON = {"registryName": "unknownRegistry", "registryVersion": "0.0.0.0-dev"}
PROPS_SDK = {"clientId": "acryl-datahub", "clientVersion": "1.7.0.17"}
PROPS_AIRFLOW = {"clientId": "acryl-datahub-airflow-plugin", "clientVersion": "1.7.0.17"}
PROPS_UI = {"appSource": "ui"}


_NS_BYTES = NS.bytes


def _uuid5(name: str) -> str:
    """str(uuid.uuid5(NS, name)), without building UUID objects (hot path)."""
    h = bytearray(_sha1(_NS_BYTES + name.encode("utf-8")).digest()[:16])
    h[6] = (h[6] & 0x0F) | 0x50
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def _uid(*parts) -> str:
    return _uuid5("/".join(map(str, parts)))


def _ref(id_: str, type_: str, name: str, fqn: str, display: str, path: str, description: str | None = None) -> dict:
    ref = {"id": id_, "type": type_, "name": name, "fullyQualifiedName": fqn}
    if description:
        ref["description"] = description
    ref["displayName"] = display
    ref["deleted"] = False
    ref["href"] = HREF + path + "/" + id_
    return ref


# ------------------------------------------------------------------ state


class OMEntity:
    __slots__ = ("kind", "id", "name", "fqn", "display", "idx", "pos", "v10", "desc", "deleted", "tags", "owners",
                 "followers", "cols", "cols_json", "last_cd", "domain_ids", "domains_frag", "head", "static",
                 "static2", "extra", "edges", "tier", "col_tags")

    def __init__(self, kind, id_, name, fqn, display, idx):
        self.kind, self.id, self.name, self.fqn, self.display, self.idx = kind, id_, name, fqn, display, idx
        self.pos = -1
        self.v10 = 1
        self.desc = None
        self.deleted = False
        self.tags = []       # label JSON strings
        self.owners = []     # ref JSON strings
        self.followers = []  # user indexes
        self.cols = []
        self.cols_json = None
        self.last_cd = None
        self.domain_ids = None
        self.domains_frag = ""
        self.extra = {}
        self.edges = {}      # lineage keys touching this entity (ordered set)
        self.tier = None
        self.col_tags = {}

    def ref(self, with_description=True) -> dict:
        return _ref(self.id, self.kind, self.name, self.fqn, self.display, _OM_PATH[self.kind],
                    self.desc if with_description else None)


_OM_PATH = {"table": "tables", "topic": "topics", "dashboard": "dashboards", "pipeline": "pipelines",
            "mlmodel": "mlmodels", "glossaryTerm": "glossaryTerms"}


class Dataset:
    __slots__ = ("urn", "platform", "name", "idx", "pos", "fields", "aspects", "aver", "upstreams", "downstreams",
                 "tags", "terms", "owners", "domain", "removed", "desc", "deprecated", "sprops", "alive", "src")

    def __init__(self, urn, platform, name, idx):
        self.urn, self.platform, self.name, self.idx = urn, platform, name, idx
        self.pos = -1
        self.fields = []      # [path, typeKey, native, nullable, isKey]
        self.aspects = {}     # aspect -> (value string, systemMetadata)
        self.aver = {}        # aspect -> last version number (never reset)
        self.upstreams = []
        self.downstreams = {}
        self.tags, self.terms, self.owners = [], [], []
        self.domain = None
        self.removed = False
        self.desc = None
        self.deprecated = False
        self.sprops = {}
        self.alive = True


class _Pool:
    """A list of live objects with O(1) random pick and O(1) removal (objects carry .pos)."""

    __slots__ = ("items",)

    def __init__(self):
        self.items = []

    def add(self, obj):
        obj.pos = len(self.items)
        self.items.append(obj)

    def remove(self, obj):
        items = self.items
        last = items.pop()
        if last is not obj:
            items[obj.pos] = last
            last.pos = obj.pos
        obj.pos = -1

    def __len__(self):
        return len(self.items)


# ------------------------------------------------------------------ the generator


class _Gen:
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
        self.ring = [None] * 512
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

    # ================================================================ OpenMetadata
    def _om_event(self, e: OMEntity, t, user, event_type, cd, prev10, cur10, *, entity_str=True, extra=None,
                  follow=False):
        # the persisted form (no top-level previousVersion); never for entityDeleted, whose repeated change
        # description carries an older previousVersion than the (unchanged) current one
        stored = self.random() < 0.05 and event_type != "entityDeleted"
        ev = {"id": self._eid(), "eventType": event_type, "entityType": e.kind, "entityId": e.id}
        if e.domain_ids and not stored:
            ev["domains"] = e.domain_ids
        ev["entityFullyQualifiedName"] = e.fqn
        if not stored or cd is None:
            ev["previousVersion"] = prev10 / 10
        ev["currentVersion"] = cur10 / 10
        ev["userName"] = user
        if self.random() < 0.03:
            ev["impersonatedBy"] = "metadata-agent-bot"
        ev["timestamp"] = t
        if extra:
            ev.update(extra)
        if cd is not None:
            ev["changeDescription"] = cd
        if entity_str:
            ev["entity"] = self._render(e, t, user, cd, follow)
        self.last_om = ev
        return ("openmetadata", dumps(ev))

    def _short_label(self, lab: str) -> str:
        """The entity state keeps tag labels as stored (tag_usage: no description); change values keep it."""
        short = self.short_labels.get(lab)
        if short is None:
            obj = json.loads(lab)
            obj.pop("description", None)
            short = self.short_labels[lab] = dumps(obj)
        return short

    def _render(self, e: OMEntity, t, user, cd, follow=False) -> str:
        p = [e.head]
        if e.desc is not None:
            p.append(',"description":' + dumps(e.desc))
        p.append(f',"version":{e.v10 / 10},"updatedAt":{t},"updatedBy":"{user}"')
        p.append(e.static)
        k = e.kind
        if k == "table":
            if e.cols_json is None:
                e.cols_json = dumps(e.cols)
            p.append(',"columns":' + e.cols_json)
        elif k == "topic":
            p.append(',"partitions":%d,"replicationFactor":3' % e.extra["partitions"])
        elif k == "glossaryTerm":
            p.append(',"synonyms":' + dumps(e.extra["synonyms"]) + ',"entityStatus":"' + e.extra["status"] + '"')
        p.append(',"owners":[' + ",".join(e.owners) + "]")
        p.append(e.static2)
        p.append(',"tags":[' + ",".join(map(self._short_label, e.tags)) + "]")
        if follow:  # the follower endpoints return the entity with its followers; other writes do not load them
            p.append(',"followers":[' + ",".join(self.user_ref_json[i] for i in e.followers) + "]")
        p.append(',"deleted":true' if e.deleted else ',"deleted":false')
        if cd is None:
            p.append(e.domains_frag)
        p.append("}")
        return "".join(p)

    def _om_create(self, t) -> list:
        rnd = self.random
        r = rnd()
        kind = ("table" if r < 0.5 else "topic" if r < 0.6 else "dashboard" if r < 0.72 else
                "pipeline" if r < 0.8 else "mlmodel" if r < 0.86 else "glossaryTerm")
        idx = self.om_created
        self.om_created += 1
        noun = NOUNS[self.randrange(len(NOUNS))]
        user = "ingestion-bot"
        if kind == "table":
            svc, stype, dbs, svc_json = self.db_services[self.randrange(len(self.db_services))]
            db = dbs[self.randrange(len(dbs))]
            schema = SCHEMAS[self.randrange(len(SCHEMAS))]
            name = f"{noun}_{SUFFIXES[self.randrange(len(SUFFIXES))]}_{idx}"
            fqn = f"{svc}.{db}.{schema}.{name}"
            display = name
        elif kind == "glossaryTerm":
            name = f"{TERMS[self.randrange(len(TERMS))]}{idx}"
            fqn = "BusinessGlossary." + name
            display = name
            user = self._user()
        else:
            svc, stype, svc_json = self.other_services[kind]
            name = f"{noun}_{('events', 'overview', 'etl', 'predictor')[('topic', 'dashboard', 'pipeline', 'mlmodel').index(kind)]}_{idx}"
            fqn = f"{svc}.{name}"
            display = name.replace("_", " ").title() if kind == "dashboard" else name
        eid = _uid("om", kind, fqn)
        e = OMEntity(kind, eid, name, fqn, display, idx)
        head = '{"id":"%s","name":"%s"' % (eid, name)
        if kind != "table":
            head += ',"displayName":' + dumps(display)
        e.head = head + ',"fullyQualifiedName":"%s"' % fqn
        href = ',"href":"%s%s/%s"' % (HREF, _OM_PATH[kind], eid)
        if kind == "table":
            ncols = 2
            picks = self.rng.sample(range(len(COLUMNS)), ncols)
            picks.sort()
            for j, ci in enumerate(picks):
                e.cols.append(self._column(fqn, ci, j + 1))
            e.extra["colpool"] = [i for i in range(len(COLUMNS)) if i not in picks]
            e.static = href + ',"tableType":"Regular"'
            schema_fqn, db_fqn = fqn.rsplit(".", 1)[0], fqn.split(".", 2)
            db_fqn = db_fqn[0] + "." + db_fqn[1]
            e.static2 = (',"service":' + svc_json + ',"serviceType":"%s"' % stype)
            if rnd() < 0.5:
                e.desc = DESCRIPTIONS[self.randrange(len(DESCRIPTIONS))].format(n=noun)
        elif kind == "glossaryTerm":
            e.desc = f"Business definition of {name} as agreed by the {TEAMS[self.randrange(3)]} team."
            e.static = ',"glossary":' + self.glossary_ref + ',"children":[],"relatedTerms":[],"references":[]' + href
            e.static2 = ',"reviewers":[' + self.user_ref_json[0] + '],"usageCount":0,"mutuallyExclusive":false'
            e.extra["synonyms"] = []
            e.extra["status"] = "Draft"
            e.owners = [self.user_ref_json[self.user_names.index(user)]]
        else:
            e.static = href
            if kind == "pipeline":
                tasks = [{"name": tn, "displayName": tn, "fullyQualifiedName": f"{fqn}.{tn}",
                          "downstreamTasks": [], "taskType": "SQLExecuteQueryOperator", "tags": []}
                         for tn in ("extract_" + noun, "load_" + noun)]
                e.static += (',"sourceUrl":"https://airflow.example.com/dags/%s/grid","concurrency":16'
                             ',"tasks":%s,"scheduleInterval":"0 2 * * *"' % (name, dumps(tasks)))
                e.extra["tasks"] = [tk["name"] for tk in tasks]
            elif kind == "topic":
                e.extra["partitions"] = (3, 6, 12)[self.randrange(3)]
                e.static += ',"cleanupPolicies":["delete"],"retentionTime":604800000.0'
            elif kind == "dashboard":
                e.static += ',"sourceUrl":"https://looker.example.com/dashboards/%d","dashboardType":"Dashboard"' % idx
            elif kind == "mlmodel":
                e.static += ',"algorithm":"GradientBoostingClassifier","target":"churned"'
            e.static2 = ',"service":' + svc_json + ',"serviceType":"%s"' % stype
        if kind != "glossaryTerm" and rnd() < 0.5:
            d = self.randrange(len(self.domains))
            e.domain_ids = [self.domains[d][1]]
            e.domains_frag = ',"domains":[' + self.domain_refs[d] + "]"
        self.om.add(e)
        self.om_by_kind[kind].add(_Slot(e))
        if kind == "glossaryTerm":
            self.glossary_labels.append(dumps({"tagFQN": fqn, "name": name, "displayName": display,
                                               "description": e.desc, "source": "Glossary",
                                               "labelType": "Manual", "state": "Confirmed"}))
        return [self._om_event(e, t, user, "entityCreated", None, 1, 1)]

    def _column(self, fqn, ci, pos) -> dict:
        name, dtype, disp, extra, _ = COLUMNS[ci]
        col = {"name": name, "dataType": dtype}
        col.update(extra)
        col["dataTypeDisplay"] = disp
        col["fullyQualifiedName"] = f"{fqn}.{name}"
        col["tags"] = []
        if name == "id":
            col["constraint"] = "PRIMARY_KEY"
        col["ordinalPosition"] = pos
        return col

    def _om_action(self, t) -> list:
        if self._want_create(self.om_created, self.om_target, len(self.om)):
            return self._om_create(t)
        if self.random() < 0.42:
            return self._lineage_action(t)
        items = self.om.items
        e = items[self.randrange(len(items))]
        return self._om_update(e, t)

    def _om_update(self, e: OMEntity, t) -> list:
        rnd = self.random
        user = self._user()
        if e.deleted:
            if rnd() < 0.55:
                return self._om_lifecycle(e, t, user, "entityRestored")
            return self._om_hard_delete(e, t, user)
        r = rnd()
        if r < 0.012:
            return self._om_lifecycle(e, t, user, "entitySoftDeleted")
        if r < 0.015:
            return self._om_hard_delete(e, t, "admin")
        kind = e.kind
        r = rnd()
        if kind == "table" and r < 0.35:
            return self._om_column_change(e, t, user)
        if kind == "pipeline" and r < 0.45:
            return self._om_pipeline_status(e, t)
        if kind == "topic" and r < 0.15:
            old = e.extra["partitions"]
            new = old * 2 if old < 48 else old
            if new != old:
                e.extra["partitions"] = new
                return self._om_change(e, t, "ingestion-bot", [], [{"name": "partitions", "oldValue": old,
                                                                    "newValue": new}], [])
        if kind == "glossaryTerm" and r < 0.4:
            if e.extra["status"] == "Draft" and rnd() < 0.5:
                e.extra["status"] = "Approved"
                return self._om_change(e, t, "admin", [], [{"name": "entityStatus", "oldValue": "Draft",
                                                            "newValue": "Approved"}], [])
            syn = [NOUNS[self.randrange(len(NOUNS))].title(), TERMS[self.randrange(len(TERMS))]]
            e.extra["synonyms"] = syn
            return self._om_change(e, t, user, [{"name": "synonyms", "newValue": dumps(syn)}], [], [])
        r = rnd()
        if r < 0.22:  # description
            new = DESCRIPTIONS[self.randrange(len(DESCRIPTIONS))].format(n=e.name.split("_")[0])
            if new == e.desc:
                new += f" Owner: {user}."
            summary = {"description": {"changeSource": "Manual" if rnd() < 0.8 else "Automated",
                                       "changedBy": user, "changedAt": t}} if rnd() < 0.4 else None
            if e.desc is None:
                e.desc = new
                return self._om_change(e, t, user, [{"name": "description", "newValue": new}], [], [], summary)
            old, e.desc = e.desc, new
            return self._om_change(e, t, user, [], [{"name": "description", "oldValue": old, "newValue": new}],
                                   [], summary)
        if r < 0.42:  # classification / glossary tags
            if e.tags and (len(e.tags) >= 2 or rnd() < 0.3):
                i = self.randrange(len(e.tags))
                old = e.tags.pop(i)
                if old == e.tier:
                    e.tier = None
                return self._om_change(e, t, user, [], [], [{"name": "tags", "oldValue": "[" + old + "]"}])
            pool = self.glossary_labels if (self.glossary_labels and rnd() < 0.3) else \
                (self.other_labels if rnd() < 0.3 else list(self.pii_label.values()))
            lab = pool[self.randrange(len(pool))]
            if lab in e.tags:
                return self._om_followers(e, t, user)
            e.tags.append(lab)
            return self._om_change(e, t, user, [{"name": "tags", "newValue": "[" + lab + "]"}], [], [])
        if r < 0.55:  # tier (re)assignment: add the new tier, delete the old one
            lab = self.tier_labels[self.randrange(len(self.tier_labels))]
            if lab == e.tier:
                return self._om_followers(e, t, user)
            deleted = []
            if e.tier is not None:
                e.tags.remove(e.tier)
                deleted = [{"name": "tags", "oldValue": "[" + e.tier + "]"}]
            e.tier = lab
            e.tags.append(lab)
            return self._om_change(e, t, user, [{"name": "tags", "newValue": "[" + lab + "]"}], [], deleted)
        if r < 0.75:  # owners
            if rnd() < 0.35:
                new = self.team_ref_json[self.randrange(len(self.team_ref_json))]
            else:
                new = self.user_ref_json[self.randrange(len(self.user_ref_json))]
            if new in e.owners:
                return self._om_followers(e, t, user)
            deleted = []
            if e.owners:
                old = e.owners
                deleted = [{"name": "owners", "oldValue": "[" + ",".join(old) + "]"}]
                e.owners = []
            e.owners = e.owners + [new]
            return self._om_change(e, t, user, [{"name": "owners", "newValue": "[" + new + "]"}], [], deleted)
        return self._om_followers(e, t, user)

    def _om_change(self, e, t, user, added, updated, deleted, summary=None, bump=1) -> list:
        prev = e.v10
        e.v10 = prev + bump
        cd = {"fieldsAdded": added, "fieldsUpdated": updated, "fieldsDeleted": deleted, "previousVersion": prev / 10}
        if summary:
            cd["changeSummary"] = summary
        e.last_cd = cd
        return [self._om_event(e, t, user, "entityUpdated", cd, prev, e.v10)]

    def _om_followers(self, e, t, user) -> list:
        ui = e.followers[0] if e.followers else self.randrange(len(self.users))
        v = e.v10
        if ui in e.followers:
            e.followers.remove(ui)
            cd = {"fieldsAdded": [], "fieldsUpdated": [], "fieldsDeleted": [
                {"name": "followers", "oldValue": [self.user_refs[ui]]}], "previousVersion": v / 10}
        else:
            e.followers.append(ui)
            cd = {"fieldsAdded": [{"name": "followers", "newValue": [self.user_refs[ui]]}], "fieldsUpdated": [],
                  "fieldsDeleted": [], "previousVersion": v / 10}
        return [self._om_event(e, t, self.user_names[ui], "entityUpdated", cd, v, v, follow=True)]

    def _om_column_change(self, e, t, user) -> list:
        rnd = self.random
        cols = e.cols
        r = rnd()
        if r < 0.4:  # column tag
            c = cols[self.randrange(len(cols))]
            tagged = [x for x in cols if x["tags"]]
            if tagged and not c["tags"]:
                c = tagged[0]
            pii = COLUMNS[[x[0] for x in COLUMNS].index(c["name"])][4] or "PII.NonSensitive"
            lab = self.pii_label[pii]
            if c["tags"]:
                c["tags"] = []
                e.cols_json = None
                return self._om_change(e, t, user, [], [], [{"name": f"columns.{c['name']}.tags",
                                                             "oldValue": "[" + lab + "]"}])
            c["tags"] = [self.pii_obj[pii]]
            e.cols_json = None
            return self._om_change(e, t, user, [{"name": f"columns.{c['name']}.tags", "newValue": "[" + lab + "]"}],
                                   [], [])
        if r < 0.65:  # column description
            c = cols[self.randrange(len(cols))]
            new = f"{c['name'].replace('_', ' ').capitalize()}, rev {e.v10}."
            old = c.get("description")
            c["description"] = new
            e.cols_json = None
            summary = {f"columns.{c['name']}.description": {"changeSource": "Manual", "changedBy": user,
                                                             "changedAt": t}} if rnd() < 0.3 else None
            if old is None:
                return self._om_change(e, t, user, [{"name": f"columns.{c['name']}.description", "newValue": new}],
                                       [], [], summary)
            return self._om_change(e, t, user, [], [{"name": f"columns.{c['name']}.description", "oldValue": old,
                                                     "newValue": new}], [], summary)
        pool = e.extra["colpool"]
        if (r < 0.88 or len(cols) <= 2) and pool and len(cols) < 3:  # add a column (minor)
            ci = pool.pop(self.randrange(len(pool)))
            c = self._column(e.fqn, ci, cols[-1]["ordinalPosition"] + 1)
            cols.append(c)
            e.cols_json = None
            return self._om_change(e, t, "ingestion-bot", [{"name": "columns", "newValue": dumps([c])}], [], [])
        if len(cols) <= 2:
            return self._om_followers(e, t, user)
        c = cols.pop(self.randrange(1, len(cols)))  # drop a column: major version bump
        pool.append([x[0] for x in COLUMNS].index(c["name"]))
        e.cols_json = None
        return self._om_change(e, t, "ingestion-bot", [], [], [{"name": "columns", "oldValue": dumps([c])}], bump=10)

    def _om_pipeline_status(self, e, t) -> list:
        rnd = self.random
        start = t - 600_000 - self.randrange(1_800_000)
        ok = rnd() < 0.85
        tasks, ts = [], start
        for i, tn in enumerate(e.extra["tasks"]):
            dur = 30_000 + self.randrange(300_000)
            st = "Successful" if ok or i < len(e.extra["tasks"]) - 1 else "Failed"
            tasks.append({"name": tn, "executionStatus": st, "startTime": ts, "endTime": ts + dur})
            ts += dur
        tables = self.om_by_kind["table"].items
        status = {"timestamp": start, "executionStatus": "Successful" if ok else "Failed", "taskStatus": tasks,
                  "executionId": "scheduled__%d" % start, "endTime": ts, "executedBy": self.bot_ref}
        if tables:
            a, b = tables[self.randrange(len(tables))].e, tables[self.randrange(len(tables))].e
            status["inputs"] = [{"datasetFQN": a.fqn, "rowCount": self.randrange(1, 100000)}]
            status["outputs"] = [{"datasetFQN": b.fqn, "rowCount": self.randrange(1, 5000), "mode": "append"}]
        old = e.extra.get("status")
        e.extra["status"] = status
        ch = {"name": "pipelineStatus", "newValue": status}
        if old is not None and self.random() < 0.1:
            ch = {"name": "pipelineStatus", "oldValue": old, "newValue": status}
        v = e.v10
        cd = {"fieldsAdded": [], "fieldsUpdated": [ch], "fieldsDeleted": [], "previousVersion": v / 10}
        return [self._om_event(e, t, "ingestion-bot", "entityUpdated", cd, v, v)]

    def _om_lifecycle(self, e, t, user, event_type) -> list:
        was = e.deleted
        e.deleted = event_type == "entitySoftDeleted"
        prev = e.v10
        e.v10 = prev + 1
        cd = {"fieldsAdded": [], "fieldsUpdated": [{"name": "deleted", "oldValue": was, "newValue": e.deleted}],
              "fieldsDeleted": [], "previousVersion": prev / 10}
        e.last_cd = cd
        return [self._om_event(e, t, user, event_type, cd, prev, e.v10)]

    def _om_hard_delete(self, e, t, user) -> list:
        extra = {"recursive": True} if e.kind == "glossaryTerm" and self.random() < 0.5 else None
        line = self._om_event(e, t, user, "entityDeleted", e.last_cd, e.v10, e.v10, extra=extra)
        self.om.remove(e)
        self._drop_slot(e)
        for key in list(e.edges):
            self._edge_forget(key)
        return [line]

    def _drop_slot(self, e):
        pool = self.om_by_kind[e.kind]
        s = e.extra.get("slot")
        if s is not None:
            pool.remove(s)

    # ---------------------------------------------------------------- OpenMetadata lineage
    def _edge_forget(self, key):
        rec = self.edges.pop(key)
        rec[0].edges.pop(key, None)
        rec[1].edges.pop(key, None)
        i = self.edge_pos.pop(key)
        last = self.edge_keys.pop()
        if last != key:
            self.edge_keys[i] = last
            self.edge_pos[last] = i

    def _lineage_action(self, t) -> list:
        r = self.random()
        if self.edge_keys and r < 0.3:
            return self._lineage_delete(t, self.edge_keys[self.randrange(len(self.edge_keys))])
        if self.edge_keys and r < 0.45:  # re-wire: drop one upstream of a node, add another
            key = self.edge_keys[self.randrange(len(self.edge_keys))]
            to = self.edges[key][1]
            out = self._lineage_delete(t, key)
            self.clock = t + 1
            out += self._lineage_add(t + 1, to)
            return out
        return self._lineage_add(t, None)

    def _pick(self, kind):
        items = self.om_by_kind[kind].items
        if not items:
            return None
        e = items[self.randrange(len(items))].e
        return None if e.deleted else e

    def _lineage_add(self, t, to) -> list:
        rnd = self.random
        if to is None:
            r = rnd()
            to = self._pick("table" if r < 0.7 else "dashboard" if r < 0.88 else "mlmodel")
        if to is None:
            return []
        src = self._pick("topic" if (to.kind == "table" and rnd() < 0.15) else "table")
        if src is None or src is to or (src.kind == to.kind == "table" and src.idx >= to.idx):
            src2 = self._pick("table")
            if src2 is None or src2 is to or (to.kind == "table" and src2.idx >= to.idx):
                return []
            src = src2
        key = f"{src.fqn}--upstream-->{to.fqn}"
        user = "ingestion-bot" if rnd() < 0.7 else self._user()
        if to.kind == "dashboard":
            details = {"source": "DashboardLineage"}
        elif to.kind == "mlmodel" or rnd() < 0.1:
            details = {"description": f"{to.name} is built from {src.name}.", "source": "Manual"}
        else:
            details = {}
            if src.kind == "table" and to.kind == "table":
                cl = []
                for _ in range(1 + self.randrange(2)):
                    fc, tc = src.cols[self.randrange(len(src.cols))], to.cols[self.randrange(len(to.cols))]
                    cl.append({"fromColumns": [fc["fullyQualifiedName"]], "toColumn": tc["fullyQualifiedName"],
                               "function": FUNCTIONS[self.randrange(len(FUNCTIONS))]})
                details["sqlQuery"] = (f"INSERT INTO {to.fqn.split('.', 2)[2]} SELECT "
                                       + ", ".join(c["fromColumns"][0].rsplit(".", 1)[1] for c in cl)
                                       + f" FROM {src.fqn.split('.', 2)[2]} WHERE updated_at > :since")
                details["columnsLineage"] = cl
            pipe = self._pick("pipeline") if rnd() < 0.5 else None
            if pipe is not None:
                details["pipeline"] = pipe.ref()
                details["source"] = "PipelineLineage"
            else:
                details["source"] = "QueryLineage" if src.kind == "table" else "Manual"
        details.update({"createdAt": t, "createdBy": user, "updatedAt": t, "updatedBy": user})
        edge = {"fromEntity": src.ref(False), "toEntity": to.ref(False), "lineageDetails": details}
        if key in self.edges:
            event_type = "entityLineageUpdated"
            self.edges[key][2] = edge
        else:
            event_type = "entityLineageAdded"
            self.edges[key] = [src, to, edge]
            self.edge_pos[key] = len(self.edge_keys)
            self.edge_keys.append(key)
            src.edges[key] = None
            to.edges[key] = None
        return [self._lineage_event(t, user, event_type, key, edge)]

    def _lineage_delete(self, t, key) -> list:
        edge = self.edges[key][2]
        self._edge_forget(key)
        user = self._user()
        return [self._lineage_event(t, user, "entityLineageDeleted", key, edge)]

    def _lineage_event(self, t, user, event_type, key, edge):
        ev = {"id": self._eid(), "eventType": event_type, "entityType": "lineage", "entityId": _uid("edge", key),
              "entityFullyQualifiedName": key, "userName": user, "timestamp": t, "entity": edge}
        return ("openmetadata", dumps(ev))

    # ================================================================ DataHub MCL
    def _sysmeta(self, t, src, version, run=None):
        sm = {"lastObserved": t + 7}
        if src == "sdk":
            run = run or "no-run-id-provided"
            sm["runId"] = run
            sm["lastRunId"] = run
            props = PROPS_SDK
        elif src == "airflow":
            sm["runId"] = sm["lastRunId"] = "no-run-id-provided"
            props = PROPS_AIRFLOW
        else:
            sm["runId"] = sm["lastRunId"] = "no-run-id-provided"
            props = PROPS_UI
        sm.update(SYS_COMMON)
        sm["properties"] = props
        if version is not None:
            sm["version"] = str(version)
        return sm

    def _mcl(self, ent, etype, aspect, value, t, actor, src, change="UPSERT", run=None):
        """An aspect write on a versioned aspect; keeps previous value / systemMetadata."""
        aspects = ent.aspects
        prev = aspects.get(aspect)
        ver = ent.aver.get(aspect, 0) + 1
        ent.aver[aspect] = ver
        sm = self._sysmeta(t, src, ver, run)
        ev = {"entityType": etype, "entityUrn": ent.urn, "changeType": change, "aspectName": aspect}
        if change != "DELETE":
            ev["aspect"] = {"value": value, "contentType": CT}
        ev["systemMetadata"] = sm
        if prev is not None:
            ev["previousAspectValue"] = {"value": prev[0], "contentType": CT}
            ev["previousSystemMetadata"] = prev[1]
        ev["created"] = {"time": t, "actor": actor}
        if change == "DELETE":
            del aspects[aspect]
        else:
            aspects[aspect] = (value, sm)
            self.last_mcl = ev
        return ("datahub-mcl", dumps(ev))

    def _ts_mcl(self, urn, etype, aspect, value, t, actor):
        ev = {"entityType": etype, "entityUrn": urn, "changeType": "UPSERT", "aspectName": aspect,
              "aspect": {"value": value, "contentType": CT}, "systemMetadata": self._sysmeta(t, "airflow", None),
              "created": {"time": t, "actor": actor}}
        return ("datahub-mcl", dumps(ev))

    def _ece(self, etype, urn, category, operation, t, actor, modifier=None, params=None, platform=False):
        ev = {"entityType": etype, "entityUrn": urn, "category": category, "operation": operation}
        if modifier is not None:
            ev["modifier"] = modifier
        ev["auditStamp"] = {"time": t, "actor": actor}
        ev["version"] = 0
        if params is not None:
            ev["parameters"] = params
        if platform:
            return ("datahub-platform", dumps({"header": {"timestampMillis": t}, "name": "entityChangeEvent",
                                                "payload": {"value": dumps(ev), "contentType": CT}}))
        return ("datahub-ece", dumps(ev))

    def _dh_domain(self, t, d):
        value = dumps({"customProperties": {}, "name": d.title(), "description": f"{d.title()} data products",
                       "created": {"time": t, "actor": "urn:li:corpuser:datahub"}})
        sm = self._sysmeta(t, "ui", 1)
        ev = {"entityType": "domain", "entityUrn": "urn:li:domain:" + d, "changeType": "CREATE",
              "aspectName": "domainProperties", "aspect": {"value": value, "contentType": CT}, "systemMetadata": sm,
              "created": {"time": t, "actor": "urn:li:corpuser:datahub"}}
        return [("datahub-mcl", dumps(ev))]

    def _dh_actor(self):
        return self.dh_users[self.randrange(len(self.dh_users))]

    def _schema_value(self, ds):
        fields = []
        for path, tkey, native, nullable, is_key in ds.fields:
            fields.append({"fieldPath": path, "nullable": nullable, "type": {"type": {tkey: {}}},
                           "nativeDataType": native, "recursive": False, "isPartOfKey": is_key})
        return dumps({"schemaName": ds.name, "platform": "urn:li:dataPlatform:" + ds.platform,
                      "version": ds.aver.get("schemaMetadata", 0), "created": {"time": 0, "actor": "urn:li:corpuser:unknown"},
                      "lastModified": {"time": 0, "actor": "urn:li:corpuser:unknown"}, "hash": "",
                      "platformSchema": {"com.linkedin.schema.MySqlDDL": {"tableSchema": ""}}, "fields": fields})

    def _dh_field(self, name, is_key=False):
        tkey, natives = DH_TYPES[self.randrange(len(DH_TYPES))]
        return [name, tkey, natives[self.randrange(len(natives))], not is_key and self.random() < 0.5, is_key]

    def _ds_create(self, t) -> list:
        idx = self.ds_created
        self.ds_created += 1
        platform = DH_PLATFORMS[self.randrange(len(DH_PLATFORMS))]
        noun = NOUNS[self.randrange(len(NOUNS))]
        if platform == "s3":
            name = f"datalake/{SUFFIXES[self.randrange(len(SUFFIXES))]}/{noun}_{idx}"
        else:
            name = f"{('shop', 'staging', 'analytics', 'crm')[self.randrange(4)]}.{SCHEMAS[self.randrange(len(SCHEMAS))]}.{noun}_{idx}"
        urn = f"urn:li:dataset:(urn:li:dataPlatform:{platform},{name},PROD)"
        ds = Dataset(urn, platform, name, idx)
        ds.src = f"{platform}-{idx % 7}"
        names = self.rng.sample(DH_FIELDS, 3 + self.randrange(2))
        ds.fields = [self._dh_field(n, i == 0) for i, n in enumerate(names)]
        self.ds.add(ds)
        self.ds_all.append(ds)
        run = f"{platform}-{idx}"
        if self.clock < t + 1500:
            self.clock = t + 1500
        out = [self._mcl(ds, "dataset", "datasetKey",
                         dumps({"platform": "urn:li:dataPlatform:" + platform, "name": name, "origin": "PROD"}),
                         t, "urn:li:corpuser:datahub", "sdk", "CREATE" if self.random() < 0.2 else "UPSERT", run)]
        if self.random() < 0.4:
            out.append(self._ece("dataset", urn, "LIFECYCLE", "CREATE", t, "urn:li:corpuser:datahub"))
        out.append(self._mcl(ds, "dataset", "schemaMetadata", self._schema_value(ds), t + 1000,
                             "urn:li:corpuser:datahub", "sdk", run=run))
        if self.random() < 0.5:
            out.append(self._mcl(ds, "dataset", "status", '{"removed":false}', t + 1500,
                                 "urn:li:corpuser:datahub", "sdk", run=run))
        if idx > 3 and self.random() < 0.35:  # an Airflow job builds it
            flow = ("shop_etl", "marketing_etl", "finance_etl")[self.randrange(3)]
            job = (f"urn:li:dataJob:(urn:li:dataFlow:(airflow,{flow},prod),build_{noun}_{idx})", ds)
            self.jobs.append(job)
        return out

    def _pick_ds(self):
        items = self.ds.items
        return items[self.randrange(len(items))]

    def _mcl_action(self, t) -> list:
        if self._want_create(self.ds_created, self.ds_target, len(self.ds)):
            return self._ds_create(t)
        rnd = self.random
        r = rnd()
        if r < 0.07 and self.jobs:
            return self._dpi_run(t)
        if r < 0.12 and self.jobs:
            return self._job_io(t)
        ds = self._pick_ds()
        actor = self._dh_actor()
        if ds.removed:
            if rnd() < 0.5:
                return self._ds_status(ds, t, actor, False)
            return self._ds_hard_delete(ds, t, actor)
        r = rnd()
        if r < 0.02:
            return self._ds_status(ds, t, actor, True)
        if r < 0.025:
            return self._ds_hard_delete(ds, t, actor)
        if r < 0.30:
            return self._ds_upstreams(ds, t)
        if r < 0.45:
            return self._ds_schema(ds, t)
        if r < 0.58:
            return self._ds_tags(ds, t, actor)
        if r < 0.68:
            return self._ds_terms(ds, t, actor)
        if r < 0.80:
            return self._ds_owners(ds, t, actor)
        if r < 0.88:
            return self._ds_domain(ds, t, actor)
        if r < 0.95:
            return self._ds_deprecation(ds, t, actor)
        if "globalTags" in ds.aspects:  # aspect delete
            ds.tags = []
            return [self._mcl(ds, "dataset", "globalTags", None, t, actor, "ui", "DELETE")]
        return self._ds_tags(ds, t, actor)

    def _upstream_value(self, ds, t):
        actor = "urn:li:corpuser:svc_airflow"
        ups = []
        query = f"urn:li:query:{_uuid5(f'{self.seed}/q/{ds.urn}/{t}').replace('-', '')}" if self.random() < 0.2 else None
        for u in ds.upstreams:
            up = {"auditStamp": {"time": t, "actor": actor}, "created": {"time": t, "actor": actor}, "dataset": u.urn,
                  "type": ("TRANSFORMED", "COPY", "VIEW")[self.randrange(3)]}
            if query:
                up["query"] = query
            ups.append(up)
        value = {"upstreams": ups}
        if query and ds.fields:
            fgl = []
            for u in ds.upstreams[:2]:
                if not u.fields:
                    continue
                uf = u.fields[self.randrange(len(u.fields))][0]
                df = ds.fields[self.randrange(len(ds.fields))][0]
                fgl.append({"upstreamType": "FIELD_SET", "upstreams": [f"urn:li:schemaField:({u.urn},{uf})"],
                            "downstreamType": "FIELD", "downstreams": [f"urn:li:schemaField:({ds.urn},{df})"],
                            "transformOperation": "IDENTITY", "confidenceScore": 1.0, "query": query})
            if fgl:
                value["fineGrainedLineages"] = fgl
        return dumps(value)

    def _set_upstreams(self, ds, new):
        for u in ds.upstreams:
            u.downstreams.pop(ds.urn, None)
        ds.upstreams = new
        for u in new:
            u.downstreams[ds.urn] = ds

    def _ds_upstreams(self, ds, t) -> list:
        """A new full upstream set: keep some, drop some, add some older live datasets."""
        rnd = self.random
        if ds.idx == 0:
            return self._ds_schema(ds, t)
        keep = [u for u in ds.upstreams if rnd() < 0.6][:2]
        for _ in range(1 + self.randrange(2)):
            u = self.ds_all[self.randrange(ds.idx)]
            if u.alive and not u.removed and u not in keep:
                keep.append(u)
        if "upstreamLineage" in ds.aspects and not keep:
            self._set_upstreams(ds, [])
            return [self._mcl(ds, "dataset", "upstreamLineage", None, t, "urn:li:corpuser:svc_airflow", "airflow",
                              "DELETE")]
        if not keep:
            return self._ds_schema(ds, t)
        self._set_upstreams(ds, keep)
        return [self._mcl(ds, "dataset", "upstreamLineage", self._upstream_value(ds, t), t,
                          "urn:li:corpuser:svc_airflow", "airflow")]

    def _ds_schema(self, ds, t, ece=None) -> list:
        rnd = self.random
        r = rnd()
        names = [f[0] for f in ds.fields]
        out = []
        actor = "urn:li:corpuser:datahub"
        if (r < 0.45 or len(ds.fields) < 3) and len(ds.fields) < 5:
            free = [n for n in DH_FIELDS if n not in names]
            if not free:
                return self._ds_tags(ds, t, self._dh_actor())
            f = self._dh_field(free[self.randrange(len(free))])
            ds.fields.append(f)
            op, cat = "ADD", "OTHER"
        elif r < 0.7:
            f = ds.fields.pop(self.randrange(1, len(ds.fields)))
            op, cat = "REMOVE", "OTHER"
        else:
            f = ds.fields[self.randrange(len(ds.fields))]
            tkey, natives = DH_TYPES[self.randrange(len(DH_TYPES))]
            f[1], f[2] = tkey, natives[self.randrange(len(natives))]
            op, cat = "MODIFY", "TYPE_CHANGE"
        if ece is None:
            ece = rnd() < 0.3
        if ece != "only":
            out.append(self._mcl(ds, "dataset", "schemaMetadata", self._schema_value(ds), t, actor, "sdk",
                                 run=f"{ds.platform}-{t // 86_400_000}"))
        if ece:
            furn = f"urn:li:schemaField:({ds.urn},{f[0]})"
            out.append(self._ece("dataset", ds.urn, "TECHNICAL_SCHEMA", op, t, actor, furn,
                                 {"fieldUrn": furn, "fieldPath": f[0], "nullable": f[3], "modificationCategory": cat}))
        return out

    def _ds_tags(self, ds, t, actor, ece=None, platform=False) -> list:
        rnd = self.random
        if ds.tags and rnd() < 0.35:
            tag = ds.tags.pop(self.randrange(len(ds.tags)))
            op = "REMOVE"
        else:
            tag = DH_TAGS[self.randrange(len(DH_TAGS))]
            if tag in ds.tags:
                return self._ds_terms(ds, t, actor, ece, platform)
            ds.tags.append(tag)
            op = "ADD"
        out = []
        if ece != "only":
            out.append(self._mcl(ds, "dataset", "globalTags", dumps({"tags": [{"tag": x} for x in ds.tags]}), t,
                                 actor, "ui"))
        if ece or (ece is None and rnd() < 0.2):
            params = {"tagUrn": tag} if rnd() < 0.5 else {"tagUrn": tag, "context": "{}", "sourceDetails": "{}"}
            out.append(self._ece("dataset", ds.urn, "TAG", op, t, actor, tag, params, platform))
        return out

    def _ds_terms(self, ds, t, actor, ece=None, platform=False) -> list:
        rnd = self.random
        if ds.terms and rnd() < 0.3:
            term = ds.terms.pop(self.randrange(len(ds.terms)))
            op = "REMOVE"
        else:
            term = DH_TERMS[self.randrange(len(DH_TERMS))]
            if term in ds.terms:
                return self._ds_owners(ds, t, actor, ece, platform)
            ds.terms.append(term)
            op = "ADD"
        out = []
        if ece != "only":
            out.append(self._mcl(ds, "dataset", "glossaryTerms", dumps(
                {"terms": [{"urn": x, "actor": actor} for x in ds.terms], "auditStamp": {"time": t, "actor": actor}}),
                t, actor, "ui"))
        if ece or (ece is None and rnd() < 0.2):
            out.append(self._ece("dataset", ds.urn, "GLOSSARY_TERM", op, t, actor, term, {"termUrn": term}, platform))
        return out

    def _ds_owners(self, ds, t, actor, ece=None, platform=False) -> list:
        rnd = self.random
        otype = OWNER_TYPES[self.randrange(len(OWNER_TYPES))]
        owner = self.dh_groups[self.randrange(len(self.dh_groups))] if rnd() < 0.25 else self._dh_actor()
        current = dict(ds.owners)
        if owner not in current and len(ds.owners) >= 2:
            owner = ds.owners[0][0]
        if owner in current and (len(ds.owners) >= 2 or rnd() < 0.5):
            op = "REMOVE"
            otype = current[owner]
            ds.owners = [o for o in ds.owners if o[0] != owner]
        elif owner in current:
            op = "MODIFY"
            ds.owners = [(o, otype if o == owner else ty) for o, ty in ds.owners]
        else:
            op = "ADD"
            ds.owners = ds.owners + [(owner, otype)]
        out = []
        if ece != "only":
            types = {}
            for o, ty in ds.owners:
                types.setdefault(f"urn:li:ownershipType:__system__{ty.lower()}", []).append(o)
            value = {"owners": [{"owner": o, "type": ty, "typeUrn": f"urn:li:ownershipType:__system__{ty.lower()}",
                                 "source": {"type": "MANUAL"}} for o, ty in ds.owners],
                     "ownerTypes": types, "lastModified": {"time": t, "actor": actor}}
            out.append(self._mcl(ds, "dataset", "ownership", dumps(value), t, actor, "ui"))
        if ece or (ece is None and rnd() < 0.2):
            cat = "OWNERSHIP" if (op != "ADD" or rnd() < 0.4) else "OWNER"
            modifier = otype if op == "MODIFY" else owner
            out.append(self._ece("dataset", ds.urn, cat, op, t, actor, modifier,
                                 {"ownerUrn": owner, "ownerType": otype,
                                  "ownerTypeUrn": f"urn:li:ownershipType:__system__{otype.lower()}"}, platform))
        return out

    def _ds_domain(self, ds, t, actor, ece=None, platform=False) -> list:
        rnd = self.random
        old = ds.domain
        new = "urn:li:domain:" + DH_DOMAINS[self.randrange(len(DH_DOMAINS))]
        out = []
        if new == old:
            ds.domain = None
            if ece != "only":
                if "domains" in ds.aspects:
                    out.append(self._mcl(ds, "dataset", "domains", None, t, actor, "ui", "DELETE"))
                else:
                    out.append(self._mcl(ds, "dataset", "domains", '{"domains":[]}', t, actor, "ui"))
            if ece or (ece is None and rnd() < 0.2):
                out.append(self._ece("dataset", ds.urn, "DOMAIN", "REMOVE", t, actor, old, {"domainUrn": old},
                                     platform))
            return out
        ds.domain = new
        if ece != "only":
            out.append(self._mcl(ds, "dataset", "domains", dumps({"domains": [new]}), t, actor, "ui"))
        if ece or (ece is None and rnd() < 0.2):
            if old:
                out.append(self._ece("dataset", ds.urn, "DOMAIN", "REMOVE", t, actor, old, {"domainUrn": old},
                                     platform))
            out.append(self._ece("dataset", ds.urn, "DOMAIN", "ADD", t, actor, new, {"domainUrn": new}, platform))
        return out

    def _ds_deprecation(self, ds, t, actor, ece=None, platform=False) -> list:
        ds.deprecated = not ds.deprecated
        out = []
        if ece != "only":
            value = {"deprecated": ds.deprecated}
            if ds.deprecated:
                value.update({"decommissionTime": t + 30 * 86_400_000, "note": f"Superseded; decommission planned.",
                              "actor": actor})
            else:
                value.update({"note": "", "actor": actor})
            out.append(self._mcl(ds, "dataset", "deprecation", dumps(value), t, actor, "ui"))
        if ece or (ece is None and self.random() < 0.2):
            out.append(self._ece("dataset", ds.urn, "DEPRECATION", "MODIFY", t, actor, None,
                                 {"status": "DEPRECATED" if ds.deprecated else "ACTIVE"}, platform))
        return out

    def _ds_status(self, ds, t, actor, removed) -> list:
        ds.removed = removed
        out = [self._mcl(ds, "dataset", "status", '{"removed":true}' if removed else '{"removed":false}', t, actor,
                         "sdk")]
        if self.random() < 0.6:
            out.append(self._ece("dataset", ds.urn, "LIFECYCLE", "SOFT_DELETE" if removed else "REINSTATE", t, actor))
        return out

    def _ds_hard_delete(self, ds, t, actor) -> list:
        """DELETE per aspect (key aspect last), then LIFECYCLE HARD_DELETE; the dataset is gone for good."""
        out = []
        names = [a for a in ds.aspects if a != "datasetKey"] + (["datasetKey"] if "datasetKey" in ds.aspects else [])
        for a in names:
            out.append(self._mcl(ds, "dataset", a, None, t, actor, "sdk", "DELETE"))
        if self.random() < 0.7:
            out.append(self._ece("dataset", ds.urn, "LIFECYCLE", "HARD_DELETE", t, actor))
        ds.alive = False
        self.ds.remove(ds)
        self._set_upstreams(ds, [])
        for d in list(ds.downstreams.values()):  # later snapshots of downstreams no longer list it
            d.upstreams = [u for u in d.upstreams if u is not ds]
        ds.downstreams = {}
        return out

    # ---------------------------------------------------------------- jobs and runs
    def _live_job(self):
        for _ in range(4):
            job = self.jobs[self.randrange(len(self.jobs))]
            if job[1].alive and not job[1].removed:
                return job
        return None

    def _job_inputs(self, ds):
        ins = [u for u in ds.upstreams if u.alive]
        if not ins and ds.idx > 0:
            u = self.ds_all[self.randrange(ds.idx)]
            if u.alive:
                ins = [u]
        return ins

    def _job_io(self, t) -> list:
        job = self._live_job()
        if job is None:
            return self._ds_create(t) if self.ds_created < self.ds_target else []
        urn, ds = job
        ins = self._job_inputs(ds)
        actor = "urn:li:corpuser:svc_airflow"
        edge = lambda u: {"destinationUrn": u, "created": {"time": t, "actor": actor},  # noqa: E731
                          "lastModified": {"time": t, "actor": actor}}
        value = {"inputDatasets": [u.urn for u in ins], "inputDatasetEdges": [edge(u.urn) for u in ins],
                 "outputDatasets": [ds.urn], "outputDatasetEdges": [edge(ds.urn)]}
        holder = self.job_by_ds.get(urn)
        if holder is None:
            holder = self.job_by_ds[urn] = _Holder(urn)
        return [self._mcl(holder, "dataJob", "dataJobInputOutput", dumps(value), t, actor, "airflow")]

    def _dpi_run(self, t) -> list:
        job = self._live_job()
        if job is None:
            return self._job_io(t)
        job_urn, ds = job
        ins = self._job_inputs(ds)
        self.counter += 1
        dpi = "urn:li:dataProcessInstance:" + _uuid5(f"{self.seed}/dpi/{self.counter}").replace("-", "")
        actor = "urn:li:corpuser:svc_airflow"
        run_id = "scheduled__%d" % t
        h = _Holder(dpi)
        out = [self._mcl(h, "dataProcessInstance", "dataProcessInstanceProperties", dumps(
            {"customProperties": {"run_id": run_id, "try_number": "1", "operator": "SnowflakeOperator"},
             "name": run_id, "type": "BATCH_SCHEDULED", "created": {"time": t, "actor": actor}}), t, actor, "airflow"),
               self._mcl(h, "dataProcessInstance", "dataProcessInstanceRelationships",
                         dumps({"parentTemplate": job_urn, "upstreamInstances": []}), t, actor, "airflow"),
               self._mcl(h, "dataProcessInstance", "dataProcessInstanceInput",
                         dumps({"inputs": [u.urn for u in ins]}), t, actor, "airflow"),
               self._mcl(h, "dataProcessInstance", "dataProcessInstanceOutput",
                         dumps({"outputs": [ds.urn]}), t, actor, "airflow")]
        t0 = t + 500
        if self.clock < t0:
            self.clock = t0
        out.append(self._ts_mcl(dpi, "dataProcessInstance", "dataProcessInstanceRunEvent", dumps(
            {"timestampMillis": t0, "partitionSpec": {"partition": "FULL_TABLE_SNAPSHOT", "type": "FULL_TABLE"},
             "status": "STARTED", "attempt": 1}), t0, actor))
        with_ece = self.random() < 0.5
        if with_ece:
            out.append(self._ece("dataProcessInstance", dpi, "RUN", "STARTED", t0, actor, None,
                                 {"attempt": 1, "dataJobUrn": job_urn}))
        dur = 60_000 + self.randrange(min(3_600_000, int(self.mean_gap * 20) + 1))
        ok = self.random() < 0.9
        self._schedule(t0 + dur, self._dpi_complete, dpi, job_urn, t0, dur, ok, with_ece)
        return out

    def _dpi_complete(self, t, dpi, job_urn, t0, dur, ok, with_ece) -> list:
        actor = "urn:li:corpuser:svc_airflow"
        res = "SUCCESS" if ok else "FAILURE"
        out = [self._ts_mcl(dpi, "dataProcessInstance", "dataProcessInstanceRunEvent", dumps(
            {"timestampMillis": t, "partitionSpec": {"partition": "FULL_TABLE_SNAPSHOT", "type": "FULL_TABLE"},
             "status": "COMPLETE", "attempt": 1, "result": {"type": res, "nativeResultType": "airflow"},
             "durationMillis": t - t0}), t, actor)]
        if with_ece:
            out.append(self._ece("dataProcessInstance", dpi, "RUN", "COMPLETED", t, actor, None,
                                 {"attempt": 1, "runResult": res, "dataJobUrn": job_urn}))
        return out

    # ================================================================ DataHub ECE / PlatformEvent
    def _ece_action(self, t, platform=False) -> list:
        if len(self.ds) == 0:
            return self._mcl_action(t)
        rnd = self.random
        ds = self._pick_ds()
        actor = self._dh_actor()
        if ds.removed:  # only a lifecycle change makes sense
            ds.removed = False
            return [self._ece("dataset", ds.urn, "LIFECYCLE", "REINSTATE", t, actor, platform=platform)]
        r = rnd()
        if r < 0.2:
            if rnd() < 0.3 and ds.fields:  # tag a column (schemaField entity)
                f = ds.fields[self.randrange(len(ds.fields))][0]
                tag = "urn:li:tag:PII" if rnd() < 0.6 else DH_TAGS[self.randrange(len(DH_TAGS))]
                furn = f"urn:li:schemaField:({ds.urn},{f})"
                return [self._ece("schemaField", furn, "TAG", "ADD", t, actor, tag,
                                  {"tagUrn": tag, "fieldPath": f, "parentUrn": ds.urn}, platform)]
            return self._ds_tags(ds, t, actor, "only", platform)
        if r < 0.33:
            return self._ds_terms(ds, t, actor, "only", platform)
        if r < 0.43:
            return self._ds_domain(ds, t, actor, "only", platform)
        if r < 0.58:
            return self._ds_owners(ds, t, actor, "only", platform)
        if r < 0.70:
            op = "ADD" if ds.desc is None else ("REMOVE" if rnd() < 0.2 else "MODIFY")
            if op == "REMOVE":
                desc, ds.desc = ds.desc, None
            else:
                desc = ds.desc = f"{ds.name.rsplit('.', 1)[-1]}: curated by {actor.rsplit(':', 1)[1]} (rev {t % 997})."
            return [self._ece("dataset", ds.urn, "DOCUMENTATION", op, t, actor, None, {"description": desc}, platform)]
        if r < 0.77:
            return self._ds_deprecation(ds, t, actor, "only", platform)
        if r < 0.85:
            if platform:
                return self._ds_tags(ds, t, actor, "only", platform)
            return self._ds_schema(ds, t, "only")
        if r < 0.93:
            purn, values = STRUCT_PROPS[self.randrange(len(STRUCT_PROPS))]
            if purn in ds.sprops and rnd() < 0.3:
                del ds.sprops[purn]
                return [self._ece("dataset", ds.urn, "STRUCTURED_PROPERTY", "REMOVE", t, actor, purn,
                                  platform=platform)]
            op = "MODIFY" if purn in ds.sprops else "ADD"
            ds.sprops[purn] = v = values[self.randrange(len(values))]
            return [self._ece("dataset", ds.urn, "STRUCTURED_PROPERTY", op, t, actor, purn,
                              {"propertyUrn": purn, "propertyValues": v}, platform)]
        if r < 0.97 or platform:
            ds.removed = True
            return [self._ece("dataset", ds.urn, "LIFECYCLE", "SOFT_DELETE", t, actor, platform=platform)]
        if self.jobs:
            return self._dpi_run(t)
        return self._ds_tags(ds, t, actor, "only", platform)

    def _platform_action(self, t) -> list:
        if len(self.ds) < 2 or self.random() < 0.45:
            return self._ece_action(t, platform=True)
        ds = self._pick_ds()
        if ds.removed or ds.idx == 0:
            return self._ece_action(t, platform=True)
        actor = "urn:li:corpuser:svc_airflow"
        if ds.upstreams and self.random() < 0.4:
            u = ds.upstreams[self.randrange(len(ds.upstreams))]
            self._set_upstreams(ds, [x for x in ds.upstreams if x is not u])
            op = "REMOVE"
        else:
            u = self.ds_all[self.randrange(ds.idx)]
            if not u.alive or u.removed or u in ds.upstreams or len(ds.upstreams) >= 4:
                return self._ece_action(t, platform=True)
            self._set_upstreams(ds, ds.upstreams + [u])
            op = "ADD"
        payload = {"sourceUrn": ds.urn, "destinationUrn": u.urn, "operation": op, "relationshipType": "DownstreamOf",
                   "lifecycleOwner": ds.urn, "auditStamp": {"time": t, "actor": actor}}
        return [("datahub-platform", dumps({"header": {"timestampMillis": t}, "name": "relationshipChangeEvent",
                                            "payload": {"value": dumps(payload), "contentType": CT}}))]

    # ================================================================ hostile lines
    def hostile(self, kind, n) -> tuple:
        rnd = self.random
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


class _Slot:
    """A wrapper so one entity can sit in a second pool (its per-kind pool) with its own position."""

    __slots__ = ("e", "pos")

    def __init__(self, e):
        self.e = e
        self.pos = -1
        e.extra["slot"] = self


class _Holder:
    """Aspect bookkeeping for non-dataset DataHub entities (jobs, process instances)."""

    __slots__ = ("urn", "aspects", "aver")

    def __init__(self, urn):
        self.urn = urn
        self.aspects = {}
        self.aver = {}


_FALLBACK_OM = {"id": "00000000-0000-5000-8000-000000000000", "eventType": "entityUpdated", "entityType": "table",
                "entityId": _uid("fallback"), "entityFullyQualifiedName": "mysql_prod.ecommerce.sales.orders",
                "previousVersion": 0.1, "currentVersion": 0.1, "userName": "admin", "timestamp": START_MS}
_FALLBACK_MCL = {"entityType": "dataset", "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,fallback,PROD)",
                 "changeType": "UPSERT", "aspectName": "status",
                 "aspect": {"value": '{"removed":false}', "contentType": CT},
                 "created": {"time": START_MS, "actor": "urn:li:corpuser:datahub"}}


# ------------------------------------------------------------------ public API


def iter_lines(events: int, seed: int = 0, hostile_share: float = 0.01, *,
               days: int = DAYS) -> Iterator[tuple[str, str]]:
    """Yield (kind, line) for each of ``events`` lines; kind is a family name or a hostile kind.

    ``days``: the time span the events are spread over (from 2024-01-01)."""
    events = int(events)
    if events <= 0:
        return
    if not 0 <= hostile_share <= 1:
        raise ValueError("hostile_share must be between 0 and 1")
    if days < 1:
        raise ValueError("days must be at least 1")
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


def _gzip_sink(raw):
    return _gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0)


def generate(path, *, events: int, seed: int = 0, hostile_share: float = 0.01, days: int = DAYS,
             gzip: bool | None = None) -> dict:
    """Write ``events`` JSONL lines to ``path`` (gzip if it ends with .gz or gzip=True); return a summary.

    The file appears at ``path`` only when every line is written: a failed or interrupted run leaves
    none (``replaced_on_success``: missing parent folders are created, a folder is refused, OSError
    is InputError).

    The summary: ``lines`` (all lines written), ``families`` (valid lines per family, replays excluded),
    ``hostile`` (lines per hostile kind, blank lines and replays excluded), ``blank``, ``duplicates`` and
    ``unique_events`` (= sum of ``families``, what a correct pipeline should count). ``lines`` equals
    ``unique_events + sum(hostile) + blank + duplicates``.
    """
    use_gzip = str(path).endswith(".gz") if gzip is None else bool(gzip)
    families = {f: 0 for f in FAMILIES}
    hostile = {k: 0 for k in HOSTILE_KINDS if k not in ("blank", "duplicate")}
    blank = dup = lines = 0
    q: queue.Queue = queue.Queue(maxsize=8)
    error = []

    with replaced_on_success(Path(path)) as raw:
        sink = _gzip_sink(raw) if use_gzip else raw

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
            for kind, line in iter_lines(events, seed, hostile_share, days=days):
                lines += 1
                if kind in families:
                    families[kind] += 1
                elif kind == "blank":
                    blank += 1
                elif kind == "duplicate":
                    dup += 1
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
    return {"path": str(path), "lines": lines, "seed": seed, "gzip": use_gzip, "families": families,
            "hostile": hostile, "blank": blank, "duplicates": dup, "unique_events": sum(families.values())}
