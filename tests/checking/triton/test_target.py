"""What the check's launches are planned for (checking/triton/target.py) and the plans on each
target (plan.py): a ROCm torch's AMD GPU is a "hip" target of 64-thread wavefronts, whose
programs of 4 wavefronts are 256 threads, each holding one 16-byte vector per tensor and step
where an NVIDIA thread holds two; its grid counts compute units; NVIDIA's plans are what they
were."""

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from pytest_gemmcheck.checking.triton import target as targets  # noqa: E402
from pytest_gemmcheck.checking.triton.runtime import RUNTIME  # noqa: E402

MI300X = SimpleNamespace(
    name="AMD Instinct MI300X",
    gcnArchName="gfx942:sramecc+:xnack-",
    major=9,
    minor=4,
    multi_processor_count=304,
    warp_size=64,
)
MI355X = SimpleNamespace(
    name="AMD Instinct MI355X",
    gcnArchName="gfx950:sramecc+:xnack-",
    major=9,
    minor=5,
    multi_processor_count=256,
    warp_size=64,
)
H200 = SimpleNamespace(
    name="NVIDIA H200", gcnArchName="NVIDIA H200", major=9, minor=0, multi_processor_count=132, warp_size=32
)


def gpu(monkeypatch, props, hip):
    monkeypatch.setattr(torch.version, "hip", hip)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: props)
    return targets.gpu_target.__wrapped__(torch.device("cuda", 0))


@pytest.mark.parametrize("props, arch, units", [(MI300X, "gfx942", 304), (MI355X, "gfx950", 256)])
def test_a_rocm_torchs_gpu_is_a_hip_target_of_wavefronts(monkeypatch, props, arch, units):
    target = gpu(monkeypatch, props, "7.0.51831")
    assert target == targets.Target("hip", arch, 64, units)
    assert target.threads() == 256 and not target.interpreted


def test_an_nvidia_gpu_is_a_cuda_target_of_warps(monkeypatch):
    """A CUDA build of torch has a gcnArchName too (the device's name): it does not count."""
    target = gpu(monkeypatch, H200, None)
    assert target == targets.Target("cuda", "sm_90", 32, 132) and target.threads() == 128


def test_a_torch_without_warp_size_gets_the_vendors_own(monkeypatch):
    old = SimpleNamespace(**{k: v for k, v in vars(MI300X).items() if k != "warp_size"})
    assert gpu(monkeypatch, old, "6.2.41133").warp_size == 64
    old = SimpleNamespace(**{k: v for k, v in vars(H200).items() if k != "warp_size"})
    assert gpu(monkeypatch, old, None).warp_size == 32


def test_the_stand_in_decides_and_a_cpu_tensor_needs_one_outside_the_interpreter(monkeypatch):
    pytest.importorskip("triton")
    from pytest_gemmcheck.checking.triton.kernels import INTERPRETED

    amd = targets.Target("hip", "gfx950", 64, 256)
    monkeypatch.setattr(RUNTIME, "target_for", lambda device: amd)
    assert targets.target_of(torch.device("cpu")) is amd
    monkeypatch.setattr(RUNTIME, "target_for", None)
    if INTERPRETED:
        assert targets.target_of(torch.device("cpu")) is targets.INTERPRETER
    else:
        with pytest.raises(RuntimeError, match="only in the Triton interpreter"):
            targets.target_of(torch.device("cpu"))


def plan_on(monkeypatch, target, m=4096, n=7168, dtype=torch.bfloat16, config=None):
    pytest.importorskip("triton")
    from pytest_gemmcheck.checking.triton.plan import LaunchConfig, main_plan, tile_plan

    monkeypatch.setattr(RUNTIME, "target_for", lambda device: target)
    element = torch.empty((), dtype=dtype).element_size()
    config = config or LaunchConfig()
    return (
        main_plan(m, n, element, config, torch.device("cpu")),
        tile_plan(m, n, (128, 128), config, torch.device("cpu")),
    )


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_a_wavefront_thread_holds_one_vector_where_a_warp_thread_holds_two(monkeypatch, dtype):
    """The same blocks and 4 warps per program on both: 128 threads on NVIDIA, two 16-byte
    vectors of each tensor per thread and step; 256 on AMD, one. Every thread has a whole
    vector (none idle, none holding a copy of another's), and the grid is 4 programs per SM or
    compute unit."""
    cuda = targets.Target("cuda", "sm_90", 32, 132)
    hip = targets.Target("hip", "gfx942", 64, 304)
    nvidia, _ = plan_on(monkeypatch, cuda, dtype=dtype)
    amd, _ = plan_on(monkeypatch, hip, dtype=dtype)
    element = torch.empty((), dtype=dtype).element_size()
    for plan, target, vectors in ((nvidia, cuda, 2), (amd, hip, 1)):
        assert plan.vec * element == 16
        assert plan.block_m * plan.block_n // plan.vec == vectors * target.threads(plan.num_warps)
    assert (nvidia.block_m, nvidia.block_n, nvidia.num_warps, nvidia.programs) == (16, 256 // element, 4, 4 * 132)
    assert (amd.block_m, amd.block_n, amd.num_warps, amd.programs) == (16, 256 // element, 4, 4 * 304)


def test_the_other_kernels_blocks_cover_a_wavefront_programs_threads(monkeypatch):
    """The per-tile counts, the reduction and the guards: every block has at least one element
    per thread of a 256-thread program (no thread only repeats another's work)."""
    from pytest_gemmcheck.checking import checksum
    from pytest_gemmcheck.checking.triton.kernels import P_WIDTH
    from pytest_gemmcheck.checking.triton.plan import LaunchConfig

    hip = targets.Target("hip", "gfx950", 64, 256)
    _, tiles = plan_on(monkeypatch, hip)
    threads = hip.threads()
    config = LaunchConfig()
    assert tiles.block_m * tiles.block_n >= threads
    assert config.finalize_block * P_WIDTH.value >= threads and 8 * config.finalize_block >= threads
    assert checksum.WORDS_LANES >= threads


def test_a_callers_warps_win_on_any_target(monkeypatch):
    from pytest_gemmcheck.checking.triton.plan import LaunchConfig

    plan, _ = plan_on(monkeypatch, targets.Target("hip", "gfx950", 64, 256), config=LaunchConfig(num_warps=8))
    assert plan.num_warps == 8


def test_the_interpreter_plans_one_program_of_blocks_as_large_as_the_output(monkeypatch):
    plan, tiles = plan_on(monkeypatch, targets.INTERPRETER, m=50, n=200)
    assert (plan.block_m, plan.block_n, plan.programs) == (64, 256, 1)
    assert (tiles.block_m, tiles.block_n, tiles.programs) == (64, 256, 1)
