"""OpenMetadata ChangeEvent 2.x and the older (dateTime) change event → triples, in Spark SQL.

Mirrors changeprov.mapping.openmetadata: the same checks in the same order (so the same quarantine
reason), the same IRIs and triples. Native Spark SQL functions only; the rules table (rules.json)
drives event types, lifecycles, JSON-valued and structured fields.

How it is built (see sqlterms for what costs what): the event's fields are read in one struct
extraction, their kinds and texts are staged columns, and lists (field changes, their members,
column lineage) are arrays of structs that grow by one ``extend`` per step, so every value is
computed once per element and later steps read it as a field. Errors and triples are then read off
those staged values: the checks as one ordered CASE (checks.Checks), the triples as strings.

A variant cannot tell ``1.0`` from ``1`` by value, but its schema can: ``1`` is a BIGINT, ``1.0``
a DECIMAL(1,0), and the reference wants an integer token for times (sqlterms.variant_kind calls
the latter "integral"). Only a DOUBLE or a 19+ digit number can be either an integer token or not;
for the top-level ``timestamp`` the raw token then decides (``from_json`` of the line keeps
Jackson's text). Inside pipelineStatus such numbers count by their variant type.
"""

from __future__ import annotations

from types import SimpleNamespace

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.openmetadata import (CASCADING, COLUMN_FIELD, COLUMN_LEVELS, ENTITY_LINK, INITIAL_FIELDS,
                                             MEMBER_LISTS)
from changeprov.mapping.terms import RFC3339_PATTERN
from changeprov.mapping.vocab import expand, rules
from changeprov.spark.checks import (BOOL, INT, LIST, NUM, OBJ, STR, Checks, absent, at, got, ident_detail, ms_out_of_range,
                                     reject, verbatim)
from changeprov.spark.decode import strict_json
from changeprov.spark.family import Family
from changeprov.spark.shapes import (
    FIELD_LISTS, RDF_TYPE, agent_triples, change_node, entity_triples, event_triples, field_change_triples,
    lineage_triples, om, om_term, prov,
)
from changeprov.spark.sqlterms import (
    MAX_MS, XSD, bad_identifier, cat, datetime_literal, decimal_lexical, extend, first_error, flat, iri, items,
    json_literal, let, literal, minted, om_entity, om_named, safe_literal, string_of, struct_of, table, triple,
    truthy, value_literal, variant_kind,
)
from changeprov.spark.stages import Plan

FAMILY, LEGACY = "openmetadata", "openmetadata-legacy"
TOP = ("eventType", "entityType", "entityId", "userName", "id", "currentVersion", "previousVersion",
       "changeDescription", "entity", "entityFullyQualifiedName", "userId", "impersonatedBy", "recursive")
TEXTS = ("eventType", "entityType", "entityId", "userName", "id", "entityFullyQualifiedName", "userId",
         "impersonatedBy", "entity")
LISTS = tuple(FIELD_LISTS.items())  # (kind, changeDescription list), in the reference's order
DECIMAL = XSD + "decimal"






def kind_of(x: Column) -> Column:
    return variant_kind(x)


# ---------------------------------------------------------------- the rules table


def _rule_maps(family: str) -> dict:
    rows = [r for r in rules()["eventTypes"] if r["family"] == family]
    return {
        "event_type": table([(r["value"], "<" + expand(r["eventType"]) + ">") for r in rows]),
        "pattern": table([(r["value"], r["pattern"]) for r in rows]),
        "lifecycle": table([(r["value"], r.get("lifecycle") or "") for r in rows]),
        "lifecycle_iri": table([(r["value"], "<" + expand(r["lifecycle"]) + ">") for r in rows if r.get("lifecycle")]),
    }


# ---------------------------------------------------------------- the mapper


def openmetadata(plan: Plan) -> Family:
    return _map(plan, legacy=False)


def openmetadata_legacy(plan: Plan) -> Family:
    return _map(plan, legacy=True)


def _map(plan: Plan, *, legacy: bool) -> Family:
    family = LEGACY if legacy else FAMILY
    v = _values(plan, family=family, legacy=legacy)
    # the checks read the staged values by name, so building them after the last stage changes no plan
    rejected = plan.bind("rejected_all", _checks(v, family=family, legacy=legacy).column())
    return Family(_triples(v), rejected, v.d["ms"])


def _values(plan: Plan, *, family: str, legacy: bool) -> SimpleNamespace:
    """The event's values, stage by stage: fields, kinds, texts, rule lookups, time, state, field
    changes, cascade, lineage edge and IRIs."""
    maps = _rule_maps(family)
    b = plan.bind
    time_key = "dateTime" if legacy else "timestamp"
    names = TOP + (time_key,)
    # stage 1: every top-level field, in one read of the event
    top = b("top", struct_of(F.col("v"), names))
    plan.next()
    # stage 2: their kinds; the change description's fields
    k = {n: b("k_" + n, kind_of(top[n])) for n in names}
    cd = b("cd", struct_of(top["changeDescription"], ("previousVersion", "changeSummary") + tuple(
        key for _, key in LISTS)))
    plan.next()
    # stage 3: texts and version numbers
    s = {n: b("s_" + n, string_of(top[n], k[n])) for n in TEXTS + ((time_key,) if legacy else ())}
    k["cd_prev"] = b("k_cd_prev", kind_of(cd["previousVersion"]))
    k["summary"] = b("k_summary", kind_of(cd["changeSummary"]))
    cur = b("cur", F.when(k["currentVersion"].isin(*NUM), decimal_lexical(top["currentVersion"])))
    prev_top = b("prev_top", F.when(k["previousVersion"].isin(*NUM), decimal_lexical(top["previousVersion"])))
    if not legacy:
        tk, tx = k["timestamp"], top["timestamp"]
        # a DOUBLE or 19+ digits may or may not be an integer token: the raw token decides
        tj = F.to_json(tx)
        ambiguous = (tk == "double") | ((tk == "integer") & (F.length(tj) >= 19))
        token = b("token", F.when(ambiguous, F.from_json(F.col("value"), "timestamp string")["timestamp"]))
        plain = b("ms_plain", F.when(tk == "integer", tj))
    plan.next()
    # stage 4: rule lookups, the time, the entity state, the change description's previous version
    et = s["eventType"]
    r = plan.binds(rule_iri=F.try_element_at(maps["event_type"], et),
                   pattern=F.try_element_at(maps["pattern"], et),
                   lifecycle=F.try_element_at(maps["lifecycle"], et),
                   lifecycle_iri=F.try_element_at(maps["lifecycle_iri"], et))
    parsed = b("parsed", F.when(k["entity"] == "string", strict_json(s["entity"])))
    prev_cd = b("prev_cd", F.when(absent(k["previousVersion"]) & k["cd_prev"].isin(*NUM),
                                  decimal_lexical(cd["previousVersion"])))
    if legacy:
        ms_dec = b("ms_dec", rfc3339_ms(s["dateTime"]).cast("decimal(38,0)"))
    else:
        ms_dec = b("ms_dec", F.when(token.isNotNull(), token).otherwise(plain).try_cast("decimal(38,0)"))
        int_token = b("int_token", F.when(token.isNotNull(), token.rlike(r"^-?[0-9]+$"))
                      .otherwise(k["timestamp"] == "integer"))
    plan.next()

    # stage 5: derived values; the lineage edge's objects; the field changes
    state = F.when(k["entity"] == "string", parsed["v"]).otherwise(top["entity"])
    d = plan.binds(
        current=cur["lexical"], previous=F.coalesce(prev_top["lexical"], prev_cd["lexical"]), state=state,
        ms=ms_dec.try_cast("long"), is_lineage=F.coalesce(r["pattern"].isin("lineage-add", "lineage-remove"),
                                                            F.lit(False)))
    changes = b("changes", _change_entries(cd, _initial_entries(state, r["lifecycle"] == "om-event:Created", cd)))
    plan.next()
    k_state = b("k_state", kind_of(d["state"]))
    recursive = (k["recursive"] == "boolean") & F.try_variant_get(top["recursive"], "$", "boolean")
    cascade = b("cascade", F.when(r["lifecycle"].isin(*CASCADING) & recursive, _children(d["state"])))
    edge = _lineage_fields(plan, d["state"], d["is_lineage"])
    changes = b("changes2", _change_values(changes))
    plan.next()
    changes = b("changes3", _change_members(changes, s["entityFullyQualifiedName"],
                                            F.coalesce(r["lifecycle"] == "om-event:Created", F.lit(False))))
    plan.next()

    # stage: IRIs
    event = F.when(truthy(s["id"]), minted("event", F.lit(FAMILY), s["id"])).otherwise(
        minted("event", F.lit(FAMILY), s["entityId"], et, d["ms"].cast("string"),
               F.coalesce(s["userName"], F.lit("")), F.coalesce(d["current"], F.lit(""))))
    user, imp = s["userName"], s["impersonatedBy"]
    n = plan.binds(event=event, entity=F.when(d["is_lineage"], edge["to"]).otherwise(
        om_entity(s["entityType"], s["entityId"])),
        agent=F.when(truthy(user), om_named("user", user)), imp_agent=F.when(truthy(imp), om_named("user", imp)))
    # each field change's first error, once: checked list by list (_checks), the checks would otherwise
    # be three copies of the largest expression of the plan (generated again by every task)
    change_errors = b("change_errors", F.transform(changes, lambda c: F.struct(
        c["key"].alias("key"), (c["k"] == "initial").alias("initial"), _change_error(c).alias("error"))))
    plan.next()
    return SimpleNamespace(top=top, k=k, cd=cd, s=s, cur=cur, prev_top=prev_top, ms_dec=ms_dec,
                           int_token=None if legacy else int_token, r=r, parsed=parsed, prev_cd=prev_cd, d=d,
                           changes=changes, k_state=k_state, cascade=cascade, edge=edge, n=n,
                           change_errors=change_errors)


