"""Waiting for a launch, with a deadline (``--gemmcheck-launch-timeout``).

A launch has two parts that can hang: the call itself (Python, or a host-side wait inside
it) and the GPU work it queued. The call is interrupted by a timer signal (SIGALRM, in the
main thread where the platform has it: Python code and sleeps are interrupted; a C call that
holds the interpreter is interrupted when it returns). The GPU work is waited for by polling
events recorded on the current stream behind it, until they complete or the deadline passes,
yielding the interpreter between polls so that a stressor's thread keeps its load queued. The
host polls only when it needs a launch's results: launches are queued ahead of their reading
(loop.py), and each launch's deadline runs from when the GPU could have started it (its call,
or the completion of the launch before it, whichever was seen later).

The timer is shared with whoever else uses SIGALRM in the process (pytest-timeout's signal
method, a test's own alarm): the previous handler stays in charge of the previous timer. Around
each call the timer is set to the earlier of the two expiries; when the signal comes for the
other one, the previous handler is called as if nothing stood between (its timer's interval
kept), and when the loop ends the previous timer gets its remaining time back. A call leaves the
timer as it is when it is due later than one already set: the timer goes off at most once per
timeout and sets itself again for the call then running, so a loop of short calls pays no
system call per call. Kernels are ordered on the current stream, as torch's own ops are; work a
kernel leaves on streams of its own is not waited for here.

A GPU kernel that does not finish cannot be stopped: the process's device is unusable from
then on, which the launch loop reports and the session honours (its later cases on that GPU
are skipped, and the process ends without waiting for the device).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import torch

from ..errors import LaunchHung

_SPIN_S = 1e-3  # poll without sleeping this long: a launch's usual wait, kept precise
_NAP_S = 1e-4  # then poll this often: a long kernel loses nothing to it
_SOONEST_S = 1e-6  # setitimer(0) would cancel a timer that is due: it is set this close instead


class _SharedAlarm:
    """SIGALRM for one loop's launch calls, the previous handler and timer kept working: while
    armed, ``expires_at`` is the launch call's deadline (None between calls) and
    ``previous_at`` the previous timer's (None when it had none)."""

    def __init__(self, on_expiry):
        self._on_expiry = on_expiry
        self.expires_at: float | None = None
        self.previous_at: float | None = None
        self._timer_at: float | None = None  # when the timer is set to go off (None: not set)
        self._interval = 0.0
        self._previous_handler = None

    def install(self) -> None:
        self._previous_handler = signal.signal(signal.SIGALRM, self._handle)
        value, self._interval = signal.setitimer(signal.ITIMER_REAL, 0)
        self.previous_at = time.monotonic() + value if value > 0 else None
        self._set_timer()

    def uninstall(self) -> None:
        self.expires_at = self._timer_at = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous_handler)
        if self.previous_at is not None:  # the previous timer's remaining time, under its own handler again
            signal.setitimer(signal.ITIMER_REAL, max(_SOONEST_S, self.previous_at - time.monotonic()), self._interval)

    def start_call(self, timeout_s: float) -> None:
        # A timer already set to go off sooner stays: when it does, a call not yet due sets it
        # again for its own expiry. So a loop of short calls makes no system call per call.
        self.expires_at = time.monotonic() + timeout_s
        if self._timer_at is None or self._timer_at > self.expires_at:
            self._set_timer()

    def end_call(self) -> None:
        self.expires_at = None  # the timer, if it goes off before the next call, sets itself again or stops

    def _set_timer(self) -> None:
        # one shot: an interval of the previous timer is kept by _handle, which sets it again
        due = [at for at in (self.expires_at, self.previous_at) if at is not None]
        if not due:
            self._timer_at = None
            signal.setitimer(signal.ITIMER_REAL, 0)
            return
        self._timer_at = min(due)
        signal.setitimer(signal.ITIMER_REAL, max(_SOONEST_S, self._timer_at - time.monotonic()))

    def _handle(self, signum, frame):
        self._timer_at = None
        now = time.monotonic()
        if self.previous_at is not None and now >= self.previous_at:
            # the previous timer's time: its handler runs as it would have; an interval timer goes on
            self.previous_at = now + self._interval if self._interval > 0 else None
            self._set_timer()
            self._call_previous(signum, frame)
            return
        if self.expires_at is not None and now >= self.expires_at:
            self.expires_at = None
            self._set_timer()
            self._on_expiry()  # raises
        self._set_timer()  # early, or for a call begun since it was set: set again for what is due

    def _call_previous(self, signum, frame) -> None:
        handler = self._previous_handler
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:  # the default action (the process ends), as it would have been
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGALRM)


class Deadline:
    """The deadline of each launch of one loop; ``timeout_s`` 0 waits as long as it takes."""

    def __init__(self, timeout_s: float, device: torch.device):
        self.timeout_s = timeout_s
        self.device = device
        self.on_gpu = device.type == "cuda"
        use_alarm = (
            timeout_s > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        self._alarm = _SharedAlarm(self._expired) if use_alarm else None
        self.started = 0.0  # when the latest launch call began
        # the loop's stream, named once: looking the current one up costs microseconds a launch
        self._stream = torch.cuda.current_stream(device) if self.on_gpu else None

    @contextlib.contextmanager
    def armed(self):
        """Around the loop: the timer signal's handler (the previous one, and its timer, put back)."""
        if self._alarm is None:
            yield self
            return
        self._alarm.install()
        try:
            yield self
        finally:
            self._alarm.uninstall()

    def _expired(self):
        raise LaunchHung(self._words("the host"))  # the call itself did not return, on any device

    def _words(self, where: str) -> str:
        return f"did not finish within {self.timeout_s:g} s on {where} (--gemmcheck-launch-timeout={self.timeout_s:g})"

    def start_call(self) -> float:
        """Before the launch call (end_call after it, however it ends): when it began."""
        self.started = time.monotonic()
        if self._alarm is not None:
            self._alarm.start_call(self.timeout_s)
        return self.started

    def end_call(self) -> None:
        if self._alarm is not None:
            self._alarm.end_call()

    def event(self):
        """A new event to mark a point of the current stream (None off the GPU)."""
        return torch.cuda.Event() if self.on_gpu else None

    def mark(self, event) -> None:
        """``event`` behind what is queued so far on the current stream."""
        if event is not None:
            event.record(self._stream)

    def wait(self, event, since: float) -> None:
        """For the GPU work up to ``event``, until ``timeout_s`` after ``since`` (a monotonic time)."""
        if event is None:
            return
        if self.timeout_s <= 0:
            event.synchronize()
            return
        while not event.query():
            waited = time.monotonic() - since
            if waited > self.timeout_s:
                raise LaunchHung(
                    self._words("the GPU") + "; a GPU kernel cannot be stopped, so this GPU is not used "
                    "again in this process",
                    device_lost=True,
                )
            time.sleep(0 if waited < _SPIN_S else _NAP_S)  # sleep(0) yields the interpreter
