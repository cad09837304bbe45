"""A result's own text, the same wherever a result is handed out (case.run, a script's session,
a search's probes): its summary line, its evidence and a markdown table of it. Built from the
record's fields alone, so that every layer can give it (records are the floor)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .printable import printable

if TYPE_CHECKING:
    from .result import CaseResult, CompiledResult

VERDICT_WIDTH = 10  # "REGRESSION", the longest word, and the column the case starts at


def plural(count: int, word: str, plural_word: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (plural_word or word + 's')}"


def verdict_word(result: CaseResult) -> str:
    """'REGRESSION', 'KNOWN-BAD', ...; 'ACCEPTED' for a regression --gemmcheck-accept made the
    case's golden (the run does not fail on it)."""
    if result.baseline.get("accepted"):
        return "ACCEPTED"
    return result.verdict.upper() if result.verdict else "?"


def worst_counts(result: CaseResult) -> str:
    """The worst launch's figures for a short line: 'worst 512 wrong, 92 differing', 'worst 92
    differing' (a launch bad by consistency alone), '' when no launch had either."""
    figures = [
        f"{count:,} {word}"
        for count, word in ((result.worst_wrong, "wrong"), (result.worst_differing, "differing"))
        if count
    ]
    return "worst " + ", ".join(figures) if figures else ""


def static_counts(result: CompiledResult) -> str:
    """'3 kernels, lint 16 errors, 0 warnings' (and its latent and unchecked findings)."""
    static = result.static
    text = plural(len(static.get("metrics", {})), "kernel")
    lint = static.get("lint")
    if lint is not None:
        text += f", lint {plural(lint['errors'], 'error')}, {plural(lint['warnings'], 'warning')}"
        text += "".join(f", {lint[key]} {key}" for key in ("latent", "unchecked") if lint.get(key))
    return text


def summary_line(result: CaseResult) -> str:
    """The case's first line, unwrapped: 'REGRESSION fused ptpc 64x64x128 tile 32x32: 3/12
    launches bad, worst 512 wrong, 92 differing'."""
    head = f"{verdict_word(result):<{VERDICT_WIDTH}} {printable(result.label)}: "
    if hasattr(result, "static"):  # a compiled result: its kernels' figures, no launches
        return head + static_counts(result)
    text = head + f"{len(result.bad_launches)}/{len(result.launches)} launches bad"
    if result.collective:
        text += f" ({rank_blame(result)})"
    counts = worst_counts(result)
    return text + (f", {counts}" if counts else "")


def ranks_text(ranks: list[int]) -> str:
    """'rank 3', 'ranks 1, 3'."""
    return f"rank{'s' if len(ranks) != 1 else ''} {', '.join(str(rank) for rank in ranks)}"


def rank_blame(result: CaseResult) -> str:
    """A collective result's ranks in a few words: 'ranks 1, 3 of 4' (those with a bad launch),
    '4 ranks' when none had one."""
    bad = [rank for rank, (count, _) in result.per_rank.items() if count]
    return f"{ranks_text(bad)} of {result.world_size}" if bad else plural(result.world_size, "rank")


def per_rank_counts(result: CaseResult) -> str:
    """'rank 0 0/200, rank 1 1/200, ...': each rank's bad launches of its launches."""
    return ", ".join(f"rank {rank} {bad}/{launches}" for rank, (bad, launches) in result.per_rank.items())


def evidence(result: CaseResult) -> str:
    """The full evidence, as a failing test shows it (for a result whose verdict wrote none: its
    summary line, what it was judged against and where it ran)."""
    if result.message:
        return printable(result.message, lines=True)
    baseline = result.baseline.get("description", "")
    gpu = result.stack.get("gpu_name")
    return f"{summary_line(result)}\n  baseline: {printable(baseline)}\n  on {result.device}" + (
        f" ({printable(str(gpu))})" if gpu else ""
    )


def markdown(result: CaseResult) -> str:
    """A markdown table of the result, for a pull request or an issue."""

    def cell(text: str) -> str:
        return printable(text).replace("|", "\\|")

    row = [
        result.verdict,
        result.label,
        f"{len(result.bad_launches)}/{len(result.launches)}",
        ", ".join(result.kinds) or "none",
        result.baseline.get("description", ""),
    ]
    headers = ["verdict", "case", "bad launches", "kinds", "baseline"]
    if result.collective:  # each rank's count beside the overall one
        headers.insert(3, "per rank")
        row.insert(3, per_rank_counts(result))
    return "\n".join(
        [
            "| " + " | ".join(headers) + " |",
            "|" + "|".join("---" for _ in headers) + "|",
            "| " + " | ".join(cell(text) for text in row) + " |",
        ]
    )
