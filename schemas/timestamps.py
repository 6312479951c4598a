"""RFC 3339 timestamps as the Agent Session Format writes them and as Go's RFC3339Nano prints them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

RFC3339_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_rfc3339(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (any fraction length); ``ValueError`` otherwise."""
    m = RFC3339_RE.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}")
    frac = (m.group(7) or "")[:7].ljust(7, "0")[1:] if m.group(7) else "000000"
    zone = m.group(8)
    zone = "+00:00" if zone in ("Z", "z") else zone
    text = f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}:{m.group(5)}:{m.group(6)}.{frac}{zone}"
    return datetime.fromisoformat(text)


def rfc3339nano(ts: str, *, to_utc: bool = True) -> str:
    """Go's RFC3339Nano: trailing fractional zeros dropped; UTC ``Z`` or the entry's own offset."""
    m = RFC3339_RE.match(ts)
    if not m:
        return ts
    frac = (m.group(7) or "")[1:10].rstrip("0")
    zone = m.group(8)
    base = f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}:{m.group(5)}:{m.group(6)}"
    if zone in ("Z", "z") or zone in ("+00:00", "-00:00"):
        zone = "Z"
    elif to_utc:
        try:
            base = parse_rfc3339(base + zone).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
            zone = "Z"
        except OverflowError:  # e.g. 0001-01-01T00:30+01:00 has no UTC form: keep the offset
            pass
    return f"{base}.{frac}{zone}" if frac else f"{base}{zone}"


def ms_to_rfc3339(ms: int) -> str:
    """Unix milliseconds as the UTC time the Agent Session Format writes (RFC3339Nano)."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    frac = f"{ms % 1000:03d}".rstrip("0")
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}Z" if frac else "Z")
