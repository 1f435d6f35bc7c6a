"""A fleet report as one static HTML page in the site's style (its stylesheet inlined, so the
page stands alone: no external requests, every value autoescaped)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from diskq.errors import SiteError


def render_html(report) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from diskq.publish.environment import fmt_num, site_dir

    root = site_dir()
    env = Environment(loader=FileSystemLoader(root / "templates"), autoescape=True, undefined=StrictUndefined)
    env.filters["num"] = fmt_num
    css = (root / "static" / "style.css").read_text()
    return env.get_template("fleet.html.j2").render(report=report, css=css)


def write_html(report, path: Path) -> None:
    """Write the page atomically (a temporary file in the same directory, then a rename)."""
    write_text_atomic(render_html(report), path)


def write_text_atomic(text: str, path: Path) -> None:
    """Write a page atomically (a temporary file in the same directory, then a rename)."""
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise SiteError(f"{path} is a directory", hint="give a file name, e.g. report.html")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise SiteError(
            f"cannot write {path}: {exc.strerror}", hint="check that the directory exists and is writable"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
