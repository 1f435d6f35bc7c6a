"""Validation replays the adaptive search from a sweep's own figures: a sweep with a step
removed (an interrupted step and its marks, say) or its confirmations cut off is incomplete."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.bench import sweep
from diskq.errors import Interrupted
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run
from diskq.submission.replay import replay_problems

STEER = {"runtime": "4", "ramp_time": "1", "rw": "write"}
ANSWER = {**STEER, "runtime": "7"}


def _point(n: int, iops: float, options: dict) -> Point:
    ms = int(options["runtime"]) * 1000
    return Point(
        numjobs=n,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=round(iops * ms / 1000),
        runtime_ms=ms,
        lat_us=Latency(mean=n * 1e6 / iops),
        fio={"global options": dict(options), "jobs": []},
    )


def bench(
    curve, max_jobs: int = 32, *, confirm_shift=lambda n: 1.0, stop_at: int | None = None, stop_after: int | None = None
) -> Run:
    """A run as ``diskq bench`` records it (``runner._one_run``): ``curve(n)`` is what a short step
    reads, ``confirm_shift(n)`` the factor a longer window reads on top; ``stop_at`` interrupts the
    bench when the search first asks for that job count, ``stop_after`` after that many steps (the
    partial step is not kept: as if its marks and it were removed)."""
    run = Run(write_cache="off")
    steps = []

    def measure(n: int, options=STEER) -> Point:
        if n == stop_at or len(steps) == stop_after:
            raise Interrupted(2)
        steps.append(n)
        p = _point(n, curve(n) * (confirm_shift(n) if options is ANSWER else 1.0), options)
        run.points[:] = [q for q in run.points if q.numjobs != n]
        run.points.append(p)
        return p

    search = sweep.Search(measure, max_jobs, confirm=lambda n: measure(n, ANSWER), provisional=sweep.short_step)
    try:
        search.run()
        run.notes.append(f"search stopped: {search.stop_reason}")
    except Interrupted:
        pass
    finally:
        run.notes[:0] = search.notes
        run.points.sort(key=lambda p: p.numjobs)
    return run


def doc(run: Run, max_jobs: int = 32) -> ResultDocument:
    return ResultDocument(device=Device(), method=Method(fio_params=STEER, max_jobs=max_jobs), runs=[run])


def rising_then_flat(n: int) -> float:
    return 1000.0 * min(n, 10) ** 0.8 if n <= 10 else 1000.0 * 10**0.8 * (1 - 0.02 * (n - 10))


def test_a_complete_sweep_replays_to_the_same_steps():
    run = bench(rising_then_flat)
    assert [p.numjobs for p in run.points] == [1, 2, 4, 8, 12, 13, 14, 16, 32]
    assert replay_problems(doc(run)) == []


def test_a_sweep_whose_interrupted_step_was_removed_is_incomplete():
    run = bench(rising_then_flat, stop_at=16)  # the partial step is not kept here: as if removed
    assert [p.numjobs for p in run.points] == [1, 2, 4, 8]
    (problem,) = replay_problems(doc(run))
    assert problem.field == "result.runs[0].points"
    assert "measures 16 jobs next, and the sweep holds no such step" in problem.message


def test_a_sweep_stopped_during_its_confirmations_is_incomplete():
    run = bench(rising_then_flat)
    # the peak's confirmation removed: its short step back in place, the note gone
    early = _point(12, rising_then_flat(12), STEER)
    run.points[:] = [early if p.numjobs == 12 else p for p in run.points]
    run.notes = [n for n in run.notes if "confirmed at 12 jobs" not in n]
    (problem,) = replay_problems(doc(run))
    assert (
        "the search confirms 12 jobs with the longer window, and this sweep's step at 12 jobs ran the short one"
        in problem.message
    )


def test_one_step_removed_from_the_middle_is_missing():
    run = bench(rising_then_flat)
    run.points[:] = [p for p in run.points if p.numjobs != 4]
    (problem,) = replay_problems(doc(run))
    assert "measures 4 jobs next" in problem.message


def test_a_sweep_of_another_method_or_search_is_not_replayed():
    run = bench(rising_then_flat, stop_at=16)
    explicit = doc(run)
    explicit.method.search = "explicit"
    assert replay_problems(explicit) == []
    older = doc(run)
    older.method.version = 2
    assert replay_problems(older) == []


curves = st.lists(st.floats(min_value=100, max_value=200_000), min_size=12, max_size=12)
shifts = st.lists(st.floats(min_value=0.8, max_value=1.25), min_size=12, max_size=12)


def _pick(values):
    return lambda n: values[min(int(math.log2(n) * 2), len(values) - 1)] * (1 + n * 1e-6)


@settings(max_examples=80, deadline=None)
@given(curves, shifts, st.sampled_from([8, 12, 32, 64]), st.data())
def test_every_complete_sweep_passes_and_every_interrupted_one_with_its_marks_removed_is_refused(
    values, factors, max_jobs, data
):
    curve, shift = _pick(values), _pick(factors)
    run = bench(curve, max_jobs, confirm_shift=shift)
    assert replay_problems(doc(run, max_jobs)) == []
    # the same bench stopped at one of its steps (short or confirmation), the partial step left out
    calls = len(run.points) + len([n for n in run.notes if "confirmed at" in n])
    cut = bench(curve, max_jobs, confirm_shift=shift, stop_after=data.draw(st.integers(0, calls - 1)))
    assert replay_problems(doc(cut, max_jobs)) != []


#: recorded adaptive benches on loop devices: method version 3 (fixed windows) and 4 (answer steps
#: ended by fio's iops_slope detector)
RECORDED = {3: "diskq-adaptive-loop-result.json", 4: "diskq-adaptive-loop-v4-result.json"}


def _recorded(version: int = 3) -> dict:
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "fixtures" / "bench" / RECORDED[version]).read_text())
    assert doc["method"]["version"] == version
    return doc


@pytest.mark.parametrize("version", sorted(RECORDED))
def test_a_recorded_adaptive_bench_replays_and_each_of_its_steps_is_needed(version):
    recorded = _recorded(version)
    assert replay_problems(ResultDocument.model_validate(recorded)) == []
    for gone in (1, 2, 4, 8):
        cut = _recorded(version)
        cut["runs"][0]["points"] = [p for p in cut["runs"][0]["points"] if p["numjobs"] != gone]
        (problem,) = replay_problems(ResultDocument.model_validate(cut))
        assert f"measures {gone} jobs next" in problem.message


@pytest.mark.parametrize("version", sorted(RECORDED))
def test_a_recorded_adaptive_bench_passes_the_whole_validation(tmp_path, version):
    from diskq.database.synthetic import submission, write_submission
    from diskq.submission.validate import validate_file

    path = write_submission(tmp_path / "submissions", submission(_recorded(version)))
    sub, problems = validate_file(path, require_signature=False)
    assert sub is not None and problems == []
