"""The layout rules as pure functions: OSDs per WAL/DB device, block.db size, how many WAL/DB
devices, the write-cache and mClock advice. Numbers come from ``rules.toml`` (passed in as
``rules``) and the OSDs-per-device criteria; every answer carries its reasons and sources.

>>> from diskq.plan import rules as r
>>> from diskq.analyse import criteria
>>> dev = WalDbDevice(label="SSD", capacity_bytes=960 * 10**9, protocol="ata",
...                   curve=[(1, 12000), (8, 40000)], cache="off", knob="drive")
>>> p = make_plan(dev, DataDevices(12, 16 * 10**12, "hdd"), "rbd", compression=True,
...               release="squid", rules=r.load(), criteria=criteria.load())
>>> (p.osds_per_device, p.binding, p.db_devices, p.db_slots)
(2, ['capacity'], 6, 2)
"""

from __future__ import annotations

import math

from diskq.analyse import osds
from diskq.errors import InvalidInput, PlanRefused
from diskq.plan.model import WORKLOADS, DataDevices, Plan, Rule, WalDbDevice
from diskq.units import plural


def release_index(release: str, rules: dict) -> int:
    known = rules["releases"]["known"]
    if release not in known:
        raise InvalidInput(f"unknown Ceph release {release!r}", hint=f"one of: {', '.join(known)}")
    return known.index(release)


def compression_default(release: str, rules: dict) -> bool:
    """RocksDB compression is on by default from Squid."""
    return release_index(release, rules) >= release_index(rules["releases"]["compression_default_from"], rules)


def db_fraction(workload: str, compression: bool, release: str, rules: dict) -> Rule:
    """Share of the data device each block.db needs, with its reasons."""
    bd = rules["block_db"]
    if workload not in WORKLOADS:
        raise InvalidInput(f"unknown workload {workload!r}", hint=f"one of: {', '.join(WORKLOADS)}")
    base = float(bd[workload])
    reasons = [f"{workload}: {base:.1%} of the data device (Ceph documentation)"]
    sources = [bd["source"]]
    frac = base
    if compression and release_index(release, rules) < release_index(
        rules["releases"]["compression_default_from"], rules
    ):
        reasons.append(
            f"RocksDB compression is not the default before {rules['releases']['compression_default_from'].title()}: "
            "it needs compression=kLZ4Compression in bluestore_rocksdb_options"
        )
    if compression and workload in bd["compression_workloads"]:
        frac = base / float(bd["compression_factor"])
        reasons.append(
            f"RocksDB compression on: {base:.1%} / {bd['compression_factor']} = {frac:.2%} "
            "(DB space measured with LZ4 compression)"
        )
        sources.append(bd["compression_source"])
    elif compression:
        reasons.append(
            f"RocksDB compression on, but its saving was measured for "
            f"{', '.join(bd['compression_workloads'])} only: {workload} keeps {base:.1%}"
        )
    else:
        reasons.append("RocksDB compression off: no reduction")
    if release_index(release, rules) >= release_index(bd["floor_from"], rules):
        floor = float(bd["floor"])
        if frac < floor:
            reasons.append(f"raised to {floor:.1%}, the minimum suggestion from {bd['floor_from'].title()} on")
            frac = floor
        else:
            reasons.append(f"at least the {floor:.1%} suggested from {bd['floor_from'].title()} on")
        sources.append(bd["floor_source"])
    reasons.append(bd["level_sizes_note"])
    return Rule(frac, reasons, "; ".join(sources))


def demand(media: str, rules: dict, criteria: dict) -> float:
    """Commits/s one OSD of ``media`` needs from the WAL/DB device."""
    if media == "hdd":
        return osds.demand_iops(criteria["osds_per_device"], "hdd")
    return float(rules["osds"]["demand_ssd_osd"])


def guideline_max(protocol: str, rules: dict) -> int:
    o = rules["osds"]
    return int(o["guideline_max_nvme"] if protocol == "nvme" else o["guideline_max_sata_sas"])


