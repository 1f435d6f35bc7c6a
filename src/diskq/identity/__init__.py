"""Which drive a name means: product lines as data, vendors' part-number schemes, and the one
matcher that every command (lookup, plan, identify/bench, the site's search, cluster) asks."""
