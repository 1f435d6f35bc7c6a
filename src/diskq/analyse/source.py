"""What the source of a curve says about it beyond its points: the community table's rows.

The community table gives three figures per drive: the 1-job IOPS, the peak IOPS and "peak
#jobs", the job count at which the contributor's own sweep peaked. The contributor measured
beyond that job count and IOPS did not rise (``peak_final``), and described the curve in a few
words ("linear up to ~8 jobs, then asymptotic", "2 jobs already saturate"). Two points cannot
tell those shapes apart, so where they cannot, the words decide (:func:`read_words`; see
``[contributor_words]`` in ``criteria.toml``).

The facts are passed to the analysis explicitly (:func:`diskq.analyse.annotate`), never read
from a document's notes: only the importer of a source knows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diskq.analyse.model import ScalingClass


@dataclass(frozen=True)
class SourceSweep:
    """What the source says about one run's curve."""

    peak_final: bool = False  #: the source measured beyond the highest point; IOPS did not rise there
    words: str | None = None  #: the contributor's own description of the curve, as published
    #: the curve's points were reviewed where their figures came from (the database reviews each
    #: submission, and decides conflicts with the model's other evidence): every point stands
    settled: bool = False
    #: what that review found and decided (conflicts, observations), for every verdict to carry
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reading:
    """What the contributor's words say: a class, perhaps a knee, and the words themselves."""

    scaling: ScalingClass
    knee: int | None
    words: str


_REGRESS = re.compile(r"\bmore jobs slow down\b", re.I)
_SATURATE = re.compile(r"\b(\d+) jobs? already saturates?\b", re.I)
_LINEAR_UP_TO = re.compile(r"\blinear up to ~?\s*(\d+) jobs?\b", re.I)
_LINEAR_CAPPED = re.compile(r"\blinear until capped\b", re.I)
_ASYMPTOTIC = re.compile(r"^\s*asymptotic\b", re.I)
_LINEAR = re.compile(r"^\s*linear\s*$", re.I)


def shape_words(notes: str) -> str | None:
    """The part of a table's notes cell that describes the curve (the first ``;``- or
    ``.``-separated phrase without figures).

    >>> shape_words("asymptotic; cache on: 5094 @ 1job, 27521 @16")
    'asymptotic'
    >>> shape_words("more jobs slow down. 2: 2651, 6: 1088")
    'more jobs slow down'
    """
    for part in re.split(r"[;.]", notes or ""):
        part = part.strip()
        if part and not re.search(r"\d+\s*[:@]", part) and not part.lower().startswith("cache"):
            return part
    return None


def read_words(words: str | None) -> Reading | None:
    """The class and knee the contributor's words give, None when they name no shape.

    >>> read_words("linear up to ~8 jobs, then asymptotic")
    Reading(scaling='asymptotic', knee=8, words='linear up to ~8 jobs, then asymptotic')
    >>> read_words("linear until capped").knee is None
    True
    >>> read_words("2 jobs already saturate").scaling
    'asymptotic'
    """
    if not words:
        return None
    text = words.strip()
    if _REGRESS.search(text):
        return Reading("regressing", None, text)
    if m := _LINEAR_UP_TO.search(text):
        return Reading("asymptotic", int(m.group(1)), text)
    if _LINEAR_CAPPED.search(text):
        return Reading("asymptotic", None, text)
    if _SATURATE.search(text) or _ASYMPTOTIC.search(text):
        return Reading("asymptotic", None, text)
    if _LINEAR.search(text):
        return Reading("linear", None, text)
    return None
