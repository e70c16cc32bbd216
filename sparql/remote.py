"""The ``remote`` store kind: any SPARQL 1.1 server. Queries go through SPARQLWrapper (POST, JSON results);
loading uses the SPARQL 1.1 Graph Store HTTP Protocol (``POST`` of N-Triples batches to the default graph)
or, without a graph store URL, ``INSERT DATA`` batches to the update endpoint. Credentials come only from
the environment: ``CHANGEPROV_ENDPOINT_TOKEN`` (bearer) or ``CHANGEPROV_ENDPOINT_USER`` /
``CHANGEPROV_ENDPOINT_PASSWORD`` (basic). No redirect is followed."""

from __future__ import annotations

import base64
import functools
import http.client
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Iterator

import pyoxigraph as ox

from changeprov.errors import ChangeprovError, ConfigError, InputError, StoreError
from changeprov.sparql.lexer import blank
from changeprov.sparql.query_files import lookup
from changeprov.sparql.stores import (BINDINGS_MARKER, DEFAULT_BATCH_BYTES, DEFAULT_TIMEOUT, NTriplesSyntaxError, Rows,
                                      TripleStore, _binary, _drained, checked_bindings, first_text, shift_lines)
from changeprov.sparql.values import with_values

ENV_USER, ENV_PASSWORD, ENV_TOKEN = "CHANGEPROV_ENDPOINT_USER", "CHANGEPROV_ENDPOINT_PASSWORD", "CHANGEPROV_ENDPOINT_TOKEN"


_FORM = re.compile(r"(?i)(?<![\w:-])(SELECT|ASK|CONSTRUCT|DESCRIBE)\b(?![\w:.-])")
_BARE_DESCRIBE = re.compile(r"(?is)\s*((PREFIX\s+[\w.-]*:|BASE)\s*)*DESCRIBE(\s+(\?\w+|\$\w+|\*|[\w.-]*:[\w.-]*))*\s*")


def _with_where(query: str) -> str:
    r"""A DESCRIBE with no WHERE group (``DESCRIBE ?entity``), which a store binds in place, with one
    holding the marker line, where an endpoint's VALUES block binds the same (ut41a #4); any other
    query as it is.

    >>> _with_where("PREFIX x: <urn:x#>  # the entity\nDESCRIBE ?entity")
    'PREFIX x: <urn:x#>  # the entity\nDESCRIBE ?entity\nWHERE {\n#@bindings\n}\n'
    """
    if any(line.strip() == BINDINGS_MARKER for line in query.split("\n")) \
            or not _BARE_DESCRIBE.fullmatch(blank(query, keep=("var",))):
        return query
    return f"{query.rstrip()}\nWHERE {{\n{BINDINGS_MARKER}\n}}\n"


def _derive(endpoint: str) -> tuple[str | None, str | None]:
    """Update and graph-store URLs for the common layouts (Oxigraph /query, Fuseki /sparql), with the
    endpoint's query string (an API key a gateway wants on every request: ut41a #3).

    >>> _derive("http://h:7878/query?apikey=k")
    ('http://h:7878/update?apikey=k', 'http://h:7878/store?apikey=k')
    """
    parts = urllib.parse.urlsplit(endpoint)
    base, _, last = parts.path.rstrip("/").rpartition("/")
    names = {"query": ("update", "store"), "sparql": ("update", "data")}.get(last)  # oxigraph serve, Fuseki
    if names is None:
        return None, None
    return tuple(urllib.parse.urlunsplit(parts._replace(path=f"{base}/{name}", fragment="")) for name in names)


#: the largest batch a load sends (each is held in memory, with its parsed triples)
MAX_BATCH_BYTES = 2**30
#: the longest request timeout taken (a larger one overflows the socket's clock)
MAX_TIMEOUT = 7 * 86_400


