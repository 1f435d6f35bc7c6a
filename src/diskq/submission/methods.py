"""The measurement methods a submission may declare, and the fio options each one implies.

Figures made with different methods are never compared, so every submission names its method
as ``(id, version)`` and an unknown pair is a validation error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: what ``diskq bench`` writes today: every job writes one shared region from its start, every step
#: follows a 1 s ramp that fio leaves out of its figures (``--ramp_time``), the steps that steer the
#: search measure a fixed window and the answer steps go on while their rate still trends (fio's
#: ``iops_slope`` detector)
BENCH = ("diskq-fdatasync-sweep", 4)
#: ``diskq bench`` documents before 4: every step a fixed window after the 1 s ramp
BENCH_V3 = ("diskq-fdatasync-sweep", 3)
#: ``diskq bench`` documents before 3: one shared region, steps ended by fio's steady-state detector
BENCH_V2 = ("diskq-fdatasync-sweep", 2)
#: earlier ``diskq bench`` documents: each job wrote its own region (``--offset_increment``)
BENCH_V1 = ("diskq-fdatasync-sweep", 1)
COMMUNITY = ("community-fio-ceph-iops", 1)
#: The command the community table's rows were measured with: O_SYNC writes, 60 s per run
#: (github.com/TheJJ/ceph-diskbench, README.md from eeac118 to d9b7f08; its guide showed
#: ``--fdatasync=1`` only from 9b96c01, which kept the rows' figures unchanged).
COMMUNITY_OSYNC = ("community-fio-journal-osync", 1)

#: The community command the legacy table and ``diskq import-fio`` runs were made with.
COMMUNITY_COMMAND = (
    "fio --filename /dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based "
    "--rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N"
)
COMMUNITY_PARAMS = {
    "direct": "1",
    "fdatasync": "1",
    "iodepth": "1",
    "runtime": "20",
    "time_based": "1",
    "rw": "write",
    "bs": "4k",
    "group_reporting": "1",
    "name": "ceph-iops",
}

COMMUNITY_OSYNC_COMMAND = (
    "fio --filename=/dev/device --direct=1 --sync=1 --iodepth=1 --runtime=60 --time_based --rw=write --bs=4k "
    "--numjobs=[JOBCOUNT] --group_reporting --name=ceph-journal-write-test"
)
COMMUNITY_OSYNC_PARAMS = {
    "direct": "1",
    "sync": "1",
    "iodepth": "1",
    "runtime": "60",
    "time_based": "1",
    "rw": "write",
    "bs": "4k",
    "group_reporting": "1",
    "name": "ceph-journal-write-test",
}
#: The methods a legacy (transcribed, unsigned) submission may declare.
LEGACY_METHODS = frozenset({COMMUNITY, COMMUNITY_OSYNC})

BLOCK_SIZE = 4096
_FOUR_K = {"4k", "4K", "4096", "4ki", "4KiB", "4kib"}


@dataclass(frozen=True)
class MethodSpec:
    id: str
    version: int
    title: str
    #: fio option -> accepted values; an absent option is accepted only where None is listed
    required: dict[str, frozenset[str | None]] = field(default_factory=dict)
    #: each job wrote its own region: ``offset_increment`` set and not 0 (version 1)
    own_regions: bool = False


#: no ramp: what versions 1 and 2 of ``diskq bench`` ran (``--ramp_time`` came with version 3)
_NO_RAMP = frozenset({None, "0", "0s"})


#: the one steady-state detector version 4 runs, on its answer steps (fio echoes ``--ss`` in its JSON
#: as ``steadystate``)
_SETTLE = frozenset({None, "iops_slope:1%"})


def _required(
    *, sync: bool = True, shared_region: bool = False, ramp: bool | None = None, settle: bool = False
) -> dict[str, frozenset[str | None]]:
    required = {
        "rw": frozenset({"write"}),
        "bs": frozenset(_FOUR_K),
        "iodepth": frozenset({"1", None}),
        "direct": frozenset({"1"}),
        "fdatasync": frozenset({"1"}) if sync else frozenset({"0", None}),
    }
    if shared_region:
        # all jobs write from the region's start, as the community command's jobs do
        required["offset_increment"] = frozenset({None, "0"})
    if ramp:
        # a fixed window after a 1 s ramp left out of the figures; no steady-state detector (fio
        # prints ``--ss`` in its JSON as ``steadystate``)
        required["ramp_time"] = frozenset({"1", "1s"})
        required["ss"] = _SETTLE if settle else frozenset({None})
        required["steadystate"] = _SETTLE if settle else frozenset({None})
    elif ramp is False:
        # versions 1 and 2 ran no ramp: a version-3 measurement relabelled as an earlier version
        # carries fio's ramp_time=1 in every step's own JSON
        required["ramp_time"] = _NO_RAMP
    return required


def _osync_required() -> dict[str, frozenset[str | None]]:
    required = _required(sync=False)
    required["sync"] = frozenset({"1"})
    return required


KNOWN_METHODS: dict[tuple[str, int], MethodSpec] = {
    BENCH: MethodSpec(
        *BENCH,
        "diskq bench: 4 KiB write + fdatasync sweep over numjobs, all jobs in one region, "
        "after a 1 s ramp: fixed windows to steer, answer steps longer while the rate trends",
        _required(shared_region=True, ramp=True, settle=True),
    ),
    BENCH_V3: MethodSpec(
        *BENCH_V3,
        "diskq bench before 4: 4 KiB write + fdatasync sweep over numjobs, all jobs in "
        "one region, fixed windows after a 1 s ramp",
        _required(shared_region=True, ramp=True),
    ),
    BENCH_V2: MethodSpec(
        *BENCH_V2,
        "diskq bench before 3: 4 KiB write + fdatasync sweep, all jobs in one region, "
        "steps ended by fio's steady-state detector",
        _required(shared_region=True, ramp=False),
    ),
    BENCH_V1: MethodSpec(
        *BENCH_V1,
        "diskq bench before 2: 4 KiB write + fdatasync sweep, each job in its own region",
        _required(ramp=False),
        own_regions=True,
    ),
    COMMUNITY: MethodSpec(*COMMUNITY, "community fio command, one run per numjobs", _required()),
    COMMUNITY_OSYNC: MethodSpec(
        *COMMUNITY_OSYNC,
        "community table's fio command: 4 KiB O_SYNC direct writes (--sync=1), 60 s, one run per numjobs",
        _osync_required(),
    ),
}

#: What each method sends after a write (``diskq.analyse.methodclass`` turns it into a class).
SYNC_MODE: dict[str, str] = {BENCH[0]: "fdatasync", COMMUNITY[0]: "fdatasync", COMMUNITY_OSYNC[0]: "o_sync"}


def traits(method_id: str):
    """The :class:`~diskq.analyse.methodclass.Traits` of a submission method: 4 KiB sequential
    writes at iodepth 1 on the device itself with O_DIRECT, followed by what ``SYNC_MODE`` says
    (a method not listed there is taken as fdatasync, diskq's own)."""
    from diskq.analyse.methodclass import Traits

    return Traits(SYNC_MODE.get(method_id, "fdatasync"), "write", "raw", True, 1)


def lookup(method_id: str, version: int) -> MethodSpec | None:
    return KNOWN_METHODS.get((method_id, version))


#: The workload profiles' methods (``ProfileMethod``), each with its title. Version 2 of the size
#: profile measures each step over a fixed window after a 1 s ramp; version 1 ended each step with
#: fio's steady-state detector. Both stay valid and are never compared with each other.
SIZE_PROFILE = ("diskq-size-profile", 2)
SIZE_PROFILE_V1 = ("diskq-size-profile", 1)
KNOWN_PROFILES: dict[tuple[str, int], str] = {
    SIZE_PROFILE: "diskq bench --profile sizes: 1-job write + fdatasync at each block size, "
    "fixed windows after a 1 s ramp",
    SIZE_PROFILE_V1: "diskq bench --profile sizes before 2: 1-job write + fdatasync at each block size, "
    "steps ended by fio's steady-state detector",
}


def lookup_profile(method_id: str, version: int) -> str | None:
    """The title of a known profile method, None for an unknown (id, version)."""
    return KNOWN_PROFILES.get((method_id, version))


def size_option_problems(options: dict[str, str], block_size: int | None, version: int | None = None) -> list[str]:
    """Which of the size profile's fio options ``options`` violates: sequential direct writes,
    each followed by fdatasync, one job at iodepth 1, (for one step) ``bs`` equal to the point's
    ``block_size`` in bytes, and for ``version`` 2 the fixed window (a 1 s ramp, no detector)."""
    from diskq.bench.sizes import parse_bs

    # version 2: the fixed window's ramp; version 1 ran none (fio's detector ended its steps);
    # without a version only the options every version shares are checked
    required = _required(ramp=None if version is None else version >= 2)
    del required["bs"]
    required["numjobs"] = frozenset({"1", None})
    out = _violations(options, required)
    if block_size is not None and parse_bs(options.get("bs")) != block_size:
        out.append(f"bs={str(options.get('bs', '(unset)'))[:40]} (needs {block_size} B, the point's block_size)")
    return out


def option_problems(options: dict[str, str], spec: MethodSpec, *, sync: bool = True) -> list[str]:
    """Which of the method's fio options ``options`` violates, each as ``"rw=randwrite (needs write)"``."""
    required = spec.required if sync else {**spec.required, "fdatasync": _required(sync=False)["fdatasync"]}
    out = _violations(options, required)
    if spec.own_regions and options.get("offset_increment") in (None, "0"):
        out.append(
            f"offset_increment={options.get('offset_increment') or '(unset)'} "
            "(needs each job's own region, as version 1 wrote)"
        )
    return out


def _violations(options: dict[str, str], required: dict[str, frozenset[str | None]]) -> list[str]:
    """Each required option ``options`` does not hold, as ``"name=value (needs accepted)"``."""
    out = []
    for name, accepted in required.items():
        value = options.get(name)
        if value is not None and not isinstance(value, str):
            value = str(value)
        if value not in accepted:
            wanted = "/".join(sorted(v for v in accepted if v is not None))
            out.append(f"{name}={value if value is not None else '(unset)'} (needs {wanted})")
    return out
