"""Waiting for a launch, with a deadline (``--gemmcheck-launch-timeout``).

A launch has two parts that can hang: the call itself (Python, or a host-side wait inside
it) and the GPU work it queued. The call is interrupted by a timer signal (SIGALRM, in the
main thread where the platform has it: Python code and sleeps are interrupted; a C call that
holds the interpreter is interrupted when it returns). The GPU work is waited for through an
event marked on the current stream behind it (and behind what must be read before the next
launch: its guards), polled until it completes or the deadline passes, yielding the
interpreter between polls so that a stressor's thread keeps its load queued. What is queued
after the mark (the launch's check) goes on running while the host prepares the next launch.
Kernels are ordered on the current stream, as torch's own ops are; work a kernel leaves on
streams of its own is not waited for here.

A GPU kernel that does not finish cannot be stopped: the process's device is unusable from
then on, which the launch loop reports and the session honours (its later cases on that GPU
are skipped, and the process ends without waiting for the device).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

import torch

from ..errors import LaunchHung

_SPIN_S = 1e-3  # poll without sleeping this long: a launch's usual wait, kept precise
_NAP_S = 1e-4  # then poll this often: a long kernel loses nothing to it


class Deadline:
    """The deadline of each launch of one loop; ``timeout_s`` 0 waits as long as it takes."""

    def __init__(self, timeout_s: float, device: torch.device):
        self.timeout_s = timeout_s
        self.device = device
        self._event = torch.cuda.Event() if device.type == "cuda" else None
        self._alarm = timeout_s > 0 and hasattr(signal, "setitimer") and \
            threading.current_thread() is threading.main_thread()
        self.started = 0.0

    @contextlib.contextmanager
    def armed(self):
        """Around the loop: the timer signal's handler (the previous one is put back)."""
        if not self._alarm:
            yield self
            return
        previous = signal.signal(signal.SIGALRM, self._expired)
        try:
            yield self
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _expired(self, signum, frame):
        raise LaunchHung(self._words("the host"))  # the call itself did not return, on any device

    def _words(self, where: str) -> str:
        return (f"did not finish within {self.timeout_s:g} s on {where} (--gemmcheck-launch-timeout="
                f"{self.timeout_s:g})")

    @contextlib.contextmanager
    def call(self):
        """Around the launch call."""
        self.started = time.monotonic()
        if self._alarm:
            signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
        try:
            yield
        finally:
            if self._alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def mark(self) -> None:
        """Behind what the launch queued so far on the current stream: the point wait() waits for."""
        if self._event is not None:
            self._event.record(torch.cuda.current_stream(self.device))

    def wait(self) -> None:
        """For the launch's GPU work up to the last mark, until the deadline."""
        if self._event is None:
            return
        if self.timeout_s <= 0:
            self._event.synchronize()
            return
        while not self._event.query():
            waited = time.monotonic() - self.started
            if waited > self.timeout_s:
                raise LaunchHung(self._words("the GPU") + "; a GPU kernel cannot be stopped, so this GPU is not used "
                                 "again in this process", device_lost=True)
            time.sleep(0 if waited < _SPIN_S else _NAP_S)  # sleep(0) yields the interpreter
