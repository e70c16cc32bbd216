"""Every docstring example in the package runs and prints what it shows (the examples are the API's
first documentation: they must not rot)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re

import pytest

# the subpackages live in folders of their own (setuptools package-dir), so each is walked
PACKAGES = ("changeprov", "changeprov.ontology", "changeprov.mapping", "changeprov.spark", "changeprov.sparql")


def _modules() -> list[str]:
    candidates = list(PACKAGES)
    for package in PACKAGES:
        candidates += [info.name for info in pkgutil.iter_modules(importlib.import_module(package).__path__,
                                                                  package + ".")]
    return sorted({name for name in candidates
                   if any(test.examples for test in doctest.DocTestFinder().find(importlib.import_module(name)))})


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name} (output above)"


def test_every_module_with_an_example_in_its_text_is_collected():
    """The parametrization above comes from module discovery: if that broke (a package-dir change), no
    example would run and the suite would stay green (rv45d #8). The source files say which modules hold
    examples, independently of it."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    folders = {"core": "changeprov", "ontology": "changeprov.ontology", "mapping": "changeprov.mapping",
               "spark": "changeprov.spark", "sparql": "changeprov.sparql"}
    written = {(f"{package}.{path.stem}" if path.stem != "__init__" else package)
               for folder, package in folders.items() for path in (root / folder).glob("*.py")
               if re.search(r"^\s*>>> ", path.read_text("utf-8"), re.M)}
    assert len(written) > 10 and written <= set(_modules())
