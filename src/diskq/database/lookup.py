"""``diskq lookup``: find devices in devices.db by a fragment of the model name, typos tolerated.

The product lines a query names come from the one matcher (:mod:`diskq.identity.match`); where
it names none, devices are found by the words of their model string
(:mod:`diskq.database.name_search`). Queries are NFKC-normalised.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from diskq.database.details import (
    conflict_points,
    excluded_submissions,
    optional_bool,
    osds_rate_text,
    osds_text,
    size_profiles,
    sustained_writes,
)
from diskq.database.keys import compact
from diskq.database.locate import open_db
from diskq.database.matching import EXACT, TYPO
from diskq.database.name_search import CANDIDATE, ranked_by_name
from diskq.database.settings import setting_slug
from diskq.errors import InvalidInput


@dataclass
class Match:
    score: float
    device: dict
    caches: list[dict] = field(default_factory=list)
    curves: dict[str, list[dict]] = field(default_factory=dict)
    conflicts: list[dict] = field(default_factory=list)
    excluded: list[dict] = field(default_factory=list)
    kind: str = EXACT
    sizes: dict[str, list[dict]] = field(default_factory=dict)  # the median block-size profile by setting
    sustained: list[dict] = field(default_factory=list)  # sustained-write figures (:func:`sustained_writes`)
    sustained_left_out: list[dict] = field(default_factory=list)
    public: list[dict] = field(default_factory=list)  # public figures of its family (evidence.PublicModel dicts)
    via: str | None = None  # how the query named it when by part number: 'part number: <pattern> (<source>)'
    line: dict | None = None  # the facts of its product line (diskq.identity.facts.LineFacts), None: no line
    identity: dict | None = None  # how the query named its line (diskq.identity.match.Candidate.to_dict)
    capacity_note: str | None = None  # what capacity it was measured on, against the one asked about
    verdicts: dict | None = None  # the answer per use (devices.answers, diskq.analyse.answer)

    @property
    def is_match(self) -> bool:
        """Does the device answer the query (an exact or a typo match), rather than come closest
        or be one of several candidates?"""
        return self.kind in (EXACT, TYPO)

    def to_dict(self) -> dict:
        return {
            "score": round(self.score, 3),
            "match": self.kind,
            "device": self.device,
            "caches": self.caches,
            "curves": self.curves,
            "sizes": self.sizes,
            "conflicts": self.conflicts,
            "excluded": self.excluded,
            "sustained": self.sustained,
            "sustained_not_aggregated": self.sustained_left_out,
            "public_figures": self.public,
            "identified_via": self.via,
            "line": self.line,
            "identity": self.identity,
            "capacity_note": self.capacity_note,
            "verdicts": self.verdicts,
        }


def _device_match(
    con: sqlite3.Connection,
    device_id: str,
    score: float,
    kind: str,
    *,
    via: str | None = None,
    line: dict | None = None,
    identity: dict | None = None,
    asked: int | None = None,
    families: tuple[str, ...] = (),
) -> Match:
    from diskq.analyse import methodclass
    from diskq.database import evidence
    from diskq.identity.query import capacity_note

    row = con.execute("SELECT * FROM devices WHERE id = ?", (device_id,)).fetchone()
    device = dict(row)
    device["verdicts"] = json.loads(device["verdicts"]) if device["verdicts"] else None
    device["notes"] = json.loads(device["notes"])
    stored = device.pop("answers", None)  # a database before schema 12 has none
    device["plp_evidence"] = json.loads(device["plp_evidence"]) if device.get("plp_evidence") else None
    device["osds_limited_by_sweep"] = optional_bool(device["osds_limited_by_sweep"])
    device["osds_per_device_text"] = osds_text(device["osds_per_device"], device["osds_limited_by_sweep"])
    device["osds_rate_text"] = osds_rate_text(device["osds_per_osd_iops"], device["osds_demand_iops"])
    caches = [
        dict(r)
        for r in con.execute("SELECT * FROM device_cache WHERE device_id = ? ORDER BY write_cache, knob", (device_id,))
    ]
    for c in caches:
        c["scaling_json"] = json.loads(c["scaling_json"]) if c["scaling_json"] else None
    curves: dict[str, list[dict]] = {}  # by setting: 'off', 'on', 'off-kernel', ...
    for r in con.execute("SELECT * FROM curve WHERE device_id = ? ORDER BY write_cache, knob, numjobs", (device_id,)):
        curves.setdefault(setting_slug(r["write_cache"], r["knob"]), []).append(
            {k: r[k] for k in ("numjobs", "iops", "iops_min", "iops_max", "n", "lat_p99_us", "sync_p99_us")}
        )
    long_writes, left_out = sustained_writes(con, device_id)
    if device.get("method_class"):
        device["method_class_label"] = methodclass.label(device["method_class"])
    keys = list(dict.fromkeys([device.get("family_key") or "", *families]))
    public = []
    for k in keys:
        for m in evidence.public_models_of_family(con, k):
            public.append({**m.to_dict(), "capacity_note": capacity_note(m.capacity_bytes, asked)})
    return Match(
        score,
        device,
        caches,
        curves,
        conflict_points(con, device_id),
        excluded_submissions(con, device_id),
        kind,
        size_profiles(con, device_id),
        sustained=long_writes,
        sustained_left_out=left_out,
        public=public,
        via=via,
        line=line,
        identity=identity,
        capacity_note=capacity_note(device.get("capacity_bytes"), asked),
        verdicts=json.loads(stored) if stored else None,
    )


@dataclass
class LineAnswer:
    """A candidate line of a query, with its public models and whether anything was measured."""

    line: dict
    identity: dict
    devices: list[str]
    public: list[dict]
    #: the answer per use (devices.db ``line_answers``, with a public model's answer first when the
    #: line has public figures: :func:`line_answer`), in the shape of every answer
    verdicts: dict | None = None

    def to_dict(self) -> dict:
        return {
            "line": self.line,
            "identity": self.identity,
            "measured": bool(self.devices),
            "devices": self.devices,
            "public_models": self.public,
            "verdicts": self.verdicts,
        }


def of_asked_capacity(model: dict) -> bool:
    """Is a public model dict of :class:`LineAnswer` of the capacity the query asked about (or did
    the query ask none)? Its ``capacity_note`` says "not the ... asked about" otherwise."""
    return ", not the " not in (model.get("capacity_note") or "")


def line_answer(con: sqlite3.Connection, line_key: str, public: list[dict]) -> dict | None:
    """The answer for a line nothing of which diskq measured: its public models' answer (the one of
    the asked capacity, else the first) where there is one, held under and filled in by what its
    datasheet and its peers give (:func:`diskq.analyse.answer.combine`, strongest first), with the
    power-loss verdict of its facts."""
    from diskq.analyse.answer import combine
    from diskq.database.answers import line_verdicts

    own = line_verdicts(con, line_key)
    if own is None:
        return None
    first = next((m for m in public if of_asked_capacity(m)), public[0] if public else None)
    out = combine(first.get("verdicts") if first else None, own)
    if own.get("power_loss_protection"):
        out["power_loss_protection"] = own["power_loss_protection"]
    return out


@dataclass
class Answer:
    """What ``diskq lookup`` answers: device matches (:class:`Match`), and the lines the query
    names (:class:`LineAnswer`: measured, public-only or datasheet-only). ``sure``: one line
    answers with certainty; ``ambiguous``: several candidates and no answer (list them)."""

    query: str
    matches: list[Match]
    lines: list[LineAnswer]
    sure: bool
    ambiguous: bool
    #: a hard disk drive the query names (:func:`diskq.database.answers.hard_disk`): what it is, the
    #: evidence, and its answer per use; None otherwise
    hard_disk: dict | None = None


def lookup(db: Path, query: str, *, limit: int = 5) -> list[Match]:
    """The device matches of :func:`answer`, best first."""
    return answer(db, query, limit=limit).matches


def answer(db: Path, query: str, *, limit: int = 5) -> Answer:
    """What devices.db knows of the drive ``query`` names, best first.

    The query is NFKC-normalised first: full-width letters and digits (``ｐｍ８８３``) are the
    ASCII ones. The one matcher (:mod:`diskq.identity.match`) names the line(s): by part number
    or the string smartctl prints (``SAMSUNG MZ7LH7T6HMLA-00005`` is a 7.68 TB PM883), or by
    name (``Samsung PM883``; never another generation or suffix). Every device of a line it
    names with certainty is an ``exact`` match; of a line among several candidates, a
    ``candidate``. Only when no line fits are devices matched by the words of their model string
    (:mod:`diskq.database.matching`: exact, typo, closest); words that fit several models
    (``samsung``) make each a ``candidate``, none the answer. A string that names no line and no
    measured device but a hard disk drive by its model number (:mod:`diskq.identity.disks`) is
    answered as one (:attr:`Answer.hard_disk`). Each match carries its line's facts, the public
    figures of its line, and what capacity each was measured on."""
    from diskq.database import evidence
    from diskq.database.answers import public_verdicts
    from diskq.identity import query as identity_query

    query = unicodedata.normalize("NFKC", query)
    if not compact(query):
        raise InvalidInput("the query needs at least one letter or digit", hint="e.g. diskq lookup 'pm883'")
    con = open_db(db)
    try:
        found = identity_query.find(con, query)
        if found.lines:
            asked = found.asked_capacity
            typo = all(lm.candidate.sure == "typo" for lm in found.lines)
            kind = EXACT if found.sure else (TYPO if typo else CANDIDATE)
            out, lines = [], []
            for lm in found.lines:
                ident, line = lm.candidate.to_dict(), lm.line_dict()
                via = (
                    f"{lm.candidate.how}: {lm.candidate.evidence}"
                    if found.sure and lm.candidate.how == "part number"
                    else None
                )
                for did in lm.device_ids:
                    if len(out) < limit:
                        out.append(
                            _device_match(
                                con,
                                did,
                                1.0,
                                kind,
                                via=via,
                                line=line,
                                identity=ident,
                                asked=asked,
                                families=lm.candidate.line.families,
                            )
                        )
                public = []
                for mid in lm.model_ids if evidence.has_public_tables(con) else []:
                    m = evidence.model_of(con, con.execute("SELECT * FROM models WHERE id = ?", (mid,)).fetchone())
                    public.append(
                        {
                            **m.to_dict(),
                            "capacity_note": identity_query.capacity_note(m.capacity_bytes, asked),
                            "verdicts": public_verdicts(con, mid),
                        }
                    )
                verdicts = None if lm.device_ids else line_answer(con, lm.candidate.line.key, public)
                lines.append(LineAnswer(line, ident, lm.device_ids, public, verdicts))
            one_typo = len(found.lines) == 1 and found.lines[0].candidate.sure == "typo"  # forgiven, as for a name
            return Answer(query, out, lines, found.sure, not (found.sure or one_typo))
        by_identity, ident = ([], None) if _has_lines(con) else evidence.devices_of(con, query)  # a file without lines
        ranked = [(1.0, {"id": i}, EXACT) for i in by_identity]
        ranked += [r for r in ranked_by_name(con, query, limit) if r[1]["id"] not in by_identity]
        if by_identity:  # the model the part number means answers; near names are not matches then
            ranked = [r for r in ranked if r[1]["id"] in by_identity or r[2] == EXACT]
        if not any(r[2] == EXACT for r in ranked):  # no line, no measured device: a hard disk is one
            from diskq.database.answers import hard_disk

            disk = hard_disk(con, query)
            if disk is not None:
                return Answer(query, [], [], True, False, hard_disk=disk)
        out = []
        for score, light, matched in ranked[:limit]:
            row = con.execute("SELECT family_key FROM devices WHERE id = ?", (light["id"],)).fetchone()
            line = identity_query.device_line(con, row[0])
            families = (ident.key,) if ident is not None and light["id"] in by_identity else ()
            out.append(
                _device_match(
                    con,
                    light["id"],
                    score,
                    matched,
                    line=line,
                    families=families,
                    via=ident.via if ident is not None and light["id"] in by_identity else None,
                )
            )
        models = {compact(m.device["model"]) for m in out if m.kind == EXACT}
        if len(models) > 1:  # the words fit several models (``samsung``): candidates, none the answer
            for m in out:
                if m.kind == EXACT:
                    m.kind = CANDIDATE
            return Answer(query, out, [], False, True)
        return Answer(query, out, [], bool(out) and out[0].is_match, False)
    finally:
        con.close()


def _has_lines(con: sqlite3.Connection) -> bool:
    from diskq.identity.store import has_lines

    return has_lines(con) and con.execute("SELECT 1 FROM lines LIMIT 1").fetchone() is not None
