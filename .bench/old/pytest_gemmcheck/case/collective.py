"""A collective case: a GEMM fused with a collective across the W ranks of a torch.distributed
group, each rank holding a seeded shard of the operands (docs/collective.md):

| collective       | rank r holds                      | rank r's output                          |
|------------------|-----------------------------------|------------------------------------------|
| ``all_reduce``     | a_r [M, K/W], b_r [N, K/W]        | [M, N]: the sum over s of a_s b_sᵀ       |
| ``reduce_scatter`` | a_r [M, K/W], b_r [N, K/W]        | [M/W, N]: rows r M/W ... of that sum     |
| ``all_gather``     | a_r [M/W, K], b_r [N/W, K]        | [M, N/W]: [a_0; ...; a_(W-1)] b_rᵀ       |

A shard is made by the case's quant mode from a seed of (the case's seed, the rank), its scales
its own, as each rank quantizes its own. Every rank makes every rank's shards itself and computes
its own reference from them, with no communication: a broken collective cannot corrupt what it
is judged against. The reference is the single GEMM's, summed: each rank's fp32 product of its
dequantized shards (TF32 off), added in rank order 0, 1, ..., W - 1 in fp32, then rounded to the
output dtype once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Any, Callable

import torch

from ..errors import CaseError, GemmcheckFailure, LaunchError
from ..launch.loop import LaunchLoop
from ..launch.rank_group import current_ranks, harness_for
from ..launch.rank_sync import RankSync
from ..launch.stopping import StoppingRule
from ..records.result import ALL_GATHER, ALL_REDUCE, COLLECTIVES, REDUCE_SCATTER, CaseResult, rank_output_shape
from .case import Case, CaseContext
from .quant import Inputs, quant_mode
from .rank_results import merge_ranks
from .reference import CHUNK_ELEMENTS, tf32_off
from .reference_identity import reference_name


def shard_shape(collective: str, m: int, n: int, k: int, world_size: int) -> tuple[int, int, int]:
    """(M, N, K) of one rank's shards: a_r is [M, K], b_r [N, K]."""
    if collective == ALL_GATHER:
        return m // world_size, n // world_size, k
    return m, n, k // world_size


