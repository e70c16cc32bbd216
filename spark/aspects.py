"""DataHub aspect patterns (changeprov.mapping.aspects) in Spark SQL: members, job IO, upstream
lineage, schema field diffs and data process instance runs.

``aspect()`` picks the rules.json pattern by aspect name and returns struct<t (triples), c (the
first failing check or null)>; only the matching pattern's expressions are evaluated per row.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.aspects import COLUMN_MEMBERS, JOB_MEMBERS, SCHEMA_FIELD, WHOLE_LISTS
from changeprov.mapping.vocab import rules
from changeprov.spark.checks import (
    Checks, absent, bad_urn_in, kind_words, ms_out_of_range, no_reject, reject, schema_words,
    urn_detail,
)
from changeprov.spark.shapes import (
    RDF_TYPE, change_node, entity_triples, field_change_triples, lineage_triples, om, prov,
)
from changeprov.spark.sqlterms import (
    MAX_MS, bad_urn, datetime_literal, iri, iri_safe, items, let, literal, minted, term, triple, variant_kind,
)
from changeprov.spark.stages import Plan

EMPTY = "array<string>"


def _empty() -> Column:
    return F.array().cast(EMPTY)


def _each(arr: Column, fn) -> Column:
    """flatten(transform(arr, fn)) where fn gives an array of triples per element; null arr = empty."""
    return F.coalesce(F.flatten(F.transform(arr, fn)), _empty())


def _part(triples: list[Column], ck: Checks) -> Column:
    return F.struct(F.concat(*triples).alias("t"), ck.column().alias("c"))


def strings_at(value: Column, path: list[str]) -> Column:
    """aspects._urns: the strings found at ``path`` (``*`` = every array element), array<string>."""
    cur = F.array(value)
    for head in path:
        if head == "*":
            cur = F.flatten(F.transform(cur, lambda x: F.coalesce(items(x), F.array().cast("array<variant>"))))
        else:
            cur = F.transform(cur, _getter(head))
    # schema_of_variant alone, not variant_kind: one function instead of a tree, in every path of every aspect
    return F.transform(F.filter(cur, lambda x: F.schema_of_variant(x) == "STRING"), lambda x: x.cast("string"))


def _getter(key: str):
    return lambda x: F.try_variant_get(x, f"$['{key}']", "variant")


def _node(urn: Column, cls: str | None) -> list[Column]:
    """aspects._node's triples for a URN: an agent, or an entity (of class ``cls``)."""
    node = iri(iri_safe(urn))
    if cls == "agent":
        return [triple(node, RDF_TYPE(), prov("Agent")),
                F.when(urn.startswith("urn:li:corpGroup:"), triple(node, RDF_TYPE(), prov("Organization")))]
    return entity_triples(node, urn_text=urn, cls=None if cls in (None, "om-event:MetadataEntity") else
                          term(cls))


def _nodes(urns: Column, cls: str | None) -> Column:
    return _each(urns, lambda u: F.array(*_node(u, cls)))


def _diff(change: Column, before: Column, after: Column, added: str, removed: str, kept: str) -> list[Column]:
    """events.member_changes over URN sets (a DataHub aspect's: with ``kept``)."""
    return [F.transform(F.array_except(after, before), lambda u: triple(change, term(added), iri(iri_safe(u)))),
            F.transform(F.array_except(before, after), lambda u: triple(change, term(removed), iri(iri_safe(u)))),
            F.transform(F.array_intersect(after, before), lambda u: triple(change, term(kept), iri(iri_safe(u))))]


def _last_wins(arr: Column, key) -> Column:
    """Keep each element unless a later one has the same key (a Python dict built in order)."""
    return let({"a": arr}, lambda c: F.filter(c["a"], lambda x, i: ~F.exists(
        F.slice(c["a"], i + 2, F.greatest(F.size(c["a"]), F.lit(1))), lambda y: key(y) == key(x))))


