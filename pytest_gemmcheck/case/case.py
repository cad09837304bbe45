"""A case: one kernel configuration, its seeded inputs and reference, and ``run``: the launch
loop (runner.py), then the verdict (judging/) and the record."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ..checking.rule import Tolerance
from ..config.options import AUTO, Settings
from ..errors import CaseError
from ..judging.baseline import CLEAN, Baseline
from ..judging.conclude import conclude
from .cache import LruCache
from .identity import case_key, dtype_name, out_dtype as parse_out_dtype, parse_tile
from .quant import Inputs, fp8_flavour, quant_mode
from .reference import compute_reference
from .result import CaseResult, CompiledResult
from .runner import LaunchLoop


def default_device() -> torch.device:
    """The current GPU when there is one, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


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
            self.tile = parse_tile(tile)
        except ValueError as exc:
            raise CaseError(str(exc)) from None
        self.out_dtype = parse_out_dtype(out_dtype)
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
        self.tolerance = Tolerance(
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
                       lint: bool = True) -> CompiledResult:
        """Compile a FlyDSL kernel ('path/to/module.py:function') for ``arch`` in a child process
        (no GPU needed), record its static metrics and lint findings with this case, and judge
        them against the case's last record (--gemmcheck-static)."""
        from ..compiled.static import compile_flydsl

        return self.check_assembly(compile_flydsl(spec, params, arch), lint=lint, source=f"{spec} for {arch}")

    def check_assembly(self, assemblies: list[tuple[str, str]], *, lint: bool = True,
                       source: str = "") -> CompiledResult:
        """The same for AMDGPU assembly texts, given as (name, text) pairs."""
        __tracebackhide__ = True
        from ..compiled.static import analyse

        result = self._new_result(CompiledResult)
        result.static = analyse(assemblies, lint=lint, source=source)
        return self._conclude(result)

    # --- running ------------------------------------------------------------------------
    def run(self, launch: Callable[[torch.Tensor], Any], *, repeat: int | str | None = None) -> CaseResult:
        """Poison, launch, synchronise and check, ``repeat`` times (default: --gemmcheck-repeat);
        record every launch; raise :class:`GemmcheckFailure` when the verdict is a regression."""
        __tracebackhide__ = True  # a failure points at the test's case.run line, not in here
        if not callable(launch):
            raise CaseError(f"case.run takes a callable launch(out), got {launch!r}")
        repeat = self.context.settings.repeat if repeat is None else repeat
        if repeat != AUTO and (isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1):
            raise CaseError(f"repeat must be a whole number >= 1 or 'auto', got {repeat!r}")
        result = self._new_result()
        loop = LaunchLoop(self, launch, result, repeat=None if repeat == AUTO else repeat,
                          wants_consensus_checksum=not self.context.judge)
        raised = loop.run()
        return self._conclude(result, raised, len(result.launches) if repeat == AUTO else repeat)

    def _new_result(self, kind: type[CaseResult] = CaseResult) -> CaseResult:
        return kind(
            key=self.key, kernel=self.kernel, m=self.m, n=self.n, k=self.k, quant=self.quant,
            tile=self.tile_text, out_dtype=dtype_name(self.out_dtype), params=self.params,
            fp8=self.fp8.name if self.fp8 else None, seed=self.seed, device=str(self.device),
            deterministic=self.deterministic, rtol=self.tolerance.rtol, floor=self.tolerance.floor,
            nodeid=self.context.nodeid, stack=self.context.stack_info(),
        )

    def _conclude(self, result: CaseResult, raised: BaseException | None = None, planned: int | None = None):
        """Judged, recorded, and raised when it fails; a --gemmcheck-processes child only records:
        its parent judges the aggregate."""
        __tracebackhide__ = True
        if not self.context.judge:
            self.context.record(result)
            return result
        conclusion = conclude(result, self.context.settings, self.context.baseline_for, raised=raised, planned=planned)
        self.context.record(result)
        if conclusion.failure is not None:
            raise conclusion.failure
        return result
