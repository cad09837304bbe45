"""Flake-aware bisection of an intermittent kernel failure, the engine of ``gemmcheck bisect``.

model.py is the Bayesian noisy binary search (pure Python, no git, no database); probe.py
checks revisions out in git worktrees, runs the probe command and reads its bad and total
launches back from the history; bisection.py runs the search over those probes and makes its
report. The command is commands/bisect.py. docs/bisect.md describes the model, its assumptions
and its limits.
"""
