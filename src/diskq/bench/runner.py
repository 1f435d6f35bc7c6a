"""One ``diskq bench``, start to end: plan (target, safety), then execute (identity, a sweep per
write-cache state, the flush-honesty step, the block-size profile where asked for
(:mod:`diskq.bench.sizes`), analysis), restoring every setting on every exit path.

The CLI calls :func:`diskq.bench.planning.plan`, asks the user to confirm, then calls
:func:`execute` with a :class:`Listener` that draws progress. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os

from diskq import __version__, signals
from diskq.bench import deadline, fio, sizes, sweep, windows
from diskq.bench.planning import Plan, step_windows
from diskq.bench.progress import StepPlan, StepsLeft
from diskq.bench.sustained import Budget
from diskq.bench.target import Target, create_file, filesystem_of, region_bytes, remove_created
from diskq.errors import CacheError, DiskqError, Interrupted, StepCutShort
from diskq.result import Device, Method, Point, ResultDocument, Run, SizePoint, SizeProfile, Sustained


class Listener:
    """Progress callbacks; the default does nothing. The CLI draws a rich display from them.

    Before each step, :meth:`step_planned` says what may still come (a
    :class:`diskq.bench.progress.StepPlan`, this step included); ``eta_s`` of
    :meth:`step_started` is the worst case of the fio time left, without overheads."""

    def note(self, text: str) -> None: ...

    def identified(self, device: Device) -> None:
        """The drive is identified, before anything is measured (the CLI says what the device
        database knows about it)."""

    def step_planned(self, plan: StepPlan) -> None: ...

    def run_started(self, index: int, total: int, write_cache: str, mechanism: str | None) -> None: ...

    def step_started(self, numjobs: int, *, fdatasync: bool, eta_s: float | None) -> None: ...

    def step_done(self, point: Point) -> None: ...

    def size_step_started(self, block_size: int, *, eta_s: float | None) -> None:
        """A step of the block-size profile starts (after :meth:`step_planned`)."""

    def size_step_done(self, point: SizePoint) -> None: ...

    def sustained_started(self, variant: str, budget: Budget) -> None: ...

    def sustained_done(self, measured: Sustained) -> None: ...


def cache_states(mode: str, current: str, can_toggle: bool, reason: str | None) -> list[str]:
    """The write-cache states to measure, in order. ``auto`` is ``both`` where the cache can be
    switched and ``keep`` where it cannot. ``both`` measures the current state first."""
    if mode == "auto":
        mode = "both" if can_toggle else "keep"
    if mode == "keep":
        return [current]
    if not can_toggle:
        raise CacheError(
            f"cannot switch the write cache: {reason or 'no mechanism for this device'}",
            hint="run with --cache keep to measure it as it is",
        )
    if mode in ("on", "off"):
        return [mode]
    other = {"on": "off", "off": "on"}
    return [current, other[current]] if current in other else ["off", "on"]


def _identify(target: Target, path: str) -> Device:
    from diskq.probe import identity

    if target.is_block:
        device = identity.identify(path)
    else:
        fs, source = filesystem_of(os.path.dirname(os.path.abspath(path)))
        device = Device()
        if source and source.startswith("/dev/"):
            with contextlib.suppress(DiskqError, OSError):
                device = identity.identify(source)
        device = device.model_copy(update={"filesystem": fs, "backing_device": source})
        device.notes.append("file mode: figures include the filesystem and the device under it")
    return device.model_copy(update={"path": path, "kind": target.kind})


def execute(plan: Plan, listener: Listener | None = None) -> ResultDocument:
    """Run the bench described by ``plan``; every setting is restored before this returns.

    Interrupted by SIGINT, SIGTERM or SIGHUP, it still returns the document, with
    ``doc.interrupted`` set and the partial points kept. Stopped by a domain error (fio failed,
    the cache could not be switched), it raises that error with the partial document attached
    as ``exc.document``, so the caller can keep what was measured.
    """
    from diskq.probe import cache, cacheguard, journal

    listener = listener or Listener()
    opts, target = plan.options, plan.target
    steer, answer, check = step_windows(opts)
    sync_opts = fio.window_options(steer, region_bytes=plan.region_bytes)
    confirm_opts = fio.window_options(answer, region_bytes=plan.region_bytes) if answer is not None else None
    check_opts = fio.window_options(check, region_bytes=plan.region_bytes, fdatasync=False)
    doc = ResultDocument(
        device=Device(path=plan.path, kind=target.kind),
        method=Method(
            fio_version=fio.installed_version(),
            fio_params=confirm_opts if (opts.jobs and confirm_opts is not None) else sync_opts,
            search="explicit" if opts.jobs else "adaptive",
            runtime_s=opts.runtime_s,
            max_jobs=opts.highest_jobs,
            kernel=os.uname().release,
            diskq_version=__version__,
        ),
        notes=list(plan.notes),
    )
    failure: DiskqError | None = None
    sustaining = False  # the sweeps are over and the sustained write runs
    clock = deadline.Clock(floor_s=opts.step_margin_s)  # every fio run's deadline, from the overhead seen
    with signals.interruptible():
        try:
            doc.device = _identify(target, plan.path)
            listener.identified(doc.device)
            control = cache.detect(plan.path if target.is_block else "", protocol=doc.device.protocol)
            if not target.is_block:
                control.can_toggle = False  # a file's "cache" is the filesystem's; leave it alone
            states = cache_states(opts.cache, control.state, control.can_toggle, control.reason)
            doc.method.cache_states = list(states)  # what --cache promised: validation holds the runs to it
            if control.can_toggle and any(state != control.state for state in states):
                journal.Journal().check_device(control.device)  # a damaged entry: its original may be lost
            if control.note:
                doc.notes.append(control.note)
            profile = _size_plan(plan, doc.device) if "sizes" in opts.profiles else None
            if target.kind == "file" and not target.existed:
                create_file(target)
            per_run = len(opts.jobs) if opts.jobs else sweep.max_steps(opts.highest_jobs, opts.refine_budget)
            steps = StepsLeft(
                runs_left=len(states),
                per_run_max=per_run,
                flush_check=opts.flush_check,
                runtime_s=(answer or steer).device_s,
                check_s=check.device_s,
                exact=bool(opts.jobs),
                sizes_per_run=len(profile[0]) if profile else 0,
                size_s=sizes.window(runtime_s=opts.runtime_s, short_steps=opts.steady_state).device_s,
            )
            doc.notes.append(_window_note(steer, answer, bool(opts.jobs)))
            for index, state in enumerate(states):
                run = Run(write_cache=state, cache_mechanism=control.mechanism)
                doc.runs.append(run)
                steps.runs_left -= 1
                steps.this_run_left, steps.check_pending = per_run, opts.flush_check
                steps.this_run_sizes_left = steps.sizes_per_run
                listener.run_started(index, len(states), state, control.mechanism)
                _one_run(
                    run,
                    control,
                    state,
                    plan,
                    sync_opts,
                    confirm_opts,
                    check_opts,
                    steps,
                    listener,
                    cacheguard,
                    journal,
                    profile,
                    clock,
                )
            budget = opts.sustain_budget
            if budget is not None:  # every cache state is restored by now: the device as it was found
                sustaining = True
                _sustained(doc, plan, control, budget, listener, clock)
        except Interrupted as exc:
            _stopped(doc, exc, sweeping=not sustaining)
        except DiskqError as exc:
            failure = exc
            doc.interrupted = True  # the bench did not finish: the document must say so
            if doc.runs and not sustaining:
                doc.runs[-1].interrupted = True
            doc.notes.append(f"stopped by an error: {exc.message}; partial results kept")
        finally:
            try:
                with signals.critical():
                    remove_created(target)
            except Interrupted as exc:  # a signal held while the test file was removed
                _stopped(doc, exc)
    _annotate(doc)
    if failure is not None:
        failure.document = doc
        raise failure
    return doc


def _stopped(doc: ResultDocument, exc: Interrupted, *, sweeping: bool = True) -> None:
    if doc.interrupted:
        return
    doc.interrupted = True
    if doc.runs and sweeping:
        doc.runs[-1].interrupted = True
    doc.notes.append(f"stopped early: {exc.message}; partial results kept")


def _window_note(steer: windows.Window, answer: windows.Window | None, explicit: bool) -> str:
    """How long each step measured, in the document's notes."""
    ramp = "; fio leaves the ramp out of its figures"
    if answer is None:
        return f"step windows: every step measures {steer.describe()}{ramp}"
    if explicit:
        return f"step windows: every step measures {answer.describe()}{ramp}"
    return (
        f"step windows: the steps that steer the search measure {steer.describe()} (method.fio_params); "
        f"the 1-job point, the peak and the points the OSD count turns on measure {answer.describe()}{ramp}"
    )


