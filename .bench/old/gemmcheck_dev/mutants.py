"""Mutation testing of the LDS-race lint on AMDGPU assembly (gfx9: gfx90a, gfx942, gfx950).

Every ``s_waitcnt`` of a file is weakened, one field at a time: its ``vmcnt`` or ``lgkmcnt`` part
deleted, or raised by one (``vmcnt(N)`` to ``vmcnt(N+1)``); every ``s_barrier`` that LDS reads
follow is deleted. Each mutant is linted and compared with the original file's findings:

* **caught**: the mutant has an error the original has not (exit status 1 on a clean file);
* **latent** / **warned**: only a new latent or warning finding;
* **unchecked**: no new finding, and something was not checked (exit status 3);
* **missed**: no new finding, and everything checked (exit status 0, or 1 from the original's
  own errors).

A finding is new when the original has none of that severity at that read with the same loads
(lines mapped through a deleted line), so a mutant of a racy file is caught when it adds a load
to a read that races already.

Whether a mutant changes anything is decided by an analysis of its own (not the lint's): an
upper bound, over every path of the control-flow graph (both ways at every branch, any trip
count), of the operations outstanding on each counter at each wait, and where LDS-DMA loads and
DS reads and writes may sit among them. It errs only towards "may change":

* **equivalent**: on every path the counter is already at or below ``N`` where the wait stands,
  so the wait retires nothing, and deleting or raising it changes no behaviour at all;
* **out of scope**: what it leaves in flight is never an LDS-DMA load (a ``vmcnt`` part) still
  outstanding at an LDS read, a barrier or the end of the wave, nor a DS read or write (an
  ``lgkmcnt`` part) still outstanding at a barrier, an LDS-DMA load or the end, on any path; or
  (a barrier) no LDS-DMA load and no DS write is issued before it on any path. The mutant may
  break something else (a register read of a global load), not an ordering the lint checks;
* **in scope**: everything else. The mutation score is caught / in scope over the ``vmcnt`` and
  barrier mutants; beside it, where latent mutants make it differ, what ``gemmcheck lint
  --fail-on-latent`` would fail (a new error or latent finding). An in-scope mutant that is
  missed is not proven racy (the load it leaves in flight may be one no other wave reads), so
  ``--oracle`` also lints those with the path-enumerating engine.

Every ``vmcnt`` mutant retires less, so an in-scope one can only open a read-before-load race
(error); an ``lgkmcnt`` mutant leaves DS reads in flight (refill warnings at most) or DS writes
in flight at a barrier (an error where another wave reads their bytes after it); they are
listed, not scored. Equivalent and out-of-scope mutants are linted too: a new error on one of
those is a false error of the lint.

    python -m benchmarks.lint_mutants FILE.s [...] [--json FILE] [--oracle] [--time-limit S]
        [--in-scope-only] [--ordering-only] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import asdict, dataclass, field

from pytest_gemmcheck.compiled.lint.asm import parse_instruction
from pytest_gemmcheck.compiled.lint.instructions import VMEM_PREFIXES
from pytest_gemmcheck.compiled.lint.instructions import is_dma as _is_dma_instruction
from pytest_gemmcheck.compiled.lint.instructions import waitcnt_fields as _waitcnt_operand_fields
from pytest_gemmcheck.compiled.lint.targets import Target

_GFX9 = Target("gfx9")
VM_MAX, LGKM_MAX = _GFX9.vm_limit, _GFX9.lgkm_limit
_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*|\d+):")
_BLOCKS = ((".amdgpu_metadata", ".end_amdgpu_metadata"), (".amdhsa_kernel", ".end_amdhsa_kernel"))
_INSTRUCTION = re.compile(r"^(s|v|ds|buffer|global|flat|scratch|tbuffer|image|exp)_?[a-z0-9_]*(\s|$)")
_LGKM_PREFIXES = (
    "ds_",
    "s_load",
    "s_buffer_",
    "s_scratch_",
    "s_store",
    "s_atc",
    "s_atomic",
    "s_sendmsg",
    "s_memtime",
    "s_memrealtime",
    "s_dcache",
    "flat_",
    "s_get_barrier",
)


def _code(line: str) -> str:
    return line.split(";", 1)[0].split("//", 1)[0].strip()


def _mnemonic(code: str) -> str:
    return code.split(None, 1)[0] if code else ""


def waitcnt_fields(code: str) -> dict[str, int] | None:
    """The counter fields of an ``s_waitcnt`` (symbolic, or a raw gfx9 immediate); None otherwise."""
    if _mnemonic(code) != "s_waitcnt":
        return None
    return _waitcnt_operand_fields(code[len("s_waitcnt") :].strip())


def render_waitcnt(fields: dict[str, int]) -> str | None:
    parts = [f"{name}({fields[name]})" for name in ("vmcnt", "expcnt", "lgkmcnt") if name in fields]
    return "s_waitcnt " + " ".join(parts) if parts else None


def is_vm(mnemonic: str) -> bool:
    return mnemonic.startswith(VMEM_PREFIXES)


def is_dma(code: str) -> bool:
    return bool(code) and _is_dma_instruction(parse_instruction(code))


def is_lgkm(mnemonic: str) -> bool:
    return mnemonic.startswith(_LGKM_PREFIXES)


def is_ds_read(mnemonic: str) -> bool:
    return mnemonic.startswith(("ds_read", "ds_load"))


def is_ds_write(mnemonic: str) -> bool:
    return mnemonic.startswith(("ds_write", "ds_store"))


# ---------------------------------------------------------------- the counter analysis


@dataclass(frozen=True)
class Queue:
    """An upper bound of one counter's outstanding operations on every path: their most, the
    positions an operation of interest may hold (how many ordered operations were issued after
    it), and the positions of those a mutant left in flight (``freed``).

    ``s_waitcnt ...cnt(n)`` is sure to have retired an operation once ``n`` ordered ones follow
    it: they complete in order, so were it outstanding, so would they be. Every vector-memory
    operation is ordered; under lgkmcnt only DS operations are (scalar loads return out of order),
    so only they move a DS read's position, while every lgkm operation counts in the length."""

    length: int = 0
    marked: frozenset = frozenset()
    freed: frozenset = frozenset()

    def issue(self, cap: int, marked: bool, ordered: bool = True) -> "Queue":
        # past the counter's width the positions are clamped, never dropped: an over-count (an
        # operation taken for a counted one) then errs towards "still in flight"
        def shift(ps):
            return frozenset(min(p + 1, cap - 1) for p in ps) if ordered else ps

        return Queue(
            min(self.length + 1, cap), shift(self.marked) | ({0} if marked else frozenset()), shift(self.freed)
        )

    def retired(self, n: int) -> tuple[frozenset, frozenset]:
        """What ``wait(n)`` keeps of (marked, freed)."""
        return frozenset(p for p in self.marked if p < n), frozenset(p for p in self.freed if p < n)

    def wait(self, n: int) -> "Queue":
        marked, freed = self.retired(n)
        return Queue(min(self.length, n), marked, freed)

    def join(self, other: "Queue") -> "Queue":
        return Queue(max(self.length, other.length), self.marked | other.marked, self.freed | other.freed)


