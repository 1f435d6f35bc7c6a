"""``diskq contribute``: from a result document to an open pull request, with a real git
repository as the remote (bare repositories on disk, pushed to for real) and gh's answers
recorded at the one place diskq calls it (``diskq.proc.run``, fixtures/gh/recording.json).

Every failure point is tried: each names its step, says how to resume and leaves nothing behind
(no branch, no remote, no pushed branch, no change to the clone's files)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diskq import proc
from diskq.cli import app
from diskq.contribute import flow, steps
from diskq.contribute import keys as ghkeys
from diskq.contribute.privacy import Reduction
from diskq.errors import ContributionFailed
from tests.test_submission_support import HAVE_FIO, HAVE_SSH_KEYGEN, drive_fio_runs, keygen, public_line, result_from

pytestmark = [
    pytest.mark.skipif(not HAVE_FIO, reason="needs fio (the result's figures are checked against its raw output)"),
    pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen"),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

ROOT = Path(__file__).resolve().parents[1]
RECORDING = json.loads((ROOT / "tests" / "fixtures" / "gh" / "recording.json").read_text())
SMARTCTL = ROOT / "tests" / "fixtures" / "submission" / "sce__INTEL_SSDSCKKB480G8.json"
FORK_URL = "https://github.com/octocat/diskq.git"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def drive_result(tmp_path: Path) -> Path:
    """A result of a drive: the identity smartctl recorded for an Intel SSD (tests/fixtures, with its
    source), figures from real fio runs with the drive's fio output (no disk statistics of this host)."""
    from diskq.probe.smartctl import identity_from_smartctl_json

    doc = result_from(drive_fio_runs(), method_id="diskq-fdatasync-sweep")
    doc.device = identity_from_smartctl_json(json.loads(SMARTCTL.read_text())).model_copy(update={"path": "/dev/sda"})
    doc.method.kernel = "6.1.0-18-amd64"
    path = tmp_path / "sda.json"
    path.write_text(doc.to_json())
    return path


class World:
    """An upstream repository (bare), the contributor's fork (bare, empty until pushed to), the
    contributor's clone of upstream, their key, and the gh recording in use."""

    def __init__(self, tmp_path: Path, monkeypatch):
        self.tmp = tmp_path
        seed = tmp_path / "seed"
        seed.mkdir()
        for part in ("submissions", "sources"):
            shutil.copytree(ROOT / part, seed / part)
        shutil.copy(ROOT / "allowed_signers", seed / "allowed_signers")
        (seed / "README.md").write_text("diskq\n")
        for args in (
            ("init", "-q", "-b", "main"),
            ("add", "-A"),
            ("-c", "user.name=m", "-c", "user.email=m@example.org", "commit", "-q", "-m", "seed"),
        ):
            _git(seed, *args)
        self.upstream = tmp_path / "upstream.git"
        self.fork = tmp_path / "fork.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(self.upstream)], check=True)
        subprocess.run(["git", "init", "-q", "--bare", str(self.fork)], check=True)
        self.clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", str(self.upstream), str(self.clone)], check=True)
        _git(self.clone, "config", "user.name", "Jane Doe")
        _git(self.clone, "config", "user.email", "jane@example.org")
        # the fork's GitHub address leads to the bare fork on disk: real pushes, no network
        _git(self.clone, "config", f"url.{self.fork}.insteadOf", FORK_URL)
        self.key = keygen(tmp_path)
        self.keys_text = public_line(self.key) + "\n"
        monkeypatch.setattr(ghkeys, "published_keys", lambda login, **kw: self.keys_text)
        self.gh_calls: list[list[str]] = []
        self.bodies: list[str] = []
        self.answers = {"login": "login", "protocol": "protocol", "fork": "fork", "pr": "pr_create"}
        self.gh_installed = True
        real_run, real_which = proc.run, proc.which

        def run(argv, **kw):
            if argv[0] != "gh":
                return real_run(argv, **kw)
            self.gh_calls.append(list(argv))
            entry = next(
                RECORDING[self.answers[k]]
                for k in ("login", "protocol", "fork", "pr")
                if argv[: len(RECORDING[self.answers[k]]["argv"])] == RECORDING[self.answers[k]]["argv"]
            )
            if argv[1:3] == ["pr", "create"]:
                self.bodies.append(Path(argv[argv.index("--body-file") + 1]).read_text())
            return proc.Completed(list(argv), entry["returncode"], entry["stdout"], entry["stderr"])

        monkeypatch.setattr(proc, "run", run)
        monkeypatch.setattr(
            proc,
            "which",
            lambda tool: ("/usr/bin/gh" if self.gh_installed else None) if tool == "gh" else real_which(tool),
        )
        self.before = self.snapshot()

    def options(self, result: Path, **kw) -> steps.Options:
        base = dict(
            result=result,
            repo=self.clone,
            key=self.key,
            name="Jane Doe",
            sign_as_root=True,
            upstream="diskq-ceph/diskq",
        )
        base.update(kw)
        return steps.Options(**base)

    def snapshot(self) -> dict:
        return {
            "branches": _git(self.clone, "branch", "--list"),
            "remotes": _git(self.clone, "remote", "-v"),
            "status": _git(self.clone, "status", "--porcelain"),
            "head": _git(self.clone, "rev-parse", "HEAD"),
            "signers": (self.clone / "allowed_signers").read_text(),
            "fork": _git(self.fork, "for-each-ref"),
            "upstream": _git(self.upstream, "for-each-ref"),
        }

    def unchanged(self) -> None:
        assert self.snapshot() == self.before


