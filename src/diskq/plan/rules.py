"""The layout rules, read from ``rules.toml`` next to this module."""

from __future__ import annotations

import copy
import tomllib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _load() -> dict:
    with resources.files("diskq.plan").joinpath("rules.toml").open("rb") as f:
        return tomllib.load(f)


def load() -> dict:
    """The rules as a dict (a fresh copy: callers may change it freely)."""
    return copy.deepcopy(_load())
