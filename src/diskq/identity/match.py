"""The one matcher: which product line(s) a string names, how, and how sure.

:func:`resolve` takes any string (what ``smartctl -i`` prints, a part number, the name on an
invoice, a few words) and returns a :class:`Resolution`: the candidate lines, each with how it
matched and the capacity the string encodes or states. In order:

1. **part number**: the string, vendor word off, is a whole match of a line's part pattern
   (:mod:`diskq.identity.parts`), or one of its words is and the other words name the same
   line (``Samsung SSD 980 PRO MZ-V8P2T0BW``; words naming another line make both candidates);
   the capacity comes from the part number. A pattern that its
   source marks as shared by two lines (``MZ7L3``: PM893 and PM897) gives both, as candidates;
   one whose source hedges (an OEM string read as "5200?") gives a candidate, never the answer.
2. **name**: the words of the string name a line (:mod:`diskq.identity.names`): the same words
   (``exact``); or all of its words are whole words of one line's name and of no other
   (``part``: ``905P`` is the Optane 905P), several such lines are candidates (``samsung 860``:
   the 860 EVO, PRO and QVO); a query naming a vendor is compared with that vendor's lines only.
3. **typo**: one swapped pair of neighbouring characters in one word (``s4150``), when no line
   matched otherwise.

A different generation or suffix is never any of these: ``PM863`` is not ``PM863a``, ``510`` not
``S4510``. :attr:`Resolution.answer` is the one line the string names with certainty, or None
(nothing, or several candidates: :attr:`Resolution.ambiguous`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from diskq.identity import names as nm
from diskq.identity.lines import Line
from diskq.identity.parts import normalise

#: How sure a candidate is, best first.
SURE, SHARED, UNCERTAIN, CANDIDATE, TYPO = "sure", "shared", "uncertain", "candidate", "typo"


@dataclass(frozen=True)
class Candidate:
    """A line a string may name. ``how``: ``part number``, ``name`` or ``typo``; ``sure``: one of
    ``sure`` (the answer), ``shared`` (one part number, several lines), ``uncertain`` (the
    source hedges), ``candidate`` (one of several lines the words fit), ``typo``; ``evidence``:
    the pattern or name it matched and where that is stated."""

    line: Line
    how: str
    sure: str
    capacity_bytes: int | None
    evidence: str

    def to_dict(self) -> dict:
        return {
            "line_key": self.line.key,
            "line": self.line.title,
            "how": self.how,
            "sure": self.sure,
            "capacity_bytes": self.capacity_bytes,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Resolution:
    query: str
    candidates: tuple[Candidate, ...]

    @property
    def answer(self) -> Candidate | None:
        """The one line the string names with certainty (a part number or a name), else None."""
        if len(self.candidates) == 1 and self.candidates[0].sure == SURE:
            return self.candidates[0]
        return None

    @property
    def ambiguous(self) -> bool:
        """Candidates, but no single sure answer: list them, do not choose."""
        return bool(self.candidates) and self.answer is None

    @property
    def capacity_bytes(self) -> int | None:
        caps = {c.capacity_bytes for c in self.candidates if c.capacity_bytes}
        return caps.pop() if len(caps) == 1 else None

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "answer": self.answer.line.key if self.answer else None,
            "ambiguous": self.ambiguous,
            "capacity_bytes": self.capacity_bytes,
            "candidates": [c.to_dict() for c in self.candidates],
        }


def _by_part(lines: list[Line], text: str) -> list[Candidate]:
    norm = normalise(text)
    found: list[Candidate] = []
    for line in lines:
        for part in line.parts:
            ok, cap = part.match(norm)
            if ok:
                sure = SURE if part.certain and not part.shared else (SHARED if part.certain else UNCERTAIN)
                found.append(Candidate(line, "part number", sure, cap, f"{part.pattern} ({part.source})"))
                break
    if len(found) > 1:  # one string, several lines: never an answer, whatever each pattern says
        found = [
            Candidate(c.line, c.how, c.sure if c.sure != SURE else SHARED, c.capacity_bytes, c.evidence) for c in found
        ]
    return found


def _by_name(lines: list[Line], text: str) -> list[Candidate]:
    vendor = nm.vendor_of(text)
    cap = nm.capacity_in(text)
    kinds: dict[str, list[tuple[Line, str]]] = {nm.EXACT: [], nm.PART: [], nm.TYPO: []}
    qcache: dict[str, list[str]] = {}
    for line in lines:
        vendors = _vendors(line.vendor)
        if vendor is not None and not any(nm.same_vendor(vendor, v) for v in vendors):
            continue
        if vendors[0] not in qcache:
            qcache[vendors[0]] = nm.words(text, vendor=vendors[0])
        qwords = qcache[vendors[0]]
        if not qwords:
            continue
        best = None
        for name in line.names:
            nwords = _name_words(name, vendors[0])
            if not set(nwords) - nm.SOFT:  # a name of vendor and interface alone ("TESLA SATA SSD"):
                kind = nm.EXACT if vendor is not None and qwords == nwords else None  # its vendor named
            else:
                kind = nm.compare(qwords, nwords)
            if kind is not None and (best is None or _RANK[kind] < _RANK[best[1]]):
                best = (name, kind)
        if best is not None:
            kinds[best[1]].append((line, best[0]))
    if kinds[nm.EXACT]:
        hits, sure = kinds[nm.EXACT], SURE
    elif kinds[nm.PART]:
        hits, sure = kinds[nm.PART], SURE if len(kinds[nm.PART]) == 1 else CANDIDATE
    else:
        hits, sure = kinds[nm.TYPO], TYPO
    if len(hits) > 1 and sure == SURE:
        sure = CANDIDATE
    return [Candidate(line, "typo" if sure == TYPO else "name", sure, cap, f"name {name!r}") for line, name in hits]


_RANK = {nm.EXACT: 0, nm.PART: 1, nm.TYPO: 2}


@functools.lru_cache(maxsize=4096)
def _name_words(name: str, vendor: str) -> list[str]:
    return nm.words(name, vendor=vendor)


@functools.lru_cache(maxsize=1024)
def _vendors(vendor: str) -> list[str]:
    """The vendors a line is sold under, as :data:`names.VENDORS` names them:
    ``'Solidigm (Intel)'`` -> ``['Solidigm', 'Intel']``, ``'Team Group'`` -> ``['TeamGroup']``."""
    out = []
    for v in vendor.replace("(", "/").replace(")", "").split("/"):
        raw = re.findall(r"[^\W_]+", v.casefold())
        if raw:
            out.append(nm.VENDORS.get(raw[0], v.strip()))
    return out or [vendor]


def _by_part_and_words(lines: list[Line], text: str) -> list[Candidate]:
    """A part number among other words (``Samsung SSD 980 PRO MZ-V8P2T0BW``): the part number's
    line when the other words name it too (or nothing more than vendor and noise); when they
    name another line, both as candidates: a conflict is shown, never settled by choosing."""
    tokens = [t.strip("()[],;") for t in text.split()]
    for i, tok in enumerate(tokens):
        if len(tokens) < 2 or len(tok) < 6 or not (any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok)):
            continue
        found = _by_part(lines, tok)
        if not found:
            continue
        rest = " ".join(tokens[:i] + tokens[i + 1 :])
        agree = []
        for c in found:
            vendor = _vendors(c.line.vendor)[0]
            named = {w for name in c.line.names for w in _name_words(name, vendor)}
            if set(nm.words(rest, vendor=vendor)) - nm.SOFT <= named:
                agree.append(c)
        if len(agree) == 1 and len(found) > 1 and agree[0].sure == SHARED:
            # a part number two lines share, and words that name one of them: that one
            c = agree[0]
            return [
                Candidate(c.line, c.how, SURE, c.capacity_bytes, c.evidence + f"; the other words ({rest!r}) name it")
            ]
        if agree:
            return agree
        other = [c for c in _by_name(lines, rest) if c.line.key not in {f.line.key for f in found}]
        note = f"; the other words ({rest!r}) name another line"
        return [Candidate(c.line, c.how, UNCERTAIN, c.capacity_bytes, c.evidence + note) for c in found + other]
    return []


#: The transport word a Ceph device id may start with (``ATA_SAMSUNG_MZ7KM240HMHQ-00005_S3F5N...``).
_TRANSPORTS = ("ATA_", "SATA_", "SCSI_", "NVME_")
#: A /dev/disk/by-id name around the same id: udev's bus word (``ata-``, ``nvme-``, ``scsi-SATA_``,
#: ``scsi-0ATA_``) and a partition's ``-partN``.
_BY_ID = re.compile(r"^(?:/dev/disk/by-id/)?(?:ata|nvme|scsi|usb)-\d?")
_PARTITION = re.compile(r"-part\d+$")
#: A serial number as Ceph appends it: letters and digits (a hyphen allowed), a digit among them,
#: six or more, and no capacity (``2000GB``).
_SERIAL = re.compile(r"(?=[-A-Z0-9]*\d)[A-Z0-9][-A-Z0-9]{5,}", re.I)


def device_id_model(text: str) -> str | None:
    """The model in a Ceph device id, else None: Ceph names a device ``MODEL_SERIAL`` (the vendor
    first for SCSI: ``ID_VENDOR_ID_MODEL_SERIAL``, udev's words with spaces as underscores; Ceph
    pull request 25350, src/common/blkdev.cc), and udev's /dev/disk/by-id names hold the same
    (``ata-WDC_WD4003FZEX-00Z4SA0_WD-WMC5D0D9DMEH``, ``nvme-SAMSUNG_MZ1LB3T8HMLA-00007_S46FNY0R394543``,
    ``scsi-SATA_HGST_HUS724040AL_PN1334PEHN18ZS``: Mirantis' "Addressing Ceph storage devices").
    The transport word (``ATA``) and the serial are taken off, the underscores read as spaces.

    >>> device_id_model("ATA_SAMSUNG_MZ7KM240HMHQ-00005_S3F5NX0K402192")
    'SAMSUNG MZ7KM240HMHQ-00005'
    >>> device_id_model("INTEL_SSDSC2KB038T8_PHYF149607QD3P8EGN"), device_id_model("Samsung SSD 860 EVO 1TB")
    ('INTEL SSDSC2KB038T8', None)

    A /dev/disk/by-id name is read the same way, its bus word and partition off:

    >>> device_id_model("/dev/disk/by-id/scsi-SATA_HGST_HUS724040AL_PN1334PEHN18ZS-part1")
    'HGST HUS724040AL'
    """
    if " " in text or "_" not in text:
        return None
    text = _PARTITION.sub("", _BY_ID.sub("", text))
    model, serial = text.rsplit("_", 1)
    if not _SERIAL.fullmatch(serial) or nm.capacity_in(serial):
        return None
    for prefix in _TRANSPORTS:
        if model.upper().startswith(prefix) and len(model) > len(prefix):
            model = model[len(prefix) :]
            break
    return model.replace("_", " ").strip() or None


def _resolve(lines: list[Line], text: str) -> list[Candidate]:
    return _by_part(lines, text) or _by_part_and_words(lines, text) or _by_name(lines, text)


def resolve(lines: list[Line], query: str) -> Resolution:
    """The candidate lines ``query`` names (module docstring). A string that names none is read
    twice more: as a Ceph device id (its model, without transport word and serial:
    :func:`device_id_model`), and without its remarks in parentheses (``Intel DC P4510 4TB (INTEL
    SSDPE2KX040T8)``); each candidate's evidence says so."""
    text = " ".join(unicodedata.normalize("NFKC", query).split())
    if not text:
        return Resolution(query, ())
    found = _resolve(lines, text)
    model = None if found else device_id_model(text)
    if model:
        note = f"; read as the Ceph device id of {model!r} (serial {text.rsplit('_', 1)[1]!r} left out)"
        found = [_noted(c, note) for c in _resolve(lines, model)]
    bare = " ".join(re.sub(r"\([^()]*\)", " ", text).split())
    if not found and bare and bare != text and not _names_a_line(lines, re.findall(r"\(([^()]*)\)", text)):
        found = [_noted(c, f"; read without the remarks in parentheses, as {bare!r}") for c in _resolve(lines, bare)]
    return Resolution(query, tuple(found))


def _names_a_line(lines: list[Line], remarks: list[str]) -> bool:
    """Does a remark hold a word of a line's name (``(Plus)``, ``(PM1643a ...)``)? Then it is part
    of what the string names, and the string is not read without it."""
    words = {w for r in remarks for w in nm.words(r) if not w.isdigit()} - nm.SOFT
    return any(w in words for ln in lines for name in ln.names for w in _name_words(name, _vendors(ln.vendor)[0]))


def _noted(c: Candidate, note: str) -> Candidate:
    return Candidate(c.line, c.how, c.sure, c.capacity_bytes, c.evidence + note)
