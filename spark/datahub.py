"""DataHub MetadataChangeLog, EntityChangeEvent_v1 and PlatformEvent envelopes → triples, in Spark SQL.

The Spark twin of changeprov.mapping.datahub: the same checks in the same order (the first failing
one is the quarantine reason), the same IRIs and triples; the aspect patterns are in
changeprov.spark.aspects. Built like changeprov.spark.openmetadata: one struct extraction per JSON
object, kinds and texts as staged columns, ordered checks (checks.Checks), triples as strings. A
URN becomes a node through ``sqlterms.iri_safe`` and is checked with ``sqlterms.bad_urn``.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.datahub import _MEMBER_PATTERNS, ECE, MCL, PLATFORM
from changeprov.mapping.vocab import expand, rules
from changeprov.spark import aspects
from changeprov.spark.checks import INT, OBJ, STR, Checks, absent, ms_out_of_range, urn_detail, verbatim
from changeprov.spark.decode import strict_json
from changeprov.spark.family import Family
from changeprov.spark.shapes import (
    RDF_TYPE, agent_triples, change_node, entity_triples, event_triples, field_change_triples, lineage_triples, om,
    prov,
)
from changeprov.spark.sqlterms import (
    MAX_MS, bad_urn, iri, iri_safe, json_literal, literal, minted, string_of, struct_of, table, term, triple, truthy,
    value_literal, variant_kind,
)
from changeprov.spark.stages import Plan





def _terms(mapping: dict) -> Column:
    """A constant map key → full IRI term ``<…>`` (entries with empty values left out)."""
    return table({k: "<" + expand(v) + ">" for k, v in mapping.items() if v})




def urn_term(urn: Column) -> Column:
    return iri(iri_safe(urn))


def urn_entity(node: Column, urn: Column, *, asset_type: Column | None = None, cls=None) -> list[Column]:
    """datahub.entity_node's triples (``node`` the URN's term)."""
    return entity_triples(node, asset_type=asset_type, urn_text=urn, cls=cls)


def urn_agent(node: Column, urn: Column) -> list[Column]:
    """datahub.agent_node's triples: groups are organisations."""
    return agent_triples(node, organization=urn.startswith("urn:li:corpGroup:"))


def actor_triples(ev: Column, agent: Column, actor: Column) -> list[Column]:
    """datahub.actor_node's triples: the actor's agent and the event's userName (the raw URN)."""
    return [F.when(agent.isNotNull(), x) for x in (*urn_agent(agent, actor), triple(ev, om("userName"), literal(actor)))]


class Fields:
    """The fields of one event object: their variants, kinds and texts, read in two struct
    extractions (the top level, then every nested object named in ``nested``) and staged.

    ``fields.get`` in the reference walks dotted paths; here ``path`` is "a" or "a.b" (one level
    of nesting), and ``check`` adds the same errors in the same order."""

    def __init__(self, plan: Plan, root: Column, top: tuple, nested: dict, texts: tuple, prefix: str) -> None:
        b = plan.bind
        self.prefix = prefix
        t = b(prefix + "top", struct_of(root, top))
        plan.next()
        self.value = {name: t[name] for name in top}
        subs = b(prefix + "sub", F.struct(*[struct_of(t[obj], keys).alias(obj) for obj, keys in nested.items()]))
        for obj, keys in nested.items():
            for key in keys:
                self.value[f"{obj}.{key}"] = subs[obj][key]
        plan.next()
        kinds = b(prefix + "kinds", F.struct(*[variant_kind(v).alias(p) for p, v in self.value.items()]))
        plan.next()
        self.kind = {p: kinds[p] for p in self.value}
        strings = b(prefix + "texts", F.struct(*[string_of(self.value[p], self.kind[p]).alias(p) for p in texts]))
        self.text = {p: strings[p] for p in texts}
        plan.next()

    def check(self, ck: Checks, path: str, types: tuple, *, required: bool = False, at: str = "") -> None:
        """fields.get(obj, path, types, required=…, at=…)'s checks."""
        parts = path.split(".")
        if len(parts) == 2:
            ck.walk(self.kind[parts[0]], at + path, (at + parts[0]).rstrip("."))
            with ck.guard(~absent(self.kind[parts[0]])):
                self._leaf(ck, path, types, required, at)
            if required:
                ck.add(absent(self.kind[parts[0]]), "MISSING_FIELD", f"{at}{path} is required")
        else:
            self._leaf(ck, path, types, required, at)

    def _leaf(self, ck: Checks, path: str, types: tuple, required: bool, at: str) -> None:
        ck.typed(self.kind[path], types, at + path, required=required, text=self.text.get(path))

    def time(self, ck: Checks, path: str, *, at: str = "") -> Column:
        """datahub._time: a required integer in 0 … MAX_MS; returns it as a long."""
        self.check(ck, path, INT, required=True, at=at)
        ms = F.when(self.kind[path] == "integer", F.to_json(self.value[path])).try_cast("decimal(38,0)")
        ck.add(~F.coalesce(ms.between(0, MAX_MS), F.lit(False)), "BAD_TIMESTAMP", ms_out_of_range(f"{at}{path}", ms))
        return ms.try_cast("long")


