"""SSH signatures (``ssh-keygen -Y sign``) read and verified in-process.

An armored signature looks like::

    -----BEGIN SSH SIGNATURE-----
    U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAg...
    -----END SSH SIGNATURE-----

and its base64 body is, in SSH wire encoding (OpenSSH's PROTOCOL.sshsig)::

    byte[6]  "SSHSIG"
    uint32   version (1)
    string   publickey        the signer's public key blob
    string   namespace        e.g. "diskq-submission-v1"
    string   reserved
    string   hash_algorithm   "sha512" or "sha256"
    string   signature        string key-format, string signature bytes

The key signs ``"SSHSIG" || string(namespace) || string(reserved) || string(hash_algorithm) ||
string(H(message))``. ssh-ed25519, ecdsa-sha2-nistp256/384/521 and rsa-sha2-256/512 are verified
here with the ``cryptography`` package; other key types (security keys, certificates) are left
to ``ssh-keygen -Y verify``.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import struct
from dataclasses import dataclass, field

from diskq.errors import SignatureError

MAGIC = b"SSHSIG"
BEGIN = "-----BEGIN SSH SIGNATURE-----"
END = "-----END SSH SIGNATURE-----"
HASHES = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}

#: Key types :func:`verify` checks without running ssh-keygen.
IN_PROCESS_KEY_TYPES = (
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa",
)


class _Reader:
    """SSH wire-format reader; any malformed input raises SignatureError."""

    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise SignatureError(f"{self.what} is truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def uint32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def string(self) -> bytes:
        return self.take(self.uint32())

    def text(self) -> str:
        try:
            return self.string().decode("ascii")
        except UnicodeDecodeError:
            raise SignatureError(f"{self.what} holds a non-ASCII name") from None

    def mpint(self) -> int:
        return int.from_bytes(self.string(), "big", signed=True)

    def done(self) -> bool:
        return self.pos == len(self.data)


def _string(b: bytes) -> bytes:
    return struct.pack(">I", len(b)) + b


@dataclass(frozen=True)
class SshSignature:
    public_key: bytes  # wire blob
    namespace: str
    reserved: bytes
    hash_algorithm: str
    sig_format: str
    sig_blob: bytes  # the format-specific part of the signature
    raw_signature: bytes = field(repr=False)  # string key-format + string blob, as embedded

    @property
    def key_type(self) -> str:
        return _Reader(self.public_key, "public key").text()

    def signed_data(self, message: bytes) -> bytes:
        digest = HASHES[self.hash_algorithm](message).digest()
        return (
            MAGIC
            + _string(self.namespace.encode())
            + _string(self.reserved)
            + _string(self.hash_algorithm.encode())
            + _string(digest)
        )


def parse_armored(text: str) -> SshSignature:
    """Parse an armored SSH signature; raise :class:`SignatureError` (one line) if malformed."""
    if not isinstance(text, str):
        raise SignatureError("signature is not text")
    lines = [ln.strip() for ln in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != BEGIN or lines[-1] != END:
        raise SignatureError("signature is not an armored SSH signature (BEGIN/END SSH SIGNATURE)")
    try:
        blob = base64.b64decode("".join(lines[1:-1]), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("signature body is not valid base64") from None
    r = _Reader(blob, "signature")
    if r.take(6) != MAGIC:
        raise SignatureError("signature does not start with SSHSIG")
    version = r.uint32()
    if version != 1:
        raise SignatureError(f"unsupported SSH signature version {version}")
    public_key = r.string()
    try:
        namespace = r.string().decode("utf-8")
    except UnicodeDecodeError:
        raise SignatureError("signature namespace is not UTF-8") from None
    reserved = r.string()
    hash_algorithm = r.text()
    raw_signature = r.string()
    if not r.done():
        raise SignatureError("signature has trailing data")
    if hash_algorithm not in HASHES:
        raise SignatureError(f"unsupported signature hash algorithm {hash_algorithm!r}")
    inner = _Reader(raw_signature, "signature")
    sig_format = inner.text()
    sig_blob = inner.take(len(raw_signature) - inner.pos)
    _Reader(public_key, "public key").text()  # the key blob must at least name its type
    return SshSignature(public_key, namespace, reserved, hash_algorithm, sig_format, sig_blob, raw_signature)


def parse_public_key(line: str) -> tuple[str, bytes]:
    """``"ssh-ed25519 AAAAC3Nz... comment"`` -> ``("ssh-ed25519", blob)``."""
    parts = line.split() if isinstance(line, str) else []
    if len(parts) < 2:
        raise SignatureError("public key is not in OpenSSH format ('TYPE BASE64 [comment]')")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("public key is not valid base64") from None
    inner = _Reader(blob, "public key").text()
    if inner != parts[0]:
        raise SignatureError(f"public key says {parts[0]!r} but holds a {inner!r} key")
    return parts[0], blob


def public_key_line(blob: bytes) -> str:
    """An OpenSSH public key line (no comment) for a wire blob."""
    return f"{_Reader(blob, 'public key').text()} {base64.b64encode(blob).decode()}"


def fingerprint(blob: bytes) -> str:
    """``SHA256:...`` as ssh-keygen prints it."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def verify(sig: SshSignature, message: bytes) -> None:
    """Check ``sig`` over ``message`` with the key inside the signature.

    Raises :class:`SignatureError` if it does not verify, or :class:`NotImplementedError` for key
    types that are left to ssh-keygen.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils

    key = _Reader(sig.public_key, "public key")
    key_type = key.text()
    data = sig.signed_data(message)
    try:
        if key_type == "ssh-ed25519":
            if sig.sig_format != "ssh-ed25519":
                raise SignatureError(f"{sig.sig_format} signature from an ssh-ed25519 key")
            pub = ed25519.Ed25519PublicKey.from_public_bytes(key.string())
            raw = _Reader(sig.sig_blob, "signature").string()
            pub.verify(raw, data)
        elif key_type.startswith("ecdsa-sha2-nistp"):
            curves = {
                "nistp256": (ec.SECP256R1(), hashes.SHA256()),
                "nistp384": (ec.SECP384R1(), hashes.SHA384()),
                "nistp521": (ec.SECP521R1(), hashes.SHA512()),
            }
            curve_name = key.text()
            if curve_name not in curves or key_type != f"ecdsa-sha2-{curve_name}" or sig.sig_format != key_type:
                raise SignatureError(f"malformed {key_type} key or signature")
            curve, digest = curves[curve_name]
            pub = ec.EllipticCurvePublicKey.from_encoded_point(curve, key.string())
            inner = _Reader(_Reader(sig.sig_blob, "signature").string(), "signature")
            r, s = inner.mpint(), inner.mpint()
            pub.verify(utils.encode_dss_signature(r, s), data, ec.ECDSA(digest))
        elif key_type == "ssh-rsa":
            digests = {"rsa-sha2-256": hashes.SHA256(), "rsa-sha2-512": hashes.SHA512()}
            if sig.sig_format not in digests:
                raise SignatureError(f"{sig.sig_format} signatures are not accepted (use rsa-sha2-512)")
            e, n = key.mpint(), key.mpint()
            if n.bit_length() < 2048:
                raise SignatureError(f"RSA key of {n.bit_length()} bits is too short")
            pub = rsa.RSAPublicNumbers(e, n).public_key()
            raw = _Reader(sig.sig_blob, "signature").string()
            pub.verify(raw, data, padding.PKCS1v15(), digests[sig.sig_format])
        else:
            raise NotImplementedError(key_type)
    except InvalidSignature:
        raise SignatureError("signature does not match the document (edited after signing?)") from None
    except (ValueError, TypeError) as exc:
        raise SignatureError(f"malformed {key_type} key or signature: {exc}") from None


# ---------------------------------------------------------------------------- allowed signers


@dataclass(frozen=True)
class AllowedSigner:
    principals: str  # comma-separated patterns, as written
    key_type: str
    key_blob: bytes
    options: dict[str, str | None]

    def matches_principal(self, principal: str) -> bool:
        """Principals are GitHub logins, which GitHub compares without case (``OctoCat`` is
        ``octocat``): so does this match, unlike ssh-keygen's."""
        return _match_pattern_list(principal.casefold(), self.principals.casefold())

    def allows_namespace(self, namespace: str) -> bool:
        spec = self.options.get("namespaces")
        return spec is None or _match_pattern_list(namespace, spec)

    @property
    def simple(self) -> bool:
        """No option that only ssh-keygen can judge (certificate authorities, validity windows)."""
        return not ({"cert-authority", "valid-after", "valid-before"} & set(self.options))


