"""One wave's register state with the integer semantics of the SALU/VALU instructions.

Addresses of LDS accesses come out of this model, so it implements the integer and bitwise
operations compilers use for address arithmetic (:mod:`.scalar_semantics`,
:mod:`.vector_semantics`) and leaves the rest unknown; beside the values, which of them may differ
between waves (:mod:`.uniformity`).
"""

from __future__ import annotations

from .asm import Instruction
from .opcodes import DATA_PREFIXES, INTEGER_RESULT, KEEPS_SCC_PREFIXES, NO_DEST_PREFIXES
from .operands import EXEC_LO, VCC_LO
from .registers import RegisterFile
from .scalar_semantics import execute_scalar
from .uniformity import mark_scalar, track_uniformity, varies
from .value_names import assign, gather
from .vector_semantics import execute_vector


class WaveState(RegisterFile):
    """Registers, exec mask and SCC of one wave, with the instruction semantics."""

    def execute(self, inst: Instruction) -> bool:
        """Apply an instruction's effect on registers. False when it is not modelled: it then
        makes the registers it writes unknown, and an integer result the model should know is lost."""
        name = inst.base
        ops = inst.operands
        restores = name.startswith("s_") and name.endswith("_b64") and ops and ops[0] == "exec"
        sources = [self.mask64(op) for op in ops[1:] if not varies(self, op)] if restores else []
        named = gather(self, inst)
        track_uniformity(self, inst)
        if name.startswith("s_") and execute_scalar(self, name[2:], ops, inst.index):
            modelled = True
        elif name.startswith("v_") and execute_vector(self, name[2:], inst):
            modelled = True
        else:
            modelled = self._clobber_destinations(inst)
        if sources:
            # an exec equal to a uniform source whatever the unknowns are (given back after an if:
            # (saved & Y) | saved is saved) is that source's value, in every wave that finds it so
            # (exec is no part of the uniform key: waves that do not find it so still share
            # decisions with those that do)
            mask = self.mask64("exec")
            if mask is not None and mask in sources:
                mark_scalar(self, "exec", False)
        if name.startswith(("s_cmp", "s_bitcmp")) or (
            name.startswith("s_") and not name.startswith(KEEPS_SCC_PREFIXES)
        ):
            self.scc_name = None
        assign(self, inst, named, self.kernarg)
        return modelled

    def _clobber_destinations(self, inst: Instruction) -> bool:
        """What an unmodelled instruction writes becomes unknown; False where it computes an integer
        the model should know (an address may depend on it), True where its results are data the
        model does not track by design."""
        name = inst.mnemonic
        if name.startswith(NO_DEST_PREFIXES) or "lds" in inst.modifiers:
            return True
        modelled = name.startswith(DATA_PREFIXES) or not (
            name.startswith("s_") or INTEGER_RESULT.search(inst.base) is not None
        )
        if name.startswith("v_cmpx"):
            self.write_sgpr64(EXEC_LO, None)
        elif name.startswith("v_cmp") and name.endswith("_e32"):
            self.write_sgpr64(VCC_LO, None)
            return True
        if inst.operands:
            self.clobber(inst.operands[0])
        if ("_co_" in name or "div_scale" in name or "mad_u64" in name or "mad_i64" in name) and len(inst.operands) > 1:
            self.clobber(inst.operands[1])
        if ("_co_" in name or "addc" in name or "subb" in name) and name.endswith("_e32"):
            self.write_sgpr64(VCC_LO, None)
        if name.startswith("s_"):
            self.scc = None
        return modelled
