"""A ``diskq cluster`` answer as one static HTML page in the site's style (its stylesheet
inlined, so the page stands alone; every value autoescaped), like the fleet report."""

from __future__ import annotations

from pathlib import Path


def render_html(doc: dict) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from diskq.publish.environment import fmt_num, site_dir

    root = site_dir()
    env = Environment(loader=FileSystemLoader(root / "templates"), autoescape=True, undefined=StrictUndefined)
    env.filters["num"] = fmt_num
    css = (root / "static" / "style.css").read_text()
    return env.get_template("cluster.html.j2").render(doc=doc, css=css)


def write_html(doc: dict, path: Path) -> None:
    """Write the page atomically, as the fleet report does."""
    from diskq.publish.fleet import write_text_atomic

    write_text_atomic(render_html(doc), path)
