"""What the lint needs to know of each target: counter widths and which LDS DMA loads exist.

gfx9 (gfx90a, gfx940-942 = MI200/MI300, gfx950 = MI350) encodes ``s_waitcnt`` with a 6-bit vmcnt
(0-63) and a 4-bit lgkmcnt (0-15). Global->LDS DMA loads move 1, 2 or 4 bytes per lane up to
gfx942; gfx950 adds the 12- and 16-byte forms (``buffer_load_dwordx3/x4 ... lds``,
``global_load_lds_dwordx3/x4``). Other families (gfx10+) have other counters and are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

_GFX9_DMA = frozenset({1, 2, 4})


@dataclass(frozen=True)
class Target:
    name: str
    vm_limit: int = 63
    lgkm_limit: int = 15
    dma_sizes: frozenset[int] = _GFX9_DMA
    modelled: bool = True  # False: a family whose counters the lint does not know

    def wait_problem(self, vmcnt: int | None, lgkmcnt: int | None) -> str:
        """Why a wait cannot be taken at its word on this target ('' when it can)."""
        for counter, value, limit in (("vmcnt", vmcnt, self.vm_limit), ("lgkmcnt", lgkmcnt, self.lgkm_limit)):
            if value is not None and value > limit:
                return (
                    f"{counter}({value}) does not fit {self.name}'s {counter} (at most {limit}): the assembler "
                    "rejects it, and the lint does not guess what it would wait for"
                )
        return ""

    def dma_problem(self, size: int, mnemonic: str) -> str:
        """Why a DMA load is not one of this target's ('' when it is)."""
        if size in self.dma_sizes:
            return ""
        return (
            f"{mnemonic} ... lds moves {size} bytes per lane, which {self.name} cannot (it has "
            f"{', '.join(str(s) for s in sorted(self.dma_sizes))}): what it writes was not checked"
        )


TARGETS = {
    "gfx90a": Target("gfx90a"),
    "gfx940": Target("gfx940"),
    "gfx941": Target("gfx941"),
    "gfx942": Target("gfx942"),
    "gfx950": Target("gfx950", dma_sizes=frozenset({1, 2, 4, 12, 16})),
}


def target_of(arch: str) -> Target:
    """The target for an arch name (``gfx942``, ``gfx950``, ...); an unknown one is unmodelled."""
    if arch in TARGETS:
        return TARGETS[arch]
    if arch.startswith("gfx9"):
        return Target(arch)
    return Target(arch or "an unnamed target", dma_sizes=frozenset({1, 2, 4, 12, 16}), modelled=False)
