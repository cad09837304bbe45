"""Record what compute-sanitizer prints on real kernels, for the parser's test data and the docs.

    python -m benchmarks.sanitize_record --out DIR          # on an NVIDIA GPU machine

Runs each workload below once under each tool that should see something (and under every tool
for the clean ones), as ``compute-sanitizer --tool T python3 -m benchmarks.sanitize_record
--workload W`` from the repository root, and writes the sanitizer's text (stdout and stderr
apart), its XML report where the tool can write one, the exit status and the seconds taken to
DIR, with an index (``index.json``). The workloads:

* ``tail-racy-256`` / ``tail-fixed-256`` (and ``-1024``): one launch of the cp.async ptpc GEMM
  of examples/gpu/racy_gemm.cu at 512x512xK with its idle-safe slack; the racy variant pre-reads
  the final stage after a bare barrier, the fixed twin waits first.
* ``tail-racy-lineinfo``: the same racy launch compiled with ``-lineinfo`` (source lines in reports).
* ``oob-write``: a kernel writing one element past the end of its output.
* ``sync-divergent``: ``__syncthreads()`` reached by half of a block.
* ``uninit-read``: a kernel reading a freshly allocated, never written buffer.
* ``matmul``: ``torch.matmul`` bf16 512^3 (a clean vendor kernel: nothing should be reported).

PyTorch's caching allocator is off in the children (``PYTORCH_NO_CUDA_MEMORY_CACHING=1``): with
it, a write past a tensor lands inside a pooled block that memcheck sees as allocated.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gemmcheck_dev.results import print_header

ROOT = Path(__file__).resolve().parents[1]
CHILD = [sys.executable, "-m", "benchmarks.sanitize_record"]  # a workload's process, run from ROOT
M = N = 512

_OOB = r"""
extern "C" __global__ void write_past(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 1.0f;   // i == n is one past the end
}
"""
_SYNC = r"""
extern "C" __global__ void half_barrier(float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 128) __syncthreads();   // half of the block never arrives
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[255 - threadIdx.x];
}
"""
_SYNCWARP = r"""
extern "C" __global__ void bad_syncwarp(float* out) {
    // every lane names a mask without itself in it: an invalid __syncwarp
    unsigned mask = (threadIdx.x % 32 == 0) ? 0x2u : 0x1u;
    __syncwarp(mask);
    out[threadIdx.x] = 1.0f;
}
"""
_MISALIGNED = r"""
extern "C" __global__ void misaligned(float* out) {
    float* p = (float*)((char*)out + 2);   // a 4-byte store at a 2-byte offset
    *p = 1.0f;
}
"""
_UNINIT = r"""
extern "C" __global__ void copy(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
"""

WORKLOADS = (
    "tail-racy-256",
    "tail-fixed-256",
    "tail-racy-1024",
    "tail-fixed-1024",
    "tail-racy-lineinfo",
    "oob-write",
    "sync-divergent",
    "uninit-read",
    "matmul",
    "idle12",
    "syncwarp-mask",
    "misaligned",
)
# which tools run on which workload: the clean ones under all four
RUNS = [
    ("tail-racy-256", "racecheck"),
    ("tail-fixed-256", "racecheck"),
    ("tail-racy-1024", "racecheck"),
    ("tail-fixed-1024", "racecheck"),
    ("tail-racy-lineinfo", "racecheck"),
    ("tail-fixed-256", "memcheck"),
    ("tail-fixed-256", "synccheck"),
    ("tail-fixed-256", "initcheck"),
    ("oob-write", "memcheck"),
    ("sync-divergent", "synccheck"),
    ("uninit-read", "initcheck"),
    ("matmul", "racecheck"),
    ("matmul", "memcheck"),
    ("matmul", "synccheck"),
    ("matmul", "initcheck"),
]
# (workload, tool, extra flags, name): report modes, filters and limits
SECOND = [
    ("tail-racy-256", "racecheck", ["--racecheck-report", "hazard"], "hazard"),
    ("tail-racy-256", "racecheck", ["--racecheck-report", "all"], "all"),
    ("tail-racy-256", "racecheck", ["--racecheck-report", "all", "--print-limit", "3"], "all-limit3"),
    ("tail-racy-256", "racecheck", ["--kernel-name-exclude", "kns=tail_gemm"], "excluded"),
    ("tail-racy-lineinfo", "racecheck", ["--racecheck-report", "all", "--print-limit", "3"], "all-limit3"),
    ("tail-fixed-256", "racecheck", ["--racecheck-report", "all"], "all"),
    ("syncwarp-mask", "synccheck", [], "plain"),
    ("misaligned", "memcheck", [], "plain"),
    ("uninit-read", "initcheck", ["--print-limit", "4"], "limit4"),
    ("oob-write", "memcheck", ["--show-backtrace", "no"], "nobacktrace"),
]
XML_RUNS = {
    ("tail-racy-256", "racecheck"),
    ("oob-write", "memcheck"),
    ("sync-divergent", "synccheck"),
    ("uninit-read", "initcheck"),
}


def _tail(variant: str, k: int, lineinfo: bool) -> None:
    import cupy
    import numpy as np
    import torch

    from examples.gpu import racy_gemm

    g = torch.Generator(device="cpu").manual_seed(0)
    a = (torch.randn(M, k, generator=g) * 0.5).to(torch.float8_e4m3fn).cuda()
    b = (torch.randn(N, k, generator=g) * 0.5).to(torch.float8_e4m3fn).cuda()
    a_scale = torch.rand(M, generator=g).cuda() + 0.5
    b_scale = torch.rand(N, generator=g).cuda() + 0.5
    out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    if not lineinfo:
        racy_gemm.TailGemm(variant)(a, b, a_scale, b_scale, out, slack=20000)
    else:
        module = cupy.RawModule(
            code=racy_gemm.SOURCE.read_text(),
            options=("--std=c++17", "-lineinfo", "-DSTAGES=2", "-DBLOCK_K=32", f"-DFIXED={int(variant == 'fixed')}"),
        )
        kernel = module.get_function("tail_gemm")
        kernel(
            (N // 64, M // 64),
            (256,),
            (
                np.uint64(a.data_ptr()),
                np.uint64(b.data_ptr()),
                np.uint64(a_scale.data_ptr()),
                np.uint64(b_scale.data_ptr()),
                np.uint64(out.data_ptr()),
                np.int32(M),
                np.int32(N),
                np.int32(k),
                np.int64(20000),
            ),
            shared_mem=racy_gemm.shared_bytes(2, 32),
        )
    torch.cuda.synchronize()
    print("finite:", bool(torch.isfinite(out.float()).all()))


def _idle12() -> None:
    """12 bare launches of the racy variant per slack and K, each compared bit for bit with
    the fixed twin's output: which settings pass 12/12 on an idle GPU."""
    import torch

    from examples.gpu import racy_gemm

    for k in (256, 1024):
        g = torch.Generator(device="cpu").manual_seed(0)
        a = (torch.randn(M, k, generator=g) * 0.5).to(torch.float8_e4m3fn).cuda()
        b = (torch.randn(N, k, generator=g) * 0.5).to(torch.float8_e4m3fn).cuda()
        a_scale = torch.rand(M, generator=g).cuda() + 0.5
        b_scale = torch.rand(N, generator=g).cuda() + 0.5
        want = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
        racy_gemm.TailGemm("fixed")(a, b, a_scale, b_scale, want)
        for slack in (0, 2000, 20000):
            bad = 0
            for _ in range(12):
                out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                racy_gemm.TailGemm("racy")(a, b, a_scale, b_scale, out, slack=slack)
                bad += int(not torch.equal(out.view(torch.int16), want.view(torch.int16)))
            print(f"idle12 k={k} slack={slack}: {bad}/12 launches differ from the fixed twin", flush=True)


def workload(name: str) -> None:
    import cupy
    import numpy as np
    import torch

    if name.startswith("tail-"):
        _, variant, k = name.split("-")
        _tail(variant, 256 if k == "lineinfo" else int(k), lineinfo=(k == "lineinfo"))
    elif name == "oob-write":
        n = 1000
        out = torch.zeros(n, device="cuda")
        cupy.RawKernel(_OOB, "write_past")((4,), (256,), (np.uint64(out.data_ptr()), np.int32(n)))
    elif name == "sync-divergent":
        out = torch.zeros(256, device="cuda")
        cupy.RawKernel(_SYNC, "half_barrier")((1,), (256,), (np.uint64(out.data_ptr()),))
    elif name == "syncwarp-mask":
        out = torch.zeros(32, device="cuda")
        cupy.RawKernel(_SYNCWARP, "bad_syncwarp")((1,), (32,), (np.uint64(out.data_ptr()),))
    elif name == "misaligned":
        out = torch.zeros(32, device="cuda")
        cupy.RawKernel(_MISALIGNED, "misaligned")((1,), (1,), (np.uint64(out.data_ptr()),))
    elif name == "uninit-read":
        n = 1024
        src = torch.empty(n, device="cuda")
        dst = torch.zeros(n, device="cuda")
        cupy.RawKernel(_UNINIT, "copy")(
            (4,), (256,), (np.uint64(src.data_ptr()), np.uint64(dst.data_ptr()), np.int32(n))
        )
    elif name == "idle12":
        _idle12()
    elif name == "matmul":
        a = torch.randn(M, M, device="cuda", dtype=torch.bfloat16)
        (a @ a).sum().item()
    else:
        raise SystemExit(f"unknown workload {name!r}")
    torch.cuda.synchronize()


def _sanitizer() -> str:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and Path(home, "bin", "compute-sanitizer").exists():
            return str(Path(home, "bin", "compute-sanitizer"))
    raise SystemExit("no compute-sanitizer on PATH, CUDA_HOME or /usr/local/cuda")


def _record_one(
    tool: str,
    tool_name: str,
    flags: list[str],
    work: str,
    stem: str,
    xml: bool,
    out_dir: Path,
    env: dict,
    timeout: float,
) -> dict:
    """One workload under one tool: its text (and XML) report written, its index entry returned."""
    cmd = [tool, "--tool", tool_name, *flags]
    if xml:
        cmd += ["--xml", "--save", str(out_dir / f"{stem}.xml")]
    cmd += [*CHILD, "--workload", work]
    began = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = "timeout", str(exc.stdout or ""), str(exc.stderr or "")
    seconds = round(time.perf_counter() - began, 2)
    (out_dir / f"{stem}.out").write_text(stdout)
    (out_dir / f"{stem}.err").write_text(stderr)
    print(f"{stem}: rc {rc} in {seconds} s", flush=True)
    return {
        "workload": work,
        "tool": tool_name,
        "flags": flags,
        "xml": xml,
        "rc": rc,
        "seconds": seconds,
        "command": cmd,
    }


def record_second(out_dir: Path, timeout: float, only: str | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    tool = _sanitizer()
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    index = {"sanitizer": tool, "runs": []}
    for work, tool_name, flags, label in SECOND:
        if only and not work.startswith(only):
            continue
        for xml in (False, True):
            stem = f"{tool_name}__{work}__{label}" + ("__xml" if xml else "")
            index["runs"].append(_record_one(tool, tool_name, flags, work, stem, xml, out_dir, env, timeout))
    (out_dir / "index.json").write_text(json.dumps(index, indent=1))


def record(out_dir: Path, timeout: float) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    tool = _sanitizer()
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    index = {"sanitizer": tool, "runs": []}
    for args, name in ((["--version"], "version"), (["--help"], "help")):
        done = subprocess.run([tool, *args], capture_output=True, text=True)
        (out_dir / f"{name}.txt").write_text(done.stdout + done.stderr)
    for work, tool_name in RUNS:
        for xml in (False, True) if (work, tool_name) in XML_RUNS else (False,):
            stem = f"{tool_name}__{work}" + ("__xml" if xml else "")
            index["runs"].append(_record_one(tool, tool_name, [], work, stem, xml, out_dir, env, timeout))
    done = subprocess.run([*CHILD, "--workload", "idle12"], capture_output=True, text=True, env=env, cwd=ROOT)
    (out_dir / "idle12.txt").write_text(done.stdout + done.stderr)
    # the same one launch, bare, for the sanitizer's cost
    for work in ("tail-racy-256", "matmul"):
        began = time.perf_counter()
        subprocess.run([*CHILD, "--workload", work], env=env, capture_output=True, cwd=ROOT)
        index["runs"].append({"workload": work, "tool": None, "seconds": round(time.perf_counter() - began, 2)})
    (out_dir / "index.json").write_text(json.dumps(index, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=WORKLOADS)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--timeout", type=float, default=150.0)
    parser.add_argument("--second", action="store_true", help="the report modes, filters and limits")
    parser.add_argument("--only", help="with --second: only the runs whose workload has this prefix")
    args = parser.parse_args()
    if args.workload:  # a child under the sanitizer: its output is the record, nothing else
        workload(args.workload)
        return
    print_header("benchmarks.sanitize_record")
    if args.out and args.second:
        record_second(args.out, args.timeout, args.only)
    elif args.out:
        record(args.out, args.timeout)
    else:
        parser.error("give --workload or --out")


if __name__ == "__main__":
    main()
