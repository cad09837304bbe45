"""What the fixtures hand to tests: a case factory, a poisoned output, a reference."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from ..case.case import Case, default_device
from ..case.host import CaseHost
from ..case.identity import out_dtype as _out_dtype
from ..case.quant import Inputs, quant_mode
from ..case.reference import compute_reference
from ..config.table import TestOverrides
from ..errors import CaseError
from ..records.result import CaseResult
from .state import GemmcheckSession, is_child


class GemmcheckFixture:
    """The ``gemmcheck`` fixture: ``gemmcheck.case(kernel, m=..., n=..., k=..., ...)``."""

    def __init__(self, session: GemmcheckSession, overrides: TestOverrides, nodeid: str, sink: list):
        session.start_cases()  # the history is opened (and refused) here, before the test launches anything
        self._session = session
        self.settings = overrides.settings
        self._host = CaseHost(
            overrides.settings,
            record=self._record,
            baseline_for=session.history.baseline_for,
            stack_info=session.stack_info,
            lost_devices=session.lost_devices,
            unusable=_skip_lost_device,
            judge=not is_child(),
            sanitize=self._sanitize,
            caches=session.caches,
            deterministic=overrides.deterministic,
            nodeid=nodeid,
            sanitize_shape=overrides.sanitize_shape,
        )
        self._context = self._host.context
        self._nodeid = nodeid
        self._sink = sink
        self.results: list[CaseResult] = []

    def _record(self, result: CaseResult) -> None:
        if self._context.judge:  # a --gemmcheck-processes child's part is not a result yet: its parent's is
            self._session.config.hook.pytest_gemmcheck_result(result=result)
        self.results.append(result)
        self._sink.append(result.to_dict())

    def _sanitize(self, case: Case) -> list:
        from .processes import sanitize_in_child

        return sanitize_in_child(self._session.config, self._nodeid, self.settings, case.key, case.device)

    def case(self, kernel: str, **kwargs: Any) -> Case:
        self._session.start_cases()
        return self._host.case(kernel, **kwargs)

    def search(self, kernel: str, make_launch, **arguments: Any):
        """``gemmcheck.search(kernel, make_launch, m=..., n=..., k=..., ...)``: the smallest failing
        configuration, its probes the test's cases; the test fails with it and its evidence."""
        __tracebackhide__ = True
        from .search_in_test import search_in_test

        self._session.start_cases()
        return search_in_test(self._session, self._context, kernel, make_launch, **arguments)


def _skip_lost_device(message: str):
    pytest.skip(f"gemmcheck: {message}")


class PoisonedOutput:
    """``poisoned_output(m, n, dtype=torch.bfloat16, device=None)``: an output full of NaN;
    ``poisoned_output.poison(t)`` fills an existing one again."""

    @staticmethod
    def poison(t: torch.Tensor) -> torch.Tensor:
        return t.fill_(float("nan"))

    def __call__(self, m: int, n: int, *, dtype=torch.bfloat16, device=None) -> torch.Tensor:
        out = torch.empty((m, n), dtype=_out_dtype(dtype), device=device if device is not None else default_device())
        return self.poison(out)


def bf16_reference(a, b=None, *, a_scale=None, b_scale=None, quant: str | None = None, out_dtype=torch.bfloat16):
    """The reference of a GEMM: ``bf16_reference(inputs)`` for a case's inputs, or
    ``bf16_reference(a, b, a_scale=..., b_scale=..., quant=...)`` for your own operands
    (A [M, K], B [N, K]). fp32 with TF32 off, rounded to ``out_dtype``."""
    if isinstance(a, Inputs):
        if b is not None:
            raise CaseError("bf16_reference(inputs) takes no second operand")
        return compute_reference(a, _out_dtype(out_dtype))
    if b is None:
        raise CaseError("bf16_reference needs inputs, or both operands a [M, K] and b [N, K]")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
        raise CaseError(f"operands must be A [M, K] and B [N, K]; got {list(a.shape)} and {list(b.shape)}")
    if quant is None:
        quant = "bf16" if a_scale is None and b_scale is None else None
        if quant is None:
            raise CaseError("bf16_reference with scales needs quant= to say how they apply")
    quant_mode(quant)  # an unknown name is a clear error here, not a KeyError later
    if quant == "bf16":
        inputs = Inputs("bf16", a, b)
    else:
        fp8 = "e4m3fnuz" if a.dtype == getattr(torch, "float8_e4m3fnuz", None) else "e4m3fn"
        inputs = Inputs(quant, a, b, a_scale, b_scale, fp8)
    return compute_reference(inputs, _out_dtype(out_dtype))
