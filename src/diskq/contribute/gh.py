"""The GitHub command-line tool, ``gh``: the one place diskq calls it (through
:func:`diskq.proc.run`, which tests replace with a recording of gh's answers).

Used for four things only: who is logged in (``gh api user``), the git protocol it is set to use
(``gh config get git_protocol``), forking the project (``gh repo fork``) and opening the pull
request (``gh pr create``). Without gh, or logged out,
``diskq contribute`` prepares the branch and prints the commands that finish the job.
"""

from __future__ import annotations

from pathlib import Path

from diskq import proc


class GhFailed(Exception):
    """gh ran and failed: the message is its last line of error."""


def _gh(*args: str, timeout: float = 120) -> str:
    done = proc.run(["gh", *args], timeout=timeout, env={"GH_PROMPT_DISABLED": "1", "NO_COLOR": "1"})
    if not done.ok:
        said = " ".join(line.strip() for line in done.stderr.splitlines() if line.strip())
        raise GhFailed(f"gh {' '.join(args[:2])}: {said[:400] or f'exit status {done.returncode}'}")
    return done.stdout


def installed() -> bool:
    return proc.which("gh") is not None


def login() -> str | None:
    """The GitHub login gh is logged in as; None when gh is missing or not logged in."""
    if not installed():
        return None
    try:
        return _gh("api", "user", "--jq", ".login", timeout=60).strip() or None
    except GhFailed:
        return None


def git_protocol() -> str:
    """``ssh`` or ``https``: how gh is set to talk to GitHub's git (``gh config get git_protocol``),
    so the fork's remote is one the contributor's credentials push to."""
    try:
        return "ssh" if _gh("config", "get", "git_protocol", timeout=30).strip() == "ssh" else "https"
    except GhFailed:
        return "https"


def fork(upstream: str) -> None:
    """Fork ``upstream`` (``OWNER/NAME``) to the logged-in account; an existing fork is fine."""
    _gh("repo", "fork", upstream, "--clone=false", "--remote=false")


def create_pull_request(upstream: str, *, base: str, head: str, title: str, body_file: Path) -> str:
    """Open the pull request; returns its address (gh prints it on stdout)."""
    out = _gh(
        "pr",
        "create",
        "--repo",
        upstream,
        "--base",
        base,
        "--head",
        head,
        "--title",
        title,
        "--body-file",
        str(body_file),
    )
    urls = [line.strip() for line in out.splitlines() if line.strip().startswith("https://")]
    return urls[-1] if urls else out.strip()
