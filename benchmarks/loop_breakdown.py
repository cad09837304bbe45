"""Where the host's time goes in case.run's launch loop, step by step, on a GPU: each step's
own microseconds per launch over runs of 300 launches of bf16 1024^3 (the second of two runs
after a warm one), beside the time of the kernel's call itself.

    python benchmarks/loop_breakdown.py

Each named method of the loop is wrapped in a timer (which adds a little to each): the steps
nest, so a step's time includes the steps it calls. A benchmark, not a test.
"""

import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import torch
import pytest_gemmcheck as gc
from pytest_gemmcheck.case import runner, guards, launch_records
from pytest_gemmcheck.checking import consensus

spent = defaultdict(float)
calls = defaultdict(int)
def wrap(owner, name, label=None):
    label = label or name
    orig = getattr(owner, name)
    if isinstance(owner, type) and isinstance(owner.__dict__.get(name), classmethod):
        raw = owner.__dict__[name].__func__
        orig = lambda *a, **k: raw(owner, *a, **k)
    def wrapped(*a, **k):
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            spent[label] += time.perf_counter() - t
            calls[label] += 1
    setattr(owner, name, staticmethod(wrapped) if isinstance(owner, type) and isinstance(owner.__dict__.get(name), classmethod) else wrapped)
for name in ("_launch_batch", "_read_until", "_read", "_clean_repeat", "_wait_until", "_batch_work", "_close_batch", "_batch_begins", "_launch_once", "_drain"):
    wrap(runner.LaunchLoop, name)
wrap(runner, "replay")
wrap(runner.LaunchRecord, "numbered")
wrap(guards, "layout")
wrap(runner.launch_records, "fill_accuracy")
wrap(consensus.Consensus, "observe_checksum")
wrap(runner.in_flight.LaunchTimer, "seconds")

if not torch.cuda.is_available():
    print("no GPU: nothing to measure")
    sys.exit(0)
size = 1024
with gc.session(db=None) as s:
    case = s.case("probe", m=size, n=size, k=size, quant="bf16")
    x = case.inputs()
    bt = x.b.t()
    user = [0.0]
    def kern(out):
        t = time.perf_counter()
        torch.matmul(x.a, bt, out=out)
        user[0] += time.perf_counter() - t
    case.run(kern, repeat=300)
    for r in range(2):
        spent.clear(); calls.clear(); user[0] = 0
        t = time.perf_counter()
        case.run(kern, repeat=300)
        torch.cuda.synchronize()
        total = time.perf_counter() - t
        print(f"run {r}: {total * 1e6 / 300:.1f} us per launch; the kernel's call {user[0] * 1e6 / 300:.1f}")
        for label in sorted(spent, key=spent.get, reverse=True):
            print(f"   {label:<20} {spent[label] * 1e6 / 300:8.1f} us per launch  ({calls[label]} calls)")
