"""The order in which submission files entered the repository: what decides between two files
of the same measurement (:mod:`diskq.submission.duplicates`) where there is a history.

A file's ``created`` time is whatever its signer wrote: a copier signs the date they like. The
order of the commits on the branch's first-parent line (each merge of a pull request, in the
order they were merged) cannot be back-dated once published: a commit's own date can be set by
its author, but its place in the line cannot. So a file's entry is the position of the first
first-parent commit that added it, counted from the oldest; ``git log --first-parent --reverse
--diff-filter=A``, with renames counted as additions (a file moved is a file added there).

No history (not a git repository, a shallow clone that lacks the commits, no ``git``): None,
and the build says so; duplicates are then decided by the signed ``created`` time as before.
The one external command runs through :func:`diskq.proc.run`.

Sample of what is read (``--format`` below, then the names a commit added)::

    commit 5f1c0b2e9d 2026-03-02T10:14:07+01:00
    submissions/samsung/samsung-pm883/3b4793a6d9589451d607.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GIT_TIMEOUT_S = 120.0
_MARK = "commit "


@dataclass(frozen=True, slots=True)
class Entry:
    """Where a file entered the repository: ``position`` (0 for the oldest commit), the commit."""

    position: int
    commit: str
    date: str

    def describe(self) -> str:
        """``commit 5f1c0b2 of 2026-03-02``"""
        return f"commit {self.commit[:10]} of {self.date[:10]}"


def parse_log(text: str, prefix: str) -> dict[str, Entry]:
    """The output of :func:`entries`' ``git log`` -> path below ``prefix`` (posix, relative to
    it) -> its first entry.

    >>> log = "commit aaa 2026-01-01T00:00:00+00:00\\n\\nsubmissions/a.json\\ncommit bbb 2026-02-01T00:00:00+00:00\\n\\nsubmissions/b.json\\nsubmissions/a.json\\n"
    >>> {k: (v.position, v.commit) for k, v in parse_log(log, "submissions").items()}
    {'a.json': (0, 'aaa'), 'b.json': (1, 'bbb')}
    """
    out: dict[str, Entry] = {}
    current: Entry | None = None
    position = -1
    base = PurePosixPath(prefix) if prefix not in ("", ".") else None
    for line in text.splitlines():
        if line.startswith(_MARK):
            parts = line[len(_MARK) :].split()
            position += 1
            current = Entry(position, parts[0] if parts else "", parts[1] if len(parts) > 1 else "")
            continue
        if not line or current is None:
            continue
        path = PurePosixPath(line)
        if base is not None:
            try:
                path = path.relative_to(base)
            except ValueError:
                continue
        out.setdefault(path.as_posix(), current)
    return out


def entries(root: Path) -> dict[str, Entry] | None:
    """Every file under ``root`` that a first-parent commit of the current branch added -> its
    first entry; None when there is no history to read (see the module's docstring)."""
    from diskq import proc
    from diskq.errors import DiskqError

    root = Path(root)
    try:
        top = proc.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel", "--is-shallow-repository"], timeout=GIT_TIMEOUT_S
        )
        if not top.ok:
            return None
        lines = top.stdout.splitlines()
        if len(lines) < 2 or lines[1].strip() != "false":
            return None  # no work tree, or a shallow clone: its history starts where the clone was cut
        prefix = Path(root).resolve().relative_to(Path(lines[0].strip()).resolve()).as_posix()
        log = proc.run(
            [
                "git",
                "-C",
                lines[0].strip(),
                "-c",
                "core.quotePath=false",
                "log",
                "--first-parent",
                "--reverse",
                "--no-renames",
                "--diff-filter=A",
                "--name-only",
                "--format=commit %H %cI",
                "--",
                prefix,
            ],
            timeout=GIT_TIMEOUT_S,
        )
    except (DiskqError, OSError, ValueError):
        return None
    if not log.ok:
        return None
    return parse_log(log.stdout, prefix)
