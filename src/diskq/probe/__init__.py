"""Probing the target: identity (smartctl, nvme-cli, sysfs), write cache, safety checks."""
