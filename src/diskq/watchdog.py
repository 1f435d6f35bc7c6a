"""The keeper of one external program: it and everything it starts die with diskq.

:func:`diskq.proc.run` does not start a program directly. It starts this file as a script
(``python -I -S watchdog.py FD PROGRAM ARGS...``) in a new session and hands it the read end of
a pipe whose only write end diskq holds. The keeper makes itself a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``) and starts the program. fio forks one process per job, and
each job calls ``setsid()``: it leaves the process group, so a signal to the group never reaches
it, and the kernel clears a parent-death signal in every forked process. What a job cannot leave
is the keeper's subtree: it stays a descendant, and if fio's main process dies first the job is
re-parented to the keeper (the subreaper), not to init.

- When the pipe reads end-of-file, diskq is gone (exited, crashed, or killed with SIGKILL, which
  runs no handler in diskq), or diskq gave up waiting for the program to stop: the keeper sends
  SIGKILL to every process in its subtree, again until none is left, and exits. Nothing diskq
  started can go on writing to a device whose settings ``diskq restore`` is about to put back.
- SIGINT, SIGTERM and SIGHUP do not stop the keeper (diskq stops a program by sending SIGINT to
  the keeper's process group, which holds the program; fio then ends its jobs and prints what it
  measured). The program gets them as usual: it starts with their default actions.
- When the program ends, the keeper waits until every process in its subtree has ended (or the
  pipe closes: then the rest is killed) and exits as the program did: the same exit status, or
  the same signal (a program killed with SIGKILL, by the OOM killer say, kills its keeper with
  SIGKILL too, so diskq sees a death by signal 9).

Only the standard library is used, and nothing of diskq, so the keeper starts in a few tens of
milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys

POLL_S = 0.05
PR_SET_CHILD_SUBREAPER = 36
#: signals whose action cannot be changed: the keeper re-raises them as they are
UNCATCHABLE = (signal.SIGKILL, signal.SIGSTOP)


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` in the process tree, read from ``/proc/PID/stat``
    (``PID (COMM) STATE PPID ...``; COMM may hold spaces and parentheses)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def _parent_gone(fd: int, timeout: float) -> bool:
    """Wait up to ``timeout`` s on the pipe; True once it reads end-of-file (diskq is gone)."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return False
    try:
        return os.read(fd, 512) == b""
    except OSError:
        return True


def _reap() -> tuple[bool, list[tuple[int, int]]]:
    """Collect every child that has ended: (whether any child is left, [(pid, status)])."""
    ended = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False, ended
        if pid == 0:
            return True, ended
        ended.append((pid, status))


#: the line the keeper writes on stderr when it kills what a program that had already ended left
#: behind (a job process of a fio whose main process was killed): ``... ended by signal 9`` or
#: ``... ended with exit status 1``
LEFT_BEHIND = "diskq keeper: the program had {how}; the processes it left were killed"


def _kill_all(me: int, status: int | None = None) -> None:
    """SIGKILL every process of the subtree, until none is left; then end the keeper. ``status``:
    the program's own wait status when it had ended already (said on stderr)."""
    if status is not None:
        how = (
            f"ended by signal {os.WTERMSIG(status)}"
            if os.WIFSIGNALED(status)
            else f"ended with exit status {os.waitstatus_to_exitcode(status)}"
        )
        try:
            os.write(2, (LEFT_BEHIND.format(how=how) + "\n").encode())
        except OSError:
            pass
    while True:
        pids = descendants(me)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        left, _ = _reap()
        if not pids and not left:
            os._exit(137)
        select.select([], [], [], 0.01)


def _subreaper() -> bool:
    """Make the keeper the child subreaper of everything below it; False where that fails."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _exit_watch(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` ends (Linux 5.3 and later), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[1].isdigit():
        sys.stderr.write("usage: watchdog.py FD PROGRAM [ARGS...]\n")
        return 2
    fd, me = int(argv[1]), os.getpid()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)  # handled (not ignored) here
    # As subreaper, every orphan below comes to the keeper: no child left means no process left.
    # Without it, orphans go to init and only a walk of the process tree finds the rest.
    reaper = _subreaper()
    if _parent_gone(fd, 0):
        return 137
    try:  # the program gets the default action for the signals the keeper handles
        program = os.posix_spawn(
            argv[2],
            argv[2:],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_CLOSE, fd)],
            setsigdef=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP),
        )
    except OSError as exc:
        sys.stderr.write(f"{argv[2]}: {exc.strerror}\n")
        return 127
    ended = _exit_watch(program)
    status = None
    while True:
        waiting = ended is not None and status is None
        ready, _, _ = select.select([fd, ended] if waiting else [fd], [], [], None if waiting else POLL_S)
        if fd in ready and _parent_gone(fd, 0):
            _kill_all(me, status)
        left, gone = _reap()
        status = next((s for pid, s in gone if pid == program), status)
        if status is not None and not left and (reaper or not descendants(me)):
            break
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in UNCATCHABLE:  # SIGKILL and SIGSTOP always act by default (and cannot be set)
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        os.kill(me, sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
