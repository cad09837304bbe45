"""Lint a kernel and aggregate what it found into findings.

Two engines share the parser, the register model and the findings:

* ``dataflow`` (the default, :mod:`.dataflow`): a fixed point over the workgroup's barrier
  phases. Its cost grows with the code, it ends on every kernel (or at ``time_limit``), and it
  says what it could not check.
* ``paths`` (:mod:`.paths` and :mod:`.hazards`): every wave simulated along concrete paths,
  loops unrolled ``loop_unroll`` times, up to ``max_scenarios`` branch scenarios. It enumerates
  paths, so it serves as the brute-force reference the dataflow engine is tested against on
  small kernels, and as the baseline of ``benchmarks/lint_scaling.py``.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from dataclasses import dataclass, replace

from . import dataflow, phase_states
from .asm import AsmModule, Kernel, parse
from .findings import SEVERITIES, Finding, LintReport, LoadRef
from .hazards import Hazard, WaveSet, find_hazards
from .lds_ranges import merge_ranges
from .paths import BranchChoices, Limits, WaveTrace, simulate
from .targets import target_of
from .workgroup import Geometry

# Targets whose work-item ids arrive packed in v0 (x | y << 10 | z << 20).
_PACKED_ID_ARCHS = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx12")


@dataclass(frozen=True)
class Options:
    workgroup_size: tuple[int, int, int] | None = None  # when the metadata does not say
    limits: Limits = Limits()  # the paths engine's bounds
    max_scenarios: int = 16  # the paths engine's branch scenarios
    engine: str = "dataflow"  # or "paths"
    time_limit: float = 30.0  # seconds for one assembly text, all its kernels


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
    field = kernel.descriptor.get
    kernarg = None
    if field("amdhsa_user_sgpr_kernarg_segment_ptr"):
        # user SGPRs in the ABI's order: private segment buffer (4), dispatch ptr (2), queue ptr (2), kernarg ptr
        kernarg = (
            4 * field("amdhsa_user_sgpr_private_segment_buffer", 0)
            + 2 * field("amdhsa_user_sgpr_dispatch_ptr", 0)
            + 2 * field("amdhsa_user_sgpr_queue_ptr", 0)
        )
    # then the workgroup ids and info; the private segment's wave offset, last, differs by wave
    entry = field("amdhsa_user_sgpr_count", 0) + sum(
        1
        for name in ("workgroup_id_x", "workgroup_id_y", "workgroup_id_z", "workgroup_info")
        if field(f"amdhsa_system_sgpr_{name}", 0)
    )
    return Geometry(
        size=size, wave_size=wave_size, packed_ids=packed, id_dims=id_dims, entry_sgprs=entry, kernarg_sgpr=kernarg
    )


def _scenario_text(choices: BranchChoices) -> str:
    forced = [(choices.where[k], k[1], taken) for k, taken in choices.forced.items() if k in choices.where]
    return "; ".join(
        f"the branch at line {inst.line} is {'taken' if taken else 'not taken'} on visit {occ + 1}"
        for inst, occ, taken in sorted(forced, key=lambda t: (t[0].line, t[1]))
    )


def _scenarios(kernel: Kernel, geometry: Geometry, options: Options, deadline: float = float("inf")):
    """Yield (choices, traces) for each combination of unknown-branch decisions, breadth first;
    (None, scenarios left) when the bound or the deadline stops it first."""
    queue: deque[tuple[dict, int]] = deque([({}, 0)])
    runs = 0
    while queue and runs < options.max_scenarios and time.monotonic() <= deadline:
        forced, start = queue.popleft()
        choices = BranchChoices(forced, loop_unroll=options.limits.loop_unroll)
        traces = simulate(kernel, geometry, choices, replace(options.limits, deadline=deadline))
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


def lint_kernel(
    module: AsmModule, kernel: Kernel, options: Options = Options(), deadline: float = float("inf")
) -> tuple[list[Finding], list[str], bool]:
    """The paths engine: findings and notes of one kernel, and whether it finished before ``deadline``."""
    geometry = geometry_of(module, kernel, options)
    grouped: dict[tuple[int, str], list[tuple[Hazard, str]]] = {}
    notes: list[str] = []
    unresolved: dict[int, tuple[str, set[int]]] = {}
    unexplored = 0
    cut: dict[str, None] = {}  # why traces stopped short of the wave's end (in order, once each)
    for choices, traces in _scenarios(kernel, geometry, options, deadline):
        if choices is None:
            unexplored = traces
            stopped = (
                f"the time limit ({options.time_limit:g} s)"
                if time.monotonic() > deadline
                else str(options.max_scenarios)
            )
            notes.append(f"{kernel.name}: {traces} branch scenario(s) left unexplored after {stopped}")
            break
        scenario = _scenario_text(choices)
        _note_traces(kernel, traces, notes, unresolved)
        cut.update((trace.notes[-1], None) for trace in traces if trace.end != "endpgm" and trace.notes)
        for hazard in find_hazards(WaveSet.of(traces)):
            grouped.setdefault((hazard.read.inst.line, hazard.severity), []).append((hazard, scenario))
    findings = [_finding(kernel, items) for items in grouped.values()]
    for line, (text, waves) in sorted(unresolved.items()):
        findings.append(
            Finding(
                severity="unchecked",
                kind="unresolved-address",
                kernel=kernel.name,
                line=line,
                instruction=text,
                reader_waves=sorted(waves),
                why="the LDS address depends on values the model does not know; this access was not checked",
            )
        )
    finished = time.monotonic() <= deadline
    if not finished:
        findings.append(
            Finding(
                severity="unchecked",
                kind="unfinished",
                kernel=kernel.name,
                line=0,
                instruction="",
                why=f"the time limit ({options.time_limit:g} s) stopped the path engine on "
                f"{kernel.name}"
                f"{f' with {unexplored} branch scenario(s) left' if unexplored else ''}: "
                "what it did not reach was not checked",
            )
        )
    elif unexplored:
        findings.append(
            Finding(
                severity="unchecked",
                kind="not-followed",
                kernel=kernel.name,
                line=0,
                instruction="",
                why=f"{unexplored} branch scenario(s) were left unexplored after --max-scenarios "
                f"{options.max_scenarios}: what only they reach was not checked",
            )
        )
    if finished and cut:
        shown = list(cut)
        findings.append(
            Finding(
                severity="unchecked",
                kind="not-followed",
                kernel=kernel.name,
                line=0,
                instruction="",
                why="a wave's trace stopped before its end ("
                + "; ".join(shown[:3])
                + (f"; and {len(shown) - 3} more" if len(shown) > 3 else "")
                + ")",
            )
        )
    findings.sort(key=_order)
    return findings, notes, finished


def _order(finding: Finding) -> tuple[int, int]:
    return SEVERITIES.index(finding.severity), finding.line


_KINDS = {"error": "read-before-load-retires", "latent": "read-across-phase-offset", "warning": "refill-overtakes-read"}
# a DS write of one wave and a read of another that nothing orders: the read means to see the
# write, or the write may overtake the read
_DS_KINDS = {"error": "ds-write-races-read", "warning": "ds-write-overtakes-read"}


def _kind(hazard: phase_states.Hazard) -> str:
    return (_DS_KINDS if hazard.how.startswith("ds-") else _KINDS)[hazard.severity]


def lint_kernel_dataflow(
    module: AsmModule, kernel: Kernel, options: Options, deadline: float
) -> tuple[list[Finding], list[str], bool]:
    """The dataflow engine: findings of one kernel, its unmodelled instructions, whether it finished."""
    geometry = geometry_of(module, kernel, options)
    outcome = dataflow.analyse(kernel, geometry, target_of(module.arch), deadline)
    code = kernel.instructions
    grouped: dict[tuple[int, str], list[phase_states.Hazard]] = {}
    for hazard in outcome.hazards:
        grouped.setdefault((code[hazard.read].line, hazard.severity, _kind(hazard)), []).append(hazard)
    findings = [_dataflow_finding(kernel, items) for items in grouped.values()]
    for item in outcome.unchecked.values():
        inst = code[item.site]
        findings.append(
            Finding(
                severity="unchecked",
                kind="unresolved-address" if "not known" in item.why else "not-followed",
                kernel=kernel.name,
                line=inst.line,
                instruction=inst.text,
                reader_waves=sorted(item.waves),
                why=item.why + _incomplete_hint(outcome) + _merged_hint(sorted(item.merged)),
            )
        )
    for item in outcome.undecided.values():
        inst = code[item.site]
        findings.append(
            Finding(
                severity="note",
                kind="ds-write-undecided",
                kernel=kernel.name,
                line=inst.line,
                instruction=inst.text,
                reader_waves=sorted(item.waves),
                why=item.why + _incomplete_hint(outcome) + _merged_hint(sorted(item.merged)),
            )
        )
    if not outcome.finished:
        findings.append(
            Finding(
                severity="unchecked",
                kind="unfinished",
                kernel=kernel.name,
                line=0,
                instruction="",
                why=f"the time limit ({options.time_limit:g} s) stopped the analysis of {kernel.name} "
                f"after {outcome.states} workgroup states: what it did not reach was not checked",
            )
        )
    findings.sort(key=_order)
    incomplete = [f"{kernel.name}:{line}: {text}" for line, text in sorted(outcome.incomplete.items())]
    return findings, incomplete, outcome.finished


def _incomplete_hint(outcome: phase_states.Outcome) -> str:
    if not outcome.incomplete:
        return ""
    lines = ", ".join(str(line) for line in sorted(outcome.incomplete)[:4])
    return f" (instructions the model does not know made registers unknown, e.g. at line(s) {lines})"


def _merged_hint(merged: list[str]) -> str:
    if not merged:
        return ""
    return " It was found in a state the analysis approximated (" + "; ".join(merged) + "): it may be an over-report."


def _dataflow_finding(kernel: Kernel, items: list[phase_states.Hazard]) -> Finding:
    code = kernel.instructions
    # the same finding whatever order the analysis met its pairs in (set orders vary by run)
    items = sorted(
        items,
        key=lambda h: (h.reader == h.writer, h.reader, h.writer, h.load, h.lds, h.how, h.trace, h.barriers, h.cover),
    )
    first = items[0]
    loads: dict[int, LoadRef] = {}
    lds: list[tuple[int, int]] = []
    for hazard in items:
        lds.extend(hazard.lds)
        load = code[hazard.load]
        ref = loads.setdefault(load.line, LoadRef(load.line, load.text, []))
        if hazard.writer not in ref.waves:
            ref.waves.append(hazard.writer)
    for ref in loads.values():
        ref.waves.sort()
    distinct = {(h.read, h.load, h.reader, h.writer, h.lds) for h in items}
    why = _why(kernel, first)
    if first.barriers:
        why += f" Barriers: {first.barriers}."
    why += _merged_hint(sorted({m for h in items for m in h.merged}))
    return Finding(
        severity=first.severity,
        kind=_kind(first),
        kernel=kernel.name,
        line=code[first.read].line,
        instruction=code[first.read].text,
        lds=list(merge_ranges(lds)),
        reader_waves=sorted({h.reader for h in items}),
        loads=sorted(loads.values(), key=lambda r: r.line),
        instances=len(distinct),
        why=why,
        cover=_widest_cover(first, items),
        barriers=first.barriers,
        trace=list(first.trace),
    )


def _widest_cover(first: phase_states.Hazard, items: list[phase_states.Hazard]) -> str:
    """The wait that orders every load of the finding: the smallest vmcnt among its pairs' covers
    (one pair's youngest load may leave older ones of the same read behind it)."""
    covers = [h.cover for h in items if h.severity == first.severity and h.how == first.how]
    counted = [(int(m.group(1)), cover) for cover in covers if (m := _VMCNT.search(cover))]
    return min(counted)[1] if counted else first.cover


_VMCNT = re.compile(r"vmcnt\((\d+)\)")


def _why(kernel: Kernel, h: phase_states.Hazard) -> str:
    code = kernel.instructions
    read, load = code[h.read].line, code[h.load].line
    v, w = h.reader, h.writer
    if h.how == "ds-concurrent" and h.severity == "error":
        return (
            f"Wave {w} writes bytes at line {load} that wave {v} reads at line {read} in the same barrier phase, "
            f"after issuing its own copy of that write (so it means to see wave {w}'s): no barrier both waves "
            f"pass lies between them."
        )
    if h.how == "ds-concurrent":
        return (
            f"Wave {w} overwrites bytes at line {load} that wave {v} reads at line {read} before issuing its own "
            f"copy of that write, in the same barrier phase: no barrier both waves pass lies between them, so "
            f"the write may overtake the read; only the time wave {w} takes to reach it orders them."
        )
    if h.how == "ds-in-flight":
        return (
            f"Wave {v}'s read at line {read} is still in flight when it passes its barrier (no lgkmcnt wait "
            f"retires it), and wave {w} overwrites those bytes at line {load} after that barrier: the write "
            f"may overtake the read."
        )
    if h.how == "ds-visible" and "ended" in h.barriers:
        return (
            f"Wave {w} writes bytes at line {load} in its last phase and ends; wave {v} reads them at line "
            f"{read} later, but no rendezvous orders an ended wave's writes."
        )
    if h.how == "ds-visible":
        return (
            f"Wave {w} still had its DS write at line {load} in flight when it passed its last barrier (no "
            f"lgkmcnt wait retired it), and wave {v} reads those bytes at line {read} before any later "
            f"rendezvous: s_barrier is a rendezvous, not a completion wait."
        )
    if h.how == "own" and h.severity == "error":
        return (
            f"Wave {v} issued the load at line {load} and reads the bytes it writes at line {read} without any "
            f"wait that retires it in between on some path."
        )
    if h.how == "own":
        return (
            f"Wave {v} refills bytes with the load at line {load} while its read at line {read} may still be in "
            f"flight (no lgkmcnt wait retires it first): the refill may overtake the read."
        )
    if h.how == "visible" and h.severity == "warning":
        return (
            f"Wave {w} refills the bytes wave {v} reads at line {read} with the load at line {load}, issued before "
            f"its last barrier and still in flight; wave {v} reads them expecting what they held before (it "
            f"issues its own part of that load only later): the refill may overtake the read."
        )
    if h.how in ("visible", "visible-offset"):
        text = (
            f"Wave {w} still had the load at line {load} in flight when it passed its last barrier, and wave {v} "
            f"reads the bytes it writes at line {read} before any later rendezvous: s_barrier is a rendezvous, "
            f"not a completion wait."
        )
        if h.severity == "latent":
            text += (
                f" Wave {w} does retire the load before its next barrier, but that barrier pairs with another "
                f"of wave {v}'s: the waves run a barrier phase apart. The load was in flight at wave {w}'s "
                f"barrier before that one too, so a whole barrier phase lies between its issue and the read: "
                f"only that elapsed time orders the read."
            )
        elif h.how == "visible-offset":
            text += (
                f" Wave {w} retires the load before its next barrier, which pairs with a later barrier of wave "
                f"{v}'s (the waves run a barrier phase apart), but it issued the load in the barrier phase that "
                f"ended at this rendezvous: the offset adds no elapsed time, and the read is as unordered as one "
                f"behind a barrier with no wait."
            )
        return text
    if h.how == "after-end":
        return (
            f"Wave {w} issues the load at line {load} after its last barrier and ends without waiting for it; wave "
            f"{v} reads the bytes it writes at line {read} later, but no rendezvous orders an ended wave's loads: "
            + (
                "the read means to see the load (wave " + str(v) + " issued its own part before)."
                if h.severity == "error"
                else "the load may overtake the read."
            )
        )
    if h.how == "concurrent" and h.severity == "error":
        where = "passes no barrier before it" if "no barrier" in h.barriers else "reads in the same barrier phase"
        return (
            f"Wave {v} issued its own part of the load at line {load} before its read at line {read}, so it means "
            f"to see the whole load; wave {w} issues its part in the same barrier phase, and wave {v} {where}: "
            f"nothing orders wave {w}'s load before the read."
        )
    if h.how == "concurrent":
        return (
            f"Wave {w} refills LDS that wave {v}'s read at line {read} takes, with the load at line {load} in the "
            f"same barrier phase: the refill may overtake the read; only the DMA's latency would keep it safe."
        )
    return (
        f"Wave {v}'s read at line {read} is still in flight when it passes its barrier (no lgkmcnt wait "
        f"retires it), and wave {w} refills those bytes with the load at line {load} after that barrier: the "
        f"refill may overtake the read."
    )


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
        why=first.why
        + (
            f" ({own} of the instances are a wave reading its own load.)"
            if own and first.reader != first.writer
            else ""
        ),
        scenario=scenario,
    )


