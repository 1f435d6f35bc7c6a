"""The restore journal: what diskq changed and must put back, written before the change.

One small JSON file per changed device and mechanism, written atomically and fsynced, in
``/run/diskq/`` (cleared at boot, when drives have reset their volatile settings anyway) or,
where ``/run`` is not writable, ``/var/lib/diskq/``. ``DISKQ_JOURNAL_DIR`` overrides both.

An entry (:mod:`diskq.probe.journalentry`) records the owner process and the device's
``diskseq``. ``diskq restore`` replays entries whose owner is gone.

An entry that cannot be read as one (empty, truncated, extended with junk, a field of the wrong
type) is *damaged*: the original state it held may be lost. It is never overwritten nor removed
by diskq on its own; every start reports it with its raw content, no cache of its device is
switched while it exists (the state found then may be the switched one), and only ``diskq
restore --discard NAME`` removes it, once the user has put the cache back by hand.

This module imports only the standard library and :mod:`diskq.probe.journalentry`: the CLI reads
it at every start.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from diskq.probe.journalentry import (
    RAW_LIMIT,
    DamagedEntry,
    JournalEntry,
    _boot_id,
    _entry_name,
    _read,
    _same_device,
    _start_time,
    device_of_name,
    parse_entry,
)

ENV_DIR = "DISKQ_JOURNAL_DIR"
#: Seconds ``diskq restore`` waits for processes still writing to a device before it refuses.
WRITERS_WAIT_S = 10.0
DEFAULT_DIRS = ("/run/diskq", "/var/lib/diskq")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """The set of pending restores. ``Journal()`` uses the default place; tests pass a directory."""

    def __init__(self, directory: str | os.PathLike | None = None):
        chosen = directory or os.environ.get(ENV_DIR)
        if chosen:
            self.read_dirs = [Path(chosen)]
            self.dir = Path(chosen)
        else:
            self.read_dirs = [Path(d) for d in DEFAULT_DIRS]
            self.dir = self._writable_default()

    @staticmethod
    def _writable_default() -> Path:
        for d in DEFAULT_DIRS:
            parent = Path(d).parent
            if (Path(d).is_dir() and os.access(d, os.W_OK)) or (parent.is_dir() and os.access(parent, os.W_OK)):
                return Path(d)
        return Path(DEFAULT_DIRS[-1])

    # -- writing -------------------------------------------------------------------------

    def record(self, control, original: str) -> JournalEntry:
        """Journal ``control``'s device with its ``original`` state, durably, before any change.

        If an entry for the device already exists from a run that is gone, that entry is kept
        and returned: it holds the true original, the device may still be in the changed state.
        Raises CacheError if another live diskq process owns the entry, or if a damaged entry
        may be this device's (:meth:`check_device`): nothing is written then.
        """
        from diskq.errors import CacheError

        self.check_device(control.device)
        name = _entry_name(control.device, control.mechanism)
        for existing in self.pending():
            if Path(existing.file).name != name:
                continue
            if existing.pid == os.getpid() or not existing.running:
                return existing
            raise CacheError(
                f"another diskq process (pid {existing.pid}) is changing the write cache of {control.device}",
                hint="wait for it to finish, or stop it and run `diskq restore`",
            )
        entry = JournalEntry(
            device=control.device,
            mechanism=control.mechanism,
            original=original,
            sysfs_root=control.sysfs_root,
            diskseq=_read(f"{control.sysfs_root}/block/{Path(control.device).name}/diskseq"),
            pid=os.getpid(),
            pid_start=_start_time(os.getpid()),
            boot_id=_boot_id(),
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        tmp = None
        try:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump({k: v for k, v in asdict(entry).items() if k != "file"}, f, indent=2)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.dir / name)
            tmp = None
            _fsync_dir(self.dir)
        except OSError as exc:
            if tmp is not None:  # a failed write leaves no empty or partial temp file behind
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            raise CacheError(
                f"cannot write the restore journal in {self.dir}: {exc.strerror}",
                hint=f"make {self.dir} writable or set {ENV_DIR}; the cache is left unchanged",
            ) from None
        entry.file = str(self.dir / name)
        return entry

    def remove(self, control) -> None:
        """Drop the entry for ``control``'s device (after a verified restore)."""
        name = _entry_name(control.device, control.mechanism)
        for d in self.read_dirs:
            try:
                (d / name).unlink()
                _fsync_dir(d)
            except FileNotFoundError:
                pass

    # -- reading -------------------------------------------------------------------------

    def read(self) -> tuple[list[JournalEntry], list[DamagedEntry]]:
        """The readable entries (oldest first) and the damaged ones, in one pass."""
        entries, damaged = [], []
        for d in self.read_dirs:
            try:
                paths = sorted(d.glob("cache-*.json")) if d.is_dir() else []
            except OSError:
                paths = []
            for path in paths:
                try:
                    with open(path, "rb") as f:
                        raw = f.read(RAW_LIMIT + 1)
                except OSError as exc:
                    damaged.append(
                        DamagedEntry(str(path), f"cannot be read: {exc.strerror}", "", device_of_name(path.name))
                    )
                    continue
                text = raw[:RAW_LIMIT].decode("utf-8", errors="replace")
                try:
                    if len(raw) > RAW_LIMIT:
                        raise ValueError(f"longer than {RAW_LIMIT} bytes")
                    entries.append(parse_entry(raw.decode("utf-8"), str(path)))
                except ValueError as exc:  # UnicodeDecodeError is one too
                    damaged.append(
                        DamagedEntry(
                            str(path),
                            str(exc) if not isinstance(exc, UnicodeError) else "not UTF-8 text",
                            text,
                            device_of_name(path.name),
                        )
                    )
        return sorted(entries, key=lambda e: e.created), damaged

    def pending(self) -> list[JournalEntry]:
        """Every readable entry, oldest first (the damaged ones: :meth:`damaged`)."""
        return self.read()[0]

    def damaged(self) -> list[DamagedEntry]:
        """Every file that cannot be read as an entry; diskq leaves each as it is."""
        return self.read()[1]

    def check_device(self, device: str) -> None:
        """Raise CacheError when a damaged entry may be ``device``'s: its original state may be
        lost, and the state found now may be a switched one, so no cache of it is switched."""
        from diskq.errors import CacheError

        mine = [d for d in self.damaged() if _same_device(d, device)]
        if mine:
            raise CacheError(
                f"refusing to switch the write cache of {device}: the restore journal holds a damaged entry "
                f"that may be its own, so the state it found may not be the original ({mine[0].describe()})",
                hint=f"set the write cache of {device} back by hand, then `diskq restore --discard {mine[0].name}`; "
                "or run with --cache keep to measure it as it is",
            )

    def discard(self, name: str) -> JournalEntry | DamagedEntry:
        """Remove the entry file ``name`` (its file name, or its path in the journal) after the
        user has dealt with it by hand; InvalidInput when there is none, CacheError when the run
        that wrote it is still going."""
        from diskq.errors import CacheError, InvalidInput

        entries, damaged = self.read()
        dirs = {os.path.realpath(d) for d in self.read_dirs}
        wanted = Path(name)
        for found in [*damaged, *entries]:
            path = Path(found.file)
            if path.name != wanted.name or (wanted.parent != Path(".") and os.path.realpath(wanted.parent) not in dirs):
                continue
            if isinstance(found, JournalEntry) and found.running:
                raise CacheError(
                    f"{found.file} belongs to a run still going (pid {found.pid}); it is not discarded",
                    hint="wait for that run to end",
                )
            path.unlink(missing_ok=True)
            _fsync_dir(path.parent)
            return found
        where = ", ".join(str(d) for d in self.read_dirs)
        raise InvalidInput(
            f"no journal entry named {json.dumps(name)[:80]} in {where}",
            hint="`diskq restore --list` names every entry",
        )

    def stale(self) -> list[JournalEntry]:
        """Entries whose run is gone: changes that nobody will put back but ``diskq restore``."""
        return [e for e in self.pending() if not e.running]

    def restore_all(self, wait_s: float = WRITERS_WAIT_S) -> list[str]:
        """Put back every change left by a run that is gone; one message per entry.

        An entry whose run is still alive is left alone. An entry whose device is gone or was
        replaced (different ``diskseq``) is dropped, since there is nothing left to restore.
        A device that some process still has open for writing (a fio job that outlived its
        diskq, say) is waited for up to ``wait_s`` seconds, then left as it is, with a message
        naming those processes: restoring the setting under a running writer would mix two
        settings into what it measures. A failed or refused restore keeps its entry; check
        :meth:`stale` afterwards.
        """
        from diskq.errors import DiskqError
        from diskq.probe.cache import CacheControl, set_state
        from diskq.probe.writers import wait_for_no_writers

        entries, damaged = self.read()
        messages = [
            f"{d.describe()}: NOT restored; set the write cache of {d.device or 'its device'} by hand, "
            f"then `diskq restore --discard {d.name}`"
            for d in damaged
        ]
        for entry in entries:
            what = f"{entry.device} write cache ({entry.mechanism})"
            if entry.running:
                messages.append(f"{what}: left alone, the run that changed it (pid {entry.pid}) is still going")
                continue
            name = Path(entry.device).name
            seq = _read(f"{entry.sysfs_root}/block/{name}/diskseq")
            if not Path(entry.device).exists() or (entry.diskseq and seq != entry.diskseq):
                Path(entry.file).unlink(missing_ok=True)
                messages.append(f"{what}: device is gone or was replaced since; entry dropped, nothing to restore")
                continue
            writers = wait_for_no_writers(entry.device, wait_s, sysfs_root=entry.sysfs_root)
            if writers:
                names = ", ".join(str(w) for w in writers)
                messages.append(
                    f"{what}: NOT restored to {entry.original}: still open for writing by {names} "
                    f"after {wait_s:g} s; stop {'it' if len(writers) == 1 else 'them'} and run `diskq restore` again"
                )
                continue
            control = CacheControl(entry.device, entry.mechanism, "unknown", True, sysfs_root=entry.sysfs_root)
            try:
                set_state(control, entry.original)  # type: ignore[arg-type]
            except DiskqError as exc:
                messages.append(f"{what}: NOT restored to {entry.original}: {exc.message}")
                continue
            Path(entry.file).unlink(missing_ok=True)
            messages.append(f"{what}: restored to {entry.original}")
        return messages


def pending_warning() -> str | None:
    """One line for the CLI to print at start when a killed run left a write cache changed.

    Damaged entries get a line each, with their raw content, until the user discards them.
    Never raises: a broken journal must not stop diskq from starting.
    """
    try:
        journal = Journal()
        entries, damaged = journal.read()
        stale = [e for e in entries if not e.running]
    except Exception:  # noqa: BLE001 - a warning must never break startup
        return None
    lines = []
    if stale:
        devices = ", ".join(sorted({f"{e.device} ({e.mechanism}, was {e.original})" for e in stale}))
        lines.append(
            f"diskq: warning: an interrupted run left the write cache changed on {devices}; "
            "run `diskq restore` to put it back"
        )
    for d in damaged:
        lines.append(
            f"diskq: warning: {d.describe()}; the original write cache state of "
            f"{d.device or 'its device'} may be lost: set it by hand, then `diskq restore --discard {d.name}`"
        )
    return "\n".join(lines) or None
