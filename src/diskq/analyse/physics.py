"""What no drive behind a SATA link can do: a bound from physics, for the forgeries that pass every
check of the format (a result measured on RAM, relabelled as a SATA SSD, with every counter of
fio's output edited to agree: :mod:`diskq.submission.counters` cannot see it).

SATA 3.x signals at 6 Gb/s with 8b/10b encoding: at most 600 MB/s of payload cross the link
(SATA-IO, *Serial ATA Revision 3.0*; no later revision is faster). Validation already holds every
step's throughput to that (:func:`diskq.submission.figures.link_limit`). What a relabelled RAM
result still shows is how fast each write was: at one job, iodepth 1, with ``psync``, fio times
the whole ``pwrite`` of a 4 KiB ``O_DIRECT`` write, and the drive can acknowledge it only after
the 4,096 bytes have crossed the link: 6.8 µs at least (4,096 bytes at 600 MB/s), before any
command overhead and before the flush that follows. A mean write latency below that, over a
whole step, was not measured on a drive behind a SATA link.

The evidence this rests on is the link's signalling rate alone. The recorded outputs hold no
SATA write faster than it: the fastest mean of a 1-job step is the Intel D3-S4610's 64 µs
(``tests/fixtures/fio_json``); the 2.7 µs "fastest write" of the same output is libaio's
completion time counted from after submission, not a whole write, and not a mean. The sweep's
``psync`` steps have no such split: their write latency is the whole call.

Where diskq knows no bound (NVMe and SAS: their lanes and generation are often not in the
result; a hard disk's rotation speed is not either) nothing is judged here: the model's other
evidence still is (:mod:`diskq.analyse.outliers`).

>>> curve_problems("ata", [(1, 20000.0, 30.0, 18.0), (8, 60000.0, 110.0, 20.0)])
[]
>>> curve_problems("ata", [(1, 110000.0, 3.1, 6.0)])[0][:70]
'a mean write latency of 3.1 µs at 1 job: 4 KiB take at least 6.8 µs to'
>>> curve_problems("nvme", [(1, 110000.0, 3.1, 6.0)])
[]
"""

from __future__ import annotations

import math

#: Bytes per second of payload a SATA link carries at most: 6 Gb/s line rate, 8b/10b encoding.
SATA_BYTES_S = 6e9 * 8 / 10 / 8
#: The sweep's block size.
BLOCK = 4096
#: Measurement slack: a mean within 2 % of the bound is not called impossible.
SLACK = 1.02


def link_floor_us(block: int = BLOCK) -> float:
    """The least time ``block`` bytes take to cross a SATA link, in µs (6.83 for 4 KiB)."""
    return block / SATA_BYTES_S * 1e6


def curve_problems(protocol: str | None, points, block: int = BLOCK) -> list[str]:
    """Why the 1-job step of ``points`` ((numjobs, IOPS, mean write latency µs, ...), extra
    fields ignored) cannot have been measured on a drive behind ``protocol``'s link; [] when
    nothing is beyond the bound, or no bound is known for the protocol."""
    if protocol != "ata":
        return []
    floor = link_floor_us(block)
    out = []
    for p in points:
        if len(p) < 3 or int(p[0]) != 1:
            continue
        lat = p[2]
        if lat is not None and math.isfinite(lat) and 0 < lat * SLACK < floor:
            out.append(
                f"a mean write latency of {lat:.1f} µs at 1 job: 4 KiB take at least {floor:.1f} µs to cross "
                "a SATA link (600 MB/s) before the drive can acknowledge them, so it was not measured behind one"
            )
    return out
