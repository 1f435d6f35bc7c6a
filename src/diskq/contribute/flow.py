"""``diskq contribute``: the steps from a result document to an open pull request, in order,
each undone when a later one fails.

    check, repository, login, github-keys, key, privacy, sign, stage, validate, preview
        (this machine only: see :mod:`diskq.contribute.stage`)
    commit      a branch with the file and the signer line (git plumbing: nothing checked out changes)
    fork        with gh, when no remote is the contributor's fork: ``gh repo fork`` and a remote ``fork``
    push        the branch to the fork
    pull-request  ``gh pr create`` with the row the drive gets

With ``dry_run`` the steps up to ``preview`` run in a temporary directory (the result is signed
there to be validated) and the rest are only described. Without gh (or ``use_gh=False``), the
branch is made and the commands that push it and the address that opens the pull request are
returned. A failing step raises :class:`~diskq.errors.ContributionFailed` after undoing what the
steps before it made (the branch, the remote, the pushed branch), so running the same command
again resumes. A fork made on GitHub is left: it is the contributor's, and harmless.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

from diskq.contribute import gh, git, stage
from diskq.contribute import keys as ghkeys
from diskq.contribute.row import render_markdown
from diskq.contribute.steps import BASE_BRANCH, FORK_REMOTE, STEPS, Options, Outcome
from diskq.errors import ContributionFailed, DiskqError
from diskq.submission import paths


def upstream_of(option: str | None) -> str:
    """``OWNER/NAME`` of the project: ``option``, else the package's Repository address."""
    from diskq.package import project_url

    found = option or git.github_repo(project_url("Repository") or "")
    if not found or git.github_repo(f"https://github.com/{found}") != found:
        raise ContributionFailed(
            "repository",
            f"cannot tell the project's GitHub repository ({option or 'none'})",
            hint="give it with --upstream OWNER/NAME",
        )
    return found


def _fork_remote(remotes: dict[str, str], login: str, name: str) -> str | None:
    """The remote that is ``login``'s fork (``login/name`` on GitHub, login without case)."""
    for remote, url in remotes.items():
        repo = git.github_repo(url)
        if repo and repo.lower() == f"{login}/{name}".lower():
            return remote
    return None


def _base_ref(repo: Path, option: str | None, remotes: dict[str, str], upstream: str) -> str:
    if option:
        return option
    for remote, url in remotes.items():
        if (git.github_repo(url) or "").lower() == upstream.lower() and git.resolve(repo, f"{remote}/{BASE_BRANCH}"):
            return f"{remote}/{BASE_BRANCH}"
    return f"origin/{BASE_BRANCH}" if git.resolve(repo, f"origin/{BASE_BRANCH}") else "HEAD"


def contribute(opts: Options, *, say: Callable[[str, str], None], confirm: Callable[[list, bool], bool]) -> Outcome:
    """Run the steps; ``say(step, text)`` reports each. ``confirm(published, ask)`` is shown what
    will be published before anything is signed or leaves the machine; with ``ask`` (not in a dry
    run) its answer decides whether to go on."""
    said: list[str] = []

    def step_done(step: str, text: str) -> None:
        said.append(step)
        say(step, text)

    try:
        return _contribute(opts, step_done, confirm)
    except ContributionFailed as exc:
        if exc.hint is None:  # a step before commit: nothing was made, nothing to undo
            exc.hint = "nothing was changed: fix the cause and run the same command again"
        raise
    except (DiskqError, git.GitFailed, gh.GhFailed) as exc:  # a missing program, a bad value: the step it stopped
        later = [s for s in STEPS if s not in said]
        raise ContributionFailed(
            later[0] if later else STEPS[-1],
            getattr(exc, "message", str(exc)),
            hint=getattr(exc, "hint", None) or "fix the cause and run the same command again",
            exit_code=getattr(exc, "exit_code", None),
        ) from None


