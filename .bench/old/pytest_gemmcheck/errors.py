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


class LaunchHung(GemmcheckError):
    """A launch did not finish within --gemmcheck-launch-timeout. ``device_lost``: its GPU work
    is still running, and no later work on that GPU can finish in this process."""

    def __init__(self, message: str, *, device_lost: bool = False):
        super().__init__(message)
        self.device_lost = device_lost


class CommandError(Exception):
    """A usage error of the gemmcheck command found after its arguments were parsed (a side that
    names nothing, an empty key); exit status 2, as argparse's own."""
