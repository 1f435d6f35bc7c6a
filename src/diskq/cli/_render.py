"""rich rendering of bench progress and results (the only place bench output is drawn)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn
from rich.table import Table
from rich.text import Text

from diskq.analyse import plausibility
from diskq.analyse.noise import CAVEAT
from diskq.bench import narration
from diskq.bench.progress import BenchClock, StepPlan, duration, left_text
from diskq.bench.runner import Listener
from diskq.cli._latency import _us
from diskq.cli._render_sizes import size_label, size_table
from diskq.result import Point, ResultDocument, SizePoint


class _BudgetColumn(ProgressColumn):
    """Bar and time left read from the :class:`BenchClock` at every refresh, so the bar moves with
    time between steps, not only when one ends."""

    def __init__(self, clock: BenchClock):
        super().__init__()
        self.clock = clock
        self.bar = BarColumn(bar_width=24)

    def render(self, task):
        snap = self.clock.snapshot()
        task.completed = round(snap.fraction * 1000)
        row = Table.grid(padding=(0, 1))
        row.add_row(self.bar.render(task), Text(f"{duration(snap.elapsed_s)}, {left_text(snap)}"))
        return row


class BenchProgress(Listener):
    """Progress of a bench. On a terminal: the current step and a bar that fills against the time
    budget (:mod:`diskq.bench.progress`), with the time left, cleared when the bench ends; a line
    per finished step stays above it. Elsewhere (a log, a pipe): one plain line per step, never
    wrapped or cut, and no bar."""

    def __init__(self, console: Console, runtime_s: float, *, clock=None, live: bool | None = None):
        self.console = console
        self.runtime_s = runtime_s
        self.clock = BenchClock(clock) if clock is not None else BenchClock()
        self.live = console.is_terminal if live is None else live
        self.progress = None
        if self.live:
            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                _BudgetColumn(self.clock),
                console=console,
                transient=True,  # the last frame is cleared when the bench ends
            )
        self.task = None
        self.run_label = ""
        self._fdatasync = True
        self._numjobs = 0

    def __enter__(self):
        if self.progress is not None:
            self.progress.start()
            self.task = self.progress.add_task("starting", total=1000)
        return self

    def __exit__(self, *exc):
        self.clock.finish()
        if self.progress is not None:
            self.progress.stop()
        return False

    def _line(self, text: str, style: str | None = None) -> None:
        if self.live:
            self.progress.console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)
        else:  # plain text, whole: a log keeps every step on one line whatever its width
            self.console.file.write(text + "\n")
            self.console.file.flush()

    def note(self, text: str) -> None:
        self._line(f"note: {text}", "yellow")

    def identified(self, device) -> None:
        """What the device database knows about this drive: one short block, never an error."""
        from diskq.database.known import known_lines

        try:
            lines = known_lines(device.model)
        except Exception as exc:  # noqa: BLE001 - a bench never fails for want of database facts
            lines = [f"device database: not read ({exc})"]
        for line in lines:
            self._line(line)

    def run_started(self, index: int, total: int, write_cache: str, mechanism: str | None) -> None:
        how = f" via {mechanism}" if mechanism else ""
        self.run_label = f"cache {write_cache}{how}" + (f" (run {index + 1}/{total})" if total > 1 else "")

    def step_planned(self, plan: StepPlan) -> None:
        self.clock.step_started(plan)

    def step_started(self, numjobs: int, *, fdatasync: bool, eta_s: float | None) -> None:
        self._fdatasync, self._numjobs = fdatasync, numjobs
        kind = "" if fdatasync else " without fdatasync (flush check)"
        if self.progress is not None:
            self.progress.update(self.task, description=f"{self.run_label}: numjobs={numjobs}{kind}")

    def size_step_started(self, block_size: int, *, eta_s: float | None) -> None:
        if self.progress is not None:
            self.progress.update(
                self.task, description=f"{self.run_label}: block-size profile, {size_label(block_size)}"
            )

    def size_step_done(self, point: SizePoint) -> None:
        self.clock.step_done()
        snap = self.clock.snapshot()
        self._line(
            f"  {self.run_label}  size={size_label(point.block_size):<7} {point.iops:>10,.0f} IOPS"
            f" {point.bw_bytes / 1e6:>8,.1f} MB/s"
            + (" (steady state)" if point.steady_state else "")
            + f"  [{duration(snap.elapsed_s)} elapsed, {left_text(snap)}]"
        )

    def step_done(self, point: Point) -> None:
        self.clock.step_done()
        snap = self.clock.snapshot()
        what = "" if self._fdatasync else "  (no fdatasync: flush check)"
        self._line(
            f"  {self.run_label}  numjobs={point.numjobs:<4} {point.iops:>10,.0f} IOPS"
            + (" (steady state)" if point.steady_state else "")
            + what
            + f"  [{duration(snap.elapsed_s)} elapsed, {left_text(snap)}]"
        )

    def sustained_started(self, variant: str, budget) -> None:
        what = f"writing up to {budget.describe()}" if budget.bytes is not None else f"writing for {budget.describe()}"
        if budget.seconds is not None:  # a known length: the bar follows it (the sequential variant may follow)
            self.clock.step_started(
                StepPlan(
                    sync_steps_left=2 if variant == "fdatasync" else 1,
                    check_steps_left=0,
                    runtime_s=budget.seconds,
                    check_s=0,
                    exact=False,
                )
            )
        if self.progress is not None:
            self.progress.update(self.task, description=f"sustained write ({variant}): {what}")
        else:
            self._line(f"  sustained write ({variant}): {what}")

    def sustained_done(self, measured) -> None:
        if measured.budget_s is not None:
            self.clock.step_done()
        cliff = measured.cliff
        found = (
            f"cliff after {cliff.at_bytes / 1e9:,.1f} GB ({cliff.drop_pct:.0f} % lower)"
            if cliff is not None and cliff.found and cliff.at_bytes is not None
            else "no cliff"
        )
        from diskq.units import human_bytes

        self._line(
            f"  sustained write ({measured.variant}): {human_bytes(measured.written_bytes)} in "
            f"{measured.runtime_ms / 1000:,.0f} s, {measured.bw_bytes / 1e6:,.1f} MB/s mean, {found}"
        )


BAR = 20
#: width of the table without its bar column (8 columns of figures, borders and padding)
TABLE_WIDTH = 66


def result_table(doc: ResultDocument, console: Console, said: Iterable[str] = ()) -> None:
    """Per run: numjobs -> IOPS, bandwidth, latencies, the peak marked, and a bar chart; then the
    verdicts and the document's notes, but for those in ``said`` (printed before the run)."""
    dev = doc.device
    title = " ".join(x for x in (dev.model, dev.firmware and f"fw {dev.firmware}", dev.path) if x)
    bar_width = max(6, min(BAR, console.width - TABLE_WIDTH))
    for run in doc.runs:
        table = Table(
            title=f"{title}: write cache {run.write_cache}",
            title_justify="left",
            caption="lat: mean write latency; sync: fdatasync latency (mean, p99, p99.9)",
            caption_justify="left",
        )
        for col in ("jobs", "IOPS", "MB/s", "lat", "sync", "sync p99", "p99.9"):
            table.add_column(col, justify="right", no_wrap=True)
        # the bar and its marks wrap, so the figures never lose a digit (at 80 columns, in a pipe)
        table.add_column("", justify="left", overflow="fold", min_width=bar_width)
        peak = run.peak.numjobs if run.peak else None
        top = max((p.iops for p in run.points), default=0) or 1
        review = plausibility.run_review(run, filesystem=dev.filesystem)
        held = {q.numjobs: q for q in review.held}
        for p in run.points:
            sync = p.sync_lat_us
            bar = "█" * max(1, round(bar_width * p.iops / top))
            table.add_row(
                f"▶ {p.numjobs}" if p.numjobs == peak else str(p.numjobs),
                f"{p.iops:,.0f}",
                f"{p.bw_bytes / 1e6:.1f}",
                _us(p.lat_us.mean),
                _us(sync.mean if sync else None),
                _us(sync.p99 if sync else None),
                _us(sync.p999 if sync else None),
                bar
                + (" (interrupted)" if p.interrupted else "")
                + (" ≠ conflict" if p.numjobs in held and not p.interrupted else ""),
                style="bold" if p.numjobs == peak else None,
            )
        console.print(table)
        for q in held.values():
            console.print(
                f"[bold yellow]≠ conflict[/], {q.numjobs} jobs held out of the class and every verdict: "
                f"{escape(q.reason)}",
                markup=True,
                highlight=False,
            )
        for note in review.observations:
            console.print(f"[cyan]{escape(note)}[/]", markup=True, highlight=False)
        scaling = run.scaling
        if scaling:
            cls = scaling.get("scaling") if isinstance(scaling, dict) else getattr(scaling, "scaling", None)
            desc = scaling.get("description") if isinstance(scaling, dict) else getattr(scaling, "description", None)
            words = f" — {desc}" if desc and desc != cls else ""  # no "asymptotic — asymptotic"
            console.print(f"scaling: [bold]{escape(str(cls))}[/]{escape(words)}", markup=True)
        fc = run.flush_check
        warning = (fc.get("warning") if isinstance(fc, dict) else getattr(fc, "warning", None)) if fc else None
        if warning:
            console.print(f"[bold red]warning[/]: {escape(str(warning))}", markup=True)
        # every sentence about the curve from the points the table above shows
        curve = {p.numjobs: p.iops for p in run.points if not p.interrupted}
        for note in narration.narrate(run.notes, curve, getattr(doc.method, "max_jobs", None)):
            console.print(f"[dim]{escape(note)}[/]", markup=True, highlight=False)
        size_table(run, console, title)
    if doc.sustained:
        from diskq.cli._sustained import print_sustained

        print_sustained(doc.sustained, console)
    if doc.verdicts is not None:
        for line in verdict_lines(doc.verdicts):
            console.print(line, markup=True)
    said = set(said)
    for note in doc.notes:
        if note not in said:
            console.print(f"[dim]{escape(note)}[/]", markup=True)
    if doc.interrupted:
        console.print("[bold yellow]The run was interrupted; the figures above are partial.[/]", markup=True)


