"""Does a submission's stored analysis claim more than its figures give?

A result document carries the analysis ``diskq bench`` (or ``import-fio``) made of it: each
run's ``scaling`` and ``flush_check`` and the document's ``verdicts``. The database recomputes
all of it from the points, so the stored copy is informational; but a file must not claim a
better outcome than its own figures give. Validation recomputes the analysis with
:func:`diskq.analyse.annotate` on a copy of the result and reports, one line per field
(``result.runs[0].scaling``, ``result.runs[0].flush_check``, ``result.verdicts``), every
outcome the stored copy states more favourably:

* scaling: a better class (linear > asymptotic > regressing, or any class where the points
  allow none) or a higher peak;
* flush check: ``honest`` true where the recomputation is not, or null where it is false
  (a warning left out);
* verdicts: a better Ceph WAL/DB tier, ``safe`` where the run used is not, more OSDs per
  device, etcd passing where it does not (or null where it fails), a lower fdatasync p99, more
  PostgreSQL commits per second or a lower commit p99, a better ZFS SLOG tier or more MB/s, a
  verdict "measured" by the size profile where the recomputation can only estimate it from 4 KiB.

A stored outcome that is worse, absent, or only worded differently is left alone. Verdicts
record the criteria version they were made with; an analysis made with an earlier version of
the criteria is not compared (the criteria may have changed since, and the database judges
every file by the current ones), and a version this diskq does not know is a problem.
"""

from __future__ import annotations

from diskq.errors import DiskqError
from diskq.result import ResultDocument
from diskq.submission.problems import Problem

_CLASS_RANK = {"linear": 2, "asymptotic": 1, "regressing": 0}
_TIER_RANK = {"excellent": 3, "good": 2, "marginal": 1, "unsuitable": 0, None: 0}
_TRI_RANK = {True: 2, None: 1, False: 0}
#: Figures copied from the points are compared exactly, up to the rounding of a JSON round trip.
_REL = 1e-9


