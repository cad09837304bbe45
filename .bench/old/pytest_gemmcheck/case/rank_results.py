"""The ranks' parts of one collective run as one result, judged and recorded once: by the parent
that spawned the ranks (pytest_session/rank_processes.py), or by rank 0 where a launcher started
them (case/collective.py). Each launch keeps its number and its rank; a rank with no part (its
process ended, or was stopped, before it wrote one) gets one launch that says so, so that the
result fails naming it."""

from __future__ import annotations

from dataclasses import replace

from ..records.result import CaseResult, LaunchRecord


def _worst_tiles(parts: dict[int, CaseResult]) -> dict:
    """The worst rank's tile maps: the most wrong elements at the top level, the most elements off
    the consensus under "differing", each with its rank."""
    merged: dict = {}
    for rank, part in parts.items():
        tiles = part.worst_tiles or {}
        if "grid" in tiles and tiles["wrong"] > merged.get("wrong", 0):
            merged.update({key: value for key, value in tiles.items() if key != "differing"}, rank=rank)
        differing = tiles.get("differing")
        if differing and differing["elements"] > merged.get("differing", {}).get("elements", 0):
            merged["differing"] = dict(differing, rank=rank)
    return merged


def _contention(parts: dict[int, CaseResult]) -> dict:
    """Contended when any rank's GPU was, unknown when any rank could not tell, quiet only when
    every rank's was quiet."""
    records = {rank: part.contention for rank, part in parts.items() if part.contention}
    if not records:
        return {}
    known = [record.get("contended") for record in records.values()]
    contended = True if True in known else (None if None in known else False)
    notes = [f"rank {rank}: {record['note']}" for rank, record in records.items() if record.get("note")]
    return {"contended": contended, "note": "; ".join(notes), "ranks": {str(rank): r for rank, r in records.items()}}


def absent_launch(rank: int, index: int, kind: str, why: str) -> LaunchRecord:
    """The one launch of a rank that left no part: ``kind`` (raised or hung) at launch ``index``
    (where the other ranks stopped), ``why`` in its error."""
    return LaunchRecord(index=index, kinds=[kind], error=why, rank=rank)


def merge_ranks(parts: dict[int, CaseResult], absent: dict[int, tuple[str, str]] | None = None) -> CaseResult:
    """One result of ``parts`` (rank -> that rank's part, launches stamped with the rank) and of
    the ranks in ``absent`` (rank -> (kind, why) it left none), launches in (launch, rank) order."""
    first = parts[min(parts)]
    result = replace(
        first, launches=[], consensus_note="", verdict="", message="", baseline={}, consensus_checksum=None
    )
    launches = [launch for part in parts.values() for launch in part.launches]
    if absent:
        failed = [launch.index for launch in launches if launch.bad]
        where = max(failed or [launch.index for launch in launches] or [1])
        launches += [absent_launch(rank, where, kind, why) for rank, (kind, why) in absent.items()]
    result.launches = sorted(launches, key=lambda launch: (launch.index, launch.rank or 0))
    result.consensus_size = sum(part.consensus_size for part in parts.values())
    result.consensus_note = "; ".join(
        f"rank {rank}: {part.consensus_note}" for rank, part in sorted(parts.items()) if part.consensus_note
    )
    result.stopped = "; ".join(f"rank {rank}: {part.stopped}" for rank, part in sorted(parts.items()) if part.stopped)
    result.worst_tiles = _worst_tiles(parts)
    result.contention = _contention(parts)
    return result
