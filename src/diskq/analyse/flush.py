"""Flush honesty check: does fdatasync cost what flushing a volatile write cache should cost?

The bench runs one short extra fio step at 1 job with the same pattern but without
``--fdatasync`` and passes both rates here. With a volatile write cache on, a plain write ends
in the drive's RAM while fdatasync must reach flash or platter, so an honest flush makes the
sync rate a small fraction of the no-sync rate. If the two are close, the drive may be
acknowledging flushes it does not perform (or it has power-loss protection it does not
report): a data-safety warning. The threshold is ``[flush] suspicious_ratio`` in criteria.toml.
"""

from __future__ import annotations

import math

from diskq.analyse import criteria
from diskq.analyse.model import FlushCheck
from diskq.errors import InvalidInput


def check(sync_iops: float, nosync_iops: float, *, cache_state: str, volatile_write_cache: bool | None) -> FlushCheck:
    """Judge a 1-job sync rate against the 1-job rate of the same writes without fdatasync.

    ``cache_state`` is the write cache state of the run ("on", "off", "unknown");
    ``volatile_write_cache`` is what the drive reports (NVMe VWC, ATA/SCSI write cache), or None.

    >>> check(9500, 11000, cache_state="on", volatile_write_cache=True).honest
    False
    >>> check(900, 30000, cache_state="on", volatile_write_cache=True).honest
    True
    """
    for name, value in (("sync IOPS", sync_iops), ("no-sync IOPS", nosync_iops)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise InvalidInput(f"{name} must be a finite number >= 0, got {value!r}")
    if cache_state not in ("on", "off", "unknown"):
        raise InvalidInput(f"cache state must be on, off or unknown, got {cache_state!r}")
    threshold = float(criteria.section("flush")["suspicious_ratio"])
    ratio = sync_iops / nosync_iops if nosync_iops > 0 else None
    if ratio is not None and not math.isfinite(ratio):
        ratio = None  # a no-sync rate too close to zero to divide by
    result = dict(
        sync_iops=float(sync_iops),
        nosync_iops=float(nosync_iops),
        ratio=ratio,
        threshold=threshold,
        cache_state=cache_state,
        volatile_write_cache=volatile_write_cache,
    )

    if ratio is None or sync_iops <= 0:
        return FlushCheck(**result, notes=["a step measured no writes: the check cannot tell"])
    if volatile_write_cache is False:
        return FlushCheck(**result, notes=["the drive reports no volatile write cache: flushes have nothing to do"])
    if cache_state == "off":
        return FlushCheck(**result, notes=["the write cache is off: flushes have nothing to do"])
    if cache_state == "unknown":
        return FlushCheck(
            **result,
            notes=[f"the write cache state is unknown: a flush costing {1 - min(ratio, 1):.0%} proves nothing"],
        )
    cost = f"sync {sync_iops:.0f} IOPS vs {nosync_iops:.0f} without fdatasync ({ratio:.0%})"
    if round(ratio, 9) >= threshold:
        warning = (
            f"fdatasync costs almost nothing ({cost}) although a volatile write cache is on: "
            "flushes may not be honoured; data acknowledged as durable can be lost on power failure "
            "unless the drive has power-loss protection"
        )
        return FlushCheck(**result, honest=False, warning=warning)
    return FlushCheck(**result, honest=True, notes=[f"flushes cost time as they should: {cost}"])
