"""What ``diskq bench`` accepts before it writes anything: options, target paths, refusals with hints."""

from __future__ import annotations

import pytest

from diskq.bench import fio, runner
from diskq.errors import InvalidInput


# -- options -----------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", [float("nan"), float("inf"), -float("inf"), 0.5, 1.5, 20.25, 1e300])
def test_runtime_must_be_whole_finite_seconds(runtime):
    with pytest.raises(InvalidInput, match="--runtime") as info:
        fio.check_runtime(runtime)
    assert info.value.hint
    with pytest.raises(InvalidInput, match="--runtime"):
        runner.plan("/nonexistent-diskq-dir/f.img", runner.BenchOptions(runtime_s=runtime))


@pytest.mark.parametrize("runtime", [1, 2.0, 20, 3600])
def test_whole_runtimes_are_accepted_and_passed_to_fio_as_written(runtime):
    fio.check_runtime(runtime)
    assert fio.base_options(runtime_s=runtime, region_bytes=1 << 20, steady=None)["runtime"] == str(int(runtime))
