"""Cursor's times: milliseconds since the epoch, as RFC 3339."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..draft import EPOCH

JSON = Any


def iso(ms: JSON) -> str:
    """``ms`` (milliseconds since the epoch) as RFC 3339, else the epoch."""
    if isinstance(ms, int) and not isinstance(ms, bool) and 0 < ms < 2**45:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return EPOCH
