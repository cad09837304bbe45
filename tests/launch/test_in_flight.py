"""The pipeline a GPU's ring takes (launch/in_flight.py): batches only over two whole halves."""

import pytest

from pytest_gemmcheck.launch.in_flight import GPU_RING, Pipeline, gpu_pipeline


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
