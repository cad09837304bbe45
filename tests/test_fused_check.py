"""The fused Triton check gives the torch path's numbers (check.check_launch), case by case.

Without a GPU the kernels run in Triton's interpreter, on CPU tensors. Triton reads the flag
for that when it is first imported and again on a kernel's first launch, so the flag is set
around both and then restored: the rest of the session sees the environment it had.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from pytest_gemmcheck import check  # noqa: E402
from pytest_gemmcheck.gpu import available, interpreting  # noqa: E402

# The interpreter computes inf - inf and 0 / 0 with numpy, as a GPU computes them, and numpy warns.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:divide by zero encountered:RuntimeWarning")

ON_GPU = torch.cuda.is_available() and not interpreting()
DEVICE = "cuda" if ON_GPU else "cpu"
DTYPES = [torch.bfloat16, torch.float16, torch.float32]
TOL = check.Tolerance()


def _load_fused_check():
    if ON_GPU:
        pytest.importorskip("triton")
        from pytest_gemmcheck.gpu import fused_check

        return fused_check
    if "triton" in sys.modules and not interpreting():
        pytest.skip("no GPU, and triton was imported before the interpreter could be chosen", allow_module_level=True)
    saved = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        pytest.importorskip("triton")
        from pytest_gemmcheck.gpu import fused_check

        ref = torch.ones(1, 1)
        fused_check.check_launch(ref, ref, ref[:, 0], TOL)  # the first launch, under the flag
    finally:
        if saved is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = saved
    return fused_check


fused_check = _load_fused_check()


@pytest.fixture
def fc():
    return fused_check


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


def assert_same(fused, expected):
    (accuracy, diffs), (want, want_diffs) = fused, expected
    assert accuracy.wrong == want.wrong
    assert accuracy.nonfinite == want.nonfinite
    assert same_float(accuracy.max_abs_err, want.max_abs_err), (accuracy.max_abs_err, want.max_abs_err)
    assert same_float(accuracy.max_rel_err, want.max_rel_err), (accuracy.max_rel_err, want.max_rel_err)
    # float64 sums added in another order: equal to the last few bits
    assert accuracy.rel_l2 == pytest.approx(want.rel_l2, rel=1e-12, abs=0, nan_ok=True)
    assert len(diffs) == len(want_diffs)
    for diff, want_diff in zip(diffs, want_diffs):
        assert diff.differing == want_diff.differing
        assert same_float(diff.max_diff_rel, want_diff.max_diff_rel), (diff.max_diff_rel, want_diff.max_diff_rel)


def compare(fc, out, ref, tile=None, copies=(), tol=TOL, rowmax=None, config=None):
    rowmax = check.row_max(ref) if rowmax is None else rowmax
    fused = fc.check_launch(out, ref, rowmax, tol, tile, list(copies), config=config)
    expected = check.check_launch(out, ref, rowmax, tol, tile, list(copies))
    assert_same(fused, expected)
    return fused


# --- cases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["clean", "nan_region", "tile", "scattered", "inf", "stale_row"])
def test_corruptions(fc, dtype, kind):
    ref = reference(45, 300, dtype, seed=1)
    out = corrupt(within_tolerance(ref, seed=1), kind, seed=1)
    accuracy, _ = compare(fc, out, ref, tile=(16, 64), copies=[out.clone()])
    if kind in ("nan_region", "tile", "inf", "stale_row"):
        assert accuracy.wrong.elements > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_exact_output_is_clean(fc, dtype):
    ref = reference(20, 100, dtype, seed=2)
    accuracy, diffs = compare(fc, ref.clone(), ref, tile=(8, 32), copies=[ref.clone()])
    assert accuracy.wrong.elements == 0 and accuracy.max_abs_err == 0 and accuracy.rel_l2 == 0
    assert diffs[0].differing.elements == 0 and diffs[0].differing.tiles == 0


@pytest.mark.parametrize("how", ["values", "signed_zero", "nan"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_one_differing_copy(fc, dtype, how):
    ref = reference(33, 70, dtype, seed=3)
    out = within_tolerance(ref, seed=3)
    copy = differing_copy(out, seed=3, how=how)
    _, diffs = compare(fc, out, ref, tile=(8, 16), copies=[copy])
    assert diffs[0].differing.elements > 0


@pytest.mark.parametrize("count", [0, 2, 4, 5, 9])
def test_several_copies(fc, count):
    """Up to four copies share a pass; more take more passes, each still exact."""
    ref = reference(24, 80, torch.bfloat16, seed=4)
    out = within_tolerance(ref, seed=4)
    copies = [out.clone() if i % 3 == 0 else differing_copy(out, seed=10 + i) for i in range(count)]
    _, diffs = compare(fc, out, ref, tile=(8, 16), copies=copies)
    assert [d.differing.elements == 0 for d in diffs] == [i % 3 == 0 for i in range(count)]


@pytest.mark.parametrize("shape", [(1, 1), (1, 17), (17, 1), (7, 13), (130, 300), (3, 1100)])
def test_odd_shapes(fc, shape):
    ref = reference(*shape, torch.bfloat16, seed=5)
    out = corrupt(within_tolerance(ref, seed=5), "scattered", seed=5)
    for tile in (None, (8, 64)):
        compare(fc, out, ref, tile=tile, copies=[differing_copy(out, seed=5)])


@pytest.mark.parametrize("tile", [(1, 1), (8, 8), (100, 7), (3, 300), (64, 4096), (5, 48)])
def test_odd_tiles(fc, tile):
    """Tiles narrower than a block, not dividing it, or larger than the output."""
    ref = reference(30, 150, torch.float16, seed=5)
    out = corrupt(within_tolerance(ref, seed=5), "tile", seed=5)
    compare(fc, out, ref, tile=tile, copies=[differing_copy(out, seed=5)])


def test_many_programs_and_column_splits(fc):
    """Small blocks and a large grid: rows and tiles shared between programs, by atomics."""
    ref = reference(13, 70, torch.float16, seed=6)
    out = corrupt(corrupt(within_tolerance(ref, seed=6), "tile", seed=6), "nan_region", seed=7)
    config = fc.LaunchConfig(block_m=4, block_n=16, programs=8)
    for tile in [(8, 24), (5, 5)]:
        compare(fc, out, ref, tile=tile, copies=[differing_copy(out, seed=6)], config=config)
    # the GPU's default block shape, over several column blocks per program
    ref = reference(20, 900, torch.bfloat16, seed=6)
    out = corrupt(within_tolerance(ref, seed=6), "scattered", seed=6)
    config = fc.LaunchConfig(block_m=8, block_n=256, programs=6)
    compare(fc, out, ref, tile=(16, 128), copies=[out.clone(), differing_copy(out, seed=6)], config=config)


def test_strided_outputs(fc):
    """A kernel may return a transposed view or a slice of a larger buffer."""
    ref = reference(40, 60, torch.bfloat16, seed=7)
    transposed = corrupt(within_tolerance(ref, seed=7), "tile", seed=7).t().contiguous().t()
    assert not transposed.is_contiguous()
    compare(fc, transposed, ref, tile=(16, 16), copies=[transposed.contiguous()])
    wide = torch.zeros(40, 100, dtype=torch.bfloat16, device=DEVICE)
    wide[:, 20:80] = within_tolerance(ref, seed=8)
    compare(fc, wide[:, 20:80], ref, tile=(16, 16), copies=[differing_copy(wide[:, 20:80].contiguous(), seed=8)])


@pytest.mark.parametrize("floor", [0.0, 0.25, 1.0, 2.0])
def test_floors(fc, floor):
    """floor < 1 scales some elements by their own |ref|: the per-element division path."""
    ref = reference(30, 90, torch.bfloat16, seed=8)
    out = corrupt(within_tolerance(ref, seed=8), "scattered", seed=8)
    compare(fc, out, ref, tile=(8, 32), tol=check.Tolerance(rtol=0.02, floor=floor))


def test_zero_rows_and_zero_reference(fc):
    """A row of ref that is all zeros has no scale: any error there is infinitely relative."""
    ref = reference(12, 40, torch.float32, seed=9)
    ref[3] = 0
    ref[5] = 0
    out = ref.clone()
    out[3, 7] = 1e-3
    accuracy, _ = compare(fc, out, ref, tile=(4, 8))
    assert accuracy.max_rel_err == math.inf and accuracy.wrong.row_ids == [3]
    compare(fc, out, torch.zeros_like(ref), tile=(4, 8))


def test_rowmax_that_is_not_the_reference_row_maximum(fc):
    """A stale or scaled rowmax breaks the row-scale shortcut: the check notices and redoes
    the full per-element computation, with the same numbers as the torch path."""
    ref = reference(16, 64, torch.bfloat16, seed=10)
    out = corrupt(within_tolerance(ref, seed=10), "scattered", seed=10)
    rowmax = check.row_max(ref)
    rowmax[::3] *= 0.5
    compare(fc, out, ref, tile=(4, 16), rowmax=rowmax, copies=[differing_copy(out, seed=10)])


def test_non_finite_reference(fc):
    """An fp16 reference can overflow to inf; NaN there follows torch's rules."""
    ref = reference(10, 32, torch.float16, seed=11)
    ref[2, 3] = float("inf")
    ref[4, 5] = float("nan")
    ref[6, :] = float("-inf")
    out = within_tolerance(torch.nan_to_num(ref, posinf=1.0, neginf=-1.0, nan=0.0), seed=11)
    compare(fc, out, ref, tile=(4, 4), copies=[differing_copy(out, seed=11, how="nan")])