def _check_url(url, option: str) -> None:
    """An endpoint URL: http(s) with a host, no space or control character (ut44a #1 #4 #5: a file: URL
    "took" a load, a space was an internal error, HTTP:// was refused saying http://)."""
    if not isinstance(url, str):  # rv42 #5: a TypeError
        raise ConfigError(f"{option} must be a URL string, got {type(url).__name__}")
    bad = re.search(r"[\x00-\x20\x7f]|[^\x00-\x7f]", url)
    if bad:  # HTTP sends the URL as ASCII (rv44 #4: a path with é was a UnicodeEncodeError, "a bug")
        what = "space" if bad.group() == " " else "control character" if bad.group() < "\x80" else "non-ASCII character"
        raise ConfigError(f"the URL of {option} has a {what} at character {bad.start() + 1}: remove it, or "
                          f"percent-encode it (%20 for a space, %C3%A9 for é)")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port
    except ValueError as exc:  # an unclosed [IPv6 host, a port out of range (rv44 #4)
        raise ConfigError(f"{option} is not a valid URL: {exc}") from None  # shown: it may hold a key
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{option} must be an http(s) URL with a host, got {redacted(url)!r}")


def redacted(url: str) -> str:
    """``url`` for messages: its user part (a user name may be a token) and its query's values (an API
    key) hidden (rv40 m1).

    >>> redacted("http://tok3n@host:7878/query?apikey=k3y&x=1")
    'http://***@host:7878/query?apikey=***&x=***'
    >>> redacted("https://host/sparql?S3CR3T#t0ken")
    'https://host/sparql?***#***'
    >>> redacted("http://host/store?default")  # the Graph Store Protocol's own parameter (ut44a #10)
    'http://host/store?default'
    """
    parts = urllib.parse.urlsplit(url)
    netloc = "***@" + parts.netloc.rsplit("@", 1)[1] if "@" in parts.netloc else parts.netloc
    # a value without a name (?KEY) is hidden whole; a fragment too (rv41 M2)
    query = "&".join(f"{k.split('=', 1)[0]}=***" if "=" in k else k if k == "default" else "***"
                     for k in parts.query.split("&")) \
        if parts.query else ""
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query,
                                                  fragment="***" if parts.fragment else ""))

#: a server out of threads or processes (EAGAIN): impact, the lineage walks and audit send a request per
#: asset, and `oxigraph serve --timeout-s T` keeps a thread per request for T seconds
_EXHAUSTED_HINT = ("; the server ran out of threads or processes: impact, upstream / downstream and audit send "
                   "one request per asset, and an `oxigraph serve --timeout-s T` keeps a thread per request for "
                   "T seconds (start it without --timeout-s, or with a short one)")


def _server_said(body: bytes | None, *, mask: tuple[str, ...] = ()) -> str:
    """The first line of an error response's body (a server's own reason), or "": ``mask``'s strings
    are replaced by ``***`` before it is cut short."""
    secrets = sorted((x for x in mask if len(x) >= 3), key=len, reverse=True)
    # masked before it is cut (rv46b #2: a token across the cut lost its tail to the cut, its head stayed)
    text = (body or b"")[:2000 + max(map(len, secrets), default=0)].decode("utf-8", "replace")
    for secret in secrets:
        text = text.replace(secret, "***")
    text = text[:2000].strip()
    if text.lstrip().startswith("<"):  # an HTML error page: its text, without the tags
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", text)).strip()
    return (text.splitlines() or [""])[0][:300]


def _tls_timeout(exc: BaseException) -> bool:
    reason = getattr(exc, "reason", exc)
    return isinstance(reason, (TimeoutError, OSError)) and "handshake" in str(reason).lower()


def _no_handshake(where: str, timeout: float) -> StoreError:
    """https:// to a plain-http port: the handshake never gets an answer."""
    return StoreError(f"{where}: no TLS handshake within {timeout:g} s: is it a plain-http server (http://), or "
                      "the wrong port?")


#: statuses a server or gateway gives while it is busy or restarting: asked again (ut48b #7: one 503 ended an
#: impact that sends a request per asset, or an audit's eleven queries)
TRANSIENT = frozenset({429, 502, 503, 504})
RETRIES = 3