def _rules(family: str) -> tuple[Column, Column]:
    rows = [r for r in rules()["eventTypes"] if r["family"] == family]
    return _terms({r["value"]: r["eventType"] for r in rows}), table({r["value"]: r["pattern"] for r in rows})




# ---------------------------------------------------------------- MetadataChangeLog


MCL_TOP = ("changeType", "entityUrn", "entityType", "aspectName", "created", "systemMetadata", "aspect",
           "previousAspectValue", "previousSystemMetadata")
MCL_NESTED = {"created": ("time", "actor", "impersonator"), "systemMetadata": ("lastObserved", "version"),
              "aspect": ("value",), "previousAspectValue": ("value",), "previousSystemMetadata": ("version",)}
MCL_TEXTS = ("changeType", "entityUrn", "entityType", "aspectName", "created.actor", "created.impersonator",
             "aspect.value", "previousAspectValue.value", "systemMetadata.version", "previousSystemMetadata.version")


def mcl(plan: Plan) -> Family:
    f = Fields(plan, F.col("v"), MCL_TOP, MCL_NESTED, MCL_TEXTS, "m_")
    b = plan.bind
    event_types, patterns = _rules(MCL)
    t = f.text
    ck = Checks()
    f.check(ck, "changeType", STR, required=True)
    event_type = b("event_type", F.try_element_at(event_types, t["changeType"]))
    ck.add(event_type.isNull(), "UNKNOWN_EVENT_TYPE",
           verbatim(F.lit("changeType: '"), F.substring(t["changeType"], 1, 200), F.lit(f"' is not a known {MCL} value")))
    f.check(ck, "entityUrn", STR, required=True)
    f.check(ck, "entityType", STR, required=True)
    f.check(ck, "aspectName", STR, required=True)
    f.check(ck, "created", OBJ)
    has_created = F.coalesce(f.kind["created"] == "object", F.lit(False))
    with ck.guard(has_created):
        ms_created = f.time(ck, "created.time")
    with ck.guard(~has_created):
        ms_observed = f.time(ck, "systemMetadata.lastObserved")
    ms = b("ms", F.when(has_created, ms_created).otherwise(ms_observed))
    f.check(ck, "created.actor", STR)
    f.check(ck, "aspect.value", STR)
    f.check(ck, "previousAspectValue.value", STR)
    deleting = b("deleting", F.coalesce(F.try_element_at(patterns, t["changeType"]) == "aspect-delete", F.lit(False)))
    new_text, old_text = t["aspect.value"], t["previousAspectValue.value"]
    # each aspect text is parsed once: its verdict for the checks, its value for the triples
    new_json = b("new_json", F.when(~deleting & new_text.isNotNull(), strict_json(new_text)))
    old_json = b("old_json", F.when(old_text.isNotNull(), strict_json(old_text)))
    plan.next()
    ck.add(~deleting & new_text.isNull(), "MISSING_FIELD",
           F.concat(F.lit("aspect.value is required for changeType "), t["changeType"]))
    ck.add(new_json["bad"], "BAD_ASPECT_JSON", "aspect.value: not one valid JSON value")
    ck.add(old_json["bad"], "BAD_ASPECT_JSON", "previousAspectValue.value: not one valid JSON value")
    urn, actor, imp = t["entityUrn"], t["created.actor"], t["created.impersonator"]
    ck.urn(urn, "entityUrn")
    with ck.guard(truthy(actor)):
        ck.urn(actor, "created.actor")
    f.check(ck, "created.impersonator", STR)
    with ck.guard(truthy(imp)):
        ck.urn(imp, "created.impersonator")
    f.check(ck, "systemMetadata.version", STR)
    f.check(ck, "previousSystemMetadata.version", STR)

    k_new, k_old = b("k_new", variant_kind(new_json["v"])), b("k_old", variant_kind(old_json["v"]))
    event = b("event", minted("event", F.lit(MCL), urn, t["aspectName"], t["changeType"], ms.cast("string"),
                               F.coalesce(actor, F.lit("")), F.coalesce(new_text, F.lit("")),
                               F.coalesce(old_text, F.lit("")),
                               F.coalesce(t["systemMetadata.version"], F.lit("")),
                               F.coalesce(t["previousSystemMetadata.version"], F.lit(""))))
    safe = b("safe", iri_safe(urn))
    plan.next()
    new = F.when(~absent(k_new), new_json["v"])
    old = F.when(~absent(k_old), old_json["v"])
    kind = b("change_kind", F.when(deleting, "deleted").when(old.isNotNull(), "updated").otherwise("added"))
    part = aspects.aspect(plan, t["aspectName"], event=event, urn=urn, safe=safe, kind=kind, old=old,
                          new=F.when(~deleting, new), deleting=deleting, k_old=F.when(old.isNotNull(), k_old),
                          k_new=F.when(~deleting & new.isNotNull(), k_new))
    ck.error(part["c"])
    rejected = b("rejected", ck.column())

    ev, en = iri(event), iri(safe)
    agent = F.when(truthy(actor), urn_term(actor))
    imp_agent = F.when(truthy(imp), urn_term(imp))
    aspect = t["aspectName"]
    removed_now = ~deleting & (k_new == "object") & _is_true(F.try_variant_get(new_json["v"], "$.removed", "variant"))
    removed_before = (k_old == "object") & _is_true(F.try_variant_get(old_json["v"], "$.removed", "variant"))
    lifecycle = (F.when(aspect.endswith(rules()["keyAspectSuffix"]),
                        F.when(deleting, om("HardDeleted")).when(old.isNull(), om("Created")))
                 .when(aspect == "status",
                       F.when(removed_now & ~removed_before, om("SoftDeleted"))
                       .when(removed_before & ~removed_now & ~deleting, om("Restored"))))
    version, previous = t["systemMetadata.version"], t["previousSystemMetadata.version"]
    before = iri(F.when(truthy(previous), minted("version", safe, aspect, previous)))
    now = iri(minted("version", safe, aspect, version))
    makes = ~deleting & truthy(version) & ~F.coalesce(version == previous, F.lit(False))
    triples = F.array(
        *urn_entity(en, urn, asset_type=t["entityType"]),
        *actor_triples(ev, agent, actor),
        *event_triples(ev, event_type=event_type, ms=ms, entity=en, agent=agent, lifecycle=lifecycle),
        triple(ev, om("aspectName"), literal(aspect)),
        triple(ev, om("entityType"), literal(t["entityType"])),
        triple(ev, om("impersonatedBy"), imp_agent),
        *[F.when(imp_agent.isNotNull(), x) for x in urn_agent(imp_agent, imp)],
        triple(ev, prov("used"), before),
        triple(ev, om("previousVersionLabel"), F.when(truthy(previous), literal(previous))),
        F.when(deleting, triple(before, prov("wasInvalidatedBy"), ev)),
        *[F.when(makes, x) for x in (
            triple(now, RDF_TYPE(), om("EntityVersion")), triple(now, RDF_TYPE(), om("AspectVersion")),
            triple(now, prov("specializationOf"), en), triple(now, om("versionLabel"), literal(version)),
            triple(now, prov("wasGeneratedBy"), ev), triple(now, prov("wasRevisionOf"), before))],
        *field_change_triples(event, kind, aspect, old=F.when(kind != "added", value_literal(old, k_old)),
                              new=F.when(kind != "deleted", value_literal(new, k_new))),
    )
    out = F.filter(F.concat(triples, part["t"]), lambda x: x.isNotNull())
    return Family(out, rejected, ms)


