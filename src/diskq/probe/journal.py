"""The restore journal: what diskq changed and must put back, written before the change.

One small JSON file per changed device and mechanism, written atomically and fsynced, in
``/run/diskq/`` (cleared at boot, when drives have reset their volatile settings anyway) or,
where ``/run`` is not writable, ``/var/lib/diskq/``. ``DISKQ_JOURNAL_DIR`` overrides both.

An entry records the owner process (pid and start time, so a reused pid is not mistaken for
it) and the device's ``diskseq`` (so a detached and re-created loop device, or a replugged
drive, is not "restored" by mistake). ``diskq restore`` replays entries whose owner is gone.

This module imports only the standard library: the CLI reads it at every start.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ENV_DIR = "DISKQ_JOURNAL_DIR"
#: Seconds ``diskq restore`` waits for processes still writing to a device before it refuses.
WRITERS_WAIT_S = 10.0
DEFAULT_DIRS = ("/run/diskq", "/var/lib/diskq")


@dataclass
class JournalEntry:
    device: str
    mechanism: str
    original: str
    sysfs_root: str
    diskseq: str | None
    pid: int
    pid_start: str | None
    boot_id: str | None
    created: str
    file: str = ""

    @property
    def running(self) -> bool:
        """The process that wrote this entry is still alive (its run is in progress)."""
        return _process_alive(self.pid, self.pid_start, self.boot_id)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _boot_id() -> str | None:
    return _read("/proc/sys/kernel/random/boot_id")


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat: the process start time in clock ticks since boot."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after the last ')'
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _process_alive(pid: int, start: str | None, boot_id: str | None) -> bool:
    if boot_id and _boot_id() and boot_id != _boot_id():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return start is None or _start_time(pid) == start


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _entry_name(device: str, mechanism: str) -> str:
    return f"cache-{Path(device).name}-{mechanism}.json"


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
        Raises CacheError if another live diskq process owns the entry.
        """
        from diskq.errors import CacheError

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
        try:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump({k: v for k, v in asdict(entry).items() if k != "file"}, f, indent=2)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.dir / name)
            _fsync_dir(self.dir)
        except OSError as exc:
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

    def pending(self) -> list[JournalEntry]:
        """Every entry, oldest first. Unreadable files are skipped (see :meth:`broken`)."""
        entries = []
        for d in self.read_dirs:
            for path in sorted(d.glob("cache-*.json")) if d.is_dir() else []:
                try:
                    data = json.loads(path.read_text())
                    entries.append(JournalEntry(**{**data, "file": str(path)}))
                except (OSError, ValueError, TypeError):
                    continue
        return sorted(entries, key=lambda e: e.created)

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

        messages = []
        for entry in self.pending():
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

    Never raises: a broken journal must not stop diskq from starting.
    """
    try:
        stale = Journal().stale()
    except Exception:  # noqa: BLE001 - a warning must never break startup
        return None
    if not stale:
        return None
    devices = ", ".join(sorted({f"{e.device} ({e.mechanism}, was {e.original})" for e in stale}))
    return (
        f"diskq: warning: an interrupted run left the write cache changed on {devices}; "
        "run `diskq restore` to put it back"
    )
