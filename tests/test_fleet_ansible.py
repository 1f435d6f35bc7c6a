"""The fleet playbook run by the real ansible-playbook against hosts on this machine: sshd on
127.0.0.2, .3 and .4 with a key made here, each host with loop devices of its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from diskq.fleet.report import natural_key
from tests.conftest import fio_processes
from tests.fleet_hosts import Fleet, missing, write_cache, write_ios

pytestmark = [pytest.mark.root, pytest.mark.fio, pytest.mark.slow]
WHY = missing()
if WHY:
    pytest.skip(f"fleet tests: {WHY}", allow_module_level=True)

FAST = ["--jobs", "1,2", "--runtime", "2", "--no-flush-check"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    # h3's second device is a loop device over a file in RAM: far faster than its siblings
    with Fleet(tmp, {"h1": 2, "h2": 2, "h3": 2}, memory={"h3:1"}, mounted={"h2"}, unreachable=("h9",)) as f:
        yield f


def _report(results: Path) -> dict:
    done = subprocess.run(
        [str(Path(os.sys.executable).with_name("diskq")), "fleet", "report", str(results), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_check_mode_lists_every_device_and_writes_nothing(fleet, tmp_path):
    results = tmp_path / "results"
    devices = [d for h in fleet.hosts for d in h.devices]
    before = {d: write_ios(d) for d in devices}
    done = fleet.playbook(fleet.inventory(FAST, results), "--check")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    for d in devices:
        assert f"{d} (unknown model): would bench" in done.stdout
    mounted = fleet.hosts[1].mounted
    assert f"{mounted} (unknown model): refused: refusing to write to {mounted}: it is in use" in done.stdout
    assert not results.exists() or not any(results.rglob("*")), "check mode wrote results"
    assert {d: write_ios(d) for d in devices} == before, "check mode wrote to a device"


@pytest.fixture(scope="module")
def normal_run(fleet, tmp_path_factory):
    results = tmp_path_factory.mktemp("normal") / "results"
    devices = [d for h in fleet.hosts for d in h.devices]
    caches = {d: write_cache(d) for d in devices}
    done = fleet.playbook(fleet.inventory(FAST, results))
    return results, done, caches


def test_every_device_of_every_reachable_host_is_benched_and_fetched(fleet, normal_run):
    results, done, caches = normal_run
    # the unreachable host makes the play's exit non-zero; every other host completes
    assert "h9" in done.stdout and "unreachable" in done.stdout.lower()
    for host in fleet.hosts:
        status = json.loads((results / host.name / "status.json").read_text())
        assert status["state"] == "done", status
        for dev in host.devices:
            name = os.path.basename(dev)
            doc = json.loads((results / host.name / f"{name}.json").read_text())
            assert doc["device"]["path"] == dev and not doc["interrupted"]
            assert [p["numjobs"] for p in doc["runs"][0]["points"]] == [1, 2]
            assert {
                "path": dev,
                "name": name,
                "rc": 0,
                "result": f"{name}.json",
                "error": "",
                "stderr_tail": [],
            } in status["benches"]
    # no cache left switched: every loop device's kernel knob is as it was
    assert {d: write_cache(d) for d in caches} == caches


def test_the_report_flags_the_memory_backed_drive_and_lists_the_faults(fleet, normal_run):
    results, _, _ = normal_run
    rep = _report(results)
    assert rep["summary"]["hosts"] == 4 and rep["summary"]["drives"] == 6
    memory = os.path.basename(fleet.hosts[2].devices[1])
    drives = {(d["host"], d["name"]): d for g in rep["groups"] for d in g["drives"]}
    fast = drives[("h3", memory)]  # measured on RAM: named as such, never part of the median
    assert fast["memory_backed"] and not fast["outlier"] and "ratios" in fast and not fast["ratios"], fast
    group = next(g for g in rep["groups"] if fast in g["drives"])
    assert any(f"h3 {memory}: measured on RAM" in n for n in group["notes"])
    kinds = {(p["host"], p["kind"]) for p in rep["problems"]}
    assert ("h9", "unreachable") in kinds
    refused = next(p for p in rep["problems"] if p["kind"] == "refused")
    assert refused["host"] == "h2" and refused["device"] == fleet.hosts[1].mounted and "mounted" in refused["reason"]


def _argv(pid: str) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _parent(pid: str) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return None


def _interrupt_first_bench(dev: str, stop: threading.Event) -> None:
    """SIGINT to the `diskq bench DEV` process once fio writes to DEV (as Ctrl-C would).

    It waits for fio itself, found by its --filename, and walks up to the diskq that started it:
    any child of diskq (a probe such as smartctl) or a fixed delay after one would stop the bench
    at another point whenever a loaded host runs the probes slower."""
    while not stop.is_set():
        for ppid, _ in fio_processes(dev).values():
            ancestor = str(ppid)
            while ancestor not in (None, "0", "1"):
                up = _argv(ancestor)
                if b"bench" in up and dev.encode() in up and any(a.endswith(b"diskq") for a in up[:2]):
                    os.kill(int(ancestor), signal.SIGINT)
                    return
                ancestor = _parent(ancestor)
        time.sleep(0.05)


def test_a_bench_interrupted_on_one_host_loses_nothing_and_the_rest_goes_on(fleet, tmp_path):
    results = tmp_path / "results"
    h1 = fleet.hosts[0]
    caches = {d: write_cache(d) for d in h1.devices}
    stop = threading.Event()
    killer = threading.Thread(target=_interrupt_first_bench, args=(h1.devices[0], stop), daemon=True)
    killer.start()
    try:
        done = fleet.playbook(
            fleet.inventory(["--jobs", "1,2,4", "--runtime", "3", "--no-flush-check"], results), "--limit", "h1"
        )
    finally:
        stop.set()
        killer.join(5)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert sorted(p.name for p in (results).iterdir()) == ["h1"], "--limit h1 ran elsewhere"
    status = json.loads((results / "h1" / "status.json").read_text())
    first, second = (os.path.basename(d) for d in h1.devices)
    rc = {b["name"]: b["rc"] for b in status["benches"]}
    assert rc == {first: 130, second: 0}
    partial = json.loads((results / "h1" / f"{first}.json").read_text())
    assert partial["interrupted"] is True
    assert {d: write_cache(d) for d in caches} == caches
    rep = _report(results)
    assert any(p["kind"] == "interrupted" and p["device"] == h1.devices[0] for p in rep["problems"])
    # drives in the order an operator counts them (loop9 before loop10), the interrupted one marked
    assert [(d["name"], d["interrupted"]) for g in rep["groups"] for d in g["drives"]] == sorted(
        [(first, True), (second, False)], key=lambda x: natural_key(x[0])
    )