def lint_text(
    text: str, path: str = "<text>", options: Options = Options(), kernels: list[str] | None = None
) -> LintReport:
    """Lint every kernel (or the named ones) in an assembly text."""
    module = parse(text, path)
    report = LintReport(path=path)
    deadline = time.monotonic() + options.time_limit
    target = target_of(module.arch)
    if not target.modelled:
        report.notes.append(f"{target.name} is not a gfx9 target: its counters are read with gfx9's widths")
    for name, kernel in module.kernels.items():
        if not kernel.instructions or (kernels and name not in kernels):
            continue
        report.kernels.append(name)
        if options.engine == "paths":
            findings, notes, finished = lint_kernel(module, kernel, options, deadline)
            report.notes.extend(notes)
            if not finished:
                report.unfinished.append(name)
        else:
            findings, incomplete, finished = lint_kernel_dataflow(module, kernel, options, deadline)
            report.incomplete.extend(incomplete)
            if not finished:
                report.unfinished.append(name)
        report.findings.extend(findings)
    if not report.kernels:
        present = [name for name, kernel in module.kernels.items() if kernel.instructions]
        if kernels and present:
            report.notes.append(f"no kernel named {', '.join(kernels)} (here: {', '.join(present)})")
        else:
            report.notes.append("no kernel code found")
    return report


