"""``diskq cluster`` (judge a running cluster's WAL/DB devices) and ``diskq cluster collect``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from diskq.cli.app import app, print_json, stderr_console, stdout_console
from diskq.cli.app import database as find_database

cluster_app = typer.Typer(
    help=(
        "Judge a running Ceph cluster's OSDs and their WAL/DB devices from what Ceph reports (osd metadata, "
        "perf dump, osd df, osd perf, config dump, health detail by check name, ceph-volume lvm list, ceph-disk "
        "list, lvm batch --report): sharing, spillover and its cause, slow ops, commit latency, mClock capacities. "
        "Reads only; prints `ceph config` lines, never runs them.\n\n"
        "Example: diskq cluster --from saved/ --html cluster.html"
    ),
    invoke_without_command=True,
)
app.add_typer(cluster_app, name="cluster")


def _aliases(values: list[str] | None) -> dict[str, str]:
    from diskq.errors import InvalidInput

    out = {}
    for v in values or []:
        part, sep, name = v.partition("=")
        if not sep or not part.strip() or not name.strip():
            raise InvalidInput(
                f"--as needs REPORTED=MODEL, got {v!r}", hint="e.g. --as 'SSDSC2KB038T8=Intel SSD S4510'"
            )
        out[part.strip()] = name.strip()
    return out


@cluster_app.callback()
def cluster_cmd(
    ctx: typer.Context,
    source: Path | None = typer.Option(
        None,
        "--from",
        help="a directory of saved ceph outputs (see `diskq cluster collect`); without it, the `ceph` command of this host is asked",
    ),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="the device database the models are looked up in [default: the checkout's, else your copy from `diskq db update`, else the snapshot shipped with diskq]",
    ),
    alias: list[str] | None = typer.Option(
        None, "--as", help="REPORTED=MODEL: a model as Ceph reports it is this database model (repeatable)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the answer as JSON on stdout"),
    html: Path | None = typer.Option(None, "--html", help="also write the answer as one static HTML page"),
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    import tempfile

    from diskq.cluster import collect, inputs, report

    aliases = _aliases(alias)
    if source is not None:
        inp = inputs.read_dir(source)
    else:
        with tempfile.TemporaryDirectory(prefix="diskq-cluster-") as tmp:
            errors = collect.collect(Path(tmp))
            inp = inputs.read_dir(Path(tmp))
            inp.source = "the ceph command of this host"
        from rich.markup import escape

        for e in errors:
            stderr_console().print(f"[yellow]collection:[/] {escape(e)}", markup=True, highlight=False)
    if db is not None and not db.exists():
        from diskq.errors import DatabasePathError

        raise DatabasePathError(f"{db} does not exist", hint="give a devices.db with --db, or leave --db out")
    database = find_database(db).path
    doc = report.build(inp, db=database, aliases=aliases)
    if html is not None:
        from diskq.publish.cluster import write_html

        write_html(doc, html)
        stderr_console().print(f"report written to {html}")
    if as_json:
        print_json(json.dumps(doc, indent=2))
        return
    _render(doc)


@cluster_app.command(
    "collect",
    help=(
        "Save the outputs `diskq cluster --from` reads into DIR: ceph osd metadata, osd df, config dump, "
        "device ls, health detail, osd perf, `ceph tell osd.N perf dump` of every OSD, and `ceph-volume inventory` "
        "and `ceph-volume lvm list` where this host has them. Runs only read-only ceph commands; an OSD that does not answer is named.\n\n"
        "Example: diskq cluster collect ceph-outputs/ && diskq cluster --from ceph-outputs/"
    ),
)
def collect_cmd(directory: Path = typer.Argument(..., help="where to save the outputs (created if missing)")) -> None:
    from diskq.cluster.collect import collect

    errors = collect(directory)
    err = stderr_console()
    for e in errors:
        err.print(f"  {e}", markup=False, highlight=False)
    err.print(
        f"saved to {directory}" + (f" ({len(errors)} could not be collected)" if errors else ""),
        markup=False,
        highlight=False,
    )


def _num(value, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _render(doc: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from diskq.cluster.judge import counted

    out = stdout_console()
    s = doc["summary"]
    out.print(
        f"[bold]{counted(s['osds'], 'OSD')}, {counted(s['db_devices'], 'DB drive')}, "
        f"{counted(s['findings'], 'finding')} on {counted(s['osds_flagged'], 'OSD')}[/] (Ceph {escape(doc['version'] or 'version unknown')}; {escape(doc['source'])})",
        markup=True,
    )
    if doc["db_devices"]:
        t = Table(title="DB drives", title_justify="left")
        for col in ("host", "drive", "model", "OSDs", "database", "OSDs/device"):
            t.add_column(col)
        for d in doc["db_devices"]:
            f = d["database"] or {}
            t.add_row(
                escape(d["host"] or "-"),
                escape(",".join(d["names"])),
                escape(d["model"] or "unknown"),
                str(len(d["osds"]))
                # another namespace or partition of the drive holds these OSDs' data: they commit there too
                + (f" + {', '.join(f'osd.{i}' for i in d['data_osds'])} (data)" if d.get("data_osds") else ""),
                _database_cell(f, d.get("line")),
                _num(f.get("osds_per_device")),
            )
        out.print(t, markup=True)
    judged = [o for o in doc["osds"] if o["bluefs"] or o["mclock"] or o["kv_ms"] or o.get("bench_iops")]
    benched = any(o.get("bench_iops") for o in judged)  # `ceph tell osd.N bench` read: its IOPS shown
    if judged:
        t = Table(title="OSDs with counters or mClock capacities", title_justify="left")
        for col in (
            "osd",
            "DB used/total GB",
            "slow used GB",
            "kv_commit ms",
            "predicted ms",
            "mClock",
            "per-OSD rate",
            *(["bench IOPS"] if benched else []),
        ):
            t.add_column(col, justify="right")
        for o in judged[:200]:
            b, kv, mc = o["bluefs"] or {}, o["kv_ms"] or {}, o["mclock"] or {}
            used = (
                f"{_num((b.get('db_used_bytes') or 0) / 1e9, 1)}/{_num((b.get('db_total_bytes') or 0) / 1e9, 1)}"
                if b
                else "-"
            )
            slow = _num(b["slow_used_bytes"] / 1e9, 2) if b.get("slow_used_bytes") is not None else "-"
            pred = (o["predicted_commit_ms"] or {}).get("value")
            t.add_row(
                f"osd.{o['osd']}",
                used,
                slow,
                _num(kv.get("kv_commit_lat"), 3),
                _num(pred, 3),
                _num(mc.get("value")) + (" (default)" if mc.get("source") == "Ceph's default" else ""),
                _num(o["per_osd_rate"]),
                *([_num(o.get("bench_iops"))] if benched else []),
            )
        out.print(t)
        if len(judged) > 200:
            out.print(f"  ({len(judged) - 200} more in --json)")
    filestore = [o for o in doc["osds"] if o["commit_device"] == "journal"]
    if filestore:  # no BlueFS, no DB device: say where they commit, as the page's notes do
        on = "; ".join(
            f"osd.{o['osd']} ({o['host'] or 'host unknown'}: journal {','.join((o.get('journal') or {}).get('names') or ['not named'])})"
            for o in filestore[:4]
        ) + (f"; and {len(filestore) - 4} more" if len(filestore) > 4 else "")
        out.print(
            f"FileStore: {on}: commits go to the journal, not to BlueFS; no DB device to judge",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for u in doc["unnamed_perf_dumps"]:
        b, kv = u["bluefs"], u["kv_ms"]
        if u.get("store") == "filestore":
            out.print(
                f"perf dump {escape(u['file'])} (OSD not named): FileStore, commits go to its journal: "
                + ", ".join(f"{k} {_num(v, 3)} ms" for k, v in kv.items()),
                highlight=False,
            )
            continue
        # without a dedicated DB BlueFS counts the whole main device as its "db": say which it is
        where = "BlueFS DB" if u.get("dedicated_db") else "BlueFS on the main device (no dedicated DB)"
        out.print(
            f"perf dump {escape(u['file'])} (OSD not named): {where} {_num((b.get('db_used_bytes') or 0) / 1e9, 1)} "
            f"of {_num((b.get('db_total_bytes') or 0) / 1e9, 1)} GB, slow used {_num(b.get('slow_used_bytes'))} B, "
            f"kv_commit_lat {_num(kv.get('kv_commit_lat'), 3)} ms, kv_sync_lat {_num(kv.get('kv_sync_lat'), 3)} ms, "
            f"kv_flush_lat {_num(kv.get('kv_flush_lat'), 4)} ms",
            markup=True,
            highlight=False,
        )
    if (op := doc.get("osd_perf")) is not None:
        out.print(
            f"ceph osd perf: {counted(op['osds'], 'OSD')}, {op['committing']} committed in the mgr's last interval"
            + (
                f"; commit latency median {op['median_ms']:,.0f} ms, highest {op['max_ms']:,.0f} ms (osd.{op['max_osd']})"
                if op["committing"]
                else ""
            ),
            highlight=False,
        )
    for p in doc.get("plans") or []:
        per = ", ".join(f"{n} on {d}" for d, n in p["db_devices"].items()) or "no DB devices"
        out.print(
            f"plan {escape(p['file'])} (ceph-volume lvm batch --report, not yet created): {counted(p['osds'], 'OSD')}; "
            f"block.db: {escape(per)}",
            markup=True,
            highlight=False,
        )
    health = doc.get("health")
    if doc["findings"]:
        out.print("[bold]Findings[/]", markup=True)
        shown: dict[str, int] = {}
        for f in doc["findings"]:
            shown[f["rule"]] = shown.get(f["rule"], 0) + 1
            if shown[f["rule"]] > 10:
                continue
            who = ", ".join(f"osd.{i}" for i in f["osds"][:6]) + (
                f" +{len(f['osds']) - 6}" if len(f["osds"]) > 6 else ""
            )
            out.print(
                f"  [red]{escape(str(f['rule']))}[/] {escape(who)}: {escape(f['message'])}",
                markup=True,
                highlight=False,
            )
            if f.get("drives") and not any(
                d.split(" (")[0] in f["message"] or d.split(":")[0] in f["message"] for d in f["drives"]
            ):
                drives = "; ".join(f["drives"][:4]) + (
                    f" and {len(f['drives']) - 4} more" if len(f["drives"]) > 4 else ""
                )
                out.print(f"    on {drives}", markup=False, highlight=False, soft_wrap=True)
            for fix in f.get("fixes") or []:
                out.print(f"    fix: {fix}", markup=False, highlight=False, soft_wrap=True)
        for rule, n in shown.items():
            if n > 10:
                out.print(f"  ... {n - 10} more {rule} findings (--json or --html lists them all)")
    elif health and health["checks"]:
        out.print(
            f"No findings on the commit path; Ceph's health holds {counted(len(health['checks']), 'other check')}, "
            "listed below.",
            highlight=False,
        )
    else:
        out.print("No findings" + (" (see what is missing below)" if doc["missing"] else "") + ".")
    for c in doc.get("caveats") or []:
        on = "; ".join(c["on"][:4]) + (f"; and {len(c['on']) - 4} more OSDs" if len(c["on"]) > 4 else "")
        out.print(
            f"[yellow]caveat[/] {escape(c['kind'])}: {escape(on)}: {escape(c['text'])}",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
    if health and health["other"]:
        out.print("[bold]Other health checks[/] (not on the commit path; named, not judged)", markup=True)
        for c in health["other"]:
            out.print(
                f"  {c['name']}: {c['summary']}" + (f" ({c['note']})" if c.get("note") else ""),
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    if doc["config_lines"]:
        out.print("[bold]ceph config lines you could apply[/] (printed, not run):", markup=True)
        for line in doc["config_lines"]:
            out.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    if doc["missing"]:
        out.print("[bold]Missing or partial inputs[/]", markup=True)
        for m in doc["missing"]:
            out.print(f"  - {m}", markup=False, highlight=False, soft_wrap=True)
    for p in doc["inputs"]["problems"]:
        out.print(f"  [dim]{escape(p)}[/]", markup=True, highlight=False, soft_wrap=True)
    if doc["inputs"]["read"]:
        shown = doc["inputs"]["read"][:12]
        out.print(
            "read: "
            + "; ".join(shown)
            + (f"; and {len(doc['inputs']['read']) - 12} more" if len(doc["inputs"]["read"]) > 12 else ""),
            style="dim",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    out.print("rules: criteria.toml [cluster], docs/cluster.md", style="dim", markup=False)


def _database_cell(facts: dict, line: dict | None) -> str:
    """The DB drives table's database column: the measured model and its tier, or the product line
    nothing was measured of and its stored answer with the answer's basis, or "not found"."""
    from rich.markup import escape

    if facts.get("model"):
        return escape(facts["model"]) + (f" ({escape(facts['tier'])})" if facts.get("tier") else "")
    if line:
        tier = line.get("tier")
        said = f"{tier}, basis {line.get('basis')}" if tier and tier != "unknown" else "no verdict"
        return escape(f"{line['line']}, not measured ({said})")
    return "not found"
