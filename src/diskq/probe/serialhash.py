"""The serial number's salted hash: the only form of a serial number diskq keeps.

The same drive always gives the same hash, so the table can tell two drives of one model apart;
placeholder serials (redacted, masked, ``0``) get no hash, since hashing them would make unrelated
drives look identical.
"""

from __future__ import annotations

import hashlib
from typing import Any

from diskq.probe.smartvalues import _str

#: Public, fixed salt: hashes must be comparable across submissions, so it cannot be secret.
#: It still keeps a serial from matching unsalted SHA-256 tables of serial numbers.
DEFAULT_SALT = "diskq-serial-v1"

#: Serial strings that upstream tools or redaction leave behind; hashing them would make
#: unrelated drives look identical.
_PLACEHOLDER_SERIALS = {"", "redacted", "unknown", "none", "n/a", "0", "yes"}


def serial_hash(serial: str, *, salt: str = DEFAULT_SALT) -> str:
    """Salted SHA-256 of a serial number (surrounding blanks ignored), as 24 hex digits.

    >>> serial_hash("S3Z9NB0K123456") == serial_hash("  S3Z9NB0K123456 ")
    True
    """
    normal = serial.strip()
    if not normal:
        raise ValueError("empty serial number")
    digest = hashlib.sha256(f"{salt}\0{normal}".encode()).hexdigest()
    return digest[:24]


def _hashable_serial(serial: Any) -> str | None:
    text = _str(serial)
    if text is None or text.lower() in _PLACEHOLDER_SERIALS or set(text.lower()) <= {"x", "0"}:
        return None
    return text
