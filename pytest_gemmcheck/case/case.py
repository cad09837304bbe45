"""A case: one kernel configuration, its seeded inputs and reference, and ``run``: poison,
launch, synchronise, check -- repeated -- then judge and record."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ..checking import torch_backend as checking
from ..judging.baseline import CLEAN, Baseline
from ..checking.backends import Checker, Outcome, select_checker
from ..checking.consensus import Consensus
from ..errors import CaseError, GemmcheckFailure, LaunchError
from ..config.options import AUTO, Settings
from .quant import Inputs, fp8_flavour, quant_mode
from .reference import LruCache, compute_reference
from ..judging.message import failure_message
from .result import (BAD_OUTPUT, INCONSISTENT, NONFINITE, RAISED, UNWRITTEN, WRONG, CaseResult,
                     LaunchRecord)
from ..judging.stats import format_percent, rate_upper_bound
from ..judging.verdict import Verdict, judge

AUTO_MAX_LAUNCHES = 1_000_000

_OUT_DTYPES = {
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "float32": torch.float32,
    "fp32": torch.float32,
    "float": torch.float32,
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _out_dtype(value) -> torch.dtype:
    if isinstance(value, torch.dtype):
        dtype = value
    elif isinstance(value, str) and value.removeprefix("torch.") in _OUT_DTYPES:
        dtype = _OUT_DTYPES[value.removeprefix("torch.")]
    else:
        raise CaseError(f"out_dtype={value!r} is not a dtype; use torch.bfloat16, torch.float16 or torch.float32")
    if dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise CaseError(f"out_dtype={dtype_name(dtype)} cannot hold the NaN poison or is not a GEMM output type; "
                        "use bfloat16, float16 or float32")
    return dtype


def default_device() -> torch.device:
    """The current GPU when there is one, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def case_key(identity: dict[str, Any]) -> str:
    """A stable hash of what makes a case the case it is (not the seed, not the device)."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def synchronize(device: torch.device, *, current_stream_only: bool = False) -> None:
    """Wait for the launch. Device-wide by default (a kernel may use streams of its own); only
    the current stream while a background load runs, whose stream would otherwise be waited for
    too."""
    if device.type == "cuda":
        if current_stream_only:
            torch.cuda.current_stream(device).synchronize()
        else:
            torch.cuda.synchronize(device)


class _OutputBuffer:
    """An output tensor handed to launches, and what it was when made: a launch that replaces
    or reshapes it is caught on every later use too."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor
        self.identity = _layout(tensor)