def _contribute(opts: Options, say, confirm) -> Outcome:
    out = Outcome()

    def done(step: str, text: str) -> None:
        out.steps.append((step, text))
        say(step, text)

    result = stage.read_result(opts.result)
    done("check", f"{opts.result}: a complete result of {result.device.model}, a drive one can buy")

    top = git.toplevel(opts.repo)
    if top is None:
        raise ContributionFailed(
            "repository",
            f"{opts.repo} is not in a git clone of diskq",
            exit_code=2,
            hint="git clone https://github.com/diskq-ceph/diskq && cd diskq, then run it there (or give --repo)",
        )
    upstream = upstream_of(opts.upstream)
    remotes = git.remotes(top)
    base_ref = _base_ref(top, opts.base, remotes, upstream)
    base_commit = git.resolve(top, base_ref)
    if base_commit is None:
        raise ContributionFailed("repository", f"{base_ref} is not a commit of {top}", hint="name one with --base")
    done("repository", f"{top}, base {base_ref} ({base_commit[:12]}), pull request to {upstream} {BASE_BRANCH}")

    gh_login = gh.login() if opts.use_gh else None
    login = opts.login or gh_login
    if not login:
        raise ContributionFailed(
            "login",
            "no GitHub login: gh is " + ("not logged in" if gh.installed() else "not installed"),
            hint="give --github YOUR_LOGIN (or log in: gh auth login)",
        )
    ghkeys.check_login(login)
    if gh_login and gh_login.lower() != login.lower():
        raise ContributionFailed(
            "login",
            f"gh is logged in as {gh_login}, not {login}: the pull request's author must be the signer",
            hint=f"give --github {gh_login}, or gh auth login as {login}",
        )
    done("login", f"{login}" + (" (from gh)" if gh_login and not opts.login else ""))

    if opts.keys_file is not None:
        try:
            keys_text = opts.keys_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ContributionFailed("github-keys", f"cannot read {opts.keys_file}: {exc}") from None
        where = str(opts.keys_file)
    else:
        try:
            keys_text = ghkeys.published_keys(login)
        except ghkeys.KeysUnavailable as exc:
            raise ContributionFailed(
                "github-keys",
                f"cannot fetch the keys GitHub publishes for {login}: {exc}",
                hint=f"offline: save {ghkeys.KEYS_URL.format(login=login)} elsewhere and give it with --github-keys FILE",
            ) from None
        where = ghkeys.KEYS_URL.format(login=login)
    count = len(ghkeys.key_blobs(keys_text))
    if not count:
        raise ContributionFailed(
            "github-keys",
            f"GitHub publishes no SSH key for {login} ({where})",
            hint="add yours at https://github.com/settings/keys, then run the same command again",
        )
    done("github-keys", f"{count} key(s) of {login} from {where}")

    with tempfile.TemporaryDirectory(prefix="diskq-contribute-") as tmp:
        scratch = Path(tmp)
        (scratch / "agent").mkdir()
        key = stage.choose_key(
            keys_text, login, opts.key, home=Path.home(), scratch=scratch / "agent", sign_as_root=opts.sign_as_root
        )
        done("key", f"{key.fingerprint} ({key.where} {key.path}), published by GitHub for {login}")

        hostname = socket.gethostname().split(".")[0]
        reduced, shown = stage.privacy(
            result, opts.reduction, login=login, name=opts.name, hostname=hostname, key_fingerprint=key.fingerprint
        )
        out.published = shown
        done("privacy", f"{len(shown)} facts published, {sum(1 for p in shown if p.option)} of them can be left out")
        if not confirm(shown, not opts.dry_run) and not opts.dry_run:
            raise ContributionFailed(
                "privacy",
                "not confirmed: nothing was signed or sent",
                exit_code=4,
                hint="leave facts out with --no-name, --hide-serial, --hide-kernel, "
                "--hide-hostname, or answer yes (--yes)",
            )
        signed = stage.sign(reduced, login=login, name=None if opts.reduction.no_name else opts.name, key=key)
        done("sign", f"submission {signed.id} signed as {login}")
        base, head, rel, added = stage.stage(top, base_commit, signed, scratch)
        path = f"{paths.SUBMISSIONS_DIR}/{rel}"
        done("stage", f"{path}" + (" and its allowed_signers line" if added else " (key already in allowed_signers)"))
        stage.validate(head, base, rel, signed, login=login, keys_text=keys_text, scratch=scratch)
        done("validate", "passes validate --contribution against GitHub's keys and signers check-pr")
        from diskq.contribute.row import build_preview

        try:
            previews = build_preview(base, head, [rel])
        except DiskqError as exc:
            raise ContributionFailed("preview", exc.message) from None
        if previews[0].skipped:
            raise ContributionFailed("preview", "db build would skip it: " + "; ".join(previews[0].skipped))
        out.body = render_markdown(previews) + _footer(signed)
        dev = signed.result.device
        out.title = f"Add {dev.model}" + (f" ({dev.firmware})" if dev.firmware else "")
        done(
            "preview",
            f"{previews[0].after['model'] if previews[0].after else dev.model}: the pull request's body shows its row",
        )
        out.branch = opts.branch or f"add-{paths.slugify(dev.model)[:40].rstrip('-')}-{signed.id[:8]}"
        files = {path: head / path}
        if added:
            files["allowed_signers"] = head / "allowed_signers"
        _publish(opts, out, top, base_commit, files, upstream, login, remotes, gh_login, done)
    return out


