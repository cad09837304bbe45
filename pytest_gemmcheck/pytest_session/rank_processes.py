"""``--gemmcheck-world-size=W`` (or the marker's ``world_size=W``): a test run as the W ranks of a
torch.distributed group, for its collective cases (case/collective.py).

The parent runs the test itself in W child pytest processes at once, started fresh as
``--gemmcheck-processes`` starts its children, each with torchrun's environment (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT): the plugin initialises the
default group in each before the test body (launch/rank_group.py), gloo on the CPU, NCCL with a
GPU per rank where there are W GPUs, gloo over CUDA tensors where ranks share a GPU. Rank 0
serves the group's store on a socket the parent made, so no other process can take its port.
Each rank writes its part of every case to a file instead of judging it; the parent merges the
ranks' parts of each case into one result (case/rank_results.py; a case without a collective as
--gemmcheck-processes merges its children's), judges and records it as if it ran here.

A rank that raises, hangs or dies does not hold the others: they stop at their next rendezvous,
or their collective fails within the launch timeout. Once one rank has exited, the others have
twice the harness's timeout to follow, and are then killed; a rank that left no part of a case
is named in its result. The session goes on with the next test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..config.pytest_adapter import CHILD_SETTINGS
from ..config.table import BY_NAME, Settings, child_settings
from ..records.result import HUNG, RAISED, CaseResult
from .state import CHILD_OUTPUT, is_child

_POLL_S = 0.05
_TAIL_LINES = 15


@dataclass
class RankExit:
    """How one rank's process ended: its results (None: it wrote none), why its test failed (a
    line each), exit status, whether the parent killed it, and the last lines of its output."""

    rank: int
    results: list[CaseResult] | None
    failures: list[str]
    status: int
    killed: bool
    tail: str

    def ended_words(self) -> str:
        if self.killed:
            return "did not end in time and was killed"
        if self.status < 0:
            return f"was ended by signal {signal.Signals(-self.status).name}"
        return f"exited with status {self.status}"


def rank_devices(settings: Settings, world_size: int) -> tuple[str, list[int | None]]:
    """The backend the ranks' group uses and each rank's GPU index (None: the CPU): NCCL with a GPU
    per rank where --gemmcheck-devices (default: every visible GPU) names W of them, else gloo,
    the ranks sharing the first GPU, or on the CPU where there is none."""
    import torch

    from .processes import child_devices

    gpus = [device for device in child_devices(settings) if device is not None]
    if not gpus and torch.cuda.is_available() and settings.devices is None:
        gpus = list(range(torch.cuda.device_count()))
    if len(gpus) >= world_size:
        return "nccl", gpus[:world_size]
    if gpus:
        return "gloo", [gpus[0]] * world_size
    return "gloo", [None] * world_size


def _store_socket() -> socket.socket:
    """A listening socket on a free port of the loopback, for rank 0's store."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind(("127.0.0.1", 0))
    listening.listen(128)
    return listening


def _tail(path: Path) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").strip().splitlines()[-_TAIL_LINES:])
    except OSError:
        return ""


def run_ranks(
    settings: Settings, *, command: list[str], invocation_dir: Path, env: dict[str, str] | None = None
) -> list[RankExit]:
    """The test in ``settings.world_size`` rank processes at once; how each ended."""
    from ..launch.rank_group import SPAWNED_BACKEND, STORE_FD, harness_timeout_s
    from .processes import CHILD_DEVICE, read_child_output

    world_size = settings.world_size
    backend, devices = rank_devices(settings, world_size)
    listening = _store_socket()
    port = listening.getsockname()[1]
    grace = 2 * harness_timeout_s(settings)
    with tempfile.TemporaryDirectory(prefix="gemmcheck-ranks-") as folder:
        processes = []
        try:
            for rank in range(world_size):
                rank_env = dict(
                    os.environ,
                    **(env or {}),
                    **{
                        "RANK": str(rank),
                        "WORLD_SIZE": str(world_size),
                        "LOCAL_RANK": str(rank),
                        "LOCAL_WORLD_SIZE": str(world_size),
                        "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": str(port),
                        SPAWNED_BACKEND: backend,
                        CHILD_OUTPUT: str(Path(folder) / f"rank-{rank}.json"),
                        CHILD_SETTINGS: child_settings(settings),
                    },
                )
                passed = ()
                if rank == 0:
                    rank_env[STORE_FD] = str(listening.fileno())
                    passed = (listening.fileno(),)
                if devices[rank] is not None:
                    rank_env[CHILD_DEVICE] = str(devices[rank])
                with open(Path(folder) / f"rank-{rank}.log", "wb") as log:
                    processes.append(
                        subprocess.Popen(
                            command,
                            cwd=invocation_dir,
                            env=rank_env,
                            stdout=log,
                            stderr=subprocess.STDOUT,
                            pass_fds=passed,
                            start_new_session=True,
                        )
                    )
        finally:
            listening.close()  # rank 0 holds it now
        killed = _wait(processes, grace)
        exits = []
        for rank, process in enumerate(processes):
            out_file = Path(folder) / f"rank-{rank}.json"
            results, failures = read_child_output(out_file) if out_file.exists() else (None, [])
            exits.append(
                RankExit(
                    rank,
                    results,
                    failures,
                    process.returncode,
                    rank in killed,
                    _tail(Path(folder) / f"rank-{rank}.log"),
                )
            )
    return exits


