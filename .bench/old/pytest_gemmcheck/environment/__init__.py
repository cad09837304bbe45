"""Where a case runs: the stack fingerprint, GPU identity, the git revision, and background load (stressors)."""