def _footer(signed) -> str:
    return (
        f"\nSubmission `{signed.id}`, signed by @{signed.signature.principal} "
        f"({signed.signature.public_key.split()[0]}). Made with `diskq contribute`.\n"
    )


def _publish(
    opts: Options,
    out: Outcome,
    top: Path,
    base_commit: str,
    files: dict[str, Path],
    upstream: str,
    login: str,
    remotes: dict[str, str],
    gh_login: str | None,
    done,
) -> None:
    """Steps commit, fork, push, pull-request; each undone in reverse when a later one fails."""
    name = upstream.split("/", 1)[1]
    fork_url = f"https://github.com/{login}/{name}.git"
    push_remote = opts.push_remote or _fork_remote(remotes, login, name)
    branch = out.branch
    head_ref = f"{login}:{branch}"
    compare = f"https://github.com/{upstream}/compare/{BASE_BRANCH}...{head_ref}?expand=1"
    if opts.push_remote and opts.push_remote not in remotes:
        raise ContributionFailed(
            "push", f"no remote {opts.push_remote!r} in {top}", hint=f"remotes: {', '.join(remotes) or 'none'}"
        )
    if opts.dry_run:
        done("commit", f"would commit {', '.join(files)} on a new branch {branch} from {base_commit[:12]}")
        if gh_login is None:
            _finish_by_hand(out, push_remote, fork_url, branch, compare, upstream)
            done("push", "without gh, would print: " + "; ".join(out.commands) + f"; then open {compare}")
            return
        if push_remote is None:
            done("fork", f"would fork {upstream} (gh repo fork) and add the remote {FORK_REMOTE} {fork_url}")
        done("push", f"would run: git push {push_remote or FORK_REMOTE} {branch}")
        done(
            "pull-request",
            f"would run: gh pr create --repo {upstream} --base {BASE_BRANCH} --head {head_ref} "
            f"--title '{out.title}' (body below)",
        )
        return
    if git.resolve(top, f"refs/heads/{branch}"):
        raise ContributionFailed(
            "commit",
            f"a branch {branch} exists already in {top}",
            hint=f"delete it (git branch -D {branch}) or name another with --branch",
        )
    undo: list[tuple[str, list[str]]] = []
    step = "commit"
    try:
        message = f"{out.title}\n\nSubmission {next(iter(files))}, made with diskq contribute.\n"
        commit = git.commit_files(top, base_commit, files, message)
        git.git(top, "branch", branch, commit)
        undo.append(("branch", ["branch", "-D", branch]))
        done("commit", f"{commit[:12]} on branch {branch}: {', '.join(files)}")
        if opts.patch is not None:
            patch = git.git(top, "format-patch", "-1", "--stdout", commit)
            opts.patch.write_text(patch, encoding="utf-8")
            out.patch = opts.patch
            done("commit", f"patch written to {opts.patch}")
        if gh_login is None:
            _finish_by_hand(out, push_remote, fork_url, branch, compare, upstream)
            return
        step = "fork"
        if push_remote is None:
            if gh.git_protocol() == "ssh":
                fork_url = f"git@github.com:{login}/{name}.git"
            gh.fork(upstream)
            if FORK_REMOTE in remotes:
                raise ContributionFailed(
                    "fork",
                    f"the remote {FORK_REMOTE} exists and is not {fork_url}",
                    hint=f"push to it with --push-remote {FORK_REMOTE}, or rename it",
                )
            git.git(top, "remote", "add", FORK_REMOTE, fork_url)
            undo.append(("remote", ["remote", "remove", FORK_REMOTE]))
            push_remote = FORK_REMOTE
            done("fork", f"{login}/{name} (remote {FORK_REMOTE})")
        else:
            done("fork", f"not needed: the remote {push_remote} is the fork")
        step = "push"
        git.git(top, "push", push_remote, f"{commit}:refs/heads/{branch}", env={"GIT_TERMINAL_PROMPT": "0"})
        undo.append(("pushed branch", ["push", push_remote, "--delete", branch]))
        done("push", f"{branch} to {push_remote}")
        step = "pull-request"
        with tempfile.NamedTemporaryFile("w", suffix=".md", prefix="diskq-pr-", delete=False) as body:
            body.write(out.body)
        try:
            out.url = gh.create_pull_request(
                upstream, base=BASE_BRANCH, head=head_ref, title=out.title, body_file=Path(body.name)
            )
        finally:
            Path(body.name).unlink(missing_ok=True)
        done("pull-request", out.url)
    except ContributionFailed as exc:
        raise _resumable(exc, undo, _undo(top, undo)) from None
    except (git.GitFailed, gh.GhFailed) as exc:
        raise _resumable(ContributionFailed(step, str(exc)), undo, _undo(top, undo)) from None
    except BaseException:
        _undo(top, undo)
        raise