def _layout(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


class LaunchTimer:
    """A launch's time: on a GPU between two events on the current stream (so that it is the
    launch's own time, not the poison fill's queued before it, nor the host's), else the
    host's clock."""

    def __init__(self, device: torch.device):
        self._events = None
        if device.type == "cuda":
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            # named once: Event.record() without a stream looks the current one up through
            # torch.cuda.is_available(), which took 0.25 ms per call beside a busy H200
            self._stream = torch.cuda.current_stream(device)
        self._started = self._stopped = 0.0

    def start(self) -> None:
        self._started = time.perf_counter()
        if self._events is not None:
            self._events[0].record(self._stream)

    def stop(self) -> None:
        self._stopped = time.perf_counter()
        if self._events is not None:
            self._events[1].record(self._stream)

    def seconds(self) -> float:
        """After the launch was waited for."""
        if self._events is not None:
            try:
                return self._events[0].elapsed_time(self._events[1]) / 1000
            except RuntimeError:  # the launch faulted: the events never completed
                pass
        return self._stopped - self._started


@dataclass
class CaseContext:
    """What a case needs from its test and session."""

    settings: Settings
    deterministic: bool | None = None  # the test's marker override
    nodeid: str = ""
    inputs_cache: LruCache = field(default_factory=LruCache)
    reference_cache: LruCache = field(default_factory=LruCache)
    record: Callable[[CaseResult], None] = lambda result: None
    baseline_for: Callable[[CaseResult], Baseline] = lambda result: CLEAN
    stack_info: Callable[[], dict] = dict
    device_identity: Callable[[torch.device], dict] = lambda device: {}
    judge: bool = True  # False in a --gemmcheck-processes child: its parent judges the aggregate


def conclude(result: CaseResult, settings: Settings, baseline_for) -> Verdict:
    """Judge ``result`` against its baseline and write the verdict and message onto it."""
    baseline = baseline_for(result)
    verdict = judge(result, baseline, alpha=settings.alpha, worst_factor=settings.worst_factor,
                    static_policy=settings.static)
    result.verdict = verdict.kind
    result.baseline = {"source": baseline.source, "description": baseline.description,
                       "launches": baseline.evidence.launches, "bad_launches": baseline.evidence.bad}
    raised = any(launch.error and "raised" in launch.kinds for launch in result.launches)
    result.message = failure_message(result, verdict) if (verdict.kind != "pass" or raised) else ""
    return verdict


class Case:
    def __init__(self, context: CaseContext, kernel: str, *, m: int, n: int, k: int, quant: str = "bf16",
                 tile: str | tuple[int, int] | None = None, out_dtype=torch.bfloat16, device=None,
                 seed: int | None = None, fp8: str = "e4m3fn", params: dict[str, Any] | None = None,
                 deterministic: bool | None = None, rtol: float | None = None, floor: float | None = None):
        if not isinstance(kernel, str) or not kernel:
            raise CaseError(f"kernel must be a non-empty name, got {kernel!r}")
        for name, value in (("m", m), ("n", n), ("k", k)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CaseError(f"{name} must be a whole number >= 1, got {value!r}")
        self.context = context
        self.kernel = kernel
        self.m, self.n, self.k = m, n, k
        self.mode = quant_mode(quant)
        self.mode.validate(m, n, k)
        self.quant = quant
        try:
            self.tile = checking.parse_tile(tile)
        except ValueError as exc:
            raise CaseError(str(exc)) from None
        self.out_dtype = _out_dtype(out_dtype)
        self.device = torch.device(device) if device is not None else default_device()
        self.fp8 = fp8_flavour(fp8) if self.mode.uses_fp8 else None
        settings = context.settings
        self.seed = settings.seed if seed is None else int(seed)
        self.params = dict(params or {})
        try:
            json.dumps(self.params, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise CaseError(f"params must be JSON-serialisable (they are part of the case key): {exc}") from None
        if deterministic is None:
            deterministic = context.deterministic
        if deterministic is None:
            deterministic = not settings.is_nondeterministic(kernel)
        self.deterministic = bool(deterministic)
        self.tolerance = checking.Tolerance(
            rtol=settings.rtol if rtol is None else float(rtol),
            floor=settings.floor if floor is None else float(floor),
        )
        if not self.tolerance.rtol > 0 or self.tolerance.floor < 0:
            raise CaseError(f"rtol must be > 0 and floor >= 0, got rtol={rtol!r}, floor={floor!r}")

    # --- identity ---------------------------------------------------------------------
    @property
    def tile_text(self) -> str | None:
        return f"{self.tile[0]}x{self.tile[1]}" if self.tile else None

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel, "m": self.m, "n": self.n, "k": self.k, "quant": self.quant,
            "tile": self.tile_text, "out_dtype": dtype_name(self.out_dtype), "params": self.params,
            "fp8": self.fp8.name if self.fp8 else None,
        }

    @property
    def key(self) -> str:
        return case_key(self.identity)

    def __repr__(self) -> str:
        return f"<gemmcheck case {self.kernel} {self.quant} {self.m}x{self.n}x{self.k} key={self.key}>"

    # --- inputs and reference -----------------------------------------------------------
    def _inputs_key(self) -> tuple:
        return (self.quant, self.m, self.n, self.k, self.seed, self.fp8.name if self.fp8 else None, str(self.device))

    def inputs(self) -> Inputs:
        """Seeded operands: same seed, same bytes, on any machine and device."""
        return self.context.inputs_cache.get(self._inputs_key(), self._make_inputs)

    def _make_inputs(self) -> Inputs:
        return self.mode.make_inputs(self.m, self.n, self.k, seed=self.seed, device=self.device, fp8=self.fp8)

    def reference(self) -> torch.Tensor:
        """The bf16-rounded (out dtype) fp32 reference of :meth:`inputs`, computed once."""
        key = self._inputs_key() + (dtype_name(self.out_dtype),)
        return self.context.reference_cache.get(key, lambda: compute_reference(self.inputs(), self.out_dtype))

    # --- compiled, not run ----------------------------------------------------------------
    def compile_flydsl(self, spec: str, *, params: dict | None = None, arch: str = "gfx950",
                       lint: bool = True) -> CaseResult:
        """Compile a FlyDSL kernel ('path/to/module.py:function') for ``arch`` in a child process
        (no GPU needed), record its static metrics and lint findings with this case, and judge
        them against the case's last record (--gemmcheck-static)."""
        from ..compiled.static import compile_flydsl

        return self.check_assembly(compile_flydsl(spec, params, arch), lint=lint, source=f"{spec} for {arch}")

    def check_assembly(self, assemblies: list[tuple[str, str]], *, lint: bool = True, source: str = "") -> CaseResult:
        """The same for AMDGPU assembly texts, given as (name, text) pairs."""
        __tracebackhide__ = True
        from ..compiled.static import analyse

        result = self._new_result()
        result.static = analyse(assemblies, lint=lint, source=source)
        verdict = conclude(result, self.context.settings, self.context.baseline_for)
        self.context.record(result)
        if verdict.failed and not self.context.settings.accept:
            raise GemmcheckFailure(result.message)
        return result

    # --- running ------------------------------------------------------------------------
    def run(self, launch: Callable[[torch.Tensor], Any], *, repeat: int | None = None) -> CaseResult:
        """Poison, launch, synchronise and check, ``repeat`` times (default: --gemmcheck-repeat);
        record every launch; raise :class:`GemmcheckFailure` when the verdict is a regression."""
        __tracebackhide__ = True  # a failure points at the test's case.run line, not in here
        if not callable(launch):
            raise CaseError(f"case.run takes a callable launch(out), got {launch!r}")
        repeat = self.context.settings.repeat if repeat is None else repeat
        auto = repeat == AUTO
        if not auto:
            if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
                raise CaseError(f"repeat must be a whole number >= 1 or 'auto', got {repeat!r}")
        from ..environment import stress

        settings = self.context.settings
        result = self._new_result()
        raised: BaseException | None = None
        ref = self.reference()
        rowmax = checking.row_max(ref)
        # two output buffers, used in turn: a launch's check is finished while the next launch
        # fills the other one, so the output it read is still there to keep (see checker.py)
        buffers = [self._output_buffer()]
        checker = select_checker(settings.check_backend, buffers[0].tensor)
        result.check_backend = checker.name
        consensus = (Consensus(rowmax, self.tile, checksum=checker.checksum, compare=checker.compare)
                     if self.deterministic else None)
        where = {"pid": os.getpid(), "host": socket.gethostname(), "device": str(self.device),
                 "device_uuid": self.context.device_identity(self.device).get("uuid") or ""}
        pending: list = []  # the launch whose check was begun and not yet finished: (record, output, check)

        def finish_pending() -> None:
            while pending:
                record, checked, begun = pending.pop()
                self._finish_check(record, checked, begun.result(), checker, consensus)

        timer = LaunchTimer(self.device)
        started = time.monotonic()
        with stress.load(settings.stress, self.device) as background:
            stressed = background.active
            try:
                for index in range(1, (AUTO_MAX_LAUNCHES if auto else repeat) + 1):
                    if auto and index > 1:
                        finish_pending()  # the stopping rule counts every launch so far
                        if self._enough(result, started):
                            break
                    record = LaunchRecord(index=index, **where)
                    result.launches.append(record)
                    if index == 2:
                        spare = self._spare_buffer()
                        if spare is not None:
                            buffers.append(spare)
                    buffer = buffers[(index - 1) % len(buffers)]
                    out = buffer.tensor
                    if len(buffers) == 1:  # no second buffer: the previous check must finish before its output goes
                        finish_pending()
                    # Poison, launch and check are queued on the current stream with no wait between
                    # them: launch(out) orders its work after that stream's and leaves the stream
                    # ordered after its own, as every torch op does. While the GPU works the host
                    # finishes the previous launch's check (its output is in the other buffer).
                    out.fill_(float("nan"))
                    try:
                        timer.start()
                        returned = launch(out)
                        timer.stop()
                    except Exception as exc:  # the kernel's failure is the test's evidence
                        raised = self._raised(record, timer, exc)
                        break
                    finish_pending()
                    checked = self._output_to_check(out, buffer.identity, returned, record)
                    begun = None
                    if checked is not None:
                        copies = consensus.copies if consensus is not None and not checker.by_checksum else []
                        begun = checker.prepare(checked, ref, rowmax, self.tolerance, self.tile, copies,
                                                consensus is not None)
                    try:
                        if begun is not None:
                            begun.start()  # queued behind the launch, before waiting: no gap on the GPU
                        synchronize(self.device, current_stream_only=stressed)
                    except Exception as exc:  # a fault the launch left behind
                        raised = self._raised(record, timer, exc)
                        break
                    if begun is not None:
                        pending.append((record, checked, begun))
                    record.elapsed_s = timer.seconds()
                finish_pending()
            finally:
                if consensus is not None:
                    self._fill_consistency(result, consensus)
                    if not self.context.judge:  # a --gemmcheck-processes child: the parent compares these
                        copy = consensus.consensus_copy(self._accurate(result))
                        result.consensus_checksum = checker.checksum(copy) if copy is not None else None
                    consensus.release()
        result.stress = background.describe()
        if auto and not result.stopped:
            result.stopped = f"stopped at the cap of {AUTO_MAX_LAUNCHES:,} launches"
        return self._conclude(result, raised, len(result.launches) if auto else repeat)

    def _output_buffer(self) -> _OutputBuffer:
        return _OutputBuffer(torch.empty((self.m, self.n), dtype=self.out_dtype, device=self.device))

    def _spare_buffer(self) -> _OutputBuffer | None:
        """The second output buffer, or None when the device has no room for it (then launches
        take turns with their checks in one buffer: slower, the same results)."""
        try:
            return self._output_buffer()
        except torch.OutOfMemoryError:
            return None

    @staticmethod
    def _raised(record: LaunchRecord, timer: LaunchTimer, exc: Exception) -> Exception:
        timer.stop()
        record.elapsed_s = timer.seconds()
        record.add_kind(RAISED)
        record.error = f"{type(exc).__name__}: {exc}".strip()
        return exc

    def _finish_check(self, record: LaunchRecord, checked, outcome: Outcome, checker: Checker,
                      consensus: Consensus | None) -> None:
        """A launch's finished check onto its record; its output to the consistency detector."""
        self._fill_accuracy(record, outcome.accuracy, checked)
        if consensus is None:
            return
        if checker.by_checksum:
            consensus.observe_checksum(record.index, checked, outcome.checksum)
        else:
            consensus.observe(record.index, checked, outcome.diffs)

    def _enough(self, result: CaseResult, started: float) -> bool:
        """--gemmcheck-repeat=auto: whether the rate's bound reached the target or time ran out;
        notes which on the result."""
        settings = self.context.settings
        launches, bad = len(result.launches), len(result.bad_launches)
        bound = rate_upper_bound(bad, launches)
        if bound < settings.target_rate:
            result.stopped = (f"stopped after {launches:,} launches: rate < {format_percent(bound)} reached the "
                              f"target {format_percent(settings.target_rate)}")
            return True
        elapsed = time.monotonic() - started
        if elapsed >= settings.budget:
            result.stopped = (f"stopped after {launches:,} launches: the {settings.budget:g} s budget ran out with the "
                              f"rate shown only below {format_percent(bound)} (target {format_percent(settings.target_rate)})")
            return True
        return False

    def _output_to_check(self, out, identity, returned, record: LaunchRecord):
        """The tensor this launch produced, or None (recorded as bad output) when there is none."""
        if _layout(out) != identity:
            record.add_kind(BAD_OUTPUT)
            record.error = (f"the kernel replaced or reshaped `out` (now shape {list(out.shape)}, "
                            f"dtype {dtype_name(out.dtype)}, stride {out.stride()}); it must write into it in place")
            return None
        if isinstance(returned, torch.Tensor) and returned.data_ptr() != out.data_ptr():
            expected = (self.m, self.n)
            if tuple(returned.shape) != expected or returned.dtype != self.out_dtype or returned.device != self.device:
                record.add_kind(BAD_OUTPUT)
                record.error = (f"returned a tensor of shape {list(returned.shape)}, dtype "
                                f"{dtype_name(returned.dtype)} on {returned.device}; expected "
                                f"{list(expected)}, {dtype_name(self.out_dtype)} on {self.device}")
                return None
            record.poisoned = False  # its own allocation: checked as returned
            return returned
        return out

    def _fill_accuracy(self, record: LaunchRecord, accuracy: checking.AccuracyStats, checked) -> None:
        wrong = accuracy.wrong
        record.wrong = wrong.elements
        record.nonfinite = accuracy.nonfinite
        record.max_abs_err = accuracy.max_abs_err
        record.max_rel_err = accuracy.max_rel_err
        record.rel_l2 = accuracy.rel_l2
        record.wrong_rows = wrong.rows
        record.wrong_tiles = wrong.tiles
        record.worst_tile_wrong = wrong.worst_tile_elements
        record.wrong_row_ids = wrong.row_ids
        record.wrong_tile_ids = [list(t) for t in wrong.tile_ids]
        if accuracy.nonfinite == checked.numel() and record.poisoned:
            record.add_kind(UNWRITTEN)
        elif accuracy.nonfinite:
            record.add_kind(NONFINITE)
        if wrong.elements > accuracy.nonfinite:
            record.add_kind(WRONG)

    def _fill_consistency(self, result: CaseResult, consensus: Consensus) -> None:
        agreements, size, note = consensus.finish(self._accurate(result))
        result.consensus_size = size
        result.consensus_note = note
        for record in result.launches:
            agreement = agreements.get(record.index)
            if agreement is None or agreement.in_consensus:
                continue
            record.add_kind(INCONSISTENT)
            if agreement.differing is None:
                record.differing = None
                continue
            diff = agreement.differing.differing
            record.differing = diff.elements
            record.differing_rows = diff.rows
            record.differing_tiles = diff.tiles
            record.differing_row_ids = diff.row_ids
            record.max_diff_rel = agreement.differing.max_diff_rel

    @staticmethod
    def _accurate(result: CaseResult) -> set[int]:
        """Launches with no failure so far (before consistency is judged: accuracy only)."""
        return {launch.index for launch in result.launches if not launch.kinds}

    def _new_result(self) -> CaseResult:
        return CaseResult(
            key=self.key, kernel=self.kernel, m=self.m, n=self.n, k=self.k, quant=self.quant,
            tile=self.tile_text, out_dtype=dtype_name(self.out_dtype), params=self.params,
            fp8=self.fp8.name if self.fp8 else None, seed=self.seed, device=str(self.device),
            deterministic=self.deterministic, rtol=self.tolerance.rtol, floor=self.tolerance.floor,
            nodeid=self.context.nodeid, stack=self.context.stack_info(),
        )

    def _conclude(self, result: CaseResult, raised: BaseException | None, repeat: int) -> CaseResult:
        __tracebackhide__ = True
        settings = self.context.settings
        # a child of --gemmcheck-processes does not judge: its parent judges the aggregate
        verdict = conclude(result, settings, self.context.baseline_for) if self.context.judge else None
        self.context.record(result)
        if verdict is None:
            return result
        if raised is not None:
            last = result.launches[-1]
            trace = "".join(traceback.format_exception_only(type(raised), raised)).strip()
            raise LaunchError(f"launch {last.index} of {repeat} raised {trace}\n{result.message}") from raised
        if verdict.failed and not settings.accept:  # accepting: this run becomes the baseline instead
            raise GemmcheckFailure(result.message)
        return result
