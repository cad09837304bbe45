"""launch/guards.py's LaunchWatch with the fused check: the guard kernel's checksums of the live
inputs after each launch, compared with the pristine inputs' ones, given by the case that kept
the inputs (a GPU's kept inputs took them when made) or taken by the kernel before the first
launch. (GPU runs take the kept ones: tests/launch/test_pipeline.py and examples/gpu/test_gpu_guards.py
there.)"""

import sys
from functools import partial
from pathlib import Path

import pytest
import torch

from pytest_gemmcheck.case.kept_inputs import KeptInputs, input_checksums
from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode
from pytest_gemmcheck.checking.checksum import word_view, words_checksum
from pytest_gemmcheck.launch.guards import INPUT_NAMES, ROW_WIDTH, GuardedBuffer, InputGuard, LaunchWatch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.fixture
def fused(fused_anywhere):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checking" / "triton"))
    pytest.importorskip("test_fused_check")  # loads the fused check under the interpreter, off the GPU


def ptpc_inputs():
    return quant_mode("ptpc").make_inputs(32, 48, 64, seed=0, device=DEVICE, fp8=fp8_flavour("e4m3fn"))


def read_after_launch(watch: LaunchWatch, buffer: GuardedBuffer):
    row = torch.zeros(ROW_WIDTH, dtype=torch.int64, device=DEVICE)
    watch.queue(buffer, row)
    return watch.read(row.tolist())


@pytest.mark.parametrize("kept", [True, False], ids=["the kept inputs' sums", "taken before the launches"])
def test_a_changed_input_is_seen_against_either_sums(fused, kept):
    x = ptpc_inputs()
    sums = KeptInputs(x, checksums=partial(input_checksums, fused=True)).checksums
    assert list(sums) == list(INPUT_NAMES)
    watch = LaunchWatch(InputGuard(x), DEVICE, fused=True, pristine_sums=sums if kept else None)
    assert watch.expected == [sums[name] for name in INPUT_NAMES]
    buffer = GuardedBuffer(32, 48, torch.bfloat16, DEVICE)
    assert read_after_launch(watch, buffer) == (0, 0, [])
    x.b_scale.view(torch.int32)[5] ^= 1  # what a kernel writing into its scales does
    assert read_after_launch(watch, buffer) == (0, 0, ["b_scale"])


def test_sums_that_do_not_name_every_input_are_taken_again(fused):
    x = ptpc_inputs()
    watch = LaunchWatch(InputGuard(x), DEVICE, fused=True, pristine_sums={"a": 1, "b": 2})
    assert watch.expected == [words_checksum(word_view(t)) for t in (x.a, x.b, x.a_scale, x.b_scale)]
