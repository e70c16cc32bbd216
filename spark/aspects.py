"""DataHub aspect patterns (changeprov.mapping.aspects) in Spark SQL: members, job IO, upstream
lineage, schema field diffs and data process instance runs.

``aspect()`` picks the rules.json pattern by aspect name and returns struct<t (triples), c (the
first failing check or null)>; only the matching pattern's expressions are evaluated per row.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeprov.mapping.aspects import COLUMN_MEMBERS, SCHEMA_FIELD
from changeprov.mapping.vocab import rules
from changeprov.spark.checks import Checks, absent, no_reject
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
    return F.transform(F.filter(cur, lambda x: variant_kind(x) == "string"), lambda x: x.cast("string"))


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


def _diff(change: Column, before: Column, after: Column, added: str, removed: str) -> list[Column]:
    """events.member_changes over URN sets."""
    return [F.transform(F.array_except(after, before), lambda u: triple(change, term(added), iri(iri_safe(u)))),
            F.transform(F.array_except(before, after), lambda u: triple(change, term(removed), iri(iri_safe(u))))]


def _last_wins(arr: Column, key) -> Column:
    """Keep each element unless a later one has the same key (a Python dict built in order)."""
    return let({"a": arr}, lambda c: F.filter(c["a"], lambda x, i: ~F.exists(
        F.slice(c["a"], i + 2, F.greatest(F.size(c["a"]), F.lit(1))), lambda y: key(y) == key(x))))


def aspect(plan: Plan, name: Column, *, event: Column, urn: Column, safe: Column, kind: Column, old: Column,
           new: Column, deleting: Column) -> Column:
    """aspects.map_aspect → struct<t, c>, staged (bound once, read by the checks and the triples)."""
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
            part = _both(_schema(change, urn, old, new), _column_tags(event, kind, urn, aspect_name, "fields", old, new))
        elif pattern == "editable-schema":
            part = _column_tags(event, kind, urn, aspect_name, "editableSchemaFieldInfo", old, new)
        elif pattern.startswith("run-"):
            part = F.when(~deleting & (variant_kind(new) == "object"), _run(safe, pattern, new))
        else:  # "status": the lifecycle only
            part = F.struct(_empty().alias("t"), no_reject().alias("c"))
        part = _both(_objects(aspect_name, old, new), part)
        out = F.when(name == aspect_name, part) if out is None else out.when(name == aspect_name, part)
    none = F.struct(_empty().alias("t"), no_reject().alias("c"))
    bound = plan.bind("aspect", F.coalesce(out, none) if out is not None else none)
    plan.next()
    return bound


def _objects(aspect_name: str, old: Column, new: Column) -> Column:
    """aspects.map_aspect's first check: a known aspect's value is a JSON object."""
    ck = Checks()
    for value, where in ((new, "aspect"), (old, "previousAspectValue")):
        ck.add(value.isNotNull() & (variant_kind(value) != "object"), "BAD_ASPECT_JSON",
               f"{where}.value: a {aspect_name} aspect is a JSON object")
    return F.struct(_empty().alias("t"), ck.column().alias("c"))


def shape_bad(value: Column, path: list[str]) -> Column:
    """aspects.shape_error as a condition: something along ``path`` has another type than the path
    says (an object at a key, an array at ``*``, a string at the end; an absent or null key is none)."""
    cur = F.filter(F.array(value), lambda x: x.isNotNull())
    bad = F.lit(False)
    for head in path:
        want = "array" if head == "*" else "object"
        # an array element that is null (SQL NULL here) is of the wrong type too
        bad = bad | F.exists(cur, _kind_is_not(want))
        cur = F.filter(cur, _kind_is(want))
        if head == "*":
            cur = F.flatten(F.transform(cur, items))
        else:
            cur = F.filter(F.transform(cur, _getter(head)), lambda x: ~absent(variant_kind(x)))
    return bad | F.exists(cur, _kind_is_not("string"))


def _kind_is(want: str):
    return lambda x: F.coalesce(variant_kind(x) == want, F.lit(False))


def _kind_is_not(want: str):
    return lambda x: F.coalesce(variant_kind(x) != want, F.lit(True))


def _members(change: Column, spec: dict, old: Column, new: Column) -> Column:
    where = ".value." + ".".join(spec["path"])

    def body(s):
        ck = Checks()
        for value, at in ((new, "aspect"), (old, "previousAspectValue")):
            ck.add(shape_bad(value, spec["path"]), "BAD_ASPECT_JSON", f"{at}{where}: a value of another type")
        ck.add(F.exists(s["b"], bad_urn), "BAD_IDENTIFIER", f"previousAspectValue{where}: a URN that is no IRI")
        ck.add(F.exists(s["a"], bad_urn), "BAD_IDENTIFIER", f"aspect{where}: a URN that is no IRI")
        return _part([_nodes(F.array_union(s["b"], s["a"]), spec["class"]),
                      *_diff(change, s["b"], s["a"], spec["added"], spec["removed"])], ck)

    return let({"b": strings_at(old, spec["path"]), "a": strings_at(new, spec["path"])}, body)


def _job_io(change: Column, old: Column, new: Column) -> Column:
    def found(value: Column, key: str) -> Column:
        return F.array_union(strings_at(value, [f"{key}Datasets", "*"]),
                             strings_at(value, [f"{key}DatasetEdges", "*", "destinationUrn"]))

    def body(s):
        ck = Checks()
        triples = []
        for key, added, removed in (("input", "om-event:addedInput", "om-event:removedInput"),
                                    ("output", "om-event:addedOutput", "om-event:removedOutput")):
            b, a = s["b_" + key], s["a_" + key]
            ck.add(F.exists(b, bad_urn), "BAD_IDENTIFIER", f"previousAspectValue.value.{key}Datasets: a URN that is no IRI")
            ck.add(F.exists(a, bad_urn), "BAD_IDENTIFIER", f"aspect.value.{key}Datasets: a URN that is no IRI")
            triples += [_nodes(F.array_union(b, a), "om-event:MetadataEntity"), *_diff(change, b, a, added, removed)]
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
        ck.add(F.exists(s["now"], bad_urn), "BAD_IDENTIFIER", "aspect.value: an input URN that is no IRI")
        ck.add(F.exists(s["before"], bad_urn), "BAD_IDENTIFIER", "previousAspectValue.value: an input URN that is no IRI")
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
            ck.add(F.exists(s[key], lambda x: bad_urn(x["ds"])), "BAD_IDENTIFIER",
                   f"{where}.value.upstreams.dataset: a URN that is no IRI")
        for key, where in (("cnow", "aspect"), ("cbefore", "previousAspectValue")):
            ck.add(F.exists(s[key], lambda x: bad_urn(x["d"]) | bad_urn(x["u"])), "BAD_IDENTIFIER",
                   f"{where}.value.fineGrainedLineages: a URN that is no IRI")
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


def _schema_fields(value: Column) -> Column:
    """array<struct<path, json>> of the schema fields (the last occurrence of a fieldPath wins)."""
    pairs = F.transform(items(F.try_variant_get(value, "$.fields", "variant")), lambda x: let(
        {"o": variant_kind(x) == "object", "p": F.try_variant_get(x, "$.fieldPath", "variant"), "x": x},
        lambda c: F.struct(F.when(c["o"] & (variant_kind(c["p"]) == "string"), c["p"].cast("string")).alias("path"),
                           F.to_json(c["x"]).alias("json"))))
    valid = F.filter(pairs, lambda p: p["path"].isNotNull())
    return F.coalesce(_last_wins(valid, lambda y: y["path"]),
                      F.array().cast("array<struct<path:string,json:string>>"))


def _schema(change: Column, urn: Column, old: Column, new: Column) -> Column:
    def field_urn(path: Column) -> Column:
        return F.concat(F.lit("urn:li:schemaField:("), urn, F.lit(","), path, F.lit(")"))

    def diffs(s):
        before = F.transform(s["b"], lambda x: x["path"])
        after = F.transform(s["a"], lambda x: x["path"])
        changed = F.transform(F.filter(s["a"], lambda x: F.exists(
            s["b"], lambda y: (y["path"] == x["path"]) & (y["json"] != x["json"]))), lambda x: x["path"])
        return let({"added": F.array_except(after, before), "removed": F.array_except(before, after),
                    "changed": changed}, emit)

    def emit(d):
        ck = Checks()
        ck.add(F.exists(F.concat(d["added"], d["removed"], d["changed"]), lambda p: bad_urn(field_urn(p))),
               "BAD_IDENTIFIER", "aspect.value.fields.fieldPath: a field URN that is no IRI")

        def one(prop: str):
            return lambda p: let({"f": field_urn(p)}, lambda c: F.array(
                triple(change, term(prop), iri(iri_safe(c["f"]))), *_node(c["f"], "om-event:Column")))

        return _part([_each(d["added"], one("om-event:addedSchemaField")),
                      _each(d["removed"], one("om-event:removedSchemaField")),
                      _each(d["changed"], one("om-event:changedSchemaField"))], ck)

    return let({"b": _schema_fields(old), "a": _schema_fields(new)}, diffs)


def _both(first: Column, second: Column) -> Column:
    """Two patterns' struct<t, c> in the reference's order: all triples, the first failing check."""
    return F.struct(F.concat(first["t"], second["t"]).alias("t"), F.coalesce(first["c"], second["c"]).alias("c"))


_MEMBER_LISTS = "array<struct<path:string,globalTags:array<string>,glossaryTerms:array<string>>>"


def _column_members(value: Column, key: str) -> Column:
    """array<struct<path, globalTags, glossaryTerms>>: each schema field's tag and term URNs (the last
    occurrence of a fieldPath wins), as aspects.column_tags reads them."""
    pairs = F.transform(items(F.try_variant_get(value, f"$.{key}", "variant")), lambda x: let(
        {"o": variant_kind(x) == "object", "p": F.try_variant_get(x, "$.fieldPath", "variant"), "x": x},
        lambda c: F.struct(F.when(c["o"] & (variant_kind(c["p"]) == "string"), c["p"].cast("string")).alias("path"),
                           *[strings_at(c["x"], where).alias(sub) for sub, where, *_ in COLUMN_MEMBERS])))
    valid = F.filter(pairs, lambda p: p["path"].isNotNull())
    return F.coalesce(_last_wins(valid, lambda y: y["path"]), F.array().cast(_MEMBER_LISTS))


def _column_tags(event: Column, kind: Column, urn: Column, aspect_name: str, key: str, old: Column,
                 new: Column) -> Column:
    """aspects.column_tags → struct<t, c>: a field change per column and kind whose members changed."""
    entry = "struct<path:string,sub:string,b:array<string>,a:array<string>>"

    def members(fields: Column, path: Column, sub: str) -> Column:
        return F.coalesce(F.try_element_at(F.filter(fields, lambda f: f["path"] == path), F.lit(1))[sub],
                          _empty())

    def changed(s):
        paths = F.array_sort(F.array_distinct(F.concat(F.transform(s["b"], lambda f: f["path"]),
                                                        F.transform(s["a"], lambda f: f["path"]))))
        listed = F.flatten(F.transform(paths, lambda p: F.array(*[
            let({"b": members(s["b"], p, sub), "a": members(s["a"], p, sub)}, lambda m, sub=sub: F.when(
                (F.size(F.array_except(m["a"], m["b"])) > 0) | (F.size(F.array_except(m["b"], m["a"])) > 0),
                F.struct(p.alias("path"), F.lit(sub).alias("sub"), m["b"].alias("b"), m["a"].alias("a"))))
            for sub, *_ in COLUMN_MEMBERS])))
        return F.coalesce(F.filter(listed, lambda e: e.isNotNull()), F.array().cast(f"array<{entry}>"))

    def column_urn(path: Column) -> Column:
        return F.concat(F.lit(SCHEMA_FIELD + "("), urn, F.lit(","), path, F.lit(")"))

    def body(s):
        ck = Checks()
        ck.add(F.exists(s["e"], lambda e: bad_urn(column_urn(e["path"]))), "BAD_IDENTIFIER",
               f"aspect.value.{key}.fieldPath: a field URN that is no IRI")
        ck.add(F.exists(s["e"], lambda e: F.exists(F.array_union(e["b"], e["a"]), bad_urn)), "BAD_IDENTIFIER",
               f"aspect.value.{key}: a tag or glossary term URN that is no IRI")

        def one(e: Column, i: Column) -> Column:
            change = iri(change_node(event, kind, i + 1))
            column = column_urn(e["path"])
            spec = {sub: rest for sub, _where, *rest in COLUMN_MEMBERS}
            per_kind = [F.when(e["sub"] == sub, F.concat(_nodes(F.array_union(e["b"], e["a"]), cls),
                                                         *_diff(change, e["b"], e["a"], added, removed)))
                        for sub, (added, removed, cls) in spec.items()]
            return F.concat(
                F.array(*field_change_triples(event, kind, F.concat(F.lit(aspect_name + "."), e["path"], F.lit("."),
                                                                   e["sub"]), index=i + 1),
                        triple(change, om("aboutColumn"), iri(iri_safe(column))), *_node(column, "om-event:Column")),
                F.coalesce(*per_kind, _empty()))

        return _part([F.coalesce(F.flatten(F.transform(s["e"], one)), _empty())], ck)

    return let({"e": let({"b": _column_members(old, key), "a": _column_members(new, key)}, changed)}, body)


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
            ck.add(F.exists(s["u"], bad_urn), "BAD_IDENTIFIER", f"aspect.value.{where}: a URN that is no IRI")
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
                   "aspect.value.timestampMillis: epoch milliseconds out of range")
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