def _wait(processes: list[subprocess.Popen], grace: float) -> set[int]:
    """Until every rank has ended; once one has, the others have ``grace`` seconds, and are then
    killed with the processes they started. The ranks killed."""
    first_end = None
    killed: set[int] = set()
    while True:
        running = [rank for rank, process in enumerate(processes) if process.poll() is None]
        if not running:
            return killed
        now = time.monotonic()
        if first_end is None and len(running) < len(processes):
            first_end = now
        if first_end is not None and now - first_end > grace:
            for rank in running:
                try:
                    os.killpg(processes[rank].pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                killed.add(rank)
            for rank in running:
                processes[rank].wait()
            return killed
        time.sleep(_POLL_S)


def merge_rank_exits(exits: list[RankExit], grace: float) -> list[CaseResult]:
    """One result per case, in order of first appearance: a collective case's parts merged rank
    by rank, a rank without its part named in it; a case without a collective as the children of
    --gemmcheck-processes are merged."""
    from ..case.rank_results import merge_ranks
    from .processes import merge_parts

    by_key: dict[str, dict[int, CaseResult]] = {}
    for rank_exit in exits:
        for result in rank_exit.results or []:
            by_key.setdefault(result.key, {})[rank_exit.rank] = result
    merged = []
    for parts in by_key.values():
        if parts[min(parts)].collective is None:
            merged.append(merge_parts([parts[rank] for rank in sorted(parts)]))
            continue
        absent = {}
        for rank_exit in exits:
            if rank_exit.rank in parts:
                continue
            if rank_exit.killed:
                absent[rank_exit.rank] = (
                    HUNG,
                    f"rank {rank_exit.rank} had not ended {grace:g} s after another rank "
                    "did, and was killed; none of its launches were recorded",
                )
            elif rank_exit.results is None:
                absent[rank_exit.rank] = (
                    RAISED,
                    f"rank {rank_exit.rank}'s process {rank_exit.ended_words()} and recorded none of its launches",
                )
            else:
                absent[rank_exit.rank] = (
                    RAISED,
                    f"rank {rank_exit.rank} recorded no part of this case: its test ended before the case ran there",
                )
        merged.append(merge_ranks(parts, absent))
    return merged


def spawns_ranks(settings: Settings, item) -> bool:
    """Whether this test runs as ranks spawned here: a world size above 1, a test that uses
    gemmcheck, and a process that is not a rank or a child already (under torchrun the test runs
    in the launcher's ranks: nothing is spawned)."""
    from ..launch.rank_group import launched_as_rank

    return settings.world_size > 1 and not is_child() and not launched_as_rank() and "gemmcheck" in item.fixturenames


def run_in_ranks(session, item, overrides, sink: list) -> bool:
    """--gemmcheck-world-size=W for one test: run it as W ranks, then judge and record each case's
    merged result here, as case.run would have. False when the test runs here as usual."""
    __tracebackhide__ = True  # a failure points at the test, not at the plugin's spawning
    settings = overrides.settings
    if not spawns_ranks(settings, item):
        return False
    from ..errors import CaseError, GemmcheckFailure, LaunchError
    from ..judging.conclude import conclude
    from ..launch.rank_group import harness_timeout_s
    from .processes import child_command

    config = session.config
    exits = run_ranks(settings, command=child_command(config, item.nodeid), invocation_dir=config.invocation_params.dir)
    flag = f"{BY_NAME['world-size'].flag}={settings.world_size}"
    if all(rank_exit.results is None for rank_exit in exits):
        raise GemmcheckFailure(
            f"gemmcheck: {flag}: no rank recorded anything:\n"
            + "\n".join(f"rank {rank_exit.rank} {rank_exit.ended_words()}:\n{rank_exit.tail}" for rank_exit in exits)
        )
    failures = []
    for result in merge_rank_exits(exits, 2 * harness_timeout_s(settings)):
        result.nodeid = item.nodeid
        conclusion = conclude(result, settings, session.history.baseline_for)
        config.hook.pytest_gemmcheck_result(result=result)
        sink.append(result)
        if conclusion.failure is not None:
            failures.append(conclusion.failure)
    test_failures = _test_failures(exits)
    if failures:
        kind = LaunchError if any(isinstance(failure, LaunchError) for failure in failures) else GemmcheckFailure
        raise kind("\n".join([str(failure) for failure in failures] + test_failures))
    if len(test_failures) == 1 and test_failures[0].startswith(_CASE_ERROR):  # the same on every rank: as here
        raise CaseError(test_failures[0][len(_CASE_ERROR) :]) from None
    if test_failures:  # the results are recorded; the test's own failure is still its outcome
        raise AssertionError(f"gemmcheck: {flag}: " + "\n".join(test_failures))
    return True


_CASE_ERROR = "the test failed on every rank: pytest_gemmcheck.errors.CaseError: "


def _test_failures(exits: list[RankExit]) -> list[str]:
    """How the test itself failed on the ranks that wrote their results and failed: a line per
    reason, with the ranks it was theirs ("every rank" where it was every rank's)."""
    by_reason: dict[str, list[int]] = {}
    for rank_exit in exits:
        if rank_exit.results is None or rank_exit.status == 0:
            continue
        reasons = rank_exit.failures or [f"it {rank_exit.ended_words()}:\n{rank_exit.tail}"]
        for reason in reasons:
            by_reason.setdefault(reason, []).append(rank_exit.rank)
    lines = []
    for reason, ranks in by_reason.items():
        who = (
            "every rank"
            if len(ranks) == len(exits)
            else f"rank{'s' if len(ranks) > 1 else ''} " + ", ".join(str(rank) for rank in ranks)
        )
        lines.append(f"the test failed on {who}: {reason}")
    return lines
