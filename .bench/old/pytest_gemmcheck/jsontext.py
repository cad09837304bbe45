"""Strict JSON of recorded values. JSON has no NaN or infinity: PostgreSQL refuses them, SQLite
would keep text that is no JSON, and a reader of ``--format json`` would choke on Python's
``NaN``. A measurement that is not a number is written as null."""

from __future__ import annotations

import json
import math


def finite(value):
    """``value`` with every non-finite float, in dicts and lists too, replaced by None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def dumps(value, **options) -> str:
    return json.dumps(finite(value), allow_nan=False, **options)