def _run(world: World, opts: steps.Options, confirm=lambda published, ask: True):
    said = []
    out = flow.contribute(opts, say=lambda step, text: said.append((step, text)), confirm=confirm)
    return out, said


@pytest.fixture
def world(tmp_path, monkeypatch):
    return World(tmp_path, monkeypatch)


def _validate_pushed(world: World, branch: str) -> list[str]:
    """The pull request's tree, exported from the fork, validated as the workflow does."""
    tree = world.tmp / "pr"
    subprocess.run(["git", "clone", "-q", "-b", branch, str(world.fork), str(tree)], check=True)
    added = _git(tree, "diff", "--name-only", "HEAD~1", "HEAD").splitlines()
    keys = world.tmp / "keys"
    keys.write_text(ghkeys.allowed_signers_text("octocat", world.keys_text))
    runner = CliRunner()
    files = [a for a in added if a.startswith("submissions/")]
    check = runner.invoke(
        app, ["validate", "--contribution", "--allowed-signers", str(keys), *[str(tree / f) for f in files]]
    )
    assert check.exit_code == 0, check.output
    return added


def test_a_recorded_drive_result_goes_to_an_open_pull_request_in_one_command(world):
    result = drive_result(world.tmp)
    out, said = _run(world, world.options(result))
    assert out.url == "https://github.com/diskq-ceph/diskq/pull/123"
    steps = [s for s, _ in said]
    for step in (
        "check",
        "repository",
        "login",
        "github-keys",
        "privacy",
        "key",
        "sign",
        "stage",
        "validate",
        "preview",
        "commit",
        "fork",
        "push",
        "pull-request",
    ):
        assert step in steps
    # gh: who is logged in, the fork, the pull request (into main, from the fork's branch)
    assert [c[1:3] for c in world.gh_calls] == [["api", "user"], ["config", "get"], ["repo", "fork"], ["pr", "create"]]
    create = world.gh_calls[-1]
    assert create[create.index("--head") + 1] == f"octocat:{out.branch}"
    assert create[create.index("--base") + 1] == "main"
    # pushed for real: the fork holds the branch, one commit on upstream's main, two files
    assert out.branch in _git(world.fork, "branch", "--list")
    added = _validate_pushed(world, out.branch)
    assert sorted(added)[0] == "allowed_signers" and len(added) == 2
    # the body shows the row the drive gets, compared with the database
    body = world.bodies[0]
    assert "INTEL SSDSCKKB480G8" in body and "| with it |" in body and "| today | not in the database" in body
    # this machine's figures are far from what the family is published to do, and the body says so
    assert "**Disagrees** with the public figures of its family" in body and "Intel D3-S4510 480 GB" in body
    # the clone's checkout is untouched; only the branch was added
    now = world.snapshot()
    assert now["status"] == world.before["status"] and now["head"] == world.before["head"]
    assert now["signers"] == world.before["signers"]
    assert out.branch in now["branches"]


