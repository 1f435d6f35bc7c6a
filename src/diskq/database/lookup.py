"""``diskq lookup``: find devices in devices.db by a fragment of the model name, typos tolerated.

Candidates come from the FTS5 trigram index (any device sharing a trigram with the query),
or from a scan of all devices when the database was built without trigram support; when the
index yields fewer matches than asked for that no model outside it could beat, every other model
is scored as well (a typo can share no trigram with the model it means). Queries are NFKC-normalised. Candidates are ranked
by how well the query matches the model:

1. the query (letters and digits only) is a substring of the model: best, shorter models first;
2. otherwise the share of the query's trigrams found in the model, blended with the best
   edit-distance ratio of the query against any same-length window of the model (so ``S4150`` finds
   ``INTEL SSD S4510``).

Matches under :data:`MIN_SCORE` are dropped. Above the score, a candidate is one of three kinds
(:func:`match_kind`), and kinds rank before scores:

* ``exact``: every word of the query (a run of letters or digits) is part of a word of the
  model, or the query without separators is part of the model without them (``samsung 860``
  and ``860pro`` are exact for ``Samsung SSD 860 PRO``);
* ``typo``: the same, once two neighbouring characters of a query word of four or more are
  swapped (``s4150`` for ``S4510``, ``samsnug`` for ``Samsung``);
* ``closest``: anything else, however similar: ``samsung 980 pro`` is not ``Samsung 983 DCT``,
  a different digit is a different model. The command line says "no exact match; closest: ..."
  and exits 1 then.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from diskq.database.files import kind
from diskq.database.keys import compact
from diskq.database.settings import setting_slug
from diskq.errors import DatabasePathError, InvalidInput

MIN_SCORE = 0.5
MAX_CANDIDATES = 400
#: Weights of the trigram share and of the edit-distance ratio in :func:`similarity`. A model
#: sharing no trigram with the query scores at most ``EDIT_WEIGHT``.
SHARED_WEIGHT, EDIT_WEIGHT = 0.3, 0.7


def osds_text(n: int | None, limited_by_sweep) -> str | None:
    """OSDs per device as shown: ``'4'``, ``'≥ 16'`` when the sweep's largest job count still
    passed (the device may carry more; never extrapolated), ``'none'`` when not even one OSD
    gets the commit rate it needs."""
    if n is None:
        return None
    if n == 0:
        return "none"
    return f"\u2265 {n}" if limited_by_sweep else str(n)


def osds_rate_text(per_osd_iops: float | None, demand_iops: float | None) -> str | None:
    """The commit rate beside the count: ``'24,055/s each'`` (None when there is no count)."""
    if per_osd_iops is None:
        return None
    return f"{per_osd_iops:,.0f}/s each"


#: What became of a figure in a conflict, by (decided by other evidence, held out of the verdicts).
CONFLICT_STATUS = {
    (False, False): "in the verdicts only as a lower bound (undecided)",
    (False, True): "held out of the verdicts (undecided)",
    (True, False): "kept: the model's other evidence decided",
    (True, True): "set aside: the model's other evidence decided",
}


def conflict_points(con: sqlite3.Connection, device_id: str) -> list[dict]:
    """Every figure of the device's submissions that is part of a conflict, as submitted, with the
    conflict, what became of the figure (``status``) and whether it is held out of the verdicts.
    Both figures of each pair are listed."""
    from diskq.analyse.plausibility import DECIDED

    query = ("SELECT p.submission_id, r.write_cache, p.numjobs, p.iops, p.{text}, {held} FROM points p "
             "JOIN runs r ON r.submission_id = p.submission_id AND r.run = p.run "
             "JOIN submissions s ON s.id = p.submission_id "
             "WHERE s.device_id = ? AND p.{text} IS NOT NULL ORDER BY p.submission_id, p.run, p.seq")
    try:
        rows = con.execute(query.format(text="conflict", held="p.held"), (device_id,)).fetchall()
    except sqlite3.OperationalError:  # a database from before schema 8: its points held out, as it said why
        rows = con.execute(query.format(text="questionable", held="1"), (device_id,)).fetchall()
    return [{"submission_id": r[0], "write_cache": r[1], "numjobs": r[2], "iops": r[3], "reason": r[4],
             "held": bool(r[5]), "status": CONFLICT_STATUS[(r[4].startswith(DECIDED), bool(r[5]))]} for r in rows]


SIZE_COLUMNS = ("block_size", "iops", "iops_min", "iops_max", "bw_bytes", "lat_p50_us", "lat_p99_us", "sync_p50_us",
                "sync_p99_us", "n")


def size_profiles(con: sqlite3.Connection, device_id: str) -> dict[str, list[dict]]:
    """The device's median block-size profile per setting ('on', 'off-kernel', ...), smallest
    size first; empty when no submission measured one (or a database from before schema 5)."""
    try:
        rows = con.execute("SELECT * FROM device_sizes WHERE device_id = ? ORDER BY write_cache, knob, block_size",
                           (device_id,)).fetchall()
    except sqlite3.OperationalError:
        return {}
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(setting_slug(r["write_cache"], r["knob"]), []).append({k: r[k] for k in SIZE_COLUMNS})
    return out


def excluded_submissions(con: sqlite3.Connection, device_id: str) -> list[dict]:
    """The device's submissions that are listed but not aggregated, with why."""
    rows = con.execute("SELECT id, path, excluded FROM submissions WHERE device_id = ? AND aggregated = 0 "
                       "ORDER BY id", (device_id,))
    return [{"submission_id": r[0], "path": r[1], "reason": r[2]} for r in rows]

