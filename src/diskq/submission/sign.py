"""Wrapping a result document into a submission, signing it with an SSH key, checking signatures.

What is signed: the RFC 8785 canonical JSON of the submission without its ``signature`` member,
exactly as the file holds it (members absent from the file stay absent, so a later diskq that
adds optional fields still verifies old files). Signing runs ``ssh-keygen -Y sign`` under the
namespace :data:`NAMESPACE`, so it works with key files, ssh-agent and hardware keys alike;
verification runs in-process for ed25519, ECDSA and RSA keys, and through ``ssh-keygen -Y
verify`` for anything else.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from pathlib import Path

from diskq import proc
from diskq.errors import InvalidInput, SignatureError
from diskq.result import ResultDocument
from diskq.submission import integers, sshsig
from diskq.submission.canonical import CanonicalError, canonicalize
from diskq.submission.model import Contributor, Provenance, Signature, Submission

NAMESPACE = "diskq-submission-v1"
ID_HEX_CHARS = 20
_PRINCIPAL = re.compile(r"^[A-Za-z0-9._@+-]{1,100}$")


def _json(model) -> dict:
    return model.model_dump(mode="json", exclude_unset=True)


def submission_id(result: ResultDocument) -> str:
    """The first 20 hex digits of SHA-256 over the canonical result: equal results, equal ids."""
    return hashlib.sha256(canonicalize(_json(result))).hexdigest()[:ID_HEX_CHARS]


def make_submission(
    result: ResultDocument,
    *,
    contributor: Contributor | None = None,
    provenance: Provenance | None = None,
    legacy: bool = False,
) -> Submission:
    """An unsigned submission around ``result``, every field explicit."""
    result = ResultDocument.model_validate(result.model_dump(mode="json"))
    sub = Submission(
        format="diskq-submission",
        id=submission_id(result),
        legacy=legacy,
        contributor=contributor,
        provenance=provenance,
        result=result,
    )
    return Submission.model_validate(sub.model_dump(mode="json"))


def payload_and_id(sub: Submission) -> tuple[bytes, str]:
    """The signed bytes of ``sub`` and the id its result implies, canonicalising only once.

    In RFC 8785 form an object is ``{`` + sorted ``"name":value`` pairs + ``}``, so the
    canonical result is a part of the canonical submission and is hashed from there.
    """
    data = _json(sub)
    data.pop("signature", None)
    try:
        parts = {name: canonicalize(value) for name, value in data.items()}
        payload = b"{" + b",".join(canonicalize(name) + b":" + parts[name] for name in sorted(parts)) + b"}"
    except CanonicalError as exc:
        raise SignatureError(f"document cannot be canonicalised: {exc}") from None
    return payload, hashlib.sha256(parts["result"]).hexdigest()[:ID_HEX_CHARS]


def signed_payload(sub: Submission) -> bytes:
    """The bytes a signature covers: canonical JSON of ``sub`` without ``signature``."""
    return payload_and_id(sub)[0]


def attribution_problem(sub: Submission, principal: str | None = None) -> str | None:
    """Why ``sub`` is attributed to someone other than its signer (``principal``, by default the
    signature's), or None. GitHub logins are case-insensitive, so the comparison is too."""
    github = sub.contributor.github if sub.contributor is not None else None
    if principal is None:
        principal = sub.signature.principal if sub.signature is not None else None
    if github is None or principal is None or github.lower() == principal.lower():
        return None
    return f"is {github!r} but the signature's principal is {principal[:100]!r}: a file is signed by its contributor"


def sign_submission(sub: Submission, key: Path, *, principal: str) -> Submission:
    """Sign ``sub`` with the SSH key ``key`` (a private key, or a public key whose private half
    ssh-agent or a security key holds) and return it with its ``signature`` block filled in.

    The signature block carries the armored signature, the public key taken from the signature
    itself, and ``principal`` (the contributor's GitHub login, which CI checks against the keys
    GitHub publishes for the pull request's author).
    """
    if not _PRINCIPAL.match(principal or ""):
        raise InvalidInput(f"principal {principal!r} must be 1-100 of A-Z a-z 0-9 . _ @ + -")
    mismatch = attribution_problem(sub, principal)
    if mismatch:
        raise SignatureError(
            f"contributor.github {mismatch}",
            hint="sign with --github set to the contributor's login, or change the contributor",
        )
    key = Path(key).expanduser()
    if not key.exists():
        raise InvalidInput(f"key {key} does not exist", hint="name your key with -f, e.g. -f ~/.ssh/id_ed25519")
    unsigned = Submission.model_validate(sub.model_dump(mode="json", exclude={"signature"}))
    unsafe = integers.find(_json(unsigned), integers.unsafe_int)
    if unsafe is not None:
        raise SignatureError(f"cannot sign: {unsafe[0]}: {integers.describe(str(unsafe[1]))}")
    payload = signed_payload(unsigned)
    with tempfile.TemporaryDirectory(prefix="diskq-sign-") as tmp:
        msg = Path(tmp) / "submission.json"
        msg.write_bytes(payload)
        done = proc.run(["ssh-keygen", "-q", "-Y", "sign", "-n", NAMESPACE, "-f", str(key), str(msg)])
        sig_file = msg.with_name(msg.name + ".sig")
        if not done.ok or not sig_file.exists():
            tail = (done.stderr.strip().splitlines() or ["no signature written"])[-1]
            raise SignatureError(
                f"ssh-keygen could not sign with {key}: {tail}",
                hint="for a public key file, its private key must be loaded in ssh-agent (ssh-add)",
            )
        armored = sig_file.read_text()
    parsed = sshsig.parse_armored(armored)
    signature = Signature(
        namespace=NAMESPACE,
        principal=principal,
        public_key=sshsig.public_key_line(parsed.public_key),
        signature=armored.strip(),
    )
    signed = unsigned.model_copy(update={"signature": signature})
    verify_signature(signed)
    return signed


@functools.lru_cache(maxsize=64)
def _allowed(path: str, mtime_ns: int, size: int) -> tuple[sshsig.AllowedSigner, ...]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SignatureError(f"cannot read allowed signers file {path}: {exc.strerror}") from None
    return tuple(sshsig.parse_allowed_signers(text))


def load_allowed_signers(path: Path) -> tuple[sshsig.AllowedSigner, ...]:
    """Parsed allowed-signers file, cached while the file is unchanged."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SignatureError(f"cannot read allowed signers file {path}: {exc.strerror}") from None
    return _allowed(str(path), st.st_mtime_ns, st.st_size)


def verify_signature(sub: Submission, *, allowed_signers: Path | None = None) -> None:
    """Raise :class:`SignatureError` unless ``sub`` carries a valid signature over its content.

    Without ``allowed_signers`` this proves integrity (nothing changed since the embedded key
    signed it). With it, the signing key must also be listed there for ``signature.principal``
    (and the namespace, if the line restricts namespaces).
    """
    verify_payload(sub, None, allowed_signers=allowed_signers)


def verify_payload(sub: Submission, payload: bytes | None, *, allowed_signers: Path | None = None) -> None:
    """:func:`verify_signature` with the signed bytes already computed (None: compute them)."""
    block = sub.signature
    if block is None:
        raise SignatureError("submission is not signed", hint="sign it with `diskq sign FILE`")
    if block.namespace != NAMESPACE:
        raise SignatureError(f"signature namespace is {block.namespace!r}, expected {NAMESPACE!r}")
    sig = sshsig.parse_armored(block.signature)
    if sig.namespace != NAMESPACE:
        raise SignatureError(f"signature was made for namespace {sig.namespace!r}, expected {NAMESPACE!r}")
    _, embedded = sshsig.parse_public_key(block.public_key)
    if embedded != sig.public_key:
        raise SignatureError("embedded public_key is not the key that made the signature")
    if payload is None:
        payload = signed_payload(sub)

    if allowed_signers is not None:
        signers = load_allowed_signers(allowed_signers)
        for_principal = [s for s in signers if s.matches_principal(block.principal)]
        exact = [s for s in for_principal if s.key_blob == sig.public_key and s.simple]
        if exact:
            if not any(s.allows_namespace(NAMESPACE) for s in exact):
                raise SignatureError(f"key of {block.principal!r} is not allowed for namespace {NAMESPACE}")
        elif any(not s.simple for s in for_principal):
            # certificates and validity windows only ssh-keygen can judge; it matches principals
            # with case, so it is given the spelling of the line that matched without case
            spelled = next(
                (
                    p
                    for s in for_principal
                    if not s.simple
                    for p in s.principals.split(",")
                    if p.strip().casefold() == block.principal.casefold()
                ),
                block.principal,
            )
            _ssh_keygen_verify(block.signature, payload, spelled.strip(), allowed_signers)
            return
        else:
            raise SignatureError(
                f"key {sshsig.fingerprint(sig.public_key)} is not an allowed key of principal {block.principal!r}"
            )
    try:
        sshsig.verify(sig, payload)
    except NotImplementedError:
        # the listing was checked above (principals without case): ssh-keygen checks the signature
        _ssh_keygen_verify(block.signature, payload, block.principal, None)


def _ssh_keygen_verify(armored: str, payload: bytes, principal: str, allowed_signers: Path | None) -> None:
    """``ssh-keygen -Y verify`` (or ``check-novalidate`` without allowed signers)."""
    with tempfile.TemporaryDirectory(prefix="diskq-verify-") as tmp:
        sig_file = Path(tmp) / "submission.sig"
        sig_file.write_text(armored.strip() + "\n")
        if allowed_signers is None:
            argv = ["ssh-keygen", "-Y", "check-novalidate", "-n", NAMESPACE, "-s", str(sig_file)]
        else:
            argv = [
                "ssh-keygen",
                "-Y",
                "verify",
                "-f",
                str(allowed_signers),
                "-I",
                principal,
                "-n",
                NAMESPACE,
                "-s",
                str(sig_file),
            ]
        done = proc.run(argv, input=payload.decode("utf-8"))
    if not done.ok:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        if allowed_signers is not None:  # ssh-keygen matched the principal as spelled, with case
            raise SignatureError(
                f"signature does not verify for principal {principal[:100]!r}: {tail} "
                "(ssh-keygen compares principals with case: a certificate must spell the login "
                "as the allowed-signers line does)"
            )
        raise SignatureError(f"signature does not verify: {tail}")


def signature_status(sub, allowed_signers: Path | None) -> str:
    """The status of a submission whose signature (if any) is intact, as the database stores it:
    "unsigned" without one, "intact" without ``allowed_signers`` to check its signer against,
    "verified" or "unlisted" against them ("intact" where they cannot be checked, e.g. ssh-keygen
    needed for a certificate line and not installed)."""
    from diskq.errors import DiskqError, SignatureError

    if sub.signature is None:
        return "unsigned"
    if allowed_signers is None:
        return "intact"
    try:
        verify_payload(sub, None, allowed_signers=allowed_signers)
    except SignatureError:
        return "unlisted"
    except DiskqError:
        return "intact"
    return "verified"
