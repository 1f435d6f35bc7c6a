"""What a vendor documents about a product line, as diskq carries it: the facts an answer may rest
on when nothing was measured, each with where it was read.

:class:`LineFacts` is the one shape in which these facts travel: the identity layer builds it from
``sources/lines/`` (and stores it in devices.db), the answers (:mod:`diskq.analyse`) read it.
A field is ``None`` (or empty) when no source states it: never "no".
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Segments a line can be in (``segment``).
SEGMENTS = ("data-centre", "client", "NAS")
#: What the vendor says of power-loss protection (``plp``): ``yes``; ``at-rest-only`` (protects
#: data already written, not the volatile write cache: not power-loss protection for sync
#: writes); ``no`` (a source says so); ``not stated``.
PLP_CLAIMS = ("yes", "at-rest-only", "no", "not stated")


@dataclass(frozen=True)
class LineFacts:
    """The documented facts of one product line (``Intel DC S3700``, ``Samsung PM883``)."""

    vendor: str
    line: str
    #: ``data-centre``, ``client`` or ``NAS``; None when unknown
    segment: str | None = None
    #: how the segment is known: ``datasheet`` or ``naming only`` (the product name alone)
    segment_basis: str | None = None
    #: ``SATA``, ``SAS``, ``NVMe`` (the protocol; link speeds are in ``interface_detail``)
    interface: str | None = None
    interface_detail: str | None = None
    form_factors: tuple[str, ...] = ()
    nand: str | None = None
    dram: str | None = None
    plp: str | None = None
    plp_quote: str | None = None
    plp_source: str | None = None
    #: ``primary`` (the vendor's own text) or ``secondary`` (a reviewer, an analyst, a teardown)
    plp_evidence: str | None = None
    #: rated drive writes per day (the datasheet's figure; ``dwpd_note`` says over how many years)
    dwpd: float | None = None
    dwpd_note: str | None = None
    #: rated endurance in bytes written, by capacity in bytes
    tbw_by_capacity: dict[int, int] = field(default_factory=dict)
    #: capacities the line is sold in, in bytes
    capacities: tuple[int, ...] = ()
    #: where each fact was read (addresses or document titles)
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # fields added after the first version (keyword use only):
    #: the key the line is stored under in devices.db (``samsung:pm863a``): its family key
    key: str = ""
    #: what the source adds to the segment ("read-intensive", "boot")
    segment_note: str | None = None
    #: the capacities and endurance as the source words them (ranges, revisions, form factors)
    capacities_note: str | None = None
    tbw_note: str | None = None

    def tbw_bytes(self, capacity_bytes: int | None) -> int | None:
        """The rated endurance of the given capacity, when the datasheet gives it."""
        if capacity_bytes is None:
            return None
        return self.tbw_by_capacity.get(capacity_bytes)
