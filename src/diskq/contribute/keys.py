"""The SSH keys GitHub publishes for a login, and which of the contributor's keys signs.

The pull-request check verifies a submission against the keys GitHub publishes for the pull
request's author: the authentication keys (``https://github.com/LOGIN.keys``, one OpenSSH public
key a line) and the SSH signing keys (``https://api.github.com/users/LOGIN/ssh_signing_keys``, a
JSON list of ``{"key": ...}``). :func:`published_keys` is the one place diskq fetches them (tests
replace it); :func:`allowed_signers_text` turns them into the allowed-signers lines the workflow
writes, so ``diskq contribute`` validates against what the check will.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from diskq import proc
from diskq.errors import InvalidInput
from diskq.submission import sshsig
from diskq.submission.sign import NAMESPACE

#: What GitHub accepts as a login (the workflow refuses anything else before using it).
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
KEYS_URL = "https://github.com/{login}.keys"
SIGNING_KEYS_URL = "https://api.github.com/users/{login}/ssh_signing_keys"
_KEY_TYPES = ("ssh-", "ecdsa-", "sk-")


class KeysUnavailable(Exception):
    """GitHub could not be asked (offline, or an error): the message says what happened."""


def check_login(login: str) -> str:
    if not LOGIN.match(login or ""):
        raise InvalidInput(f"{login!r} is not a GitHub login (letters, digits and '-', at most 39)")
    return login


def published_keys(login: str, *, timeout: float = 20.0) -> str:
    """The public keys GitHub publishes for ``login``: its authentication keys, then its signing
    keys, one OpenSSH public key a line. Raises :class:`KeysUnavailable` when GitHub cannot be
    reached; the signing keys are best effort (their API is rate-limited without a token)."""
    import urllib.error
    import urllib.request

    check_login(login)
    headers = {"User-Agent": "diskq-contribute"}
    try:
        with urllib.request.urlopen(
            urllib.request.Request(KEYS_URL.format(login=login), headers=headers), timeout=timeout
        ) as answer:
            text = answer.read(1 << 20).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise KeysUnavailable(f"{KEYS_URL.format(login=login)}: {getattr(exc, 'reason', exc)}") from None
    try:
        with urllib.request.urlopen(
            urllib.request.Request(
                SIGNING_KEYS_URL.format(login=login), headers={**headers, "Accept": "application/vnd.github+json"}
            ),
            timeout=timeout,
        ) as answer:
            listed = json.loads(answer.read(1 << 20))
        text += "\n" + "\n".join(k["key"] for k in listed if isinstance(k, dict) and isinstance(k.get("key"), str))
    except (urllib.error.URLError, OSError, ValueError, TypeError):
        pass
    return text


def allowed_signers_text(login: str, keys_text: str) -> str:
    """The allowed-signers lines the pull-request workflow writes from ``keys_text``: every line
    that starts with a key type, its type and key, once each, sorted, restricted to the namespace.

    >>> print(allowed_signers_text("octocat", "ssh-ed25519 AAAAB3 me@host\\n\\nnot a key\\nssh-ed25519 AAAAB3"), end="")
    octocat namespaces="diskq-submission-v1" ssh-ed25519 AAAAB3
    """
    pairs = sorted(
        {
            tuple(line.split()[:2])
            for line in keys_text.splitlines()
            if line.startswith(_KEY_TYPES) and len(line.split()) >= 2
        }
    )
    return "".join(f'{login} namespaces="{NAMESPACE}" {kind} {key}\n' for kind, key in pairs)


def key_blobs(keys_text: str) -> set[bytes]:
    """The key blobs of the OpenSSH public keys in ``keys_text`` (lines that do not parse are left out)."""
    out = set()
    for line in keys_text.splitlines():
        if line.startswith(_KEY_TYPES):
            try:
                out.add(sshsig.parse_public_key(line)[1])
            except Exception:  # noqa: BLE001 - a line GitHub serves that this parser does not know
                continue
    return out


@dataclass(frozen=True)
class Candidate:
    """A key the contributor could sign with: ``path`` is what ``ssh-keygen -Y sign -f`` is given
    (a private key, or a public key whose private half ssh-agent or a security key holds)."""

    path: Path
    public_line: str
    where: str  # "file" or "ssh-agent"

    @property
    def blob(self) -> bytes:
        return sshsig.parse_public_key(self.public_line)[1]

    @property
    def fingerprint(self) -> str:
        return sshsig.fingerprint(self.blob)


_DEFAULT_NAMES = ("id_ed25519", "id_ecdsa", "id_ed25519_sk", "id_ecdsa_sk", "id_rsa")


def candidates(home: Path, agent_dir: Path) -> list[Candidate]:
    """The contributor's keys: ``~/.ssh/id_*`` with their ``.pub`` files, then the keys ssh-agent
    holds (``ssh-add -L``; each written to ``agent_dir`` as a ``.pub`` file for ``ssh-keygen``)."""
    out: list[Candidate] = []
    for name in _DEFAULT_NAMES:
        pub = home / ".ssh" / f"{name}.pub"
        if pub.is_file():
            try:
                line = pub.read_text(encoding="utf-8").strip()
                sshsig.parse_public_key(line)
            except Exception:  # noqa: BLE001 - an unreadable or foreign file is not a candidate
                continue
            private = home / ".ssh" / name
            out.append(Candidate(private if private.is_file() else pub, line, "file"))
    if os.environ.get("SSH_AUTH_SOCK") and proc.which("ssh-add"):
        listed = proc.run(["ssh-add", "-L"], timeout=20)
        for i, line in enumerate(listed.stdout.splitlines() if listed.ok else []):
            try:
                sshsig.parse_public_key(line)
            except Exception:  # noqa: BLE001
                continue
            pub = agent_dir / f"agent-key-{i}.pub"
            pub.write_text(line.strip() + "\n", encoding="utf-8")
            out.append(Candidate(pub, line.strip(), "ssh-agent"))
    return out


def public_line_of(key: Path) -> str:
    """The public key line of ``key`` (its ``.pub`` beside it, the file itself if public, else
    ``ssh-keygen -y``, which may ask for the passphrase)."""
    for path in (key if key.name.endswith(".pub") else None, key.with_name(key.name + ".pub")):
        if path is not None and path.is_file():
            return path.read_text(encoding="utf-8").strip()
    done = proc.run(["ssh-keygen", "-y", "-f", str(key)])
    if not done.ok:
        raise InvalidInput(
            f"cannot read the public key of {key}: {(done.stderr.strip().splitlines() or ['ssh-keygen -y failed'])[-1]}"
        )
    return done.stdout.strip()
