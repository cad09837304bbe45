"""Lint a kernel: simulate its waves under each branch scenario, find hazards, aggregate."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .asm import AsmModule, Kernel, parse
from .hazards import Hazard, WaveSet, find_hazards
from .findings import Finding, LintReport, LoadRef
from .simulate import BranchChoices, Geometry, Limits, WaveTrace, merge_ranges, simulate

# Targets whose work-item ids arrive packed in v0 (x | y << 10 | z << 20).
_PACKED_ID_ARCHS = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx12")


@dataclass(frozen=True)
class Options:
    workgroup_size: tuple[int, int, int] | None = None  # when the metadata does not say
    limits: Limits = Limits()
    max_scenarios: int = 16


def geometry_of(module: AsmModule, kernel: Kernel, options: Options) -> Geometry:
    size = options.workgroup_size
    reqd = kernel.metadata.get(".reqd_workgroup_size")
    if size is None and isinstance(reqd, list) and len(reqd) == 3:
        size = (int(reqd[0]), int(reqd[1]), int(reqd[2]))
    if size is None:
        flat = kernel.metadata.get(".max_flat_workgroup_size") or 256
        size = (int(flat), 1, 1)
    wave_size = int(kernel.metadata.get(".wavefront_size") or 64)
    id_dims = kernel.descriptor.get("amdhsa_system_vgpr_workitem_id", 0) + 1
    packed = module.arch.startswith(_PACKED_ID_ARCHS)
    return Geometry(size=size, wave_size=wave_size, packed_ids=packed, id_dims=id_dims)


def _scenario_text(choices: BranchChoices) -> str:
    forced = [(choices.where[k], k[1], taken) for k, taken in choices.forced.items() if k in choices.where]
    return "; ".join(
        f"the branch at line {inst.line} is {'taken' if taken else 'not taken'} on visit {occ + 1}"
        for inst, occ, taken in sorted(forced, key=lambda t: (t[0].line, t[1]))
    )


def _scenarios(kernel: Kernel, geometry: Geometry, options: Options):
    """Yield (choices, traces) for each combination of unknown-branch decisions, breadth first."""
    queue: deque[tuple[dict, int]] = deque([({}, 0)])
    runs = 0
    while queue and runs < options.max_scenarios:
        forced, start = queue.popleft()
        choices = BranchChoices(forced, loop_unroll=options.limits.loop_unroll)
        traces = simulate(kernel, geometry, choices, options.limits)
        runs += 1
        yield choices, traces
        order = list(choices.seen.items())
        for i in range(start, len(order)):
            key, taken = order[i]
            child = dict(order[:i])
            child[key] = not taken
            queue.append((child, i + 1))
    if queue:
        yield None, len(queue)


def lint_kernel(module: AsmModule, kernel: Kernel, options: Options = Options()) -> tuple[list[Finding], list[str]]:
    geometry = geometry_of(module, kernel, options)
    grouped: dict[tuple[int, str], list[tuple[Hazard, str]]] = {}
    notes: list[str] = []
    unresolved: dict[int, tuple[str, set[int]]] = {}
    for choices, traces in _scenarios(kernel, geometry, options):
        if choices is None:
            notes.append(
                f"{kernel.name}: {traces} branch scenario(s) left unexplored after {options.max_scenarios}"
            )
            break
        scenario = _scenario_text(choices)
        _note_traces(kernel, traces, notes, unresolved)
        for hazard in find_hazards(WaveSet.of(traces)):
            grouped.setdefault((hazard.read.inst.line, hazard.severity), []).append((hazard, scenario))
    findings = [_finding(kernel, items) for items in grouped.values()]
    for line, (text, waves) in sorted(unresolved.items()):
        findings.append(
            Finding(
                severity="note",
                kind="unresolved-address",
                kernel=kernel.name,
                line=line,
                instruction=text,
                reader_waves=sorted(waves),
                why="the LDS address depends on values the model does not know; this access was not checked",
            )
        )
    findings.sort(key=lambda f: ({"error": 0, "warning": 1, "note": 2}[f.severity], f.line))
    return findings, notes


def _note_traces(kernel: Kernel, traces: list[WaveTrace], notes: list[str], unresolved: dict) -> None:
    for trace in traces:
        for note in trace.notes:
            message = f"{kernel.name}: {note}"
            if message not in notes:
                notes.append(message)
        for event in trace.events:
            if event.kind in ("dma", "ds_read") and event.ranges is None:
                unresolved.setdefault(event.inst.line, (event.inst.text, set()))[1].add(trace.wave)


def _finding(kernel: Kernel, items: list[tuple[Hazard, str]]) -> Finding:
    # explain with a pair of different waves when there is one: that is where barriers matter
    first, scenario = next(((h, s) for h, s in items if h.reader != h.writer), items[0])
    own = sum(1 for h, _ in items if h.reader == h.writer)
    loads: dict[int, LoadRef] = {}
    lds: list[tuple[int, int]] = []
    readers: set[int] = set()
    for hazard, _ in items:
        readers.add(hazard.reader)
        lds.extend(hazard.lds)
        ref = loads.setdefault(hazard.load.inst.line, LoadRef(hazard.load.inst.line, hazard.load.inst.text, []))
        if hazard.writer not in ref.waves:
            ref.waves.append(hazard.writer)
    for ref in loads.values():
        ref.waves.sort()
    kind = "read-before-load-retires" if first.severity == "error" else "refill-overtakes-read"
    return Finding(
        severity=first.severity,
        kind=kind,
        kernel=kernel.name,
        line=first.read.inst.line,
        instruction=first.read.inst.text,
        lds=list(merge_ranges(lds)),
        reader_waves=sorted(readers),
        loads=sorted(loads.values(), key=lambda r: r.line),
        instances=len(items),
        why=first.why + (f" ({own} of the instances are a wave reading its own load.)" if own and first.reader != first.writer else ""),
        scenario=scenario,
    )


def lint_text(text: str, path: str = "<text>", options: Options = Options(), kernels: list[str] | None = None) -> LintReport:
    """Lint every kernel (or the named ones) in an assembly text."""
    module = parse(text, path)
    report = LintReport(path=path)
    for name, kernel in module.kernels.items():
        if not kernel.instructions or (kernels and name not in kernels):
            continue
        findings, notes = lint_kernel(module, kernel, options)
        report.kernels.append(name)
        report.findings.extend(findings)
        report.notes.extend(notes)
    if not report.kernels:
        report.notes.append("no kernel code found")
    return report


def lint_file(path: str, options: Options = Options(), kernels: list[str] | None = None) -> LintReport:
    with open(path, encoding="utf-8") as handle:
        return lint_text(handle.read(), path, options, kernels)
