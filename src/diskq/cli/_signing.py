"""Signing one result document into a submission for ``diskq sign``: the key to sign with, the
document read and refused when interrupted, and the path the submission is written to."""

from __future__ import annotations

import os
from pathlib import Path

from diskq.cli._terminal import say
from diskq.cli.app import stderr_console


def _default_key() -> Path:
    from diskq.errors import InvalidInput

    ssh = Path.home() / ".ssh"
    for name in ("id_ed25519", "id_ecdsa", "id_ed25519_sk", "id_ecdsa_sk", "id_rsa"):
        if (ssh / name).exists():
            return ssh / name
        if (ssh / f"{name}.pub").exists() and os.environ.get("SSH_AUTH_SOCK"):
            return ssh / f"{name}.pub"
    raise InvalidInput("no SSH key found in ~/.ssh", hint="name one with -f, or create one: ssh-keygen -t ed25519")


def _load_for_signing(path: Path):
    """A result document or an existing submission (to be signed again)."""
    from diskq.errors import SubmissionError
    from diskq.submission.documents import read_document

    return read_document(
        path, invalid=SubmissionError, verb="sign", hint="give the result document diskq bench or import-fio wrote"
    )


def _refuse_incomplete(path: Path, result) -> None:
    """An interrupted result is never a submission (validation refuses it): do not sign one."""
    from diskq.errors import SubmissionError
    from diskq.submission.complete import incomplete_problems

    problems = incomplete_problems(result)
    if problems:
        first = problems[0]
        raise SubmissionError(
            f"cannot sign {path}: {first.field}: {first.message}",
            hint="validation refuses interrupted results, so the database would never take it",
        )


def _sign_one(file: Path, key, github, name, principal, output) -> Path:
    import getpass

    from diskq.errors import InvalidInput
    from diskq.submission import methods, paths
    from diskq.submission.legacy import dump
    from diskq.submission.model import Contributor, Provenance, Submission
    from diskq.submission.sign import make_submission, sign_submission
    from diskq.submission.signers import append_line, repository_file

    err = stderr_console()
    loaded = _load_for_signing(file)
    _refuse_incomplete(file, loaded.result if isinstance(loaded, Submission) else loaded)
    from diskq.submission.contributable import not_contributable

    why = not_contributable(loaded.result if isinstance(loaded, Submission) else loaded)
    if why:  # signed all the same (kept locally, compared with a drive's), never contributed
        err.print(
            f"warning: {file}: {why}: the pull-request check refuses it, so do not submit it",
            style="yellow",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    try:
        contributor = Contributor(name=name, github=github) if (name or github) else None
    except ValueError:
        raise InvalidInput('--github must be a GitHub login and --name plain text (no < > & " \\)') from None
    if github and principal and github.lower() != principal.lower():
        raise InvalidInput(
            f"--github {github!r} and --principal {principal[:100]!r} name different signers",
            hint="the principal is your GitHub login: give --github alone",
        )
    if isinstance(loaded, Submission):
        if loaded.legacy:
            raise InvalidInput(f"{file} is a legacy submission; those stay unsigned")
        # signed again, maybe after an edit: the id is derived from the result as it is now
        sub = make_submission(
            loaded.result, contributor=contributor or loaded.contributor, provenance=loaded.provenance
        )
    else:
        provenance = None
        if (loaded.method.id, loaded.method.version) == methods.COMMUNITY:
            provenance = Provenance(source="fio runs made by hand with the community command (diskq import-fio)")
        sub = make_submission(loaded, contributor=contributor, provenance=provenance)
    who = github or principal or (sub.contributor.github if sub.contributor else None) or getpass.getuser()
    out = submission_path(output, sub)  # before signing: a refused -o costs no signature
    signed = sign_submission(sub, (key or _default_key()).expanduser(), principal=who)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump(signed), encoding="utf-8")
    from diskq.database.extract import contributor_text

    shown = contributor_text(signed.contributor.name, signed.contributor.github) if signed.contributor else None
    from rich.markup import escape

    err.print(
        f"signed as [bold]{escape(who)}[/] with key {escape(signed.signature.public_key.split()[0])}"
        + (f"; contributor shown as [bold]{escape(shown)}[/]" if shown else ""),
        markup=True,
        highlight=False,
    )
    root = paths.find_root(out)
    listing = repository_file(root) if root is not None else None
    if listing is not None and listing.is_file():  # a clone of the repository: list the key that signed
        if append_line(listing, signed):
            err.print(f"added the line of this key to {listing} (the pull request must add it)", markup=False)
    if not github:
        err.print("[yellow]note[/]: without --github, pull-request checks cannot match your GitHub keys", markup=True)
    more = f" {listing}" if listing is not None and listing.is_file() else ""
    if not why:
        err.print(
            f"next: git add {out}{more} && git commit -m 'Add {signed.result.device.model or 'device'}' "
            "and open a pull request"
        )
    say(out, err=False)
    return out


def submission_path(output: Path | None, sub) -> Path:
    """Where ``diskq sign`` writes ``sub``: validation wants the file named ``<id>.json`` and,
    inside a ``submissions/`` tree, at ``<vendor>/<model>/<id>.json`` below it. ``-o DIR``
    writes ``DIR/<id>.json`` (the whole layout when DIR is a submissions directory); ``-o FILE``
    must be the name validation expects, otherwise it is refused before anything is signed."""
    from diskq.errors import InvalidInput
    from diskq.submission import paths

    expected = paths.relative_path(sub.result.device, sub.id)
    if output is None:
        return Path(paths.SUBMISSIONS_DIR) / expected
    if output.is_dir():
        return output / expected if output.name == paths.SUBMISSIONS_DIR else output / expected.name
    root = paths.find_root(output)
    if output.name != expected.name or (root is not None and output.absolute() != (root / expected).absolute()):
        right = (root / expected) if root is not None else output.with_name(expected.name)
        raise InvalidInput(
            f"-o {output}: a submission's file must be named after its id"
            + (" and sit at <vendor>/<model>/<id>.json in submissions/" if root is not None else "")
            + f", here {right}",
            hint="give a directory with -o (it gets <id>.json), or leave -o out for submissions/<vendor>/<model>/<id>.json",
        )
    return output
