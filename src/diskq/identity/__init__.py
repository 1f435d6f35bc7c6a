"""Which drive a name means: product lines as data, vendors' part-number schemes, and the one
matcher that every command (lookup, plan, identify/bench, the site's search, cluster) asks.

- :mod:`~diskq.identity.facts`: :class:`LineFacts`, what a vendor documents about a line;
- :mod:`~diskq.identity.lines`: ``sources/lines/*.toml`` read into lines (facts, names, parts);
- :mod:`~diskq.identity.parts`: part-number patterns and the vendors' capacity codes;
- :mod:`~diskq.identity.names`: how the words of a name or query name a line;
- :mod:`~diskq.identity.match`: the one matcher (:func:`~diskq.identity.match.resolve`);
- :mod:`~diskq.identity.store`: the lines in devices.db; :mod:`~diskq.identity.query`: a query
  against devices.db (the lines it names and what the database holds of each);
- :mod:`~diskq.identity.family`: family keys, what rows, public models and lines join on;
- :mod:`~diskq.identity.disks`: hard disk drives by their model numbers (``hard_disks.toml``),
  tried only where no line names the string.

docs/model-identity.md has the rules and how a line is added.
"""
