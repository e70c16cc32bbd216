"""Every docstring example in the package runs and prints what it shows (the examples are the API's
first documentation: they must not rot)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

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
