"""``diskq plan``: from a qualified WAL/DB device to an OSD layout.

:mod:`~diskq.plan.rules` reads ``rules.toml`` (every number with its source),
:mod:`~diskq.plan.device` turns a result document or a devices.db row into the measured facts
a plan needs, :mod:`~diskq.plan.model` holds what a plan is made of and
:mod:`~diskq.plan.layout` the layout rules as pure functions,
:mod:`~diskq.plan.cephadm` and :mod:`~diskq.plan.ceph_volume` render what an operator runs.
"""
