"""The step windows and fio's steady-state detector: how long each step of a bench measures.

Every step first writes a ramp fio leaves out of its figures (``--ramp_time=1``), then a window
set by the step's role (:class:`Window`); :func:`diskq.bench.fio.window_options` turns one into
fio's options.

Method version 4 measures the steps that only steer the search over a fixed 4 s window after that
ramp, and the steps the document answers with over at least 7 s: while the least-squares slope of
the last 7 one-second IOPS is steeper than 1 % of their mean per second, the step goes on, up to
19 s (with the ramp, the protocol's 20 s step). A step whose rate still falls (or climbs) at the
end of 7 s measured the start of a regime, not the step's mean, and read high at the peak
(``benchmarks/results.md``, 'Lean at the peak' and 'Qualification time'). Version 3 measured
every answer step over a fixed 7 s window. Versions 1 and 2 ended steps with fio's steady-state detector on its ``iops``
criterion (:class:`SteadyState`, still used by the block-size profile); on a device whose
one-second IOPS wander, the detector either ran the full 20 s or ended on a stretch that was not
the plateau.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SteadyState:
    """fio's steady-state detector: stop a step once IOPS stay within ``tolerance_pct`` of
    their mean over ``window_s`` seconds, measured after ``ramp_s`` seconds (``criterion``
    ``iops``), or once their least-squares slope over the window is below ``tolerance_pct`` of
    the mean per second (``iops_slope``). :mod:`diskq.bench.steady` replays both offline."""

    tolerance_pct: float = 5.0
    window_s: int = 3
    ramp_s: int = 1
    criterion: str = "iops"

    def options(self) -> dict[str, str]:
        return {
            "ss": f"{self.criterion}:{self.tolerance_pct:g}%",
            "ss_dur": f"{self.window_s}s",
            "ss_ramp": f"{self.ramp_s}s",
        }

    def describe(self) -> str:
        """``iops:5% over 3 s after a 1 s ramp``."""
        return f"{self.criterion}:{self.tolerance_pct:g}% over {self.window_s} s after a {self.ramp_s} s ramp"

    @property
    def shortest_s(self) -> int:
        """The shortest step this detector can end: the ramp and one full window."""
        return self.ramp_s + self.window_s


@dataclass(frozen=True)
class Window:
    """A fixed-length step: fio writes ``ramp_s`` seconds it leaves out of every figure
    (``--ramp_time``), then ``measure_s`` seconds its figures cover (``--runtime``). The device
    is written for both: :attr:`device_s`."""

    measure_s: int
    ramp_s: int = 1
    #: a settling window (method version 4's answer steps): after ``measure_s`` seconds the step
    #: goes on while the slope of its last ``measure_s`` one-second IOPS is steeper than
    #: ``settle_pct`` of their mean per second (fio's ``iops_slope`` detector), up to ``cap_s``
    #: measured seconds; fio's figures cover every measured second
    settle_pct: float | None = None
    cap_s: int | None = None

    @property
    def settles(self) -> bool:
        return self.settle_pct is not None and self.cap_s is not None and self.cap_s > self.measure_s

    @property
    def runtime_s(self) -> int:
        """fio's ``--runtime``: the window, or the cap of a settling one."""
        return self.cap_s if self.settles else self.measure_s  # type: ignore[return-value]

    @property
    def device_s(self) -> int:
        """The longest the step writes: its ramp and its runtime."""
        return self.ramp_s + self.runtime_s

    def capped(self, runtime_s: float) -> Window:
        """This window, no longer than ``--runtime`` (whole seconds, at least 1)."""
        limit = max(1, int(runtime_s))
        if not self.settles:
            return Window(min(self.measure_s, limit), self.ramp_s)
        cap = min(self.cap_s, limit)  # type: ignore[type-var]
        if cap <= self.measure_s:
            return Window(cap, self.ramp_s)
        return Window(self.measure_s, self.ramp_s, self.settle_pct, cap)

    def detector(self) -> SteadyState | None:
        """fio's ``iops_slope`` detector that ends a settling window, counted from the ramp's end."""
        if not self.settles:
            return None
        return SteadyState(
            tolerance_pct=self.settle_pct,
            window_s=self.measure_s,
            ramp_s=0,  # type: ignore[arg-type]
            criterion="iops_slope",
        )

    def describe(self) -> str:
        """``4 s after a 1 s ramp``, or for a settling window ``7 s after a 1 s ramp, longer while
        the IOPS still trend by more than 1 % a second, up to 19 s``."""
        text = f"{self.measure_s} s after a {self.ramp_s} s ramp"
        if self.settles:
            text += (
                f", longer while the IOPS still trend by more than {self.settle_pct:g} % a second, up to {self.cap_s} s"
            )
        return text


#: the first second of every sweep step, left out of its figures: a slow or fast start weighs a
#: fifth of a 5 s step but a twentieth of the protocol's 20 s step (benchmarks/results.md)
RAMP_S = 1
#: the steps that only steer the search (which numjobs to measure next)
STEER = Window(measure_s=4, ramp_s=RAMP_S)
#: the steps whose figures the document answers with: the 1-job point, the peak, the points the
#: OSD count turns on. At least 7 s after the 1 s ramp, and longer while the rate still trends
#: (method version 4): replayed over 26 recorded 20 s steps at 16 and 32 jobs, the fixed 7 s
#: window read above the step's mean in 16 and below in 10 (median 1.031); ended by a slope of
#: 1 % a second, 14 above and 11 below (median 1.008), 9.9 s measured on average
#: (benchmarks/results.md, 'Lean at the peak: settling answer steps')
ANSWER = Window(measure_s=7, ramp_s=RAMP_S, settle_pct=1.0, cap_s=19)
#: a fixed 7 s window after the ramp: the answer steps of method version 3, and every step of the
#: block-size profile (version 2)
FIXED_ANSWER = Window(measure_s=7, ramp_s=RAMP_S)

#: the detector of the steps that steered the search in method versions 1 and 2
NAVIGATION = SteadyState()
#: the detector of the answer steps of method versions 1 and 2, and of the block-size profile's
#: steps: a window long enough that a slow ramp or a drift shows up in it (benchmarks/results.md)
CONFIRMATION = SteadyState(tolerance_pct=5.0, window_s=5, ramp_s=2)