def aspect(plan: Plan, name: Column, *, event: Column, urn: Column, safe: Column, kind: Column, old: Column,
           new: Column, deleting: Column, k_old: Column, k_new: Column) -> Column:
    """aspects.map_aspect → struct<t, c>, staged (bound once, read by the checks and the triples).
    ``k_old`` / ``k_new``: the variant kinds of ``old`` / ``new`` (null when they are)."""
    change = iri(change_node(event, kind))
    out = None
    for aspect_name, spec in rules()["aspects"].items():
        pattern = spec["pattern"]
        if pattern == "members":
            part = _members(change, spec, old, new)
        elif pattern == "job-io":
            part = _job_io(change, old, new)
        elif pattern == "upstream-lineage":
            part = _upstream_lineage(event, urn, safe, old, new)
        elif pattern == "input-lineage":
            part = _input_lineage(event, safe, spec["paths"], old, new)
        elif pattern == "schema":
            part = _schema(change, urn, old, new)
        elif pattern.startswith("run-"):
            part = F.when(~deleting & (variant_kind(new) == "object"), _run(safe, pattern, new))
        else:
            continue  # "status": the lifecycle only
        if spec.get("shapes"):  # rv48 #5: a list of another shape ended every member (aspects.map_aspect)
            part = _shaped(part, spec["shapes"], old, new)
        out = F.when(name == aspect_name, part) if out is None else out.when(name == aspect_name, part)
    none = F.struct(_empty().alias("t"), no_reject().alias("c"))
    # a known aspect's value is a JSON object (one check for all: its kinds are computed already)
    ck = Checks()
    known = name.isin(*rules()["aspects"])
    for k, where in ((k_new, "aspect"), (k_old, "previousAspectValue")):
        ck.add(known & ~absent(k) & (k != "object"), "BAD_ASPECT_JSON",
               F.concat(F.lit(f"{where}.value: a "), name, F.lit(" aspect is a JSON object, not "), kind_words(k)))
    # column tags: one expression for both aspects that have them (each copy costs seconds of planning)
    lists = {a: _COLUMN_LISTS[spec["pattern"]] for a, spec in rules()["aspects"].items()
             if spec["pattern"] in _COLUMN_LISTS}
    tags = F.when(name.isin(*lists), _column_tags(event, kind, urn, name, _choose(name, lists), *[
        F.coalesce(*[F.when(name == a, F.try_variant_get(v, f"$.{key}", "variant")) for a, key in lists.items()])
        for v in (old, new)]))
    # each part staged on its own: combined in one expression, every use of a part (its triples, its
    # check) would copy the whole when-chain of all aspects into the plan (planning 10 s slower)
    main = plan.bind("aspect", F.coalesce(out, none) if out is not None else none)
    extra = plan.bind("aspect_tags", F.coalesce(tags, none))
    plan.next()
    whole = [a for a, spec in rules()["aspects"].items() if spec["pattern"] in WHOLE_LISTS]
    sets = F.when(name.isin(*whole) & old.isNull(),
                  F.array(triple(iri(event), om("setsMembersOf"), iri(safe)))).otherwise(_empty())
    # read where it is used (no stage of its own: each stage is a projection Spark analyses again)
    return F.struct(F.concat(main["t"], extra["t"], sets).alias("t"),
                    F.coalesce(ck.column(), main["c"], extra["c"]).alias("c"))


def shape_error(value: Column, path: list[str], where: str) -> Column:
    """aspects.shape_error's detail, or null: something along ``path`` has another type than the path
    says (an object at a key, an array at ``*``, a string at the end; an absent or null key is none),
    named where it is and what it is. Level by level, the first level with a wrong value wins.
    The type tests are single casts, not variant_kind: this runs for eight paths per MCL."""
    cur = F.filter(F.array(value), lambda x: x.isNotNull())
    levels = []

    def wrong(values: Column, bad, place: str, expected: str) -> Column:
        first = F.try_element_at(F.filter(values, bad), F.lit(1))
        # an array element that is null is SQL NULL here: JSON null to the reference
        return F.when(F.exists(values, bad), F.concat(F.lit(f"{place}: expected {expected}, got "),
                                                      schema_words(first)))

    for head in path:
        if head == "*":
            levels.append(wrong(cur, lambda x: items(x).isNull(), where, "an array"))
            cur = F.flatten(F.transform(F.filter(cur, lambda x: items(x).isNotNull()), items))
            where += ".*"
        else:
            levels.append(wrong(cur, lambda x: _struct(x).isNull(), where, "an object"))
            cur = F.filter(F.transform(F.filter(cur, lambda x: _struct(x).isNotNull()), _getter(head)),
                           lambda x: x.isNotNull() & ~F.coalesce(F.is_variant_null(x), F.lit(False)))
            where += "." + head
    levels.append(wrong(cur, lambda x: F.coalesce(F.schema_of_variant(x) != "STRING", F.lit(True)), where,
                        "a string"))
    return F.coalesce(*levels)