def _json(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _higher(mine: float | None, theirs: float | None) -> bool:
    """``mine`` claims more than ``theirs`` (a stored figure where none can be computed counts)."""
    if mine is None:
        return False
    return theirs is None or mine > theirs * (1 + _REL) + _REL


def _lower(mine: float | None, theirs: float | None) -> bool:
    """``mine`` claims less (better, for a latency) than ``theirs``; both must be there."""
    return mine is not None and theirs is not None and mine < theirs * (1 - _REL) - _REL


def recompute(result: ResultDocument) -> ResultDocument:
    """The analysis of ``result`` made afresh, on a copy: ``result`` itself is left unchanged.

    Runs are copied (their stored ``scaling`` and ``flush_check`` dropped, so nothing stored
    feeds the recomputation); points and the device are shared, the analysis never changes them.
    """
    from diskq.analyse import annotate

    runs = [
        run.model_copy(update={"scaling": None, "flush_check": None, "notes": list(run.notes)}) for run in result.runs
    ]
    return annotate(result.model_copy(update={"runs": runs, "verdicts": None}))


def _scaling_claims(stored, fresh) -> list[str]:
    if fresh is None:
        return [f"scaling {stored.scaling} (recomputed: the points allow no class)"]
    out = []
    if _CLASS_RANK[stored.scaling] > _CLASS_RANK[fresh.scaling]:
        out.append(f"scaling {stored.scaling} (recomputed: {fresh.scaling})")
    if _higher(stored.peak.iops, fresh.peak.iops):
        out.append(f"peak.iops {_json(stored.peak.iops)} (recomputed: {_json(fresh.peak.iops)})")
    return out


def _flush_claims(stored, fresh) -> list[str]:
    theirs = fresh.honest if fresh is not None else None
    if _TRI_RANK[stored.honest] > _TRI_RANK[theirs]:
        why = "" if fresh is not None else ", no flush check possible"
        return [f"honest {_json(stored.honest)} (recomputed: {_json(theirs)}{why})"]
    return []


def _verdict_claims(stored, fresh) -> list[str]:
    out = []

    def claim(name: str, mine, theirs) -> None:
        out.append(f"{name} {_json(mine)} (recomputed: {_json(theirs)})")

    s, f = stored.ceph_waldb, fresh.ceph_waldb
    if _TIER_RANK[s.tier] > _TIER_RANK[f.tier]:
        claim("ceph_waldb.tier", s.tier, f.tier)
    if s.safe is True and f.safe is not True:
        claim("ceph_waldb.safe", s.safe, f.safe)
    if _higher(s.iops, f.iops):
        claim("ceph_waldb.iops", s.iops, f.iops)
    s, f = stored.osds_per_device, fresh.osds_per_device
    if (s.n or 0) > (f.n or 0):
        claim("osds_per_device.n", s.n, f.n)
    s, f = stored.etcd, fresh.etcd
    if _TRI_RANK[s.passes] > _TRI_RANK[f.passes]:
        claim("etcd.passes", s.passes, f.passes)
    if _lower(s.p99_fdatasync_ms, f.p99_fdatasync_ms):
        claim("etcd.p99_fdatasync_ms", s.p99_fdatasync_ms, f.p99_fdatasync_ms)
    s, f = stored.postgres_wal, fresh.postgres_wal
    if _higher(s.commits_per_s, f.commits_per_s):
        claim("postgres_wal.commits_per_s", s.commits_per_s, f.commits_per_s)
    if _lower(s.p99_fdatasync_ms, f.p99_fdatasync_ms):
        claim("postgres_wal.p99_fdatasync_ms", s.p99_fdatasync_ms, f.p99_fdatasync_ms)
    if _lower(s.p99_commit_ms_max, f.p99_commit_ms_max):
        claim("postgres_wal.p99_commit_ms_max", s.p99_commit_ms_max, f.p99_commit_ms_max)
    s, f = stored.zfs_slog, fresh.zfs_slog
    if s is not None and f is not None:
        if _TIER_RANK[s.tier] > _TIER_RANK[f.tier]:
            claim("zfs_slog.tier", s.tier, f.tier)
        if s.safe is True and f.safe is not True:
            claim("zfs_slog.safe", s.safe, f.safe)
        if _higher(s.bw_bytes, f.bw_bytes):
            claim("zfs_slog.bw_bytes", s.bw_bytes, f.bw_bytes)
        if s.basis == "measured" and f.basis != "measured":
            claim("zfs_slog.basis", s.basis, f.basis)
    for name in ("etcd", "postgres_wal"):
        mine, theirs = getattr(stored, name).basis, getattr(fresh, name).basis
        if mine == "measured" and theirs != "measured":
            claim(f"{name}.basis", mine, theirs)
    return out


def analysis_problems(result: ResultDocument) -> list[Problem]:
    """One problem per stored analysis field that claims a better outcome than the recomputation."""
    if result.verdicts is None and not any(r.scaling is not None or r.flush_check is not None for r in result.runs):
        return []  # nothing claimed, nothing to recompute
    try:
        fresh = recompute(result)
    except DiskqError as exc:
        return [Problem("", "result", f"the analysis cannot be recomputed: {exc.message}")]
    current = fresh.verdicts.criteria_version
    if result.verdicts is not None and result.verdicts.criteria_version != current:
        version = result.verdicts.criteria_version
        if 1 <= version < current:
            return []  # made with earlier criteria: informational, the database recomputes it
        return [
            Problem(
                "",
                "result.verdicts.criteria_version",
                f"criteria version {version} is not one this diskq knows (1 to {current})",
            )
        ]

    out: list[Problem] = []

    def report(field: str, claims: list[str]) -> None:
        if claims:
            out.append(Problem("", field, "claims a better outcome than its figures give: " + "; ".join(claims)))

    for r, (run, again) in enumerate(zip(result.runs, fresh.runs, strict=False)):
        if run.scaling is not None:
            report(f"result.runs[{r}].scaling", _scaling_claims(run.scaling, again.scaling))
        if run.flush_check is not None:
            report(f"result.runs[{r}].flush_check", _flush_claims(run.flush_check, again.flush_check))
    if result.verdicts is not None:
        report("result.verdicts", _verdict_claims(result.verdicts, fresh.verdicts))
    return out
