"""The site's Jinja environment and its filters: where the templates and static files live
(package data of :mod:`diskq.publish`), and how a number, a latency, a size or an amount written
reads on a page. The fleet and cluster pages use the same filters and files as the site."""

from __future__ import annotations

from pathlib import Path

from diskq.errors import SiteError
from diskq.publish.names import PageKeys, web_url


def site_dir() -> Path:
    """The directory of the site's ``templates/`` and ``static/``: package data of
    :mod:`diskq.publish`, found with importlib.resources."""
    from importlib import resources

    path = resources.files("diskq.publish")
    if not isinstance(path, Path) or not (path / "templates").is_dir():
        raise SiteError(f"site templates not found in {path}", hint="reinstall diskq")
    return path


def fmt_num(value, digits: int = 0) -> str:
    """``64235.4`` -> ``64,235``; None -> an en dash."""
    if value is None:
        return "\u2013"
    return f"{value:,.{digits}f}"


def fmt_us(value) -> str:
    """Microseconds, readable: ``85.2`` -> ``85 µs``, ``12400`` -> ``12.4 ms``."""
    if value is None:
        return "\u2013"
    if value < 0.5:
        return "< 1 µs"  # never "0 µs": a latency below display precision is not zero
    return f"{value / 1000:,.1f} ms" if value >= 10_000 else f"{value:,.0f} µs"


def fmt_ms(value) -> str:
    """Milliseconds as :func:`diskq.units.latency_ms` writes them (never "0.00 ms")."""
    from diskq.units import latency_ms

    return "\u2013" if value is None else latency_ms(value)


def fmt_bytes(value) -> str:
    from diskq.units import capacity

    return "\u2013" if value is None else capacity(value)


def fmt_gb(value) -> str:
    """Bytes written, in decimal units: ``12000000000`` -> ``12.0 GB``."""
    from diskq.database.sustained import gigabytes

    return gigabytes(value)


def fmt_mbs(value) -> str:
    """Bytes per second as MB/s: ``4.8e8`` -> ``480 MB/s``."""
    from diskq.database.sustained import megabytes_per_s

    return megabytes_per_s(value)


def environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(site_dir() / "templates"),
        autoescape=True,  # every template, whatever its name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    from diskq.units import block_label

    env.filters.update(
        num=fmt_num, us=fmt_us, size=fmt_bytes, ms=fmt_ms, gb=fmt_gb, mbs=fmt_mbs, block=block_label, web=web_url
    )
    # page names: a value from the database is never a path (diskq.publish.names)
    env.filters.update(device_page=PageKeys(), public_page=PageKeys())
    return env
