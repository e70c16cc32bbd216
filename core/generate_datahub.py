"""The DataHub half of the synthetic event generator: MetadataChangeLog, EntityChangeEvent and PlatformEvent.

``_DataHubEvents`` is a mixin of ``changeprov.generate._Gen``: the envelopes (an MCL with its previous
aspect value and system metadata, a time-series MCL, an EntityChangeEvent bare or wrapped in a
PlatformEvent) and the story of a dataset told with them (creation, schema versions, upstream lineage,
tags, glossary terms, owners, domains, deprecation, soft and hard delete, structured properties,
relationship changes). It is separate from the OpenMetadata builders because the families share no event
shape; the jobs and their runs, which reuse these envelopes, are in ``changeprov.generate_datahub_jobs``.
``_Gen`` provides the random stream, the clock and the populations it sets up in ``__init__``.
"""

from __future__ import annotations

from changeprov.generate_state import CT, Dataset, _uuid5, dumps
from changeprov.generate_vocab import (DH_DOMAINS, DH_FIELDS, DH_PLATFORMS, DH_TAGS, DH_TERMS, DH_TYPES, NOUNS,
                                       OWNER_TYPES, PROPS_AIRFLOW, PROPS_SDK, PROPS_UI, SCHEMAS, STRUCT_PROPS,
                                       SUFFIXES, SYS_COMMON)


class _DataHubEvents:
    """DataHub lines about datasets (families ``datahub-mcl``, ``datahub-ece``, ``datahub-platform``); mixed into
    ``_Gen``."""

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

    def _toggle(self, members: list, pool, p_remove: float) -> tuple[str, str] | None:
        """Remove a random member (with probability ``p_remove``) or add one drawn from ``pool``:
        (member, "REMOVE" | "ADD"), or None when the draw is a member already."""
        if members and self.random() < p_remove:
            return members.pop(self.randrange(len(members))), "REMOVE"
        pick = pool[self.randrange(len(pool))]
        if pick in members:
            return None
        members.append(pick)
        return pick, "ADD"

    def _ds_tags(self, ds, t, actor, ece=None, platform=False) -> list:
        rnd = self.random
        change = self._toggle(ds.tags, DH_TAGS, 0.35)
        if change is None:
            return self._ds_terms(ds, t, actor, ece, platform)
        tag, op = change
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
        change = self._toggle(ds.terms, DH_TERMS, 0.3)
        if change is None:
            return self._ds_owners(ds, t, actor, ece, platform)
        term, op = change
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
                value.update({"decommissionTime": t + 30 * 86_400_000, "note": "Superseded; decommission planned.",
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
