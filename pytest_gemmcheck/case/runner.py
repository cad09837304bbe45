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
from ..checking.torch_backend import differing_tile_map, row_max, wrong_tile_map
from ..environment import contention, stress
from ..errors import LaunchHung
from ..records.result import CHANGED_INPUT, CaseResult, LaunchRecord
from . import launch_records
from .buffers import OutputBuffers
from .guards import GuardedBuffer, InputGuard, LaunchWatch
from .stopping import StoppingRule
from .waiting import Deadline


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

    def __init__(self, case, launch: Callable[[torch.Tensor], Any], result: CaseResult, *, rule: StoppingRule,
                 wants_consensus_checksum: bool = False):
        self.case = case
        self.launch = launch
        self.result = result
        self.rule = rule
        self.settings = case.context.settings
        self.wants_consensus_checksum = wants_consensus_checksum  # a --gemmcheck-processes child's parent compares it
        self.device = case.device
        self.ref = case.reference()
        self.rowmax = row_max(self.ref)
        self.buffers = OutputBuffers(case.m, case.n, case.out_dtype, self.device)
        self.checker: Checker = select_checker(self.settings.check_backend, self.buffers.first.tensor)
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
        self.device_lost = False  # a launch hung on the GPU: nothing more may wait for it
        # checksum -> accuracy of the outputs checked in full, for later launches with those bits
        self.verified: dict[int, AccuracyStats] = {}
        self.repeat_pass = self.checker.repeat if self.settings.repeat_check == "checksum" else None

    # --- the loop -----------------------------------------------------------------------
    def run(self) -> BaseException | None:
        raised = None
        # before the load and the first launch: waits for an idle GPU when asked, notes who else is on it
        watch = contention.start(self.device, self.case.context.device_identity(self.device),
                                 wait_s=self.settings.wait_idle, parent_waits=not self.case.context.judge)
        rule = self.rule
        rule.start()
        with stress.load(self.settings.stress, self.device) as background, self.deadline.armed():
            try:
                for index in range(1, rule.limit + 1):
                    if rule.reads_count_before_each_launch and index > 1:
                        self._finish_pending()  # the stopping rule counts every launch so far
                        if rule.enough(self._running_bad(), len(self.result.launches)):
                            break
                    raised = self._launch_once(index)
                    if raised is not None:
                        rule.reason = f"stopped at launch {index}: it {'hung' if self.device_lost else 'raised'}"
                        break
                    if rule.stop_on_bad and index < rule.limit:
                        self._finish_pending()  # its check decides
                        if rule.stops_at_bad(index, self._running_bad()):
                            break
                else:
                    rule.capped()
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
        self.result.stopped = rule.words(len(self.result.launches), len(self.result.bad_launches))
        if any(CHANGED_INPUT in launch.kinds for launch in self.result.launches):
            self.case.forget_inputs()  # restored after each launch; rebuilt for later tests all the same
        return raised

    def _launch_once(self, index: int) -> BaseException | None:
        record = LaunchRecord(index=index, **self.where)
        self.result.launches.append(record)
        buffer = self.buffers.for_launch(index)
        out = buffer.tensor
        if self.buffers.single:  # no second buffer: the previous check must finish before its output goes
            self._finish_pending()
        # Poison, launch and check are queued on the current stream with no wait between them:
        # launch(out) orders its work after that stream's and leaves the stream ordered after
        # its own, as every torch op does. While the GPU works the host finishes the previous
        # launch's check (its output is in the other buffer).
        self.buffers.poison(buffer)
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
            following = self.buffers.following(index)
            if following is not buffer and self.rule.launches_after(index):
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
                self.buffers.poisoned_ahead = repeat_fill
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
            self.buffers.poison_returned(checked)
        return None

    def _guarded(self, record: LaunchRecord, buffer: GuardedBuffer) -> None:
        """What the launch touched that it may not: recorded, and put right for the next launch."""
        before, after, changed = self.watch.read()
        if before or after:
            launch_records.wrote_outside(record, before, after)
            buffer.lay()
        for name in changed:
            launch_records.changed_input(record, name, self.inputs.changed_rows(name))
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
            launch_records.wrote_into_other_buffer(later, record.index, until)
        if self.consensus is not None:
            self.consensus.observe_unkept(record.index, total)

    def _running_bad(self) -> int:
        """Bad launches so far, consistency included: a launch whose output differs from the
        largest group of equal outputs so far counts, as it would in the end."""
        bad = {launch.index for launch in self.result.launches if launch.bad}
        if self.consensus is not None:
            bad |= self.consensus.outside_largest()
        return len(bad)

    # --- one launch's record ------------------------------------------------------------
    def _raised(self, record: LaunchRecord, exc: BaseException) -> BaseException:
        self.timer.stop()
        if isinstance(exc, LaunchHung):
            if exc.device_lost:
                self.device_lost = True
                self.case.context.device_lost(self.device)
            launch_records.raised(record, exc, time.monotonic() - self.deadline.started)
        else:
            launch_records.raised(record, exc, self.timer.seconds())
        return exc

    def _output_to_check(self, out, identity, returned, record: LaunchRecord):
        case = self.case
        return launch_records.output_to_check(record, out, identity, returned, expected=(case.m, case.n),
                                              dtype=case.out_dtype, device=self.device,
                                              poisoned=self.buffers.was_poisoned)

    def _finish_check(self, record: LaunchRecord, checked, outcome: Outcome) -> None:
        """A launch's finished check onto its record; its output to the consistency detector;
        the worst launch's wrong elements mapped over the output's tiles (its output is still
        there: the next launch writes the other buffer)."""
        launch_records.fill_accuracy(record, outcome.accuracy, checked)
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

    def _map_differing(self, accurate: set[int]) -> None:
        """The most differing launch's elements off the consensus, per tile, beside the wrong
        elements' map (``worst_tiles["differing"]``): where a race too small for the tolerance
        wrote. Only when both outputs were kept (a consensus keeps a few distinct ones)."""
        differing = [launch for launch in self.result.launches if launch.differing]
        if not differing:
            return
        top = max(differing, key=lambda launch: launch.differing)
        pair = self.consensus.kept_pair(top.index, accurate)
        if pair is not None:
            self.result.worst_tiles = {**self.result.worst_tiles, "differing": {
                "launch": top.index, "elements": top.differing, **differing_tile_map(*pair, self.case.tile)}}

    def _still_as_checked(self, record: LaunchRecord, checked, outcome: Outcome) -> bool:
        """Whether ``checked`` holds what its check read, now that a later launch has run; if not,
        that launch wrote into it (the other output buffer): it is blamed, and this output is
        used no further (its consistency is then judged by its checksum alone)."""
        if outcome.checksum is None or self.checker.checksum(checked) == outcome.checksum:
            return True
        self._spoiled(record, outcome.checksum, "until its check was finished")
        return False

    # --- consistency --------------------------------------------------------------------
    def _accurate(self) -> set[int]:
        """Launches with no failure so far (before consistency is judged: accuracy only)."""
        return {launch.index for launch in self.result.launches if not launch.kinds}

    def _fill_consistency(self) -> None:
        result, consensus = self.result, self.consensus
        accurate = self._accurate()
        launch_records.fill_consistency(result, *consensus.finish(accurate))
        if self.case.tile is not None:
            self._map_differing(accurate)
        if self.wants_consensus_checksum:
            copy = consensus.consensus_copy(accurate)
            result.consensus_checksum = self.checker.checksum(copy) if copy is not None else None
