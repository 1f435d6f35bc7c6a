"""``diskq sign``, ``validate``, ``import-fio`` and ``schema``: the contribution flow."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from diskq.cli._signing import _sign_one
from diskq.cli._terminal import say
from diskq.cli.app import app, print_json, stderr_console

SIGN_HELP = """Wrap a result document into a submission and sign it with your SSH key.

Run it as yourself (not root). The signature covers the RFC 8785 canonical form of the
submission; it is made by `ssh-keygen -Y sign -n diskq-submission-v1`, so a key file, a key
held by ssh-agent (give its .pub file) or a hardware key all work. Use --github with your
GitHub login: pull-request checks verify the signature against the keys GitHub publishes for
you. The file goes to submissions/<vendor>/<model>/<id>.json unless -o says otherwise; its
path is printed. Given a directory (the results a fleet run fetched), every result document
under it is signed the same way (status.json files are left out). An interrupted result (a
bench stopped before its end) is refused: the database takes complete sweeps only. A result
that measures the host (a loop or zram device, a file) or names no model is signed with a
warning: the pull-request check refuses it.

Example: diskq sign nvme0n1.json -f ~/.ssh/id_ed25519 --github octocat
Example: diskq sign fleet-results/ -f ~/.ssh/id_ed25519 --github octocat
"""

VALIDATE_HELP = """Check submission files (or directories of them) before they enter the database.