def test_dry_run_shows_every_step_and_the_body_and_changes_nothing(world):
    result = drive_result(world.tmp)
    objects = _git(world.clone, "count-objects", "-v")
    shown = []
    out, said = _run(
        world,
        world.options(result, dry_run=True),
        confirm=lambda published, ask: shown.append((len(published), ask)) or False,
    )
    assert shown and shown[0][0] >= 4 and shown[0][1] is False  # shown, not asked
    world.unchanged()
    assert _git(world.clone, "count-objects", "-v") == objects
    would = [text for step, text in said if text.startswith("would")]
    assert [s for s, t in said if t.startswith("would")] == ["commit", "fork", "push", "pull-request"]
    assert any("gh repo fork" in w for w in would)
    assert "| with it |" in out.body
    assert [c[1:3] for c in world.gh_calls] == [["api", "user"]]  # only asked who is logged in


def test_without_gh_the_branch_is_ready_and_the_two_printed_commands_finish_the_job(world, monkeypatch):
    world.gh_installed = False
    result = drive_result(world.tmp)
    monkeypatch.chdir(world.clone)
    patch = world.tmp / "contribution.patch"
    run = CliRunner().invoke(
        app,
        [
            "contribute",
            str(result),
            "--github",
            "octocat",
            "-f",
            str(world.key),
            "--sign-as-root",
            "--yes",
            "--upstream",
            "diskq-ceph/diskq",
            "--patch",
            str(patch),
        ],
    )
    assert run.exit_code == 0, run.output
    lines = run.stderr.splitlines()
    commands = [line.split(". ", 1)[1] for line in lines if line.strip()[:2] in ("1.", "2.")]
    assert commands[0] == f"git remote add fork {FORK_URL}"
    assert commands[1].startswith("git push fork add-intel-ssdsckkb480g8-")
    assert any("https://github.com/diskq-ceph/diskq/compare/main...octocat:add-intel" in line for line in lines)
    assert "| with it |" in run.stdout  # the body to paste
    assert world.gh_calls == []
    for command in commands:  # the contributor runs them
        subprocess.run(command.split(), cwd=world.clone, check=True, capture_output=True)
    branch = commands[1].split()[-1]
    assert len(_validate_pushed(world, branch)) == 2
    # the patch applies to upstream's main
    other = world.tmp / "other"
    subprocess.run(["git", "clone", "-q", str(world.upstream), str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "apply", "--check", str(patch)], check=True)


def test_an_existing_fork_remote_is_pushed_to_without_forking(world):
    _git(world.clone, "remote", "add", "mine", "git@github.com:OctoCat/diskq.git")
    _git(world.clone, "config", f"url.{world.fork}.insteadOf", "git@github.com:OctoCat/diskq.git")
    world.before = world.snapshot()
    out, said = _run(world, world.options(drive_result(world.tmp)))
    assert ("fork", "not needed: the remote mine is the fork") in said
    assert [c[1:3] for c in world.gh_calls] == [["api", "user"], ["pr", "create"]]
    assert out.branch in _git(world.fork, "branch", "--list")