def _gb(n: float) -> str:
    """Whole GB from 10 GB up, as the plan's sums read (``16,000 GB``); below that the label's
    form with three significant digits, so a small device is never "0 GB".

    >>> _gb(16 * 10**12), _gb(4_294_967_296), _gb(104_857_600)
    ('16,000 GB', '4.29 GB', '105 MB')
    """
    from diskq.units import capacity

    return f"{n / 1e9:,.0f} GB" if n >= 9.5e9 else capacity(n)


def verdict_warnings(verdict: dict | None) -> list[str]:
    """Why the Ceph WAL/DB answer a plan rests on is weak: no answer, an unknown or unsuitable
    tier, a noisy run (its caveats)."""
    if not verdict:
        return ["no Ceph WAL/DB verdict to plan from"]
    tier, basis = verdict.get("tier"), verdict.get("basis")
    first = (verdict.get("reasons") or ["-"])[0]
    out = []
    if tier in ("unknown", None):
        out.append(f"the Ceph WAL/DB verdict is unknown (basis {basis}): {first}; the OSD count is a best case")
    elif tier == "unsuitable":
        out.append(f"the Ceph WAL/DB verdict is unsuitable (basis {basis}): {first}")
    out += [f"noisy: {c}" for c in verdict.get("caveats") or []]
    return out


