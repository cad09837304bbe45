"""The launch loop of ``case.run``: poison, launch and check, repeated, each launch's numbers
onto its record, then the consistency of all of them.

Launches are queued ahead of their reading, over a ring of output buffers (in_flight.py says
how far): a launch's output stays in its buffer until its results are read, so that an output
seen for the first time can still be checked in full then. Each launch's own work (the poison
of the next buffer, its guards: guards.py, its output's checksum) is queued on the current
stream right behind it, on a GPU as one CUDA graph per ring position, into a small row that
comes back to pinned memory; the host reads the rows of several launches once the ring is
full, polling their events under each launch's deadline (waiting.py), and never waits for a
single launch. Reading a launch: what it touched that it may not (recorded and put right;
launches queued after one that changed its inputs ran on changed inputs, and run again), then
its numbers: those of the output checked in full with the same checksum, else a full check of
the output as it still is (proved unchanged by its checksum, else the launch after it wrote
into it and is blamed). On the CPU the torch check compares an output bit for bit with the
outputs checked so far and checks in full only one it has not seen.

Once an output was checked in full, a GPU launches in batches (_launch_batch): into half the
ring one after another, each followed by its watch alone (guards and checksum, one kernel), the
half poisoned before them and their rows copied behind them (batch_work.py), read as any launch
is. A launch's finished check goes onto its record by launch_numbers.py.

A launch whose output is used after the next launch ran (a copy kept for consistency, a tile
map) is first checked to be the one its check read: a launch that wrote into another buffer is
blamed, not the one it spoiled. A kernel's own returned output is poisoned after its check, so
that returning it again unwritten shows.
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from typing import Any, Callable

import torch

from ..checking.backends import Checker, Outcome, select_checker
from ..checking.consensus import Consensus
from ..checking.graphs import GraphAtSecondUse
from ..environment import contention, stress
from ..errors import CaseError, LaunchHung
from ..records.result import CHANGED_INPUT, CaseResult, LaunchRecord
from . import in_flight, launch_records
from .batch_work import BatchWork
from .guards import CHECKSUM_COLUMN, GuardedBuffer, InputGuard, LaunchWatch, ReferenceCopies, differing_rows, layout
from .in_flight import Batch, Queued
from .launch_numbers import LaunchNumbers
from .stopping import StoppingRule
from .waiting import Deadline

REFERENCE = "reference"  # a copy of the reference a launch changed, named as a changed input
# A launch's work (pass, guards, poison) is captured as a graph once a launch read took less than
# this on the GPU: queued op by op it costs the host 0.1-0.2 ms, hidden behind a longer launch,
# and a capture waits for everything queued (8 launches of 0.4 ms at ptpc 16384x7168x2048). Any
# launch, not the first alone: the first finds the GPU idle, and its time includes the host's
# submitting it (bf16 4096^3, 0.17 ms a launch, then read as longer).
GRAPHS_BELOW_S = 300e-6
# ... and only while the run has enough launches still to come (in_flight.graphs_may_repay).


class LaunchLoop:
    """One ``case.run``'s launches into ``result``. :meth:`run` returns the exception a launch
    raised (the loop stops there), or None."""

    def __init__(
        self,
        case,
        launch: Callable[[torch.Tensor], Any],
        result: CaseResult,
        *,
        rule: StoppingRule,
        wants_consensus_checksum: bool = False,
        ranks=None,
    ):
        self.case = case
        self.ranks = ranks  # a collective case's part on this rank (rank_sync.py): the rendezvous before each launch
        self.launch = launch
        self.result = result
        self.rule = rule
        self.settings = case.context.settings
        self.wants_consensus_checksum = wants_consensus_checksum  # a --gemmcheck-processes child's parent compares it
        self.device = case.device
        inputs = case.inputs()  # proved once for the run: a reference made now is made from them
        self.protected = case.judged_reference(inputs)  # proved unchanged since it was made
        self.ref = self.protected.tensor
        self.rowmax = self.protected.rowmax()
        self.checker: Checker = select_checker(self.settings.check_backend, self.ref)
        result.check_backend = self.checker.name
        self.inputs = InputGuard(inputs, case.pristine_inputs())
        self.fused = self.checker.name == "triton"
        rows, cols = case.out_shape
        self.pipeline = in_flight.pipeline_for(
            self.device,
            self.checker.by_checksum,
            rule,
            rows * cols * self.ref.element_size(),
            each_read=ranks is not None,
        )
        key = (
            rows,
            cols,
            case.out_dtype,
            str(self.device),
            self.checker.name,
            tuple((t.data_ptr(), t.numel(), t.dtype) for t in self.inputs.live.values()),
            torch.cuda.current_stream(self.device).cuda_stream if self.device.type == "cuda" else None,
        )
        self.ring = in_flight.ring_for(key, rows, cols, case.out_dtype, self.device, self.pipeline.ring)
        self.buffers = self.ring.buffers
        self.consensus = (
            Consensus(self.rowmax, case.tile, checksum=self.checker.checksum, compare=self.checker.compare)
            if case.deterministic
            else None
        )
        self.where = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "device": str(self.device),
            "device_uuid": case.context.device_identity(self.device).get("uuid") or "",
        }
        if ranks is not None:
            self.where["rank"] = ranks.rank
        self.deadline = Deadline(self.settings.launch_timeout, self.device)
        self.watch = LaunchWatch(self.inputs, self.device, fused=self.fused, pristine_sums=case.pristine_input_sums())
        self.references = ReferenceCopies(case, self.ref)
        self.device_lost = False  # a launch hung on the GPU: nothing more may wait for it
        self.queued: deque[Queued] = deque()
        self.next_index = 1
        self.last_done = 0.0  # when the latest launch read was seen finished
        self.by_checksum_pass = self.checker.queue_checksum is not None and self.settings.repeat_check == "checksum"
        self.numbers = LaunchNumbers(
            case,
            result,
            self.protected,
            self.checker,
            self.consensus,
            by_checksum_pass=self.by_checksum_pass,
            repeat_check=self.settings.repeat_check,
            settle=self._settle,
            spoiled=self._spoiled,
        )
        self.verified = self.numbers.verified  # checksum -> accuracy of the outputs checked in full
        self.batches = BatchWork(
            self.ring, self.buffers, self.pipeline, self.watch, self.deadline, self.device, settle=self._settle
        )
        # whether launches are short enough for their work to be graphed: from a kept ring's
        # graphs, else once a launch read was
        self.graphs_pay = bool(self.ring.graphs)
        self.full_checks: dict[int, int] = {}  # full checks begun per buffer (by id): the first two settle first
        self.full_check_queued = False  # a launch's full check was queued behind it
        self.contention_watch: contention.Watch | None = None  # who else is on the GPU: from run()'s start

    # --- the loop -----------------------------------------------------------------------
    def run(self) -> BaseException | None:
        raised = None
        # before the load and the first launch: waits for an idle GPU when asked, notes who else is on it
        self.contention_watch = contention.start(
            self.device,
            self.case.context.device_identity(self.device),
            wait_s=self.settings.wait_idle,
            parent_waits=not self.case.context.judge,
        )
        rule = self.rule
        rule.start()
        with stress.load(self.settings.stress, self.device) as background, self.deadline.armed():
            try:
                raised = self._launches(rule)
            finally:
                if self.consensus is not None:
                    if not self.device_lost:
                        self.numbers.fill_consistency(self.wants_consensus_checksum)
                    self.consensus.release()
                self.inputs.release()
        self.result.stress = background.describe()
        self.result.contention = self.contention_watch.finish(
            stress=self.settings.stress if background.active else None
        )
        self.result.stopped = rule.words(len(self.result.launches), len(self.result.bad_launches))
        if any(CHANGED_INPUT in launch.kinds for launch in self.result.launches):
            self.case.forget_inputs()  # restored after each launch; rebuilt for later tests all the same
        return raised

    def _launches(self, rule: StoppingRule) -> BaseException | None:
        try:
            while True:
                index = self.next_index
                if index > rule.limit:
                    self.contention_watch.end_soon()  # every launch called: who else is on the GPU now
                    self._drain()  # a launch read now may send the loop back: those after it run again
                    if self.next_index <= rule.limit:
                        continue
                    rule.capped()
                    break
                if rule.reads_count_before_each_launch and index > 1:
                    self._drain()  # the stopping rule counts every launch so far
                    if rule.enough(self._running_bad(), len(self.result.launches)):
                        break
                if self.ranks is not None and not self.ranks.before_launch(index):
                    break  # another rank stopped: the ranks stop together
                raised = self._launch_batch(index) if self._batch_begins(index) else self._launch_once(index)
                if raised is not None:
                    rule.reason = f"stopped at launch {raised[0]}: it {'hung' if self.device_lost else 'raised'}"
                    return raised[1]
                if rule.stop_on_bad and index < rule.limit and self.next_index == index + 1:
                    self._drain()  # its check decides
                    if self.next_index == index + 1 and rule.stops_at_bad(index, self._running_bad()):
                        break
            self._prove_reference("after the launches")
            return None
        except LaunchHung as exc:  # a launch read hung on the GPU: it is the last one recorded
            return exc

    def _launch_once(self, index: int):
        """Launch ``index`` queued; (index, exception) when it raised or hung."""
        self.next_index = index + 1
        position = self.buffers.position(index)
        if self.ring.occupant[position] is not None:  # its buffer's last launch read first
            self._read_until(lambda: self.ring.occupant[position] is None)
        if self.next_index != index + 1:
            return None  # a launch read just now changed its inputs: the loop goes back
        record = LaunchRecord.numbered(index, self.where)
        self.result.launches.append(record)
        buffer = self.buffers.buffers[position]
        out = buffer.tensor
        timer = self.ring.timers[position]
        # Poison, launch and its work are queued on the current stream with no wait between them:
        # launch(out) orders its work after that stream's and leaves the stream ordered after
        # its own, as every torch op does.
        self.buffers.poison(buffer)
        returned, started, raised = self._call(out, timer)
        if raised is not None:
            return self._failed(record, raised, started, timer.seconds())
        return self._queue_launch(index, record, buffer, position, returned, started)

    def _call(self, out: torch.Tensor, timer):
        """The kernel's call between its timing events, under its deadline: (what it returned,
        when it began, what it raised or None)."""
        started = self.deadline.start_call()
        try:
            timer.start()
            returned = self.launch(out)
            timer.stop()
        except (Exception, SystemExit) as exc:  # the kernel's failure is the test's evidence (sys.exit too)
            self.deadline.end_call()
            timer.stop()
            return None, started, exc
        self.deadline.end_call()
        return returned, started, None

    def _queue_launch(
        self, index: int, record: LaunchRecord, buffer: GuardedBuffer, position: int, returned, started: float
    ):
        """A launch called, its work queued behind it; (index, exception) when it raised or hung."""
        out = buffer.tensor
        checked = launch_records.output_to_check(
            record,
            out,
            buffer.identity,
            returned,
            expected=self.case.out_shape,
            dtype=self.case.out_dtype,
            device=self.device,
            poisoned=self.buffers.was_poisoned,
        )
        if self.ranks is not None:
            self.ranks.launched(index, checked)
        depth = self.pipeline.check_depth
        if depth:  # earlier launches read down to the pipeline's depth before this one's work is queued
            self._read_until(lambda: len(self.queued) <= depth - 1)
            if self.next_index != index + 1:
                self.result.launches.remove(record)  # it ran on what a launch read just now changed
                return None
        entry = Queued(record, buffer, position, checked, started=started)
        self.ring.occupant[position] = entry
        self.queued.append(entry)
        self._queue_work(entry, index)
        own = checked is not None and checked is not out
        # its guards, and its check, read now when the pipeline says so; a kernel's own output at
        # once, before it is poisoned (returning it again unwritten then shows)
        if self.queued[-1].guarded is False and self.pipeline.guard_depth == 0:
            self._read(self.queued[-1], guards_only=True)
        elif len(self.queued) > self.pipeline.guard_depth:  # else no more unread guards than the depth
            self._read_until(
                lambda: sum(not e.guarded for e in self.queued) <= self.pipeline.guard_depth, guards_only=True
            )
        if depth == 0 or own:
            self._read_until(lambda: not self.queued)
        return None

    # --- batches ------------------------------------------------------------------------
    def _batch_begins(self, index: int) -> bool:
        """Whether launch ``index`` begins a batch: launches into half the ring one after another,
        each followed by its watch alone (its guards and checksum, one kernel, a one-node graph
        on a GPU), the half's poison before them and their rows' copy behind them. Only once an
        output was checked in full (repeats are judged by checksum), with launches short enough
        to be graphed, no reference handed out, and a whole batch left to launch."""
        size = self.pipeline.batch
        return (
            size > 0
            and self.by_checksum_pass
            and self.fused
            and bool(self.verified)
            and len(self.buffers) == self.pipeline.ring
            and self.buffers.position(index) % size == 0
            and index + size - 1 <= self.rule.limit
            and (self.graphs_pay or not self.ring.on_gpu)
            and not self.case.hands_out_references
            and not self.device_lost
        )

    def _launch_batch(self, first: int):
        """Launches ``first`` to ``first + batch - 1``; (index, exception) when one raised or hung.
        Each launch's row holds what a launch's own work puts there (runner._work): its guards as
        they were right after it, and its output's checksum then, before the next launch ran, so
        a batch's launches are read and blamed as any others. One that returns another tensor,
        replaces ``out`` or is handed a reference ends the batch and goes the way of any launch."""
        size = self.pipeline.batch
        half = self.buffers.position(first) // size
        positions = range(half * size, (half + 1) * size)
        occupants = [entry for entry in (self.ring.occupant[p] for p in positions) if entry is not None]
        if occupants:  # read in launch order: up to the latest of them
            latest = max(occupants, key=lambda entry: entry.record.index)
            self._read_until(lambda: self.ring.occupant[latest.position] is not latest)
        if self.next_index != first:
            return None  # a launch read just now changed its inputs: the loop goes back
        self.batches.prepare(half)
        for position in positions:
            self.buffers.poisoned_ahead.discard(id(self.buffers.buffers[position]))
        batch = Batch(half)
        buffers, ring = self.buffers.buffers, self.ring
        for index, position in enumerate(positions, start=first):
            self.next_index = index + 1
            record = LaunchRecord.numbered(index, self.where)
            self.result.launches.append(record)
            buffer = buffers[position]
            out = buffer.tensor
            timer = ring.timers[position]
            returned, started, raised = self._call(out, timer)
            if raised is not None:
                self.batches.close(batch)
                return self._failed(record, raised, started, timer.seconds())
            if (
                (returned is not None and returned is not out)
                or layout(out) != buffer.identity
                or self.case.hands_out_references
            ):
                self.batches.close(batch)
                return self._queue_launch(index, record, buffer, position, returned, started)
            entry = Queued(record, buffer, position, out, started=started, summed=True, batch=batch)
            ring.occupant[position] = entry
            self.queued.append(entry)
            batch.entries.append(entry)
            self.batches.watched(position)
        self.batches.close(batch)
        return None

    def _queue_work(self, entry: Queued, index: int) -> None:
        """The launch's own work behind it on the stream: guards, its output's checksum (or a full
        check, while no output has been checked in full) and the next buffer's poison."""
        checked, buffer, position = entry.checked, entry.buffer, entry.position
        fill = None
        if checked is not None and self.by_checksum_pass and (self.verified or self.full_check_queued):
            # its checksum alone: read after the full check queued before it, it is that
            # output's (the numbers known) or checked in full then, proved unchanged by it
            # (_repeated). Before, every launch queued ahead of the first check's reading was
            # checked in full, each waited for first: a run of 12 at 256^3 on an H100 spent
            # 6.7-9.2 ms in its launches (their share of it not measured).
            entry.summed = True
            following = self.buffers.following(index)
            # the last launch's pass poisons the next buffer all the same where that is the
            # position's graph: queued op by op instead it would cost the host more
            replays = self.graphs_pay and self.ring.graphs.get(position) is not None
            if (
                following is not buffer
                and (replays or self.rule.launches_after(index))
                and self.ring.occupant[self.buffers.position(index + 1)] is None
            ):
                fill = following
        elif checked is not None and self.checker.by_checksum:
            # no output checked in full yet: this one in full, right behind it (its numbers are of
            # the output as launched), with its checksum
            self._settle_before_first_checks(buffer)
            entry.full = self.checker.prepare(
                checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile, [], True
            )
            entry.full.start()
            self.full_check_queued = True
        on_gpu = self.ring.on_gpu
        if on_gpu and fill is not None and checked is entry.buffer.tensor and self.graphs_pay:
            graph = self.ring.graphs.get(position)
            if graph is not None:
                graph.run()
            else:
                self._capture_ring(position)
        else:
            variant = (entry.summed, fill is None, checked is entry.buffer.tensor)
            if on_gpu and variant not in self.ring.eager_variants:
                self.ring.eager_variants.add(variant)
                self._settle()  # kernels loaded for the first time wait for what runs
            entry.values = self._work(checked, buffer, fill, position, entry.summed)
        if fill is not None:
            self.buffers.poisoned_ahead.add(id(fill))
        entry.references = self.references.queue()
        self.deadline.mark(self.ring.done[position])
        entry.marked = True

    def _capture_ring(self, position: int) -> None:
        """The position's work (its pass and guards, the next buffer's poison) done op by op, so
        that its kernels load, then every ring position's captured as a graph at once: capturing
        waits for the device, so the launches queued ahead are waited for once for the whole ring
        rather than at two uses of each position."""
        buffers = self.buffers.buffers
        for other, buffer in enumerate(buffers):
            if other not in self.ring.graphs:
                fill = buffers[(other + 1) % len(buffers)]  # the buffer the launch after it writes
                self.ring.graphs[other] = GraphAtSecondUse(
                    lambda buffer=buffer, fill=fill, other=other: self._work(buffer.tensor, buffer, fill, other, True),
                    self.device,
                    settle=self._settle,
                )
        self.ring.graphs[position].run()
        for graph in self.ring.graphs.values():
            graph.capture_now()

    def _work(self, checked, buffer: GuardedBuffer, fill, position: int, summed: bool):
        """Guards and checksum into the position's row (its values when worked out at once); on a
        GPU the row's copy to its pinned host row, queued."""
        if self.watch.at_once:
            return self.watch.queue(buffer, None)
        row = self.ring.row[position]
        if summed:
            # the pass's scratch lives as long as the ring's graph that uses it
            self.ring.keep[position] = self.checker.queue_checksum(
                checked, fill.tensor if fill is not None else None, row[CHECKSUM_COLUMN:]
            )
        values = self.watch.queue(buffer, row)
        if self.ring.on_gpu:
            self.ring.host_row[position].copy_(row, non_blocking=True)
        return values

    def _settle_before_first_checks(self, buffer: GuardedBuffer) -> None:
        begun = self.full_checks.get(id(buffer), 0)
        self.full_checks[id(buffer)] = begun + 1
        if begun < 2:
            self._settle()  # loading the check's kernels and capturing its graph wait for what runs

    def _settle(self) -> None:
        """Wait for every queued launch, each under its deadline (GPU)."""
        if not self.ring.on_gpu:
            return
        for entry in list(self.queued):
            if not entry.marked:  # the launch whose work is being queued: waited for up to here
                self.deadline.mark(self.ring.done[entry.position])
            self._wait_for(entry)

    def _wait_for(self, entry: Queued) -> None:
        batch = entry.batch
        if batch is None:
            self._wait_until(entry, self.ring.done[entry.position])
            return
        if not batch.read:
            # each launch of its batch under its own deadline, then the rows' copy; when that is
            # done already, every launch of it is (one query instead of one a launch)
            if batch.done is None or not batch.done.query():
                for launched in batch.entries:
                    self._wait_until(launched, self.ring.timers[launched.position].stop_event)
            self._wait_until(batch.entries[-1], batch.done)
            batch.read = True
            first = batch.entries[0].position
            rows = self.ring.host[first : first + len(batch.entries)].tolist()  # one read for the batch
            for launched, values in zip(batch.entries, rows):
                launched.values = values

    def _wait_until(self, entry: Queued, event) -> None:
        since = max(entry.started, self.last_done)
        try:
            self.deadline.wait(event, since)
        except LaunchHung as exc:
            self._hung(entry, exc)
            raise
        self.last_done = max(self.last_done, time.monotonic())

    # --- reading queued launches --------------------------------------------------------
    def _read_until(self, enough: Callable[[], bool], guards_only: bool = False) -> None:
        while self.queued and not enough():
            entry = next((e for e in self.queued if not e.guarded), None) if guards_only else self.queued[0]
            if entry is None:
                return
            self._read(entry, guards_only)

    def _drain(self) -> None:
        self._read_until(lambda: not self.queued)

    def _read(self, entry: Queued, guards_only: bool = False) -> None:
        if not entry.guarded:
            self._wait_for(entry)
            if entry.values is None:
                entry.values = self.ring.host_row[entry.position].tolist()
            entry.record.elapsed_s = self.ring.timers[entry.position].seconds()
            if (
                not self.graphs_pay
                and entry.record.elapsed_s < GRAPHS_BELOW_S
                and in_flight.graphs_may_repay(self.rule.limit - entry.record.index)
            ):
                self.graphs_pay = True
            if not guards_only and entry is self.queued[0] and self._clean_repeat(entry):
                return
            entry.guarded = True
            self._guarded(entry)
            if entry not in self.queued:
                return
        if guards_only:
            return
        self._checked(entry)
        self.queued.remove(entry)
        self.ring.occupant[entry.position] = None

    def _clean_repeat(self, entry: Queued) -> bool:
        """A launch that touched nothing it may not and whose output has the bits of one checked
        in full and found accurate, read at once: what _guarded and _checked would do for it."""
        values = entry.values
        total = values[CHECKSUM_COLUMN]
        known = self.verified.get(total) if entry.summed else None
        if (
            known is None
            or known.wrong.elements
            or known.nonfinite
            or values[0]
            or values[1]
            or entry.references
            or values[2 : 2 + len(self.watch.expected)] != self.watch.expected
            or (self.consensus is not None and self.consensus.reads_output(total))
        ):
            return False
        entry.guarded = True
        launch_records.fill_accuracy(entry.record, known, entry.checked)
        if self.consensus is not None:
            self.consensus.observe_checksum(entry.record.index, entry.checked, total)
        self.queued.popleft()
        self.ring.occupant[entry.position] = None
        return True

    def _guarded(self, entry: Queued) -> None:
        """What the launch touched that it may not: recorded, and put right for the next launch.
        Launches queued after one that changed its inputs ran on changed inputs: they run again."""
        record, buffer = entry.record, entry.buffer
        before, after, changed = self.watch.read(entry.values)
        if before or after or changed or any(bool(flag) for _, flag in entry.references):
            self._settle()  # what follows reads and writes the device: the launches in flight first
        if before or after:
            launch_records.wrote_outside(record, before, after)
            buffer.lay()
        for name in changed:
            launch_records.changed_input(record, name, self.inputs.changed_rows(name))
            self.inputs.restore(name)  # the next launch runs on the inputs the reference was made from
        reference_changed = False
        for copy_, flag in entry.references:
            if bool(flag):
                reference_changed = True
                launch_records.changed_input(record, REFERENCE, differing_rows(copy_, self.ref))
                copy_.copy_(self.ref)
        if changed or reference_changed:
            self._run_again_after(entry)

    def _run_again_after(self, entry: Queued) -> None:
        """Drop the launches queued after ``entry`` (they ran on what it changed): they run again,
        on the inputs, copies and buffers as they should be."""
        later = [e for e in self.queued if e.record.index > entry.record.index]
        if self.next_index - 1 <= entry.record.index:
            return  # no launch called after it
        self._settle()
        for dropped in later:
            self.queued.remove(dropped)
            self.ring.occupant[dropped.position] = None
            self.result.launches.remove(dropped.record)
            dropped.buffer.lay()
        for name in self.inputs.names():  # what a dropped launch changed
            self.inputs.restore(name)
        for copy_ in self.case.handed_out_references():
            copy_.copy_(self.ref)
        self.next_index = entry.record.index + 1

    def _checked(self, entry: Queued) -> None:
        """The launch's numbers onto its record (and its output to the consistency detector)."""
        record, checked = entry.record, entry.checked
        if checked is None:
            return
        if entry.full is not None:
            self.numbers.finish(record, checked, entry.full.result())
        elif entry.summed:
            self._repeated(entry, entry.values[CHECKSUM_COLUMN])
        elif self.numbers.known is not None and (found := self.numbers.known.find(checked)) is not None:
            accuracy, group = found
            launch_records.fill_accuracy(record, accuracy, checked)
            self.numbers.map_tiles(record, checked)
            if self.consensus is not None:
                self.consensus.observe_copy(record.index, group)
        else:
            self.numbers.finish(record, checked, self._full_check(entry, checked))
        if checked is not entry.buffer.tensor:  # so that returning it again unwritten shows
            self.buffers.poison_returned(checked)

    def _full_check(self, entry: Queued, checked: torch.Tensor) -> Outcome:
        """A full check of ``checked`` now, against the reference proved unchanged. Queued behind
        the launches in flight, it waits for them: they are waited for first, each under its
        deadline."""
        self.full_checks[id(entry.buffer)] = self.full_checks.get(id(entry.buffer), 0) + 1
        self._settle()
        self._prove_reference(f"before launch {entry.record.index} was judged")
        copies = self.consensus.copies if self.consensus is not None and not self.checker.by_checksum else []
        check = self.checker.prepare(checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile, copies, True)
        check.start()
        return check.result()

    def _repeated(self, entry: Queued, total: int) -> None:
        """A launch whose pass gave its checksum alone: the numbers of the output checked in full
        with that checksum, else a full check of its output now (later launches have run: the
        output is first proved to be the one the pass read). When a later launch wrote into it
        first, that launch is blamed, and this one's accuracy cannot be known."""
        record = entry.record
        known = self.verified.get(total)
        if known is not None:
            self.numbers.finish(record, entry.checked, Outcome(known, [], total))
            return
        try:
            outcome = self._full_check(entry, entry.checked)
        except LaunchHung:
            record.error = "its accuracy is not known: a later launch hung before its output could be checked"
            raise
        if outcome.checksum == total:
            self.numbers.finish(record, entry.checked, outcome)
            return
        self._spoiled(record, total, "until its check")
        record.error = (
            f"its accuracy is not known: a later launch wrote into its output before its check "
            f"(checksum {total} when it was written)"
        )

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

    def _prove_reference(self, when: str) -> None:
        """The harness's reference is never handed out; a change to it means memory no launch was
        given was written, and nothing judged against it can be trusted."""
        if self.protected.intact(self.checker.checksum):
            return
        self.case.forget_inputs()
        raise CaseError(
            f"the reference of {self.case!r} changed {when}: memory no launch was given was written "
            f"(its checksum {self.protected.checksum} when made); launches so far "
            f"{len(self.result.launches)}"
        )

    # --- one launch's record ------------------------------------------------------------
    def _failed(self, record: LaunchRecord, exc: BaseException, started: float, spent: float):
        """A launch that raised or hung: earlier launches are read first (one of them may send the
        loop back, and this launch with the others after it runs again)."""
        if not self.device_lost:
            self.result.launches.remove(record)
            self._drain()  # a launch that hung on the GPU meanwhile is the last one recorded: this one goes
            if self.next_index != record.index + 1:
                return None
            self.result.launches.append(record)
        if isinstance(exc, LaunchHung):
            if exc.device_lost and not self.device_lost:
                self.device_lost = True
                self.case.context.device_lost(self.device)
            launch_records.raised(record, exc, time.monotonic() - started)
        else:
            launch_records.raised(record, exc, spent)
        return record.index, exc

    def _hung(self, entry: Queued, exc: LaunchHung) -> None:
        """Launch ``entry`` did not finish on the GPU: it is the last launch recorded."""
        self.device_lost = True
        self.case.context.device_lost(self.device)
        for later in [e for e in self.queued if e.record.index > entry.record.index]:
            self.queued.remove(later)
            self.result.launches.remove(later.record)
        for earlier in self.queued:  # launched before it, their results never came back
            if earlier is not entry and earlier.values is None and earlier.record.error is None:
                earlier.record.error = (
                    f"its output was not checked: launch {entry.record.index} hung before its results came back"
                )
        launch_records.raised(entry.record, exc, time.monotonic() - entry.started)
        self.rule.reason = f"stopped at launch {entry.record.index}: it hung"

    # --- a launch's numbers -------------------------------------------------------------

    # --- consistency --------------------------------------------------------------------
