"""Per-job rates above the 1-job rate: an observation for a measurement, a conflict for two figures.

N jobs at iodepth 1 each wait for their own write and fdatasync, so on a drive alone a job among
N rarely gets more done than a job alone. A point whose per-job rate IOPS(N)/N is more than
``max_per_job_ratio`` (``[plausibility]`` in ``criteria.toml``) times the curve's 1-job rate says
that something else was at work, and what it means depends on what the point is:

* A **measurement** (a step whose raw fio output holds fio's counters and passes the cross-checks
  of :mod:`diskq.submission.counters`) is a fact. It is never left out: the curve is classified
  and counted with it, and the rate becomes an *observation* with its likely cause: in file mode
  the filesystem commits the flushes of concurrent writers together (one journal commit serves
  many fdatasync calls); on a run already marked noisy, the host slowed the 1-job step.
* Two **figures without raw output** (a community-table row, an import) cannot both be right:
  a *conflict* (:mod:`diskq.analyse.conflicts`). Without other evidence, verdicts use only what
  both readings allow: the 1-job figure as a lower bound, the N-job figure held out and shown.

The 1-job point is the reference; a curve without one has nothing to be judged against.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from diskq.analyse import conflicts, criteria
from diskq.analyse.model import QuestionablePoint

#: Every observation note starts with this.
OBSERVATION = "observation: "
#: Every note about a conflict starts with this.
CONFLICT = "conflict: "
#: Every note about a conflict that other evidence decided starts with this.
DECIDED = "conflict decided: "


def max_per_job_ratio(crit: dict | None = None) -> float:
    """The ``[plausibility]`` threshold (from ``crit`` when given, else from criteria.toml)."""
    section = crit if crit is not None else criteria.section("plausibility")
    return float(section["max_per_job_ratio"])


def measured(fio: dict | None, *, sync: bool = True) -> bool:
    """Is a step with this raw fio output a measurement (its counters present and cross-checked)?"""
    if fio is None:
        return False
    from diskq.submission.counters import cross_checked  # the checks validation runs; pure, no I/O

    return cross_checked(fio, sync=sync)


@dataclass
class Review:
    """What the rule makes of one curve: the points the verdicts use, the figures held out by a
    conflict (with why), and the observations about measured points."""

    kept: list[tuple[int, float]]
    held: list[QuestionablePoint] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    conflicts: list[conflicts.Conflict] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """Observations, then each conflict, as notes for a run, a class or a verdict."""
        return [*self.observations, *(q.reason for q in self.held)]


def review(
    curve: Iterable[tuple[int, float]],
    *,
    measured_jobs: Iterable[int] = (),
    filesystem: str | None = None,
    noisy: bool = False,
    source: str = "this curve",
    crit: dict | None = None,
) -> Review:
    """Review ``curve`` (``(numjobs, iops)`` pairs). ``measured_jobs``: the job counts whose
    points are measurements (:func:`measured`); ``filesystem``: the filesystem a file-mode run
    wrote through; ``noisy``: the run is already marked noisy (:mod:`diskq.analyse.noise`).

    >>> r = review([(1, 1600), (15, 48409)])
    >>> r.kept, [q.numjobs for q in r.held]
    ([(1, 1600.0)], [15])
    >>> r = review([(1, 1600), (15, 48409)], measured_jobs=[1, 15], filesystem="ext4")
    >>> r.kept, r.held, r.observations[0][:60]
    ([(1, 1600.0), (15, 48409.0)], [], 'observation: 48,409 IOPS at 15 jobs is 3,227 per job, 2.0x t')
    """
    rows = sorted((int(n), float(x)) for n, x in curve)
    out = Review(kept=list(rows))
    solo = next((x for n, x in rows if n == 1), None)
    if solo is None or solo <= 0:
        return out
    limit = max_per_job_ratio(crit)
    raw = set(measured_jobs)
    items = [conflicts.Evidence(x, n, source=source, raw=n in raw) for n, x in rows]
    found = {c.high.numjobs: c for c in conflicts.find(items, limit)}
    held = set()
    for n, x in rows:
        if n <= 1:
            continue
        ratio = (x / n) / solo
        if round(ratio - limit, 9) <= 0:
            continue
        head = f"{x:,.0f} IOPS at {n} jobs is {x / n:,.0f} per job, {ratio:.1f}x the 1-job rate of {solo:,.0f}"
        if n in found and n not in raw:
            c = found[n]
            out.conflicts.append(c)
            held.add(n)
            out.held.append(
                QuestionablePoint(
                    numjobs=n,
                    iops=x,
                    ratio=round(ratio, 2),
                    reason=(
                        f"{CONFLICT}{c.describe()} (more than {limit:g}x is not what a drive alone gives, and neither "
                        f"figure has raw fio output to check): without other evidence the verdicts use only what both "
                        f"allow, {solo:,.0f} at 1 job as a lower bound, and hold {x:,.0f} at {n} jobs out"
                    ),
                )
            )
        else:
            out.observations.append(f"{OBSERVATION}{head}: kept, it was measured; {_cause(filesystem, noisy)}")
    out.kept = [(n, x) for n, x in rows if n not in held]
    return out


def run_review(run, *, filesystem: str | None = None, settled: bool = False) -> Review:
    """:func:`review` of one result run's completed points: a point is measured when its raw fio
    output is cross-checked (:func:`measured`), the run noisy when its 1-job step was
    (:func:`diskq.analyse.noise.noisy_caveat`). ``settled``: the points were reviewed where they
    came from (a database median curve): every one stands."""
    from diskq.analyse.noise import iops_spread, noisy_caveat

    points = [p for p in run.points if not p.interrupted]
    curve = [(p.numjobs, p.iops) for p in points]
    if settled:
        return Review(kept=sorted((int(n), float(x)) for n, x in curve))
    solo = next((p for p in points if p.numjobs == 1), None)
    noisy = solo is not None and noisy_caveat(run.write_cache, iops_spread(solo.fio)) is not None
    return review(
        curve,
        measured_jobs=[p.numjobs for p in points if measured(p.fio)],
        filesystem=filesystem,
        noisy=noisy,
        source=f"cache {run.write_cache}",
    )


def _cause(filesystem: str | None, noisy: bool) -> str:
    if filesystem:
        return (
            f"likely cause: the {filesystem} filesystem commits the flushes of concurrent writers together "
            "(one journal commit serves many fdatasync calls), so this curve and its verdicts describe the "
            "filesystem on the device, not the device alone"
        )
    if noisy:
        return (
            "likely cause: the run is noisy and the host slowed the 1-job step (CPU idle states, scheduling, "
            "a neighbour's I/O), which raises every later per-job ratio; measure again on a quiet host"
        )
    return (
        "likely cause: the device or its driver commits the flushes of concurrent writers together, or the "
        "1-job step was slowed (CPU idle states, the drive's power states)"
    )