def test_privacy_options_leave_out_what_they_name_and_everything_published_is_shown_first(world):
    result = drive_result(world.tmp)
    shown = []
    out, _ = _run(
        world,
        world.options(result, reduction=Reduction(no_name=True, hide_serial=True, hide_kernel=True)),
        confirm=lambda published, ask: shown.extend(published) or True,
    )
    whats = [p.what for p in shown]
    assert "GitHub login" in whats and "signing key" in whats and "name" not in whats
    assert "kernel release" not in whats and "serial number (salted hash)" not in whats
    pushed = json.loads(
        _git(
            world.fork,
            "show",
            f"{out.branch}:{_git(world.fork, 'diff', '--name-only', f'{out.branch}~1', out.branch).splitlines()[-1]}",
        )
    )
    assert pushed["result"]["method"]["kernel"] is None and pushed["result"]["device"]["serial_hash"] is None
    assert pushed["contributor"] == {"name": None, "github": "octocat"}


def _fails(world, opts, step, *, confirm=lambda published, ask: True, hint=None):
    with pytest.raises(ContributionFailed) as info:
        _run(world, opts, confirm=confirm)
    assert info.value.step == step
    assert info.value.message.startswith(f"{step}: ")
    assert info.value.hint
    if hint:
        assert hint in info.value.hint
    world.unchanged()
    return info.value


def test_a_host_result_fails_at_check(world):
    result = drive_result(world.tmp)
    doc = json.loads(result.read_text())
    doc["device"]["path"] = "/dev/loop3"
    doc["device"]["model"] = "Linux loop device"
    result.write_text(json.dumps(doc))
    assert "loop" in _fails(world, world.options(result), "check").message


def test_offline_fails_at_github_keys_and_names_the_offline_option(world, monkeypatch):
    def offline(login, **kw):
        raise ghkeys.KeysUnavailable("https://github.com/octocat.keys: [Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(ghkeys, "published_keys", offline)
    _fails(world, world.options(drive_result(world.tmp)), "github-keys", hint="--github-keys FILE")
    # and with the saved keys it goes through, without gh
    saved = world.tmp / "octocat.keys"
    saved.write_text(world.keys_text)
    world.gh_installed = False
    out, _ = _run(world, world.options(drive_result(world.tmp), keys_file=saved, login="octocat"))
    assert out.commands and out.url is None


def test_a_key_github_does_not_publish_fails_at_key(world):
    world.keys_text = public_line(keygen(world.tmp, name="other")) + "\n"
    _fails(world, world.options(drive_result(world.tmp)), "key", hint="https://github.com/settings/keys")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the refusal is of root's own key")
def test_as_root_roots_key_is_refused_unless_said(world):
    _fails(world, world.options(drive_result(world.tmp), sign_as_root=False), "key", hint="--sign-as-root")


def test_not_confirming_what_is_published_stops_before_signing(world):
    error = _fails(world, world.options(drive_result(world.tmp)), "privacy", confirm=lambda published, ask: False)
    assert "nothing was signed or sent" in error.message


def test_a_result_already_in_the_database_fails_at_stage(world):
    result = drive_result(world.tmp)
    out, _ = _run(world, world.options(result))
    _git(world.clone, "push", "-q", str(world.upstream), f"{out.branch}:main")  # merged
    _git(world.clone, "fetch", "-q", "origin")
    _git(world.clone, "branch", "-D", out.branch)
    world.before = world.snapshot()
    assert "already in the database" in _fails(world, world.options(result), "stage").message


def test_a_commit_without_a_git_identity_fails_at_commit_and_leaves_no_branch(world, monkeypatch):
    _git(world.clone, "config", "--unset", "user.name")
    _git(world.clone, "config", "--unset", "user.email")
    _git(world.clone, "config", "user.useConfigOnly", "true")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(world.tmp / "no-global"))
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    world.before = world.snapshot()
    _fails(world, world.options(drive_result(world.tmp)), "commit")


def test_a_refused_fork_fails_at_fork_and_removes_the_branch(world):
    world.answers["fork"] = "fork_failed"
    error = _fails(world, world.options(drive_result(world.tmp)), "fork")
    assert "HTTP 403" in error.message and "undone: branch" in error.hint


