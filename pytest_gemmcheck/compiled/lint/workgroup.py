"""The workgroup as the kernel sees it, and each wave's registers at entry: the same for both
engines, as the thread ids and the exec mask are what every LDS address starts from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .operands import EXEC_LO
from .semantics import WaveState
from .values import Lanes


@dataclass(frozen=True)
class Geometry:
    """The workgroup as the kernel sees it."""

    size: tuple[int, int, int]
    wave_size: int = 64
    packed_ids: bool = True  # gfx90a/gfx94x/gfx950 pack x, y, z into v0
    id_dims: int = 1  # work-item id dimensions in VGPRs (.amdhsa_system_vgpr_workitem_id + 1)

    @property
    def threads(self) -> int:
        return self.size[0] * self.size[1] * self.size[2]

    @property
    def waves(self) -> int:
        return -(-self.threads // self.wave_size)


def initial_state(g: Geometry, wave: int) -> WaveState:
    """Wave ``wave``'s registers at entry: its exec mask and work-item ids; nothing else known."""
    state = WaveState(g.wave_size)
    lanes = np.arange(g.wave_size, dtype=np.int64)
    tid = wave * g.wave_size + lanes
    live = tid < g.threads
    x, y, z = tid % g.size[0], (tid // g.size[0]) % g.size[1], tid // (g.size[0] * g.size[1])
    exec_mask = sum(1 << int(lane) for lane in lanes[live])
    state.write_sgpr(EXEC_LO, exec_mask & 0xFFFFFFFF)
    state.write_sgpr(EXEC_LO + 1, exec_mask >> 32)
    if g.packed_ids:
        v0 = x | (y << 10) | (z << 20) if g.id_dims > 1 else x
        state.vgpr[0] = Lanes(v0.astype(np.int64), live.copy())
    else:
        for dim, ids in enumerate((x, y, z)[: g.id_dims]):
            state.vgpr[dim] = Lanes(ids.astype(np.int64), live.copy())
    return state
