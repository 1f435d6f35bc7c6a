"""The ``power_loss_protection`` verdict: one evidence-backed answer per drive.

Evidence comes in three kinds, each listed with what it points to:

- **reported**: the facts the drive gives about itself (``Device.plp_facts``, read by
  :mod:`diskq.probe.plp`; NVMe "no volatile write cache" also from ``volatile_write_cache``);
- **documented**: the vendor datasheet list (:mod:`diskq.analyse.datasheets`);
- **measured**: the runs of the document: durable 1-job writes faster than flash with the
  volatile cache off (strong), a cache A/B where the drive barely cares (strong) or where its
  speed needs the cache (against), the flush check (free flushes: PLP or ignored flushes, weak;
  flushes costing flash time: against).

The rule (criteria.toml ``[power_loss_protection]``): a failing backup is ``degraded``;
evidence that disagrees is ``unknown`` with the conflict listed; measured and (reported or
documented) in favour is ``confirmed``; reported or documented, or strong measured evidence
alone, is ``likely``; documented absence or measured evidence against is ``unlikely``; anything
else is ``unknown``. A drive without evidence is never ``confirmed`` or ``likely``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diskq.analyse import criteria, datasheets
from diskq.analyse.knob import DRIVE, knob
from diskq.analyse.memorybacked import memory_backed
from diskq.analyse.model import PlpEvidence, PowerLossProtection

if TYPE_CHECKING:
    from diskq.analyse.datasheets import Entry
    from diskq.result import Device, ResultDocument, Run

VWC_FIELD = "NVMe Identify Controller vwc"


def evaluate(doc: ResultDocument, *, per_model: bool = False,
             entries: tuple[Entry, ...] | None = None) -> PowerLossProtection:
    """The verdict for a result document (its device's facts, its runs, the datasheet list)."""
    note = memory_backed(doc)
    if note is not None:
        return PowerLossProtection(verdict="unknown", rule="not_applicable", reasons=[f"not applicable: {note}"])
    return evaluate_device(doc.device, doc.runs, per_model=per_model, entries=entries)


def evaluate_device(device: Device, runs: list[Run] | tuple = (), *, per_model: bool = False,
                    entries: tuple[Entry, ...] | None = None) -> PowerLossProtection:
    """The verdict from a device's reported facts, the datasheet list and ``runs`` (may be empty:
    ``diskq identify`` has no measurement).

    ``per_model`` (the database, one row per model): a failing backup reported by one submitted
    drive is that drive's state, not the model's; it is listed and counted as a report that the
    model has a backup, and the verdict is not ``degraded``.
    """
    crit = criteria.section("power_loss_protection")
    evidence: list[PlpEvidence] = []
    conflicts: list[str] = []
    reasons: list[str] = []

    failing = False
    for fact in device.plp_facts:
        points = "failing" if fact.warning else ("plp" if fact.supports == "plp" else "neutral")
        failing = failing or fact.warning
        evidence.append(PlpEvidence(kind="reported", points_to=points, text=f"{fact.field} = {fact.raw}: {fact.meaning}",
                                    source=fact.source))
    if device.volatile_write_cache is False and not any(f.field == VWC_FIELD for f in device.plp_facts):
        evidence.append(PlpEvidence(kind="reported", points_to="plp", source="volatile_write_cache",
                                    text="the drive reports no volatile write cache: a completed write is already "
                                         "in non-volatile media"))
    reported_for = any(e.kind == "reported" and e.points_to in ("plp", "failing") for e in evidence)

    entry, contradiction = datasheets.lookup(device.model, device.firmware, entries)
    if contradiction:
        conflicts.append(contradiction)
    documented_for = documented_against = False
    if entry is not None:
        text = f"{entry.title}: \"{entry.quote}\" (read {entry.read.isoformat()})"
        if entry.plp == "yes":
            documented_for = True
            evidence.append(PlpEvidence(kind="documented", points_to="plp", text=text, source=entry.source))
        else:
            documented_against = True
            why = ("documents protection of data at rest only, not of writes in flight"
                   if entry.plp == "at-rest" else "documents no power-loss protection")
            evidence.append(PlpEvidence(kind="documented", points_to="no_plp", text=f"{text}: {why}",
                                        source=entry.source))

    strong, weak, against = _measured(runs, device.volatile_write_cache, crit, evidence)

    if failing and not per_model:
        return _verdict("degraded", "backup_failing", evidence, conflicts,
                        ["the drive reports its power-loss backup failing: writes in its cache may be lost on "
                         "power failure whatever else the evidence says"])
    if failing:
        reasons.append("a submitted drive of this model reported its power-loss backup failing (that drive's state)")

    if (reported_for or documented_for) and against:
        conflicts.append("the measurement shows flushes waiting for flash or a speed that needs the volatile "
                         "cache, against what the drive reports or its datasheet documents")
    if documented_against and (strong or reported_for):
        conflicts.append("the datasheet documents no protection of writes in flight, but "
                         + ("the drive reports a power-loss backup" if reported_for else
                            "the measurement shows durable writes faster than flash with the cache off"))
    if conflicts:
        return _verdict("unknown", "conflicting_evidence", evidence, conflicts,
                        reasons + ["the evidence disagrees (see conflicts): no answer is preferred"])
    if (strong or weak) and (reported_for or documented_for):
        which = " and ".join(w for w, ok in (("reported", reported_for), ("documented", documented_for)) if ok)
        return _verdict("confirmed", f"measured_and_{'reported' if reported_for else 'documented'}", evidence,
                        conflicts, reasons + [f"measured and {which} evidence agree"])
    if reported_for or documented_for:
        which = "reported by the drive" if reported_for else "documented by a datasheet"
        return _verdict("likely", "reported" if reported_for else "documented", evidence, conflicts,
                        reasons + [f"{which}, not (yet) confirmed by a measurement"])
    if strong:
        return _verdict("likely", "measured", evidence, conflicts,
                        reasons + ["measured only: durable writes far faster than flash with the volatile cache "
                                   "off; no report or datasheet confirms it"])
    if documented_against:
        extra = (["so the almost free flushes mean flushes are not honoured"] if weak else [])
        return _verdict("unlikely", "documented_absent", evidence, conflicts,
                        reasons + ["the datasheet documents no protection of writes in flight"] + extra)
    if against:
        return _verdict("unlikely", "measured_against", evidence, conflicts,
                        reasons + ["the measurement shows the drive waiting for flash on flushes, or fast only "
                                   "with its volatile cache on; nothing reports or documents protection"])
    why = ("flushes cost almost nothing, which means power-loss protection or ignored flushes; nothing tells "
           "which" if weak else "no evidence either way")
    return _verdict("unknown", "too_little_evidence", evidence, conflicts, reasons + [why])


def _verdict(verdict, rule, evidence, conflicts, reasons) -> PowerLossProtection:
    return PowerLossProtection(verdict=verdict, rule=rule, evidence=evidence, conflicts=conflicts, reasons=reasons)


def _solo(run: Run) -> float | None:
    point = next((p for p in run.points if p.numjobs == 1 and not p.interrupted), None)
    return None if point is None else point.iops


def _measured(runs, volatile_write_cache: bool | None, crit: dict, evidence: list[PlpEvidence]) -> tuple[bool, bool, bool]:
    """(strong evidence for, weak evidence for, evidence against) from the runs; each piece is
    appended to ``evidence``."""
    fast = float(crit["fast_sync_iops"])
    ratio_min = float(crit["cache_ab_ratio"])
    strong = weak = against = False
    on = [(r, _solo(r)) for r in runs if r.write_cache == "on" and _solo(r) is not None]
    # "off" by the kernel's knob stops flushes; the drive's cache is untouched: not a cache-off run,
    # nor one whose knob is not known (an import that did not say how: :mod:`diskq.analyse.knob`).
    off = [(r, _solo(r)) for r in runs if r.write_cache == "off" and knob(r.cache_mechanism, "off") == DRIVE
           and _solo(r) is not None]
    for run, iops in on:
        fc = run.flush_check
        if fc is None or fc.honest is None:
            continue
        src = f"flush check, cache on ({run.cache_mechanism or 'drive'})"
        if fc.honest is False:
            weak = True
            evidence.append(PlpEvidence(kind="measured", points_to="plp", source=src, text=(
                f"fdatasync costs almost nothing with the volatile cache on ({fc.sync_iops:.0f} vs "
                f"{fc.nosync_iops:.0f} IOPS without it): power-loss protection, or flushes ignored")))
        else:
            against = True
            evidence.append(PlpEvidence(kind="measured", points_to="no_plp", source=src, text=(
                f"fdatasync costs what writing flash costs with the volatile cache on ({fc.sync_iops:.0f} vs "
                f"{fc.nosync_iops:.0f} IOPS without it): a protected drive need not wait")))
    best_on = max((i for _, i in on), default=None)
    for run, iops in off:
        src = f"1-job IOPS, cache off ({run.cache_mechanism or 'drive'})"
        if best_on is not None and best_on > 0:
            ratio = iops / best_on
            ab = f"cache off {iops:.0f} vs on {best_on:.0f} IOPS at 1 job ({ratio:.0%})"
            if iops >= fast and round(ratio, 9) >= ratio_min:
                strong = True
                evidence.append(PlpEvidence(kind="measured", points_to="plp", source="cache A/B", text=(
                    f"{ab}: the drive does not need its volatile cache to be fast, and writes are durable at "
                    f"{iops:.0f}/s without it")))
            elif iops < fast and round(ratio, 9) < ratio_min and weak:
                against = True
                evidence.append(PlpEvidence(kind="measured", points_to="no_plp", source="cache A/B", text=(
                    f"{ab}: the almost free flushes need the volatile cache; without it the drive waits for flash")))
            elif iops >= fast:
                strong = True
                evidence.append(PlpEvidence(kind="measured", points_to="plp", source=src, text=(
                    f"{ab}: durable writes at {iops:.0f}/s with the cache off, faster than flash (at least {fast:.0f})")))
            else:
                evidence.append(PlpEvidence(kind="measured", points_to="neutral", source="cache A/B", text=(
                    f"{ab}: says nothing either way")))
        elif iops >= fast:
            strong = True
            evidence.append(PlpEvidence(kind="measured", points_to="plp", source=src, text=(
                f"durable writes at {iops:.0f}/s at 1 job with the volatile cache off: faster than flash "
                f"(at least {fast:.0f})")))
        else:
            evidence.append(PlpEvidence(kind="measured", points_to="neutral", source=src, text=(
                f"{iops:.0f} durable writes/s at 1 job with the cache off: some drives with protection are "
                "this slow with their cache off, so this says nothing either way")))
    if volatile_write_cache is False and not off:
        quick = [i for r, i in ((r, _solo(r)) for r in runs) if i is not None and i >= fast
                 and not (r.write_cache == "off" and knob(r.cache_mechanism, "off") != DRIVE)]
        if quick:
            strong = True
            evidence.append(PlpEvidence(kind="measured", points_to="plp", source="1-job IOPS", text=(
                f"durable writes at {max(quick):.0f}/s at 1 job on a drive that reports no volatile cache")))
    return strong, weak, against
