"""``diskq lookup``: find devices in devices.db by a fragment of the model name, typos tolerated.

Candidates come from the FTS5 trigram index (any device sharing a trigram with the query),
or from a scan of all devices when the database was built without trigram support; when the
index yields fewer matches than asked for that no model outside it could beat, every other model
is scored as well (a typo can share no trigram with the model it means). Queries are NFKC-normalised. Candidates are ranked
by how well the query matches the model (:mod:`diskq.database.matching`): exact matches, then
typos, then the closest others, each by score; matches under its ``MIN_SCORE`` are dropped.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from collections import Counter
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
from diskq.database.matching import (
    CLOSEST,
    EDIT_WEIGHT,
    EXACT,
    MIN_SCORE,
    SHARED_WEIGHT,
    TYPO,
    match_kind,
    similarity,
    trigrams,
    words,
)
from diskq.database.settings import setting_slug
from diskq.errors import InvalidInput

MAX_CANDIDATES = 400
#: a device of one of several lines the query may name: listed, never the answer
CANDIDATE = "candidate"
_KIND_ORDER = {EXACT: 0, TYPO: 1, CANDIDATE: 2, CLOSEST: 3}


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
        return {"score": round(self.score, 3), "match": self.kind, "device": self.device, "caches": self.caches,
                "curves": self.curves, "sizes": self.sizes, "conflicts": self.conflicts,
                "excluded": self.excluded,
                "sustained": self.sustained, "sustained_not_aggregated": self.sustained_left_out,
                "public_figures": self.public, "identified_via": self.via, "line": self.line,
                "identity": self.identity, "capacity_note": self.capacity_note, "verdicts": self.verdicts}



def _has_fts(con: sqlite3.Connection) -> bool:
    row = con.execute("SELECT value FROM meta WHERE key = 'fts'").fetchone()
    return bool(row) and row[0] == "trigram"


_LIGHT = "SELECT id, model, firmware, rank FROM devices"


def _fts_candidates(con: sqlite3.Connection, query: str) -> list[sqlite3.Row] | None:
    """Devices sharing a trigram with the query, from the FTS5 index; None without the index."""
    grams = sorted(trigrams(query))
    if not (_has_fts(con) and grams and all(len(g) == 3 for g in grams)):
        return None
    match = " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)
    try:
        ids = [r[0] for r in con.execute(
            "SELECT device_id FROM device_search WHERE device_search MATCH ? ORDER BY rank LIMIT ?",
            (match, MAX_CANDIDATES))]
    except sqlite3.Error:
        return None
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return con.execute(f"{_LIGHT} WHERE id IN ({marks})", ids).fetchall()  # noqa: S608


def _could_reach(query: str, model: str, floor: float) -> bool:
    """Cheap upper bound of :func:`similarity`: can ``query`` score ``floor`` against ``model``?

    The edit ratio of the query against any window is at most the share of the query's letters
    (with repeats) that occur in the model at all; the trigram share is computed exactly."""
    q, m = compact(query), compact(model)
    if not q or not m:
        return False
    if q in m:
        return True
    tq = trigrams(q)
    shared = len(tq & trigrams(m)) / len(tq) if tq else 0.0
    common = sum((Counter(q) & Counter(m)).values())
    edit_bound = 2 * common / (len(q) + min(len(q), len(m)))
    return SHARED_WEIGHT * shared + EDIT_WEIGHT * min(1.0, edit_bound) >= floor


def _score(query: str, row: sqlite3.Row) -> float:
    return max(similarity(query, row["model"]), similarity(query, f"{row['model']} {row['firmware']}"))


def _kind(query: str, row: sqlite3.Row) -> str:
    kinds = (match_kind(query, row["model"]), match_kind(query, f"{row['model']} {row['firmware']}"))
    return min(kinds, key=_KIND_ORDER.__getitem__)


def _ranked(con: sqlite3.Connection, query: str, limit: int) -> list[tuple[float, sqlite3.Row, str]]:
    """(score, light row, kind) of the matches at or above :data:`MIN_SCORE`, best first: exact
    matches, then typos, then the closest others (:func:`match_kind`), each by score.

    The trigram index proposes candidates. A model it does not propose shares no trigram with
    the query (a typo such as ``s4150`` for ``S4510``) and can score up to :data:`EDIT_WEIGHT`:
    unless ``limit`` candidates score above that, every other model is scored too."""
    candidates = _fts_candidates(con, query)
    scanned = candidates is None
    if scanned:
        candidates = con.execute(_LIGHT).fetchall()
    qwords = [compact(w) for w in words(query)]

    def kept(row) -> bool:  # under the threshold, a model holding every word of the query still answers it
        m = compact(f"{row['model']} {row['firmware']}")
        return all(w in m for w in qwords) and _kind(query, row) == EXACT

    scored = [(sc, row) for row in candidates if (sc := _score(query, row)) >= MIN_SCORE or kept(row)]
    if not scanned and sum(sc > EDIT_WEIGHT for sc, _ in scored) < limit:
        seen = {row["id"] for row in candidates}
        for row in con.execute(_LIGHT):
            if row["id"] in seen:
                continue
            text = f"{row['model']} {row['firmware']}"
            if not (_could_reach(query, row["model"], MIN_SCORE) or _could_reach(query, text, MIN_SCORE)):
                continue
            if (sc := _score(query, row)) >= MIN_SCORE:
                scored.append((sc, row))
    # matches first, then by score; hosts and virtual devices have no rank: after the drives
    kinds = {row["id"]: _kind(query, row) for _, row in scored}
    scored.sort(key=lambda sr: (_KIND_ORDER[kinds[sr[1]["id"]]], -sr[0], len(sr[1]["model"]),
                                sr[1]["rank"] is None, sr[1]["rank"] or 0))
    return [(sc, row, kinds[row["id"]]) for sc, row in scored]


def _device_match(con: sqlite3.Connection, device_id: str, score: float, kind: str, *, via: str | None = None,
                  line: dict | None = None, identity: dict | None = None, asked: int | None = None,
                  families: tuple[str, ...] = ()) -> Match:
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
    caches = [dict(r) for r in con.execute(
        "SELECT * FROM device_cache WHERE device_id = ? ORDER BY write_cache, knob", (device_id,))]
    for c in caches:
        c["scaling_json"] = json.loads(c["scaling_json"]) if c["scaling_json"] else None
    curves: dict[str, list[dict]] = {}  # by setting: 'off', 'on', 'off-kernel', ...
    for r in con.execute("SELECT * FROM curve WHERE device_id = ? ORDER BY write_cache, knob, numjobs", (device_id,)):
        curves.setdefault(setting_slug(r["write_cache"], r["knob"]), []).append(
            {k: r[k] for k in ("numjobs", "iops", "iops_min", "iops_max", "n", "lat_p99_us", "sync_p99_us")})
    long_writes, left_out = sustained_writes(con, device_id)
    if device.get("method_class"):
        device["method_class_label"] = methodclass.label(device["method_class"])
    keys = list(dict.fromkeys([device.get("family_key") or "", *families]))
    public = []
    for k in keys:
        for m in evidence.public_models_of_family(con, k):
            public.append({**m.to_dict(), "capacity_note": capacity_note(m.capacity_bytes, asked)})
    return Match(score, device, caches, curves, conflict_points(con, device_id), excluded_submissions(con, device_id),
                 kind, size_profiles(con, device_id), sustained=long_writes, sustained_left_out=left_out,
                 public=public, via=via, line=line, identity=identity,
                 capacity_note=capacity_note(device.get("capacity_bytes"), asked),
                 verdicts=json.loads(stored) if stored else None)


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
        return {"line": self.line, "identity": self.identity, "measured": bool(self.devices),
                "devices": self.devices, "public_models": self.public, "verdicts": self.verdicts}


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
    (``samsung``) make each a ``candidate``, none the answer. Each match carries its line's facts,
    the public figures of its line, and what capacity each was measured on."""
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
                via = (f"{lm.candidate.how}: {lm.candidate.evidence}" if found.sure and lm.candidate.how == "part number"
                       else None)
                for did in lm.device_ids:
                    if len(out) < limit:
                        out.append(_device_match(con, did, 1.0, kind, via=via, line=line, identity=ident, asked=asked,
                                                 families=lm.candidate.line.families))
                public = []
                for mid in (lm.model_ids if evidence.has_public_tables(con) else []):
                    m = evidence.model_of(con, con.execute("SELECT * FROM models WHERE id = ?", (mid,)).fetchone())
                    public.append({**m.to_dict(), "capacity_note": identity_query.capacity_note(m.capacity_bytes, asked),
                                   "verdicts": public_verdicts(con, mid)})
                verdicts = None if lm.device_ids else line_answer(con, lm.candidate.line.key, public)
                lines.append(LineAnswer(line, ident, lm.device_ids, public, verdicts))
            one_typo = len(found.lines) == 1 and found.lines[0].candidate.sure == "typo"  # forgiven, as for a name
            return Answer(query, out, lines, found.sure, not (found.sure or one_typo))
        by_identity, ident = ([], None) if _has_lines(con) else evidence.devices_of(con, query)  # a file without lines
        ranked = [(1.0, {"id": i}, EXACT) for i in by_identity]
        ranked += [r for r in _ranked(con, query, limit) if r[1]["id"] not in by_identity]
        if by_identity:  # the model the part number means answers; near names are not matches then
            ranked = [r for r in ranked if r[1]["id"] in by_identity or r[2] == EXACT]
        out = []
        for score, light, matched in ranked[:limit]:
            row = con.execute("SELECT family_key FROM devices WHERE id = ?", (light["id"],)).fetchone()
            line = identity_query.device_line(con, row[0])
            families = (ident.key,) if ident is not None and light["id"] in by_identity else ()
            out.append(_device_match(con, light["id"], score, matched, line=line, families=families,
                                     via=ident.via if ident is not None and light["id"] in by_identity else None))
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
