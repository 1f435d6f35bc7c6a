"""What a bench will do, checked before it writes a byte: its options (:class:`BenchOptions`,
from the command line), the windows they give its steps (:func:`step_windows`), and the plan
(:func:`plan`: the target resolved, its safety checked, a block device claimed until the plan is
closed). :func:`diskq.bench.runner.execute` runs the plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from diskq.bench import deadline, fio, fiojson, sweep, windows
from diskq.bench.sustained import DEFAULT_BUDGET, Budget, parse_budget
from diskq.bench.target import Target, region_bytes, resolve
from diskq.errors import InvalidInput

if TYPE_CHECKING:
    from diskq.probe.exclusive import ExclusiveClaim

CACHE_MODES = ("auto", "keep", "off", "on", "both")
#: workload profiles ``--profile`` adds to the 4 KiB sweep
PROFILES = ("sizes", "sustained")
FLUSH_CHECK_SECONDS = 5.0


@dataclass
class BenchOptions:
    runtime_s: float = 20.0
    max_jobs: int = 32
    jobs: list[int] | None = None
    size_bytes: int = 1024**3
    #: ``--size`` was given: it sizes a file target, and a block device is refused with it
    size_given: bool = False
    cache: str = "auto"
    yes: bool = False
    force: bool = False
    flush_check: bool = True
    steady_state: bool = True
    refine_budget: int = sweep.DEFAULT_REFINE_BUDGET
    profiles: tuple[str, ...] = ()
    #: the sustained write's budget (``--sustain``); None: the default, when the profile is asked for
    sustain: Budget | None = None
    #: the least margin a fio run gets beyond its writing time before diskq kills it (seconds;
    #: :mod:`diskq.bench.deadline`)
    step_margin_s: float = deadline.FLOOR_S

    @property
    def sustain_budget(self) -> Budget | None:
        """The sustained write's budget when ``--profile sustained`` is asked for, else None."""
        if "sustained" not in self.profiles:
            return None
        return self.sustain if self.sustain is not None else parse_budget(DEFAULT_BUDGET)

    def validate(self) -> None:
        if self.runtime_s < 1:
            raise InvalidInput(f"--runtime must be at least 1 second, got {self.runtime_s:g}")
        if self.max_jobs < 1 or self.max_jobs > 1024:
            raise InvalidInput(f"--max-jobs must be between 1 and 1024, got {self.max_jobs}")
        if self.jobs and max(self.jobs) > 1024:
            raise InvalidInput("--jobs values must be at most 1024")
        if self.cache not in CACHE_MODES:
            raise InvalidInput(f"--cache must be one of {', '.join(CACHE_MODES)}, got {self.cache!r}")
        self.check_profiles()

    def check_profiles(self) -> None:
        """Refuse a ``--profile`` diskq does not know, and a ``--sustain`` without its profile."""
        for profile in self.profiles:
            if profile not in PROFILES:
                raise InvalidInput(
                    f"--profile must be one of {', '.join(PROFILES)}, got {profile!r}",
                    hint="e.g. diskq bench /dev/sdX --profile sizes",
                )
        if self.sustain is not None and "sustained" not in self.profiles:
            raise InvalidInput(
                "--sustain sets the budget of the sustained write: it needs --profile sustained",
                hint="add --profile sustained, or drop --sustain",
            )

    @property
    def highest_jobs(self) -> int:
        return max(self.jobs) if self.jobs else self.max_jobs


@dataclass
class Plan:
    """What :func:`plan` checked. For a block device it holds an ``O_EXCL`` claim (``claim``)
    until :meth:`close`: use the plan as a context manager around :func:`execute`."""

    path: str
    target: Target
    options: BenchOptions
    region_bytes: int
    notes: list[str] = field(default_factory=list)
    claim: ExclusiveClaim | None = None

    @property
    def needs_confirmation(self) -> bool:
        """Block devices and pre-existing files hold data that the bench destroys."""
        return self.target.is_block or self.target.existed

    def close(self) -> None:
        """Release the exclusive claim on the device (idempotent)."""
        if self.claim is not None:
            self.claim.release()

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


def plan(path: str, options: BenchOptions, *, sysfs_root: str = "/sys") -> Plan:
    """Check everything that can be checked before writing a byte; raise on any refusal.

    A block device passes its safety checks and is then claimed with ``O_EXCL`` until the
    plan is closed, so nothing can mount or claim it between the check and the end of the
    bench. A partition whose disk's write cache may be switched claims the whole disk, so no
    other partition can be mounted while the cache is changed.
    """
    from dataclasses import replace

    from diskq.bench.target import file_mode_note, memory_backing
    from diskq.probe import exclusive, inuse, safety

    fio.check_runtime(options.runtime_s)
    options.validate()
    notes = fiojson.check_version(fio.installed_version())
    target = resolve(path, size_bytes=options.size_bytes, sysfs_root=sysfs_root)
    if target.is_block and options.size_given:  # never silently ignored
        raise InvalidInput(
            f"--size only applies to a file target: {path} is a block device, measured as it is",
            hint=f"drop --size to bench {path}, or give a file path to bench a test file of that size",
        )
    claim = None
    if target.is_block:
        notes += safety.check_block_device(path, force=options.force, sysfs_root=sysfs_root)
        claim_path = path
        if target.kind == "partition":
            cache_mode, cache_notes = inuse.partition_cache_mode(path, options.cache, sysfs_root=sysfs_root)
            options = replace(options, cache=cache_mode)
            notes += cache_notes
            if cache_mode != "keep":
                claim_path = inuse.disk_node(path, sysfs_root=sysfs_root)
        also = inuse.exclusive_aliases(target.dev_name or "", sysfs_root=sysfs_root) if target.dev_name else []
        claim = exclusive.claim_exclusive(claim_path, target=path, also=also)
    else:
        safety.check_file_target(path, yes=options.yes, sysfs_root=sysfs_root)
    try:
        region = region_bytes(target.capacity_bytes, options.highest_jobs)
        if options.sustain_budget is not None:
            from diskq.bench import sustained

            sustained.region(target.capacity_bytes)  # refused before anything is written
        if target.kind == "file":
            notes.append(file_mode_note(target, region * options.highest_jobs))
        in_memory = memory_backing(target, sysfs_root=sysfs_root)
        if in_memory:
            from diskq.analyse.memorybacked import memory_backed_note

            notes.append(memory_backed_note(in_memory))
        return Plan(path=path, target=target, options=options, region_bytes=region, notes=notes, claim=claim)
    except BaseException:
        if claim is not None:
            claim.release()
        raise


def step_windows(opts: BenchOptions) -> tuple[windows.Window, windows.Window | None, windows.Window]:
    """The windows of the steps that steer the search, of the answer steps (None where they are
    the same) and of the flush check. Every step is a fixed window after fio's 1 s ramp: with short
    steps (the default) 4 s to steer and 7 s for the figures the document answers with, each at
    most ``--runtime``; with ``--no-steady-state`` every step measures ``--runtime``."""
    if opts.steady_state:
        steer, answer = windows.STEER.capped(opts.runtime_s), windows.ANSWER.capped(opts.runtime_s)
    else:
        steer = answer = windows.Window(int(opts.runtime_s), windows.RAMP_S)
    check = windows.Window(max(1, int(min(FLUSH_CHECK_SECONDS, opts.runtime_s))), windows.RAMP_S)
    return steer, (answer if answer != steer else None), check
