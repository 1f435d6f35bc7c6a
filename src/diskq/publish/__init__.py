"""The static site generated from devices.db (templates and assets live in site/)."""
