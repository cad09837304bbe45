"""GPU measurements beside the launch cost, one part per command; benchmarks/gpu_run.sh runs them
all on the GPU machine. Each part prints its table and merges its numbers into one JSON file under
its own key (so a part that fails or times out loses only itself).

    python -m benchmarks.gpu_measure --json results.json PART [--budget-s S] [FILES...]

Parts:

  environment        torch/CUDA/triton/cupy versions, the GPU's identity (gpus.gpu_identity)
  digests            case.inputs() on the GPU has the same Inputs.digest() as on the CPU, for
                     every quant mode and fp8 flavour (the generator must be device-independent)
  stress             each stressor alone and beside back-to-back GEMM launches: its achieved
                     bandwidth (does a Python thread keep the GPU busy despite the GIL?), the
                     launches' slowdown (do they run concurrently with it?), its stop latency,
                     and that no thread outlives the block
  racy-sweep         the cp.async tail GEMM (examples/gpu/racy_gemm.cu): variants x stress x
                     (stages, block_k, K) x slack, bad launches of each; then >= 1000 launches of
                     the fixed twin idle and under each stressor
  junit-summary      outcome of every test in the given JUnit XML files (the example suites idle
                     and under each stressor, run by gpu_run.sh)
  throughput-summary launches per second from the given JSON-lines logs of
                     gemmcheck_dev/launch_rate_cases.py under pytest-xdist -n 1 and -n 2

What a checked launch costs (``--gemmcheck-repeat=100`` against bare launches, and the rest) is
``python -m benchmarks.launch_cost``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from gemmcheck_dev.results import commit, merge_json, print_header

STRESS_KINDS = ("none", "copy", "compute")


# --- shared helpers --------------------------------------------------------------------


def _device():
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: the GPU measurements need one")
    return torch.device("cuda", torch.cuda.current_device())


class Deadline:
    """A part's time budget: long parts stop starting new work when it is spent."""

    def __init__(self, seconds: float | None):
        self.end = None if seconds is None else time.monotonic() + seconds

    @property
    def passed(self) -> bool:
        return self.end is not None and time.monotonic() > self.end


def run_case(
    kernel: str,
    m: int,
    n: int,
    k: int,
    quant: str,
    make_launch,
    *,
    repeat: int,
    stress_kind: str,
    params: dict | None = None,
    tile: str | None = None,
    fp8: str = "e4m3fn",
    caches=None,
) -> dict:
    """One case through the plugin's own case.run, under a background load: what the
    gemmcheck fixture does, without pytest. Returns the numbers of its result."""
    from pytest_gemmcheck.case.cache import LruCache
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.config.table import Settings
    from pytest_gemmcheck.environment import stress
    from pytest_gemmcheck.errors import GemmcheckFailure

    caches = caches or (LruCache(), LruCache())
    results = []
    context = CaseContext(
        Settings(repeat=repeat), inputs_cache=caches[0], reference_cache=caches[1], record=results.append
    )
    case = Case(context, kernel, m=m, n=n, k=k, quant=quant, tile=tile, fp8=fp8, params=params or {})
    x = case.inputs()
    case.reference()  # before the load starts: the load is for the launches
    launch = make_launch(x)
    failure = ""
    start = time.perf_counter()
    with stress.load(stress_kind, case.device) as background:
        try:
            case.run(launch)
        except GemmcheckFailure as exc:  # a regression verdict is data here
            failure = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    elapsed = time.perf_counter() - start
    result = results[-1]
    bad = result.bad_launches
    return {
        "launches": len(result.launches),
        "bad": len(bad),
        "kinds": result.kinds,
        "worst_wrong": result.worst_wrong,
        "worst_nonfinite": max((launch.nonfinite for launch in result.launches), default=0),
        "worst_differing": max((launch.differing or 0 for launch in result.launches), default=0),
        "max_rel_err": max((launch.max_rel_err for launch in result.launches), default=0.0),
        "verdict": result.verdict,
        "failure": failure,
        "seconds": round(elapsed, 3),
        "ms_per_launch": round(1000 * elapsed / max(1, len(result.launches)), 3),
        "stress": background.describe(),
    }


# --- parts ------------------------------------------------------------------------------


def part_environment(args) -> dict:
    import torch

    from pytest_gemmcheck.environment import gpus

    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "gpu_count": torch.cuda.device_count(),
    }
    for name in ("triton", "cupy", "numpy", "pytest", "xdist"):
        try:
            module = __import__(name)
            info[name] = getattr(module, "__version__", "?")
        except ImportError:
            info[name] = None
    info["revision"] = commit()  # GEMMCHECK_COMMIT on a copied tree, whose own git state is not the tree's
    info["gpus"] = [gpus.gpu_identity(index) for index in range(torch.cuda.device_count())]
    for key, value in info.items():
        print(f"{key:>10}: {value}")
    return info


