"""The history database: schema (models), connections and migrations (engine), reads and
writes (store). Imported only when a session records or a command reads."""
