"""How many OSDs can share one WAL/DB device: an absolute question, answered from the curve.

Each OSD's ``bstore_kv_sync`` thread is one fio job, so when N OSDs share the device and all are
busy, each gets IOPS(N)/N commits per second. The device can serve N OSDs while that rate still
meets what one OSD of the kind it serves needs (the *demand*, from ``criteria.toml``: for an
HDD-backed OSD, Ceph's own capacity figure for a rotational OSD). The answer is the largest
*measured* N that meets the demand; it is never extrapolated beyond the sweep, and when the
largest measured N still meets it the answer is "at least N" (``limited_by_sweep``).

The rule is monotone by construction: a device whose curve is at least as high at every
measured N meets the demand at every N the other meets it, so it never gets fewer OSDs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

#: The kinds of OSD whose commit demand ``criteria.toml`` defines (``demand_<kind>_osd``).
OSD_KINDS = ("hdd",)


@dataclass(frozen=True)
class OsdShare:
    """The answer for one curve and one demand."""

    n: int  #: largest measured job count whose per-job rate meets the demand; 0 when none does
    demand_iops: float  #: commits/s one OSD needs
    per_osd_iops: float | None  #: IOPS(n)/n, or None when n == 0
    limited_by_sweep: bool  #: the largest measured job count still met the demand: "at least n"
    largest_tested: int  #: the largest job count in the curve (0 for an empty curve)
    reasons: list[str] = field(default_factory=list)

    @property
    def headroom(self) -> float | None:
        """How many times the demand each of the n OSDs gets (None when n == 0)."""
        if self.per_osd_iops is None or self.demand_iops <= 0:
            return None
        return self.per_osd_iops / self.demand_iops


def demand_iops(crit: dict, kind: str = "hdd") -> float:
    """Commits per second one OSD of ``kind`` needs, from the ``[osds_per_device]`` criteria."""
    if kind not in OSD_KINDS:
        raise ValueError(f"unknown OSD kind {kind!r} (known: {', '.join(OSD_KINDS)})")
    return float(crit[f"demand_{kind}_osd"])


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def osds_per_device(curve: Iterable[tuple[int, float]], demand: float, *, peak_final: bool = False) -> OsdShare:
    """The OSDs-per-device answer for ``curve`` (``(numjobs, iops)`` pairs, any order, one per
    job count) at ``demand`` commits/s per OSD.

    Every point given counts: which figures stand is decided before (a figure without raw output
    in a conflict is held out by the caller, :mod:`diskq.analyse.plausibility`). ``peak_final``: the curve's source measured beyond its largest job count and IOPS did not
    rise there (a community-table peak), so reaching the largest point is not "at least n":
    nothing is claimed beyond what the source measured.

    >>> s = osds_per_device([(1, 600), (2, 700), (4, 800)], 315)
    >>> (s.n, round(s.per_osd_iops), s.limited_by_sweep)
    (2, 350, False)
    >>> osds_per_device([(1, 64235), (8, 192440)], 315).limited_by_sweep
    True
    """
    if demand <= 0:
        raise ValueError("the per-OSD demand must be positive")
    rows = sorted((int(n), float(iops)) for n, iops in curve)
    return _share(rows, demand, peak_final)


def _share(rows: list[tuple[int, float]], demand: float, peak_final: bool) -> OsdShare:
    if not rows:
        return OsdShare(0, demand, None, False, 0, ["no measured point"])
    largest = rows[-1][0]
    per_job = [(n, iops / n) for n, iops in rows]
    # round() keeps a rate that meets the demand exactly from failing on float noise
    passing = [(n, per) for n, per in per_job if round(per - demand, 9) >= 0]
    if not passing:
        n1, per1 = per_job[0]
        return OsdShare(
            0,
            demand,
            None,
            False,
            largest,
            [
                f"even {_plural(n1, 'OSD', 'OSDs')} alone would get {per1:.0f} commits/s, "
                f"below the {demand:.0f} one OSD needs"
            ],
        )
    n, per = max(passing)
    who = f"{n} OSDs sharing the device each get" if n != 1 else "1 OSD alone on the device gets"
    reasons = [f"{who} {per:.0f} commits/s, {per / demand:.1f}x the {demand:.0f} one OSD needs"]
    beyond = next(((m, p) for m, p in per_job if m > n), None)
    if beyond is not None:
        m, p = beyond
        reasons.append(f"{_plural(m, 'OSD', 'OSDs')} would each get {p:.0f} commits/s, below {demand:.0f}")
    elif peak_final:
        reasons.append(
            f"{_plural(largest, 'job was', 'jobs were')} the peak of the source's sweep "
            "(more jobs did not raise IOPS): no more is claimed"
        )
    else:
        reasons.append(
            f"{_plural(largest, 'job is', 'jobs are')} the most measured: the device may carry more, not extrapolated"
        )
    short = [m for m, p in per_job if m < n and round(p - demand, 9) < 0]
    if short:
        reasons.append(
            f"the curve is uneven: at {', '.join(map(str, short))} {'job' if short == [1] else 'jobs'} "
            f"each got less than {demand:.0f}"
        )
    return OsdShare(n, demand, per, n == largest and not peak_final, largest, reasons)


def deciding(curve: dict[int, float], demand: float) -> set[int]:
    """The job counts the OSD count turns on: ``n`` itself and the next measured count above it
    (whose shortfall makes ``n`` the largest). A measurement error at either moves the answer;
    elsewhere it does not.

    >>> sorted(deciding({1: 600, 2: 700, 4: 800, 8: 900}, 315))
    [2, 4]
    >>> sorted(deciding({1: 200, 2: 300}, 315))
    [1]
    """
    share = osds_per_device(curve.items(), demand)
    above = [m for m in sorted(curve) if m > share.n]
    return ({share.n} if share.n else set()) | set(above[:1])


def carry_order(share: OsdShare | None, solo_iops: float | None = None) -> float | None:
    """A number that sorts devices by what they can carry: the OSD count, then (within one
    count) the commit rate each of those OSDs gets, as ``n + r / (r + demand)``, which stays
    below ``n + 1``. For ``n == 0`` the rate is what one OSD alone would get (``solo_iops``).
    A device at least as fast at every measured N never sorts lower: it has at least as many
    OSDs and, at the same count, at least the same per-OSD rate.

    >>> slow = osds_per_device([(1, 600), (8, 3640)], 315)
    >>> fast = osds_per_device([(1, 64235), (8, 192440)], 315)
    >>> (slow.n, fast.n), carry_order(fast) > carry_order(slow)
    ((8, 8), True)
    """
    if share is None:
        return None
    return order_value(share.n, share.per_osd_iops, share.demand_iops, solo_iops)


def order_value(
    n: int | None, per_osd_iops: float | None, demand_iops: float | None, solo_iops: float | None = None
) -> float | None:
    """:func:`carry_order` from the stored figures of a verdict (None when there is no count)."""
    if n is None:
        return None
    rate = per_osd_iops if n > 0 else solo_iops
    if rate is None or rate <= 0 or not demand_iops:
        return float(n)
    return n + rate / (rate + demand_iops)