def _size_plan(plan: Plan, device: Device) -> tuple[list[int], dict[str, str], list[str]]:
    """The block-size profile's sizes, common fio options and notes on the sizes left out. Its
    steps write in one region from the start of the target (the first GiB at most): the first job's
    region of the sweep, or more of the target when the sweep split it among many jobs."""
    opts = plan.options
    region = region_bytes(plan.target.capacity_bytes, 1)
    # a file's direct writes follow the filesystem's block rules, not the device's: 4 KiB up only
    lbs = device.logical_block_size if plan.target.is_block else None
    block_sizes, notes = sizes.block_sizes(lbs, region)
    if not plan.target.is_block and notes and notes[0].startswith("512 B"):
        notes[0] = "512 B left out: file mode (the filesystem may refuse direct writes below its block size)"
    common = sizes.options(runtime_s=opts.runtime_s, region_bytes=region, short_steps=opts.steady_state)
    return block_sizes, common, notes


def _size_profile(run: Run, plan: Plan, profile, steps: StepsLeft, listener: Listener, clock: deadline.Clock) -> None:
    """The block-size profile of this cache state, smallest size first, into ``run.sizes``. An
    interrupted step keeps fio's partial figures, marked, and marks the profile."""
    block_sizes, common, notes = profile
    run.sizes = SizeProfile(method=sizes.method(common), notes=list(notes))
    try:
        for size in block_sizes:
            step_plan = steps.plan(fdatasync=True, size_step=True)
            listener.step_planned(step_plan)
            listener.size_step_started(size, eta_s=step_plan.eta_s())
            try:
                point = sizes.run_step(plan.path, size, common, clock=clock)
            except (Interrupted, StepCutShort) as exc:
                partial = getattr(exc, "partial", None)
                if isinstance(partial, SizePoint):
                    run.sizes.points.append(partial.model_copy(update={"interrupted": True}))
                raise
            finally:
                steps.this_run_sizes_left = max(steps.this_run_sizes_left - 1, 0)
            run.sizes.points.append(point)
            listener.size_step_done(point)
    except BaseException:  # stopped anywhere before its last size: the profile is partial
        run.sizes.interrupted = True
        raise


