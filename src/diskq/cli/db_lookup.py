"""``diskq lookup``: a device's answer from devices.db (its row, verdicts, power-loss
protection, curves, block-size profile, sustained-write cliff and the public figures of its
family), printed as text or as JSON.

Its module sorts between ``classify`` and ``identify``, where the command is listed in
``diskq --help`` (command modules register in the order of their names)."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli._lookup_lines import (
    _candidate_lines,
    _hard_disk_entries,
    _hard_disk_lines,
    _identity_text,
    _json_entries,
    _models,
    _public_lines,
    _unmeasured_lines,
)
from diskq.cli._terminal import say
from diskq.cli.app import app, database, print_json


def _sync_word(d: dict) -> str:
    """What the row's method called after each write (``fdatasync``, ``O_SYNC``): never fdatasync
    for a figure that was not."""
    from diskq.analyse.methodclass import SYNC_WORDS
    from diskq.submission import methods

    return SYNC_WORDS.get(methods.traits(d.get("method_id") or "").sync, "sync")


def _fmt(x, unit: str = "") -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}{unit}" if isinstance(x, float) else f"{x}{unit}"


def _sustained_lines(figures: list[dict], left_out: list[dict]) -> list[str]:
    """The sustained-write cliff of a device: one line per variant and cache setting, and the
    throughput of each counted write over the bytes it wrote, as a line of blocks."""
    from diskq.database.settings import setting_label
    from diskq.database.sustained import block_text, gigabytes, megabytes_per_s
    from diskq.publish.sustained_chart import sparkline

    lines = []
    for f in figures:
        what = (
            f"{f['variant']}, {block_text(f['block_size'])} writes at queue depth {f['iodepth']}, "
            f"cache {setting_label(f['write_cache'], f['knob'])}"
        )
        lines.append(f"  sustained write ({what}): {f['summary']}")
        top = max((v for m in f["writes"] for v in m["bw_samples"]), default=0.0)  # one scale for all
        for m in f["writes"]:
            lines.append(
                f"    {m['submission_id'][:12]} |{sparkline(m['bw_samples'], top=top)}| "
                f"0-{gigabytes(m['written_bytes'])} written, up to {megabytes_per_s(max(m['bw_samples'], default=0.0))}"
            )
    for m in left_out:
        lines.append(f"  sustained write not aggregated: {m['submission_id']} ({m['variant']}): {m['reason']}")
    return lines


def _chart(curves: dict[str, list[dict]], labels: dict[str, str], width: int = 40) -> list[str]:
    top = max((p["iops"] for pts in curves.values() for p in pts), default=0) or 1
    lines = []
    for setting, pts in curves.items():
        lines.append(f"  write cache {labels.get(setting, setting)}:")
        for p in pts:
            bar = "#" * max(1, round(p["iops"] / top * width))
            spread = f"  ({p['iops_min']:,.0f}-{p['iops_max']:,.0f}, n={p['n']})" if p["n"] > 1 else ""
            jobs = "job " if p["numjobs"] == 1 else "jobs"
            lines.append(f"  {p['numjobs']:>4} {jobs} |{bar:<{width}}| {p['iops']:>10,.0f} IOPS{spread}")
    return lines


def _size_lines(sizes: dict[str, list[dict]], labels: dict[str, str], width: int = 30) -> list[str]:
    """The median block-size profile per setting: IOPS, MB/s and p99 fdatasync per size, with
    a bar of the MB/s (what grows with the size)."""
    from diskq.units import block_label, latency_ms

    top = max((z["bw_bytes"] for zs in sizes.values() for z in zs), default=0) or 1
    lines = []
    for setting, zs in sizes.items():
        lines.append(f"  block-size profile, write cache {labels.get(setting, setting)} (1 job, write + fdatasync):")
        for z in zs:
            bar = "#" * max(1, round(z["bw_bytes"] / top * width))
            p99 = latency_ms(z["sync_p99_us"] / 1000) if z["sync_p99_us"] is not None else "-"
            n = f", n={z['n']}" if z["n"] > 1 else ""
            lines.append(
                f"  {block_label(z['block_size']):>8} |{bar:<{width}}| {z['iops']:>9,.0f} IOPS "
                f"{z['bw_bytes'] / 1e6:>8,.1f} MB/s  p99 fdatasync {p99}{n}"
            )
    return lines


def _conflict_verdict_lines(verdicts: dict) -> list[str]:
    """One line naming the verdicts that rest on figures in a conflict (decided or not)."""
    names = {
        "ceph_waldb": "Ceph WAL/DB",
        "osds_per_device": "OSDs per device",
        "etcd": "etcd",
        "postgres_wal": "PostgreSQL WAL",
        "zfs_slog": "ZFS SLOG",
    }
    bound = [
        names[k]
        for k in names
        if any(r.startswith("rests on a conflict") for r in (verdicts.get(k) or {}).get("reasons") or [])
    ]
    decided = [
        names[k]
        for k in names
        if any(
            r.startswith("rests on figures of which other evidence")
            for r in (verdicts.get(k) or {}).get("reasons") or []
        )
    ]
    out = []
    if bound:
        out.append(
            f"  {', '.join(bound)}: rest on two figures in a conflict (below), so each holds only as "
            '"at least": the 1-job figure counts as a lower bound'
        )
    if decided:
        out.append(f"  {', '.join(decided)}: rest on figures the model's other evidence kept in a conflict (below)")
    return out


def _size_verdict_lines(verdicts: dict) -> list[str]:
    """Which size each size-dependent verdict was read at, or that it was estimated from 4 KiB."""
    from diskq.units import block_label

    names = (("etcd", "etcd"), ("postgres_wal", "PostgreSQL WAL"), ("zfs_slog", "ZFS SLOG"))
    lines = []
    for key, name in names:
        v = verdicts.get(key) or {}
        if v.get("basis") == "measured" and v.get("block_size"):
            lines.append(f"  {name}: read at {block_label(v['block_size'])} from the block-size profile")
        elif v.get("basis"):
            lines.append(f"  {name}: {v['basis']} (no block-size profile near its write size)")
    slog = verdicts.get("zfs_slog") or {}
    if slog.get("reasons"):
        lines.append(f"  ZFS SLOG: {slog['reasons'][0]}")
    return lines


@app.command("lookup")
def lookup_cmd(
    query: str = typer.Argument(..., help="part of the model name; small typos are fine"),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="devices.db to search [default: the checkout's, else your copy from "
        "`diskq db update`, else the snapshot shipped with diskq]",
    ),
    limit: int = typer.Option(5, "--limit", min=1, max=100, help="most matches to show"),
    as_json: bool = typer.Option(False, "--json", help="print the matches as JSON on stdout"),
) -> None:
    """Find a device in devices.db by model name: its row, verdicts (power-loss protection with its
    evidence too), scaling curve and sustained-write cliff.

    The query is a part number or the string smartctl prints ("SAMSUNG MZ7LH7T6HMLA-00005" is a
    7.68 TB PM883), or the model's name ("Samsung PM883"; a model number is a whole word: PM863
    is never the PM863a, 510 never the S4510). Public figures of the model's line follow, each
    with its source, method class, quote and the capacity it was measured on. A model known
    only from public figures or only from its datasheet is shown as such ("match": "public" or
    "datasheet" in --json), with the command that measures it. Exit 0 with an answer; exit 1
    when nothing matches, or when only other models come close: "no exact match; closest: ..."
    (with --json, "match": "closest" on each entry); exit 6 when the query names several
    models and none surely ("samsung 860", a part number two lines share): the candidates are
    listed ("match": "candidate"), none is chosen. A hard disk drive, known by its model number
    ("ST4000NM0035", "WDC WD4003FFBX-68MU3N0"), is answered as one ("match": "hard disk", with
    "hard_disk": what it is and the evidence): unsuitable for every use that waits on a flush,
    exit 0 as for a line answered from its datasheet. Every entry of --json has "line" (the
    line's datasheet facts, null when none) and "identity" (how the query named it). The database read is said on stderr (and with
    --json as "database" on each entry): --db, else the checkout's, else your copy from
    `diskq db update`, else the snapshot shipped with diskq.

    Example: diskq lookup "pm883"
    """
    import json

    from diskq.database.lookup import answer
    from diskq.database.settings import setting_label, setting_slug
    from diskq.errors import AmbiguousModel, DatabaseError
    from diskq.units import capacity, latency_ms, plural

    found = database(db)
    ans = answer(found.path, query, limit=limit)
    matches = ans.matches
    if ans.ambiguous:  # several lines fit and none surely: list them, choose none
        if as_json:
            print_json(json.dumps(_json_entries(ans, found), indent=2))
        else:
            for line in _candidate_lines(ans):
                say(line, err=False)
        count = len(ans.lines) or len({m.device["model"] for m in matches if m.kind == "candidate"})
        if count == 1:  # one line fits, but its part-number source hedges: not sure enough to answer
            message = f"{query!r} may name {ans.lines[0].line['title'] if ans.lines else 'one model'}, not surely"
        else:
            message = f"{query!r} names {count} models; none is chosen"
        raise AmbiguousModel(message, hint="give the whole model name or the part number smartctl prints")
    if ans.hard_disk is not None:  # a hard disk drive: unsuitable from its datasheet facts, as a line would be
        if as_json:
            print_json(json.dumps(_hard_disk_entries(ans, found), indent=2))
        else:
            for line in _hard_disk_lines(ans.hard_disk):
                say(line, err=False)
        return
    if ans.lines and not matches:  # the drive is known: public figures or datasheet facts only
        if as_json:
            print_json(json.dumps(_json_entries(ans, found), indent=2))
        else:
            for line in _unmeasured_lines(ans.lines[0]):
                say(line, err=False)
        return
    if not matches:  # with --json too, after its empty list: scripts can test the exit status
        if as_json:
            print_json("[]")
        raise DatabaseError(f"no device matches {query!r}", hint="try a shorter part of the model name")
    if as_json:
        print_json(json.dumps(_json_entries(ans, found), indent=2))
    if not matches[0].is_match:  # similar models only: never shown as the answer
        closest = "; ".join(f"{m.device['model']} {m.device['firmware']}".strip() for m in matches)
        raise DatabaseError(
            f"no exact match for {query!r}; closest: {closest}",
            hint="a different model number is a different model; query by the words of its name",
        )
    if as_json:
        return

    def out(text: str) -> None:  # plain text: importing rich would cost a tenth of the start-up
        say(text, err=False)

    best, others = matches[0], matches[1:]
    d = best.device
    if d.get("not_drive"):
        out(f"{d['model']}  firmware {d['firmware'] or 'unknown'}  (not a drive: not ranked)")
        out(f"  not a drive: {d['not_drive']}")
    elif d.get("rank") is None:  # every submission held back: far from the model's other evidence
        out(f"{d['model']}  firmware {d['firmware'] or 'unknown'}  (held back: not ranked)")
    else:
        out(
            f"{d['model']}  firmware {d['firmware'] or 'unknown'}  (#{d['class_rank']} of its method class, "
            f"#{d['rank']} of the suitability table)"
        )
    if d.get("method_class_label"):
        out(f"  method: {d['method_id']} v{d['method_version']}, class: {d['method_class_label']}")
    if best.identity:
        out(f"  {_identity_text(best.identity)}")
    elif best.line:
        out(f"  line: {best.line['title']} (the line of its family)")
    if best.capacity_note:
        out(f"  {best.capacity_note}")
    out(
        f"  {capacity(d['capacity_bytes'])}, {d['protocol']}, {d['media']}; "
        f"{plural(d['submissions'], 'submission')}, {d['verified']} verified, "
        + (f"{d['unchecked']} signature intact (signer not checked), " if d["unchecked"] else "")
        + f"{d['legacy']} legacy"
    )
    cache = setting_label(d["cache"], d["cache_knob"]) if d["cache"] else "-"
    out(
        f"  1-job IOPS {_fmt(d['iops_1job'])} at cache {cache}, max IOPS {_fmt(d['max_iops'])} "
        f"at {plural(d['peak_jobs'], 'job') if d['peak_jobs'] is not None else '- jobs'}, scaling {d['scaling'] or '-'}, p99 {_sync_word(d)} {latency_ms(d['p99_sync_us'] / 1000) if d['p99_sync_us'] is not None else '-'}"
    )
    from diskq.database.answers import lines as answer_lines

    osds = d["osds_per_device_text"]
    if osds and d.get("osds_rate_text"):
        osds += f" ({d['osds_rate_text']}; one HDD OSD needs {_fmt(d['osds_demand_iops'])})"
    elif d.get("osds_per_device") == 0 and d.get("osds_demand_iops"):
        osds += f" (one HDD OSD needs {_fmt(d['osds_demand_iops'])} commits/s)"
    for line in answer_lines(best.verdicts, osds):  # the answer per use, as stored by the build
        out(f"  {line}")
    if not best.verdicts:  # a database built before the answers: its verdict columns
        out(
            f"  Ceph WAL/DB: {d['ceph_waldb'] or '-'}, OSDs per device: {osds or '-'}, "
            f"etcd: {d['etcd'] or '-'}, ZFS SLOG: {d.get('zfs_slog') or '-'}"
        )
    for line in _size_verdict_lines(d.get("verdicts") or {}):
        out(line)
    for line in _conflict_verdict_lines(d.get("verdicts") or {}):
        out(line)
    plp = d.get("plp_evidence") or {}
    if plp:
        reasons = plp.get("reasons") or ["no reason given"]
        shown = "not applicable" if plp.get("rule") == "not_applicable" else plp.get("verdict")
        out(f"  power-loss protection: {shown} ({reasons[0]}; rule {plp.get('rule')})")
        for conflict in plp.get("conflicts") or []:
            out(f"    conflict: {conflict}")
        marks = {"plp": "+", "no_plp": "-", "neutral": ".", "failing": "!"}
        for e in plp.get("evidence") or []:
            strength = f" ({e['strength']})" if e.get("strength") else ""
            out(f"    {marks.get(e.get('points_to'), '?')} {e.get('kind')}{strength}: {e.get('text')}")
    for c in best.caches:
        unsafe = "" if c["safe"] else f" (unsafe: {c['unsafe_reason'] or 'failed the flush check'})"
        label = setting_label(c["write_cache"], c["knob"])
        scaling = c["scaling_json"] or {}
        if scaling.get("description"):
            whose = " (the contributor's words)" if scaling.get("method") == "contributor" else ""
            out(f"  cache {label}: {scaling['description']}{whose}{unsafe}")
        elif unsafe:
            out(f"  cache {label}:{unsafe}")
        if c.get("source_words") and scaling.get("method") != "contributor":
            out(f'  cache {label}, in the contributor\'s words: "{c["source_words"]}"')
    said = set()
    for q in best.conflicts:
        jobs = plural(q["numjobs"], "job")
        out(f"  conflict: cache {q['write_cache']}, {q['iops']:,.0f} IOPS at {jobs}: {q['status']}")
        if q["reason"] not in said:
            said.add(q["reason"])
            out(f"    {q['reason']}")
    for x in best.excluded:
        out(f"  not aggregated: {x['path']}: {x['reason']}")
    for note in d["notes"]:
        out(f"  note: {note}")
    labels = {
        setting_slug(c["write_cache"], c["knob"]): setting_label(c["write_cache"], c["knob"]) for c in best.caches
    }
    for line in _chart(best.curves, labels):
        out(line)
    for line in _size_lines(best.sizes, labels):
        out(line)
    for line in _sustained_lines(best.sustained, best.sustained_left_out):
        out(line)
    for line in _public_lines(
        _models(best.public), heading="public figures of this family (other methods: labelled, not merged)"
    ):
        out(line)

    def names(ms) -> str:
        return "; ".join(f"{m.device['model']} {m.device['firmware']}".strip() for m in ms)

    if any(m.is_match for m in others):
        out("other matches: " + names(m for m in others if m.is_match))
    if any(not m.is_match for m in others):
        out("similar models (not matches): " + names(m for m in others if not m.is_match))