@pytest.mark.parametrize("rtol", [0.05, 0.013, 1.0])
def test_threshold_is_exact_at_the_boundary(fc, rtol):
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
    accuracy, _ = compare(fc, out, ref, tile=(8, 8), tol=check.Tolerance(rtol=rtol, floor=1.0))
    assert 0 < accuracy.wrong.elements < rows * (cols - 1)


def test_random_sweep(fc):
    """Random combinations of everything above."""
    rng = random.Random(13)
    kinds = ["clean", "nan_region", "tile", "scattered", "inf", "stale_row"]
    for case in range(16):
        dtype = rng.choice(DTYPES)
        m, n = rng.randint(1, 90), rng.randint(1, 300)
        tile = rng.choice([None, (rng.randint(1, 40), rng.randint(8, 200))])
        ref = reference(m, n, dtype, seed=100 + case)
        out = corrupt(within_tolerance(ref, seed=100 + case), rng.choice(kinds), seed=100 + case)
        copies = [rng.choice([out.clone(), differing_copy(out, seed=200 + case + i)]) for i in range(rng.randint(0, 5))]
        tol = check.Tolerance(rtol=rng.choice([0.05, 0.01]), floor=rng.choice([1.0, 1.0, 0.5]))
        compare(fc, out, ref, tile=tile, copies=copies, tol=tol)


