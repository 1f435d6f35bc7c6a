"""The rows of each device in devices.db: ``devices`` (rank, figures, verdicts and answers),
``device_cache``, ``curve``, ``device_sizes``, ``device_sustained`` and ``device_search``, written
by ``diskq db build`` (:mod:`diskq.database.build`) once every device is aggregated."""

from __future__ import annotations

import json
import sqlite3

from diskq.database import answers, public, sustained
from diskq.database.digest import search_text
from diskq.database.schema import insert_sql

DEVICE_SUSTAINED_INSERT = insert_sql("device_sustained", len(sustained.DEVICE_COLUMNS))


def _plp_json(verdicts: dict | None) -> str | None:
    """The power-loss-protection verdict with its evidence, rule and conflicts, as JSON."""
    protection = (verdicts or {}).get("power_loss_protection")
    return json.dumps(protection, sort_keys=True) if protection is not None else None


def _spread(s):
    return (s.median, s.min, s.max) if s else (None, None, None)


def write_devices(con: sqlite3.Connection, devices, fts: bool, named: dict[str, str] | None = None) -> None:
    """Write each device's row, its per-cache rows (settings, curve, block sizes), its sustained
    writes and, with ``fts``, its search text; ``devices`` in table order (the rank follows it)."""
    from diskq.database.analysis import verdict_columns

    ranks = iter(range(1, len(devices) + 1))
    class_ranks: dict[str, int] = {}
    for dev in devices:
        # a host is never ranked among drives, nor a device whose every submission is held back
        rank = next(ranks) if dev.not_drive is None and dev.submissions else None
        cls = public.device_class(dev.method[0], dev.protocol).id
        class_rank = None
        if rank is not None:
            class_rank = class_ranks[cls] = class_ranks.get(cls, 0) + 1
        row = dev.row_cache
        answer = answers.device_answer(dev, cls)
        cols = answers.columns(answer, verdict_columns(dev.verdicts))
        values = {
            "id": dev.id,
            "rank": rank,
            "model": dev.model,
            "model_key": dev.model_key,
            "vendor": dev.vendor,
            "firmware": dev.firmware,
            "capacity_bytes": dev.capacity_bytes,
            "protocol": dev.protocol,
            "media": dev.media,
            "volatile_write_cache": None if dev.volatile_write_cache is None else int(dev.volatile_write_cache),
            "cache": row.write_cache if row else None,
            "cache_knob": row.knob if row else None,
            "iops_1job": row.iops_1job.median if row and row.iops_1job else None,
            "max_iops": row.max_iops.median if row and row.max_iops else None,
            "peak_jobs": row.peak_jobs if row else None,
            "scaling": (row.scaling or {}).get("scaling") if row else None,
            "p99_sync_us": row.p99_sync_us.median if row and row.p99_sync_us else None,
            **cols,
            "submissions": dev.submissions,
            "verified": dev.verified,
            "unchecked": dev.unchecked,
            "legacy": dev.legacy,
            "method_id": dev.method[0],
            "method_version": dev.method[1],
            "verdicts": json.dumps(dev.verdicts, sort_keys=True) if dev.verdicts is not None else None,
            "plp_evidence": _plp_json(dev.verdicts),
            "notes": json.dumps(dev.notes),
            "not_drive": dev.not_drive,
            "method_class": cls,
            "class_rank": class_rank,
            "family_key": public.device_family_key(dev.model, dev.vendor, named),
            "answers": answers.compact_json(answer),
        }
        con.execute(
            f"INSERT INTO devices ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",  # noqa: S608
            tuple(values.values()),
        )
        for key in sorted(dev.caches):
            c = dev.caches[key]
            con.execute(
                insert_sql("device_cache", 21),
                (
                    dev.id,
                    c.write_cache,
                    c.knob,
                    c.submissions,
                    c.verified,
                    c.legacy,
                    int(c.safe),
                    c.unsafe_reason,
                    *_spread(c.iops_1job),
                    *_spread(c.max_iops),
                    c.peak_jobs,
                    *_spread(c.p99_sync_us),
                    (c.scaling or {}).get("scaling"),
                    json.dumps(c.scaling, sort_keys=True) if c.scaling is not None else None,
                    c.source_words,
                ),
            )
            con.executemany(
                insert_sql("curve", 12),
                [
                    (
                        dev.id,
                        c.write_cache,
                        c.knob,
                        p.numjobs,
                        p.iops.median,
                        p.iops.min,
                        p.iops.max,
                        p.n,
                        p.lat_mean_us,
                        p.lat_p99_us,
                        p.sync_mean_us,
                        p.sync_p99_us,
                    )
                    for p in c.curve
                ],
            )
            con.executemany(
                insert_sql("device_sizes", 13),
                [
                    (
                        dev.id,
                        c.write_cache,
                        c.knob,
                        z.block_size,
                        z.iops.median,
                        z.iops.min,
                        z.iops.max,
                        z.bw_bytes,
                        z.lat_p50_us,
                        z.lat_p99_us,
                        z.sync_p50_us,
                        z.sync_p99_us,
                        z.n,
                    )
                    for z in c.sizes
                ],
            )
        con.executemany(DEVICE_SUSTAINED_INSERT, [agg.row(dev.id) for agg in dev.sustained])
        if fts:
            text = search_text(dev.model, dev.vendor, dev.firmware)
            con.execute("INSERT INTO device_search VALUES (?,?)", (dev.id, text))
