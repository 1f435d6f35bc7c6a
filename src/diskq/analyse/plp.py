"""The ``power_loss_protection`` verdict: one evidence-backed answer per drive or product line.

Evidence comes in several kinds, each listed with what it points to and how much it weighs
(``strength``: primary, secondary, weak; criteria.toml ``[power_loss_protection]``):

- **reported**: the facts the drive gives about itself (``Device.plp_facts``, read by
  :mod:`diskq.probe.plp`; NVMe ``vwc`` = 0, "no volatile write cache"): primary;
- **documented**: the line's datasheet facts (:class:`~diskq.identity.facts.LineFacts`: ``yes``,
  ``at-rest-only``, ``no`` or ``not stated``, primary or secondary) and the datasheet list
  (:mod:`diskq.analyse.datasheets`). Protection of data at rest only is not power-loss protection;
- **second hand** (:mod:`diskq.analyse.secondhand`): smartmontools' drive database naming a capacitor
  self-test for the line, the OpenZFS hardware list, reviewers; secondary or weak, with their source;
- **measured**: the runs: durable 1-job writes faster than flash with the volatile cache off
  (primary), a cache A/B where the drive barely cares (primary) or where its speed needs the cache
  (against), the flush check (free flushes: PLP or ignored flushes, weak; flushes costing flash
  time: against);
- **segment**: the line's segment, a weak prior named as such.

The rule: a target that is not a drive (loop, zram, RAM, a file: :mod:`diskq.analyse.hostdevice`)
is ``not-applicable``; a failing backup is ``degraded``; primary or secondary evidence on both
sides is ``unknown`` with the conflict listed; a strong measurement and other primary or
secondary evidence in favour, or a free flush and the drive's report or the vendor's text, is
``confirmed``; primary or secondary evidence in favour, or a strong measurement alone,
is ``likely``; primary or secondary evidence against is ``unlikely``; with nothing else, a client
or NAS segment is ``unlikely`` by the segment prior; anything else is ``unknown``. Weak evidence
never decides, and weak evidence against the answer is listed as outweighed. A drive without
evidence is never ``confirmed`` or ``likely``.

:func:`judge` is the pure rule over the evidence (it also answers for a line nothing measured);
:func:`evaluate` and :func:`evaluate_device` gather the evidence of a result or a drive;
:mod:`diskq.analyse.plp_evidence` turns each kind of evidence into pieces for the rule to weigh.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from diskq.analyse import criteria, datasheets, plp_evidence, secondhand
from diskq.analyse.model import PlpEvidence, PowerLossProtection
from diskq.analyse.plp_evidence import DECISIVE

if TYPE_CHECKING:
    from diskq.analyse.datasheets import Entry
    from diskq.analyse.model import PlpFact
    from diskq.analyse.secondhand import Statement
    from diskq.identity.facts import LineFacts
    from diskq.result import Device, ResultDocument, Run

VWC_FIELD = "NVMe Identify Controller vwc"
NOT_APPLICABLE = "not-applicable"


def not_applicable(why: str) -> PowerLossProtection:
    """The verdict for a target that is not a drive: ``why`` says what it is."""
    return PowerLossProtection(verdict=NOT_APPLICABLE, rule="not_applicable", reasons=[f"not applicable: {why}"])


def evaluate(
    doc: ResultDocument,
    *,
    per_model: bool = False,
    entries: tuple[Entry, ...] | None = None,
    facts: LineFacts | None = None,
) -> PowerLossProtection:
    """The verdict for a result document (its device's facts, its runs, the datasheet list, and the
    line's facts when the caller knows the line)."""
    from diskq.analyse.hostdevice import not_a_drive

    host = not_a_drive(doc)
    if host is not None:
        return not_applicable(host)
    return evaluate_device(doc.device, doc.runs, per_model=per_model, entries=entries, facts=facts, checked=True)


def evaluate_device(
    device: Device,
    runs: Sequence[Run] = (),
    *,
    per_model: bool = False,
    entries: tuple[Entry, ...] | None = None,
    facts: LineFacts | None = None,
    checked: bool = False,
) -> PowerLossProtection:
    """The verdict from a device's reported facts, the datasheet list and ``runs`` (may be empty:
    ``diskq identify`` has no measurement). ``checked``: the caller already knows it is a drive.

    ``per_model`` (the database, one row per model): a failing backup reported by one submitted
    drive is that drive's state, not the model's; it is listed and counted as a report that the
    model has a backup, and the verdict is not ``degraded``.
    """
    if not checked:
        from diskq.analyse.hostdevice import not_a_drive
        from diskq.result import Method, ResultDocument

        host = not_a_drive(
            ResultDocument(created="1970-01-01T00:00:00Z", method=Method(), device=device, runs=list(runs))
        )
        if host is not None:
            return not_applicable(host)
    return judge(
        facts,
        runs,
        device.volatile_write_cache,
        None,
        reported=device.plp_facts,
        model=device.model,
        firmware=device.firmware,
        per_model=per_model,
        entries=entries,
    )


def judge(
    facts: LineFacts | None,
    runs: Sequence[Run] | None,
    vwc: bool | None,
    segment: str | None,
    *,
    reported: Sequence[PlpFact] = (),
    model: str | None = None,
    firmware: str | None = None,
    per_model: bool = False,
    entries: tuple[Entry, ...] | None = None,
    statements: tuple[Statement, ...] | None = None,
) -> PowerLossProtection:
    """The verdict from the evidence alone (pure apart from reading diskq's packaged lists).

    ``facts``: the line's datasheet facts, or None; ``runs``: the measured runs, or None;
    ``vwc``: NVMe Identify Controller vwc bit 0 as a bool (True: a volatile write cache exists),
    or None; ``segment``: ``data-centre``, ``client`` or ``NAS`` (None: the one of ``facts``).
    ``reported``: the facts a drive reported; ``model``/``firmware``: the model string a drive
    reports, to find the datasheet list's entry and model-keyed second-hand statements.
    ``entries``/``statements``: the lists to use (default: the ones diskq ships).

    >>> from diskq.identity.facts import LineFacts
    >>> mx = LineFacts(vendor="Crucial", line="MX500", segment="client", plp="at-rest-only",
    ...                plp_evidence="secondary", plp_quote="Integrated Power Loss Immunity")
    >>> v = judge(mx, None, None, None, entries=(), statements=())
    >>> v.verdict, v.rule
    ('unlikely', 'documented_absent')
    """
    crit = criteria.section("power_loss_protection")
    evidence: list[PlpEvidence] = []
    conflicts: list[str] = []
    reasons: list[str] = []
    if segment is None and facts is not None:
        segment = facts.segment

    failing = False
    for fact in reported:
        points = "failing" if fact.warning else ("plp" if fact.supports == "plp" else "neutral")
        failing = failing or fact.warning
        evidence.append(
            PlpEvidence(
                kind="reported",
                points_to=points,
                source=fact.source,
                text=f"{fact.field} = {fact.raw}: {fact.meaning}",
                strength=None if points == "neutral" else "primary",
            )
        )
    if vwc is False and not any(f.field == VWC_FIELD for f in reported):
        evidence.append(
            PlpEvidence(
                kind="reported",
                points_to="plp",
                source="volatile_write_cache",
                strength="primary",
                text="the drive reports no volatile write cache: a completed write is already in non-volatile media",
            )
        )

    entry, contradiction = datasheets.lookup(model, firmware, entries)
    if contradiction:
        conflicts.append(contradiction)
    plp_evidence.documented(facts, entry, evidence)
    for s in secondhand.about(facts, model, statements):
        evidence.append(plp_evidence.second_hand(s))
    plp_evidence.measured(runs or (), vwc, crit, evidence)
    plp_evidence.segment_prior(segment, facts, evidence, statements)

    if failing and not per_model:
        return _verdict(
            "degraded",
            "backup_failing",
            evidence,
            conflicts,
            [
                "the drive reports its power-loss backup failing: writes in its cache may be lost on "
                "power failure whatever else the evidence says"
            ],
        )
    if failing:
        reasons.append("a submitted drive of this model reported its power-loss backup failing (that drive's state)")

    def pieces(points: str, strengths: tuple[str, ...], kinds: tuple[str, ...] | None = None) -> list[PlpEvidence]:
        ok = ("plp", "failing") if points == "plp" else ("no_plp",)
        return [
            e for e in evidence if e.points_to in ok and e.strength in strengths and (kinds is None or e.kind in kinds)
        ]

    decisive_for, decisive_against = pieces("plp", DECISIVE), pieces("no_plp", DECISIVE)
    if decisive_for and decisive_against:
        conflicts.append(
            f"evidence for protection ({_listed(decisive_for)}) disagrees with evidence against it "
            f"({_listed(decisive_against)})"
        )
    if conflicts:
        return _verdict(
            "unknown",
            "conflicting_evidence",
            evidence,
            conflicts,
            reasons + ["the evidence disagrees (see conflicts): no answer is preferred"],
        )

    measured_for = pieces("plp", ("primary", "weak"), ("measured",))
    strong_measured = pieces("plp", ("primary",), ("measured",))
    other_for = [e for e in decisive_for if e.kind != "measured"]
    reported_for = [e for e in other_for if e.kind == "reported"]
    documented_for = [e for e in other_for if e.kind == "documented"]
    # a free flush (weak: protection or ignored flushes) confirms only the drive's own report or the
    # vendor's text; a strong measurement confirms secondary evidence too
    primary_other = [e for e in other_for if e.strength == "primary"]
    if (strong_measured and other_for) or (measured_for and primary_other):
        which = "reported" if reported_for else ("documented" if documented_for else "secondhand")
        return _verdict(
            "confirmed",
            f"measured_and_{which}",
            evidence,
            conflicts,
            reasons + [f"measured and {_kinds(other_for)} evidence agree"] + _outweighed(evidence, "plp"),
        )
    if other_for:
        rule = "reported" if reported_for else ("documented" if documented_for else "secondhand")
        what = {
            "reported": "reported by the drive",
            "documented": "documented by the line's datasheet",
            "secondhand": "stated at second hand (" + _kinds(other_for) + ")",
        }[rule]
        weight = "primary" if any(e.strength == "primary" for e in other_for) else "secondary"
        return _verdict(
            "likely",
            rule,
            evidence,
            conflicts,
            reasons
            + [f"{what} ({weight} evidence), not (yet) confirmed by a measurement"]
            + _outweighed(evidence, "plp"),
        )
    if strong_measured:
        return _verdict(
            "likely",
            "measured",
            evidence,
            conflicts,
            reasons
            + [
                "measured only: durable writes far faster than flash with the volatile cache "
                "off; no report or datasheet confirms it"
            ]
            + _outweighed(evidence, "plp"),
        )
    weak_flush = pieces("plp", ("weak",), ("measured",))
    if decisive_against:
        kinds = {e.kind for e in decisive_against}
        if "documented" in kinds:
            rule, why = (
                "documented_absent",
                (
                    "the line's documents state no protection of writes in flight (or of "
                    "data at rest only, which is not power-loss protection)"
                ),
            )
        elif "measured" in kinds:
            rule, why = (
                "measured_against",
                (
                    "the measurement shows the drive waiting for flash on flushes, or fast "
                    "only with its volatile cache on; nothing reports or documents protection"
                ),
            )
        else:
            rule, why = "secondhand_absent", f"stated at second hand ({_kinds(decisive_against)})"
        extra = ["so the almost free flushes mean flushes are not honoured"] if weak_flush else []
        return _verdict(
            "unlikely", rule, evidence, conflicts, reasons + [why] + extra + _outweighed(evidence, "no_plp")
        )
    weak_for = pieces("plp", ("weak",))
    prior = [e for e in evidence if e.kind == "segment" and e.points_to == "no_plp"]
    if prior and not weak_for:
        return _verdict(
            "unlikely",
            "segment_prior",
            evidence,
            conflicts,
            reasons
            + [
                f"weak prior from the segment alone ({segment}): no primary or secondary evidence "
                "about this line either way; measure it (diskq bench --cache both)"
            ],
        )
    if weak_flush and len(weak_for) == len(weak_flush) and not prior:
        why = "flushes cost almost nothing, which means power-loss protection or ignored flushes; nothing tells which"
    elif weak_for or prior:
        why = "only weak evidence, which never decides: " + "; ".join(
            f"{e.kind} {'for' if e.points_to == 'plp' else 'against'}" for e in weak_for + prior
        )
    else:
        why = "no evidence either way"
    return _verdict("unknown", "too_little_evidence", evidence, conflicts, reasons + [why])


def _listed(pieces: list[PlpEvidence]) -> str:
    return " | ".join(f"{e.kind}, {e.strength}: {e.text}" for e in pieces)


def _kinds(pieces: list[PlpEvidence]) -> str:
    return ", ".join(dict.fromkeys(f"{e.kind}, {e.strength}" for e in pieces))


def _outweighed(evidence: list[PlpEvidence], side: str) -> list[str]:
    """Weak evidence pointing the other way than ``side``, named as outweighed (never silent)."""
    other = ("no_plp",) if side == "plp" else ("plp",)
    weak = [e for e in evidence if e.points_to in other and e.strength == "weak"]
    return [f"outweighed: weak {e.kind} evidence points the other way ({e.text})" for e in weak]


def _verdict(verdict, rule, evidence, conflicts, reasons) -> PowerLossProtection:
    return PowerLossProtection(verdict=verdict, rule=rule, evidence=evidence, conflicts=conflicts, reasons=reasons)