def _is_true(x: Column) -> Column:
    """The JSON ``true`` (not the string "true")."""
    return F.coalesce((F.schema_of_variant(x) == "BOOLEAN") & F.try_variant_get(x, "$", "boolean"), F.lit(False))


# ---------------------------------------------------------------- EntityChangeEvent

ECE_TOP = ("category", "operation", "entityUrn", "entityType", "auditStamp", "modifier", "parameters")
ECE_PARAMS = tuple(dict.fromkeys(["resourceUrn", "dataJobUrn"] + [k for k, _, _, _ in _MEMBER_PATTERNS.values()]))
ECE_NESTED = {"auditStamp": ("time", "actor", "impersonator"), "parameters": ECE_PARAMS}
ECE_TEXTS = ("category", "operation", "entityUrn", "entityType", "auditStamp.actor", "auditStamp.impersonator",
             "modifier") + tuple(
    "parameters." + k for k in ECE_PARAMS)


def ece(plan: Plan) -> Family:
    f = Fields(plan, F.col("v"), ECE_TOP, ECE_NESTED, ECE_TEXTS, "e_")
    ck = Checks()
    head = _ece_head(plan, f, ck, at="")
    rejected = plan.bind("rejected", ck.column())
    return Family(F.filter(_ece_triples(f, head), lambda x: x.isNotNull()), rejected, head["ms"])


