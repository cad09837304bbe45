"""gpu/launch.py: compiled kernels launched directly once Triton has compiled a specialisation,
with Triton's own path for every new one. A stand-in for Triton's JIT function records which
path each launch took, so this runs without a GPU."""

from dataclasses import dataclass

import pytest
import torch

from pytest_gemmcheck.checking.triton import launch as launcher
from pytest_gemmcheck.checking.triton.runtime import RUNTIME


@dataclass
class Param:
    name: str
    is_constexpr: bool


class Compiled:
    def __init__(self, log, refuse=False):
        self.log, self.refuse = log, refuse

    def __getitem__(self, grid):
        def run(*full):
            if self.refuse:
                raise TypeError("this Triton's compiled kernels take other arguments")
            self.log.append(("direct", grid, full))

        return run


class FakeKernel:
    """kernel(x_ptr, n, BLOCK: constexpr, scale, FLAG: constexpr), as Triton's JIT function looks."""

    params = [
        Param("x_ptr", False),
        Param("n", False),
        Param("BLOCK", True),
        Param("scale", False),
        Param("FLAG", True),
    ]

    def __init__(self, refuse=False):
        self.log, self.refuse = [], refuse

    def __getitem__(self, grid):
        def run(*args, num_warps, **constexprs):
            self.log.append(("triton", grid, args, constexprs, num_warps))
            return Compiled(self.log, self.refuse)

        return run


@pytest.fixture(autouse=True)
def fresh_cache():
    RUNTIME.clear()
    yield
    RUNTIME.clear()  # no fake kernel, nor a refusal, is left to later tests


def paths(kernel):
    return [entry[0] for entry in kernel.log]


def test_first_launch_compiles_through_triton_then_launches_directly_with_constexprs_in_place():
    kernel = FakeKernel()
    x = torch.zeros(64, dtype=torch.float32)
    for _ in range(3):
        launcher.launch(kernel, 5, (x, 64, 0.5), {"BLOCK": 32, "FLAG": True}, 4, interpreted=False)
    assert paths(kernel) == ["triton", "direct", "direct"]
    _, grid, full = kernel.log[-1]
    assert grid == (5, 1, 1)
    assert full[0] is x and full[1:] == (64, 32, 0.5, True)  # in the kernel's parameter order


@pytest.mark.parametrize("change", ["alignment", "divisibility", "one", "width", "constexpr", "warps", "dtype"])
def test_anything_triton_specialises_on_takes_its_path_again(change):
    kernel = FakeKernel()
    x = torch.zeros(64, dtype=torch.float32)
    base = dict(args=(x, 64, 0.5), constexprs={"BLOCK": 32, "FLAG": True}, warps=4)
    changed = {
        "alignment": dict(base, args=(x[1:], 64, 0.5)),  # 4 bytes past a 16-byte boundary
        "divisibility": dict(base, args=(x, 63, 0.5)),
        "one": dict(base, args=(x, 1, 0.5)),
        "width": dict(base, args=(x, 2**40, 0.5)),
        "constexpr": dict(base, constexprs={"BLOCK": 64, "FLAG": True}),
        "warps": dict(base, warps=8),
        "dtype": dict(base, args=(x.to(torch.float16), 64, 0.5)),
    }[change]
    for call in (base, changed, changed):
        launcher.launch(kernel, 1, call["args"], call["constexprs"], call["warps"], interpreted=False)
    assert paths(kernel) == ["triton", "triton", "direct"]


def test_a_refused_direct_launch_falls_back_to_triton_for_good():
    kernel = FakeKernel(refuse=True)
    x = torch.zeros(64)
    for _ in range(3):
        launcher.launch(kernel, 1, (x, 64, 0.5), {"BLOCK": 32, "FLAG": True}, 4, interpreted=False)
    assert paths(kernel) == ["triton", "triton", "triton"]
    assert RUNTIME.direct_launch_refused


def test_interpreter_and_switch_always_take_triton_path(monkeypatch):
    kernel = FakeKernel()
    x = torch.zeros(64)
    for _ in range(2):
        launcher.launch(kernel, 1, (x, 64, 0.5), {"BLOCK": 32, "FLAG": True}, 4, interpreted=True)
    monkeypatch.setattr(RUNTIME, "direct_launch", False)
    for _ in range(2):
        launcher.launch(kernel, 1, (x, 64, 0.5), {"BLOCK": 32, "FLAG": True}, 4, interpreted=False)
    assert paths(kernel) == ["triton"] * 4