def test_a_failed_push_fails_at_push_and_removes_the_branch_and_the_remote(world):
    _git(world.clone, "config", "--unset", f"url.{world.fork}.insteadOf")
    _git(world.clone, "config", f"url.{world.tmp / 'missing.git'}.insteadOf", FORK_URL)
    world.before = world.snapshot()
    error = _fails(world, world.options(drive_result(world.tmp)), "push")
    assert "undone: branch, remote" in error.hint


def test_a_refused_pull_request_fails_at_pull_request_and_deletes_the_pushed_branch(world):
    world.answers["pr"] = "pr_create_failed"
    error = _fails(world, world.options(drive_result(world.tmp)), "pull-request")
    assert "already exists" in error.message and "undone: branch, remote, pushed branch" in error.hint


def test_a_login_other_than_gh_s_fails_at_login(world):
    _fails(world, world.options(drive_result(world.tmp), login="someone-else"), "login", hint="--github octocat")


def test_the_cli_says_which_step_failed_in_one_line_without_a_traceback(world, monkeypatch):
    world.answers["pr"] = "pr_create_failed"
    monkeypatch.chdir(world.clone)
    run = CliRunner().invoke(
        app,
        [
            "contribute",
            str(drive_result(world.tmp)),
            "-f",
            str(world.key),
            "--yes",
            "--sign-as-root",
            "--upstream",
            "diskq-ceph/diskq",
        ],
    )
    assert run.exit_code != 0
    assert isinstance(run.exception, (SystemExit, ContributionFailed))
    world.unchanged()


