"""``diskq fleet candidates`` (on each host) and ``diskq fleet report`` (on the controller)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from diskq.cli.app import app, print_json, stderr_console, stdout_console

fleet_app = typer.Typer(
    help=(
        "Qualify many drives on many hosts: the Ansible playbook in ansible/ runs `diskq fleet candidates` and "
        "`diskq bench` on each host; `diskq fleet report` compares what it fetched.\n\n"
        "Example: diskq fleet report results/ --html fleet.html"
    ),
    no_args_is_help=True,
)
app.add_typer(fleet_app, name="fleet")


@fleet_app.command(
    "candidates",
    help=(
        "List the devices a selector picks on this host and what `diskq bench --yes` would do with each "
        "(would bench, or the refusal and why). Writes nothing to any device.\n\n"
        "Example: diskq fleet candidates --model 'SAMSUNG MZ7L3*' --ssd --json"
    ),
)
def candidates_cmd(
    path: list[str] | None = typer.Option(
        None, "--path", help="a device to consider (repeatable), e.g. /dev/disk/by-id/..."
    ),
    model: str | None = typer.Option(None, "--model", help="shell pattern on the model, case ignored"),
    min_size: str | None = typer.Option(None, "--min-size", help="smallest capacity, e.g. 400G"),
    max_size: str | None = typer.Option(None, "--max-size", help="largest capacity, e.g. 4T"),
    rotational: bool | None = typer.Option(None, "--rotational/--ssd", help="only hard disks, or only SSDs"),
    force: bool = typer.Option(False, "--force", help="as bench --force: allow devices that carry a signature"),
    as_json: bool = typer.Option(False, "--json", help="print the list as JSON on stdout"),
) -> None:
    from diskq.fleet import select
    from diskq.units import parse_size

    selector = select.Selector(
        paths=tuple(path or ()),
        model=model,
        min_bytes=None if min_size is None else parse_size(min_size),
        max_bytes=None if max_size is None else parse_size(max_size),
        rotational=rotational,
    )
    found = select.candidates(selector, force=force)
    if as_json:
        import socket

        print_json(json.dumps({"host": socket.gethostname(), "candidates": [c.to_dict() for c in found]}, indent=2))
        return
    from rich.markup import escape

    out = stdout_console()
    if not found:
        out.print("no device matches the selector")
    for c in found:
        verdict = "[green]would bench[/]" if c.decision == "bench" else "[red]refused[/]"
        out.print(f"{escape(str(c.path))} ({escape(c.model or 'unknown model')}): {verdict}", markup=True)
        for reason in c.reasons:
            out.print(f"  - {reason}", markup=False, highlight=False)


@fleet_app.command(
    "report",
    help=(
        "Read the results a fleet run fetched (one directory per host) and report every drive against the "
        "median of its model and firmware, with outliers, failures and refusals.\n\n"
        "Example: diskq fleet report results/ --html fleet.html --json > fleet.json"
    ),
)
def report_cmd(
    results: Path = typer.Argument(..., help="the directory the playbook fetched into (diskq_results_dir)"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON on stdout"),
    html: Path | None = typer.Option(None, "--html", help="also write the report as one static HTML page"),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="devices.db to say what is known about each model [default: ./devices.db, else the checkout's]",
    ),
) -> None:
    from functools import partial

    from diskq.database.known import known_lines
    from diskq.fleet import report as report_mod

    rep = report_mod.build(results, known=partial(known_lines, db=db))
    if html is not None:
        from diskq.publish.fleet import write_html

        write_html(rep, html)
        stderr_console().print(f"report written to {html}")
    if as_json:
        print_json(json.dumps(rep.to_dict(), indent=2))
        return
    _render(rep)


def _fmt(value, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _render(rep) -> None:
    """Values from the documents are text: markup only in the fixed words (``markup=True`` with
    every value escaped), and the table's cells and title are never read as markup."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    out = stdout_console()
    out.print(
        f"{len(rep.hosts)} hosts, {rep.drives} drives, {len(rep.outliers)} outliers, {len(rep.problems)} problems",
        style="bold",
    )
    for g in rep.groups:
        table = Table(title=f"{g.model} (firmware {g.firmware})", title_justify="left")
        for col in ("host", "device", "1-job IOPS", "max IOPS", "peak jobs", "p99 sync ms", "Ceph", "flag"):
            table.add_column(col, justify="right" if "IOPS" in col or "ms" in col or "jobs" in col else "left")
        for d in g.drives:
            flag = (
                "interrupted"
                if d.interrupted
                else "RAM-backed: not compared"
                if d.memory_backed
                else Text("outlier", style="red")
                if d.outlier
                else ""
            )
            table.add_row(
                d.host,
                d.name,
                _fmt(d.one_job_iops),
                _fmt(d.max_iops),
                _fmt(d.peak_jobs),
                _fmt(d.p99_sync_ms, 2),
                d.ceph_tier or "-",
                flag,
            )
        m = g.medians
        table.add_row(
            "median",
            "",
            _fmt(m.get("one_job_iops")),
            _fmt(m.get("max_iops")),
            "",
            _fmt(m.get("p99_sync_ms"), 2),
            "",
            "",
            style="dim",
        )
        out.print(table)
        for note in g.notes:
            out.print(f"  {note}", style="dim")
        for line in g.known:
            out.print(f"  {line}", markup=False, highlight=False)
        for d in g.drives:
            for why in d.outlier:
                out.print(f"  [red]{escape(d.host)} {escape(d.name)}[/]: {escape(why)}", markup=True, highlight=False)
    if rep.problems:
        out.print("Problems", style="bold")
        for p in rep.problems:
            where = f"{p.host} {p.device}" if p.device else p.host
            out.print(f"  {where}: {p.kind}: {p.reason}", markup=False, highlight=False)