def _shaped(part: Column, shapes: list[list[str]], old: Column, new: Column) -> Column:
    """``part`` (struct<t, c>) rejected as BAD_ASPECT_JSON where a list along one of ``shapes`` has another
    shape, the new value's paths first, as aspects.map_aspect checks them."""
    found = [shape_error(value, path, f"{at}.value") for value, at in ((new, "aspect"), (old, "previousAspectValue"))
             for path in shapes]
    return let({"w": F.coalesce(*found), "p": part}, lambda c: F.struct(
        c["p"]["t"].alias("t"),
        F.coalesce(F.when(c["w"].isNotNull(), reject("BAD_ASPECT_JSON", c["w"])), c["p"]["c"]).alias("c")))


def _struct(x: Column) -> Column:
    return F.try_variant_get(x, "$", "struct<>")


def _members(change: Column, spec: dict, old: Column, new: Column) -> Column:
    where = ".value." + ".".join(spec["path"])

    def body(s):
        ck = Checks()
        for value, at in ((new, "aspect"), (old, "previousAspectValue")):
            # one copy of the shape walk in the plan (a condition and a detail would be two)
            ck.error(let({"w": shape_error(value, spec["path"], f"{at}.value")},
                         lambda c: F.when(c["w"].isNotNull(), reject("BAD_ASPECT_JSON", c["w"]))))
        ck.error(bad_urn_in(s["b"], f"previousAspectValue{where}"))
        ck.error(bad_urn_in(s["a"], f"aspect{where}"))
        return _part([_nodes(F.array_union(s["b"], s["a"]), spec["class"]),
                      *_diff(change, s["b"], s["a"], spec["added"], spec["removed"], spec["kept"])], ck)

    return let({"b": strings_at(old, spec["path"]), "a": strings_at(new, spec["path"])}, body)


def _job_io(change: Column, old: Column, new: Column) -> Column:
    def found(value: Column, key: str) -> Column:
        return F.array_union(strings_at(value, [f"{key}Datasets", "*"]),
                             strings_at(value, [f"{key}DatasetEdges", "*", "destinationUrn"]))

    def body(s):
        ck = Checks()
        triples = []
        for key, added, removed, kept in JOB_MEMBERS:
            b, a = s["b_" + key], s["a_" + key]
            ck.error(bad_urn_in(b, f"previousAspectValue.value.{key}Datasets"))
            ck.error(bad_urn_in(a, f"aspect.value.{key}Datasets"))
            triples += [_nodes(F.array_union(b, a), "om-event:MetadataEntity"), *_diff(change, b, a, added, removed, kept)]
        return _part(triples, ck)

    return let({"b_input": found(old, "input"), "a_input": found(new, "input"),
                "b_output": found(old, "output"), "a_output": found(new, "output")}, body)


def _upstreams(value: Column) -> Column:
    """array<struct<ds, kind>>: the upstream datasets (the last occurrence's ``type`` wins)."""
    fields = "struct<dataset:variant,type:variant>"
    pairs = F.transform(items(F.try_variant_get(value, "$.upstreams", "variant")), lambda x: let(
        {"o": variant_kind(x) == "object", "f": F.try_variant_get(x, "$", fields)}, lambda c: F.struct(
            c["o"].alias("ok1"), F.when(variant_kind(c["f"]["dataset"]) == "string", c["f"]["dataset"].cast("string"))
            .alias("ds"), F.when(variant_kind(c["f"]["type"]) == "string", c["f"]["type"].cast("string")).alias("kind"))))
    valid = F.transform(F.filter(pairs, lambda p: p["ok1"] & p["ds"].isNotNull()),
                        lambda p: F.struct(p["ds"].alias("ds"), p["kind"].alias("kind")))
    return F.coalesce(_last_wins(valid, lambda y: y["ds"]), F.array().cast("array<struct<ds:string,kind:string>>"))