def test_the_workflow_comments_the_same_row_the_pull_request_body_shows(world):
    """The step of the pull-request workflow, run here as GitHub runs it (bash, the runner's
    directories, the base branch's diskq), renders what ``diskq contribute`` put in the body."""
    import sys

    from tests.test_submission_workflow import _run_block

    out, _ = _run(world, world.options(drive_result(world.tmp)))
    workspace = world.tmp / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "clone", "-q", "-b", out.branch, str(world.fork), str(workspace / "pr")], check=True)
    subprocess.run(["git", "clone", "-q", str(world.upstream), str(workspace / "base")], check=True)
    _git(workspace / "pr", "fetch", "-q", str(world.upstream), "main:upstream-main")
    runner = world.tmp / "runner"
    (runner / "venv" / "bin").mkdir(parents=True)
    (runner / "venv" / "bin" / "diskq").symlink_to(Path(sys.executable).parent / "diskq")
    summary = world.tmp / "summary.md"
    env = {
        **os.environ,
        "RUNNER_TEMP": str(runner),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PR_NUMBER": "123",
        "BASE_SHA": _git(workspace / "base", "rev-parse", "HEAD"),
        "HEAD_SHA": _git(workspace / "pr", "rev-parse", "HEAD"),
    }
    script = _run_block("Render the row each added submission gives its drive (the comment the pull request gets)")
    done = subprocess.run(["bash", "-c", script], cwd=workspace, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    comment = (runner / "comment" / "comment.md").read_text()
    assert comment.startswith("<!-- diskq-pr-comment -->\n")
    assert world.bodies[0].startswith(comment.rstrip("\n"))  # one function, one row, both faces
    assert "| with it | INTEL SSDSCKKB480G8 |" in comment and "Signature: verified" in comment
    assert (runner / "comment" / "number").read_text() == "123\n"
    assert summary.read_text() == comment


def test_the_commenting_workflow_runs_nothing_of_the_pull_request_and_checks_the_number():
    text = (ROOT / ".github" / "workflows" / "submissions-comment.yml").read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "actions/checkout" not in code and "pip install" not in code
    assert "workflows: [submissions]" in code
    assert "''|*[!0-9]*)" in code and '"$head" != "$RUN_HEAD_SHA"' in code
    assert "pull-requests: write" in code and "contents:" not in code


def test_pr_comment_refuses_paths_outside_submissions_and_renders_a_legacy_file():
    runner = CliRunner()
    legacy = next((ROOT / "submissions").rglob("*.json")).relative_to(ROOT)
    bad = runner.invoke(app, ["pr-comment", "--base", str(ROOT), "--head", str(ROOT), "../etc/passwd"])
    assert bad.exit_code != 0 and "give paths below submissions/" in bad.exception.message
    ok = runner.invoke(app, ["pr-comment", "--base", str(ROOT), "--head", str(ROOT), str(legacy)])
    assert ok.exit_code == 0, ok.output
    assert f"`{legacy.relative_to('submissions')}`" in ok.stdout and "| today |" in ok.stdout


def test_bench_contribute_hands_the_written_result_to_contribute(world, monkeypatch):
    """``bench --contribute``: the bench itself is covered by its own tests; here it is replaced
    by its outcome (the path of a contributable result) to see the hand-over. Run as root, the
    contribution stops at the key step with the way on; as anyone else it opens the pull request."""
    import diskq.cli.bench as bench_cli

    result = drive_result(world.tmp)
    monkeypatch.setattr(bench_cli, "_bench", lambda *a, **k: result)
    home = world.tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    shutil.copy(world.key, home / ".ssh" / "id_ed25519")
    shutil.copy(f"{world.key}.pub", home / ".ssh" / "id_ed25519.pub")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setattr(flow, "upstream_of", lambda option: "diskq-ceph/diskq")
    monkeypatch.chdir(world.clone)
    run = CliRunner().invoke(app, ["bench", str(world.tmp / "x.img"), "--contribute"], input="y\n")
    assert f"contributing {result}" in run.stderr
    if os.geteuid() == 0:
        assert isinstance(run.exception, ContributionFailed) and run.exception.step == "key"
        assert "--sign-as-root" in run.exception.hint
        world.unchanged()
    else:
        assert run.exit_code == 0, run.output
        assert "published with the pull request" in run.stderr and "GitHub login: octocat" in run.stderr
        assert run.stdout.strip().endswith("https://github.com/diskq-ceph/diskq/pull/123")


def test_the_key_github_publishes_is_chosen_among_the_contributor_s_files(world, monkeypatch):
    from diskq.contribute import stage

    home = world.tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    keygen(home / ".ssh", "ed25519")  # first in line, but not on GitHub
    ecdsa = keygen(home / ".ssh", "ecdsa")
    world.keys_text = public_line(ecdsa) + "\n"
    chosen = stage.choose_key(world.keys_text, "octocat", None, home=home, scratch=world.tmp, sign_as_root=True)
    assert chosen.path == ecdsa and chosen.where == "file"


@pytest.mark.skipif(shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None, reason="needs ssh-agent")
def test_a_key_held_only_by_ssh_agent_signs_the_contribution(world, monkeypatch):
    import time

    home = world.tmp / "agent-home"
    home.mkdir()
    sock = world.tmp / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(world.key)], env=env, check=True, capture_output=True)
        world.key.unlink()  # the private key is in the agent only
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        monkeypatch.setattr(Path, "home", classmethod(lambda cls: home))
        out, said = _run(world, world.options(drive_result(world.tmp), key=None))
        assert any(step == "key" and "ssh-agent" in text for step, text in said)
        assert out.url and len(_validate_pushed(world, out.branch)) == 2
    finally:
        agent.terminate()
        agent.wait(timeout=10)


