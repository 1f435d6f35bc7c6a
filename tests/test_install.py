"""A wheel and an sdist built from this checkout (python -m build) install into fresh virtualenvs
outside it, and the installed diskq works from a directory that is no checkout: version, lookup,
plan by name and from a result, schema, sign, validate, db build, site build, fleet report.

Slow (a build and two installs); it runs with the rest of the suite (scripts/test, CI). The
dependencies come from requirements/runtime.lock, as scripts/bootstrap installs them; the build
fetches its backend (setuptools) from the package index."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
HAVE_SSH_KEYGEN = shutil.which("ssh-keygen") is not None

pytestmark = pytest.mark.slow


def run(argv, *, cwd: Path, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel, the wheel built from the sdist (what `python -m build` does): the
    sdist carries everything a build needs, or there is no wheel."""
    out = tmp_path_factory.mktemp("dist")
    done = run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=out)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_the_sdist_carries_what_a_build_and_a_reader_need(dists):
    import tarfile

    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in (
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "src/diskq/database/devices.sql",
        "src/diskq/publish/templates/index.html.j2",
        "src/diskq/publish/static/style.css",
        "src/diskq/submission/schemas/submission.schema.json",
        "src/diskq/data/devices.db",
    ):
        assert needed in names, needed
    assert not any(n.startswith("tests/") for n in names)  # half a test suite would not run


@pytest.fixture(scope="module", params=["wheel", "sdist"])
def installed(request, dists, tmp_path_factory) -> Path:
    """A fresh virtualenv outside the checkout with the locked dependencies and the one
    distribution; its bin directory."""
    env_dir = tmp_path_factory.mktemp(f"venv-{request.param}")
    venv.create(env_dir, with_pip=True)
    pip = [env_dir / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = run([*pip, "--require-hashes", "-r", ROOT / "requirements" / "runtime.lock"], cwd=env_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    done = run([*pip, "--no-deps", dists[request.param]], cwd=env_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    return env_dir / "bin"


@pytest.fixture
def elsewhere(tmp_path, installed) -> tuple[Path, dict]:
    """A working directory that is no checkout, a home and data directories of its own, and the
    virtualenv's diskq first on the PATH (the checkout's source is nowhere on sys.path)."""
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "XDG_", "DISKQ_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        DISKQ_JOURNAL_DIR=str(tmp_path / "journal"),
        PATH=f"{installed}{os.pathsep}{env.get('PATH', '')}",
    )
    return work, env


def diskq(elsewhere, *args, ok=True) -> subprocess.CompletedProcess:
    work, env = elsewhere
    done = run(["diskq", *args], cwd=work, env=env, timeout=300)
    if ok:
        assert done.returncode == 0, f"diskq {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def test_the_installed_package_is_the_one_that_runs(elsewhere, installed):
    done = diskq(elsewhere, "--version")
    assert done.stdout == f"diskq {PROJECT['version']} ({PROJECT['name']})\n"
    where = run([installed / "python", "-c", "import diskq; print(diskq.__file__)"], cwd=elsewhere[0], env=elsewhere[1])
    assert where.stdout.startswith(str(installed.parent)) and str(ROOT) not in where.stdout


def test_lookup_and_plan_by_name_read_the_shipped_snapshot(elsewhere):
    done = diskq(elsewhere, "lookup", "pm883")
    assert done.stdout.startswith("Samsung PM883 ")
    assert done.stderr.rstrip().endswith("(the snapshot shipped with diskq)")
    done = diskq(elsewhere, "plan", "Samsung PM883", "--data", "12x16T", "--db-size", "7.68T", "--json")
    doc = json.loads(done.stdout)
    assert doc["format"] == "diskq-plan" and doc["database"]["source"] == "snapshot"


def test_schema_writes_and_shows_the_published_schemas(elsewhere):
    work, _ = elsewhere
    diskq(elsewhere, "schema", "--dir", "out")
    for published in (ROOT / "schema").glob("*.schema.json"):
        assert (work / "out" / published.name).read_text() == published.read_text()
    assert json.loads(diskq(elsewhere, "schema", "--show", "submission").stdout) == json.loads(
        (ROOT / "schema" / "submission.schema.json").read_text()
    )


@pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="sign needs ssh-keygen (openssh-client)")
def test_sign_validate_db_build_site_build_and_plan_from_a_result(elsewhere):
    from tests.test_submission_support import allowed_signers, fio_runs, keygen, result_from

    work, _ = elsewhere
    key = keygen(work)
    doc = result_from(fio_runs())  # the community method: recorded by hand, signed as contributed
    (work / "result.json").write_text(doc.to_json())
    done = diskq(elsewhere, "sign", "result.json", "-f", key, "--github", "octocat")
    (written,) = [Path(line) for line in done.stdout.splitlines() if line.startswith("submissions/")]
    assert (work / written).is_file()
    allowed = allowed_signers(work / "allowed", "octocat", key)
    diskq(elsewhere, "validate", "submissions", "--allowed-signers", allowed)
    diskq(elsewhere, "db", "build", "--allowed-signers", allowed, "--no-memo")
    assert (work / "devices.db").is_file()
    done = diskq(elsewhere, "lookup", doc.device.model, "--json")  # the database just built, here
    assert json.loads(done.stdout)[0]["database"] == {"path": "devices.db", "source": "checkout"}
    diskq(elsewhere, "site", "build", "--out", "site")
    assert (work / "site" / "index.html").is_file() and (work / "site" / "static" / "style.css").is_file()
    assert (work / "site" / "devices.db.sha256").is_file()
    # from the document alone, the plan reads the one answer: no OSD for an unsuitable tier (refused
    # with that reason), else a plan within what the tier allows. The runs are measured here, live:
    # which case applies depends on the machine, the agreement does not.
    from diskq.analyse import annotate
    from diskq.analyse.answer import osd_cap

    tier = annotate(doc).verdicts.ceph_waldb.tier
    planned = diskq(elsewhere, "plan", "result.json", "--data", "8x8T", "--db-size", "512G", "--json", ok=False)
    if tier == "unsuitable":
        assert planned.returncode == 4 and planned.stdout == ""
        assert "the Ceph WAL/DB tier is unsuitable" in planned.stderr and "database:" not in planned.stderr
    else:
        assert planned.returncode == 0, planned.stderr
        plan = json.loads(planned.stdout)
        assert plan["verdict"]["tier"] == tier and plan["verdict"]["basis"] == "measured"
        cap = osd_cap(tier)
        assert cap is None or plan["osds_per_device"] <= cap


def test_fleet_report_writes_its_html_page(elsewhere):
    from tests.test_submission_support import fio_runs, result_from

    work, _ = elsewhere
    doc = result_from(fio_runs())  # the community method: recorded by hand, signed as contributed
    for host in ("h1", "h2"):
        (work / "results" / host).mkdir(parents=True)
        (work / "results" / host / "sdb.json").write_text(doc.to_json())
        (work / "results" / host / "status.json").write_text(json.dumps({"host": host, "state": "done"}))
    diskq(elsewhere, "fleet", "report", "results", "--html", "fleet.html")
    page = (work / "fleet.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!DOCTYPE html>")
    assert "h1" in page and "h2" in page