def _about(thread: Column, entity_type: Column, state: Column) -> list[Column]:
    """openmetadata._about: a thread's entity link, and the FQN it names."""
    about = F.try_variant_get(state, "$.about", "variant")
    link = F.when((F.lower(entity_type) == "thread") & (variant_kind(about) == "string"), _given(about.cast("string")))
    fqn = _given(F.regexp_extract(link, f"^{ENTITY_LINK}\\z", 1))
    return [triple(thread, om("aboutEntityLink"), literal(link)),
            triple(thread, om("aboutFullyQualifiedName"), literal(fqn))]


def _given(text: Column) -> Column:
    """An optional text, NULL when empty: the reference's ``or None`` (an empty text is as absent)."""
    return F.nullif(text, F.lit(""))


def _triples(v: SimpleNamespace) -> Column:
    """The event's triples, as an array of N-Triples lines (nulls dropped)."""
    top, k, cd, s, r, d, n = v.top, v.k, v.cd, v.s, v.r, v.d, v.n
    user, k_state, edge, changes, cascade = s["userName"], v.k_state, v.edge, v.changes, v.cascade
    ev, en = iri(n["event"]), iri(n["entity"])
    agent, imp_agent = iri(n["agent"]), iri(n["imp_agent"])
    current, previous, lifecycle = d["current"], d["previous"], r["lifecycle"]
    singles = [
        *event_triples(ev, event_type=r["rule_iri"], ms=d["ms"], entity=en, agent=agent,
                       lifecycle=r["lifecycle_iri"]),
        *agent_triples(agent),
        triple(ev, om("eventId"), literal(_given(s["id"]))),
        triple(ev, om("entityId"), literal(s["entityId"])),
        triple(ev, om("entityType"), literal(s["entityType"])),
        triple(ev, om("entityFullyQualifiedName"), literal(_given(s["entityFullyQualifiedName"]))),
        triple(ev, om("userName"), literal(_given(user))),
        triple(ev, om("userId"), literal(_given(s["userId"]))),
        triple(ev, om("impersonatedBy"), imp_agent),
        *agent_triples(imp_agent),
        triple(ev, om("recursive"), F.when(k["recursive"] == "boolean", safe_literal(
            F.to_json(top["recursive"]), XSD + "boolean"))),
        F.when(k["summary"] == "object", triple(ev, om("changeSummary"), json_literal(F.to_json(cd["changeSummary"])))),
        F.when(~absent(k_state), triple(ev, om("entityState"), json_literal(F.to_json(d["state"])))),
        triple(ev, om("previousVersion"), safe_literal(previous, DECIMAL)),
        triple(ev, om("currentVersion"), safe_literal(current, DECIMAL)),
    ]
    plain_entity = F.when(~d["is_lineage"], F.array(*entity_triples(en, asset_type=s["entityType"],
                                                                     fqn=_given(s["entityFullyQualifiedName"])),
                                                     *_about(en, s["entityType"], d["state"])))
    now = iri(minted("version", n["entity"], current))
    before = iri(minted("version", n["entity"], previous))
    versioned = (lifecycle != "om-event:HardDeleted") & previous.isNotNull() & (previous != current)
    made = (lifecycle == "om-event:Created") | versioned
    versions = F.when(current.isNotNull(), F.when(made, F.array(
        triple(now, RDF_TYPE(), om("EntityVersion")),
        triple(now, prov("specializationOf"), en),
        triple(now, om("versionNumber"), safe_literal(current, DECIMAL)),
        triple(now, prov("wasGeneratedBy"), ev),
        F.when(versioned, triple(now, prov("wasRevisionOf"), before)),
        F.when(versioned, triple(ev, prov("used"), before)),
    )).otherwise(F.array(triple(ev, prov("used"), now))))
    lineage = F.when(d["is_lineage"], _lineage_triples(edge, n["event"], r["pattern"] == "lineage-remove"))
    # a hard delete's changeDescription repeats the last change: checked above, mapped to nothing
    field_changes = F.when(F.coalesce(lifecycle, F.lit("")) != "om-event:HardDeleted",
                           flat(F.transform(changes, lambda c: _change_triples(c, n["event"], n["entity"],
                                                                               s["entityFullyQualifiedName"]))))
    children = flat(F.transform(F.filter(cascade, lambda c: c["on"]), lambda c: F.array(
        *entity_triples(iri(c["node"]), asset_type=c["type"], fqn=c["fqn"]), triple(ev, om("cascadesTo"), iri(c["node"])))))
    out = F.filter(cat(F.array(*singles), plain_entity, versions, lineage, field_changes, children),
                   lambda x: x.isNotNull())
    return out