def part_digests(args) -> dict:
    """Inputs.digest() of case.inputs() on the CPU and on the GPU, every mode and flavour."""
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.case.quant import quant_mode, quant_mode_names
    from pytest_gemmcheck.config.table import Settings

    device = _device()
    rows, mismatches = [], 0
    for quant in quant_mode_names():
        flavours = ["e4m3fn", "e4m3fnuz"] if quant_mode(quant).uses_fp8 else ["e4m3fn"]
        for fp8 in flavours:
            for m, n, k in [(257, 130, 384), (1024, 512, 2048)]:
                digests = {}
                for where in ("cpu", device):
                    case = Case(
                        CaseContext(Settings()), "digest", m=m, n=n, k=k, quant=quant, fp8=fp8, device=where, seed=11
                    )
                    digests[str(where)] = case.inputs().digest()
                same = len(set(digests.values())) == 1
                mismatches += not same
                rows.append({"quant": quant, "fp8": fp8, "shape": [m, n, k], "same": same, **digests})
                print(
                    f"{quant:<11}{fp8:<10}{m}x{n}x{k:<6} cpu {digests['cpu']}  {device} {digests[str(device)]}  "
                    f"{'same' if same else 'DIFFERENT'}"
                )
    print(f"digests: {len(rows) - mismatches}/{len(rows)} identical on cpu and {device}")
    return {"cases": rows, "mismatches": mismatches}


def part_stress(args) -> dict:
    """Each stressor alone, then beside back-to-back bf16 GEMM launches."""
    import torch

    from pytest_gemmcheck.environment import stress

    device = _device()
    a = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)
    out = torch.empty_like(a)

    def launches_for(seconds: float) -> tuple[int, float]:
        """Launch, synchronise, repeat: as case.run does. (launches, ms per launch)"""
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            torch.matmul(a, b, out=out)
            torch.cuda.synchronize(device)
            count += 1
        return count, 1000 * (time.perf_counter() - start) / count

    launches_for(0.3)  # warm-up
    _, idle_ms = launches_for(1.0)
    print(f"bf16 4096^3 launch + synchronize, idle: {idle_ms:.3f} ms")
    report = {"idle_ms_per_launch": round(idle_ms, 4)}
    for kind in ("copy", "compute"):
        with stress.load(kind, device) as alone:
            time.sleep(1.0)
        alone_info = alone.describe()
        with stress.load(kind, device) as beside:
            count, stressed_ms = launches_for(1.0)
            running = [t.name for t in threading.enumerate() if t.name.startswith("gemmcheck-stress")]
        leftover = [t.name for t in threading.enumerate() if t.name.startswith("gemmcheck-stress")]
        # how long leaving the block takes: stop the thread, drain the queued iterations
        timer = stress.load(kind, device)
        timer.__enter__()
        time.sleep(0.2)
        stop_start = time.perf_counter()
        timer.__exit__(None, None, None)
        stop_ms = 1000 * (time.perf_counter() - stop_start)
        beside_info = beside.describe()
        row = {
            "alone": alone_info,
            "beside_launches": beside_info,
            "bandwidth_ratio_beside_vs_alone": round(beside_info["gb_per_s"] / alone_info["gb_per_s"], 3)
            if alone_info.get("gb_per_s")
            else None,
            "launch_ms_stressed": round(stressed_ms, 4),
            "launch_slowdown": round(stressed_ms / idle_ms, 3),
            "launches": count,
            "threads_while_active": running,
            "threads_after_exit": leftover,
            "stop_ms": round(stop_ms, 3),
        }
        report[kind] = row
        print(
            f"{kind:>8}: alone {alone_info['gb_per_s']:.0f} GB/s ({alone_info['engine']}); beside launches "
            f"{beside_info['gb_per_s']:.0f} GB/s = {row['bandwidth_ratio_beside_vs_alone']}x of alone; "
            f"launch {stressed_ms:.3f} ms = {row['launch_slowdown']}x idle; stop {stop_ms:.1f} ms; "
            f"threads after exit: {leftover or 'none'}"
        )
    return report


