"""The ranks of a collective case: this process's place in its torch.distributed group, and the
harness's own means of coordinating the ranks, kept apart from the kernel's group.

The kernel's group is the default one: the plugin initialises it in the ranks it spawns
(``--gemmcheck-world-size``; gloo on the CPU, NCCL with a GPU per rank, gloo over CUDA tensors
where ranks share a GPU); under a launcher such as torchrun it is the launcher's, initialised by
the test or, where nothing did, by the plugin from the launcher's environment. The harness never
uses it: it makes a gloo group of its own for what the ranks exchange (their outputs' checksums,
their results), and, where every rank can open one file of shared memory (ranks on one host), a
few words there for the rendezvous before each launch, which costs microseconds where a gloo
collective costs hundreds of them (two processes on a 2-core machine: a gloo ``all_gather`` of
8 bytes 200-450 us, a spin on shared words 16 us; benchmarks/collective_cost.py).
"""

from __future__ import annotations

import mmap
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta

from ..config.table import Settings
from ..errors import CaseError

# What a spawning parent puts in a rank's environment besides torchrun's names (RANK,
# WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): the backend of the group it initialises,
# and the descriptor of the store's listening socket, which rank 0 serves (made by the parent,
# so that no other process can take the port in between).
SPAWNED_BACKEND = "GEMMCHECK_RANK_BACKEND"
STORE_FD = "GEMMCHECK_RANK_STORE_FD"
# Ranks start pytest and torch at their own pace (4 ranks on 2 loaded cores: seconds apart):
# they wait this long for each other before the group is made, so that the group's own timeout
# can be the launch timeout.
STARTUP_S = 300.0
GLOO_DEFAULT_S = 1800.0  # gloo's own default timeout, where --gemmcheck-launch-timeout=0 asks for none

NO_GROUP = (
    "collective={collective!r} needs the ranks of a torch.distributed group: run the test with "
    "@pytest.mark.gemmcheck(world_size=W) or --gemmcheck-world-size=W, or as a rank of a launcher "
    "(torchrun); no group is initialised in this process"
)


def launched_as_rank(environ=None) -> bool:
    """Whether a launcher (torchrun, or the plugin itself) started this process as a rank."""
    environ = os.environ if environ is None else environ
    return "RANK" in environ and "WORLD_SIZE" in environ


def launcher_rank_not_first(environ=None) -> bool:
    """Whether a launcher (torchrun) started this process as a rank other than 0, whose session
    records nothing: rank 0's judges and records each collective case once (every rank runs the
    same cases). The plugin's own ranks record nothing anyway: their parent does."""
    environ = os.environ if environ is None else environ
    return launched_as_rank(environ) and environ["RANK"].strip() not in ("", "0") and not spawned_rank(environ)


def spawned_rank(environ=None) -> bool:
    """Whether the plugin spawned this process as a rank (--gemmcheck-world-size)."""
    return bool((os.environ if environ is None else environ).get(SPAWNED_BACKEND))


def kernel_timeout_s(settings: Settings) -> float:
    """The timeout of the group the plugin initialises: a collective that waits longer than a
    launch may take is a rank that will not come (gloo then raises in the ranks that wait)."""
    return settings.launch_timeout if settings.launch_timeout > 0 else GLOO_DEFAULT_S


def harness_timeout_s(settings: Settings) -> float:
    """How long the harness waits for a rank at a rendezvous or an exchange: the rank may still
    be in a launch (up to the launch timeout) and in its check (seconds for a large output on
    the CPU), so twice the one and half a minute more."""
    return 2 * settings.launch_timeout + 30.0 if settings.launch_timeout > 0 else GLOO_DEFAULT_S


def init_spawned_rank(settings: Settings) -> None:
    """In a rank the plugin spawned, before the test body: the default group, over the store the
    parent's socket serves, once every rank is up."""
    import torch
    import torch.distributed as dist

    if dist.is_initialized():
        return
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    listening = int(os.environ[STORE_FD]) if rank == 0 and os.environ.get(STORE_FD) else None
    store = dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        world_size,
        is_master=rank == 0,
        timeout=timedelta(seconds=STARTUP_S),
        wait_for_workers=False,
        master_listen_fd=listening,
    )
    store.add("gemmcheck-ranks-up", 1)
    waited = time.monotonic()
    while store.add("gemmcheck-ranks-up", 0) < world_size:
        if time.monotonic() - waited > STARTUP_S:
            raise CaseError(f"rank {rank}: the other ranks did not start within {STARTUP_S:g} s")
        time.sleep(0.01)
    backend = os.environ[SPAWNED_BACKEND]
    device = None
    if backend == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group(
        backend,
        store=store,
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=kernel_timeout_s(settings)),
        device_id=device,
    )


