"""The model's other evidence decides the conflicts of its submissions.

A submission whose figures carry no raw fio output (a community-table row, an import) may hold
two figures that cannot both be right (:mod:`diskq.analyse.conflicts`). Reading the file alone,
:mod:`diskq.database.extract` holds the N-job figure out of the run's curve and keeps the 1-job
figure as a lower bound. Here, once every file is read, the figures of the same model from its
other submissions (other capacities and firmware included, every source the build reads) are
the evidence: when they decide, the figure they keep goes (back) into the curve, the other is
set aside, and the points table says which evidence decided. Otherwise the conflict stays and
every verdict resting on it says so. Figures in a conflict of their own never decide another.

Pure over the records; :func:`settle` returns the point and run rows to update.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence

from diskq.analyse import conflicts, criteria
from diskq.analyse.plausibility import CONFLICT, DECIDED
from diskq.database.record import SubmissionRecord


def _label(rec: SubmissionRecord) -> str:
    size = f", {rec.capacity_bytes / 1e9:,.0f} GB" if rec.capacity_bytes else ""
    kind = "community-table row" if rec.legacy else "submission"
    return f"{kind} {rec.id} of {rec.model}{size}"


def _evidence(rec: SubmissionRecord) -> list[conflicts.Evidence]:
    """The figures of ``rec`` that may decide another submission's conflict: those of runs in no
    conflict of their own."""
    out = []
    for run in rec.runs:
        if run.held:
            continue
        for p in run.points():
            out.append(conflicts.Evidence(p[1], int(p[0]), run.write_cache, _label(rec), raw=not rec.legacy))
    return out


def settle(
    records: list[SubmissionRecord],
    crit: dict | None = None,
    sources: Mapping[str, Sequence[conflicts.Evidence]] | None = None,
) -> tuple[list[tuple], list[tuple]]:
    """Decide every conflict of ``records`` with the model's other evidence, changing their runs'
    curves in place. ``sources`` adds figures from other sources (a table of public figures), by
    model key (:func:`diskq.database.keys.model_key`), as :class:`~diskq.analyse.conflicts.Evidence`
    with their source labels. Return ``(point updates, run updates)``: ``(conflict, held, submission_id,
    run, numjobs)`` and ``(source_peak_final, iops_1job, max_iops, peak_jobs, p99_sync_us,
    submission_id, run)`` rows (the run's figures once the evidence kept its N-job figure)."""
    crit = crit if crit is not None else criteria.load()
    ratio = float(crit["plausibility"]["max_per_job_ratio"])
    spread = float(crit["outliers"]["max_ratio"])
    by_model: dict[str, list[SubmissionRecord]] = {}
    for rec in records:
        by_model.setdefault(rec.model_key, []).append(rec)
    points, runs = [], []
    for key in sorted(by_model):
        recs = sorted(by_model[key], key=lambda r: r.id)
        pool = {r.id: _evidence(r) for r in recs}
        outside = list((sources or {}).get(key, ()))
        for rec in recs:
            others = [e for rid, items in pool.items() if rid != rec.id for e in items] + outside
            for run in rec.runs:
                if run.held:
                    p, r = _settle_run(rec, run, others, ratio, spread)
                    points += p
                    runs += r
    return points, runs


def _settle_run(rec, run, others, ratio: float, spread: float) -> tuple[list[tuple], list[tuple]]:
    curve = run.points()
    solo = next((p for p in curve if int(p[0]) == 1), None)
    if solo is None:
        return [], []
    label = _label(rec)
    low = conflicts.Evidence(solo[1], 1, run.write_cache, label)
    decisions = []
    for h in run.held_points():
        high = conflicts.Evidence(h[1], int(h[0]), run.write_cache, label)
        c = conflicts.Conflict(low, high, round(high.per_job / low.value, 2))
        decisions.append((h, conflicts.decide(c, others, ratio, spread)))
    kept_high = [(h, d) for h, d in decisions if d.kept is d.conflict.high]
    point_rows: list[tuple] = []
    run.findings = []
    for h, d in decisions:
        text = f"{CONFLICT}{d.conflict.describe()}"
        if d.kept is not None:
            finding = f"{DECIDED}{d.conflict.describe()}; {d.reason}"
            run.findings.append(finding)
            point_rows.append((finding, int(d.kept is not d.conflict.high), rec.id, run.index, int(h[0])))
        else:
            finding = (
                f"{text}; {d.reason}: the verdicts use only what both allow, {low.value:,.0f} at 1 job as a "
                f"lower bound, and hold {h[1]:,.0f} at {int(h[0])} jobs out"
            )
            run.findings.append(finding)
            point_rows.append((finding, 1, rec.id, run.index, int(h[0])))
    run_rows: list[tuple] = []
    if kept_high:
        why = "; ".join(d.reason for _, d in kept_high)
        point_rows.append((f"{DECIDED}set aside: {why}", 1, rec.id, run.index, 1))
        back = {int(h[0]) for h, _ in kept_high}
        new_curve, new_held = array("d"), array("d")
        for p in curve:
            (new_held if int(p[0]) == 1 else new_curve).extend(p)
        for h in run.held_points():
            (new_curve if int(h[0]) in back else new_held).extend(h)
        rows = sorted(range(0, len(new_curve), 6), key=lambda i: new_curve[i])
        run.curve = array("d", [v for i in rows for v in new_curve[i : i + 6]])
        run.held = new_held
        run.peak_final = len(back) == len(decisions) and run.peak_final_if_kept
        top = max(run.points(), key=lambda p: (p[1], -p[0]))
        run_rows.append((int(run.peak_final), None, top[1], int(top[0]), None, rec.id, run.index))
    else:
        point_rows.append(("; ".join(run.findings), 0, rec.id, run.index, 1))
    return point_rows, run_rows
