"""The repository's ``allowed_signers`` file: whose keys vouch for submissions.

The file (OpenSSH's allowed-signers format, at the repository root) lists, for every GitHub
login that contributed signed submissions, the keys it signed with::

    octocat namespaces="diskq-submission-v1" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI...

Merged contributions extend it: ``diskq sign`` appends the line of the key it signed with, and
the pull-request check (:func:`pull_request_problems`, run by the base branch's diskq) requires
that the pull request adds the line of every key that signed one of its submissions, that it
only adds lines, and that each added line names the pull request's author and one of the keys
GitHub publishes for that author. ``db build`` then verifies every signature against the file:
a key listed for its principal is ``verified``.

GitHub logins are case-insensitive (``OctoCat`` and ``octocat`` are one account), so
principals are compared without case here and in signature verification.
"""

from __future__ import annotations

from pathlib import Path

from diskq.submission import sshsig
from diskq.submission.model import Submission
from diskq.submission.sign import NAMESPACE

#: The file's name, at the repository root beside ``submissions/``.
FILE_NAME = "allowed_signers"


def repository_file(submissions_dir: Path) -> Path:
    """Where the allowed-signers file of the repository holding ``submissions_dir`` lives."""
    return Path(submissions_dir).absolute().parent / FILE_NAME


def signer_line(sub: Submission) -> str | None:
    """The allowed-signers line of the key that signed ``sub`` (None when it is unsigned)."""
    block = sub.signature
    if block is None:
        return None
    key_type, blob = sshsig.parse_public_key(block.public_key)
    return f'{block.principal} namespaces="{NAMESPACE}" {sshsig.public_key_line(blob)}'


def is_listed(sub: Submission, signers: list[sshsig.AllowedSigner]) -> bool:
    """Is the key that signed ``sub`` listed for its principal (without case) and namespace?"""
    block = sub.signature
    if block is None:
        return False
    _, blob = sshsig.parse_public_key(block.public_key)
    return any(
        s.key_blob == blob and s.matches_principal(block.principal) and s.allows_namespace(NAMESPACE) for s in signers
    )


def append_line(path: Path, sub: Submission) -> bool:
    """Add the line of ``sub``'s signing key to the file at ``path`` unless it is listed already;
    True when a line was added."""
    line = signer_line(sub)
    if line is None:
        return False
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if is_listed(sub, sshsig.parse_allowed_signers(text)):
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    path.write_text(text + line + "\n", encoding="utf-8")
    return True


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def pull_request_problems(
    base_text: str, head_text: str, author: str, author_keys_text: str, submissions: list[tuple[str, Submission]]
) -> list[str]:
    """What is wrong with a pull request's ``allowed_signers`` (one line each; empty: nothing).

    ``base_text`` and ``head_text`` are the file before and after the pull request,
    ``author_keys_text`` the keys GitHub publishes for ``author`` (one OpenSSH public key or
    allowed-signers line each), ``submissions`` the (path, submission) pairs it adds or changes.
    """
    out: list[str] = []
    base = _lines(base_text)
    head = _lines(head_text)
    # only additions: every line of the base stays, in order, and the new ones come after it
    if head[: len(base)] != base:
        out.append(
            f"{FILE_NAME}: a pull request may only add lines at its end; lines of the base branch "
            "were changed, removed or reordered"
        )
        added = [line for line in head if line not in set(base)]
    else:
        added = head[len(base) :]
    author_keys = {
        s.key_blob
        for s in sshsig.parse_allowed_signers(
            "\n".join(f"{author} {line}" if _is_key(line) else line for line in _lines(author_keys_text))
        )
    }
    for line in added:
        parsed = sshsig.parse_allowed_signers(line)
        if len(parsed) != 1:
            out.append(f"{FILE_NAME}: added line is not an allowed-signers line: {line[:120]}")
            continue
        signer = parsed[0]
        if signer.principals.lower() != author.lower():
            out.append(
                f"{FILE_NAME}: added line names {signer.principals[:60]!r}, but the pull request's author is "
                f"{author!r} (logins compare without case): a contributor adds only their own keys"
            )
        elif set(signer.options) != {"namespaces"} or signer.options["namespaces"] != NAMESPACE:
            out.append(
                f'{FILE_NAME}: added line must restrict the key to namespaces="{NAMESPACE}" and carry no other option'
            )
        elif signer.key_blob not in author_keys:
            out.append(
                f"{FILE_NAME}: added key {sshsig.fingerprint(signer.key_blob)} is not one of the keys "
                f"GitHub publishes for {author}"
            )
    listed = sshsig.parse_allowed_signers("\n".join(head))
    for label, sub in submissions:
        if sub.signature is None:
            continue
        if sub.signature.principal.lower() != author.lower():
            out.append(
                f"{label}: signed as {sub.signature.principal[:60]!r}, but the pull request's author is "
                f"{author!r} (logins compare without case)"
            )
        elif not is_listed(sub, listed):
            out.append(
                f"{label}: the key that signed it is not in {FILE_NAME}: add this line to {FILE_NAME} "
                f"(diskq sign does so in a clone of the repository): {signer_line(sub)}"
            )
    return out


def _is_key(line: str) -> bool:
    return line.split(None, 1)[0].startswith(("ssh-", "ecdsa-", "sk-"))