def _init_from_launcher(settings: Settings) -> None:
    """A launcher's rank whose group nothing initialised yet: initialised from its environment
    (env://), gloo unless this rank has a GPU of its own."""
    import torch
    import torch.distributed as dist

    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"]))
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    backend = "nccl" if gpus >= local_world > 0 else "gloo"
    dist.init_process_group(backend, timeout=timedelta(seconds=kernel_timeout_s(settings)))


def current_ranks(settings: Settings, collective: str) -> tuple[int, int]:
    """(rank, world size) of this process's default group; CaseError (one line) where there is
    none, or where the world size asked for is not the group's."""
    try:
        import torch.distributed as dist
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise CaseError(f"collective={collective!r}: this build of torch has no torch.distributed")
    if not dist.is_initialized():
        if not launched_as_rank():
            raise CaseError(NO_GROUP.format(collective=collective))
        _init_from_launcher(settings)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if settings.world_size > 1 and settings.world_size != world_size:
        raise CaseError(
            f"world_size={settings.world_size}, but this process's group has {world_size} rank"
            f"{'s' if world_size != 1 else ''}"
        )
    return rank, world_size


# --- the harness's own group ------------------------------------------------------------


def _shared_folder() -> str | None:
    """Where a file is shared memory: /dev/shm where there is one, else the temporary folder (a
    mapped file's pages are shared all the same)."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class SharedWords:
    """One 64-bit word per rank that the others read (its rendezvous state), its pid beside it
    (a rank whose process ended is seen at once), in a file every rank maps. Each word is written
    by its rank alone and read whole, so no lock is needed."""

    def __init__(self, memory: mmap.mmap, rank: int, world_size: int):
        self._memory = memory
        self.words = memoryview(memory).cast("q")
        self.rank = rank
        self.world_size = world_size
        self.words[world_size + rank] = os.getpid()

    def post(self, word: int) -> None:
        self.words[self.rank] = word

    def read(self, rank: int) -> int:
        return self.words[rank]

    def ended(self, rank: int) -> bool:
        """Whether rank ``rank``'s process is gone."""
        try:
            os.kill(self.words[self.world_size + rank], 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # another user's process of that pid: not the rank's
            return True
        return False

    @classmethod
    def open(cls, group, rank: int, world_size: int) -> SharedWords | None:
        """The words of the ranks of ``group`` (all of them call this): rank 0 makes the file, the
        others map it and prove it theirs by a token; None where any rank could not (ranks on
        several hosts), and the rendezvous goes through the group instead."""
        import torch.distributed as dist

        size = 8 * (2 * world_size + 1)
        made = [None, None]
        if rank == 0:
            handle, path = tempfile.mkstemp(prefix="gemmcheck-ranks-", dir=_shared_folder())
            os.ftruncate(handle, size)
            os.close(handle)
            made = [path, secrets.randbits(62)]
        dist.broadcast_object_list(made, src=0, group=group)
        path, token = made
        try:
            with open(path, "r+b") as file:
                memory = mmap.mmap(file.fileno(), size)
        except OSError:
            memory = None
        if rank == 0 and memory is not None:
            memory[-8:] = token.to_bytes(8, "little")
        dist.barrier(group=group)  # rank 0's token is written; every rank calls the same collectives
        opened = memory is not None and int.from_bytes(memory[-8:], "little") == token
        everyone = [None] * world_size
        dist.all_gather_object(everyone, opened, group=group)
        if rank == 0:
            os.unlink(path)  # every rank has mapped it (or failed to): nothing is left behind
        if not all(everyone):
            if memory is not None:
                memory.close()
            return None
        return cls(memory, rank, world_size)


@dataclass
class Harness:
    """The harness's means of coordinating one group's ranks: its gloo group, the shared words
    (None across hosts), how long it waits for a rank, and how many collective runs it began
    (every rank runs the same collective cases in the same order, so the count names a run)."""

    group: object
    rank: int
    world_size: int
    words: SharedWords | None
    timeout_s: float
    runs: int = 0


_HARNESSES: dict[int, Harness] = {}


def harness_for(settings: Settings) -> Harness:
    """This process's harness for its default group, made by every rank at its first collective
    run (a collective call: each rank gets here once)."""
    import torch.distributed as dist

    default = dist.distributed_c10d._get_default_group()
    harness = _HARNESSES.get(id(default))
    if harness is None:
        timeout = harness_timeout_s(settings)
        group = dist.new_group(backend="gloo", timeout=timedelta(seconds=timeout))
        rank, world_size = dist.get_rank(), dist.get_world_size()
        harness = Harness(group, rank, world_size, SharedWords.open(group, rank, world_size), timeout)
        _HARNESSES.clear()  # a group destroyed and made again: the old harness went with it
        _HARNESSES[id(default)] = harness
    return harness
