"""Drive models as Ceph reports them -> the database's facts about them.

:func:`match_model` is the one place ``diskq cluster`` asks the database which device a model
string names; everything else here reads its answer. Matching itself (part numbers, aliases,
near names) belongs to the database's lookup, which ``diskq lookup`` uses too.
"""

from __future__ import annotations

from pathlib import Path


def match_model(db: Path, query: str):
    """(the database's exact match for ``query`` or None, its near match or None, the models it
    names when it names several and none surely, the product line it names when nothing of that
    line was measured (its :class:`~diskq.database.lookup.LineAnswer`), or what a hard disk drive
    it names is (a text), or None): what ``diskq lookup`` answers, from the one matcher
    (:func:`diskq.database.lookup.answer`)."""
    from diskq.database.lookup import answer
    from diskq.database.matching import EXACT
    from diskq.database.name_search import CANDIDATE

    ans = answer(db, query, limit=3)
    if ans.hard_disk is not None:  # a hard disk drive: named as one, never "not in the database"
        return None, None, [], ans.hard_disk["text"]
    matches = ans.matches
    if matches and matches[0].kind == EXACT:
        return matches[0], None, [], None
    several = sorted(
        {m.device["model"] for m in matches if m.kind == CANDIDATE}
        | ({la.line["title"] for la in ans.lines} if ans.ambiguous else set())
    )
    line = ans.lines[0] if ans.lines and not ans.ambiguous and not matches else None
    return None, (matches[0] if matches and matches[0].is_match else None), several, line


class Matcher:
    """Models -> database facts, each model looked up once."""

    def __init__(self, db: Path | None, aliases: dict[str, str] | None = None):
        self.db, self.aliases, self.cache = db, dict(aliases or {}), {}
        self.notes: list[str] = []
        #: models the database does not hold that are hard disk drives by their model numbers: what each is
        self.hard_disks: dict[str, str] = {}
        #: models of a product line nothing was measured of: the line and its stored Ceph WAL/DB answer
        self.lines: dict[str, dict] = {}

    def facts(self, model: str | None) -> dict | None:
        if not model or self.db is None:
            return None
        if model not in self.cache:
            self.cache[model] = self._lookup(model)
        return self.cache[model]

    def _query(self, model: str) -> str:
        from diskq.database.keys import compact

        for part, name in self.aliases.items():
            if compact(part) and compact(part) in compact(model):
                return name
        return model

    def _lookup(self, model: str) -> dict | None:
        from diskq.database.settings import setting_slug

        query = self._query(model)
        exact, near, several, line = match_model(self.db, query)
        if exact is None:
            if several:  # several models fit: none is assumed
                self.notes.append(
                    f"{model}: names several models in the database ({', '.join(several)}); not used "
                    "(map it with --as if you know which)"
                )
            elif isinstance(line, str):
                self.hard_disks[model] = line
            elif line is not None:
                verdict = (line.verdicts or {}).get("ceph_waldb") or {}
                self.lines[model] = {
                    "line": line.line["title"],
                    "tier": verdict.get("tier"),
                    "basis": verdict.get("basis"),
                }
                self.notes.append(
                    f"{model}: a {line.line['title']}, not measured with diskq yet (`diskq lookup '{model}'` shows "
                    "what is known of it)"
                )
            elif near is not None:
                self.notes.append(
                    f"{model}: only a near match in the database ({near.device['model']}); "
                    "not used (map it with --as if it is the same drive)"
                )
            return None
        matches = [exact]
        d = matches[0].device
        curve = [
            (p["numjobs"], p["iops"])
            for p in matches[0].curves.get(setting_slug(d["cache"], d["cache_knob"]), [])
            if d["cache"]
        ]
        return {
            "model": d["model"],
            "query": query,
            "tier": d["ceph_waldb"],
            "iops_1job": d["iops_1job"],
            "max_iops": d["max_iops"],
            "p99_sync_us": d["p99_sync_us"],
            "osds_per_device": d["osds_per_device"],
            "osds_limited_by_sweep": d["osds_limited_by_sweep"],
            "curve": curve,
            "cache": d["cache"],
        }


def per_osd_rate(curve: list[tuple[int, float]], n: int) -> float | None:
    """Commits/s each of ``n`` OSDs gets from the device, read so as not to understate it:
    IOPS(M)/M at the largest measured M <= n, and never more than the peak IOPS / n.

    >>> per_osd_rate([(1, 1000.0), (4, 2000.0), (8, 2400.0)], 6)
    400.0
    """
    pts = sorted((int(m), float(x)) for m, x in curve if x and x > 0)
    below = [(m, x) for m, x in pts if m <= n]
    if not pts or not below or n < 1:
        return None
    m, x = below[-1]
    return min(x / m, max(x for _, x in pts) / n)
