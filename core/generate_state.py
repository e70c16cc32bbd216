"""What the synthetic event generator remembers, and the small helpers every event builder shares.

The records of the fake world (``OMEntity`` for an OpenMetadata entity, ``Dataset`` for a DataHub dataset,
``_Holder`` for the aspects of a DataHub job or process instance, ``_Pool`` / ``_Slot`` for O(1) random
picks) plus the deterministic ids (uuid5 under one namespace), the compact JSON encoder and the
OpenMetadata entity reference. They sit in a module of their own because both the generator
(``changeprov.generate``) and its event-family mixins (``changeprov.generate_openmetadata``,
``changeprov.generate_datahub``, ``changeprov.generate_datahub_jobs``) use them, and the mixins must not
import the module that imports them.
"""

from __future__ import annotations

import json
import uuid
from hashlib import sha1 as _sha1

NS = uuid.UUID("1b4e28ba-2fa1-51d2-883f-0016d3cca427")
HREF = "http://localhost:8585/api/v1/"
CT = "application/json"

_enc = json.JSONEncoder(separators=(",", ":"))
dumps = _enc.encode


_NS_BYTES = NS.bytes


def _uuid5(name: str) -> str:
    """str(uuid.uuid5(NS, name)), without building UUID objects (hot path).

    >>> import uuid; all(_uuid5(n) == str(uuid.uuid5(NS, n)) for n in ("x", "table/1", "é"))
    True
    """
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
