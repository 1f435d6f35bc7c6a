"""devices.db's schema: the DDL the build executes (``devices.sql``, package data beside this
module), its version, and the SQL of a row insert.

The DDL holds the FTS5 trigram search index between two marker comments; where this SQLite has
no trigram tokenizer, the build executes the file without that block (:func:`schema_sql`).
"""

from __future__ import annotations

import sqlite3

from diskq.errors import DatabaseError

SCHEMA_VERSION = "13"  # 2: cache settings keyed by (state, knob), signature status, p99 write latency in curve;
#                      3: devices.power_loss_protection and devices.plp_evidence;
#                      4: questionable points, duplicates, outliers, host devices, per-OSD rate, the source's words;
#                      5: block-size profiles (size_points, device_sizes) and devices.zfs_slog;
#                      6: sustained-write measurements and each device's cliff (sustained, device_sustained);
#                      7: foreign keys declared, devices_fts (full-text search for SQLite tools);
#                      8: points.conflict and points.held replace points.questionable (conflicts between
#                         figures, decided by the model's other evidence);
#                      9: public figures (sources, methods, models, figures, model_class), each device's
#                         method class, rank within it and family key;
#                     10: model_class per method with its weak reasons (class_rank NULL when weak),
#                         figures.weak, block size in the method class id
#                     11: product lines (lines, line_families) from sources/lines
#                     12: devices.answers and public_answers (one answer per use with its basis)
#                     13: line_answers (the answer of a product line from its datasheet and its peers)
FTS_BEGIN, FTS_END = "-- fts5-trigram:begin", "-- fts5-trigram:end"


def schema_path():
    """``devices.sql``, package data of :mod:`diskq.database` (found with importlib.resources)."""
    from importlib import resources

    path = resources.files("diskq.database").joinpath("devices.sql")
    if not path.is_file():
        raise DatabaseError(f"schema file not found: {path}", hint="reinstall diskq")
    return path


def trigram_supported() -> bool:
    """Does this SQLite have the FTS5 trigram tokenizer (SQLite >= 3.34 built with FTS5)?"""
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        con.close()
        return True
    except sqlite3.Error:
        return False


def schema_sql(*, trigram: bool) -> str:
    """The DDL to execute: the file as is, or without its FTS5 block when trigram is missing."""
    text = schema_path().read_text()
    if trigram:
        return text
    head, _, rest = text.partition(FTS_BEGIN)
    _, _, tail = rest.partition(FTS_END)
    return head + tail


def insert_sql(table: str, columns: int) -> str:
    return f"INSERT INTO {table} VALUES ({','.join('?' * columns)})"