def make_plan(
    dev: WalDbDevice,
    data: DataDevices,
    workload: str,
    *,
    compression: bool,
    release: str,
    rules: dict,
    criteria: dict,
    db_size: int | None = None,
    strict: bool = False,
) -> Plan:
    """The layout for ``data`` behind ``dev``, or :class:`PlanRefused` with the reasons. The OSD
    count never exceeds what the device's Ceph WAL/DB tier allows (one answer); a weak verdict
    (:func:`verdict_warnings`) is a warning, and with ``strict`` a refusal."""
    from diskq.analyse import answer

    warnings = verdict_warnings(dev.verdict) if dev.verdict is not None else []
    if strict and warnings:
        raise PlanRefused(
            f"{dev.label}: the verdict the plan would rest on is not strong enough (--strict)",
            warnings,
            hint="measure the device with `diskq bench`, or plan without --strict",
        )
    capacity = db_size if db_size is not None else dev.capacity_bytes
    if capacity is None:
        raise PlanRefused(
            f"the capacity of {dev.label} is not recorded", hint="give it with --db-size (e.g. --db-size 960G)"
        )
    if not dev.curve:
        raise PlanRefused(
            f"{dev.label} has no measured curve at a safe cache setting", hint="measure it with `diskq bench`"
        )
    need = demand(data.media, rules, criteria)
    share = osds.osds_per_device(dev.curve, need)
    tier = (dev.verdict or {}).get("tier")
    bound = tier if tier in answer.TIERS else (dev.verdict or {}).get("ceiling")
    solo = dict(dev.curve).get(1)
    if dev.verdict is None and solo is not None:  # no stored answer: the tier of the same 1-job figure
        tier = bound = answer.tier_of("ceph_waldb", solo, criteria)
    cap = answer.osd_cap(bound, criteria)
    if cap is not None and share.n > cap:  # the same model as the verdict: never more than its tier allows
        why = f"the Ceph WAL/DB tier is {tier}" if tier in answer.TIERS else f"the best case is {bound}"
        share = osds.OsdShare(
            cap,
            share.demand_iops,
            (dict(dev.curve)[cap] / cap) if cap in dict(dev.curve) else None,
            False,
            share.largest_tested,
            [
                f"{'none' if cap == 0 else f'at most {cap}'}: {why} (criteria [osds_per_device] "
                f"tier_max_osds); the curve alone would allow {share.n}",
                *share.reasons,
            ],
        )
    if share.n == 0:
        raise PlanRefused(
            f"{dev.label} cannot commit fast enough for even one {data.media.upper()} OSD",
            share.reasons,
            hint=(
                "keep WAL+DB on the data SSDs themselves (the Ceph documentation: offloading gains nothing)"
                if data.media == "ssd"
                else "choose a faster WAL/DB device (see `diskq lookup`)"
            ),
        )
    frac = db_fraction(workload, compression, release, rules)
    required = math.ceil(frac.value * data.size_bytes)
    slots_by_capacity = capacity // required
    if slots_by_capacity < 1:
        raise PlanRefused(
            f"{dev.label} ({_gb(capacity)}) is too small for one block.db of {_gb(required)}",
            frac.reasons,
            hint="use a larger WAL/DB device, or give its real size with --db-size",
        )
    guide = guideline_max(dev.protocol, rules)
    speed_reasons = list(share.reasons)
    if share.limited_by_sweep:
        speed_reasons.append(
            f"the sweep stopped at {plural(share.largest_tested, 'job')}: speed allows at least "
            f"{share.n}; the plan uses {share.n}, never more than was measured"
        )
    limits = {
        "speed": Rule(
            share.n,
            speed_reasons,
            "criteria.toml [osds_per_device] (osd_mclock_max_capacity_iops_hdd), "
            "https://docs.ceph.com/en/latest/rados/configuration/mclock-config-ref/"
            if data.media == "hdd"
            else rules["osds"]["demand_ssd_source"],
        ),
        "capacity": Rule(
            slots_by_capacity,
            [f"{_gb(capacity)} holds {slots_by_capacity} block.db volumes of {_gb(required)}"],
            rules["block_db"]["source"],
        ),
        "guideline": Rule(
            guide,
            [
                f"at most {guide} OSDs per {'NVMe' if dev.protocol == 'nvme' else 'SAS/SATA'} "
                "offload SSD (one WAL/DB device lost takes all its OSDs down)"
                + ("; protocol unknown: the SAS/SATA figure" if dev.protocol not in ("nvme", "ata", "scsi") else "")
                + (
                    "; the documentation gives it for HDD OSDs, applied to SSD OSDs as a ceiling"
                    if data.media == "ssd"
                    else ""
                )
            ],
            rules["osds"]["guideline_source"],
        ),
    }
    per_device = min(int(r.value) for r in limits.values())
    binding = [k for k, r in limits.items() if r.value == per_device]
    devices = math.ceil(data.count / per_device)
    slots = math.ceil(data.count / devices)
    size = capacity // slots
    notes = list(dev.notes)
    if dev.legacy:
        notes.append("the figures are the community table's (legacy), not a diskq measurement")
    if db_size is not None and dev.capacity_bytes and db_size != dev.capacity_bytes:
        notes.append(f"--db-size {_gb(db_size)} used instead of the recorded {_gb(dev.capacity_bytes)}")
    wal_bytes = int(rules["block_wal"]["wal_bytes"])
    wal = Rule(
        False,
        [
            "with block.db on the WAL/DB device and no block.wal, BlueStore keeps the WAL there too: "
            "a separate block.wal helps only on a third, faster device",
            f"the WAL takes at most {wal_bytes / 2**30:.0f} GiB of each {_gb(size)} block.db",
        ],
        rules["block_wal"]["source"],
    )
    speed = {
        "n": share.n,
        "demand_iops": share.demand_iops,
        "per_osd_iops": share.per_osd_iops,
        "headroom": share.headroom,
        "limited_by_sweep": share.limited_by_sweep,
        "largest_tested": share.largest_tested,
        "osd_kind": data.media,
    }
    return Plan(
        device=dev.label,
        basis=dev.basis,
        data=data,
        workload=workload,
        release=release,
        compression=compression,
        capacity_bytes=capacity,
        osds_per_device=per_device,
        binding=binding,
        limits=limits,
        speed=speed,
        db_fraction=frac,
        db_required_bytes=required,
        db_devices=devices,
        db_slots=slots,
        db_size_bytes=size,
        layout_reasons=[
            f"{plural(data.count, 'data OSD')} at most {per_device} per WAL/DB device: ceil({data.count} / {per_device}) = "
            f"{devices} WAL/DB device{'s' if devices != 1 else ''}",
            f"spread evenly: ceil({data.count} / {devices}) = {slots} block.db volume{'s' if slots != 1 else ''} "
            "per device (cephadm db_slots)",
            f"each block.db an equal slice, as large as possible: {_gb(capacity)} / {slots} = {_gb(size)}, "
            f"at least the {_gb(required)} required",
        ],
        wal=wal,
        write_cache=write_cache_advice(dev, rules),
        mclock=mclock_advice(share, data.media),
        notes=notes,
        rules_version=int(rules["version"]),
        verdict=dev.verdict,
        warnings=warnings,
    )


