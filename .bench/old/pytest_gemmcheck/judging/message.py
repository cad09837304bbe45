"""Words for results: the failure message of a case, and the phrases its summary line shares.

Written to read like the tables kernel authors paste into PRs: "3/12 launches bad (launches
2, 5, 9); worst 512 wrong elements in 16 rows, 1 tile of 64x64; max rel err 1.7". The message
is shown in a terminal: what the user chose in it (params, a kernel's exception) has its
unprintable characters escaped (records/printable.py).
"""

from __future__ import annotations

from ..records.printable import printable
from ..records.result import (
    BAD_OUTPUT,
    CHANGED_INPUT,
    HUNG,
    INCONSISTENT,
    NONFINITE,
    RAISED,
    RANKS_DISAGREE,
    UNWRITTEN,
    WRONG,
    WROTE_OUTSIDE,
    CaseResult,
    CompiledResult,
    LaunchRecord,
)
from ..records.result_text import plural as _plural
from ..records.result_text import ranks_text, static_counts
from ..records.sanitize import RAN
from .stats import format_percent, rate_upper_bound
from .verdict import Verdict


def _ids(values, total: int) -> str:
    shown = ", ".join(str(v) for v in values)
    return shown + (", ..." if total > len(values) else "")


def _tiles(count: int | None, tile: str | None) -> str:
    if count is None or not tile:
        return ""
    return f", {_plural(count, 'tile')} of {tile}"


def evidence(result: CaseResult) -> str:
    """'3/12 launches bad (launches 2, 5, 9); rate < 55.2% (95%), 1 process'."""
    bad = result.bad_launches
    ids = bad_launch_ids(result)
    return f"{len(bad)}/{len(result.launches)} launches bad" + (f" ({ids})" if ids else "") + f"; {rate_words(result)}"


def bad_launch_ids(result: CaseResult) -> str:
    """'launches 2, 5, 9' (the first 12), '' when none was bad; in a collective case each
    launch with its bad ranks, 'launches 7 (rank 3), 9 (ranks 1, 3)', or the ranks once where
    every bad launch had the same: 'launches 1, 2, 4 (rank 3)'."""
    bad = result.bad_launches
    if not bad:
        return ""
    if not result.collective:
        return f"launch{'es' if len(bad) > 1 else ''} {_ids([b.index for b in bad[:12]], len(bad))}"
    ranks: dict[int, list[int]] = {}
    for launch in bad:
        ranks.setdefault(launch.index, []).append(launch.rank)
    words = f"launch{'es' if len(ranks) > 1 else ''} "
    if len({tuple(found) for found in ranks.values()}) == 1:
        return words + f"{_ids(list(ranks)[:12], len(ranks))} ({ranks_text(sorted(next(iter(ranks.values()))))})"
    return words + _ids([f"{index} ({ranks_text(sorted(ranks[index]))})" for index in list(ranks)[:12]], len(ranks))


def rate_words(result: CaseResult) -> str:
    """'rate < 55.2% (95%), 1 process': what the count can claim, and over what ('4 ranks in 4
    processes' in a collective case)."""
    text = f"rate < {format_percent(rate_upper_bound(len(result.bad_launches), len(result.launches)))} (95%)"
    processes = _plural(result.processes, "process", "processes")
    text += f", {_plural(len(result.ranks), 'rank')} in {processes}" if result.collective else f", {processes}"
    if result.gpus > 1:
        text += f", {result.gpus} GPUs"
    return text


def rank_rates(result: CaseResult) -> str:
    """'per rank: rank 0 0/200 (rate < 1.49%), rank 3 2/200 (rate < 3.11%)': a collective
    result's rate on each rank, beside the overall one; '' outside a collective case."""
    if not result.collective:
        return ""
    return "per rank: " + ", ".join(
        f"rank {rank} {bad}/{launches} (rate < {format_percent(rate_upper_bound(bad, launches))})"
        for rank, (bad, launches) in result.per_rank.items()
    )


