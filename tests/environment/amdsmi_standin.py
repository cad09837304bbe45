"""A stand-in for ROCm's ``amdsmi`` Python package, for the contention monitor's tests: the
functions the monitor may call, behaving as the package's documented API does (its README and
``amdsmi_interface.py``, ROCm 6.x):

* handles are opaque ``amdsmi_processor_handle`` objects; every function refuses anything else
  with ``AmdSmiParameterException``, and nothing works before ``amdsmi_init``;
* ``amdsmi_get_processor_handle_from_bdf`` takes ``DDDD:BB:DD.F`` (4 hex digits of domain) or
  ``BB:DD.F``, any case; another spelling raises ``AmdSmiBdfFormatException``, an unknown
  device ``AmdSmiLibraryException`` (AMDSMI_STATUS_NOT_FOUND);
* ``amdsmi_get_gpu_device_bdf`` spells it ``0000:19:00.0``; ``amdsmi_get_gpu_device_uuid``
  gives a lower-case UUID made from the ASIC serial and device id;
* ``amdsmi_get_gpu_process_list`` gives one dict per process, this one included: ``name``
  ("N/A" without the permission to read it), ``pid``, ``mem`` (bytes), ``engine_usage``,
  ``memory_usage``;
* ``amdsmi_get_gpu_activity`` gives ``gfx_activity``, ``umc_activity`` and ``mm_activity``,
  each "N/A" where the device does not report it.

Build one with :func:`make`; ``failing`` names functions that raise a library error (a status).
"""

from __future__ import annotations

import enum
import re
import types

AMDSMI_STATUS_NO_PERM = 10
AMDSMI_STATUS_NOT_FOUND = 31
AMDSMI_STATUS_NOT_INIT = 32
AMDSMI_STATUS_DRIVER_NOT_LOADED = 34
_INFO = {
    AMDSMI_STATUS_NO_PERM: "AMDSMI_STATUS_NO_PERM - Permission Denied",
    AMDSMI_STATUS_NOT_FOUND: "AMDSMI_STATUS_NOT_FOUND - Device Not found",
    AMDSMI_STATUS_NOT_INIT: "AMDSMI_STATUS_NOT_INIT - Device not initialized",
    AMDSMI_STATUS_DRIVER_NOT_LOADED: "AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded",
}


class AmdSmiException(Exception):
    """Base smi exception class"""


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code):
        super().__init__(err_code)
        self.err_code = abs(err_code)
        self.err_info = _INFO.get(self.err_code, "AMDSMI_STATUS_UNKNOWN_ERROR - An unknown error occurred")

    def __str__(self):
        return f"Error code:\n\t{self.err_code} | {self.err_info}"


class AmdSmiRetryException(AmdSmiLibraryException):
    pass


class AmdSmiParameterException(AmdSmiException):
    def __init__(self, received, expected):
        super().__init__()
        self.err_msg = f"Invalid parameter:\nActual type: {type(received)}\nExpected type: {expected}"

    def __str__(self):
        return self.err_msg


class AmdSmiBdfFormatException(AmdSmiException):
    def __init__(self, bdf):
        super().__init__()
        self.bdf = bdf

    def __str__(self):
        return f"Wrong BDF format: {self.bdf}."


class AmdSmiInitFlags(enum.IntEnum):
    INIT_ALL_PROCESSORS = 0xFFFFFFFF
    INIT_AMD_CPUS = 1 << 0
    INIT_AMD_GPUS = 1 << 1


class amdsmi_processor_handle:  # noqa: N801 (the package's own name)
    def __init__(self, device):
        self._device = device


def _bdf_parts(bdf):
    # amdsmi_interface._parse_bdf: 4 hex digits of domain, or none
    match = re.match(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-1][0-9a-fA-F])\.([0-7])$", bdf or "")
    if match:
        return [int(x, 16) for x in match.groups()]
    match = re.match(r"^([0-9a-fA-F]{2}):([0-1][0-9a-fA-F])\.([0-7])$", bdf or "")
    return [0] + [int(x, 16) for x in match.groups()] if match else None


