"""One report over the result documents a fleet run fetched: drives against their siblings.

The playbook (``ansible/``) leaves one directory per host under the results directory::

    results/
      host1/status.json        what the host said: candidates, refusals, each bench's exit
      host1/loop3.json         a result document (or the submission ``diskq sign`` made of it)
      host2/status.json        {"host": "host2", "state": "unreachable", "reason": "..."}

Drives are grouped by model and firmware. Within a group of at least ``min_group`` drives each
figure is compared with the group's median, and a drive far from it is flagged with the figure
and the ratio: a drive far below identical siblings is a failing drive, a bad slot, a degraded
link or a slow HBA, and one far above them usually has a cache that does not honour flushes.
A result the bench marked as measured on RAM (a loop device over a file on tmpfs, a RAM disk:
:data:`diskq.analyse.memorybacked.MEMORY_BACKED`) measures memory, not a drive: it is listed with
that reason and left out of the median and the comparison.
The thresholds and why they are what they are: ``[fleet]`` in ``criteria.toml``.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from diskq import boundedjson
from diskq.analyse import criteria
from diskq.analyse.memorybacked import MEMORY_BACKED
from diskq.errors import InvalidInput
from diskq.files import UnreadableFile, read_regular

STATUS = "status.json"
_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """Sort key that reads runs of digits as numbers, as an operator counts drives and hosts.

    >>> sorted(["sdaa", "loop10", "sdb", "loop9", "nvme10n1", "nvme2n1"], key=natural_key)
    ['loop9', 'loop10', 'nvme2n1', 'nvme10n1', 'sdaa', 'sdb']
    """
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(name))


#: A result document carries every step's raw fio output; the database reads at most this much.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: The figures compared within a group: (key, label, True when higher is better).
FIGURES = (
    ("one_job_iops", "1-job IOPS", True),
    ("max_iops", "max IOPS", True),
    ("p99_sync_ms", "p99 fdatasync at 1 job", False),
)


@dataclass
class Drive:
    host: str
    name: str
    path: str | None
    model: str | None
    firmware: str | None
    serial_hash: str | None
    interface_speed: str | None
    cache_state: str | None
    one_job_iops: float | None
    max_iops: float | None
    peak_jobs: int | None
    p99_sync_ms: float | None
    ceph_tier: str | None
    interrupted: bool
    file: str
    outlier: list[str] = field(default_factory=list)  #: each flagged figure, with the ratio
    ratios: dict[str, float] = field(default_factory=dict)  #: figure / group median
    memory_backed: str | None = None  #: the bench's memory-backed note: not compared, not in the median

    @property
    def group_key(self) -> tuple[str, str]:
        return ((self.model or "unknown model").strip(), (self.firmware or "unknown").strip())


@dataclass
class Group:
    model: str
    firmware: str
    drives: list[Drive]
    medians: dict[str, float | None]
    compared: bool  #: enough complete drives to compare with a median
    notes: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)  #: what the device database knows about the model


@dataclass
class Problem:
    """A host or device that gave no complete result, and why."""

    host: str
    device: str | None
    kind: str  #: unreachable, host failed, refused, bench failed, interrupted, unreadable
    reason: str


@dataclass
class FleetReport:
    hosts: list[str]
    groups: list[Group]
    problems: list[Problem]
    thresholds: dict

    @property
    def drives(self) -> int:
        return sum(len(g.drives) for g in self.groups)

    @property
    def outliers(self) -> list[Drive]:
        return [d for g in self.groups for d in g.drives if d.outlier]

    def to_dict(self) -> dict:
        return {
            "hosts": self.hosts,
            "thresholds": self.thresholds,
            "groups": [
                {
                    "model": g.model,
                    "firmware": g.firmware,
                    "medians": g.medians,
                    "compared": g.compared,
                    "notes": g.notes,
                    "database": g.known,
                    "drives": [asdict(d) for d in g.drives],
                }
                for g in self.groups
            ],
            "problems": [asdict(p) for p in self.problems],
            "summary": {
                "hosts": len(self.hosts),
                "drives": self.drives,
                "outliers": len(self.outliers),
                "problems": len(self.problems),
            },
        }


def _result_of(data: dict) -> dict:
    """The result document inside ``data``: itself, or the ``result`` of a submission."""
    if data.get("format") == "diskq-submission" and isinstance(data.get("result"), dict):
        return data["result"]
    return data


def _run_used(result: dict) -> dict | None:
    """The run the verdicts used (best safe cache setting), else the first run with points."""
    runs = [r for r in result.get("runs") or [] if r.get("points")]
    state = ((result.get("verdicts") or {}).get("ceph_waldb") or {}).get("cache_state")
    return next((r for r in runs if r.get("write_cache") == state), runs[0] if runs else None)


def drive_from(host: str, file: Path, data: dict) -> Drive:
    """The figures of one fetched document (raises KeyError/TypeError/ValueError on nonsense)."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    result = _result_of(data)
    if result.get("format", "diskq-result") != "diskq-result" or not isinstance(result.get("runs"), list):
        raise ValueError("not a diskq result document or submission")
    dev = result.get("device") or {}
    run = _run_used(result) or {}
    points = [p for p in run.get("points") or [] if not p.get("interrupted")]
    for p in points:  # every point, not only those shown: max() below compares them all
        _figure(p.get("iops"), "iops")
        _figure(p.get("numjobs"), "numjobs")
    solo = next((p for p in points if p.get("numjobs") == 1), None)
    best = max(points, key=lambda p: p["iops"], default=None)
    sync = (solo or {}).get("sync_lat_us") or {}
    tier = ((result.get("verdicts") or {}).get("ceph_waldb") or {}).get("tier")
    name = file.stem
    notes = result.get("notes") or []
    memory = next((n for n in notes if isinstance(n, str) and n.startswith(MEMORY_BACKED)), None)
    return Drive(
        host=host,
        name=name,
        path=dev.get("path"),
        model=dev.get("model"),
        firmware=dev.get("firmware"),
        serial_hash=dev.get("serial_hash"),
        interface_speed=dev.get("interface_speed"),
        cache_state=run.get("write_cache"),
        one_job_iops=None if solo is None else float(_figure(solo["iops"], "iops")),
        max_iops=None if best is None else float(_figure(best["iops"], "iops")),
        peak_jobs=None if best is None else int(_figure(best["numjobs"], "numjobs")),
        p99_sync_ms=None if sync.get("p99") is None else float(_figure(sync["p99"], "p99")) / 1000.0,
        ceph_tier=tier,
        interrupted=bool(result.get("interrupted") or run.get("interrupted")),
        file=f"{host}/{file.name}",
        memory_backed=memory,
    )