def _input_lineage(event: Column, safe: Column, paths: list[list[str]], old: Column, new: Column) -> Column:
    """aspects._input_lineage → struct<t, c>: a chart's or dashboard's inputs as its upstream lineage."""
    def found(value: Column) -> Column:
        return F.array_distinct(F.concat(*[strings_at(value, path) for path in paths]))

    def body(s):
        ck = Checks()
        for key, value, where in (("now", new, "aspect"), ("before", old, "previousAspectValue")):
            # the reference names the path the URN was found at: the first path holding a bad one
            ck.error(F.coalesce(*[bad_urn_in(strings_at(value, path), f"{where}.value.{'.'.join(path)}")
                                  for path in paths]))
        return _part([F.array(triple(iri(event), om("setsUpstreamsOf"), iri(safe))),
                      _nodes(F.array_union(s["now"], s["before"]), None),
                      _each(s["now"], lambda u: lineage_triples(event, safe, iri_safe(u), False)),
                      _each(F.array_except(s["before"], s["now"]),
                            lambda u: lineage_triples(event, safe, iri_safe(u), True))], ck)

    return let({"now": found(new), "before": found(old)}, body)


def _fine_grained_node(urn: Column) -> list[Column]:
    """aspects._fine_grained_class: a column only when it is a schemaField URN."""
    return [*_node(urn, None), F.when(urn.startswith(SCHEMA_FIELD),
                                      triple(iri(iri_safe(urn)), RDF_TYPE(), om("Column")))]


def _fine_grained(value: Column) -> Column:
    """array<struct<d, u, op>>: column pairs (the last occurrence's operation wins)."""
    elements = F.filter(items(F.try_variant_get(value, "$.fineGrainedLineages", "variant")),
                        lambda x: variant_kind(x) == "object")

    def pairs(item: Column) -> Column:
        op = F.try_variant_get(item, "$.transformOperation", "variant")

        def body(s):
            return F.flatten(F.transform(s["downs"], lambda d: F.transform(
                s["ups"], lambda u: F.struct(d.alias("d"), u.alias("u"), s["op"].alias("op")))))

        return let({"op": F.when(variant_kind(op) == "string", op.cast("string")),
                    "ups": strings_at(item, ["upstreams", "*"]), "downs": strings_at(item, ["downstreams", "*"])}, body)

    return F.coalesce(_last_wins(F.flatten(F.transform(elements, pairs)), lambda y: F.struct(y["d"], y["u"])),
                      F.array().cast("array<struct<d:string,u:string,op:string>>"))


