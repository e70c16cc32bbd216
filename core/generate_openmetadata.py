"""The OpenMetadata half of the synthetic event generator: ChangeEvents for entities and lineage.

``_OpenMetadataEvents`` is a mixin of ``changeprov.generate._Gen``: entity creation (tables, topics,
dashboards, pipelines, ML models, glossary terms), the updates that follow (descriptions, tags, tiers,
owners, followers, columns, pipeline status, soft delete, restore, hard delete), the rendering of the
``entity`` string, and lineage edges that are added, re-wired and deleted. It is separate from the
DataHub builders because the two families share no event shape and no state beyond the generator's
random stream, clock and event counter (``self.random``, ``self.randrange``, ``self.rng``, ``self.clock``,
``self._eid``), which ``_Gen`` provides along with the populations it sets up in ``__init__``.
"""

from __future__ import annotations

import json

from changeprov.generate_state import HREF, _OM_PATH, OMEntity, _Slot, _uid, dumps
from changeprov.generate_vocab import COLUMNS, DESCRIPTIONS, FUNCTIONS, NOUNS, SCHEMAS, SUFFIXES, TEAMS, TERMS


class _OpenMetadataEvents:
    """OpenMetadata 2.x ChangeEvent lines (family ``openmetadata``); mixed into ``_Gen``."""

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
            db_fqn = fqn.split(".", 2)
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
