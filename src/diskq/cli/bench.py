"""``diskq bench``: the sync-write qualification of one device or file."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import typer

from diskq.cli.app import app, print_json, stderr_console

BENCH_HELP = """Measure 4 KiB write+fdatasync IOPS over numjobs and find the peak.

TARGET is a whole disk, a partition, or a file (created at --size and removed afterwards).
Everything on a block device TARGET is destroyed: diskq asks you to type its name, or takes
--yes. Devices in use (mounted, swap, holders, opened exclusively) are always refused; devices
with a signature (partition table, filesystem, LVM, md, BlueStore, ZFS) need --force too.

--profile sizes adds the block-size profile: 1-job write+fdatasync steps from 512 B (where the
logical block size is 512) to 1 MiB, in every cache state the sweep runs in.

--profile sustained adds one long write after the sweeps (--sustain: a size such as 60G or a
time such as 10m, the default) that looks for the point where throughput falls once the
drive's write cache is full; it may write twice that much to TARGET.

Example: diskq bench /dev/nvme0n1 --cache both -o nvme0n1.json
Example: diskq bench /dev/sdb --profile sizes --yes
Example: diskq bench /dev/sdb --profile sustained --sustain 60G
"""


@app.command("bench", help=BENCH_HELP)
def bench_cmd(
    target: str | None = typer.Argument(None, help="block device, partition or file path"),
    yes: bool = typer.Option(False, "--yes", "-y", help="confirm that the target's data may be destroyed"),
    force: bool = typer.Option(False, "--force", help="also allow a device that carries a signature"),
    runtime: float = typer.Option(
        20,
        "--runtime",
        metavar="<seconds>",
        help="whole seconds a step measures at most, 1 to 86400 (short steps measure 4 s, 7 s for the reported figures)",
    ),
    max_jobs: int | None = typer.Option(None, "--max-jobs", help="highest numjobs the search may try (default 32)"),
    jobs: str | None = typer.Option(
        None, "--jobs", help="explicit numjobs list instead of the search, e.g. 1,2,4 (not with --max-jobs)"
    ),
    size: str | None = typer.Option(
        None, "--size", help="file mode: size of the test file (default 1G); refused with a block device"
    ),
    cache: str = typer.Option(
        "auto", "--cache", help="write cache: keep, off, on, both, or auto (both where it can be switched)"
    ),
    flush_check: bool = typer.Option(True, "--flush-check/--no-flush-check", help="extra 1-job step without fdatasync"),
    steady_state: bool = typer.Option(
        True,
        "--short-steps/--full-steps",
        "--steady-state/--no-steady-state",
        help="short steps (default): 4 s to steer the search, 7 s for the reported figures, each after a 1 s ramp; --full-steps: every step measures --runtime, as the community protocol",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="result document path, checked before the bench starts (default: named after model and date)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result document on stdout (progress goes to stderr)"),
    scratch: bool = typer.Option(
        False,
        "--scratch",
        help="bench a throwaway loop device (root) or temp file in /var/tmp (disk-backed) instead of TARGET",
    ),
    profile: list[str] | None = typer.Option(
        None,
        "--profile",
        metavar="<name>",
        help="add a workload profile to the 4 KiB sweep: sizes (write+fdatasync at 512 B to 1 MiB) or sustained; repeatable",
    ),
    sustain: str | None = typer.Option(
        None,
        "--sustain",
        metavar="<size|time>",
        help="budget of --profile sustained: a size (60G, 500M) or a time (90s, 10m, 2h; m is minutes), default 10m",
    ),
    contribute: bool = typer.Option(
        False,
        "--contribute",
        help="then run diskq contribute on the result (in your clone of diskq; see diskq contribute --help)",
    ),
) -> None:
    from diskq import signals
    from diskq.bench import output as output_mod
    from diskq.bench import planning
    from diskq.bench import sustained as sustained_mod
    from diskq.bench import target as target_mod
    from diskq.errors import InvalidInput
    from diskq.units import parse_int_list, parse_size

    err = stderr_console()
    if jobs is not None and max_jobs is not None:
        raise InvalidInput(
            "--jobs and --max-jobs do not go together: --jobs lists every job count to measure",
            hint="drop --max-jobs to measure exactly the --jobs list, or drop --jobs to let the search stop at --max-jobs",
        )
    options = planning.BenchOptions(
        runtime_s=runtime,
        max_jobs=max_jobs if max_jobs is not None else planning.BenchOptions.max_jobs,
        jobs=parse_int_list(jobs) if jobs is not None else None,  # "" is refused, never the search
        size_bytes=parse_size(size if size is not None else "1G"),
        size_given=size is not None,
        cache=cache,
        yes=yes,
        force=force,
        flush_check=flush_check,
        steady_state=steady_state,
        profiles=tuple(dict.fromkeys(profile or ())),
        sustain=sustained_mod.parse_budget(sustain) if sustain is not None else None,
    )
    options.check_profiles()  # a wrong --profile is refused before anything else is checked
    if scratch == (target is not None):
        raise InvalidInput(
            "name a TARGET or use --scratch (not both)", hint="e.g. diskq bench /dev/sdX, or diskq bench --scratch"
        )
    output_mod.check_output_path(output, target=target)  # before anything is written anywhere
    # From here on SIGINT, SIGTERM and SIGHUP stop diskq in order: the scratch device is detached,
    # fio is stopped, settings are restored and what was measured is written. Once such a stop
    # has begun, later signals are ignored until the process has exited with 130.
    with signals.interruptible(final=True):
        if scratch:
            with target_mod.scratch(min(options.size_bytes, 256 * 1024**2)) as path:
                from rich.markup import escape

                err.print(f"[bold]scratch target[/]: {escape(str(path))} (removed afterwards)", markup=True)
                from dataclasses import replace

                written = _bench(path, replace(options, size_given=False), output, as_json, err)  # --size sized it
        else:
            written = _bench(target, options, output, as_json, err)
    if contribute and written is not None:
        from rich.markup import escape

        from diskq.cli.contribute import run_contribution
        from diskq.contribute.steps import Options

        err.print(f"[bold]contributing {escape(str(written))}[/]", markup=True)
        run_contribution(Options(result=written), yes=False)


def _bench(path: str, options, output: Path | None, as_json: bool, err) -> Path | None:
    """Run the bench and write its document; the document's path when it may be contributed."""
    from rich.markup import escape

    from diskq import signals
    from diskq.bench import output as output_mod
    from diskq.bench import planning, runner
    from diskq.cli._render import BenchProgress, result_table
    from diskq.errors import DiskqError
    from diskq.submission.contributable import not_contributable

    plan = planning.plan(path, options)
    with plan:  # the device stays claimed (O_EXCL) from the safety checks to the end of the bench
        for note in plan.notes:
            err.print(f"[yellow]note[/]: {escape(note)}", markup=True)
        budget = plan.options.sustain_budget
        if budget is not None:
            from diskq.bench import sustained

            text = sustained.warning(budget, path, capacity_bytes=plan.target.capacity_bytes)
            err.print(f"[bold yellow]warning[/]: {escape(text)}", markup=True)
        if plan.needs_confirmation and not options.yes:
            _confirm(plan, err)
        try:
            with BenchProgress(err, plan.options.runtime_s) as progress:
                doc = runner.execute(plan, progress)
        except DiskqError as exc:
            partial = getattr(exc, "document", None)
            if partial is not None:  # keep what was measured before the error, then report it
                with signals.critical():
                    _save_partial(partial, output, err)
            raise
    with signals.critical():  # a signal now waits until the document is written and shown
        text = doc.to_json()
        if as_json:
            print_json(text)  # first: whatever happens to the file, the document is out
        out = output or Path(default_name(doc))
        try:
            written, failure = output_mod.write_result(text, out, fallback_name=default_name(doc))
        except DiskqError as exc:
            if not as_json:
                print_json(text)  # the last place left: the document is not lost
                exc.hint = "the result document was printed on stdout; " + (exc.hint or "")
            raise
        result_table(doc, err if as_json else _stdout(), said=plan.notes)  # the notes above: said once
        err.print(f"result written to [bold]{escape(str(written))}[/]", markup=True)
        if doc.interrupted:
            err.print(
                "it is partial (the bench was interrupted): the database takes complete sweeps only, "
                "so run the bench again to its end to contribute a result"
            )
        elif (why := not_contributable(doc)) is not None:  # a scratch run, a loop device, a file...
            err.print(f"not for the device database: {why}", markup=False, highlight=False, soft_wrap=True)
        else:
            err.print("to contribute it, run as yourself (not root), in your clone of diskq:")
            err.print(contribute_command(written), soft_wrap=True, markup=False, highlight=False)
    if failure is not None:
        problem = DiskqError(
            f"cannot write the result document to {out}: {failure}",
            hint=f"it was saved to {written} instead; move it where you wanted it",
        )
        if doc.interrupted:
            err.print(f"diskq: error: {problem.message}\n  hint: {problem.hint}", markup=False, highlight=False)
            raise typer.Exit(130)
        raise problem
    if doc.interrupted:
        raise typer.Exit(130)
    return written if not_contributable(doc) is None else None