def sustained_writes(con: sqlite3.Connection, device_id: str) -> tuple[list[dict], list[dict]]:
    """(the device's sustained-write figures, its measurements that are not aggregated).

    Each figure is a ``device_sustained`` row with ``setting`` (``'on'``, ``'off-kernel'``, ...),
    ``summary`` (one line, :func:`diskq.database.sustained.summary`) and ``writes``: the
    counted measurements, each with its samples and cliff. A measurement that is not counted
    (interrupted, of another method version, or of a submission that is not aggregated) is in the
    second list with the reason. A database built before these tables existed (schema version 4)
    has none: both lists are empty."""
    from diskq.database import sustained
    from diskq.database.settings import knob

    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'device_sustained'").fetchone() is None:
        return [], []
    figures = []
    for r in con.execute("SELECT * FROM device_sustained WHERE device_id = ?", (device_id,)):
        agg = {k: r[k] for k in sustained.DEVICE_COLUMNS if k != "device_id"}
        agg["setting"] = setting_slug(agg["write_cache"], agg["knob"])
        agg["summary"] = sustained.summary(agg)
        agg["writes"] = []
        figures.append(agg)
    figures.sort(key=lambda a: (sustained.VARIANTS.index(a["variant"]) if a["variant"] in sustained.VARIANTS else 9,
                                a["setting"]))
    by_key = {(a["variant"], a["write_cache"], a["knob"]): a for a in figures}
    left_out = []
    rows = con.execute(
        "SELECT m.*, s.aggregated, s.excluded FROM sustained m JOIN submissions s ON s.id = m.submission_id "
        "WHERE s.device_id = ? ORDER BY m.submission_id, m.seq", (device_id,))
    for r in rows:
        m = {k: r[k] for k in sustained.COLUMNS}
        m["bw_samples"] = json.loads(m["bw_samples"])
        m["interrupted"] = bool(m["interrupted"])
        m["cliff_found"] = _flag(m["cliff_found"])
        m["knob"] = knob(m["cache_mechanism"], m["write_cache"])
        m["setting"] = setting_slug(m["write_cache"], m["knob"])
        agg = by_key.get((m["variant"], m["write_cache"], m["knob"]))
        if not r["aggregated"]:
            m["reason"] = f"its submission is not aggregated: {r['excluded'] or 'not counted'}"
        elif m["interrupted"]:
            m["reason"] = "interrupted before its budget was written"
        elif agg is None or agg["method_version"] != m["method_version"]:
            m["reason"] = f"method version v{m['method_version']}, not the device's most common one"
        else:
            agg["writes"].append(m)
            continue
        left_out.append(m)
    return figures, left_out


