"""Which registers can still matter at each instruction: backward liveness over the CFG, restricted
to what decides LDS addresses and control flow.

A register is *relevant* at a point when some path from there reads it, before writing it, to
compute an LDS address (a DS instruction's address, M0), exec, or a branch condition, directly or
through the registers computed from it. Global addresses, loaded data and floating point are not
relevant: the lint does not need them. The dataflow engine forgets irrelevant registers at every
rendezvous, so states that differ only in values that cannot change what the lint checks are one
state. Forgetting a value makes it unknown, so an error here can only cost precision (an access
left unchecked), never a missed hazard.
Registers are numbered into one bit set: SGPR ``i`` is bit ``i``, VGPR ``i`` is ``256 + i``, AGPR
``i`` is ``768 + i``, SCC is :data:`SCC`. exec and M0 are taken as always live; vcc is live where
a branch on it (which reads it implicitly) or an instruction naming it needs it.
"""

from __future__ import annotations

from .asm import Instruction, Kernel
from .operands import EXEC_LO, M0, VCC_LO, Reg, decode

SCC = 1100
_BASE = {"s": 0, "v": 256, "a": 768}
_ALWAYS = (1 << EXEC_LO) | (1 << (EXEC_LO + 1)) | (1 << M0)
_VCC = (1 << VCC_LO) | (1 << (VCC_LO + 1))
_NO_DEST = (
    "s_waitcnt",
    "s_barrier",
    "s_nop",
    "s_cmp",
    "s_bitcmp",
    "s_cbranch",
    "s_branch",
    "s_endpgm",
    "s_setprio",
    "s_sched",
    "s_sendmsg",
    "s_sleep",
    "s_dcache",
    "s_icache",
    "s_trap",
    "s_setreg",
    "s_store",
    "s_buffer_store",
    "buffer_store",
    "global_store",
    "flat_store",
    "scratch_store",
    "ds_write",
    "ds_store",
    "buffer_wbl2",
    "buffer_inv",
    "exp",
)
# VALU instructions that read vcc without naming it (the rest name it as an operand)
_IMPLICIT_VCC = ("v_div_fmas",)
# modifiers with which a VALU write leaves some lanes (DPP's row and bank masks, a shift from outside
# the row without bound_ctrl) or bits (SDWA's preserved ones) of its destination as they were
KEEPING_MODIFIERS = ("row_", "quad_perm", "wave_", "bank_mask", "dst_unused:UNUSED_PRESERVE")
_READS_SCC = ("s_cbranch_scc", "s_cselect", "s_cmov", "s_addc", "s_subb")


def _bits(text: str) -> int:
    op = decode(text)
    if not isinstance(op, Reg):
        return 0
    first = _BASE[op.kind] + op.index
    return ((1 << op.count) - 1) << first


def _ds_address(inst: Instruction) -> int:
    """The address operand of a DS instruction (what it reads to find its LDS bytes)."""
    ops = inst.operands
    name = inst.mnemonic
    if not ops:
        return 0
    if name.startswith(("ds_write", "ds_store")):
        return _bits(ops[0])
    if name.startswith(("ds_read", "ds_load")):
        return _bits(ops[1]) if len(ops) > 1 else _bits(ops[0])
    return _bits(ops[1]) if "_rtn" in name and len(ops) > 1 else _bits(ops[0])


def uses_and_defs(inst: Instruction) -> tuple[int, int, int]:
    """(registers read, registers written, registers read for an LDS address or a branch) of one
    instruction, as bit sets. What an instruction reads becomes relevant where what it writes is."""
    name = inst.mnemonic
    ops = inst.operands
    seeds = _ds_address(inst) if name.startswith("ds_") else 0
    if name.startswith(_NO_DEST) or (name.startswith("buffer_load") and "lds" in inst.modifiers) or not ops:
        uses, defs = 0, 0
        for op in ops:
            uses |= _bits(op)
        if not name.startswith(("s_cmp", "s_bitcmp")):
            uses = seeds  # stores, DMA loads, DS writes: only their LDS address matters here
    else:
        defs = _bits(ops[0])
        uses = 0
        for op in ops[1:]:
            uses |= _bits(op)
        if (
            name.startswith(("s_addk", "s_mulk", "s_bitset", "s_cmov", "v_writelane", "v_mac", "v_fmac"))
            or "_mfma" in name
            or any(m.startswith(KEEPING_MODIFIERS) for m in inst.modifiers)
        ):
            uses |= defs  # read-modify-write, or lanes and bits a DPP or SDWA write leaves as they were
        if name.startswith("v_") and ("_co_" in name or "div_scale" in name or "mad_u64" in name) and len(ops) > 1:
            defs |= _bits(ops[1])
    if name.startswith(_READS_SCC):
        uses |= 1 << SCC
        if name.startswith("s_cbranch"):
            seeds |= 1 << SCC
    if name.startswith(("s_cbranch_vccz", "s_cbranch_vccnz")):
        seeds |= _VCC  # vcc is read implicitly; elsewhere it is an operand of its own
        uses |= _VCC
    elif name.startswith(_IMPLICIT_VCC):
        uses |= _VCC
    if name.startswith(("s_cmp", "s_bitcmp")) or (
        name.startswith("s_")
        and not name.startswith(
            ("s_mov", "s_cselect", "s_cmov", "s_load", "s_waitcnt", "s_barrier", "s_nop", "s_cbranch", "s_branch")
        )
    ):
        defs |= 1 << SCC
    return uses, defs, seeds


def live_in(kernel: Kernel) -> list[int]:
    """For each instruction, the registers that may be read at or after it before being written."""
    code = kernel.instructions
    n = len(code)
    successors: list[tuple[int, ...]] = []
    for i, inst in enumerate(code):
        name = inst.mnemonic
        target = (
            kernel.labels.get(inst.operands[0])
            if inst.operands and name.startswith(("s_branch", "s_cbranch"))
            else None
        )
        if name == "s_endpgm" or name.startswith(("s_setpc", "s_swappc")):
            successors.append(())
        elif name == "s_branch":
            successors.append((target,) if target is not None else ())
        elif name.startswith("s_cbranch") and target is not None:
            successors.append((target, i + 1))
        else:
            successors.append((i + 1,))
    facts = [uses_and_defs(inst) for inst in code]
    live = [0] * (n + 1)
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            out = 0
            for s in successors[i]:
                if s < n:
                    out |= live[s]
            uses, defs, seeds = facts[i]
            # an instruction whose result matters makes what it reads matter (faint variables)
            value = seeds | (uses if defs & out or not defs else 0) | (out & ~defs) | _ALWAYS
            if value != live[i]:
                live[i] = value
                changed = True
    return live[:n]


def is_live(live: int, kind: str, index: int) -> bool:
    return bool((live >> (_BASE[kind] + index)) & 1)


def scc_live(live: int) -> bool:
    return bool((live >> SCC) & 1)
