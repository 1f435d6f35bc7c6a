"""The typer application object and the helpers every command module shares.

Command modules (``diskq.cli.bench``, ``diskq.cli.identify``, ...) register their commands on
:data:`app`. They stay thin: parse options, call the library, render with rich. Heavy imports
happen inside the command functions so ``diskq --help`` starts fast.
"""

from __future__ import annotations

import sys

import typer

app = typer.Typer(
    name="diskq",
    help=(
        "Qualify drives for synchronous-write workloads (Ceph BlueStore WAL/DB, etcd, database WAL).\n\n"
        "Example: diskq bench /dev/nvme0n1"
    ),
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def stderr_console():
    """A rich console on stderr: progress and messages never mix with --json output.

    Messages are never broken by inserted newlines (soft wrap): piped or logged, a file name or a
    suggested command stays on its line, where grep and copy-paste find it whole; a terminal wraps
    long lines itself. Control characters never reach the terminal and markup is off unless a
    print asks for it (:mod:`diskq.cli._terminal`)."""
    from diskq.cli._terminal import console

    return console(stderr=True, highlight=False, soft_wrap=True)


def stdout_console(*, markup: bool = False):
    """A rich console on stdout; ``markup=True`` for a renderer that escapes every value it
    interpolates (:func:`rich.markup.escape`), as :mod:`diskq.cli.plan` does."""
    from diskq.cli._terminal import console

    return console(highlight=False, markup=markup)


#: The devices.db files this run read: :func:`diskq.cli.main` says which after the command's
#: output, or under its error (the message stays the first line).
READ: list = []


def database(option):
    """The devices.db a command reads: ``--db``, else the checkout's, the user's copy, the shipped
    snapshot (:mod:`diskq.database.locate`); remembered so that the run says which it read."""
    from diskq.database.locate import find

    found = find(option)
    READ.append(found)
    return found


def print_json(text: str) -> None:
    """Write a JSON document to stdout, and nothing else (no raw control character: a terminal
    may be reading it)."""
    from diskq.cli._terminal import json_text

    text = json_text(text)
    sys.stdout.write(text)
    if not text.endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()


def _print_version(value: bool) -> None:
    if value:
        from diskq.package import DISTRIBUTION, version

        print(f"diskq {version()} ({DISTRIBUTION})")
        raise typer.Exit()


@app.callback(invoke_without_command=False)
def _warn_pending_restores(
    ctx: typer.Context,
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="print diskq's version (from the installed package) and exit",
    ),
) -> None:
    # Runs before every command: a killed run may have left a write cache switched.
    # Light import (stdlib only) and never fails: a broken journal must not stop diskq.
    # `diskq restore` itself says what it finds and does: no warning telling it to run itself.
    if ctx.invoked_subcommand == "restore":
        return
    try:
        from diskq.probe.journal import pending_warning

        message = pending_warning()
    except Exception:  # noqa: BLE001
        message = None
    if message:
        from diskq.cli._terminal import say

        say(message)
