"""The ``gemmcheck`` section of pytest's terminal summary: a few lines per case, then what was
recorded and accepted.

Each case reads as pytest's own reports do: a short first line (the verdict, the case, bad
launches of all, the worst launch's figures), then the details indented under it (first, for a
verdict other than a pass, what it was judged against: "vs 3/12 (golden): ..."), every line
wrapped to fit an 80-column terminal. Text the user chose (a kernel name, params, a test id)
is shown with its unprintable characters escaped (records/printable.py): a bidi control in a
param cannot reorder the line.
"""

from __future__ import annotations

import re
import textwrap

from ..judging.message import bad_launch_ids, rank_rates, rate_words, sanitizer_words, static_source, worst
from ..judging.verdict import failing_launches, failing_words
from ..records.printable import printable
from ..records.result import CaseResult, CompiledResult
from ..records.result_text import VERDICT_WIDTH, summary_line

WIDTH = 80  # columns of the terminal the lines are wrapped for
INDENT = "    "  # details under a case's first line
NO_BREAK = "\xa0"


def baseline_line(result: CaseResult) -> str:
    """'vs 3/12 (history): history: 2 earlier runs on cpu (torch 2.13.0+cpu)', 'vs clean: no bad
    launch expected': what a verdict other than a pass was judged against; '' for a pass."""
    baseline = result.baseline
    source = baseline.get("source")
    if result.verdict in ("pass", "") or source is None:
        return ""
    if source == "clean":
        return "vs clean: no bad launch expected"
    return f"vs {baseline['bad_launches']}/{baseline['launches']} ({source}): {baseline.get('description') or source}"


def summary_details(result: CaseResult) -> list[str]:
    """What goes under the first line, a phrase a line (unwrapped, unindented)."""
    if isinstance(result, CompiledResult):
        return [static_source(result)] + ([result.nodeid] if result.nodeid else [])
    details = [baseline_line(result)] if baseline_line(result) else []
    ids = bad_launch_ids(result)
    details.append(
        (f"{ids}; " if ids else "") + rate_words(result) + (f" [{', '.join(result.kinds)}]" if result.kinds else "")
    )
    if result.collective:
        details.append(rank_rates(result))
    failing = failing_launches(result)
    if failing:
        details.append(failing_words(failing))
    worst_line = worst(result)
    if worst_line:
        details.append(worst_line)
    details += sanitizer_words(result)
    unpoisoned = [launch.index for launch in result.launches if not launch.poisoned]
    if unpoisoned:  # a kernel's own output, checked as returned: said on a passing line too
        details.append(
            f"{_launches(unpoisoned)} checked as returned, not poisoned (the kernel's own output; it must "
            f"be written on every launch)"
        )
    if result.stopped:
        details.append(result.stopped)
    if result.baseline.get("accepted"):
        details.append(
            f"a {result.verdict} against that baseline, accepted: --gemmcheck-accept makes this run the case's golden"
        )
    if result.nodeid:
        details.append(result.nodeid)
    return [printable(detail) for detail in details]


def summary_lines(result: CaseResult, width: int = WIDTH) -> list[str]:
    """The first line and the details, each wrapped to ``width`` columns (a word longer than
    that, a long test id, stays whole)."""

    def wrap(text: str, first: str, rest: str) -> list[str]:
        return textwrap.wrap(
            text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
        ) or [first.rstrip()]

    line = summary_line(result)
    # a figure and its noun stay on one line ("3/12 launches bad", "worst 512 wrong"): what one greps
    # for; textwrap breaks at ASCII spaces only, so a no-break space holds them together
    for phrase in re.findall(r"\d+/\d+ launches bad|worst [\d,]+ \w+|[\d,]+ differing", line):
        line = line.replace(phrase, phrase.replace(" ", NO_BREAK))
    lines = [
        text.replace(NO_BREAK, " ")
        for text in wrap(line[VERDICT_WIDTH + 1 :], line[: VERDICT_WIDTH + 1], " " * (VERDICT_WIDTH + 1))
    ]
    for detail in summary_details(result):
        lines += wrap(detail, INDENT, INDENT + "  ")
    return lines


def _launches(indices: list[int]) -> str:
    shown = ", ".join(str(index) for index in indices[:8]) + (", ..." if len(indices) > 8 else "")
    return f"launch {shown}" if len(indices) == 1 else f"{len(indices)} launches ({shown})"


def write_summary(
    terminal,
    results: list[CaseResult],
    recorded: str,
    recording_failed: bool,
    accepted: list[str],
    outputs: list[tuple[str, bool]] = (),
) -> None:
    """The section, on pytest's terminal reporter; nothing when there is nothing to say.
    ``outputs``: a line per --gemmcheck-summary/--gemmcheck-json file, and whether it failed."""
    if not results and not recorded:
        return
    terminal.write_sep("-", "gemmcheck")
    for result in results:
        if result.failed and not result.baseline.get("accepted"):
            markup = {"red": True}
        elif result.bad_launches or result.failed or any(run.status != "ran" for run in result.sanitize):
            markup = {"yellow": True}
        else:
            markup = {"green": True}
        for line in summary_lines(result):
            terminal.write_line(line, **markup)
    if recorded:
        terminal.write_line(recorded, **({"red": True, "bold": True} if recording_failed else {}))
    for line in accepted:
        terminal.write_line(f"gemmcheck: {line}", **({} if line.startswith("accepted") else {"red": True}))
    for line, output_failed in outputs:
        terminal.write_line(line, **({"red": True, "bold": True} if output_failed else {}))
