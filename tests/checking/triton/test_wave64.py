"""The check's logic with the AMD configuration, under Triton's interpreter: the launches planned
for an MI300X (gfx942) or MI355X (gfx950), with their block shapes, warps of 64-thread
wavefronts and grids of 4 programs per compute unit (``RUNTIME.target_for``), give the torch
path's numbers, checksums and guard counts, and case.run's verdicts, launch by launch.

The interpreter runs each program's blocks as a whole, so what it proves is the plan and the
kernels' logic at those shapes (task splitting, column chunks, many programs, masks at the
edges); how threads of a wavefront share a block is the compiler's, checked by compiling for
both targets (test_amd_compile.py). On a GPU these tests are skipped: there the check runs on
its own device's target."""

import pytest
import torch

from pytest_gemmcheck.checking import checksum as checksums
from pytest_gemmcheck.checking import torch_backend as check
from pytest_gemmcheck.checking.triton.runtime import RUNTIME
from pytest_gemmcheck.checking.triton.target import Target

test_fused_check = pytest.importorskip("test_fused_check")  # loads the check under the interpreter
from test_fused_case import SCENARIOS, run  # noqa: E402
from test_fused_check import compare, corrupt, differing_copy, reference, within_tolerance  # noqa: E402

fence = test_fused_check.fence  # the scratch fence fixture (autouse), for these tests too
fused_check = test_fused_check.fused_check
pytestmark = [
    test_fused_check.pytestmark,
    pytest.mark.skipif(test_fused_check.ON_GPU, reason="a GPU plans for its own target"),
]

AMD = {"gfx942": Target("hip", "gfx942", 64, 304), "gfx950": Target("hip", "gfx950", 64, 256)}
AMD_PLAN = {"amd": None}  # the default configuration: the target's own plan


@pytest.fixture(params=sorted(AMD))
def amd(request, monkeypatch):
    monkeypatch.setattr(RUNTIME, "target_for", lambda device: AMD[request.param])
    return AMD[request.param]


def test_the_plan_is_the_amd_one(amd):
    from pytest_gemmcheck.checking.triton.plan import LaunchConfig, main_plan

    plan = main_plan(300, 700, 2, LaunchConfig(), torch.device("cpu"))
    assert (plan.block_m, plan.block_n, plan.num_warps, plan.even) == (16, 128, 4, False)
    assert plan.programs == min(4 * amd.multiprocessors, plan.num_tasks) and plan.col_chunks > 1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(64, 256), (37, 300)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_numbers_match_the_torch_path(fence, amd, dtype, shape):
    ref = reference(*shape, dtype, seed=11)
    clean = within_tolerance(ref, seed=11)
    compare(fence, clean, ref, configs=AMD_PLAN)
    bad = corrupt(corrupt(clean, "tile", seed=11), "nan_region", seed=12)
    compare(fence, bad, ref, tile=(16, 64), copies=[differing_copy(bad, seed=11)], configs=AMD_PLAN)


@pytest.mark.parametrize("kind", ["tile", "scattered", "inf", "stale_row", "garbage"])
def test_corruptions_are_found_as_on_the_torch_path(fence, amd, kind):
    ref = reference(96, 520, torch.bfloat16, seed=3)
    compare(fence, corrupt(within_tolerance(ref, seed=3), kind, seed=3), ref, tile=(32, 128), configs=AMD_PLAN)


def test_floor_below_one_divides_per_element(fence, amd):
    ref = reference(40, 270, torch.float16, seed=4)
    out = corrupt(within_tolerance(ref, seed=4), "scattered", seed=4)
    compare(fence, out, ref, tol=test_fused_check.rule.Tolerance(floor=0.25), configs=AMD_PLAN)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_the_repeat_pass_and_the_one_read_checksum_are_the_torch_checksum(fence, amd, dtype):
    out = reference(70, 333, dtype, seed=5)
    fill = torch.zeros_like(out)
    assert fused_check.checksum(out) == checksums.checksum(out)
    assert fused_check.start_checksum_and_fill(out, fill).result() == checksums.checksum(out)
    assert torch.isnan(fill).all()
    accuracy, total = fused_check.check_launch_and_checksum(out, out, check.row_max(out), test_fused_check.TOL)
    assert total == checksums.checksum(out) and accuracy.wrong.elements == 0


def test_the_guard_kernel_counts_as_torch_does(fence, fused_anywhere, amd):
    from pytest_gemmcheck.checking.checksum import word_view, words_checksum
    from pytest_gemmcheck.checking.triton.guard_pass import RESULT_WIDTH, queue_guards, queue_watch
    from pytest_gemmcheck.launch.guards import GUARD_ELEMENTS, GuardedBuffer

    inputs = [torch.randn(37, 13).to(torch.float8_e4m3fnuz), torch.rand(4099), torch.randn(64, 64).bfloat16()]
    words = [word_view(t) for t in inputs]
    buffer = GuardedBuffer(20, 300, torch.bfloat16, torch.device("cpu"))
    buffer.tensor.copy_(reference(20, 300, torch.bfloat16, seed=6))
    buffer.bits[5] = 0
    row = torch.zeros(RESULT_WIDTH + 1, dtype=torch.int64)
    queue_guards(words, buffer.bits, GUARD_ELEMENTS, buffer.after_offset, buffer.canary, row[:RESULT_WIDTH])
    assert row[:2].tolist() == [1, 0]
    assert row[2 : 2 + len(inputs)].tolist() == [words_checksum(w) for w in words]
    row.zero_()
    queue_watch(
        words, buffer.bits, GUARD_ELEMENTS, buffer.after_offset, buffer.canary, buffer.tensor, row, RESULT_WIDTH
    )
    assert row[RESULT_WIDTH].item() == checksums.checksum(buffer.tensor)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_case_run_judges_as_the_torch_path_launch_by_launch(make_case, fused_anywhere, amd, scenario):
    torch_result, torch_launches = run(make_case, "torch", scenario)
    fused_result, fused_launches = run(make_case, "triton", scenario)
    assert fused_result.check_backend == "triton"
    assert fused_launches == torch_launches and fused_result.verdict == torch_result.verdict
