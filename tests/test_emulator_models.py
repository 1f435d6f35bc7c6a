"""The emulated drives' models and the benchmarks' ``--backing emulated:MODEL``: pure checks that
need neither root nor FUSE (the drives themselves: tests/test_emulated_drives.py)."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.scratchdev import device_arguments
from emulator.models import load


def test_models_are_data_with_their_calibration():
    models = load()
    assert {"consumer-sata", "dc-sata-plp", "nvme-client-slc-gc", "optane-like", "liar"} <= set(models)
    for name, model in models.items():
        assert model.calibration and model.title, name
        assert {"protocol", "model", "volatile_write_cache"} <= set(model.reports), name
        assert "plp" in model.expect and model.expect.get("scaling"), name
        # what the drive reports agrees with how it behaves
        assert model.reports["volatile_write_cache"] is model.volatile_cache, name
        args = model.daemon_args()
        assert len(args) % 2 == 0 and all(a.startswith("--") for a in args[::2]), args


def test_a_drifting_model_drifts():
    models = load()
    assert models["nvme-client-slc-gc"].params["slc_mib"] > 0 and models["nvme-client-slc-gc"].params["gc_pause_us"] > 0
    assert models["consumer-sata"].params["slow_write_us"] > models["consumer-sata"].params["write_us"]


def test_an_unknown_or_negative_parameter_is_refused(tmp_path):
    bad = tmp_path / "models.toml"
    bad.write_text('[x]\ntitle = "t"\ncalibration = "c"\nvolatile_cache = true\nhonest = true\nflush_ms = 3\n')
    with pytest.raises(ValueError, match="unknown parameters: flush_ms"):
        load(bad)
    bad.write_text('[x]\ntitle = "t"\ncalibration = "c"\nvolatile_cache = true\nhonest = true\nwrite_us = -1\n')
    with pytest.raises(ValueError, match="negative"):
        load(bad)


def test_backing_takes_an_emulated_model_by_name():
    ap = argparse.ArgumentParser()
    device_arguments(ap)
    assert ap.parse_args(["--backing", "emulated:liar"]).backing == "emulated:liar"
    assert ap.parse_args([]).backing == "disk"
    with pytest.raises(SystemExit):
        ap.parse_args(["--backing", "emulated:no-such-drive"])
    with pytest.raises(SystemExit):
        ap.parse_args(["--backing", "tape"])
