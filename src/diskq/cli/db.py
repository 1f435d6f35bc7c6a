"""``diskq db build``, ``diskq db update``, ``diskq lookup`` and ``diskq site build``: the device
database and the site."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli.app import app, database, print_json, stderr_console

db_app = typer.Typer(
    help="Build devices.db from the submissions, or fetch the published one.\n\n"
         "Example: diskq db build --submissions submissions --db devices.db",
    no_args_is_help=True,
)
site_app = typer.Typer(
    help="Generate the static site from devices.db.\n\nExample: diskq site build --db devices.db --out _site",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")
app.add_typer(site_app, name="site")

MAX_SKIPPED_FILES = 40
MAX_PROBLEMS_PER_FILE = 10


@db_app.command("build")
def db_build(
    submissions: Path = typer.Option(Path("submissions"), "--submissions", help="directory of submission files"),
    db: Path = typer.Option(Path("devices.db"), "--db", help="database to write (or to check)"),
    check: bool = typer.Option(False, "--check", help="do not write: fail if DB is not what a build would write now"),
    strict: bool = typer.Option(False, "--strict", help="exit non-zero when any submission file was skipped"),
    allowed_signers: Path | None = typer.Option(
        None, "--allowed-signers",
        help="ssh allowed_signers file: only keys listed there count as verified (others: signature intact, "
             "signer not checked; unlisted keys are kept, not verified) [default: the repository's "
             "allowed_signers beside the submissions directory, when there is one]"),
    no_allowed_signers: bool = typer.Option(
        False, "--no-allowed-signers", help="check no signer, not even against the repository's allowed_signers"),
    jobs: int | None = typer.Option(None, "--jobs", min=1, help="worker processes (default: one per CPU)"),
    memo: Path | None = typer.Option(
        None, "--memo", help="validation memo file [default: ~/.cache/diskq/validated.sqlite]"),
    no_memo: bool = typer.Option(False, "--no-memo", help="validate every file again, remember nothing"),
    sources: Path | None = typer.Option(
        None, "--sources",
        help="public-figures catalogue (sources.toml, methods.toml, figures/*.csv) [default: sources/ beside the "
             "submissions directory; absent: no public figures]"),
) -> None:
    """Re-validate every submission and build devices.db (atomically replaced).

    Invalid files are skipped and listed; the build still succeeds unless --strict is given.
    With --check nothing is written: the command fails when DB is out of date. Validation
    answers are remembered per file content and code version (--memo), so rebuilds only
    validate new or changed files; --no-memo validates everything again.

    Signatures are verified against the repository's allowed_signers (beside the submissions
    directory) when there is one, or the file given with --allowed-signers. Public figures are
    imported from the sources/ directory beside the submissions (--sources names another); a
    malformed file there stops the build with one line naming the file, line and field.

    Example: diskq db build --check
    """
    from rich.text import Text

    from diskq.database.build import build, check as check_db
    from diskq.database.memo import default_path
    from diskq.errors import DatabaseError

    from diskq.errors import InvalidInput
    from diskq.submission.signers import repository_file

    memo = None if no_memo else (memo or default_path())
    console = stderr_console()

    def err(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    if no_allowed_signers and allowed_signers is not None:
        raise InvalidInput("--allowed-signers and --no-allowed-signers contradict each other")
    if allowed_signers is None and not no_allowed_signers:
        beside = repository_file(submissions)
        if beside.is_file():  # the file merged contributions extend: signatures are checked against it
            allowed_signers = beside
            err(f"signers checked against {beside}")

    if check:
        report = check_db(submissions, db, allowed_signers=allowed_signers, jobs=jobs, memo=memo, sources=sources)
    else:
        with console.status(Text(f"building {db} from {submissions}/ ...")):
            report = build(submissions, db, allowed_signers=allowed_signers, jobs=jobs, memo=memo, sources=sources)
    skipped = report.skipped_files()
    for path, problems in list(skipped.items())[:MAX_SKIPPED_FILES]:
        if len(problems) == 1:
            err(f"skipped {path}: {_problem(problems[0])}")
            continue
        err(f"skipped {path}: {len(problems)} problems")
        for s in problems[:MAX_PROBLEMS_PER_FILE]:
            err(f"  - {_problem(s)}")
        if len(problems) > MAX_PROBLEMS_PER_FILE:
            err(f"  ... and {len(problems) - MAX_PROBLEMS_PER_FILE} more (see the skipped table)")
    if len(skipped) > MAX_SKIPPED_FILES:
        err(f"... and {len(skipped) - MAX_SKIPPED_FILES} more skipped files (see the skipped table)")
    for note in report.notes:
        err(note)
    verb = "is up to date" if check else "written"
    public = (f"{report.public.get('public_figures', 0)} public figures of {report.public.get('public_models', 0)} "
              f"models from {report.public.get('public_sources', 0)} sources, ") if report.public.get("public_figures") else ""
    err(f"{db} {verb}: {report.submissions} submissions, {report.devices} devices, "
              f"{public}{len(skipped)} skipped, search index: {report.fts}, digest {report.digest[:12]}")
    if strict and skipped:
        raise DatabaseError(f"{len(skipped)} submission file(s) skipped (--strict)")


@db_app.command("update")
def db_update(
    url: str | None = typer.Option(
        None, "--url", help="address of the published devices.db; its digest is read from URL.sha256 "
                            "[default: $DISKQ_DB_URL, else devices.db on the project's site]"),
    timeout: float = typer.Option(30.0, "--timeout", min=0.001, help="seconds a connection or a read may stall"),
) -> None:
    """Fetch the current devices.db from the published site into your data directory
    ($XDG_DATA_HOME/diskq, or ~/.local/share/diskq), checked against the SHA-256 digest the site
    publishes beside it. On any failure (no answer, a truncated download, a wrong digest) the
    previous copy is kept. Outside a checkout, lookup and plan read this copy before the snapshot
    shipped with diskq.

    Example: diskq db update
    """
    from diskq.database.locate import NAME, checkout_database, user_data_dir
    from diskq.database.update import default_url, update

    err = stderr_console()
    address = url or default_url()
    with err.status(f"fetching {address} ..."):
        report = update(address, user_data_dir() / NAME, timeout=timeout)
    say = (f"{report.path} updated" if report.changed else f"{report.path} is up to date")
    err.print(f"{say}: {report.devices} devices, {report.bytes:,} bytes, sha256 {report.digest[:12]}, "
              f"from {report.url}", markup=False, highlight=False, soft_wrap=True)
    shadow = checkout_database()
    if shadow is not None:
        err.print(f"note: here commands read {shadow} first (the checkout's); give --db to choose",
                  markup=False, highlight=False, soft_wrap=True)


def _problem(s) -> str:
    return f"{s.field + ': ' if s.field not in ('', '-') else ''}{s.message}"


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
        what = (f"{f['variant']}, {block_text(f['block_size'])} writes at queue depth {f['iodepth']}, "
                f"cache {setting_label(f['write_cache'], f['knob'])}")
        lines.append(f"  sustained write ({what}): {f['summary']}")
        top = max((v for m in f["writes"] for v in m["bw_samples"]), default=0.0)  # one scale for all
        for m in f["writes"]:
            lines.append(f"    {m['submission_id'][:12]} |{sparkline(m['bw_samples'], top=top)}| "
                         f"0-{gigabytes(m['written_bytes'])} written, up to {megabytes_per_s(max(m['bw_samples'], default=0.0))}")
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
    from diskq.units import block_label
    from diskq.units import latency_ms

    top = max((z["bw_bytes"] for zs in sizes.values() for z in zs), default=0) or 1
    lines = []
    for setting, zs in sizes.items():
        lines.append(f"  block-size profile, write cache {labels.get(setting, setting)} (1 job, write + fdatasync):")
        for z in zs:
            bar = "#" * max(1, round(z["bw_bytes"] / top * width))
            p99 = latency_ms(z["sync_p99_us"] / 1000) if z["sync_p99_us"] is not None else "-"
            n = f", n={z['n']}" if z["n"] > 1 else ""
            lines.append(f"  {block_label(z['block_size']):>8} |{bar:<{width}}| {z['iops']:>9,.0f} IOPS "
                         f"{z['bw_bytes'] / 1e6:>8,.1f} MB/s  p99 fdatasync {p99}{n}")
    return lines


def _conflict_verdict_lines(verdicts: dict) -> list[str]:
    """One line naming the verdicts that rest on figures in a conflict (decided or not)."""
    names = {"ceph_waldb": "Ceph WAL/DB", "osds_per_device": "OSDs per device", "etcd": "etcd",
             "postgres_wal": "PostgreSQL WAL", "zfs_slog": "ZFS SLOG"}
    bound = [names[k] for k in names if any(r.startswith("rests on a conflict")
                                            for r in (verdicts.get(k) or {}).get("reasons") or [])]
    decided = [names[k] for k in names if any(r.startswith("rests on figures of which other evidence")
                                              for r in (verdicts.get(k) or {}).get("reasons") or [])]
    out = []
    if bound:
        out.append(f"  {', '.join(bound)}: rest on two figures in a conflict (below), so each holds only as "
                   "\"at least\": the 1-job figure counts as a lower bound")
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
        None, "--db", help="devices.db to search [default: the checkout's, else your copy from "
                           "`diskq db update`, else the snapshot shipped with diskq]"),
    limit: int = typer.Option(5, "--limit", min=1, max=100, help="most matches to show"),
    as_json: bool = typer.Option(False, "--json", help="print the matches as JSON on stdout"),
) -> None:
    """Find a device in devices.db by model name: its row, verdicts (power-loss protection with its
    evidence too), scaling curve and sustained-write cliff.

    Every word of the query must be part of the model's name (a swapped pair of neighbouring
    characters is forgiven), or the query is a part number or the string smartctl prints
    ("SAMSUNG MZ7LH7T6HMLA-00005" finds the PM883). Public figures of the model's family follow,
    each with its source, method class and quote. A model known only from public figures is
    shown with them ("match": "public" in --json). Exit 0 with a match; exit 1 when nothing
    matches, or when only other models come close: "no exact match; closest: ..." (with --json,
    the list has "match": "closest" on each entry). The database read is said on stderr (and with
    --json as "database" on each entry): --db, else the checkout's, else your copy from
    `diskq db update`, else the snapshot shipped with diskq.

    Example: diskq lookup "pm883"
    """
    import json

    from diskq.database.settings import setting_label, setting_slug
    from diskq.database.lookup import lookup
    from diskq.errors import DatabaseError
    from diskq.units import capacity, latency_ms, plural

    found = database(db)
    matches = lookup(found.path, query, limit=limit)
    if not matches or not matches[0].is_match:  # public figures may still know the model
        public = _public_only(found.path, query)
        if public:
            if as_json:
                print_json(json.dumps([{"match": "public", "public_model": m.to_dict(), "database": found.to_dict()}
                                       for m in public], indent=2))
            else:
                for line in _public_lines(public, heading="not measured with diskq; public figures"):
                    print(line)
            return
    if not matches:  # with --json too, after its empty list: scripts can test the exit status
        if as_json:
            print_json("[]")
        raise DatabaseError(f"no device matches {query!r}", hint="try a shorter part of the model name")
    if as_json:
        print_json(json.dumps([{**m.to_dict(), "database": found.to_dict()} for m in matches], indent=2))
    if not matches[0].is_match:  # similar models only: never shown as the answer
        closest = "; ".join(f"{m.device['model']} {m.device['firmware']}".strip() for m in matches)
        raise DatabaseError(f"no exact match for {query!r}; closest: {closest}",
                            hint="a different model number is a different model; query by the words of its name")
    if as_json:
        return

    def out(text: str) -> None:  # plain text: importing rich would cost a tenth of the start-up
        print(text)

    best, others = matches[0], matches[1:]
    d = best.device
    if d.get("not_drive"):
        out(f"{d['model']}  firmware {d['firmware'] or 'unknown'}  (not a drive: not ranked)")
        out(f"  not a drive: {d['not_drive']}")
    elif d.get("rank") is None:  # every submission held back: far from the model's other evidence
        out(f"{d['model']}  firmware {d['firmware'] or 'unknown'}  (held back: not ranked)")
    else:
        out(f"{d['model']}  firmware {d['firmware'] or 'unknown'}  (#{d['class_rank']} of its method class, "
            f"#{d['rank']} of the suitability table)")
    if d.get("method_class_label"):
        out(f"  method: {d['method_id']} v{d['method_version']}, class: {d['method_class_label']}")
    if best.via:
        out(f"  identified by part number ({best.via})")
    out(f"  {capacity(d['capacity_bytes'])}, {d['protocol']}, {d['media']}; "
              f"{plural(d['submissions'], 'submission')}, {d['verified']} verified, "
              + (f"{d['unchecked']} signature intact (signer not checked), " if d["unchecked"] else "")
              + f"{d['legacy']} legacy")
    cache = setting_label(d["cache"], d["cache_knob"]) if d["cache"] else "-"
    out(f"  1-job IOPS {_fmt(d['iops_1job'])} at cache {cache}, max IOPS {_fmt(d['max_iops'])} "
              f"at {plural(d['peak_jobs'], 'job') if d['peak_jobs'] is not None else '- jobs'}, scaling {d['scaling'] or '-'}, p99 fdatasync {latency_ms(d['p99_sync_us'] / 1000) if d['p99_sync_us'] is not None else '-'}")
    osds = d["osds_per_device_text"] or "-"
    if d.get("osds_rate_text"):
        osds += f" ({d['osds_rate_text']}; one HDD OSD needs {_fmt(d['osds_demand_iops'])})"
    elif d.get("osds_per_device") == 0 and d.get("osds_demand_iops"):
        osds += f" (one HDD OSD needs {_fmt(d['osds_demand_iops'])} commits/s)"
    out(f"  Ceph WAL/DB: {d['ceph_waldb'] or '-'}, OSDs per device: {osds}, "
              f"etcd: {d['etcd'] or '-'}, PostgreSQL WAL: {_fmt(d['postgres_wal'], ' commits/s')}, "
              f"ZFS SLOG: {d.get('zfs_slog') or '-'}")
    for line in _size_verdict_lines(d.get("verdicts") or {}):
        out(line)
    for line in _conflict_verdict_lines(d.get("verdicts") or {}):
        out(line)
    plp = d.get("plp_evidence") or {}
    if plp:
        reasons = plp.get("reasons") or ["no reason given"]
        out(f"  power-loss protection: {plp.get('verdict')} ({reasons[0]}; rule {plp.get('rule')})")
        for conflict in plp.get("conflicts") or []:
            out(f"    conflict: {conflict}")
        marks = {"plp": "+", "no_plp": "-", "neutral": ".", "failing": "!"}
        for e in plp.get("evidence") or []:
            out(f"    {marks.get(e.get('points_to'), '?')} {e.get('kind')}: {e.get('text')}")
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
            out(f"  cache {label}, in the contributor's words: \"{c['source_words']}\"")
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
    labels = {setting_slug(c["write_cache"], c["knob"]): setting_label(c["write_cache"], c["knob"])
              for c in best.caches}
    for line in _chart(best.curves, labels):
        out(line)
    for line in _size_lines(best.sizes, labels):
        out(line)
    for line in _sustained_lines(best.sustained, best.sustained_left_out):
        out(line)
    for line in _public_lines(_models(best.public), heading="public figures of this family (other methods: "
                              "labelled, not merged)"):
        out(line)
    def names(ms) -> str:
        return "; ".join(f"{m.device['model']} {m.device['firmware']}".strip() for m in ms)

    if any(m.is_match for m in others):
        out("other matches: " + names(m for m in others if m.is_match))
    if any(not m.is_match for m in others):
        out("similar models (not matches): " + names(m for m in others if not m.is_match))


def _public_only(db: Path, query: str) -> list:
    """Public models the query names (when no device of the table does)."""
    from diskq.database import evidence
    from diskq.database.locate import open_db

    con = open_db(db)
    try:
        return evidence.public_models_matching(con, query)
    finally:
        con.close()


def _models(dicts: list[dict]) -> list:
    from diskq.database.evidence import PublicModel

    return [PublicModel(d["id"], d["name"], d["family_key"], d["capacity_bytes"], d["classes"], d["figures"])
            for d in dicts]


def _public_lines(models: list, *, heading: str) -> list[str]:
    """Each public model: one line per method class, then each figure with its source and quote."""
    from diskq.database.evidence import class_summary

    if not models:
        return []
    lines = [f"{heading}:"]
    for m in models:
        lines.append(f"  {m.name}")
        lines += [f"    {line}" for line in class_summary(m)]
        for f in m.figures:
            cache = f"cache {f['write_cache']}"
            how = f", {f['derived']}" if f["derived"] else ""
            lines.append(f"      {f['source_id']}: {f['iops']:,.0f} IOPS at {f['numjobs']} job(s), {f['method_id']}, "
                         f"{cache}{how}: \"{f['quote']}\" ({f['url']}; {f['attribution'] or f['source_author']}, "
                         f"{f['licence']})")
    return lines


@site_app.command("build")
def site_build(
    db: Path | None = typer.Option(
        None, "--db", help="devices.db to publish [default: the checkout's, else your copy from "
                           "`diskq db update`, else the snapshot shipped with diskq]"),
    out: Path = typer.Option(Path("_site"), "--out", help="output directory (replaced)"),
    submissions: Path | None = typer.Option(
        Path("submissions"), "--submissions", help="copy these raw submission files into the site (if present)"),
    repository: str | None = typer.Option(
        None, "--repository", metavar="URL",
        help="source repository linked from every page (default: [project.urls] Repository in pyproject.toml)"),
) -> None:
    """Generate the static site: suitability table, device pages, methodology, exports.

    Example: diskq site build --db devices.db --out _site --repository https://github.com/OWNER/diskq
    """
    from rich.text import Text

    from diskq.errors import InvalidInput
    from diskq.publish.site import build_site

    if repository is not None and not repository.startswith("https://"):
        raise InvalidInput(f"--repository must be an https:// address, got {repository!r}")
    err = stderr_console()
    db = database(db).path
    with err.status(Text(f"writing the site to {out}/ ...")):
        report = build_site(db, out, submissions=submissions if submissions and submissions.is_dir() else None,
                            repository=repository)
    err.print(f"{out}/ written: {report.devices} device pages, {report.files} files, "
              f"{report.bytes / 1e6:.1f} MB", markup=False, highlight=False, soft_wrap=True)
