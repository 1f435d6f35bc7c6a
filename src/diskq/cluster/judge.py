"""The rules of ``criteria.toml [cluster]`` as pure functions: figures in, a finding (or None) out.

Each :class:`Finding` names its rule, the OSDs it is about, one sentence, the evidence (figure
name -> value) and, where the operator can act through the configuration, the
``ceph config`` lines that would do it (printed, never run).

>>> crit = {"commit_latency_factor": 3.0}
>>> commit_latency(7, 0.004, 0.0005, crit).rule
'commit_latency'
>>> commit_latency(7, 0.001, 0.0005, crit) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

RULES = (
    "db_unsuitable",
    "db_rotational",
    "db_shared",
    "db_guideline",
    "spillover",
    "db_small",
    "commit_latency",
    "commit_latency_peers",
    "mclock_vs_device",
    "mclock_spread",
    "mclock_threshold",
    "bluestore_slow_ops",
    "slow_ops",
    "bluefs_space",
    "fragmentation",
    "omap_legacy",
    "device_health",
    "health_unparsed",
    "batch_plan",
)


@dataclass
class Finding:
    rule: str
    osds: list[int]
    message: str
    evidence: dict = field(default_factory=dict)
    config: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)  #: of the OSDs (filled in by the report)
    drives: list[str] = field(default_factory=list)  #: the devices they commit to, with models
    fixes: list[str] = field(default_factory=list)  #: what the operator can do, for the release


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _gb(n: int) -> str:
    return f"{n / 1e9:,.1f} GB"


def db_unsuitable(osds: list[int], model: str, tier: str | None) -> Finding | None:
    """The DB device's database tier is unsuitable."""
    if tier != "unsuitable":
        return None
    return Finding(
        "db_unsuitable", osds, f"{model}: the database rates it unsuitable as a WAL/DB device", {"tier": tier}
    )


def db_rotational(osd: int, rotational: bool | None) -> Finding | None:
    if rotational is not True:
        return None
    return Finding(
        "db_rotational",
        [osd],
        "Ceph reports the dedicated DB device as rotational (bluefs_db_rotational=1)",
        {"bluefs_db_rotational": 1},
    )


def db_shared(osds: list[int], model: str, figure: int | None, limited_by_sweep: bool | None) -> Finding | None:
    """More OSDs on one DB drive than the database's OSDs-per-device figure for its model."""
    if figure is None or len(osds) <= figure:
        return None
    if limited_by_sweep:
        return None  # "at least figure": more is not known to be too many (the report names it)
    return Finding(
        "db_shared",
        osds,
        f"{len(osds)} OSDs share one {model}; the database's figure is {figure}",
        {"osds_sharing": len(osds), "osds_per_device": figure},
    )


def db_guideline(osds: list[int], nvme: bool, crit_plan: dict) -> Finding | None:
    """More OSDs on one DB drive than the Ceph documentation's drive layout guideline."""
    limit = int(crit_plan["guideline_max_nvme" if nvme else "guideline_max_sata_sas"])
    if len(osds) <= limit:
        return None
    kind = "NVMe" if nvme else "SAS/SATA SSD"
    return Finding(
        "db_guideline",
        osds,
        f"{len(osds)} OSDs share one DB drive; Ceph's guideline is at most {limit} per {kind}",
        {"osds_sharing": len(osds), "guideline": limit},
    )


def spillover(osd: int, slow_used: int | None, db_used: int | None, db_total: int | None) -> Finding | None:
    """bluefs.slow_used_bytes above zero on an OSD with a dedicated DB device."""
    if not slow_used:
        return None
    ev = {"slow_used_bytes": slow_used, "db_used_bytes": db_used, "db_total_bytes": db_total}
    used = f" (DB {_gb(db_used)} used of {_gb(db_total)})" if db_used is not None and db_total else ""
    return Finding("spillover", [osd], f"BlueFS spilled {_gb(slow_used)} onto the slow device{used}", ev)


def db_small(osd: int, db_size: int | None, data_size: int | None, crit: dict) -> Finding | None:
    if not db_size or not data_size:
        return None
    share = db_size / data_size
    if share >= float(crit["db_min_share"]):
        return None
    return Finding(
        "db_small",
        [osd],
        f"block.db is {share:.2%} of the data device, below {float(crit['db_min_share']):.0%}",
        {"db_size_bytes": db_size, "data_size_bytes": data_size, "share": round(share, 5)},
    )


def predicted_commit_s(
    curve: list[tuple[int, float]], sharing: int, p99_1job_us: float | None
) -> tuple[float, str] | None:
    """What the DB device's own measurement predicts for one commit, and how it was read.

    N OSDs committing at once each wait about N / IOPS(N); at N jobs beyond the curve, its
    largest count is used. Alone, the p99 fdatasync latency at 1 job (or 1 / IOPS(1)).

    >>> predicted_commit_s([(1, 1000.0), (4, 2000.0)], 4, None)
    (0.002, '4 / IOPS(4) = 4 / 2,000')
    >>> round(predicted_commit_s([(1, 1000.0)], 1, 1500.0)[0], 6)
    0.0015
    """
    pts = sorted((int(n), float(x)) for n, x in curve if x and x > 0)
    options = []
    if p99_1job_us:
        options.append((p99_1job_us / 1e6, f"p99 fdatasync at 1 job {p99_1job_us / 1000:.2f} ms"))
    elif pts and pts[0][0] == 1:
        options.append((1 / pts[0][1], f"1 / IOPS(1) = 1 / {pts[0][1]:,.0f}"))
    if pts and sharing > 1:
        n, iops = next(((n, x) for n, x in pts if n >= sharing), pts[-1])
        options.append((n / iops, f"{n} / IOPS({n}) = {n} / {iops:,.0f}"))
    return max(options) if options else None


