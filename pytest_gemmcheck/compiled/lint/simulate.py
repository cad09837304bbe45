"""Run one wave of a kernel through its control flow and record its memory and sync events.

Each wave of the workgroup is simulated on its own with its own thread ids, so wave-dependent
branches (an extra ``s_barrier`` for one group of waves, say) take the path that wave takes.
Branches on values the model cannot know (kernel arguments) are decided by a shared
:class:`BranchChoices`, the same way for every wave, since such values are uniform across a
workgroup. Loops run for real when their trip count is known and are bounded otherwise.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field

import numpy as np

from .asm import Instruction, Kernel
from .machine import Lanes, WaveState
from .operands import EXEC_LO, M0, VCC_LO

Ranges = tuple[tuple[int, int], ...]  # merged, sorted half-open LDS byte ranges


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


@dataclass(frozen=True)
class Event:
    """A memory or synchronisation event in one wave's program order."""

    kind: str  # vmem, dma, smem, ds_read, ds_write, ds_other, wait, barrier
    pos: int  # index in the wave's event list
    inst: Instruction
    occurrence: int  # how many times this wave executed the instruction before
    ranges: Ranges | None = None  # LDS bytes for dma/ds_*; None when the address is unknown
    vmcnt: int | None = None  # for waits: the counts waited down to (None: not waited on)
    lgkmcnt: int | None = None


@dataclass
class WaveTrace:
    wave: int
    events: list[Event] = field(default_factory=list)
    end: str = "endpgm"  # endpgm, truncated, fell-off, indirect-branch
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    loop_unroll: int = 3  # iterations of a loop whose trip count is unknown
    max_visits: int = 4096  # executions of one instruction before the trace is cut
    max_steps: int = 2_000_000
    deadline: float = float("inf")  # time.monotonic() past which a trace is cut


class BranchChoices:
    """Decisions for branches whose condition is unknown, shared by all waves of a scenario."""

    def __init__(self, forced: dict[tuple[int, int], bool] | None = None, *, loop_unroll: int = 3):
        self.forced = dict(forced or {})
        self.loop_unroll = loop_unroll
        self.seen: dict[tuple[int, int], bool] = {}
        self.where: dict[tuple[int, int], Instruction] = {}

    def decide(self, inst: Instruction, occurrence: int, backward: bool) -> bool:
        key = (inst.index, occurrence)
        if key in self.forced:
            taken = self.forced[key]
        else:
            # a back edge keeps looping up to the unroll bound; a forward branch falls through
            taken = backward and occurrence < self.loop_unroll
        self.seen.setdefault(key, taken)
        self.where.setdefault(key, inst)
        return taken