def _ece_head(plan: Plan, f: Fields, ck: Checks, *, at: str) -> dict:
    """datahub.map_ece's checks (added to ``ck`` in order) and the values its triples need."""
    b, t, p = plan.bind, f.text, f.prefix
    ops = rules()["operations"]
    event_types, patterns = _rules(ECE)
    category, operation, urn = t["category"], t["operation"], t["entityUrn"]
    f.check(ck, "category", STR, required=True, at=at)
    h = {"event_type": b(p + "event_type", F.try_element_at(event_types, category)),
         "op": b(p + "op", F.try_element_at(_terms({k: v["operation"] for k, v in ops.items()}), operation)),
         "pattern": b(p + "pattern", F.try_element_at(patterns, category)),
         "kind": b(p + "kind", F.try_element_at(table({k: v["fieldKind"] for k, v in ops.items()}), operation))}
    ck.add(h["event_type"].isNull(), "UNKNOWN_EVENT_TYPE",
           verbatim(F.lit(f"{at}category: '"), F.substring(category, 1, 200), F.lit(f"' is not a known {ECE} value")))
    f.check(ck, "operation", STR, required=True, at=at)
    ck.add(h["op"].isNull(), "UNKNOWN_EVENT_TYPE",
           verbatim(F.lit(f"{at}operation: '"), F.substring(operation, 1, 200), F.lit("' is not a known operation")))
    f.check(ck, "entityUrn", STR, required=True, at=at)
    f.check(ck, "entityType", STR, at=at)
    h["ms"] = b(p + "ms", f.time(ck, "auditStamp.time", at=at))
    actor, modifier = t["auditStamp.actor"], t["modifier"]
    f.check(ck, "auditStamp.actor", STR, at=at)
    f.check(ck, "modifier", STR, at=at)
    f.check(ck, "parameters", OBJ, at=at)
    f.check(ck, "auditStamp.impersonator", STR, at=at)
    ck.urn(urn, at + "entityUrn")
    with ck.guard(truthy(actor)):
        ck.urn(actor, at + "auditStamp.actor")
    imp = t["auditStamp.impersonator"]
    with ck.guard(truthy(imp)):
        ck.urn(imp, at + "auditStamp.impersonator")
    pattern = h["pattern"]
    # _ece_structure: a member URN (from parameters or the modifier), a proposal, a run's job
    member_value = member_prop = member_cls = member_path = F.lit(None).cast("string")
    for name, (key, added, removed, cls) in _MEMBER_PATTERNS.items():
        with ck.guard(pattern == name):
            f.check(ck, "parameters." + key, STR, at=at)
        kv = t["parameters." + key]
        value = F.when(truthy(kv), kv).otherwise(modifier)
        prop = F.when(operation == "ADD", term(added)).when(
            operation == "REMOVE", term(removed))
        if name == "schema-field":
            prop = F.when(operation == "MODIFY", term("om-event:changedSchemaField")).otherwise(prop)
        member_value = F.when(pattern == name, value).otherwise(member_value)
        member_path = F.when(pattern == name, F.when(truthy(kv), F.lit(f"{at}parameters.{key}"))
                             .otherwise(F.lit(f"{at}modifier"))).otherwise(member_path)
        member_prop = F.when(pattern == name, prop).otherwise(member_prop)
        member_cls = F.when(pattern == name, F.lit(cls or "")).otherwise(member_cls)
    h["member_value"] = b(p + "member_value", member_value)
    h["member_prop"] = b(p + "member_prop", member_prop)
    h["member_cls"] = b(p + "member_cls", member_cls)
    plan.next()
    member_ok = F.coalesce(truthy(h["member_value"]) & h["member_prop"].isNotNull(), F.lit(False))
    h["member_ok"] = b(p + "member_ok", member_ok)
    member_key = F.lit(None).cast("string")
    for name, (key, _, _, _) in _MEMBER_PATTERNS.items():
        member_key = F.when(pattern == name, F.lit(key)).otherwise(member_key)
    ck.add(h["member_prop"].isNotNull() & ~F.coalesce(truthy(h["member_value"]), F.lit(False)), "MISSING_FIELD",
           F.concat(F.lit(f"{at}parameters."), member_key, F.lit(f": absent, and no {at}modifier names the member either")))
    ck.add(member_ok & bad_urn(h["member_value"]), "BAD_IDENTIFIER", urn_detail(member_path, h["member_value"]))
    resource, job = t["parameters.resourceUrn"], t["parameters.dataJobUrn"]
    with ck.guard(pattern == "lifecycle"):
        f.check(ck, "parameters.resourceUrn", STR, at=at)
    proposal = F.coalesce((pattern == "lifecycle") & (operation == "CREATE") & truthy(resource), F.lit(False))
    ck.add(proposal & bad_urn(resource), "BAD_IDENTIFIER", urn_detail(f"{at}parameters.resourceUrn", resource))
    with ck.guard(pattern == "run"):
        f.check(ck, "parameters.dataJobUrn", STR, at=at)
    run_of = F.coalesce((pattern == "run") & truthy(job) & urn.startswith("urn:li:dataProcessInstance:"),
                        F.lit(False))
    ck.add(run_of & bad_urn(job), "BAD_IDENTIFIER", urn_detail(f"{at}parameters.dataJobUrn", job))
    h["proposal"], h["run_of"] = b(p + "proposal", proposal), b(p + "run_of", run_of)
    modifier_v = f.value["modifier"]
    # the parameters' canonical JSON: in the payload, and part of the event id (map_ece)
    params_json = F.when(~absent(f.kind["parameters"]), F.to_json(f.value["parameters"]))
    payload = F.when(~absent(f.kind["modifier"]) | params_json.isNotNull(), F.concat(
        F.lit("{"), F.concat_ws(",", F.when(~absent(f.kind["modifier"]), F.concat(F.lit('"modifier":'), F.to_json(modifier_v))),
                                F.concat(F.lit('"parameters":'), params_json)),
        F.lit("}")))
    h["payload"] = b(p + "payload", payload)
    h["event"] = b(p + "event", minted("event", F.lit(ECE), urn, category, operation, F.coalesce(modifier, F.lit("")),
                                       h["ms"].cast("string"), F.coalesce(actor, F.lit("")),
                                       F.coalesce(params_json, F.lit(""))))
    h["safe"] = b(p + "safe", iri_safe(urn))
    plan.next()
    return h


