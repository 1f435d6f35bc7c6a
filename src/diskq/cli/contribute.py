"""``diskq contribute`` (from a result document to an open pull request) and ``diskq pr-comment``
(the row a pull request adds, as the pull-request workflow comments it)."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli._terminal import say
from diskq.cli.app import app, stderr_console

CONTRIBUTE_HELP = """Contribute a result to the device database: check, sign, validate, open the pull request.

Run it as yourself (not root) in your clone of diskq. In order, each step said as it is done:
check (a complete result of a drive one can buy, not a loop, RAM, file or virtual disk), the
repository and its base branch, your GitHub login (--github, or gh's), the keys GitHub publishes
for you (https://github.com/LOGIN.keys and your signing keys), the key to sign with (-f, else
the first key in ~/.ssh or ssh-agent that GitHub publishes for you), what will be published
(shown, and asked about before anything is signed or sent), sign, stage, validate exactly as the
pull-request check will, preview the row the drive gets, then commit on a new branch (your
working tree is not touched), fork if needed, push, and open the pull request with gh.

--dry-run shows every step and the pull request's body and changes nothing. Without gh (or with
--no-gh) the branch is made and diskq prints the commands that push it and the address that
opens the pull request. A failed step says which, and what was undone: run the command again.

Published: your GitHub login, your name (--name; leave it out with --no-name), the signing key,
the drive's serial as a salted hash (--hide-serial), the kernel release (--hide-kernel), the
device path, the time of the run, and the host's name where a note names it (--hide-hostname).

Example: diskq contribute sdb.json --dry-run
Example: diskq contribute sdb.json --name "Jane Doe"
Example: diskq contribute sdb.json --no-gh --github octocat -f ~/.ssh/id_ed25519
"""

PR_COMMENT_HELP = """Print the Markdown the pull-request workflow comments: for each added submission,
the row its drive gets in devices.db, the verdicts recomputed, the row today, and whether the
figures agree with the other evidence for the model (or why not). Builds devices.db from --base
and from --head (checkouts of the base branch and of the pull request) with diskq db build.

Example: diskq pr-comment --base base --head pr submissions/intel/intel-ssd-545/7aec15bacf3600122a6a.json
"""


def _say(step: str, text: str) -> None:
    from rich.markup import escape

    stderr_console().print(f"[bold]{escape(step)}[/]: ", end="", markup=True, highlight=False)
    stderr_console().print(text, markup=False, highlight=False, soft_wrap=True)


def _confirm_with(yes: bool):
    def confirm(published, ask: bool) -> bool:
        err = stderr_console()
        err.print("[bold]published with the pull request[/] (anyone can read it):", markup=True)
        for p in published:
            removable = f"  (leave out: {p.option})" if p.option else f"  ({p.why})" if p.why else ""
            err.print(f"  {p.what}: {p.value}{removable}", markup=False, highlight=False, soft_wrap=True)
        if yes or not ask:
            return True
        try:
            return typer.confirm("publish this?", default=False, err=True)
        except (typer.Abort, EOFError):  # no answer (stdin closed): nothing is published
            return False

    return confirm


def run_contribution(opts, *, yes: bool) -> None:
    """Run the steps and print the outcome: the pull request's address, or the commands left."""
    from rich.markup import escape

    from diskq.contribute.flow import contribute

    err = stderr_console()
    outcome = contribute(opts, say=_say, confirm=_confirm_with(yes))
    if opts.dry_run:
        err.print("[bold]dry run[/]: nothing was changed. The pull request's body:", markup=True)
        say(outcome.body, err=False)
        return
    if outcome.url:
        err.print(f"[bold green]pull request opened[/]: {escape(outcome.url)}", markup=True)
        say(outcome.url, err=False)
        return
    err.print(f"[bold]branch {escape(outcome.branch)} is ready[/]. To open the pull request, run:", markup=True)
    for step, text in outcome.steps:
        if step == "fork" and text.startswith("by hand"):
            err.print(f"  0. {text}", markup=False, highlight=False, soft_wrap=True)
    for i, command in enumerate(outcome.commands, 1):
        err.print(f"  {i}. {command}", markup=False, highlight=False, soft_wrap=True)
    err.print(f"then open {outcome.open_address}", markup=False, highlight=False, soft_wrap=True)
    if outcome.patch:
        err.print(f"(or send the patch {outcome.patch})", markup=False, highlight=False)
    err.print("and paste the body below into the pull request:")
    say(outcome.body, err=False)