def _checks(v: SimpleNamespace, *, family: str, legacy: bool) -> Checks:
    """The reference's checks, in its order: the first that fails is the line's quarantine reason."""
    k, cd, s, r = v.k, v.cd, v.s, v.r
    et, user, imp = s["eventType"], s["userName"], s["impersonatedBy"]
    cur, prev_top, prev_cd, ms_dec, parsed = v.cur, v.prev_top, v.prev_cd, v.ms_dec, v.parsed
    d, edge, change_errors, cascade, k_state, int_token = v.d, v.edge, v.change_errors, v.cascade, v.k_state, v.int_token
    # the checks up to the graph
    ck = Checks()
    ck.typed(k["eventType"], STR, "eventType", required=True, text=et)
    ck.add(r["rule_iri"].isNull(), "UNKNOWN_EVENT_TYPE", verbatim(
        F.lit("eventType: '"), F.substring(F.coalesce(et, F.lit("?")), 1, 200), F.lit(f"' is not an event type of {family}")))
    ck.typed(k["entityType"], STR, "entityType", required=True, text=s["entityType"])
    ck.typed(k["entityId"], STR, "entityId", required=True, text=s["entityId"])
    if legacy:
        ck.typed(k["dateTime"], STR, "dateTime", required=True, text=s["dateTime"])
        ck.add(ms_dec.isNull(), "BAD_TIMESTAMP", "dateTime: not an RFC 3339 date-time in range")
    else:
        ck.add(absent(k["timestamp"]), "MISSING_FIELD", "timestamp is required")
        ck.add(~int_token, "BAD_TYPE", got("timestamp: expected an integer", k["timestamp"]))
        ck.add(~F.coalesce(ms_dec.between(0, MAX_MS), F.lit(False)), "BAD_TIMESTAMP",
               ms_out_of_range("timestamp", ms_dec))
    ck.typed(k["userName"], STR, "userName")
    ck.typed(k["id"], STR, "id")
    for name, lex, kind in (("currentVersion", cur, k["currentVersion"]),
                            ("previousVersion", prev_top, k["previousVersion"])):
        ck.typed(kind, NUM, name)
        ck.add(lex["bad"], "BAD_TYPE", _version_detail(name, lex))
    with ck.guard(absent(k["previousVersion"])):
        ck.walk(k["changeDescription"], "changeDescription.previousVersion", "changeDescription")
        ck.typed(k["cd_prev"], NUM, "changeDescription.previousVersion")
        ck.add(prev_cd["bad"], "BAD_TYPE", _version_detail("changeDescription.previousVersion", prev_cd))
    ck.add((k["entity"] == "string") & parsed["bad"], "BAD_ASPECT_JSON", "entity: not one valid JSON value")
    parsed_kind = kind_of(parsed["v"])
    ck.add((k["entity"] == "string") & ~parsed["bad"] & ~parsed_kind.isin("object", "array", "null"), "BAD_ASPECT_JSON",
           got("entity: expected an object", parsed_kind))
    ck.add(~absent(k["entity"]) & ~k["entity"].isin("string", "object", "array"), "BAD_TYPE",
           got("entity: expected an object or a JSON string", k["entity"]))

    # the checks after the graph's nodes are known
    with ck.guard(d["is_lineage"]):
        _lineage_checks(ck, edge, k_state)
    with ck.guard(~d["is_lineage"]):
        ck.ident_pair(s["entityType"], s["entityId"], "entityId")
        ck.typed(k["entityFullyQualifiedName"], STR, "entityFullyQualifiedName")
    with ck.guard(truthy(user)):
        ck.ident(user, "userName")
    # again, after userName: the reference reads the FQN before it for an entity and after it for a
    # lineage edge, so a line with both faults gets the reference's reason either way (a check that
    # already failed above changes nothing here)
    ck.typed(k["entityFullyQualifiedName"], STR, "entityFullyQualifiedName")
    ck.typed(k["userId"], STR, "userId")
    ck.typed(k["impersonatedBy"], STR, "impersonatedBy")
    with ck.guard(truthy(imp)):
        ck.ident(imp, "impersonatedBy")
    ck.typed(k["recursive"], BOOL, "recursive")
    ck.walk(k["changeDescription"], "changeDescription.changeSummary", "changeDescription")
    ck.typed(k["summary"], OBJ, "changeDescription.changeSummary")
    with ck.guard(k["changeDescription"] == "object"):
        for _, key in LISTS:  # each list's type, then its items', list by list
            ck.typed(kind_of(cd[key]), LIST, f"changeDescription.{key}")
            ck.error(first_error(F.transform(F.filter(change_errors, _keyed(key)), lambda c: c["error"])))
    ck.error(first_error(F.transform(F.filter(change_errors, lambda c: c["initial"]), lambda c: c["error"])))
    ck.error(first_error(F.transform(cascade, _child_error)))
    return ck


# ---------------------------------------------------------------- cascades (openmetadata._cascade)


def _children(state: Column) -> Column:
    """Each element of ``entity.children``: struct<i, obj, kinds and texts of its type, id and
    fullyQualifiedName, on (an object with a type and an id), node>."""
    fields = "struct<type:variant,id:variant,fullyQualifiedName:variant>"
    first = F.transform(items(struct_of(state, ("children",))["children"]), lambda x, i: F.struct(
        i.alias("i"), (kind_of(x) == "object").alias("obj"), F.try_variant_get(x, "$", fields).alias("f")))
    kinds = extend(first, k_type=lambda c: kind_of(c["f"]["type"]), k_id=lambda c: kind_of(c["f"]["id"]),
                   k_fqn=lambda c: kind_of(c["f"]["fullyQualifiedName"]))
    texts = extend(kinds, type=lambda c: string_of(c["f"]["type"], c["k_type"]),
                   id=lambda c: string_of(c["f"]["id"], c["k_id"]),
                   fqn=lambda c: string_of(c["f"]["fullyQualifiedName"], c["k_fqn"]))
    ons = extend(texts, on=lambda c: c["obj"] & truthy(c["type"]) & truthy(c["id"]))
    return extend(ons, node=lambda c: F.when(c["on"], om_entity(c["type"], c["id"])))


def _child_error(c: Column) -> Column:
    path = F.concat(F.lit("entity.children["), c["i"].cast("string"), F.lit("]."))
    ck = Checks()
    with ck.guard(c["obj"]):
        ck.typed(c["k_type"], STR, at(path, "type"))
        ck.typed(c["k_id"], STR, at(path, "id"))
        with ck.guard(c["on"]):
            ck.ident_pair(c["type"], c["id"], at(path, "id"))
            ck.typed(c["k_fqn"], STR, at(path, "fullyQualifiedName"))
    return ck.column()


# ---------------------------------------------------------------- lineage (openmetadata._lineage)

_DETAILS = "entity.lineageDetails"
_REF = ("type", "id", "fullyQualifiedName")


def _lineage_fields(plan: Plan, state: Column, is_lineage: Column) -> dict:
    """The edge's objects (fromEntity, toEntity, lineageDetails and its pipeline): kinds and texts."""
    b = plan.bind
    e = b("edge", F.when(is_lineage, struct_of(state, ("fromEntity", "toEntity", "lineageDetails"))))
    plan.next()
    ends = b("ends", F.struct(struct_of(e["fromEntity"], _REF).alias("from"), struct_of(e["toEntity"], _REF).alias("to"),
                              struct_of(e["lineageDetails"], ("sqlQuery", "source", "pipeline", "columnsLineage"))
                              .alias("details"),
                              kind_of(e["fromEntity"]).alias("k_from"), kind_of(e["toEntity"]).alias("k_to"),
                              kind_of(e["lineageDetails"]).alias("k_details")))
    plan.next()
    details = ends["details"]
    kinds = b("ref_kinds", F.struct(
        *[kind_of(ends[end][f]).alias(f"k_{end}_{f}") for end in ("from", "to") for f in _REF],
        kind_of(details["sqlQuery"]).alias("k_sql"), kind_of(details["source"]).alias("k_source"),
        kind_of(details["pipeline"]).alias("k_pipe"), kind_of(details["columnsLineage"]).alias("k_cols"),
        struct_of(details["pipeline"], _REF).alias("pipe")))
    plan.next()
    out = {"k_from": ends["k_from"], "k_to": ends["k_to"], "k_details": ends["k_details"]}
    for name in ("k_sql", "k_source", "k_pipe", "k_cols"):
        out[name] = kinds[name]
    texts = {}
    for end in ("from", "to"):
        for f in _REF:
            out[f"k_{end}_{f}"] = kinds[f"k_{end}_{f}"]
            texts[f"{end}_{f}"] = string_of(ends[end][f], kinds[f"k_{end}_{f}"])
    pipe_kinds = b("pipe_kinds", F.struct(*[kind_of(kinds["pipe"][f]).alias(f) for f in _REF]))
    for name, value in texts.items():
        out[name] = b(name, value)
    out["sql"] = b("sql", string_of(details["sqlQuery"], kinds["k_sql"]))
    out["source"] = b("source", string_of(details["source"], kinds["k_source"]))
    out["has_pipe"] = b("has_pipe", (kinds["k_pipe"] == "object") & (F.to_json(details["pipeline"]) != "{}"))
    out["cols"] = b("cols", _column_lineage(details["columnsLineage"]))
    plan.next()
    for f in _REF:
        out[f"k_pipe_{f}"] = pipe_kinds[f]
        out[f"pipe_{f}"] = b(f"pipe_{f}", string_of(kinds["pipe"][f], pipe_kinds[f]))
    out["from"] = b("from_node", om_entity(out["from_type"], out["from_id"]))
    out["to"] = b("to_node", om_entity(out["to_type"], out["to_id"]))
    plan.next()
    out["via"] = b("via_node", F.when(out["has_pipe"], om_entity(out["pipe_type"], out["pipe_id"])))
    plan.next()
    return out


