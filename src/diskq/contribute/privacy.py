"""What a contribution publishes about its contributor and their machine, and how to publish less.

A submission is public once the pull request is opened: it carries the contributor's GitHub login
(the signature's principal: required, the check verifies the key against it) and, if given, their
name; the key that signed; the drive's serial number as a salted hash (never the serial itself);
the kernel release; the device's path on the host; the time of the measurement; and free-text
notes the probes wrote, which may name the host. :func:`published` lists each with the option that
leaves it out; :func:`reduce` applies those options to the result before it is signed (the
signature then covers the reduced document, and its id is derived from it).

The raw fio output every step carries is what validation recomputes the figures from, so it is
published as measured: a host name inside it cannot be removed without making the file invalid,
and :func:`published` says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from diskq.result import ResultDocument

#: What replaces the host's name in free-text notes (``--hide-hostname``).
HOST_PLACEHOLDER = "HOST"


@dataclass(frozen=True)
class Reduction:
    """Which published facts to leave out (each a documented option of ``diskq contribute``)."""

    no_name: bool = False
    hide_serial: bool = False
    hide_kernel: bool = False
    hide_hostname: bool = False


@dataclass(frozen=True)
class Published:
    """One published fact: what, its value as it will be published, the option that removes it
    (None: it cannot be removed, ``why`` says why)."""

    what: str
    value: str
    option: str | None
    why: str = ""


def _notes(result: ResultDocument) -> list[tuple[str, str]]:
    """Every free-text note of ``result`` with its place."""
    out = [(f"device.notes[{i}]", n) for i, n in enumerate(result.device.notes)]
    out += [(f"notes[{i}]", n) for i, n in enumerate(result.notes)]
    for r, run in enumerate(result.runs):
        out += [(f"runs[{r}].notes[{i}]", n) for i, n in enumerate(getattr(run, "notes", []) or [])]
    return out


def _mentions(text: str, hostname: str) -> bool:
    return bool(hostname) and re.search(rf"(?<![\w.-]){re.escape(hostname)}(?![\w-])", text, re.IGNORECASE) is not None


def published(
    result: ResultDocument, *, login: str, name: str | None, key_fingerprint: str | None, hostname: str
) -> list[Published]:
    """What a contribution of ``result`` by ``login`` (``name``) publishes, one fact a line.

    >>> from diskq.result import Device, Method
    >>> doc = ResultDocument(created="2026-01-01T00:00:00Z", method=Method(kernel="6.1.0-18-amd64"),
    ...                      device=Device(path="/dev/sdb", model="X", serial_hash="ab12", notes=["read on db7"]))
    >>> [(p.what, p.option) for p in published(doc, login="octocat", name=None, key_fingerprint=None, hostname="db7")]
    [('GitHub login', None), ('serial number (salted hash)', '--hide-serial'), ('kernel release', '--hide-kernel'), ('device path', None), ('measured at', None), ('host name in device.notes[0]', '--hide-hostname')]
    """
    out = [Published("GitHub login", login, None, "the signature's principal: the check verifies the key against it")]
    if name:
        out.append(Published("name", name, "--no-name"))
    if key_fingerprint:
        out.append(Published("signing key", key_fingerprint, None, "the public key verifies the signature"))
    if result.device.serial_hash:
        out.append(Published("serial number (salted hash)", result.device.serial_hash, "--hide-serial"))
    if result.method.kernel:
        out.append(Published("kernel release", result.method.kernel, "--hide-kernel"))
    if result.device.path:
        out.append(Published("device path", result.device.path, None, "says which kind of device was measured"))
    out.append(Published("measured at", result.created.isoformat(), None, "part of the measurement"))
    for where, text in _notes(result):
        if _mentions(text, hostname):
            out.append(Published(f"host name in {where}", text, "--hide-hostname"))
    raw = json.dumps([p.fio for run in result.runs for p in run.points if getattr(p, "fio", None)])
    if _mentions(raw, hostname):
        out.append(
            Published(
                "host name in the raw fio output",
                hostname,
                None,
                "validation recomputes every figure from it: it is published as fio wrote it",
            )
        )
    return out


def reduce(result: ResultDocument, reduction: Reduction, *, hostname: str) -> ResultDocument:
    """``result`` without what ``reduction`` leaves out (the name is the contributor's, left out
    where the submission is made). Never changes a measured figure."""
    data = result.model_dump(mode="json", exclude_unset=True)
    device = data.setdefault("device", {})
    if reduction.hide_serial:
        device["serial_hash"] = None
    if reduction.hide_kernel:
        data.setdefault("method", {})["kernel"] = None
    if reduction.hide_hostname and hostname:
        pattern = re.compile(rf"(?<![\w.-]){re.escape(hostname)}(?![\w-])", re.IGNORECASE)

        def scrub(notes):
            return [pattern.sub(HOST_PLACEHOLDER, n) for n in notes]

        device["notes"] = scrub(device.get("notes", []))
        data["notes"] = scrub(data.get("notes", []))
        for run in data.get("runs", []):
            if "notes" in run:
                run["notes"] = scrub(run["notes"])
    return ResultDocument.model_validate(data)