def worst(result: CaseResult) -> str:
    """'worst 512 wrong elements in 16 rows, 1 tile of 64x64; max rel err 1.7; most differing
    from the consensus: 92 elements in 3 rows (launch 6)'. Elements off the consensus are their
    own figure: a launch bad by consistency alone has no wrong element to show."""
    parts = []
    wrong = [launch for launch in result.launches if launch.wrong]
    if wrong:
        top = max(wrong, key=lambda launch: launch.wrong)
        text = (
            f"worst {_plural(top.wrong, 'wrong element')} in {_plural(top.wrong_rows, 'row')}"
            f"{_tiles(top.wrong_tiles, result.tile)}" + (f" ({top.label})" if top.rank is not None else "")
        )
        finite_wrong = [launch for launch in wrong if launch.wrong > launch.nonfinite]
        if finite_wrong:  # the relative error of finite elements; non-finite ones are counted apart
            text += f"; max rel err {max(launch.max_rel_err for launch in finite_wrong):.3g}"
        parts.append(text)
    differing = [launch for launch in result.launches if launch.differing]
    if differing:
        top = max(differing, key=lambda launch: launch.differing)
        parts.append(
            f"most differing from the consensus: {_plural(top.differing, 'element')} in "
            f"{_plural(top.differing_rows, 'row')}{_tiles(top.differing_tiles, result.tile)} "
            f"({top.label})"
        )
    return "; ".join(parts)


def sanitizer_words(result: CaseResult) -> list[str]:
    """A line per compute-sanitizer run: its summary, and what a run that did not run to a
    report means ('not checked, not passed')."""
    return [run.summary() + ("" if run.status == RAN else ": not checked, not passed") for run in result.sanitize]


def disagreement(result: CaseResult, launch: LaunchRecord) -> str:
    """Why a rank's launch has ``ranks_disagree``: 'its output's bits differ from those of ranks
    0, 1, 2, which agree', or that no output of that launch was agreed on."""
    agreeing = [
        other.rank
        for other in result.launches
        if other.index == launch.index and other.rank != launch.rank and RANKS_DISAGREE not in other.kinds
    ]
    where = f"{result.collective} gives every rank the same bits"
    if not agreeing:
        return f"ranks disagree: no output of launch {launch.index} was agreed on by most ranks ({where})"
    return (
        f"ranks disagree: its output's bits differ from those of {ranks_text(sorted(agreeing))}"
        + (", which agree" if len(agreeing) > 1 else "")
        + f" ({where})"
    )


