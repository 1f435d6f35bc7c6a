"""nvme-cli parsers on recorded outputs."""

from __future__ import annotations

from pathlib import Path

from diskq import proc
from diskq.probe import nvme

FIX = Path(__file__).parent / "fixtures"


def test_id_ctrl_json_volatile_write_cache_present():
    info = nvme.parse_id_ctrl((FIX / "nvme_cli" / "ipa__WDC_PC_SN730_256G__id-ctrl.json").read_text())
    assert info["vwc"] == 7 and info["vwc"] & 1
    assert info["model"] == "WDC PC SN730 SDBQNTY-256G-1001"  # space padding removed
    assert info["firmware"] == "11170101"


def test_id_ctrl_text_no_volatile_write_cache():
    info = nvme.parse_id_ctrl((FIX / "nvme_cli" / "telegraf__INTEL_SSDPE_masked__id-ctrl.txt").read_text())
    assert info["vwc"] == 0
    assert info["model"] == "INTEL SSDPEDABCDEFG"


def test_id_ctrl_on_a_loop_device_has_no_fields():
    info = nvme.parse_id_ctrl((FIX / "nvme_cli" / "debian12__loop__id-ctrl.txt").read_text())
    assert info == {"model": None, "serial": None, "firmware": None, "vwc": None}


def test_get_feature_6_with_and_without_hex_prefix():
    wc = FIX / "write_cache"
    assert nvme.parse_get_feature_6((wc / "t13a__WD_Red_SN700__nvme-get-feature-6_on.txt").read_text()) == "on"
    assert nvme.parse_get_feature_6((wc / "t13a__WD_Red_SN700__nvme-get-feature-6_off.txt").read_text()) == "off"
    assert nvme.parse_get_feature_6((wc / "t13a__WD_Red_SN700__nvme-set-feature-6_off.txt").read_text()) == "off"
    assert nvme.parse_get_feature_6((FIX / "nvme_cli" / "debian12__loop__get-feature-6.txt").read_text()) is None


def test_controller_of_namespace_and_partition():
    assert nvme.controller_of("/dev/nvme0n1") == "/dev/nvme0"
    assert nvme.controller_of("/dev/nvme12n3p4") == "/dev/nvme12"
    assert nvme.controller_of("/dev/sda") == "/dev/sda"


def test_probe_vwc_reports_nvme_clis_error(monkeypatch):
    err = (FIX / "nvme_cli" / "debian12__loop__id-ctrl.txt").read_text()
    monkeypatch.setattr(proc, "run", lambda argv, **kw: proc.Completed(argv, 1, "", err))
    assert nvme.probe_vwc("/dev/loop0") == (None, "nvme id-ctrl: identify controller: Invalid argument")
    good = (FIX / "nvme_cli" / "ipa__WDC_PC_SN730_256G__id-ctrl.json").read_text()
    monkeypatch.setattr(proc, "run", lambda argv, **kw: proc.Completed(argv, 0, good, ""))
    assert nvme.probe_vwc("/dev/nvme0") == (True, None)
