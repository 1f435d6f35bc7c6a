"""A ``diskq cluster`` answer as one static HTML page in the site's style (its stylesheet
inlined, so the page stands alone; every value autoescaped), like the fleet report."""

from __future__ import annotations

from pathlib import Path


def render_html(doc: dict) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from diskq.cluster.judge import counted
    from diskq.publish.environment import fmt_num, site_dir

    root = site_dir()
    env = Environment(loader=FileSystemLoader(root / "templates"), autoescape=True, undefined=StrictUndefined)
    env.filters["num"] = fmt_num
    env.filters["evidence"] = evidence_value
    env.filters["counted"] = counted
    css = (root / "static" / "style.css").read_text()
    return env.get_template("cluster.html.j2").render(doc=doc, css=css)


def evidence_value(value, key: str = "") -> str:
    """A finding's evidence value as a reader reads it: a list joined, a figure to four places,
    a size (its key ends in ``_bytes``) in the binary units Ceph prints, beside its bytes;
    nothing as "unknown", never a Python repr (``['osd.2 ...']``, ``None``).

    >>> [evidence_value(v) for v in (None, [0, 1, 4], 86.136079, 0.00805, 6, [], True)]
    ['unknown', '0, 1, 4', '86.14', '0.00805', '6', 'none', 'yes']
    >>> evidence_value(32212254720, "db_size_bytes"), evidence_value(131072, "spilled_bytes")
    ('30.0 GiB (32,212,254,720 bytes)', '128.0 KiB (131,072 bytes)')
    """
    if key.endswith("_bytes") and isinstance(value, int) and not isinstance(value, bool):
        unit = next((u for u, n in (("TiB", 4), ("GiB", 3), ("MiB", 2), ("KiB", 1)) if value >= 1024**n), None)
        if unit is None:
            return f"{value:,} bytes"
        return f"{value / 1024 ** ('KMGT'.index(unit[0]) + 1):,.1f} {unit} ({value:,} bytes)"
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(evidence_value(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{k} {evidence_value(v)}" for k, v in value.items())
    return str(value)


def write_html(doc: dict, path: Path) -> None:
    """Write the page atomically, as the fleet report does."""
    from diskq.publish.fleet import write_text_atomic

    write_text_atomic(render_html(doc), path)
