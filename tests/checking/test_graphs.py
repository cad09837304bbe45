"""Work repeated unchanged, as a CUDA graph from its second use (or captured at once when like
work already loaded its kernels); op by op where CUDA refuses the capture. The capture is a
stand-in here: CUDA graphs need a GPU, the order of uses does not."""

import torch

from pytest_gemmcheck.checking.graphs import GraphAtSecondUse


class FakeCapture:
    def __init__(self, refuse: bool = False):
        self.refuse = refuse
        self.captured = 0
        self.replays = 0

    def __call__(self, work, device):
        if self.refuse:
            raise RuntimeError("operation not permitted when stream is capturing")
        self.captured += 1
        fake = self

        class Graph:
            def replay(self):
                fake.replays += 1

        return Graph()


def _graph(capture, settles, done):
    return GraphAtSecondUse(
        lambda: done.append(1), torch.device("cpu"), capture_with=capture, settle=lambda: settles.append(1)
    )


def test_work_is_done_first_captured_second_and_replayed_after():
    capture, settles, done = FakeCapture(), [], []
    graph = _graph(capture, settles, done)
    for _ in range(4):
        graph.run()
    assert (len(done), capture.captured, capture.replays, len(settles)) == (1, 1, 3, 2)


def test_work_captured_at_once_is_never_done_by_hand_and_settles_once():
    capture, settles, done = FakeCapture(), [], []
    graph = _graph(capture, settles, done)
    graph.capture_now()
    graph.capture_now()  # captured already: nothing more
    for _ in range(3):
        graph.run()
    assert (len(done), capture.captured, capture.replays, len(settles)) == (0, 1, 3, 1)


def test_a_refused_capture_leaves_the_work_op_by_op():
    capture, settles, done = FakeCapture(refuse=True), [], []
    graph = _graph(capture, settles, done)
    graph.capture_now()
    for _ in range(3):
        graph.run()
    assert (len(done), capture.replays, graph.refused) == (3, 0, True)
