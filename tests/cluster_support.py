"""Where the cluster tests find their inputs: the recorded outputs of real clusters
(``../shared/data/ceph-clusters`` beside the repository, or ``DISKQ_CEPH_CLUSTERS``; not committed,
so the tests that need them skip without them), the committed fixtures and the committed database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "ceph"
CLUSTERS = Path(os.environ.get("DISKQ_CEPH_CLUSTERS") or REPO.parent / "shared" / "data" / "ceph-clusters")
DB = REPO / "devices.db"
needs_data = pytest.mark.skipif(
    not CLUSTERS.is_dir(),
    reason=f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository): they are not committed",
)
