"""Plain records that every layer uses and that travel as JSON (xdist reports, the database, the
report page). The floor of the package: nothing here imports another part of it."""