def _ece_triples(f: Fields, h: dict) -> Column:
    t = f.text
    urn, actor, kind = t["entityUrn"], t["auditStamp.actor"], h["kind"]
    ev, en = iri(h["event"]), iri(h["safe"])
    agent = F.when(truthy(actor), urn_term(actor))
    imp = t["auditStamp.impersonator"]
    imp_agent = F.when(truthy(imp), urn_term(imp))
    lifecycle = F.when(h["pattern"] == "lifecycle", F.try_element_at(_terms(rules()["eceLifecycle"]), t["operation"]))
    change = iri(change_node(h["event"], kind))
    mv = h["member_value"]
    member = urn_term(mv)
    cls_terms = _terms({c: c for _, _, _, c in _MEMBER_PATTERNS.values() if c and c != "agent"})
    member_triples = [triple(change, h["member_prop"], member),
                      *[F.when(h["member_cls"] == "agent", x) for x in urn_agent(member, mv)],
                      *[F.when(h["member_cls"] != "agent", x) for x in urn_entity(
                          member, mv, cls=F.try_element_at(cls_terms, h["member_cls"]))]]
    resource, job = t["parameters.resourceUrn"], t["parameters.dataJobUrn"]
    run = iri(minted("run", h["safe"]))
    payload = json_literal(h["payload"])
    return F.array(
        *urn_entity(en, urn, asset_type=t["entityType"]),
        *actor_triples(ev, agent, actor),
        *event_triples(ev, event_type=h["event_type"], ms=h["ms"], entity=en, agent=agent, lifecycle=lifecycle,
                       operation=h["op"]),
        triple(ev, om("entityType"), literal(t["entityType"])),
        # rv48 #6: as an MCL's created.impersonator
        triple(ev, om("impersonatedBy"), imp_agent),
        *[F.when(imp_agent.isNotNull(), x) for x in urn_agent(imp_agent, imp)],
        *field_change_triples(h["event"], kind, t["category"], old=F.when(kind == "deleted", payload),
                              new=F.when(kind != "deleted", payload)),
        *[F.when(h["member_ok"], x) for x in member_triples],
        F.when(h["proposal"], triple(ev, om("proposalFor"), urn_term(resource))),
        *[F.when(h["proposal"], x) for x in urn_entity(urn_term(resource), resource)],
        *[F.when(h["run_of"], x) for x in (
            triple(run, RDF_TYPE(), om("Run")), triple(run, om("runRecord"), en),
            triple(run, om("runOf"), urn_term(job)), *urn_entity(urn_term(job), job))],
    )