def commit_latency(
    osd: int, avg_s: float | None, predicted_s: float | None, crit: dict, device: str = "DB device"
) -> Finding | None:
    """Average ``kv_commit_lat`` against what the device the OSD commits to (its WAL, DB or
    data device: ``device``) predicts."""
    if avg_s is None or not predicted_s:
        return None
    factor = float(crit["commit_latency_factor"])
    if avg_s <= factor * predicted_s:
        return None
    return Finding(
        "commit_latency",
        [osd],
        f"kv_commit_lat averages {_ms(avg_s)}, {avg_s / predicted_s:.1f}x the {_ms(predicted_s)} "
        f"its {device}'s measurement predicts (limit {factor:g}x)",
        {"kv_commit_lat_s": avg_s, "predicted_s": predicted_s},
    )


def commit_latency_peers(osd: int, commit_ms: float, class_ms: list[float], crit: dict) -> Finding | None:
    """``ceph osd perf``: an OSD's commit latency far above its device class's lower quartile
    (``class_ms``: the class's OSDs with commits in the interval, itself included; an OSD at 0 ms
    committed nothing and is no peer; fewer than three that committed are no class to compare
    with), and above a floor below which nothing is worth acting on.
    The lower quartile, not the median: with three OSDs of which two are slow, the median is slow.

    >>> crit = {"peer_latency_factor": 3.0, "peer_latency_min_ms": 20.0}
    >>> commit_latency_peers(0, 431.0, [551.0, 431.0, 16.0], crit).rule
    'commit_latency_peers'
    >>> commit_latency_peers(1, 168.0, [154.0, 143.0, 168.0], crit) is None
    True
    """
    values = sorted(v for v in class_ms if v > 0)
    if len(values) < 3 or commit_ms <= 0:  # one or two OSDs that committed are no class to compare with
        return None
    ref = values[int((len(values) - 1) * 0.25)]
    factor, floor = float(crit["peer_latency_factor"]), float(crit["peer_latency_min_ms"])
    if commit_ms < floor or commit_ms <= factor * ref:
        return None
    return Finding(
        "commit_latency_peers",
        [osd],
        f"commit latency {commit_ms:,.0f} ms (ceph osd perf), {commit_ms / ref:.0f}x the {ref:,.0f} ms lower "
        f"quartile of the {len(values)} OSDs of its class that committed (limit {factor:g}x, at least {floor:g} ms)",
        {"commit_latency_ms": commit_ms, "class_lower_quartile_ms": ref, "class_osds": len(values)},
    )


def mclock_vs_device(osd: int, kind: str, capacity: float, per_osd_rate: float | None, crit: dict) -> Finding | None:
    """The capacity in force against the per-OSD commit rate of the OSD's WAL/DB device."""
    if per_osd_rate is None or per_osd_rate <= 0 or capacity <= 0:
        return None
    factor = float(crit["mclock_factor"])
    option = f"osd_mclock_max_capacity_iops_{kind}"
    ratio = capacity / per_osd_rate
    if ratio > factor:
        what = f"{ratio:.1f}x above"
    elif ratio < 1 / factor and kind == "ssd":
        what = f"{1 / ratio:.1f}x below"
    else:
        return None
    return Finding(
        "mclock_vs_device",
        [osd],
        f"{option} {capacity:,.0f} is {what} the {per_osd_rate:,.0f} commits/s its WAL/DB device gives "
        f"each OSD (limit {factor:g}x)",
        {option: capacity, "per_osd_commit_rate": round(per_osd_rate, 1)},
        [f"ceph config set osd.{osd} {option} {per_osd_rate:.0f}"],
    )


def mclock_threshold(osd: int, kind: str, capacity: float, crit: dict) -> Finding | None:
    """A per-OSD capacity above what Ceph itself accepts from a start-up bench."""
    limit = float(crit[f"mclock_threshold_{kind}"])
    if capacity <= limit:
        return None
    option = f"osd_mclock_max_capacity_iops_{kind}"
    return Finding(
        "mclock_threshold",
        [osd],
        f"{option} {capacity:,.0f} is above {limit:,.0f}, where Ceph refuses its own bench result",
        {option: capacity, "threshold": limit},
        [f"ceph config rm osd.{osd} {option}"],
    )


def mclock_spread(kind: str, capacities: dict[int, float], crit: dict) -> Finding | None:
    """Capacities of OSDs of one device class more than the factor apart; the OSDs are named
    as low or high by which side of the geometric midpoint of the extremes they are on."""
    if len(capacities) < 2:
        return None
    lo, hi = min(capacities.values()), max(capacities.values())
    factor = float(crit["mclock_factor"])
    if lo <= 0 or hi / lo <= factor:
        return None
    middle = (lo * hi) ** 0.5  # the geometric midpoint splits them into the two ends
    low = sorted(o for o, c in capacities.items() if c < middle)
    high = sorted(o for o, c in capacities.items() if c >= middle)
    option = f"osd_mclock_max_capacity_iops_{kind}"
    return Finding(
        "mclock_spread",
        sorted(capacities),
        f"{option} of the {kind.upper()} OSDs ranges from {lo:,.0f} to {hi:,.0f} ({hi / lo:.1f}x, limit "
        f"{factor:g}x): {ids(low)} low, {ids(high)} high",
        {"min": lo, "max": hi, "low": low, "high": high},
    )


def ids(osds: list[int]) -> str:
    shown = ", ".join(f"osd.{o}" for o in osds[:8])
    return shown + (f" and {len(osds) - 8} more" if len(osds) > 8 else "")


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural where ``n`` is not one.

    >>> counted(1, "finding"), counted(0, "OSD"), counted(2, "DB drive")
    ('1 finding', '0 OSDs', '2 DB drives')
    """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
