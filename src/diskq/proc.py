"""The one place diskq runs external programs.

Everything that executes fio, smartctl, hdparm, sdparm, nvme, blkid, losetup, ssh-keygen, ...
goes through :func:`run`. Tests replace ``diskq.proc.run`` (monkeypatch) to feed recorded
outputs, so callers must use ``proc.run(...)`` through the module, never ``from diskq.proc
import run``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field

from diskq.errors import CommandFailed, CommandTimedOut, ToolMissing

#: Debian package that provides each program diskq may call.
PACKAGES = {
    "fio": "fio",
    "smartctl": "smartmontools",
    "hdparm": "hdparm",
    "sdparm": "sdparm",
    "nvme": "nvme-cli",
    "blkid": "util-linux",
    "lsblk": "util-linux",
    "losetup": "mount",
    "findmnt": "util-linux",
    "wipefs": "util-linux",
    "ssh-keygen": "openssh-client",
    "mkfs.ext4": "e2fsprogs",
    "mkswap": "util-linux",
}


@dataclass(frozen=True)
class Completed:
    """The outcome of one program run."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str = ""
    interrupted: bool = field(default=False)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def which(tool: str) -> str | None:
    """Path of ``tool`` on PATH (also looking in the sbin directories), or None."""
    path = os.environ.get("PATH", "")
    extra = ":/usr/local/sbin:/usr/sbin:/sbin"
    return shutil.which(tool, path=path + extra)


def run(
    argv: list[str],
    *,
    check: bool = False,
    timeout: float | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> Completed:
    """Run ``argv`` and capture its output as text.

    A missing program raises :class:`ToolMissing` naming the Debian package. With ``check``, a
    non-zero exit raises :class:`CommandFailed`; a program still running after ``timeout``
    seconds is stopped and :class:`CommandTimedOut` raised. If the caller is interrupted (Ctrl-C,
    or a signal handler raising) while the program runs, the program is sent SIGINT, given a few
    seconds to finish and print what it has, then killed; the interruption is re-raised after the
    child has exited with the child's output attached to the exception as ``exc.completed``.

    Children also die with diskq: where util-linux's ``setpriv`` is installed, each runs with
    the parent-death signal set to SIGKILL, so not even a SIGKILL of diskq leaves fio writing to
    a device whose settings ``diskq restore`` is about to put back.
    """
    exe = which(argv[0]) if "/" not in argv[0] else argv[0]
    if exe is None:
        raise ToolMissing(argv[0], PACKAGES.get(argv[0]))
    command = [exe, *argv[1:]]
    reaper = _setpriv()
    if reaper is not None:
        command = [reaper, "--pdeathsig", "KILL", "--", *command]
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
            start_new_session=True,  # our signals are ours to forward, not the terminal's
        )
    except FileNotFoundError as exc:
        raise ToolMissing(argv[0], PACKAGES.get(argv[0])) from exc
    try:
        out, err = child.communicate(input=input, timeout=timeout)
    except BaseException as exc:
        out, err = _stop(child)
        # what the program printed before it stopped (fio prints its JSON when interrupted)
        exc.completed = Completed(list(argv), child.returncode if child.returncode is not None else -9,
                                  out or "", err or "", interrupted=True)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise CommandTimedOut(list(argv), timeout or 0.0) from None
        raise
    result = Completed(list(argv), child.returncode, out or "", err or "")
    if check and result.returncode != 0:
        raise CommandFailed(list(argv), result.returncode, result.stderr)
    return result


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv, if it knows --pdeathsig (util-linux 2.33 and later)."""
    exe = which("setpriv")
    if exe is None:
        return None
    try:
        probe = subprocess.run([exe, "--pdeathsig", "KILL", "--", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return exe if probe.returncode == 0 else None


#: Seconds a stopped program (and every process it started) gets to finish before SIGKILL.
STOP_GRACE_S = 10.0


def _stop(child: subprocess.Popen, grace: float | None = None) -> tuple[str, str]:
    """Stop a child and every process of its process group; return the child's output.

    The group gets SIGINT (fio then ends its jobs and prints its JSON), the child ``grace``
    seconds to exit, and then SIGKILL. fio's workers are processes of their own: one still
    starting up when the signal came can outlive fio's main process, and would go on writing
    to the device after diskq has restored its settings. So the group is waited for too, and
    whatever is left of it when the grace is over is killed.
    """
    grace = STOP_GRACE_S if grace is None else grace
    deadline = time.monotonic() + grace
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGINT)
    try:
        out, err = child.communicate(timeout=grace)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
    _reap_group(child.pid, deadline)
    return out, err


def _reap_group(pgid: int, deadline: float) -> None:
    """Wait until no live process of group ``pgid`` is left: SIGINT again every second, SIGKILL
    at ``deadline``. Gives up (they cannot write any more) once only unkillable ones remain."""
    nudged = time.monotonic()
    while _group_members(pgid):
        now = time.monotonic()
        if now >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            end = now + 5.0
            while _group_members(pgid) and time.monotonic() < end:
                time.sleep(0.05)
            return
        if now - nudged >= 1.0:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGINT)
            nudged = now
        time.sleep(0.05)


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``, read from /proc.

    ``/proc/PID/stat`` reads ``PID (COMM) STATE PPID PGRP ...``; COMM may hold spaces and
    parentheses, so fields are counted from the last ``)``.
    """
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 2 and fields[0] != b"Z" and fields[2] == str(pgid).encode():
            members.append(int(name))
    return members
