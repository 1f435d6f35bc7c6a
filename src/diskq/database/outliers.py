"""Which submissions lie far outside the evidence for their model, as aggregation judges them
before it counts them (:mod:`diskq.database.aggregate`): per cache setting against every
submission's figures at that setting, and by their 1-job IOPS against the model's public figures
(the legacy rows of the community table). The rule itself and its limits are
:mod:`diskq.analyse.outliers` and ``[outliers]`` in ``criteria.toml``.

Pure functions over :class:`~diskq.database.record.SubmissionRecord`; no I/O.
"""

from __future__ import annotations

import math
import statistics

from diskq.database.record import SubmissionRecord
from diskq.database.settings import knob, setting_label


def _key_figures(rec: SubmissionRecord) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """(1-job IOPS, max IOPS) per setting of one submission, as aggregation counts them."""
    out = {}
    for run in sorted(rec.runs, key=lambda r: (-len(r.curve), r.index)):
        key = (run.write_cache, knob(run.cache_mechanism))
        pts = run.points()
        if key in out or not pts:
            continue
        ones = [p[1] for p in pts if int(p[0]) == 1]
        out[key] = (max(ones) if ones else None, max(p[1] for p in pts))
    return out


def public_figures(records: list[SubmissionRecord]) -> list[tuple[str, float]]:
    """(submission id, 1-job IOPS) of each published measurement among ``records``: today the
    legacy rows (the community table), each its highest 1-job figure over its settings."""
    out = []
    for rec in records:
        if rec.legacy:
            ones = [one for one, _ in _key_figures(rec).values() if one]
            if ones:
                out.append((rec.id, max(ones)))
    return sorted(out)


def outliers(
    records: list[SubmissionRecord], crit: dict | None = None, public: list[tuple[str, float]] | tuple = ()
) -> tuple[dict[str, str], list[str]]:
    """(submission id -> why it lies far outside all the evidence for its model, notes) by
    ``[outliers]`` in ``criteria.toml`` (:mod:`diskq.analyse.outliers` states the rule):

    * per cache setting, its 1-job and its max IOPS against every submission's at that setting;
    * its 1-job IOPS against the model's public figures (``public``: (id, figure), those of
      ``records`` themselves left out): the submission's setting closest to them is judged,
      since a published figure does not say its cache state; a first submission far from them
      is held back."""
    from diskq.analyse.outliers import judge

    if crit is None:
        try:
            from diskq.analyse import criteria
        except ImportError:
            return {}, []
        crit = criteria.section("outliers")
    limit, least = float(crit["max_ratio"]), int(crit["min_figures"])
    figures = {r.id: _key_figures(r) for r in records}
    out: dict[str, str] = {}
    notes: list[str] = []
    for key in sorted({k for f in figures.values() for k in f}):
        for i, what in ((0, "1-job IOPS"), (1, "max IOPS")):
            values = {rid: f[key][i] for rid, f in figures.items() if key in f and f[key][i] is not None}
            verdict = judge(
                values, [], max_ratio=limit, min_figures=least, what=what, where=f"at cache {setting_label(*key)}"
            )
            for rid, why in verdict.far.items():
                out.setdefault(rid, why + ": not aggregated")
            if verdict.note and verdict.note not in notes:
                notes.append(verdict.note)
    own = {r.id for r in records}
    refs = [v for rid, v in public if rid not in own]
    if refs:
        center = statistics.median(refs)
        closest = {}
        legacy = {r.id for r in records if r.legacy}  # public figures themselves are not held back
        for rid, f in figures.items():
            ones = [one for one, _ in f.values() if one] if rid not in legacy else []
            if ones:
                closest[rid] = min(ones, key=lambda v: abs(math.log(v / center)))
        verdict = judge(
            closest,
            refs,
            max_ratio=limit,
            min_figures=least,
            what="1-job IOPS",
            where="(its cache setting closest to them)",
        )
        for rid, why in verdict.far.items():
            out.setdefault(rid, why + ": held back until more evidence agrees with it")
        if verdict.note and verdict.note not in notes:
            notes.append(verdict.note)
    return out, notes