def lint_file(path: str, options: Options = Options(), kernels: list[str] | None = None) -> LintReport:
    with open(path, encoding="utf-8") as handle:
        return lint_text(handle.read(), path, options, kernels)


def is_flydsl_spec(target: str) -> bool:
    """A target that names a FlyDSL kernel (FILE.py:FUNCTION, module:FUNCTION), not a file."""
    if os.path.exists(target):
        return False
    source, sep, function = target.rpartition(":")
    return bool(sep and source and function.isidentifier())


def lint_flydsl_spec(
    spec: str,
    options: Options = Options(),
    kernels: list[str] | None = None,
    *,
    params: dict[str, str] | None = None,
    arch: str = "gfx950",
    keep_dir: str | None = None,
) -> list[LintReport]:
    """Compile a FlyDSL kernel spec for ``arch`` (no GPU needed) and lint each assembly it gave;
    ValueError (or ImportError, without FlyDSL) when it cannot be compiled."""
    from ..flydsl.compile import CompileError, compile_spec

    try:
        result = compile_spec(spec, dict(params or {}), arch=arch, keep_dir=keep_dir)
    except CompileError as exc:
        raise ValueError(str(exc)) from exc
    if not result.ok:
        raise ValueError(result.error)
    return [lint_text(asm.text, asm.path, options, kernels) for asm in result.assembly]
