"""The git commands ``diskq contribute`` runs, all through :func:`diskq.proc.run`.

The commit is made with git's plumbing on a temporary index (``read-tree``, ``update-index``,
``write-tree``, ``commit-tree``, then ``branch``): the contributor's working tree, index and
checked-out branch are never touched, so a contribution can be made from a checkout with work in
progress, and undoing it is deleting one branch.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from diskq import proc


class GitFailed(Exception):
    """A git command failed: the message is its command and last line of error."""


def git(repo: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
    """Run ``git -C repo ARGS`` and return its stdout; :class:`GitFailed` when it fails."""
    done = proc.run(["git", "-C", str(repo), *args], env=env, input=input, timeout=300)
    if not done.ok:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise GitFailed(f"git {' '.join(args[:3])}: {tail}")
    return done.stdout


def toplevel(path: Path) -> Path | None:
    """The root of the git work tree holding ``path``, or None."""
    done = proc.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], timeout=60)
    return Path(done.stdout.strip()) if done.ok and done.stdout.strip() else None


def resolve(repo: Path, ref: str) -> str | None:
    done = proc.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], timeout=60)
    return done.stdout.strip() if done.ok and done.stdout.strip() else None


def remotes(repo: Path) -> dict[str, str]:
    """Remote name -> the URL it pushes to, as configured (before any ``insteadOf`` rewriting)."""
    done = proc.run(["git", "-C", str(repo), "config", "--get-regexp", r"^remote\..*\.(url|pushurl)$"], timeout=60)
    return parse_remotes(done.stdout if done.ok else "")


def parse_remotes(text: str) -> dict[str, str]:
    """``git config --get-regexp '^remote\\..*\\.(url|pushurl)$'`` output -> remote -> push URL
    (``pushurl`` wins over ``url``).

    >>> parse_remotes("remote.origin.url https://github.com/diskq-ceph/diskq.git\\n"
    ...               "remote.fork.url git@github.com:octocat/diskq.git\\n"
    ...               "remote.fork.pushurl git@github.com:octocat/diskq-push.git\\n")
    {'origin': 'https://github.com/diskq-ceph/diskq.git', 'fork': 'git@github.com:octocat/diskq-push.git'}
    """
    urls: dict[str, str] = {}
    push: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        name, _, kind = key[len("remote.") :].rpartition(".")
        if key.startswith("remote.") and name and value:
            (push if kind == "pushurl" else urls)[name] = value.strip()
    return {name: push.get(name, url) for name, url in urls.items()}


def github_repo(url: str) -> str | None:
    """``OWNER/NAME`` of a GitHub remote URL (https, ssh or scp-like), or None.

    >>> github_repo("git@github.com:OctoCat/diskq.git"), github_repo("https://github.com/diskq-ceph/diskq")
    ('OctoCat/diskq', 'diskq-ceph/diskq')
    >>> github_repo("/srv/git/diskq.git") is None
    True
    """
    m = re.match(r"^(?:https://|ssh://git@|git@)github\.com[:/]([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?$", url)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def file_at(repo: Path, commit: str, path: str) -> str | None:
    """The text of ``path`` at ``commit``, or None when it has no such file."""
    done = proc.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], timeout=60)
    return done.stdout if done.ok else None


def export(repo: Path, commit: str, paths: list[str], into: Path) -> None:
    """The files under ``paths`` (those ``commit`` has) as ``commit`` has them, written below
    ``into`` (``git archive``: the repository itself is only read)."""
    import tarfile

    present = [p for p in paths if git(repo, "ls-tree", "--name-only", commit, "--", p).strip()]
    if not present:
        return
    archive = into / ".export.tar"
    git(repo, "archive", "--format=tar", "-o", str(archive), commit, "--", *present)
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: refuse links out, devices...
            tar.extractall(into, filter="data")
        else:  # git archive of a commit holds regular files, directories and symbolic links only
            tar.extractall(into, members=[m for m in tar.getmembers() if m.isfile() or m.isdir()])
    archive.unlink()


def commit_files(repo: Path, base: str, files: dict[str, Path], message: str) -> str:
    """A commit on top of ``base`` that sets ``files`` (repository path -> file with the new
    content), made on a temporary index: nothing checked out changes. Returns its id."""
    with tempfile.TemporaryDirectory(prefix="diskq-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(repo, "read-tree", base, env=env)
        for rel, source in files.items():
            blob = git(repo, "hash-object", "-w", "--", str(source)).strip()
            git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        tree = git(repo, "write-tree", env=env).strip()
    return git(repo, "commit-tree", tree, "-p", base, "-F", "-", input=message).strip()
