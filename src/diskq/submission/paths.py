"""Where a submission lives: ``submissions/<vendor>/<model>/<id>.json``, every part a safe slug."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path, PurePosixPath

from diskq.result import Device

SUBMISSIONS_DIR = "submissions"
MAX_SLUG = 64

#: First word of a model string -> vendor slug, for devices whose identity names no vendor
#: (ATA drives report only a model string such as "Samsung SSD 860 PRO 512GB").
KNOWN_VENDORS = {
    "samsung": "samsung",
    "intel": "intel",
    "micron": "micron",
    "crucial": "crucial",
    "wdc": "wd",
    "wd": "wd",
    "western": "wd",
    "sandisk": "sandisk",
    "kingston": "kingston",
    "seagate": "seagate",
    "toshiba": "toshiba",
    "kioxia": "kioxia",
    "hgst": "hgst",
    "hitachi": "hitachi",
    "transcend": "transcend",
    "pliant": "pliant",
    "sk": "sk-hynix",
    "hynix": "sk-hynix",
    "adata": "adata",
    "corsair": "corsair",
    "plextor": "plextor",
    "apacer": "apacer",
    "lenovo": "lenovo",
    "dell": "dell",
    "hp": "hp",
    "hpe": "hpe",
    "solidigm": "solidigm",
    "memblaze": "memblaze",
    "huawei": "huawei",
    "sabrent": "sabrent",
}


def slugify(text: str | None) -> str:
    """A lower-case ``[a-z0-9-]`` slug of at most 64 characters; ``unknown`` if nothing is left.

    >>> slugify("Samsung SSD 860 PRO 512GB"), slugify("../../etc/passwd"), slugify("<b>"), slugify(None)
    ('samsung-ssd-860-pro-512gb', 'etc-passwd', 'b', 'unknown')
    """
    if not text:
        return "unknown"
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:MAX_SLUG].strip("-")
    return slug or "unknown"


def vendor_slug(device: Device) -> str:
    if device.vendor:
        return slugify(device.vendor)
    first = re.split(r"[\s_]+", (device.model or "").strip(), maxsplit=1)[0].lower()
    return KNOWN_VENDORS.get(first, "unknown")


def relative_path(device: Device, submission_id: str) -> PurePosixPath:
    """``<vendor>/<model>/<id>.json`` below the submissions directory."""
    return PurePosixPath(vendor_slug(device), slugify(device.model), f"{slugify(submission_id)}.json")


def find_root(path: Path) -> Path | None:
    """The nearest directory named ``submissions`` above ``path``, if any."""
    for parent in Path(path).absolute().parents:
        if parent.name == SUBMISSIONS_DIR:
            return parent
    return None


def find_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """Every ``*.json`` below ``directory``, hidden files and directories left out, in the order
    of their paths below it as ``a/b.json`` strings (the order ``db build`` reads a tree in), and
    the symbolic links to directories met on the way, which are not followed. Symbolic links to
    files are listed: reading them is refused, with a reason."""
    base = str(directory)
    found: list[tuple[str, str]] = []  # (path below base with "/" separators, path): strings cost less
    links: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        keep = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            if os.path.islink(os.path.join(dirpath, name)):
                links.append(Path(dirpath, name))
            else:
                keep.append(name)
        dirnames[:] = keep
        below = dirpath[len(base) :].lstrip(os.sep).replace(os.sep, "/")
        found.extend(
            (f"{below}/{f}" if below else f, os.path.join(dirpath, f))
            for f in filenames
            if f.endswith(".json") and not f.startswith(".")
        )
    found.sort()
    return [Path(path) for _, path in found], sorted(links)
