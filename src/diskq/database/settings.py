"""A cache setting of the database: the write-cache state (on, off, unknown) and the knob that
set it (``drive``, ``kernel``, ``unknown``: :mod:`diskq.analyse.knob`), with the label the
pages and the command line show for it and the slug JSON exports and HTML ids key it by.

Runs of different knobs are never aggregated together (:mod:`diskq.database.aggregate`,
:mod:`diskq.database.sustained`): "off" with the kernel knob means the kernel sends no
flushes, not that the drive has no cache.
"""

from __future__ import annotations

from diskq.analyse import knob as knobs

#: The knobs a cache state can have been set with (see the module docstring).
DRIVE, KERNEL, UNKNOWN = knobs.DRIVE, knobs.KERNEL, knobs.UNKNOWN


def knob(cache_mechanism: str | None, state: str | None = None) -> str:
    """``'kernel'`` for the kernel's queue/write_cache knob (mechanism ``sysfs``), ``'unknown'``
    for a state declared without its knob (:func:`diskq.analyse.knob.knob`), else ``'drive'``."""
    return knobs.knob(cache_mechanism, state)


_LABEL = {KERNEL: "kernel knob", UNKNOWN: "knob not known"}
_SLUG = {KERNEL: "kernel", UNKNOWN: "knob-unknown"}


def setting_label(write_cache: str, knob_: str) -> str:
    """``'off'`` for the drive's own setting, ``'off (kernel knob)'`` for the kernel's,
    ``'off (knob not known)'`` for a state declared without how it was set."""
    return write_cache if knob_ not in _LABEL else f"{write_cache} ({_LABEL[knob_]})"


def setting_slug(write_cache: str, knob_: str) -> str:
    """``'off'`` / ``'off-kernel'`` / ``'off-knob-unknown'``: a key for JSON exports and HTML ids."""
    return write_cache if knob_ not in _SLUG else f"{write_cache}-{_SLUG[knob_]}"
