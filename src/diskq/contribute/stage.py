"""The part of a contribution that happens on this machine only: read and check the result,
choose the key GitHub publishes for the contributor, sign, lay the file out as the pull request
will have it, validate it exactly as the pull-request check does, and preview the row it gives.

Nothing here changes the contributor's repository: the base branch's ``submissions/``,
``sources/`` and ``allowed_signers`` are exported into a temporary directory (``base``), copied
(``head``) and given the new file and the signer line there. Each failure is a
:class:`~diskq.errors.ContributionFailed` naming its step.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from diskq.contribute import keys as ghkeys
from diskq.contribute.privacy import Published, Reduction, published, reduce
from diskq.contribute.row import Preview
from diskq.errors import ContributionFailed, DiskqError
from diskq.submission import paths
from diskq.submission.model import Submission

#: What the export takes from the base branch: what validation and ``db build`` read.
TREE_PATHS = ["submissions", "sources", "allowed_signers"]


@dataclass
class Staged:
    """A signed submission laid out as the pull request will have it."""

    signed: Submission
    rel: str  # below submissions/
    base: Path  # the base branch's tree (exported)
    head: Path  # the same with the file and the signer line
    keys_text: str
    key: ghkeys.Candidate
    published: list[Published] = field(default_factory=list)
    previews: list[Preview] = field(default_factory=list)
    signer_line_added: bool = False

    @property
    def path(self) -> str:
        return f"{paths.SUBMISSIONS_DIR}/{self.rel}"


def read_result(path: Path):
    """The result document in ``path`` (a submission's result when given one), checked: complete
    and a drive one can buy. Step ``check``."""
    from diskq.submission.complete import incomplete_problems
    from diskq.submission.contributable import not_contributable
    from diskq.submission.documents import read_document

    try:
        doc = read_document(path, hint="give the result document diskq bench or import-fio wrote")
    except DiskqError as exc:
        raise ContributionFailed("check", exc.message, hint=exc.hint, exit_code=exc.exit_code) from None
    if isinstance(doc, Submission):
        if doc.legacy:
            raise ContributionFailed("check", f"{path} is a legacy submission: only maintainers add those")
        doc = doc.result
    problems = incomplete_problems(doc)
    if problems:
        raise ContributionFailed(
            "check",
            f"{path} is not complete: {problems[0].field}: {problems[0].message}",
            hint="the database takes complete sweeps only: run diskq bench to its end",
        )
    why = not_contributable(doc)
    if why:
        raise ContributionFailed(
            "check", f"{path}: {why}", hint="the database ranks drives by model; keep this result for yourself"
        )
    return doc


def choose_key(
    keys_text: str, login: str, key: Path | None, *, home: Path, scratch: Path, sign_as_root: bool
) -> ghkeys.Candidate:
    """The key to sign with: ``key`` if given, else the first of the contributor's keys (files in
    ``~/.ssh``, then ssh-agent's) that GitHub publishes for ``login``. Step ``key``.

    Running as root, a key of root's is refused unless ``sign_as_root`` says it is meant: it is
    rarely the key on the contributor's GitHub account, and a root-owned signature made by
    mistake is the commonest way to fail the check."""
    published_blobs = ghkeys.key_blobs(keys_text)
    if key is not None:
        key = key.expanduser()
        if not key.exists():
            raise ContributionFailed(
                "key", f"{key} does not exist", hint="name your key with -f, e.g. -f ~/.ssh/id_ed25519", exit_code=2
            )
        try:
            chosen = ghkeys.Candidate(key, ghkeys.public_line_of(key), "file")
            chosen.blob  # noqa: B018 - parses the line
        except Exception as exc:  # noqa: BLE001 - any unreadable key is this step's failure
            raise ContributionFailed("key", f"cannot read the public key of {key}: {exc}") from None
        found = [chosen]
    else:
        found = ghkeys.candidates(home, scratch)
        if not found:
            raise ContributionFailed(
                "key",
                f"no SSH key in {home / '.ssh'} and none in ssh-agent",
                hint="create one (ssh-keygen -t ed25519), add it at https://github.com/settings/keys, "
                "or name yours with -f",
            )
    matching = [c for c in found if c.blob in published_blobs]
    if not matching:
        listed = ", ".join(f"{c.fingerprint} ({c.where} {c.path.name})" for c in found)
        raise ContributionFailed(
            "key",
            f"GitHub publishes none of these keys for {login}: {listed}; the pull-request check would refuse "
            "the signature",
            hint="add your public key at https://github.com/settings/keys (as an authentication or a signing key), "
            "then run the same command again",
        )
    chosen = matching[0]
    if os.geteuid() == 0 and not sign_as_root and _roots(chosen):
        sudo_user = os.environ.get("SUDO_USER")
        raise ContributionFailed(
            "key",
            f"running as root, the key would be root's ({chosen.path}): diskq does not sign as root with "
            "root's key unless told to",
            exit_code=4,
            hint=(
                f"run it as yourself: sudo -u {sudo_user} diskq contribute ..."
                if sudo_user
                else "run diskq contribute as your own user"
            )
            + ", or add --sign-as-root if root's key is on your "
            "GitHub account",
        )
    return chosen


def _roots(candidate: ghkeys.Candidate) -> bool:
    if candidate.where == "ssh-agent":
        return True  # root's agent
    try:
        return candidate.path.stat().st_uid == 0
    except OSError:
        return True


def privacy(
    result, reduction: Reduction, *, login: str, name: str | None, hostname: str, key_fingerprint: str | None = None
):
    """(the result reduced as asked, what a contribution of it publishes). Step ``privacy``."""
    reduced = reduce(result, reduction, hostname=hostname)
    return reduced, published(
        reduced,
        login=login,
        name=None if reduction.no_name else name,
        key_fingerprint=key_fingerprint,
        hostname=hostname,
    )


def sign(result, *, login: str, name: str | None, key: ghkeys.Candidate):
    """The signed submission. Step ``sign``."""
    from diskq.submission import methods
    from diskq.submission.model import Contributor, Provenance
    from diskq.submission.sign import make_submission, sign_submission

    try:
        contributor = Contributor(name=name, github=login)
    except ValueError:
        raise ContributionFailed(
            "sign", '--github must be a GitHub login and --name plain text (no < > & " \\)'
        ) from None
    provenance = None
    if (result.method.id, result.method.version) == methods.COMMUNITY:
        provenance = Provenance(source="fio runs made by hand with the community command (diskq import-fio)")
    sub = make_submission(result, contributor=contributor, provenance=provenance)
    try:
        return sign_submission(sub, key.path, principal=login)
    except DiskqError as exc:
        raise ContributionFailed("sign", exc.message, hint=exc.hint, exit_code=exc.exit_code) from None


def stage(repo: Path, base_commit: str, signed: Submission, scratch: Path) -> tuple[Path, Path, str, bool]:
    """(base tree, head tree, path below submissions/, whether a signer line was added): the base
    branch's files exported, the head a copy with the submission and its signer line. Step
    ``stage``; a result the base branch holds already is refused here."""
    from diskq.contribute import git
    from diskq.submission.legacy import dump
    from diskq.submission.signers import FILE_NAME, append_line

    base = scratch / "base"
    head = scratch / "head"
    base.mkdir()
    try:
        git.export(repo, base_commit, TREE_PATHS, base)
    except git.GitFailed as exc:
        raise ContributionFailed("stage", str(exc)) from None
    if not (base / paths.SUBMISSIONS_DIR).is_dir():
        raise ContributionFailed(
            "stage",
            f"{base_commit[:12]} of {repo} has no submissions/ directory: is this a clone of diskq?",
            hint="run it in your clone of the project, or name it with --repo",
        )
    rel = str(paths.relative_path(signed.result.device, signed.id))
    same = [p for p in (base / paths.SUBMISSIONS_DIR).rglob(f"{signed.id}.json")]
    if same:
        raise ContributionFailed(
            "stage",
            f"already in the database: {same[0].relative_to(base)} holds this result",
            hint="nothing to contribute: the database has it",
        )
    shutil.copytree(base, head)
    target = head / paths.SUBMISSIONS_DIR / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump(signed), encoding="utf-8")
    listing = head / FILE_NAME
    added = append_line(listing, signed)
    return base, head, rel, added


def validate(
    staged_head: Path, staged_base: Path, rel: str, signed: Submission, *, login: str, keys_text: str, scratch: Path
) -> None:
    """Validate as the pull-request check does: ``validate --contribution`` against the keys
    GitHub publishes for ``login``, then ``signers check-pr``. Step ``validate``."""
    from diskq.submission.signers import FILE_NAME, pull_request_problems
    from diskq.submission.validate_tree import validate_files

    allowed = scratch / "github_allowed_signers"
    allowed.write_text(ghkeys.allowed_signers_text(login, keys_text), encoding="utf-8")
    results, _ = validate_files([staged_head / paths.SUBMISSIONS_DIR / rel], allowed_signers=allowed, contribution=True)
    problems = [f"{p.field}: {p.message}" for _, _, ps in results for p in ps]

    def text(p: Path) -> str:
        return p.read_text(encoding="utf-8") if p.is_file() else ""

    problems += pull_request_problems(
        text(staged_base / FILE_NAME),
        text(staged_head / FILE_NAME),
        login,
        allowed.read_text(encoding="utf-8"),
        [(f"{paths.SUBMISSIONS_DIR}/{rel}", signed)],
    )
    if problems:
        raise ContributionFailed(
            "validate",
            "the pull-request check would refuse it: "
            + "; ".join(problems[:5])
            + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""),
        )
