"""The launch loop of ``case.run``: poison, launch, synchronise and check, repeated, each launch's
numbers onto its record, then the consistency of all of them.

Two output buffers are used in turn: a launch's check is finished while the next launch fills
the other one, so the output it read is still there to keep (see checking/backends.py). On a
GPU the poison fill, the launch and the check are queued on the current stream with no wait
between them.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Callable

import torch

from ..checking.backends import Checker, Outcome, select_checker
from ..checking.consensus import Consensus
from ..checking.rule import AccuracyStats
from ..checking.torch_backend import row_max, wrong_tile_map
from ..environment import contention, stress
from ..judging.stats import format_percent, rate_upper_bound
from .identity import dtype_name
from .result import BAD_OUTPUT, INCONSISTENT, NONFINITE, RAISED, UNWRITTEN, WRONG, CaseResult, LaunchRecord

# --gemmcheck-repeat=auto launches at most this many times, whatever its rule says.
AUTO_MAX_LAUNCHES = 1_000_000


def synchronize(device: torch.device, *, current_stream_only: bool = False) -> None:
    """Wait for the launch. Device-wide by default (a kernel may use streams of its own); only
    the current stream while a background load runs, whose stream would otherwise be waited for
    too."""
    if device.type == "cuda":
        if current_stream_only:
            torch.cuda.current_stream(device).synchronize()
        else:
            torch.cuda.synchronize(device)


def _layout(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


class OutputBuffer:
    """An output tensor handed to launches, and what it was when made: a launch that replaces
    or reshapes it is caught on every later use too."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor
        self.identity = _layout(tensor)


class LaunchTimer:
    """A launch's time: on a GPU between two events on the current stream (so that it is the
    launch's own time, not the poison fill's queued before it, nor the host's), else the
    host's clock."""

    def __init__(self, device: torch.device):
        self._events = None
        if device.type == "cuda":
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            # named once: Event.record() without a stream looks the current one up through
            # torch.cuda.is_available(), which took 0.25 ms per call beside a busy H200
            self._stream = torch.cuda.current_stream(device)
        self._started = self._stopped = 0.0

    def start(self) -> None:
        self._started = time.perf_counter()
        if self._events is not None:
            self._events[0].record(self._stream)

    def stop(self) -> None:
        self._stopped = time.perf_counter()
        if self._events is not None:
            self._events[1].record(self._stream)

    def seconds(self) -> float:
        """After the launch was waited for."""
        if self._events is not None:
            try:
                return self._events[0].elapsed_time(self._events[1]) / 1000
            except RuntimeError:  # the launch faulted: the events never completed
                pass
        return self._stopped - self._started


