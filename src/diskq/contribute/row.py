"""The row a contributed submission gives its drive, and how it compares with what the database
holds: one answer, rendered once, for the pull request's body (``diskq contribute``) and for the
comment the pull-request workflow posts (``diskq pr-comment``).

:func:`build_preview` builds ``devices.db`` twice from the same catalogue, without and with the
added files (``diskq db build``'s own code: the row, the recomputed verdicts and the outlier rule
are the database's, nothing is recomputed here), and :func:`preview` reads from both databases
what a reviewer needs: the submission's own figures, the device's row before and after, whether
the database aggregates the figures or holds them back from the model's other evidence (and why),
and the model's public figures. :func:`render_markdown` writes it.
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: Marks the workflow's comment, so that a new push edits it instead of adding another.
COMMENT_MARK = "<!-- diskq-pr-comment -->"

_ROW = (
    "model",
    "firmware",
    "method_class",
    "scaling",
    "cache",
    "cache_knob",
    "iops_1job",
    "max_iops",
    "peak_jobs",
    "ceph_waldb",
    "etcd",
    "postgres_wal",
    "zfs_slog",
    "power_loss_protection",
    "submissions",
    "verified",
    "rank",
    "family_key",
    "model_key",
    "not_drive",
)


@dataclass
class Preview:
    """What one added submission does to the database."""

    path: str
    submission_id: str | None
    model: str | None = None
    firmware: str | None = None
    own: list[dict] = field(default_factory=list)  # the submission's runs: write_cache, iops_1job, max_iops, peak_jobs
    after: dict | None = None  # the device's row with the submission
    before: dict | None = None  # the same device's row without it (None: a new row)
    others: list[dict] = field(default_factory=list)  # rows of the same model with another firmware, before
    aggregated: bool = False
    excluded: str | None = None  # why the database does not aggregate it
    signature: str | None = None
    skipped: list[str] = field(default_factory=list)  # why db build skipped the file (then nothing else is known)
    public: list[dict] = field(default_factory=list)  # public figures of the family: name, class, cache, 1-job, best


def _row(con: sqlite3.Connection, where: str, args: tuple) -> list[dict]:
    cols = {r[1] for r in con.execute("PRAGMA table_info(devices)")}
    wanted = [c for c in _ROW if c in cols]
    con.row_factory = sqlite3.Row
    return [dict(r) for r in con.execute(f"SELECT id, {', '.join(wanted)} FROM devices WHERE {where}", args)]


def preview(before_db: Path | None, after_db: Path, paths: list[str]) -> list[Preview]:
    """One :class:`Preview` per added file (``paths``: relative to the submissions directory)."""
    from diskq.database import evidence

    after = sqlite3.connect(f"file:{after_db}?mode=ro", uri=True)
    after.row_factory = sqlite3.Row
    before = sqlite3.connect(f"file:{before_db}?mode=ro", uri=True) if before_db is not None else None
    out = []
    try:
        for rel in paths:
            sub = after.execute("SELECT * FROM submissions WHERE path = ?", (rel,)).fetchone()
            if sub is None:
                skipped = [
                    f"{r['field']}: {r['message']}"
                    for r in after.execute("SELECT field, message FROM skipped WHERE path = ?", (rel,))
                ]
                out.append(Preview(rel, None, skipped=skipped or ["the build did not take the file"]))
                continue
            p = Preview(
                rel,
                sub["id"],
                model=sub["model"],
                firmware=sub["firmware"],
                aggregated=bool(sub["aggregated"]),
                excluded=sub["excluded"] or sub["not_drive"],
                signature=sub["signature"],
            )
            p.own = [
                dict(r)
                for r in after.execute(
                    "SELECT write_cache, iops_1job, max_iops, peak_jobs FROM runs WHERE submission_id = ? ORDER BY run",
                    (sub["id"],),
                )
            ]
            rows = _row(after, "id = ?", (sub["device_id"],))
            p.after = rows[0] if rows else None
            if before is not None and p.after is not None:
                same = _row(before, "id = ?", (sub["device_id"],))
                p.before = same[0] if same else None
                p.others = [
                    r for r in _row(before, "model_key = ?", (p.after["model_key"],)) if r["id"] != sub["device_id"]
                ]
            if p.after is not None:
                for model in evidence.public_models_of_family(after, p.after.get("family_key") or ""):
                    for c in model.classes:
                        p.public.append(
                            {
                                "name": model.name,
                                "class": c.get("label") or c.get("method_class"),
                                "method_class": c.get("method_class"),
                                "write_cache": c.get("write_cache"),
                                "iops_1job": c.get("iops_1job"),
                                "best_iops": c.get("best_iops"),
                                "best_numjobs": c.get("best_numjobs"),
                                "figures": c.get("figures"),
                            }
                        )
            out.append(p)
    finally:
        after.close()
        if before is not None:
            before.close()
    return out


def build_preview(base: Path, head: Path, paths: list[str], *, allowed_signers: Path | None = None) -> list[Preview]:
    """Build ``devices.db`` from the checkout ``base`` and from ``head`` (each a directory with
    ``submissions/``, and ``sources/`` and ``allowed_signers`` when it has them) and preview the
    files ``paths`` (relative to ``submissions/``) that ``head`` adds. Signers are checked
    against ``allowed_signers`` (default: each checkout's own file)."""
    from diskq.database.build import build

    with tempfile.TemporaryDirectory(prefix="diskq-preview-") as tmp:
        dbs = []
        for name, tree in (("base", base), ("head", head)):
            subs = tree / "submissions"
            if not subs.is_dir():
                subs = Path(tmp) / f"{name}-empty" / "submissions"
                subs.mkdir(parents=True)
            signers = allowed_signers or (tree / "allowed_signers" if (tree / "allowed_signers").is_file() else None)
            db = Path(tmp) / f"{name}.db"
            build(
                subs,
                db,
                allowed_signers=signers,
                jobs=1,
                memo=None,
                sources=tree / "sources" if (tree / "sources").is_dir() else None,
            )
            dbs.append(db)
        return preview(dbs[0], dbs[1], paths)


def _cell(value) -> str:
    """Text for a Markdown table cell: pipes, backslashes and emphasis marks escaped."""
    if value is None or value == "":
        return "-"
    text = str(value)
    for ch in "\\|*_`[]<>":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", " ")


def _iops(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _peak(row: dict) -> str:
    if row.get("max_iops") is None:
        return "-"
    jobs = row.get("peak_jobs")
    return _iops(row["max_iops"]) + (f" ({jobs} jobs)" if jobs else "")


def _class(row: dict) -> str:
    from diskq.analyse import methodclass

    return methodclass.label(row["method_class"]) if row.get("method_class") else "-"


def _pg(value) -> str:
    return "-" if value is None else f"{value:,.0f} commits/s"


HEADER = (
    "| | model | firmware | class | curve | cache | 1-job IOPS | peak IOPS | Ceph WAL/DB | etcd | "
    "PostgreSQL WAL | ZFS SLOG | power-loss protection | submissions |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def _device_line(label: str, row: dict) -> str:
    cache = row.get("cache") or "-"
    if row.get("cache_knob") == "kernel":
        cache += " (kernel)"
    return (
        f"| {label} | {_cell(row.get('model'))} | {_cell(row.get('firmware'))} | {_cell(_class(row))} | "
        f"{_cell(row.get('scaling'))} | {_cell(cache)} | {_iops(row.get('iops_1job'))} | {_peak(row)} | "
        f"{_cell(row.get('ceph_waldb'))} | {_cell(row.get('etcd'))} | {_pg(row.get('postgres_wal'))} | "
        f"{_cell(row.get('zfs_slog'))} | {_cell(row.get('power_loss_protection'))} | "
        f"{row.get('submissions', '-')} ({row.get('verified', 0)} verified) |\n"
    )


def public_disagreements(p: Preview) -> list[str]:
    """Where the submission's figures lie far from the public figures of its family measured by
    the same method class, by the outlier rule's own test (``criteria.toml`` [outliers]
    ``max_ratio``, :func:`diskq.analyse.outliers.judge`). The database does not hold a submission
    back for these (its rule weighs submissions and legacy rows), so this is shown, not decided."""
    from diskq.analyse import criteria
    from diskq.analyse.outliers import judge

    limit = float(criteria.section("outliers")["max_ratio"])
    klass = (p.after or {}).get("method_class")
    out = []
    for c in p.public:
        if c.get("method_class") != klass:
            continue
        for r in p.own:
            for what, mine, theirs in (
                ("1-job IOPS", r.get("iops_1job"), c.get("iops_1job")),
                ("peak IOPS", r.get("max_iops"), c.get("best_iops")),
            ):
                if mine is None or theirs is None:
                    continue
                far = judge(
                    {"this": mine}, [theirs], max_ratio=limit, what=what, where=f"(cache {r['write_cache']})"
                ).far.get("this")
                if far:
                    text = far.replace("the model's public figure", f"{c['name']}'s public figure")
                    out.append(f"{text}, cache {c.get('write_cache')} there")
    return out


def _agreement(p: Preview) -> str:
    """Whether the figures agree with the other evidence for the model, and on what that rests."""
    evidence = []
    if p.before is not None:
        evidence.append(f"{p.before.get('submissions', 0)} submission(s) of this model and firmware")
    if p.others:
        evidence.append(f"{sum(r.get('submissions') or 0 for r in p.others)} of other firmware (not compared)")
    if p.public:
        evidence.append(f"{sum(c.get('figures') or 0 for c in p.public)} public figure(s) of its family")
    far = public_disagreements(p)
    if far:
        held = "held back by the database" if not p.aggregated else "aggregated by the database all the same"
        return (
            f"**Disagrees** with the public figures of its family ({held}: its outlier rule weighs "
            "submissions and legacy rows, not other sources):\n\n"
            + "".join(f"- {_cell(f)}\n" for f in far)
            + (f"\nHeld back because: {_cell(p.excluded)}\n" if p.excluded else "")
        )
    if not p.aggregated:
        return f"**Held back**: {_cell(p.excluded or 'not aggregated')}. Evidence: {'; '.join(evidence) or 'none'}.\n"
    if p.before is None and not any(c.get("method_class") == (p.after or {}).get("method_class") for c in p.public):
        return (
            "**First evidence for this model**: nothing to compare with (the database holds no other "
            "submission of this model and firmware, nor a public figure of its family by the same method "
            "class).\n"
        )
    ratios = []
    for r in p.own:
        if (
            p.before is not None
            and r["write_cache"] == p.before.get("cache")
            and r["iops_1job"]
            and p.before.get("iops_1job")
        ):
            ratios.append(
                f"its 1-job IOPS are {r['iops_1job'] / p.before['iops_1job']:.2f}x today's row "
                f"(cache {_cell(r['write_cache'])})"
            )
    return (
        "**Agrees** with the other evidence: the database aggregates it; the outlier rule "
        "(`criteria.toml` [outliers]) did not hold it back. Evidence: "
        + "; ".join(evidence)
        + (". " + "; ".join(ratios).capitalize() if ratios else "")
        + ".\n"
    )


def render_markdown(previews: list[Preview], *, title: str = "What this contribution adds to the database") -> str:
    """The Markdown shown in the pull request (its body, and the workflow's comment)."""
    out = [f"{COMMENT_MARK}\n### {title}\n"]
    for p in previews:
        out.append(f"\n#### `{p.path}`\n\n")
        if p.skipped:
            out.append("**Not taken by `diskq db build`**:\n\n" + "".join(f"- {_cell(s)}\n" for s in p.skipped))
            continue
        out.append(f"Signature: {p.signature}. ")
        own = "; ".join(
            f"cache {_cell(r['write_cache'])}: 1-job {_iops(r['iops_1job'])}, peak {_peak(r)}" for r in p.own
        )
        out.append(f"Its own figures: {own or 'none'}.\n\n")
        out.append(HEADER)
        if p.after is not None:
            out.append(_device_line("with it", p.after))
        if p.before is not None:
            out.append(_device_line("today", p.before))
        else:
            out.append("| today | not in the database |  |  |  |  |  |  |  |  |  |  |  |  |\n")
        for r in p.others:
            out.append(_device_line("other firmware", r))
        out.append("\n" + _agreement(p))
        if p.public:
            out.append("\nPublic figures of its family (other methods are never compared as equal):\n\n")
            for c in p.public:
                out.append(
                    f"- {_cell(c['name'])}, {_cell(c['class'])}, cache {_cell(c['write_cache'])}: "
                    f"1-job {_iops(c['iops_1job'])}, best {_iops(c['best_iops'])} "
                    f"({c.get('best_numjobs')} jobs), {c.get('figures')} figure(s)\n"
                )
    out.append("\nVerdicts are recomputed by `diskq db build` with the current criteria, not taken from the file.\n")
    return "".join(out)
