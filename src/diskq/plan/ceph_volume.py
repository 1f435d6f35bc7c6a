"""The ``ceph-volume lvm batch`` command line equivalent to a plan, for one host.

Options as the Ceph documentation names them (``ceph-volume lvm batch``): the data devices as
positional arguments, ``--db-devices``, ``--block-db-slots``, the object store, and ``--report``
(show what would be done, change nothing). The object store is ``--objectstore bluestore`` from
Tentacle, whose ceph-volume deprecates ``--bluestore``, and ``--bluestore`` before (``rules.toml``
[ceph_volume] ``objectstore_option_from``). diskq cannot know the host's device names, so the
line names them ``/dev/DATA1`` ... and ``/dev/DB1`` ...: replace them with the host's devices
(``ceph-volume inventory`` lists them), check the report, then run it with ``--yes`` instead of
``--report``.

>>> from diskq.plan import rules
>>> from diskq.plan.model import DataDevices
>>> class P: data = DataDevices(3, 16 * 10**12); db_devices = 1; db_slots = 3; release = "squid"
>>> line(P(), rules.load())
'ceph-volume lvm batch --bluestore --report /dev/DATA1 /dev/DATA2 /dev/DATA3 --db-devices /dev/DB1 --block-db-slots 3'
>>> P.release = "tentacle"; line(P(), rules.load())
'ceph-volume lvm batch --objectstore bluestore --report /dev/DATA1 /dev/DATA2 /dev/DATA3 --db-devices /dev/DB1 --block-db-slots 3'
"""

from __future__ import annotations

import shlex


def objectstore_args(release: str, rules: dict) -> list[str]:
    """``--objectstore bluestore`` where the release's ceph-volume has it (and deprecates
    ``--bluestore``), else ``--bluestore``."""
    from diskq.plan.layout import release_index

    since = rules["ceph_volume"]["objectstore_option_from"]
    newer = release_index(release, rules) >= release_index(since, rules)
    return ["--objectstore", "bluestore"] if newer else ["--bluestore"]


def argv(plan, rules: dict) -> list[str]:
    data = [f"/dev/DATA{i}" for i in range(1, plan.data.count + 1)]
    dbs = [f"/dev/DB{i}" for i in range(1, plan.db_devices + 1)]
    return [
        "ceph-volume",
        "lvm",
        "batch",
        *objectstore_args(plan.release, rules),
        "--report",
        *data,
        "--db-devices",
        *dbs,
        "--block-db-slots",
        str(plan.db_slots),
    ]


def line(plan, rules: dict) -> str:
    return shlex.join(argv(plan, rules))