def _upstream_lineage(event: Column, urn: Column, safe: Column, old: Column, new: Column) -> Column:
    def body(s):
        ck = Checks()
        for key, where in (("now", "aspect"), ("before", "previousAspectValue")):
            ck.error(bad_urn_in(s[key], f"{where}.value.upstreams.dataset", lambda x: x["ds"]))
        for key, where in (("cnow", "aspect"), ("cbefore", "previousAspectValue")):
            # a pair's downstream end first, as the reference checks them
            ck.error(bad_urn_in(s[key], f"{where}.value.fineGrainedLineages",
                                lambda x: F.when(bad_urn(x["d"]), x["d"]).otherwise(x["u"])))
        now_keys = F.transform(s["now"], lambda x: x["ds"])
        col_keys = F.transform(s["cnow"], lambda x: F.struct(x["d"], x["u"]))

        def added(x: Column) -> Column:
            return lineage_triples(event, safe, iri_safe(x["ds"]), False,
                                   lambda e: [triple(e, om("lineageSource"), literal(x["kind"]))])

        def col_added(x: Column) -> Column:
            return lineage_triples(event, iri_safe(x["d"]), iri_safe(x["u"]), False,
                                   lambda e: [triple(e, om("transformOperation"), literal(x["op"]))])

        triples = [
            F.array(triple(iri(event), om("setsUpstreamsOf"), iri(safe))),
            _each(F.concat(s["now"], s["before"]), lambda x: F.array(*_node(x["ds"], None))),
            _each(s["now"], added),
            _each(F.filter(s["before"], lambda x: ~F.array_contains(now_keys, x["ds"])),
                  lambda x: lineage_triples(event, safe, iri_safe(x["ds"]), True)),
            _each(F.concat(s["cnow"], s["cbefore"]),
                  lambda x: F.array(*_fine_grained_node(x["d"]), *_fine_grained_node(x["u"]))),
            _each(s["cnow"], col_added),
            _each(F.filter(s["cbefore"], lambda x: ~F.array_contains(col_keys, F.struct(x["d"], x["u"]))),
                  lambda x: lineage_triples(event, iri_safe(x["d"]), iri_safe(x["u"]), True)),
        ]
        return _part(triples, ck)

    return let({"now": _upstreams(new), "before": _upstreams(old), "cnow": _fine_grained(new),
                "cbefore": _fine_grained(old)}, body)


def _by_field_path(fields: Column, values: dict, cast: str) -> Column:
    """array<struct<path, *values>> of a list of schema fields: each object with a string fieldPath
    and ``values`` (name → function of the field), the last occurrence of a fieldPath winning."""
    pairs = F.transform(items(fields), lambda x: let(
        {"o": variant_kind(x) == "object", "p": F.try_variant_get(x, "$.fieldPath", "variant"), "x": x},
        lambda c: F.struct(F.when(c["o"] & (variant_kind(c["p"]) == "string"), c["p"].cast("string")).alias("path"),
                           *[fn(c["x"]).alias(name) for name, fn in values.items()])))
    valid = F.filter(pairs, lambda p: p["path"].isNotNull())
    return F.coalesce(_last_wins(valid, lambda y: y["path"]), F.array().cast(cast))


def _schema_fields(value: Column) -> Column:
    """array<struct<path, json>> of the schema fields (the last occurrence of a fieldPath wins)."""
    return _by_field_path(F.try_variant_get(value, "$.fields", "variant"), {"json": F.to_json},
                          "array<struct<path:string,json:string>>")


def _schema(change: Column, urn: Column, old: Column, new: Column) -> Column:
    def field_urn(path: Column) -> Column:
        return F.concat(F.lit("urn:li:schemaField:("), urn, F.lit(","), path, F.lit(")"))

    def diffs(s):
        before = F.transform(s["b"], lambda x: x["path"])
        after = F.transform(s["a"], lambda x: x["path"])
        changed = F.transform(F.filter(s["a"], lambda x: F.exists(
            s["b"], lambda y: (y["path"] == x["path"]) & (y["json"] != x["json"]))), lambda x: x["path"])
        return let({"added": F.array_except(after, before), "removed": F.array_except(before, after),
                    "changed": changed, "kept": F.array_intersect(after, before)}, emit)

    def emit(d):
        ck = Checks()
        # the reference's order (added, removed, kept; each sorted) picks the field its detail names
        ck.error(bad_urn_in(F.concat(*[F.array_sort(d[k]) for k in ("added", "removed", "kept")]),
                            "aspect.value.fields.fieldPath", field_urn))

        def one(prop: str):
            return lambda p: let({"f": field_urn(p)}, lambda c: F.array(
                triple(change, term(prop), iri(iri_safe(c["f"]))), *_node(c["f"], "om-event:Column")))

        return _part([_each(d["added"], one("om-event:addedSchemaField")),
                      _each(d["removed"], one("om-event:removedSchemaField")),
                      _each(d["changed"], one("om-event:changedSchemaField")),
                      _each(d["kept"], one("om-event:keptSchemaField"))], ck)

    return let({"b": _schema_fields(old), "a": _schema_fields(new)}, diffs)


