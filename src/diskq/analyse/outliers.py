"""Which submissions of a model lie far outside all the evidence for it (``[outliers]`` in
``criteria.toml``).

The evidence for one figure (1-job or max IOPS at one cache setting) is every submission's
figure and, where there are any, the model's public figures (published measurements: today the
legacy rows imported from the community table). The rule must single out a forged figure even
among three submissions, two genuine and one forged. Judging each submission against the median
of the *others* fails there: a genuine submission's "others" are one genuine and one forged
figure, whose median lies halfway to the forgery, so every submission looks far and none is
singled out. So each figure is judged against the median of *all* the evidence, itself included:

* three or more figures: the reference is their median. While fewer than half the figures are
  forged, the median is a genuine figure (of three, the middle one), so genuine figures stay
  within ``max_ratio`` of it and a forged one far from it does not; the median cannot be moved
  by one far figure however far it is. If half or more of the figures lie far from the median,
  the evidence disagrees too widely to single any out: none is (and a note says so);
* two figures, one submission and one public figure: the public figure is the reference (a
  first submission far from what the model is published to do is held back);
* two submissions and nothing else, or a single figure: no majority, nothing is judged.

Pure: figures and references come in, reasons go out.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class Judgement:
    """Submission id -> why it is far from the evidence; ``note`` when none could be singled out."""

    far: dict[str, str] = field(default_factory=dict)
    note: str | None = None


def _outside(ratio: float, limit: float) -> bool:
    return ratio > limit * (1 + 1e-9) or ratio < 1 / limit * (1 - 1e-9)


def judge(
    values: dict[str, float],
    references: list[float],
    *,
    max_ratio: float,
    min_figures: int = 3,
    what: str = "figure",
    where: str = "",
) -> Judgement:
    """Judge each submission's figure (``values``: id -> figure) against all the evidence:
    ``values`` and the public ``references`` (see the module's rule; ``min_figures`` is the
    least evidence the median rule needs, 3). Figures that are not positive take no part."""
    mine = {k: v for k, v in values.items() if v is not None and v > 0}
    refs = [r for r in references if r is not None and r > 0]
    evidence = [*mine.values(), *refs]
    if not mine or len(evidence) < 2:
        return Judgement()
    if len(evidence) < max(min_figures, 3):
        if len(evidence) != 2 or len(refs) != 1:
            return Judgement()  # two submissions alone: no majority to stand apart from
        center = refs[0]
        against = f"the model's public figure {center:,.0f}"
    else:
        center = statistics.median(evidence)
        parts = [f"{len(mine)} submission{'s' if len(mine) != 1 else ''}"]
        if refs:
            parts.append(f"{len(refs)} public figure{'s' if len(refs) != 1 else ''}")
        against = f"the median {center:,.0f} of all {len(evidence)} figures of this model ({' and '.join(parts)})"
    far = {}
    for key, value in sorted(mine.items()):
        ratio = value / center
        if _outside(ratio, max_ratio):
            at = f" {where}" if where else ""
            far[key] = f"{what} {value:,.0f}{at} is {ratio:.2g}x {against} (more than {max_ratio:g}x apart)"
    if len(evidence) >= 3 and 2 * len(far) >= len(evidence):
        at = f" {where}" if where else ""
        return Judgement(
            note=(
                f"the figures of this model disagree widely ({len(far)} of {len(evidence)} {what} "
                f"figures{at} lie far from their median): none is singled out"
            )
        )
    return Judgement(far=far)
