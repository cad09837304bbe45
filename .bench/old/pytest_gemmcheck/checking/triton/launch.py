"""Launching the check's Triton kernels with little host time.

``kernel[grid](...)`` costs the host tens of microseconds per launch in Triton 3.6 (it binds
the arguments, builds a cache key, and checks every global the kernel uses for changes:
about 45 here), which the GPU spends waiting between a launch and its check: 188 us for the
check's two kernels on one H200 host, against 167 us of GPU time. So the first launch of each
specialisation goes through Triton, which compiles and returns the compiled kernel, and later
launches call that compiled kernel directly.

The cache key holds everything Triton specialises a kernel on, conservatively: each tensor's
dtype and whether its address is a multiple of 16 bytes; each integer's width class, whether
it is a multiple of 16 and whether it is 1; the constexpr values, the warps and the device.
Anything it does not recognise, the interpreter, or a Triton whose compiled kernels do not
launch this way, takes Triton's own path.

For diagnosis, :func:`diagnose` after a launch waits for that kernel (with
``RUNTIME.synchronize_each_kernel``), so that a fault names the kernel that caused it.
"""

from __future__ import annotations

import torch

from .runtime import RUNTIME

_CACHE_LIMIT = 512


def _argument_key(value):
    if isinstance(value, torch.Tensor):
        return ("t", value.dtype, value.data_ptr() % 16 == 0)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", value % 16 == 0, value == 1, -(2**31) <= value < 2**31, 0 <= value < 2**63)
    if isinstance(value, float):
        return ("f",)
    return None  # unknown: no direct launch


def launch(kernel, programs: int, args: tuple, constexprs: dict, num_warps: int, *, interpreted: bool) -> None:
    """``kernel[(programs,)](*args, **constexprs, num_warps=num_warps)``, by the compiled
    kernel once Triton has compiled this specialisation."""
    if interpreted or not RUNTIME.direct_launch or RUNTIME.direct_launch_refused:
        kernel[(programs,)](*args, **constexprs, num_warps=num_warps)
        return
    argument_keys = tuple(_argument_key(value) for value in args)
    device = args[0].device if isinstance(args[0], torch.Tensor) else None  # compiled kernels are per device
    if None in argument_keys or device is None:
        kernel[(programs,)](*args, **constexprs, num_warps=num_warps)
        return
    key = (kernel, device, num_warps, tuple(sorted(constexprs.items())), argument_keys)
    cached = RUNTIME.compiled_kernels.get(key)
    if cached is None:
        compiled = kernel[(programs,)](*args, **constexprs, num_warps=num_warps)
        if len(RUNTIME.compiled_kernels) < _CACHE_LIMIT and compiled is not None:
            RUNTIME.compiled_kernels[key] = (compiled, _full_arguments_order(kernel))
        return
    compiled, order = cached
    positional = iter(args)
    full = [constexprs[name] if is_constexpr else next(positional) for name, is_constexpr in order]
    try:
        compiled[(programs, 1, 1)](*full)
    except (TypeError, AttributeError, KeyError):  # refused before launching: this Triton launches otherwise
        RUNTIME.direct_launch_refused = True
        kernel[(programs,)](*args, **constexprs, num_warps=num_warps)


def _full_arguments_order(kernel) -> list[tuple[str, bool]]:
    return [(param.name, bool(param.is_constexpr)) for param in kernel.params]


def diagnose(name: str, *, interpreted: bool) -> None:
    """With ``RUNTIME.synchronize_each_kernel``, wait for the kernel just launched and name it
    in a fault."""
    if RUNTIME.synchronize_each_kernel and not interpreted and not torch.cuda.is_current_stream_capturing():
        try:
            torch.cuda.synchronize()
        except Exception as exc:
            raise RuntimeError(f"{name} faulted ({type(exc).__name__}: {exc})") from exc
