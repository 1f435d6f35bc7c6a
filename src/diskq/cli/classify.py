"""``diskq classify``: the scaling class of a curve given as jobs:iops points."""

from __future__ import annotations

import typer

from diskq.cli.app import app, print_json, stdout_console


@app.command(
    help=(
        "Classify a numjobs curve as linear, asymptotic or regressing, with its peak, knee and a USL fit "
        "(from 6 points).\n\n"
        "POINTS are jobs:iops pairs, e.g. the 4K fdatasync IOPS measured at each number of jobs.\n\n"
        "Example: diskq classify 1:5028 2:2651 6:1088 8:745 --json"
    )
)
def classify(
    points: list[str] = typer.Argument(..., metavar="JOBS:IOPS", help="one point per argument, e.g. 1:5028 2:2651"),
    json_out: bool = typer.Option(False, "--json", help="print the analysis as JSON on stdout"),
) -> None:
    from diskq.analyse.classify import classify as run_classify
    from diskq.analyse.classify import parse_points

    scaling = run_classify(parse_points(points))
    if json_out:
        print_json(scaling.model_dump_json(indent=2))
        return
    _render(scaling)


def _render(scaling) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = stdout_console()
    colour = {"linear": "green", "asymptotic": "yellow", "regressing": "red"}[scaling.scaling]
    words = "" if scaling.description == scaling.scaling else f": {scaling.description}"
    console.print(f"[bold {colour}]{scaling.scaling}[/]{escape(words)}", markup=True, highlight=False)
    line = f"peak {scaling.peak.iops:.0f} IOPS at {_jobs(scaling.peak.numjobs)}"
    if scaling.knee is not None:
        line += f", knee at {_jobs(scaling.knee)}"
    console.print(line)
    if scaling.usl is not None:
        fit = scaling.usl
        table = Table("sigma", "kappa", "lambda", "N max", "R²", "RMSE", title="USL fit", title_justify="left")
        table.add_row(
            f"{fit.sigma:.4g}",
            f"{fit.kappa:.3g}",
            f"{fit.lambda_:.0f}",
            "-" if fit.n_max is None else f"{fit.n_max:.1f}",
            f"{fit.r2:.3f}",
            f"{fit.rmse:.0f}",
        )
        console.print(table)
    by = "the contributor's words" if scaling.method == "contributor" else scaling.method
    console.print(f"classified by {by}")
    for q in scaling.questionable:
        console.print(
            f"≠ conflict {q.numjobs}:{q.iops:.0f}, held out of the class: {q.reason}", markup=False, highlight=False
        )
    held = {q.reason for q in scaling.questionable}
    for note in scaling.notes:
        if note not in held:
            console.print(f"  - {note}", markup=False)


def _jobs(n: int) -> str:
    return "1 job" if n == 1 else f"{n} jobs"
