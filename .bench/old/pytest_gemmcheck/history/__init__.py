"""The history database: its tables (schema), connections and migrations (engine), writes
(store) and reads (queries, dashboard). Imported only when a session records or a command reads."""
