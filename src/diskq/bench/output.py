"""Where the result document of ``diskq bench`` goes.

The path is checked before the bench writes a byte to the device (a qualification can take an
hour; a typo in ``-o`` must not cost it), and the document is never lost afterwards: if the
file still cannot be written, it goes to a fallback path in the current directory or the temp
directory, and the caller says where. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from diskq.errors import DiskqError, InvalidInput


def check_output_path(path: Path | None, *, target: str | None = None) -> None:
    """Refuse an output path that cannot be written, before anything else happens.

    ``None`` stands for the default name in the current directory. Raises :class:`InvalidInput`
    for a directory, a block device, the bench target itself, a missing parent directory or
    one diskq may not write to.
    """
    if path is None:
        try:
            here = os.getcwd()
        except OSError:
            here = "."
        if not os.access(here, os.W_OK | os.X_OK):
            raise InvalidInput(
                f"the current directory {here} is not writable, so the result document cannot be saved there",
                hint="name a writable place with -o, e.g. -o /tmp/result.json",
            )
        return
    shown = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InvalidInput(f"-o {shown}: {exc.strerror}", hint="give another path for the result document") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InvalidInput(
            f"-o {shown} is a directory", hint=f"name a file inside it, e.g. -o {os.path.join(shown, 'result.json')}"
        )
    if st is not None and stat.S_ISBLK(st.st_mode):
        raise InvalidInput(f"-o {shown} is a block device", hint="give a file path for the result document")
    if target is not None and os.path.realpath(path) == os.path.realpath(target):
        raise InvalidInput(f"-o {shown} is the bench target itself", hint="give another path for the result document")
    parent = path.parent if str(path.parent) else Path(".")
    if st is None:
        if not parent.is_dir():
            raise InvalidInput(
                f"-o {shown}: directory {parent} does not exist",
                hint=f"create it first (`mkdir -p {parent}`) or give another path",
            )
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InvalidInput(
                f"-o {shown}: directory {parent} is not writable", hint="give a path in a writable directory"
            )
    elif not os.access(path, os.W_OK):
        raise InvalidInput(f"-o {shown} is not writable", hint="give another path, or make the file writable")


def _write(path: Path, text: str, *, exclusive: bool) -> None:
    """Write ``text`` to ``path``; a file this call created is removed again if the write fails."""
    existed = path.exists()
    f = open(path, "x" if exclusive else "w", encoding="utf-8")  # fails before creating anything
    try:
        with f:
            f.write(text)
    except OSError:
        if not existed and path.is_file():
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise


def write_result(text: str, path: Path, *, fallback_name: str) -> tuple[Path, str | None]:
    """Write the document to ``path``; if that fails, to ``fallback_name`` in the current
    directory, then in the temp directory (never overwriting a file there).

    Returns where it was written and why ``path`` failed (None when it did not). Raises
    :class:`DiskqError` only when no place at all could be written.
    """
    try:
        _write(path, text, exclusive=False)
        return path, None
    except OSError as exc:
        failure = exc.strerror or str(exc)
    tried = [os.path.abspath(path)]
    for directory in (os.getcwd, tempfile.gettempdir):
        with contextlib.suppress(OSError):
            candidate = Path(directory(), fallback_name)
            stem = candidate.with_suffix("")
            for n in range(100):
                spot = candidate if n == 0 else Path(f"{stem}-{n}{candidate.suffix}")
                if os.path.abspath(spot) in tried:
                    continue
                try:
                    _write(spot, text, exclusive=True)
                    return spot, failure
                except FileExistsError:
                    continue
                except OSError:
                    tried.append(os.path.abspath(spot))
                    break
    raise DiskqError(
        f"cannot write the result document to {path} ({failure}) nor to the current or the temp directory",
        hint="free some space or fix the permissions, then run again",
    )
