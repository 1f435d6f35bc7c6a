"""rich rendering of the block-size profile (``diskq bench --profile sizes``): one table per
write-cache state, with a small bar chart of IOPS against the block size."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from diskq.bench.sizes import bs_text
from diskq.cli._latency import _us
from diskq.result import Run, SizePoint

#: width of the size table without its bar column (7 columns of figures, borders, padding)
TABLE_WIDTH = 70
BAR = 20


def size_label(size: int) -> str:
    """``512 B``, ``4 KiB``, ``1 MiB``.

    >>> size_label(512), size_label(8192), size_label(1048576)
    ('512 B', '8 KiB', '1 MiB')
    """
    text = bs_text(size)
    return f"{text[:-1]} {'KiB' if text[-1] == 'k' else 'MiB'}" if text[-1] in "km" else f"{text} B"


def _bar(value: float, top: float, width: int) -> str:
    return "█" * max(1, round(width * value / top)) if value > 0 and top > 0 else ""


def size_table(run: Run, console: Console, title: str) -> None:
    """The run's block-size profile: per size, IOPS, MB/s, the write's and the fdatasync's p50
    and p99 latency, and a bar chart of IOPS against the size, like the sweep's table: commits per
    second stay flat while the flush costs more than the transfer and fall once the transfer
    dominates, the point the chart shows (MB/s climbs in proportion meanwhile, so its bars would
    only mirror the size). Nothing when the run has no profile."""
    profile = run.sizes
    if profile is None:
        return
    bar = max(6, min(BAR, console.width - TABLE_WIDTH))
    table = Table(
        title=f"{title}: block-size profile, write cache {run.write_cache}",
        title_justify="left",
        caption="1 job, each write followed by fdatasync; latency of each write() and fdatasync() call",
        caption_justify="left",
    )
    for col in ("size", "IOPS", "MB/s", "write\np50", "write\np99", "sync\np50", "sync\np99"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("", justify="left", overflow="fold", min_width=bar)  # the mark wraps, never a figure
    points: list[SizePoint] = profile.points
    top = max((p.iops for p in points), default=0.0)
    for p in points:
        sync = p.sync_lat_us
        table.add_row(
            size_label(p.block_size),
            f"{p.iops:,.0f}",
            f"{p.bw_bytes / 1e6:,.1f}",
            _us(p.lat_us.p50),
            _us(p.lat_us.p99),
            _us(sync.p50 if sync else None),
            _us(sync.p99 if sync else None),
            _bar(p.iops, top, bar) + (" (interrupted)" if p.interrupted else ""),
        )
    console.print(table)
    for note in profile.notes:
        console.print(f"[dim]{escape(note)}[/]", markup=True)
    if profile.interrupted:
        console.print("[bold yellow]The block-size profile was interrupted; its figures are partial.[/]", markup=True)
