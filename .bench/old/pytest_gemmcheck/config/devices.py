"""Which GPU a pytest-xdist worker uses: ``--gemmcheck-devices``.

Under pytest-xdist each worker process takes its own GPU so that N workers on a host with N
GPUs give about N times the launches. ``--gemmcheck-devices`` chooses the GPUs ("0,1,3",
ranges like "0-3", or "all"); worker ``gwK`` takes the (K mod count)-th of them. Indices are
those torch sees, i.e. after ``CUDA_VISIBLE_DEVICES`` / ``HIP_VISIBLE_DEVICES``. Pure
Python: nothing here imports torch.
"""

from __future__ import annotations

import re

DEVICES_OPTION = "--gemmcheck-devices"

_WORKER_ID = re.compile(r"gw(\d+)")
MAX_GPU_INDEX = 1024  # a range beyond this is a typo, not a host


# --- choosing a device ---------------------------------------------------------------------


def parse_devices(spec: str | None) -> tuple[int, ...] | None:
    """The GPU indices a ``--gemmcheck-devices`` value names, in order; ``None`` for "all"
    (or no value). Syntax only: whether they exist is checked against the visible GPUs by
    :func:`choose_devices`. Raises ValueError naming the option."""
    if spec is None:
        return None
    text = str(spec).strip()
    if text.lower() in ("", "all"):
        return None
    devices: list[int] = []
    named: set[int] = set()
    for item in text.replace(" ", "").split(","):
        if not item:
            raise ValueError(f"{DEVICES_OPTION}={spec!r}: empty item; use e.g. '0,1,3', '0-3' or 'all'")
        bounds = item.split("-")
        if len(bounds) > 2 or not all(bound.isdigit() for bound in bounds):
            raise ValueError(
                f"{DEVICES_OPTION}={spec!r}: {item!r} is not a GPU index or a range "
                "like '0-3'; use e.g. '0,1,3', '0-3' or 'all'"
            )
        first, last = int(bounds[0]), int(bounds[-1])
        if last < first:
            raise ValueError(f"{DEVICES_OPTION}={spec!r}: range {item!r} runs backwards")
        if last >= MAX_GPU_INDEX:
            raise ValueError(
                f"{DEVICES_OPTION}={spec!r}: GPU {last} is beyond any host's GPUs (indices below {MAX_GPU_INDEX})"
            )
        for index in range(first, last + 1):
            if index in named:
                raise ValueError(f"{DEVICES_OPTION}={spec!r}: GPU {index} is named twice")
            named.add(index)
            devices.append(index)
    return tuple(devices)


def choose_devices(spec: str | None, visible_count: int) -> tuple[int, ...]:
    """The GPUs to spread workers over: those ``spec`` names, or every visible one."""
    named = parse_devices(spec)
    if named is None:
        return tuple(range(visible_count))
    missing = [index for index in named if index >= visible_count]
    if missing:
        seen = f"GPUs 0-{visible_count - 1}" if visible_count > 1 else ("GPU 0" if visible_count else "no GPU")
        raise ValueError(
            f"{DEVICES_OPTION}={spec!r}: GPU {', '.join(map(str, missing))} is not visible "
            f"(this process sees {seen}; indices count after CUDA_VISIBLE_DEVICES)"
        )
    return named


def worker_number(worker_id: str | None) -> int | None:
    """3 for pytest-xdist's "gw3"; None outside xdist (no worker id, or the "master" process)."""
    if worker_id is None or worker_id in ("", "master"):
        return None
    match = _WORKER_ID.fullmatch(worker_id)
    if match is None:
        raise ValueError(f"{worker_id!r} is not a pytest-xdist worker id (expected 'gw0', 'gw1', ...)")
    return int(match.group(1))


def device_for_worker(worker_id: str | None, spec: str | None, visible_count: int) -> int | None:
    """The GPU index this process should use, or None when no GPU is visible (cases then run
    on the CPU; a malformed ``spec`` is still an error, so that a typo in a shared ini file
    shows on every machine).

    Outside xdist the first chosen GPU; worker ``gwK`` the (K mod count)-th, so that workers
    spread evenly and more workers than GPUs share them round-robin."""
    if visible_count < 0:
        raise ValueError(f"visible_count must be >= 0, got {visible_count}")
    if visible_count == 0:
        parse_devices(spec)
        return None
    devices = choose_devices(spec, visible_count)
    number = worker_number(worker_id)
    return devices[0] if number is None else devices[number % len(devices)]
