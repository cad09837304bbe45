"""Where cases are made: what a case needs from the session that holds it, built one way for a
pytest test (the ``gemmcheck`` fixture), a script's session (``gc.session``) and the probes of a
search in either. The host decides nothing itself: the session gives it how results are
recorded and judged, and what a lost GPU means there (a skipped test, an error)."""

from __future__ import annotations

from typing import Any, Callable, NoReturn

from ..config.table import Settings
from .cache import LruCache
from .case import Case, CaseContext
from .sanitized import child_case, target_key


class SessionStack:
    """The stack fingerprint of a session's process, collected once (``hook``: pytest's, whose
    ``pytest_gemmcheck_stack_info`` adds fields), with the compute-sanitizer its sanitized
    launches run under when --gemmcheck-sanitize is on."""

    def __init__(self, settings: Settings, hook=None):
        self.settings = settings
        self.hook = hook
        self._stack: dict | None = None

    def __call__(self) -> dict:
        if self._stack is None:
            from ..environment.stack import collect
            from .sanitized import with_sanitizer

            stack = collect(self.hook)
            self._stack = with_sanitizer(stack) if self.settings.sanitize else stack
        return self._stack


def _made(context: CaseContext, kernel: str, kwargs: dict[str, Any]) -> Case:
    """A case, or a collective one where ``collective=`` names a collective (collective.py)."""
    if kwargs.get("collective") is None:
        kwargs.pop("collective", None)
        return Case(context, kernel, **kwargs)
    from .collective import CollectiveCase

    return CollectiveCase(context, kernel, **kwargs)


class CaseHost:
    """Makes a session's cases over one :class:`CaseContext`.

    ``lost_devices``: the session's GPUs a launch hung on (names as torch gives them), shared by
    its hosts; ``unusable(message)`` ends the making of a case on one of them (it raises)."""

    def __init__(
        self,
        settings: Settings,
        *,
        record: Callable,
        baseline_for: Callable,
        stack_info: Callable[[], dict],
        lost_devices: set[str],
        unusable: Callable[[str], NoReturn],
        judge: bool = True,
        raises: bool = True,
        sanitize: Callable[[Case], list] | None = None,
        caches: tuple[LruCache, LruCache] | None = None,
        deterministic: bool | None = None,
        nodeid: str = "",
        sanitize_shape: tuple[int, int, int] | None = None,
    ):
        from ..environment.gpus import device_identity

        inputs_cache, reference_cache = caches if caches is not None else (LruCache(), LruCache())
        self.lost_devices = lost_devices
        self.unusable = unusable
        self.context = CaseContext(
            settings=settings,
            deterministic=deterministic,
            nodeid=nodeid,
            inputs_cache=inputs_cache,
            reference_cache=reference_cache,
            record=record,
            baseline_for=baseline_for,
            stack_info=stack_info,
            device_identity=device_identity,
            device_lost=lambda device: lost_devices.add(str(device)),
            judge=judge,
            raises=raises,
            sanitize=sanitize if settings.sanitize and judge else None,
            sanitize_shape=sanitize_shape,
            sanitizing=target_key() is not None,
        )

    def case(self, kernel: str, **kwargs: Any) -> Case:
        """``gemmcheck.case(kernel, m=..., n=..., k=..., ...)``: in a sanitizer child, the case it
        launches at its sanitize_shape; refused on a GPU an earlier launch hung on."""
        if self.context.sanitizing:
            case = child_case(
                lambda name, **given: _made(self.context, name, given),
                target_key(),
                kernel,
                kwargs,
                self.context.sanitize_shape,
            )
        else:
            case = _made(self.context, kernel, kwargs)
        if str(case.device) in self.lost_devices:
            self.unusable(
                f"{case.device} is unusable: a launch of an earlier case hung on it "
                f"(--gemmcheck-launch-timeout); a GPU kernel cannot be stopped"
            )
        return case
