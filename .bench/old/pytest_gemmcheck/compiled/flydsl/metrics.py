"""Static metrics of compiled kernels, read from their assembly, and what changed between two sets.

Per kernel: VGPR, AGPR and SGPR counts, VGPR/SGPR spills, LDS bytes, scratch bytes, and counts of
MFMA instructions, global->LDS DMA loads and all instructions. Counts come from the code object
metadata LLVM prints (``amdhsa.kernels``) and fall back to the kernel descriptor directives.
"""

from __future__ import annotations

from ..lint.asm import Kernel, parse
from ..lint.instructions import is_dma

# metric -> what a message calls it
METRIC_NAMES = {
    "vgpr_count": "VGPRs",
    "agpr_count": "AGPRs",
    "sgpr_count": "SGPRs",
    "vgpr_spill_count": "VGPR spills",
    "sgpr_spill_count": "SGPR spills",
    "lds_bytes": "LDS bytes",
    "scratch_bytes": "scratch bytes",
    "mfma_count": "MFMA instructions",
    "lds_dma_count": "global->LDS loads",
    "instruction_count": "instructions",
}
SPILLS = ("vgpr_spill_count", "sgpr_spill_count")


def _metadata_int(kernel: Kernel, key: str, fallback: int | None) -> int | None:
    value = kernel.metadata.get(key)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else fallback


def kernel_metrics(kernel: Kernel) -> dict[str, int | None]:
    d = kernel.descriptor
    return {
        "vgpr_count": _metadata_int(
            kernel, ".vgpr_count", kernel.counts.get("num_vgpr", d.get("amdhsa_next_free_vgpr"))
        ),
        "agpr_count": _metadata_int(kernel, ".agpr_count", kernel.counts.get("num_agpr")),
        "sgpr_count": _metadata_int(kernel, ".sgpr_count", d.get("amdhsa_next_free_sgpr")),
        "vgpr_spill_count": _metadata_int(kernel, ".vgpr_spill_count", None),
        "sgpr_spill_count": _metadata_int(kernel, ".sgpr_spill_count", None),
        "lds_bytes": _metadata_int(kernel, ".group_segment_fixed_size", d.get("amdhsa_group_segment_fixed_size")),
        "scratch_bytes": _metadata_int(
            kernel, ".private_segment_fixed_size", d.get("amdhsa_private_segment_fixed_size")
        ),
        "mfma_count": sum(1 for i in kernel.instructions if i.mnemonic.startswith(("v_mfma", "v_smfmac"))),
        "lds_dma_count": sum(1 for i in kernel.instructions if is_dma(i)),
        "instruction_count": len(kernel.instructions),
    }


def metrics_from_asm(text: str) -> dict[str, dict[str, int | None]]:
    """Metrics of every kernel with code in an assembly text, by kernel name."""
    module = parse(text)
    return {name: kernel_metrics(k) for name, k in module.kernels.items() if k.instructions}


def _is_per_kernel(metrics: dict) -> bool:
    return bool(metrics) and all(isinstance(v, dict) for v in metrics.values())


def compare_metrics(baseline: dict, current: dict) -> list[str]:
    """Describe what changed from ``baseline`` to ``current``; empty when nothing did.

    Both are the metrics of one kernel (``kernel_metrics``) or of several by kernel name
    (``metrics_from_asm``). New spills, spills that grew or went away, and every other metric
    that moved (LDS size included) each get one line.
    """
    if _is_per_kernel(baseline) or _is_per_kernel(current):
        changes: list[str] = []
        for name in sorted(set(baseline) | set(current)):
            if name not in current:
                changes.append(f"{name}: kernel no longer compiled")
            elif name not in baseline:
                changes.append(f"{name}: new kernel")
            else:
                changes.extend(f"{name}: {c}" for c in _compare_one(baseline[name], current[name]))
        return changes
    return _compare_one(baseline, current)


def _compare_one(baseline: dict, current: dict) -> list[str]:
    changes = []
    for key in list(METRIC_NAMES) + sorted((set(baseline) | set(current)) - set(METRIC_NAMES)):
        before, after = baseline.get(key), current.get(key)
        if before == after or (key not in baseline and key not in current):
            continue
        label = METRIC_NAMES.get(key, key)
        if before is None or after is None:
            changes.append(
                f"{label}: {before if before is not None else 'unknown'} -> {after if after is not None else 'unknown'}"
            )
            continue
        delta = after - before
        if key in SPILLS and before == 0:
            changes.append(f"new {label[:-1]}: 0 -> {after}")
        elif key in SPILLS and after == 0:
            changes.append(f"{label} gone: {before} -> 0")
        else:
            changes.append(f"{label}: {before} -> {after} ({delta:+d})")
    return changes
