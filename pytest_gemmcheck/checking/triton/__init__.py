"""GPU-side implementations of the check, chosen at run time.

Importing this package costs nothing: triton (and torch) load only when a fused function is
used, so the plugin can ask :func:`available` on any machine.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading


def interpreting() -> bool:
    """Whether Triton kernels run in its interpreter (``TRITON_INTERPRET=1``): on CPU tensors,
    with numpy. Triton reads the flag when a kernel is defined, so it must be set before
    :mod:`pytest_gemmcheck.checking.triton.fused_check` is imported."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


@functools.lru_cache(maxsize=1)
def triton_importable() -> bool:
    # triton.language, not triton: a folder named triton on sys.path (a kernel repo's own, say)
    # imports as a namespace package, and only the real Triton has the language
    try:
        importlib.import_module("triton.language")
    except Exception:  # not installed, or installed without a usable backend
        return False
    return True


def available(tensor=None) -> bool:
    """Whether :mod:`~pytest_gemmcheck.checking.triton.fused_check` can check ``tensor``: triton imports, and
    the tensor is on a GPU (CUDA or ROCm, both ``cuda`` in torch) or the Triton interpreter is
    on. Without a tensor: whether it could check a tensor on the current GPU."""
    if not triton_importable():
        return False
    if interpreting():
        return True
    if tensor is None:
        import torch

        return torch.cuda.is_available()
    device = getattr(tensor, "device", None)
    return getattr(device, "type", None) == "cuda"


_key_thread: threading.Thread | None = None


def warm_up_key() -> threading.Thread | None:
    """Triton's cache key worked out by a thread of its own, at most once a process: the key
    of every kernel's first compile in a process, ``triton_key()`` (a sha256 of Triton's
    library and sources: 0.29 s on one core here, 0.33 s on an H100 host, hashed with the GIL
    released), then ready by the first launch rather than worked out in front of it. A
    session starts it as its first GPU case opens the history and the GPU. The thread, or
    None where it was not started (the interpreter needs no key)."""
    global _key_thread
    if _key_thread is None and not interpreting():
        _key_thread = threading.Thread(target=_work_out_key, name="gemmcheck-triton-key", daemon=True)
        _key_thread.start()
    return _key_thread


def _work_out_key() -> None:
    try:
        from triton.runtime.cache import triton_key

        triton_key()  # kept by its own cache for the process's first compile
    except Exception:  # noqa: S110 - not installed, or another Triton: the first compile works it out, and says why not
        pass
