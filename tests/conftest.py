"""Shared fixtures: the ../shared folder (skips cleanly when absent) and one session-scoped Spark."""

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
    from changeprov.spark.session import INTERPRETED, get_session

    session = get_session(master="local[2]", app_name="changeprov-tests",
                          conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "2g",
                                # test inputs are small: the CLI maps such inputs interpreted too
                                **INTERPRETED})
    yield session
    session.stop()
