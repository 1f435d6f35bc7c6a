"""Qualifying many drives on many hosts: selection on each host, one report over all results."""