#: The kinds of candidate, best first (see the module docstring).
EXACT, TYPO, CLOSEST = "exact", "typo", "closest"
_KIND_ORDER = {EXACT: 0, TYPO: 1, CLOSEST: 2}
_WORD = re.compile(r"[^\W_]+")


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

    @property
    def is_match(self) -> bool:
        """Does the device answer the query (an exact or a typo match), rather than come closest?"""
        return self.kind != CLOSEST

    def to_dict(self) -> dict:
        return {"score": round(self.score, 3), "match": self.kind, "device": self.device, "caches": self.caches,
                "curves": self.curves, "sizes": self.sizes, "conflicts": self.conflicts,
                "excluded": self.excluded,
                "sustained": self.sustained, "sustained_not_aggregated": self.sustained_left_out,
                "public_figures": self.public, "identified_via": self.via}


def words(text: str) -> list[str]:
    """Runs of letters and digits, NFKC-normalised and case folded: ``'Micron_5300_MTFDDAK'`` ->
    ``['micron', '5300', 'mtfddak']``."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _swaps(word: str):
    for i in range(len(word) - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2:]


def match_kind(query: str, model: str) -> str:
    """``exact``, ``typo`` or ``closest``: how ``query`` names ``model`` (module docstring).

    >>> match_kind("samsung 860", "Samsung SSD 860 PRO"), match_kind("samsung 860", "Samsung PM883")
    ('exact', 'closest')
    >>> match_kind("s4150", "INTEL SSD S4510"), match_kind("samsung 980 pro", "Samsung 983DCT")
    ('typo', 'closest')
    """
    q, m = compact(query), compact(model)
    if q and q in m:
        return EXACT
    mine = words(model)
    kind = EXACT
    for w in words(query):
        if any(w in x for x in mine):
            continue
        if len(w) >= 4 and any(s in x for s in _swaps(w) for x in mine):
            kind = TYPO
            continue
        return CLOSEST
    return kind


def trigrams(text: str) -> set[str]:
    t = compact(text)
    return {t[i : i + 3] for i in range(len(t) - 2)} if len(t) >= 3 else ({t} if t else set())


def similarity(query: str, model: str) -> float:
    """How well ``query`` names ``model``, 0..1 (1: the query is a contiguous part of it).

    >>> similarity("860 pro", "Samsung SSD 860 PRO") == 1.0
    True
    >>> similarity("S4150", "INTEL SSD S4510") > MIN_SCORE
    True
    """
    q, m = compact(query), compact(model)
    if not q or not m:
        return 0.0
    if q in m:
        return 1.0
    tq, tm = trigrams(q), trigrams(m)
    shared = len(tq & tm) / len(tq) if tq else 0.0
    width = len(q)
    windows = [m[i : i + width] for i in range(max(1, len(m) - width + 1))]
    edit = max(SequenceMatcher(None, q, w, autojunk=False).ratio() for w in windows)
    return SHARED_WEIGHT * shared + EDIT_WEIGHT * edit


def _flag(value) -> bool | None:
    return None if value is None else bool(value)


def open_db(db: Path) -> sqlite3.Connection:
    db = Path(db)
    try:
        mode = os.stat(db).st_mode
    except FileNotFoundError:
        raise DatabasePathError(f"{db} does not exist", hint="build it with `diskq db build`") from None
    except OSError as exc:
        raise DatabasePathError(f"{db}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise DatabasePathError(f"{db} is {kind(mode)}, not a devices.db", hint="give the database file with --db")
    try:
        con = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        con.execute("SELECT 1 FROM devices LIMIT 1")
    except sqlite3.Error as exc:
        raise DatabasePathError(f"{db} is not a devices.db: {exc}", hint="rebuild it with `diskq db build`") from None
    return con


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
            device["plp_evidence"] = json.loads(device["plp_evidence"]) if device.get("plp_evidence") else None
            device["osds_limited_by_sweep"] = _flag(device["osds_limited_by_sweep"])
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
                             via=ident.via if ident is not None and row["id"] in by_identity else None))
        return out
    finally:
        con.close()
