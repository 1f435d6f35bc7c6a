"""Turning measured curves into answers: USL fit, scaling class, workload verdicts."""
