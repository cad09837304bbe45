"""Judging a result against its baseline (see baseline.py for where baselines come from).

Flakiness is a rate, judged with a one-sided Fisher exact test of the current bad/launches
against the baseline's (stats.fisher_greater says why Fisher). A baseline with no bad launch
(clean, or a history or golden of 0/n) makes any bad launch a regression: a kernel that never
failed and now fails has regressed, whatever the p-value. Launches are not independent
when a race is decided per process, so counts are first divided by the design effect estimated
from the per-process rates (stats.design_effect), and the evidence is also stated per process.

Error counts regress when the worst wrong-element count grows by more than ``worst_factor``
over the baseline's, when wrong tiles spread by as much, or when a failure kind appears that
the baseline never had (the first NaN, the first inconsistent launch). A launch that raised or
hung is a regression whatever the baseline: the test fails with its exception, so no verdict
may call it known-bad or a pass.

A compute-sanitizer run that reported an error-severity hazard on the kernel under test is a
regression whatever the launches said: one sanitized launch proves a race that any number of
clean launches only make unlikely. Its warnings are stated, never failed on. A sanitizer run
that did not run to a report (skipped: no toolkit, a CPU or ROCm device; timed out; failed) is
stated in the evidence, never taken as clean, and is no finding about the kernel: under
``require_sanitize`` it is an unmet requirement (``unmet_requirements``), which fails the test
(judging/conclude.py) while the verdict stays what the launches say.

Verdicts: regression (fails the test) > improved (better beyond chance: passes, says how to
accept) > known-bad (a bad rate that holds: accepted by a golden, or as bad as the history
was) > pass. A result with any bad launch is never a pass: against a history that was bad
too, and no golden, it is known-bad and says that no golden accepts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config.table import DEFAULTS
from ..records.result import HUNG, RAISED, CaseResult, CompiledResult
from ..records.sanitize import HAZARD, RAN
from .baseline import CLEAN, Baseline, Evidence
from .stats import design_effect, effective_counts, fisher_greater, fisher_less

PASS = "pass"
REGRESSION = "regression"
IMPROVED = "improved"
KNOWN_BAD = "known-bad"

# kinds of launch that end the case and fail its test with their exception
FAILING_KINDS = (RAISED, HUNG)

KIND_WORDS = {
    "bad_output": "a launch produced no usable output",
    "wrote_outside": "a launch wrote outside its output",
    "changed_input": "a launch changed its inputs",
    "unwritten": "a launch wrote nothing",
    "nonfinite": "non-finite elements",
    "inconsistent": "launches that differ from the consensus",
    "ranks_disagree": "ranks whose outputs disagree where the collective gives every rank the same bits",
    "wrong": "wrong elements",
    HAZARD: "a compute-sanitizer hazard",
}
FINDINGS_SHOWN = 3  # a hazard's first reports in the evidence, per sanitizer run


@dataclass
class Verdict:
    kind: str
    reasons: list[str] = field(default_factory=list)
    p_value: float | None = None
    lines: list[str] = field(default_factory=list)  # the evidence, for the message

    @property
    def failed(self) -> bool:
        return self.kind == REGRESSION


def judge(
    result: CaseResult,
    baseline: Baseline = CLEAN,
    *,
    alpha: float = DEFAULTS.alpha,
    worst_factor: float = DEFAULTS.worst_factor,
    static_policy: str = DEFAULTS.static,
    processes: int = 1,
) -> Verdict:
    """``processes``: the fresh processes the session spread the case over (--gemmcheck-processes);
    the advice to use several is given only where it asked for one."""
    if isinstance(result, CompiledResult):
        return judge_static(result, baseline, static_policy)
    current = Evidence.of(result)
    base = baseline.evidence
    failing = failing_launches(result)
    reasons = [failing_words(failing)] if failing else []
    lines = [f"current: {current.describe()}", f"baseline: {_baseline_words(baseline)}"]
    if current.ranks:
        lines.append(
            "ranks cluster like processes: each rank is a process, and its launches are counted as one "
            "cluster (a race decided per rank shows on most of that rank's launches)"
        )
    sanitizer_reasons, sanitizer_lines = judge_sanitizer(result)
    reasons += sanitizer_reasons

    deff_now, deff_base = design_effect(current.per_process), design_effect(base.per_process)
    bad_now, launches_now = effective_counts(current.bad, current.launches, deff_now)
    bad_base, launches_base = effective_counts(base.bad, base.launches, deff_base)
    for name, deff, evidence, eff in (
        ("current", deff_now, current, (bad_now, launches_now)),
        ("baseline", deff_base, base, (bad_base, launches_base)),
    ):
        if deff > 1.0:
            lines.append(
                f"{name} launches cluster by {evidence.cluster} (design effect {deff:.1f} over "
                f"{evidence.processes} {_clusters(evidence)}): counted as {eff[0]}/{eff[1]} independent "
                "launches"
            )

    p_value = None
    if base.launches:
        p_value = fisher_greater(bad_now, launches_now, bad_base, launches_base)
        lines.append(
            f"test: one-sided Fisher exact, p = {p_value:.3g} that the bad-launch rate is not worse (alpha {alpha:g})"
        )
    if current.bad and base.bad == 0:
        what = (
            "a clean baseline"
            if baseline.source == "clean"
            else f"a baseline without bad launches ({base.bad}/{base.launches})"
        )
        reasons.append(f"{current.bad} bad launch{'es' if current.bad != 1 else ''} against {what}")
    elif current.bad and p_value is not None and p_value < alpha:
        reasons.append(
            f"bad-launch rate {current.bad}/{current.launches} is worse than the baseline's "
            f"{base.bad}/{base.launches} (p = {p_value:.3g} < {alpha:g})"
        )

    if current.processes > 1 or base.processes > 1:
        p_process = (
            fisher_greater(current.bad_processes, current.processes, base.bad_processes, base.processes)
            if base.processes
            else None
        )
        unit = current.cluster
        line = (
            f"{unit} level: {current.bad_processes}/{current.processes} {_clusters(current)} with a bad launch, "
            f"baseline {base.bad_processes}/{base.processes}"
        )
        if p_process is not None:
            line += f" (Fisher p = {p_process:.3g})"
        lines.append(line)
        if reasons and p_process is not None and p_process < alpha and current.processes > 1:
            reasons.append(
                f"at the {unit} level too: {current.bad_processes}/{current.processes} {_clusters(current)} "
                f"bad against {base.bad_processes}/{base.processes}"
            )
    if current.processes <= 1 and current.launches and processes <= 1:
        lines.append(
            "note: the current evidence rests on a single process; races decided per process (at load or "
            "JIT time) need several: --gemmcheck-processes=N"
        )
    elif current.processes <= 1 and current.launches:
        lines.append(
            f"note: the current evidence rests on a single process of the {processes} asked for "
            "(--gemmcheck-processes): the others ran no launch"
        )

    # error counts and failure kinds, against a baseline that has seen bad launches (against
    # one that has not, any bad launch is already a regression above)
    if base.launches and base.bad:
        if current.worst_wrong > worst_factor * base.worst_wrong and current.worst_wrong > 0:
            reasons.append(
                f"worst launch has {current.worst_wrong:,} wrong elements, more than {worst_factor:g}x the "
                f"baseline's {base.worst_wrong:,}"
            )
        if base.worst_tiles and current.worst_tiles > worst_factor * base.worst_tiles:
            reasons.append(
                f"wrong tiles spread: {current.worst_tiles} in the worst launch, baseline {base.worst_tiles}"
            )
        new_kinds = [
            kind for kind in current.kinds if kind not in base.kinds and kind not in ("wrong", HAZARD, *FAILING_KINDS)
        ]
        for kind in new_kinds:
            reasons.append(f"{KIND_WORDS.get(kind, kind)} where the baseline had none")

    lines += sanitizer_lines
    if reasons:
        return Verdict(REGRESSION, reasons, p_value, lines)
    if base.bad:
        p_better = fisher_less(bad_now, launches_now, bad_base, launches_base)
        if p_better < alpha:
            return Verdict(
                IMPROVED,
                [
                    f"better than the baseline: {current.bad}/{current.launches} against {base.bad}/{base.launches} "
                    f"(p = {p_better:.3g}); accept it with --gemmcheck-accept"
                ],
                p_better,
                lines,
            )
        if baseline.accepts_bad:
            return Verdict(KNOWN_BAD, [f"a known bad rate, accepted by {baseline.description}, holds"], p_value, lines)
    if current.bad:
        # Only a history that had bad launches too gets here (a baseline without any made them a
        # regression above): as bad as before, which no golden accepts. Never a pass.
        return Verdict(
            KNOWN_BAD,
            [
                f"as bad as its history: {current.bad}/{current.launches} against {base.bad}/{base.launches} "
                f"from {baseline.description}; no golden accepts it: fix the kernel, or accept the rate with "
                "--gemmcheck-accept to track it as a known bug"
            ],
            p_value,
            lines,
        )
    return Verdict(PASS, [], p_value, lines)


def judge_sanitizer(result: CaseResult) -> tuple[list[str], list[str]]:
    """The compute-sanitizer runs of a result: (reasons it is a regression, lines of evidence).
    An error-severity hazard is a reason whatever the launches said, with its summary line and
    first reports as evidence; warnings are evidence only; a run that was skipped, timed out or
    failed is said, never a reason: it found nothing about the kernel."""
    reasons, lines = [], []
    for run in result.sanitize:
        if run.has_hazard:
            reasons.append(f"compute-sanitizer {run.summary()}")
            first = [finding.describe() for finding in run.findings if finding.is_error][:FINDINGS_SHOWN]
            if first:
                lines.append(f"compute-sanitizer {run.tool}, its first error report{'s' if len(first) > 1 else ''}:")
                lines += [f"  {text}" for text in first]
        elif run.status != RAN:
            lines.append(f"compute-sanitizer {run.summary()}: not checked, not passed")
        else:
            lines.append(
                f"compute-sanitizer {run.summary()}"
                + (" (warnings are reported, not failed on)" if run.warnings else "")
            )
    return reasons, lines


def unmet_requirements(result: CaseResult, *, require_sanitize: bool = False) -> list[str]:
    """What the session required of a result's checking and did not get: under
    ``require_sanitize`` (--gemmcheck-require-sanitize), each sanitizer run that did not run to a
    report. A failure of the requirement, not a finding about the kernel: the test fails, the
    verdict stays the launches'."""
    if not require_sanitize or isinstance(result, CompiledResult):
        return []
    return [
        f"compute-sanitizer {run.summary()} (--gemmcheck-require-sanitize: the launch must be sanitized)"
        for run in result.sanitize
        if run.status != RAN
    ]