# ---------------------------------------------------------------- PlatformEvent

PLATFORM_TOP = ("name", "payload", "header")
PLATFORM_NESTED = {"payload": ("value",), "header": ("timestampMillis",)}
REL_TOP = ("sourceUrn", "destinationUrn", "relationshipType", "operation", "auditStamp")
REL_NESTED = {"auditStamp": ("time", "actor")}
REL_TEXTS = ("sourceUrn", "destinationUrn", "relationshipType", "operation", "auditStamp.actor")


def platform(plan: Plan) -> Family:
    f = Fields(plan, F.col("v"), PLATFORM_TOP, PLATFORM_NESTED, ("name", "payload.value"), "p_")
    b = plan.bind
    event_types, patterns = _rules(PLATFORM)
    ck = Checks()
    f.check(ck, "name", STR, required=True)
    name = f.text["name"]
    pattern = b("p_pattern", F.try_element_at(patterns, name))
    event_type = b("p_event_type", F.try_element_at(event_types, name))
    ck.add(pattern.isNull(), "UNKNOWN_EVENT_TYPE",
           verbatim(F.lit("name: '"), F.substring(name, 1, 200), F.lit(f"' is not a known {PLATFORM} value")))
    f.check(ck, "payload.value", STR, required=True)
    payload = b("p_payload", strict_json(f.text["payload.value"]))
    plan.next()
    ck.add(payload["bad"], "BAD_ASPECT_JSON", "payload.value: not one valid JSON value")
    ck.add(variant_kind(payload["v"]) != "object", "BAD_ASPECT_JSON", "payload.value: expected a JSON object")
    envelope = pattern == "envelope-ece"
    root = F.when(~payload["bad"], payload["v"])
    e = Fields(plan, F.when(envelope, root), ECE_TOP, ECE_NESTED, ECE_TEXTS, "pe_")
    with ck.guard(envelope):
        head = _ece_head(plan, e, ck, at="payload.")
    r = Fields(plan, F.when(pattern == "relationship", root), REL_TOP, REL_NESTED, REL_TEXTS, "pr_")
    with ck.guard(pattern == "relationship"):
        rel = _relationship_head(plan, r, f, ck)
    rejected = b("rejected", ck.column())
    triples = F.when(envelope, _ece_triples(e, head)).otherwise(_relationship_triples(r, rel, event_type))
    ms = F.when(envelope, head["ms"]).otherwise(rel["ms"])
    return Family(F.filter(triples, lambda x: x.isNotNull()), rejected, ms)