def _column_lineage(cols: Column) -> Column:
    """array of struct<i, obj, k_to, to, k_fn, fn, k_from (kind of fromColumns), froms: array of
    struct<j, k, text>> for each columnsLineage element."""
    fields = "struct<toColumn:variant,fromColumns:variant,function:variant>"
    first = F.transform(items(cols), lambda x, i: F.struct(
        i.alias("i"), (kind_of(x) == "object").alias("obj"), F.try_variant_get(x, "$", fields).alias("f")))
    second = extend(first, k_to=lambda c: kind_of(c["f"]["toColumn"]), k_fn=lambda c: kind_of(c["f"]["function"]),
                    k_from=lambda c: kind_of(c["f"]["fromColumns"]),
                    froms=lambda c: F.transform(items(c["f"]["fromColumns"]), lambda y, j: let(
                        {"k": kind_of(y), "y": y}, lambda z: F.struct(j.alias("j"), z["k"].alias("k"),
                                                                        string_of(z["y"], z["k"]).alias("text")))))
    return extend(second, to=lambda c: string_of(c["f"]["toColumn"], c["k_to"]),
                  fn=lambda c: string_of(c["f"]["function"], c["k_fn"]))


def _lineage_checks(ck: Checks, e: dict, k_state: Column) -> None:
    ck.add(absent(k_state), "MISSING_FIELD", "entity: a lineage event needs the edge object")
    ck.add(k_state != "object", "BAD_TYPE", "entity: a lineage event needs the edge object")
    for end, key in (("from", "fromEntity"), ("to", "toEntity")):
        ck.typed(e[f"k_{end}"], OBJ, f"entity.{key}", required=True)
        ck.typed(e[f"k_{end}_type"], STR, f"entity.{key}.type", required=True, text=e[f"{end}_type"])
        ck.typed(e[f"k_{end}_id"], STR, f"entity.{key}.id", required=True, text=e[f"{end}_id"])
        ck.ident_pair(e[f"{end}_type"], e[f"{end}_id"], f"entity.{key}.id")
        ck.typed(e[f"k_{end}_fullyQualifiedName"], STR, f"entity.{key}.fullyQualifiedName")
    ck.typed(e["k_details"], OBJ, _DETAILS)
    ck.typed(e["k_sql"], STR, f"{_DETAILS}.sqlQuery")
    ck.typed(e["k_source"], STR, f"{_DETAILS}.source")
    ck.typed(e["k_pipe"], OBJ, f"{_DETAILS}.pipeline")
    with ck.guard(e["has_pipe"]):
        ck.typed(e["k_pipe_type"], STR, f"{_DETAILS}.pipeline.type", required=True, text=e["pipe_type"])
        ck.typed(e["k_pipe_id"], STR, f"{_DETAILS}.pipeline.id", required=True, text=e["pipe_id"])
        ck.ident_pair(e["pipe_type"], e["pipe_id"], f"{_DETAILS}.pipeline.id")
        ck.typed(e["k_pipe_fullyQualifiedName"], STR, f"{_DETAILS}.pipeline.fullyQualifiedName")
    ck.typed(e["k_cols"], LIST, f"{_DETAILS}.columnsLineage")
    ck.error(first_error(F.transform(e["cols"], _column_error)))


def _column_error(c: Column) -> Column:
    path = F.concat(F.lit(f"{_DETAILS}.columnsLineage["), c["i"].cast("string"), F.lit("]"))
    ck = Checks()
    ck.add(~c["obj"], "BAD_TYPE", at(path, ": expected an object"))
    ck.typed(c["k_to"], STR, at(path, ".toColumn"))
    with ck.guard(truthy(c["to"])):
        ck.ident(c["to"], at(path, ".toColumn"))
        ck.typed(c["k_from"], LIST, at(path, ".fromColumns"))
        ck.error(first_error(F.transform(c["froms"], lambda f, j: F.coalesce(
            F.when(f["k"] != "string", reject("BAD_TYPE", got(_indexed(path, ".fromColumns", j, ": expected a string"),
                                                              f["k"]))),
            F.when(bad_identifier(f["text"]), reject("BAD_IDENTIFIER",
                                                     ident_detail(_indexed(path, ".fromColumns", j, ""), f["text"]))),
            F.when(~absent(c["k_fn"]) & (c["k_fn"] != "string"),
                   reject("BAD_TYPE", got(at(path, ".function: expected a string"), c["k_fn"])))))))
    return ck.column()


def _version_detail(path: str, lex: Column) -> Column:
    """terms.decimal_lexical's ValueError for a version decimal_lexical() calls bad, at ``path``."""
    return F.when(lex["range"], F.lit(f"{path}: version out of range (|v| < 1e15 required)")).otherwise(
        F.lit(f"{path}: version has more than 15 fraction digits"))


def _indexed(path: Column, key: str, i: Column, suffix: str) -> Column:
    """``path + key + "[i]" + suffix``: an element's place as the reference names it."""
    return F.concat(path, F.lit(key + "["), i.cast("string"), F.lit("]" + suffix))


def _column_node(fqn: Column) -> Column:
    return om_named("column", fqn)


def _lineage_triples(e: dict, event: Column, removed: Column) -> Column:
    trip: list[Column] = []
    for end in ("from", "to"):
        trip += entity_triples(iri(e[end]), asset_type=e[f"{end}_type"], fqn=e[f"{end}_fullyQualifiedName"])
    via = iri(e["via"])

    def details(ln):  # on the assertion node (shapes.lineage_triples)
        return [triple(ln, om("sqlQuery"), literal(e["sql"])), triple(ln, om("lineageSource"), literal(e["source"])),
                triple(ln, om("viaPipeline"), via)]

    link = lineage_triples(event, e["to"], e["from"], removed, details)
    trip += [F.when(e["has_pipe"], t) for t in
             entity_triples(via, asset_type=e["pipe_type"], fqn=e["pipe_fullyQualifiedName"])]

    def col_triples(c: Column) -> Column:
        def body(b):
            to_node = b["to_node"]
            to_trip = entity_triples(iri(to_node), fqn=c["to"], cls="Column")

            def from_triples(f: Column) -> Column:
                return let({"node": _column_node(f["text"])}, lambda fb: cat(
                    F.array(*entity_triples(iri(fb["node"]), fqn=f["text"], cls="Column")),
                    lineage_triples(event, to_node, fb["node"], removed,
                                    lambda ln: [triple(ln, om("transformOperation"), literal(c["fn"]))])))

            return cat(F.array(*to_trip), flat(F.transform(c["froms"], from_triples)))

        return F.when(truthy(c["to"]), let({"to_node": _column_node(c["to"])}, body))

    return cat(F.array(*trip), link, flat(F.transform(e["cols"], col_triples)))


# ---------------------------------------------------------------- field changes (openmetadata._field_changes)

_HANDLERS = rules()["openmetadataStructuredFields"]
_JSON_FIELDS = rules()["openmetadataJsonFields"]
_COLUMN_FIELDS = rules()["openmetadataColumnFields"]
ENTRY = "struct<k:string,key:string,i:int,it:variant>"


def _change_entries(cd: Column, initial: Column) -> Column:
    """Every field change of the three lists, in order, then the ``initial`` entries of a creation:
    struct<k, key, i, it (the item), obj, f (its name, oldValue and newValue)>."""
    def entry(kind: str, key: str):
        return lambda x, i: F.struct(F.lit(kind).alias("k"), F.lit(key).alias("key"), i.alias("i"), x.alias("it"))

    parts = [F.coalesce(F.transform(items(cd[key]), entry(kind, key)), F.array().cast(f"array<{ENTRY}>"))
             for kind, key in LISTS]
    return extend(F.concat(*parts, initial), obj=lambda c: kind_of(c["it"]) == "object",
                  f=lambda c: struct_of(c["it"], ("name", "oldValue", "newValue")))


#: a column on a level of the walk over columns and their nested columns, its fields read once
_NAMED = "struct<path:string,idx:string,on:boolean,local:string,tags:variant,children:variant>"


def _quoted(name: Column) -> Column:
    """openmetadata._quoted: a column name with a dot, in double quotes."""
    return F.when(F.contains(name, F.lit(".")), F.concat(F.lit('"'), name, F.lit('"'))).otherwise(name)


