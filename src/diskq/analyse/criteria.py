"""The verdict and classification criteria, read from ``criteria.toml`` next to this module."""

from __future__ import annotations

import copy
import tomllib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _load() -> dict:
    with resources.files("diskq.analyse").joinpath("criteria.toml").open("rb") as f:
        return tomllib.load(f)


def load() -> dict:
    """The criteria as a dict (a fresh copy: callers may change it freely)."""
    return copy.deepcopy(_load())


def section(name: str) -> dict:
    """One section of the criteria, e.g. ``section("scaling")["regress_drop"]``."""
    return dict(_load()[name])
