"""Settings: the one option table (flags, ini keys, environment, marker) and the Settings it makes; GPU choice."""