def _decode(path: Path):
    """A fetched file decoded within bounds (:mod:`diskq.boundedjson`: no NaN, Infinity or
    ``1e999``, no nesting or size beyond any result document): ValueError otherwise."""
    raw = read_regular(path, MAX_FILE_BYTES)
    try:
        return boundedjson.decode(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (bad byte at offset {exc.start})") from None


#: The range of each figure a drive can have; outside it the document is not a measurement:
#: (key, what it is, lowest, highest). 10^8 IOPS is far beyond any device's 4 KiB writes.
SANE = {"iops": ("IOPS", 0.0, 1e8), "numjobs": ("numjobs", 1, 4096), "p99": ("p99 fdatasync latency (µs)", 0.0, 1e10)}


def _figure(value, key: str) -> float:
    """``value`` as a number within :data:`SANE`'s range for ``key``, else ValueError naming it."""
    what, low, high = SANE[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} {str(value)[:40]!r} is not a number")
    if not low <= value <= high:
        raise ValueError(f"{what} {value:g} is outside {low:g} to {high:g}: not a measurement")
    return value


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def compare(group: Group, thresholds: dict) -> None:
    """Fill ``ratios`` and ``outlier`` of every complete drive of ``group`` (in place)."""
    low, high_latency = float(thresholds["iops_low"]), float(thresholds["latency_high"])
    complete = [d for d in group.drives if not d.interrupted and not d.memory_backed]
    for d in group.drives:
        if d.memory_backed and not d.interrupted:
            group.notes.append(f"{d.host} {d.name}: measured on RAM, not a drive: left out of the median")
    group.medians = {key: _median([getattr(d, key) for d in complete]) for key, _, _ in FIGURES}
    group.compared = len(complete) >= int(thresholds["min_group"])
    if not group.compared:
        group.notes.append(
            f"{len(complete)} complete drive(s): at least {thresholds['min_group']} are needed to compare with a median"
        )
        return
    for d in complete:
        for key, label, higher_better in FIGURES:
            value, median = getattr(d, key), group.medians[key]
            if value is None or not median:
                continue
            ratio = value / median
            d.ratios[key] = round(ratio, 4)
            if higher_better and ratio < low:
                d.outlier.append(f"{label} {value:,.0f} is {1 - ratio:.0%} below the group median {median:,.0f}")
            elif higher_better and ratio > 1 / low:
                d.outlier.append(f"{label} {value:,.0f} is {ratio - 1:.0%} above the group median {median:,.0f}")
            elif not higher_better and ratio > high_latency:
                d.outlier.append(f"{label} {value:.2f} ms is {ratio:.1f}x the group median {median:.2f} ms")
    speeds = {d.interface_speed for d in complete if d.interface_speed}
    if len(speeds) > 1:
        for d in complete:
            if d.outlier and d.interface_speed:
                d.outlier.append(f"its link is {d.interface_speed} (the group has {', '.join(sorted(speeds))})")


def _status_problems(host: str, status: dict) -> list[Problem]:
    out = []
    state = status.get("state")
    if state in ("unreachable", "failed"):
        kind = "unreachable" if state == "unreachable" else "host failed"
        out.append(Problem(host, None, kind, str(status.get("reason") or "no reason recorded")))
    for c in status.get("candidates") or []:
        if c.get("decision") == "refused":
            out.append(
                Problem(host, c.get("path"), "refused", "; ".join(map(str, c.get("reasons") or [])) or "refused")
            )
    for b in status.get("benches") or []:
        rc = b.get("rc")
        if rc == 130:
            out.append(
                Problem(
                    host,
                    b.get("path"),
                    "interrupted",
                    str(b.get("error") or "the bench was interrupted; its partial result is not compared"),
                )
            )
        elif rc not in (0, None):
            out.append(Problem(host, b.get("path"), "bench failed", f"exit {rc}: {b.get('error') or 'no message'}"))
    return out


def build(results: Path, thresholds: dict | None = None, *, known=None) -> FleetReport:
    """Read every host directory under ``results`` and compare the drives. ``known(model)``, when
    given, says in a few lines what the device database knows about a group's model (the string
    the drive reports, resolved through its part number)."""
    if not results.is_dir():
        raise InvalidInput(f"{results} is not a directory", hint="give the directory the playbook fetched results into")
    thresholds = dict(thresholds or criteria.load()["fleet"])
    thresholds.pop("justification", None)
    thresholds.pop("title", None)
    hosts, drives, problems = [], [], []
    for host_dir in sorted(p for p in results.iterdir() if p.is_dir() and not p.name.startswith(".")):
        host = host_dir.name
        hosts.append(host)
        status_file = host_dir / STATUS
        if status_file.is_file():
            try:
                problems += _status_problems(host, _decode(status_file))
            except (UnreadableFile, ValueError, AttributeError) as exc:
                problems.append(Problem(host, None, "unreadable", f"{STATUS}: {exc}"))
        else:
            problems.append(Problem(host, None, "host failed", f"no {STATUS}: the play did not finish on this host"))
        for file in sorted(host_dir.glob("*.json")):
            if file.name == STATUS or not file.is_file() or file.is_symlink():
                continue
            try:
                drives.append(drive_from(host, file, _decode(file)))
            except (UnreadableFile, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
                problems.append(Problem(host, file.name, "unreadable", f"{file.name}: {exc}"))
    if not hosts:
        raise InvalidInput(
            f"no host directories under {results}", hint="run the playbook first (see README: Qualifying a fleet)"
        )
    by_key: dict[tuple[str, str], list[Drive]] = {}
    for d in drives:
        by_key.setdefault(d.group_key, []).append(d)
    groups = []
    for (model, firmware), members in sorted(by_key.items()):
        g = Group(model, firmware, sorted(members, key=lambda d: (natural_key(d.host), natural_key(d.name))), {}, False)
        compare(g, thresholds)
        if known is not None and model != "unknown model":
            g.known = known(model)
        groups.append(g)
    return FleetReport(hosts=hosts, groups=groups, problems=problems, thresholds=thresholds)
