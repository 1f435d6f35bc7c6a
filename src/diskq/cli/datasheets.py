"""``diskq datasheets validate``: check the power-loss-protection datasheet list."""

from __future__ import annotations

from pathlib import Path

import typer

from diskq.cli._terminal import say
from diskq.cli.app import app, stderr_console

datasheets_app = typer.Typer(
    help="The vendor datasheet list behind the power-loss-protection verdict.\n\nExample: diskq datasheets validate",
    no_args_is_help=True,
)
app.add_typer(datasheets_app, name="datasheets")


@datasheets_app.command(
    "validate",
    help=(
        "Check a datasheet list (default: the one diskq ships, src/diskq/analyse/plp_datasheets.json): "
        "its schema, a https source and a read date for every entry, each example matched by its own "
        "model pattern, no two entries claiming the same model differently, no markup. Prints one line "
        "per problem and exits 5 when there is any.\n\n"
        "Example: diskq datasheets validate src/diskq/analyse/plp_datasheets.json"
    ),
)
def validate_cmd(
    path: Path | None = typer.Argument(None, help="datasheet list file (JSON); default: the packaged one"),
) -> None:
    from diskq.analyse import datasheets
    from diskq.errors import InvalidInput, SubmissionError

    target = path or datasheets.packaged_path()
    try:
        with open(target, "rb") as f:
            raw = f.read(datasheets.MAX_BYTES + 1)
    except OSError as exc:
        raise InvalidInput(f"cannot read {target}: {exc.strerror or exc}") from None
    problems = datasheets.validate(datasheets.parse(raw, str(target)))
    for problem in problems:
        say(f"{target}: {problem}", err=False)
    if problems:
        raise SubmissionError(f"{target}: {len(problems)} problem(s) in the datasheet list")
    count = len(datasheets.DatasheetList.model_validate(datasheets.parse(raw, str(target))).entries)
    stderr_console().print(f"{target}: {count} entries, valid", markup=False)