def launch_line(result: CaseResult, launch: LaunchRecord) -> str:
    parts = []
    rows, columns = result.output_shape
    total = rows * columns
    if RAISED in launch.kinds:
        parts.append(f"raised {launch.error}")
    if HUNG in launch.kinds:
        parts.append(f"hung: {launch.error}")
    if BAD_OUTPUT in launch.kinds:
        parts.append(f"bad output: {launch.error}")
    if WROTE_OUTSIDE in launch.kinds:
        parts.append(launch.wrote_outside)
    if CHANGED_INPUT in launch.kinds:
        parts.append(
            "changed its input "
            + ", ".join(f"{name} in {_plural(rows, 'row')}" for name, rows in launch.changed_inputs.items())
        )
    if UNWRITTEN in launch.kinds:
        parts.append(f"wrote nothing: all {total:,} elements still hold the NaN poison")
    elif NONFINITE in launch.kinds:
        parts.append(
            f"{_plural(launch.nonfinite, 'non-finite element')}"
            + (" (poison never overwritten, or computed NaN/inf)" if launch.poisoned else "")
        )
    if WRONG in launch.kinds:
        finite_wrong = launch.wrong - launch.nonfinite
        text = f"{_plural(launch.wrong, 'wrong element')} in {_plural(launch.wrong_rows, 'row')}"
        text += f" (rows {_ids(launch.wrong_row_ids, launch.wrong_rows)})"
        if launch.wrong_tiles is not None and result.tile:
            tiles = ", ".join(f"tile ({i},{j})" for i, j in launch.wrong_tile_ids)
            more = ", ..." if launch.wrong_tiles > len(launch.wrong_tile_ids) else ""
            text += f", {_plural(launch.wrong_tiles, 'tile')} of {result.tile} [{tiles}{more}]"
        if finite_wrong:
            text += f"; max rel err {launch.max_rel_err:.3g}, max abs err {launch.max_abs_err:.3g}"
        text += f", relL2 {launch.rel_l2:.3g}"
        parts.append(text)
    if RANKS_DISAGREE in launch.kinds:
        parts.append(disagreement(result, launch))
    if INCONSISTENT in launch.kinds:
        if launch.differing is None:
            parts.append(
                f"differs from the consensus of {result.consensus_size} launches (count unknown: its output "
                "was not kept)"
            )
        else:
            parts.append(
                f"differs from the consensus of {result.consensus_size} launches in "
                f"{_plural(launch.differing, 'element')} in {_plural(launch.differing_rows, 'row')} "
                f"(rows {_ids(launch.differing_row_ids, launch.differing_rows)}), "
                f"up to {100 * launch.max_diff_rel:.3g}% of the row's largest value"
            )
    if not launch.poisoned:
        parts.append("checked as returned: the kernel allocated its own output, so poisoning could not apply")
    return f"{launch.label}: " + "; ".join(parts)


def failure_message(result: CaseResult, verdict: Verdict, max_launch_lines: int = 12) -> str:
    return printable(_message_lines(result, verdict, max_launch_lines), lines=True)


def _message_lines(result: CaseResult, verdict: Verdict, max_launch_lines: int) -> str:
    accepted = " (accepted)" if result.baseline.get("accepted") else ""
    lines = [f"gemmcheck: {result.label}: {verdict.kind}{accepted}"]
    lines += [f"  {reason}" for reason in verdict.reasons]
    if isinstance(result, CompiledResult):
        lines.append(f"  {static_words(result)}")
        lines += [f"  {line}" for line in verdict.lines]
        return "\n".join(lines)
    lines.append(f"  {evidence(result)}")
    if result.collective:
        lines.append(f"  {rank_rates(result)}")
    if result.stopped:
        lines.append(f"  {result.stopped}")
    worst_line = worst(result)
    if worst_line:
        lines.append(f"  {worst_line}")
    bad = result.bad_launches
    for launch in bad[:max_launch_lines]:
        lines.append(f"  {launch_line(result, launch)}")
    if len(bad) > max_launch_lines:
        lines.append(f"  ... and {len(bad) - max_launch_lines} more bad launches")
    if result.consensus_note:
        lines.append(f"  note: {result.consensus_note}")
    unpoisoned = [launch for launch in result.launches if not launch.poisoned and not launch.bad]
    if unpoisoned:
        lines.append(
            "  note: the kernel returned its own output; it was checked as returned, and poisoning could "
            "not apply to it"
        )
    lines += [f"  {line}" for line in verdict.lines]
    lines.append(
        f"  inputs: seed {result.seed}, {result.fp8 or 'no fp8'}, out {result.out_dtype}, on {result.device}; "
        f"rule: off by > {result.rtol:g} x max(|ref|, {result.floor:g} x row max)"
        + ("" if result.deterministic else "; declared nondeterministic (consistency not checked)")
    )
    return "\n".join(lines)


def static_words(result: CompiledResult) -> str:
    """'compiled (fp8_tail_gemm K=512 for gfx950): 3 kernels, lint 16 errors, 0 warnings'."""
    return f"{static_source(result)}: {static_counts(result)}"


def static_source(result: CompiledResult) -> str:
    """'compiled (fp8_tail_gemm K=512 for gfx950)': what was compiled, or 'compiled (assembly)'."""
    return f"compiled ({result.static.get('source') or 'assembly'})"
