"""A case: one kernel configuration, its seeded inputs and reference, and ``run``: the launch
loop (loop.py), then the verdict (judging/) and the record."""

from __future__ import annotations

import json
import math
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import torch

from ..checking.backends import select_checker
from ..checking.rule import Tolerance
from ..config.table import BY_NAME, Settings, parse_repeat, parse_seed, parse_shape
from ..errors import CaseError
from ..judging.baseline import CLEAN, Baseline
from ..judging.conclude import conclude
from ..launch.loop import LaunchLoop
from ..launch.stopping import StoppingRule
from ..records.result import CaseResult, CompiledResult
from .cache import LruCache
from .identity import case_key, dtype_name, parse_tile
from .identity import out_dtype as parse_out_dtype
from .kept_inputs import KeptInputs, input_checksums
from .quant import Inputs, fp8_flavour, quant_mode
from .reference import ProtectedReference, compute_reference
from .reference_identity import reference_identity, reference_name
from .sanitized import inputs_by_copy, launch_once, not_launched

MAX_NAME = 255  # a kernel's name: a name, stored as one, not a description


def _parsed(name: str, value) -> float:
    """A case's own rtol or floor, by the rules of the option of that name."""
    try:
        return BY_NAME[name].parse(value)
    except ValueError as exc:
        raise CaseError(f"{name}={value!r}: {exc}") from None


def usable_device(device) -> torch.device:
    """``device`` as torch places tensors there, when this process can run a case there: the
    CPU as ``cpu`` (a CPU tensor's device has no index: ``cpu:0`` is not equal to it), a GPU with
    its index (``cuda`` is the current GPU, as a tensor made on ``cuda`` says); else a CaseError
    that says why. Every comparison of devices, the inputs' cache key and the records then see
    one name for one device."""
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise CaseError(f"device={device!r} is not a device: {str(exc).splitlines()[0]}") from None
    if chosen.type == "cpu":
        return torch.device("cpu")
    if chosen.type != "cuda":
        raise CaseError(f"device={device!r}: a case runs on the CPU or a GPU ('cuda', 'cuda:1'), not on {chosen.type}")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if not count:
        raise CaseError(f"device={device!r}: this process sees no GPU")
    if chosen.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    if chosen.index >= count:
        raise CaseError(
            f"device={device!r}: this process sees {count} GPU{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})"
        )
    return chosen


