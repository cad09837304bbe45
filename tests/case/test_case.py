"""A case's device has one name, the one torch places tensors under: ``cpu`` for the CPU (a CPU
tensor's device has no index, and ``cpu:0`` is not equal to it), ``cuda:N`` for a GPU (``cuda``
is the current one). So a kernel that returns its own output is compared with the case's device
as torch made it, and the inputs' cache key and the records name the device one way."""

import pytest
import torch

from pytest_gemmcheck.case.case import usable_device
from pytest_gemmcheck.errors import CaseError


def own_output(x):
    """A kernel that allocates its output and returns it (torch._scaled_mm without out=)."""
    return lambda out: torch.matmul(x.a.float(), x.b.float().t()).to(torch.bfloat16)


@pytest.fixture
def two_gpus_current_1(monkeypatch):
    """torch.cuda as a process that sees two GPUs, the current one cuda:1."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)


@pytest.mark.parametrize("given", ["cpu", "cpu:0", torch.device("cpu:0"), torch.device("cpu")])
def test_the_cpu_is_named_as_its_tensors_name_it(given):
    assert usable_device(given) == torch.empty(0).device == torch.device("cpu")
    assert str(usable_device(given)) == "cpu"


@pytest.mark.parametrize("given", ["cuda", torch.device("cuda")])
def test_a_gpu_without_an_index_is_the_current_one(two_gpus_current_1, given):
    assert usable_device(given) == torch.device("cuda", 1)
    assert str(usable_device(given)) == "cuda:1"


def test_a_gpu_with_an_index_keeps_it_and_one_past_the_count_is_refused(two_gpus_current_1):
    assert usable_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(CaseError, match=r"device='cuda:2': this process sees 2 GPUs \(cuda:0 to cuda:1\)"):
        usable_device("cuda:2")


@pytest.mark.parametrize("device", ["cpu", "cpu:0"])
def test_a_kernel_returning_its_own_output_passes_however_the_cpu_is_named(make_case, device):
    results = []
    case = make_case("own_output", m=32, n=48, k=64, device=device, repeat=4, record=results.append)
    case.run(own_output(case.inputs()))
    (result,) = results
    assert result.bad_launches == [] and result.device == "cpu"
    assert all(launch.device == "cpu" for launch in result.launches)


def test_cases_naming_the_cpu_two_ways_share_their_inputs(make_case):
    one = make_case("k", m=16, n=16, k=32, device="cpu")
    other = make_case("k", m=16, n=16, k=32, device="cpu:0")
    one.context.inputs_cache = other.context.inputs_cache
    assert one.inputs() is other.inputs()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", None])
def test_on_a_gpu_a_kernel_returning_its_own_output_passes_however_the_gpu_is_named(make_case, device):
    expected = "cuda:0" if device == "cuda:0" else f"cuda:{torch.cuda.current_device()}"
    results = []
    case = make_case("own_output", m=256, n=512, k=256, device=device, repeat=12, record=results.append)
    case.run(own_output(case.inputs()))
    (result,) = results
    assert [launch.kinds for launch in result.bad_launches] == []
    assert result.device == expected and {launch.device for launch in result.launches} == {expected}