@dataclass(frozen=True)
class State:
    vm: Queue = Queue()  # marked: LDS-DMA loads
    lgkm: Queue = Queue()  # marked: DS reads and writes
    dma_issued: bool = False  # some LDS-DMA load was issued on some path to here
    ds_written: bool = False  # some DS write was issued on some path to here

    def join(self, other: "State") -> "State":
        return State(
            self.vm.join(other.vm),
            self.lgkm.join(other.lgkm),
            self.dma_issued or other.dma_issued,
            self.ds_written or other.ds_written,
        )


@dataclass
class Program:
    lines: list[str]
    code: list[int]  # indices of instruction lines
    successors: dict[int, list[int]]
    entries: list[int]
    indirect: bool = False  # an indirect branch: nothing is claimed equivalent or out of scope


def program(text: str) -> Program:
    lines = text.splitlines()
    code: list[int] = []
    labels: dict[str, int] = {}  # label -> the index in `code` of the next instruction
    functions = set()
    for number, line in enumerate(lines):
        m = re.match(r"\s*\.type\s+([\w.$]+)\s*,\s*@function", line)
        if m:
            functions.add(m.group(1))
    entries_by_label: dict[str, int] = {}
    numeric: dict[str, list[tuple[int, int]]] = {}  # "1" -> [(line, code index)]: local labels, 1f / 1b
    skipping = None  # inside a metadata or kernel-descriptor block
    for number, line in enumerate(lines):
        stripped = _code(line)
        if skipping:
            if stripped.startswith(skipping):
                skipping = None
            continue
        for opening, closing in _BLOCKS:
            if stripped.startswith(opening):
                skipping = closing
        if skipping:
            continue
        m = _LABEL.match(stripped)
        if m and m.group(1).isdigit():
            numeric.setdefault(m.group(1), []).append((number, len(code)))
            stripped = stripped[m.end() :].strip()
        elif m:
            labels[m.group(1)] = len(code)
            if m.group(1) in functions:
                entries_by_label[m.group(1)] = len(code)
            stripped = stripped[m.end() :].strip()
        if not stripped or stripped.startswith(".") or not _INSTRUCTION.match(stripped):
            continue
        code.append(number)
    successors: dict[int, list[int]] = {}
    indirect = False
    for k, number in enumerate(code):
        c = _code(lines[number])
        op = _mnemonic(c)
        target = c.split(None, 1)[1].strip() if " " in c else ""
        local = re.fullmatch(r"(\d+)([fb])", target)
        if local:
            defs = numeric.get(local.group(1), [])
            pick = (
                [i for line, i in defs if line > number][:1]
                if local.group(2) == "f"
                else [i for line, i in defs if line < number][-1:]
            )
            if pick:
                labels = {**labels, target: pick[0]}
        nxt = [k + 1] if k + 1 < len(code) else []
        if op == "s_endpgm" or op.startswith("s_endpgm"):
            successors[k] = []
        elif op == "s_branch":
            successors[k] = [labels[target]] if target in labels else []
            indirect |= target not in labels
        elif op.startswith("s_cbranch"):
            successors[k] = nxt + ([labels[target]] if target in labels else [])
            indirect |= target not in labels
        elif op in ("s_setpc_b64", "s_swappc_b64", "s_rfe_b64"):
            successors[k] = []
            indirect = True
        else:
            successors[k] = nxt
    entries = sorted(set(entries_by_label.values())) or ([0] if code else [])
    return Program(lines, code, successors, entries, indirect)


