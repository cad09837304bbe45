"""The one way a result is judged, wherever it comes from (``case.run``, ``case.check_assembly``,
the aggregate of ``--gemmcheck-processes``): against its baseline, with the verdict, the
baseline and the message written onto the result, and the failure the test raises, if any."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Callable

from ..case.result import RAISED, CaseResult
from ..errors import GemmcheckFailure, LaunchError
from .baseline import Baseline
from .message import failure_message
from .verdict import Verdict, judge


@dataclass
class Conclusion:
    verdict: Verdict
    failure: GemmcheckFailure | None  # what the test raises; None when it passes


def conclude(result: CaseResult, settings, baseline_for: Callable[[CaseResult], Baseline], *,
             raised: BaseException | None = None, planned: int | None = None) -> Conclusion:
    """Judge ``result``. ``raised``: the exception a launch raised in this process (the test
    fails with it, chained, and ``planned`` launches named); a launch recorded as raised
    elsewhere (a child process) fails the test as well. Under ``--gemmcheck-accept`` a
    regression does not fail: this run becomes the baseline instead."""
    baseline = baseline_for(result)
    verdict = judge(result, baseline, alpha=settings.alpha, worst_factor=settings.worst_factor,
                    static_policy=settings.static)
    result.verdict = verdict.kind
    result.baseline = {"source": baseline.source, "description": baseline.description,
                       "launches": baseline.evidence.launches, "bad_launches": baseline.evidence.bad}
    raised_launches = [launch for launch in result.launches if RAISED in launch.kinds]
    result.message = failure_message(result, verdict) if (verdict.kind != "pass" or raised_launches) else ""
    failure: GemmcheckFailure | None = None
    if raised is not None:
        last = result.launches[-1]
        trace = "".join(traceback.format_exception_only(type(raised), raised)).strip()
        failure = LaunchError(f"launch {last.index} of {planned or len(result.launches)} raised {trace}\n{result.message}")
        failure.__cause__ = raised
    elif raised_launches:
        failure = LaunchError(result.message)
    elif verdict.failed and not settings.accept:
        failure = GemmcheckFailure(result.message)
    return Conclusion(verdict, failure)
