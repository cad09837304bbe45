"""Facts of a reference that every launch checked against it shares: the sum of its squares,
and whether ``rowmax`` bounds each of its rows. Worked out once per reference, by one read of
it, and kept (in ``RUNTIME.reference_facts``) for the checks that follow.
"""

from __future__ import annotations

import weakref

import torch
import triton

from .kernels import INTERPRETED, _facts_kernel
from .launch import diagnose, launch
from .runtime import RUNTIME
from .target import PROGRAM_WARPS, target_of

_FACTS_KEPT = 4  # references whose facts are kept, the oldest dropped first


def reference_facts(ref: torch.Tensor, rowmax: torch.Tensor, floor: float) -> torch.Tensor:
    """float64 [ref_sq, outside] on ref's device, queued and not waited for (_facts_kernel reads
    ref once): the sum of squared references in float64 as torch_backend.check_launch adds it (exact
    squares; the order of the additions differs), and with ``floor >= 1`` the rows with a
    |ref| beyond ``floor * rowmax`` (NaN included), for which per-row thresholds do not hold.
    Both depend on the reference alone, so they are worked out once for all the launches
    checked against it rather than in every check's pass; a reference changed in place (its
    version moves on) gets them again."""
    key = (
        ref.data_ptr(),
        tuple(ref.shape),
        tuple(ref.stride()),
        ref.dtype,
        ref._version,
        rowmax.data_ptr(),
        rowmax._version,
        float(floor),
    )
    for ref_seen, rowmax_seen, seen_key, facts in RUNTIME.reference_facts:
        if ref_seen() is ref and rowmax_seen() is rowmax and seen_key == key:
            return facts
    m, n = ref.shape
    row_sq = RUNTIME.allocate(m, torch.float64, ref.device)
    outside = RUNTIME.allocate(m, torch.int32, ref.device)
    target = target_of(ref.device)
    if target.interpreted:
        block_m, block_n, programs = (
            min(64, triton.next_power_of_2(m)),
            min(1024, max(16, triton.next_power_of_2(n))),
            1,
        )
    else:
        block_m, block_n = 16, 256
        programs = max(1, min(-(-m // block_m), 4 * target.multiprocessors))
    launch(
        _facts_kernel,
        programs,
        (ref, rowmax, row_sq, outside, m, n, *ref.stride(), float(floor)),
        dict(BLOCK_M=block_m, BLOCK_N=block_n),
        PROGRAM_WARPS,
        interpreted=INTERPRETED,
    )
    diagnose("_facts_kernel", interpreted=INTERPRETED)
    outside_rows = outside.sum() if floor >= 1.0 else outside.new_zeros(())
    facts = torch.stack([row_sq.sum(), outside_rows.to(torch.float64)])
    RUNTIME.reference_facts.insert(0, (weakref.ref(ref), weakref.ref(rowmax), key, facts))
    del RUNTIME.reference_facts[_FACTS_KEPT:]
    return facts
