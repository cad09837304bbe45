"""Judging a result: baselines (goldens, history, clean), verdicts and their statistics, and their words."""