def part_racy_sweep(args) -> dict:
    from examples.gpu import racy_gemm
    from pytest_gemmcheck.case.cache import LruCache

    reason = racy_gemm.unavailable_reason()
    if reason:
        print(f"racy sweep skipped: {reason}")
        return {"skipped": reason}
    _device()
    deadline = Deadline(args.budget_s)
    caches = (LruCache(), LruCache())
    m = n = 2048
    configs = [  # (stages, block_k, K): K = 2*block_k runs the main loop zero times
        (2, 32, 64),
        (2, 32, 256),
        (3, 32, 1024),
        (4, 64, 1024),
    ]
    slacks = [0, 512, 1024, 2048, 4096, 8192, 16384]
    repeats = {"racy": 40, "fixed": 20}
    rows = []

    def one(variant, stages, block_k, k, slack, kind, repeat, shape=(m, n)):
        kernel = racy_gemm.TailGemm(variant, stages=stages, block_k=block_k)
        row = run_case(
            "cp_async_tail_gemm",
            shape[0],
            shape[1],
            k,
            "ptpc",
            lambda x: lambda out: kernel(x.a, x.b, x.a_scale, x.b_scale, out, slack=slack),
            repeat=repeat,
            stress_kind=kind,
            params={**kernel.params, "slack": slack},
            tile="64x64",
            caches=caches,
        )
        row.update(
            {
                "variant": variant,
                "stages": stages,
                "block_k": block_k,
                "m": shape[0],
                "n": shape[1],
                "k": k,
                "slack": slack,
                "stress_kind": kind,
            }
        )
        rows.append(row)
        print(
            f"{variant:<6} stages={stages} block_k={block_k:<3} {shape[0]}x{shape[1]}x{k:<5} slack={slack:<6} "
            f"stress={kind:<8} {row['bad']:>4}/{row['launches']:<4} bad  kinds={','.join(row['kinds']) or '-':<24} "
            f"worst wrong {row['worst_wrong']}, differing {row['worst_differing']}  {row['ms_per_launch']} ms/launch",
            flush=True,
        )
        return row

    # the fixed twin at its tightest window first (the target: 0 bad in >= 1000 launches, idle
    # and under each stressor), then the grid and the background's shape while time lasts
    twin = [one("fixed", 2, 32, 256, 0, kind, 1000) for kind in STRESS_KINDS]
    jobs = [
        (variant, stages, block_k, k, slack, kind, repeats[variant], (m, n))
        for stages, block_k, k in configs
        for slack in slacks
        for kind in STRESS_KINDS
        for variant in ("racy", "fixed")
    ]
    jobs += [
        (variant, 2, 32, 256, slack, kind, 20, (4096, 7168))
        for slack in (0, 2048, 4096)
        for kind in STRESS_KINDS
        for variant in ("racy", "fixed")
    ]
    done = 0
    for job in jobs:
        if deadline.passed:
            break
        one(*job)
        done += 1
    truncated = done < len(jobs)
    if truncated:
        print(f"time budget spent: {len(jobs) - done} of {len(jobs)} sweep settings not run")

    band = _hiding_band(rows)
    print(
        "slack settings where the racy variant is clean idle and bad under stress: "
        + (", ".join(f"stages={s} block_k={b} K={k} slack={sl} ({kinds})" for s, b, k, sl, kinds in band) or "none")
    )
    print(
        "fixed twin, >= 1000 launches each: "
        + "; ".join(f"{r['stress_kind']}: {r['bad']}/{r['launches']} bad" for r in twin)
    )
    return {"rows": rows, "fixed_twin_1000": twin, "hides_idle_shows_under_stress": band, "truncated": truncated}


def _hiding_band(rows: list[dict]) -> list[tuple]:
    """(stages, block_k, K, slack, stressors that caught it) of racy settings that had no bad
    launch idle and some under a stressor."""
    by_setting: dict[tuple, dict[str, int]] = {}
    for row in rows:
        if row["variant"] != "racy" or (row["m"], row["n"]) != (2048, 2048):
            continue
        key = (row["stages"], row["block_k"], row["k"], row["slack"])
        by_setting.setdefault(key, {})[row["stress_kind"]] = row["bad"]
    band = []
    for key, bad in sorted(by_setting.items()):
        caught = [kind for kind in ("copy", "compute") if bad.get(kind, 0) > 0]
        if bad.get("none") == 0 and caught:
            band.append((*key, "+".join(caught)))
    return band


