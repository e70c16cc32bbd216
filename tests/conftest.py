"""Shared fixtures: the ../shared folder (skips cleanly when absent), one session-scoped Spark, and the
corpus as an export, an embedded store and a real `oxigraph serve` endpoint (built once per run)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SKIP_SHARED = "../shared is absent (a user's clone has none); CI always has it"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only ../shared folder beside the repository (seeds, corpus, conformance)."""
    if not SHARED.is_dir():
        pytest.skip(SKIP_SHARED)
    return SHARED


def load_shared_module(relative: str, name: str):
    """Import a steering-owned helper (e.g. conformance/check_ntriples.py) by path, or skip."""
    path = SHARED / relative
    if not path.is_file():
        pytest.skip(SKIP_SHARED)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def check_ntriples():
    """The steering-owned strict N-Triples checker, ../shared/conformance/check_ntriples.py."""
    return load_shared_module("conformance/check_ntriples.py", "check_ntriples")


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test run (small, local, UTC)."""
    from changeprov.spark.session import FEW_LINES, INTERPRETED, get_session

    session = get_session(master="local[2]", app_name="changeprov-tests",
                          conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "2g",
                                # test inputs are small: the CLI maps such inputs so too
                                **INTERPRETED, **FEW_LINES})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def corpus_work(shared_dir, tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpus")


@pytest.fixture(scope="session")
def corpus_export_dir(corpus_work) -> Path:
    """Both corpora mapped by the reference mapper, as a committed two-partition export."""
    from sparql_support import corpus_export

    return corpus_export(corpus_work)


@pytest.fixture(scope="session")
def corpus_db(corpus_work, corpus_export_dir) -> Path:
    """An embedded store holding the corpus export. Tests only read it (copy it to change it)."""
    from changeprov.sparql.loader import load_export
    from changeprov.sparql.stores import open_store

    path = corpus_work / "db"
    with open_store("embedded", path=path, create=True) as store:
        load_export(store, corpus_export_dir)
    return path


@pytest.fixture(scope="session")
def corpus_endpoint(corpus_work, corpus_export_dir):
    """The URL of a real `oxigraph serve` holding the corpus export, stopped at the end of the run."""
    from changeprov.sparql.loader import load_export
    from changeprov.sparql.server import oxigraph_server
    from changeprov.sparql.stores import open_store

    with oxigraph_server(corpus_work / "served") as url:
        load_export(open_store("remote", endpoint=url), corpus_export_dir)
        yield url