def write_cache_advice(dev: WalDbDevice, rules: dict) -> Rule:
    """The udev rule (or NVMe command) that sets the measured faster, safe "off" at every boot."""
    wc = rules["write_cache"]
    if not (dev.cache == "off" and dev.knob == "drive"):
        why = f"the best safe setting is cache {dev.cache}" + (
            " set with the kernel's knob, which the drive does not see" if dev.knob == "kernel" else ""
        )
        return Rule(None, [why + ": nothing to set at boot"], wc["source"])
    if not dev.cache_off_faster:
        return Rule(
            None,
            [
                "cache off is the best safe setting, but no slower cache-on run was measured to "
                "compare: measure both with `diskq bench --cache both`"
            ],
            wc["source"],
        )
    basis = "the community table's figures (legacy)" if dev.legacy else "diskq's measurement"
    reasons = [f"{basis}: cache off (drive knob) was faster than on and safe"]
    if dev.protocol == "nvme":
        reasons.append(
            "NVMe drives have no cache_type attribute: run `nvme set-feature /dev/nvmeXn1 -f 6 -v 0` "
            "at every boot (e.g. from a systemd unit); diskq never saves the setting"
        )
        return Rule(None, reasons, wc["source"])
    rule = wc["udev_rule"]
    if dev.kernel_model:
        rule = rule.replace(
            'SUBSYSTEM=="scsi_disk", ', f'SUBSYSTEM=="scsi_disk", ATTRS{{model}}=="{dev.kernel_model}*", '
        )
        reasons.append("limited to this model as the kernel reports it (ATTRS{model})")
    else:
        reasons.append(
            "as in the Ceph documentation this sets every SATA/SAS disk to write through (the data "
            "HDDs too, which the documentation recommends); to limit it, add "
            'ATTRS{model}=="<model in /sys/class/scsi_disk/*/device/model>"'
        )
    reasons.append(f"put it in {wc['udev_file']}")
    return Rule(rule, reasons, wc["source"])


def mclock_advice(share: osds.OsdShare, media: str) -> Rule:
    """The osd_mclock_max_capacity_iops_ssd figure, where it applies (SSD data OSDs)."""
    src = "https://docs.ceph.com/en/latest/rados/configuration/mclock-config-ref/"
    if media == "hdd" or share.per_osd_iops is None:
        return Rule(
            None,
            [
                f"HDD OSDs: mClock uses osd_mclock_max_capacity_iops_hdd ({share.demand_iops:.0f}), "
                "which each OSD's share of the WAL/DB device meets; osd_mclock_max_capacity_iops_ssd "
                "does not apply"
            ],
            src,
        )
    value = int(share.per_osd_iops)
    who = "the one SSD OSD" if share.n == 1 else f"each of {share.n} SSD OSDs"
    return Rule(
        value,
        [
            f"{who} commits at most {share.per_osd_iops:.0f} times per second "
            "through the shared WAL/DB device: `ceph config set osd osd_mclock_max_capacity_iops_ssd "
            f"{value}` keeps mClock from assuming more"
        ],
        src,
    )
