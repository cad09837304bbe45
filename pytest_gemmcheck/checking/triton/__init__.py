"""GPU-side implementations of the check, chosen at run time.

Importing this package costs nothing: triton (and torch) load only when a fused function is
used, so the plugin can ask :func:`available` on any machine.
"""

from __future__ import annotations

import functools
import importlib
import os


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
