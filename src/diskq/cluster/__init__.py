"""``diskq cluster``: judge the WAL/DB devices of a running Ceph cluster from what Ceph reports.

Read-only: nothing here writes to a device. The flow, one module each:

- :mod:`~diskq.cluster.parse`: pure parsers of Ceph's outputs (``osd metadata``, ``perf dump``,
  ``osd df``, ``config dump``, ``device ls``, ``ceph-volume inventory``, ``ceph report``,
  ``health detail``), each with a short sample of real output;
- :mod:`~diskq.cluster.inputs`: a directory of saved outputs read into :class:`Inputs`, the
  same outputs collected through the ``ceph`` CLI (:mod:`diskq.proc` runs it);
- :mod:`~diskq.cluster.judge`: the rules of ``criteria.toml [cluster]`` as pure functions;
- :mod:`~diskq.cluster.report`: OSDs, their devices and the database's figures put together,
  judged, with what is missing named.
"""
