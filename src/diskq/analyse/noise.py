"""Was a step measured on a steady device? A noisy one (a busy host, a disk seeking, a drive
collecting garbage) makes single figures unreliable: the search then measures every doubling
(:mod:`diskq.bench.sweep`), and the verdicts and the database carry a caveat.

The measure is fio's own: the standard deviation of a job's IOPS samples over their mean, within
one step (:func:`iops_spread`). A steady SSD shows about 1 %, a disk seeking some 15 %.
"""

from __future__ import annotations

import math

#: within-step spread of one job's IOPS (stddev / mean) above which a device counts as noisy
NOISY_SPREAD = 0.20


def iops_spread(data: dict | None) -> float | None:
    """How much IOPS varied within a step: fio's standard deviation of its IOPS samples (one per
    ``iops_avg_time``, 500 ms by default) over their mean, from the first job entry. With one job
    that is the device's own steadiness; None when fio recorded too few samples to say.

    From a 1-job step on a loop device over a busy disk (fio 3.33, trimmed)::

        "write" : { "iops" : 2306.4, "iops_min" : 412, "iops_max" : 3930,
                    "iops_mean" : 2297.1, "iops_stddev" : 804.6, "iops_samples" : 39, ... }

    gives 0.35; a datacenter SATA SSD (Intel D3-S4610, fio 3.1) gives 127.1 / 13358.7 = 0.0095.
    """
    try:
        write = data["jobs"][0]["write"]  # type: ignore[index]
        mean, sd, n = float(write["iops_mean"]), float(write["iops_stddev"]), int(write["iops_samples"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if n < 3 or not (mean > 0 and sd >= 0) or not math.isfinite(mean + sd):
        return None
    return sd / mean


def noisy_caveat(write_cache: str, spread: float | None) -> str | None:
    """The caveat a run with this 1-job ``spread`` gets, or None when it was steady enough.

    >>> noisy_caveat("off", 0.44)
    "caveat: cache off: one job's IOPS varied by 44% within its step (more than 20%): the host or the device was noisy, so these figures may not hold on a quiet one; measure again to confirm"
    >>> noisy_caveat("off", 0.05) is None
    True
    """
    if spread is None or spread <= NOISY_SPREAD:
        return None
    return (
        f"{CAVEAT}cache {write_cache}: one job's IOPS varied by {spread:.0%} within its step "
        f"(more than {NOISY_SPREAD:.0%}): the host or the device was noisy, so these figures may not hold "
        "on a quiet one; measure again to confirm"
    )


#: every caveat note starts with this, so renderers can single them out
CAVEAT = "caveat: "
