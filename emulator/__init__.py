"""A drive in software for diskq's tests and benchmarks: a FUSE daemon (``diskemu.c``) whose
writes and flushes cost what a modelled drive's do (``models.toml``), under a loop device.

Not part of the shipped tool: nothing in ``src/diskq`` imports it. See docs/emulated-drives.md.
"""