class LaunchLoop:
    """One ``case.run``'s launches into ``result``. :meth:`run` returns the exception a launch
    raised (the loop stops there), or None."""

    def __init__(self, case, launch: Callable[[torch.Tensor], Any], result: CaseResult, *, repeat: int | None,
                 wants_consensus_checksum: bool = False):
        self.case = case
        self.launch = launch
        self.result = result
        self.repeat = repeat  # None: --gemmcheck-repeat=auto
        self.settings = case.context.settings
        self.wants_consensus_checksum = wants_consensus_checksum  # a --gemmcheck-processes child's parent compares it
        self.device = case.device
        self.ref = case.reference()
        self.rowmax = row_max(self.ref)
        self.buffers = [self._output_buffer()]
        self.checker: Checker = select_checker(self.settings.check_backend, self.buffers[0].tensor)
        result.check_backend = self.checker.name
        self.consensus = (Consensus(self.rowmax, case.tile, checksum=self.checker.checksum, compare=self.checker.compare)
                          if case.deterministic else None)
        self.where = {"pid": os.getpid(), "host": socket.gethostname(), "device": str(self.device),
                      "device_uuid": case.context.device_identity(self.device).get("uuid") or ""}
        self.pending: list = []  # the launch whose check was begun and not yet finished: (record, output, check)
        self.timer = LaunchTimer(self.device)
        self.mapped_wrong = 0  # wrong elements of the launch whose tile map the result holds

    # --- the loop -----------------------------------------------------------------------
    def run(self) -> BaseException | None:
        raised = None
        # before the load and the first launch: waits for an idle GPU when asked, notes who else is on it
        watch = contention.start(self.device, self.case.context.device_identity(self.device),
                                 wait_s=self.settings.wait_idle, parent_waits=not self.case.context.judge)
        started = time.monotonic()
        with stress.load(self.settings.stress, self.device) as background:
            try:
                limit = AUTO_MAX_LAUNCHES if self.repeat is None else self.repeat
                for index in range(1, limit + 1):
                    if self.repeat is None and index > 1:
                        self._finish_pending()  # the stopping rule counts every launch so far
                        if self._enough(started):
                            break
                    raised = self._launch_once(index, stressed=background.active)
                    if raised is not None:
                        break
                self._finish_pending()
            finally:
                if self.consensus is not None:
                    self._fill_consistency()
                    self.consensus.release()
        self.result.stress = background.describe()
        self.result.contention = watch.finish(stress=self.settings.stress if background.active else None)
        if self.repeat is None and not self.result.stopped:
            self.result.stopped = f"stopped at the cap of {AUTO_MAX_LAUNCHES:,} launches"
        return raised

    def _launch_once(self, index: int, *, stressed: bool) -> BaseException | None:
        record = LaunchRecord(index=index, **self.where)
        self.result.launches.append(record)
        if index == 2:
            spare = self.spare_buffer()
            if spare is not None:
                self.buffers.append(spare)
        buffer = self.buffers[(index - 1) % len(self.buffers)]
        out = buffer.tensor
        if len(self.buffers) == 1:  # no second buffer: the previous check must finish before its output goes
            self._finish_pending()
        # Poison, launch and check are queued on the current stream with no wait between them:
        # launch(out) orders its work after that stream's and leaves the stream ordered after
        # its own, as every torch op does. While the GPU works the host finishes the previous
        # launch's check (its output is in the other buffer).
        out.fill_(float("nan"))
        try:
            self.timer.start()
            returned = self.launch(out)
            self.timer.stop()
        except Exception as exc:  # the kernel's failure is the test's evidence
            return self._raised(record, exc)
        self._finish_pending()
        checked = self._output_to_check(out, buffer.identity, returned, record)
        begun = None
        if checked is not None:
            copies = self.consensus.copies if self.consensus is not None and not self.checker.by_checksum else []
            begun = self.checker.prepare(checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile, copies,
                                         self.consensus is not None)
        try:
            if begun is not None:
                begun.start()  # queued behind the launch, before waiting: no gap on the GPU
            synchronize(self.device, current_stream_only=stressed)
        except Exception as exc:  # a fault the launch left behind
            return self._raised(record, exc)
        if begun is not None:
            self.pending.append((record, checked, begun))
        record.elapsed_s = self.timer.seconds()
        return None

    def _finish_pending(self) -> None:
        while self.pending:
            record, checked, begun = self.pending.pop()
            self._finish_check(record, checked, begun.result())

    def _enough(self, started: float) -> bool:
        """--gemmcheck-repeat=auto: whether the rate's bound reached the target or time ran out;
        notes which on the result."""
        settings, result = self.settings, self.result
        launches, bad = len(result.launches), len(result.bad_launches)
        bound = rate_upper_bound(bad, launches)
        if bound < settings.target_rate:
            result.stopped = (f"stopped after {launches:,} launches: rate < {format_percent(bound)} reached the "
                              f"target {format_percent(settings.target_rate)}")
            return True
        if time.monotonic() - started >= settings.budget:
            result.stopped = (f"stopped after {launches:,} launches: the {settings.budget:g} s budget ran out with the "
                              f"rate shown only below {format_percent(bound)} (target {format_percent(settings.target_rate)})")
            return True
        return False

    # --- buffers ------------------------------------------------------------------------
    def _output_buffer(self) -> OutputBuffer:
        case = self.case
        return OutputBuffer(torch.empty((case.m, case.n), dtype=case.out_dtype, device=self.device))

    def spare_buffer(self) -> OutputBuffer | None:
        """The second output buffer, or None when the device has no room for it (then launches
        take turns with their checks in one buffer: slower, the same results)."""
        try:
            return self._output_buffer()
        except torch.OutOfMemoryError:
            return None

    # --- one launch's record ------------------------------------------------------------
    def _raised(self, record: LaunchRecord, exc: Exception) -> Exception:
        self.timer.stop()
        record.elapsed_s = self.timer.seconds()
        record.add_kind(RAISED)
        record.error = f"{type(exc).__name__}: {exc}".strip()
        return exc

    def _output_to_check(self, out, identity, returned, record: LaunchRecord):
        """The tensor this launch produced, or None (recorded as bad output) when there is none."""
        case = self.case
        if _layout(out) != identity:
            record.add_kind(BAD_OUTPUT)
            record.error = (f"the kernel replaced or reshaped `out` (now shape {list(out.shape)}, "
                            f"dtype {dtype_name(out.dtype)}, stride {out.stride()}); it must write into it in place")
            return None
        if isinstance(returned, torch.Tensor) and returned.data_ptr() != out.data_ptr():
            expected = (case.m, case.n)
            if tuple(returned.shape) != expected or returned.dtype != case.out_dtype or returned.device != self.device:
                record.add_kind(BAD_OUTPUT)
                record.error = (f"returned a tensor of shape {list(returned.shape)}, dtype "
                                f"{dtype_name(returned.dtype)} on {returned.device}; expected "
                                f"{list(expected)}, {dtype_name(case.out_dtype)} on {self.device}")
                return None
            record.poisoned = False  # its own allocation: checked as returned
            return returned
        return out

    def _finish_check(self, record: LaunchRecord, checked, outcome: Outcome) -> None:
        """A launch's finished check onto its record; its output to the consistency detector;
        the worst launch's wrong elements mapped over the output's tiles (its output is still
        there: the next launch writes the other buffer)."""
        self._fill_accuracy(record, outcome.accuracy, checked)
        if record.wrong > self.mapped_wrong and self.case.tile is not None:
            self.mapped_wrong = record.wrong
            self.result.worst_tiles = {"launch": record.index, "wrong": record.wrong, **wrong_tile_map(
                checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile)}
        if self.consensus is None:
            return
        if self.checker.by_checksum:
            self.consensus.observe_checksum(record.index, checked, outcome.checksum)
        else:
            self.consensus.observe(record.index, checked, outcome.diffs)

    @staticmethod
    def _fill_accuracy(record: LaunchRecord, accuracy: AccuracyStats, checked) -> None:
        wrong = accuracy.wrong
        record.wrong = wrong.elements
        record.nonfinite = accuracy.nonfinite
        record.max_abs_err = accuracy.max_abs_err
        record.max_rel_err = accuracy.max_rel_err
        record.rel_l2 = accuracy.rel_l2
        record.wrong_rows = wrong.rows
        record.wrong_tiles = wrong.tiles
        record.worst_tile_wrong = wrong.worst_tile_elements
        record.wrong_row_ids = wrong.row_ids
        record.wrong_tile_ids = [list(t) for t in wrong.tile_ids]
        if accuracy.nonfinite == checked.numel() and record.poisoned:
            record.add_kind(UNWRITTEN)
        elif accuracy.nonfinite:
            record.add_kind(NONFINITE)
        if wrong.elements > accuracy.nonfinite:
            record.add_kind(WRONG)

    # --- consistency --------------------------------------------------------------------
    def _accurate(self) -> set[int]:
        """Launches with no failure so far (before consistency is judged: accuracy only)."""
        return {launch.index for launch in self.result.launches if not launch.kinds}

    def _fill_consistency(self) -> None:
        result, consensus = self.result, self.consensus
        accurate = self._accurate()
        agreements, size, note = consensus.finish(accurate)
        result.consensus_size = size
        result.consensus_note = note
        for record in result.launches:
            agreement = agreements.get(record.index)
            if agreement is None or agreement.in_consensus:
                continue
            record.add_kind(INCONSISTENT)
            if agreement.differing is None:
                record.differing = None
                continue
            diff = agreement.differing.differing
            record.differing = diff.elements
            record.differing_rows = diff.rows
            record.differing_tiles = diff.tiles
            record.differing_row_ids = diff.row_ids
            record.max_diff_rel = agreement.differing.max_diff_rel
        if self.wants_consensus_checksum:
            copy = consensus.consensus_copy(accurate)
            result.consensus_checksum = self.checker.checksum(copy) if copy is not None else None