def _match_pattern_list(name: str, patterns: str) -> bool:
    """OpenSSH pattern lists: ``a,b*,!c``; a matching negated pattern wins."""
    matched = False
    for pat in patterns.split(","):
        pat = pat.strip()
        if pat.startswith("!"):
            if fnmatch.fnmatchcase(name, pat[1:]):
                return False
        elif pat and fnmatch.fnmatchcase(name, pat):
            matched = True
    return matched


def _tokens(line: str) -> list[str]:
    """Split on whitespace, keeping double-quoted runs (``namespaces="a,b c"``) together."""
    out, cur, quoted = [], [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
            cur.append(ch)
        elif ch.isspace() and not quoted:
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def _options(text: str) -> dict[str, str | None]:
    """``cert-authority,namespaces="a,b"`` -> ``{"cert-authority": None, "namespaces": "a,b"}``."""
    opts: dict[str, str | None] = {}
    cur, quoted, parts = [], False, []
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    for part in parts:
        name, eq, value = part.partition("=")
        opts[name.strip().lower()] = value.strip().strip('"') if eq else None
    return opts


def parse_allowed_signers(text: str) -> list[AllowedSigner]:
    """Parse an allowed-signers file (ssh-keygen(1) "ALLOWED SIGNERS")::

        octocat ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI... octocat@github
        octocat namespaces="diskq-submission-v1" ecdsa-sha2-nistp256 AAAAE2VjZHNh...

    Lines that cannot be read are skipped (ssh-keygen reports them; here they simply allow no one).
    """
    signers = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        toks = _tokens(line)
        if len(toks) < 3:
            continue
        principals = toks[0].strip('"')
        rest = toks[1:]
        options: dict[str, str | None] = {}
        if not _looks_like_key_type(rest[0]):
            options = _options(rest[0])
            rest = rest[1:]
        if len(rest) < 2:
            continue
        try:
            key_type, blob = parse_public_key(f"{rest[0]} {rest[1]}")
        except SignatureError:
            continue
        signers.append(AllowedSigner(principals, key_type, blob, options))
    return signers


def _looks_like_key_type(tok: str) -> bool:
    return tok.startswith(("ssh-", "ecdsa-", "sk-", "rsa-")) and "=" not in tok
