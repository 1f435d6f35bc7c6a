"""devices.db: built from all submissions, queried by lookup and the site."""
