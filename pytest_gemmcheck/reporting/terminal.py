"""The ``gemmcheck`` section of pytest's terminal summary: a line per case, then what was
recorded and accepted."""

from __future__ import annotations

from ..records.result import CaseResult, CompiledResult
from ..judging.message import evidence, static_words, worst
from ..judging.verdict import failing_launches, failing_words


def summary_line(result: CaseResult) -> str:
    verdict = result.verdict.upper() if result.verdict else "?"
    if isinstance(result, CompiledResult):
        return f"{verdict:<10} {result.label}: {static_words(result)}"
    text = f"{verdict:<10} {result.label}: {evidence(result)}"
    failing = failing_launches(result)
    if failing:
        text += f"; {failing_words(failing)}"
    worst_line = worst(result)
    if worst_line:
        text += f"; {worst_line}"
    unpoisoned = [launch.index for launch in result.launches if not launch.poisoned]
    if unpoisoned:  # a kernel's own output, checked as returned: said on a passing line too
        text += (f"; {_launches(unpoisoned)} checked as returned, not poisoned (the kernel's own output; it must "
                 f"be written on every launch)")
    if result.stopped:
        text += f"; {result.stopped}"
    if result.kinds:
        text += f" [{', '.join(result.kinds)}]"
    if result.verdict not in ("pass", "") and result.baseline.get("source") not in (None, "clean"):
        text += f" vs {result.baseline['bad_launches']}/{result.baseline['launches']} ({result.baseline['source']})"
    return text


def _launches(indices: list[int]) -> str:
    shown = ", ".join(str(index) for index in indices[:8]) + (", ..." if len(indices) > 8 else "")
    return f"launch {shown}" if len(indices) == 1 else f"{len(indices)} launches ({shown})"


def write_summary(terminal, results: list[CaseResult], recorded: str, recording_failed: bool,
                  accepted: list[str], outputs: list[tuple[str, bool]] = ()) -> None:
    """The section, on pytest's terminal reporter; nothing when there is nothing to say.
    ``outputs``: a line per --gemmcheck-summary/--gemmcheck-json file, and whether it failed."""
    if not results and not recorded:
        return
    terminal.write_sep("-", "gemmcheck")
    for result in results:
        markup = {"red": True} if result.failed else ({"yellow": True} if result.bad_launches else {"green": True})
        terminal.write_line(summary_line(result) + f"  ({result.nodeid})", **markup)
    if recorded:
        terminal.write_line(recorded, **({"red": True, "bold": True} if recording_failed else {}))
    for line in accepted:
        terminal.write_line(f"gemmcheck: {line}", **({} if line.startswith("accepted") else {"red": True}))
    for line, output_failed in outputs:
        terminal.write_line(line, **({"red": True, "bold": True} if output_failed else {}))
