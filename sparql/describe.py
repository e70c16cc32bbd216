"""An entity's provenance subgraph (``describe.rq``) rendered as Turtle, JSON-LD or N-Triples."""

from __future__ import annotations

import json
import shlex

import pyoxigraph as ox

from changeprov.errors import InputError
from changeprov.sparql.queries import get_query, has_node, resolve_node, run_query
from changeprov.sparql.stores import TripleStore

DESCRIBE_FORMATS = ("turtle", "jsonld", "nt")


class Described(list):
    """The triples of an entity's subgraph, sorted, with ``notes``: what the command line prints on
    stderr (an FQN that also named a hard-deleted entity, a term also applied as a tag)."""

    def __init__(self, triples, notes: list[str]):
        super().__init__(triples)
        self.notes = notes


def describe_triples(store: TripleStore, entity: str, *, notes: list[str] | None = None) -> Described:
    """The provenance subgraph of ``entity`` (FQN, URN or IRI): its events, versions, agents, field
    changes and lineage edges. Its notes are on the result (``.notes``), and appended to ``notes``
    too when given (ut19 #10: given no list, they were lost)."""
    said: list[str] = []
    try:
        rows = run_query(store, get_query("describe"), {"entity": entity})
    except InputError as exc:
        # an OpenMetadata userName or team name is no FQN: say what it names, as for its IRI
        agent = _agent_named(store, entity) if str(exc).startswith("no entity with") else None
        if agent is None:
            raise
        raise InputError(_not_an_entity(store, agent, shown=entity)) from None
    said += rows.notes
    out = _triples(rows)
    # ut12 #5: an OpenMetadata glossary term (or classification tag) with events of its own is an
    # entity, and applying it makes a tag-reference node with the same FQN; the name describes both
    term = _applied_as_tag(store, entity)
    if term is not None:
        out |= _triples(run_query(store, get_query("describe"), {"entity": term.value}))
        said.append(f"{entity[:120]!r} is also applied as a tag or glossary term ({term.value}): "
                    "where it was added or removed is described too")
    if not out:  # an empty document would read as "this entity has no history"
        raise InputError(_not_an_entity(store, entity))
    if notes is not None:
        notes += said
    return Described(sorted(out, key=str), said)


def _triples(rows) -> set[ox.Triple]:
    return {ox.Triple(r["s"], r["p"], r["o"]) for r in rows.dicts()
            if r["s"] is not None and r["p"] is not None and r["o"] is not None}


def _applied_as_tag(store: TripleStore, name: str) -> ox.NamedNode | None:
    """The tag-reference node ``name`` also names, when it is not the entity node the name resolves to."""
    try:
        entity, tag = resolve_node(store, name), resolve_node(store, name, what="tag")
    except InputError:
        return None
    return tag if tag != entity else None


def _agent_named(store: TripleStore, name: str) -> str | None:
    """The IRI of the OpenMetadata user or team called ``name``, or of the DataHub user or group whose URN
    it is (ut44c #6: a URN with a space or a quote is no IRI as typed), if the store has one."""
    from changeprov.mapping.emit import om_named
    from changeprov.mapping.terms import BadIdentifier
    from changeprov.sparql.params import user_node

    if name[:4].lower() == "urn:":
        try:
            node = user_node(name)  # the URN's IRI, as changes-by-user finds the user
        except InputError:
            return None
        return node.value if has_node(store, node) else None

    # impact and entity-state show a team owner as team:NAME (ut22 m7: that form was not taken back)
    kinds = ("user", "team")
    if name.startswith("team:"):
        kinds, name = ("team",), name[len("team:"):]
    for kind in kinds:
        try:
            node = om_named(kind, name)
        except BadIdentifier:
            return None
        if has_node(store, node):
            return node.value
    return None


def _not_an_entity(store: TripleStore, value: str, *, shown: str | None = None) -> str:
    """Why ``value`` (which resolved to a node of the store) has no provenance subgraph, and what to ask."""
    from changeprov.sparql.queries import user_name

    node = resolve_node(store, value)
    rows = store.select(get_query("label").text, {"node": node}).dicts()
    kind = rows[0]["kind"].value if rows else "other"
    entity = rows[0]["entity_name"].value if rows and rows[0]["entity_name"] is not None else "?"
    name = (shown or value)[:120]
    if kind == "team":
        return f"{name!r} is a team (a prov:Organization), not a metadata entity"
    if kind == "agent":
        return (f"{name!r} is a user (a prov:Agent), not a metadata entity: its changes are "
                f"`changeprov query changes-by-user --param {shlex.quote('user=' + user_name(node.value))}`")
    if kind == "version":
        return f"{name!r} is a version of {entity}: describe that entity"
    if kind == "event":
        return f"{name!r} is a change event, not a metadata entity: describe the entity it affected ({entity})"
    # ut18 #10: a run and a lineage edge have provenance, through the nodes they belong to
    if kind == "run":
        return (f"{name!r} is a run (a prov:Activity) of {rows[0]['run_of'].value}: describe that job or pipeline; "
                "its runs are in its subgraph")
    if kind == "edge":
        down = rows[0]["down"].value
        return (f"{name!r} is a lineage edge from {rows[0]['up'].value} to {down}: describe {down}, whose subgraph has "
                f"the edge and the events that added or removed it (`changeprov query lineage-details --param entity=...` "
                "lists its details as of a time)")
    return f"{name!r} is in the store but has no provenance of its own (no event affects it)"