def _initial_entries(state: Column, created: Column, cd: Column) -> Column:
    """openmetadata.initial_fields / _initial_values: for a creation, the entity's tags, owners,
    domains and columns, then the tags of each column and nested column, level by level, those that
    are non-empty lists and not added or updated by the event's own change description, as entries of
    kind ``initial`` whose ``key`` is their path in the event and whose item is ``{"name": field
    name, "newValue": the list}``."""
    empty = F.array().cast(f"array<{ENTRY}>")
    top = struct_of(state, INITIAL_FIELDS)

    def candidate(name: Column, path: Column, value: Column, listed: bool = True) -> Column:
        return F.struct(name.alias("name"), path.alias("path"), value.alias("value"), F.lit(listed).alias("listed"))

    level = F.coalesce(F.transform(items(top["columns"]), lambda c, j: _named_column(
        F.concat(F.lit("entity.columns["), j.cast("string"), F.lit("]")), F.lit(""), j.cast("string"), c)),
        F.array().cast(f"array<{_NAMED}>"))
    walked = let({"w": _walk_columns(level)}, lambda b: F.concat(
        F.transform(b["w"], lambda x: candidate(F.concat(F.lit("columns."), x["local"], F.lit(".tags")),
                                                F.concat(x["path"], F.lit(".tags")), x["tags"])),
        F.transform(b["w"], lambda x: candidate(F.concat(F.lit("columns."), x["local"]),
                                                F.concat(x["path"], F.lit(".children")), x["children"], False))))
    parts = [F.array(*[candidate(F.lit(f), F.lit(f"entity.{f}"), top[f], f in MEMBER_LISTS)
                       for f in INITIAL_FIELDS]),
             walked]
    described = F.filter(F.concat(*[F.coalesce(F.transform(items(cd[key]), lambda x: let(
        {"n": struct_of(x, ("name",))["name"]}, lambda b: string_of(b["n"], kind_of(b["n"])))),
        F.array().cast("array<string>")) for key in ("fieldsAdded", "fieldsUpdated")]), lambda n: n.isNotNull())
    def present(c: Column) -> Column:  # openmetadata.initial_fields: a member list of another value but null or ""
        k = kind_of(c["value"])
        return c["listed"] & ~F.coalesce(k.isin("array", "null"), F.lit(True)) & \
            F.coalesce(string_of(c["value"], k) != "", F.lit(True))

    lists = F.filter(F.concat(*parts), lambda c: (((kind_of(c["value"]) == "array") & (F.size(items(c["value"])) > 0))
                                                  | present(c)) & ~F.array_contains(described, c["name"]))
    entries = F.transform(lists, lambda c, i: F.struct(
        F.lit("initial").alias("k"), c["path"].alias("key"), i.alias("i"),
        F.to_variant_object(F.struct(c["name"].alias("name"), c["value"].alias("newValue"))).alias("it")))
    return F.when(created & (kind_of(state) == "object"), entries).otherwise(empty)


def _named_column(path: Column, prefix: Column, idx: Column, c: Column) -> Column:
    """The column ``c`` (a variant) as an element of a level of the walk (_NAMED): its path in the
    event, index, whether it has a name, its name as its field changes name it, tags and children."""
    return let({"f": struct_of(c, ("name", "tags", "children"))}, lambda b: let(
        {"name": string_of(b["f"]["name"], kind_of(b["f"]["name"]))}, lambda n: F.struct(
            path.alias("path"), idx.alias("idx"), truthy(n["name"]).alias("on"),
            F.concat(prefix, _quoted(n["name"])).alias("local"), b["f"]["tags"].alias("tags"),
            b["f"]["children"].alias("children"))))


def _walk_columns(level: Column) -> Column:
    """openmetadata._walk_columns: from a level of columns (_NAMED), each named column and then its
    nested columns (``children``), level by level, as _NAMED elements."""
    parts = []
    for depth in range(COLUMN_LEVELS):
        on = F.filter(level, lambda x: x["on"])
        parts.append(on)
        if depth + 1 < COLUMN_LEVELS:
            level = F.flatten(F.transform(on, lambda x: F.coalesce(F.transform(items(x["children"]), lambda c, k: _named_column(
                F.concat(x["path"], F.lit(".children["), k.cast("string"), F.lit("]")), F.concat(x["local"], F.lit(".")),
                F.concat(x["idx"], F.lit("-"), k.cast("string")), c)), F.array().cast(f"array<{_NAMED}>"))))
    return F.concat(*parts)


def _column_tags(level: Column) -> Column:
    """openmetadata.column_tags: each walked column's tags (_walk_columns): struct<name
    (``columns.A.B.tags``), path (in the event), idx (``j-k-…``), value (the tags, any JSON value)>."""
    return F.transform(_walk_columns(level), lambda x: F.struct(
        F.concat(F.lit("columns."), x["local"], F.lit(".tags")).alias("name"),
        F.concat(x["path"], F.lit(".tags")).alias("path"), x["idx"].alias("idx"), x["tags"].alias("value")))


def _nested_columns(name: Column) -> Column:
    """openmetadata.nested_columns: PATH of a change named ``columns.PATH`` that changes the struct
    column PATH's nested columns (its last name none of a column's own fields); else null."""
    own = name.rlike(_COLUMN_FIELD) & F.array_contains(F.array(*[F.lit(f) for f in _COLUMN_FIELDS]),
                                                       F.regexp_extract(name, _COLUMN_FIELD, 2))
    return F.when(name.startswith("columns.") & (F.length(name) > len("columns.")) & ~own,
                  F.substring(name, len("columns.") + 1, 2**31 - 1))


def _change_values(changes: Column) -> Column:
    """+ k_name, name, nested (openmetadata.nested_columns), handler, and the old and new values (JSON
    text of the known JSON-valued fields and of nested columns decoded strictly,
    openmetadata._field_value), with their kinds."""
    json_fields = F.array(*[F.lit(f) for f in _JSON_FIELDS])

    def decoded(c: Column, which: str) -> Column:
        x = c["f"][which]

        def body(z):
            last = F.substring_index(F.coalesce(c["name"], F.lit("")), ".", -1)
            # a creation's initial values are the entity's own JSON, not JSON text (openmetadata._initial_values)
            decode = ((z["k"] == "string") & F.substring(z["t"], 1, 1).isin("[", "{") & (c["k"] != "initial")
                      & (F.array_contains(json_fields, last) | c["nested"].isNotNull()))
            return F.coalesce(F.when(decode, strict_json(z["t"]))["v"], z["x"])

        return let({"x": x, "k": kind_of(x), "t": F.when(kind_of(x) == "string", x.cast("string"))}, body)

    named = extend(extend(changes, k_name=lambda c: kind_of(c["f"]["name"])),
                   name=lambda c: string_of(c["f"]["name"], c["k_name"]))
    values = extend(extend(named, nested=lambda c: _nested_columns(c["name"])),
                    old=lambda c: decoded(c, "oldValue"), new=lambda c: decoded(c, "newValue"),
                    handler=lambda c: F.when(c["nested"].isNotNull(), F.lit("columns")).otherwise(
                        F.try_element_at(table(_HANDLERS), F.substring_index(c["name"], ".", -1))))
    return extend(values, k_old=lambda c: kind_of(c["old"]), k_new=lambda c: kind_of(c["new"]))


#: a member's fields whose kind and text the checks and keys read
MEMBER_FIELDS = ("tagFQN", "source", "name", "type", "fullyQualifiedName", "id")
#: what is read of a member: those fields, and a column's tags and nested columns (which a dropped one
#: takes with it)
_MEMBER_READ = MEMBER_FIELDS + ("tags", "children")
_MEMBER_FIELDS_TYPE = "struct<" + ",".join(f"{n}:variant" for n in _MEMBER_READ) + ">"
_MEMBER = f"struct<side:string,i:int,obj:boolean,f:{_MEMBER_FIELDS_TYPE},json:string,mk:string,vk:string>"