def _save_partial(doc, output: Path | None, err) -> None:
    """Keep the partial document of a run stopped by an error; the error is reported after."""
    from rich.markup import escape

    from diskq.bench import output as output_mod
    from diskq.errors import DiskqError

    text = doc.to_json()
    try:
        written, _ = output_mod.write_result(text, output or Path(default_name(doc)), fallback_name=default_name(doc))
    except DiskqError:
        print_json(text)
        err.print("partial result printed on stdout (no file could be written)")
        return
    err.print(
        f"partial result written to [bold]{escape(str(written))}[/] (the database takes complete sweeps only)",
        markup=True,
    )


def _stdout():
    from diskq.cli.app import stdout_console

    return stdout_console()


def _confirm(plan, err) -> None:
    from rich.markup import escape

    from diskq.errors import NotConfirmed
    from diskq.units import human_bytes

    t = plan.target
    what = f"{t.path} ({t.kind}, {human_bytes(t.capacity_bytes)})"
    budget = plan.options.sustain_budget
    also = ""
    if budget is not None:
        also = (
            f" and up to 2 x {budget.describe()} written to it"
            if budget.bytes is not None
            else f" and written to for up to 2 x {budget.describe()}"
        )
    if not sys.stdin.isatty():
        raise NotConfirmed(
            f"refusing to write to {what} without confirmation",
            hint=f"pass --yes to confirm that all data on it may be destroyed{also}",
        )
    err.print(f"[bold red]All data on {escape(what)} will be destroyed.[/]", markup=True)
    answer = typer.prompt(
        f"Type {t.path} to confirm that its data may be destroyed{also}", default="", show_default=False, err=True
    )
    if answer.strip() not in (t.path, Path(t.path).name):
        raise NotConfirmed(
            f"confirmation did not match {t.path}; nothing was written",
            hint=f"type {t.path} exactly as shown, or pass --yes",
        )


def sign_command(path: Path) -> str:
    """The exact command that signs ``path``, quoted for a POSIX shell, on one line.

    >>> sign_command(Path("/tmp/my result.json"))
    "  diskq sign '/tmp/my result.json' -f ~/.ssh/id_ed25519 --github YOUR_GITHUB_LOGIN"
    """
    import shlex

    return f"  diskq sign {shlex.quote(str(path))} -f ~/.ssh/id_ed25519 --github YOUR_GITHUB_LOGIN"


def contribute_command(path: Path) -> str:
    """The command that contributes ``path``, quoted for a POSIX shell, on one line.

    >>> contribute_command(Path("/tmp/my result.json"))
    "  diskq contribute '/tmp/my result.json'"
    """
    import shlex

    return f"  diskq contribute {shlex.quote(str(path))}"


def default_name(doc) -> str:
    """``diskq-<model>-<YYYYmmdd-HHMMSS>.json`` (the target's name when the model is unknown)."""
    model = doc.device.model or Path(doc.device.path or "target").name
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "target"
    return f"diskq-{slug}-{doc.created.strftime('%Y%m%d-%H%M%S')}.json"