def _retrying(send, deadline: float):
    """``send()``, again after a transient status (``TRANSIENT``), at most ``RETRIES`` times and within
    ``deadline``: after the server's Retry-After seconds (at most 30), else 1, 2, 4 s. The last error is
    raised with its number of tries. A load's request may be sent twice: the triples are a set."""
    for attempt in range(RETRIES + 1):
        try:
            return send()
        except urllib.error.HTTPError as exc:
            exc.tries = attempt + 1
            if exc.code not in TRANSIENT or attempt == RETRIES:
                raise
            after = (exc.headers.get("Retry-After") or "").strip() if exc.headers is not None else ""
            wait = min(int(after), 30) if after.isdigit() else 2 ** attempt
            if time.monotonic() + wait > deadline:
                raise
            exc.close()
            time.sleep(wait)
    raise AssertionError("unreachable")


def _tries(exc: BaseException) -> str:
    tries = getattr(exc, "tries", 1)
    return f", {tries} times" if tries > 1 else ""


def _not_http(exc: BaseException) -> str:
    """What an answer that is no HTTP was (a wrong port: an SSH banner, a database's greeting)."""
    return (f"did not answer as an HTTP server ({type(exc).__name__}: {str(exc)[:80]!r}): is the port a SPARQL "
            "server's?")


def _credential(name: str) -> str | None:
    """A credential from the environment: a trailing line break (a secret mounted from a file) dropped,
    any other control character refused, naming the variable and never showing the value."""
    value = os.environ.get(name)
    if value is None:
        return None
    value = value.rstrip("\r\n")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(f"{name} contains a control character (a line break inside it?): fix the variable")
    return value
