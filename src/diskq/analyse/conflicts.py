"""Two figures that cannot both be right: a conflict, shown, and decided only by other evidence.

At iodepth 1 a job among N waits for its own write and fdatasync, so per-job rates far above
the 1-job rate (``[plausibility] max_per_job_ratio`` in ``criteria.toml``) say that one of the
two figures does not describe the drive. For a *measurement* (raw fio output that passes the
counter checks) that is an observation about the system measured (:mod:`diskq.analyse.plausibility`);
for two *figures without raw output* (a community-table row, an import) it is a conflict: one
of them is wrong and the pair alone cannot say which.

Interface (pure: no I/O, no database; callers feed it what they know)::

    Evidence(value, numjobs, write_cache, source, raw, method)
        value        IOPS of 4 KiB write + fdatasync pairs at ``numjobs`` jobs, iodepth 1
        write_cache  "on", "off", "unknown" or None (not stated)
        source       a label: a submission id, "Vitastor documentation", ... (a conflict is
                     always between two figures of one source; other sources are evidence)
        raw          the figure carries raw fio output that passes the counter checks
        method       a method class: figures of different classes are never compared

    find(items, ratio)              -> [Conflict(low, high, ratio)]  within each source
    decide(conflict, others, ...)   -> Decision(kept, set_aside, decided_by, reason)
    bound(conflict)                 -> the figures both readings allow (the low 1-job figure,
                                       as a lower bound; the high figure held out)

The database feeds it each submission's figures and, through
:func:`diskq.database.settle.settle` (``sources=``), figures from other sources by model key.

Two readings are possible: the 1-job figure is right (and the N-job figure too high), or the
N-job figure is right (and the 1-job figure too low). Another item of evidence (another source,
another submission or capacity of the model) *contradicts* a reading when

* it is at the same job count as the figure that reading keeps and differs from it by more than
  ``spread`` (``[outliers] max_ratio``: units of one model differ by less), or
* it is a 1-job figure and the kept figure's per-job rate exceeds it by more than
  ``ratio * spread`` (the plausibility premise, across units), or
* the kept figure is at 1 job and the evidence's per-job rate exceeds it by more than
  ``ratio * spread``.

Figures of other job counts say nothing about a reading. When items contradict one reading and
none contradicts the other, the other is kept and those items decided; otherwise the conflict
stays, and verdicts use only what both readings allow (:func:`bound`).

>>> s4510 = [Evidence(1600, 1, "off", "table row"), Evidence(48409, 15, "off", "table row")]
>>> (c,) = find(s4510, 1.5)
>>> (c.low.value, c.high.value, c.ratio)
(1600, 48409, 2.02)
>>> decide(c, [], 1.5, 2.0).kept is None
True
>>> d = decide(c, [Evidence(27000, 1, None, "Vitastor documentation")], 1.5, 2.0)
>>> (d.kept.value, d.set_aside.value, [e.source for e in d.decided_by])
(48409, 1600, ['Vitastor documentation'])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: The method class of every 4 KiB write + fdatasync sweep at iodepth 1 (diskq's and the
#: community protocol's): the figures a conflict is judged against.
SYNC_4K_QD1 = "4k-write-fdatasync-iodepth1"


@dataclass(frozen=True)
class Evidence:
    """One figure about a drive model (see the module docstring for each field)."""

    value: float
    numjobs: int
    write_cache: str | None = None
    source: str = ""
    raw: bool = False
    method: str = SYNC_4K_QD1

    @property
    def per_job(self) -> float:
        return self.value / self.numjobs

    def describe(self) -> str:
        cache = f", cache {self.write_cache}" if self.write_cache not in (None, "unknown") else ""
        jobs = "1 job" if self.numjobs == 1 else f"{self.numjobs} jobs"
        return f"{self.value:,.0f} IOPS at {jobs} ({self.source}{cache})"


@dataclass(frozen=True)
class Conflict:
    """A 1-job figure and an N-job figure of one source that cannot both be right."""

    low: Evidence  #: the 1-job figure
    high: Evidence  #: the N-job figure whose per-job rate is ``ratio`` times the 1-job figure
    ratio: float

    def describe(self) -> str:
        n = self.high.numjobs
        return (
            f"{self.low.value:,.0f} IOPS at 1 job and {self.high.value:,.0f} at {n} jobs "
            f"({self.high.per_job:,.0f} per job, {self.ratio:.1f}x the 1-job figure) cannot both be right"
        )


@dataclass(frozen=True)
class Decision:
    """What other evidence says about a conflict. ``kept``/``set_aside`` are None when it did not decide."""

    conflict: Conflict
    kept: Evidence | None = None
    set_aside: Evidence | None = None
    decided_by: list[Evidence] = field(default_factory=list)
    reason: str = ""


def _comparable(a: Evidence, b: Evidence) -> bool:
    if a.method != b.method:
        return False
    unknown = (None, "unknown")
    return a.write_cache in unknown or b.write_cache in unknown or a.write_cache == b.write_cache


def find(items: Iterable[Evidence], ratio: float) -> list[Conflict]:
    """Every pair of one source, method class and cache state whose N-job per-job rate is more than
    ``ratio`` times the 1-job figure, unless both figures carry raw fio output (a measurement is
    an observation, never a conflict); ordered by source, cache and job count."""
    groups: dict[tuple, list[Evidence]] = {}
    for e in items:
        groups.setdefault((e.source, e.method, e.write_cache or ""), []).append(e)
    out = []
    for key in sorted(groups):
        rows = sorted(groups[key], key=lambda e: e.numjobs)
        solo = next((e for e in rows if e.numjobs == 1 and e.value > 0), None)
        if solo is None:
            continue
        for e in rows:
            if e.numjobs <= 1 or (e.raw and solo.raw):
                continue
            r = e.per_job / solo.value
            if round(r - ratio, 9) > 0:
                out.append(Conflict(solo, e, round(r, 2)))
    return out


def _against(kept: Evidence, other: Evidence, ratio: float, spread: float) -> bool:
    """Does ``other`` contradict a reading that keeps ``kept``?"""
    if other.value <= 0 or kept.value <= 0 or not _comparable(kept, other):
        return False
    if other.numjobs == kept.numjobs:
        return not (1 / spread <= other.value / kept.value <= spread)
    if other.numjobs == 1:
        return round(kept.per_job - ratio * spread * other.value, 9) > 0
    if kept.numjobs == 1:
        return round(other.per_job - ratio * spread * kept.value, 9) > 0
    return False


def decide(conflict: Conflict, others: Sequence[Evidence], ratio: float, spread: float) -> Decision:
    """Which figure of ``conflict`` the ``others`` (evidence of the same model from other sources,
    none of them in a conflict itself) keep: the one no item contradicts, when items contradict
    the other."""
    others = [e for e in others if e.source != conflict.low.source]
    against_low = [e for e in others if _against(conflict.low, e, ratio, spread)]
    against_high = [e for e in others if _against(conflict.high, e, ratio, spread)]
    if against_low and not against_high:
        return Decision(
            conflict, conflict.high, conflict.low, against_low, _decided(conflict.high, conflict.low, against_low)
        )
    if against_high and not against_low:
        return Decision(
            conflict, conflict.low, conflict.high, against_high, _decided(conflict.low, conflict.high, against_high)
        )
    if not others:
        why = "no other evidence for the model"
    elif against_low:
        why = "the other evidence contradicts both figures"
    else:
        why = "the other evidence fits both figures"
    return Decision(conflict, reason=f"undecided: {why}")


def _decided(kept: Evidence, aside: Evidence, by: list[Evidence]) -> str:
    return (
        f"decided by {'; '.join(e.describe() for e in by)}: kept {kept.value:,.0f} at "
        f"{kept.numjobs} job{'s' if kept.numjobs != 1 else ''}, set aside {aside.value:,.0f} at "
        f"{aside.numjobs} job{'s' if aside.numjobs != 1 else ''}"
    )


def bound(conflict: Conflict) -> tuple[Evidence, Evidence]:
    """``(used, held)`` of an undecided conflict: the 1-job figure is a lower bound under both
    readings (right, or too low), so verdicts may use it as "at least"; the N-job figure has no
    bound both readings share (right, or anything up to ``ratio`` x N x the 1-job figure), so it
    is held out of the verdicts and shown."""
    return conflict.low, conflict.high
