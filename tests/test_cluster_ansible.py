"""ansible/cluster.yml run by the real ansible-playbook against two hosts on this machine (sshd
on 127.0.0.2 and .3, as the fleet tests), then `diskq cluster --from` over what it fetched.

There is no Ceph cluster here: the hosts' `ceph` is a small program that prints the recorded
outputs of a real cluster (the Octopus bcache cluster of ../shared/data/ceph-clusters: osd
metadata, osd df, device ls, health detail) and, for `ceph tell osd.0 perf dump`, the recorded
perf dump of a flash OSD of another cluster (a combined case); osd.1 and osd.2 answer with an
error, as OSDs that are down do, and `config dump` is refused as by a release without it. No
output is invented: unknown commands print nothing and fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet_hosts import Fleet, missing
from tests.test_cluster import CLUSTERS

pytestmark = [pytest.mark.root, pytest.mark.slow]
WHY = missing()
if WHY:
    pytest.skip(f"cluster playbook tests: {WHY}", allow_module_level=True)
if not CLUSTERS.is_dir():
    pytest.skip(f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository)", allow_module_level=True)

FAKE_CEPH = """#!{python}
import sys
recorded = {{
    ("osd", "metadata"): "{juju}/osd-metadata.json",
    ("osd", "df"): "{juju}/osd-df.json",
    ("device", "ls"): "{juju}/device-ls.json",
    ("health", "detail"): "{juju}/health-detail.json",
    ("tell", "osd.0"): "{perf}",
}}
path = recorded.get(tuple(sys.argv[1:3]))
if path is None:
    sys.exit(22)
sys.stdout.write(open(path).read())
"""


def test_the_playbook_collects_and_diskq_cluster_reads_it(tmp_path):
    with Fleet(tmp_path, {"h1": 0, "h2": 0}) as fleet:
        fake = tmp_path / "fakebin"
        fake.mkdir()
        ceph = fake / "ceph"
        ceph.write_text(
            FAKE_CEPH.format(
                python=sys.executable,
                juju=CLUSTERS / "hotsos-octopus-15.2.14-juju-bcache",
                perf=CLUSTERS / "clyso-perf-dump-nvme-30tb" / "perf-dump-osd.json",
            )
        )
        ceph.chmod(0o755)
        wrapper = tmp_path / "diskq-with-fake-ceph"
        wrapper.write_text(f'#!/bin/sh\nPATH={fake}:$PATH exec {Path(sys.executable).with_name("diskq")} "$@"\n')
        wrapper.chmod(0o755)
        out = tmp_path / "cluster-outputs"
        done = fleet.playbook(
            fleet.inventory([], tmp_path / "unused"),
            "-e",
            f"diskq_cluster_bin={wrapper}",
            "-e",
            f"diskq_cluster_dir={out}",
            "-e",
            f"diskq_cluster_remote_dir={tmp_path / 'remote'}",
            "-e",
            f"diskq_cluster_ceph_volume_bin={tmp_path / 'no-ceph-volume'}",
            playbook="cluster.yml",
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == [
        "collect-status.json",
        "device-ls.json",
        "health-detail.json",
        "osd-df.json",
        "osd-metadata.json",
        "perf-dump.osd.0.json",
    ]
    assert "h1: no ceph-volume inventory" in done.stdout and "h2: no ceph-volume inventory" in done.stdout
    assert "h1: no ceph-volume lvm list" in done.stdout and "h2: no ceph-volume lvm list" in done.stdout
    report = subprocess.run(
        [str(Path(sys.executable).with_name("diskq")), "cluster", "--from", str(out), "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=True,
    )
    doc = json.loads(report.stdout)
    assert doc["summary"]["osds"] == 3
    assert doc["osds"][0]["kv_ms"]["kv_commit_lat"] > 0
    problems = doc["inputs"]["problems"]
    assert [p.split()[1] for p in problems if "did not answer" in p] == ["osd.1", "osd.2"]
    assert any("config dump" in p for p in problems)
    assert any("no perf dump of this OSD" in n for n in doc["osds"][1]["notes"])