_REDIRECTS = (301, 302, 303, 307, 308)


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the HTTP error it is: urllib would send the credentials on to the new
    address (another host, or http after https) and turn a POST into a GET without its body, so a
    load would "succeed" having sent nothing (ut8a #3)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_OPENER = urllib.request.build_opener(_RefuseRedirects)


def _redirected(url: str, exc: urllib.error.HTTPError) -> StoreError:
    # the target keeps the query string of the URL given (an http -> https redirect): its key too (ut41a #2)
    target = redacted(exc.headers.get("Location")) if exc.headers.get("Location") else "?"
    return StoreError(f"{url} redirects (HTTP {exc.code}) to {target}: give that URL "
                      "instead (changeprov follows no redirect, so that credentials and data go only where you "
                      "said)")


@functools.cache
def _sparql_wrapper_class():
    """SPARQLWrapper, opening its requests with _OPENER (its own ``_query`` uses urllib's global opener,
    which follows redirects); its HTTP errors are mapped as SPARQLWrapper maps them."""
    from SPARQLWrapper import SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import (EndPointInternalError, EndPointNotFound, QueryBadFormed,
                                                Unauthorized, URITooLong)

    errors = {400: QueryBadFormed, 401: Unauthorized, 404: EndPointNotFound, 414: URITooLong,
              500: EndPointInternalError}

    class _NoRedirectWrapper(SPARQLWrapper):
        def _query(self):
            request = self._createRequest()
            try:
                response = _OPENER.open(request, timeout=self.timeout) if self.timeout else _OPENER.open(request)
                return response, self.returnFormat
            except urllib.error.HTTPError as exc:
                if exc.code in errors:
                    error = errors[exc.code](body := exc.read())
                    error.response = body  # the server's reason, for the message (_server_said)
                    raise error from None
                raise

    return _NoRedirectWrapper


class RemoteStore(TripleStore):
    kind = "remote"
    atomic_load = False  # sent in batches of at most batch_bytes (of N-Triples, before the request's wrapping)

    def __init__(self, endpoint: str, *, update_endpoint: str | None = None, graph_store: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, batch_bytes: int = DEFAULT_BATCH_BYTES):
        # named as the CLI user gives them, with the keyword a Python caller gives (ut47a #6: "the URL
        # (endpoint=, --endpoint)" read as garbled)
        for url, option in ((endpoint, "--endpoint (endpoint=)"), (update_endpoint, "--update-endpoint (update_endpoint=)"),
                            (graph_store, "--graph-store (graph_store=)")):
            if url is not None or option.startswith("--endpoint"):
                _check_url(url, option)
        for url in (endpoint, update_endpoint, graph_store):
            if url and (urllib.parse.urlsplit(url).username is not None):
                raise ConfigError(f"credentials in an endpoint URL are refused ({redacted(url)}): they would show in "
                                  f"process lists and shell history; set {ENV_USER} and {ENV_PASSWORD}, or {ENV_TOKEN}")
        for name, value in (("timeout", timeout), ("batch_bytes", batch_bytes)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
        if timeout > MAX_TIMEOUT:  # ut44a #4: 1e12 s overflowed the socket's clock, "internal error"
            raise ConfigError(f"timeout must be at most {MAX_TIMEOUT:,} seconds (a week), got {timeout!r}")
        if batch_bytes > MAX_BATCH_BYTES:  # ut46b #8: 999999999999G was taken; a batch is held in memory
            raise ConfigError(f"batch_bytes (--batch-bytes) must be at most {MAX_BATCH_BYTES:,} (1G), got {batch_bytes:,}")
        self.endpoint = endpoint
        upd, gsp = _derive(endpoint)
        self.update_endpoint = update_endpoint or upd
        self.graph_store = graph_store or (gsp if not update_endpoint else None)
        self._derived = {url for url, given in ((upd, update_endpoint), (gsp, graph_store)) if url and not given}
        self.timeout = timeout
        self.batch_bytes = batch_bytes
        self.shown = redacted(endpoint)  # for messages
        self.description = f"SPARQL endpoint {self.shown}"
        self._headers = self._auth_headers()

    @staticmethod
    def _auth_headers() -> dict[str, str]:
        token, user, password = (_credential(name) for name in (ENV_TOKEN, ENV_USER, ENV_PASSWORD))
        if token is not None:
            token = token.strip(" \t")
        if token:
            if token.split(" ")[0].lower() in ("bearer", "basic"):  # ut46b #7: "Bearer Bearer tok" was sent
                raise ConfigError(f"{ENV_TOKEN} starts with {token.split(' ')[0]!r}: give the token alone "
                                  "(changeprov sends it as 'Bearer <token>')")
            if not token.isascii():  # an HTTP header carries Latin-1 at most; a bearer token is ASCII
                raise ConfigError(f"{ENV_TOKEN} has a character that is not ASCII (a typographic quote?): fix the variable")
            return {"Authorization": "Bearer " + token}
        # a missing variable, not an empty value: say so instead of being refused (or sending nothing)
        if user is not None and password is None:
            raise ConfigError(f"{ENV_USER} is set but {ENV_PASSWORD} is not")
        if password is not None and user is None:
            raise ConfigError(f"{ENV_PASSWORD} is set but {ENV_USER} is not")
        if user is not None:
            if ":" in user:  # RFC 7617: the server would read the user up to the colon (ut48b #9)
                raise ConfigError(f"{ENV_USER} has a colon, which HTTP basic authentication cannot carry in a user name")
            cred = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            return {"Authorization": "Basic " + cred}
        return {}

    def _refused(self, url: str, code: int, body: bytes | None = None) -> str:
        """What to do about a 401 / 403: what the server said (ut46b #3: "The server is read-only" was
        dropped for advice on credentials), which credentials went, and where they come from."""
        said = self._said(body)
        sent = self._headers.get("Authorization", "").split(" ")[0]
        what = "a bearer token from the environment was" if sent == "Bearer" else \
            "basic credentials from the environment were"
        how = (f"{what} sent" if sent else f"no credentials were sent: set {ENV_TOKEN}, or {ENV_USER} and {ENV_PASSWORD}")
        return f"{url} refused access (HTTP {code}{f': {said}' if said else ''}): {how}"

    def _said(self, body: bytes | None) -> str:
        """The server's reason (:func:`_server_said`), the credentials sent masked: a server or gateway that
        echoes the Authorization header put the token in our error message (ut46b #4)."""
        auth = self._headers.get("Authorization", "")
        secrets = {auth, auth.partition(" ")[2]}
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode("utf-8", "replace").partition(":")
            secrets |= {f"{user}:{password}", password}
        return _server_said(body, mask=tuple(secrets))

    def _wrapper(self, query: str, accept: str):
        from SPARQLWrapper import POST

        sw = _sparql_wrapper_class()(self.endpoint)
        sw.setMethod(POST)
        # the documented attribute; setTimeout() truncates to int, and 0 means no timeout at all
        sw.timeout = self.timeout
        sw.setQuery(query)
        sw.clearCustomHttpHeader("Accept")
        for k, v in self._headers.items():
            sw.addCustomHttpHeader(k, v)
        sw.addCustomHttpHeader("Accept", accept)
        if sw.queryType not in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
            raise InputError("only SELECT, ASK, CONSTRUCT and DESCRIBE queries are sent to an endpoint")
        return sw

    def _fetch(self, query: str, bindings, accept: str) -> bytes:
        from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

        self._check_open()
        bindings = checked_bindings(bindings)
        text = with_values(_with_where(query) if bindings else query, bindings)
        # the leading comment header is documentation; dropping it keeps SPARQLWrapper's query-type sniffing
        # right. Lines end only at LF, and one with a CR is kept: the engine ends a comment there, and the
        # text sent must be the text the SERVICE guard read (rv43 H1)
        lines = text.split("\n")
        while lines and "\r" not in lines[0] and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
            lines.pop(0)
        text = "\n".join(lines)
        deadline = time.monotonic() + self.timeout
        try:
            return self._read_by(_retrying(lambda: self._wrapper(text, accept).query().response, deadline), deadline)
        except SPARQLWrapperException as exc:
            msg = str(exc).splitlines()[0][:500].strip()
            if type(exc).__name__ == "EndPointInternalError":  # as the other statuses say it (ut48b #7)
                msg = "HTTP 500 Internal Server Error"
            said = self._said(getattr(exc, "response", None))
            if "QueryBadFormed" in type(exc).__name__:
                raise InputError(f"endpoint {self.shown} refused the query: {said or msg}{self._not_query_url()}") from None
            if type(exc).__name__ == "Unauthorized":
                raise StoreError(self._refused(f"endpoint {self.shown}", 401, getattr(exc, "response", None))) from None
            if type(exc).__name__ == "EndPointNotFound":  # HTTP 404, most often a server's base URL
                raise StoreError(f"endpoint {self.shown} answered 404 Not Found: --endpoint must be the "
                                 "SPARQL query URL (oxigraph serve: http://HOST:PORT/query; Fuseki: "
                                 "http://HOST:PORT/DATASET/sparql)") from None
            raise StoreError(f"endpoint {self.shown} failed: {msg}{f' ({said})' if said else ''}"
                             f"{_EXHAUSTED_HINT if 'temporarily unavailable' in said.lower() else ''}"
                             f"{self._not_query_url()}") from None
        except urllib.error.HTTPError as exc:
            if exc.code in _REDIRECTS:
                raise _redirected(self.shown, exc) from None
            if exc.code == 403:
                raise StoreError(self._refused(f"endpoint {self.shown}", 403, exc.read())) from None
            said = self._said(exc.read())
            raise StoreError(f"endpoint {self.shown} failed: HTTP {exc.code} {exc.reason}"
                             f"{f' ({said})' if said else ''}{_tries(exc)}{self._not_query_url()}") from None
        except (urllib.error.URLError, OSError) as exc:
            if _tls_timeout(exc):  # https:// to a plain-http port: the handshake never gets an answer
                raise _no_handshake(f"endpoint {self.shown}", self.timeout) from None
            if isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError):
                # ut10b #2: "cannot reach" while the server was still computing the answer
                raise StoreError(f"endpoint {self.shown} gave no answer within {self.timeout:g} s (timeout=, --timeout): "
                                 "the query may still be running there; a longer timeout waits for it") from None
            raise StoreError(f"cannot reach endpoint {self.shown}: {exc}") from None
        except http.client.HTTPException as exc:  # ut48b #4: "internal error (a bug in changeprov)"
            raise StoreError(f"endpoint {self.shown} {_not_http(exc)}") from None

    def _read_by(self, response, deadline: float) -> bytes:
        """The whole answer, by ``deadline``: the socket's timeout bounds each read, so a server sending a
        byte every half second held a 3 s query for 78 s (ut46b #2)."""
        chunks, size = [], 0
        read = getattr(response, "read1", response.read)
        while chunk := read(1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if time.monotonic() > deadline:
                raise StoreError(f"endpoint {self.shown} did not finish its answer within {self.timeout:g} s (timeout=, "
                                 f"--timeout; {size:,} bytes came): a longer timeout waits for it")
        length = response.headers.get("Content-Length") if getattr(response, "headers", None) is not None else None
        if length is not None and length.strip().isdigit() and size < int(length):  # ut48b #7: "not SPARQL JSON"
            raise StoreError(f"endpoint {self.shown} closed the connection after {size:,} of the {int(length):,} bytes "
                             "of its answer")
        return b"".join(chunks)

    def _not_query_url(self) -> str:
        """A hint when --endpoint looks like a server's update or Graph Store URL (ut46b #7: a 400 or 415
        said only what the server said)."""
        last = urllib.parse.urlsplit(self.endpoint).path.rstrip("/").rsplit("/", 1)[-1].lower()
        if last not in {"update", "store", "data", "statements", "upload", "get"}:
            return ""
        return ("; is it the SPARQL query URL? --endpoint takes that (oxigraph serve: http://HOST:PORT/query; "
                "Fuseki: http://HOST:PORT/DATASET/sparql)")

    def _results(self, data: bytes):
        try:
            return ox.parse_query_results(data, format=ox.QueryResultsFormat.JSON)
        except (SyntaxError, ValueError) as exc:  # a login page, a proxy's error page, another service
            raise StoreError(f"endpoint {self.shown} did not answer with SPARQL results JSON ({first_text(exc)}; "
                             f"it sent {data[:60]!r})") from None

    def select(self, query, bindings=None) -> Rows:
        data = self._fetch(query, bindings, "application/sparql-results+json")
        res = self._results(data)
        if not isinstance(res, ox.QuerySolutions):
            raise self._wrong_form(query, "SELECT", "a boolean")
        names = [v.value for v in res.variables]
        # an error found while the server was already streaming its results ends the body (oxigraph)
        return Rows(names, _drained(lambda: [tuple(sol[n] for n in names) for sol in res],
                                    f"endpoint {self.shown} broke off its results (it ended with {data[-120:]!r})"))

    def ask(self, query, bindings=None) -> bool:
        res = self._results(self._fetch(query, bindings, "application/sparql-results+json"))
        if not isinstance(res, ox.QueryBoolean):
            raise self._wrong_form(query, "ASK", "variable bindings")
        return bool(res)

    def _wrong_form(self, query: str, form: str, got: str) -> ChangeprovError:
        """A query of another form is the caller's mistake; the right form answered wrongly is the
        server's (ut46b #2: a half-sent SELECT answer to an ASK read as "expected an ASK query")."""
        sent = _FORM.search(blank(query, keep=()))  # a prefix named ask: or select: is no form (rv46b #5)
        if sent is None or sent.group(1).upper() != form:
            return InputError(f"expected {'an' if form == 'ASK' else 'a'} {form} query")
        return StoreError(f"endpoint {self.shown} answered the {form} query with {got}: is it a SPARQL endpoint, "
                          "and the query URL?")

    def construct(self, query, bindings=None):
        data = self._fetch(query, bindings, "application/n-triples")
        try:  # triples, as the other stores give them (ut44f #4: quads)
            return [quad.triple for quad in ox.parse(data, format=ox.RdfFormat.N_TRIPLES)]
        except SyntaxError as exc:
            raise StoreError(f"endpoint {self.shown} did not answer with N-Triples ({first_text(exc)}; "
                             f"it sent {data[:60]!r})") from None

    def _post(self, url: str, body: bytes, content_type: str, *, sent: int = 0, before: str | None = None) -> None:
        """POST one request; ``sent`` batches of a load went before it (``before``: what other requests say
        of those, e.g. reason's updates)."""
        self._check_open()
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type, **self._headers})
        if before is None:
            before = (f"the {sent} batch(es) sent before it stay in the store (a remote load is not atomic): load "
                      "again to complete it (loading is idempotent)" if sent else "no earlier batch was stored")
        try:
            with _retrying(lambda: _OPENER.open(req, timeout=self.timeout), time.monotonic() + self.timeout) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code in _REDIRECTS:
                raise _redirected(redacted(url), exc) from None
            if exc.code in (401, 403):
                raise StoreError(f"{self._refused(redacted(url), exc.code, exc.read())}; {before}") from None
            derived = url.split("?")[0] in {u.split("?")[0] for u in self._derived}
            hint = {404: (f": is it the Graph Store URL? --graph-store URL gives it (derived from --endpoint: {redacted(url)})"
                          if derived else ": is it the right URL?"),
                    413: f": the server takes smaller requests; --batch-bytes N sends less at a time (now {self.batch_bytes:,})"
                    }.get(exc.code, "")
            said = self._said(exc.read())
            raise StoreError(f"{redacted(url)} refused the data: HTTP {exc.code}{f' ({said})' if said else ''}"
                             f"{_tries(exc)}{hint}; {before}") from None
        except (urllib.error.URLError, OSError) as exc:
            if _tls_timeout(exc):
                raise _no_handshake(redacted(url), self.timeout) from None
            if isinstance(exc, TimeoutError):  # sent whole, no answer yet (ut44a #3: it was stored moments later)
                raise StoreError(f"{redacted(url)} gave no answer within {self.timeout:g} s (timeout=, --timeout): "
                                 f"this request may still be applied there; {before}") from None
            if isinstance(getattr(exc, "reason", None), TimeoutError):  # urllib: while connecting or sending (rv44 #7)
                raise StoreError(f"cannot send to {redacted(url)} within {self.timeout:g} s (timeout=, --timeout): "
                                 f"this request was not applied; {before}") from None
            # ut48b #2: a server gone while it read the request may have applied part of it
            cut = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)  # not refused, not unresolved
            part = " (this request may be in the store in part)" if isinstance(getattr(exc, "reason", exc), cut) else ""
            raise StoreError(f"cannot reach {redacted(url)}: {exc}{part}; {before}") from None
        except http.client.HTTPException as exc:
            raise StoreError(f"{redacted(url)} {_not_http(exc)}; {before}") from None

    def _batches(self, stream) -> Iterator[bytes]:
        """The stream's lines in chunks of at most batch_bytes (a longer line alone): a gateway's limit of N
        bytes must take --batch-bytes N (rv35 #8)."""
        batch: list[bytes] = []
        size = 0
        for line in _binary(stream):
            line = line.encode("utf-8") if isinstance(line, str) else line  # a text stream, as the others take
            line = line if line.endswith(b"\n") else line + b"\n"
            if batch and size + len(line) > self.batch_bytes:
                yield b"".join(batch)
                batch, size = [], 0
            batch.append(line)
            size += len(line)
        if batch:
            yield b"".join(batch)

    def _requests(self, triples: list) -> Iterator[tuple[bytes, list]]:
        """Request bodies of at most batch_bytes where the triples allow, each with its triples: the
        canonical serialisation and the SPARQL Update wrapping can make a chunk larger than its lines."""
        body = ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES)
        if not self.graph_store:
            body = b"INSERT DATA {\n" + body + b"}\n"
        if len(body) > self.batch_bytes and len(triples) > 1:
            half = len(triples) // 2
            yield from self._requests(triples[:half])
            yield from self._requests(triples[half:])
        else:
            yield body, triples

    def load_ntriples(self, stream) -> None:
        if not (self.graph_store or self.update_endpoint):
            raise ConfigError("cannot load into this endpoint: give --graph-store URL or --update-endpoint URL")
        sent = lines = 0
        self.batches_sent = 0  # what a stop leaves in the store, for the loader to say (ut48b #2)
        for chunk in self._batches(stream):
            try:  # validate strictly before sending (and serialise canonically)
                triples = list(ox.parse(chunk, format=ox.RdfFormat.N_TRIPLES))
            except SyntaxError as exc:  # the stream's line, as the other kinds say it
                raise NTriplesSyntaxError(shift_lines(str(exc), lines),
                                          line=lines + exc.lineno if exc.lineno else None) from None
            lines += chunk.count(b"\n")
            # each request checked, not each chunk: of a chunk split in two, a dropped first half left
            # the chunk's last triple stored (rv49 R13)
            for body, part in self._requests(triples) if triples else ():
                if self.graph_store:
                    sep = "&" if "?" in self.graph_store else "?"
                    self._post(self.graph_store + sep + "default", body, "application/n-triples", sent=sent)
                else:
                    self._post(self.update_endpoint, body, "application/sparql-update", sent=sent)
                sent += 1
                self.batches_sent = sent
                self._check_stored(part, before=sent - 1)

    def _check_stored(self, triples: list[ox.Triple], *, before: int) -> None:
        """After each request of a load, a triple it wrote must be in the store the queries read: a gateway
        answering the upload with HTTP 200 and its login page made a load "succeed" with nothing stored
        (ut44a #2), as would a --graph-store of another dataset; one that dropped every request after the
        first lost most of a night's export into a store that held data, exit 0 (ut48b #1). Servers answer
        writes in many ways (Fuseki an HTML page, Oxigraph no body), so the data is checked, not the
        answer: by the request's last triple whose object is an IRI (its triples go in order), else
        by an IRI subject alone (rv44 #2: a blank node cannot be asked for, and a server may rewrite a
        literal's form). One ASK per request (of --batch-bytes, 8 MB by default); ``before``: the requests
        sent before this one."""
        linked = next((t for t in reversed(triples) if isinstance(t.subject, ox.NamedNode)
                       and isinstance(t.object, ox.NamedNode)), None)
        subject = None if linked is not None else next(
            (t.subject for t in triples if isinstance(t.subject, ox.NamedNode)), None)
        if linked is None and subject is None:
            return
        where = redacted(self.graph_store or self.update_endpoint)
        which = "the first batch" if not before else f"batch {before + 1}"
        earlier = (f"; the {before} batch(es) before it stay in the store (a remote load is not atomic)" if before
                   else "")
        try:
            stored = (self.ask(lookup("triple-stored"), {"s": linked.subject, "p": linked.predicate, "o": linked.object})
                      if linked is not None else self.ask(lookup("subject-stored"), {"s": subject}))
        except ChangeprovError as exc:
            raise StoreError(f"{where} accepted {which}, which stays in the store, but checking that it can be "
                             f"queried failed: {exc}{earlier}") from None
        if not stored:
            raise StoreError(f"{where} accepted {which} ({len(triples):,} triples), but its triples are not in the "
                             f"store the endpoint {self.shown} queries: a gateway answering in its place (a login "
                             f"page?), {'--graph-store' if self.graph_store else '--update-endpoint'} of another "
                             f"dataset (which then holds them), or a read replica behind the writer{earlier}")
