"""What an instruction is to the ordering model: its class (wait, barrier, DMA load, DS access,
other memory operation), the bytes a DMA load or DS access moves per lane, and the counters a
wait waits down to. Both engines and the mutation tests read instructions through these."""

from __future__ import annotations

import functools
import re

from .asm import Instruction

_DS_SIZE = re.compile(r"_(b|u|i)(8|16|32|64|96|128)")
_DMA_SIZES = {"ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "dword": 4, "dwordx3": 12, "dwordx4": 16}
_SMEM_PREFIXES = (
    "s_load",
    "s_buffer_load",
    "s_store",
    "s_buffer_store",
    "s_dcache",
    "s_memtime",
    "s_memrealtime",
    "s_scratch",
    "s_atc_probe",
    "s_sendmsg",
    "s_atomic",
    "s_buffer_atomic",
)
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
    return {
        name: value
        for name, value, top in (("vmcnt", vm, 0x3F), ("expcnt", exp, 0x7), ("lgkmcnt", lgkm, 0xF))
        if value < top
    }


def parse_waitcnt(inst: Instruction) -> tuple[int | None, int | None]:
    """(vmcnt, lgkmcnt) of a wait; None for a counter it does not wait on."""
    name = inst.mnemonic
    if name == "s_waitcnt_vmcnt" and len(inst.operands) > 1:
        return int(inst.operands[1], 0), None
    if name == "s_waitcnt_lgkmcnt" and len(inst.operands) > 1:
        return None, int(inst.operands[1], 0)
    fields = waitcnt_fields(inst.operands[0] if inst.operands else "") or {}
    return fields.get("vmcnt"), fields.get("lgkmcnt")


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
