"""A case's compiled kernels, seen without running them: static metrics (VGPRs, SGPRs, spills,
LDS bytes, MFMAs) and the LDS-race lint, recorded with the case and compared with its history.

``case.compile_flydsl(spec)`` compiles a FlyDSL kernel for a named arch in a child process
(no GPU needed), and ``case.check_assembly(texts)`` takes assembly from anywhere else; both
record a result of the case that carries this ``static`` record and no launches, judged by
its lint findings and by what changed since the case's last recorded metrics.
"""

from __future__ import annotations

from ..errors import CaseError

FINDINGS_KEPT = 5  # findings stored in full per result; the counts are always complete


def analyse(assemblies: list[tuple[str, str]], *, lint: bool = True, source: str = "") -> dict:
    """The static record of assembly texts, given as (name, text) pairs."""
    from .flydsl.metrics import metrics_from_asm

    metrics: dict = {}
    for _, text in assemblies:
        metrics.update(metrics_from_asm(text))
    record = {"source": source, "metrics": metrics}
    if lint:
        from .lint.analysis import lint_text
        from .lint.findings import format_finding

        counts = dict.fromkeys(("errors", "latent", "warnings", "unchecked"), 0)
        findings: list[str] = []
        for name, text in assemblies:
            report = lint_text(text, name)
            for key, found in (
                ("errors", report.errors),
                ("latent", report.latent),
                ("warnings", report.warnings),
                ("unchecked", report.unchecked),
            ):
                counts[key] += len(found)
            findings += [format_finding(name, finding) for finding in report.findings if finding.severity != "note"]
        record["lint"] = {**counts, "findings": findings[:FINDINGS_KEPT]}
    return record


def compile_flydsl(spec: str, params: dict | None, arch: str) -> list[tuple[str, str]]:
    """Compile a FlyDSL kernel spec ('module.py:function') for ``arch``; its assembly texts."""
    from .flydsl.compile import compile_spec

    compiled = compile_spec(spec, params, arch=arch)
    if not compiled.ok:
        raise CaseError(f"cannot compile {spec} for {arch}: {compiled.error}")
    return [(assembly.kernel, assembly.text) for assembly in compiled.assembly]


def changes(previous: dict | None, current: dict) -> list[str]:
    """What moved in the metrics since the previous record ('new VGPR spill: 0 -> 12', ...)."""
    if not previous or not previous.get("metrics"):
        return []
    from .flydsl.metrics import compare_metrics

    return compare_metrics(previous["metrics"], current.get("metrics", {}))
