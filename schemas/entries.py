"""Agent Session Format 0.2 entries as a typed union (specs/agentsession.md §2).

Every model keeps unknown members (``extra="allow"``), and the reader keeps
each line's parsed object (``Entry.raw``), so a session written back is
JSON-equal to the one read, extension entries and items included.  Each
known type is a model with a ``Literal`` type, so code that handles entries
uses ``match entry.body: case ItemEntry(): ...`` and the type checker knows
the members.  ``validate_entry`` is the one place that decides whether a
line decodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .openresponses import encode_item
from .timestamps import parse_rfc3339

JSON = Any


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


@dataclass(slots=True)
class Derived:
    """What checking an entry works out of its members, kept for the stages that take it
    again (``Entry.seconds``, ``Entry.encoded_item``): ``validate_entry`` passes one as the
    validation context and its validators fill it, so nothing is parsed twice."""

    #: ``ts`` as seconds since the epoch
    seconds: float | None = None
    #: the item's (or summary's) typed re-encoding, ``encode_item``
    item: JSON = None


# --------------------------------------------------------------------------- entries


class EntryBody(Model):
    """Envelope members shared by every entry."""

    type: str
    id: str
    parent: str | None
    ts: str

    known: ClassVar[tuple[str, ...]] = ()

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not v:
            raise ValueError("entry has no id")
        return v

    @field_validator("ts")
    @classmethod
    def _ts(cls, v: str, info: ValidationInfo) -> str:
        seconds = parse_rfc3339(v).timestamp()
        if isinstance(info.context, Derived):
            info.context.seconds = seconds
        return v

    def unknown_members(self) -> dict[str, JSON]:
        return dict(sorted((self.model_extra or {}).items()))


def _item(v: JSON, info: ValidationInfo) -> JSON:
    encoded = encode_item(v)  # raises ValueError when a known item type does not decode
    if isinstance(info.context, Derived):
        info.context.item = encoded
    return v


#: an Open Responses item as stored: kept as is, checked to decode when its type is known
Item = Annotated[dict[str, JSON], AfterValidator(_item)]


#: the members a reader sets on a ``function_call_output`` entry whose tool call failed: the
#: one mark of failure every store's converter writes (Claude Code's ``is_error``, suga's and
#: einox's ``ok: false``, a non-zero exit code), so the quality columns read no store's own
TOOL_FAILED = "trajset:failed"  # true
TOOL_EXIT_CODE = "trajset:exit_code"  # an integer; non-zero is a failure
RECORDED_COST = "trajset:cost_usd"  # on a response: its cost in US dollars, as recorded
NOT_RESENT = "trajset:not_resent"  # on a response the agent never sent again: why (its reason)


class ItemEntry(EntryBody):
    type: Literal["item"]
    item: Item
    response: str | None = None
    visible: bool | None = None

    def tool_failed(self) -> bool:
        """Is this a tool output its reader marked failed (``TOOL_FAILED``, or a non-zero
        ``TOOL_EXIT_CODE``)?"""
        extra = self.model_extra or {}
        code = extra.get(TOOL_EXIT_CODE)
        return extra.get(TOOL_FAILED) is True or (
            isinstance(code, int) and not isinstance(code, bool) and code != 0
        )


#: the members of an Open Responses usage that are token counts (the others are dropped)
USAGE_COUNTS = (
    ("input_tokens",),
    ("output_tokens",),
    ("total_tokens",),
    ("input_tokens_details", "cached_tokens"),
    ("output_tokens_details", "reasoning_tokens"),
)


def _int64_counts(v: JSON) -> JSON:
    """Token counts must be integers (Open Responses usage, which the reference decodes into
    a typed usage) that fit the tables' 64-bit columns: ``2.5`` or ``2**70`` is refused (its
    line), not lost."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, int) and not isinstance(x, bool) and not -(2**63) <= x < 2**63:
            raise ValueError("a token count is beyond a 64-bit integer")
    for path in USAGE_COUNTS:
        x = v
        for key in path:
            x = x.get(key) if isinstance(x, dict) else None
        if x is not None and (isinstance(x, bool) or not isinstance(x, int)):
            raise ValueError(f"token count {'.'.join(path)} is {x!r}, not an integer")
    return v


class ResponseEntry(EntryBody):
    type: Literal["response"]
    response_id: str
    model: str | None = None
    status: str
    usage: Annotated[dict[str, JSON], AfterValidator(_int64_counts)] | None = None
    incomplete: dict[str, JSON] | None = None
    error: dict[str, JSON] | None = None
    request_hash: str | None = None
    latency_ms: int | None = None


class ConfigEntry(EntryBody):
    type: Literal["config"]
    model: str | None = None
    instructions: str | None = None
    reasoning: dict[str, JSON] | None = None
    text: dict[str, JSON] | None = None
    tools_added: list[JSON] | None = None
    tools_removed: list[str] | None = None
    extra: dict[str, JSON] | None = None
    replace: bool | None = None

    known: ClassVar[tuple[str, ...]] = (
        "model",
        "instructions",
        "reasoning",
        "text",
        "tools_added",
        "tools_removed",
        "extra",
        "replace",
    )


class CompactionEntry(EntryBody):
    type: Literal["compaction"]
    first_kept: str
    summary: Item
    config: dict[str, JSON]
    tokens_before: int | None = None
    usage: dict[str, JSON] | None = None