def part_junit_summary(args) -> dict:
    summary = {}
    for path in args.files:
        label = Path(path).stem
        outcomes = {}
        try:
            tree = ElementTree.parse(path)
        except (OSError, ElementTree.ParseError) as exc:
            summary[label] = {"error": str(exc)}
            print(f"{label}: no report ({exc})")
            continue
        for case in tree.iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            outcome = "passed"
            for child in case:
                if child.tag == "failure":
                    outcome = "failed"
                elif child.tag == "error":
                    outcome = "error"
                elif child.tag == "skipped":
                    outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
            if outcome == "passed" and "[racy" in name:
                outcome = "xpassed"  # the racy tests are marked xfail(strict=False)
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            outcomes[name] = {"outcome": outcome, "seconds": float(case.get("time", 0)), **props}
        counts: dict[str, int] = {}
        for item in outcomes.values():
            counts[item["outcome"]] = counts.get(item["outcome"], 0) + 1
        summary[label] = {"counts": counts, "tests": outcomes}
        print(f"{label}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
        for name, item in outcomes.items():
            if "racy" in name or item["outcome"] in ("failed", "error"):
                print(f"    {item['outcome']:<8} {name}")
    return summary


def part_throughput_summary(args) -> dict:
    """Launches per second of each JSON-lines log (one line per test: worker, start, end, launches).

    Two rates: over the whole span (first start to last end, whoever ran them), and summed over
    the workers, each over its own span. The second leaves out how far apart the workers
    started (xdist brings them up one after another), which in a short run weighs as much as
    the launches."""
    report = {}
    for path in args.files:
        label = Path(path).stem
        try:
            lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        except (OSError, ValueError) as exc:
            report[label] = {"error": str(exc)}
            continue
        if not lines:
            report[label] = {"error": "no test finished"}
            continue
        span = max(line["end"] for line in lines) - min(line["start"] for line in lines)
        launches = sum(line["launches"] for line in lines)
        workers = sorted({line["worker"] for line in lines})
        devices_used = sorted({line["device"] for line in lines})
        per_worker = 0.0
        for worker in workers:
            own = [line for line in lines if line["worker"] == worker]
            own_span = max(line["end"] for line in own) - min(line["start"] for line in own)
            per_worker += sum(line["launches"] for line in own) / own_span if own_span > 0 else 0.0
        in_run = sum(line["end"] - line["start"] for line in lines)  # inside case.run, summed over workers
        preparing = sum(line["start"] - line.get("began", line["start"]) for line in lines)  # inputs and reference
        kernel = sum(line.get("kernel_s", 0.0) for line in lines)  # the launches' own GPU time
        report[label] = {
            "launches": launches,
            "seconds": round(span, 3),
            "launches_per_s": round(launches / span, 2),
            "summed_worker_launches_per_s": round(per_worker, 2),
            "workers": workers,
            "devices": devices_used,
            "case_run_s": round(in_run, 3),
            "preparing_s": round(preparing, 3),
            "ms_per_launch_in_case_run": round(1000 * in_run / launches, 3),
            "kernel_ms_per_launch": round(1000 * kernel / launches, 3),
        }
        print(
            f"{label}: {launches} launches in {span:.2f} s = {launches / span:.1f}/s on {devices_used} "
            f"({len(workers)} workers); summed over the workers' own spans {per_worker:.1f}/s; "
            f"inside case.run {1000 * in_run / launches:.3f} ms per launch (summed over workers; the kernel "
            f"{1000 * kernel / launches:.3f} ms of it), "
            f"inputs and reference {preparing:.2f} s, the rest of the span per worker "
            f"{(span * len(workers) - in_run - preparing) / len(workers):.2f} s"
        )
    rates = {label: row.get("launches_per_s") for label, row in report.items() if row.get("launches_per_s")}
    summed = {
        label: row.get("summed_worker_launches_per_s")
        for label, row in report.items()
        if row.get("summed_worker_launches_per_s")
    }
    if "n1" in rates and "n2" in rates:
        report["speedup_n2_vs_n1"] = round(rates["n2"] / rates["n1"], 3)
        report["summed_speedup_n2_vs_n1"] = round(summed["n2"] / summed["n1"], 3)
        print(
            f"-n 2 vs -n 1: {report['speedup_n2_vs_n1']}x the launches per second over the whole span, "
            f"{report['summed_speedup_n2_vs_n1']}x summed over the workers' own spans (target >= 1.8)"
        )
    return report


PARTS = {
    "environment": part_environment,
    "digests": part_digests,
    "stress": part_stress,
    "racy-sweep": part_racy_sweep,
    "junit-summary": part_junit_summary,
    "throughput-summary": part_throughput_summary,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=sorted(PARTS))
    parser.add_argument("files", nargs="*", help="report files (junit-summary, throughput-summary)")
    parser.add_argument("--json", type=Path, required=True, help="JSON file the part's numbers are merged into")
    parser.add_argument("--budget-s", type=float, default=None, help="stop starting new work after this long")
    args = parser.parse_args(argv)
    print_header("benchmarks.gpu_measure", argv)
    start = time.perf_counter()
    value = PARTS[args.part](args)
    if isinstance(value, dict):
        value["part_seconds"] = round(time.perf_counter() - start, 2)
    merge_json(args.json, args.part, value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
