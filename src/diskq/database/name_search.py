"""Finding devices in devices.db by the words of their model string, typos tolerated: what
``diskq lookup`` falls back on when no product line fits the query (:mod:`diskq.database.lookup`).

Candidates come from the FTS5 trigram index (any device sharing a trigram with the query),
or from a scan of all devices when the database was built without trigram support; when the
index yields fewer matches than asked for that no model outside it could beat, every other model
is scored as well (a typo can share no trigram with the model it means). Candidates are ranked
by how well the query matches the model (:mod:`diskq.database.matching`): exact matches, then
typos, then the closest others, each by score; matches under its ``MIN_SCORE`` are dropped.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

from diskq.database.keys import compact
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

MAX_CANDIDATES = 400
#: a device of one of several lines the query may name: listed, never the answer
CANDIDATE = "candidate"
_KIND_ORDER = {EXACT: 0, TYPO: 1, CANDIDATE: 2, CLOSEST: 3}


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
        ids = [
            r[0]
            for r in con.execute(
                "SELECT device_id FROM device_search WHERE device_search MATCH ? ORDER BY rank LIMIT ?",
                (match, MAX_CANDIDATES),
            )
        ]
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


def ranked_by_name(con: sqlite3.Connection, query: str, limit: int) -> list[tuple[float, sqlite3.Row, str]]:
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
    scored.sort(
        key=lambda sr: (
            _KIND_ORDER[kinds[sr[1]["id"]]],
            -sr[0],
            len(sr[1]["model"]),
            sr[1]["rank"] is None,
            sr[1]["rank"] or 0,
        )
    )
    return [(sc, row, kinds[row["id"]]) for sc, row in scored]
