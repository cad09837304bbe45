"""The launch loop of ``case.run``: poison, launch, synchronise and check, repeated, each launch's
numbers onto its record, then the consistency of all of them.

Two output buffers are used in turn: a launch's check is finished while the next launch fills
the other one, so the output it read is still there to keep (see checking/backends.py). On a
GPU the poison fill, the launch, its guards and its check are queued on the current stream
with no wait between them; the host waits (with a deadline: waiting.py) only up to the guards
(guards.py: what a launch may not touch, its inputs and the memory around ``out``), and the
check runs on while the host reads them and queues the next launch. An output used after
the next launch ran (a copy kept for consistency, a tile map) is first checked to be the one
its check read: a launch that wrote into the other buffer is blamed, not the one it spoiled.
A kernel's own returned output is poisoned after its check, so that returning it again
unwritten shows.

A launch after the first whose output's checksum equals that of an output already checked in
full takes that output's numbers (``--gemmcheck-repeat-check=checksum``, with a backend that
has the pass): the GPU then reads its output once, for the checksum, and writes the next
buffer's poison in the same pass. A checksum seen for the first time gets the full check, of
the output as it still is (proved unchanged by its checksum) before the next buffer is
poisoned.
"""

from __future__ import annotations

import copy
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
from ..errors import LaunchHung
from ..judging.stats import format_percent, rate_upper_bound
from .guards import GuardedBuffer, InputGuard, LaunchWatch, layout
from .identity import dtype_name
from ..records.result import (BAD_OUTPUT, CHANGED_INPUT, HUNG, INCONSISTENT, NONFINITE, RAISED, UNWRITTEN, WRONG, WROTE_OUTSIDE,
                     CaseResult, LaunchRecord)
from .waiting import Deadline

