"""Where the host's time goes in case.run's launch loop, step by step, on a GPU: each step's
own microseconds per launch over runs of 300 launches of bf16 1024^3 (the second of two runs
after a warm one), beside the time of the kernel's call itself; then what each run pays once
(the steps before its first launch and after its last), in microseconds per run, over 5 runs
of 100 launches at bf16 1024^3 and at ptpc 16384x7168x2048.

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
def wrap(owner, name, label=None, spent=spent, calls=calls):
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

# once per run: the loop's making, its start and end, the judging and the record
from pytest_gemmcheck.case import case as case_module, in_flight, reference
from pytest_gemmcheck.case.guards import InputGuard, LaunchWatch
from pytest_gemmcheck.environment import contention
ONCE = [(runner.LaunchLoop, "__init__", "LaunchLoop()"), (case_module.Case, "judged_reference", None),
        (InputGuard, "__init__", "InputGuard()"), (LaunchWatch, "__init__", "LaunchWatch()"),
        (in_flight, "pipeline_for", None), (in_flight, "ring_for", None), (runner, "select_checker", None),
        (runner.contention, "start", "contention.start"), (contention.Watch, "finish", "contention finish"),
        (runner.LaunchLoop, "_prove_reference", None),
        (runner.LaunchLoop, "_fill_consistency", None), (case_module.Case, "_conclude", None),
        (case_module.Case, "_new_result", None), (reference.ProtectedReference, "intact", None)]
once_spent = defaultdict(float)
once_calls = defaultdict(int)
for owner, name, label in ONCE:
    wrap(owner, name, label, once_spent, once_calls)
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

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "gpu"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from overhead_shapes import kernel_for
    for quant, m, n, k in (("bf16", 1024, 1024, 1024), ("ptpc", 16384, 7168, 2048)):
        extra = {"fp8": __import__("torch_gemms").fp8_flavour()} if quant != "bf16" else {}
        case = s.case(f"once_{quant}", m=m, n=n, k=k, quant=quant, **extra)
        launch = kernel_for(quant, case.inputs())
        first = [0.0]
        def stamped(out):
            if not first[0]:
                first[0] = time.perf_counter()
            return launch(out)
        for _ in range(2):
            case.run(launch, repeat=100)
        once_spent.clear(); once_calls.clear()
        before = 0.0
        for _ in range(5):
            first[0] = 0.0
            torch.cuda.synchronize()
            t = time.perf_counter()
            case.run(stamped, repeat=100)
            before += first[0] - t
        print(f"{quant} {m}x{n}x{k}, 5 runs of 100: {before * 1e6 / 5:.0f} us a run before its first launch's call")
        for label in sorted(once_spent, key=once_spent.get, reverse=True):
            print(f"   {label:<20} {once_spent[label] * 1e6 / 5:8.1f} us per run  ({once_calls[label] / 5:g} calls)")
