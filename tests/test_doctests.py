"""Every example in a docstring of ``src/diskq`` runs and prints what it shows.

Docstrings carry short samples of real output and worked examples; one that no longer holds
misleads a reader more than none, so each is run here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import diskq


def _modules() -> list[str]:
    """Every module of the package but ``diskq.__main__``, which runs the CLI when imported."""
    return sorted(m.name for m in pkgutil.walk_packages(diskq.__path__, "diskq.") if m.name != "diskq.__main__")


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
