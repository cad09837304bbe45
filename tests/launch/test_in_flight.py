"""The pipeline a GPU's ring takes (launch/in_flight.py): batches only over two whole halves, and
no more buffers than a run has launches or memory holds."""

import pytest

from pytest_gemmcheck.launch import in_flight
from pytest_gemmcheck.launch.in_flight import (
    GPU_RING,
    GRAPHS_REPAID_AFTER,
    RING_BYTES,
    SHORT_RUN_RING,
    Pipeline,
    gpu_pipeline,
    gpu_ring_fits,
)


@pytest.mark.parametrize("fits", range(2, GPU_RING + 1))
def test_every_output_of_a_batched_ring_belongs_to_a_half(fits):
    pipeline = gpu_pipeline(fits)
    assert pipeline.ring <= fits
    assert (pipeline.guard_depth, pipeline.check_depth) == (pipeline.ring - 1, pipeline.ring - 1)
    if fits >= 4:
        assert pipeline.ring == 2 * pipeline.batch >= fits - 1
    else:
        assert (pipeline.ring, pipeline.batch) == (fits, 0)


def test_a_ring_that_is_not_two_batches_is_refused():
    with pytest.raises(ValueError, match="batches of 4 takes a ring of 8, not 9"):
        Pipeline(9, 8, 8, 4)


@pytest.mark.parametrize(
    ("launches", "ring"),
    [
        (1, 2),
        (2, 2),
        (3, 4),
        (12, SHORT_RUN_RING),
        (GRAPHS_REPAID_AFTER, SHORT_RUN_RING),
        (GRAPHS_REPAID_AFTER + 1, GPU_RING),
        (100, GPU_RING),
        (10**6, GPU_RING),
    ],
)
def test_a_ring_has_no_more_buffers_than_the_run_has_launches(launches, ring):
    assert gpu_ring_fits(launches, free_bytes=80 << 30, out_bytes=256 * 256 * 2) == ring


def test_a_run_too_short_for_graphs_takes_a_short_ring_and_a_longer_run_room_for_batches(monkeypatch):
    # a run with launches left for graphs after its first read: both halves of a ring of 16
    assert gpu_pipeline(gpu_ring_fits(GRAPHS_REPAID_AFTER + 1, 80 << 30, 512)) == Pipeline(16, 15, 15, 8)
    # one without: three launches queued behind the one read
    assert gpu_pipeline(gpu_ring_fits(GRAPHS_REPAID_AFTER, 80 << 30, 512)) == Pipeline(4, 3, 3, 2)
    monkeypatch.setattr(in_flight, "GRAPHS_REPAID_AFTER", 8)
    assert gpu_ring_fits(12, 80 << 30, 512) == 12


def test_a_ring_fits_in_its_share_of_memory():
    out_bytes = 16384 * 7168 * 2
    assert gpu_ring_fits(100, free_bytes=80 << 30, out_bytes=out_bytes) == RING_BYTES // out_bytes == 9
    assert gpu_ring_fits(100, free_bytes=8 * 3 * out_bytes, out_bytes=out_bytes) == 3
    assert gpu_ring_fits(100, free_bytes=0, out_bytes=out_bytes) == 2  # two at least: one is checked, one written