Prints one line per problem, `PATH: FIELD: message`, and exits 1 if there is any: not JSON,
integers beyond 2^53-1, schema errors, unknown method, missing/invalid signature or one not
matching --allowed-signers (logins compare without case), a contributor other than the signer,
edits after signing, a signed legacy file, figures that disagree with their raw fio data, fio's
own counters that contradict its figures (disk_util, latency histogram, context switches), or
figures against physics (Little's law, IOPS x 4 KiB, interface limits), a stored analysis
better than its figures give, duplicates, wrong path or file name, markup or bidirectional and
invisible controls in names, oversize files. Directories are searched for *.json without following symbolic links; only
regular files are read, and a directory without submission files is a problem too.

--contribution is the pull-request check: it also refuses legacy files and results that measure
the host (loop, zram, a file...) or name no model, saying why; without it such a file gets a note.

Example: diskq validate submissions/ --allowed-signers allowed_signers
"""

IMPORT_HELP = """Turn fio runs made by hand with the community command into a result document.

Give one fio JSON output (--output-format=json) per numjobs step of
`fio --filename /dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based
--rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N`, and ideally the drive's
`smartctl --json -x` output. Say how the write cache was set with --cache-mechanism: a cache
"off" whose knob is not known (the default) may be the kernel's, which stops flushes, and
counts as unsafe. Then sign the result with `diskq sign`.

Example: diskq import-fio nj1.json nj2.json nj4.json --smartctl-json sda.json --write-cache off --cache-mechanism drive -o sda-result.json
"""

SCHEMA_HELP = """Write (or with --check, compare) the JSON Schemas generated from the models: in a
checkout's root, schema/ and the package's copy; anywhere else only the --dir given. --show
prints one of the schemas shipped with diskq.

Example: diskq schema --check

Example: diskq schema --dir /tmp/schemas
"""


@app.command("sign", help=SIGN_HELP)
def sign_cmd(
    file: Path = typer.Argument(
        ...,
        help="result document (from diskq bench or import-fio) or submission, or a directory of result documents (e.g. a fleet run's results: each is signed)",
    ),
    key: Path | None = typer.Option(None, "--key", "-f", help="SSH private key, or public key held by ssh-agent"),
    github: str | None = typer.Option(None, "--github", help="your GitHub login (the signature's principal)"),
    name: str | None = typer.Option(None, "--name", help="your name as it should appear with the result"),
    principal: str | None = typer.Option(None, "--principal", help="principal if not --github (default: local user)"),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="a directory to write <id>.json into (a submissions/ directory gets <vendor>/<model>/<id>.json), or that file's path (default: submissions/<vendor>/<model>/<id>.json)",
    ),
) -> None:
    from diskq.errors import DiskqError, InvalidInput

    if not file.is_dir():
        _sign_one(file, key, github, name, principal, output)
        return
    if output is not None and not output.is_dir():
        raise InvalidInput(
            f"-o {output}: with a directory of results, -o names an existing directory",
            hint="each result is written to DIR/<id>.json (DIR/<vendor>/<model>/<id>.json in a "
            "submissions/ directory); without -o to submissions/<vendor>/<model>/<id>.json",
        )
    files = sorted(p for p in file.rglob("*.json") if p.is_file() and not p.is_symlink() and p.name != "status.json")
    if output is not None:  # never sign what this run writes (an -o inside the directory)
        out_dir = output.resolve()
        files = [p for p in files if out_dir not in p.resolve().parents]
    if not files:
        raise InvalidInput(f"no result documents (*.json) under {file}")
    failed = []
    for path in files:
        try:
            _sign_one(path, key, github, name, principal, output)
        except DiskqError as exc:
            failed.append(path)
            stderr_console().print(f"diskq: error: {path}: {exc.message}", markup=False, highlight=False)
    if failed:
        raise DiskqError(f"{len(failed)} of {len(files)} files under {file} were not signed (listed above)")


def _expand(paths_in: list[Path]):
    """(files to validate, problems of the paths themselves): a directory is walked without
    following symbolic links; one that holds no submission file is a problem, as is a link to a
    directory inside it. Anything else named is validated as a file (which refuses links too)."""
    from diskq.submission.paths import find_files
    from diskq.submission.problems import Problem

    out: list[Path] = []
    problems: list[Problem] = []
    from diskq.errors import InvalidInput

    missing = [p for p in paths_in if not p.exists() and not p.is_symlink()]
    if missing:  # a mistyped path is bad input (exit 2), not a file with problems
        raise InvalidInput(
            f"{missing[0]} does not exist" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            hint="give submission files or directories, e.g. diskq validate submissions/",
        )
    for p in paths_in:
        if p.is_dir() and not p.is_symlink():
            found, links = find_files(p)
            problems += [Problem(str(q), "-", "is a symbolic link: symbolic links are not followed") for q in links]
            if not found and not links:
                problems.append(Problem(str(p), "-", f"no submission files under {p}"))
            out += found
        else:
            out.append(p)
    return out, problems


@app.command("validate", help=VALIDATE_HELP)
def validate_cmd(
    paths_in: list[Path] = typer.Argument(..., metavar="PATH...", help="submission files or directories"),
    allowed_signers: Path | None = typer.Option(
        None, "--allowed-signers", help="ssh allowed-signers file: who may sign"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the problems as JSON on stdout"),
    no_legacy: bool = typer.Option(
        False, "--no-legacy", help="refuse legacy (unsigned) submissions, as for contributors"
    ),
    contribution: bool = typer.Option(
        False,
        "--contribution",
        help="the pull-request check: also refuse legacy files and results that measure a host (loop, zram, a file...) or name no model",
    ),
) -> None:
    from diskq.submission.validate_tree import validate_files

    err = stderr_console()
    files, path_problems = _expand(paths_in)
    results, notes = validate_files(
        files, allowed_signers=allowed_signers, no_legacy=no_legacy, contribution=contribution
    )
    problems_all = path_problems + [p for _, _, ps in results for p in ps]
    if as_json:
        print_json(
            json.dumps(
                {
                    "files": len(results),
                    "ok": sum(1 for _, _, ps in results if not ps),
                    "problems": [p.to_dict() for p in problems_all],
                },
                indent=2,
            )
        )
    else:
        for p in problems_all:
            say(str(p), err=False)
    for note in notes:
        err.print(note, markup=False, highlight=False, soft_wrap=True)
    bad = sum(1 for _, _, ps in results if ps)
    err.print(f"{len(results)} file(s) checked, {bad} with problems, {len(problems_all)} problem(s)")
    if bad or path_problems:
        raise typer.Exit(1)


@app.command("import-fio", help=IMPORT_HELP)
def import_fio_cmd(
    fio_json: list[Path] = typer.Argument(..., metavar="FIO_JSON...", help="fio JSON outputs, one per numjobs"),
    smartctl_json: Path | None = typer.Option(None, "--smartctl-json", help="saved `smartctl --json -x /dev/X` output"),
    write_cache: str = typer.Option("unknown", "--write-cache", help="write cache during the runs: on, off or unknown"),
    cache_mechanism: str = typer.Option(
        "unknown",
        "--cache-mechanism",
        help="how that state was set: drive (hdparm -W, sdparm WCE, nvme feature 6), kernel "
        "(/sys/block/X/queue/write_cache, the only knob of loop and virtio devices) or unknown; "
        "'off' by the kernel or an unknown knob counts as unsafe, as diskq bench judges it",
    ),
    model: str | None = typer.Option(None, "--model", help="device model, when there is no smartctl output"),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="result document to write (default: <model>-import.json)"
    ),
) -> None:
    from diskq.errors import InvalidInput
    from diskq.result import Device
    from diskq.submission.importfio import device_from_smartctl, import_fio, read_json_file
    from diskq.submission.paths import slugify

    err = stderr_console()
    if write_cache not in ("on", "off", "unknown"):
        raise InvalidInput(f"--write-cache must be on, off or unknown, not {write_cache!r}")
    if cache_mechanism not in ("drive", "kernel", "unknown"):
        raise InvalidInput(f"--cache-mechanism must be drive, kernel or unknown, not {cache_mechanism!r}")
    docs = [(str(p), read_json_file(p, what="fio JSON", lenient=True)) for p in fio_json]
    device = device_from_smartctl(smartctl_json) if smartctl_json else Device()
    if model:
        device = device.model_copy(update={"model": model})
    if device.model is None:
        err.print("[yellow]note[/]: no device model: give --smartctl-json or --model", markup=True)
    doc = import_fio(docs, device=device, write_cache=write_cache, cache_mechanism=cache_mechanism)
    out = output or Path(f"{slugify(device.model)}-import.json")
    out.write_text(doc.to_json() + "\n", encoding="utf-8")
    from diskq.cli._render import result_table
    from diskq.units import plural

    result_table(doc, err)  # the table and verdicts diskq bench shows; stdout keeps the path alone
    peak = doc.runs[0].peak
    err.print(
        f"{plural(len(doc.runs[0].points), 'point')}, peak {peak.iops:,.0f} IOPS at {plural(peak.numjobs, 'job')}"
    )
    from rich.markup import escape

    err.print(f"result written to [bold]{escape(str(out))}[/]", markup=True)
    from diskq.submission.contributable import not_contributable

    why = not_contributable(doc)
    if why:
        err.print(f"not for the device database: {why}", markup=False, highlight=False, soft_wrap=True)
    else:
        err.print(
            f"next: diskq sign {out} -f ~/.ssh/id_ed25519 --github YOUR_LOGIN (the SSH key GitHub knows for you)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    say(out, err=False)


@app.command("schema", help=SCHEMA_HELP)
def schema_cmd(
    directory: list[Path] | None = typer.Option(
        None,
        "--dir",
        help="where the schema files live [default, in a checkout's root only: schema/ and "
        "the package's copy src/diskq/submission/schemas/]",
    ),
    check: bool = typer.Option(False, "--check", help="only compare; exit 1 if a file is missing or differs"),
    show: str | None = typer.Option(
        None, "--show", metavar="NAME", help="print the schema shipped with diskq: submission, result or plp-datasheets"
    ),
) -> None:
    from diskq.submission import schema

    err = stderr_console()
    if show is not None:
        sys.stdout.write(schema.shipped(show))
        return
    directories = directory or schema.default_directories()
    if check:
        stale = [s for d in directories for s in schema.stale(d)]
        for s in stale:
            say(f"{s}: differs from the models (run `diskq schema`)", err=False)
        if stale:
            raise typer.Exit(1)
        err.print("schemas match the models")
        return
    for d in directories:
        for p in schema.write(d):
            say(p, err=False)
