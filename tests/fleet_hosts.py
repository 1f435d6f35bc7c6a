"""Hosts for the fleet tests: one sshd on several loopback addresses, a key made for the test,
and loop devices of each host's own over temporary files. Everything is undone on exit."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
REPO = Path(__file__).resolve().parents[1]


def missing() -> str | None:
    """Why the fleet tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (loop devices, sshd)"
    for tool, why in (
        (SSHD, "openssh-server (sshd)"),
        ("ssh", "openssh-client"),
        ("ssh-keygen", "openssh-client"),
        ("fio", "fio"),
        ("losetup", "util-linux"),
    ):
        if not (os.path.exists(tool) if tool.startswith("/") else shutil.which(tool)):
            return f"{why} is not installed (scripts/bootstrap --test installs it)"
    if not Path(sys.executable).with_name("ansible-playbook").exists():
        return "ansible-playbook is not in the virtualenv (scripts/bootstrap --test installs ansible-core)"
    return None


def _free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def _wait_listening(addr: str, port: int, timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection((addr, port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"sshd did not listen on {addr}:{port}")


@dataclass
class Host:
    name: str
    address: str
    devices: list[str] = field(default_factory=list)  #: loop devices diskq may bench
    mounted: str | None = None  #: a loop device with a mounted filesystem (must be refused)


class Fleet:
    """``with Fleet(tmp, {"h1": 2, ...}) as fleet``: sshd on 127.0.0.2, .3, ... and loop devices."""

    def __init__(
        self,
        tmp: Path,
        devices: dict[str, int],
        *,
        memory: set[str] = frozenset(),
        mounted: set[str] = frozenset(),
        unreachable: tuple[str, ...] = (),
    ):
        self.tmp = tmp
        self.plan = devices
        self.memory = memory  # "host:index" of devices backed by a file in /dev/shm
        self.mounted_hosts = mounted
        self.unreachable = unreachable
        self.hosts: list[Host] = []
        self.port = 0
        self._sshd: subprocess.Popen | None = None
        self._loops: list[str] = []
        self._mounts: list[Path] = []
        self._files: list[Path] = []
        self.key = tmp / "id_ed25519"

    # --- setup ------------------------------------------------------------------------------
    def __enter__(self) -> Fleet:
        try:
            self._start_sshd()
            for i, (name, count) in enumerate(self.plan.items()):
                host = Host(name, f"127.0.0.{i + 2}")
                for j in range(count):
                    in_memory = f"{name}:{j}" in self.memory
                    host.devices.append(self._loop(f"{name}-{j}", in_memory=in_memory))
                if name in self.mounted_hosts:
                    host.mounted = self._mounted_loop(f"{name}-mounted")
                self.hosts.append(host)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start_sshd(self) -> None:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.tmp / "host_key")], check=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True)
        shutil.copy(f"{self.key}.pub", self.tmp / "authorized_keys")
        addresses = [f"127.0.0.{i + 2}" for i in range(len(self.plan))]
        self.port = _free_port(addresses[0])
        config = self.tmp / "sshd_config"
        config.write_text(
            "".join(f"ListenAddress {a}:{self.port}\n" for a in addresses)
            + (
                f"HostKey {self.tmp / 'host_key'}\n"
                f"AuthorizedKeysFile {self.tmp / 'authorized_keys'}\n"
                f"PidFile {self.tmp / 'sshd.pid'}\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                "UsePAM no\nStrictModes no\nSubsystem sftp internal-sftp\nMaxStartups 50\nMaxSessions 50\n"
            )
        )
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self._sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=open(self.tmp / "sshd.log", "wb"))
        for a in addresses:
            _wait_listening(a, self.port)

    def _backing(self, name: str, in_memory: bool, size_mib: int = 64) -> Path:
        where = Path("/dev/shm") if in_memory else self.tmp
        path = where / f"diskq-fleet-{os.getpid()}-{name}.img"
        with open(path, "wb") as f:
            f.truncate(size_mib * 1024 * 1024)
        self._files.append(path)
        return path

    def _loop(self, name: str, *, in_memory: bool = False) -> str:
        dev = subprocess.run(
            ["losetup", "--find", "--show", str(self._backing(name, in_memory))],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        self._loops.append(dev)
        return dev

    def _mounted_loop(self, name: str) -> str:
        dev = self._loop(name)
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        mnt = self.tmp / f"mnt-{name}"
        mnt.mkdir()
        subprocess.run(["mount", dev, str(mnt)], check=True)
        self._mounts.append(mnt)
        return dev

    # --- teardown (always, in reverse) ------------------------------------------------------
    def __exit__(self, *exc) -> None:
        for mnt in reversed(self._mounts):
            subprocess.run(["umount", str(mnt)], check=False)
        for dev in reversed(self._loops):
            subprocess.run(["losetup", "-d", dev], check=False)
        for f in self._files:
            f.unlink(missing_ok=True)
        if self._sshd is not None:
            self._sshd.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._sshd.wait(timeout=10)
            if self._sshd.poll() is None:
                self._sshd.kill()

    # --- running the playbook ---------------------------------------------------------------
    def inventory(self, bench_args: list[str], results: Path) -> Path:
        """An inventory of every host (and the unreachable ones), selecting each host's devices by path."""
        import json

        lines = ["[fleet]"]
        for h in self.hosts:
            paths = h.devices + ([h.mounted] if h.mounted else [])
            lines.append(f"{h.name} ansible_host={h.address} diskq_select_paths='{json.dumps(paths)}'")
        for i, name in enumerate(self.unreachable):
            # an address on this machine where nothing listens
            lines.append(f"{name} ansible_host=127.0.0.{200 + i} diskq_select_paths='[\"/dev/null\"]'")
        lines += [
            "[fleet:vars]",
            f"ansible_port={self.port}",
            "ansible_user=root",
            f"ansible_ssh_private_key_file={self.key}",
            f"ansible_python_interpreter={sys.executable}",
            "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5'",
            "diskq_become=false",
            f"diskq_bin={Path(sys.executable).with_name('diskq')}",
            f"diskq_results_dir={results}",
            f"diskq_remote_dir={self.tmp / 'remote'}/{{{{ inventory_hostname }}}}",
            f"diskq_bench_args='{json.dumps(bench_args)}'",
        ]
        path = self.tmp / f"inventory-{len(list(self.tmp.glob('inventory-*')))}.ini"
        path.write_text("\n".join(lines) + "\n")
        return path

    def playbook(
        self, inventory: Path, *args: str, timeout: float = 900, playbook: str = "qualify.yml"
    ) -> subprocess.CompletedProcess:
        env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(REPO / "ansible" / "ansible.cfg"),
            ANSIBLE_LOCAL_TEMP=str(self.tmp / "ansible-local"),
            ANSIBLE_HOME=str(self.tmp / "ansible-home"),
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_FORCE_COLOR="0",
            ANSIBLE_HOST_KEY_CHECKING="False",
            ANSIBLE_SSH_CONTROL_PATH_DIR=str(self.tmp / "cp"),
            ANSIBLE_TIMEOUT="10",
        )
        cmd = [
            str(Path(sys.executable).with_name("ansible-playbook")),
            "-i",
            str(inventory),
            str(REPO / "ansible" / playbook),
            "-e",
            "diskq_hosts=fleet",
            *args,
        ]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def write_ios(dev: str) -> int:
    """Write I/Os completed on ``dev`` since it was attached (/sys/block/NAME/stat, field 5)."""
    return int(Path("/sys/block", os.path.basename(dev), "stat").read_text().split()[4])


def write_cache(dev: str) -> str:
    return Path("/sys/block", os.path.basename(dev), "queue", "write_cache").read_text().strip()