def analyse(prog: Program, edit: tuple[int, str, int | None] | None = None) -> tuple[dict[int, State], set[int]]:
    """The state before each instruction (by index in ``prog.code``), a fixed point over the CFG,
    and where operations a mutant left in flight are still outstanding at an observation point.

    ``edit`` is (instruction index, "vmcnt" or "lgkmcnt", the mutant's count or None for none):
    there the mutant's wait is applied, and what the original wait retires but the mutant's does
    not is marked ``freed``. Observation points: for an LDS-DMA load left in flight, an LDS read,
    an ``s_barrier`` or the end of the wave; for a DS read or write, an ``s_barrier``, the end,
    or an LDS-DMA load (a refill)."""
    before: dict[int, State] = {k: State() for k in prog.entries}
    observed: set[int] = set()
    work = list(prog.entries)
    while work:
        k = work.pop()
        line = prog.lines[prog.code[k]]
        state = before[k]
        if edit is not None:
            c = _code(line)
            op = _mnemonic(c)
            if state.vm.freed and (
                is_ds_read(op) or op == "s_barrier" or op.startswith("s_endpgm") or not prog.successors[k]
            ):
                observed.add(k)
            if state.lgkm.freed and (
                is_dma(c) or op == "s_barrier" or op.startswith("s_endpgm") or not prog.successors[k]
            ):
                observed.add(k)
        state = _mutated(line, state, edit[1], edit[2]) if edit is not None and k == edit[0] else transfer(line, state)
        for s in prog.successors[k]:
            if s >= len(prog.code):
                continue
            old = before.get(s)
            new = state if old is None else old.join(state)
            if new != old:
                before[s] = new
                work.append(s)
    return before, observed


def _mutated(line: str, state: State, name: str, count: int | None) -> State:
    """The mutant's wait in place of the original: what only the original retires becomes freed."""
    fields = dict(waitcnt_fields(_code(line)) or {})
    original = transfer(line, state)
    queue = state.vm if name == "vmcnt" else state.lgkm
    kept_marked, kept_freed = queue.retired(fields[name])
    if count is None:
        mutant_marked, mutant_freed, length = queue.marked, queue.freed, queue.length
    else:
        mutant_marked, mutant_freed = queue.retired(count)
        length = min(queue.length, count)
    freed = (mutant_marked - kept_marked) | mutant_freed
    new_queue = Queue(length, mutant_marked, freed)
    if name == "vmcnt":
        return State(new_queue, original.lgkm, state.dma_issued, state.ds_written)
    return State(original.vm, new_queue, state.dma_issued, state.ds_written)