def _prefixes(context: dict) -> dict[str, str]:
    """The context's prefix terms (name → namespace ending in ``/`` or ``#``)."""
    return {name: ns for name, ns in context.items() if isinstance(ns, str) and ns.endswith(("/", "#"))}


def _suffix_read_as_iri(triples: list[ox.Triple], context: dict) -> str | None:
    """Whether an IRI would compact to ``prefix://…``, which JSON-LD reads back as an absolute IRI of
    the scheme ``prefix`` (ut44c #4: <https://open-metadata.org/entity///weird/abc> became "omx://weird/abc",
    another graph to pyld and rdflib); pyld compacts it nevertheless.

    >>> t = ox.Triple(ox.NamedNode("https://open-metadata.org/entity///w/a"), ox.NamedNode("http://e/p"), ox.Literal("x"))
    >>> _suffix_read_as_iri([t], {"omx": "https://open-metadata.org/entity/"})
    'https://open-metadata.org/entity///w/a'
    """
    spaces = list(_prefixes(context).values())
    for t in triples:
        for term in (t.subject, t.predicate, t.object, getattr(t.object, "datatype", None)):
            iri = getattr(term, "value", None) if isinstance(term, ox.NamedNode) else None
            if iri and any(iri.startswith(ns) and iri[len(ns):].startswith("//") for ns in spaces):
                return iri
    return None


def _prefix_scheme(triples: list[ox.Triple], context: dict) -> str | None:
    """The first IRI whose scheme is one of ``context``'s terms (``prov:x`` beside a prefix ``prov``).

    >>> t = ox.Triple(ox.NamedNode("urn:a"), ox.NamedNode("http://e/p"), ox.NamedNode("prov:x"))
    >>> _prefix_scheme([t], {"prov": "http://www.w3.org/ns/prov#"})
    'prov:x'
    """
    prefixes = _prefixes(context)
    for t in triples:
        for term in (t.subject, t.predicate, t.object, getattr(t.object, "datatype", None)):
            if isinstance(term, ox.NamedNode) and term.value.split(":", 1)[0] in prefixes:
                return term.value
    return None


def _expanded_note(notes: list[str] | None, why: str) -> None:
    if notes is not None:
        notes.append(f"JSON-LD written expanded (full IRIs, no @context): {why}")


def render_graph(triples: list[ox.Triple], fmt: str, *, notes: list[str] | None = None) -> str:
    """``triples`` as Turtle, N-Triples or compacted JSON-LD. The JSON-LD document carries our
    context itself, not its IRI: that IRI is not served anywhere, so any other JSON-LD processor
    (rdflib, pyld, jsonld.js) could not expand a document that only named it. A graph that cannot be
    compacted with our context is written expanded, and ``notes`` gets a line saying why (ut45c #8:
    a reader expecting our terms found full IRIs without a word)."""
    from changeprov.mapping.export import (CONTEXT_IRI, JsonLdInputError, bundled_context, to_expanded, to_jsonld,
                                           to_turtle)

    odd = next((t for t in triples if not isinstance(t, ox.Triple)), None)
    if odd is not None:  # ut44f #6: a TypeError from the serialiser
        raise InputError(f"render_graph takes pyoxigraph Triples, got {type(odd).__name__} {str(odd)[:80]!r}")

    if fmt == "turtle":
        return to_turtle(triples)
    if fmt == "jsonld":
        odd_iri = _suffix_read_as_iri(triples, bundled_context()["@context"])
        if odd_iri:
            _expanded_note(notes, f"<{odd_iri}> would compact to a string JSON-LD reads back as another IRI")
            return json.dumps(to_expanded(triples), indent=2, ensure_ascii=False) + "\n"
        try:
            doc = to_jsonld(triples)
        except JsonLdInputError as exc:  # pyld's JsonLdError is its cause
            if getattr(exc.__cause__, "code", None) != "IRI confused with prefix":
                raise
            # an IRI such as <prov:x> (a scheme named like one of our prefixes) cannot be written
            # compacted with our context (JSON-LD 1.1 forbids it; ut42c #2): the expanded document,
            # which needs no context, holds the same graph
            named = _prefix_scheme(triples, bundled_context()["@context"])
            _expanded_note(notes, f"<{named}>'s scheme is named like a prefix of the context, which JSON-LD 1.1 "
                                  "cannot compact" if named else str(exc))
            return json.dumps(to_expanded(triples), indent=2, ensure_ascii=False) + "\n"
        if doc.get("@context") == CONTEXT_IRI:  # the same terms, so the compacted keys stay valid
            doc["@context"] = bundled_context()["@context"]
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt == "nt":
        return ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")
    raise InputError(f"unknown format {fmt!r} (one of {', '.join(DESCRIBE_FORMATS)})")