@app.command("contribute", help=CONTRIBUTE_HELP)
def contribute_cmd(
    result: Path = typer.Argument(
        ..., help="result document from diskq bench or import-fio (or a submission to sign again)"
    ),
    github: str | None = typer.Option(None, "--github", help="your GitHub login [default: the one gh is logged in as]"),
    name: str | None = typer.Option(None, "--name", help="your name, shown with the result"),
    key: Path | None = typer.Option(
        None,
        "--key",
        "-f",
        help="SSH key to sign with (a private key, or a public key held by ssh-agent or a security key) [default: the first of yours GitHub publishes]",
    ),
    repo: Path = typer.Option(Path("."), "--repo", help="your clone of diskq"),
    upstream: str | None = typer.Option(
        None, "--upstream", help="OWNER/NAME of the project on GitHub [default: the package's repository]"
    ),
    base: str | None = typer.Option(
        None, "--base", help="commit to branch from [default: the project's main as your clone has it]"
    ),
    push_remote: str | None = typer.Option(
        None, "--push-remote", help="remote to push to [default: the one that is your fork; else gh forks]"
    ),
    branch: str | None = typer.Option(None, "--branch", help="branch name [default: add-<model>-<id>]"),
    github_keys: Path | None = typer.Option(
        None, "--github-keys", help="offline: a saved copy of https://github.com/LOGIN.keys"
    ),
    patch: Path | None = typer.Option(None, "--patch", help="also write the commit as a patch file"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="show every step and the pull request's body; change nothing"
    ),
    no_gh: bool = typer.Option(False, "--no-gh", help="do not use gh: make the branch and print the commands"),
    no_name: bool = typer.Option(False, "--no-name", help="publish your login only, not --name"),
    hide_serial: bool = typer.Option(False, "--hide-serial", help="leave out the drive's hashed serial number"),
    hide_kernel: bool = typer.Option(False, "--hide-kernel", help="leave out the kernel release"),
    hide_hostname: bool = typer.Option(False, "--hide-hostname", help="replace this host's name in notes by HOST"),
    sign_as_root: bool = typer.Option(
        False, "--sign-as-root", help="running as root, sign with root's key all the same"
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="publish what is shown without asking"),
) -> None:
    from diskq.contribute.privacy import Reduction
    from diskq.contribute.steps import Options

    opts = Options(
        result=result,
        repo=repo,
        login=github,
        name=name,
        key=key,
        upstream=upstream,
        base=base,
        push_remote=push_remote,
        branch=branch,
        keys_file=github_keys,
        patch=patch,
        dry_run=dry_run,
        use_gh=not no_gh,
        sign_as_root=sign_as_root,
        reduction=Reduction(
            no_name=no_name, hide_serial=hide_serial, hide_kernel=hide_kernel, hide_hostname=hide_hostname
        ),
    )
    run_contribution(opts, yes=yes)


@app.command("pr-comment", help=PR_COMMENT_HELP)
def pr_comment_cmd(
    files: list[Path] = typer.Argument(None, help="submission files the pull request adds (paths in --head)"),
    base: Path = typer.Option(..., "--base", help="checkout of the base branch"),
    head: Path = typer.Option(..., "--head", help="checkout of the pull request"),
    allowed_signers: Path | None = typer.Option(
        None, "--allowed-signers", help="signers to check against [default: each checkout's allowed_signers]"
    ),
) -> None:
    from diskq.contribute.row import build_preview, render_markdown
    from diskq.errors import InvalidInput

    for tree, option in ((base, "--base"), (head, "--head")):
        if not tree.is_dir():
            raise InvalidInput(
                f"{option} {tree} is not a directory",
                hint="give the checkouts of the base branch and of the pull request",
            )
    rels = []
    for f in files or []:
        parts = Path(f).parts
        if not parts or parts[0] != "submissions" or ".." in parts:
            raise InvalidInput(f"{f}: give paths below submissions/ as the pull request has them")
        rels.append(str(Path(*parts[1:])))
    if not rels:
        say("No submission files added.", err=False)
        return
    say(render_markdown(build_preview(base, head, rels, allowed_signers=allowed_signers)), err=False)