def _relationship_head(plan: Plan, r: Fields, envelope: Fields, ck: Checks) -> dict:
    b, t, at = plan.bind, r.text, "payload."
    ops = rules()["operations"]
    for key in ("sourceUrn", "destinationUrn", "relationshipType", "operation"):
        r.check(ck, key, STR, required=True, at=at)
    operation = t["operation"]
    ck.add(~operation.isin(*[k for k in ("ADD", "REMOVE") if k in ops]), "UNKNOWN_EVENT_TYPE",
           verbatim(F.lit(f"{at}operation: '"), F.substring(operation, 1, 200), F.lit("' is not ADD or REMOVE")))
    r.check(ck, "auditStamp", OBJ, at=at)
    stamped = F.coalesce(r.kind["auditStamp"] == "object", F.lit(False))
    with ck.guard(stamped):
        ms_stamp = r.time(ck, "auditStamp.time", at=at)
    with ck.guard(~stamped):
        ms_header = envelope.time(ck, "header.timestampMillis")
    h = {"ms": b("pr_ms", F.when(stamped, ms_stamp).otherwise(ms_header))}
    actor = t["auditStamp.actor"]
    r.check(ck, "auditStamp.actor", STR, at=at)
    ck.urn(t["sourceUrn"], at + "sourceUrn")
    ck.urn(t["destinationUrn"], at + "destinationUrn")
    with ck.guard(truthy(actor)):
        ck.urn(actor, at + "auditStamp.actor")
    v = r.value
    h["summary"] = b("pr_summary", F.concat(
        F.lit('{"destinationUrn":'), F.to_json(v["destinationUrn"]), F.lit(',"relationshipType":'),
        F.to_json(v["relationshipType"]), F.lit(',"sourceUrn":'), F.to_json(v["sourceUrn"]), F.lit("}")))
    h["event"] = b("pr_event", minted("event", F.lit("datahub-rel"), t["sourceUrn"], t["relationshipType"],
                                      t["destinationUrn"], operation, h["ms"].cast("string"),
                                      F.coalesce(actor, F.lit(""))))
    h["src"], h["dst"] = b("pr_src", iri_safe(t["sourceUrn"])), b("pr_dst", iri_safe(t["destinationUrn"]))
    plan.next()
    return h


def _relationship_triples(r: Fields, h: dict, event_type: Column) -> Column:
    ops = rules()["operations"]
    t = r.text
    operation, rel_type, actor = t["operation"], t["relationshipType"], t["auditStamp.actor"]
    ev, src, dst = iri(h["event"]), iri(h["src"]), iri(h["dst"])
    agent = F.when(truthy(actor), urn_term(actor))
    kind = F.try_element_at(table({k: v["fieldKind"] for k, v in ops.items()}), operation)
    op_term = F.try_element_at(_terms({k: v["operation"] for k, v in ops.items()}), operation)
    direction = F.try_element_at(table(rules()["relationshipLineageTypes"]), rel_type)
    removed = operation == "REMOVE"
    summary = json_literal(h["summary"])
    return F.concat(F.array(
        # the destination as a node only as a lineage edge's end (the reference's _relationship)
        *urn_entity(src, t["sourceUrn"]), *(F.when(direction.isNotNull(), x) for x in urn_entity(dst, t["destinationUrn"])),
        *actor_triples(ev, agent, actor),
        *event_triples(ev, event_type=event_type, ms=h["ms"], entity=src, agent=agent, operation=op_term),
        *field_change_triples(h["event"], kind, rel_type, old=F.when(kind == "deleted", summary),
                              new=F.when(kind != "deleted", summary))),
        F.coalesce(F.when(direction == "source-is-downstream", lineage_triples(h["event"], h["src"], h["dst"], removed))
                   .when(direction == "source-is-upstream", lineage_triples(h["event"], h["dst"], h["src"], removed)),
                   F.array().cast("array<string>")))


__all__ = ["mcl", "ece", "platform"]
