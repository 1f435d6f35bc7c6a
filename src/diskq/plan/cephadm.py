"""The cephadm OSD service specification of a plan, as a dict and as YAML.

Field names are the Ceph documentation's (Advanced OSD Service Specifications, listed in
``rules.toml`` [cephadm]): ``service_type``, ``service_id``, ``placement.host_pattern``, and under
``spec`` the device selections ``data_devices`` and ``db_devices`` with the filters
``rotational``, ``size`` (``LOW:HIGH``) and ``limit``, and ``db_slots``. The YAML is written here
(a fixed, shallow shape of strings and integers), so diskq needs no YAML library at run time.

>>> print(to_yaml({"service_type": "osd", "placement": {"host_pattern": "*"}}), end="")
service_type: osd
placement:
  host_pattern: '*'
"""

from __future__ import annotations

import math
import re

from diskq.plan.model import Plan

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_YAML_WORDS = {"yes", "no", "on", "off", "true", "false", "null", "y", "n", "~"}


def size_filter(capacity: int, margin: float) -> str:
    """A ``LOW:HIGH`` size filter around ``capacity`` in whole G, wide enough that it holds
    whether G is read as 10^9 or 2^30 bytes.

    >>> size_filter(7_680_000_000_000, 0.10)
    '6912G:8448G'
    """
    gb = capacity / 1e9
    return f"{math.floor(gb * (1 - margin))}G:{math.ceil(gb * (1 + margin))}G"


def service_id(plan: Plan) -> str:
    return f"diskq-{plan.data.media}-{plan.workload}"


def spec(plan: Plan, rules: dict) -> dict:
    """The specification as a dict, in the order the YAML shows it."""
    margin = float(rules["cephadm"]["size_margin"])
    return {
        "service_type": "osd",
        "service_id": service_id(plan),
        "placement": {"host_pattern": "*"},
        "spec": {
            "data_devices": {
                "rotational": 1 if plan.data.media == "hdd" else 0,
                "size": size_filter(plan.data.size_bytes, margin),
            },
            "db_devices": {
                "rotational": 0,
                "size": size_filter(plan.capacity_bytes, margin),
                "limit": plan.db_devices,
            },
            "db_slots": plan.db_slots,
        },
    }


def db_slots_caveat(release: str, rules: dict) -> str:
    """What ``db_slots`` does on the target release: cephadm passes it to ceph-volume only from
    the release named in ``rules.toml`` [cephadm] ``db_slots_honoured_from``.

    >>> from diskq.plan import rules
    >>> db_slots_caveat("squid", rules.load()).startswith("squid's cephadm ignores db_slots")
    True
    >>> db_slots_caveat("tentacle", rules.load()).startswith("tentacle's cephadm passes db_slots")
    True
    """
    from diskq.plan.layout import release_index

    section = rules["cephadm"]
    since = section["db_slots_honoured_from"]
    if release_index(release, rules) >= release_index(since, rules):
        return (
            f"{release}'s cephadm passes db_slots to ceph-volume (--block-db-slots) from the point release "
            "carrying ceph/ceph pull request 65597 (the backport of 64893); before it, as in squid, db_slots "
            "is ignored"
        )
    return (
        f"{release}'s cephadm ignores db_slots (it passes it to ceph-volume only from {since}: ceph/ceph pull "
        "request 64893; the squid backport, 65598, is not merged): ceph-volume then divides each DB device "
        "among the data devices the specification selects on the host, the same volumes when the host has "
        "exactly the planned devices"
    )


def spec_yaml(plan: Plan, rules: dict) -> str:
    """The specification as YAML with the ``db_slots`` caveat of the target release as a comment
    above the field (YAML readers ignore it; the dict is :func:`spec`)."""
    import textwrap

    text = to_yaml(spec(plan, rules))
    note = "\n".join(
        textwrap.wrap(db_slots_caveat(plan.release, rules), 96, initial_indent="  # ", subsequent_indent="  # ")
    )
    return text.replace("\n  db_slots:", "\n" + note + "\n  db_slots:", 1)


def size_ranges_overlap(plan: Plan, rules: dict) -> bool:
    """Would one drive match both size filters? (SSD data devices of a size near the WAL/DB device's.)"""
    margin = float(rules["cephadm"]["size_margin"])
    lo1, hi1 = (int(x[:-1]) for x in size_filter(plan.data.size_bytes, margin).split(":"))
    lo2, hi2 = (int(x[:-1]) for x in size_filter(plan.capacity_bytes, margin).split(":"))
    same_media = plan.data.media == "ssd"
    return same_media and lo1 <= hi2 and lo2 <= hi1


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return "'" + text.replace("'", "''") + "'"


def to_yaml(doc: dict, indent: int = 0) -> str:
    """Block-style YAML of nested dicts of strings, integers and booleans."""
    lines = []
    for key, value in doc.items():
        pad = "  " * indent
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:")
            lines.append(to_yaml(value, indent + 1).rstrip("\n"))
        else:
            lines.append(f"{pad}{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"
