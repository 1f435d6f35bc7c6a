"""A latency as the short text of a table cell, shared by the sweep's table and the block-size
profile's."""

from __future__ import annotations


def _us(v: float | None) -> str:
    """A latency in at most 7 characters: ``1µs``, ``345µs``, ``3.84ms``, ``12.0ms``, ``574ms``, ``1.20s``."""
    if v is None:
        return "-"
    if v < 1000:
        return f"{v:.0f}µs"
    ms = v / 1000
    if ms < 1000:
        return f"{ms:.2f}ms" if ms < 10 else f"{ms:.1f}ms" if ms < 100 else f"{ms:.0f}ms"
    return f"{ms / 1000:.2f}s"