def _change_members(changes: Column, fqn: Column, created: Column) -> Column:
    """+ members (tags, owners, columns of the old value, unless an addition, then of the new value,
    unless a deletion), the winning ones per side (dict semantics: the last element with a key
    wins), the run of a pipelineStatus value, and the tags of the columns the change drops and (not in
    a creation: openmetadata._structured's ``appeared``) adds."""
    def elements(value: Column, k: Column) -> Column:
        return F.when(k == "object", F.array(value)).when(k == "array", items(value))

    def sides(c: Column) -> Column:
        def tagged(side: str, value: Column, k: Column) -> Column:
            members = F.transform(elements(value, k), lambda x, i: F.struct(
                F.lit(side).alias("side"), i.alias("i"), (kind_of(x) == "object").alias("obj"),
                struct_of(x, _MEMBER_READ).alias("f"), F.when(c["handler"] == "columns", F.to_json(x)).alias("json"),
                kind_of(x).alias("mk"), F.lit(None).cast("string").alias("vk")))
            # openmetadata._members: a listed value that is none (null, absent, "") holds nothing; one that
            # is no list nor object is an element of its own, which _member_error quarantines
            bad = c["handler"].isin(*MEMBER_LISTS) & ~k.isin("object", "array", "null") & \
                F.coalesce(string_of(value, k) != "", F.lit(True))
            return F.when(bad, F.array(F.struct(
                F.lit(side).alias("side"), F.lit(-1).alias("i"), F.lit(False).alias("obj"),
                F.lit(None).cast(_MEMBER_FIELDS_TYPE).alias("f"), F.lit(None).cast("string").alias("json"),
                F.lit(None).cast("string").alias("mk"), k.alias("vk")))).otherwise(members)

        empty = F.array().cast(f"array<{_MEMBER}>")
        return F.when(c["handler"].isin("tags", "owners", "domains", "columns"), F.concat(
            F.coalesce(F.when(~c["k"].isin("added", "initial"), tagged("old", c["old"], c["k_old"])), empty),
            F.coalesce(F.when(c["k"] != "deleted", tagged("new", c["new"], c["k_new"])), empty)))

    with_sides = extend(changes, members=sides, run=lambda c: F.when(
        (c["handler"] == "pipeline-status") & (c["k_new"] == "object"), _run_fields(c["new"])))
    # a struct column's nested columns are keyed below it (openmetadata._structured)
    with_members = F.transform(with_sides, lambda c: c.withField("members", _members(c["handler"], c["members"], F.when(
        c["nested"].isNotNull() & truthy(fqn), F.concat(fqn, F.lit("."), c["nested"])).otherwise(fqn))))
    return extend(extend(with_members, win=lambda c: _winners(c["members"])), dropped=lambda c: _dropped(c, fqn),
                  appeared=lambda c: F.when(~created, _dropped(c, fqn, side="new")))


def _dropped(c: Column, fqn: Column, *, side: str = "old") -> Column:
    """openmetadata._dropped_column_tags: the old columns (winners) not among the new ones, with a name,
    and their nested columns (_column_tags), those with tags: struct<at (path of the tags below the
    old value), idx (``j-k-…``), name (``columns.A.B.tags``), tags, members (of the tags), win>. The
    names of columns dropped from a struct column (the change ``columns.addr``) start with its path.
    ``side="new"``: the same of the new columns not among the old ones (``side="appeared"`` there)."""
    other = "new" if side == "old" else "old"
    prefix = F.coalesce(F.concat(c["nested"], F.lit(".")), F.lit(""))
    gone = F.filter(c["win"], lambda m: (m["side"] == side) & ~F.exists(
        c["win"], lambda o: (o["side"] == other) & (o["key"] == m["key"])) & truthy(m["name"]))

    def walk(m: Column) -> Column:
        return _column_tags(F.array(F.struct(
            F.concat(F.lit("["), m["i"].cast("string"), F.lit("]")).alias("path"), m["i"].cast("string").alias("idx"),
            F.lit(True).alias("on"), F.concat(prefix, _quoted(m["name"])).alias("local"), m["tags"].alias("tags"),
            m["children"].alias("children"))))

    found = F.filter(F.flatten(F.transform(gone, walk)),
                     lambda t: (kind_of(t["value"]) == "array") & (F.size(items(t["value"])) > 0))

    def tags(t: Column) -> Column:
        elements = F.transform(items(t["value"]), lambda x, i: F.struct(
            F.lit(side).alias("side"), i.alias("i"), (kind_of(x) == "object").alias("obj"),
            struct_of(x, _MEMBER_READ).alias("f"), F.lit(None).cast("string").alias("json"),
            kind_of(x).alias("mk"), F.lit(None).cast("string").alias("vk")))
        return let({"ms": _members(F.lit("tags"), elements, fqn)}, lambda b: F.struct(
            t["path"].alias("at"), t["idx"].alias("idx"), t["name"].alias("name"), t["value"].alias("tags"),
            b["ms"].alias("members"), _winners(b["ms"]).alias("win")))

    return F.when(c["handler"] == "columns", F.transform(found, tags))


def _members(handler: Column, members: Column, fqn: Column) -> Column:
    """Each member element with its kinds, texts, key, class, node and error."""
    kinds = extend(members, **{f"k_{n}": (lambda m, n=n: kind_of(m["f"][n])) for n in MEMBER_FIELDS})
    texts = extend(kinds, **{f"s_{n}": (lambda m, n=n: string_of(m["f"][n], m[f"k_{n}"])) for n in MEMBER_FIELDS})

    def member(m: Column) -> Column:
        glossary = F.coalesce(m["s_source"] == "Glossary", F.lit(False))
        team = (handler == "owners") & F.coalesce(m["s_type"] == "team", F.lit(False))
        col_fqn = F.when(truthy(m["s_fullyQualifiedName"]), m["s_fullyQualifiedName"]).when(
            truthy(m["s_name"]) & truthy(fqn), F.concat(fqn, F.lit("."), _quoted(m["s_name"])))
        on = m["obj"] & (F.when(handler == "tags", truthy(m["s_tagFQN"]))
                         .when(handler == "owners", truthy(m["s_name"]))
                         .when(handler == "domains", truthy(m["s_id"]))
                         .otherwise(col_fqn.isNotNull()))
        key = (F.when(handler == "tags", m["s_tagFQN"])
               .when(handler == "owners", F.concat(F.when(team, "team:").otherwise("user:"), m["s_name"]))
               .when(handler == "domains", m["s_id"])
               .otherwise(col_fqn))
        cls = F.when(handler == "tags", F.when(glossary, "GlossaryTerm").otherwise("Tag"))
        node = (F.when(handler == "tags", F.when(glossary, om_named("glossaryTerm", m["s_tagFQN"]))
                       .otherwise(om_named("tag", m["s_tagFQN"])))
                .when(handler == "owners", F.when(team, om_named("team", m["s_name"])).otherwise(om_named("user", m["s_name"])))
                .when(handler == "domains", om_entity(F.lit("domain"), m["s_id"]))
                .otherwise(om_named("column", col_fqn)))
        return m.withField("on", on).withField("key", F.when(on, key)).withField("cls", cls) \
            .withField("node", F.when(on, node)).withField("team", team).withField("col_fqn", col_fqn)

    return F.transform(texts, member)


def _winners(members: Column) -> Column:
    """The members that are the last with their key on their side (Python dict semantics)."""
    return let({"m": members}, lambda c: F.transform(F.filter(c["m"], lambda m, i: m["on"] & ~F.exists(
        F.slice(c["m"], i + 2, F.greatest(F.size(c["m"]), F.lit(1))),
        lambda o: o["on"] & (o["side"] == m["side"]) & (o["key"] == m["key"]))), lambda m: F.struct(
        m["side"].alias("side"), m["key"].alias("key"), m["cls"].alias("cls"), m["node"].alias("node"),
        m["json"].alias("json"), m["i"].alias("i"), m["s_name"].alias("name"), m["f"]["tags"].alias("tags"),
        m["f"]["children"].alias("children"))))


def _keyed(key: str):
    return lambda c: c["key"] == key


def _change_error(c: Column) -> Column:
    initial = c["k"] == "initial"  # its key is its path (entity.tags, …)
    path = F.when(initial, c["key"]).otherwise(
        F.concat(F.lit("changeDescription."), c["key"], F.lit("["), c["i"].cast("string"), F.lit("]")))
    ck = Checks()
    ck.add(~c["obj"], "BAD_TYPE", at(path, ": expected an object"))
    ck.typed(c["k_name"], STR, at(path, ".name"), required=True, text=c["name"])
    with ck.guard(c["run"].isNotNull()):
        _run_checks(ck, c["run"], at(path, ".newValue"))
    ck.error(first_error(F.transform(c["members"], lambda m: _member_error(c["handler"], m, path, initial))))
    def column_tags_error(value: str):  # one argument: F.transform reads a second one as the index
        return lambda d: first_error(F.transform(d["members"], lambda m: _member_error(
            F.lit("tags"), m, F.concat(path, F.lit(value), d["at"]), F.lit(True))))
    ck.error(first_error(F.transform(c["dropped"], column_tags_error(".oldValue"))))
    ck.error(first_error(F.transform(c["appeared"], column_tags_error(".newValue"))))
    return ck.column()