_MEMBER_LISTS = "array<struct<path:string,globalTags:array<string>,glossaryTerms:array<string>>>"


#: the pattern of an aspect with column tags → the key of its list of schema fields
_COLUMN_LISTS = {"schema": "fields", "editable-schema": "editableSchemaFieldInfo"}


def _column_members(fields: Column) -> Column:
    """array<struct<path, globalTags, glossaryTerms>>: each schema field's tag and term URNs (the last
    occurrence of a fieldPath wins), as aspects.column_tags reads them."""
    return _by_field_path(fields, {sub: (lambda x, where=where: strings_at(x, where))
                                   for sub, where, *_ in COLUMN_MEMBERS}, _MEMBER_LISTS)


def _tag_entries(fields: Column) -> Column:
    """array<struct<path, sub, u>>: each schema field's tag and term URNs as flat entries."""
    def entries(f: Column, sub: str) -> Column:
        return F.transform(f[sub], lambda u: F.struct(f["path"].alias("path"), F.lit(sub).alias("sub"), u.alias("u")))

    return F.flatten(F.transform(_column_members(fields), lambda f: F.concat(
        *[entries(f, sub) for sub, *_ in COLUMN_MEMBERS])))


def _choose(name: Column, texts: dict) -> Column:
    """The text ``texts[name]`` (null for a name not in it)."""
    return F.coalesce(*[F.when(name == k, F.lit(v)) for k, v in texts.items()])


def _column_tags(event: Column, kind: Column, urn: Column, aspect_name: Column, key: Column, old: Column,
                 new: Column) -> Column:
    """aspects.column_tags → struct<t, c>: a field change per column and kind whose members changed
    (``key``: the aspect's list of schema fields). Flat (path, kind, URN) entries and set
    differences: a nesting of per-column lookups planned ten seconds slower."""
    (_, _, tag_add, tag_rem, tag_cls), (_, _, term_add, term_rem, term_cls) = COLUMN_MEMBERS

    def column_urn(path: Column) -> Column:
        return F.concat(F.lit(SCHEMA_FIELD + "("), urn, F.lit(","), path, F.lit(")"))

    def first_bad(s, k: Column) -> Column:
        """The reference's first BAD_IDENTIFIER at a changed column ``k``: its URN, then its members
        before, then after (in list order)."""
        members = _choose(k["sub"], {sub: ".".join(at) for sub, at, *_ in COLUMN_MEMBERS})
        column = column_urn(k["path"])

        def bad_in(entries: Column, value: str) -> Column:
            mine = F.filter(entries, lambda e: (e["path"] == k["path"]) & (e["sub"] == k["sub"]))
            return bad_urn_in(mine, F.concat(F.lit(value + ".value."), key, F.lit("."), members), lambda e: e["u"])

        return F.coalesce(
            F.when(bad_urn(column), reject("BAD_IDENTIFIER", urn_detail(
                F.concat(F.lit("aspect.value."), key, F.lit(".fieldPath")), column))),
            bad_in(s["b"], "previousAspectValue"), bad_in(s["a"], "aspect"))

    def body(s):
        ck = Checks()
        ck.error(F.try_element_at(F.filter(F.transform(s["keys"], lambda k: first_bad(s, k)),
                                           lambda r: r.isNotNull()), F.lit(1)))

        def one(k: Column, i: Column) -> Column:
            change = iri(change_node(event, kind, i + 1))
            column = column_urn(k["path"])
            tag = k["sub"] == "globalTags"

            def mine(entries: Column) -> Column:
                return F.transform(F.filter(entries, lambda e: (e["path"] == k["path"]) & (e["sub"] == k["sub"])),
                                   lambda e: e["u"])

            def said(entries: Column, if_tag: str, if_term: str) -> Column:
                pred = F.when(tag, term(if_tag)).otherwise(term(if_term))
                return F.transform(mine(entries), lambda u: triple(change, pred, iri(iri_safe(u))))

            cls = F.when(tag, term(tag_cls)).otherwise(term(term_cls))
            return F.concat(
                F.array(*field_change_triples(event, kind, F.concat(aspect_name, F.lit("."), k["path"], F.lit("."),
                                                                   k["sub"]), index=i + 1),
                        triple(change, om("aboutColumn"), iri(iri_safe(column))), *_node(column, "om-event:Column")),
                _each(F.array_distinct(mine(s["all"])), lambda u: F.array(*entity_triples(
                    iri(iri_safe(u)), urn_text=u, cls=cls))),
                said(s["added"], tag_add, term_add), said(s["removed"], tag_rem, term_rem))

        return _part([F.coalesce(F.flatten(F.transform(s["keys"], one)), _empty())], ck)

    def diff(d):
        added, removed = F.array_except(d["a"], d["b"]), F.array_except(d["b"], d["a"])
        keys = F.array_sort(F.array_distinct(F.transform(F.concat(added, removed), lambda e: F.struct(
            e["path"].alias("path"), e["sub"].alias("sub")))))
        return let({"added": added, "removed": removed, "keys": keys, "all": F.concat(d["b"], d["a"]),
                    "b": d["b"], "a": d["a"]}, body)

    return let({"b": _tag_entries(old), "a": _tag_entries(new)}, diff)


