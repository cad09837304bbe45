"""Reports on the harness's own kernels (the poison fill, the check, torch's reductions), which
are left out so that a hazard always belongs to the kernel under test."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Sequence

from ..records.sanitize import SanitizerFinding


def is_harness(finding: SanitizerFinding, patterns: Sequence[str]) -> bool:
    """Whether the finding's kernel, as the report names it (demangled: "void at::native::
    reduce_kernel<...>(T3)"), matches one of ``patterns`` (shell-style: "*at::native::*"; a
    name without wildcards matches itself only). A report on no kernel (a CUDA API error) is
    never the harness's."""
    return finding.kernel is not None and any(fnmatchcase(finding.kernel, pattern) for pattern in patterns)
