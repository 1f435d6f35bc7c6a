"""Every domain error diskq raises.

Library code raises these; only the CLI turns them into a one-line message and an exit code.
Each error may carry a ``hint``: what the user should do instead.
"""

from __future__ import annotations


class DiskqError(Exception):
    """Base of all diskq errors."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class InvalidInput(DiskqError):
    """The user gave something diskq cannot use (a bad size, a malformed point, ...)."""

    exit_code = 2


class ToolMissing(DiskqError):
    """An external program diskq needs is not installed."""

    exit_code = 3

    def __init__(self, tool: str, package: str | None = None):
        pkg = package or tool
        super().__init__(
            f"{tool} is not installed",
            hint=f"install it, e.g. `apt-get install {pkg}`",
        )
        self.tool = tool
        self.package = pkg


class CommandFailed(DiskqError):
    """An external program exited with an error diskq cannot work around."""

    def __init__(self, argv: list[str], returncode: int, stderr: str = "", *, hint: str | None = None):
        tail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        msg = f"`{' '.join(argv)}` exited with status {returncode}"
        if tail:
            msg += f": {tail}"
        super().__init__(msg, hint=hint)
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr


class CommandTimedOut(DiskqError):
    """An external program did not finish in time (a hung drive or controller); it was stopped."""

    def __init__(self, argv: list[str], timeout: float):
        super().__init__(
            f"`{' '.join(argv)}` did not finish within {timeout:g} s and was stopped",
            hint="the device or its controller may be hung: check `dmesg` before going on",
        )
        self.argv = argv
        self.timeout = timeout


class FioError(DiskqError):
    """fio failed, printed no usable JSON, or reported a job error."""


class StepCutShort(FioError):
    """fio ended a step before its time without diskq asking (a signal from elsewhere, say).
    ``partial`` holds the step's point, marked interrupted, when fio printed one."""

    def __init__(self, message: str, *, partial=None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.partial = partial


class StepOverdue(StepCutShort):
    """A step (or the sustained write) was still running past its deadline (a stopped fio, or a
    job process left asleep by a fio whose main process was killed): diskq killed fio and every
    process it started. ``limit_s`` is the deadline in seconds after fio started."""

    def __init__(self, message: str, *, limit_s: float, partial=None, hint: str | None = None):
        super().__init__(message, partial=partial, hint=hint)
        self.limit_s = limit_s


class UnsupportedFio(FioError):
    """The installed fio is too old (or too new) for diskq's JSON parser."""


class TargetError(DiskqError):
    """The target path is missing, of the wrong kind, or cannot be used."""

    exit_code = 2


class UnsafeTarget(DiskqError):
    """Writing to the target could destroy data that is in use or still wanted.

    ``reasons`` lists every finding, each a short sentence.
    """

    exit_code = 4

    def __init__(self, message: str, reasons: list[str] | None = None, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.reasons = list(reasons or [])


class NotConfirmed(DiskqError):
    """The user did not confirm that the target's data may be destroyed."""

    exit_code = 4


class Interrupted(BaseException):
    """A run was stopped by a signal (SIGINT, SIGTERM, SIGHUP); see :mod:`diskq.signals`.

    Deliberately not a :class:`DiskqError` (nor an ``Exception``): code that turns domain errors
    into notes, or catches ``Exception`` to stay best effort, must never swallow a request to
    stop. Like ``KeyboardInterrupt``, it only stops at ``except Interrupted`` or ``except
    BaseException``.
    """

    exit_code = 130
    hint = None

    def __init__(self, signum: int):
        import signal

        self.signum = signum
        self.message = f"interrupted by {signal.Signals(signum).name}"
        super().__init__(self.message)

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class IdentityError(DiskqError):
    """No device identity could be read (e.g. smartctl could not detect the device)."""


class CacheError(DiskqError):
    """The write cache could not be read, changed or restored."""


class SubmissionError(DiskqError):
    """A submission file is malformed or fails validation."""

    exit_code = 5


class SignatureError(SubmissionError):
    """Signing failed, or a signature does not verify."""


class ContributionFailed(DiskqError):
    """A step of ``diskq contribute`` failed; ``step`` names it. Whatever the steps before it made
    (a branch, a remote, a pushed branch) has been undone, so the hint's command resumes."""

    def __init__(self, step: str, message: str, *, hint: str | None = None, exit_code: int | None = None):
        super().__init__(f"{step}: {message}", hint=hint)
        self.step = step
        if exit_code is not None:  # the exit code of the error that failed the step (2: bad input, ...)
            self.exit_code = exit_code


class DatabaseError(DiskqError):
    """devices.db cannot be built, read or is out of date."""


class AmbiguousModel(DatabaseError):
    """The query names several models and none with certainty (``samsung 860``; a part number two
    lines share): the candidates are listed, none is chosen."""

    exit_code = 6


class DatabasePathError(DatabaseError):
    """A path given to a database command cannot be used: missing, a directory or another kind
    of file than asked for, not a devices.db, or in a directory that cannot be written."""

    exit_code = 2


class SourcesError(DatabaseError):
    """A file of the public-figures catalogue (``sources/``) is malformed: the message names the
    file, the line and the field."""

    exit_code = 2


class SiteError(DiskqError):
    """The static site cannot be generated."""


class SitePathError(SiteError):
    """``--out`` cannot be used: not a directory, a directory diskq did not write, not writable."""

    exit_code = 2


class PlanRefused(DiskqError):
    """``diskq plan`` cannot give a layout for this device and these inputs; ``reasons`` say why."""

    exit_code = 4

    def __init__(self, message: str, reasons: list[str] | None = None, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.reasons = list(reasons or [])
