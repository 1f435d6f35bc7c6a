"""``diskq db build`` (and its ``--check``), ``diskq db update`` and ``diskq site build``: the
device database built from the submissions or fetched from the published site, and the site made
from it. ``diskq lookup``, which reads the database, is in :mod:`diskq.cli.db_lookup`."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli.app import app, database, stderr_console

db_app = typer.Typer(
    help="Build devices.db from the submissions, or fetch the published one.\n\n"
    "Example: diskq db build --submissions submissions --db devices.db",
    no_args_is_help=True,
)
site_app = typer.Typer(
    help="Generate the static site from devices.db.\n\nExample: diskq site build --db devices.db --out _site",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")
app.add_typer(site_app, name="site")

MAX_SKIPPED_FILES = 40
MAX_PROBLEMS_PER_FILE = 10


@db_app.command("build")
def db_build(
    submissions: Path = typer.Option(Path("submissions"), "--submissions", help="directory of submission files"),
    db: Path = typer.Option(Path("devices.db"), "--db", help="database to write (or to check)"),
    check: bool = typer.Option(False, "--check", help="do not write: fail if DB is not what a build would write now"),
    strict: bool = typer.Option(False, "--strict", help="exit non-zero when any submission file was skipped"),
    allowed_signers: Path | None = typer.Option(
        None,
        "--allowed-signers",
        help="ssh allowed_signers file: only keys listed there count as verified (others: signature intact, "
        "signer not checked; unlisted keys are kept, not verified) [default: the repository's "
        "allowed_signers beside the submissions directory, when there is one]",
    ),
    no_allowed_signers: bool = typer.Option(
        False, "--no-allowed-signers", help="check no signer, not even against the repository's allowed_signers"
    ),
    jobs: int | None = typer.Option(None, "--jobs", min=1, help="worker processes (default: one per CPU)"),
    memo: Path | None = typer.Option(
        None, "--memo", help="validation memo file [default: ~/.cache/diskq/validated.sqlite]"
    ),
    no_memo: bool = typer.Option(False, "--no-memo", help="validate every file again, remember nothing"),
    sources: Path | None = typer.Option(
        None,
        "--sources",
        help="public-figures catalogue (sources.toml, methods.toml, figures/*.csv) [default: sources/ beside the "
        "submissions directory; absent: no public figures]",
    ),
) -> None:
    """Re-validate every submission and build devices.db (atomically replaced).

    Invalid files are skipped and listed; the build still succeeds unless --strict is given.
    With --check nothing is written: the command fails when DB is out of date. Validation
    answers are remembered per file content and code version (--memo), so rebuilds only
    validate new or changed files; --no-memo validates everything again.

    Signatures are verified against the repository's allowed_signers (beside the submissions
    directory) when there is one, or the file given with --allowed-signers. Public figures are
    imported from the sources/ directory beside the submissions (--sources names another); a
    malformed file there stops the build with one line naming the file, line and field.

    Example: diskq db build --check
    """
    from rich.text import Text

    from diskq.database.build import build
    from diskq.database.build import check as check_db
    from diskq.database.memo import default_path
    from diskq.errors import DatabaseError, InvalidInput
    from diskq.submission.signers import repository_file

    memo = None if no_memo else (memo or default_path())
    console = stderr_console()

    def err(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    if no_allowed_signers and allowed_signers is not None:
        raise InvalidInput("--allowed-signers and --no-allowed-signers contradict each other")
    if allowed_signers is None and not no_allowed_signers:
        beside = repository_file(submissions)
        if beside.is_file():  # the file merged contributions extend: signatures are checked against it
            allowed_signers = beside
            err(f"signers checked against {beside}")

    if check:
        report = check_db(submissions, db, allowed_signers=allowed_signers, jobs=jobs, memo=memo, sources=sources)
    else:
        with console.status(Text(f"building {db} from {submissions}/ ...")):
            report = build(submissions, db, allowed_signers=allowed_signers, jobs=jobs, memo=memo, sources=sources)
    skipped = report.skipped_files()
    for path, problems in list(skipped.items())[:MAX_SKIPPED_FILES]:
        if len(problems) == 1:
            err(f"skipped {path}: {_problem(problems[0])}")
            continue
        err(f"skipped {path}: {len(problems)} problems")
        for s in problems[:MAX_PROBLEMS_PER_FILE]:
            err(f"  - {_problem(s)}")
        if len(problems) > MAX_PROBLEMS_PER_FILE:
            err(f"  ... and {len(problems) - MAX_PROBLEMS_PER_FILE} more (see the skipped table)")
    if len(skipped) > MAX_SKIPPED_FILES:
        err(f"... and {len(skipped) - MAX_SKIPPED_FILES} more skipped files (see the skipped table)")
    for note in report.notes:
        err(note)
    verb = "is up to date" if check else "written"
    public = (
        (
            f"{report.public.get('public_figures', 0)} public figures of {report.public.get('public_models', 0)} "
            f"models from {report.public.get('public_sources', 0)} sources, "
        )
        if report.public.get("public_figures")
        else ""
    )
    err(
        f"{db} {verb}: {report.submissions} submissions, {report.devices} devices, "
        f"{public}{len(skipped)} skipped, search index: {report.fts}, digest {report.digest[:12]}"
    )
    if strict and skipped:
        raise DatabaseError(f"{len(skipped)} submission file(s) skipped (--strict)")


@db_app.command("update")
def db_update(
    url: str | None = typer.Option(
        None,
        "--url",
        help="address of the published devices.db; its digest is read from URL.sha256 "
        "[default: $DISKQ_DB_URL, else devices.db on the project's site]",
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", min=0.001, max=3600, help="seconds a connection or a read may stall"
    ),
    deadline: float = typer.Option(
        600.0,
        "--deadline",
        min=0.001,
        max=86400,
        help="seconds the whole update may take, however slowly the server sends",
    ),
) -> None:
    """Fetch the current devices.db from the published site into your data directory
    ($XDG_DATA_HOME/diskq, or ~/.local/share/diskq), checked against the SHA-256 digest the site
    publishes beside it, and installed only when it is a devices.db of this diskq's schema that
    passes SQLite's integrity check. On any failure (no answer, past --deadline, a truncated
    download, a wrong digest, a foreign or damaged file) the previous copy is kept. Outside a checkout, lookup and plan read this copy before the snapshot
    shipped with diskq.

    Example: diskq db update
    """
    from diskq.database.locate import NAME, checkout_database, user_data_dir
    from diskq.database.update import default_url, update

    err = stderr_console()
    address = url or default_url()
    from rich.text import Text

    with err.status(Text(f"fetching {address} ...")):
        report = update(address, user_data_dir() / NAME, timeout=timeout, deadline=deadline)
    say = f"{report.path} updated" if report.changed else f"{report.path} is up to date"
    err.print(
        f"{say}: {report.devices} devices, {report.bytes:,} bytes, sha256 {report.digest[:12]}, from {report.url}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    shadow = checkout_database()
    if shadow is not None:
        err.print(
            f"note: here commands read {shadow} first (the checkout's); give --db to choose",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _problem(s) -> str:
    return f"{s.field + ': ' if s.field not in ('', '-') else ''}{s.message}"


@site_app.command("build")
def site_build(
    db: Path | None = typer.Option(
        None,
        "--db",
        help="devices.db to publish [default: the checkout's, else your copy from "
        "`diskq db update`, else the snapshot shipped with diskq]",
    ),
    out: Path = typer.Option(Path("_site"), "--out", help="output directory (replaced)"),
    submissions: Path | None = typer.Option(
        Path("submissions"), "--submissions", help="copy these raw submission files into the site (if present)"
    ),
    repository: str | None = typer.Option(
        None,
        "--repository",
        metavar="URL",
        help="source repository linked from every page (default: [project.urls] Repository in pyproject.toml)",
    ),
) -> None:
    """Generate the static site: suitability table, device pages, methodology, exports.

    Example: diskq site build --db devices.db --out _site --repository https://github.com/OWNER/diskq
    """
    from rich.text import Text

    from diskq.errors import InvalidInput
    from diskq.publish.site import build_site

    if repository is not None and not repository.startswith("https://"):
        raise InvalidInput(f"--repository must be an https:// address, got {repository!r}")
    err = stderr_console()
    db = database(db).path
    with err.status(Text(f"writing the site to {out}/ ...")):
        report = build_site(
            db, out, submissions=submissions if submissions and submissions.is_dir() else None, repository=repository
        )
    err.print(
        f"{out}/ written: {report.devices} device pages, {report.files} files, {report.bytes / 1e6:.1f} MB",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
