"""Device identity from recorded smartctl JSON, from a recorded sysfs tree, and from a real loop device."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.errors import IdentityError
from diskq.probe import identity, smartvalues, sysfs
from diskq.probe.identity import identity_from_sysfs
from diskq.probe.serialhash import serial_hash
from diskq.probe.smartctl import decode_exit_status, identity_from_smartctl_json
from tests.conftest import needs_loop

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
    # `-a` output has no phy log: the transport is not a link rate
    assert dev.interface_speed is None
    assert "SCSI transport: SAS (SPL-4)" in dev.notes


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


def test_a_dell_boss_virtual_disk_is_said_to_be_one_and_no_drive():
    """``DELLBOSS VD`` speaks ATA, so no SCSI RAID rule sees it: its model names the card (Dell KB
    000177584), whose virtual disk is two M.2 drives in RAID 1 by default."""
    from diskq.analyse.plp import evaluate_device

    dev = identity_from_smartctl_json(load("checkmk__DELLBOSS_VD__rc4.json"))
    assert (dev.model, dev.protocol) == ("DELLBOSS VD", "ata")
    assert any(n.startswith("this is a Dell BOSS card's virtual disk") for n in dev.notes)
    verdict = evaluate_device(dev)
    assert verdict.rule == "not_applicable" and "RAID controller's volume (DELLBOSS VD)" in verdict.reasons[0]


def test_raid_passthrough_and_usb_bridge_are_noted():
    mega = identity_from_smartctl_json(load("telegraf__ST6000NM0115__sat+megaraid14_rc4.json"))
    assert mega.model == "ST6000NM0115-1YZ110" and mega.protocol == "ata"
    assert any("RAID controller" in n for n in mega.notes)
    usb = identity_from_smartctl_json(load("scrutiny__Hitachi_HDS721050DLE630__usbjmicron_rc216.json"))
    assert usb.model == "Hitachi HDS721050DLE630" and usb.interface_speed == "1.5 Gb/s"
    assert any("USB bridge" in n for n in usb.notes)
    assert any("DISK FAILING" in n for n in usb.notes)


def attr(data: dict, attr_id: int) -> dict:
    return next(a for a in data["ata_smart_attributes"]["table"] if a["id"] == attr_id)


MiB = 1024**2
GiB = 1024**3


@pytest.mark.parametrize(
    "name, used, written, wear_source, written_source",
    [
        # Micron: 202 raw 0 = 0 % used (normalized 100); 246 counts 512-byte LBAs
        (
            "sce__Micron_5300_MTFDDAK3T8TDS.json",
            0,
            400292112400 * 512,
            "202 Percent_Lifetime_Remain",
            "246 Total_LBAs_Written",
        ),
        # Samsung: 177 normalized 91 = 91 % life left
        (
            "sce__SAMSUNG_MZ7WD240HAFV-00003.json",
            9,
            216456537880 * 512,
            "177 Wear_Leveling_Count",
            "241 Total_LBAs_Written",
        ),
        # not in smartctl's database: 177 has smartctl's default name, the model still says Samsung
        ("sce__SAMSUNG_MZ7L3480HCHQ-00A07.json", 2, 1304884573 * 512, "177 Wear_Leveling_Count", "generic default"),
        # Intel: 233 normalized 15 = 15 % life left; 241 in 32 MiB units
        (
            "sce__INTEL_SSDSC2BB016T4.json",
            85,
            62594010 * 32 * MiB,
            "233 Media_Wearout_Indicator",
            "241 Host_Writes_32MiB",
        ),
        (
            "sce__INTEL_SSDSC2KB240G8.json",
            12,
            2575247 * 32 * MiB,
            "233 Media_Wearout_Indicator",
            "241 Host_Writes_32MiB",
        ),
        ("libblockdev__INTEL_SSDSC2BB120G4L.json", 0, 0, "233 Media_Wearout_Indicator", "241 Total_LBAs_Written"),
        # SandForce: smartctl's own endurance figure first; 241 counts GiB
        (
            "smartmontools-go__KINGSTON_SV300S37A240G__a.json",
            5,
            20878 * GiB,
            "endurance_used",
            "241 Lifetime_Writes_GiB",
        ),
    ],
)
def test_ata_ssd_wear_and_data_written_from_recorded_attributes(name, used, written, wear_source, written_source):
    dev = identity_from_smartctl_json(load(name))
    assert (dev.percentage_used, dev.data_written_bytes) == (used, written)
    assert any(n.startswith("wear from") and wear_source in n for n in dev.notes), dev.notes
    assert any(n.startswith("data written from") and written_source in n for n in dev.notes), dev.notes


def test_ata_ssd_life_left_231_when_smartctl_gives_no_endurance_figure():
    data = load("smartmontools-go__KINGSTON_SV300S37A240G__a.json")
    assert attr(data, 231)["value"] == 95  # raw is 4294967296 here: not a percentage
    del data["endurance_used"]
    dev = identity_from_smartctl_json(data)
    assert dev.percentage_used == 5
    assert any("231 SSD_Life_Left" in n for n in dev.notes)
    attr(data, 231)["raw"]["value"] = 50  # a raw percentage that contradicts the normalized one
    dev = identity_from_smartctl_json(data)
    assert dev.percentage_used is None
    assert any("disagree" in n for n in dev.notes)


def test_micron_202_raw_is_used_and_must_agree_with_the_normalized_value():
    data = load("sce__Micron_5300_MTFDDAK3T8TDS.json")
    row = attr(data, 202)
    row["value"], row["raw"]["value"] = 93, 7
    assert identity_from_smartctl_json(data).percentage_used == 7
    row["value"] = 100  # raw says 7 % used, normalized says 100 % left
    dev = identity_from_smartctl_json(data)
    assert dev.percentage_used is None
    assert any("202 Percent_Lifetime_Remain" in n and "disagrees" in n for n in dev.notes)


def test_wear_attribute_of_another_vendor_is_not_read():
    # the model and family of this Samsung 850 PRO were masked upstream ("X SSD 850 PRO 128GB")
    data = load("scrutiny__Samsung_850_PRO_128GB__all_ata.json")
    assert attr(data, 177)["value"] == 99 and data["model_name"].startswith("X ")
    dev = identity_from_smartctl_json(data)
    assert dev.percentage_used is None
    assert any("177 Wear_Leveling_Count is read as wear only on Samsung drives" in n for n in dev.notes)
    assert dev.data_written_bytes == attr(data, 241)["raw"]["value"] * 512


def test_wear_and_units_that_are_not_documented_are_left_unknown():
    data = load("sce__Micron_5300_MTFDDAK3T8TDS.json")
    table = data["ata_smart_attributes"]["table"]
    table[:] = [a for a in table if a["id"] not in (202, 246)]
    table.append({"id": 169, "name": "Remaining_Lifetime_Perc", "value": 97, "raw": {"value": 97, "string": "97"}})
    table.append({"id": 241, "name": "Total_Writes_GB", "value": 100, "raw": {"value": 1234, "string": "1234"}})
    dev = identity_from_smartctl_json(data)
    assert (dev.percentage_used, dev.data_written_bytes) == (None, None)
    assert any("169 Remaining_Lifetime_Perc" in n and "not documented" in n for n in dev.notes)
    assert any("241 Total_Writes_GB" in n and "unit is not clear" in n for n in dev.notes)


def with_device_statistics(data: dict, *, used, sectors, valid: bool = True) -> dict:
    """``data`` plus the device statistics that ``smartctl -x`` adds, laid out as smartctl 7 prints
    them (ataprint.cpp). No recorded -x output of an ATA SSD with these pages was found."""

    def row(offset, name, size, value):
        return {
            "offset": offset,
            "name": name,
            "size": size,
            "value": value,
            "flags": {
                "value": 192,
                "string": "V---C- ",
                "valid": valid,
                "normalized": False,
                "supports_dsn": False,
                "monitored_condition_met": False,
            },
        }

    data["ata_device_statistics"] = {
        "pages": [
            {
                "number": 1,
                "name": "General Statistics",
                "revision": 1,
                "table": [row(24, "Logical Sectors Written", 6, sectors)],
            },
            {
                "number": 7,
                "name": "Solid State Device Statistics",
                "revision": 1,
                "table": [row(8, "Percentage Used Endurance Indicator", 1, used)],
            },
        ]
    }
    return data


def test_device_statistics_come_before_vendor_attributes():
    data = with_device_statistics(load("sce__Micron_5300_MTFDDAK3T8TDS.json"), used=4, sectors=123456789)
    dev = identity_from_smartctl_json(data)
    assert (dev.percentage_used, dev.data_written_bytes) == (4, 123456789 * 512)
    assert "wear from ATA device statistics (Percentage Used Endurance Indicator)" in dev.notes
    assert any(n.startswith("data written from ATA device statistics") for n in dev.notes)
    # flagged invalid by the drive: the attributes are used instead
    data = with_device_statistics(load("sce__Micron_5300_MTFDDAK3T8TDS.json"), used=4, sectors=1, valid=False)
    dev = identity_from_smartctl_json(data)
    assert (dev.percentage_used, dev.data_written_bytes) == (0, 400292112400 * 512)
    # negative or absurd: rejected with a note, the next source is used
    data = with_device_statistics(load("sce__Micron_5300_MTFDDAK3T8TDS.json"), used=-3, sectors=2**80)
    dev = identity_from_smartctl_json(data)
    assert (dev.percentage_used, dev.data_written_bytes) == (0, 400292112400 * 512)
    assert any("wear from ATA device statistics is negative" in n for n in dev.notes)
    assert any("data written from ATA device statistics is out of range" in n for n in dev.notes)


@pytest.mark.parametrize(
    "name, written, transport",
    [
        ("libblockdev__TOSHIBA_AL15SEB18EQY.json", 3346357 * 10**6, "SAS (SPL-4)"),  # "3346.357" GB
        ("libblockdev__HGST_HUSMR3280ASS200.json", 2473166 * 10**6, "SAS (SPL-4)"),  # "2473.166" GB
        ("sce__SEAGATE_ST373453LC.json", 11151772 * 10**6, "Parallel SCSI (SPI-4)"),  # "11151.772" GB
    ],
)
def test_scsi_data_written_and_transport(name, written, transport):
    data = load(name)
    assert isinstance(data["scsi_error_counter_log"]["write"]["gigabytes_processed"], str)
    dev = identity_from_smartctl_json(data)
    assert dev.data_written_bytes == written
    assert dev.interface_speed is None
    assert f"SCSI transport: {transport}" in dev.notes
    assert any(n.startswith("data written from the SCSI error counter log") for n in dev.notes)


def test_sas_link_rate_only_from_the_phy_log():
    data = load("libblockdev__TOSHIBA_AL15SEB18EQY.json")
    # what `smartctl -x` adds for a SAS drive (scsiprint.cpp, show_sas_port_param)
    data["scsi_sas_port_0"] = {
        "relative_target_port_id": 1,
        "generation_code": 1,
        "number_of_phys": 1,
        "phy_0": {
            "identifier": 0,
            "attached_device_type": "expander device",
            "negotiated_logical_link_rate": "phy enabled; 12 Gbps",
        },
    }
    data["scsi_sas_port_1"] = {
        "relative_target_port_id": 2,
        "generation_code": 1,
        "number_of_phys": 1,
        "phy_0": {
            "identifier": 1,
            "attached_device_type": "no device attached",
            "negotiated_logical_link_rate": "phy enabled; unknown",
        },
    }
    assert identity_from_smartctl_json(data).interface_speed == "12 Gb/s"
    data["scsi_sas_port_0"]["phy_0"]["negotiated_logical_link_rate"] = "phy enabled; speed negotiation failed"
    assert identity_from_smartctl_json(data).interface_speed is None


@pytest.mark.parametrize("value", ["-1.000", "NaN", "Infinity", "12,5", "1e400", True, [], {"gb": 1}, -3.5])
def test_scsi_data_written_rejects_what_is_not_a_byte_count(value):
    data = load("libblockdev__TOSHIBA_AL15SEB18EQY.json")
    data["scsi_error_counter_log"]["write"]["gigabytes_processed"] = value
    assert identity_from_smartctl_json(data).data_written_bytes is None


def test_scsi_data_written_as_a_number():
    data = load("libblockdev__TOSHIBA_AL15SEB18EQY.json")
    data["scsi_error_counter_log"]["write"]["gigabytes_processed"] = 3346.357
    assert identity_from_smartctl_json(data).data_written_bytes == 3346357 * 10**6


def test_placeholders_are_unknown_not_names():
    data = load("netdata__HGST_REDACTED_sas.json")
    assert (data["scsi_model_name"], data["scsi_product"], data["scsi_revision"]) == ("REDACTED",) * 3
    dev = identity_from_smartctl_json(data)
    assert (dev.model, dev.vendor, dev.firmware) == (None, "HGST", None)
    assert dev.capacity_bytes == 4000787030016 and dev.data_written_bytes == 2811293 * 10**6
    assert any(n.startswith("model is a placeholder ('REDACTED'") for n in dev.notes)
    assert any(n.startswith("firmware is a placeholder ('REDACTED'") for n in dev.notes)
    nvme = identity_from_smartctl_json(load("sce__INTEL_SSDPE2KX020T8.json"))
    assert nvme.model == "INTEL SSDPE2KX020T8" and nvme.firmware is None  # firmware redacted upstream


@pytest.mark.parametrize(
    "path, value, field, note",
    [
        (("nvme_smart_health_information_log", "data_units_written"), -5, "data_written_bytes", "negative"),
        (("nvme_smart_health_information_log", "data_units_written"), 2**70, "data_written_bytes", "out of range"),
        (("nvme_smart_health_information_log", "data_units_written"), 10**17, "data_written_bytes", "beyond any drive"),
        (("nvme_smart_health_information_log", "percentage_used"), -1, "percentage_used", "negative"),
        (("nvme_smart_health_information_log", "percentage_used"), 300, "percentage_used", "out of range"),
        (("logical_block_size",), 1e308, "logical_block_size", "out of range"),
        (("logical_block_size",), 0, "logical_block_size", "out of range"),
        (("physical_block_size",), 3.5, "physical_block_size", "not a whole number"),
        (("nvme_total_capacity",), -2000398934016, "capacity_bytes", "negative"),
        (("nvme_total_capacity",), 1e300, "capacity_bytes", "out of range"),
        (("power_on_time", "hours"), -1, "power_on_hours", "negative"),
        (("power_on_time", "hours"), 10**12, "power_on_hours", "out of range"),
        (("temperature", "current"), 65535, "temperature_c", "out of range"),
        (("temperature", "current"), "hot", "temperature_c", "not a whole number"),
    ],
)
def test_negative_and_absurd_values_become_null_with_a_note(path, value, field, note):
    data = load("sce__INTEL_SSDPE2KX020T8.json")
    target = data
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    dev = identity_from_smartctl_json(data)
    assert getattr(dev, field) is None
    assert any(note in n for n in dev.notes), dev.notes
    dev.model_dump_json()  # and the document still serialises


def test_rotation_rate_reserved_codes_are_not_rpm():
    data = load("libblockdev__WDC_WD10EFRX-68PJCN0.json")
    data["rotation_rate"] = 5
    dev = identity_from_smartctl_json(data)
    assert (dev.media, dev.rotation_rpm) == ("unknown", None)
    assert any("not an rpm figure" in n for n in dev.notes)


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
        (
            "scrutiny__sat_attributes_only_jA.json",
            "smartctl output of /dev/sdc holds no device identity (exit status 0: no model or product field; "
            "it ran as `smartctl -jA /dev/sdc`); save `smartctl --json -x /dev/sdc`",
        ),
        (
            "telegraf__scan_all.json",
            "this is a `smartctl --scan` output: it lists /dev/sda, /dev/nvme0, /dev/nvme1, no drive's identity; "
            "save `smartctl --json -x /dev/sda` or of another",
        ),
    ],
)
def test_outputs_without_identity_raise_with_smartctls_message(name, expected):
    with pytest.raises(IdentityError) as info:
        identity_from_smartctl_json(load(name))
    assert expected in info.value.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=25), children, max_size=6),
    max_leaves=30,
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-1000, max_value=1000),
    st.floats(),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
    st.sampled_from(["2473.166", "-1", "NaN", "1e999", " 7 "]),
)
smartctl_keys = st.sampled_from(
    [
        "model_name",
        "scsi_model_name",
        "scsi_vendor",
        "scsi_product",
        "vendor",
        "product",
        "serial_number",
        "user_capacity",
        "rotation_rate",
        "device",
        "smartctl",
        "nvme_smart_health_information_log",
        "ata_smart_attributes",
        "ata_device_statistics",
        "power_on_time",
        "temperature",
        "interface_speed",
        "logical_block_size",
        "physical_block_size",
        "endurance_used",
        "write_cache",
        "nvme_namespaces",
        "nvme_total_capacity",
        "firmware_version",
        "scsi_revision",
        "revision",
        "model_family",
        "in_smartctl_database",
        "scsi_error_counter_log",
        "scsi_transport_protocol",
        "scsi_percentage_used_endurance_indicator",
        "scsi_sas_port_0",
    ]
)
names = st.sampled_from(
    ["REDACTED", "XXXXXXXX", "unknown", "", "  ", "Samsung SSD 860", "INTEL SSDSC2KB240G8", "Micron_5300"]
) | st.text(max_size=20)
attribute_rows = st.fixed_dictionaries(
    {
        "id": st.sampled_from([169, 173, 177, 202, 231, 233, 241, 246]) | numbers,
        "name": st.sampled_from(
            [
                "Wear_Leveling_Count",
                "Percent_Lifetime_Remain",
                "Media_Wearout_Indicator",
                "SSD_Life_Left",
                "Total_LBAs_Written",
                "Host_Writes_32MiB",
                "Total_Writes_GB",
                "Remaining_Lifetime_Perc",
                "Total_Host_Sector_Write",
            ]
        )
        | json_values,
        "value": numbers,
        "raw": st.fixed_dictionaries({"value": numbers}) | json_values,
    },
)
devstat_rows = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["Percentage Used Endurance Indicator", "Logical Sectors Written"]),
        "value": numbers,
        "flags": st.fixed_dictionaries({"valid": st.booleans() | json_values}),
    },
)
structured = st.fixed_dictionaries(
    {"model_name": names, "device": st.fixed_dictionaries({"protocol": st.sampled_from(["ATA", "NVMe", "SCSI", "x"])})},
    optional={
        "model_family": names,
        "firmware_version": names,
        "scsi_vendor": names,
        "scsi_product": names,
        "in_smartctl_database": st.booleans() | json_values,
        "logical_block_size": numbers,
        "physical_block_size": numbers,
        "rotation_rate": numbers,
        "nvme_total_capacity": numbers,
        "endurance_used": st.fixed_dictionaries({"current_percent": numbers}),
        "ata_smart_attributes": st.fixed_dictionaries({"table": st.lists(attribute_rows, max_size=6) | json_values}),
        "ata_device_statistics": st.fixed_dictionaries(
            {"pages": st.lists(st.fixed_dictionaries({"table": st.lists(devstat_rows, max_size=3)}), max_size=2)}
        ),
        "nvme_smart_health_information_log": st.fixed_dictionaries(
            {"percentage_used": numbers, "data_units_written": numbers}
        ),
        "scsi_error_counter_log": st.fixed_dictionaries(
            {"write": st.fixed_dictionaries({"gigabytes_processed": numbers})}
        ),
        "scsi_sas_port_0": st.dictionaries(
            st.sampled_from(["phy_0", "phy_1", "x"]),
            st.fixed_dictionaries(
                {
                    "attached_device_type": st.sampled_from(["expander device", "no device attached"]),
                    "negotiated_logical_link_rate": st.sampled_from(
                        ["phy enabled; 12 Gbps", "phy enabled; 6 Gbps", "phy enabled; unknown"]
                    )
                    | json_values,
                }
            ),
            max_size=3,
        ),
        "power_on_time": st.fixed_dictionaries({"hours": numbers}),
        "temperature": st.fixed_dictionaries({"current": numbers}),
        "smartctl": st.fixed_dictionaries({"exit_status": numbers}),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values, st.dictionaries(smartctl_keys, json_values, max_size=12), structured))
def test_parser_never_crashes_on_arbitrary_json(data):
    try:
        dev = identity_from_smartctl_json(data)
    except IdentityError:
        return
    assert dev.model or any("placeholder" in n for n in dev.notes)
    for field in (
        "capacity_bytes",
        "data_written_bytes",
        "logical_block_size",
        "physical_block_size",
        "percentage_used",
        "power_on_hours",
    ):
        value = getattr(dev, field)
        assert value is None or 0 <= value <= smartvalues.MAX_INT
    json.loads(dev.model_dump_json())


@settings(max_examples=200)
@given(
    st.text(min_size=1, max_size=40).filter(lambda s: s.strip()),
    st.text(min_size=1, max_size=40).filter(lambda s: s.strip()),
)
def test_serial_hash_is_stable_and_distinguishes_serials(a, b):
    assert serial_hash(a) == serial_hash(f"  {a}\t")
    assert len(serial_hash(a)) == 24
    if a.strip() != b.strip():
        assert serial_hash(a) != serial_hash(b)
    assert serial_hash(a, salt="other") != serial_hash(a)


def test_sysfs_fallback_for_loop_zram_and_virtio():
    loop = identity_from_sysfs("loop0", sysfs_root=SYSFS)
    assert (loop.model, loop.capacity_bytes, loop.write_cache, loop.cache_toggle) == (
        "Linux loop device",
        64 * 1024**2,
        "on",
        "sysfs",
    )
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
    assert (sdb.model, sdb.protocol, sdb.media, sdb.capacity_bytes) == (
        "INTEL SSDSC2KW512G8",
        "ata",
        "ssd",
        1000215216 * 512,
    )
    part = identity_from_sysfs("sdb1", sysfs_root=SYSFS)
    assert part.kind == "partition" and part.model == sdb.model and part.capacity_bytes == 1000213168 * 512
    sda = identity_from_sysfs("sda", sysfs_root=SYSFS)
    assert (sda.model, sda.firmware, sda.media, sda.rotation_rpm) == ("TOSHIBA MG07ACA1", "0101", "hdd", None)
    nvme = identity_from_sysfs("nvme0n1", sysfs_root=SYSFS)
    assert (nvme.protocol, nvme.media, nvme.rotation_rpm) == ("nvme", "ssd", 0)
    with pytest.raises(IdentityError):
        identity_from_sysfs("sdz", sysfs_root=SYSFS)


def test_recorded_sysfs_tree_has_no_symlink_cycle():
    # pytest collection and `find -L` follow directory links: a link to an ancestor never ends
    for here, dirs, files in os.walk(SYSFS):
        for name in dirs + files:
            link = Path(here) / name
            if link.is_symlink():
                target = link.resolve(strict=True)
                assert target not in link.parents, f"{link} points back at its ancestor {target}"


def test_nvme_pcie_link_from_the_recorded_tree():
    assert sysfs.nvme_controllers("nvme0n1", sysfs_root=SYSFS) == ["nvme0"]
    assert sysfs.nvme_pcie_link("nvme0n1", sysfs_root=SYSFS) == ("PCIe 8.0 GT/s x4", None)
    nvme = identity_from_sysfs("nvme0n1", sysfs_root=SYSFS)
    assert (nvme.model, nvme.interface_speed) == ("WD Red SN700 1000GB", "PCIe 8.0 GT/s x4")
    # smartctl says nothing about the PCIe link: sysfs fills it in
    merged = identity.merge(identity_from_smartctl_json(load("scrutiny__Samsung_SSD_970_EVO_500GB__x.json")), nvme)
    assert merged.interface_speed == "PCIe 8.0 GT/s x4"
    sda = identity_from_sysfs("sda", sysfs_root=SYSFS)
    assert sda.interface_speed is None and not any("PCIe" in n for n in sda.notes)


@pytest.mark.parametrize(
    "speed, width, expected",
    [
        ("8.0 GT/s PCIe", "4", "PCIe 8.0 GT/s x4"),
        ("8 GT/s", "4", "PCIe 8.0 GT/s x4"),  # kernels before 5.x
        ("2.5 GT/s PCIe\n", "1\n", "PCIe 2.5 GT/s x1"),
        ("32.0 GT/s PCIe", "0", "PCIe 32.0 GT/s"),  # not a lane count: left out
        ("Unknown", "0", None),
        ("Unknown speed", "4", None),
        (None, "4", None),
        ("1e999 GT/s", "4", None),
    ],
)
def test_parse_pcie_link(speed, width, expected):
    assert sysfs.parse_pcie_link(speed, width) == expected


def copy_sysfs(tmp_path: Path) -> Path:
    root = tmp_path / "sys"
    shutil.copytree(SYSFS, root, symlinks=True)
    return root


def test_nvme_pcie_link_below_the_drives_maximum_is_noted(tmp_path):
    root = copy_sysfs(tmp_path)
    (root / "class/nvme/nvme0/device/current_link_width").write_text("2\n")
    link, note = sysfs.nvme_pcie_link("nvme0n1", sysfs_root=str(root))
    assert link == "PCIe 8.0 GT/s x2"
    assert note == "nvme0 runs at PCIe 8.0 GT/s x2, below the PCIe 8.0 GT/s x4 the drive supports"


def test_nvme_pcie_link_unknown_says_why(tmp_path):
    root = copy_sysfs(tmp_path)
    (root / "class/nvme/nvme0/device/current_link_speed").write_text("Unknown\n")
    dev = identity_from_sysfs("nvme0n1", sysfs_root=str(root))
    assert dev.interface_speed is None
    assert "nvme0: PCIe link speed reads 'Unknown': unknown" in dev.notes
    (root / "class/nvme/nvme0/transport").write_text("tcp\n")
    assert sysfs.nvme_pcie_link("nvme0n1", sysfs_root=str(root)) == (
        None,
        "nvme0 is an NVMe over tcp controller: no PCIe link",
    )
    assert sysfs.nvme_pcie_link("nvme9n1", sysfs_root=str(root))[0] is None


def test_nvme_multipath_namespace_reaches_its_controllers_through_the_subsystem(tmp_path):
    """Native NVMe multipath: the namespace's device link is the subsystem, which lists one
    controller per path (a tree made here after the kernel's layout, not a recording)."""
    root = copy_sysfs(tmp_path)
    subsys = root / "devices/virtual/nvme-subsystem/nvme-subsys0"
    subsys.mkdir(parents=True)
    (subsys / "nvme0").symlink_to("../../../nvme/nvme0")
    disk = root / "block/nvme0n1"
    (disk / "device").unlink()
    (disk / "device").symlink_to(os.path.relpath(subsys, disk))
    assert sysfs.nvme_controllers("nvme0n1", sysfs_root=str(root)) == ["nvme0"]
    assert sysfs.nvme_pcie_link("nvme0n1", sysfs_root=str(root)) == ("PCIe 8.0 GT/s x4", None)


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


def test_petabytes_written_beyond_what_a_signed_document_holds_are_kept_in_a_note():
    # an NVMe drive that wrote 20 PB: data_units_written counts 512 000-byte units
    units = 20 * 10**15 // 512_000
    data = {
        "device": {"protocol": "NVMe"},
        "model_name": "BIG NVME",
        "user_capacity": {"bytes": 30 * 10**12},
        "nvme_smart_health_information_log": {"data_units_written": units},
    }
    dev = identity_from_smartctl_json(data)
    assert dev.data_written_bytes is None
    assert any(f"data written: {units * 512_000} bytes" in n for n in dev.notes)
    # below the limit the figure is kept as it is
    data["nvme_smart_health_information_log"]["data_units_written"] = 10**6
    assert identity_from_smartctl_json(data).data_written_bytes == 512_000 * 10**6
