"""The one way a result is judged, wherever it comes from (``case.run``, ``case.check_assembly``,
the aggregate of ``--gemmcheck-processes``): against its baseline, with the verdict, the
baseline and the message written onto the result, and the failure the test raises, if any."""

from __future__ import annotations

import itertools
import os
import textwrap
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import GemmcheckFailure, LaunchError, LaunchHung
from ..records.result import CaseResult
from ..records.sanitize import RAN
from .baseline import Baseline
from .message import failure_message
from .verdict import PASS, Verdict, failing_launches, judge, unmet_requirements

# frames in the plugin are the launch loop's, not the kernel's (named as the modules' own __file__ is)
_PACKAGE = str(Path(__file__).parent.parent) + os.sep


@dataclass
class Conclusion:
    verdict: Verdict
    failure: GemmcheckFailure | None  # what the test raises; None when it passes


def conclude(
    result: CaseResult,
    settings,
    baseline_for: Callable[[CaseResult], Baseline],
    *,
    raised: BaseException | None = None,
    planned: int | None = None,
) -> Conclusion:
    """Judge ``result``. ``raised``: the exception a launch raised in this process (the test
    fails with it, chained, and ``planned`` launches named); a launch recorded as raised or hung
    elsewhere (a child process) fails the test as well. Under ``--gemmcheck-accept`` a
    regression does not fail: this run becomes the baseline instead, and the result says so
    (``result.baseline["accepted"]``; its verdict stays what the old baseline made it). A pass
    gets a message only when there is something it must not hide: a sanitizer run that did not
    run to a report. A requirement the session made and the result did not meet
    (--gemmcheck-require-sanitize, and the sanitized launch could not run) fails the test as
    that, first in its message, and leaves the verdict what the launches say: a step that could
    not run found nothing about the kernel."""
    baseline = baseline_for(result)
    verdict = judge(
        result,
        baseline,
        alpha=settings.alpha,
        worst_factor=settings.worst_factor,
        static_policy=settings.static,
        processes=getattr(settings, "processes", 1),
    )
    unmet = unmet_requirements(result, require_sanitize=settings.require_sanitize)
    result.verdict = verdict.kind
    result.baseline = {
        "source": baseline.source,
        "description": baseline.description,
        "launches": baseline.evidence.launches,
        "bad_launches": baseline.evidence.bad,
    }
    failing = raised is not None or bool(failing_launches(result))
    accepted = verdict.failed and settings.accept and not failing  # a launch that raised or hung is never accepted
    if accepted:
        result.baseline["accepted"] = True
        verdict.lines.append("accepted: --gemmcheck-accept makes this run the case's golden, so the test does not fail")
    unchecked = any(run.status != RAN for run in result.sanitize)
    result.message = failure_message(result, verdict) if verdict.kind != PASS or unchecked else ""
    if unmet:
        result.message = _unmet_words(result, verdict, unmet) + "\n" + result.message
    failure: GemmcheckFailure | None = None
    if raised is not None:
        last = result.launches[-1]
        failure = _launch_error(raised, last.index, planned or len(result.launches), result.message, rank=last.rank)
    elif failing:
        failure = LaunchError(result.message)
    elif (verdict.failed and not accepted) or unmet:
        failure = GemmcheckFailure(result.message)
    return Conclusion(verdict, failure)


def _unmet_words(result: CaseResult, verdict: Verdict, unmet: list[str]) -> str:
    """'gemmcheck: gemm bf16 128x64x64: requirement not met (the launches' verdict: pass)' and a
    line per requirement."""
    lines = [f"gemmcheck: {result.label}: requirement not met (the launches' verdict: {verdict.kind})"]
    return "\n".join(lines + [f"  {text}" for text in unmet])


def _launch_error(
    raised: BaseException, index: int, planned: int, message: str, *, rank: int | None = None
) -> LaunchError:
    """The failure of a launch that raised: the kernel's exception, where it raised, and the
    evidence. The kernel's traceback is written into the message in Python's own form (file,
    line, source) and the chained exception carries none: pytest shows a chained traceback with
    each frame's arguments, and the frame of ``launch(out)`` (the test's lambda, the kernel's
    own functions) holds the whole NaN-poisoned output."""
    frames = traceback.extract_tb(raised.__traceback__)
    kernel_frames = traceback.StackSummary.from_list(
        list(itertools.dropwhile(lambda frame: frame.filename.startswith(_PACKAGE), frames))
    )
    where = "".join(kernel_frames.format()).rstrip()
    launch = f"launch {index} of {planned}" + (f", rank {rank}," if rank is not None else "")
    if isinstance(raised, LaunchHung):  # its own words say what happened; the message repeats them
        text = f"{launch} hung\n"
    else:
        text = f"{launch} raised " + f"{type(raised).__name__}: {raised}".strip() + "\n"
    if where:
        text += "  kernel traceback (most recent call last):\n" + textwrap.indent(where, "  ") + "\n"
    failure = LaunchError(text + message)
    failure.__cause__ = raised.with_traceback(None)
    return failure
