"""A plan as one JSON-ready document: the layout with its rules and sources, the cephadm
specification (dict and YAML) and the ``ceph-volume lvm batch`` line."""

from __future__ import annotations

from diskq.plan import ceph_volume, cephadm
from diskq.plan.model import Plan


def document(plan: Plan, rules: dict) -> dict:
    doc = {"format": "diskq-plan", "format_version": 1, **plan.to_dict()}
    spec = cephadm.spec(plan, rules)
    doc["cephadm_spec"] = spec
    doc["cephadm_spec_yaml"] = cephadm.spec_yaml(plan, rules)
    doc["cephadm_source"] = rules["cephadm"]["source"]
    doc["cephadm_db_slots"] = {
        "note": cephadm.db_slots_caveat(plan.release, rules),
        "source": rules["cephadm"]["db_slots_source"],
    }
    doc["alternatives"] = rules["ceph_volume"]["alternatives"]
    doc["ceph_volume"] = {
        "argv": ceph_volume.argv(plan, rules),
        "line": ceph_volume.line(plan, rules),
        "source": rules["ceph_volume"]["source"],
        "objectstore_source": rules["ceph_volume"]["objectstore_source"],
        "note": "without cephadm, for one host: replace /dev/DATAn and /dev/DBn with its devices "
        "(ceph-volume inventory), check the report, then run it with --yes instead of "
        "--report",
    }
    if cephadm.size_ranges_overlap(plan, rules):
        doc["notes"].append(
            "the data and db_devices size filters overlap (SSDs of similar size): "
            "select the WAL/DB drives by model in the specification instead"
        )
    return doc
