"""How a check's kernels are cut into blocks, tasks and programs: :class:`LaunchConfig`, what a
caller may tune, and the plans of the main pass (:func:`main_plan`) and of the per-tile counts
(:func:`tile_plan`) for one output, on its :class:`~.target.Target`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton

from .target import PROGRAM_WARPS, Target, target_of

# Column blocks in one task at most: bounds the fp32 sums' rounding (see :mod:`.kernels`).
MAX_TASK_BLOCKS = 32
# Tasks per program the plan aims for, so that programs finish close together.
TASKS_PER_PROGRAM = 4


@dataclass(frozen=True)
class LaunchConfig:
    """Block shape and parallelism of the main pass. On NVIDIA the defaults give each thread of
    a program's 4 warps two 16-byte vectors of each tensor per step (and the next step's in
    flight) and a persistent grid of several programs per multiprocessor: 16 rows x 256 bytes,
    4 warps, 4 programs per SM took 0.150 ms against 0.159 for the earlier 4 rows x 512 bytes
    at 6 per SM, timed in turn in one run on an H200 (79% of its copy bandwidth;
    benchmarks/check_speed.py --configs, docs/gpu.md). On AMD CDNA the 4 warps are wavefronts of
    64 threads: each thread holds one vector per tensor and step, and 4 programs per compute
    unit keep 4 wavefronts per SIMD (target.py; not timed on an AMD GPU: docs/amd.md). The
    interpreter, whose cost is per step and per program, gets blocks as large as the output
    allows and one program."""

    block_m: int | None = None  # None: 16 rows; in the interpreter the output's rows, up to 64
    block_n: int | None = None  # None: 256 bytes of a row (128 bf16/fp16, 64 fp32); interpreted, up to 1024
    num_warps: int = PROGRAM_WARPS  # of the target's own size: 32 threads on NVIDIA, 64 on AMD CDNA
    programs_per_sm: int = 4  # grid size target, in programs per multiprocessor (an AMD compute unit)
    programs: int | None = None  # grid size target; None: programs_per_sm on a GPU, 1 interpreted
    task_blocks: int | None = None  # column blocks per task; None: as many as keep the programs busy
    finalize_block: int = 128  # partial-result rows per step of the reduction (counts: 8x as many)


@dataclass(frozen=True)
class Plan:
    """The main pass's blocks, tasks and grid, for one output."""

    block_m: int
    block_n: int
    vec: int  # consecutive elements per thread: one 16-byte load
    num_warps: int
    programs: int
    row_blocks: int
    col_chunks: int
    task_blocks: int
    even: bool  # blocks tile the output exactly: the main pass loads without masks

    @property
    def num_tasks(self) -> int:
        return self.row_blocks * self.col_chunks


@dataclass(frozen=True)
class TilePlan:
    """The per-tile counts' blocks and grid, for one output."""

    block_m: int
    block_n: int
    programs: int
    row_blocks: int
    row_atomics: bool  # every block lies within one tile column


def _target_programs(target: Target, config: LaunchConfig) -> int:
    if config.programs is not None:
        return config.programs
    if not target.interpreted:
        return config.programs_per_sm * target.multiprocessors
    return 1  # the interpreter runs programs one after another: fewest is fastest


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def block_shape(element_size: int, config: LaunchConfig, m: int, n: int, target: Target) -> tuple[int, int]:
    if target.interpreted:  # its cost is per element of a block, masked or not: no taller or wider than the output
        block_m = config.block_m or min(64, triton.next_power_of_2(m))
        block_n = config.block_n or min(1024, max(16, triton.next_power_of_2(n)))
    else:
        block_m = config.block_m or 16
        block_n = config.block_n or 256 // element_size
    if not (_power_of_two(block_m) and _power_of_two(block_n) and 16 <= block_n <= 1024):
        # (block_n <= 1024 keeps the fp32 squares' rounding bound of kernels.py's docstring)
        raise ValueError(f"block_m={block_m} and block_n={block_n} must be powers of two, 16 <= block_n <= 1024")
    return block_m, block_n


def main_plan(m: int, n: int, element_size: int, config: LaunchConfig, device: torch.device) -> Plan:
    target = target_of(device)
    block_m, block_n = block_shape(element_size, config, m, n, target)
    if config.task_blocks is not None and not 1 <= config.task_blocks <= MAX_TASK_BLOCKS:
        raise ValueError(f"task_blocks={config.task_blocks} must be within 1..{MAX_TASK_BLOCKS}")
    vec = min(block_n, max(1, 16 // element_size))
    row_blocks = -(-m // block_m)
    col_blocks = -(-n // block_n)
    programs_wanted = _target_programs(target, config)
    if config.task_blocks is not None:
        task_blocks = min(config.task_blocks, col_blocks)
    else:
        # split rows into column chunks only as far as needed to give every program a few tasks
        chunks = min(col_blocks, max(1, -(-TASKS_PER_PROGRAM * programs_wanted // row_blocks)))
        task_blocks = min(MAX_TASK_BLOCKS, -(-col_blocks // chunks))
    col_chunks = -(-col_blocks // task_blocks)
    programs = max(1, min(programs_wanted, row_blocks * col_chunks))
    return Plan(
        block_m,
        block_n,
        vec,
        config.num_warps,
        programs,
        row_blocks,
        col_chunks,
        task_blocks,
        even=m % block_m == 0 and n % block_n == 0,
    )


def tile_plan(m: int, n: int, tile: tuple[int, int], config: LaunchConfig, device: torch.device) -> TilePlan:
    """Blocks of the per-tile counts: a slow path, so fixed blocks (the interpreter's as large
    as the output, its cost being per step). A block within one tile column adds per row;
    otherwise per flagged element."""
    target = target_of(device)
    if target.interpreted:
        block_m, block_n = min(64, triton.next_power_of_2(m)), min(1024, max(16, triton.next_power_of_2(n)))
    else:
        block_m, block_n = 16, 64
    row_blocks = -(-m // block_m)
    return TilePlan(
        block_m,
        block_n,
        max(1, min(_target_programs(target, config), row_blocks)),
        row_blocks,
        row_atomics=tile[1] >= n or tile[1] % block_n == 0,
    )
