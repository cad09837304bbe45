"""The fused Triton check gives the torch path's numbers (torch_backend.check_launch), case by case.

Where it runs. Without a GPU the kernels run in Triton's interpreter, on CPU tensors. Triton
reads the flag for that when it is first imported and again on a kernel's first launch, so the
flag is set around both and then restored: the rest of the session sees the environment it had.
On a GPU they run compiled, and the same cases check real memory, real atomics and many
programs.

How a broken kernel shows. Every fused call gets its scratch memory through a fence: each
buffer is filled with garbage (NaN, 0x5A5A5A5A) and sits between guard regions that must be
intact afterwards. A kernel that reads scratch it did not write gives garbage numbers and fails
the comparison with the torch path; one that writes out of bounds fails with "scratch guard
overwritten" and the buffer and offsets. The interpreter does not model uninitialised memory or
out-of-bounds accesses as a GPU does; the fence makes them visible there too.

On a GPU, a kernel fault leaves the CUDA context unusable for the rest of the process. The
first test that meets one therefore stops the session with the test, the kernel that faulted
(each kernel is waited for as it is launched) and the command that locates the faulting access
under compute-sanitizer, rather than letting every later test fail with the same error.

Configurations. The equality cases run with the default launch configuration (on a GPU: the
GPU's; in the interpreter: tall blocks, one program) and, in the interpreter, again with small
blocks, column chunks and several programs, so that the task splitting a GPU uses is checked
without one. On a GPU every new combination of dtype, copies, layout, tile and configuration
compiles kernels (about a second each), so a few cases run fewer variants there, and the
cases most worth seeing come first.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from pytest_gemmcheck.checking import checksum as checksums  # noqa: E402
from pytest_gemmcheck.checking import rule  # noqa: E402
from pytest_gemmcheck.checking import torch_backend as check  # noqa: E402
from pytest_gemmcheck.checking.triton import available, interpreting  # noqa: E402
from pytest_gemmcheck.checking.triton.runtime import RUNTIME  # noqa: E402  (torch alone: no triton yet)

# The interpreter computes inf - inf and 0 / 0 with numpy, as a GPU computes them, and numpy warns.
pytestmark = pytest.mark.filterwarnings(
    "ignore:invalid value encountered:RuntimeWarning",
    "ignore:divide by zero encountered:RuntimeWarning",
    "ignore:overflow encountered:RuntimeWarning",
)

ON_GPU = torch.cuda.is_available() and not interpreting()
DEVICE = "cuda" if ON_GPU else "cpu"
DTYPES = [torch.bfloat16, torch.float16, torch.float32]
TOL = rule.Tolerance()
# relL2 sums squares in fp32 within a task (kernels.py's docstring bounds the error at 2.9e-6)
REL_L2_RTOL = 1e-5
REL_L2_ATOL = 1e-15


def _load_fused_check():
    if ON_GPU:
        pytest.importorskip("triton")
        from pytest_gemmcheck.checking.triton import fused_check

        return fused_check
    if "triton" in sys.modules and not interpreting():
        pytest.skip("no GPU, and triton was imported before the interpreter could be chosen", allow_module_level=True)
    saved = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        pytest.importorskip("triton")
        from pytest_gemmcheck.checking.triton import fused_check

        ref = torch.ones(1, 1)
        fused_check.check_launch(ref, ref, ref[:, 0], TOL)  # the first launches, under the flag: the check's
        fused_check.checksum(ref)  # and the repeat pass's, which the checksum takes
    finally:
        if saved is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = saved
    return fused_check


fused_check = _load_fused_check()

# Launch configurations every equality case runs under. The second gives the interpreter what a
# GPU's defaults give a large output: many tasks per program, rows split into column chunks,
# several programs, blocks narrower than the output.
CONFIGS = {"default": None}
if not ON_GPU:
    CONFIGS["gpu-like"] = fused_check.LaunchConfig(block_m=16, block_n=64, programs=3, task_blocks=2)
SMALL_BLOCKS = fused_check.LaunchConfig(block_m=4, block_n=32, programs=7, task_blocks=2)


# --- the fence around scratch memory ---------------------------------------------------------

GUARD_ELEMENTS = 256
GUARD_BYTE = 0xA5
GARBAGE_BYTE = 0x5A


class ScratchFence:
    """Scratch for RUNTIME.allocate: garbage inside, guard regions either side."""

    def __init__(self):
        self.buffers = []

    def allocate(self, numel: int, dtype: torch.dtype, device) -> torch.Tensor:
        whole = torch.empty(numel + 2 * GUARD_ELEMENTS, dtype=dtype, device=device)
        whole.view(torch.uint8).fill_(GUARD_BYTE)
        body = whole[GUARD_ELEMENTS : GUARD_ELEMENTS + numel]
        if dtype.is_floating_point:
            body.fill_(float("nan"))
        else:
            body.view(torch.uint8).fill_(GARBAGE_BYTE)
        self.buffers.append((whole, numel, dtype))
        return body

    def verify(self) -> None:
        for index, (whole, numel, dtype) in enumerate(self.buffers):
            raw = whole.view(torch.uint8)
            size = whole.element_size()
            for name, region in (
                ("before", raw[: GUARD_ELEMENTS * size]),
                ("after", raw[(GUARD_ELEMENTS + numel) * size :]),
            ):
                bad = torch.nonzero(region != GUARD_BYTE).flatten()
                if bad.numel():
                    offsets = bad[:8].tolist()
                    pytest.fail(
                        f"scratch guard overwritten {name} buffer {index} ({numel} x {dtype}): bytes "
                        f"{offsets} of the guard (an out-of-bounds write by a kernel)"
                    )
        self.buffers.clear()


@pytest.fixture(autouse=True)
def fence(monkeypatch, request):
    scratch = ScratchFence()
    monkeypatch.setattr(RUNTIME, "allocate", scratch.allocate)
    monkeypatch.setattr(RUNTIME, "synchronize_each_kernel", ON_GPU)
    scratch.test = request.node.nodeid
    yield scratch
    scratch.verify()


@pytest.fixture
def fc():
    return fused_check


def fused(fence, what: str, call):
    """Run one fused call; verify the fence; on a GPU fault, stop the session with the culprit."""
    try:
        result = call()
    except Exception as exc:  # a CUDA fault surfaces as torch.AcceleratorError or RuntimeError
        if ON_GPU and ("CUDA" in str(exc) or "cuda" in type(exc).__name__.lower() or "faulted" in str(exc)):
            pytest.exit(
                f"GPU fault in {fence.test}, {what}:\n  {type(exc).__name__}: {exc}\n"
                f"The CUDA context is unusable after a fault: the session stops here. Locate the access "
                f"with\n  compute-sanitizer --tool memcheck {sys.executable} -m pytest "
                f"'{fence.test}' -x -p no:cacheprovider",
                returncode=3,
            )
        raise
    fence.verify()
    return result


# --- data ------------------------------------------------------------------------------------


def reference(m, n, dtype, seed):
    """A GEMM-like output: rows of very different magnitude, values near zero among them."""
    g = torch.Generator().manual_seed(seed)
    row_gain = 2.0 ** torch.randint(-6, 7, (m, 1), generator=g).float()
    return (torch.randn(m, n, generator=g) * row_gain).to(dtype).to(DEVICE)


def within_tolerance(ref, seed):
    """What a correct kernel gives: off by about an ulp of the row's largest value."""
    g = torch.Generator().manual_seed(seed + 1)
    noise = torch.randn(ref.shape, generator=g).to(DEVICE) * 0.004 * check.row_max(ref)[:, None]
    return (ref.float() + noise).to(ref.dtype)


