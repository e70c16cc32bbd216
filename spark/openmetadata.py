"""OpenMetadata ChangeEvent 2.x and the older (dateTime) change event → triples, in Spark SQL.

Mirrors changeprov.mapping.openmetadata line by line: the same checks in the same order (so the
same quarantine reason), the same IRIs and triples. Only native Spark SQL functions; the rules
table (rules.json) drives the event types, lifecycles, JSON-valued and structured fields.

Two things a variant cannot tell and the raw line can:

* ``1.0`` and ``1`` are the same variant (Spark normalises decimals), but the reference rejects a
  fractional JSON token where it needs an integer (``timestamp``). The top-level ``timestamp``
  token is therefore read from the raw line with ``from_json(value, 'timestamp string')``, which
  keeps Jackson's text of the token (``"1.0"`` vs ``"1"``). The mapper reads the ``value`` column
  (the raw line) of the decoded DataFrame for this (``raw`` argument).
* Integers of more than 38 digits become doubles in a variant; for the timestamp the raw token
  covers that too. Elsewhere (pipelineStatus times) the variant's type is used: a ``1.0`` there
  counts as an integer (see the report in tests/test_spark_openmetadata.py).
"""

from __future__ import annotations

import json

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.decode import MAX_DEPTH
from changeprov.mapping.terms import IRI_ESCAPES
from changeprov.mapping.vocab import ID, OM_ENTITY, expand, rules
from changeprov.spark.decode import _count, _overflowing_number, _trailing_data, max_depth, reject
from changeprov.spark.family import Family
from changeprov.spark.stages import Plan
from changeprov.spark.sqlterms import (
    CONTROL_CLASS, IRI_ESCAPED_CLASS, MAX_MS, NEEDS_ESCAPE_CLASS, bad_identifier, minted, ms_to_xsd,
)

FAMILY, LEGACY = "openmetadata", "openmetadata-legacy"
# ---------------------------------------------------------------- compact term builders
#
# Spark analyses a Column tree node by node (about 0.3 ms each here), and a tree does not share
# subtrees: a helper that mentions its argument k times multiplies nested expressions by k. So
# these builders mention their arguments as few times as possible, per-character rewriting is a
# `transform` over the code points instead of a chain of `replace`s, constant tables are one
# `from_json` literal, and shared values are bound once with ``let`` (a one-element `transform`
# whose lambda variable is a leaf). They produce exactly what sqlterms' builders produce.

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_JSON = "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"


def let(values: dict, body) -> Column:
    """``body`` over the named values, each evaluated once (bound to a lambda variable)."""
    names = list(values)
    packed = F.struct(*[values[n].alias(n) for n in names])
    return F.try_element_at(F.transform(F.array(packed), lambda s: body({n: s[n] for n in names})), F.lit(1))


def table(mapping) -> Column:
    """A constant map<string,string> as one (constant-folded) node."""
    return F.from_json(F.lit(json.dumps(dict(mapping))), "map<string,string>")


def code_points(text: Column) -> Column:
    return F.regexp_extract_all(text, F.lit("(?s)."), F.lit(0))


def escape_string(text: Column) -> Column:
    """sqlterms.escape_string: backslash, quote, LF, CR escaped; other C0 controls and DEL as u-escapes."""
    simple = text
    for a, b in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r")):
        simple = F.replace(simple, F.lit(a), F.lit(b))
    full = F.array_join(F.transform(code_points(simple), lambda c: F.when(
        c.rlike(CONTROL_CLASS), F.format_string("\\u%04X", F.ascii(c))).otherwise(c)), "")
    return F.when(text.rlike(CONTROL_CLASS), full).when(text.rlike(NEEDS_ESCAPE_CLASS), simple).otherwise(text)


def literal(lexical: Column, datatype: str | None = None) -> Column:
    """sqlterms.literal; ``datatype`` a full IRI or None (plain)."""
    suffix = [F.lit(f"^^<{datatype}>")] if datatype else []
    return F.concat(F.lit('"'), escape_string(lexical), F.lit('"'), *suffix)


def safe_literal(lexical: Column, datatype: str) -> Column:
    """A literal whose lexical form needs no escaping (numbers, dates)."""
    return F.concat(F.lit('"'), lexical, F.lit(f'"^^<{datatype}>'))


def datetime_literal(ms: Column) -> Column:
    return safe_literal(ms_to_xsd(ms), XSD + "dateTime")


def decimal_lit(lexical: Column) -> Column:
    return safe_literal(lexical, XSD + "decimal")


def json_literal(x: Column) -> Column:
    return let({"j": F.to_json(x)}, lambda c: literal(c["j"], RDF_JSON))


def iri_safe(text: Column) -> Column:
    """sqlterms.iri_safe (terms.IRI_ESCAPES, character by character)."""
    return F.when(text.rlike(IRI_ESCAPED_CLASS), F.array_join(F.transform(
        code_points(text), lambda c: F.coalesce(F.try_element_at(table(IRI_ESCAPES), c), c)), "")).otherwise(text)


def om_entity(entity_type: Column, entity_id: Column) -> Column:
    return F.concat(F.lit(OM_ENTITY), iri_safe(entity_type), F.lit("/"), iri_safe(entity_id))


def om_named(kind_: str, name: Column) -> Column:
    return F.concat(F.lit(ID + "om/" + kind_ + "/"), iri_safe(name))


def iri(text: Column) -> Column:
    return F.concat(F.lit("<"), text, F.lit(">"))


def term(curie: str) -> Column:
    return F.lit("<" + expand(curie) + ">")


def triple(s: Column, p: Column, o: Column) -> Column:
    return F.concat(s, F.lit(" "), p, F.lit(" "), o, F.lit(" ."))


def RDF_TYPE() -> Column:  # noqa: N802 - a constant, built when a session is active
    return term("rdf:type")


def om(local: str) -> Column:
    return term("om-event:" + local)


def prov(local: str) -> Column:
    return term("prov:" + local)


# ---------------------------------------------------------------- variant access (fields.get)

_KINDS = {"OBJECT": "object", "ARRAY": "array", "STRING": "string", "BOOLEAN": "boolean", "VOID": "null",
          "TINYINT": "integer", "SMALLINT": "integer", "INT": "integer", "BIGINT": "integer",
          "INTEGRAL": "integer", "DECIMAL": "decimal", "DOUBLE": "double", "FLOAT": "double"}


