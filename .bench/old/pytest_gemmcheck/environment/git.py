"""The revision a run was made at: HEAD of the repository holding the rootdir, and whether the
tree had changes."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_state(path: Path) -> tuple[str | None, bool | None]:
    """(HEAD revision, dirty) of the repository holding ``path``; (None, None) outside one."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return head.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None, None
