"""The ``embedded`` store kind: pyoxigraph on disk (the default), and ``memory``, its engine in memory."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pyoxigraph as ox

from changeprov.errors import InputError, StoreError
from changeprov.sparql import loading
from changeprov.sparql.stores import (BINDINGS_MARKER, NTriplesSyntaxError, Rows, TripleStore, _binary, _drained,
                                      checked_bindings, first_text, query_form, sparql_syntax_error)
from changeprov.sparql.values import with_values


class EmbeddedStore(TripleStore):
    kind = "embedded"
    parallel_load = True
    _store: ox.Store | None = None

    def __init__(self, path: str | Path, *, create: bool = False, read_only: bool = False):
        self.path = Path(path)
        # absolute: an audit's baseline names the store it ran on, compared by this text (ut25 #2: the
        # same store named from another folder read as another store)
        self.description = f"embedded store {os.path.realpath(self.path)}"
        if not create and not self.path.exists():
            raise StoreError(f"no store at {self.path} (run `changeprov load DIR --store {self.path}` first)")
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path} is not a store directory")
        if self.path.is_dir() and not (self.path / "CURRENT").is_file():  # the engine's (RocksDB's) marker
            if any(self.path.iterdir()):  # never put a store's files among someone's other files
                export = (self.path / "_SUCCESS").exists() and (self.path / "triples").is_dir()
                what = "an export folder" if export else "a folder of other files"
                advice = ("give a new or empty folder for the store" if create else "give the store's folder"
                          + (f" (load this export: changeprov load {self.path} --store STORE)" if export else ""))
                raise StoreError(f"{self.path} is {what}, not a store: {advice}")
            if not create:
                raise StoreError(f"no store at {self.path} (an empty folder; run `changeprov load DIR "
                                 f"--store {self.path}` first)")
        if create and not read_only:
            try:  # like `mkdir -p`: the engine creates only the last level
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create store {self.path}: {exc}") from None
        self._read_only = read_only
        try:
            self._store = self._open(read_only)
        except RuntimeError as exc:  # the engine's files are there but unreadable (ut13 #5)
            raise StoreError(f"cannot open store {self.path}: it is damaged ({exc}); load the export again into "
                             "a new store, or restore a copy taken while no changeprov was writing it") from None
        except OSError as exc:
            # only a lock failure is another process's doing (ut12 #10: an unusable path was not)
            hint = (" (one writer per on-disk store: is another changeprov, or another open handle of this "
                    "process, using it?)"
                    if "lock" in str(exc).lower() else "")
            raise StoreError(f"cannot open store {self.path}: {exc}{hint}") from None

    #: a read-only open that found a file of the store gone, tried again: a writer's compaction deletes
    #: files between the reader's listing and its opening them (ut44f #2: "it is damaged", which it was not)
    OPEN_RETRIES = 10

    def _open(self, read_only: bool) -> ox.Store:
        for attempt in range(self.OPEN_RETRIES if read_only else 1):
            try:
                return ox.Store.read_only(str(self.path)) if read_only else ox.Store(str(self.path))
            except RuntimeError as exc:
                vanished = "No such file or directory" in str(exc)
                if not vanished or attempt + 1 == self.OPEN_RETRIES:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _query(self, query: str, bindings):
        bindings = checked_bindings(bindings)  # before with_values below, which serialises them (rv44b #7)
        if bindings and any(line.strip() == BINDINGS_MARKER for line in query.split("\n")) \
                and query_form(query) != "SELECT":
            # pyoxigraph 0.5 substitutes in an ASK or CONSTRUCT only variables of its triple patterns:
            # such a query file with a marker takes its parameters as on an endpoint, a VALUES block
            # there (rv37 #4); without one (DESCRIBE ?entity) the substitution does (rv38 #3)
            query, bindings = with_values(query, bindings), None
        substitutions = {ox.Variable(k): v for k, v in (bindings or {}).items()}  # names checked above
        try:
            return self._live().query(query, substitutions=substitutions)
        except SyntaxError as exc:
            raise sparql_syntax_error(str(exc), query) from None
        except (RuntimeError, ValueError, OSError) as exc:
            unbound = re.search(r"does not contains? variable (\?\w+) in its SELECT projection", str(exc))
            if unbound:  # a query file's parameter the engine cannot bind: the file's to fix, not the store
                raise InputError(f"parameter {unbound.group(1)} cannot be bound: name it in a SELECT list "
                                 "(SELECT * returns only the variables of its patterns, not one used in a FILTER "
                                 "alone), or, in an ASK, CONSTRUCT or DESCRIBE, put a #@bindings line first in the "
                                 "WHERE group") from None
            raise StoreError(f"query failed: {exc}") from None

    def select(self, query, bindings=None) -> Rows:
        res = self._query(query, bindings)
        if not isinstance(res, ox.QuerySolutions):
            raise InputError("expected a SELECT query")
        names = [v.value for v in res.variables]
        return Rows(names, _drained(lambda: [tuple(sol[n] for n in names) for sol in res], "query failed"))

    def ask(self, query, bindings=None) -> bool:
        res = self._query(query, bindings)
        if not isinstance(res, ox.QueryBoolean):
            raise InputError("expected an ASK query")
        return bool(res)

    def construct(self, query, bindings=None):
        res = self._query(query, bindings)
        if not isinstance(res, ox.QueryTriples):
            raise InputError("expected a CONSTRUCT or DESCRIBE query")
        return _drained(lambda: list(res), "query failed")

    def _writable(self, what: str) -> ox.Store:
        """The engine's store, unless this handle is a reader (ut42a #6: the engine's RuntimeError)."""
        store = self._live()
        if self._read_only:
            raise StoreError(f"cannot {what} {self.description}: it was opened read_only=True")
        return store

    def load_ntriples(self, stream) -> None:
        stream = _binary(stream)
        self._writable("load into")
        try:
            # bulk_load is atomic in pyoxigraph 0.5: a bad line leaves the store unchanged; never lenient.
            # No local holds the engine's store: an error's traceback would keep it (and its lock) alive
            # after close() until the garbage collector breaks the cycle through the loader's futures
            self._live().bulk_load(stream, format=ox.RdfFormat.N_TRIPLES)
        except SyntaxError as exc:
            raise NTriplesSyntaxError(str(exc), line=exc.lineno) from None
        except TypeError as exc:  # an iterator of something else than lines of bytes
            raise InputError(f"load_ntriples takes an open stream of N-Triples (open(path, 'rb')): {exc}") from None
        except (OSError, RuntimeError, ValueError) as exc:
            raise StoreError(f"loading failed: {exc}") from None

    def clear(self) -> None:
        try:
            self._writable("empty").clear()
        except OSError as exc:
            raise StoreError(f"emptying {self.path} failed: {exc}") from None

    compacts = True

    def mark_loading(self, export: str | Path) -> None:
        self._writable("load into")  # ut42a #11: a reader wrote the marker into the store's folder
        loading.begin(self.path, export)

    def unmark_loading(self) -> None:
        loading.finish(self.path)

    def unfinished_load(self) -> str | None:
        return loading.unfinished(self.path)

    def optimize(self) -> None:
        # every bulk_load ingests sorted files whose key ranges overlap the earlier loads' files, so
        # after a big load one index lookup reads many files: on a 20M-triple store compaction made
        # per-entity queries 2.5-5x faster (docs/queries.md, "Compaction after loading")
        try:
            self._writable("compact").optimize()
        except OSError as exc:
            raise StoreError(f"compacting {self.path} failed: {exc}") from None

    def count(self) -> int:
        return len(self._live())

    def _live(self) -> ox.Store:
        if self._store is None:
            raise StoreError(f"{self.description} is closed")
        return self._store

    def close(self) -> None:
        """Flush and release the store (its lock, for a writer); closing again does nothing. A writer's
        failed flush (a full disk) is a StoreError: it was swallowed with a reader's (mq1 #11)."""
        self.closed = True
        if self._store is None:
            return
        store, self._store = self._store, None
        if self._read_only:  # a reader has nothing to flush (the engine refuses)
            return
        failed = None
        try:
            store.flush()
        except (OSError, RuntimeError) as exc:
            failed = first_text(exc)
        # raised below, not in the except: the error's traceback holds this frame, which must not hold
        # the engine's store (and its lock) after the caller caught the error (rv42 L3)
        del store
        if failed is not None:
            raise StoreError(f"flushing {self.path} failed: {failed}; the last changes may not be on disk: load again")


class MemoryStore(EmbeddedStore):
    """pyoxigraph's in-memory store: the embedded store's engine, so every named query answers as there
    (ut42a #1, #2: rdflib's engine, which ``memory`` was, failed or differed on a third of them)."""

    kind = "memory"
    description = "pyoxigraph in-memory store"
    compacts = False  # nothing to compact in memory

    def __init__(self):
        self.path = None
        self._read_only = False
        self._store = ox.Store()

    def mark_loading(self, export: str | Path) -> None:
        self._check_open()

    def unmark_loading(self) -> None:
        pass

    def unfinished_load(self) -> str | None:
        return None

    def optimize(self) -> None:
        self._check_open()

    def close(self) -> None:
        self.closed = True
        self._store = None
