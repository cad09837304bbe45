"""The pytest session: its state and hooks, the fixtures, its use of the history, --gemmcheck-processes, xdist."""
