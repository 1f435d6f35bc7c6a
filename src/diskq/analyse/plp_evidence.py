"""The evidence of power-loss protection, gathered: the line's documents, second-hand statements,
the segment prior and the measured runs, each turned into :class:`~diskq.analyse.model.PlpEvidence`
pieces for :func:`diskq.analyse.plp.judge` to weigh."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from diskq.analyse import secondhand
from diskq.analyse.knob import DRIVE, knob
from diskq.analyse.model import PlpEvidence

if TYPE_CHECKING:
    from diskq.analyse.datasheets import Entry
    from diskq.analyse.secondhand import Statement
    from diskq.identity.facts import LineFacts
    from diskq.result import Run

#: the strengths that decide (weak evidence never does)
DECISIVE = ("primary", "secondary")


def documented(facts: LineFacts | None, entry: Entry | None, evidence: list[PlpEvidence]) -> None:
    """The line's datasheet facts and the datasheet list's entry, each as documented evidence."""
    if facts is not None:
        name = f"{facts.vendor} {facts.line}"
        claim = facts.plp or "not stated"
        strength = facts.plp_evidence if facts.plp_evidence in DECISIVE else "secondary"
        quote = f': "{facts.plp_quote}"' if facts.plp_quote else ""
        if claim == "yes":
            evidence.append(
                PlpEvidence(
                    kind="documented",
                    points_to="plp",
                    strength=strength,
                    source=facts.plp_source,
                    text=f"{name} datasheet facts state power-loss protection{quote}",
                )
            )
        elif claim == "at-rest-only":
            evidence.append(
                PlpEvidence(
                    kind="documented",
                    points_to="no_plp",
                    strength=strength,
                    source=facts.plp_source,
                    text=f"{name} datasheet facts state protection of data at rest only{quote}: not power-loss "
                    "protection of the volatile write cache, so acknowledged writes may be lost",
                )
            )
        elif claim == "no":
            evidence.append(
                PlpEvidence(
                    kind="documented",
                    points_to="no_plp",
                    strength=strength,
                    source=facts.plp_source,
                    text=f"{name} datasheet facts state no power-loss protection{quote}",
                )
            )
        else:
            evidence.append(
                PlpEvidence(
                    kind="documented",
                    points_to="neutral",
                    source=facts.plp_source,
                    text=f"{name} datasheet facts do not state power-loss protection either way",
                )
            )
    if entry is None or (facts is not None and facts.plp_source and facts.plp_source == entry.source):
        return
    text = f'{entry.title}: "{entry.quote}" (read {entry.read.isoformat()})'
    if entry.plp == "yes":
        evidence.append(
            PlpEvidence(kind="documented", points_to="plp", text=text, source=entry.source, strength=entry.evidence)
        )
    else:
        why = (
            "documents protection of data at rest only, not of writes in flight"
            if entry.plp == "at-rest"
            else "documents no power-loss protection"
        )
        evidence.append(
            PlpEvidence(
                kind="documented",
                points_to="no_plp",
                text=f"{text}: {why}",
                source=entry.source,
                strength=entry.evidence,
            )
        )


_CLAIM_WORDS = {
    "yes": "lists it among drives with power failure protection",
    "no": "says it has no power-loss protection",
    "at-rest-only": "says it protects data at rest only, which is not power-loss protection",
    "capacitor-self-test": "names a power-loss capacitor self-test attribute for it",
    "no-dram-cache": "says it has no DRAM cache: no volatile write cache to lose",
}


def second_hand(s: Statement) -> PlpEvidence:
    who = {
        "drive-database": "smartmontools' drive database",
        "hardware-list": "the OpenZFS hardware list",
        "review": "a reviewer",
    }[s.kind]
    return PlpEvidence(
        kind=s.kind,
        points_to=secondhand.POINTS_TO[s.claim],
        strength=s.strength,
        source=s.source,
        text=f'{who} {_CLAIM_WORDS[s.claim]}: "{s.quote}" ({s.revision}; {s.strength}: {s.why}; checked {s.checked})',
    )


def segment_prior(
    segment: str | None, facts: LineFacts | None, evidence: list[PlpEvidence], statements: tuple[Statement, ...] | None
) -> None:
    """The segment as a weak prior, named as such, with the general statements behind it."""
    if segment is None:
        return
    how = f" (known by {facts.segment_basis})" if facts is not None and facts.segment_basis else ""
    backing = secondhand.about_segment(segment, statements)
    cited = "".join(f'; "{s.quote}" ({s.source})' for s in backing)
    if segment == "data-centre":
        evidence.append(
            PlpEvidence(
                kind="segment",
                points_to="plp",
                strength="weak",
                text=(
                    f"segment prior: a data-centre line{how}; many data-centre lines document power-loss protection, "
                    "but not all do, and this prior never decides"
                ),
            )
        )
    elif segment in ("client", "NAS"):
        evidence.append(
            PlpEvidence(
                kind="segment",
                points_to="no_plp",
                strength="weak",
                source=backing[0].source if backing else None,
                text=(
                    f"segment prior: a {segment} line{how}; client and NAS drives rarely protect their volatile cache "
                    f"(the Intel SSD 750, a consumer version of a data-centre drive, is a documented exception){cited}"
                ),
            )
        )


def _solo(run: Run) -> float | None:
    point = next((p for p in run.points if p.numjobs == 1 and not p.interrupted), None)
    return None if point is None else point.iops


def measured(
    runs: Sequence[Run], volatile_write_cache: bool | None, crit: dict, evidence: list[PlpEvidence]
) -> tuple[bool, bool, bool]:
    """(strong evidence for, weak evidence for, evidence against) from the runs; each piece is
    appended to ``evidence``."""
    fast = float(crit["fast_sync_iops"])
    ratio_min = float(crit["cache_ab_ratio"])
    strong = weak = against = False
    on = [(r, _solo(r)) for r in runs if r.write_cache == "on" and _solo(r) is not None]
    # "off" by the kernel's knob stops flushes; the drive's cache is untouched: not a cache-off run,
    # nor one whose knob is not known (an import that did not say how: :mod:`diskq.analyse.knob`).
    off = [
        (r, _solo(r))
        for r in runs
        if r.write_cache == "off" and knob(r.cache_mechanism, "off") == DRIVE and _solo(r) is not None
    ]
    for run, _iops in on:
        fc = run.flush_check
        if fc is None or fc.honest is None:
            continue
        src = f"flush check, cache on ({run.cache_mechanism or 'drive'})"
        if fc.honest is False:
            weak = True
            evidence.append(
                PlpEvidence(
                    kind="measured",
                    points_to="plp",
                    source=src,
                    strength="weak",
                    text=(
                        f"fdatasync costs almost nothing with the volatile cache on ({fc.sync_iops:.0f} vs "
                        f"{fc.nosync_iops:.0f} IOPS without it): power-loss protection, or flushes ignored"
                    ),
                )
            )
        else:
            against = True
            evidence.append(
                PlpEvidence(
                    kind="measured",
                    points_to="no_plp",
                    source=src,
                    strength="primary",
                    text=(
                        f"fdatasync costs what writing flash costs with the volatile cache on ({fc.sync_iops:.0f} vs "
                        f"{fc.nosync_iops:.0f} IOPS without it): a protected drive need not wait"
                    ),
                )
            )
    best_on = max((i for _, i in on), default=None)
    for run, iops in off:
        src = f"1-job IOPS, cache off ({run.cache_mechanism or 'drive'})"
        if best_on is not None and best_on > 0:
            ratio = iops / best_on
            ab = f"cache off {iops:.0f} vs on {best_on:.0f} IOPS at 1 job ({ratio:.0%})"
            if iops >= fast and round(ratio, 9) >= ratio_min:
                strong = True
                evidence.append(
                    PlpEvidence(
                        kind="measured",
                        points_to="plp",
                        source="cache A/B",
                        strength="primary",
                        text=(
                            f"{ab}: the drive does not need its volatile cache to be fast, and writes are durable at "
                            f"{iops:.0f}/s without it"
                        ),
                    )
                )
            elif iops < fast and round(ratio, 9) < ratio_min and weak:
                against = True
                evidence.append(
                    PlpEvidence(
                        kind="measured",
                        points_to="no_plp",
                        source="cache A/B",
                        strength="primary",
                        text=(
                            f"{ab}: the almost free flushes need the volatile cache; without it the drive waits for flash"
                        ),
                    )
                )
            elif iops >= fast:
                strong = True
                evidence.append(
                    PlpEvidence(
                        kind="measured",
                        points_to="plp",
                        source=src,
                        strength="primary",
                        text=(
                            f"{ab}: durable writes at {iops:.0f}/s with the cache off, faster than flash (at least {fast:.0f})"
                        ),
                    )
                )
            else:
                evidence.append(
                    PlpEvidence(
                        kind="measured",
                        points_to="neutral",
                        source="cache A/B",
                        text=(f"{ab}: says nothing either way"),
                    )
                )
        elif iops >= fast:
            strong = True
            evidence.append(
                PlpEvidence(
                    kind="measured",
                    points_to="plp",
                    source=src,
                    strength="primary",
                    text=(
                        f"durable writes at {iops:.0f}/s at 1 job with the volatile cache off: faster than flash "
                        f"(at least {fast:.0f})"
                    ),
                )
            )
        else:
            evidence.append(
                PlpEvidence(
                    kind="measured",
                    points_to="neutral",
                    source=src,
                    text=(
                        f"{iops:.0f} durable writes/s at 1 job with the cache off: some drives with protection are "
                        "this slow with their cache off, so this says nothing either way"
                    ),
                )
            )
    if volatile_write_cache is False and not off:
        quick = [
            i
            for r, i in ((r, _solo(r)) for r in runs)
            if i is not None and i >= fast and not (r.write_cache == "off" and knob(r.cache_mechanism, "off") != DRIVE)
        ]
        if quick:
            strong = True
            evidence.append(
                PlpEvidence(
                    kind="measured",
                    points_to="plp",
                    source="1-job IOPS",
                    strength="primary",
                    text=(f"durable writes at {max(quick):.0f}/s at 1 job on a drive that reports no volatile cache"),
                )
            )
    return strong, weak, against