# --gemmcheck-repeat=auto launches at most this many times, whatever its rule says.
AUTO_MAX_LAUNCHES = 1_000_000


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
        self.deadline = Deadline(self.settings.launch_timeout, self.device)
        self.settling_launches = 6 if self.device.type == "cuda" else 0  # see _launch_once
        self.inputs = InputGuard(case.inputs())
        self.watch = LaunchWatch(self.inputs, self.device, fused=self.checker.name == "triton")
        self.poisoned_returns: set[int] = set()  # storage of returned outputs poisoned after their check
        self.device_lost = False  # a launch hung on the GPU: nothing more may wait for it
        # checksum -> accuracy of the outputs checked in full, for later launches with those bits
        self.verified: dict[int, AccuracyStats] = {}
        self.repeat_pass = self.checker.repeat if self.settings.repeat_check == "checksum" else None
        self.poisoned_ahead: GuardedBuffer | None = None  # the buffer a repeat pass filled for the next launch
        self.stop_reason = ""  # why --gemmcheck-repeat=auto stopped
        self.stopped_on_bad = False  # --gemmcheck-stop-on-bad ended the loop early

    # --- the loop -----------------------------------------------------------------------
    def run(self) -> BaseException | None:
        raised = None
        # before the load and the first launch: waits for an idle GPU when asked, notes who else is on it
        watch = contention.start(self.device, self.case.context.device_identity(self.device),
                                 wait_s=self.settings.wait_idle, parent_waits=not self.case.context.judge)
        started = time.monotonic()
        with stress.load(self.settings.stress, self.device) as background, self.deadline.armed():
            try:
                limit = AUTO_MAX_LAUNCHES if self.repeat is None else self.repeat
                for index in range(1, limit + 1):
                    if self.repeat is None and index > 1:
                        self._finish_pending()  # the stopping rule counts every launch so far
                        if self._enough(started):
                            break
                    raised = self._launch_once(index)
                    if raised is not None:
                        self.stop_reason = f"stopped at launch {index}: it {'hung' if self.device_lost else 'raised'}"
                        break
                    if self.settings.stop_on_bad and index < limit:
                        self._finish_pending()  # its check decides
                        if self._running_bad():
                            self.stop_reason = f"stopped at launch {index}, the first bad one (--gemmcheck-stop-on-bad)"
                            self.stopped_on_bad = True
                            break
                else:
                    if self.repeat is None:
                        self.stop_reason = f"stopped at the cap of {AUTO_MAX_LAUNCHES:,} launches"
                if not self.device_lost:  # a check of a hung GPU's output would wait forever
                    self._finish_pending()
            finally:
                if self.consensus is not None:
                    if not self.device_lost:
                        self._fill_consistency()
                    self.consensus.release()
                self.inputs.release()
        self.result.stress = background.describe()
        self.result.contention = watch.finish(stress=self.settings.stress if background.active else None)
        if self.repeat is None or self.stopped_on_bad:
            self.result.stopped = self._stopped_words()
        if any(CHANGED_INPUT in launch.kinds for launch in self.result.launches):
            self.case.forget_inputs()  # restored after each launch; rebuilt for later tests all the same
        return raised

    def _launch_once(self, index: int) -> BaseException | None:
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
        if self.poisoned_ahead is not buffer:  # else the previous launch's repeat pass poisoned it
            out.fill_(float("nan"))
        self.poisoned_ahead = None
        try:
            with self.deadline.call():
                self.timer.start()
                returned = self.launch(out)
                self.timer.stop()
        except (Exception, SystemExit) as exc:  # the kernel's failure is the test's evidence (sys.exit too)
            return self._raised(record, exc)
        if index <= self.settling_launches:
            # the first checks of each buffer load the check's kernels and capture CUDA graphs (the
            # guards' and the full check's at the second use, the repeat pass's at the second use of
            # each pair of buffers, launches 4 and 5): driver calls that wait for a running kernel, a
            # hung one too, past any deadline. So these launches are waited for, with the deadline,
            # before their checks are queued.
            try:
                self.deadline.mark()
                self.deadline.wait()
            except Exception as exc:
                return self._raised(record, exc)
        try:
            self._finish_pending()  # a repeat whose checksum is new waits for this launch: with its deadline
        except LaunchHung as exc:
            return self._raised(record, exc)
        checked = self._output_to_check(out, buffer.identity, returned, record)
        begun = None
        repeat_fill = None
        if checked is not None and self.repeat_pass is not None and self.verified:
            # its checksum alone; the next buffer's poison in the same pass, unless this launch
            # is the last or the buffer is this one
            following = self.buffers[index % len(self.buffers)]
            if following is not buffer and (self.repeat is None or index < self.repeat):
                repeat_fill = following
        elif checked is not None:
            copies = self.consensus.copies if self.consensus is not None and not self.checker.by_checksum else []
            # the checksum always: it also proves an output used after the next launch unchanged
            begun = self.checker.prepare(checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile, copies,
                                         True)
        try:
            # On the stream: the guards (its inputs, the memory around out), the mark waited for,
            # then the check, which runs on while the host reads the guards and queues the next
            # launch: the GPU is not left waiting for the host.
            self.watch.queue(buffer)
            self.deadline.mark()
            if begun is not None:
                begun.start()
            elif checked is not None:
                begun = self.repeat_pass(checked, repeat_fill.tensor if repeat_fill is not None else None)
                self.poisoned_ahead = repeat_fill
            self.deadline.wait()
        except Exception as exc:  # a fault the launch left behind, or a launch that does not end
            return self._raised(record, exc)
        self._guarded(record, buffer)
        if begun is not None:
            self.pending.append((record, checked, begun))
        record.elapsed_s = self.timer.seconds()
        if not self.checker.by_checksum or checked is not out:
            # the torch path's numbers are ready: used before the next launch writes anything; and a
            # kernel's own output is finished now, before it is poisoned
            self._finish_pending()
        if checked is not None and checked is not out:  # so that returning it again unwritten shows
            checked.fill_(float("nan"))
            self.poisoned_returns.add(checked.data_ptr())
        return None

    def _guarded(self, record: LaunchRecord, buffer: GuardedBuffer) -> None:
        """What the launch touched that it may not: recorded, and put right for the next launch."""
        before, after, changed = self.watch.read()
        if before or after:
            record.add_kind(WROTE_OUTSIDE)
            places = [f"{count:,} elements {where} the {side} of out"
                      for count, where, side in ((before, "before", "start"), (after, "past", "end")) if count]
            record.wrote_outside = "wrote " + " and ".join(places)
            buffer.lay()
        for name in changed:
            record.add_kind(CHANGED_INPUT)
            record.changed_inputs[name] = self.inputs.changed_rows(name)
            self.inputs.restore(name)  # the next launch runs on the inputs the reference was made from

    def _finish_pending(self) -> None:
        while self.pending:
            record, checked, begun = self.pending.pop()
            outcome = begun.result()
            if outcome.accuracy is None:  # a repeat pass: its checksum alone
                outcome = self._repeated(record, checked, outcome.checksum)
                if outcome is None:
                    continue
            self._finish_check(record, checked, outcome)

    def _repeated(self, record: LaunchRecord, checked, total: int) -> Outcome | None:
        """A repeat pass's launch: the numbers of the output checked in full with its checksum,
        else a full check of its output now (the next launch has run: the output is first
        proved to be the one the pass read). None when a later launch wrote into it first: that
        launch is blamed, and this one's accuracy cannot be known."""
        known = self.verified.get(total)
        if known is not None:
            return Outcome(copy.deepcopy(known), [], total)
        try:
            # the next launch is queued ahead of this check, which may load kernels and capture a
            # graph (driver calls that wait for a running kernel): it is waited for first, with
            # its deadline
            self.deadline.mark()
            self.deadline.wait()
        except LaunchHung:
            record.error = "its accuracy is not known: the next launch hung before its output could be checked"
            raise
        full = self.checker.prepare(checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile, [], True)
        full.start()
        outcome = full.result()
        if outcome.checksum == total:
            return outcome
        self._spoiled(record, total, "until its check")
        record.error = (f"its accuracy is not known: a later launch wrote into its output before its check "
                        f"(checksum {total} when it was written)")
        return None

    def _spoiled(self, record: LaunchRecord, total: int, until: str) -> None:
        """A later launch wrote into ``record``'s output, whose checksum was ``total``: that launch
        is blamed, and the output's consistency is judged by its checksum alone."""
        later = next((launch for launch in self.result.launches if launch.index > record.index), None)
        if later is not None:
            later.add_kind(WROTE_OUTSIDE)
            later.wrote_outside = (f"wrote into the other output buffer, which held launch {record.index}'s output "
                                   f"{until}")
        if self.consensus is not None:
            self.consensus.observe_unkept(record.index, total)

    def _running_bad(self) -> int:
        """Bad launches so far, consistency included: a launch whose output differs from the
        largest group of equal outputs so far counts, as it would in the end."""
        bad = {launch.index for launch in self.result.launches if launch.bad}
        if self.consensus is not None:
            bad |= self.consensus.outside_largest()
        return len(bad)

    def _enough(self, started: float) -> bool:
        """--gemmcheck-repeat=auto: whether the rate's bound reached the target or time ran out;
        notes which."""
        settings = self.settings
        bound = rate_upper_bound(self._running_bad(), len(self.result.launches))
        if bound < settings.target_rate:
            self.stop_reason = "target"
            return True
        if time.monotonic() - started >= settings.budget:
            self.stop_reason = "budget"
            return True
        return False

    def _stopped_words(self) -> str:
        """Why --gemmcheck-repeat=auto stopped, with the final counts (consistency included)."""
        launches, bad = len(self.result.launches), len(self.result.bad_launches)
        bound, target = rate_upper_bound(bad, launches), self.settings.target_rate
        if self.stop_reason == "target":
            if bound < target:
                return (f"stopped after {launches:,} launches: rate < {format_percent(bound)} reached the target "
                        f"{format_percent(target)}")
            return (f"stopped after {launches:,} launches, when the running count reached the target "
                    f"{format_percent(target)}; the final count shows the rate only below {format_percent(bound)}")
        if self.stop_reason == "budget":
            return (f"stopped after {launches:,} launches: the {self.settings.budget:g} s budget ran out with the "
                    f"rate shown only below {format_percent(bound)} (target {format_percent(target)})")
        return self.stop_reason

    # --- buffers ------------------------------------------------------------------------
    def _output_buffer(self) -> GuardedBuffer:
        case = self.case
        return GuardedBuffer(case.m, case.n, case.out_dtype, self.device)

    def spare_buffer(self) -> GuardedBuffer | None:
        """The second output buffer, or None when the device has no room for it (then launches
        take turns with their checks in one buffer: slower, the same results)."""
        try:
            return self._output_buffer()
        except torch.OutOfMemoryError:
            return None

    # --- one launch's record ------------------------------------------------------------
    def _raised(self, record: LaunchRecord, exc: BaseException) -> BaseException:
        self.timer.stop()
        if isinstance(exc, LaunchHung):
            record.add_kind(HUNG)
            record.error = str(exc)
            if exc.device_lost:
                self.device_lost = True
                self.case.context.device_lost(self.device)
            record.elapsed_s = time.monotonic() - self.deadline.started
            return exc
        record.elapsed_s = self.timer.seconds()
        record.add_kind(RAISED)
        record.error = f"{type(exc).__name__}: {exc}".strip()
        return exc

    def _output_to_check(self, out, identity, returned, record: LaunchRecord):
        """The tensor this launch produced, or None (recorded as bad output) when there is none."""
        case = self.case
        if layout(out) != identity:
            record.add_kind(BAD_OUTPUT)
            record.error = (f"the kernel replaced or reshaped `out` (now shape {list(out.shape)}, "
                            f"dtype {dtype_name(out.dtype)}, stride {out.stride()}); it must write into it in place")
            return None
        if not isinstance(returned, torch.Tensor) and hasattr(returned, "__array__") and hasattr(returned, "shape"):
            # an array of another library (numpy, cupy): its values are not what the case checks
            record.add_kind(BAD_OUTPUT)
            record.error = (f"returned a {type(returned).__module__}.{type(returned).__name__} of shape "
                            f"{list(returned.shape)}; a kernel writes into `out` or returns a torch tensor")
            return None
        if isinstance(returned, torch.Tensor) and returned.data_ptr() != out.data_ptr():
            expected = (case.m, case.n)
            if tuple(returned.shape) != expected or returned.dtype != case.out_dtype or returned.device != self.device:
                record.add_kind(BAD_OUTPUT)
                record.error = (f"returned a tensor of shape {list(returned.shape)}, dtype "
                                f"{dtype_name(returned.dtype)} on {returned.device}; expected "
                                f"{list(expected)}, {dtype_name(case.out_dtype)} on {self.device}")
                return None
            # its own allocation: checked as returned, poisoned only if it returned it before
            record.poisoned = returned.data_ptr() in self.poisoned_returns
            return returned
        return out

    def _finish_check(self, record: LaunchRecord, checked, outcome: Outcome) -> None:
        """A launch's finished check onto its record; its output to the consistency detector;
        the worst launch's wrong elements mapped over the output's tiles (its output is still
        there: the next launch writes the other buffer)."""
        self._fill_accuracy(record, outcome.accuracy, checked)
        if self.repeat_pass is not None and outcome.checksum is not None:
            self.verified.setdefault(outcome.checksum, outcome.accuracy)
        uses_output = (record.wrong > self.mapped_wrong and self.case.tile is not None) or (
            self.consensus is not None and self.checker.by_checksum and self.consensus.reads_output(outcome.checksum))
        if uses_output and not self._still_as_checked(record, checked, outcome):
            return
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

    def _still_as_checked(self, record: LaunchRecord, checked, outcome: Outcome) -> bool:
        """Whether ``checked`` holds what its check read, now that a later launch has run; if not,
        that launch wrote into it (the other output buffer): it is blamed, and this output is
        used no further (its consistency is then judged by its checksum alone)."""
        if outcome.checksum is None or self.checker.checksum(checked) == outcome.checksum:
            return True
        self._spoiled(record, outcome.checksum, "until its check was finished")
        return False

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
