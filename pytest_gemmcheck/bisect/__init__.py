"""``gemmcheck bisect``: flake-aware bisection of an intermittent kernel failure.

model.py is the Bayesian noisy binary search (pure Python, no git, no database); probe.py
checks revisions out in git worktrees, runs the probe command and reads its bad and total
launches back from the history; command.py is the CLI command. docs/bisect.md describes the
model, its assumptions and its limits.
"""