_RUN_LINKS = {"run-input": (["inputs", "*"], "inputs"), "run-output": (["outputs", "*"], "outputs"),
              "run-relationships": (["parentTemplate"], "parentTemplate")}


def _run(safe: Column, pattern: str, value: Column) -> Column:
    """aspects._run → struct<t, c> (``safe`` is the dataProcessInstance's IRI text)."""
    run = iri(minted("run", safe))
    base = F.array(triple(run, RDF_TYPE(), om("Run")), triple(run, om("runRecord"), iri(safe)))
    ck = Checks()
    if pattern in _RUN_LINKS:
        path, where = _RUN_LINKS[pattern]

        def link(u: Column) -> Column:
            node = iri(iri_safe(u))
            t = {"run-input": lambda: triple(run, prov("used"), node),
                 "run-output": lambda: triple(node, prov("wasGeneratedBy"), run),
                 "run-relationships": lambda: triple(run, om("runOf"), node)}[pattern]()
            return F.array(t, *_node(u, None))

        def body(s):
            ck.error(bad_urn_in(s["u"], f"aspect.value.{where}"))
            return _part([base, _each(s["u"], link)], ck)

        return let({"u": strings_at(value, path)}, body)
    fields = "struct<timestampMillis:variant,status:variant,result:variant,name:variant>"
    if pattern == "run-event":
        def event_body(s):
            f = s["f"]
            status = F.when(variant_kind(f["status"]) == "string", f["status"].cast("string"))
            timed = (variant_kind(f["timestampMillis"]) == "integer") & status.isin("STARTED", "COMPLETE")
            ms_dec = F.to_json(f["timestampMillis"]).try_cast("decimal(38,0)")
            ck.add(timed & ~F.coalesce(ms_dec.between(0, MAX_MS), F.lit(False)), "BAD_TIMESTAMP",
                   ms_out_of_range("aspect.value.timestampMillis", ms_dec))
            prop = F.when(status == "STARTED", prov("startedAtTime")).otherwise(prov("endedAtTime"))
            rtype = F.try_variant_get(f["result"], "$.type", "variant")
            return _part([base, F.array(
                F.when(timed, triple(run, prop, datetime_literal(ms_dec.try_cast("long")))),
                F.when((status == "COMPLETE") & (variant_kind(f["result"]) == "object")
                       & (variant_kind(rtype) == "string"),
                       triple(run, om("executionStatus"), literal(rtype.cast("string")))))], ck)

        return let({"f": F.try_variant_get(value, "$", fields)}, event_body)
    if pattern == "run-properties":
        name = F.try_variant_get(value, "$.name", "variant")
        return _part([base, F.array(F.when(variant_kind(name) == "string", triple(
            run, term("rdfs:label"), literal(name.cast("string")))))], ck)
    return _part([base], ck)


__all__ = ["aspect", "strings_at"]
