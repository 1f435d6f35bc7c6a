"""Answers for a product line known only from its datasheet: the documented facts
(:class:`~diskq.identity.facts.LineFacts`: segment, interface, power-loss protection) bound the
tier, and the figures of its peers (drives of the same segment, interface and protection, given
by the caller as :class:`Peer`) estimate it, named as an estimate with the peers' count, range
and median (criteria.toml ``[answer]``). Same shape as every answer (:mod:`diskq.analyse.answer`).

>>> from diskq.identity.facts import LineFacts
>>> facts = LineFacts("Acme", "Q1", segment="client", interface="NVMe", plp="no")
>>> peers = [Peer(f"P{i}", "client", "NVMe", "no", ceph_iops=x) for i, x in enumerate([400, 700, 900])]
>>> a = from_datasheet(facts, peers)["ceph_waldb"]
>>> (a["tier"], a["basis"], a["peers"])
('unsuitable', 'estimate', 3)
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from diskq.analyse import criteria
from diskq.analyse.answer import MEASURE, TIERS, UNKNOWN, USES, lower, tier_of, verdict

if TYPE_CHECKING:
    from diskq.identity.facts import LineFacts


@dataclass(frozen=True)
class Peer:
    """A drive whose figures decide, with the facts that make it a peer: its line's segment,
    interface (SATA, SAS, NVMe) and power-loss protection claim (``LineFacts.plp``)."""

    name: str
    segment: str | None
    interface: str | None
    plp: str | None
    ceph_iops: float | None = None  #: the 1-job figure its Ceph WAL/DB tier rests on
    slog_mb_s: float | None = None
    etcd_p99_ms: float | None = None
    postgres_commits: float | None = None
    basis: str = "measured"
    media: str = "NAND flash"  #: :func:`media_of` its line: 3D XPoint drives are no NAND drive's peers

    @classmethod
    def from_answer(cls, name: str, facts: LineFacts, answer: dict) -> Peer:
        """A peer from a stored answer: only figures that decided a tier count."""

        def fig(use):
            a = answer.get(use) or {}
            return (
                a.get("figure") if a.get("tier") in TIERS and a.get("basis") in ("measured", "public-figure") else None
            )

        basis = (answer.get("ceph_waldb") or {}).get("basis") or "measured"
        return cls(
            name,
            facts.segment,
            facts.interface,
            facts.plp,
            fig("ceph_waldb"),
            fig("zfs_slog"),
            fig("etcd"),
            fig("postgres_wal"),
            basis,
            media_of(facts),
        )


def media_of(facts: LineFacts) -> str:
    """``3D XPoint`` (Optane: written in place, no volatile cache to flush) or ``NAND flash``: a
    flush costs so differently on the two that the figures of one estimate nothing of the other."""
    text = f"{facts.nand or ''} {facts.line}".casefold()
    return "3D XPoint" if "xpoint" in text or "optane" in text else "NAND flash"


def _protected(plp: str | None) -> str:
    return "with PLP" if plp == "yes" else "without PLP" if plp in ("no", "at-rest-only") else "PLP not stated"


def group_name(segment: str | None, interface: str | None, plp: str | None) -> str:
    """``client NVMe without PLP``."""
    return " ".join(x for x in (segment or "segment unknown", interface or "interface unknown", _protected(plp)))


def _ceilings(facts: LineFacts, crit: dict) -> dict[str, tuple[str, str]]:
    """What the datasheet bounds: use -> (ceiling, why)."""
    a = crit["answer"]
    out = {}
    if facts.plp in ("no", "at-rest-only"):
        claim = "no power-loss protection" if facts.plp == "no" else "protection of data at rest only"
        why = (
            f"the datasheet states {claim}: every flush waits for flash, so no honest 1-job figure reaches "
            f"{crit['power_loss_protection']['fast_sync_iops']:,} per second"
        )
        out["ceph_waldb"] = out["postgres_wal"] = (a["no_plp_ceiling"], why)
    if facts.interface == "SATA":
        out["zfs_slog"] = (a["sata_slog_ceiling"], "a SATA link carries about 600 MB/s")
    return out


def from_datasheet(facts: LineFacts, peers: Sequence[Peer] = (), crit: dict | None = None) -> dict[str, dict]:
    """The answer for a product line known only from its datasheet: its facts bound the tier; an
    estimate from ``peers`` of its segment, interface and protection fills it in."""
    crit = crit or criteria.load()
    bounds = _ceilings(facts, crit)
    media = media_of(facts)
    group = [
        p
        for p in peers
        if (p.segment, p.interface, _protected(p.plp), p.media)
        == (facts.segment, facts.interface, _protected(facts.plp), media)
        and facts.segment
        and facts.interface
    ]
    name = group_name(facts.segment, facts.interface, facts.plp) + (f", {media}" if media != "NAND flash" else "")
    stated = [
        f"{facts.vendor} {facts.line}: "
        + ", ".join(x for x in (facts.segment, facts.interface, _protected(facts.plp)) if x)
        + " (datasheet)"
    ]
    attr = {
        "ceph_waldb": "ceph_iops",
        "zfs_slog": "slog_mb_s",
        "etcd": "etcd_p99_ms",
        "postgres_wal": "postgres_commits",
    }
    out = {}
    for use in USES:
        ceiling, why = bounds.get(use, (None, None))
        values = sorted((getattr(p, attr[use]), p.name) for p in group if getattr(p, attr[use]) is not None)
        bound = [why + f": at most {ceiling}"] if why else []
        few = f"{len(values)} peers ({name}) with a figure, fewer than {crit['answer']['min_peers']}"
        if len(values) >= int(crit["answer"]["min_peers"]):
            median = statistics.median(v for v, _ in values)
            tier = tier_of(use, median, crit)
            kept = lower(tier, ceiling)
            named = ", ".join(n for _, n in values[:5]) + (", ..." if len(values) > 5 else "")
            first = (
                f"estimate: {name}: {len(values)} drives measured ({named}), {values[0][0]:,.0f} to "
                f"{values[-1][0]:,.0f}, median {median:,.0f}: {tier}"
                + (f", held at the datasheet's {kept}" if kept != tier else "")
            )
            out[use] = verdict(
                kept,
                "estimate",
                [first, *stated, *bound, MEASURE[use] + " to replace the estimate"],
                figure=median,
                peers=len(values),
                ceiling=ceiling,
            )
        elif ceiling is not None:
            out[use] = verdict(UNKNOWN, "datasheet", [*bound, *stated, few, MEASURE[use]], ceiling=ceiling)
        else:
            out[use] = verdict(UNKNOWN, "unknown", [f"no verdict: {few}", *stated, MEASURE[use]])
    if "ceph_waldb" in out:
        out["ceph_waldb"]["osds_per_device"] = {"n": None, "reasons": ["no OSD count without a curve of the drive"]}
    return out