def _member_error(handler: Column, m: Column, path: Column, initial: Column) -> Column:
    value = F.concat(path, F.when(~initial, F.concat(F.lit("."), m["side"], F.lit("Value"))).otherwise(F.lit("")))
    where = F.concat(value, F.lit("["), m["i"].cast("string"), F.lit("]"))
    ck = Checks()
    with ck.guard(handler.isin(*MEMBER_LISTS)):  # ut46a #1: openmetadata._members
        ck.add(m["vk"].isNotNull(), "BAD_ASPECT_JSON", got(at(value, ": expected a list of objects"), m["vk"]))
        ck.add(m["vk"].isNull() & ~m["obj"], "BAD_ASPECT_JSON", got(at(where, ": expected an object"), m["mk"]))
    with ck.guard(m["obj"] & (handler == "tags")):
        ck.typed(m["k_tagFQN"], STR, at(where, ".tagFQN"))
        with ck.guard(truthy(m["s_tagFQN"])):
            ck.typed(m["k_source"], STR, at(where, ".source"))
            ck.ident(m["s_tagFQN"], at(where, ".tagFQN"))
    with ck.guard(m["obj"] & (handler == "owners")):
        ck.typed(m["k_name"], STR, at(where, ".name"))
        with ck.guard(truthy(m["s_name"])):
            ck.typed(m["k_type"], STR, at(where, ".type"))
            ck.ident(m["s_name"], at(where, ".name"))
    with ck.guard(m["obj"] & (handler == "domains")):  # openmetadata._members
        ck.typed(m["k_id"], STR, at(where, ".id"))
        with ck.guard(truthy(m["s_id"])):
            ck.typed(m["k_fullyQualifiedName"], STR, at(where, ".fullyQualifiedName"))
            ck.ident(m["s_id"], at(where, ".id"))
    with ck.guard(m["obj"] & (handler == "columns")):
        ck.typed(m["k_fullyQualifiedName"], STR, at(where, ".fullyQualifiedName"))
        ck.typed(m["k_name"], STR, at(where, ".name"))
        with ck.guard(m["col_fqn"].isNotNull()):
            ck.ident(m["col_fqn"], at(where, ".fullyQualifiedName"))
    return ck.column()


#: openmetadata.COLUMN_FIELD for Java's regex engine: . matches any character, the match is the whole name
_COLUMN_FIELD = "(?s)^" + COLUMN_FIELD + r"\z"


def _about_column(change: Column, name: Column, fqn: Column, nested: Column | None = None) -> Column:
    """openmetadata._about_column: a column field's change, or a struct column's nested columns'
    (``nested``: _nested_columns of the name), → the column node (null: not linked)."""
    nested = _nested_columns(name) if nested is None else nested
    col_fqn = F.concat(fqn, F.lit("."), F.coalesce(nested, F.regexp_extract(name, _COLUMN_FIELD, 1)))
    node = iri(_column_node(col_fqn))
    return F.when(truthy(fqn) & (nested.isNotNull() | name.rlike(_COLUMN_FIELD)) & ~bad_identifier(col_fqn), F.array(
        triple(change, om("aboutColumn"), node), *entity_triples(node, fqn=col_fqn, cls="Column")))


def _change_triples(c: Column, event: Column, entity: Column, fqn: Column) -> Column:
    change = iri(change_node(event, c["k"], c["i"]))
    base = F.array(*field_change_triples(event, c["k"], c["name"], index=c["i"],
                                         old=value_literal(c["old"], c["k_old"]),
                                         new=value_literal(c["new"], c["k_new"])))
    members = F.transform(c["members"], lambda m: _member_node_triples(c["handler"], m))

    def diffs(w):
        old = F.filter(w["w"], lambda m: m["side"] == "old")
        new = F.filter(w["w"], lambda m: m["side"] == "new")
        return let({"old": old, "new": new}, lambda s: _member_changes(c["handler"], change, s["old"], s["new"]))

    def dropped(d: Column, kind: str = "dropped") -> Column:  # openmetadata._dropped_column_tags
        index = F.concat(c["k"], F.lit("-"), c["i"].cast("string"), F.lit("-"), d["idx"])
        name = d["name"]
        node = iri(change_node(event, kind, index))
        tags = value_literal(d["tags"], F.lit("array"))
        none = F.filter(d["win"], lambda m: F.lit(False))  # no members, of the same type
        return cat(F.array(*field_change_triples(event, kind, name, index=index, old=tags if kind == "dropped" else None,
                                                 new=tags if kind == "appeared" else None)),
                   _about_column(node, name, fqn),
                   flat(F.transform(d["members"], lambda m: _member_node_triples(F.lit("tags"), m))),
                   _member_changes(F.lit("tags"), node, d["win"], none) if kind == "dropped"
                   else _member_changes(F.lit("tags"), node, none, d["win"]))

    run = F.when(c["run"].isNotNull(), _run_triples(c["run"], entity))
    return cat(base, _about_column(change, c["name"], fqn, c["nested"]), flat(members), let({"w": c["win"]}, diffs), run,
               flat(F.transform(c["dropped"], lambda d: dropped(d))),  # one argument: a second is the index
               flat(F.transform(c["appeared"], lambda d: dropped(d, "appeared"))))


def _member_node_triples(handler: Column, m: Column) -> Column:
    """Graph.entity / Graph.agent of a member's node."""
    return F.when(m["on"], F.array(
        triple(iri(m["node"]), RDF_TYPE(), F.when(handler == "owners", prov("Agent")).otherwise(om("MetadataEntity"))),
        F.when(handler == "tags", triple(iri(m["node"]), RDF_TYPE(), om_term(m["cls"])))
        .when(handler == "columns", triple(iri(m["node"]), RDF_TYPE(), om("Column")))
        .when(m["team"], triple(iri(m["node"]), RDF_TYPE(), prov("Organization"))),
        F.when(handler != "owners", triple(iri(m["node"]), om("fullyQualifiedName"), literal(
            F.when(handler == "tags", m["s_tagFQN"]).when(handler == "domains", m["s_fullyQualifiedName"])
            .otherwise(m["col_fqn"]))))))


_ADDED = {"tags": "<" + expand("om-event:addedTag") + ">", "owners": "<" + expand("om-event:addedOwner") + ">",
          "domains": "<" + expand("om-event:addedDomain") + ">", "columns": "<" + expand("om-event:addedSchemaField") + ">"}
_REMOVED = {"tags": "<" + expand("om-event:removedTag") + ">", "owners": "<" + expand("om-event:removedOwner") + ">",
            "domains": "<" + expand("om-event:removedDomain") + ">",
            "columns": "<" + expand("om-event:removedSchemaField") + ">"}


def _member_changes(handler: Column, change: Column, old: Column, new: Column) -> Column:
    """events.member_changes: new − old added, old − new removed (per class for tags), and for
    columns the members whose JSON changed."""
    def prop(props: dict, m: Column) -> Column:
        tag_prop = F.when(m["cls"] == "GlossaryTerm", F.lit(props["tags"].replace("Tag>", "GlossaryTerm>"))) \
            .otherwise(F.lit(props["tags"]))
        return F.when(handler == "tags", tag_prop).otherwise(F.try_element_at(table(props), handler))

    def missing_from(a: Column, other: Column) -> Column:
        return F.filter(a, lambda m: ~F.exists(other, lambda o: (o["key"] == m["key"]) & o["cls"].eqNullSafe(m["cls"])))

    added = F.transform(missing_from(new, old), lambda m: triple(change, prop(_ADDED, m), iri(m["node"])))
    removed = F.transform(missing_from(old, new), lambda m: triple(change, prop(_REMOVED, m), iri(m["node"])))
    changed = F.when(handler == "columns", F.transform(
        F.filter(new, lambda m: F.exists(old, lambda o: (o["key"] == m["key"]) & (o["json"] != m["json"]))),
        lambda m: triple(change, om("changedSchemaField"), iri(m["node"]))))
    return cat(added, removed, changed)


# ---------------------------------------------------------------- pipeline runs (openmetadata._pipeline_run)

_RUN_FIELDS = ("timestamp", "executionId", "executionStatus", "endTime", "executedBy", "inputs", "outputs")


