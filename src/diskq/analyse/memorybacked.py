"""The note that marks a result measured on RAM (a file on tmpfs or ramfs, a zram or brd RAM
disk, a loop device over a file in RAM): its text, made by the bench, and how the verdicts,
the power-loss protection verdict and the checks of a submission find it in a document."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diskq.result import ResultDocument


#: The start of the document note that marks a memory-backed target (see :func:`memory_backed_note`).
MEMORY_BACKED = "memory-backed target:"


def memory_backed_note(why: str) -> str:
    """The document note for a target in RAM; ``why`` names the device or filesystem."""
    return f"{MEMORY_BACKED} {why}; the figures measure memory, not a drive, so no verdict applies"


def memory_backed(doc: ResultDocument) -> str | None:
    """The memory-backed note of ``doc``, or None when it was measured on something else."""
    return next((n for n in doc.notes if n.startswith(MEMORY_BACKED)), None)