def verdict_lines(verdicts) -> list[str]:
    """One line per workload verdict, each with its first reason (rich markup only in the fixed
    words; the verdict's words are escaped); one line for them all when none applies because the
    target was in RAM (the document's note says why, once)."""
    v = verdicts if isinstance(verdicts, dict) else verdicts.model_dump(mode="json")
    if _all_memory_backed(v):
        return [
            "verdicts: [bold]not applicable[/]: the target is memory-backed, so the figures measure RAM, "
            "not a drive (see the note)"
        ]
    lines = []
    ceph = v.get("ceph_waldb") or {}
    if ceph:
        tier = ceph.get("tier")
        lines.append(
            f"Ceph WAL/DB: [bold]{escape(str(tier))}[/] ({escape(_first(ceph))})"
            if tier
            else f"Ceph WAL/DB: {escape(_unjudged(ceph))}"
        )
    osds = v.get("osds_per_device") or {}
    if osds:
        n = osds.get("n")
        if n is None:
            lines.append(f"OSDs per device: {escape(_unjudged(osds))}")
        else:
            shown = "none" if n == 0 else f"at least {n}" if osds.get("limited_by_sweep") else str(n)
            lines.append(f"OSDs per device: [bold]{escape(shown)}[/] ({escape(_first(osds))})")
    etcd = v.get("etcd") or {}
    if etcd:
        passes = etcd.get("passes")
        if passes is None:
            lines.append(f"etcd: {escape(_unjudged(etcd))}")
        else:
            lines.append(f"etcd: [bold]{'passes' if passes else 'fails'}[/] ({escape(_first(etcd))}){_estimated(etcd)}")
    pg = v.get("postgres_wal") or {}
    if pg:
        lines.append(f"PostgreSQL WAL: {escape(_first(pg))}{_estimated(pg)}")
    slog = v.get("zfs_slog") or {}
    if slog:
        tier = slog.get("tier")
        lines.append(
            f"ZFS SLOG: [bold]{escape(str(tier))}[/] ({escape(_first(slog))}){_estimated(slog)}"
            if tier
            else f"ZFS SLOG: {escape(_unjudged(slog))}{_estimated(slog)}"
        )
    caveats = [n[len(CAVEAT) :] for n in v.get("notes") or [] if n.startswith(CAVEAT)]
    if caveats and lines:  # every verdict says it rests on noisy figures, and why follows
        lines = [f"{line} [yellow](noisy run: see caveat)[/]" for line in lines]
        lines += [f"[bold yellow]caveat[/]: {escape(c)}" for c in caveats]
    plp = v.get("power_loss_protection") or {}
    if plp:
        lines += plp_lines(plp)
    return lines


