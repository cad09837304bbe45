"""The cp.async tail GEMM of examples/gpu/racy_gemm.cu, run on the CPU through
racy_gemm_emulation.cpp (a thread per CUDA thread; a copy lands only when a wait retires it).

The fixed twin must compute the GEMM exactly as the plugin's reference does (to within one
bf16 rounding) in every pipeline shape, including K = 2 * block_k where the main loop never
runs; the racy variant, whose pre-read of the final stage precedes the wait, must not: under
this emulation its race is lost on every launch. Both go through the plugin's own check."""

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode
from pytest_gemmcheck.case.reference import compute_reference
from pytest_gemmcheck.checking.rule import Tolerance
from pytest_gemmcheck.checking.torch_backend import check_launch, row_max

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (C++20) to build the emulation")

SOURCE = Path(__file__).resolve().parents[2] / "examples" / "gpu" / "racy_gemm_emulation.cpp"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """build(variant, stages, block_k) -> path of the compiled emulation, built once each."""
    built = {}
    folder = tmp_path_factory.mktemp("racy_gemm")

    def build(variant, stages, block_k):
        key = (variant, stages, block_k)
        if key not in built:
            exe = folder / f"tail_gemm_{variant}_{stages}_{block_k}"
            command = [
                "g++",
                "-std=c++20",
                "-O2",
                "-pthread",
                "-Wno-unknown-pragmas",
                f"-DSTAGES={stages}",
                f"-DBLOCK_K={block_k}",
                f"-DFIXED={int(variant == 'fixed')}",
                str(SOURCE),
                "-o",
                str(exe),
            ]
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                pytest.fail(f"building the emulation failed:\n{done.stderr[-3000:]}")
            built[key] = exe
        return built[key]

    return build


def run_emulated(exe, x, tmp_path, slack=0):
    m, k = x.a.shape
    n = x.b.shape[0]
    inputs, output = tmp_path / "in.bin", tmp_path / "out.bin"
    with open(inputs, "wb") as f:
        for t in (x.a.view(torch.uint8), x.b.view(torch.uint8), x.a_scale, x.b_scale):
            f.write(t.contiguous().numpy().tobytes())
    subprocess.run([str(exe), str(m), str(n), str(k), str(slack), str(inputs), str(output)], check=True, timeout=300)
    return torch.frombuffer(bytearray(output.read_bytes()), dtype=torch.bfloat16).reshape(m, n)


def checked(out, x):
    ref = compute_reference(x)
    accuracy, _ = check_launch(out, ref, row_max(ref), Tolerance(), tile=(64, 64))
    return accuracy, ref


PIPELINES = [  # (stages, block_k, K): K = 2 * block_k runs the main loop zero times
    (2, 32, 64),
    (2, 32, 256),
    (3, 16, 256),
    (4, 64, 512),
    (2, 128, 512),
]


@pytest.mark.parametrize("stages,block_k,k", PIPELINES, ids=lambda v: str(v))
def test_fixed_twin_computes_the_gemm(emulator, tmp_path, stages, block_k, k):
    x = quant_mode("ptpc").make_inputs(128, 192, k, seed=k + stages, device="cpu", fp8=fp8_flavour("e4m3fn"))
    out = run_emulated(emulator("fixed", stages, block_k), x, tmp_path, slack=1000)
    accuracy, ref = checked(out, x)
    assert accuracy.nonfinite == 0 and accuracy.wrong.elements == 0
    assert accuracy.max_rel_err < 0.01  # one bf16 rounding of the row's largest value at most
    assert (out.view(torch.int16) == ref.view(torch.int16)).float().mean() > 0.99


@pytest.mark.parametrize("stages,block_k,k", [(2, 32, 64), (2, 32, 256), (3, 16, 256)], ids=lambda v: str(v))
def test_racy_variant_reads_the_stage_before_it_lands(emulator, tmp_path, stages, block_k, k):
    x = quant_mode("ptpc").make_inputs(128, 192, k, seed=k + stages, device="cpu", fp8=fp8_flavour("e4m3fn"))
    out = run_emulated(emulator("racy", stages, block_k), x, tmp_path)
    accuracy, _ = checked(out, x)
    assert accuracy.wrong.elements > 0
    assert accuracy.wrong.tiles == 2 * 3  # every 64x64 tile's tail pre-read the stale stage
