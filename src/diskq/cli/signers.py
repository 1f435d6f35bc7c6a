"""``diskq signers``: the repository's allowed_signers file and the pull-request check of it."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli._terminal import say
from diskq.cli.app import app

signers_app = typer.Typer(
    help="The repository's allowed_signers file: whose keys vouch for submissions.\n\n"
    "Example: diskq signers line submissions/samsung/samsung-pm883/0123456789abcdef0123.json",
    no_args_is_help=True,
)
app.add_typer(signers_app, name="signers")


def _load(path: Path):
    """A submission file, or a one-line error naming it (a file this command cannot read is bad input)."""
    from diskq.errors import InvalidInput, SubmissionError
    from diskq.submission.validate import load_submission

    try:
        return load_submission(path)
    except SubmissionError as exc:
        raise InvalidInput(f"not a submission file: {exc.message}") from None


def _read_text(path: Path, what: str) -> str:
    from diskq import files
    from diskq.errors import InvalidInput

    try:
        return files.read_regular(path, 4 * 1024 * 1024).decode("utf-8")
    except files.NotRegularFile:
        raise InvalidInput(f"{what} {path} is not a regular file") from None
    except files.FileTooLarge:
        raise InvalidInput(f"{what} {path} is larger than 4 MiB") from None
    except files.UnreadableFile as exc:
        raise InvalidInput(f"{what} {path}: {exc.message}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} {path} is not UTF-8 text") from None


@signers_app.command("line")
def line_cmd(submission: list[Path] = typer.Argument(..., help="signed submission files")) -> None:
    """Print the allowed_signers line of the key that signed each submission.

    Example: diskq signers line submissions/intel/intel-ssd-545/7aec15bacf3600122a6a.json >> allowed_signers
    """
    from diskq.errors import InvalidInput
    from diskq.submission.signers import signer_line

    for path in submission:
        line = signer_line(_load(path))
        if line is None:
            raise InvalidInput(f"{path} is not signed")
        say(line, err=False)


@signers_app.command("check-pr")
def check_pr_cmd(
    submission: list[Path] = typer.Argument(None, help="submission files the pull request adds or changes"),
    base: Path = typer.Option(..., "--base", help="allowed_signers as the base branch has it (an empty file if none)"),
    head: Path = typer.Option(..., "--head", help="allowed_signers as the pull request has it"),
    author: str = typer.Option(..., "--author", help="the pull request author's GitHub login"),
    keys: Path = typer.Option(
        ..., "--keys", help="the keys GitHub publishes for the author (public key or allowed-signers lines)"
    ),
) -> None:
    """Check a pull request's allowed_signers: it only adds lines, each for the author and one of
    the author's GitHub keys, and it lists the key of every signed submission it adds.
    Prints one line per problem and exits 1 if there is any.

    Example: diskq signers check-pr --base base_signers --head allowed_signers --author octocat --keys keys.txt submissions/x/y/z.json
    """
    from diskq.submission.signers import pull_request_problems

    subs = [(str(p), _load(p)) for p in (submission or [])]
    problems = pull_request_problems(
        _read_text(base, "base file"), _read_text(head, "head file"), author, _read_text(keys, "keys file"), subs
    )
    for p in problems:
        say(p, err=False)
    if problems:
        raise typer.Exit(1)