def transfer(line: str, state: State) -> State:
    c = _code(line)
    op = _mnemonic(c)
    fields = waitcnt_fields(c)
    if fields is not None:
        vm = state.vm.wait(fields["vmcnt"]) if "vmcnt" in fields else state.vm
        lgkm = state.lgkm.wait(fields["lgkmcnt"]) if "lgkmcnt" in fields else state.lgkm
        return State(vm, lgkm, state.dma_issued, state.ds_written)
    if op.startswith("s_waitcnt"):  # s_waitcnt_vmcnt/_lgkmcnt (gfx10+) and the like: taken as waiting for nothing
        return state
    vm, lgkm, issued = state.vm, state.lgkm, state.dma_issued
    if is_vm(op):
        dma = is_dma(c)
        vm = vm.issue(VM_MAX, dma)
        issued |= dma
    if is_lgkm(op):
        lgkm = lgkm.issue(LGKM_MAX, is_ds_read(op) or is_ds_write(op), ordered=op.startswith("ds_"))
    return State(vm, lgkm, issued, state.ds_written or is_ds_write(op))


# ---------------------------------------------------------------- mutants


@dataclass
class Mutant:
    line: int  # 1-based line of the edited instruction
    original: str
    kind: str  # "delete vmcnt", "vmcnt+1", "delete lgkmcnt", "lgkmcnt+1", "delete s_barrier"
    replacement: str | None  # the new instruction, None when the line is deleted
    effect: str  # "equivalent", "out of scope", "in scope"
    why: str
    outcome: str = ""  # caught, latent, warned, unchecked, missed
    exit_status: int | None = None
    new: dict = field(default_factory=dict)  # new findings by severity
    seconds: float = 0.0
    oracle: str = ""  # the path engine's verdict on a missed in-scope mutant

    def apply(self, lines: list[str]) -> list[str]:
        out = list(lines)
        index = self.line - 1
        if self.replacement is None:
            del out[index]
        else:
            indent = out[index][: len(out[index]) - len(out[index].lstrip())] or "\t"
            out[index] = indent + self.replacement
        return out


def mutants(text: str) -> tuple[list[Mutant], Program]:
    prog = program(text)
    before, _ = analyse(prog)
    found: list[Mutant] = []
    reads_after = _reads_before_next_barrier(prog)
    for k, number in enumerate(prog.code):
        if k not in before:
            continue  # unreachable
        state = before[k]
        c = _code(prog.lines[number])
        fields = waitcnt_fields(c)
        if fields is not None:
            for name, queue, cap in (("vmcnt", state.vm, VM_MAX), ("lgkmcnt", state.lgkm, LGKM_MAX)):
                if name not in fields:
                    continue
                n = fields[name]
                deleted = {k2: v for k2, v in fields.items() if k2 != name}
                variants = [(f"delete {name}", render_waitcnt(deleted), None)]
                if n + 1 <= cap:
                    variants.append((f"{name}+1", render_waitcnt({**fields, name: n + 1}), n + 1))
                for kind, replacement, count in variants:
                    effect, why = _effect(prog, k, queue, n, name, count)
                    found.append(Mutant(number + 1, c, kind, replacement, effect, why))
        elif _mnemonic(c) == "s_barrier" and reads_after.get(k):
            if prog.indirect or state.dma_issued or state.ds_written:
                effect, why = (
                    "in scope",
                    ("LDS reads follow it and an LDS-DMA load or a DS write may be issued before it"),
                )
            else:
                effect, why = "out of scope", "no LDS-DMA load and no DS write is issued before it on any path"
            found.append(Mutant(number + 1, c, "delete s_barrier", None, effect, why))
    return found, prog


def _effect(prog: Program, k: int, queue: Queue, n: int, name: str, count: int | None) -> tuple[str, str]:
    what = "LDS-DMA load" if name == "vmcnt" else "DS read or write"
    where = "an LDS read, a barrier or the end" if name == "vmcnt" else "a barrier, a DMA load or the end"
    if prog.indirect:
        return "in scope", "an indirect branch: the analysis claims nothing"
    if queue.length <= n:
        return "equivalent", f"at most {queue.length} outstanding on every path: the wait retires nothing"
    _, observed = analyse(prog, (k, name, count))
    if not observed:
        return "out of scope", (
            f"up to {queue.length} outstanding; no {what} it leaves in flight is still "
            f"outstanding at {where} on any path"
        )
    first = min(prog.code[o] + 1 for o in observed)
    return "in scope", f"up to {queue.length} outstanding; a {what} it leaves in flight may still be at line {first}"


