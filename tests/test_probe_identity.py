"""Device identity from recorded smartctl JSON, from a recorded sysfs tree, and from a real loop device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.errors import IdentityError
from diskq.probe import identity
from diskq.probe.identity import decode_exit_status, identity_from_smartctl_json, identity_from_sysfs, serial_hash

from tests.conftest import needs_loop
from tests.test_cache import loop_wb  # noqa: F401 (fixture)

FIX = Path(__file__).parent / "fixtures"
SMART = FIX / "smartctl_json"
SYSFS = str(FIX / "sysfs")


def load(name: str) -> dict:
    return json.loads((SMART / name).read_text())


def test_ata_hdd_identity():
    dev = identity_from_smartctl_json(load("libblockdev__WDC_WD10EFRX-68PJCN0.json"))
    assert dev.model == "WDC WD10EFRX-68PJCN0"
    assert dev.firmware == "82.00A82"
    assert dev.capacity_bytes == 1000204886016
    assert (dev.protocol, dev.media, dev.rotation_rpm) == ("ata", "hdd", 5400)
    assert dev.interface_speed == "1.5 Gb/s"
    assert dev.power_on_hours == 3763 and dev.temperature_c == 25
    assert dev.sources == ["smartctl"]


def test_ata_ssd_wear_and_host_writes_in_32mib_units():
    data = load("sce__INTEL_SSDSC2KB240G8.json")
    dev = identity_from_smartctl_json(data)
    assert (dev.protocol, dev.media, dev.rotation_rpm) == ("ata", "ssd", 0)
    raw = next(a["raw"]["value"] for a in data["ata_smart_attributes"]["table"] if a["id"] == 241)
    assert dev.data_written_bytes == raw * 32 * 1024**2
    assert any("Host_Writes_32MiB" in n for n in dev.notes)


def test_ata_ssd_endurance_used_percent():
    dev = identity_from_smartctl_json(load("smartmontools-go__KINGSTON_SV300S37A240G__a.json"))
    assert dev.model == "KINGSTON SV300S37A240G"
    assert dev.percentage_used == 5


def test_nvme_identity_units_and_media():
    data = load("sce__INTEL_SSDPE2KX020T8.json")
    dev = identity_from_smartctl_json(data)
    log = data["nvme_smart_health_information_log"]
    assert (dev.protocol, dev.media, dev.rotation_rpm) == ("nvme", "ssd", 0)
    assert dev.capacity_bytes == 2000398934016
    assert dev.percentage_used == log["percentage_used"]
    assert dev.data_written_bytes == log["data_units_written"] * 512 * 1000
    # the serial was redacted upstream: a placeholder must not become a hash shared by all drives
    assert dev.serial_hash is None
    assert any("placeholder" in n for n in dev.notes)


def test_nvme_x_output_hashes_the_serial_and_never_shows_it():
    data = load("scrutiny__Samsung_SSD_970_EVO_500GB__x.json")
    dev = identity_from_smartctl_json(data)
    assert dev.serial_hash == serial_hash(data["serial_number"])
    assert data["serial_number"] not in dev.model_dump_json()


def test_scsi_newer_smartctl_model_name():
    dev = identity_from_smartctl_json(load("libblockdev__TOSHIBA_AL15SEB18EQY.json"))
    assert (dev.model, dev.vendor, dev.firmware) == ("TOSHIBA AL15SEB18EQY", "TOSHIBA", "EF06")
    assert (dev.protocol, dev.media, dev.rotation_rpm) == ("scsi", "hdd", 10000)
    assert dev.logical_block_size == 512 and dev.physical_block_size == 4096
    assert dev.interface_speed == "SAS (SPL-4)"


def test_scsi_ssd_endurance_indicator():
    dev = identity_from_smartctl_json(load("libblockdev__HGST_HUSMR3280ASS200.json"))
    assert (dev.protocol, dev.media, dev.rotation_rpm) == ("scsi", "ssd", 0)
    assert dev.percentage_used == 0


def test_scsi_older_vendor_product_fields_on_a_raid_volume():
    data = load("scrutiny__Intel_Raid_1_Volume__scsi_rc4.json")
    assert "scsi_model_name" not in data and "product" in data
    dev = identity_from_smartctl_json(data)
    assert dev.model == f"{data['vendor']} {data['product']}"
    assert dev.protocol == "scsi"
    assert any("RAID volume" in n for n in dev.notes)
    # exit status 4 is bit 2 only: a command failed, the identity is still good
    assert any("exit status 4" in n for n in dev.notes)


def test_raid_passthrough_and_usb_bridge_are_noted():
    mega = identity_from_smartctl_json(load("telegraf__ST6000NM0115__sat+megaraid14_rc4.json"))
    assert mega.model == "ST6000NM0115-1YZ110" and mega.protocol == "ata"
    assert any("RAID controller" in n for n in mega.notes)
    usb = identity_from_smartctl_json(load("scrutiny__Hitachi_HDS721050DLE630__usbjmicron_rc216.json"))
    assert usb.model == "Hitachi HDS721050DLE630" and usb.interface_speed == "1.5 Gb/s"
    assert any("USB bridge" in n for n in usb.notes)
    assert any("DISK FAILING" in n for n in usb.notes)


def test_exit_status_is_decoded_bit_by_bit():
    assert decode_exit_status(0) == []
    assert decode_exit_status(216) == [
        decode_exit_status(8)[0],
        decode_exit_status(16)[0],
        decode_exit_status(64)[0],
        decode_exit_status(128)[0],
    ]
    assert len(decode_exit_status(255)) == 8


@pytest.mark.parametrize(
    "name, expected",
    [
        ("scrutiny__windows_open_failed_rc2.json", "Open failed, Error=5"),
        ("debian12__loop__unable_to_detect_rc1.json", "Unable to detect device type"),
        ("checkmk__sd_card_reader_empty_rc2.json", "device open failed"),
        ("scrutiny__sat_attributes_only_jA.json", "no device identity"),
        ("telegraf__scan_all.json", "no device identity"),
    ],
)
def test_outputs_without_identity_raise_with_smartctls_message(name, expected):
    with pytest.raises(IdentityError) as info:
        identity_from_smartctl_json(load(name))
    assert expected in info.value.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=25), children, max_size=6),
    max_leaves=30,
)
smartctl_keys = st.sampled_from(
    ["model_name", "scsi_model_name", "scsi_vendor", "scsi_product", "vendor", "product", "serial_number",
     "user_capacity", "rotation_rate", "device", "smartctl", "nvme_smart_health_information_log",
     "ata_smart_attributes", "ata_device_statistics", "power_on_time", "temperature", "interface_speed",
     "logical_block_size", "endurance_used", "write_cache", "nvme_namespaces", "firmware_version"]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values, st.dictionaries(smartctl_keys, json_values, max_size=12)))
def test_parser_never_crashes_on_arbitrary_json(data):
    try:
        dev = identity_from_smartctl_json(data)
    except IdentityError:
        return
    assert dev.model


@settings(max_examples=200)
@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip()), st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_serial_hash_is_stable_and_distinguishes_serials(a, b):
    assert serial_hash(a) == serial_hash(f"  {a}\t")
    assert len(serial_hash(a)) == 24
    if a.strip() != b.strip():
        assert serial_hash(a) != serial_hash(b)
    assert serial_hash(a, salt="other") != serial_hash(a)


def test_sysfs_fallback_for_loop_zram_and_virtio():
    loop = identity_from_sysfs("loop0", sysfs_root=SYSFS)
    assert (loop.model, loop.capacity_bytes, loop.write_cache, loop.cache_toggle) == (
        "Linux loop device", 64 * 1024**2, "on", "sysfs")
    assert loop.media == "unknown" and loop.rotation_rpm is None  # loop's rotational=1 means nothing
    zram = identity_from_sysfs("zram0", sysfs_root=SYSFS)
    assert (zram.model, zram.logical_block_size, zram.write_cache) == ("Linux zram device", 4096, "off")
    vda = identity_from_sysfs("vda", sysfs_root=SYSFS)
    assert vda.model == "virtio block device" and vda.vendor is None
    assert vda.physical_block_size == 4096
    assert vda.serial_hash == serial_hash("overlayblk")


def test_sysfs_real_drives_and_partitions():
    sdb = identity_from_sysfs("sdb", sysfs_root=SYSFS)
    # 1000215216 sectors, as hdparm -I reported for this drive
    assert (sdb.model, sdb.protocol, sdb.media, sdb.capacity_bytes) == ("INTEL SSDSC2KW512G8", "ata", "ssd", 1000215216 * 512)
    part = identity_from_sysfs("sdb1", sysfs_root=SYSFS)
    assert part.kind == "partition" and part.model == sdb.model and part.capacity_bytes == 1000213168 * 512
    sda = identity_from_sysfs("sda", sysfs_root=SYSFS)
    assert (sda.model, sda.firmware, sda.media, sda.rotation_rpm) == ("TOSHIBA MG07ACA1", "0101", "hdd", None)
    nvme = identity_from_sysfs("nvme0n1", sysfs_root=SYSFS)
    assert (nvme.protocol, nvme.media, nvme.rotation_rpm) == ("nvme", "ssd", 0)
    with pytest.raises(IdentityError):
        identity_from_sysfs("sdz", sysfs_root=SYSFS)


def test_merge_prefers_smartctl_and_fills_gaps_from_sysfs():
    smart = identity_from_smartctl_json(load("libblockdev__WDC_WD10EFRX-68PJCN0.json"))
    merged = identity.merge(smart, identity_from_sysfs("sda", sysfs_root=SYSFS))
    assert merged.model == "WDC WD10EFRX-68PJCN0"
    assert merged.write_cache == "on" and merged.cache_toggle == "sysfs"
    assert merged.sources == ["smartctl", "sysfs"]


@needs_loop
def test_identify_real_loop_device_falls_back_to_sysfs(loop_wb):  # noqa: F811
    dev_path = loop_wb
    dev = identity.identify(dev_path)
    assert dev.path == dev_path and dev.kind == "disk"
    assert dev.model == "Linux loop device" and dev.capacity_bytes == 64 * 1024 * 1024
    assert "sysfs" in dev.sources and "smartctl" not in dev.sources
    assert any("Unable to detect device type" in n for n in dev.notes)  # smartctl's own words, kept
    assert dev.write_cache == "on" and dev.cache_toggle == "sysfs"
