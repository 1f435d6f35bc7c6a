"""What devices.db knows about a drive before a measurement, in a few lines (``identify``,
``bench``, the fleet report): the devices and public figures of the line its model names, or
what a line nothing was measured of is and the answer ``diskq lookup`` gives for it (stored by
``db build``, read through :func:`diskq.database.lookup.answer`), or that it is a hard disk drive
and its answer (:func:`diskq.database.answers.hard_disk`). Never an answer of its own."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from diskq.analyse import methodclass
from diskq.database.evidence import KNOWN_LINES, class_summary, default_db, devices_of, public_models_of_family
from diskq.errors import DiskqError


@dataclass
class Known:
    """What devices.db knows about a drive (:func:`known`): its lines of text, the stored answer
    per use (of its best measured device row, of a line nothing of which was measured, or of a
    hard disk drive; None otherwise), the hard disk it was recognised as, and the datasheet facts
    of the line the model names surely (for the power-loss verdict)."""

    lines: list[str]
    verdicts: dict | None = None
    hard_disk: dict | None = None
    facts: object | None = None


def known_lines(model: str | None, db: Path | None = None, *, rotation_rpm: int | None = None) -> list[str]:
    """The lines of :func:`known`."""
    return known(model, db, rotation_rpm=rotation_rpm).lines


def _answer_lines(verdicts: dict | None) -> list[str]:
    from diskq.database.answers import lines as answer_lines

    return [f"  {text}" for text in answer_lines(verdicts)]


def _hard_disk(con: sqlite3.Connection, model: str, rotation_rpm: int | None) -> Known | None:
    """A hard disk drive, as ``lookup`` answers one (:func:`diskq.database.answers.hard_disk`),
    with the rotation rate the drive reports; None when nothing says it is one."""
    from diskq.database.answers import hard_disk

    disk = hard_disk(con, model, reported_rpm=rotation_rpm)
    if disk is None:
        return None
    if rotation_rpm == 0:  # the drive's own report against its model number: neither is assumed
        return Known(
            [
                f"device database: {model}: its model number reads as {disk['text']}, but the drive reports "
                "non-rotating media (a solid-state drive): no answer is assumed",
                f"  evidence: {disk['evidence']}",
            ]
        )
    head = [f"device database: {model}: {disk['text']}", f"  evidence: {disk['evidence']}"]
    info = {k: v for k, v in disk.items() if k != "verdicts"}
    return Known(head + _answer_lines(disk["verdicts"]), disk["verdicts"], info)


def known(model: str | None, db: Path | None = None, *, rotation_rpm: int | None = None) -> Known:
    """What devices.db knows about a drive of this model, in a few lines: the line the one
    matcher names (:mod:`diskq.identity.match`), its table rows with their method class, then
    public figures by class with the capacity each was measured on; a line nothing of which was
    measured says what the drive is and the answer ``lookup`` gives for it (stored by ``db
    build``: :func:`diskq.database.lookup.answer`); a hard disk drive (by its model number, or by
    the ``rotation_rpm`` the drive reports) is named as one with its answer. Never raises: a
    missing or unreadable database, a model it does not know, or one it cannot tell from others,
    is said in one line."""
    if not model:
        return Known([])
    try:
        from diskq.database.locate import open_db

        path = Path(db) if db is not None else default_db()
        con = open_db(path)
    except (DiskqError, OSError, sqlite3.Error) as exc:
        return Known([f"device database: not read ({getattr(exc, 'message', exc)})"])
    try:
        from diskq.database.answers import device_verdicts
        from diskq.identity import query as identity_query

        found = identity_query.find(con, model)
        if found.lines and not found.sure:
            titles = ", ".join(lm.candidate.line.title for lm in found.lines)
            return Known([f"device database: {model!r} may be any of {titles}; none is assumed"])
        facts = found.lines[0].candidate.line.facts if found.lines else None
        ids, ident = devices_of(con, model)
        if ident is None:
            return _hard_disk(con, model, rotation_rpm) or Known(
                [f"device database: {model!r} is not a model it can identify"]
            )
        asked = found.asked_capacity if found.lines else None
        lines = []
        stored = {did: device_verdicts(con, did) for did in ids}
        for did in ids:
            d = con.execute("SELECT * FROM devices WHERE id = ?", (did,)).fetchone()
            one = f"{d['iops_1job']:,.0f}" if d["iops_1job"] is not None else "-"
            fw = f" firmware {d['firmware']}" if d["firmware"] else ""
            lines.append(
                f"device database: {d['model']}{fw}: 1-job {one} IOPS, Ceph WAL/DB {d['ceph_waldb'] or '-'}"
                f"{_basis(stored[did])}, "
                f"#{d['class_rank']} in class {methodclass.label(d['method_class'])}; "
                f"{identity_query.capacity_note(d['capacity_bytes'], asked)}"
            )
        families = found.lines[0].candidate.line.families if found.lines else (ident.key,)
        for key in families:
            for m in public_models_of_family(con, key):
                for line in class_summary(m):
                    lines.append(f"public figures: {m.name}: {line}")
        if len(lines) > KNOWN_LINES:
            lines = lines[: KNOWN_LINES - 1] + [f"... and {len(lines) - KNOWN_LINES + 1} more: diskq lookup {model!r}"]
        if found.lines and not ids:  # a line nothing was measured of: what it is and its stored answer
            line = found.lines[0].candidate.line
            what = ", ".join(x for x in (line.facts.segment, line.facts.interface) if x) or "a line its sources name"
            head = f"device database: {line.title} ({what}): nothing measured yet (identified by {found.lines[0].candidate.how})"
            verdicts = _line_verdicts(path, model)
            return Known([head, *_answer_lines(verdicts), *lines], verdicts, facts=facts)
        if not lines:
            return _hard_disk(con, model, rotation_rpm) or Known(
                [f"device database: nothing yet for {ident.vendor} {ident.family} (from {ident.via})"]
            )
        return Known(lines, stored[ids[0]] if ids else None, facts=facts)
    except sqlite3.Error as exc:
        return Known([f"device database: not read ({exc})"])
    finally:
        con.close()


def _basis(verdicts: dict | None) -> str:
    """`` (basis measured)``: what a row's stored Ceph WAL/DB answer rests on, as ``lookup``
    prints it; empty for a row stored without its answer."""
    basis = ((verdicts or {}).get("ceph_waldb") or {}).get("basis")
    return f" (basis {basis})" if basis else ""


def _line_verdicts(path: Path, model: str) -> dict | None:
    """The answer ``diskq lookup`` gives for the line ``model`` names when nothing of it was
    measured (devices.db ``line_answers``, with its public models' answer): read through
    :func:`diskq.database.lookup.answer`, never computed here."""
    from diskq.database.lookup import answer

    try:
        ans = answer(path, model)
    except DiskqError:
        return None
    return ans.lines[0].verdicts if ans.lines and not ans.ambiguous else None
