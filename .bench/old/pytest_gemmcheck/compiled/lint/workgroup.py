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
    # SGPRs the hardware fills at entry with values every wave shares (user SGPRs: the kernel
    # argument segment's pointer, preloaded arguments; the workgroup ids), from the descriptor
    entry_sgprs: int = 0
    kernarg_sgpr: int | None = None  # the first of the two holding the argument segment's pointer

    @property
    def threads(self) -> int:
        return self.size[0] * self.size[1] * self.size[2]

    @property
    def waves(self) -> int:
        return -(-self.threads // self.wave_size)


def _ids(g: Geometry, wave: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Which lanes of wave ``wave`` are live, and its work-item id VGPRs at entry."""
    tid = wave * g.wave_size + np.arange(g.wave_size, dtype=np.int64)
    live = tid < g.threads
    x, y, z = tid % g.size[0], (tid // g.size[0]) % g.size[1], tid // (g.size[0] * g.size[1])
    if g.packed_ids:
        return live, [x | (y << 10) | (z << 20) if g.id_dims > 1 else x]
    return live, list((x, y, z)[: g.id_dims])


def _lane_bits(g: Geometry) -> int:
    """The bits of v0 at entry that are the same in every wave lane by lane (in a 1-D workgroup
    of whole waves, the lane's: v0 & 63 is the lane id in every wave)."""
    values = [_ids(g, wave)[1][0] for wave in range(g.waves)]
    bits = 0
    for bit in range(32):
        column = [(v >> bit) & 1 for v in values]
        if all(np.array_equal(column[0], other) for other in column[1:]):
            bits |= 1 << bit
    return bits


def initial_state(g: Geometry, wave: int) -> WaveState:
    """Wave ``wave``'s registers at entry: its exec mask and work-item ids; nothing else known.
    A partial last wave's exec is not that of the others."""
    state = WaveState(g.wave_size)
    live, ids = _ids(g, wave)
    exec_mask = sum(1 << int(lane) for lane in np.flatnonzero(live))
    state.write_sgpr(EXEC_LO, exec_mask & 0xFFFFFFFF)
    state.write_sgpr(EXEC_LO + 1, exec_mask >> 32)
    if g.threads % g.wave_size:
        state.nonuniform |= {EXEC_LO, EXEC_LO + 1}
    for dim, values in enumerate(ids):
        state.vgpr[dim] = Lanes(values.astype(np.int64), live.copy())
    state.lane_ids, state.lane_bits = 0, _lane_bits(g)
    state.names = {index: ("init", index) for index in range(g.entry_sgprs)}
    state.kernarg = g.kernarg_sgpr
    return state
