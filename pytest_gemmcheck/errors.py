"""Exceptions a user can meet, each with a message that stands on its own."""

from __future__ import annotations


class GemmcheckError(Exception):
    """Base of the plugin's own errors."""


class CaseError(GemmcheckError, ValueError):
    """A case that cannot be built as asked (unknown quant mode, shape the mode refuses, ...)."""


class GemmcheckFailure(AssertionError):
    """The verdict on a case is a failure: the message carries the evidence.

    An AssertionError so that pytest reports it as a test failure, not an error.
    """


class LaunchError(GemmcheckFailure):
    """A launch raised. Chained to the kernel's own exception."""
