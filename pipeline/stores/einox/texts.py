"""The fixed texts einox writes, matched by prefix or pattern (spec §5, §7, §10).

System texts are Chinese; they are matched as written upstream, never translated.
"""

from __future__ import annotations

import re

#: harness-injected user message prefix -> (kind, the user typed it)
INJECTED = (
    ("（系统通知）", "notify", False),
    ("（系统注记）", "abort_note", False),
    ("（质量门未过）", "gate_feedback", False),
    ("（用户运行中补充）", "steer", True),
)
STEER_RE = re.compile(r"^（[^（）]{1,64} 运行中补充）")
FORK_SOURCE_RE = re.compile(r"会话 ?(s[0-9a-f]{8})")
FORK_ANCHOR_RE = re.compile(r"#(\d+)")
PLACEHOLDER = "<persisted-output>"
SPILL_RE = re.compile(r"spill/trunc/([A-Za-z0-9._-]+)")
GATE_EXHAUSTED = "质量门未过"


def injected(text: str) -> tuple[str, bool] | None:
    """(kind, typed by the user) of a harness-injected user message, or None."""
    for prefix, kind, typed in INJECTED:
        if text.startswith(prefix):
            return kind, typed
    if STEER_RE.match(text):
        return "steer", True
    return None
