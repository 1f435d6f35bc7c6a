"""The drive models of ``models.toml``: their parameters, and the daemon's command line.

>>> m = load()["consumer-sata"]
>>> m.volatile_cache, m.honest, "--flush-us" in m.daemon_args()
(True, True, True)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

MODELS = Path(__file__).with_name("models.toml")

#: model key -> daemon option, for every numeric parameter
_OPTIONS = {
    "write_us": "--write-us",
    "write_mbps": "--write-mbps",
    "channels": "--channels",
    "contention": "--contention",
    "flush_us": "--flush-us",
    "drain_mbps": "--drain-mbps",
    "empty_flush_us": "--empty-flush-us",
    "slc_mib": "--slc-mib",
    "slow_write_us": "--slow-write-us",
    "slc_recover_mbps": "--slc-recover-mbps",
    "off_write_us": "--off-write-us",
    "gc_every_mib": "--gc-every-mib",
    "gc_pause_us": "--gc-pause-us",
}
_TEXT = {"title", "calibration", "reports", "expect", "volatile_cache", "honest"}


@dataclass(frozen=True)
class DriveModel:
    name: str
    title: str
    calibration: str
    volatile_cache: bool
    honest: bool
    params: dict[str, float]
    reports: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)

    def daemon_args(self) -> list[str]:
        out = ["--volatile-cache", str(int(self.volatile_cache)), "--honest", str(int(self.honest))]
        for key, value in self.params.items():
            out += [_OPTIONS[key], f"{value:g}"]
        return out

    @property
    def write_cache_knob(self) -> str:
        """The loop device's ``queue/write_cache``: what the kernel believes of the drive's cache."""
        return "write back" if self.volatile_cache else "write through"


def load(path: Path = MODELS) -> dict[str, DriveModel]:
    """Every model of ``path``; an unknown parameter or a negative value is refused."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for name, entry in data.items():
        unknown = set(entry) - set(_OPTIONS) - _TEXT
        if unknown:
            raise ValueError(f"{path.name}: [{name}] has unknown parameters: {', '.join(sorted(unknown))}")
        params = {k: float(v) for k, v in entry.items() if k in _OPTIONS}
        if any(v < 0 for v in params.values()):
            raise ValueError(f"{path.name}: [{name}] has a negative parameter")
        out[name] = DriveModel(
            name,
            entry["title"],
            " ".join(entry["calibration"].split()),
            bool(entry["volatile_cache"]),
            bool(entry["honest"]),
            params,
            dict(entry.get("reports", {})),
            dict(entry.get("expect", {})),
        )
    return out
