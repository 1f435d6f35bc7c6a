"""What ``diskq contribute`` is given (:class:`Options`) and what it did (:class:`Outcome`), its
steps in order, and the branch and remote names the steps use."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from diskq.contribute.privacy import Reduction

#: The steps, in order.
STEPS = (
    "check",
    "repository",
    "login",
    "github-keys",
    "key",
    "privacy",
    "sign",
    "stage",
    "validate",
    "preview",
    "commit",
    "fork",
    "push",
    "pull-request",
)
#: The branch pull requests go to.
BASE_BRANCH = "main"
FORK_REMOTE = "fork"


@dataclass
class Options:
    result: Path
    repo: Path = Path(".")
    login: str | None = None
    name: str | None = None
    key: Path | None = None
    upstream: str | None = None
    base: str | None = None
    push_remote: str | None = None
    branch: str | None = None
    keys_file: Path | None = None
    patch: Path | None = None
    dry_run: bool = False
    use_gh: bool = True
    sign_as_root: bool = False
    reduction: Reduction = field(default_factory=Reduction)


@dataclass
class Outcome:
    """What was done (or, in a dry run, would be): ``steps`` as (name, what) lines, the pull
    request's address, or the commands that finish the job without gh."""

    steps: list[tuple[str, str]] = field(default_factory=list)
    body: str = ""
    title: str = ""
    branch: str = ""
    url: str | None = None
    commands: list[str] = field(default_factory=list)
    open_address: str | None = None
    patch: Path | None = None
    published: list = field(default_factory=list)
