"""Static checker for LDS hazards between global->LDS DMA loads and LDS reads in AMDGPU assembly.

``lint_text`` / ``lint_file`` return a :class:`LintReport`; ``gemmcheck lint`` (see
:mod:`pytest_gemmcheck.compiled.lint.command`) is the command line. Nothing here imports FlyDSL or torch.
"""

from .analysis import Options, lint_file, lint_text
from .findings import Finding, LintReport, LoadRef, format_json, format_text

__all__ = ["Finding", "LintReport", "LoadRef", "Options", "format_json", "format_text", "lint_file", "lint_text"]