def memory_of(device: torch.device) -> int:
    """Bytes of memory ``device`` (a usable_device) has in all (the host's for the CPU)."""
    import os

    if device.type == "cuda":
        return torch.cuda.get_device_properties(device.index).total_memory
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _size_words(count: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if count < 1000 or unit == "PB":
            return f"{count:.3g} {unit}" if unit != "bytes" else f"{int(count)} bytes"
        count /= 1000
    raise AssertionError("unreachable")


def check_fits(m: int, n: int, k: int, *, operand_bytes: int, out_bytes: int, device: torch.device) -> None:
    """A case whose tensors cannot fit its device is refused before anything is allocated: its
    operands and their pristine copies (the guards', and on the CPU the cache's: kept_inputs.py),
    the reference, the two output buffers and the copy consistency keeps."""
    operand_copies = 3 if device.type == "cpu" else 2
    needed = operand_copies * (m + n) * k * operand_bytes + 4 * m * n * out_bytes
    total = memory_of(device)
    if needed > total:
        raise CaseError(
            f"a {m}x{n}x{k} case needs {_size_words(needed)} of {_size_words(total)} on {device} "
            "(operands and their copies, the reference, two outputs and a kept copy)"
        )


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
    device_lost: Callable[[torch.device], None] = lambda device: None  # a launch hung on it
    judge: bool = True  # False in a --gemmcheck-processes child: its parent judges the aggregate
    raises: bool = True  # a failing verdict raises from case.run (pytest); a script asks with check=True
    # --gemmcheck-sanitize, in the judging process: the case's launch under each tool (case/sanitized.py)
    sanitize: Callable[[Case], list] | None = None
    sanitize_shape: tuple[int, int, int] | None = None  # the test's marker's
    sanitizing: bool = False  # a sanitizer child: only the target case launches, once, unchecked


def _non_finite(value, path: str) -> str | None:
    """Where in ``value`` (dicts and lists) the first NaN or infinity is, as ``params['a'][0]``."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _non_finite(item, f"{path}[{key!r}]")
        if found:
            return found
    return None


class Case:
    def __init__(
        self,
        context: CaseContext,
        kernel: str,
        *,
        m: int,
        n: int,
        k: int,
        quant: str = "bf16",
        tile: str | tuple[int, int] | None = None,
        out_dtype=torch.bfloat16,
        device=None,
        seed: int | None = None,
        fp8: str = "e4m3fn",
        params: dict[str, Any] | None = None,
        deterministic: bool | None = None,
        rtol: float | None = None,
        floor: float | None = None,
        reference: Callable[[Inputs], torch.Tensor] | None = None,
        sanitize_shape: tuple[int, int, int] | None = None,
    ):
        if not isinstance(kernel, str) or not kernel:
            raise CaseError(f"kernel must be a non-empty name, got {kernel!r}")
        if len(kernel) > MAX_NAME or not kernel.isprintable():
            raise CaseError(
                f"kernel must be a printable name of at most {MAX_NAME} characters, got "
                f"{len(kernel):,} characters: {kernel[:40]!r}{'...' if len(kernel) > 40 else ''}"
            )
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
        self.device = usable_device(device) if device is not None else default_device()
        self.fp8 = fp8_flavour(fp8) if self.mode.uses_fp8 else None
        check_fits(
            m,
            n,
            k,
            operand_bytes=1 if self.mode.uses_fp8 else 2,
            out_bytes=torch.empty((), dtype=self.out_dtype).element_size(),
            device=self.device,
        )
        settings = context.settings
        try:
            self.seed = settings.seed if seed is None else parse_seed(seed)
        except ValueError as exc:
            raise CaseError(f"seed: {exc}") from None
        if params is not None and not (isinstance(params, dict) and all(isinstance(name, str) for name in params)):
            raise CaseError(
                f"params must be a dict of the kernel's knobs by name, e.g. {{'fuse': False}}, got {params!r}"
            )
        self.params = dict(params or {})
        try:
            json.dumps(self.params, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            where = _non_finite(self.params, "params")
            reason = f"{where} is not finite, and JSON has no NaN or infinity" if where else str(exc)
            raise CaseError(f"params must be JSON-serialisable (they are part of the case key): {reason}") from None
        if reference is not None and not callable(reference):
            raise CaseError(f"reference must be a callable reference(inputs) -> [m, n] tensor, got {reference!r}")
        self.reference_fn = reference
        # what it computes, for the key and the reference cache: two references never share them
        self.reference_key = None if reference is None else reference_identity(reference)
        if deterministic is not None and not isinstance(deterministic, bool):
            raise CaseError(
                f"deterministic must be True, False or None (from the test's marker, else "
                f"--gemmcheck-nondeterministic), got {deterministic!r}"
            )
        self._handed_out: list[weakref.ref] = []  # copies reference() gave
        # the inputs this case handed out, again at each call: its test, its guards and its
        # reference read the same tensors even where the session's cache cannot hold them (too large)
        self._kept: KeptInputs | None = None
        if deterministic is None:
            deterministic = context.deterministic
        if deterministic is None:
            deterministic = not settings.is_nondeterministic(kernel)
        self.deterministic = bool(deterministic)
        self.tolerance = Tolerance(
            rtol=settings.rtol if rtol is None else _parsed("rtol", rtol),
            floor=settings.floor if floor is None else _parsed("floor", floor),
        )
        try:  # not part of the key: where the sanitizer runs, not what the case is
            self.sanitize_shape = None if sanitize_shape is None else parse_shape(sanitize_shape)
        except ValueError as exc:
            raise CaseError(f"sanitize_shape: {exc}") from None
        self.sanitize_target = False  # in a sanitizer child: the case it launches

    # --- identity ---------------------------------------------------------------------
    @property
    def out_shape(self) -> tuple[int, int]:
        """[rows, columns] of the output each launch writes (a collective case's rank's part)."""
        return self.m, self.n

    @property
    def tile_text(self) -> str | None:
        return f"{self.tile[0]}x{self.tile[1]}" if self.tile else None

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "m": self.m,
            "n": self.n,
            "k": self.k,
            "quant": self.quant,
            "tile": self.tile_text,
            "out_dtype": dtype_name(self.out_dtype),
            "params": self.params,
            "fp8": self.fp8.name if self.fp8 else None,
            # a case's own reference says what is right: a case of its own (absent otherwise, so
            # that keys made before the override existed still hold)
            **({"reference": self.reference_key} if self.reference_fn is not None else {}),
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
        """Seeded operands: same seed, same bytes, on any machine and device. The session's own,
        proved as they were made, or put back so, each time they are handed out (kept_inputs.py):
        what a test did to them never reaches a later case."""
        if self.context.sanitizing:  # a sanitizer child: no kernel of the harness's proves them
            return self.context.inputs_cache.get(self._inputs_key(), self._make_inputs)
        return self._kept_inputs().inputs

    def _kept_inputs(self) -> KeptInputs:
        key = self._inputs_key()
        # inputs made just now need no proof (on a GPU a read of each and a wait)
        made_now = self._kept is None and key not in self.context.inputs_cache
        kept = self._kept if self._kept is not None else self.context.inputs_cache.get(key, self._keep_inputs)
        if not made_now and kept.changed() and not kept.restore(self._make_inputs):  # reshaped in place: made anew
            self.context.inputs_cache.discard(lambda cached: cached == key)
            kept = self.context.inputs_cache.get(key, self._keep_inputs)
        self._kept = kept
        return kept

    def pristine_inputs(self) -> dict[str, torch.Tensor]:
        """Copies of the inputs :meth:`inputs` last handed out, as they were made and kept beside
        them (never written; the CPU's, empty on a GPU): what the launch loop's guards compare
        with, where a copy of their own cost each run two more copies."""
        return self._kept.pristine if self._kept is not None else {}

    def pristine_input_sums(self) -> dict[str, int]:
        """The checksums of the inputs :meth:`inputs` last handed out, as they were made, by name
        (a GPU's, which proved them at that hand-out; empty on the CPU): the launch loop's guard
        kernel compares the live inputs' with them, where it took them again before the first
        launch."""
        return self._kept.checksums if self._kept is not None else {}

    def _keep_inputs(self) -> KeptInputs:
        """Inputs made, kept with their proof: pristine copies on the CPU (a memcmp), checksums on
        a GPU (by the guard kernel where the check is fused)."""
        inputs = self._make_inputs()
        if inputs.a.device.type != "cuda":
            return KeptInputs(inputs)
        fused = select_checker(self.context.settings.check_backend, inputs.a).name == "triton"
        return KeptInputs(inputs, checksums=partial(input_checksums, fused=fused))

    def _make_inputs(self) -> Inputs:
        if self.context.sanitizing:  # no kernel of the harness's beside the kernel under the sanitizer
            return inputs_by_copy(self.mode, self.m, self.n, self.k, seed=self.seed, device=self.device, fp8=self.fp8)
        return self.mode.make_inputs(self.m, self.n, self.k, seed=self.seed, device=self.device, fp8=self.fp8)

    def forget_inputs(self) -> None:
        """Drop this case's inputs and references from the session's caches: made anew for the
        next case that needs them (a launch changed them)."""
        key = self._inputs_key()
        self._kept = None
        self.context.inputs_cache.discard(lambda cached: cached == key)
        self.context.reference_cache.discard(lambda cached: cached[: len(key)] == key)

    def reference(self) -> torch.Tensor:
        """A copy of the bf16-rounded (out dtype) fp32 reference of :meth:`inputs` (computed
        once): what a test or a kernel does to it never reaches what launches are judged
        against, and a launch that writes into a copy it was given is blamed for it."""
        copy = self.judged_reference().tensor.clone()
        self._handed_out.append(weakref.ref(copy))
        return copy

    @property
    def hands_out_references(self) -> bool:
        """Whether :meth:`reference` gave any copy (alive or not)."""
        return bool(self._handed_out)

    def handed_out_references(self) -> list[torch.Tensor]:
        """The copies :meth:`reference` gave that are still alive."""
        self._handed_out = [ref for ref in self._handed_out if ref() is not None]
        return [t for t in (ref() for ref in self._handed_out) if t is not None]

    def judged_reference(self, inputs: Inputs | None = None) -> ProtectedReference:
        """The harness's own reference, proved unchanged since it was made (on a GPU by the check
        backend's checksum: the fused one reads it once, where the torch one costs hundreds of
        small ops); made again if it was changed. ``inputs``: :meth:`inputs` as handed out just
        now, which it is made from if it is made (else they are handed out, and so proved, again)."""
        key = self._inputs_key() + (dtype_name(self.out_dtype), self.reference_key)
        cache = self.context.reference_cache
        protected = cache.get(key, lambda: self._make_reference(inputs))
        backend = self.context.settings.check_backend
        if not protected.intact(lambda tensor: select_checker(backend, tensor).checksum(tensor)):
            cache.discard(lambda cached: cached == key)
            protected = cache.get(key, lambda: self._make_reference(inputs))
        return protected

    def _make_reference(self, inputs: Inputs | None = None) -> ProtectedReference:
        """The reference, refused when it does not fit the output dtype: an element that overflows
        to inf (float16 holds 65504 at most) would make its row's tolerance infinite, and a kernel
        could write anything there."""
        ref = self._reference_tensor(inputs)
        protected = ProtectedReference(ref)
        # a NaN or an inf is its row's maximum, and so the largest of them: one number tells what a
        # pass over the reference would
        rowmax = protected.rowmax()
        if rowmax.numel() and not math.isfinite(float(rowmax.max())):
            overflowed = int((~torch.isfinite(ref)).sum())
            raise CaseError(
                f"the reference of {self!r} does not fit {dtype_name(self.out_dtype)}: {overflowed:,} "
                f"of its {ref.numel():,} elements overflow; use out_dtype=torch.float32 or "
                "torch.bfloat16, or a smaller K"
            )
        return protected

    def _reference_tensor(self, inputs: Inputs | None = None) -> torch.Tensor:
        """The reference's values, in the output dtype (a collective case's are its rank's part)."""
        if self.reference_fn is not None:
            return self._own_reference()
        return compute_reference(inputs if inputs is not None else self.inputs(), self.out_dtype)

    def _own_reference(self) -> torch.Tensor:
        """The case's ``reference(inputs)``, checked and rounded to the output dtype like the built-in one."""
        name = reference_name(self.reference_fn)
        kept = None if self.context.sanitizing else self._kept_inputs()
        with torch.no_grad():
            ref = self.reference_fn(self.inputs() if kept is None else kept.inputs)
        if kept is not None and kept.changed():  # what it returned was made from other inputs
            kept.restore(self._make_inputs)
            raise CaseError(
                f"reference {name} of {self!r} changed the inputs it was given; it must leave them as "
                "they are (work on a copy: x.a.float() is one)"
            )
        if not isinstance(ref, torch.Tensor) or tuple(ref.shape) != (self.m, self.n) or not ref.is_floating_point():
            got = (
                f"shape {list(ref.shape)}, dtype {dtype_name(ref.dtype)}"
                if isinstance(ref, torch.Tensor)
                else type(ref).__name__
            )
            raise CaseError(
                f"reference {name} of {self!r} must return a floating-point [{self.m}, {self.n}] tensor, got {got}"
            )
        return ref.to(device=self.device, dtype=self.out_dtype).contiguous()

    # --- compiled, not run ----------------------------------------------------------------
    def compile_flydsl(
        self, spec: str, *, params: dict | None = None, arch: str = "gfx950", lint: bool = True
    ) -> CompiledResult:
        """Compile a FlyDSL kernel ('path/to/module.py:function') for ``arch`` in a child process
        (no GPU needed), record its static metrics and lint findings with this case, and judge
        them against the case's last record (--gemmcheck-static)."""
        from ..compiled.static import compile_flydsl

        return self.check_assembly(compile_flydsl(spec, params, arch), lint=lint, source=f"{spec} for {arch}")

    def check_assembly(
        self, assemblies: list[tuple[str, str]], *, lint: bool = True, source: str = ""
    ) -> CompiledResult:
        """The same for AMDGPU assembly texts, given as (name, text) pairs."""
        __tracebackhide__ = True
        from ..compiled.static import analyse

        result = self._new_result(CompiledResult)
        result.static = analyse(assemblies, lint=lint, source=source)
        return self._conclude(result)

    # --- running ------------------------------------------------------------------------
    def run(
        self, launch: Callable[[torch.Tensor], Any], *, repeat: int | str | None = None, check: bool | None = None
    ) -> CaseResult:
        """Poison, launch, synchronise and check, ``repeat`` times (default: --gemmcheck-repeat);
        record every launch; raise :class:`GemmcheckFailure` when the verdict fails (``check``:
        whether to; by default under pytest, not in a script's session)."""
        __tracebackhide__ = True  # a failure points at the test's case.run line, not in here
        repeat = self._repeat(launch, repeat)
        if self.context.sanitizing:  # a sanitizer child: the target's one launch, nothing checked
            if self.sanitize_target:
                launch_once(self, launch)
            return self._new_result()
        result = self._new_result()
        rule = StoppingRule(repeat, self.context.settings)
        raised = LaunchLoop(self, launch, result, rule=rule, wants_consensus_checksum=not self.context.judge).run()
        if self.context.sanitize is not None and self.context.judge:
            result.sanitize = self._sanitized(result)
        return self._conclude(result, raised, rule.planned(len(result.launches)), check=check)

    def _repeat(self, launch, repeat: int | str | None) -> int | str:
        """``case.run``'s arguments checked: its launches (default: --gemmcheck-repeat)."""
        if not callable(launch):
            raise CaseError(f"case.run takes a callable launch(out), got {launch!r}")
        try:
            return self.context.settings.repeat if repeat is None else parse_repeat(repeat)
        except ValueError as exc:
            raise CaseError(f"case.run(repeat=...): {exc}") from None

    def _sanitized(self, result: CaseResult) -> list:
        """--gemmcheck-sanitize: the case's launch under each tool, unless its launches did not all run."""
        return not_launched(result, self.context.settings.sanitize) or self.context.sanitize(self)

    def _new_result(self, kind: type[CaseResult] = CaseResult) -> CaseResult:
        return kind(
            key=self.key,
            kernel=self.kernel,
            m=self.m,
            n=self.n,
            k=self.k,
            quant=self.quant,
            tile=self.tile_text,
            out_dtype=dtype_name(self.out_dtype),
            params=self.params,
            fp8=self.fp8.name if self.fp8 else None,
            seed=self.seed,
            device=str(self.device),
            deterministic=self.deterministic,
            rtol=self.tolerance.rtol,
            floor=self.tolerance.floor,
            nodeid=self.context.nodeid,
            stack=self.context.stack_info(),
        )

    def _conclude(
        self,
        result: CaseResult,
        raised: BaseException | None = None,
        planned: int | None = None,
        check: bool | None = None,
    ):
        """Judged, recorded, and raised when it fails; a --gemmcheck-processes child only records:
        its parent judges the aggregate."""
        __tracebackhide__ = True
        if not self.context.judge:
            self.context.record(result)
            return result
        conclusion = conclude(result, self.context.settings, self.context.baseline_for, raised=raised, planned=planned)
        self.context.record(result)
        if conclusion.failure is not None and (self.context.raises if check is None else check):
            raise conclusion.failure
        return result