def _reads_before_next_barrier(prog: Program) -> dict[int, bool]:
    """For each s_barrier: whether a DS read is reachable from it before another s_barrier."""
    reaches: dict[int, bool] = {}
    for k in range(len(prog.code)):
        if _mnemonic(_code(prog.lines[prog.code[k]])) != "s_barrier":
            continue
        seen, stack, found = set(), list(prog.successors[k]), False
        while stack and not found:
            s = stack.pop()
            if s in seen or s >= len(prog.code):
                continue
            seen.add(s)
            op = _mnemonic(_code(prog.lines[prog.code[s]]))
            if is_ds_read(op):
                found = True
            elif op != "s_barrier":
                stack.extend(prog.successors[s])
        reaches[k] = found
    return reaches


# ---------------------------------------------------------------- linting them


def _signature(report, severity: str, shift_at: int | None) -> set:
    """The findings of one severity as (kernel, read line, instruction, load lines), lines mapped
    back through a deleted line: on a file that has errors already, a read that races with one
    more load is new too."""

    def original(line):
        return line + 1 if shift_at is not None and line >= shift_at else line

    return {
        (f.kernel, original(f.line), f.instruction, frozenset(original(load.line) for load in f.loads))
        for f in report.of(severity)
    }


def _counts(report) -> dict:
    return {s: len(report.of(s)) for s in ("error", "latent", "warning", "unchecked")}


def run_mutants(
    text: str,
    path: str = "<text>",
    *,
    time_limit: float = 30.0,
    oracle: bool = False,
    effects: tuple[str, ...] = ("equivalent", "out of scope", "in scope"),
    kinds: tuple[str, ...] | None = None,
    select=None,
    found: list[Mutant] | None = None,
) -> dict:
    """Lint ``text`` and each of its mutants; the result as a dict (see :func:`summary`)."""
    from pytest_gemmcheck.compiled.lint import Options, exit_status, lint_text

    options = Options(time_limit=time_limit)
    start = time.perf_counter()
    base = lint_text(text, path, options)
    base_seconds = time.perf_counter() - start
    if found is None:
        found, _ = mutants(text)
    lines = text.splitlines()
    chosen = [
        m for m in found if m.effect in effects and (kinds is None or m.kind in kinds) and (select is None or select(m))
    ]
    paths_base = None
    for m in chosen:
        shift = m.line if m.replacement is None else None
        start = time.perf_counter()
        report = lint_text("\n".join(m.apply(lines)) + "\n", path, options)
        m.seconds = round(time.perf_counter() - start, 3)
        m.exit_status = exit_status([report])
        new = {}
        for severity in ("error", "latent", "warning"):
            extra = _signature(report, severity, shift) - _signature(base, severity, None)
            if extra or len(report.of(severity)) > len(base.of(severity)):
                new[severity] = max(len(extra), len(report.of(severity)) - len(base.of(severity)))
        m.new = new
        if "error" in new:
            m.outcome = "caught"
        elif "latent" in new:
            m.outcome = "latent"
        elif "warning" in new:
            m.outcome = "warned"
        elif m.exit_status == 3:  # nothing new, and something not checked (perhaps what the mutant broke)
            m.outcome = "unchecked"
        else:
            m.outcome = "missed"
        if (
            oracle
            and m.effect == "in scope"
            and m.outcome != "caught"
            and m.kind.startswith(("delete vmcnt", "vmcnt", "delete s_barrier"))
        ):
            paths = lint_text("\n".join(m.apply(lines)) + "\n", path, Options(engine="paths", time_limit=time_limit))
            if paths_base is None:  # the original by the path engine, once
                paths_base = lint_text(text, path, Options(engine="paths", time_limit=time_limit))
            extra = _signature(paths, "error", shift) - _signature(paths_base, "error", None)
            m.oracle = f"paths engine: {len(extra)} new error(s)" if extra else "paths engine: no new error"
    return {
        "path": path,
        "baseline": _counts(base),
        "baseline_exit": exit_status([base]),
        "baseline_seconds": round(base_seconds, 3),
        "mutants": chosen,
        "all": len(found),
    }


