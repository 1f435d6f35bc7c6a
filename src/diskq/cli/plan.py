"""``diskq plan``: an OSD layout for a qualified WAL/DB device."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli.app import app, database, print_json, stdout_console

PLAN_HELP = """Plan the OSD layout for a WAL/DB device: OSDs per device, block.db size, how many
WAL/DB devices, a cephadm OSD specification or, without cephadm, the equivalent ceph-volume lvm
batch line (alternatives, not steps), each as the target --release reads it.

DEVICE is a result document (diskq bench, or a submission file) or a model name looked up in
devices.db. The data devices of one host are COUNTxSIZE, sizes decimal as on the drive's label
(16T = 16 * 10^12 bytes; 7TiB for binary). Every number comes with its rule and source
(docs/plan.md, the site's methodology page).

Examples:

  diskq plan "Samsung PM883" --data 12x16T --workload rgw --cephadm-spec osd-spec.yaml

  diskq plan result.json --data 8x8T --workload rbd --json

The plan rests on the device's Ceph WAL/DB verdict (tier and basis: diskq's measurement, a
public figure); the OSDs per device never exceed what its tier allows. An unknown, unsuitable
or noisy verdict is a warning; --strict refuses then.
"""


@app.command("plan", help=PLAN_HELP)
def plan_cmd(
    device: str = typer.Argument(..., metavar="DEVICE", help="result document (.json) or a model name in devices.db"),
    data: str = typer.Option(..., "--data", help="data devices of one host as COUNTxSIZE, e.g. 12x16T"),
    workload: str = typer.Option("rbd", "--workload", help="rbd, rgw or cephfs"),
    data_media: str = typer.Option("hdd", "--data-media", help="hdd or ssd: the data devices' media"),
    compression: str | None = typer.Option(
        None, "--compression", help="RocksDB compression on or off [default: on from Squid, off before]"
    ),
    release: str | None = typer.Option(
        None, "--release", help="Ceph release: quincy, reef, squid, tentacle [default: squid]"
    ),
    db_size: str | None = typer.Option(
        None, "--db-size", help="the WAL/DB device's size (e.g. 960G), if not recorded or to override"
    ),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="devices.db to look the model up in [default: the checkout's, else your copy "
        "from `diskq db update`, else the snapshot shipped with diskq]",
    ),
    cephadm_spec: Path | None = typer.Option(
        None, "--cephadm-spec", help="write the cephadm OSD specification (YAML) here"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the plan as JSON on stdout"),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="refuse when the Ceph WAL/DB verdict planned from is unknown, unsuitable or noisy (otherwise a warning)",
    ),
) -> None:
    from diskq.analyse import criteria
    from diskq.errors import InvalidInput
    from diskq.plan import device as source
    from diskq.plan import layout, report
    from diskq.plan import rules as plan_rules
    from diskq.plan.model import WORKLOADS, parse_data
    from diskq.units import parse_drive_size

    rules = plan_rules.load()
    rel = release or rules["releases"]["default"]
    layout.release_index(rel, rules)
    if compression is None:
        comp = layout.compression_default(rel, rules)
    elif compression in ("on", "off"):
        comp = compression == "on"
    else:
        raise InvalidInput(f"--compression must be on or off, got {compression!r}")
    if workload not in WORKLOADS:
        raise InvalidInput(f"--workload must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    data_devices = parse_data(data, data_media)
    size = parse_drive_size(db_size) if db_size is not None else None
    if cephadm_spec is not None and cephadm_spec.is_dir():
        raise InvalidInput(f"--cephadm-spec {cephadm_spec} is a directory", hint="name a file, e.g. osd-spec.yaml")
    found = None if source.looks_like_file(device) else database(db)
    dev = source.from_document_file(Path(device)) if found is None else source.from_database(found.path, device)
    plan = layout.make_plan(
        dev,
        data_devices,
        workload,
        compression=comp,
        release=rel,
        rules=rules,
        criteria=criteria.load(),
        db_size=size,
        strict=strict,
    )
    doc = report.document(plan, rules)
    if found is not None:
        doc["database"] = found.to_dict()
    if cephadm_spec is not None:
        _write(cephadm_spec, doc["cephadm_spec_yaml"])
    if as_json:
        import json

        print_json(json.dumps(doc, indent=2))
        return
    _render(doc, cephadm_spec)


def _write(path: Path, text: str) -> None:
    import os
    import tempfile

    from diskq.errors import InvalidInput

    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None


def _gb(n) -> str:
    from diskq.plan.layout import _gb as gb

    return "-" if n is None else gb(n)


def _render(doc: dict, spec_path: Path | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    from diskq.units import plural

    out = stdout_console(markup=True)  # every value below is escaped
    d = doc["data"]
    comp = "on" if doc["compression"] else "off"
    out.print(
        f"[bold]{escape(doc['device'])}[/] as WAL/DB for {d['count']} x {_gb(d['size_bytes'])} "
        f"{d['media'].upper()} ({doc['workload']}, Ceph {doc['release']}, RocksDB compression {comp})"
    )
    out.print(f"  figures: {escape(doc['basis'])}; WAL/DB device {_gb(doc['capacity_bytes'])}")
    v = doc.get("verdict") or {}
    if v:
        tier = v.get("tier")
        tier = f"no verdict (at most {v['ceiling']})" if tier == "unknown" and v.get("ceiling") else tier
        out.print(
            f"  Ceph WAL/DB: {escape(str(tier))}, basis {escape(str(v.get('basis')))}: "
            f"{escape((v.get('reasons') or ['-'])[0])}"
        )
    for w in doc.get("warnings") or []:
        out.print(f"[bold yellow]warning:[/] {escape(w)} (--strict refuses)", soft_wrap=True)
    binds = ", ".join(doc["binding"])
    out.print(f"\n[bold]{plural(doc['osds_per_device'], 'data OSD')} per WAL/DB device[/] ({binds} binds)")
    table = Table("limit", "OSDs", "why", show_header=True, title_justify="left")
    for name, rule in doc["limits"].items():
        mark = " *" if name in doc["binding"] else ""
        table.add_row(name + mark, str(rule["value"]), escape("; ".join(rule["reasons"])))
    out.print(table)
    s = doc["speed"]
    if s["per_osd_iops"] is not None:
        out.print(
            f"  per-OSD commit rate at {plural(s['n'], 'OSD')}: {s['per_osd_iops']:,.0f}/s, "
            f"{s['headroom']:.1f}x the {s['demand_iops']:,.0f} one {s['osd_kind'].upper()} OSD needs"
            + (" (the sweep's largest count: at least that many)" if s["limited_by_sweep"] else "")
        )
    f = doc["db_fraction"]
    out.print(
        f"\n[bold]block.db[/]: at least {_gb(doc['db_required_bytes'])} per OSD ({f['value']:.2%} of the data device)"
    )
    for r in f["reasons"]:
        out.print(f"  - {escape(r)}")
    out.print(
        f"\n[bold]WAL/DB devices needed: {doc['db_devices']}[/], {plural(doc['db_slots'], 'block.db volume')} of "
        f"{_gb(doc['db_size_bytes'])} on each"
    )
    for r in doc["layout_reasons"]:
        out.print(f"  - {escape(r)}")
    out.print("[bold]separate block.wal[/]: " + ("yes" if doc["wal"]["value"] else "not worth it"))
    for r in doc["wal"]["reasons"]:
        out.print(f"  - {escape(r)}")
    wc = doc["write_cache"]
    out.print("\n[bold]write cache at boot[/]")
    if wc["value"]:
        out.print(f"  {escape(wc['value'])}", soft_wrap=True)
    for r in wc["reasons"]:
        out.print(f"  - {escape(r)}")
    mc = doc["mclock"]
    out.print("[bold]osd_mclock_max_capacity_iops_ssd[/]: " + (str(mc["value"]) if mc["value"] else "does not apply"))
    for r in mc["reasons"]:
        out.print(f"  - {escape(r)}")
    out.print(f"\n[bold]Deploying[/]: {escape(doc['alternatives'])}.", soft_wrap=True)
    out.print(
        "\n[bold]Either: cephadm OSD specification[/]"
        + (f" (written to {escape(str(spec_path))})" if spec_path else "")
    )
    out.print(escape(doc["cephadm_spec_yaml"].rstrip()), soft_wrap=True)
    out.print("\n[bold]Or: ceph-volume[/] (" + escape(doc["ceph_volume"]["note"]) + ")")
    out.print(escape(doc["ceph_volume"]["line"]), soft_wrap=True)
    for n in doc["notes"]:
        out.print(f"note: {escape(n)}", soft_wrap=True)
    out.print(f"rules version {doc['rules_version']}: docs/plan.md")
