"""Render a changeprov graph as JSON-LD or Turtle, and read JSON-LD back.

Input: an iterable of pyoxigraph ``Triple``/``Quad`` (primary), a pyoxigraph ``Store`` or
``Dataset`` (all graphs, merged), or an rdflib ``Graph``.

JSON-LD is compacted with the bundled context ``ontology/context.jsonld``, referenced by its IRI
:data:`CONTEXT_IRI`. Every pyld call here uses :func:`document_loader`, which serves **only** that
context, from the package, and raises :class:`RemoteContextRefused` for any other URL — JSON-LD
processing never touches the network (ANCHORS.md §D).

Two deliberate departures from a plain ``pyld.jsonld.from_rdf``/``to_rdf`` pipeline, both to keep
literals exact:

* graph → JSON-LD builds the expanded form directly instead of calling ``from_rdf``: pyld's
  ``from_rdf`` always ``json.loads`` an ``rdf:JSON`` literal into an ``@json`` value (losing the exact
  lexical form — key order, ``1.0E22``, …). The expanded form built here is what ``from_rdf``
  yields with ``useNativeTypes=False`` and ``useRdfType=False``, except that literals keep their
  datatype IRI verbatim. An ``xsd:string`` literal is written without ``@type``, as ``from_rdf``
  does: in RDF 1.1 it is the plain literal, and the context coerces no term to ``xsd:string`` (a
  coercion would make other JSON-LD readers, rdflib's among them, read our plain strings back as
  explicitly typed literals, which they do not compare equal to the mapper's plain ones).
* JSON-LD → graph runs pyld ``to_rdf`` to its in-memory dataset and builds pyoxigraph terms from it
  (no N-Quads text in between, so pyld's partial N-Quads escaping never matters; pyoxigraph still
  validates every IRI and literal).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Any

import pyoxigraph as ox
from pyld import jsonld
from pyld.context_resolver import ContextResolver

from changeprov.errors import InputError
from changeprov.mapping.vocab import XSD_STRING

CONTEXT_IRI = "https://w3id.org/changeprov/context.jsonld"

XSD_DOUBLE = "http://www.w3.org/2001/XMLSchema#double"
# pyld's to_rdf rewrites every xsd:double lexical form into its own canonical one ("0.5" → "5.0E-1");
# string values typed xsd:double are carried through it under this private datatype instead.
_VERBATIM_DOUBLE = "urn:x-changeprov:verbatim-xsd-double"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

#: Prefixes for Turtle output (docs/model.md).
TURTLE_PREFIXES = {
    "om-event": "https://open-metadata.org/schema/type/changeEvent/",
    "prov": "http://www.w3.org/ns/prov#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    # no prefix for https://w3id.org/changeprov/id/: its local parts hold "/", which Turtle would
    # have to escape as "\/" — full IRIs read better
}


class RemoteContextRefused(InputError):
    """A JSON-LD document referenced a context other than the bundled one."""


class JsonLdInputError(InputError):
    """A JSON-LD document is not acceptable changeprov input (dropped keys, relative IRIs, …)."""


# ----------------------------------------------------------------------------- context + loader


@lru_cache(maxsize=1)
def _context_text() -> str:
    return resources.files("changeprov.ontology").joinpath("context.jsonld").read_text("utf-8")


def bundled_context() -> dict:
    """The bundled context document (``{"@context": {...}}``), a fresh copy each call."""
    return json.loads(_context_text())


def document_loader(url: str, options: dict | None = None) -> dict:
    """pyld document loader that serves only :data:`CONTEXT_IRI`; anything else raises."""
    if url == CONTEXT_IRI:
        return {
            "contentType": "application/ld+json",
            "contextUrl": None,
            "documentUrl": url,
            "document": bundled_context(),
        }
    raise RemoteContextRefused(
        f"refusing to load JSON-LD document {url!r}: only the bundled context "
        f"{CONTEXT_IRI!r} is served (no network access)"
    )


def _options(**extra: Any) -> dict:
    # A private ContextResolver cache: pyld's default resolver shares a process-wide cache, which
    # could serve a context some other caller fetched with another loader.
    # base=None: without it pyld resolves relative IRIs against its DEFAULT_BASE_IRI
    # "http://example.org/base/", silently inventing IRIs (and compacts IRIs under it to relative
    # ones). With None they stay relative, and from_jsonld rejects them.
    opts = {
        "documentLoader": document_loader,
        "contextResolver": ContextResolver({}, document_loader),
        "processingMode": "json-ld-1.1",
        "base": None,
    }
    opts.update(extra)
    return opts


def _refused_cause(exc: BaseException) -> RemoteContextRefused | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, RemoteContextRefused):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__ or getattr(exc, "cause", None)
    return None


def _run(fn, *args):
    """pyld's ``fn(*args)``, its errors as ours (rv45d #10: a JsonLdError, with its multi-line message,
    reached library callers)."""
    try:
        return fn(*args)
    except jsonld.JsonLdError as exc:
        refused = _refused_cause(exc)
        if refused is not None:
            raise RemoteContextRefused(str(refused)) from exc
        message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc).splitlines()[0]
        message = " ".join(message.split())  # a value of the input may hold line breaks (rv45 #8)
        code = getattr(exc, "code", None)
        raise JsonLdInputError(f"not valid JSON-LD: {message}{f' ({code})' if code else ''}") from exc


# ----------------------------------------------------------------------------- graph input


def _from_rdflib(term) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        dt = term.datatype
        return ox.Literal(str(term), datatype=ox.NamedNode(str(dt)) if dt else None)
    raise TypeError(f"unsupported rdflib term {term!r}")


def as_triples(data) -> list[ox.Triple]:
    """Normalise the accepted inputs to a sorted, duplicate-free list of pyoxigraph triples."""
    if isinstance(data, (ox.Store, ox.Dataset)):
        items: Iterable = data.quads_for_pattern(None, None, None, None) if isinstance(
            data, ox.Store) else iter(data)
    else:
        items = data
    try:
        from rdflib import Graph
    except ImportError:  # pragma: no cover
        Graph = ()  # type: ignore[assignment]
    out: set[ox.Triple] = set()
    if Graph and isinstance(data, Graph):
        for s, p, o in data.triples((None, None, None)):
            out.add(ox.Triple(_from_rdflib(s), _from_rdflib(p), _from_rdflib(o)))
    else:
        for t in items:
            if isinstance(t, ox.Quad):
                t = t.triple
            if not isinstance(t, ox.Triple):
                raise TypeError(f"expected pyoxigraph Triple or Quad, got {type(t).__name__}")
            out.add(t)
    return sorted(out, key=str)


# ----------------------------------------------------------------------------- to JSON-LD


def _node_id(term) -> str:
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    raise ValueError(f"cannot render {term!r} as a JSON-LD node (RDF-star triple terms unsupported)")


def _value_object(term) -> dict:
    if isinstance(term, ox.Literal):
        if getattr(term, "direction", None):
            raise ValueError(f"directional language strings are not supported: {term}")
        if term.language:
            return {"@value": term.value, "@language": term.language}
        dt = term.datatype.value
        if dt == XSD_STRING:
            return {"@value": term.value}
        return {"@value": term.value, "@type": dt}
    return {"@id": _node_id(term)}


def to_expanded(triples) -> list[dict]:
    """Expanded JSON-LD (one node object per subject, sorted) for the given graph."""
    nodes: dict[str, dict] = {}
    for t in as_triples(triples):
        s = _node_id(t.subject)
        node = nodes.setdefault(s, {"@id": s})
        p = t.predicate.value
        if p == RDF_TYPE and not isinstance(t.object, ox.Literal):
            node.setdefault("@type", []).append(_node_id(t.object))
        else:
            node.setdefault(p, []).append(_value_object(t.object))
    return [nodes[k] for k in sorted(nodes)]


def to_jsonld(triples, *, frame: dict | None = None) -> dict:
    """Compact (or, given ``frame``, frame) the graph with the bundled context.

    The result's ``@context`` is the string :data:`CONTEXT_IRI`; :func:`from_jsonld` resolves it
    locally. A ``frame`` without ``@context`` gets :data:`CONTEXT_IRI`.
    """
    expanded = to_expanded(triples)
    if frame is None:
        return _run(jsonld.compact, expanded, {"@context": CONTEXT_IRI}, _options())
    frame = copy.deepcopy(frame)
    frame.setdefault("@context", CONTEXT_IRI)
    return _run(jsonld.frame, expanded, frame, _options())


# ----------------------------------------------------------------------------- from JSON-LD


def _to_term(obj: dict):
    kind, value = obj["type"], obj["value"]
    if kind == "IRI":
        return ox.NamedNode(value)
    if kind == "blank node":
        return ox.BlankNode(value[2:] if value.startswith("_:") else value)
    if kind == "literal":
        if obj.get("language"):
            return ox.Literal(value, language=obj["language"])
        dt = obj.get("datatype") or XSD_STRING
        return ox.Literal(value, datatype=ox.NamedNode(XSD_DOUBLE if dt == _VERBATIM_DOUBLE else dt))
    raise ValueError(f"unexpected RDF term from pyld: {obj!r}")


def _prepare(expanded) -> None:
    """Check an expanded document in place before pyld's to_rdf.

    * relative IRIs are rejected (pyld's to_rdf would silently drop their triples);
    * string ``xsd:double`` values are protected from pyld's re-canonicalisation;
    * native JSON non-integer numbers with a datatype other than xsd:double are rejected: pyld would
      write them as a double lexical form under that datatype (``0.1`` + ``xsd:decimal`` →
      ``"1.0E-1"^^xsd:decimal``, not a decimal). Give such values as strings.
    """

    def bad(iri: str) -> bool:
        return not (iri.startswith("_:") or jsonld._is_absolute_iri(iri))

    def walk(x):
        if isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            if "@value" in x:
                value, dt = x["@value"], x.get("@type")
                if dt == _VERBATIM_DOUBLE:
                    raise JsonLdInputError(f"reserved datatype {dt!r} in input")
                if dt == XSD_DOUBLE and isinstance(value, str):
                    x["@type"] = _VERBATIM_DOUBLE
                elif isinstance(value, float) and dt not in (None, XSD_DOUBLE):
                    raise JsonLdInputError(
                        f"native JSON number {value!r} typed {dt}: give its lexical form as a string")
                return
            if isinstance(x.get("@id"), str) and bad(x["@id"]):
                raise JsonLdInputError(f"relative or unresolvable IRI {x['@id']!r}")
            for t in x.get("@type", []) if isinstance(x.get("@type"), list) else []:
                if bad(t):
                    raise JsonLdInputError(f"relative or unresolvable type {t!r}")
            for k, v in x.items():
                if k not in ("@id", "@type"):
                    walk(v)

    walk(expanded)


def from_jsonld(doc: dict | list) -> list[ox.Triple]:
    """JSON-LD (compacted with the bundled context, or any local context) → pyoxigraph triples.

    Raises :class:`RemoteContextRefused` for any remote context other than :data:`CONTEXT_IRI`,
    :class:`JsonLdInputError` for keys that do not expand to an IRI (instead of silently dropping
    them), relative IRIs, named graphs, and native JSON non-integer numbers under a non-double
    datatype (see :func:`_prepare`).
    """
    dropped: list[str | None] = []
    processor = jsonld.JsonLdProcessor(on_property_dropped=dropped.append)
    expanded = _run(processor.expand, doc, _options())
    if dropped:
        raise JsonLdInputError(f"JSON-LD keys that expand to no IRI (would be dropped): {dropped!r}")
    _prepare(expanded)
    dataset = _run(processor.to_rdf, expanded, _options())
    out: set[ox.Triple] = set()
    for graph, triples in dataset.items():
        if graph != "@default" and triples:
            raise JsonLdInputError(f"named graph {graph!r} in JSON-LD input; only a default graph is accepted")
        for t in triples:
            out.add(ox.Triple(_to_term(t["subject"]), _to_term(t["predicate"]), _to_term(t["object"])))
    return sorted(out, key=str)


# ----------------------------------------------------------------------------- Turtle


def to_turtle(triples) -> str:
    """Turtle with the changeprov prefixes, triples in a stable order.

    A prefix is left out when an IRI under it ends in ".": its prefixed name (``om-event:note\\.``) is
    valid Turtle, but rdflib cannot read it (rv40 m6), so such IRIs are written whole.

    >>> "<https://open-metadata.org/schema/type/changeEvent/note.>" in to_turtle([ox.Triple(
    ...     ox.NamedNode("urn:x"), ox.NamedNode("https://open-metadata.org/schema/type/changeEvent/note."), ox.Literal("x"))])
    True
    """
    triples = as_triples(triples)
    dotted = {t.value for tr in triples for t in (tr.subject, tr.predicate, tr.object)
              if isinstance(t, ox.NamedNode) and t.value.endswith(".")}
    prefixes = {p: ns for p, ns in TURTLE_PREFIXES.items() if not any(iri.startswith(ns) for iri in dotted)}
    return ox.serialize(triples, format=ox.RdfFormat.TURTLE, prefixes=prefixes).decode("utf-8")