def kind(x: Column) -> Column:
    """JSON type of a variant: object, array, string, boolean, null (JSON null), integer, decimal,
    double (Spark's typing: 1.0 is an integer); SQL NULL when absent.

    Objects are told by a cast to an empty struct (no field is read); only arrays and scalars pay
    for schema_of_variant, which walks the whole value and is costly on big objects."""
    schema = F.schema_of_variant(x)
    if not _is_leaf(x):  # mention a computed value once only (trees do not share subtrees)
        s = F.regexp_replace(schema, r"(?s)^(OBJECT|ARRAY)<.*$", "$1")
        s = F.regexp_replace(F.regexp_replace(s, r"^DECIMAL\(\d+,0\)$", "INTEGRAL"), r"^DECIMAL\(\d+,\d+\)$", "DECIMAL")
        return F.try_element_at(table(_KINDS), s)
    scalar = F.try_element_at(table(_KINDS), F.regexp_replace(F.regexp_replace(
        schema, r"^DECIMAL\(\d+,0\)$", "INTEGRAL"), r"^DECIMAL\(\d+,\d+\)$", "DECIMAL"))
    return (F.when(x.isNull(), F.lit(None)).when(F.is_variant_null(x), F.lit("null"))
            .when(F.try_variant_get(x, "$", "struct<>").isNotNull(), F.lit("object"))
            .when(F.startswith(schema, F.lit("ARRAY")), F.lit("array")).otherwise(scalar))


def _is_leaf(x: Column) -> bool:
    """A column or lambda-variable reference (cheap to mention several times)."""
    return "(" not in str(x)


def has(x: Column) -> Column:
    """Present and not JSON null (fields.get's "not None")."""
    return F.coalesce(kind(x) != "null", F.lit(False))


def fld(x: Column, key: str) -> Column:
    """``x[key]`` as a variant (JSON null stays a variant null); SQL NULL when absent or ``x`` is
    not an object."""
    return F.try_variant_get(x, f"$['{key}']", "variant")


def sval(x: Column) -> Column:
    """The text of a variant string (null for other types)."""
    return F.when(kind(x) == "string", F.try_variant_get(x, "$", "string"))


def items(x: Column) -> Column:
    """array<variant> of a variant array (null for other types)."""
    return F.when(kind(x) == "array", F.try_variant_get(x, "$", "array<variant>"))


def nonempty_object(x: Column) -> Column:
    return (kind(x) == "object") & (F.to_json(x) != "{}")


def value_literal(x: Column) -> Column:
    """emit.value_literal of a variant: scalars typed, structures rdf:JSON, JSON null → null."""
    def body(c):
        k, j = c["k"], c["j"]
        lexical = F.when(k == "string", c["s"]).when(k == "decimal", F.when(j.contains("."), j).otherwise(
            F.concat(j, F.lit(".0")))).when(k != "null", j)
        suffix = F.try_element_at(table({"boolean": f"^^<{XSD}boolean>", "integer": f"^^<{XSD}integer>",
                                         "decimal": f"^^<{XSD}decimal>", "double": f"^^<{XSD}double>",
                                         "object": f"^^<{RDF_JSON}>", "array": f"^^<{RDF_JSON}>",
                                         "string": ""}), k)
        return F.concat(F.lit('"'), escape_string(lexical), F.lit('"'), suffix)

    return let({"k": kind(x), "j": F.to_json(x), "s": F.try_variant_get(x, "$", "string")}, body)


STR, INT, NUM, OBJ, LIST, BOOL = ("string",), ("integer",), ("integer", "decimal", "double"), ("object",), \
    ("array",), ("boolean",)
_NAMES = {STR: "a string", INT: "an integer", NUM: "an integer or a number", OBJ: "an object", LIST: "an array",
          BOOL: "a boolean"}


def _detail(path, text: str) -> Column:
    if isinstance(path, Column):
        return F.concat(path, F.lit(text))
    return F.lit(path + text)


def check(x: Column, types: tuple, path, *, required: bool = False) -> Column:
    """fields.get's errors for value ``x`` (already fetched): MISSING_FIELD / BAD_TYPE, or null."""
    def body(c):
        k = c["k"]
        errs = []
        if required:
            errs.append(F.when(F.coalesce(k == "null", F.lit(True)), reject("MISSING_FIELD", _detail(path, " is required"))))
        errs.append(F.when((k != "null") & ~k.isin(*types), reject("BAD_TYPE", _detail(path, f": expected {_NAMES[types]}"))))
        if required and types == STR:
            errs.append(F.when((k == "string") & (F.length(c["s"]) == 0), reject("MISSING_FIELD", _detail(path, " is empty"))))
        return F.coalesce(*errs)

    values = {"k": kind(x)}
    if required and types == STR:
        values["s"] = F.try_variant_get(x, "$", "string")
    return let(values, body)


def not_object(x: Column, path) -> Column:
    """The BAD_TYPE fields.get raises when walking a dotted path through a non-object."""
    return F.when(~F.coalesce(kind(x).isin("null", "object"), F.lit(True)),
                  reject("BAD_TYPE", _detail(path, ": expected an object")))


def ident(text: Column, path) -> Column:
    """checked(...)'s BAD_IDENTIFIER for a text that goes through iri_safe."""
    return F.when(bad_identifier(text), reject("BAD_IDENTIFIER", _detail(path, ": empty or forbidden code point")))


def truthy(text: Column) -> Column:
    return F.coalesce(F.length(text) > 0, F.lit(False))


def first_error(errors: Column) -> Column:
    """The first non-null error of an array of errors (null if none or the array is null)."""
    return F.try_element_at(F.filter(errors, lambda e: e.isNotNull()), F.lit(1))


def idx_path(prefix, i: Column, suffix: str = "") -> Column:
    prefix = prefix if isinstance(prefix, Column) else F.lit(prefix)
    return F.concat(prefix, F.lit("["), i.cast("string"), F.lit("]" + suffix))


EMPTY = "array<string>"


def cat(*arrays: Column) -> Column:
    """Concatenation of arrays of triples, null arrays counting as empty."""
    empty = F.array().cast(EMPTY)
    return F.concat(*[F.coalesce(a, empty) for a in arrays])


def flat(array_of_arrays: Column) -> Column:
    """Concatenated inner arrays; null inner arrays count as empty (flatten alone gives null)."""
    return F.coalesce(F.flatten(F.filter(array_of_arrays, lambda a: a.isNotNull())), F.array().cast(EMPTY))


# ---------------------------------------------------------------- strict embedded JSON (decode.loads_strict)


def strict_json(text: Column) -> tuple[Column, Column]:
    """(parsed variant or null, bad flag) with decode.loads_strict's strictness."""
    parsed = F.try_parse_json(text)
    bad = (parsed.isNull()
           | ((_count(text, "[{") > MAX_DEPTH) & (max_depth(text) > MAX_DEPTH))
           | _trailing_data(text) | _overflowing_number(text))
    return F.when(~bad, parsed), bad


# ---------------------------------------------------------------- numbers


