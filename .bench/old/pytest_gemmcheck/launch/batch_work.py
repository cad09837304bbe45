"""A batch's own work around its launches (loop.py launches the batch): the half of the ring's
poison and zeroed rows before them, each launch's watch (its guards and checksum, one kernel)
behind it, and the rows' copy to the host behind the last. On a GPU every piece is captured as
a graph once each has run op by op (its kernels loaded), and replayed from then on."""

from __future__ import annotations

from typing import Callable

from ..checking.graphs import capture, replay
from .in_flight import Batch


class BatchWork:
    def __init__(self, ring, buffers, pipeline, watch, deadline, device, settle: Callable[[], None]):
        self.ring = ring
        self.buffers = buffers
        self.size = pipeline.batch
        self.watch = watch
        self.deadline = deadline
        self.device = device
        self.settle = settle  # waits for every queued launch, each under its deadline
        self.graphs = False  # whether this batch's pieces replay as graphs

    def prepare(self, half: int) -> None:
        """Before a batch into ``half``: whether its work replays as graphs, then the half's poison."""
        self.graphs = self._graphs_ready()
        self._work(("prepare", half))

    def watched(self, position: int) -> None:
        """The watch of the launch just called into ``position``."""
        self._work(("watch", position))

    def close(self, batch: Batch) -> None:
        """The batch's rows copied to the host behind its last launch (a whole batch's last watch
        copies them), and an event after the copy."""
        if not batch.entries:
            return
        if len(batch.entries) < self.size:
            self._work(("close", batch.half))
        if self.ring.on_gpu:
            batch.done = self.ring.batch_done[batch.half]
            self.deadline.mark(batch.done)
        for entry in batch.entries:
            entry.marked = True

    def _work(self, key: tuple) -> None:
        if self.graphs:
            replay(self.ring.batch_graphs[key])
        else:
            self._op(key)

    def _op(self, key: tuple) -> None:
        """One piece of a batch's work on the current stream: a launch's watch (the last of a half's
        with the half's close), a half's preparation (its buffers' poison, its rows zeroed) or a
        half's close (its rows to pinned memory)."""
        kind, place = key
        size, ring = self.size, self.ring
        if kind == "watch":
            self.watch.queue_watched(self.buffers.buffers[place], ring.row[place])
            if (place + 1) % size:
                return
            kind, place = "close", place // size  # the half's last launch: its rows to the host too
        positions = slice(place * size, (place + 1) * size)
        if kind == "prepare":
            for buffer in self.buffers.buffers[positions]:
                buffer.tensor.fill_(float("nan"))
            ring.rows[positions].zero_()
        elif ring.on_gpu:
            ring.host[positions].copy_(ring.rows[positions], non_blocking=True)

    def _graphs_ready(self) -> bool:
        """Whether the batches' work replays as graphs: on a GPU, once every piece of it ran op by
        op (its kernels loaded), every piece captured at once (capturing waits for what runs)."""
        ring = self.ring
        if not ring.on_gpu or ring.batch_refused:
            return False
        if not ring.batch_eager:
            self.settle()  # kernels loaded for the first time wait for what runs
            ring.batch_eager = True
            return False
        if not ring.batch_graphs:
            self.settle()
            keys = [("watch", p) for p in range(len(self.buffers))] + [
                (kind, half) for kind in ("prepare", "close") for half in range(2)
            ]
            try:
                for key in keys:
                    ring.batch_graphs[key] = capture(lambda key=key: self._op(key), self.device)
            except RuntimeError:  # a debugger or profiler refuses captures: op by op
                ring.batch_graphs.clear()
                ring.batch_refused = True
                return False
        return True
