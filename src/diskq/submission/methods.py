"""The measurement methods a submission may declare, and the fio options each one implies.

Figures made with different methods are never compared, so every submission names its method
as ``(id, version)`` and an unknown pair is a validation error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: what ``diskq bench`` writes today: every job writes one shared region from its start, and every
#: step is a fixed window after a 1 s ramp that fio leaves out of its figures (``--ramp_time``)
BENCH = ("diskq-fdatasync-sweep", 3)
#: ``diskq bench`` documents before 3: one shared region, steps ended by fio's steady-state detector
BENCH_V2 = ("diskq-fdatasync-sweep", 2)
#: earlier ``diskq bench`` documents: each job wrote its own region (``--offset_increment``)
BENCH_V1 = ("diskq-fdatasync-sweep", 1)
COMMUNITY = ("community-fio-ceph-iops", 1)

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


def _required(*, sync: bool = True, shared_region: bool = False,
              ramp: bool | None = None) -> dict[str, frozenset[str | None]]:
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
        required["ss"] = frozenset({None})
        required["steadystate"] = frozenset({None})
    elif ramp is False:
        # versions 1 and 2 ran no ramp: a version-3 measurement relabelled as an earlier version
        # carries fio's ramp_time=1 in every step's own JSON
        required["ramp_time"] = _NO_RAMP
    return required


KNOWN_METHODS: dict[tuple[str, int], MethodSpec] = {
    BENCH: MethodSpec(*BENCH, "diskq bench: 4 KiB write + fdatasync sweep over numjobs, all jobs in one region, "
                      "fixed windows after a 1 s ramp", _required(shared_region=True, ramp=True)),
    BENCH_V2: MethodSpec(*BENCH_V2, "diskq bench before 3: 4 KiB write + fdatasync sweep, all jobs in one region, "
                         "steps ended by fio's steady-state detector", _required(shared_region=True, ramp=False)),
    BENCH_V1: MethodSpec(*BENCH_V1, "diskq bench before 2: 4 KiB write + fdatasync sweep, each job in its own region",
                         _required(ramp=False), own_regions=True),
    COMMUNITY: MethodSpec(*COMMUNITY, "community fio command, one run per numjobs", _required()),
}


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

    required = _required(ramp=version is not None and version >= 2)
    if version == 1:  # version 1's steps had no ramp (fio's detector ended them)
        required["ramp_time"] = frozenset({None})
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
        out.append(f"offset_increment={options.get('offset_increment') or '(unset)'} "
                   "(needs each job's own region, as version 1 wrote)")
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
