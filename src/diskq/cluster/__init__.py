"""``diskq cluster``: judge the WAL/DB devices of a running Ceph cluster from what Ceph reports.

Read-only: nothing here writes to a device. The flow, one module each:

- :mod:`~diskq.cluster.parse`, :mod:`~diskq.cluster.perf`, :mod:`~diskq.cluster.config`,
  :mod:`~diskq.cluster.health`, :mod:`~diskq.cluster.checks` and :mod:`~diskq.cluster.volumes`:
  pure parsers of Ceph's outputs (``osd metadata``, ``perf dump``, ``osd df``, ``osd perf``,
  ``config dump``, ``device ls``, ``ceph-volume inventory``/``lvm list``/``lvm batch --report``,
  ``ceph-disk list``, ``ceph report``, ``health detail`` by check name), each with a short sample
  of real output;
- :mod:`~diskq.cluster.inputs`: a directory of saved outputs read into :class:`Inputs`;
  :mod:`~diskq.cluster.collect`: the same outputs collected through the ``ceph`` CLI
  (:mod:`diskq.proc` runs it);
- :mod:`~diskq.cluster.judge`: the rules of ``criteria.toml [cluster]`` as pure functions;
- :mod:`~diskq.cluster.explain`: spillover against RocksDB's levels, the fix per release, and
  caveats for bcache, dm-crypt, RAID controllers and virtual disks;
- :mod:`~diskq.cluster.models`: drive models -> the database (one call site);
- :mod:`~diskq.cluster.merge` and :mod:`~diskq.cluster.health_findings`: the hosts' volume
  listings joined to the OSDs, and findings from Ceph's own health checks, osd perf and plans;
- :mod:`~diskq.cluster.report`: OSDs, their devices and the database's figures put together,
  judged, with what is missing named; :mod:`~diskq.cluster.osd_rows`: one OSD's row of it.
"""
