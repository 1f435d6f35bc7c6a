"""The static site generated from devices.db (templates and assets live in templates/ and static/ beside this module)."""
