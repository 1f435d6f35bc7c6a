"""``diskq cluster collect``: the read-only ``ceph`` commands run on a host with the ``ceph`` CLI,
each output saved under the name :func:`diskq.cluster.inputs.read_dir` reads it by (:mod:`diskq.proc`
runs them)."""

from __future__ import annotations

import json
from pathlib import Path

from diskq import boundedjson
from diskq.cluster.inputs import COLLECT_FORMAT
from diskq.errors import DiskqError, InvalidInput

#: The commands :func:`collect` runs once per cluster, and the file each output goes to.
CLUSTER_COMMANDS = (
    (["ceph", "osd", "metadata", "-f", "json"], "osd-metadata.json"),
    (["ceph", "osd", "df", "-f", "json"], "osd-df.json"),
    (["ceph", "config", "dump", "-f", "json"], "config-dump.json"),
    (["ceph", "device", "ls", "-f", "json"], "device-ls.json"),
    (["ceph", "health", "detail", "-f", "json"], "health-detail.json"),
    (["ceph", "osd", "perf", "-f", "json"], "osd-perf.json"),
)
#: Seconds one ``ceph`` call may take (an OSD that does not answer must not hang the collection).
CEPH_TIMEOUT_S = 60.0


def _ceph_json(argv: list[str]) -> object:
    from diskq import proc

    done = proc.run(argv, timeout=CEPH_TIMEOUT_S)
    if not done.ok:
        tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ValueError(f"exit {done.returncode}: {tail}")
    return boundedjson.decode(done.stdout)


def collect(directory: Path, *, host: str | None = None) -> list[str]:
    """Run the read-only ``ceph`` commands of :data:`CLUSTER_COMMANDS`, then ``ceph tell osd.N
    perf dump`` for every OSD the metadata lists, and ``ceph-volume inventory`` when this host
    has it; save each output in ``directory`` (created if missing). What failed (an OSD that did
    not answer, a command the release does not know) is saved in ``collect-status.json`` and
    returned; raises :class:`~diskq.errors.ToolMissing` when there is no ``ceph`` command."""
    import socket

    from diskq import proc
    from diskq.errors import ToolMissing

    if proc.which("ceph") is None:
        raise ToolMissing("ceph", "ceph-common")
    if directory.exists() and not directory.is_dir():
        raise InvalidInput(f"{directory} is not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    saved: dict[str, object] = {}
    for argv, name in CLUSTER_COMMANDS:
        try:
            saved[name] = _ceph_json(argv)
        except (DiskqError, ValueError) as exc:
            errors.append(f"`{' '.join(argv)}`: {getattr(exc, 'message', None) or exc}")
            continue
        _write(directory / name, saved[name])
    ids = sorted(
        {
            int(m["id"])
            for m in saved.get("osd-metadata.json") or []
            if isinstance(m, dict) and isinstance(m.get("id"), int)
        }
    )
    for osd in ids:
        argv = ["ceph", "tell", f"osd.{osd}", "perf", "dump"]
        try:
            _write(directory / f"perf-dump.osd.{osd}.json", _ceph_json(argv))
        except (DiskqError, ValueError) as exc:
            errors.append(f"osd.{osd} did not answer `{' '.join(argv)}`: {getattr(exc, 'message', None) or exc}")
    if proc.which("ceph-volume") is not None:
        name = host or socket.gethostname()
        for argv, stem in (
            (["ceph-volume", "inventory", "--format", "json"], "ceph-volume-inventory"),
            (["ceph-volume", "lvm", "list", "--format", "json"], "ceph-volume-lvm-list"),
        ):
            try:
                _write(directory / f"{stem}.{name}.json", _ceph_json(argv))
            except (DiskqError, ValueError) as exc:
                errors.append(f"`{' '.join(argv)}` on {name}: {getattr(exc, 'message', None) or exc}")
    _write(directory / "collect-status.json", {"format": COLLECT_FORMAT, "errors": errors})
    return errors


def _write(path: Path, data) -> None:
    try:
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