def _one_run(
    run,
    control,
    state,
    plan,
    sync_opts,
    confirm_opts,
    check_opts,
    steps,
    listener,
    cacheguard,
    journal,
    profile=None,
    clock: deadline.Clock | None = None,
) -> None:
    """One sweep at one cache state, the cache switched for it and restored afterwards; then the
    block-size profile (``profile``, from :func:`_size_plan`) in the same state."""
    opts = plan.options
    guard = cacheguard.CacheGuard(control, journal.Journal()) if control.can_toggle else contextlib.nullcontext()
    with guard:
        original = control.state
        if control.can_toggle and state != original:
            guard.set(state)
            run.cache_changed = True
            run.notes.append(
                f"write cache switched {original} -> {state} with {control.mechanism}; restored afterwards"
            )

        search = None

        def measure(numjobs: int, options=sync_opts) -> Point:
            fdatasync = options is not check_opts
            if fdatasync:
                steps.this_run_left = search.steps_left_max() if search is not None else steps.this_run_left
            step_plan = steps.plan(fdatasync=fdatasync)
            listener.step_planned(step_plan)
            listener.step_started(numjobs, fdatasync=fdatasync, eta_s=step_plan.eta_s())
            try:
                point = fio.run_step(plan.path, numjobs, options, clock=clock)
            except (Interrupted, StepCutShort) as exc:
                partial = getattr(exc, "partial", None)
                if partial is not None and fdatasync and all(p.numjobs != numjobs for p in run.points):
                    run.points.append(partial)  # an interrupted confirmation keeps the step it confirmed
                raise
            finally:
                if fdatasync:
                    steps.this_run_left = max(steps.this_run_left - 1, 0)
                else:
                    steps.check_pending = False
            if fdatasync:
                # a confirmation replaces the early-ended step of the same numjobs
                run.points[:] = [p for p in run.points if p.numjobs != numjobs]
                run.points.append(point)
            listener.step_done(point)
            return point

        def confirm(numjobs: int) -> Point:
            return measure(numjobs, confirm_opts)

        try:
            if opts.jobs:
                sweep.explicit(confirm if confirm_opts is not None else measure, opts.jobs)
            else:
                search = sweep.Search(
                    measure,
                    opts.highest_jobs,
                    refine_budget=opts.refine_budget,
                    confirm=confirm if confirm_opts is not None else None,
                    decisive=_osd_boundary(),
                    provisional=sweep.short_step,
                )
                try:
                    search.run()
                finally:  # an interrupted search still names the early steps its confirmations replaced
                    run.notes.extend(search.notes)
                steps.this_run_left = 0  # the search is over: what it did not take is dropped
                if search.stop_reason:
                    run.notes.append(f"search stopped: {search.stop_reason}")
            if opts.flush_check:
                run.nosync = measure(1, check_opts)
            if profile is not None:
                _size_profile(run, plan, profile, steps, listener, clock or deadline.Clock())
        finally:
            run.points.sort(key=lambda p: p.numjobs)
            run.peak = sweep.peak_of(run.points)