def failing_launches(result: CaseResult) -> list:
    """The launches that raised or hung."""
    return [
        launch for launch in result.launches if launch.kinds and any(kind in launch.kinds for kind in FAILING_KINDS)
    ]


def failing_words(launches: list) -> str:
    """Those launches in words, for a verdict's reasons and the summary line: 'launch 3 raised
    RuntimeError: ...', 'launch 2 hung: did not finish ...', '3 launches raised; the first, launch
    1, raised ...'."""

    def verb(launch) -> str:
        return "hung:" if HUNG in launch.kinds else "raised"

    first = launches[0]
    if len(launches) == 1:
        return f"{first.label} {verb(first)} {first.error}"
    verbs = " or ".join(sorted({verb(launch).rstrip(":") for launch in launches}))
    return f"{len(launches)} launches {verbs}; the first, {first.label}, {verb(first)} {first.error}"


def judge_static(result: CompiledResult, baseline: Baseline, policy: str) -> Verdict:
    """A compiled kernel, not run: its lint findings and what changed in its metrics since the
    case's last record. ``policy`` "fail" makes either a regression; "report" only states it."""
    from ..compiled.static import changes

    static = result.static
    lines, problems = [], []
    lint = static.get("lint")
    if lint is not None:
        latent, unchecked = lint.get("latent", 0), lint.get("unchecked", 0)
        lines.append(
            f"lint: {lint['errors']} error(s), {lint['warnings']} warning(s)"
            + "".join(f", {lint[key]} {key}" for key in ("latent", "unchecked") if lint.get(key))
        )
        lines += ["  " + finding.splitlines()[0] for finding in lint["findings"]]
        if lint["errors"]:
            problems.append(
                f"the LDS-race lint found {lint['errors']} read(s) of LDS that a DMA load may not have finished writing"
            )
        if unchecked:
            problems.append(f"the LDS-race lint could not check {unchecked} access(es) or kernel(s)")
        if latent and policy == "latent":
            problems.append(
                f"the LDS-race lint found {latent} read(s) ordered only by elapsed time across a barrier-phase offset"
            )
    moved = changes(baseline.static, static)
    if baseline.static:
        lines.append("static metrics since the last record: " + ("; ".join(moved) if moved else "unchanged"))
        problems += [f"static metrics changed: {change}" for change in moved]
    else:
        lines.append("static metrics: first record of this case")
    if problems and policy in ("fail", "latent"):
        return Verdict(REGRESSION, problems, None, lines)
    return Verdict(PASS, [], None, lines + [f"(reported, not failed: {problem})" for problem in problems])


def _clusters(evidence: Evidence) -> str:
    """What the per-process counts are counts of: 'processes', or 'rank processes' (a process per
    rank and run) in a collective case."""
    return "rank processes" if evidence.ranks else "processes"


def _baseline_words(baseline: Baseline) -> str:
    if baseline.source == "clean":
        return "clean (no history, no golden: no bad launch expected)"
    return f"{baseline.evidence.describe()}, from {baseline.description}"