def _run_fields(status: Column) -> Column:
    """A pipelineStatus value's fields, kinds, texts and IO lists, in one struct."""
    f = struct_of(status, _RUN_FIELDS)

    def body(c):
        f = c["f"]
        executor = struct_of(f["executedBy"], ("name", "type"))
        k = {n: kind_of(f[n]) for n in _RUN_FIELDS}

        def io(key):
            return F.transform(items(f[key]), lambda x: let(
                {"x": x}, lambda z: F.struct((kind_of(z["x"]) == "object").alias("obj"),
                                             kind_of(F.try_variant_get(z["x"], "$.datasetFQN", "variant")).alias("k"),
                                             F.try_variant_get(z["x"], "$.datasetFQN", "string").alias("text"))))

        return F.struct(*[k[n].alias("k_" + n) for n in _RUN_FIELDS],
                        F.when(k["timestamp"] == "integer", F.to_json(f["timestamp"])).alias("started"),
                        string_of(f["executionId"], k["executionId"]).alias("exe"),
                        string_of(f["executionStatus"], k["executionStatus"]).alias("status"),
                        F.when(k["endTime"] == "integer", F.to_json(f["endTime"])).alias("ended"),
                        (k["executedBy"] == "object").alias("has_executor_obj"),
                        F.when(k["executedBy"] == "object", F.to_json(f["executedBy"]) != "{}").alias("executor_nonempty"),
                        kind_of(executor["name"]).alias("k_ex_name"),
                        kind_of(executor["type"]).alias("k_ex_type"),
                        F.try_variant_get(executor["name"], "$", "string").alias("ex_name_any"),
                        F.try_variant_get(executor["type"], "$", "string").alias("ex_type_any"),
                        io("inputs").alias("inputs"), io("outputs").alias("outputs"))

    def finish(r):
        x = r["r"]
        execution = F.when(truthy(x["exe"]), x["exe"]).otherwise(x["started"])
        ex_name = F.when(x["k_ex_name"] == "string", x["ex_name_any"])
        return x.withField("execution", execution).withField("ex_name", ex_name).withField(
            "team", F.coalesce(F.when(x["k_ex_type"] == "string", x["ex_type_any"]) == "team", F.lit(False))) \
            .withField("started_ms", x["started"].try_cast("decimal(38,0)")) \
            .withField("ended_ms", x["ended"].try_cast("decimal(38,0)"))

    return let({"r": let({"f": f}, body)}, finish)


def _run_checks(ck: Checks, r: Column, path) -> None:
    ck.typed(r["k_timestamp"], INT, at(path, ".timestamp"))
    ck.typed(r["k_executionId"], STR, at(path, ".executionId"))
    with ck.guard(r["execution"].isNotNull()):
        ck.typed(r["k_executionStatus"], STR, at(path, ".executionStatus"))
        ck.add(r["started"].isNotNull() & ~F.coalesce(r["started_ms"].between(0, MAX_MS), F.lit(False)),
               "BAD_TIMESTAMP", ms_out_of_range(at(path, ".timestamp"), r["started_ms"]))
        ck.typed(r["k_endTime"], INT, at(path, ".endTime"))
        ck.add(r["ended"].isNotNull() & ~F.coalesce(r["ended_ms"].between(0, MAX_MS), F.lit(False)),
               "BAD_TIMESTAMP", ms_out_of_range(at(path, ".endTime"), r["ended_ms"]))
        ck.typed(r["k_executedBy"], OBJ, at(path, ".executedBy"))
        with ck.guard(F.coalesce(r["executor_nonempty"], F.lit(False))):
            ck.typed(r["k_ex_name"], STR, at(path, ".executedBy.name"))
            with ck.guard(truthy(r["ex_name"])):
                ck.typed(r["k_ex_type"], STR, at(path, ".executedBy.type"))
                ck.ident(r["ex_name"], at(path, ".executedBy.name"))
        for key in ("inputs", "outputs"):
            ck.typed(r["k_" + key], LIST, at(path, "." + key))
            ck.error(first_error(F.transform(r[key], _io_error(path, key))))


def _io_error(path, key: str):
    return lambda it, i: F.when(it["obj"] & ~absent(it["k"]) & (it["k"] != "string"), reject(
        "BAD_TYPE", got(_indexed(path if isinstance(path, Column) else F.lit(path), "." + key, i,
                                 ".datasetFQN: expected a string"), it["k"])))


def _io_triple(rn: Column, prop: str):
    return lambda it: F.when(it["obj"] & (it["k"] == "string"), triple(rn, om(prop), literal(it["text"])))


def _run_triples(r: Column, pipeline: Column) -> Column:
    def body(b):
        rn, agent = b["rn"], b["agent"]
        io = []
        for key, prop in (("inputs", "inputFQN"), ("outputs", "outputFQN")):
            io.append(F.transform(r[key], _io_triple(rn, prop)))
        trip = F.array(
            triple(rn, RDF_TYPE(), om("Run")),
            triple(rn, om("runOf"), iri(pipeline)),
            triple(rn, om("executionStatus"), literal(r["status"])),
            triple(rn, prov("startedAtTime"), datetime_literal(r["started_ms"].try_cast("long"))),
            triple(rn, prov("endedAtTime"), datetime_literal(r["ended_ms"].try_cast("long"))),
            triple(rn, prov("wasAssociatedWith"), agent),
            *agent_triples(agent, r["team"]),
        )
        return cat(trip, *io)

    agent = F.when(F.coalesce(r["executor_nonempty"], F.lit(False)) & truthy(r["ex_name"]),
                   F.when(r["team"], om_named("team", r["ex_name"])).otherwise(om_named("user", r["ex_name"])))
    return F.when(r["execution"].isNotNull(), let({"rn": iri(minted("run", pipeline, r["execution"])),
                                                   "agent": iri(agent)}, body))


# ---------------------------------------------------------------- legacy dateTime (terms.rfc3339_to_ms)


def rfc3339_ms(text: Column) -> Column:
    """terms.rfc3339_to_ms, or null where it raises BadTimestamp."""
    rx = rf"^{RFC3339_PATTERN}\z"

    def parts(c):
        def num(n):
            return F.regexp_extract(c["s"], rx, n).try_cast("long")

        return {"ok": c["s"].rlike(rx), "y": num(1), "mo": num(2), "d": num(3), "h": num(4), "mi": num(5),
                "sec": num(6), "frac": F.regexp_extract(c["s"], rx, 7), "sign": F.regexp_extract(c["s"], rx, 9),
                "oh": num(10), "om": num(11)}

    return let({"s": text}, lambda c: let(parts(c), _rfc3339_body))


def _rfc3339_body(c: dict) -> Column:
    y, mo, d, h, mi, sec, frac, sign, oh, om_ = (c[n] for n in ("y", "mo", "d", "h", "mi", "sec", "frac", "sign",
                                                                "oh", "om"))
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    month_days = F.array(*[F.lit(x) for x in (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)])
    dim = F.try_element_at(month_days, mo.cast("int")) + F.when((mo == 2) & leap, 1).otherwise(0)
    valid = (c["ok"] & (y >= 1) & mo.between(1, 12) & (d >= 1) & (d <= dim) & (h <= 23) & (mi <= 59)
             & (sec <= 59) & ((sign == "") | ((oh <= 23) & (om_ <= 59))))
    # days_from_civil (H. Hinnant), y ≥ 1 so every division is of non-negatives
    y2 = y - F.when(mo <= 2, 1).otherwise(0)
    era = F.floor(y2 / 400)
    yoe = y2 - era * 400
    mp = (mo + 9) % 12
    doy = F.floor((mp * 153 + 2) / 5) + d - 1
    doe = yoe * 365 + F.floor(yoe / 4) - F.floor(yoe / 100) + doy
    days = era * 146097 + doe - 719468
    frac_ms = F.substring(F.concat(frac, F.lit("000")), 1, 3).cast("long")
    offset = F.when(sign == "", 0).otherwise((oh * 60 + om_) * F.when(sign == "+", 1).otherwise(-1))
    ms = ((days * 86400 + h * 3600 + mi * 60 + sec) * 1000 + frac_ms - offset * 60000).cast("long")
    return F.when(valid & ms.between(0, MAX_MS), ms)


__all__ = ["openmetadata", "openmetadata_legacy"]
