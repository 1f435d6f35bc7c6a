"""Benchmarks of diskq itself: qualification time, fidelity, database scale, CLI start-up (see README.md)."""
