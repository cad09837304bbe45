"""The pipeline a GPU's ring takes (launch/in_flight.py): batches only over two whole halves, and
no more buffers than a run has launches or memory holds."""

import pytest

from pytest_gemmcheck.launch.in_flight import GPU_RING, RING_BYTES, Pipeline, gpu_pipeline, gpu_ring_fits


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
    ("launches", "ring"), [(1, 2), (2, 2), (3, 4), (12, 12), (13, 14), (16, 16), (100, GPU_RING), (10**6, GPU_RING)]
)
def test_a_ring_has_no_more_buffers_than_the_run_has_launches(launches, ring):
    assert gpu_ring_fits(launches, free_bytes=80 << 30, out_bytes=256 * 256 * 2) == ring


def test_a_ring_fits_in_its_share_of_memory():
    out_bytes = 16384 * 7168 * 2
    assert gpu_ring_fits(100, free_bytes=80 << 30, out_bytes=out_bytes) == RING_BYTES // out_bytes == 9
    assert gpu_ring_fits(100, free_bytes=8 * 3 * out_bytes, out_bytes=out_bytes) == 3
    assert gpu_ring_fits(100, free_bytes=0, out_bytes=out_bytes) == 2  # two at least: one is checked, one written
