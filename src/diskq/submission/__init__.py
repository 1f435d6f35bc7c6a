"""Submissions: the signed, validated files that feed the device database."""
