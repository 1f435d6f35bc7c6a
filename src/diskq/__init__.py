"""diskq: qualify block devices for synchronous-write workloads (Ceph BlueStore WAL/DB).

The package is laid out in the order data flows through it:

    probe/       what the device is, its write cache, whether it is safe to write
    bench/       fio runs, the numjobs sweep, the result document
    analyse/     scaling fit and classification, workload verdicts
    submission/  signed submission files, validation, imports
    database/    devices.db built from all submissions, lookups
    publish/     the static site generated from devices.db
    cli/         the thin typer front end; the only place that prints
"""


def __getattr__(name: str):
    # ``diskq.__version__`` comes from the installed metadata (pyproject.toml's version is the one
    # source), read when first asked for: importlib.metadata costs start-up time every command pays
    if name == "__version__":
        from diskq.package import version

        globals()["__version__"] = value = version()
        return value
    raise AttributeError(f"module 'diskq' has no attribute {name!r}")
