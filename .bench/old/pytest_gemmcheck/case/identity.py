"""What makes a case the case it is: its output dtype, its tile and the stable key hashed from
them and the rest of its configuration."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import torch

from ..errors import CaseError
from ..records.printable import dtype_name

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


def out_dtype(value) -> torch.dtype:
    """An output dtype from a dtype or its name; CaseError for one that cannot hold the poison."""
    if isinstance(value, torch.dtype):
        dtype = value
    elif isinstance(value, str) and value.removeprefix("torch.") in _OUT_DTYPES:
        dtype = _OUT_DTYPES[value.removeprefix("torch.")]
    else:
        raise CaseError(f"out_dtype={value!r} is not a dtype; use torch.bfloat16, torch.float16 or torch.float32")
    if dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise CaseError(
            f"out_dtype={dtype_name(dtype)} cannot hold the NaN poison or is not a GEMM output type; "
            "use bfloat16, float16 or float32"
        )
    return dtype


def parse_tile(tile: str | tuple[int, int] | None) -> tuple[int, int] | None:
    """(rows, columns) of a tile given as 'MxN' or a pair; ValueError otherwise."""
    if tile is None:
        return None
    if isinstance(tile, str):
        parts = tile.lower().split("x")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"tile={tile!r} is not of the form 'MxN' (e.g. '256x128')")
        tile = (int(parts[0]), int(parts[1]))
    tm, tn = (int(v) for v in tile)
    if tm <= 0 or tn <= 0:
        raise ValueError(f"tile={tile!r} must have positive sizes")
    return tm, tn


def case_key(identity: dict[str, Any]) -> str:
    """A stable hash of what makes a case the case it is (not the seed, not the device)."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