def test_empty_output(fc):
    ref = torch.zeros(0, 16, dtype=torch.bfloat16, device=DEVICE)
    compare(fc, ref.clone(), ref, tile=(8, 8), copies=[ref.clone()])


def test_mismatched_arguments_are_refused(fc):
    ref = reference(4, 8, torch.bfloat16, seed=14)
    with pytest.raises(ValueError, match="same"):
        fc.check_launch(ref[:, :4], ref, check.row_max(ref), TOL)
    with pytest.raises(ValueError, match="copy"):
        fc.check_launch(ref, ref, check.row_max(ref), TOL, copies=[ref.float()])


# --- checksum --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_checksum_matches_torch(fc, dtype):
    out = corrupt(reference(33, 70, dtype, seed=15), "nan_region", seed=15)
    for tensor in (out, out.t(), out[3:20, 5:60], out.reshape(-1), out.reshape(3, 11, 70)):
        assert fc.checksum(tensor) == check.checksum(tensor)
    other = differing_copy(out, seed=15, how="signed_zero")
    assert fc.checksum(other) == check.checksum(other) != check.checksum(out)


# --- availability ----------------------------------------------------------------------------


def test_available(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert available(torch.zeros(1))
    monkeypatch.delenv("TRITON_INTERPRET")
    assert not available(torch.zeros(1))
    assert available(torch.zeros(1, device="cuda")) if torch.cuda.is_available() else True


def test_package_imports_nothing_heavy():
    code = ("import sys, pytest_gemmcheck.gpu as g; "
            "print(any(name in sys.modules for name in ('triton', 'torch')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    assert result.stdout.strip() == "False", result.stderr


# --- the kernels as a GPU compiler sees them ---------------------------------------------------

COMPILE_FOR_HOPPER = r"""
import inspect, re, subprocess, sys, tempfile
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from pytest_gemmcheck.gpu import fused_check as fc

def compile_kernel(kernel, types, constexprs, aligned, num_warps=8):
    names = list(inspect.signature(kernel.fn).parameters)
    signature = {name: "constexpr" if name in constexprs else types(name) for name in names}
    # what Triton's launcher tells the compiler about 16-byte aligned pointers and sizes
    attrs = {(names.index(name),): [["tt.divisibility", 16]] for name in aligned}
    source = ASTSource(fn=kernel, signature=signature, attrs=attrs,
                       constexprs={(names.index(k),): v for k, v in constexprs.items()})
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})

def spills(compiled):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(compiled.asm["ptx"])
    log = subprocess.run([triton.knobs.nvidia.ptxas.path, "-v", "--gpu-name=sm_90a", f.name, "-o", "/dev/null"],
                         capture_output=True, text=True).stderr
    return [int(n) for n in re.findall(r"(\d+) bytes spill", log)]

for dtype, bits, vec, copies, row_scale, tile in [("bf16", 16, 8, 1, True, True), ("fp16", 16, 8, 4, True, False),
                                                  ("fp32", 32, 4, 2, False, True)]:
    def types(name):
        if name in ("out_ptr", "ref_ptr") or name.startswith("copy"):
            return "*" + dtype
        return {"rowmax_ptr": "*fp32", "partial_ptr": "*fp64", "rtol": "fp32", "floor": "fp32"}.get(
            name, "*i32" if name.endswith("_ptr") else "i32")
    constexprs = dict(ACCURACY=True, ROW_SCALE=row_scale, NUM_COPIES=copies, HAS_TILE=tile, TILE_SEGMENTS=1,
                      BITS=bits, BLOCK_M=8, BLOCK_N=512 // (bits // 8), VEC=vec, stride_out_n=1, stride_ref_n=1,
                      stride_c0_n=1, stride_c1_n=1, stride_c2_n=1, stride_c3_n=1)
    aligned = [n for n in inspect.signature(fc._check_kernel.fn).parameters if n.endswith("_ptr") or n == "N"
               or (n.startswith("stride") and n.endswith("_m"))]
    compiled = compile_kernel(fc._check_kernel, types, constexprs, aligned)
    loads = re.findall(r"ld\.global[\w.:]*\.v4\.b32", compiled.asm["ptx"])
    assert len(loads) == 2 + copies, (dtype, loads)  # one 16-byte load per thread and tensor
    assert spills(compiled) == [0, 0], dtype
compiled = compile_kernel(fc._finalize_kernel, lambda n: "*fp64" if n in ("partial_ptr", "result_ptr")
                          else "*i32" if n.endswith("_ptr") else "i32", dict(HAS_TILE=True, BLOCK=1024), [], 4)
assert spills(compiled) == [0, 0]
compiled = compile_kernel(fc._checksum_kernel, lambda n: {"t_ptr": "*bf16", "total_ptr": "*i64"}.get(n, "i32"),
                          dict(BITS=16, BLOCK_M=8, BLOCK_N=256, VEC=8, stride_n=1), ["t_ptr", "N", "stride_m"])
assert spills(compiled) == [0, 0]
print("compiled")
"""


def test_kernels_compile_for_hopper():
    """What CI without a GPU can still say: the kernels compile for sm_90, load each tensor in
    16-byte vectors and keep their accumulators in registers."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, "-c", COMPILE_FOR_HOPPER], capture_output=True, text=True, env=env)
    if "compiled" not in result.stdout and ("ptxas" in result.stderr and "No such file" in result.stderr):
        pytest.skip("this triton has no NVIDIA toolchain")
    assert result.stdout.strip() == "compiled", result.stderr[-3000:]
