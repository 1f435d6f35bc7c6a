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
import sys
import time
from dataclasses import dataclass, field

from diskq.errors import CommandFailed, CommandTimedOut, ToolMissing

#: The keeper every program runs under (:mod:`diskq.watchdog`), started as a script.
WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watchdog.py")

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
    "ssh-add": "openssh-client",
    "git": "git",
    "gh": "gh",
    "mkfs.ext4": "e2fsprogs",
    "mkswap": "util-linux",
    "ceph": "ceph-common",
    "ceph-volume": "ceph-volume",
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
    grace: float | None = None,
) -> Completed:
    """Run ``argv`` and capture its output as text.

    A missing program raises :class:`ToolMissing` naming the Debian package. With ``check``, a
    non-zero exit raises :class:`CommandFailed`; a program still running after ``timeout``
    seconds is stopped and :class:`CommandTimedOut` raised, with what it printed as
    ``exc.completed``. ``grace``: the seconds a program past its timeout gets to end on SIGINT
    before it and every process it started are killed (default :data:`STOP_GRACE_S`; 0 kills at
    once, for a program that is hung rather than slow). If the caller is interrupted (Ctrl-C,
    or a signal handler raising) while the program runs, the program is sent SIGINT, given a few
    seconds to finish and print what it has, then killed; the interruption is re-raised after the
    child has exited with the child's output attached to the exception as ``exc.completed``.

    Children die with diskq, and so does every process they start: a program that may write to
    a device (fio above all; everything not in :data:`READ_ONLY`) runs under a keeper
    (:mod:`diskq.watchdog`) that kills every process below it with SIGKILL the moment diskq is
    gone (the pipe it holds from diskq reads end-of-file), however diskq ended. So not even a
    SIGKILL of diskq leaves one of fio's job processes writing to a device whose settings
    ``diskq restore`` is about to put back. The keeper costs a Python start per run, so the
    probes that only read start directly, with the parent-death signal set to SIGKILL where
    util-linux's ``setpriv`` can set it.
    """
    exe = which(argv[0]) if "/" not in argv[0] else argv[0]
    if exe is None:
        raise ToolMissing(argv[0], PACKAGES.get(argv[0]))
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    held = None
    pass_fds: tuple[int, ...] = ()
    if os.path.basename(exe) in READ_ONLY:
        reaper = _setpriv()
        command = [reaper, "--pdeathsig", "KILL", "--", exe, *argv[1:]] if reaper else [exe, *argv[1:]]
    else:
        # The keeper's lifeline: diskq holds the only write end (not inherited by any program:
        # it is close-on-exec); when diskq is gone, the keeper reads end-of-file and kills.
        lifeline, write_end = os.pipe()
        held = _Lifeline(write_end)
        pass_fds = (lifeline,)
        command = [sys.executable, "-I", "-S", WATCHDOG, str(lifeline), exe, *argv[1:]]
    try:
        try:
            child = subprocess.Popen(
                command,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=full_env,
                pass_fds=pass_fds,
                start_new_session=True,  # our signals are ours to forward, not the terminal's
            )
        except FileNotFoundError as exc:
            raise ToolMissing(argv[0], PACKAGES.get(argv[0])) from exc
        finally:
            for fd in pass_fds:
                os.close(fd)
        try:
            out, err = child.communicate(input=input, timeout=timeout)
        except BaseException as exc:
            timed_out = isinstance(exc, subprocess.TimeoutExpired)
            out, err = _stop(child, held, grace if timed_out else None)
            # what the program printed before it stopped (fio prints its JSON when interrupted)
            completed = Completed(
                list(argv),
                child.returncode if child.returncode is not None else -9,
                out or "",
                err or "",
                interrupted=True,
            )
            exc.completed = completed
            if timed_out:
                failure = CommandTimedOut(list(argv), timeout or 0.0)
                failure.completed = completed
                raise failure from None
            raise
    finally:
        if held is not None:
            held.cut()
    result = Completed(list(argv), child.returncode, out or "", err or "")
    if check and result.returncode != 0:
        raise CommandFailed(list(argv), result.returncode, result.stderr)
    return result


#: Programs diskq runs only to read (identities, mounts, loop devices, signatures): they start
#: directly, without the keeper. Every other program runs under it.
READ_ONLY = frozenset({"smartctl", "findmnt", "losetup", "lsblk", "blkid", "ssh-keygen"})


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


class _Lifeline:
    """diskq's end of a keeper's pipe; :meth:`cut` closes it once (the keeper then kills)."""

    def __init__(self, fd: int):
        self.fd: int | None = fd

    def cut(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                os.close(fd)


#: Seconds a stopped program (and every process it started) gets to finish before SIGKILL.
STOP_GRACE_S = 10.0


def _stop(child: subprocess.Popen, lifeline: _Lifeline | None, grace: float | None = None) -> tuple[str, str]:
    """Stop a child and every process it started; return the child's output.

    The child's process group gets SIGINT (fio then ends its jobs and prints its JSON), again
    every second, and ``grace`` seconds in all. fio's job processes are not in that group (each
    calls ``setsid()``), and one still starting up when the signal came can outlive fio's main
    process and go on writing to the device after diskq has restored its settings. So the
    keeper (:mod:`diskq.watchdog`) only ends once every process it started has; when the grace
    is over, ``lifeline`` (diskq's end of the keeper's pipe) is cut and the keeper kills every
    one of them with SIGKILL (a program started without a keeper has its group killed).
    """
    grace = STOP_GRACE_S if grace is None else grace
    deadline = time.monotonic() + grace
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGINT)
        try:
            out, err = child.communicate(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() < deadline:
                continue
        except BaseException:
            pass
        try:
            if lifeline is None:
                raise subprocess.TimeoutExpired(child.args, 0)
            lifeline.cut()  # the keeper kills everything it started, then ends
            out, err = child.communicate(timeout=10)
        except BaseException:
            _kill_tree(child.pid)
            out, err = child.communicate()
        break
    return out, err


def _kill_tree(pid: int) -> None:
    """SIGKILL every process below ``pid`` (fio's jobs leave its process group), then its group."""
    from diskq import watchdog

    for below in watchdog.descendants(pid):
        with contextlib.suppress(OSError):
            os.kill(below, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
