"""RFC 3339 timestamps as the Agent Session Format writes them and as Go's RFC3339Nano prints them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

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
            base = seconds_text(parse_rfc3339(base + zone).astimezone(UTC))
            zone = "Z"
        except OverflowError:  # e.g. 0001-01-01T00:30+01:00 has no UTC form: keep the offset
            pass
    return f"{base}.{frac}{zone}" if frac else f"{base}{zone}"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: the Unix milliseconds of the first and last instant an RFC 3339 time can write
MIN_MS, MAX_MS = -62135596800000, 253402300799999


def ms_to_rfc3339(ms: int) -> str:
    """Unix milliseconds as the UTC time the Agent Session Format writes (RFC3339Nano);
    ``OverflowError`` outside years 1 to 9999 (``MAX_MS``).  Exact on every platform (no C
    ``gmtime``, which refuses some years)."""
    dt = _EPOCH + timedelta(milliseconds=ms)
    frac = f"{ms % 1000:03d}".rstrip("0")
    return seconds_text(dt) + (f".{frac}Z" if frac else "Z")


def seconds_text(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of ``dt``, the year in four digits (``strftime("%Y")`` writes
    year 1 as ``1`` on some platforms)."""
    return f"{dt.year:04d}" + dt.strftime("-%m-%dT%H:%M:%S")
