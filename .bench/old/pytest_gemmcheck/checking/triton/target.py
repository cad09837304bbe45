"""What the check's kernels are planned for: a GPU's Triton backend, arch, warp size and
multiprocessors, or Triton's interpreter. Block shapes and grids (:mod:`.plan`, and the kernels'
launches) are chosen from a :class:`Target`, never from the device's type alone, so that the
same code plans for an NVIDIA GPU (warps of 32 threads), an AMD CDNA GPU (wavefronts of 64) or
the interpreter, and so that the AMD tests can plan an MI300's launches on a machine without a
GPU (``RUNTIME.target_for``).

Every program of the check's kernels has :data:`PROGRAM_WARPS` warps, and Triton's
``num_warps`` counts warps of the target's own size: a program is 128 threads on NVIDIA and 256
on AMD CDNA, one wavefront per SIMD of a compute unit. A thread there holds half the elements it
holds on NVIDIA (one 16-byte vector of each tensor per step of the main pass, not two: see
:class:`.plan.LaunchConfig`), and the grid of 4 programs per compute unit keeps 16 wavefronts,
4 per SIMD, in flight. Two wavefronts per program would keep NVIDIA's elements per thread; four
were chosen for AMD's one wave per SIMD, and because ``gemmcheck lint`` checks the kernels'
cross-wave reductions in that form (docs/amd.md). Neither is timed on an AMD GPU yet.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

# Warps (AMD: wavefronts) per program of every check kernel: the block shapes of plan.py were
# timed with 4 on an H200, and 4 is one per SIMD of an AMD compute unit.
PROGRAM_WARPS = 4


@dataclass(frozen=True)
class Target:
    """A Triton backend ("cuda", "hip") and its GPU, or the interpreter ("interpreter")."""

    backend: str
    arch: str  # "sm_90", "gfx942"; "" for the interpreter
    warp_size: int  # threads per warp: 32 on NVIDIA (and AMD RDNA), 64 on AMD CDNA (a wavefront)
    multiprocessors: int  # SMs, or AMD compute units

    @property
    def interpreted(self) -> bool:
        return self.backend == "interpreter"

    def threads(self, warps: int = PROGRAM_WARPS) -> int:
        """Threads of a program of ``warps`` warps (Triton's num_warps) on this target."""
        return warps * self.warp_size


# the interpreter runs programs one after another and ignores warps
INTERPRETER = Target("interpreter", "", 32, 1)


@functools.lru_cache(maxsize=None)
def gpu_target(device: torch.device) -> Target:
    """The target of a GPU as torch sees it: a ROCm build of torch reports AMD GPUs as "cuda"
    devices, with the wavefront size as ``warp_size`` and the arch in ``gcnArchName``."""
    from ...environment.stack import gpu_arch

    props = torch.cuda.get_device_properties(device)
    on_rocm = getattr(torch.version, "hip", None) is not None
    warp_size = int(getattr(props, "warp_size", 0) or (64 if on_rocm else 32))
    return Target("hip" if on_rocm else "cuda", gpu_arch(props), warp_size, int(props.multi_processor_count))


def target_of(device: torch.device) -> Target:
    """The target a launch over tensors on ``device`` is planned for: ``RUNTIME.target_for``'s
    when a stand-in is set, else the interpreter's when kernels were defined for it, else the
    GPU's own. Raises for a CPU tensor that no target can check."""
    from .kernels import INTERPRETED
    from .runtime import RUNTIME

    if RUNTIME.target_for is not None:
        return RUNTIME.target_for(device)
    if INTERPRETED:
        return INTERPRETER
    if device.type != "cuda":
        raise RuntimeError(
            "the fused check runs CPU tensors only in the Triton interpreter: set "
            "TRITON_INTERPRET=1 before pytest_gemmcheck.checking.triton.fused_check is imported"
        )
    return gpu_target(device)