#: How each power-loss-protection verdict is coloured in the terminal.
_PLP_STYLE = {
    "confirmed": "green",
    "likely": "green",
    "unlikely": "yellow",
    "unknown": "dim",
    "degraded": "red",
    "not-applicable": "dim",
}
_ARROW = {"plp": "+", "no_plp": "-", "neutral": "·", "failing": "!"}


def plp_lines(plp) -> list[str]:
    """The power-loss-protection verdict, its reasons, conflicts and evidence, one line each
    (rich markup only in the fixed words; evidence text is escaped)."""
    from rich.markup import escape

    p = plp if isinstance(plp, dict) else plp.model_dump(mode="json")
    verdict = p.get("verdict") or "unknown"
    style = _PLP_STYLE.get(verdict, "bold")
    if p.get("rule") == "not_applicable":  # a loop device, a RAM disk, a file: no drive's protection
        verdict = "not applicable"
    lines = [
        f"power-loss protection: [bold {style}]{escape(str(verdict))}[/] ({escape(_first(p))}; rule {escape(str(p.get('rule')))})"
    ]
    for reason in (p.get("reasons") or [])[1:]:
        lines.append(f"  {escape(reason)}")
    for conflict in p.get("conflicts") or []:
        lines.append(f"  [bold yellow]conflict[/]: {escape(conflict)}")
    for e in p.get("evidence") or []:
        mark = _ARROW.get(e.get("points_to"), "?")
        kind = escape(str(e.get("kind"))) + (f" ({e['strength']})" if e.get("strength") else "")
        line = f"  {mark} {kind}: {escape(e.get('text') or '')}"
        if e.get("points_to") == "failing":
            line = f"  [bold red]{mark} {kind}[/]: {escape(e.get('text') or '')}"
        lines.append(line)
    return lines


def _estimated(verdict: dict) -> str:
    """A mark on a verdict read off the 4 KiB sweep for a workload that writes another size."""
    return (
        " [yellow](estimated from 4 KiB: no size profile)[/]" if verdict.get("basis") == "estimated from 4 KiB" else ""
    )


def _all_memory_backed(v: dict) -> bool:
    from diskq.analyse.memorybacked import MEMORY_BACKED

    keys = ("ceph_waldb", "osds_per_device", "etcd", "postgres_wal", "zfs_slog", "power_loss_protection")
    given = [v[k] for k in keys if v.get(k)]
    return bool(given) and all(_first(g).startswith(f"not applicable: {MEMORY_BACKED}") for g in given)


def _unjudged(verdict: dict) -> str:
    """A verdict without an answer: its reason, which says why (e.g. "not applicable: ...")."""
    reason = _first(verdict)
    return reason if reason.startswith("not applicable") else f"no verdict ({reason})"


def _first(verdict: dict) -> str:
    reasons = verdict.get("reasons") or []
    return reasons[0] if reasons else "no reason given"