def shard_seed(seed: int, rank: int) -> int:
    """The seed of rank ``rank``'s shards: a hash of the case's seed and the rank (< 2**63)."""
    digest = hashlib.sha256(f"{int(seed)}:rank:{rank}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def check_divides(collective: str, m: int, n: int, k: int, world_size: int, mode) -> None:
    """A shape the collective cannot cut into W equal shards: CaseError (one line)."""
    needs = {ALL_REDUCE: (("K", k),), REDUCE_SCATTER: (("M", m), ("K", k)), ALL_GATHER: (("M", m), ("N", n))}
    for name, size in needs[collective]:
        if size % world_size:
            raise CaseError(
                f"collective={collective!r} cuts {name} into {world_size} shards, one a rank, and "
                f"{name}={size} is not a multiple of the world size {world_size}"
            )
    shard = shard_shape(collective, m, n, k, world_size)
    try:
        mode.validate(*shard)
    except CaseError as exc:
        raise CaseError(
            f"a shard of collective={collective!r} over {world_size} ranks is {shard[0]}x{shard[1]}x{shard[2]}: {exc}"
        ) from None


@dataclass(repr=False)
class ShardInputs(Inputs):
    """One rank's seeded shards: :class:`Inputs` (``a``, ``b``, ``a_scale``, ``b_scale``, their
    ``seed`` the shard's) and whose they are."""

    rank: int = 0
    world_size: int = 1
    collective: str = ""

    def __repr__(self) -> str:
        return super().__repr__().replace(" on ", f" rank {self.rank} of {self.world_size} ({self.collective}) on ", 1)


@dataclass(frozen=True)
class AllRanks:
    """What a collective case's ``reference=fn`` is given: every rank's shards, in rank order
    (``ranks[r]``), and which rank asks. ``fn`` returns the whole [M, N] product (for
    ``all_reduce`` and ``reduce_scatter`` the sum over the ranks, for ``all_gather`` the gathered
    A times the gathered B); each rank's part of it is taken as the collective says."""

    ranks: tuple[ShardInputs, ...]
    rank: int
    collective: str

    @property
    def world_size(self) -> int:
        return len(self.ranks)

    @property
    def quant(self) -> str:
        return self.ranks[0].quant


def _row_chunks(rows: range, k: int, n: int):
    step = max(1, CHUNK_ELEMENTS // max(k, n))
    for start in range(rows.start, rows.stop, step):
        yield slice(start, min(rows.stop, start + step))


def collective_reference(collective: str, shards: list[Inputs], rank: int, out_dtype: torch.dtype) -> torch.Tensor:
    """Rank ``rank``'s reference from every rank's shards (fp32 products of the dequantized
    shards, TF32 off; for the reductions summed in rank order in fp32), rounded to ``out_dtype``."""
    mode = quant_mode(shards[0].quant)
    world_size = len(shards)
    with tf32_off(), torch.no_grad():
        if collective == ALL_GATHER:
            b_t = mode.dequantize_b(shards[rank]).t()
            blocks = []
            for shard in shards:
                rows = shard.a.shape[0]
                for chunk in _row_chunks(range(rows), shard.a.shape[1], b_t.shape[1]):
                    blocks.append((mode.dequantize_a(shard, chunk) @ b_t).to(out_dtype))
            return torch.cat(blocks)
        m, k = shards[0].a.shape
        n = shards[0].b.shape[0]
        first = rank * (m // world_size) if collective == REDUCE_SCATTER else 0
        count = m // world_size if collective == REDUCE_SCATTER else m
        out = torch.empty((count, n), dtype=out_dtype, device=shards[0].a.device)
        b_ts = [mode.dequantize_b(shard).t() for shard in shards]
        for chunk in _row_chunks(range(first, first + count), k, n):
            total = None
            for shard, b_t in zip(shards, b_ts):  # rank order, in fp32
                product = mode.dequantize_a(shard, chunk) @ b_t
                total = product if total is None else total.add_(product)
            out[chunk.start - first : chunk.stop - first] = total.to(out_dtype)
        return out


def _failure_from(kind: str, text: str) -> GemmcheckFailure:
    return (LaunchError if kind == LaunchError.__name__ else GemmcheckFailure)(text)


class CollectiveCase(Case):
    """A case whose kernel is fused with ``collective`` across the ranks of this process's group.
    ``inputs()`` are this rank's shards; ``rank``, ``world_size`` and ``all_inputs()`` say the
    rest. ``run`` launches on every rank together; the ranks' launches make one result, judged
    and recorded once (by the parent that spawned the ranks, else by rank 0)."""

    def __init__(self, context: CaseContext, kernel: str, *, collective: str, **kwargs: Any):
        if collective not in COLLECTIVES:
            raise CaseError(f"collective={collective!r} is not a collective; choose one of {', '.join(COLLECTIVES)}")
        self.collective = collective
        if context.sanitizing:  # a sanitizer child of another case: this one is never launched there
            self.rank, self.world_size = 0, max(1, context.settings.world_size)
        else:
            self.rank, self.world_size = current_ranks(context.settings, collective)
        super().__init__(context, kernel, **kwargs)
        check_divides(collective, self.m, self.n, self.k, self.world_size, self.mode)

    # --- identity -------------------------------------------------------------------------
    @property
    def out_shape(self) -> tuple[int, int]:
        return rank_output_shape(self.collective, self.m, self.n, self.world_size)

    @property
    def identity(self) -> dict[str, Any]:
        return {**super().identity, "collective": self.collective, "world_size": self.world_size}

    def __repr__(self) -> str:
        return (
            f"<gemmcheck case {self.kernel} {self.quant} {self.m}x{self.n}x{self.k} {self.collective} "
            f"rank {self.rank} of {self.world_size} key={self.key}>"
        )

    # --- inputs and reference -------------------------------------------------------------
    def _inputs_key(self) -> tuple:
        return super()._inputs_key() + (self.collective, self.world_size, self.rank)

    def _make_inputs(self) -> ShardInputs:
        return self._shard(self.rank)

    def _shard(self, rank: int) -> ShardInputs:
        m, n, k = shard_shape(self.collective, self.m, self.n, self.k, self.world_size)
        made = self.mode.make_inputs(m, n, k, seed=shard_seed(self.seed, rank), device=self.device, fp8=self.fp8)
        return ShardInputs(
            **{f.name: getattr(made, f.name) for f in fields(Inputs)},
            rank=rank,
            world_size=self.world_size,
            collective=self.collective,
        )

    def all_inputs(self) -> list[ShardInputs]:
        """Every rank's shards, in rank order, made anew here (this rank's too: a copy of
        :meth:`inputs`, the same bytes): what this rank's reference is computed from."""
        return [self._shard(rank) for rank in range(self.world_size)]

    def _reference_tensor(self, inputs=None) -> torch.Tensor:  # every rank's shards, made anew
        if self.reference_fn is None:
            return collective_reference(self.collective, self.all_inputs(), self.rank, self.out_dtype)
        return self._own_collective_reference()

    def _own_collective_reference(self) -> torch.Tensor:
        """``reference(AllRanks)``: the whole [M, N] product, of which this rank's part is taken."""
        name = reference_name(self.reference_fn)
        with torch.no_grad():
            ref = self.reference_fn(AllRanks(tuple(self.all_inputs()), self.rank, self.collective))
        if not isinstance(ref, torch.Tensor) or tuple(ref.shape) != (self.m, self.n) or not ref.is_floating_point():
            got = f"shape {list(ref.shape)}, dtype {ref.dtype}" if isinstance(ref, torch.Tensor) else type(ref).__name__
            raise CaseError(
                f"reference {name} of {self!r} must return the whole floating-point [{self.m}, {self.n}] "
                f"product of every rank's shards (each rank takes its part), got {got}"
            )
        rows, cols = self.out_shape
        if self.collective == REDUCE_SCATTER:
            ref = ref[self.rank * rows : (self.rank + 1) * rows]
        elif self.collective == ALL_GATHER:
            ref = ref[:, self.rank * cols : (self.rank + 1) * cols]
        return ref.to(device=self.device, dtype=self.out_dtype).contiguous()

    # --- running --------------------------------------------------------------------------
    def _new_result(self, kind: type[CaseResult] = CaseResult) -> CaseResult:
        result = super()._new_result(kind)
        result.collective = self.collective
        result.world_size = self.world_size
        return result

    def run(
        self, launch: Callable[[torch.Tensor], Any], *, repeat: int | str | None = None, check: bool | None = None
    ) -> CaseResult:
        """As :meth:`Case.run`, on every rank: each rank's launches into its own poisoned output,
        checked against its own reference, launch i started together on every rank
        (--gemmcheck-collective-sync); the ranks' launches are one result."""
        __tracebackhide__ = True
        repeat = self._repeat(launch, repeat)
        if self.context.sanitizing:
            return self._new_result()
        settings = self.context.settings
        result = self._new_result()
        rule = StoppingRule(repeat, settings)
        from ..checking.backends import select_checker

        sync = RankSync(
            harness_for(settings),
            synchronised=settings.collective_sync == "launch",
            compare_bits=self.collective == ALL_REDUCE and self.deterministic,
            checksum_of=lambda t: select_checker(settings.check_backend, t).checksum(t),
        )
        try:
            LaunchLoop(
                self, launch, result, rule=rule, wants_consensus_checksum=not self.context.judge, ranks=sync
            ).run()
        except BaseException:
            sync.abandon()  # the other ranks stop at their next rendezvous instead of waiting for this one
            raise
        parts = sync.finish(result, gather=self.context.judge)
        if not self.context.judge:  # a spawned rank: its parent merges the ranks' parts and judges them
            self.context.record(result)
            return result
        return self._judged_on_rank_zero(result, parts, sync, rule.planned(len(result.launches)), check)

    def _judged_on_rank_zero(
        self, result: CaseResult, parts: list[CaseResult] | None, sync: RankSync, planned: int, check: bool | None
    ) -> CaseResult:
        """Ranks started by a launcher (torchrun), each judging its own session: every rank gets
        every rank's part and merges them; rank 0 judges and records the one result, and tells
        the others its verdict (a few words, where the merged launches pickled cost tens of
        microseconds a launch); every rank returns the result and fails as that verdict says."""
        __tracebackhide__ = True
        import torch.distributed as dist

        from ..judging.conclude import conclude

        if parts is None:
            raise GemmcheckFailure(
                f"gemmcheck: {self!r}: the ranks' results could not be gathered: {result.consensus_note}"
            )
        merged = merge_ranks(dict(enumerate(parts)))
        outcome: list = [None]
        error = None
        if self.rank == 0:
            try:
                conclusion = conclude(merged, self.context.settings, self.context.baseline_for, planned=planned)
                self.context.record(merged)
                failure = conclusion.failure
                outcome = [
                    (
                        merged.verdict,
                        merged.message,
                        merged.baseline,
                        None if failure is None else (type(failure).__name__, str(failure)),
                    )
                ]
            except Exception as exc:  # the other ranks hear of it rather than wait for rank 0
                error = exc
                outcome = [(None, "", {}, (GemmcheckFailure.__name__, f"rank 0 could not judge {self!r}: {exc}"))]
        dist.broadcast_object_list(outcome, src=0, group=sync.harness.group)
        if error is not None:
            raise error
        merged.verdict, merged.message, merged.baseline, failure = outcome[0]
        if merged.verdict is None or (failure is not None and (self.context.raises if check is None else check)):
            raise _failure_from(*failure)
        return merged