def _finish_by_hand(
    out: Outcome, push_remote: str | None, fork_url: str, branch: str, compare: str, upstream: str
) -> None:
    """Without gh: the branch is ready; the commands that push it and the address to open."""
    if push_remote is None:
        out.commands = [f"git remote add {FORK_REMOTE} {fork_url}", f"git push {FORK_REMOTE} {branch}"]
        out.steps.append(("fork", f"by hand: fork https://github.com/{upstream} on GitHub (Fork button) first"))
    else:
        out.commands = [f"git push {push_remote} {branch}"]
    out.open_address = compare


def _undo(top: Path, undo: list[tuple[str, list[str]]]) -> list[str]:
    """Undo the steps made, last first; the commands that failed (to run by hand)."""
    failed = []
    for _, args in reversed(undo):
        try:
            git.git(top, *args)
        except git.GitFailed:
            failed.append("git " + " ".join(args))
    return failed


def _resumable(exc: ContributionFailed, undo, failed: list[str]) -> ContributionFailed:
    made = ", ".join(what for what, _ in undo)
    note = f"undone: {made}; " if made else ""
    if failed:
        note += f"could not undo, run: {'; '.join(failed)}; "
    exc.hint = note + (exc.hint or "fix the cause and run the same command again: it starts from the beginning")
    return exc
