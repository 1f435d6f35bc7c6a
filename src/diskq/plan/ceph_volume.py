"""The ``ceph-volume lvm batch`` command line equivalent to a plan, for one host.

Options as the Ceph documentation names them (``ceph-volume lvm batch``): the data devices as
positional arguments, ``--db-devices``, ``--block-db-slots``, ``--bluestore``, and ``--report``
(show what would be done, change nothing). diskq cannot know the host's device names, so the
line names them ``/dev/DATA1`` ... and ``/dev/DB1`` ...: replace them with the host's devices
(``ceph-volume inventory`` lists them), check the report, then run it with ``--yes`` instead of
``--report``.

>>> from diskq.plan.layout import DataDevices
>>> class P: data = DataDevices(3, 16 * 10**12); db_devices = 1; db_slots = 3
>>> line(P())
'ceph-volume lvm batch --bluestore --report /dev/DATA1 /dev/DATA2 /dev/DATA3 --db-devices /dev/DB1 --block-db-slots 3'
"""

from __future__ import annotations

import shlex


def argv(plan) -> list[str]:
    data = [f"/dev/DATA{i}" for i in range(1, plan.data.count + 1)]
    dbs = [f"/dev/DB{i}" for i in range(1, plan.db_devices + 1)]
    return ["ceph-volume", "lvm", "batch", "--bluestore", "--report", *data,
            "--db-devices", *dbs, "--block-db-slots", str(plan.db_slots)]


def line(plan) -> str:
    return shlex.join(argv(plan))
