"""What a model saw: the request settings in force and the context at the end of a path (spec §4.1-§4.2).

Plain data shared by the context algorithm (``trajset.pipeline.tree``), the
ATIF mapping and the tables.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .entries import ConfigEntry
from .session import Entry
from .tools import encode_text_format, encode_tool, tool_name

JSON = Any


@dataclass
class Settings:
    """Request settings in force (spec §4.1); tools are kept as stored."""

    model: str = ""
    instructions: str | None = None
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    text_format: JSON = None
    text_verbosity: str | None = None
    tools: list[JSON] = field(default_factory=list)
    extra: dict[str, JSON] = field(default_factory=dict)

    def copy(self) -> Settings:
        return Settings(
            self.model,
            self.instructions,
            self.reasoning_effort,
            self.reasoning_summary,
            copy.deepcopy(self.text_format),
            self.text_verbosity,
            list(self.tools),
            dict(self.extra),
        )

    def apply(self, cfg: ConfigEntry) -> Settings:
        """A new ``Settings`` with the ``config`` entry body ``cfg`` applied."""
        s = Settings() if cfg.replace else self.copy()
        if cfg.model:
            s.model = cfg.model
        if cfg.instructions is not None:
            s.instructions = cfg.instructions
        if (r := cfg.reasoning) is not None:
            s.reasoning_effort, s.reasoning_summary = (
                r.get("effort") or None,
                r.get("summary") or None,
            )
        if (t := cfg.text) is not None:
            s.text_format, s.text_verbosity = t.get("format"), t.get("verbosity") or None
        if cfg.tools_removed:
            gone = set(cfg.tools_removed)
            s.tools = [t for t in s.tools if tool_name(t) not in gone]
        for tool in cfg.tools_added or ():
            name = tool_name(tool)
            if name:
                s.tools = [t for t in s.tools if tool_name(t) != name]
            s.tools.append(tool)
        for key, value in (cfg.extra or {}).items():
            if value is None:
                s.extra.pop(key, None)
            else:
                s.extra[key] = value
        return s

    @classmethod
    def from_json(cls, data: JSON) -> Settings:
        """Decode the settings-JSON form (a compaction checkpoint, §4.6)."""
        data = data if isinstance(data, dict) else {}
        r = data.get("reasoning") or {}
        t = data.get("text") or {}
        return cls(
            model=data.get("model") or "",
            instructions=data.get("instructions"),
            reasoning_effort=r.get("effort") or None,
            reasoning_summary=r.get("summary") or None,
            text_format=t.get("format"),
            text_verbosity=t.get("verbosity") or None,
            tools=list(data.get("tools") or []),
            extra={k: v for k, v in (data.get("extra") or {}).items() if v is not None},
        )

    def reasoning_json(self) -> JSON:
        if not self.reasoning_effort and not self.reasoning_summary:
            return None
        return {"effort": self.reasoning_effort, "summary": self.reasoning_summary}

    def text_json(self) -> JSON:
        if self.text_format is None and not self.text_verbosity:
            return None
        out: dict[str, JSON] = {"format": encode_text_format(self.text_format)}
        if self.text_verbosity:
            out["verbosity"] = self.text_verbosity
        return out

    def to_json(self) -> dict[str, JSON]:
        """The settings-JSON form (§4.6), as in the context fixtures."""
        out: dict[str, JSON] = {}
        if self.model:
            out["model"] = self.model
        if self.instructions:
            out["instructions"] = self.instructions
        if (r := self.reasoning_json()) is not None:
            out["reasoning"] = r
        if (t := self.text_json()) is not None:
            out["text"] = t
        if self.tools:
            out["tools"] = [encode_tool(t) for t in self.tools]
        if self.extra:
            out["extra"] = dict(self.extra)
        return out


@dataclass
class Context:
    """What the model saw at the end of a path (spec §4.2)."""

    settings: Settings
    items: list[JSON]  # typed re-encodings
    entries: list[Entry]
    item_entries: list[str]
    checkpoint: Settings | None = (
        None  # the compaction checkpoint, when the context starts with one
    )

    def to_json(self) -> dict[str, JSON]:
        return {
            "settings": self.settings.to_json(),
            "items": self.items,
            "entries": [e.id for e in self.entries],
            "item_entries": self.item_entries,
        }
