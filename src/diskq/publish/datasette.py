"""``metadata.json`` for Datasette, published beside ``devices.db``: the database's title, its
licences and sources, what each table holds, and how a row is named in links.

Datasette reads it with ``datasette devices.db --metadata metadata.json``; the keys are those of
Datasette's metadata documentation (https://docs.datasette.io/en/stable/metadata.html): ``title``,
``description``, ``license``/``license_url``, ``source``/``source_url``, ``about``/``about_url``,
and under ``databases.devices.tables`` each table's ``description``, ``label_column`` (the column
a foreign key's link shows) and ``hidden`` (index tables nobody browses). Licences: diskq and
the contributed submissions come with the repository's licence (``project.license`` in
pyproject.toml); the legacy rows are the community table's figures, released under CC0 1.0
(:mod:`diskq.submission.legacy_table`).
"""

from __future__ import annotations

from diskq.submission import legacy_table

#: Datasette names a database after its file: devices.db -> devices
DATABASE = "devices"

LICENSE_URLS = {
    "Apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "CC0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
}

TABLES = {
    "devices": (
        "One row per drive model and firmware at its best safe write-cache setting: the suitability "
        "table, ranked (hosts and virtual devices have no rank).",
        "model",
    ),
    "submissions": (
        "One row per accepted submission file, with its signature status and why it is not counted, if it is not.",
        "path",
    ),
    "runs": ("One row per sweep (write-cache state) of a submission.", None),
    "points": ("Every measured point of every sweep, as submitted (4 KiB write + fdatasync pairs per second).", None),
    "size_points": ("Every step of the block-size profile, as submitted.", None),
    "device_cache": ("Per device and write-cache setting: medians over submissions with their spread.", None),
    "curve": ("The median curve per device and write-cache setting, one row per numjobs.", None),
    "device_sizes": ("The median block-size profile per device and write-cache setting.", None),
    "sustained": ("Every sustained-write measurement, with its cliff.", None),
    "device_sustained": ("Per device: the earliest sustained-write cliff and the largest drop.", None),
    "skipped": ("Submission files the build did not accept, and why.", None),
    "meta": ("Facts about the build: schema version, content digest, data as of.", None),
    "sources": (
        "Public sources of figures not measured with diskq: address, author, date, licence and the "
        "attribution it asks for.",
        "title",
    ),
    "methods": ("The method of each public figure: the exact command and what it sends to the drive.", "command"),
    "models": ("Models of the public figures: vendor + family + capacity.", "name"),
    "figures": (
        "Every public figure with its source, method, method class, cache state and the quoted row "
        "(figures of different classes are never merged).",
        "model",
    ),
    "model_class": (
        "Per public model, method class, write-cache state and method: the 1-job figure of that "
        "method (never a median of two methods), ranked within that class and state only; weak "
        "rows (buffered or sub-second runs, methods of one class disagreeing) say why and are not "
        "ranked.",
        None,
    ),
    "public_answers": (
        "Per public model, the answer per use (Ceph WAL/DB, ZFS SLOG, etcd, PostgreSQL WAL): tier, "
        "basis and reasons, as JSON.",
        None,
    ),
    "lines": (
        "Product lines (sources/lines): each line's datasheet facts with their sources, the names and "
        "part-number patterns that identify it.",
        "title",
    ),
    "line_families": ("Which product line each family key (devices.family_key, models.family_key) belongs to.", None),
    "line_answers": (
        "Per product line, the answer per use its datasheet facts allow and its peers' figures "
        "estimate (basis datasheet or estimate), and the power-loss verdict of its facts, as JSON.",
        None,
    ),
}
#: full-text indexes: searched through their table, not browsed
HIDDEN = ("device_search", "devices_fts")


def project_license() -> str | None:
    """``project.license`` of pyproject.toml (an SPDX expression), as the installed package's
    metadata keeps it (License-Expression), or None."""
    from diskq.package import license_expression

    return license_expression()


def metadata(*, repository: str | None, data_as_of: str | None = None, license: str | None = None) -> dict:
    """The metadata document for ``devices.db`` of the repository at ``repository`` (its address).

    >>> m = metadata(repository="https://github.com/example/diskq", license="Apache-2.0")
    >>> m["title"], m["license"], m["source_url"]
    ('diskq device database', 'Apache-2.0', 'https://github.com/example/diskq/tree/main/submissions')
    >>> m["databases"]["devices"]["tables"]["devices"]["label_column"]
    'model'
    """
    license = license if license is not None else project_license()
    legacy_url = "https://" + legacy_table.SOURCE.split()[0]
    doc = {
        "title": "diskq device database",
        "description": (
            "Drives qualified for synchronous writes (Ceph BlueStore WAL/DB, etcd, database WAL): "
            "4 KiB write + fdatasync IOPS over numjobs, per write-cache setting, built from signed "
            "submissions" + (f"; data as of {data_as_of}" if data_as_of else "") + ". Legacy rows "
            f"are the community table's figures ({legacy_table.LICENSE})."
        ),
        "source": "the signed submissions of the diskq repository",
        "about": f"legacy rows: {legacy_table.SOURCE}, {legacy_table.LICENSE}",
        "about_url": legacy_url,
        "databases": {
            DATABASE: {
                "title": "diskq devices",
                "tables": {
                    **{
                        name: {"description": text, **({"label_column": label} if label else {})}
                        for name, (text, label) in TABLES.items()
                    },
                    **{name: {"hidden": True} for name in HIDDEN},
                },
            }
        },
    }
    if license:
        doc["license"] = license
        if license in LICENSE_URLS:
            doc["license_url"] = LICENSE_URLS[license]
    if repository:
        doc["source_url"] = repository.rstrip("/") + "/tree/main/submissions"
    return doc
