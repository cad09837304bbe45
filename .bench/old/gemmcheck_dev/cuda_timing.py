"""GPU time of queued work by CUDA events, for the benchmarks (benchmarks.check_speed, benchmarks.launch_cost)."""

from __future__ import annotations

import torch


def device_seconds(fn, repeat: int) -> float:
    """GPU seconds per call of ``fn``: ``repeat`` calls back to back between two CUDA events,
    after a warm-up call (which compiles). Where the host cannot queue work as fast as the GPU
    runs it, the host's time shows here too."""
    fn()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(repeat):
        fn()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) / 1e3 / repeat
