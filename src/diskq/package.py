"""What the installed distribution says about itself (its metadata, built from pyproject.toml):
the one source of diskq's version and of the project's addresses."""

from __future__ import annotations

#: The distribution's name on PyPI ("diskq" there is an unrelated project); the command is ``diskq``.
DISTRIBUTION = "diskq-ceph"


def version() -> str:
    """The installed version, e.g. ``0.1.0``; ``0+unknown`` when diskq runs without being installed
    (from a copy of ``src/`` on ``sys.path``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def project_url(label: str) -> str | None:
    """The ``[project.urls]`` entry named ``label`` (``Homepage``, ``Repository``), or None.

    Core metadata keeps each as a ``Project-URL: Label, https://...`` line."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        lines = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for line in lines:
        name, _, url = line.partition(",")
        if name.strip().lower() == label.lower():
            return url.strip()
    return None


def license_expression() -> str | None:
    """The SPDX licence expression of the metadata (``License-Expression``, from pyproject.toml's
    ``license``), or None."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        value = metadata(DISTRIBUTION).get("License-Expression")
    except PackageNotFoundError:
        return None
    return value or None
