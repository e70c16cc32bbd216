"""DataHub MetadataChangeLog, EntityChangeEvent_v1 and PlatformEvent envelopes → triples, in Spark SQL.

The Spark twin of changeprov.mapping.datahub / aspects: the same checks in the same order (the first
failing one is the quarantine reason), the same IRIs and the same triples. Native Spark SQL only:
variant access (try_variant_get), higher-order functions over arrays, no UDFs.

How it is built:

* The fields an event family reads are fetched once into a struct (``_fields``) and bound to a
  lambda variable (``_let``: ``transform(array(x), f)[0]``), so every later use is a small
  reference: Spark 4 generates code for lambdas too, and copies of big sub-expressions would make
  the generated code (and the driver's memory) explode.
* ``_Checks`` collects (condition, reason, detail) in the reference's order and becomes one
  ``CASE WHEN`` (first true wins). ``_get`` mirrors fields.get: one check per path step (BAD_TYPE
  when the parent is no object, MISSING_FIELD when required), then the type and emptiness checks.
* Every URN the reference passes through terms.urn_iri gets ``_bad_urn`` (empty, forbidden code
  point, not ``urn:…``, or an ``urn://`` authority pyoxigraph refuses).
* JSON embedded in strings (aspect.value, previousAspectValue.value, payload.value) is parsed with
  try_parse_json plus decode.py's strictness checks (BAD_ASPECT_JSON).
* Triples are built as structs (subject IRI, predicate term, object, object kind, datatype) with
  raw, unescaped IRIs and lexical forms; ``_format`` escapes and serialises them once at the end,
  so the long replace chains of S(x) and of literal escaping appear once per family, not per triple.
* The tables come from rules.json (vocab.rules()) and the reference's own _MEMBER_PATTERNS.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, NamedTuple

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.datahub import _MEMBER_PATTERNS, ECE, MCL, PLATFORM
from changeprov.mapping.decode import MAX_DEPTH
from changeprov.mapping.vocab import expand, rules
from changeprov.spark.decode import _count, _overflowing_number, _trailing_data, max_depth, reject
from changeprov.spark.family import Family
from changeprov.spark.stages import Plan
from changeprov.spark.sqlterms import (
    XSD, bad_identifier, digest, escape_string, iri, iri_safe, is_urn, minted, ms_to_xsd, valid_ms, variant_kind,
)

RDF_JSON = "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON"
TRIPLE = "struct<s:string,p:string,o:string,k:string,dt:string>"


# ---------------------------------------------------------------- small tools


def _let(value: Column, fn: Callable[[Column], Column]) -> Column:
    """``fn(value)`` with ``value`` evaluated once (a lambda variable), not once per use; it also
    keeps the plan and the generated code small (the value's expression appears once)."""
    marked = []

    def body(x: Column) -> Column:
        out = fn(x)
        marked.append(out.__dict__.get("_dh_array", False))
        return out

    out = F.transform(F.array(value), body).getItem(0)
    return _mark(out) if marked and marked[0] else out


def _bind(fn: Callable[[Column], Column], **values: Column) -> Column:
    """``fn(s)`` where ``s`` is a struct of ``values`` evaluated once (see _let)."""
    return _let(F.struct(*[v.alias(k) for k, v in values.items()]), fn)


class _Staging:
    """The plan of the family being built (see changeprov.spark.stages): values bound at the top
    level of a mapper (never inside a higher-order function's lambda) become staged columns."""

    plan: Plan | None = None
    count = 0


class _Bound:
    def __init__(self, cols: dict[str, Column]) -> None:
        self.cols = cols

    def __getitem__(self, key: str) -> Column:
        return self.cols[key]


def _stage(value: Column) -> Column:
    plan = _Staging.plan
    if plan is None:
        raise RuntimeError("a DataHub mapper is built outside a plan")
    _Staging.count += 1
    plan.next()
    col = plan.bind(f"b{_Staging.count}", value)
    plan.next()
    return col


def _top_let(value: Column, fn: Callable[[Column], Column]) -> Column:
    """_let for the top level of a mapper: ``value`` becomes a staged column."""
    out = fn(_stage(value))
    return out


def _top_bind(fn: Callable[[Column], Column], **values: Column) -> Column:
    """_bind for the top level of a mapper: each value becomes a staged column."""
    plan = _Staging.plan
    if plan is None:
        raise RuntimeError("a DataHub mapper is built outside a plan")
    plan.next()
    cols = {}
    for k, v in values.items():
        _Staging.count += 1
        cols[k] = plan.bind(f"b{_Staging.count}_{k}", v)
    plan.next()
    return fn(_Bound(cols))


def _mark(col: Column) -> Column:
    col._dh_array = True  # type: ignore[attr-defined]
    return col


def _empty() -> Column:
    return F.array().cast(f"array<{TRIPLE}>")


def _arr(*items: Column) -> Column:
    """array of triple structs from single triples (may be null) and arrays of them (never null)."""
    parts = [i if i.__dict__.get("_dh_array") else F.array(i) for i in items]
    return _mark(F.flatten(F.array(*parts)) if len(parts) > 1 else parts[0])


def _when_arr(cond: Column, arr: Column) -> Column:
    return _mark(F.when(cond, arr).otherwise(_empty()))


def _each(arr: Column, fn: Callable[[Column], Column]) -> Column:
    """flatten(transform(arr, fn)) where fn gives an array of triples per element (arr never null)."""
    return _mark(F.flatten(F.transform(arr, fn)))


def _curie_map(table: dict[str, str | None]) -> Column:
    """A literal map key → full IRI term ``<…>`` (entries with empty/None values left out)."""
    items = []
    for k, v in table.items():
        if v:
            items += [F.lit(k), F.lit("<" + expand(v) + ">")]
    return F.create_map(*items) if items else F.create_map().cast("map<string,string>")


def _str_map(table: dict[str, str]) -> Column:
    items = []
    for k, v in table.items():
        items += [F.lit(k), F.lit(v)]
    return F.create_map(*items) if items else F.create_map().cast("map<string,string>")


def _lookup(m: Column, key: Column) -> Column:
    return F.try_element_at(m, key)


def _term(curie: str) -> Column:
    return F.lit("<" + expand(curie) + ">")


# ---------------------------------------------------------------- triples as structs


class _O(NamedTuple):
    """An object: kind "i" (raw IRI, S(x) applied at the end), "t" (an N-Triples term, as is) or
    "l" (a literal's lexical form; ``dt`` its datatype IRI, None = xsd:string)."""

    k: str
    o: Column
    dt: Column | None = None


def _i(x: Column) -> _O:
    return _O("i", x)


def _c(curie: str) -> _O:
    return _O("t", _term(curie))


def _l(x: Column, dt: str | Column | None = None) -> _O:
    return _O("l", x, F.lit(dt) if isinstance(dt, str) else dt)


def _t(s: Column, p: str | Column, o: _O) -> Column:
    """One triple (struct); null subject or object = no triple."""
    pred = _term(p) if isinstance(p, str) else p
    dt = o.dt if o.dt is not None else F.lit(None)
    return F.struct(s.cast("string").alias("s"), pred.cast("string").alias("p"), o.o.cast("string").alias("o"),
                    F.lit(o.k).alias("k"), dt.cast("string").alias("dt"))


def _format(arr: Column) -> Column:
    """array<string> of N-Triples lines (duplicates allowed; triples with a null part dropped)."""
    def line(t: Column) -> Column:
        obj = (F.when(t["k"] == "t", t["o"])
               .when(t["k"] == "i", iri(iri_safe(t["o"])))
               .otherwise(F.concat(F.lit('"'), escape_string(t["o"]), F.lit('"'),
                                   F.when(t["dt"].isNotNull(), F.concat(F.lit("^^<"), t["dt"], F.lit(">")))
                                   .otherwise(F.lit("")))))
        return F.concat(iri(iri_safe(t["s"])), F.lit(" "), t["p"], F.lit(" "), obj, F.lit(" ."))

    return F.filter(F.transform(F.filter(arr, lambda t: t.isNotNull()), line), lambda x: x.isNotNull())


def _datetime(ms: Column) -> _O:
    return _l(ms_to_xsd(ms), XSD + "dateTime")


def _value(v: Column) -> Column:
    """emit.value_literal as struct<lex, dt> (JSON null / absent → null lexical: no triple)."""
    def body(s: Column) -> Column:
        kind, text = s["kind"], s["text"]
        lex = (F.when(kind == "string", s["v"].cast("string"))
               .when(kind == "decimal", F.when(text.contains("."), text).otherwise(F.concat(text, F.lit(".0"))))
               .when(kind.isin("boolean", "integer", "double", "object", "array"), text))
        dt = (F.when(kind == "boolean", XSD + "boolean").when(kind == "integer", XSD + "integer")
              .when(kind == "decimal", XSD + "decimal").when(kind == "double", XSD + "double")
              .when(kind.isin("object", "array"), RDF_JSON))
        return F.struct(lex.alias("lex"), dt.alias("dt"))

    return _bind(body, v=v, kind=variant_kind(v), text=F.to_json(v))


# ---------------------------------------------------------------- variant access


def _child(x: Column, key: str) -> Column:
    """``x[key]`` as a variant; SQL NULL when absent, JSON null, or ``x`` is no object."""
    c = F.try_variant_get(x, f"$['{key}']", "variant")
    return F.when(~F.is_variant_null(c), c)


def _first(x: Column) -> Column:
    return F.substring(F.to_json(x), 1, 1)


def _is_obj(x: Column) -> Column:
    return _first(x) == "{"


def _is_str(x: Column) -> Column:
    return _first(x) == '"'


def _is_true(x: Column) -> Column:
    return F.coalesce(F.to_json(x) == "true", F.lit(False))


def _is_int(x: Column) -> Column:
    """A JSON integer token (a Python int after json.loads): BIGINT, or a decimal of ≥ 19 digits and
    scale 0. ``1.0`` parses to DECIMAL(1,0) in Spark but is a Decimal, not an int, in the reference;
    integers past 38 digits (a double here) are not told apart from exponent numbers."""
    schema = F.schema_of_variant(x)
    return F.when(F.to_json(x).rlike("^-?[0-9]"),
                  schema.rlike(r"^(TINYINT|SMALLINT|INT|BIGINT|DECIMAL\((19|[23][0-9]),0\))$")).otherwise(F.lit(False))


def _text(x: Column) -> Column:
    """A variant string's value (caller checked the type)."""
    return x.cast("string")


def _truthy(s: Column) -> Column:
    return s.isNotNull() & (F.length(s) > 0)


def _var_array(x: Column) -> Column:
    """The elements of a JSON array (empty for anything else)."""
    return F.coalesce(F.try_variant_get(x, "$", "array<variant>"), F.array().cast("array<variant>"))


def _urns(value: Column, path: list[str]) -> Column:
    """aspects._urns: the strings found at ``path`` (``*`` = every array element) as array<string>."""
    cur = F.array(value)
    for head in path:
        if head == "*":
            cur = F.flatten(F.transform(cur, lambda x: _var_array(x)))
        else:
            cur = F.transform(cur, _getter(head))
    return F.transform(F.filter(cur, lambda x: _is_str(x)), lambda x: x.cast("string"))


def _getter(key: str) -> Callable[[Column], Column]:
    return lambda x: _child(x, key)


def _bad_urn(text: Column) -> Column:
    """terms.urn_iri would raise BadIdentifier: empty/forbidden code point, not a URN, or an
    ``urn://authority`` that is no valid IRI authority (pyoxigraph's check in terms.named)."""
    authority = F.regexp_extract(text, r"^(?i:urn)://([^/]*)", 1)
    bad_authority = F.lower(F.substring(text, 1, 6)).eqNullSafe("urn://") & ~authority.rlike(
        r"^([^@]*@)?[^@:]*(:[0-9]*)?$")
    return bad_identifier(text) | ~is_urn(text) | (F.length(text) == 4) | bad_authority


def _bad_json(text: Column) -> Column:
    """loads_strict would reject ``text`` (syntax, trailing data, duplicate keys, lone surrogates,
    numbers beyond a double, nesting deeper than the limit)."""
    deep = (_count(text, "[{") > MAX_DEPTH) & (max_depth(text) > MAX_DEPTH)
    return F.try_parse_json(text).isNull() | _trailing_data(text) | _overflowing_number(text) | deep


# ---------------------------------------------------------------- ordered checks


class _Checks:
    """(condition, reason, detail) in the reference's order; ``column()`` = the first that holds."""

    def __init__(self) -> None:
        self.items: list[tuple[Column, str, Column | str]] = []
        self._guards: list[Column] = []

    @contextmanager
    def guard(self, cond: Column):
        self._guards.append(cond)
        try:
            yield
        finally:
            self._guards.pop()

    def add(self, cond: Column, reason: str, detail: Column | str) -> None:
        for g in self._guards:
            cond = g & cond
        self.items.append((F.coalesce(cond, F.lit(False)), reason, detail))

    def extend(self, other: "_Checks") -> None:
        for cond, reason, detail in other.items:
            self.add(cond, reason, detail)

    def column(self) -> Column:
        out = None
        for cond, reason, detail in self.items:
            r = reject(reason, detail)
            out = F.when(cond, r) if out is None else out.when(cond, r)
        return out if out is not None else F.lit(None).cast("struct<reason:string,detail:string>")


_KIND_NAMES = {"str": "a string", "int": "an integer", "obj": "an object"}
_KIND_TESTS = {"str": _is_str, "int": _is_int, "obj": _is_obj}


def _fname(path: str) -> str:
    return "f_" + path.replace(".", "__")


def _fields(root: Column, paths: list[str]) -> Column:
    """struct of the variants at ``paths`` (dotted, from ``root``), JSON null as SQL NULL — bound once
    (see _let), so the checks below refer to small lambda-variable fields."""
    cols = []
    for path in dict.fromkeys(paths):
        c = F.try_variant_get(root, "$" + "".join(f"['{k}']" for k in path.split(".")), "variant")
        cols.append(F.when(~F.is_variant_null(c), c).alias(_fname(path)))
    return F.struct(*cols)


def _prefixes(paths: list[str]) -> list[str]:
    out = []
    for path in paths:
        parts = path.split(".")
        out += [".".join(parts[: i + 1]) for i in range(len(parts))]
    return list(dict.fromkeys(out))


class _View:
    """Dotted path → the bound variant (a field of the struct built by _fields)."""

    def __init__(self, bound: Column) -> None:
        self.bound = bound

    def __call__(self, path: str) -> Column:
        return self.bound[_fname(path)]


def _get(ck: _Checks, obj: _View, path: str, kind: str, *, required: bool = False, at: str = "") -> Column:
    """fields.get: the variant at dotted ``path`` (SQL NULL when absent/null), with its checks."""
    name = at + path
    parts = path.split(".")
    cur = None
    for i, part in enumerate(parts):
        if i:
            ck.add(cur.isNotNull() & ~_is_obj(cur), "BAD_TYPE", f"{name}: expected an object at '{part}'")
        cur = obj(".".join(parts[: i + 1]))
        if required:
            ck.add(cur.isNull(), "MISSING_FIELD", f"{name} is required")
    ck.add(cur.isNotNull() & ~_KIND_TESTS[kind](cur), "BAD_TYPE", f"{name}: expected {_KIND_NAMES[kind]}")
    if required and kind == "str":
        ck.add(_text(cur) == "", "MISSING_FIELD", f"{name} is empty")
    return cur


def _get_str(ck: _Checks, obj: _View, path: str, **kw) -> Column:
    return _text(_get(ck, obj, path, "str", **kw))


def _time(ck: _Checks, obj: _View, path: str, *, at: str = "") -> Column:
    """datahub._time: a required integer in 0 … MAX_MS (as a long)."""
    value = _get(ck, obj, path, "int", required=True, at=at)
    ms = F.try_variant_get(value, "$", "long")
    ck.add(~F.coalesce(valid_ms(ms), F.lit(False)), "BAD_TIMESTAMP",
           F.concat(F.lit(f"{at}{path}: epoch milliseconds out of range: "), F.to_json(value)))
    return ms


def _check_urn(ck: _Checks, text: Column, path: str) -> None:
    ck.add(_bad_urn(text), "BAD_IDENTIFIER", F.concat(F.lit(f"{path}: not a usable URN: "),
                                                      F.substring(text, 1, 200)))


def _check_urns(ck: _Checks, arr: Column, path: str) -> None:
    ck.add(F.exists(arr, _bad_urn), "BAD_IDENTIFIER", f"{path}: a URN that cannot become an IRI")


# ---------------------------------------------------------------- shared node shapes (emit.Graph)


def _entity(node: Column, *, asset_type: Column | None = None, cls: str | Column | None = None) -> Column:
    """Graph.entity for a DataHub URN ``node`` (raw; it is also the om-event:urn literal)."""
    items = [_t(node, "rdf:type", _c("om-event:MetadataEntity"))]
    if isinstance(cls, str):
        items.append(_t(node, "rdf:type", _c(cls)))
    elif cls is not None:
        items.append(_t(node, "rdf:type", _O("t", cls)))
    if asset_type is not None:
        items.append(_t(node, "om-event:assetType", _l(asset_type)))
    items.append(_t(node, "om-event:urn", _l(node)))
    return _arr(*items)


def _agent(node: Column) -> Column:
    return _arr(_t(node, "rdf:type", _c("prov:Agent")),
                F.when(node.startswith("urn:li:corpGroup:"), _t(node, "rdf:type", _c("prov:Organization"))))


def _urn_node(urn: Column, cls: str) -> Column:
    """aspects._node: an agent (``cls == "agent"``) or an entity of class ``cls``."""
    if cls == "agent":
        return _agent(urn)
    return _entity(urn, cls=None if cls == "om-event:MetadataEntity" else cls)


def _lineage(event: Column, down: Column, up: Column, removed: Column | bool = False,
             extra: Callable[[Column], Column] | None = None) -> Column:
    """Graph.lineage (``down``/``up`` raw URNs); ``extra(edge)`` adds triples about the edge."""
    def body(s: Column) -> Column:
        e = s["edge"]
        if isinstance(removed, bool):
            by = _t(e, "om-event:removedBy" if removed else "om-event:addedBy", _i(event))
        else:
            by = _t(e, F.when(removed, _term("om-event:removedBy")).otherwise(_term("om-event:addedBy")), _i(event))
        items = [_t(e, "rdf:type", _c("om-event:LineageEdge")), _t(down, "prov:qualifiedDerivation", _i(e)),
                 _t(e, "prov:entity", _i(up)), _t(down, "prov:wasDerivedFrom", _i(up)), by]
        if extra is not None:
            items.append(extra(e))
        return _arr(*items)

    return _bind(body, edge=minted("lineage", iri_safe(down), iri_safe(up)))


def _event_node(event: Column, *, event_type: Column, ms: Column, entity: Column, agent: Column | None,
                lifecycle: Column | None = None, operation: Column | None = None) -> Column:
    """events.event_node; ``event_type``/``lifecycle``/``operation`` are terms ``<…>``."""
    items = [_t(event, "rdf:type", _c("om-event:ChangeEvent")), _t(event, "om-event:eventType", _O("t", event_type)),
             _t(event, "om-event:timestamp", _datetime(ms)), _t(event, "om-event:affectsEntity", _i(entity))]
    if agent is not None:
        items.append(_t(event, "om-event:performedBy", _i(agent)))
    if lifecycle is not None:
        items.append(_t(event, "om-event:lifecycleChange", _O("t", lifecycle)))
    if operation is not None:
        items.append(_t(event, "om-event:operation", _O("t", operation)))
    return _arr(*items)


_FIELD_KINDS = {"added": "fieldsAdded", "updated": "fieldsUpdated", "deleted": "fieldsDeleted"}


def _change_iri(event: Column, kind: Column) -> Column:
    return F.concat(event, F.lit("/change/"), kind, F.lit("/0"))


def _field_change(event: Column, kind: Column, name: Column, *, old: _O | None = None,
                  new: _O | None = None) -> Column:
    """events.field_change (index 0); ``old``/``new`` literal objects (null lexical = no triple)."""
    description = F.concat(event, F.lit("/changes"))
    change = _change_iri(event, kind)
    prop = F.lit(None).cast("string")
    for k, local in _FIELD_KINDS.items():
        prop = F.when(kind == k, _term("om-event:" + local)).otherwise(prop)
    items = [_t(event, "om-event:hasChangeDescription", _i(description)),
             _t(description, "rdf:type", _c("om-event:ChangeDescription")),
             _t(description, prop, _i(change)),
             _t(change, "rdf:type", _c("om-event:FieldChange")),
             _t(change, "om-event:fieldName", _l(name))]
    if old is not None:
        items.append(_t(change, "om-event:oldValue", old))
    if new is not None:
        items.append(_t(change, "om-event:newValue", new))
    return _arr(*items)


def _json_object(members: list[tuple[str, Column]]) -> Column:
    """Canonical JSON text of an object from (key, variant-or-null) members, keys sorted; absent
    (SQL NULL) members are left out, as the reference drops None values."""
    parts = [F.when(v.isNotNull(), F.concat(F.lit(f'"{k}":'), F.to_json(v))) for k, v in sorted(members)]
    return F.concat(F.lit("{"), F.concat_ws(",", *parts), F.lit("}"))


# ---------------------------------------------------------------- MetadataChangeLog


def _family_rules(family: str) -> tuple[Column, Column]:
    rows = [r for r in rules()["eventTypes"] if r["family"] == family]
    return (_curie_map({r["value"]: r["eventType"] for r in rows}),
            _str_map({r["value"]: r["pattern"] for r in rows}))


def _result(triples: Column, rejected: Column, ms: Column) -> Column:
    return F.struct(_format(triples).alias("triples"), rejected.alias("rejected"), ms.alias("ms"))


def _family(plan: Plan, build: Callable[[], Column]) -> Family:
    """Build one family's mapper inside ``plan``; its result struct is the last staged column."""
    _Staging.plan, _Staging.count = plan, 0
    try:
        result = _stage(build())
    finally:
        _Staging.plan = None
    return Family(result["triples"], result["rejected"], result["ms"])


MCL_PATHS = _prefixes(["changeType", "entityUrn", "entityType", "aspectName", "created.time", "created.actor",
                       "created.impersonator", "systemMetadata.lastObserved", "systemMetadata.version",
                       "aspect.value", "previousAspectValue.value", "previousSystemMetadata.version"])


def mcl(plan: Plan) -> Family:
    return _family(plan, lambda: _top_let(_fields(F.col("v"), MCL_PATHS), lambda s: _mcl_head(_View(s))))


def _norm(x: Column) -> Column:
    return F.when(~F.is_variant_null(x), x)


def _mcl_head(v: _View) -> Column:
    ck = _Checks()
    event_types, patterns = _family_rules(MCL)
    change_type = _get_str(ck, v, "changeType", required=True)
    event_type = _lookup(event_types, change_type)
    ck.add(event_type.isNull(), "UNKNOWN_EVENT_TYPE",
           F.concat(F.lit("changeType: "), change_type, F.lit(f" is not a known {MCL} value")))
    entity_urn = _get_str(ck, v, "entityUrn", required=True)
    entity_type = _get_str(ck, v, "entityType", required=True)
    aspect = _get_str(ck, v, "aspectName", required=True)
    created = _get(ck, v, "created", "obj")
    with ck.guard(created.isNotNull()):
        ms_created = _time(ck, v, "created.time")
    with ck.guard(created.isNull()):
        ms_observed = _time(ck, v, "systemMetadata.lastObserved")
    ms = F.when(created.isNotNull(), ms_created).otherwise(ms_observed)
    actor = _get_str(ck, v, "created.actor")
    new_text = _get_str(ck, v, "aspect.value")
    old_text = _get_str(ck, v, "previousAspectValue.value")
    deleting = F.coalesce(_lookup(patterns, change_type) == "aspect-delete", F.lit(False))
    ck.add(~deleting & new_text.isNull(), "MISSING_FIELD",
           F.concat(F.lit("aspect.value is required for changeType "), change_type))
    ck.add(~deleting & new_text.isNotNull() & _bad_json(new_text), "BAD_ASPECT_JSON",
           "aspect.value: not one valid JSON value")
    ck.add(old_text.isNotNull() & _bad_json(old_text), "BAD_ASPECT_JSON",
           "previousAspectValue.value: not one valid JSON value")
    _check_urn(ck, entity_urn, "entityUrn")
    ck.add(_truthy(actor) & _bad_urn(actor), "BAD_IDENTIFIER", "created.actor: not a usable URN")
    impersonator = _get_str(ck, v, "created.impersonator")
    ck.add(_truthy(impersonator) & _bad_urn(impersonator), "BAD_IDENTIFIER", "created.impersonator: not a usable URN")
    version = _get_str(ck, v, "systemMetadata.version")
    previous = _get_str(ck, v, "previousSystemMetadata.version")
    return _top_bind(
        _mcl_body, rej=ck.column(), ms=ms, ct=change_type, et=event_type, urn=entity_urn, etype=entity_type,
        aspect=aspect, actor=actor, imp=impersonator, new_text=new_text, old_text=old_text, version=version,
        previous=previous, deleting=deleting,
        new=F.when(~deleting & new_text.isNotNull(), _norm(F.try_parse_json(new_text))),
        old=F.when(old_text.isNotNull(), _norm(F.try_parse_json(old_text))))


def _mcl_body(e: Column) -> Column:
    urn, actor, imp, old = e["urn"], e["actor"], e["imp"], e["old"]
    event = minted("event", F.lit(MCL), urn, e["aspect"], e["ct"], e["ms"].cast("string"),
                   F.coalesce(actor, F.lit("")), F.coalesce(e["new_text"], F.lit("")),
                   F.coalesce(e["old_text"], F.lit("")))
    kind = F.when(e["deleting"], "deleted").when(old.isNotNull(), "updated").otherwise("added")
    return _top_bind(lambda n: _mcl_triples(e, n), event=event, safe=iri_safe(urn), kind=kind,
                 agent=F.when(_truthy(actor), actor), imp=F.when(_truthy(imp), imp),
                 old_value=_value(old), new_value=_value(e["new"]))


def _mcl_triples(e: Column, n: Column) -> Column:
    deleting, new, old = e["deleting"], e["new"], e["old"]
    aspect, urn, ms = e["aspect"], e["urn"], e["ms"]
    event, safe, agent, imp, kind = n["event"], n["safe"], n["agent"], n["imp"], n["kind"]
    removed_now = ~deleting & _is_obj(new) & _is_true(_child(new, "removed"))
    removed_before = _is_obj(old) & _is_true(_child(old, "removed"))
    lifecycle = (F.when(aspect.endswith(rules()["keyAspectSuffix"]),
                        F.when(deleting, _term("om-event:HardDeleted"))
                        .when(old.isNull(), _term("om-event:Created")))
                 .when(aspect == "status",
                       F.when(removed_now & ~removed_before, _term("om-event:SoftDeleted"))
                       .when(removed_before & ~removed_now & ~deleting, _term("om-event:Restored"))))
    change = _change_iri(event, kind)
    old_v, new_v = n["old_value"], n["new_value"]
    triples = _arr(
        _entity(urn, asset_type=e["etype"]),
        _when_arr(agent.isNotNull(), _agent(agent)),
        _event_node(event, event_type=e["et"], ms=ms, entity=urn, agent=agent, lifecycle=lifecycle),
        _t(event, "om-event:aspectName", _l(aspect)),
        _t(event, "om-event:entityType", _l(e["etype"])),
        _when_arr(imp.isNotNull(), _arr(_t(event, "om-event:impersonatedBy", _i(imp)), _agent(imp))),
        _versions(event, urn, safe, aspect, e["version"], e["previous"], deleting),
        _field_change(event, kind, aspect,
                      old=_l(F.when(kind != "added", old_v["lex"]), old_v["dt"]),
                      new=_l(F.when(kind != "deleted", new_v["lex"]), new_v["dt"])),
    )
    aspect_part = _aspect(event, urn, safe, change, aspect, old, F.when(~deleting, new), deleting)
    return _top_let(aspect_part, lambda a: _result(_arr(triples, _mark(a["t"])), F.coalesce(e["rej"], a["c"]), ms))


def _versions(event: Column, urn: Column, safe: Column, aspect: Column, version: Column, previous: Column,
              deleting: Column) -> Column:
    before = F.when(_truthy(previous), minted("version", safe, aspect, previous))
    now = minted("version", safe, aspect, version)
    makes = ~deleting & _truthy(version) & ~F.coalesce(version == previous, F.lit(False))
    return _arr(
        _t(event, "prov:used", _i(before)),
        F.when(deleting, _t(before, "prov:wasInvalidatedBy", _i(event))),
        _when_arr(makes, _arr(_t(now, "rdf:type", _c("om-event:EntityVersion")),
                              _t(now, "rdf:type", _c("om-event:AspectVersion")),
                              _t(now, "prov:specializationOf", _i(urn)),
                              _t(now, "om-event:versionLabel", _l(version)),
                              _t(now, "prov:wasGeneratedBy", _i(event)),
                              _t(now, "prov:wasRevisionOf", _i(before)))))


NO_REJECT = "struct<reason:string,detail:string>"


def _part(triples: Column, ck: _Checks) -> Column:
    """struct<t: triples, c: the first failing check or null> of one aspect pattern."""
    return F.struct(triples.alias("t"), ck.column().alias("c"))


def _aspect(event: Column, urn: Column, safe: Column, change: Column, aspect: Column,
            old: Column, new: Column, deleting: Column) -> Column:
    """aspects.map_aspect: the rules.json aspect pattern chosen by aspectName → struct<t, c>."""
    out = F.struct(_empty().alias("t"), F.lit(None).cast(NO_REJECT).alias("c"))
    for name, spec in reversed(list(rules()["aspects"].items())):
        pattern = spec["pattern"]
        if pattern == "members":
            part = _members(change, spec, old, new)
        elif pattern == "job-io":
            part = _job_io(change, old, new)
        elif pattern == "upstream-lineage":
            part = _upstream_lineage(event, urn, old, new)
        elif pattern == "schema":
            part = _schema(change, urn, old, new)
        elif pattern.startswith("run-"):
            part = F.when(~deleting & _is_obj(new), _run(urn, safe, pattern, new))
        else:
            continue  # "status": the lifecycle only
        out = F.when(aspect == name, part).otherwise(out)
    return F.coalesce(out, F.struct(_empty().alias("t"), F.lit(None).cast(NO_REJECT).alias("c")))


def _diff(change: Column, before: Column, after: Column, added: str, removed: str) -> Column:
    """events.member_changes over URN sets."""
    return _arr(_each(F.array_except(after, before), lambda u: F.array(_t(change, added, _i(u)))),
                _each(F.array_except(before, after), lambda u: F.array(_t(change, removed, _i(u)))))


def _members(change: Column, spec: dict, old: Column, new: Column) -> Column:
    where = ".value." + ".".join(spec["path"])
    cls = spec["class"]

    def body(s: Column) -> Column:
        ck = _Checks()
        ck.add(F.exists(s["b"], _bad_urn), "BAD_IDENTIFIER", f"previousAspectValue{where}: a URN that is no IRI")
        ck.add(F.exists(s["a"], _bad_urn), "BAD_IDENTIFIER", f"aspect{where}: a URN that is no IRI")
        return _part(_arr(_each(F.array_union(s["b"], s["a"]), lambda u: _urn_node(u, cls)),
                          _diff(change, s["b"], s["a"], spec["added"], spec["removed"])), ck)

    return _bind(body, b=_urns(old, spec["path"]), a=_urns(new, spec["path"]))


def _job_io(change: Column, old: Column, new: Column) -> Column:
    parts = []
    for key, added, removed in (("input", "om-event:addedInput", "om-event:removedInput"),
                                ("output", "om-event:addedOutput", "om-event:removedOutput")):
        def found(value: Column, key: str = key) -> Column:
            return F.array_union(_urns(value, [f"{key}Datasets", "*"]),
                                 _urns(value, [f"{key}DatasetEdges", "*", "destinationUrn"]))

        parts.append(_bind(_job_io_part(change, key, added, removed), b=found(old), a=found(new)))
    return _let(F.struct(parts[0].alias("i"), parts[1].alias("o")), lambda p: F.struct(
        F.concat(p["i"]["t"], p["o"]["t"]).alias("t"), F.coalesce(p["i"]["c"], p["o"]["c"]).alias("c")))


def _job_io_part(change: Column, key: str, added: str, removed: str) -> Callable[[Column], Column]:
    def body(s: Column) -> Column:
        ck = _Checks()
        ck.add(F.exists(s["b"], _bad_urn), "BAD_IDENTIFIER", f"previousAspectValue.value.{key}Datasets: a URN that is no IRI")
        ck.add(F.exists(s["a"], _bad_urn), "BAD_IDENTIFIER", f"aspect.value.{key}Datasets: a URN that is no IRI")
        return _part(_arr(_each(F.array_union(s["b"], s["a"]), lambda u: _urn_node(u, "om-event:MetadataEntity")),
                          _diff(change, s["b"], s["a"], added, removed)), ck)
    return body


def _last_wins(arr: Column, key: Callable[[Column], Column]) -> Column:
    """Keep each element unless a later one has the same key (a Python dict built in order)."""
    return F.filter(arr, lambda x, i: ~F.exists(F.slice(arr, i + 2, F.greatest(F.size(arr), F.lit(1))),
                                                lambda y: key(y) == key(x)))


def _upstreams(value: Column) -> Column:
    """array<struct<ds, kind>>: the upstream datasets (the last occurrence's ``type`` wins)."""
    items = F.filter(_var_array(_child(value, "upstreams")), lambda x: _is_obj(x) & _is_str(_child(x, "dataset")))
    pairs = F.transform(items, lambda x: F.struct(
        _text(_child(x, "dataset")).alias("ds"),
        F.when(_is_str(_child(x, "type")), _text(_child(x, "type"))).alias("kind")))
    return _let(pairs, lambda p: _last_wins(p, lambda y: y["ds"]))


def _fine_grained(value: Column) -> Column:
    """array<struct<d, u, op>>: column pairs (the last occurrence's operation wins)."""
    items = F.filter(_var_array(_child(value, "fineGrainedLineages")), lambda x: _is_obj(x))

    def pairs(item: Column) -> Column:
        def body(s: Column) -> Column:
            return F.flatten(F.transform(s["downs"], lambda d: F.transform(
                s["ups"], lambda u: F.struct(d.alias("d"), u.alias("u"), s["op"].alias("op")))))

        op = _child(item, "transformOperation")
        return _bind(body, op=F.when(_is_str(op), _text(op)), ups=_urns(item, ["upstreams", "*"]),
                     downs=_urns(item, ["downstreams", "*"]))

    return _let(F.flatten(F.transform(items, pairs)), lambda p: _last_wins(p, lambda y: F.struct(y["d"], y["u"])))


def _upstream_lineage(event: Column, urn: Column, old: Column, new: Column) -> Column:
    def body(s: Column) -> Column:
        ck = _Checks()
        for key, where in (("now", "aspect"), ("before", "previousAspectValue")):
            ck.add(F.exists(s[key], lambda x: _bad_urn(x["ds"])), "BAD_IDENTIFIER",
                   f"{where}.value.upstreams.dataset: a URN that is no IRI")
        for key, where in (("cnow", "aspect"), ("cbefore", "previousAspectValue")):
            ck.add(F.exists(s[key], lambda x: _bad_urn(x["d"]) | _bad_urn(x["u"])), "BAD_IDENTIFIER",
                   f"{where}.value.fineGrainedLineages: a URN that is no IRI")
        now_keys = F.transform(s["now"], lambda x: x["ds"])
        col_keys = F.transform(s["cnow"], lambda x: F.struct(x["d"], x["u"]))

        def added(x: Column) -> Column:
            return _lineage(event, urn, x["ds"], False, lambda e: _t(e, "om-event:lineageSource", _l(x["kind"])))

        def col_added(x: Column) -> Column:
            return _lineage(event, x["d"], x["u"], False,
                            lambda e: _t(e, "om-event:transformOperation", _l(x["op"])))

        triples = _arr(
            _t(event, "om-event:setsUpstreamsOf", _i(urn)),
            _each(F.concat(s["now"], s["before"]), lambda x: _entity(x["ds"])),
            _each(s["now"], added),
            _each(F.filter(s["before"], lambda x: ~F.array_contains(now_keys, x["ds"])),
                  lambda x: _lineage(event, urn, x["ds"], True)),
            _each(F.concat(s["cnow"], s["cbefore"]),
                  lambda x: _arr(_entity(x["d"], cls="om-event:Column"), _entity(x["u"], cls="om-event:Column"))),
            _each(s["cnow"], col_added),
            _each(F.filter(s["cbefore"], lambda x: ~F.array_contains(col_keys, F.struct(x["d"], x["u"]))),
                  lambda x: _lineage(event, x["d"], x["u"], True)))
        return _part(triples, ck)

    return _bind(body, now=_upstreams(new), before=_upstreams(old), cnow=_fine_grained(new),
                 cbefore=_fine_grained(old))


def _schema_fields(value: Column) -> Column:
    """array<struct<path, json>> of the schema fields (the last occurrence of a fieldPath wins)."""
    items = F.filter(_var_array(_child(value, "fields")), lambda x: _is_obj(x) & _is_str(_child(x, "fieldPath")))
    pairs = F.transform(items, lambda x: F.struct(_text(_child(x, "fieldPath")).alias("path"),
                                                  F.to_json(x).alias("json")))
    return _let(pairs, lambda p: _last_wins(p, lambda y: y["path"]))


def _schema(change: Column, urn: Column, old: Column, new: Column) -> Column:
    def field_urn(path: Column) -> Column:
        return F.concat(F.lit("urn:li:schemaField:("), urn, F.lit(","), path, F.lit(")"))

    def diffs(s: Column) -> Column:
        before_paths = F.transform(s["b"], lambda x: x["path"])
        after_paths = F.transform(s["a"], lambda x: x["path"])
        changed = F.transform(F.filter(s["a"], lambda x: F.exists(
            s["b"], lambda y: (y["path"] == x["path"]) & (y["json"] != x["json"]))), lambda x: x["path"])
        return F.struct(F.array_except(after_paths, before_paths).alias("added"),
                        F.array_except(before_paths, after_paths).alias("removed"), changed.alias("changed"))

    def emit(d: Column) -> Column:
        ck = _Checks()
        ck.add(F.exists(F.concat(d["added"], d["removed"], d["changed"]), lambda p: _bad_urn(field_urn(p))),
               "BAD_IDENTIFIER", "aspect.value.fields.fieldPath: a field URN that is no IRI")

        def one(prop: str) -> Callable[[Column], Column]:
            return lambda p: _let(field_urn(p), lambda f: _arr(_t(change, prop, _i(f)),
                                                               _entity(f, cls="om-event:Column")))

        return _part(_arr(_each(d["added"], one("om-event:addedSchemaField")),
                          _each(d["removed"], one("om-event:removedSchemaField")),
                          _each(d["changed"], one("om-event:changedSchemaField"))), ck)

    return _let(_bind(diffs, b=_schema_fields(old), a=_schema_fields(new)), emit)


def _run(urn: Column, safe: Column, pattern: str, value: Column) -> Column:
    """aspects._run → struct<t, c> (``urn`` the dataProcessInstance, ``safe`` its IRI text)."""
    run = minted("run", safe)
    base = _arr(_t(run, "rdf:type", _c("om-event:Run")), _t(run, "om-event:runRecord", _i(urn)))
    ck = _Checks()
    if pattern in ("run-input", "run-output", "run-relationships"):
        path, where = {"run-input": (["inputs", "*"], "inputs"), "run-output": (["outputs", "*"], "outputs"),
                       "run-relationships": (["parentTemplate"], "parentTemplate")}[pattern]

        def link(u: Column) -> Column:
            t = {"run-input": lambda: _t(run, "prov:used", _i(u)),
                 "run-output": lambda: _t(u, "prov:wasGeneratedBy", _i(run)),
                 "run-relationships": lambda: _t(run, "om-event:runOf", _i(u))}[pattern]()
            return _arr(t, _entity(u))

        def body(urns: Column) -> Column:
            ck.add(F.exists(urns, _bad_urn), "BAD_IDENTIFIER", f"aspect.value.{where}: a URN that is no IRI")
            return _part(_arr(base, _each(urns, link)), ck)

        return _let(_urns(value, path), body)
    if pattern == "run-event":
        def event_body(s: Column) -> Column:
            status, ms = s["status"], s["ms"]
            timed = s["is_int"] & status.isin("STARTED", "COMPLETE")
            ck.add(timed & ~F.coalesce(valid_ms(ms), F.lit(False)), "BAD_TIMESTAMP",
                   "aspect.value.timestampMillis: epoch milliseconds out of range")
            prop = F.when(status == "STARTED", _term("prov:startedAtTime")).otherwise(_term("prov:endedAtTime"))
            result = _child(value, "result")
            rtype = _child(result, "type")
            return _part(_arr(base, F.when(timed, _t(run, prop, _datetime(ms))),
                              F.when((status == "COMPLETE") & _is_obj(result) & _is_str(rtype),
                                     _t(run, "om-event:executionStatus", _l(_text(rtype))))), ck)

        ms_v, status_v = _child(value, "timestampMillis"), _child(value, "status")
        return _bind(event_body, is_int=_is_int(ms_v), ms=F.try_variant_get(ms_v, "$", "long"),
                     status=F.when(_is_str(status_v), _text(status_v)))
    if pattern == "run-properties":
        name = _child(value, "name")
        return _part(_arr(base, F.when(_is_str(name), _t(run, "rdfs:label", _l(_text(name))))), ck)
    return _part(base, ck)


# ---------------------------------------------------------------- EntityChangeEvent


ECE_PATHS = _prefixes(["category", "operation", "entityUrn", "entityType", "auditStamp.time", "auditStamp.actor",
                       "modifier", "parameters.resourceUrn", "parameters.dataJobUrn"]
                      + ["parameters." + key for key, _, _, _ in _MEMBER_PATTERNS.values()])


def _ece(ck: _Checks, obj: _View, *, at: str = "") -> Column:
    """datahub.map_ece up to the triples: its checks go to ``ck`` (in order); returns the struct of
    the values _ece_triples needs."""
    event_types, patterns = _family_rules(ECE)
    ops = rules()["operations"]
    category = _get_str(ck, obj, "category", required=True, at=at)
    event_type = _lookup(event_types, category)
    ck.add(event_type.isNull(), "UNKNOWN_EVENT_TYPE",
           F.concat(F.lit(f"{at}category: "), category, F.lit(f" is not a known {ECE} value")))
    operation = _get_str(ck, obj, "operation", required=True, at=at)
    op_term = _lookup(_curie_map({k: v["operation"] for k, v in ops.items()}), operation)
    ck.add(op_term.isNull(), "UNKNOWN_EVENT_TYPE",
           F.concat(F.lit(f"{at}operation: "), operation, F.lit(" is not a known operation")))
    entity_urn = _get_str(ck, obj, "entityUrn", required=True, at=at)
    entity_type = _get_str(ck, obj, "entityType", at=at)
    ms = _time(ck, obj, "auditStamp.time", at=at)
    actor = _get_str(ck, obj, "auditStamp.actor", at=at)
    modifier_v = _get(ck, obj, "modifier", "str", at=at)
    params = _get(ck, obj, "parameters", "obj", at=at)
    _check_urn(ck, entity_urn, at + "entityUrn")
    ck.add(_truthy(actor) & _bad_urn(actor), "BAD_IDENTIFIER", f"{at}auditStamp.actor: not a usable URN")
    pattern = _lookup(patterns, category)
    modifier = _text(modifier_v)

    # _ece_structure
    member_value = F.lit(None).cast("string")
    member_prop = F.lit(None).cast("string")
    member_cls = F.lit(None).cast("string")
    for name, (key, added, removed, cls) in _MEMBER_PATTERNS.items():
        with ck.guard(pattern == name):
            kv = _get_str(ck, obj, "parameters." + key, at=at)
        value = F.when(_truthy(kv), kv).otherwise(modifier)
        prop = F.when(operation == "ADD", _term(added)).when(operation == "REMOVE", _term(removed))
        if name == "schema-field":
            prop = F.when(operation == "MODIFY", _term("om-event:changedSchemaField")).otherwise(prop)
        member_value = F.when(pattern == name, value).otherwise(member_value)
        member_prop = F.when(pattern == name, prop).otherwise(member_prop)
        member_cls = F.when(pattern == name, F.lit(cls or "")).otherwise(member_cls)
    member_ok = F.coalesce(_truthy(member_value) & member_prop.isNotNull() & member_value.startswith("urn:"),
                           F.lit(False))
    ck.add(member_ok & _bad_urn(member_value), "BAD_IDENTIFIER", f"{at}parameters/modifier: not a usable URN")
    with ck.guard(pattern == "lifecycle"):
        resource = _get_str(ck, obj, "parameters.resourceUrn", at=at)
    proposal = F.coalesce((pattern == "lifecycle") & (operation == "CREATE") & _truthy(resource), F.lit(False))
    ck.add(proposal & _bad_urn(resource), "BAD_IDENTIFIER", f"{at}parameters.resourceUrn: not a usable URN")
    with ck.guard(pattern == "run"):
        job = _get_str(ck, obj, "parameters.dataJobUrn", at=at)
    run_of = F.coalesce((pattern == "run") & _truthy(job) & entity_urn.startswith("urn:li:dataProcessInstance:"),
                        F.lit(False))
    ck.add(run_of & _bad_urn(job), "BAD_IDENTIFIER", f"{at}parameters.dataJobUrn: not a usable URN")

    kind = _lookup(_str_map({k: v["fieldKind"] for k, v in ops.items()}), operation)
    lifecycle = F.when(pattern == "lifecycle", _lookup(_curie_map(rules()["eceLifecycle"]), operation))
    payload = F.when(modifier_v.isNotNull() | params.isNotNull(),
                     _json_object([("modifier", modifier_v), ("parameters", params)]))
    cls_term = F.lit(None).cast("string")
    for c in sorted({c for (_, _, _, c) in _MEMBER_PATTERNS.values() if c and c != "agent"}):
        cls_term = F.when(member_cls == c, _term(c)).otherwise(cls_term)
    return F.struct(
        ms.alias("ms"), entity_urn.alias("urn"), entity_type.alias("etype"), category.alias("category"),
        operation.alias("operation"), modifier.alias("modifier"), F.when(_truthy(actor), actor).alias("agent"),
        actor.alias("actor"), event_type.alias("et"), op_term.alias("op"), kind.alias("kind"),
        lifecycle.alias("lifecycle"), payload.alias("payload"), member_ok.alias("member_ok"),
        member_value.alias("member_value"), member_prop.alias("member_prop"),
        (member_cls == "agent").alias("member_agent"), cls_term.alias("member_cls"),
        proposal.alias("proposal"), resource.alias("resource"), run_of.alias("run_of"), job.alias("job"),
    )


def _ece_triples(e: Column) -> Column:
    ms, urn, agent, kind = e["ms"], e["urn"], e["agent"], e["kind"]
    event = minted("event", F.lit(ECE), urn, e["category"], e["operation"], F.coalesce(e["modifier"], F.lit("")),
                   ms.cast("string"), F.coalesce(e["actor"], F.lit("")))

    def body(n: Column) -> Column:
        ev = n["event"]
        payload = _l(e["payload"], RDF_JSON)
        mv = e["member_value"]
        run = minted("run", n["safe"])
        return _arr(
            _entity(urn, asset_type=e["etype"]),
            _when_arr(agent.isNotNull(), _agent(agent)),
            _event_node(ev, event_type=e["et"], ms=ms, entity=urn, agent=agent, lifecycle=e["lifecycle"],
                        operation=e["op"]),
            _t(ev, "om-event:entityType", _l(e["etype"])),
            _field_change(ev, kind, e["category"], old=_l(F.when(kind == "deleted", e["payload"]), RDF_JSON),
                          new=_l(F.when(kind != "deleted", e["payload"]), RDF_JSON)),
            _when_arr(e["member_ok"], _arr(_t(_change_iri(ev, kind), e["member_prop"], _i(mv)),
                                           _mark(F.when(e["member_agent"], _agent(mv))
                                                 .otherwise(_entity(mv, cls=e["member_cls"]))))),
            _when_arr(e["proposal"], _arr(_t(ev, "om-event:proposalFor", _i(e["resource"])), _entity(e["resource"]))),
            _when_arr(e["run_of"], _arr(_t(run, "rdf:type", _c("om-event:Run")), _t(run, "om-event:runRecord", _i(urn)),
                                        _t(run, "om-event:runOf", _i(e["job"])), _entity(e["job"]))),
        )

    return _top_bind(body, event=event, safe=F.when(e["run_of"], iri_safe(urn)))


def ece(plan: Plan) -> Family:
    return _family(plan, lambda: _top_let(_fields(F.col("v"), ECE_PATHS), lambda s: _ece_family(_View(s))))


def _ece_family(v: _View) -> Column:
    ck = _Checks()
    header = _ece(ck, v)
    return _top_bind(lambda b: _result(_ece_triples(b["h"]), b["rej"], b["h"]["ms"]), rej=ck.column(), h=header)


# ---------------------------------------------------------------- PlatformEvent


PLATFORM_PATHS = _prefixes(["name", "payload.value", "header.timestampMillis"])
REL_PATHS = _prefixes(["sourceUrn", "destinationUrn", "relationshipType", "operation", "auditStamp.time",
                       "auditStamp.actor"])


def platform(plan: Plan) -> Family:
    return _family(plan, lambda: _top_let(_fields(F.col("v"), PLATFORM_PATHS), lambda s: _platform_head(_View(s))))


def _platform_head(v: _View) -> Column:
    ck = _Checks()
    event_types, patterns = _family_rules(PLATFORM)
    name = _get_str(ck, v, "name", required=True)
    pattern = _lookup(patterns, name)
    ck.add(pattern.isNull(), "UNKNOWN_EVENT_TYPE",
           F.concat(F.lit("name: "), name, F.lit(f" is not a known {PLATFORM} value")))
    text = _get_str(ck, v, "payload.value", required=True)
    ck.add(_bad_json(text), "BAD_ASPECT_JSON", "payload.value: not one valid JSON value")

    def body(b: Column) -> Column:
        ck.add(~_is_obj(b["p"]), "BAD_ASPECT_JSON", "payload.value: expected a JSON object")
        fields = F.struct(_fields(b["p"], ECE_PATHS).alias("ece"), _fields(b["p"], REL_PATHS).alias("rel"))
        return _top_let(fields, lambda f: _platform_mapped(ck, b, _View(f["ece"]), _View(f["rel"])))

    return _top_bind(body, p=F.try_parse_json(text), pattern=pattern, et=_lookup(event_types, name),
                 header=v("header"), header_ms=v("header.timestampMillis"))


def _platform_mapped(ck: _Checks, b: Column, ece_view: _View, rel_view: _View) -> Column:
    pattern = b["pattern"]
    with ck.guard(pattern == "envelope-ece"):
        header = _ece(ck, ece_view, at="payload.")
    with ck.guard(pattern == "relationship"):
        rel = _relationship(ck, b, rel_view)

    def body(c: Column) -> Column:
        return _top_let(F.when(pattern == "envelope-ece", F.struct(_ece_triples(c["h"]).alias("t"), c["h"]["ms"].alias("ms")))
                    .otherwise(F.struct(_rel_triples(c["r"], b["et"]).alias("t"), c["r"]["ms"].alias("ms"))),
                    lambda x: _result(x["t"], c["rej"], x["ms"]))

    return _top_bind(body, rej=ck.column(), h=header, r=rel)


def _relationship(ck: _Checks, b: Column, payload: _View) -> Column:
    at = "payload."
    ops = rules()["operations"]
    source = _get_str(ck, payload, "sourceUrn", required=True, at=at)
    destination = _get_str(ck, payload, "destinationUrn", required=True, at=at)
    rel_type = _get_str(ck, payload, "relationshipType", required=True, at=at)
    operation = _get_str(ck, payload, "operation", required=True, at=at)
    allowed = [k for k in ("ADD", "REMOVE") if k in ops]
    ck.add(~operation.isin(*allowed), "UNKNOWN_EVENT_TYPE",
           F.concat(F.lit(f"{at}operation: "), operation, F.lit(" is not ADD or REMOVE")))
    stamp = _get(ck, payload, "auditStamp", "obj", at=at)
    with ck.guard(stamp.isNotNull()):
        ms_stamp = _time(ck, payload, "auditStamp.time", at=at)
    header = _View(F.struct(b["header"].alias(_fname("header")), b["header_ms"].alias(_fname("header.timestampMillis"))))
    with ck.guard(stamp.isNull()):
        ms_header = _time(ck, header, "header.timestampMillis")
    ms = F.when(stamp.isNotNull(), ms_stamp).otherwise(ms_header)
    actor = _get_str(ck, payload, "auditStamp.actor", at=at)
    _check_urn(ck, source, at + "sourceUrn")
    _check_urn(ck, destination, at + "destinationUrn")
    ck.add(_truthy(actor) & _bad_urn(actor), "BAD_IDENTIFIER", f"{at}auditStamp.actor: not a usable URN")
    summary = _json_object([("destinationUrn", payload("destinationUrn")),
                            ("relationshipType", payload("relationshipType")),
                            ("sourceUrn", payload("sourceUrn"))])
    return F.struct(ms.alias("ms"), source.alias("source"), destination.alias("destination"),
                    rel_type.alias("rel_type"), operation.alias("operation"), actor.alias("actor"),
                    summary.alias("summary"))


def _rel_triples(r: Column, event_type: Column) -> Column:
    ops = rules()["operations"]
    ms, source, destination, rel_type, operation, actor = (
        r["ms"], r["source"], r["destination"], r["rel_type"], r["operation"], r["actor"])
    event = minted("event", F.lit("datahub-rel"), source, rel_type, destination, operation, ms.cast("string"),
                   F.coalesce(actor, F.lit("")))
    agent = F.when(_truthy(actor), actor)
    kind = _lookup(_str_map({k: v["fieldKind"] for k, v in ops.items()}), operation)
    op_term = _lookup(_curie_map({k: v["operation"] for k, v in ops.items()}), operation)
    direction = _lookup(_str_map(rules()["relationshipLineageTypes"]), rel_type)
    removed = operation == "REMOVE"

    def body(n: Column) -> Column:
        ev = n["event"]
        return _arr(
            _entity(source), _entity(destination),
            _when_arr(agent.isNotNull(), _agent(agent)),
            _event_node(ev, event_type=event_type, ms=ms, entity=source, agent=agent, operation=op_term),
            _field_change(ev, kind, rel_type, old=_l(F.when(kind == "deleted", r["summary"]), RDF_JSON),
                          new=_l(F.when(kind != "deleted", r["summary"]), RDF_JSON)),
            _when_arr(direction == "source-is-downstream", _lineage(ev, source, destination, removed)),
            _when_arr(direction == "source-is-upstream", _lineage(ev, destination, source, removed)),
        )

    return _top_bind(body, event=event)
