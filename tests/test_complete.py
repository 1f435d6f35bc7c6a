"""diskq.submission.complete: every interrupted mark, and every short unmarked step, is a problem."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diskq.bench import fiojson
from diskq.result import Device, Method, ResultDocument, Run
from diskq.submission.complete import asked_runtime_s, incomplete_problems
from tests.conftest import FIXTURES

SS = fiojson.point_from_json(
    fiojson.extract_json((FIXTURES / "fio_json" / "fio-3.33__loop__fdatasync_nj4_ss.json").read_text()), 4
)
CUT = fiojson.point_from_json(
    fiojson.extract_json((FIXTURES / "fio_json" / "fio-3.33__loop__fdatasync_nj4_sigterm.txt").read_text()), 4
)


def test_asked_runtime_reads_fio_durations():
    assert asked_runtime_s(SS.fio) == 20.0 and asked_runtime_s(CUT.fio) == 10.0
    for text, seconds in [("20", 20.0), ("20s", 20.0), ("1m", 60.0), ("500ms", 0.5), ("1h", 3600.0)]:
        assert asked_runtime_s({"jobs": [{"job options": {"runtime": text}}]}) == seconds
    for bad in ({}, {"jobs": []}, {"global options": {"runtime": "soon"}}, {"global options": {"runtime": 20}}):
        assert asked_runtime_s(bad) is None


def _doc(marks: list[bool], run_mark: bool, doc_mark: bool, cut_unmarked: bool) -> ResultDocument:
    points = [SS.model_copy(update={"numjobs": n + 1, "interrupted": m}) for n, m in enumerate(marks)]
    if cut_unmarked:
        points.append(CUT.model_copy(update={"numjobs": len(points) + 1}))
    method = Method(fio_params={"time_based": "1", "runtime": "20"})
    return ResultDocument(
        device=Device(),
        method=method,
        interrupted=doc_mark,
        runs=[Run(write_cache="on", points=points, interrupted=run_mark)],
    )


@given(st.lists(st.booleans(), min_size=1, max_size=6), st.booleans(), st.booleans(), st.booleans())
def test_one_problem_per_mark_and_per_short_step(marks, run_mark, doc_mark, cut_unmarked):
    fields = [p.field for p in incomplete_problems(_doc(marks, run_mark, doc_mark, cut_unmarked))]
    expected = (["result.interrupted"] if doc_mark else []) + (["result.runs[0].interrupted"] if run_mark else [])
    expected += [f"result.runs[0].points[{i}].interrupted" for i, m in enumerate(marks) if m]
    expected += [f"result.runs[0].points[{len(marks)}].runtime_ms"] if cut_unmarked else []
    assert fields == expected  # a complete step ended by the steady-state detector is never one