def version_lexical(x: Column) -> Column:
    """struct<lexical, bad>: terms.decimal_lexical of a numeric variant (|v| < 1e15, ≤ 15 fraction
    digits, else ``bad``), from the variant's JSON text (exact for decimals of ≤ 38 digits)."""
    rx = r"^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$"

    def parts(c):
        t = c["t"]
        frac = F.regexp_extract(t, rx, 3)
        exp_text = F.regexp_replace(F.regexp_extract(t, rx, 4), r"^\+", "")
        return {"neg": F.regexp_extract(t, rx, 1) == "-",
                "d1": F.regexp_replace(F.concat(F.regexp_extract(t, rx, 2), frac), "^0+", ""),
                "exp0": F.coalesce(exp_text.try_cast("int"), F.lit(0)) - F.length(frac)}

    def strip(c):
        d2 = F.regexp_replace(c["d1"], "0+$", "")
        return {"neg": c["neg"], "d2": d2, "exp": c["exp0"] + (F.length(c["d1"]) - F.length(d2))}

    def out(c):
        d2, exp = c["d2"], c["exp"]
        n = F.length(d2)
        point = n + exp
        plain = (F.when(exp >= 0, F.concat(d2, F.repeat(F.lit("0"), exp), F.lit(".0")))
                 .when(point > 0, F.concat(F.substring(d2, F.lit(1), point), F.lit("."),
                                           F.substring(d2, point + 1, F.lit(1 << 30))))
                 .otherwise(F.concat(F.lit("0."), F.repeat(F.lit("0"), -point), d2)))
        zero = n == 0
        bad = ~zero & ((point >= 16) | (-exp > 15))
        lexical = F.when(zero, F.lit("0.0")).when(~bad, F.concat(F.when(c["neg"], "-").otherwise(""), plain))
        return F.struct(lexical.alias("lexical"), bad.alias("bad"))

    return let({"t": F.to_json(x)}, lambda c: let(parts(c), lambda c2: let(strip(c2), out)))


def rfc3339_ms(text: Column) -> Column:
    """terms.rfc3339_to_ms, or null where it raises BadTimestamp."""
    return let({"s": text}, lambda c: _rfc3339_ms(c["s"]))


