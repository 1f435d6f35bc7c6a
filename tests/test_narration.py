"""The bench's words agree with its table: every sentence about the curve (why the sweep ended,
which point was confirmed as the peak) is made from the points the table shows, on recorded
results (tests/fixtures/bench, sources in its SOURCES.md) and on a search whose confirmations
move the peak."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from diskq.bench import narration, sweep
from diskq.cli._render import result_table
from diskq.result import Latency, Point, ResultDocument

BENCH = Path(__file__).parent / "fixtures" / "bench"
RECORDED = sorted(BENCH.glob("diskq-*-result.json"))


def _doc(path: Path, notes: dict[str, list[str]] | None = None) -> ResultDocument:
    data = json.loads(path.read_text())
    for run in data["runs"]:
        run["notes"] = [*run.get("notes", []), *(notes or {}).get(run["write_cache"], [])]
    return ResultDocument.model_validate(data)


def _shown(doc: ResultDocument, run: int = 0) -> str:
    """What the bench prints for one run of the document (its table and its notes)."""
    one = doc.model_copy(update={"runs": [doc.runs[run]], "verdicts": None, "notes": [], "sustained": []})
    console = Console(width=400, record=True, force_terminal=False, color_system=None)
    result_table(one, console)
    return console.export_text()


def _agrees(text: str, curve: dict[int, float]) -> None:
    """Each sentence about the curve in ``text`` holds for ``curve``."""
    best = narration.peak(curve)
    for m in re.finditer(r"IOPS (fell|flattened) at ([\d, and]+) jobs? \(([^)]*) vs (\d+)\)", text):
        named = [int(n) for n in re.findall(r"\d+", m.group(2))]
        assert int(m.group(4)) == best and named == sorted(n for n in curve if n > best)
        for n, change in zip(named, re.findall(r"[-+][\d.]+", m.group(3)), strict=False):
            assert float(change) == pytest.approx((curve[n] / curve[best] - 1) * 100, abs=0.06)
    for m in re.finditer(r"peak confirmed at (\d+) jobs", text):
        assert int(m.group(1)) == best
    for m in re.finditer(r"the peak is at (\d+) jobs?", text):
        assert int(m.group(1)) == best
    if "with IOPS still rising" in text:
        assert best == max(curve)


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_recorded_results_say_what_their_tables_show(path):
    doc = _doc(path)
    for i, run in enumerate(doc.runs):
        _agrees(_shown(doc, i), {p.numjobs: p.iops for p in run.points if not p.interrupted})


def test_a_stale_turn_over_a_rising_table_is_said_from_the_table():
    """A recorded sweep that rises to its last step (4,916 to 17,826 IOPS at 8 jobs), with the note a
    search that turned on two short steps would have left: the bench says what the table shows."""
    path = BENCH / "diskq-adaptive-loop-v4-result.json"
    stale = "search stopped: IOPS fell at 4 and 8 jobs (-3.1 %, -8.0 % vs 2)"
    doc = _doc(path, {"on": [stale]})
    text = _shown(doc)
    assert "IOPS fell at 4 and 8 jobs" not in text
    assert "search stopped: reached --max-jobs 8 with IOPS still rising" in text
    _agrees(text, {p.numjobs: p.iops for p in doc.runs[0].points})


def test_a_peak_confirmed_where_the_table_has_no_peak_names_where_it_is():
    """The recorded noisy sweep peaks at 2 jobs; a confirmation note for 3 jobs (then the best) must
    not read 'peak confirmed at 3 jobs' over it."""
    path = BENCH / "diskq-noisy-loop-result.json"
    note = "peak confirmed at 3 jobs with the longer window: 2,100 IOPS after 4.0 s, then 1,990 IOPS after 7.0 s"
    doc = _doc(path, {"on": [note]})
    text = _shown(doc)
    assert "peak confirmed at 3 jobs" not in text
    assert "3 jobs, then the best point, measured again with the longer window: 2,100 IOPS" in text
    assert "the peak is at 2 jobs (2,033 IOPS)" in text
    _agrees(text, {p.numjobs: p.iops for p in doc.runs[0].points})


def _measure(table: dict[int, float]):
    def measure(n: int) -> Point:
        return Point(numjobs=n, iops=table[n], bw_bytes=table[n] * 4096, total_ios=1, runtime_ms=1, lat_us=Latency())

    return measure


def test_a_confirmation_that_moves_the_peak_leaves_a_stop_reason_that_agrees():
    """Short steps at 4 and 8 jobs read low and the search turns; the point deciding the OSD count,
    8 jobs, measured again with the longer window reads 84,018: the table rises to it, and so do the words."""
    short = {1: 30000, 2: 52000, 3: 50500, 4: 45000, 8: 40000}
    longer = {1: 30000, 2: 50000, 3: 50500, 4: 45000, 8: 84018}
    s = sweep.Search(
        _measure(short), 8, confirm=_measure(longer), decisive=lambda curve: [8], provisional=sweep.short_step
    )
    points = s.run()
    curve = {p.numjobs: p.iops for p in points}
    assert sweep.peak_of(points).numjobs == 8 and curve[8] == 84018
    assert "fell at 4 and 8" not in s.stop_reason
    assert s.stop_reason == "reached --max-jobs 8 with IOPS still rising"
    shown = narration.narrate(s.notes + [f"search stopped: {s.stop_reason}"], curve, 8)
    assert not any(n.startswith("peak confirmed at 2 jobs") for n in shown)
    _agrees("\n".join(shown), curve)


@given(st.dictionaries(st.integers(1, 64), st.floats(1, 1e6), min_size=1, max_size=12))
def test_stop_words_only_name_what_the_curve_shows(curve):
    words = narration.stop_words(curve, max(curve))
    _agrees(words, curve)
    best = narration.peak(curve)
    assert (best == max(curve)) == ("still rising" in words)