def test_the_keys_become_the_allowed_signers_lines_the_workflow_writes(tmp_path):
    """The workflow's own step (its shell, with curl and gh standing for GitHub: they print the
    keys an account publishes) and :func:`allowed_signers_text` make the same lines."""
    from tests.test_submission_workflow import _run_block

    keys = [public_line(keygen(tmp_path, kind, f"k-{kind}")) for kind in ("ed25519", "ecdsa", "rsa")]
    auth = f"{keys[0]}\n{keys[1]}\n{keys[0]}\n"  # GitHub lists a key once; a repeat must not count twice
    signing = keys[2] + " signing\n"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "curl").write_text(f"#!/bin/sh\nprintf '%s' '{auth}'\n")
    (fake / "gh").write_text(f"#!/bin/sh\nprintf '%s' '{signing}'\n")
    for tool in ("curl", "gh"):
        (fake / tool).chmod(0o755)
    runner = tmp_path / "runner"
    runner.mkdir()
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "RUNNER_TEMP": str(runner), "AUTHOR": "OctoCat"}
    done = subprocess.run(
        ["bash", "-c", _run_block("Fetch the author's public SSH keys from GitHub")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (runner / "allowed_signers").read_text() == ghkeys.allowed_signers_text("OctoCat", auth + "\n" + signing)
    assert len((runner / "allowed_signers").read_text().splitlines()) == 3


def test_hide_hostname_replaces_the_host_s_name_in_notes_and_nothing_else():
    from diskq.contribute.privacy import published, reduce
    from diskq.result import Device, Method, ResultDocument

    doc = ResultDocument(
        created="2026-01-01T00:00:00Z",
        method=Method(kernel="6.1.0"),
        device=Device(path="/dev/sdb", model="X", notes=["smartctl on db7: ok", "db77 is another"]),
    )
    shown = published(doc, login="octocat", name="Jane", key_fingerprint=None, hostname="db7")
    assert [p.what for p in shown if p.option == "--hide-hostname"] == ["host name in device.notes[0]"]
    reduced = reduce(doc, Reduction(hide_hostname=True), hostname="db7")
    assert reduced.device.notes == ["smartctl on HOST: ok", "db77 is another"]
    assert reduced.method.kernel == "6.1.0" and reduced.created == doc.created
    assert not [
        p
        for p in published(reduced, login="octocat", name=None, key_fingerprint=None, hostname="db7")
        if p.option == "--hide-hostname"
    ]


def test_a_dry_run_without_gh_says_the_commands_it_would_print_and_changes_nothing(world):
    world.gh_installed = False
    out, said = _run(world, world.options(drive_result(world.tmp), dry_run=True, login="octocat"))
    world.unchanged()
    push = [text for step, text in said if step == "push"]
    assert push and push[0].startswith(f"without gh, would print: git remote add fork {FORK_URL}; git push fork ")
    assert "| with it |" in out.body and world.gh_calls == []


def test_the_same_figures_under_another_date_fail_at_validate(world):
    result = drive_result(world.tmp)
    out, _ = _run(world, world.options(result))
    _git(world.clone, "push", "-q", str(world.upstream), f"{out.branch}:main")  # merged
    _git(world.clone, "fetch", "-q", "origin")
    _git(world.clone, "branch", "-D", out.branch)
    doc = json.loads(result.read_text())
    doc["created"] = "2026-02-02T00:00:00Z"  # another id, the same measurement
    result.write_text(json.dumps(doc))
    world.before = world.snapshot()
    error = _fails(world, world.options(result), "validate", hint="nothing was changed")
    assert "the pull-request check would refuse it" in error.message


def test_a_public_key_without_its_private_half_fails_at_sign(world, monkeypatch):
    alone = world.tmp / "alone"
    alone.mkdir()
    shutil.copy(f"{world.key}.pub", alone / "id_ed25519.pub")
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    _fails(world, world.options(drive_result(world.tmp), key=alone / "id_ed25519.pub"), "sign", hint="ssh-agent")


def test_a_missing_program_or_a_bad_login_is_named_with_its_step(world, monkeypatch):
    error = _fails(world, world.options(drive_result(world.tmp), login="not a login"), "login")
    assert error.exit_code == 2
    real = proc.run

    def no_git(argv, **kw):
        if argv[0] == "git":
            from diskq.errors import ToolMissing

            raise ToolMissing("git", "git")
        return real(argv, **kw)

    monkeypatch.setattr(proc, "run", no_git)
    error = _fails(world, world.options(drive_result(world.tmp)), "repository", hint="apt-get install git")
    assert error.exit_code == 3