def _rfc3339_ms(s: Column) -> Column:
    rx = (r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
          r"(?:\.([0-9]{1,9}))?(?:(Z)|([+-])([0-9]{2}):([0-9]{2}))\z")

    def g(n):
        return F.regexp_extract(s, rx, n)

    def num(n):
        return g(n).try_cast("long")

    y, mo, d, h, mi, sec = (num(i) for i in range(1, 7))
    frac, sign, oh, om_ = g(7), g(9), num(10), num(11)
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    month_days = F.array(*[F.lit(x) for x in (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)])
    dim = F.try_element_at(month_days, mo.cast("int")) + F.when((mo == 2) & leap, 1).otherwise(0)
    valid = (s.rlike(rx) & (y >= 1) & mo.between(1, 12) & (d >= 1) & (d <= dim) & (h <= 23) & (mi <= 59)
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



# ---------------------------------------------------------------- graph shapes (emit.Graph)


def entity_triples(node: Column, *, asset_type: Column | None = None, fqn: Column | None = None,
                   cls: str | None = None) -> list[Column]:
    """Graph.entity; ``node`` an IRI term (ideally a bound variable)."""
    out = [triple(node, RDF_TYPE(), om("MetadataEntity"))]
    if cls is not None:
        out.append(triple(node, RDF_TYPE(), om(cls)))
    if asset_type is not None:
        out.append(triple(node, om("assetType"), literal(asset_type)))
    if fqn is not None:
        out.append(triple(node, om("fullyQualifiedName"), literal(fqn)))
    return out


def agent_triples(node: Column, organization: Column | None = None) -> list[Column]:
    out = [triple(node, RDF_TYPE(), prov("Agent"))]
    if organization is not None:
        out.append(F.when(organization, triple(node, RDF_TYPE(), prov("Organization"))))
    return out


def lineage(event: Column, down: Column, up: Column, removed: Column, extra=None) -> Column:
    """array of Graph.lineage's triples (IRI texts in), plus ``extra(edge_term)``."""
    def body(c):
        e, d, u = c["e"], c["d"], c["u"]
        return F.array(
            triple(e, RDF_TYPE(), om("LineageEdge")),
            triple(d, prov("qualifiedDerivation"), e),
            triple(e, prov("entity"), u),
            triple(d, prov("wasDerivedFrom"), u),
            triple(e, F.when(removed, om("removedBy")).otherwise(om("addedBy")), iri(event)),
            *(extra(e) if extra else []))

    return let({"e": iri(minted("lineage", down, up)), "d": iri(down), "u": iri(up)}, body)


def column(fqn: Column, body) -> Column:
    """``body(node_text, triples)`` with the column node of ``fqn`` bound (openmetadata._column)."""
    def inner(c):
        return body(c["node"], entity_triples(iri(c["node"]), fqn=c["fqn"], cls="Column"))

    return let({"fqn": fqn, "node": om_named("column", fqn)}, inner)


# ---------------------------------------------------------------- the rules table


def _rule_maps(family: str) -> dict:
    rows = [r for r in rules()["eventTypes"] if r["family"] == family]
    return {
        "event_type": table([(r["value"], "<" + expand(r["eventType"]) + ">") for r in rows]),
        "pattern": table([(r["value"], r["pattern"]) for r in rows]),
        "lifecycle": table([(r["value"], r.get("lifecycle") or "") for r in rows]),
        "lifecycle_iri": table([(r["value"], "<" + expand(r["lifecycle"]) + ">")
                                   for r in rows if r.get("lifecycle")]),
    }


# ---------------------------------------------------------------- the mapper


def openmetadata(plan: Plan) -> Family:
    return _map(plan, legacy=False)


def openmetadata_legacy(plan: Plan) -> Family:
    return _map(plan, legacy=True)


def _version(plan: Plan, name: str, x: Column, path: str, errs: list) -> Column:
    """openmetadata._version: the lexical form (bound) and its checks appended to ``errs``."""
    lex = plan.bind(name + "_lex", version_lexical(x))
    errs.append(check(x, NUM, path))
    errs.append(F.when(has(x) & lex["bad"], reject("BAD_TYPE", f"{path}: version out of range or too precise")))
    return F.when(has(x), lex["lexical"])


def _map(plan: Plan, *, legacy: bool) -> Family:
    """The reference's checks in its order, then its triples, over staged columns (stages.py)."""
    family = LEGACY if legacy else FAMILY
    maps = _rule_maps(family)
    v, raw = F.col("v"), F.col("value")
    b = plan.bind
    # stage 1: the event's fields, each fetched once
    f = plan.binds(et_v=fld(v, "eventType"), etype_v=fld(v, "entityType"), eid_v=fld(v, "entityId"),
                   user_v=fld(v, "userName"), id_v=fld(v, "id"), cur_v=fld(v, "currentVersion"),
                   desc_v=fld(v, "changeDescription"), prev_v=fld(v, "previousVersion"), entity_v=fld(v, "entity"),
                   fqn_v=fld(v, "entityFullyQualifiedName"), imp_v=fld(v, "impersonatedBy"),
                   userid_v=fld(v, "userId"), recursive_v=fld(v, "recursive"))
    if legacy:
        f["time_v"] = b("time_v", fld(v, "dateTime"))
    else:
        f["time_v"] = b("time_v", fld(v, "timestamp"))
        f["token"] = b("token", F.from_json(raw, "timestamp string")["timestamp"])  # 1.0 is no integer
    plan.next()
    # stage 2: texts and kinds
    s = plan.binds(et=sval(f["et_v"]), etype=sval(f["etype_v"]), eid=sval(f["eid_v"]), user=sval(f["user_v"]),
                   event_id=sval(f["id_v"]), fqn=sval(f["fqn_v"]), imp=sval(f["imp_v"]), userid=sval(f["userid_v"]),
                   entity_text=sval(f["entity_v"]), entity_kind=kind(f["entity_v"]),
                   prev_cd_v=F.when(~has(f["prev_v"]), fld(f["desc_v"], "previousVersion")),
                   summary_v=fld(f["desc_v"], "changeSummary"))
    if legacy:
        s["ms"] = b("ms_legacy", rfc3339_ms(sval(f["time_v"])))
    else:
        s["ms_dec"] = b("ms_dec", f["token"].try_cast("decimal(38,0)"))
    errs: list[Column] = []
    current = _version(plan, "cur", f["cur_v"], "currentVersion", errs)
    previous_top = _version(plan, "prev", f["prev_v"], "previousVersion", errs)
    plan.next()
    # stage 3: rule lookups, the entity state, the other version
    r = plan.binds(rule_iri=F.try_element_at(maps["event_type"], s["et"]),
                   pattern=F.try_element_at(maps["pattern"], s["et"]),
                   lifecycle=F.try_element_at(maps["lifecycle"], s["et"]),
                   lifecycle_iri=F.try_element_at(maps["lifecycle_iri"], s["et"]))
    parsed, bad = strict_json(s["entity_text"])
    r["parsed"] = b("parsed", F.struct(parsed.alias("v"), bad.alias("bad")))
    head = [check(f["et_v"], STR, "eventType", required=True)]
    head.append(F.when(r["rule_iri"].isNull(), reject("UNKNOWN_EVENT_TYPE", F.concat(
        F.lit("eventType: "), F.coalesce(s["et"], F.lit("?")), F.lit(f" is not a {family} event type")))))
    head += [check(f["etype_v"], STR, "entityType", required=True), check(f["eid_v"], STR, "entityId", required=True)]
    if legacy:
        ms = s["ms"]
        head += [check(f["time_v"], STR, "dateTime", required=True),
                 F.when(ms.isNull(), reject("BAD_TIMESTAMP", "dateTime: not an RFC 3339 date-time in range"))]
    else:
        ms = s["ms_dec"].try_cast("long")
        head += [F.when(~has(f["time_v"]), reject("MISSING_FIELD", "timestamp is required")),
                 F.when(~kind(f["time_v"]).isin(*NUM) | ~f["token"].rlike(r"^-?[0-9]+$"),
                        reject("BAD_TYPE", "timestamp: expected an integer")),
                 F.when(~F.coalesce(s["ms_dec"].between(0, MAX_MS), F.lit(False)),
                        reject("BAD_TIMESTAMP", f"timestamp: epoch milliseconds out of range 0..{MAX_MS}"))]
    head += [check(f["user_v"], STR, "userName"), check(f["id_v"], STR, "id")]
    head += errs  # current, then top-level previous
    head.append(F.when(~has(f["prev_v"]), not_object(f["desc_v"], "changeDescription.previousVersion")))
    cd_errs: list[Column] = []
    previous_cd = _version(plan, "prev_cd", s["prev_cd_v"], "changeDescription.previousVersion", cd_errs)
    head += cd_errs
    plan.next()
    # stage 4: values derived from stage 3
    ek = s["entity_kind"]
    d = plan.binds(current=current, previous=F.coalesce(previous_top, previous_cd),
                   state=F.when(ek == "string", r["parsed"]["v"]).otherwise(f["entity_v"]),
                   ms=ms, is_lineage=r["pattern"].isin("lineage-add", "lineage-remove"))
    head += [F.when((ek == "string") & r["parsed"]["bad"], reject("BAD_ASPECT_JSON", "entity: not valid JSON")),
             F.when(~ek.isin("null", "string", "object", "array"),
                    reject("BAD_TYPE", "entity: expected an object or a JSON string"))]
    early = b("early", F.coalesce(*head))
    plan.next()
    # stage 5: IRIs and the checks that need the state
    event = F.when(truthy(s["event_id"]), minted("event", F.lit(FAMILY), s["event_id"])).otherwise(
        minted("event", F.lit(FAMILY), s["eid"], s["et"], d["ms"].cast("string"),
               F.coalesce(s["user"], F.lit("")), F.coalesce(d["current"], F.lit(""))))
    down = om_entity(sval(fld(fld(d["state"], "toEntity"), "type")), sval(fld(fld(d["state"], "toEntity"), "id")))
    n = plan.binds(event=event, entity=F.when(d["is_lineage"], down).otherwise(om_entity(s["etype"], s["eid"])))
    lineage_err = b("lineage_err", F.when(d["is_lineage"], _lineage_errors(d["state"])))
    changes_err = b("changes_err", _field_change_errors(f["desc_v"], s["fqn"]))
    plan.next()
    # stage 6: the rest of the checks; terms used by several triples
    late = F.coalesce(
        lineage_err,
        F.when(~d["is_lineage"], F.coalesce(ident(s["etype"], "entityId"), ident(s["eid"], "entityId"),
                                            check(f["fqn_v"], STR, "entityFullyQualifiedName"))),
        F.when(truthy(s["user"]), ident(s["user"], "userName")),
        check(f["fqn_v"], STR, "entityFullyQualifiedName"),
        check(f["userid_v"], STR, "userId"),
        check(f["imp_v"], STR, "impersonatedBy"),
        F.when(truthy(s["imp"]), ident(s["imp"], "impersonatedBy")),
        check(f["recursive_v"], BOOL, "recursive"),
        not_object(f["desc_v"], "changeDescription.changeSummary"),
        check(s["summary_v"], OBJ, "changeDescription.changeSummary"),
        changes_err,
    )
    rejected = b("rejected_all", F.coalesce(early, late))
    t = plan.binds(ev=iri(n["event"]), en=iri(n["entity"]),
                   agent=iri(F.when(truthy(s["user"]), om_named("user", s["user"]))),
                   imp_agent=iri(F.when(truthy(s["imp"]), om_named("user", s["imp"]))),
                   now=iri(minted("version", n["entity"], d["current"])),
                   before=iri(minted("version", n["entity"], d["previous"])))
    lineage_t = b("lineage_t", F.when(d["is_lineage"], _lineage_triples(d["state"], n["event"],
                                                                         r["pattern"] == "lineage-remove")))
    changes_t = b("changes_t", _field_change_triples(f["desc_v"], n["event"], n["entity"], s["fqn"]))
    plan.next()
    # stage 7: the event's own triples
    ev, en, agent, imp_agent = t["ev"], t["en"], t["agent"], t["imp_agent"]
    current, previous, lifecycle = d["current"], d["previous"], r["lifecycle"]
    singles = [
        triple(ev, RDF_TYPE(), om("ChangeEvent")),
        triple(ev, om("eventType"), r["rule_iri"]),
        triple(ev, om("timestamp"), datetime_literal(d["ms"])),
        triple(ev, om("affectsEntity"), en),
        triple(ev, om("performedBy"), agent),
        *agent_triples(agent),
        triple(ev, om("lifecycleChange"), r["lifecycle_iri"]),
        triple(ev, om("eventId"), literal(s["event_id"])),
        triple(ev, om("entityId"), literal(s["eid"])),
        triple(ev, om("entityType"), literal(s["etype"])),
        triple(ev, om("entityFullyQualifiedName"), literal(s["fqn"])),
        triple(ev, om("userName"), literal(s["user"])),
        triple(ev, om("userId"), literal(s["userid"])),
        triple(ev, om("impersonatedBy"), imp_agent),
        *agent_triples(imp_agent),
        triple(ev, om("recursive"), value_literal(f["recursive_v"])),
        F.when(has(s["summary_v"]), triple(ev, om("changeSummary"), json_literal(s["summary_v"]))),
        F.when(has(d["state"]), triple(ev, om("entityState"), json_literal(d["state"]))),
        triple(ev, om("previousVersion"), decimal_lit(previous)),
        triple(ev, om("currentVersion"), decimal_lit(current)),
    ]
    plain_entity = F.when(~d["is_lineage"], F.array(*entity_triples(en, asset_type=s["etype"], fqn=s["fqn"])))
    now, before = t["now"], t["before"]
    versioned = (lifecycle != "om-event:HardDeleted") & previous.isNotNull() & (previous != current)
    made = (lifecycle == "om-event:Created") | versioned
    versions = F.when(current.isNotNull(), F.when(made, F.array(
        triple(now, RDF_TYPE(), om("EntityVersion")),
        triple(now, prov("specializationOf"), en),
        triple(now, om("versionNumber"), decimal_lit(current)),
        triple(now, prov("wasGeneratedBy"), ev),
        F.when(versioned, triple(now, prov("wasRevisionOf"), before)),
        F.when(versioned, triple(ev, prov("used"), before)),
    )).otherwise(F.array(triple(ev, prov("used"), now))))
    triples = F.filter(cat(F.array(*singles), plain_entity, versions, lineage_t, changes_t), lambda x: x.isNotNull())
    return Family(triples, rejected, d["ms"])


# ---------------------------------------------------------------- lineage (openmetadata._lineage)

_DETAILS = "entity.lineageDetails"


def _lineage_errors(edge: Column) -> Column:
    k = kind(edge)
    errs = [F.when(~has(edge), reject("MISSING_FIELD", "entity: a lineage event needs the edge object")),
            F.when(k != "object", reject("BAD_TYPE", "entity: a lineage event needs the edge object"))]
    for end in ("fromEntity", "toEntity"):
        ref = fld(edge, end)
        type_v, id_v = fld(ref, "type"), fld(ref, "id")
        errs += [check(ref, OBJ, f"entity.{end}", required=True),
                 check(type_v, STR, f"entity.{end}.type", required=True),
                 check(id_v, STR, f"entity.{end}.id", required=True),
                 ident(sval(type_v), f"entity.{end}.id"), ident(sval(id_v), f"entity.{end}.id"),
                 check(fld(ref, "fullyQualifiedName"), STR, f"entity.{end}.fullyQualifiedName")]
    details = fld(edge, "lineageDetails")
    errs.append(check(details, OBJ, _DETAILS))
    errs += [check(fld(details, key), STR, f"{_DETAILS}.{key}") for key in ("sqlQuery", "source")]
    pipeline = fld(details, "pipeline")
    errs.append(check(pipeline, OBJ, f"{_DETAILS}.pipeline"))
    p_type_v, p_id_v = fld(pipeline, "type"), fld(pipeline, "id")
    errs.append(F.when(nonempty_object(pipeline), F.coalesce(
        check(p_type_v, STR, f"{_DETAILS}.pipeline.type", required=True),
        check(p_id_v, STR, f"{_DETAILS}.pipeline.id", required=True),
        ident(sval(p_type_v), f"{_DETAILS}.pipeline.id"), ident(sval(p_id_v), f"{_DETAILS}.pipeline.id"),
        check(fld(pipeline, "fullyQualifiedName"), STR, f"{_DETAILS}.pipeline.fullyQualifiedName"))))
    cols_v = fld(details, "columnsLineage")
    errs.append(check(cols_v, LIST, f"{_DETAILS}.columnsLineage"))

    def col_error(col: Column, i: Column) -> Column:
        path = idx_path(f"{_DETAILS}.columnsLineage", i)
        to_v, from_v, fn_v = fld(col, "toColumn"), fld(col, "fromColumns"), fld(col, "function")
        to_fqn = sval(to_v)
        return F.coalesce(
            F.when(kind(col) != "object", reject("BAD_TYPE", F.concat(path, F.lit(": expected an object")))),
            check(to_v, STR, F.concat(path, F.lit(".toColumn"))),
            F.when(truthy(to_fqn), F.coalesce(
                ident(to_fqn, F.concat(path, F.lit(".toColumn"))),
                check(from_v, LIST, F.concat(path, F.lit(".fromColumns"))),
                first_error(F.transform(items(from_v), lambda f: F.coalesce(
                    F.when(kind(f) != "string",
                           reject("BAD_TYPE", F.concat(path, F.lit(".fromColumns: expected a string")))),
                    ident(sval(f), F.concat(path, F.lit(".fromColumns"))),
                    check(fn_v, STR, F.concat(path, F.lit(".function")))))))))

    errs.append(first_error(F.transform(items(cols_v), col_error)))
    return F.coalesce(*errs)


def _lineage_triples(edge: Column, event: Column, removed: Column) -> Column:
    details = fld(edge, "lineageDetails")
    pipeline = fld(details, "pipeline")
    bound = {"details": details, "pipeline": pipeline, "has_pipeline": nonempty_object(pipeline),
             "p_type": sval(fld(pipeline, "type")), "p_id": sval(fld(pipeline, "id"))}
    for end in ("fromEntity", "toEntity"):
        ref = fld(edge, end)
        bound[end + "_type"] = sval(fld(ref, "type"))
        bound[end + "_id"] = sval(fld(ref, "id"))
        bound[end + "_fqn"] = sval(fld(ref, "fullyQualifiedName"))
    return let(bound, lambda c: let(
        {**c, "from": om_entity(c["fromEntity_type"], c["fromEntity_id"]),
         "to": om_entity(c["toEntity_type"], c["toEntity_id"]),
         "via": iri(om_entity(c["p_type"], c["p_id"]))},
        lambda c2: _lineage_bound(c2, event, removed)))


def _lineage_bound(c: dict, event: Column, removed: Column) -> Column:
    trip: list[Column] = []
    for end, node in (("fromEntity", c["from"]), ("toEntity", c["to"])):
        trip += entity_triples(iri(node), asset_type=c[end + "_type"], fqn=c[end + "_fqn"])
    details, pipeline, via = c["details"], c["pipeline"], c["via"]

    def link_extra(ln):
        return [triple(ln, om("sqlQuery"), literal(sval(fld(details, "sqlQuery")))),
                triple(ln, om("lineageSource"), literal(sval(fld(details, "source")))),
                F.when(c["has_pipeline"], triple(ln, om("viaPipeline"), via))]

    link = lineage(event, c["to"], c["from"], removed, link_extra)
    trip += [F.when(c["has_pipeline"], t) for t in
             entity_triples(via, asset_type=c["p_type"], fqn=sval(fld(pipeline, "fullyQualifiedName")))]

    def col_triples(col: Column) -> Column:
        def with_to(to_node, to_trip):
            fn = sval(fld(col, "function"))

            def from_triples(f: Column) -> Column:
                return column(sval(f), lambda from_node, from_trip: cat(F.array(*from_trip), lineage(
                    event, to_node, from_node, removed,
                    lambda e: [triple(e, om("transformOperation"), literal(fn))])))

            return cat(F.array(*to_trip), flat(F.transform(items(fld(col, "fromColumns")), from_triples)))

        to_fqn = sval(fld(col, "toColumn"))
        return F.when(truthy(to_fqn), column(to_fqn, with_to))

    cols = flat(F.transform(items(fld(details, "columnsLineage")), col_triples))
    return cat(F.array(*trip), link, cols)


# ---------------------------------------------------------------- field changes (openmetadata._field_changes)

_KEYS = (("added", "fieldsAdded"), ("updated", "fieldsUpdated"), ("deleted", "fieldsDeleted"))


def _handler(name: Column) -> Column:
    return F.try_element_at(table(rules()["openmetadataStructuredFields"]), F.substring_index(name, ".", -1))


def _value(item: Column, name: Column, which: str) -> Column:
    """openmetadata._field_value: JSON text of the known JSON-valued fields is decoded (strictly)."""
    x = fld(item, which)
    json_fields = F.array(*[F.lit(f) for f in rules()["openmetadataJsonFields"]])

    def body(c):
        text = c["t"]
        parsed, bad = strict_json(text)
        decode = ((F.substring(text, 1, 1).isin("[", "{") | (text == ""))
                  & F.array_contains(json_fields, F.substring_index(name, ".", -1)))
        return F.when(F.coalesce(decode & ~bad, F.lit(False)), parsed).otherwise(c["x"])

    return let({"x": x, "t": sval(x)}, body)


def _with_values(item: Column, body) -> Column:
    name = sval(fld(item, "name"))
    return let({"name": name, "old": _value(item, name, "oldValue"), "new": _value(item, name, "newValue")},
               lambda c: body(c["name"], c["old"], c["new"]))


ENTRY = "struct<k:string,key:string,i:int,item:variant,lerr:struct<reason:string,detail:string>>"


def _entries(description: Column, with_list_errors: bool) -> Column:
    """All field changes of the three lists in order, as struct<k (added/updated/deleted), key
    (fieldsAdded …), i, item, lerr>; with ``with_list_errors`` each list starts with an entry
    holding its own BAD_TYPE (``lerr``), so one pass over the entries finds the first error."""
    parts = []
    for kind_name, key in _KEYS:
        lst = fld(description, key)
        if with_list_errors:
            parts.append(F.array(F.struct(F.lit(kind_name).alias("k"), F.lit(key).alias("key"), F.lit(-1).alias("i"),
                                          F.lit(None).cast("variant").alias("item"),
                                          check(lst, LIST, f"changeDescription.{key}").alias("lerr"))))
        parts.append(F.transform(items(lst), lambda x, i: F.struct(
            F.lit(kind_name).alias("k"), F.lit(key).alias("key"), i.alias("i"), x.alias("item"),
            F.lit(None).cast("struct<reason:string,detail:string>").alias("lerr"))))
    return F.when(nonempty_object(description), cat_any(ENTRY, *parts))


def cat_any(element_type: str, *arrays: Column) -> Column:
    empty = F.array().cast(f"array<{element_type}>")
    return F.concat(*[F.coalesce(a, empty) for a in arrays])


def _field_change_errors(description: Column, fqn: Column) -> Column:
    def entry_error(e: Column) -> Column:
        item = e["item"]
        path = F.concat(F.lit("changeDescription."), e["key"], F.lit("["), e["i"].cast("string"), F.lit("]"))
        return F.coalesce(e["lerr"], F.when(e["i"] >= 0, F.coalesce(
            F.when(kind(item) != "object", reject("BAD_TYPE", F.concat(path, F.lit(": expected an object")))),
            check(fld(item, "name"), STR, F.concat(path, F.lit(".name")), required=True),
            _with_values(item, lambda name, old, new: _structured_errors(
                _handler(name), e["k"], old, new, path, fqn)))))

    return first_error(F.transform(_entries(description, True), entry_error))


def _field_change_triples(description: Column, event: Column, entity: Column, fqn: Column) -> Column:
    ev = iri(event)
    desc_node = iri(F.concat(event, F.lit("/changes")))

    def entry_triples(e: Column) -> Column:
        item = e["item"]

        def body(c):
            name, old, new, change = c["name"], c["old"], c["new"], c["change"]
            base = F.array(
                triple(ev, om("hasChangeDescription"), desc_node),
                triple(desc_node, RDF_TYPE(), om("ChangeDescription")),
                triple(desc_node, F.concat(F.lit("<" + expand("om-event:")), e["key"], F.lit(">")), change),
                triple(change, RDF_TYPE(), om("FieldChange")),
                triple(change, om("fieldName"), literal(name)),
                triple(change, om("oldValue"), value_literal(old)),
                triple(change, om("newValue"), value_literal(new)),
            )
            return cat(base, _structured_triples(_handler(name), e["k"], old, new, entity, fqn, change))

        name = sval(fld(item, "name"))
        return let({"name": name, "old": _value(item, name, "oldValue"), "new": _value(item, name, "newValue"),
                    "change": iri(F.concat(event, F.lit("/change/"), e["k"], F.lit("/"), e["i"].cast("string")))},
                   body)

    return flat(F.transform(_entries(description, False), entry_triples))


_HANDLERS = sorted(set(rules()["openmetadataStructuredFields"].values()) - {"pipeline-status"})
SIDE = "struct<side:string,i:int,el:variant>"


def _sides(kind_col: Column, old: Column, new: Column) -> Column:
    """The elements of the old value (unless the change is an addition) then of the new value
    (unless a deletion), tagged with their side and index (openmetadata._members' inputs)."""
    def elements(value):
        k = kind(value)
        return (F.when(k == "object", F.array(value))
                .when(k == "array", F.try_variant_get(value, "$", "array<variant>")))

    def tagged(side, value):
        return F.transform(elements(value), lambda x, i: F.struct(F.lit(side).alias("side"), i.alias("i"),
                                                                  x.alias("el")))

    return cat_any(SIDE, F.when(kind_col != "added", tagged("old", old)),
                   F.when(kind_col != "deleted", tagged("new", new)))


def _structured_errors(handler: Column, kind_col: Column, old: Column, new: Column, path: Column,
                       fqn: Column) -> Column:
    errs = [F.when((handler == "pipeline-status") & (kind(new) == "object"),
                   _pipeline_run_errors(F.concat(path, F.lit(".newValue")), new))]
    sides = _sides(kind_col, old, new)
    for h in _HANDLERS:
        def element_error(t):
            where = F.concat(path, F.lit("."), t["side"], F.lit("Value["), t["i"].cast("string"), F.lit("]"))
            return let(_member_values(h, t["el"], fqn), lambda c: _member_error(h, c, where))

        errs.append(F.when(handler == h, first_error(F.transform(sides, element_error))))
    return F.coalesce(*errs)


MEMBER = "struct<side:string,key:string,cls:string,node:string,json:string>"


def _structured_triples(handler: Column, kind_col: Column, old: Column, new: Column, entity: Column, fqn: Column,
                        change: Column) -> Column:
    trips = [F.when((handler == "pipeline-status") & (kind(new) == "object"), _pipeline_run_triples(entity, new))]
    sides = _sides(kind_col, old, new)
    for h in _HANDLERS:
        def bound(t, body):
            values = _member_values(h, t["el"], fqn)
            if h == "columns":
                values["json"] = F.to_json(t["el"])
            return let(values, body)

        def member(t):
            def body(c):
                n = _member_node(h, c)
                return F.when(n["on"], F.struct(t["side"].alias("side"),
                                                *[n[f].alias(f) for f in ("key", "cls", "node", "json")]))
            return bound(t, body)

        def member_triples(t):
            return bound(t, lambda c: let(_member_node(h, c), lambda n: _member_triples(h, c, n)))

        members = F.transform(sides, member)
        # dict semantics: the last element with a key wins, per side
        win = let({"m": members}, lambda c: F.filter(c["m"], lambda m, i: m.isNotNull() & ~F.exists(
            F.filter(c["m"], lambda o, j: j > i),
            lambda o: o.isNotNull() & (o["side"] == m["side"]) & (o["key"] == m["key"]))))

        def changes(c):
            b = F.filter(c["w"], lambda m: m["side"] == "old")
            a = F.filter(c["w"], lambda m: m["side"] == "new")
            out = []
            if h == "tags":
                for cls, added, removed in (("Tag", "addedTag", "removedTag"),
                                            ("GlossaryTerm", "addedGlossaryTerm", "removedGlossaryTerm")):
                    out += _member_changes(change, F.filter(b, lambda m: m["cls"] == cls),
                                           F.filter(a, lambda m: m["cls"] == cls), added, removed)
            elif h == "owners":
                out += _member_changes(change, b, a, "addedOwner", "removedOwner")
            else:
                out += _member_changes(change, b, a, "addedSchemaField", "removedSchemaField")
                changed = F.filter(a, lambda m: F.exists(b, lambda o: (o["key"] == m["key"]) & (o["json"] != m["json"])))
                out.append(F.transform(changed, lambda m: triple(change, om("changedSchemaField"), iri(m["node"]))))
            return cat(*out)

        trips.append(F.when(handler == h, cat(flat(F.transform(sides, member_triples)),
                                              let({"w": F.coalesce(win, F.array().cast(f"array<{MEMBER}>"))},
                                                  changes))))
    return cat(*trips)


def _member_changes(change: Column, old: Column, new: Column, added: str, removed: str) -> list[Column]:
    def missing_from(a, b):
        return F.filter(a, lambda m: ~F.exists(b, lambda o: o["key"] == m["key"]))

    return [F.transform(missing_from(new, old), lambda m: triple(change, om(added), iri(m["node"]))),
            F.transform(missing_from(old, new), lambda m: triple(change, om(removed), iri(m["node"])))]


def _member_values(handler: str, el: Column, fqn: Column) -> dict:
    values = {"is_obj": kind(el) == "object"}
    if handler == "tags":
        values.update(tf_v=fld(el, "tagFQN"), src_v=fld(el, "source"), tf=sval(fld(el, "tagFQN")),
                      glossary=F.coalesce(sval(fld(el, "source")) == "Glossary", F.lit(False)))
    elif handler == "owners":
        values.update(nm_v=fld(el, "name"), tp_v=fld(el, "type"), nm=sval(fld(el, "name")),
                      team=F.coalesce(sval(fld(el, "type")) == "team", F.lit(False)))
    elif handler == "columns":
        fq, cn = sval(fld(el, "fullyQualifiedName")), sval(fld(el, "name"))
        values.update(fq_v=fld(el, "fullyQualifiedName"), cn_v=fld(el, "name"),
                      col_fqn=F.when(truthy(fq), fq).when(truthy(cn) & truthy(fqn), F.concat(fqn, F.lit("."), cn)))
    else:  # pragma: no cover - rules.json names a handler this module does not know
        raise ValueError(f"unknown structured-field handler {handler!r}")
    return values


def _member_error(handler: str, c: dict, where: Column) -> Column:
    def at(suffix):
        return F.concat(where, F.lit(suffix))

    if handler == "tags":
        err = F.coalesce(check(c["tf_v"], STR, at(".tagFQN")), F.when(truthy(c["tf"]), F.coalesce(
            check(c["src_v"], STR, at(".source")), ident(c["tf"], at(".tagFQN")))))
    elif handler == "owners":
        err = F.coalesce(check(c["nm_v"], STR, at(".name")), F.when(truthy(c["nm"]), F.coalesce(
            check(c["tp_v"], STR, at(".type")), ident(c["nm"], at(".name")))))
    else:
        err = F.coalesce(check(c["fq_v"], STR, at(".fullyQualifiedName")), check(c["cn_v"], STR, at(".name")),
                         ident(c["col_fqn"], at(".fullyQualifiedName")))
    return F.when(c["is_obj"], err)


def _member_node(handler: str, c: dict) -> dict:
    """key, cls, node (IRI text) and json of a member (null key when the element is no member)."""
    none = F.lit(None).cast("string")
    if handler == "tags":
        on = c["is_obj"] & truthy(c["tf"])
        key, cls, json_ = c["tf"], F.when(c["glossary"], "GlossaryTerm").otherwise("Tag"), none
        node = F.when(c["glossary"], om_named("glossaryTerm", c["tf"])).otherwise(om_named("tag", c["tf"]))
    elif handler == "owners":
        on = c["is_obj"] & truthy(c["nm"])
        key = F.concat(F.when(c["team"], "team:").otherwise("user:"), c["nm"])
        cls, json_ = none, none
        node = F.when(c["team"], om_named("team", c["nm"])).otherwise(om_named("user", c["nm"]))
    else:
        on = c["is_obj"] & c["col_fqn"].isNotNull()
        key, cls, json_ = c["col_fqn"], none, c["json"]
        node = om_named("column", c["col_fqn"])
    return {"on": on, "key": key, "cls": cls, "node": node, "json": json_}


def _member_triples(handler: str, c: dict, n: dict) -> Column:
    node = iri(n["node"])
    if handler == "tags":
        trip = [*entity_triples(node, fqn=c["tf"]),
                triple(node, RDF_TYPE(), F.when(c["glossary"], om("GlossaryTerm")).otherwise(om("Tag")))]
    elif handler == "owners":
        trip = agent_triples(node, c["team"])
    else:
        trip = entity_triples(node, fqn=c["col_fqn"], cls="Column")
    return F.when(n["on"], F.array(*trip))


# ---------------------------------------------------------------- pipeline runs (openmetadata._pipeline_run)


def _run_values(status: Column) -> dict:
    started_v, exe_v = fld(status, "timestamp"), fld(status, "executionId")
    started_text = F.when(kind(started_v) == "integer", F.to_json(started_v))
    exe = sval(exe_v)
    ended_v = fld(status, "endTime")
    executor_v = fld(status, "executedBy")
    return {
        "started_v": started_v, "exe_v": exe_v, "exe": exe, "started_text": started_text,
        "ended_v": ended_v,
        "ended_ms": F.when(kind(ended_v) == "integer", F.to_json(ended_v)).try_cast("decimal(38,0)"),
        "executor_v": executor_v,
        "has_executor": nonempty_object(executor_v),
        "ex_name": sval(fld(executor_v, "name")),
    }


def _with_run(status: Column, body) -> Column:
    def more(c):
        return {**c, "execution": F.when(truthy(c["exe"]), c["exe"]).otherwise(c["started_text"]),
                "started_ms": c["started_text"].try_cast("decimal(38,0)")}

    return let(_run_values(status), lambda c: let(more(c), body))


def _pipeline_run_errors(path: Column, status: Column) -> Column:
    def at(suffix):
        return F.concat(path, F.lit(suffix))

    def body(r):
        ex_name = r["ex_name"]
        io_errs = []
        for key in ("inputs", "outputs"):
            lst = fld(status, key)
            io_errs.append(check(lst, LIST, at("." + key)))
            io_errs.append(first_error(F.transform(items(lst), lambda it: F.when(
                kind(it) == "object", check(fld(it, "datasetFQN"), STR, at(f".{key}[].datasetFQN"))))))
        return F.coalesce(
            check(r["started_v"], INT, at(".timestamp")),
            check(r["exe_v"], STR, at(".executionId")),
            F.when(r["execution"].isNotNull(), F.coalesce(
                check(fld(status, "executionStatus"), STR, at(".executionStatus")),
                F.when(has(r["started_v"]) & ~F.coalesce(r["started_ms"].between(0, MAX_MS), F.lit(False)),
                       reject("BAD_TIMESTAMP", at(".timestamp: epoch milliseconds out of range"))),
                check(r["ended_v"], INT, at(".endTime")),
                F.when(has(r["ended_v"]) & ~F.coalesce(r["ended_ms"].between(0, MAX_MS), F.lit(False)),
                       reject("BAD_TIMESTAMP", at(".endTime: epoch milliseconds out of range"))),
                check(r["executor_v"], OBJ, at(".executedBy")),
                F.when(r["has_executor"], F.coalesce(
                    check(fld(r["executor_v"], "name"), STR, at(".executedBy.name")),
                    F.when(truthy(ex_name), F.coalesce(check(fld(r["executor_v"], "type"), STR, at(".executedBy.type")),
                                                       ident(ex_name, at(".executedBy.name")))))),
                *io_errs)))

    return _with_run(status, body)


def _pipeline_run_triples(pipeline: Column, status: Column) -> Column:
    def body(r):
        ex_name = r["ex_name"]
        team = F.coalesce(sval(fld(r["executor_v"], "type")) == "team", F.lit(False))
        bound = {"rn": iri(minted("run", pipeline, r["execution"])), "team": team,
                 "agent": iri(F.when(r["has_executor"] & truthy(ex_name),
                                     F.when(team, om_named("team", ex_name)).otherwise(om_named("user", ex_name))))}
        return F.when(r["execution"].isNotNull(), let(bound, lambda b: inner(r, b)))

    def inner(r, b):
        rn, agent = b["rn"], b["agent"]
        io = []
        for key, prop in (("inputs", "inputFQN"), ("outputs", "outputFQN")):
            io.append(F.transform(items(fld(status, key)), lambda it: F.when(
                kind(it) == "object", triple(rn, om(prop), literal(sval(fld(it, "datasetFQN")))))))
        trip = F.array(
            triple(rn, RDF_TYPE(), om("Run")),
            triple(rn, om("runOf"), iri(pipeline)),
            triple(rn, om("executionStatus"), literal(sval(fld(status, "executionStatus")))),
            triple(rn, prov("startedAtTime"), datetime_literal(r["started_ms"].try_cast("long"))),
            triple(rn, prov("endedAtTime"), datetime_literal(r["ended_ms"].try_cast("long"))),
            triple(rn, prov("wasAssociatedWith"), agent),
            *agent_triples(agent, b["team"]),
        )
        return cat(trip, *io)

    return _with_run(status, body)
