"""``diskq identify`` (which drive is this?) and ``diskq restore`` (put back what a killed run changed)."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli.app import app, print_json, stderr_console, stdout_console
from diskq.probe.journal import WRITERS_WAIT_S


@app.command(
    help=(
        "Show which drive TARGET is: model, firmware, capacity, protocol, media, wear, write cache "
        "and how it can be switched, and every power-loss fact it reports with a power-loss-protection "
        "verdict from what it reports and what datasheets document (no measurement: `diskq bench` "
        "adds that). With --smartctl-json, read a saved `smartctl --json -x` output "
        "instead of probing a device. The serial number is shown only as a salted hash.\n\n"
        "Example: diskq identify /dev/nvme0n1 --json"
    )
)
def identify(
    target: str | None = typer.Argument(None, help="block device to identify, e.g. /dev/sdb"),
    smartctl_json: Path | None = typer.Option(
        None, "--smartctl-json", help="a saved `smartctl --json -x` output ('-' for standard input)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the identity as JSON on stdout"),
) -> None:
    from diskq.errors import InvalidInput
    from diskq.probe import identity as ident
    from diskq.probe import smartctl

    if (target is None) == (smartctl_json is None):
        raise InvalidInput("give either a TARGET device or --smartctl-json FILE", hint="e.g. diskq identify /dev/sdb")
    if smartctl_json is not None:
        device = smartctl.identity_from_smartctl_json(_read_smartctl_json(smartctl_json))
    else:
        device = ident.identify(target)

    from diskq.analyse import plp
    from diskq.database.known import known

    verdict = plp.evaluate_device(device)
    drive = verdict.rule != "not_applicable"  # a RAID volume's rotation rate is not a hard disk's
    found = known(device.model, rotation_rpm=device.rotation_rpm if drive else None)
    if drive and found.facts is not None:  # what the line's datasheets document weighs too
        verdict = plp.evaluate_device(device, facts=found.facts, checked=True)
    if as_json:
        import json

        out = device.model_dump(mode="json")
        out["power_loss_protection"] = verdict.model_dump(mode="json")
        out["database"] = {"lines": found.lines, "verdicts": found.verdicts, "hard_disk": found.hard_disk}
        print_json(json.dumps(out, indent=2, ensure_ascii=False))
        return
    _render(device, verdict, found.lines, probed=smartctl_json is None)


#: A `smartctl -x` output is tens of kilobytes; anything this large is not one.
MAX_SMARTCTL_JSON_BYTES = 64 * 1024 * 1024


def _read_smartctl_json(path: Path):
    """The parsed JSON of a saved smartctl output ('-': standard input). Every way it can be
    unusable (unreadable, too large, not UTF-8, not JSON, nested too deeply) is an InvalidInput."""
    import json
    import sys

    from diskq.errors import InvalidInput

    name = "standard input" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            raw = sys.stdin.buffer.read(MAX_SMARTCTL_JSON_BYTES + 1)
        else:
            with path.open("rb") as f:
                raw = f.read(MAX_SMARTCTL_JSON_BYTES + 1)
    except OSError as exc:
        raise InvalidInput(f"cannot read {name}: {exc.strerror or exc}") from None
    if len(raw) > MAX_SMARTCTL_JSON_BYTES:
        raise InvalidInput(f"{name} is larger than {MAX_SMARTCTL_JSON_BYTES // 1024**2} MiB: not a smartctl output")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise InvalidInput(f"{name} is not a smartctl output: its JSON is nested too deeply") from None
    except ValueError as exc:
        raise InvalidInput(
            f"{name} is not JSON ({exc})", hint="save it with `smartctl --json -x /dev/X > FILE`"
        ) from None


def _render(device, verdict, known: list[str], *, probed: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    from diskq.units import capacity, human_bytes

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    rpm = device.rotation_rpm
    rows = [
        ("device", device.path),
        ("model", device.model),
        ("vendor", device.vendor),
        ("firmware", device.firmware),
        (
            "capacity",
            f"{capacity(device.capacity_bytes)} ({device.capacity_bytes} bytes)" if device.capacity_bytes else None,
        ),
        ("protocol", device.protocol),
        ("media", device.media + (f", {rpm} rpm" if rpm else "")),
        (
            "block size",
            f"{device.logical_block_size} logical"
            + (f" / {device.physical_block_size} physical" if device.physical_block_size else "")
            if device.logical_block_size
            else None,
        ),
        ("interface", device.interface_speed),
        ("wear", f"{device.percentage_used}% used" if device.percentage_used is not None else None),
        (
            "data written",
            human_bytes(device.data_written_bytes, si=True) if device.data_written_bytes is not None else None,
        ),
        ("power-on", f"{device.power_on_hours} h" if device.power_on_hours is not None else None),
        ("temperature", f"{device.temperature_c} °C" if device.temperature_c is not None else None),
        ("volatile cache", {True: "present", False: "none"}.get(device.volatile_write_cache)),
        (
            "write cache",
            device.write_cache
            + (
                f" (switchable with {device.cache_toggle})"
                if device.cache_toggle
                else " (cannot be switched)"
                if probed
                else " (a saved smartctl output does not say how it can be switched)"
            ),
        ),
        ("serial hash", device.serial_hash),
        ("sources", ", ".join(device.sources)),
    ]
    for key, value in rows:
        if value is not None:
            table.add_row(key, str(value))
    out = stdout_console()
    out.print(table)
    from diskq.probe.smartctl import EXIT_STATUS_BITS

    for note in device.notes:
        if note.startswith("smartctl exit status") and note.endswith(EXIT_STATUS_BITS[3]):  # its own health check
            out.print(f"[bold red]warning[/]: {escape(note)}", markup=True)
        else:
            out.print(f"  note: {note}", markup=False)
    from diskq.cli._render import plp_lines

    for fact in device.plp_facts:
        if fact.warning:
            out.print(
                f"[bold red]warning[/]: {escape(fact.field)} = {escape(fact.raw)}: {escape(fact.meaning)}", markup=True
            )
    for line in plp_lines(verdict):
        out.print(line, markup=True)
    for line in known:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command(
    help=(
        "Put back every write-cache setting that a killed diskq run (SIGKILL, power loss, crash) "
        "left changed, from the journal diskq writes before each change. Runs still going are "
        "left alone, and so is a device that a process still has open for writing after --wait "
        "seconds (it is named). A journal entry that cannot be read (damaged) is shown with its "
        "raw content and kept until you set that cache back by hand and remove it with --discard. "
        "Exits non-zero if anything could not be restored.\n\n"
        "Example: diskq restore\n\n"
        "Example: diskq restore --discard cache-sdb-hdparm.json"
    )
)
def restore(
    list_only: bool = typer.Option(False, "--list", help="only show what is pending; change nothing"),
    as_json: bool = typer.Option(False, "--json", help="print the outcome as JSON on stdout"),
    wait: float = typer.Option(
        WRITERS_WAIT_S,
        "--wait",
        min=0,
        max=3600,
        help="seconds to wait for processes still writing to a device before refusing it",
    ),
    discard: str | None = typer.Option(
        None,
        "--discard",
        metavar="ENTRY",
        help="remove the journal entry ENTRY (a file name shown by --list), after setting its cache back by hand",
    ),
) -> None:
    import json
    from dataclasses import asdict

    from diskq.errors import CacheError
    from diskq.probe.journal import Journal

    journal = Journal()
    if discard is not None:
        gone = journal.discard(discard)
        raw = gone.shown() if hasattr(gone, "shown") else json.dumps(asdict(gone))
        if as_json:
            print_json(json.dumps({"discarded": gone.file}, indent=2))
        stderr_console().print(
            f"discarded {gone.file} (its content was: {raw})", markup=False, highlight=False, soft_wrap=True
        )
        return
    entries, damaged = journal.read()
    if list_only:
        listed = [{**asdict(e), "running": e.running} for e in entries]
        if as_json:
            print_json(json.dumps({"pending": listed, "damaged": [d.as_dict() for d in damaged]}, indent=2))
        else:
            out = stdout_console()
            if not listed and not damaged:
                out.print("nothing to restore")
            for e in listed:
                state = "run in progress" if e["running"] else "left by a run that is gone"
                out.print(
                    f"{e['device']}: write cache was {e['original']} ({e['mechanism']}), {state}",
                    markup=False,
                    soft_wrap=True,
                )
            for d in damaged:
                out.print(
                    f"{d.describe()}; the original state of {d.device or 'its device'} may be lost: set it by "
                    f"hand, then `diskq restore --discard {d.name}`",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
        return

    messages = journal.restore_all(wait_s=wait)
    left, damaged = journal.stale(), journal.damaged()
    if as_json:
        print_json(
            json.dumps(
                {
                    "messages": messages,
                    "not_restored": [asdict(e) for e in left],
                    "damaged": [d.as_dict() for d in damaged],
                },
                indent=2,
            )
        )
    else:
        err = stderr_console()
        if not messages:
            err.print("nothing to restore")
        for m in messages:
            err.print(m, markup=False, highlight=False, soft_wrap=True)
    if left or damaged:
        what = [f"{len(left)} write-cache setting(s) could not be restored"] if left else []
        what += [f"{len(damaged)} journal entr{'y is' if len(damaged) == 1 else 'ies are'} damaged"] if damaged else []
        raise CacheError(
            "; ".join(what),
            hint="do what each message above says (stop the process still writing, or set the cache by hand), "
            "then run this again; the journal keeps every entry not restored"
            + ("; a damaged entry stays until `--discard ENTRY`" if damaged else ""),
        )
