"""ATIF v1.8 models with every rule of specs/atif.md §2.

Unknown keys are forbidden everywhere (custom data lives in ``extra``),
step ids run 1..n, agent-only fields stay on agent steps, observation
results name a tool call of their own step, ``llm_call_count: 0`` forbids
metrics and reasoning, subagent refs are resolvable and embedded
trajectories carry unique ids.  ``validate_document`` returns the first
error as one line, or ``None``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

JSON = Any

SCHEMA_VERSIONS = tuple(f"ATIF-v1.{i}" for i in range(9))
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
AUDIO_MEDIA_TYPES = (
    "audio/wav",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/aiff",
)
AUDIO_ALIASES = {
    "audio/mp3": "audio/mpeg",
    "audio/mpga": "audio/mpeg",
    "audio/x-mpeg": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-m4a": "audio/mp4",
    "audio/m4a": "audio/mp4",
    "audio/x-aac": "audio/aac",
    "audio/x-flac": "audio/flac",
    "audio/x-aiff": "audio/aiff",
}
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageSource(Strict):
    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
    path: str


class AudioSource(Strict):
    media_type: Literal[
        "audio/wav",
        "audio/mpeg",
        "audio/mp4",
        "audio/aac",
        "audio/ogg",
        "audio/flac",
        "audio/webm",
        "audio/aiff",
    ]
    path: str
    duration_sec: float | None = Field(default=None, ge=0)

    @field_validator("media_type", mode="before")
    @classmethod
    def _alias(cls, v: JSON) -> JSON:
        if isinstance(v, str):
            v = v.lower()
            return AUDIO_ALIASES.get(v, v)
        return v


class ContentPart(Strict):
    type: Literal["text", "image", "audio"]
    text: str | None = None
    source: ImageSource | AudioSource | None = None

    @field_validator("source", mode="before")
    @classmethod
    def _source(cls, v: JSON) -> JSON:
        if isinstance(v, dict):
            mt = str(v.get("media_type", "")).lower()
            if mt.startswith("audio/") or mt in AUDIO_ALIASES:
                return AudioSource.model_validate(v)
            return ImageSource.model_validate(v)
        return v

    @model_validator(mode="after")
    def _kind(self) -> ContentPart:
        if self.type == "text":
            if self.text is None:
                raise ValueError("a text part needs text")
            if self.source is not None:
                raise ValueError("a text part cannot have a source")
        else:
            if self.source is None:
                raise ValueError(f"an {self.type} part needs a source")
            if self.text is not None:
                raise ValueError(f"an {self.type} part cannot have text")
            want = ImageSource if self.type == "image" else AudioSource
            if not isinstance(self.source, want):
                raise ValueError(
                    f"type={self.type!r} requires a {want.__name__}, but the source's "
                    f"media_type is {self.source.media_type!r}"
                )
            if not self.source.path:
                raise ValueError(f"an {self.type} part needs a non-empty path")
        return self


Message = str | list[ContentPart]


class ToolCall(Strict):
    tool_call_id: str
    function_name: str
    arguments: dict[str, JSON]
    extra: dict[str, JSON] | None = None

    @model_validator(mode="after")
    def _ids(self) -> ToolCall:
        if not self.tool_call_id:
            raise ValueError("tool_call_id is required")
        if not self.function_name:
            raise ValueError("function_name is required")
        return self


class SubagentTrajectoryRef(Strict):
    trajectory_id: str | None = None
    session_id: str | None = None
    trajectory_path: str | None = None
    extra: dict[str, JSON] | None = None

    @model_validator(mode="after")
    def _resolvable(self) -> SubagentTrajectoryRef:
        if not self.trajectory_id and not self.trajectory_path:
            raise ValueError(
                "SubagentTrajectoryRef must be resolvable: set trajectory_id (embedded) "
                "or trajectory_path (external file); session_id alone is not a resolution key"
            )
        return self


class ObservationResult(Strict):
    source_call_id: str | None = None
    content: Message | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, JSON] | None = None


class Observation(Strict):
    results: list[ObservationResult]


class Metrics(Strict):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, JSON] | None = None


class Step(Strict):
    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: Message
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    extra: dict[str, JSON] | None = None

    @field_validator("timestamp")
    @classmethod
    def _timestamp(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                datetime.fromisoformat(v.replace("Z", "+00:00"))
            except ValueError as exc:
                raise ValueError(f"Invalid ISO 8601 timestamp: {exc}") from None
        return v

    @model_validator(mode="after")
    def _agent_only(self) -> Step:
        if self.source != "agent":
            for name in AGENT_ONLY:
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"Field {name!r} is only applicable when source is 'agent', "
                        f"but source is {self.source!r}"
                    )
        elif self.llm_call_count == 0:
            for name in ("metrics", "reasoning_content"):
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"Field {name!r} must be absent when llm_call_count is 0 "
                        "(deterministic dispatch on a 'source: agent' step)"
                    )
        return self


class Agent(Strict):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, JSON]] | None = None
    extra: dict[str, JSON] | None = None


class FinalMetrics(Strict):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, JSON] | None = None


class Trajectory(Strict):
    schema_version: Literal[
        "ATIF-v1.0",
        "ATIF-v1.1",
        "ATIF-v1.2",
        "ATIF-v1.3",
        "ATIF-v1.4",
        "ATIF-v1.5",
        "ATIF-v1.6",
        "ATIF-v1.7",
        "ATIF-v1.8",
    ] = "ATIF-v1.8"
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: Agent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, JSON] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="after")
    def _document_rules(self) -> Trajectory:
        for i, step in enumerate(self.steps):
            if step.step_id != i + 1:
                raise ValueError(
                    f"steps[{i}].step_id: expected {i + 1} (sequential from 1), got {step.step_id}"
                )
        for step in self.steps:
            if step.observation is None:
                continue
            ids = {tc.tool_call_id for tc in step.tool_calls or ()}
            for r in step.observation.results:
                if r.source_call_id is not None and r.source_call_id not in ids:
                    raise ValueError(
                        f"Observation result references source_call_id {r.source_call_id!r} "
                        f"which is not found in step {step.step_id}'s tool_calls"
                    )
        seen: set[str] = set()
        for i, sub in enumerate(self.subagent_trajectories or ()):
            if not sub.trajectory_id:
                raise ValueError(
                    f"subagent_trajectories[{i}].trajectory_id is required for embedded "
                    f"subagents (agent.name={sub.agent.name!r})"
                )
            if sub.trajectory_id in seen:
                raise ValueError(
                    f"subagent_trajectories[{i}].trajectory_id {sub.trajectory_id!r} is not unique"
                )
            seen.add(sub.trajectory_id)
        return self


def first_error(exc: ValidationError) -> str:
    """The most specific error: for a union (string or part list) the deepest branch."""
    errors = exc.errors()
    err = errors[0]
    if len(errors) > 1 and err["type"] == "string_type":
        err = max(errors, key=lambda e: len(e["loc"]))
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


def validate_document(doc: JSON) -> str | None:
    """``None`` when ``doc`` is a valid ATIF document, else its first error."""
    try:
        Trajectory.model_validate(doc)
    except ValidationError as exc:
        return first_error(exc)
    return None


def json_schema() -> dict[str, JSON]:
    """JSON Schema of the document (cross-field rules are checked by the models only)."""
    return Trajectory.model_json_schema()
