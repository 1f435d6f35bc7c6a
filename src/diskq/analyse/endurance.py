"""Writes per day against a device's rated endurance: what N OSDs would write to their WAL/DB
device, and what a SLOG's tier implies, set against the datasheet's DWPD or TBW.

Pure functions over numbers and :class:`~diskq.identity.facts.LineFacts`; the assumptions (bytes
one OSD commit writes, the service life a TBW is spread over, a SLOG's duty) are in
``criteria.toml`` ``[endurance]`` with their reasoning. The rating allows per day either
``dwpd x capacity`` (the rating's own per-day rate) or, without a DWPD figure, the capacity's TBW
spread over ``service_years``. Nothing is assumed about a device whose rating is not known: the
answer then says so (``basis: "unknown"``) and gives the load alone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from diskq.analyse.model import Endurance

if TYPE_CHECKING:
    from diskq.identity.facts import LineFacts

DAY_S = 86_400
YEAR_DAYS = 365


def _gb(n: float) -> str:
    return f"{n / 1e12:.2f} TB" if n >= 1e12 else f"{n / 1e9:.1f} GB"


def rating(
    facts: LineFacts | None, capacity_bytes: int | None, service_years: float
) -> tuple[float | None, float | None, int | None, list[str]]:
    """(bytes per day the rating allows, rated DWPD, rated TBW in bytes, reasons).

    >>> from diskq.identity.facts import LineFacts
    >>> f = LineFacts(vendor="Intel", line="Optane P1600X", dwpd=6.0, tbw_by_capacity={58_000_000_000: 635 * 10**12})
    >>> per_day, dwpd, tbw, _ = rating(f, 58_000_000_000, 5)
    >>> round(per_day / 1e9), dwpd, tbw
    (348, 6.0, 635000000000000)
    """
    if facts is None:
        return None, None, None, ["no datasheet facts for the line: rated endurance unknown"]
    tbw = facts.tbw_bytes(capacity_bytes)
    dwpd = facts.dwpd
    name = f"{facts.vendor} {facts.line}"
    if dwpd is not None and capacity_bytes:
        note = f" ({facts.dwpd_note})" if facts.dwpd_note else ""
        return (
            dwpd * capacity_bytes,
            dwpd,
            tbw,
            [
                f"rated {dwpd:g} drive writes per day{note} x {_gb(capacity_bytes)} = {_gb(dwpd * capacity_bytes)} "
                f"per day ({name} datasheet facts)"
            ],
        )
    if tbw is not None:
        per_day = tbw / (service_years * YEAR_DAYS)
        return (
            per_day,
            None,
            tbw,
            [
                f"rated {_gb(tbw)} written for {_gb(capacity_bytes or 0)}, spread over {service_years:g} years: "
                f"{_gb(per_day)} per day ({name} datasheet facts; the years are an assumption, criteria [endurance])"
            ],
        )
    if dwpd is not None:
        return None, dwpd, None, [f"rated {dwpd:g} drive writes per day, but the capacity is not known"]
    return None, None, None, [f"the {name} datasheet facts give no endurance rating"]


def against_rating(
    bytes_per_day: float, load: str, facts: LineFacts | None, capacity_bytes: int | None, service_years: float
) -> Endurance:
    """``bytes_per_day`` (described by ``load``) against the rating of ``facts`` at ``capacity_bytes``."""
    per_day, dwpd, tbw, why = rating(facts, capacity_bytes, service_years)
    load_dwpd = bytes_per_day / capacity_bytes if capacity_bytes else None
    reasons = [
        load + (f" = {load_dwpd:.2f} drive writes per day of {_gb(capacity_bytes)}" if load_dwpd is not None else "")
    ] + why
    if per_day is None or per_day <= 0:
        return Endurance(
            bytes_per_day=bytes_per_day,
            load_dwpd=load_dwpd,
            rated_dwpd=dwpd,
            rated_tbw_bytes=tbw,
            basis="unknown",
            reasons=reasons,
        )
    share = bytes_per_day / per_day
    rated_years = _years(facts.dwpd_note if facts is not None else None)
    if tbw is not None:
        life_bytes, life = tbw, "the rated writes"
    elif rated_years is not None:
        life_bytes, life = per_day * rated_years * YEAR_DAYS, f"the rated writes ({rated_years:g} years of the DWPD)"
    else:
        life_bytes = per_day * service_years * YEAR_DAYS
        life = f"the rated writes (the DWPD over an assumed {service_years:g} years)"
    years = life_bytes / (bytes_per_day * YEAR_DAYS) if bytes_per_day > 0 else None
    verdict = ("within" if share <= 1 else "beyond") + f" the rating ({share:.0%} of what it allows per day"
    verdict += f"; {life} last {years:.1f} years at this load)" if years is not None else ")"
    return Endurance(
        bytes_per_day=bytes_per_day,
        load_dwpd=load_dwpd,
        rated_bytes_per_day=per_day,
        rated_dwpd=dwpd,
        rated_tbw_bytes=tbw,
        share_of_rating=share,
        years_to_rating=years,
        basis="datasheet",
        reasons=reasons + [verdict],
    )


def _years(note: str | None) -> float | None:
    """The years a DWPD rating's note names ("5 years", "5-year warranty"), or None.

    >>> _years("30 (5-year warranty)"), _years("over 3 years"), _years(None)
    (5.0, 3.0, None)
    """
    match = re.search(r"(\d+(?:\.\d+)?)[- ]?(?:years?|yrs?)\b", note or "")
    return float(match.group(1)) if match else None


def osd_bytes_per_day(n_osds: int, demand_iops: float, bytes_per_commit: float) -> float:
    """What ``n_osds`` OSDs write to their shared WAL/DB device per day, each committing
    ``demand_iops`` times per second all day, ``bytes_per_commit`` each."""
    return max(n_osds, 0) * demand_iops * bytes_per_commit * DAY_S


def waldb(
    n_osds: int | None, demand_iops: float, capacity_bytes: int | None, facts: LineFacts | None, crit: dict
) -> Endurance | None:
    """The writes per day of ``n_osds`` OSDs on one WAL/DB device against its rating; None when no
    OSD count is known (``crit`` is ``criteria.toml`` ``[endurance]``)."""
    if not n_osds:
        return None
    per_commit = float(crit["osd_bytes_per_commit"])
    load = osd_bytes_per_day(n_osds, demand_iops, per_commit)
    what = (
        f"{n_osds} OSD{'s' if n_osds != 1 else ''} each committing {demand_iops:g} times per second all day "
        f"(the demand the OSD count is planned for), {per_commit / 1024:g} KiB per commit: {_gb(load)} per day"
    )
    return against_rating(load, what, facts, capacity_bytes, float(crit["service_years"]))


def slog_floor_tier(
    tiers: list[tuple[str, float]], facts: LineFacts | None, capacity_bytes: int | None, crit: dict
) -> tuple[str | None, Endurance | None]:
    """The highest SLOG tier whose floor rate (``tiers``: ``(name, MB/s)``, highest first) the rating
    sustains at the assumed duty (``crit`` is ``[endurance]``): ``(tier or "unsuitable", the
    endurance at the highest floor)``; ``(None, endurance)`` when the rating is not known."""
    duty = float(crit["slog_duty"])
    years = float(crit["service_years"])
    per_day, _, _, _ = rating(facts, capacity_bytes, years)
    floors = [(name, mb_s * 1e6 * duty * DAY_S) for name, mb_s in tiers]
    if per_day is None:
        name, need = floors[-1]
        return None, against_rating(need, _slog_load(name, need, duty), facts, capacity_bytes, years)
    for name, need in floors:
        if per_day >= need:
            return name, against_rating(need, _slog_load(name, need, duty), facts, capacity_bytes, years)
    name, need = floors[-1]
    return "unsuitable", against_rating(need, _slog_load(name, need, duty), facts, capacity_bytes, years)


def _slog_load(tier: str, need: float, duty: float) -> str:
    return (
        f"the {tier} tier's floor rate for {duty:.0%} of every day (the assumed duty, criteria [endurance]): "
        f"{_gb(need)} per day"
    )
