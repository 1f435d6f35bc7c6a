"""Terminal output of the sustained write: its figures, a throughput chart and the cliff."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from diskq.result import Sustained
from diskq.units import human_bytes

_LEVELS = "▁▂▃▄▅▆▇█"


def chart(samples: list[float], width: int) -> tuple[str, float]:
    """Throughput samples as one line of ``width`` block characters at most (each the mean of
    the samples it covers, scaled to the largest), and the bytes per second of a full block.

    >>> chart([100.0, 100.0, 50.0, 50.0], 4)
    ('██▄▄', 100.0)
    """
    if not samples or width < 1:
        return "", 0.0
    per = max(1, -(-len(samples) // width))  # ceil
    cols = [sum(samples[i : i + per]) / len(samples[i : i + per]) for i in range(0, len(samples), per)]
    top = max(cols)
    if top <= 0:
        return _LEVELS[0] * len(cols), 0.0
    return "".join(
        _LEVELS[min(len(_LEVELS) - 1, int(c / top * len(_LEVELS) - 1e-9))] if c > 0 else " " for c in cols
    ), top


def _mbs(bw: float) -> str:
    return f"{bw / 1e6:,.0f} MB/s" if bw >= 10e6 else f"{bw / 1e6:.2g} MB/s"


def lines(s: Sustained, width: int) -> list[str]:
    """The lines that describe one sustained write (rich markup)."""
    kib = s.block_size // 1024
    size = f"{kib // 1024} MiB" if kib >= 1024 else f"{kib} KiB"
    how = "fdatasync after every write" if s.variant == "fdatasync" else "no fdatasync"
    budget = human_bytes(s.budget_bytes) if s.budget_bytes is not None else f"{s.budget_s} s"
    head = (
        f"[bold]sustained write[/], {escape(str(s.variant))}: {size} at iodepth {s.iodepth}, {how}, write cache "
        f"{escape(str(s.write_cache))}; budget {budget}"
    )
    out = [head + (" [yellow](interrupted)[/]" if s.interrupted else "")]
    out.append(
        f"  wrote {human_bytes(s.written_bytes)} in {s.runtime_ms / 1000:,.1f} s: {_mbs(s.bw_bytes)} "
        f"mean, {s.iops:,.0f} IOPS"
    )
    room = max(10, width - 14)
    line, top = chart(s.bw_samples, room)
    if line:
        per = max(1, -(-len(s.bw_samples) // room))
        secs = per * s.sample_interval_ms / 1000
        out.append(f"  [cyan]{line}[/]  top {_mbs(top)}")
        cliff = s.cliff
        if cliff is not None and cliff.found and cliff.at_s is not None:
            col = min(len(line) - 1, int(cliff.at_s / secs))
            out.append("  " + " " * col + "^")
        out.append(f"  [dim]one column per {secs:g} s of the write[/]")
    else:
        out.append("  [dim]no throughput samples: the write was shorter than one sample interval[/]")
    if s.cliff is not None:
        mark = "[bold red]cliff[/]" if s.cliff.found else "[green]no cliff[/]"
        for reason in s.cliff.reasons:
            reason = reason.removeprefix("no cliff: ")  # the mark says it already
            out.append(f"  {mark}: {escape(reason)}")
    for note in s.notes:
        out.append(f"  [dim]{escape(note)}[/]")
    return out


def print_sustained(measured: list[Sustained], console: Console) -> None:
    for s in measured:
        for line in lines(s, console.width):
            console.print(line, markup=True, highlight=False)