_DS_SIZE = re.compile(r"_(b|u|i)(8|16|32|64|96|128)")
_DMA_SIZES = {"ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "dword": 4, "dwordx3": 12, "dwordx4": 16}
_SMEM_PREFIXES = ("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_dcache", "s_memtime", "s_memrealtime", "s_scratch", "s_atc_probe", "s_sendmsg", "s_atomic", "s_buffer_atomic")
VMEM_PREFIXES = ("buffer_", "global_", "flat_", "scratch_", "tbuffer_", "image_")


def is_dma(inst: Instruction) -> bool:
    """A global->LDS DMA load: ``buffer_load_* ... lds`` or ``global_load_lds_*``."""
    name = inst.mnemonic
    return (name.startswith("buffer_load") and "lds" in inst.modifiers) or name.startswith("global_load_lds")


def dma_size(inst: Instruction) -> int:
    suffix = inst.mnemonic.rsplit("_", 1)[-1]
    return _DMA_SIZES.get(suffix, 4)


def ds_access(inst: Instruction) -> tuple[str, int, int] | None:
    """(kind, bytes per address, number of addresses per lane) of a DS instruction, or None."""
    name = inst.mnemonic
    if not name.startswith("ds_"):
        return None
    if name.startswith(("ds_bpermute", "ds_permute", "ds_swizzle", "ds_nop", "ds_gws", "ds_consume", "ds_append")):
        return ("ds_other", 0, 0)
    reading = name.startswith(("ds_read", "ds_load"))
    writing = name.startswith(("ds_write", "ds_store"))
    if "_tr_" in name or name.endswith(("_tr_b4", "_tr_b8", "_tr_b16", "_tr_b6")):
        size = 12 if "b96" in name else 8
        return ("ds_read", size, 1)
    m = _DS_SIZE.search(name[3:])
    size = int(m.group(2)) // 8 if m else 4
    count = 2 if ("read2" in name or "write2" in name or "load_2addr" in name or "store_2addr" in name) else 1
    if reading:
        return ("ds_read", size, count)
    if writing:
        return ("ds_write", size, count)
    return ("ds_write", size, 1)  # atomics read and write; only their write matters here


_WAIT_FIELD = re.compile(r"(vmcnt|expcnt|lgkmcnt)\((\d+)\)")


def waitcnt_fields(text: str) -> dict[str, int] | None:
    """The counters an ``s_waitcnt``'s operand text waits on, by name (vmcnt, expcnt, lgkmcnt):
    written out, or a raw gfx9 immediate, where a field at its maximum waits for nothing; None
    for text that is neither."""
    fields = {name: int(value) for name, value in _WAIT_FIELD.findall(text)}
    if fields or not text:
        return fields
    try:
        raw = int(text, 0)
    except ValueError:
        return None
    # gfx9 encoding: vmcnt in [3:0] and [15:14], expcnt in [6:4], lgkmcnt in [11:8]
    vm, exp, lgkm = (raw & 0xF) | ((raw >> 14) & 0x3) << 4, (raw >> 4) & 0x7, (raw >> 8) & 0xF
    return {name: value for name, value, top in (("vmcnt", vm, 0x3F), ("expcnt", exp, 0x7), ("lgkmcnt", lgkm, 0xF))
            if value < top}


def parse_waitcnt(inst: Instruction) -> tuple[int | None, int | None]:
    """(vmcnt, lgkmcnt) of a wait; None for a counter it does not wait on."""
    name = inst.mnemonic
    if name == "s_waitcnt_vmcnt" and len(inst.operands) > 1:
        return int(inst.operands[1], 0), None
    if name == "s_waitcnt_lgkmcnt" and len(inst.operands) > 1:
        return None, int(inst.operands[1], 0)
    fields = waitcnt_fields(inst.operands[0] if inst.operands else "") or {}
    return fields.get("vmcnt"), fields.get("lgkmcnt")


def _merge(starts: np.ndarray, length: int | np.ndarray) -> Ranges:
    if len(starts) == 0:
        return ()
    order = np.argsort(starts, kind="stable")
    first = starts[order]
    last = np.broadcast_to(starts + length, starts.shape)[order]
    reach = np.maximum.accumulate(last)
    # a range starts where a start lies past every end before it (touching ranges join)
    begins = np.flatnonzero(np.concatenate(([True], first[1:] > reach[:-1])))
    return tuple(zip(first[begins].tolist(), np.maximum.reduceat(last, begins).tolist()))


def merge_ranges(ranges: list[tuple[int, int]]) -> Ranges:
    if not ranges:
        return ()
    starts = np.array([r[0] for r in ranges], dtype=np.int64)
    ends = np.array([r[1] for r in ranges], dtype=np.int64)
    return _merge(starts, ends - starts)


def overlap(a: Ranges, b: Ranges) -> Ranges:
    """The bytes two range sets share."""
    if not a or not b or a[-1][1] <= b[0][0] or b[-1][1] <= a[0][0]:
        return ()
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _offset(inst: Instruction, name: str = "offset") -> int:
    value = inst.modifier(name)
    return int(value, 0) if value else 0


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


class WaveSimulator:
    """Simulates one wave and produces its :class:`WaveTrace`."""

    def __init__(self, kernel: Kernel, geometry: Geometry, wave: int, choices: BranchChoices, limits: Limits):
        self.kernel = kernel
        self.geometry = geometry
        self.wave = wave
        self.choices = choices
        self.limits = limits
        self.state = initial_state(geometry, wave)
        self.trace = WaveTrace(wave)

    def _event(self, kind: str, inst: Instruction, occurrence: int, **extra) -> None:
        self.trace.events.append(Event(kind, len(self.trace.events), inst, occurrence, **extra))

    def run(self) -> WaveTrace:
        instructions = self.kernel.instructions
        visits = [0] * len(instructions)
        pc, steps = 0, 0
        while True:
            if pc >= len(instructions):
                self.trace.end = "fell-off"
                self.trace.notes.append(f"wave {self.wave}: ran past the kernel's last instruction without s_endpgm")
                break
            inst = instructions[pc]
            occurrence = visits[pc]
            visits[pc] += 1
            steps += 1
            if steps % 4096 == 0 and time.monotonic() > self.limits.deadline:
                self.trace.end = "truncated"
                self.trace.notes.append(f"wave {self.wave}: stopped at line {inst.line} by the time limit; later events are not checked")
                break
            if occurrence >= self.limits.max_visits or steps > self.limits.max_steps:
                self.trace.end = "truncated"
                self.trace.notes.append(
                    f"wave {self.wave}: stopped at line {inst.line} after {occurrence} visits; later events are not checked"
                )
                break
            next_pc = self._step(inst, occurrence)
            if next_pc is None:
                break
            pc = next_pc
        return self.trace

    def _step(self, inst: Instruction, occurrence: int) -> int | None:
        """Execute one instruction; return the next pc, or None when the wave ends."""
        name = inst.mnemonic
        if name == "s_endpgm":
            self.trace.end = "endpgm"
            return None
        if name == "s_branch":
            return self._target(inst)
        if name.startswith("s_cbranch"):
            return self._conditional(inst, occurrence)
        if name.startswith(("s_setpc", "s_swappc")):
            self.trace.end = "indirect-branch"
            self.trace.notes.append(f"wave {self.wave}: indirect branch at line {inst.line} is not followed")
            return None
        self._record(inst, occurrence)
        self.state.execute(inst)
        return inst.index + 1

    def _target(self, inst: Instruction) -> int | None:
        label = inst.operands[0] if inst.operands else ""
        if label not in self.kernel.labels:
            self.trace.end = "indirect-branch"
            self.trace.notes.append(f"wave {self.wave}: branch target {label!r} at line {inst.line} is not in the kernel")
            return None
        return self.kernel.labels[label]

    def _conditional(self, inst: Instruction, occurrence: int) -> int | None:
        condition = inst.mnemonic[len("s_cbranch_") :]
        state = self.state
        taken: bool | None
        if condition in ("scc0", "scc1"):
            taken = None if state.scc is None else state.scc == (condition == "scc1")
        elif condition in ("vccz", "vccnz"):
            vcc = state.sgpr64(VCC_LO)
            taken = None if vcc is None else (vcc == 0) == (condition == "vccz")
        elif condition in ("execz", "execnz"):
            exec_mask = state.exec_mask
            # unknown exec: the region may run for some lanes, so it is entered (execz not
            # taken) and a divergent loop back edge (execnz) is left after one pass
            taken = False if exec_mask is None else (exec_mask == 0) == (condition == "execz")
        else:
            taken = None
        target = self._target(inst)
        if target is None:
            return None
        if taken is None:
            taken = self.choices.decide(inst, occurrence, backward=target <= inst.index)
        return target if taken else inst.index + 1

    def _record(self, inst: Instruction, occurrence: int) -> None:
        kind = classify(inst)
        if kind == "wait":
            vm, lgkm = parse_waitcnt(inst)
            self._event("wait", inst, occurrence, vmcnt=vm, lgkmcnt=lgkm)
        elif kind == "dma":
            self._event("dma", inst, occurrence, ranges=dma_ranges(self.state, inst))
        elif kind in ("ds_read", "ds_write"):
            self._event(kind, inst, occurrence, ranges=ds_ranges(self.state, inst))
        elif kind == "ds_other":
            self._event(kind, inst, occurrence, ranges=())
        elif kind is not None:
            self._event(kind, inst, occurrence)


@functools.lru_cache(maxsize=1 << 16)
def classify(inst: Instruction) -> str | None:
    """What an instruction is to the ordering model: wait, barrier, dma, vmem, smem, ds_read,
    ds_write, ds_other, or None for everything else."""
    name = inst.mnemonic
    if name in ("s_waitcnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt"):
        return "wait"
    if name in ("s_barrier", "s_barrier_wait"):
        return "barrier"
    if is_dma(inst):
        return "dma"
    if name.startswith(VMEM_PREFIXES):
        return "vmem"
    if name.startswith(_SMEM_PREFIXES):
        return "smem"
    access = ds_access(inst)
    return access[0] if access is not None else None


def dma_ranges(state: WaveState, inst: Instruction) -> Ranges | None:
    """The LDS bytes a DMA load writes in the active lanes; None when M0 is not known."""
    m0 = state.sgpr_value(M0)
    if m0 is None:
        return None
    size = dma_size(inst)
    stride = 4 if size <= 4 else 16
    lanes = np.nonzero(state.active())[0].astype(np.int64)
    # the instruction offset moves the LDS destination as well as the source
    starts = m0 + _offset(inst) + lanes * stride
    return _merge(starts, size)


def ds_ranges(state: WaveState, inst: Instruction) -> Ranges | None:
    """The LDS bytes a DS instruction accesses in the active lanes; None when the address is not known."""
    _, size, count = ds_access(inst)
    if not inst.operands:
        return None
    address_operand = inst.operands[0] if inst.mnemonic.startswith(("ds_write", "ds_store")) else (
        inst.operands[1] if len(inst.operands) > 1 else inst.operands[0]
    )
    if not inst.mnemonic.startswith(("ds_read", "ds_load", "ds_write", "ds_store")):
        # atomics: "ds_add_u32 vaddr, vdata" or "ds_add_rtn_u32 vdst, vaddr, vdata"
        address_operand = inst.operands[1] if "_rtn" in inst.mnemonic else inst.operands[0]
    address = state.read(address_operand).broadcast(state.width)
    active = state.active()
    if not address.known[active].all():
        return None
    base = address.values[active]
    if count == 2:
        unit = size * (64 if "st64" in inst.mnemonic else 1)
        offsets = [_offset(inst, "offset0") * unit, _offset(inst, "offset1") * unit]
    else:
        offsets = [_offset(inst)]
    key = (inst, base.tobytes())
    ranges = _DS_RANGES.get(key)
    if ranges is None:
        starts = np.concatenate([base + off for off in offsets]) if len(base) else np.array([], dtype=np.int64)
        ranges = _merge(starts, size)
        if len(_DS_RANGES) >= _DS_RANGES_KEPT:
            _DS_RANGES.clear()
        _DS_RANGES[key] = ranges
    return ranges


# a wave reaches one access with the same addresses in every state of a loop and under every
# decision: the sorted, merged bytes are worked out once
_DS_RANGES: dict[tuple, Ranges] = {}
_DS_RANGES_KEPT = 1 << 16


def simulate(kernel: Kernel, geometry: Geometry, choices: BranchChoices, limits: Limits) -> list[WaveTrace]:
    """Traces of every wave of one workgroup under one set of branch choices."""
    return [WaveSimulator(kernel, geometry, wave, choices, limits).run() for wave in range(geometry.waves)]