def summary(result: dict) -> dict:
    ms = result["mutants"]
    table: dict[str, dict[str, int]] = {}
    for m in ms:
        family = "barrier" if "barrier" in m.kind else ("vmcnt" if "vmcnt" in m.kind else "lgkmcnt")
        row = table.setdefault(f"{family}, {m.effect}", {})
        row[m.outcome] = row.get(m.outcome, 0) + 1
    scoped = [m for m in ms if m.effect == "in scope" and "lgkmcnt" not in m.kind]
    caught = sum(m.outcome == "caught" for m in scoped)
    # what `gemmcheck lint --fail-on-latent` fails: a new latent finding too
    failing = sum(m.outcome in ("caught", "latent") for m in scoped)
    false_errors = [m for m in ms if m.effect != "in scope" and m.outcome == "caught"]
    return {
        "table": table,
        "in_scope": len(scoped),
        "caught": caught,
        "score": round(caught / len(scoped), 3) if scoped else None,
        "caught_or_latent": failing,
        "score_failing_on_latent": round(failing / len(scoped), 3) if scoped else None,
        "false_errors": len(false_errors),
    }


def format_result(result: dict, verbose: bool = True) -> str:
    s = summary(result)
    b = result["baseline"]
    out = [
        f"{result['path']}: original {b['error']}/{b['latent']}/{b['warning']}/{b['unchecked']} "
        f"(errors/latent/warnings/unchecked), exit {result['baseline_exit']}, {result['baseline_seconds']:.2f} s; "
        f"{len(result['mutants'])} of {result['all']} mutants linted"
    ]
    for key in sorted(s["table"]):
        row = s["table"][key]
        out.append(
            f"  {key:<28} "
            + ", ".join(f"{k} {row[k]}" for k in ("caught", "latent", "warned", "unchecked", "missed") if k in row)
        )
    score = (
        "n/a (no in-scope vmcnt/barrier mutant)"
        if s["score"] is None
        else f"{s['caught']}/{s['in_scope']} = {s['score']:.1%}"
    )
    out.append(f"  mutation score (in-scope vmcnt and barrier mutants caught as errors): {score}")
    if s["caught_or_latent"] > s["caught"]:
        out.append(
            f"  with --fail-on-latent (errors or latent findings): {s['caught_or_latent']}/{s['in_scope']} = "
            f"{s['score_failing_on_latent']:.1%}"
        )
    if s["false_errors"]:
        out.append(f"  new errors on equivalent or out-of-scope mutants (false errors): {s['false_errors']}")
    if verbose:
        for m in result["mutants"]:
            if (m.effect == "in scope" and m.outcome != "caught" and "lgkmcnt" not in m.kind) or (
                m.effect != "in scope" and m.outcome == "caught"
            ):
                label = "not caught" if m.effect == "in scope" else "false error"
                extra = f"; {m.oracle}" if m.oracle else ""
                out.append(
                    f"    {label}: line {m.line} {m.original!r} {m.kind}: {m.outcome}, exit {m.exit_status} "
                    f"({m.why}{extra})"
                )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.lint_mutants",
        description="Mutation testing of the LDS-race lint: weaken each wait and barrier, lint each mutant.",
    )
    parser.add_argument("files", nargs="+")
    parser.add_argument("--json", default=None, help="write every mutant and its outcome as JSON")
    parser.add_argument(
        "--oracle", action="store_true", help="lint in-scope mutants the lint misses with the path engine too"
    )
    parser.add_argument(
        "--time-limit", type=float, default=30.0, help="the lint's time limit per mutant (default 30 s)"
    )
    parser.add_argument("--in-scope-only", action="store_true", help="lint only in-scope mutants")
    parser.add_argument(
        "--ordering-only",
        action="store_true",
        help="lint only vmcnt and barrier mutants (those the mutation score counts)",
    )
    parser.add_argument("--quiet", action="store_true", help="no per-mutant lines")
    args = parser.parse_args(argv)
    results = []
    for path in args.files:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        effects = ("in scope",) if args.in_scope_only else ("equivalent", "out of scope", "in scope")
        select = (lambda m: "lgkmcnt" not in m.kind) if args.ordering_only else None
        result = run_mutants(text, path, time_limit=args.time_limit, oracle=args.oracle, effects=effects, select=select)
        print(format_result(result, verbose=not args.quiet), flush=True)
        results.append(result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                [
                    {
                        **{k: v for k, v in r.items() if k != "mutants"},
                        "summary": summary(r),
                        "mutants": [asdict(m) for m in r["mutants"]],
                    }
                    for r in results
                ],
                handle,
                indent=2,
            )
    return 0