def make(devices, *, failing=None, init_error=None):
    """A module object: ``devices`` is a list of dicts with ``bdf`` ("0000:19:00.0"), ``serial``
    (an int), ``device_id``, ``processes`` (dicts of ``pid``, ``name``, ``mem``, or a callable
    giving them) and ``gfx_activity`` (an int, or None for "N/A"). ``failing``: {function name:
    status} of functions that raise AmdSmiLibraryException."""
    failing = dict(failing or {})
    state = {"init": False}
    handles = [amdsmi_processor_handle(device) for device in devices]

    def call(name, handle=None):
        if not state["init"]:
            raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_INIT)
        if handle is not None and not isinstance(handle, amdsmi_processor_handle):
            raise AmdSmiParameterException(handle, amdsmi_processor_handle)
        if name in failing:
            raise AmdSmiLibraryException(failing[name])
        return handle._device if handle is not None else None

    def amdsmi_init(flag=AmdSmiInitFlags.INIT_AMD_GPUS):
        if not isinstance(flag, AmdSmiInitFlags):
            raise AmdSmiParameterException(flag, AmdSmiInitFlags)
        if init_error is not None:
            raise AmdSmiLibraryException(init_error)
        state["init"] = True

    def amdsmi_get_processor_handles():
        call("amdsmi_get_processor_handles")
        return list(handles)

    def amdsmi_get_processor_handle_from_bdf(bdf):
        parts = _bdf_parts(bdf)
        if parts is None:
            raise AmdSmiBdfFormatException(bdf)
        call("amdsmi_get_processor_handle_from_bdf")
        for handle in handles:
            if _bdf_parts(handle._device["bdf"]) == parts:
                return handle
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_FOUND)

    def amdsmi_get_gpu_device_bdf(handle):
        domain, bus, device, function = _bdf_parts(call("amdsmi_get_gpu_device_bdf", handle)["bdf"])
        return f"{domain:04x}:{bus:02x}:{device:02x}.{function:x}"

    def amdsmi_get_gpu_device_uuid(handle):
        device = call("amdsmi_get_gpu_device_uuid", handle)
        serial, did = device["serial"], device["device_id"]
        return (
            f"{did & 0xFFFF:04x}ff{(serial >> 56) & 0xFF:02x}-0000-1000-80{(serial >> 48) & 0xFF:02x}-"
            f"{(serial >> 32) & 0xFFFF:04x}{serial & 0xFFFFFFFF:08x}"
        )

    def amdsmi_get_gpu_process_list(handle):
        device = call("amdsmi_get_gpu_process_list", handle)
        listed = device["processes"]() if callable(device["processes"]) else device["processes"]
        return [
            {
                "name": p.get("name") or "N/A",
                "pid": p["pid"],
                "mem": p.get("mem", 0),
                "engine_usage": {"gfx": 0, "enc": 0},
                "memory_usage": {"gtt_mem": 0, "cpu_mem": 0, "vram_mem": p.get("mem", 0)},
            }
            for p in listed
        ]

    def amdsmi_get_gpu_activity(handle):
        activity = call("amdsmi_get_gpu_activity", handle).get("gfx_activity")
        return {"gfx_activity": "N/A" if activity is None else activity, "umc_activity": "N/A", "mm_activity": "N/A"}

    module = types.ModuleType("amdsmi")
    for value in (
        AmdSmiException,
        AmdSmiLibraryException,
        AmdSmiRetryException,
        AmdSmiParameterException,
        AmdSmiBdfFormatException,
        AmdSmiInitFlags,
        amdsmi_processor_handle,
        amdsmi_init,
        amdsmi_get_processor_handles,
        amdsmi_get_processor_handle_from_bdf,
        amdsmi_get_gpu_device_bdf,
        amdsmi_get_gpu_device_uuid,
        amdsmi_get_gpu_process_list,
        amdsmi_get_gpu_activity,
    ):
        setattr(module, value.__name__, value)
    return module