def corrupt(out, kind, seed):
    """Damage ``out`` (in place) the ways real kernels do."""
    g = torch.Generator().manual_seed(seed + 2)
    m, n = out.shape
    r0, c0 = int(torch.randint(0, m, (1,), generator=g)), int(torch.randint(0, n, (1,), generator=g))
    r1, c1 = min(m, r0 + 1 + m // 3), min(n, c0 + 1 + n // 3)
    if kind == "nan_region":  # poison never overwritten
        out[r0:r1, c0:c1] = float("nan")
    elif kind == "tile":  # a tile off by a few percent of its values
        out[r0:r1, c0:c1] = (out[r0:r1, c0:c1].float() * 1.09).to(out.dtype)
    elif kind == "scattered":  # a few elements off by 1%-20% of their row's largest value
        count = max(1, out.numel() // 50)
        rows = torch.randint(0, m, (count,), generator=g).to(DEVICE)
        cols = torch.randint(0, n, (count,), generator=g).to(DEVICE)
        size = (0.01 + 0.19 * torch.rand(count, generator=g)).to(DEVICE)
        rowmax = out.float().abs().nan_to_num(0).amax(dim=1)
        out[rows, cols] = (out[rows, cols].float() + size * rowmax[rows]).to(out.dtype)
    elif kind == "inf":
        out[r0, c0] = float("inf")
        out[r1 - 1, c1 - 1] = float("-inf")
    elif kind == "stale_row":  # a row of the previous launch's output, here zeros
        out[r0] = 0
    elif kind == "garbage":  # values far beyond the row's scale: fp32 squares would overflow
        out[r0, c0] = 3e38 if out.dtype != torch.float16 else 6e4
    else:
        assert kind == "clean", kind
    return out


def differing_copy(out, seed, how="values"):
    """A stored output that differs from ``out`` in a few places."""
    g = torch.Generator().manual_seed(seed + 3)
    copy = out.clone()
    flat = copy.view(-1)
    count = max(1, flat.numel() // 97)
    where = torch.randint(0, flat.numel(), (count,), generator=g).to(DEVICE)
    if how == "values":
        flat[where] = (flat[where].float() * 1.01 + 0.5).to(copy.dtype)
    elif how == "signed_zero":  # equal as numbers, different as bits
        flat[where] = -0.0
        out.view(-1)[where] = 0.0
    elif how == "nan":  # NaN on one side only
        flat[where] = float("nan")
    return copy


# --- comparison ------------------------------------------------------------------------------


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def assert_same(fused_result, expected):
    (accuracy, diffs), (want, want_diffs) = fused_result, expected
    assert accuracy.wrong == want.wrong
    assert accuracy.nonfinite == want.nonfinite
    assert same_float(accuracy.max_abs_err, want.max_abs_err), (accuracy.max_abs_err, want.max_abs_err)
    assert same_float(accuracy.max_rel_err, want.max_rel_err), (accuracy.max_rel_err, want.max_rel_err)
    assert accuracy.rel_l2 == pytest.approx(want.rel_l2, rel=REL_L2_RTOL, abs=REL_L2_ATOL, nan_ok=True)
    assert len(diffs) == len(want_diffs)
    for diff, want_diff in zip(diffs, want_diffs):
        assert diff.differing == want_diff.differing
        assert same_float(diff.max_diff_rel, want_diff.max_diff_rel), (diff.max_diff_rel, want_diff.max_diff_rel)


def compare(fence, out, ref, tile=None, copies=(), tol=TOL, rowmax=None, configs=None):
    """The fused check against the torch path, under each configuration; the default one's result."""
    rowmax = check.row_max(ref) if rowmax is None else rowmax
    expected = check.check_launch(out, ref, rowmax, tol, tile, list(copies))
    first = None
    for name, config in (CONFIGS if configs is None else configs).items():
        what = f"check_launch {list(out.shape)} {out.dtype} tile={tile} copies={len(copies)} config={name}"
        result = fused(
            fence, what, lambda: fused_check.check_launch(out, ref, rowmax, tol, tile, list(copies), config=config)
        )
        assert_same(result, expected)
        first = first or result
    return first


# --- small shapes: where the first GPU run faulted -------------------------------------------

SMALL_SHAPES = [(1, 1), (1, 17), (7, 13), (17, 1), (3, 1100)]


@pytest.mark.parametrize("copies", [1, 2, 5])
@pytest.mark.parametrize("shape", SMALL_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_shapes(fence, shape, copies):
    """Fewer rows than a block, rows shorter than a vector, one pass and two: every buffer's
    extent is met (guard regions) and every scratch read was written (garbage scratch)."""
    ref = reference(*shape, torch.bfloat16, seed=5)
    out = corrupt(within_tolerance(ref, seed=5), "scattered", seed=5)
    stored = [differing_copy(out, seed=5 + i) if i % 2 == 0 else out.clone() for i in range(copies)]
    configs = CONFIGS if not ON_GPU else dict(CONFIGS, small=SMALL_BLOCKS)
    for tile in (None, (2, 3)):
        compare(fence, out, ref, tile=tile, copies=stored, configs=configs)


@pytest.mark.parametrize("shape", SMALL_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_shapes_clean(fence, shape):
    """A clean output and equal copies: nothing flagged, nothing located, no garbage read."""
    ref = reference(*shape, torch.float16, seed=6)
    accuracy, diffs = compare(fence, ref.clone(), ref, tile=(4, 8), copies=[ref.clone(), ref.clone()])
    assert accuracy.wrong.elements == 0 and all(d.differing.elements == 0 for d in diffs)


# --- cases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["clean", "nan_region", "tile", "scattered", "inf", "stale_row", "garbage"])
def test_corruptions(fence, dtype, kind):
    ref = reference(45, 300, dtype, seed=1)
    out = corrupt(within_tolerance(ref, seed=1), kind, seed=1)
    accuracy, _ = compare(fence, out, ref, tile=(16, 64), copies=[out.clone()])
    if kind in ("nan_region", "tile", "inf", "stale_row", "garbage"):
        assert accuracy.wrong.elements > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_exact_output_is_clean(fence, dtype):
    ref = reference(20, 100, dtype, seed=2)
    accuracy, diffs = compare(fence, ref.clone(), ref, tile=(8, 32), copies=[ref.clone()])
    assert accuracy.wrong.elements == 0 and accuracy.max_abs_err == 0 and accuracy.rel_l2 == 0
    assert diffs[0].differing.elements == 0 and diffs[0].differing.tiles == 0


@pytest.mark.parametrize("how", ["values", "signed_zero", "nan"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_one_differing_copy(fence, dtype, how):
    ref = reference(33, 70, dtype, seed=3)
    out = within_tolerance(ref, seed=3)
    copy = differing_copy(out, seed=3, how=how)
    _, diffs = compare(fence, out, ref, tile=(8, 16), copies=[copy])
    assert diffs[0].differing.elements > 0


@pytest.mark.parametrize("count", [0, 2, 4, 5, 9])
def test_several_copies(fence, count):
    """Up to four copies share a pass; more take more passes, each still exact."""
    ref = reference(24, 80, torch.bfloat16, seed=4)
    out = within_tolerance(ref, seed=4)
    copies = [out.clone() if i % 3 == 0 else differing_copy(out, seed=10 + i) for i in range(count)]
    _, diffs = compare(fence, out, ref, tile=(8, 16), copies=copies)
    assert [d.differing.elements == 0 for d in diffs] == [i % 3 == 0 for i in range(count)]


@pytest.mark.parametrize("shape", [(130, 300), (64, 4096)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_larger_shapes(fence, shape):
    """Several tasks per row, column chunks and the default blocks' full vectors."""
    ref = reference(*shape, torch.bfloat16, seed=5)
    out = corrupt(within_tolerance(ref, seed=5), "scattered", seed=5)
    for tile in (None, (8, 64)):
        compare(fence, out, ref, tile=tile, copies=[differing_copy(out, seed=5)], configs={"default": None})


@pytest.mark.parametrize("tile", [(1, 1), (8, 8), (100, 7), (3, 300), (64, 4096), (5, 48)])
def test_odd_tiles(fence, tile):
    """Tiles narrower than a block, not dividing it, or larger than the output."""
    ref = reference(30, 150, torch.float16, seed=5)
    out = corrupt(within_tolerance(ref, seed=5), "tile", seed=5)
    compare(fence, out, ref, tile=tile, copies=[differing_copy(out, seed=5)])


def test_many_programs_and_column_splits(fence):
    """Small blocks and many programs: rows split between tasks, tiles shared by atomics."""
    ref = reference(13, 70, torch.float16, seed=6)
    out = corrupt(corrupt(within_tolerance(ref, seed=6), "tile", seed=6), "nan_region", seed=7)
    configs = {"tiny": fused_check.LaunchConfig(block_m=4, block_n=16, programs=8, task_blocks=1)}
    if not ON_GPU:  # (on a GPU each configuration compiles kernels)
        configs["few programs"] = fused_check.LaunchConfig(block_m=8, block_n=32, programs=3, task_blocks=3)
    for tile in [(8, 24), (5, 5)]:
        compare(fence, out, ref, tile=tile, copies=[differing_copy(out, seed=6)], configs=configs)
    ref = reference(20, 900, torch.bfloat16, seed=6)
    out = corrupt(within_tolerance(ref, seed=6), "scattered", seed=6)
    config = {"wide": fused_check.LaunchConfig(block_m=8, block_n=256, programs=6)}
    compare(fence, out, ref, tile=(16, 128), copies=[out.clone(), differing_copy(out, seed=6)], configs=config)


def test_strided_outputs(fence):
    """A kernel may return a transposed view or a slice of a larger buffer."""
    ref = reference(40, 60, torch.bfloat16, seed=7)
    transposed = corrupt(within_tolerance(ref, seed=7), "tile", seed=7).t().contiguous().t()
    assert not transposed.is_contiguous()
    compare(fence, transposed, ref, tile=(16, 16), copies=[transposed.contiguous()])
    wide = torch.zeros(40, 100, dtype=torch.bfloat16, device=DEVICE)
    wide[:, 20:80] = within_tolerance(ref, seed=8)
    compare(fence, wide[:, 20:80], ref, tile=(16, 16), copies=[differing_copy(wide[:, 20:80].contiguous(), seed=8)])


@pytest.mark.parametrize("floor", [0.0, 0.25, 1.0, 2.0])
def test_floors(fence, floor):
    """floor < 1 scales some elements by their own |ref|: the per-element division path."""
    ref = reference(30, 90, torch.bfloat16, seed=8)
    out = corrupt(within_tolerance(ref, seed=8), "scattered", seed=8)
    compare(fence, out, ref, tile=(8, 32), tol=rule.Tolerance(rtol=0.02, floor=floor))


def test_zero_rows_and_zero_reference(fence):
    """A row of ref that is all zeros has no scale: any error there is infinitely relative."""
    ref = reference(12, 40, torch.float32, seed=9)
    ref[3] = 0
    ref[5] = 0
    out = ref.clone()
    out[3, 7] = 1e-3
    accuracy, _ = compare(fence, out, ref, tile=(4, 8))
    assert accuracy.max_rel_err == math.inf and accuracy.wrong.row_ids == [3]
    compare(fence, out, torch.zeros_like(ref), tile=(4, 8))


def test_rowmax_that_is_not_the_reference_row_maximum(fence):
    """A stale or scaled rowmax breaks the row-scale shortcut: the check notices and redoes
    the full per-element computation, with the same numbers as the torch path."""
    ref = reference(16, 64, torch.bfloat16, seed=10)
    out = corrupt(within_tolerance(ref, seed=10), "scattered", seed=10)
    rowmax = check.row_max(ref)
    rowmax[::3] *= 0.5
    compare(fence, out, ref, tile=(4, 16), rowmax=rowmax, copies=[differing_copy(out, seed=10)])


def test_reference_changed_in_place_gets_its_facts_again(fence):
    """The sum of squared references and whether rowmax bounds each row are kept per reference
    across checks; a reference changed in place (same tensor, same rowmax object) is not
    served the old ones."""
    ref = reference(16, 64, torch.bfloat16, seed=12)
    rowmax = check.row_max(ref)
    out = corrupt(within_tolerance(ref, seed=12), "scattered", seed=12)
    compare(fence, out, ref, tile=(4, 16), rowmax=rowmax)
    compare(fence, out, ref, tile=(4, 16), rowmax=rowmax)  # the kept facts
    ref[1] *= 4  # now beyond its (unchanged) rowmax, and a larger sum of squares
    accuracy, _ = compare(fence, out, ref, tile=(4, 16), rowmax=rowmax)
    assert 1 in accuracy.wrong.row_ids


def test_non_finite_reference(fence):
    """An fp16 reference can overflow to inf; NaN there follows torch's rules."""
    ref = reference(10, 32, torch.float16, seed=11)
    ref[2, 3] = float("inf")
    ref[4, 5] = float("nan")
    ref[6, :] = float("-inf")
    out = within_tolerance(torch.nan_to_num(ref, posinf=1.0, neginf=-1.0, nan=0.0), seed=11)
    compare(fence, out, ref, tile=(4, 4), copies=[differing_copy(out, seed=11, how="nan")])


def test_squares_far_from_the_row_scale(fence):
    """relL2 where fp32 squares would overflow or underflow: errors of 1e30 in rows of scale 1,
    rows of scale 1e-30 and 1e30: the row scaling and the float64 redo keep the torch path's
    value."""
    ref = reference(12, 64, torch.float32, seed=16)
    ref[2] *= 1e-30
    ref[5] *= 1e30
    out = within_tolerance(ref, seed=16)
    compare(fence, out, ref, tile=(4, 16))
    out[8, 9] = 1e30
    compare(fence, out, ref, tile=(4, 16))


@pytest.mark.parametrize("rtol", [0.05, 0.013, 1.0])
def test_threshold_is_exact_at_the_boundary(fence, rtol):
    """Errors within a few ulps of rtol * rowmax, for rowmax of many magnitudes (subnormal to
    near the largest float): the per-row threshold agrees with fl(err / scale) > rtol."""
    rng = random.Random(12)
    rows, cols = 24, 64
    ref = torch.zeros(rows, cols, dtype=torch.float32)
    out = torch.zeros(rows, cols, dtype=torch.float32)
    for row in range(rows):
        scale = rng.uniform(1, 2) * 2.0 ** rng.choice([-140, -126, -60, -1, 0, 3, 40, 100, 126])
        ref[row, 0] = scale
        out[row, 0] = scale
        center = torch.tensor(rtol * scale, dtype=torch.float32).view(torch.int32).item()
        for col in range(1, cols):
            bits = max(0, center + rng.randint(-3, 3))
            out[row, col] = torch.tensor(bits, dtype=torch.int32).view(torch.float32)
    ref, out = ref.to(DEVICE), out.to(DEVICE)
    accuracy, _ = compare(fence, out, ref, tile=(8, 8), tol=rule.Tolerance(rtol=rtol, floor=1.0))
    assert 0 < accuracy.wrong.elements < rows * (cols - 1)


def test_random_sweep(fence):
    """Random combinations of everything above (fewer on a GPU, where each new combination of
    dtype, copies and tile compiles kernels)."""
    rng = random.Random(13)
    kinds = ["clean", "nan_region", "tile", "scattered", "inf", "stale_row", "garbage"]
    for case in range(4 if ON_GPU else 10):
        dtype = rng.choice(DTYPES)
        m, n = rng.randint(1, 90), rng.randint(1, 300)
        tile = rng.choice([None, (rng.randint(1, 40), rng.randint(8, 200))])
        ref = reference(m, n, dtype, seed=100 + case)
        out = corrupt(within_tolerance(ref, seed=100 + case), rng.choice(kinds), seed=100 + case)
        copies = [rng.choice([out.clone(), differing_copy(out, seed=200 + case + i)]) for i in range(rng.randint(0, 5))]
        tol = rule.Tolerance(rtol=rng.choice([0.05, 0.01]), floor=rng.choice([1.0, 1.0, 0.5]))
        compare(fence, out, ref, tile=tile, copies=copies, tol=tol)


def test_empty_output(fence):
    ref = torch.zeros(0, 16, dtype=torch.bfloat16, device=DEVICE)
    compare(fence, ref.clone(), ref, tile=(8, 8), copies=[ref.clone()])


def test_mismatched_arguments_are_refused(fc):
    ref = reference(4, 8, torch.bfloat16, seed=14)
    with pytest.raises(ValueError, match="same"):
        fc.check_launch(ref[:, :4], ref, check.row_max(ref), TOL)
    with pytest.raises(ValueError, match="copy"):
        fc.check_launch(ref, ref, check.row_max(ref), TOL, copies=[ref.float()])


# --- checksums and the halves of the check ----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_checksum_matches_torch(fence, dtype):
    out = corrupt(reference(33, 70, dtype, seed=15), "nan_region", seed=15)
    views = (out, out.t(), out[3:20, 5:60], out.reshape(-1), out.reshape(3, 11, 70))
    if ON_GPU and dtype != torch.bfloat16:
        views = views[:1]  # each layout compiles kernels: every layout for one dtype is enough there
    for tensor in views:
        assert fused(
            fence, f"checksum {list(tensor.shape)}", lambda: fused_check.checksum(tensor)
        ) == checksums.checksum(tensor)
    other = differing_copy(out, seed=15, how="signed_zero")
    assert fused_check.checksum(other) == checksums.checksum(other) != checksums.checksum(out)


@pytest.mark.parametrize("shape", [(1, 17), (45, 300)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_check_and_checksum_in_one_pass(fence, shape):
    """check_launch_and_checksum: check_launch's accuracy numbers and checksums.checksum of out."""
    ref = reference(*shape, torch.bfloat16, seed=17)
    out = corrupt(within_tolerance(ref, seed=17), "scattered", seed=17)
    rowmax = check.row_max(ref)
    want, _ = check.check_launch(out, ref, rowmax, TOL, (8, 64), [])
    for name, config in CONFIGS.items():
        accuracy, total = fused(
            fence,
            f"check_launch_and_checksum config={name}",
            lambda: fused_check.check_launch_and_checksum(out, ref, rowmax, TOL, (8, 64), config=config),
        )
        assert_same((accuracy, []), (want, []))
        assert total == checksums.checksum(out)


def test_compare_copies(fence):
    """compare_copies: check.compare against each copy, over one or two passes."""
    ref = reference(24, 80, torch.float16, seed=18)
    out = within_tolerance(ref, seed=18)
    rowmax = check.row_max(ref)
    copies = [out.clone() if i % 2 else differing_copy(out, seed=30 + i) for i in range(6)]
    for name, config in CONFIGS.items():
        diffs = fused(
            fence,
            f"compare_copies config={name}",
            lambda: fused_check.compare_copies(out, copies, rowmax, (8, 16), config=config),
        )
        assert [(d.differing, d.max_diff_rel) for d in diffs] == [
            (w.differing, w.max_diff_rel) for w in (check.compare(out, c, rowmax, (8, 16)) for c in copies)
        ]


# --- the fence itself ---------------------------------------------------------------------------


def test_the_fence_catches_an_out_of_bounds_write():
    """What the guard regions are for: a write one element past a buffer fails the test."""
    scratch = ScratchFence()
    body = scratch.allocate(10, torch.int32, DEVICE)
    whole = scratch.buffers[0][0]
    whole[GUARD_ELEMENTS + 10] = 0  # one past the end
    assert torch.isnan(scratch.allocate(3, torch.float64, DEVICE)).all() and (body != 0).all()
    with pytest.raises(pytest.fail.Exception, match="scratch guard overwritten after buffer 0"):
        scratch.verify()


# --- availability ----------------------------------------------------------------------------


def test_available(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert available(torch.zeros(1))
    monkeypatch.delenv("TRITON_INTERPRET")
    assert not available(torch.zeros(1))
    assert available(torch.zeros(1, device="cuda")) if torch.cuda.is_available() else True


def test_package_imports_nothing_heavy():
    code = (
        "import sys, pytest_gemmcheck.checking.triton as g; "
        "print(any(name in sys.modules for name in ('triton', 'torch')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"},
    )
    assert result.stdout.strip() == "False", result.stderr


# --- the kernels as a GPU compiler sees them ---------------------------------------------------

COMPILE_FOR_HOPPER = r"""
import inspect, re, subprocess, sys, tempfile
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from pytest_gemmcheck.checking.triton import kernels, plan
from pytest_gemmcheck.checking.triton.target import Target

HOPPER = Target("cuda", "sm_90", 32, 132)

def compile_kernel(kernel, types, constexprs, aligned, num_warps=8):
    names = list(inspect.signature(kernel.fn).parameters)
    signature = {name: "constexpr" if name in constexprs else types(name) for name in names}
    # what Triton's launcher tells the compiler about 16-byte aligned pointers and sizes
    attrs = {(names.index(name),): [["tt.divisibility", 16]] for name in aligned}
    source = ASTSource(fn=kernel, signature=signature, attrs=attrs,
                       constexprs={(names.index(k),): v for k, v in constexprs.items()})
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})

def resources(compiled):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(compiled.asm["ptx"])
    log = subprocess.run([triton.knobs.nvidia.ptxas.path, "-v", "--gpu-name=sm_90a", f.name, "-o", "/dev/null"],
                         capture_output=True, text=True).stderr
    return [int(n) for n in re.findall(r"(\d+) bytes spill", log)], int(re.search(r"Used (\d+) registers", log)[1])

def typed(dtype):
    def types(name):
        if name in ("out_ptr", "ref_ptr") or name.startswith("copy") and name.endswith("_ptr") and "rows" not in name \
                and "tiles" not in name:
            return "*" + dtype
        return {"rowmax_ptr": "*fp32", "partial_ptr": "*fp64", "rtol": "fp32", "floor": "fp32"}.get(
            name, "*i32" if name.endswith("_ptr") else "i32")
    return types

unit = {"stride_out_n": 1, "stride_ref_n": 1, "stride_c0_n": 1, "stride_c1_n": 1, "stride_c2_n": 1, "stride_c3_n": 1}
for dtype, bits, vec, copies, row_scale, checksum, even in [
        ("bf16", 16, 8, 1, True, False, False), ("fp16", 16, 8, 4, True, False, False),
        ("fp32", 32, 4, 2, False, False, False), ("bf16", 16, 8, 0, True, True, False),
        ("bf16", 16, 8, 0, True, True, True)]:
    config = plan.LaunchConfig()
    block_m, block_n = plan.block_shape(bits // 8, config, 4096, 4096, HOPPER)
    constexprs = dict(ACCURACY=True, ROW_SCALE=row_scale, NUM_COPIES=copies, CHECKSUM=checksum, BITS=bits,
                      BLOCK_M=block_m, BLOCK_N=block_n, VEC=vec, EVEN=even, **unit)
    aligned = [n for n in inspect.signature(kernels._check_kernel.fn).parameters if n.endswith("_ptr") or n == "N"
               or (n.startswith("stride") and n.endswith("_m"))]
    compiled = compile_kernel(kernels._check_kernel, typed(dtype), constexprs, aligned, config.num_warps)
    loads = re.findall(r"ld\.global[\w.:]*\.v4\.b32", compiled.asm["ptx"])
    # 16-byte loads: before the loop and in it (the next block), and in the slow paths that
    # read a task again (the accuracy numbers in full; each copy's largest differences)
    vectors = block_m * block_n * bits // 8 // (HOPPER.threads(config.num_warps) * 16)  # per thread, tensor and block
    assert len(loads) == vectors * (2 * (2 + copies) + 2 + 2 * copies), (dtype, len(loads))
    spilled, registers = resources(compiled)
    # four programs of four warps per multiprocessor: 65536 registers / (4 * 128 threads)
    assert spilled == [0, 0] and (registers <= 128 or copies > 1), (dtype, copies, spilled, registers)
compiled = compile_kernel(kernels._tile_kernel, typed("bf16"), dict(BITS=16, BLOCK_M=16, BLOCK_N=64), [], 4)
assert resources(compiled)[0] == [0, 0]
compiled = compile_kernel(kernels._finalize_kernel, lambda n: "*fp64" if n in ("partial_ptr", "result_ptr")
                          else "*i32" if n.endswith("_ptr") else "i32", dict(HAS_TILE=True, BLOCK=128, SCAN_BLOCK=1024),
                          [], 4)
assert resources(compiled)[0] == [0, 0]
print("compiled")
"""


@pytest.mark.skipif(ON_GPU, reason="on a GPU the kernels compile for real in every other test")
def test_kernels_compile_for_hopper():
    """What CI without a GPU can still say: the kernels compile for sm_90, load each tensor in
    16-byte vectors and keep their accumulators in registers, few enough for the default four
    programs of four warps per multiprocessor."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, "-c", COMPILE_FOR_HOPPER], capture_output=True, text=True, env=env)
    if "compiled" not in result.stdout and ("ptxas" in result.stderr and "No such file" in result.stderr):
        pytest.skip("this triton has no NVIDIA toolchain")
    assert result.stdout.strip() == "compiled", result.stderr[-3000:]


def test_checksum_sees_every_single_change_and_swaps():
    """Every weight is odd: any change to one element changes the checksum; so do swapped
    elements, rows and columns, and a transposed square output."""
    out = reference(24, 40, torch.bfloat16, seed=19)
    base = checksums.checksum(out)
    bits = out.view(torch.int16)
    rng = random.Random(19)
    for flat in range(out.numel()):
        changed = bits.clone().view(-1)
        changed[flat] ^= 1 << rng.randrange(16)
        assert checksums.checksum(changed.view(24, 40).view(torch.bfloat16)) != base, flat
    for _ in range(200):
        (r1, c1), (r2, c2) = [(rng.randrange(24), rng.randrange(40)) for _ in range(2)]
        if out[r1, c1].view(torch.int16) == out[r2, c2].view(torch.int16):
            continue
        swapped = out.clone()
        swapped[r1, c1], swapped[r2, c2] = out[r2, c2], out[r1, c1]
        assert checksums.checksum(swapped) != base
    assert checksums.checksum(out[[1, 0, *range(2, 24)]]) != base
    assert checksums.checksum(out[:, [1, 0, *range(2, 40)]]) != base
    square = out[:24, :24].contiguous()
    assert checksums.checksum(square.t().contiguous()) != checksums.checksum(square)
    # two sign flips move the bits by 2**31 each: a plain 32-bit weighted sum could not see them
    wide = reference(8, 300, torch.float32, seed=19)
    for _ in range(200):
        flipped = wide.clone().view(-1)
        first, second = rng.sample(range(flipped.numel()), 2)
        flipped[first], flipped[second] = -flipped[first], -flipped[second]
        assert checksums.checksum(flipped.view(8, 300)) != checksums.checksum(wide)


class FakeOutputCheck:
    """What Replay uses of an OutputCheck: its launches, recorded with the tensors lent at the time."""

    def __init__(self):
        self.out = self.ref = self.rowmax = None
        self.launched, self.copies = [], 0

    def launch_kernels(self, row_scale):
        self.launched.append((self.out, row_scale))

    def queue_copy(self):
        self.copies += 1


class FakeGraph:
    def __init__(self, launches):
        self.captured, self.replays = launches, 0

    def replay(self):
        self.replays += 1


@pytest.mark.parametrize("capture", ["works", "refused"])
def test_replay_captures_at_the_second_check_or_falls_back(monkeypatch, capture):
    """A replayed check launches its kernels at its first check (which compiles them), is
    captured at the second and replayed after; where CUDA refuses the capture (a debugger, a
    profiler, CUDA_LAUNCH_BLOCKING), it launches them one by one from then on instead of
    failing the launch it checks. It keeps no tensor between checks."""

    def fake_capture(launches, device):
        if capture == "refused":
            raise RuntimeError("operation not permitted when stream is capturing")
        return FakeGraph(launches)

    from pytest_gemmcheck.checking.triton.replay import Replay

    monkeypatch.setattr(RUNTIME, "capture", fake_capture)
    run = FakeOutputCheck()
    entry = Replay(run)
    out = torch.zeros(2, 2)
    for _ in range(4):
        entry.enqueue(out, out, out[:, 0])
        assert run.out is None and run.ref is None and run.rowmax is None
    assert run.copies == 4
    if capture == "works":
        assert run.launched == [(out, True)] and entry.graph.replays == 3
    else:
        assert run.launched == [(out, True)] * 4


@pytest.mark.skipif(not ON_GPU, reason="CUDA graphs need a GPU")
def test_replayed_checks_give_the_numbers_of_fresh_ones(fence):
    """prepare_check(replay=True), as case.run checks its two output buffers in turn: the second
    check of each is captured in a CUDA graph and later ones replay it. Every check has the
    torch path's numbers and checksum although the outputs change between checks and two
    checks are in flight at once; a rowmax that is not ref's row maximum still gets the full
    check (which reads the tensors again when its result is read: a buffer is written anew only
    after that, as in case.run)."""
    ref = reference(96, 640, torch.bfloat16, seed=21)
    base = within_tolerance(ref, seed=21)
    outputs = [
        base,
        corrupt(base.clone(), "nan_region", seed=22),
        corrupt(base.clone(), "scattered", seed=23),
        ref.clone(),
        corrupt(base.clone(), "inf", seed=24),
    ]
    halved = check.row_max(ref) * torch.tensor([1.0, 0.5], device=DEVICE).repeat(48)
    for rowmax in (check.row_max(ref), halved):
        buffers = [torch.empty_like(ref), torch.empty_like(ref)]
        previous = None
        for index, output in enumerate(outputs * 2):
            out = buffers[index % 2]
            out.copy_(output)  # its previous check's numbers were read: they are in the other buffer
            current = fused_check.start_check(out, ref, rowmax, TOL, (8, 64), checksum=True, replay=True)
            if previous is not None:
                assert_replayed(*previous)
            previous = (current, output, ref, rowmax, index)
        assert_replayed(*previous)
    assert any(entry.graph is not None for entry in RUNTIME.replays.values())


def assert_replayed(pending, output, ref, rowmax, index):
    accuracy, _, total = pending.result()
    want = check.check_launch(output, ref, rowmax, TOL, (8, 64))[0]
    assert (accuracy.wrong.elements, index) == (want.wrong.elements, index)
    assert_same((accuracy, []), (want, []))
    assert total == checksums.checksum(output), index


@pytest.mark.skipif(not ON_GPU, reason="compiled kernels are launched directly only on a GPU")
def test_direct_launches_give_triton_launches_numbers(fence, monkeypatch):
    """gpu/launch.py launches compiled kernels directly after Triton's first launch of each
    specialisation: the same numbers as Triton's own path, aligned or not."""
    ref = reference(70, 300, torch.bfloat16, seed=21)
    out = corrupt(within_tolerance(ref, seed=21), "scattered", seed=21)
    for tensors in ((out, ref), (out[1:, 3:], ref[1:, 3:])):  # 16-byte aligned, then not
        rowmax = check.row_max(tensors[1])
        monkeypatch.setattr(RUNTIME, "direct_launch", False)
        want = fused_check.check_launch_and_checksum(*tensors, rowmax, TOL, (8, 64))
        monkeypatch.setattr(RUNTIME, "direct_launch", True)
        for _ in range(3):  # the first compiles or finds the kernel, the others launch it directly
            got = fused(
                fence, "direct launch", lambda: fused_check.check_launch_and_checksum(*tensors, rowmax, TOL, (8, 64))
            )
            assert_same((got[0], []), (want[0], []))
            assert got[1] == want[1]
    assert RUNTIME.compiled_kernels and not RUNTIME.direct_launch_refused


def _structured_corruptions(out: torch.Tensor, tile: tuple[int, int]):
    """(name, corrupted copy) for the changes a racing kernel makes: whole rows or tiles in the
    wrong place, a sign lost, a block written one column off, one ulp."""
    tm, tn = tile
    swapped_rows = out.clone()
    swapped_rows[[3, 17]] = out[[17, 3]]
    swapped_tiles = out.clone()
    swapped_tiles[:tm, :tn], swapped_tiles[tm : 2 * tm, tn : 2 * tn] = out[tm : 2 * tm, tn : 2 * tn], out[:tm, :tn]
    sign = out.clone()
    sign[5, 7] = -sign[5, 7]
    two_signs = out.clone()
    two_signs[2, 3], two_signs[9, 30] = -two_signs[2, 3], -two_signs[9, 30]
    shifted = out.clone()
    shifted[tm : 2 * tm, 1 : tn + 1] = out[tm : 2 * tm, 0:tn]
    ulp = out.clone().view(torch.int16 if out.element_size() == 2 else torch.int32)
    ulp[11, 13] += 1
    return [
        ("swapped rows", swapped_rows),
        ("swapped tiles", swapped_tiles),
        ("a sign flip", sign),
        ("two sign flips", two_signs),
        ("a block shifted one column", shifted),
        ("one ulp", ulp.view(out.dtype)),
    ]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_checksum_tells_structured_corruptions_apart(fence, dtype, fused_anywhere):
    """Each corruption a race makes gets a checksum of its own, on both implementations; a
    repeated launch's checksum is all the fast path looks at."""
    out = reference(48, 64, dtype, seed=23)
    base = checksums.checksum(out)
    assert fused_check.checksum(out) == base
    seen = {base: "the output"}
    for name, corrupted in _structured_corruptions(out, (8, 16)):
        total = checksums.checksum(corrupted)
        assert fused(fence, f"checksum of {name}", lambda: fused_check.checksum(corrupted)) == total, name
        assert total not in seen, f"{name} collides with {seen.get(total)}"
        seen[total] = name


def test_checksum_sees_sign_flips_a_weighted_sum_of_bits_cannot():
    """Two fp32 sign flips change the bits by +-2**31: a position-weighted sum of the bits
    (the checksum without its per-element mix) misses them wherever the two places' weights
    agree modulo 2**33, about one pair in 2**32. Such a pair exists in a 512x512 output; the
    checksum sees the flips there."""
    m = n = 512
    rows = torch.arange(m, dtype=torch.int64)[:, None].expand(m, n)
    cols = torch.arange(n, dtype=torch.int64)[None, :].expand(m, n)
    weights = (
        checksums.group_weight(rows, cols // checksums.CHECKSUM_GROUP)
        * checksums.lane_weight(cols % checksums.CHECKSUM_GROUP)
    ).reshape(-1)
    low = weights & ((1 << 33) - 1)
    order = torch.argsort(low)
    same = (low[order[1:]] == low[order[:-1]]).nonzero()
    assert len(same), "no pair of places with weights equal modulo 2**33"
    first, second = int(order[same[0, 0]]), int(order[same[0, 0] + 1])

    def plain_sum(t):
        bits = t.cpu().reshape(-1).view(torch.int32).to(torch.int64) & 0xFFFFFFFF
        return int((bits * weights).sum())

    out = reference(m, n, torch.float32, seed=29).abs().reshape(-1)
    out[second] = -out[second]  # opposite signs: the flips move the bits by +2**31 and -2**31
    flipped = out.clone()
    flipped[first], flipped[second] = -out[first], -out[second]
    out, flipped = out.view(m, n), flipped.view(m, n)
    assert plain_sum(flipped) == plain_sum(out)  # the weighted sum alone is fooled
    assert checksums.checksum(flipped) != checksums.checksum(out)
