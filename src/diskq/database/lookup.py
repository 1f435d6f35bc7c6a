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
_KIND_ORDER = {EXACT: 0, TYPO: 1, CLOSEST: 2}


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
    via: str | None = None  # how the query named it when by part number: 'drivedb: ...', 'alias: ...'
    verdicts: dict | None = None  # the answer per use (devices.answers, diskq.analyse.answer)

    @property
    def is_match(self) -> bool:
        """Does the device answer the query (an exact or a typo match), rather than come closest?"""
        return self.kind != CLOSEST

    def to_dict(self) -> dict:
        return {"score": round(self.score, 3), "match": self.kind, "device": self.device, "caches": self.caches,
                "curves": self.curves, "sizes": self.sizes, "conflicts": self.conflicts,
                "excluded": self.excluded,
                "sustained": self.sustained, "sustained_not_aggregated": self.sustained_left_out,
                "public_figures": self.public, "identified_via": self.via, "verdicts": self.verdicts}



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


def lookup(db: Path, query: str, *, limit: int = 5) -> list[Match]:
    """The best matches for ``query``, best first, each with its cache states, curves and kind
    (:attr:`Match.kind`: when the first is ``closest``, no device answers the query).

    The query is NFKC-normalised first: full-width letters and digits (``ｐｍ８８３``) are the
    ASCII ones. A part number or the string smartctl prints (``SAMSUNG MZ7LH7T6HMLA-00005``)
    finds the devices of the family it means (:mod:`diskq.database.modelid`) first. Each match
    carries the public figures of its family, by source and method class."""
    query = unicodedata.normalize("NFKC", query)
    if not compact(query):
        raise InvalidInput("the query needs at least one letter or digit", hint="e.g. diskq lookup 'pm883'")
    con = open_db(db)
    try:
        from diskq.analyse import methodclass
        from diskq.database import evidence

        by_identity, ident = evidence.devices_of(con, query)  # a part number or the string smartctl prints
        ranked = [(1.0, {"id": i}, EXACT) for i in by_identity]
        ranked += [r for r in _ranked(con, query, limit) if r[1]["id"] not in by_identity]
        if by_identity:  # the model the part number means answers; near names are not matches then
            ranked = [r for r in ranked if r[1]["id"] in by_identity or r[2] == EXACT]
        scored = []
        for score, light, matched in ranked[:limit]:
            scored.append((score, matched, con.execute("SELECT * FROM devices WHERE id = ?", (light["id"],)).fetchone()))
        out = []
        for score, matched, row in scored:
            device = dict(row)
            device["verdicts"] = json.loads(device["verdicts"]) if device["verdicts"] else None
            device["notes"] = json.loads(device["notes"])
            stored = device.pop("answers", None)  # a database before schema 10 has none
            device["plp_evidence"] = json.loads(device["plp_evidence"]) if device.get("plp_evidence") else None
            device["osds_limited_by_sweep"] = optional_bool(device["osds_limited_by_sweep"])
            device["osds_per_device_text"] = osds_text(device["osds_per_device"], device["osds_limited_by_sweep"])
            device["osds_rate_text"] = osds_rate_text(device["osds_per_osd_iops"], device["osds_demand_iops"])
            caches = [dict(r) for r in con.execute(
                "SELECT * FROM device_cache WHERE device_id = ? ORDER BY write_cache, knob", (row["id"],))]
            for c in caches:
                c["scaling_json"] = json.loads(c["scaling_json"]) if c["scaling_json"] else None
            curves: dict[str, list[dict]] = {}  # by setting: 'off', 'on', 'off-kernel', ...
            for r in con.execute("SELECT * FROM curve WHERE device_id = ? ORDER BY write_cache, knob, numjobs",
                                 (row["id"],)):
                curves.setdefault(setting_slug(r["write_cache"], r["knob"]), []).append(
                    {k: r[k] for k in ("numjobs", "iops", "iops_min", "iops_max", "n", "lat_p99_us", "sync_p99_us")})
            long_writes, left_out = sustained_writes(con, row["id"])
            if device.get("method_class"):
                device["method_class_label"] = methodclass.label(device["method_class"])
            keys = [device.get("family_key") or ""]
            if ident is not None and row["id"] in by_identity and ident.key not in keys:
                keys.append(ident.key)  # stored under its part number: the family drivedb.h gives
            public = [m.to_dict() for k in keys for m in evidence.public_models_of_family(con, k)]
            out.append(Match(score, device, caches, curves, conflict_points(con, row["id"]),
                             excluded_submissions(con, row["id"]), matched, size_profiles(con, row["id"]),
                             sustained=long_writes, sustained_left_out=left_out, public=public,
                             via=ident.via if ident is not None and row["id"] in by_identity else None,
                             verdicts=json.loads(stored) if stored else None))
        return out
    finally:
        con.close()
