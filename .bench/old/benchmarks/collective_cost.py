"""What the harness of a collective case costs per launch on the CPU, against the same GEMM case
without a collective (``cost``); and how far correct all_reduce kernels that sum the ranks'
products in another order stray from the reference every rank computes (``accuracy``).

``cost``: two ranks (gloo on the CPU) run a collective case whose kernel is a row-parallel GEMM
and an all_reduce (the background's gemm_ar, on the CPU); the harness's cost per launch is
case.run's wall time less the kernel calls' own time (each launch record's), over the launches:
poison, check, records, judging, and for the collective case its rendezvous (waiting there for
the slowest rank included), checksums and the merging of the ranks' parts. Waiting for the other
rank inside the kernel's all_reduce is the kernel's time, as it is in production. The same GEMM
case without a collective runs in every rank's process at once, each on its own (so that the
machine is as busy as for the collective case), for the same measure, rank 0's printed; and
again with a kernel that makes the same all_reduce (of a partial product it then discards), so
that the kernel's communication weighs on the harness's work alike (gloo's threads share the
cores) and the difference is the collective case's own.
The arms are interleaved round by round; the medians and their ratio are printed (the target:
<= 2), for both --gemmcheck-collective-sync modes, with the rendezvous alone (the shared words
the harness uses on one host, and a gloo all_gather of one word for comparison).

``accuracy``: every rank's seeded shards of an all_reduce case, each rank's fp32 product rounded
to bf16 and summed in ring order from each rank (every addition rounded to bf16, as a bf16
all-reduce does), or summed in fp32 and rounded once; the largest error of any element, as a
fraction of its row's largest |reference| (what the accuracy rule's 5% is of, with the default
floor of 1), per quant mode and world size.

    python -m benchmarks.collective_cost [cost] [--shape 128x128x128] [--launches 400] [--rounds 7]
    python -m benchmarks.collective_cost accuracy [--shape 256x512x4096] [--world-sizes 2,4,8,16,32]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

from gemmcheck_dev.results import print_header

TARGET_RATIO = 2.0


def _harness_per_launch(case, launch, launches: int, rank: int | None) -> float:
    """Seconds of case.run's time per launch that are not the kernel calls' own (each launch
    record's time), this rank's: a collective case's result holds every rank's launches."""
    started = time.perf_counter()
    result = case.run(launch, repeat=launches)
    wall = time.perf_counter() - started
    if result.bad_launches:
        raise SystemExit(f"collective_cost: {result.summary()}")
    own = [launch for launch in result.launches if launch.rank == rank]
    return (wall - sum(launch.elapsed_s for launch in own)) / len(own)


def _rendezvous_costs(harness, count: int) -> dict[str, float]:
    """Seconds per rendezvous: the harness's (shared words where it has them) and a gloo all_gather."""
    import torch
    import torch.distributed as dist

    from pytest_gemmcheck.launch.rank_sync import RankSync

    sync = RankSync(harness, synchronised=True, compare_bits=False, checksum_of=lambda t: 0)
    started = time.perf_counter()
    for index in range(1, count + 1):
        sync.before_launch(index)
    shared = (time.perf_counter() - started) / count
    sync.rendezvous.leave(sync.run, count)
    words = [torch.zeros(1, dtype=torch.int64) for _ in range(harness.world_size)]
    mine = torch.zeros(1, dtype=torch.int64)
    dist.barrier(group=harness.group)
    started = time.perf_counter()
    for _ in range(count):
        dist.all_gather(words, mine, group=harness.group)
    return {"harness rendezvous": shared, "gloo all_gather": (time.perf_counter() - started) / count}


def rank_main(args) -> None:
    """One rank: rounds of the collective case (both sync modes) and, on rank 0, the plain case."""
    import torch
    import torch.distributed as dist

    import pytest_gemmcheck as gc
    from pytest_gemmcheck.launch.rank_group import harness_for

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    m, n, k = args.m, args.n, args.k
    times: dict[str, list[float]] = {}
    with gc.session(db=None, repeat=args.launches) as session:
        cases = {sync: gc.session(db=None, repeat=args.launches, collective_sync=sync) for sync in ("launch", "free")}
        collective = {sync: s.case("gemm_ar", m=m, n=n, k=k, collective="all_reduce") for sync, s in cases.items()}
        shard = collective["launch"].inputs()
        a, b = shard.a.float(), shard.b.float()

        def gemm_ar(out):
            partial = a @ b.T
            dist.all_reduce(partial)
            out.copy_(partial)

        plain = session.case("gemm", m=m, n=n, k=k)
        whole = plain.inputs()
        wa, wb = whole.a.float(), whole.b.float()

        def gemm(out):
            out.copy_(wa @ wb.T)

        partial_a, partial_b = wa[:, : k // world_size].contiguous(), wb[:, : k // world_size].contiguous()

        def gemm_communicating(out):  # gemm_ar's partial product and all_reduce, then gemm's whole product
            dist.all_reduce(partial_a @ partial_b.T)
            gemm(out)

        for sync in collective:  # warm: references made, kernels loaded
            collective[sync].run(gemm_ar, repeat=8)
        plain.run(gemm, repeat=8)
        plain.run(gemm_communicating, repeat=8)
        for _ in range(args.rounds):
            for sync, case in collective.items():
                times.setdefault(f"collective, sync={sync}", []).append(
                    _harness_per_launch(case, gemm_ar, args.launches, rank)
                )
            dist.barrier()  # every rank runs the plain case at once: the machine as busy as for the others
            times.setdefault("no collective", []).append(_harness_per_launch(plain, gemm, args.launches, None))
            times.setdefault("no collective, kernel all_reduces", []).append(
                _harness_per_launch(plain, gemm_communicating, args.launches, None)
            )
            dist.barrier()
        rendezvous = _rendezvous_costs(harness_for(cases["launch"].settings), args.launches)
        for s in cases.values():
            s.close()
    if rank == 0:
        print(json.dumps({"times": times, "rendezvous": rendezvous, "world_size": world_size}), flush=True)
    dist.destroy_process_group()


def accuracy(args) -> None:
    """The ``accuracy`` view (see the module's words)."""
    import torch

    from pytest_gemmcheck.case.collective import collective_reference, shard_seed, shard_shape
    from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode
    from pytest_gemmcheck.case.reference import compute_reference

    print(
        f"# all_reduce {args.m}x{args.n}x{args.k}: the largest |kernel - reference| of any element over its row's "
        "largest |reference|, over the ring orders starting at each rank"
    )
    print(f"{'quant':<11} {'ranks':>5} {'bf16 partials, bf16 sums':>25} {'fp32 sums, rounded once':>24}")
    for quant in ("bf16", "fp8", "ptpc", "blockscale", "mxfp8"):
        mode = quant_mode(quant)
        for world_size in args.world_sizes:
            shards = [
                mode.make_inputs(
                    *shard_shape("all_reduce", args.m, args.n, args.k, world_size),
                    seed=shard_seed(0, rank),
                    device=torch.device("cpu"),
                    fp8=fp8_flavour("e4m3fn"),
                )
                for rank in range(world_size)
            ]
            ref = collective_reference("all_reduce", shards, 0, torch.bfloat16).float()
            rowmax = ref.abs().amax(dim=1, keepdim=True)
            partials = [compute_reference(shard, torch.float32) for shard in shards]
            worst_bf16 = worst_fp32 = 0.0
            for start in range(world_size):
                order = [partials[(start + step) % world_size] for step in range(world_size)]
                summed = order[0].to(torch.bfloat16)
                for partial in order[1:]:
                    summed = (summed.float() + partial.to(torch.bfloat16).float()).to(torch.bfloat16)
                worst_bf16 = max(worst_bf16, ((summed.float() - ref).abs() / rowmax).max().item())
                once = sum(order[1:], order[0].clone()).to(torch.bfloat16)
                worst_fp32 = max(worst_fp32, ((once.float() - ref).abs() / rowmax).max().item())
            print(f"{quant:<11} {world_size:>5} {worst_bf16:>24.2%} {worst_fp32:>24.2%}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "view",
        nargs="?",
        choices=("cost", "accuracy"),
        default="cost",
        help="cost (default): the harness's cost per launch; accuracy: reduction orders",
    )
    parser.add_argument(
        "--shape", default=None, help="M x N x K of the GEMM (default 128x128x128 for cost, 256x512x4096 for accuracy)"
    )
    parser.add_argument("--world-sizes", default="2,4,8,16,32", help="accuracy: world sizes (default 2,4,8,16,32)")
    parser.add_argument("--launches", type=int, default=400, help="launches per case.run (default 400)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, the arms interleaved (default 7)")
    parser.add_argument("--world-size", type=int, default=2, help="ranks (default 2)")
    parser.add_argument("--rank-of", action="store_true", help=argparse.SUPPRESS)  # a rank of this benchmark
    args = parser.parse_args(argv)
    args.shape = args.shape or ("256x512x4096" if args.view == "accuracy" else "128x128x128")
    args.m, args.n, args.k = (int(size) for size in args.shape.lower().split("x"))
    args.world_sizes = [int(size) for size in args.world_sizes.split(",")]
    if args.rank_of:
        rank_main(args)
        return
    print_header("benchmarks.collective_cost", argv)
    if args.view == "accuracy":
        accuracy(args)
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ranks = []
    for rank in range(args.world_size):
        env = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE=str(args.world_size),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            OMP_NUM_THREADS="1",
        )
        ranks.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.collective_cost",
                    "--rank-of",
                    *(argv if argv is not None else sys.argv[1:]),
                ],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [process.communicate()[0] for process in ranks]
    if any(process.returncode for process in ranks):
        raise SystemExit(f"collective_cost: a rank failed: {[process.returncode for process in ranks]}")
    found = json.loads(outputs[0].strip().splitlines()[-1])
    print(
        f"# {args.world_size} ranks on the CPU (gloo), all_reduce GEMM {args.shape} bf16, {args.launches} launches "
        f"a run, {args.rounds} rounds; harness time per launch = (case.run's wall time - the kernel "
        "calls' time) / launches"
    )
    print(f"{'arm':<36} {'min us':>8} {'median us':>10}  per round (us)")
    medians = {}
    for arm, values in found["times"].items():
        medians[arm] = statistics.median(values)
        print(
            f"{arm:<36} {min(values) * 1e6:8.1f} {medians[arm] * 1e6:10.1f}  "
            + " ".join(f"{value * 1e6:.0f}" for value in values)
        )
    for arm, value in found["rendezvous"].items():
        print(f"{'rendezvous: ' + arm:<36} {value * 1e6:8.1f}")
    for baseline in ("no collective", "no collective, kernel all_reduces"):
        for sync in ("launch", "free"):
            ratio = medians[f"collective, sync={sync}"] / medians[baseline]
            verdict = "within" if ratio <= TARGET_RATIO else "ABOVE"
            print(f"ratio, sync={sync} / {baseline}: {ratio:.2f} ({verdict} the target of {TARGET_RATIO:g}x)")


if __name__ == "__main__":
    main()