class BranchSummaryEntry(EntryBody):
    type: Literal["branch_summary"]
    from_: str = ""
    summary: Item
    usage: dict[str, JSON] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from(cls, data: JSON) -> JSON:
        if isinstance(data, dict):
            if not isinstance(data.get("from"), str):
                raise ValueError("branch_summary needs a string from")
            data = {**data, "from_": data["from"]}
            data.pop("from")
        return data


class RunEntry(EntryBody):
    type: Literal["run"]
    run_id: str
    phase: str
    source: str | None = None
    reason: str | None = None
    ref: str | None = None
    pending: list[str] | None = None

    @model_validator(mode="after")
    def _rules(self) -> RunEntry:
        if not self.run_id:
            raise ValueError("run needs a run_id")
        if self.phase == "start":
            if not self.source:
                raise ValueError("run start needs a source")
        elif self.phase == "end":
            if not self.reason:
                raise ValueError("run end needs a reason")
        else:
            raise ValueError(f"run phase must be start or end, got {self.phase!r}")
        return self


class DispatchEntry(EntryBody):
    type: Literal["dispatch"]
    call_id: str
    target: str

    @model_validator(mode="after")
    def _rules(self) -> DispatchEntry:
        if not self.call_id or not self.target:
            raise ValueError("dispatch needs call_id and target")
        return self


VERDICTS = ("proceed", "reject", "hold")


class DecisionEntry(EntryBody):
    type: Literal["decision"]
    call_id: str
    target: str
    verdict: str
    by: str | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _rules(self) -> DecisionEntry:
        if not self.call_id or not self.target:
            raise ValueError("decision needs call_id and target")
        if self.verdict not in VERDICTS:
            raise ValueError(f"decision verdict must be one of {', '.join(VERDICTS)}")
        if self.verdict == "reject" and not self.reason:
            raise ValueError("a reject decision needs a reason")
        return self

    @property
    def has_args(self) -> bool:
        return "args" in (self.model_extra or {})


class LabelEntry(EntryBody):
    type: Literal["label"]
    target: str
    label: str | None = None


class InfoEntry(EntryBody):
    type: Literal["info"]
    name: str | None = None
    known: ClassVar[tuple[str, ...]] = ("name",)


class EnvEntry(EntryBody):
    type: Literal["env"]
    cwd: str | None = None
    vcs: dict[str, JSON] | None = None
    files: dict[str, JSON] | None = None
    tools: dict[str, JSON] | None = None
    workspace: dict[str, JSON] | None = None


class OutcomeEntry(EntryBody):
    type: Literal["outcome"]
    kind: str
    target: str | None = None
    score: float | None = None
    pass_: bool | None = None
    label: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _pass(cls, data: JSON) -> JSON:
        if isinstance(data, dict) and "pass" in data:
            data = dict(data)
            data["pass_"] = data.pop("pass")
        return data

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if not v:
            raise ValueError("outcome needs a kind")
        return v


class LinkEntry(EntryBody):
    type: Literal["link"]
    rel: str
    session: str
    call_id: str | None = None

    @model_validator(mode="after")
    def _rules(self) -> LinkEntry:
        if not self.rel or not self.session:
            raise ValueError("link needs rel and session")
        return self


class CustomEntry(EntryBody):
    type: Literal["custom"]
    ns: str

    @field_validator("ns")
    @classmethod
    def _ns(cls, v: str) -> str:
        if not v:
            raise ValueError("custom needs an ns")
        return v


class ExtensionEntry(EntryBody):
    """Any type this reader does not know (``ns:name`` or otherwise)."""


#: every entry body the reader produces; ``ExtensionEntry`` holds any other type
EntryUnion = (
    ItemEntry
    | ResponseEntry
    | ConfigEntry
    | CompactionEntry
    | BranchSummaryEntry
    | RunEntry
    | DispatchEntry
    | DecisionEntry
    | LabelEntry
    | InfoEntry
    | EnvEntry
    | OutcomeEntry
    | LinkEntry
    | CustomEntry
    | ExtensionEntry
)

ENTRY_MODELS: dict[str, type[EntryBody]] = {
    "item": ItemEntry,
    "response": ResponseEntry,
    "config": ConfigEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "run": RunEntry,
    "dispatch": DispatchEntry,
    "decision": DecisionEntry,
    "label": LabelEntry,
    "info": InfoEntry,
    "env": EnvEntry,
    "outcome": OutcomeEntry,
    "link": LinkEntry,
    "custom": CustomEntry,
}


def validate_entry(raw: JSON, derived: Derived | None = None) -> EntryUnion:
    """Decode one entry line's object; ``ValueError`` with a short reason when it does not.
    ``derived`` is filled with what the checks work out (its ``Entry`` takes it)."""
    if not isinstance(raw, dict):
        raise ValueError("entry line is not a JSON object")
    for member in ("type", "id", "ts"):
        if member not in raw:
            raise ValueError(f"entry has no {member}")
    if "parent" not in raw:
        raw = {**raw, "parent": None}
    kind = raw["type"]
    model = ENTRY_MODELS.get(kind, ExtensionEntry) if isinstance(kind, str) else EntryBody
    try:
        body = model.model_validate(raw, context=derived)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        raise ValueError(f"{kind}: {where}: {msg}" if where else f"{kind}: {msg}") from None
    return cast("EntryUnion", body)  # the model was chosen by ``type``