def _osd_boundary():
    """The points the OSDs-per-device verdict turns on, for the search to confirm like the peak."""
    from diskq.analyse import criteria, osds

    demand = osds.demand_iops(criteria.load()["osds_per_device"])
    return lambda curve: osds.deciding(curve, demand)


def _sustained(
    doc: ResultDocument, plan: Plan, control, budget: Budget, listener: Listener, clock: deadline.Clock
) -> None:
    """The sustained write, after every sweep, with the write cache as the device was found:
    the fdatasync variant, then the sequential one if the first found no cliff. An interrupted
    or cut-short write keeps what fio measured, marked interrupted."""
    from diskq.analyse.cliff import find_cliff
    from diskq.bench import sustained

    span = sustained.region(plan.target.capacity_bytes)
    for variant in sustained.VARIANTS:
        listener.sustained_started(variant.name, budget)
        try:
            measured = sustained.run(
                plan.path, variant, budget, span, write_cache=control.state, mechanism=control.mechanism, clock=clock
            )
        except (Interrupted, StepCutShort) as exc:
            partial = getattr(exc, "partial", None)
            if partial is not None:
                doc.sustained.append(partial)
            raise
        measured.cliff = find_cliff(measured.bw_samples, measured.sample_interval_ms)
        doc.sustained.append(measured)
        listener.sustained_done(measured)
        if measured.cliff.found:
            break


def _annotate(doc: ResultDocument) -> None:
    """Scaling class, flush check and verdicts from the analysis stage."""
    from diskq.analyse import annotate

    annotate(doc)
