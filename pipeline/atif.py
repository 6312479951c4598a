"""Trajectory -> ATIF v1.8 document, the reference mapping (spec §7.3-§7.7).

``to_atif`` walks the compacted context of one trajectory and builds the
steps: model output grouped into one agent step per response, tool outputs
as observation results of the step that made the call, record entries as
extras on the next step built, outcomes, links and embedded subsessions.
Raw Open Responses items ride in the extras, so ``items(doc)`` rebuilds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from trajset.schemas.openresponses import (
    encode_error,
    encode_item,
    encode_usage,
    tool_name,
)
from trajset.schemas.session import FORMAT, RFC3339_RE, parse_rfc3339

from .content import item_text, message_content, output_content
from .context import Settings
from .jsonio import dumps_compact, loads_doubles
from .preferences import Policy
from .session import Entry, Session
from .trajectories import Trajectory, trajectories

JSON = Any

DOC_ORDER = (
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
)
STEP_ORDER = (
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
)
SKIP_FOR_AGENT_SETTINGS = frozenset(
    {"compaction", "env", "info", "label", "custom", "run", "dispatch", "decision"}
)


@dataclass
class AtifOptions:
    agent_name: str = ""
    agent_version: str = ""
    notes: str = ""
    cost: Callable[[str, JSON], float | None] | None = None
    subsessions: Callable[[str], Session | None] | None = None
    preferences: Sequence[Policy] = field(default_factory=tuple)


# --------------------------------------------------------------------------- time


def rfc3339nano(ts: str, *, to_utc: bool = True) -> str:
    """Go's RFC3339Nano: trailing fractional zeros dropped; UTC ``Z`` or the entry's own offset."""
    m = RFC3339_RE.match(ts)
    if not m:
        return ts
    frac = (m.group(7) or "")[1:10].rstrip("0")
    zone = m.group(8)
    if zone in ("Z", "z") or zone in ("+00:00", "-00:00"):
        zone = "Z"
        base = f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}:{m.group(5)}:{m.group(6)}"
    elif to_utc:
        dt = parse_rfc3339(
            f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}:{m.group(5)}:{m.group(6)}{zone}"
        )
        base = dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
        zone = "Z"
    else:
        base = f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}:{m.group(5)}:{m.group(6)}"
    return f"{base}.{frac}{zone}" if frac else f"{base}{zone}"


# --------------------------------------------------------------------------- helpers


def parse_arguments(arguments: str) -> dict[str, JSON]:
    """Tool-call arguments as the reference parses them (§7.4)."""
    if not arguments or not arguments.strip():
        return {}
    try:
        value = loads_doubles(arguments)
    except ValueError:
        return {"_arguments": arguments}
    return value if isinstance(value, dict) else {"_arguments": arguments}


def tool_definition(tool: JSON) -> JSON:
    if isinstance(tool, dict) and tool.get("type") == "function":
        fn: dict[str, JSON] = {
            "description": tool.get("description") or "",
            "name": tool.get("name") or "",
        }
        if "parameters" in tool:
            fn["parameters"] = tool["parameters"]
        if tool.get("strict") is not None:
            fn["strict"] = tool["strict"]
        return {"function": fn, "type": "function"}
    return tool


def _sorted(d: dict[str, JSON]) -> dict[str, JSON]:
    return dict(sorted(d.items()))


def _ordered(d: dict[str, JSON], order: Sequence[str]) -> dict[str, JSON]:
    return {k: d[k] for k in order if k in d}


def _env_record(e: Entry) -> dict[str, JSON]:
    b = e.body
    rec: dict[str, JSON] = {"entry_id": e.id}
    if b.cwd:  # type: ignore[attr-defined]
        rec["cwd"] = b.cwd  # type: ignore[attr-defined]
    vcs = b.vcs  # type: ignore[attr-defined]
    if vcs is not None:
        v: dict[str, JSON] = {"system": vcs.get("system") or ""}
        if vcs.get("revision"):
            v["revision"] = vcs["revision"]
        if vcs.get("dirty"):
            v["dirty"] = True
        rec["vcs"] = v
    files = b.files  # type: ignore[attr-defined]
    if files is not None:
        rec["files"] = {k: files[k] for k in ("read", "written") if files.get(k)}
    if b.tools:  # type: ignore[attr-defined]
        rec["tools"] = b.tools  # type: ignore[attr-defined]
    ws = b.workspace  # type: ignore[attr-defined]
    if ws is not None:
        w: dict[str, JSON] = {"kind": ws.get("kind") or ""}
        if ws.get("ref"):
            w["ref"] = ws["ref"]
        rec["workspace"] = w
    return _sorted(rec)


def _outcome_record(e: Entry) -> dict[str, JSON]:
    b = e.body
    rec: dict[str, JSON] = {"kind": b.kind, "entry_id": e.id}  # type: ignore[attr-defined]
    if b.target:  # type: ignore[attr-defined]
        rec["target"] = b.target  # type: ignore[attr-defined]
    for key in ("score", "pass", "label", "details"):
        if key in e.raw and (e.raw[key] is not None or key == "details"):
            if key == "label" and not e.raw[key]:
                continue
            rec[key] = e.raw[key]
    return _sorted(rec)


def _response_record(e: Entry) -> dict[str, JSON]:
    b = e.body
    rec: dict[str, JSON] = {"response_id": b.response_id, "status": b.status}  # type: ignore[attr-defined]
    if b.model:  # type: ignore[attr-defined]
        rec["model"] = b.model  # type: ignore[attr-defined]
    if b.request_hash:  # type: ignore[attr-defined]
        rec["request_hash"] = b.request_hash  # type: ignore[attr-defined]
    if b.latency_ms:  # type: ignore[attr-defined]
        rec["latency_ms"] = b.latency_ms  # type: ignore[attr-defined]
    if b.usage is not None:  # type: ignore[attr-defined]
        rec["usage"] = encode_usage(b.usage)  # type: ignore[attr-defined]
    if b.incomplete is not None:  # type: ignore[attr-defined]
        rec["incomplete"] = {"reason": b.incomplete.get("reason") or ""}  # type: ignore[attr-defined]
    if b.error is not None:  # type: ignore[attr-defined]
        rec["error"] = encode_error(b.error)  # type: ignore[attr-defined]
    rec["ts"] = rfc3339nano(b.ts, to_utc=False)
    rec.update(b.unknown_members())
    rec["entry_id"] = e.id
    return _sorted(rec)


def _is_agent_output(e: Entry) -> bool:
    item = e.body.item  # type: ignore[attr-defined]
    if e.body.response:  # type: ignore[attr-defined]
        return True
    kind = item.get("type")
    return kind in ("reasoning", "function_call") or (
        kind == "message" and item.get("role") == "assistant"
    )


# --------------------------------------------------------------------------- the walk


class _Builder:
    def __init__(self, traj: Trajectory, options: AtifOptions) -> None:
        self.traj = traj
        self.options = options
        ctx = traj.context
        self.entries = ctx.entries
        self.settings = ctx.checkpoint.copy() if ctx.checkpoint is not None else Settings()
        self.steps: list[dict[str, JSON]] = []
        self.pending: dict[str, JSON] = {}
        self.group: list[Entry] = []
        self.group_rid = ""
        first = self.entries[0] if self.entries else None
        self.copied = first is not None and first.type == "compaction"
        self.compaction_id = first.id if self.copied and first is not None else ""
        self.entry_step: dict[str, dict[str, JSON]] = {}
        self.call_step: dict[str, dict[str, JSON]] = {}
        self.calls: dict[str, dict[str, JSON]] = {}
        self.links: list[Entry] = []
        self.outcomes: list[dict[str, JSON]] = []
        self.root_env: dict[str, JSON] | None = None
        self.open_run: dict[str, JSON] | None = None
        self.totals = [0, 0, 0]
        self.cost: float | None = None

    # -- steps ----------------------------------------------------------------

    def append(self, step: dict[str, JSON], anchor: Entry) -> dict[str, JSON]:
        step["step_id"] = len(self.steps) + 1
        step["timestamp"] = rfc3339nano(anchor.body.ts)
        extra = step.setdefault("extra", {})
        extra["agentsession"] = {"entry_id": anchor.id}
        if self.copied and "is_copied_context" not in step:
            step["is_copied_context"] = True
        extra.update(self.pending)
        self.pending = {}
        self.steps.append(step)
        self.entry_step[anchor.id] = step
        return step

    def flush(self, response: Entry | None = None) -> None:
        group, rid = self.group, self.group_rid
        self.group, self.group_rid = [], ""
        if not group and response is None:
            return
        items = [encode_item(e.body.item) for e in group]  # type: ignore[attr-defined]
        model = self.settings.model
        rb = response.body if response is not None else None
        if rb is not None and rb.model:  # type: ignore[attr-defined]
            model = rb.model  # type: ignore[attr-defined]
        step: dict[str, JSON] = {"source": "agent"}
        if model:
            step["model_name"] = model
        if self.settings.reasoning_effort:
            step["reasoning_effort"] = self.settings.reasoning_effort
        contents = [message_content(it) for it in items if it.get("type") == "message"]
        if any(isinstance(c, list) for c in contents):
            parts: list[JSON] = []
            for c in contents:
                parts.extend(c if isinstance(c, list) else [{"type": "text", "text": c}])
            step["message"] = parts
        else:
            step["message"] = "\n".join(contents)  # type: ignore[arg-type]
        reasoning = [item_text(it) for it in items if it.get("type") == "reasoning"]
        reasoning = [r for r in reasoning if r]
        if reasoning:
            step["reasoning_content"] = "\n".join(reasoning)
        calls = [it for it in items if it.get("type") == "function_call"]
        if calls:
            step["tool_calls"] = [
                {
                    "tool_call_id": c["call_id"],
                    "function_name": c["name"],
                    "arguments": parse_arguments(c["arguments"]),
                }
                for c in calls
            ]
        extra: dict[str, JSON] = {"openresponses": {"items": items}}
        phases = [it["phase"] for it in items if it.get("type") == "message" and it.get("phase")]
        if phases:
            extra["phases"] = phases
        if group:
            extra["item_entry_ids"] = [e.id for e in group]
        if rb is not None:
            extra["openresponses"]["response"] = _response_record(response)  # type: ignore[arg-type]
            if rb.usage is not None:  # type: ignore[attr-defined]
                usage = encode_usage(rb.usage)  # type: ignore[attr-defined]
                metrics: dict[str, JSON] = {
                    "prompt_tokens": usage["input_tokens"],
                    "completion_tokens": usage["output_tokens"],
                    "cached_tokens": usage["input_tokens_details"]["cached_tokens"],
                }
                if self.options.cost is not None:
                    usd = self.options.cost(model, rb.usage)  # type: ignore[attr-defined]
                    if usd is not None:
                        metrics["cost_usd"] = usd
                        self.cost = (self.cost or 0.0) + usd
                reasoning_tokens = usage["output_tokens_details"]["reasoning_tokens"]
                if reasoning_tokens > 0:
                    metrics["extra"] = {"reasoning_tokens": reasoning_tokens}
                step["metrics"] = metrics
                self.totals[0] += metrics["prompt_tokens"]
                self.totals[1] += metrics["completion_tokens"]
                self.totals[2] += metrics["cached_tokens"]
            if rb.status and rb.status != "completed":  # type: ignore[attr-defined]
                extra["status"] = rb.status  # type: ignore[attr-defined]
            if rb.error is not None:  # type: ignore[attr-defined]
                extra["error"] = encode_error(rb.error)  # type: ignore[attr-defined]
            if rb.incomplete is not None:  # type: ignore[attr-defined]
                extra["incomplete"] = rb.incomplete.get("reason") or ""  # type: ignore[attr-defined]
            if rb.latency_ms and rb.latency_ms > 0:  # type: ignore[attr-defined]
                extra["latency_ms"] = rb.latency_ms  # type: ignore[attr-defined]
            anchor = response
        else:
            if rid:
                extra["response_id"] = rid
            anchor = group[0]
        step["llm_call_count"] = 1
        step["extra"] = extra
        self.append(step, anchor)  # type: ignore[arg-type]
        for e in group:
            self.entry_step[e.id] = step
        for c in calls:
            self.call_step[c["call_id"]] = step

    def item_extra(self, e: Entry, item: JSON) -> dict[str, JSON]:
        extra: dict[str, JSON] = {"openresponses": {"item": item}}
        if e.body.visible is False:  # type: ignore[attr-defined]
            extra["visible"] = False
        return extra

    # -- entries ----------------------------------------------------------------

    def on_item(self, e: Entry) -> None:
        if _is_agent_output(e):
            resp = e.body.response or ""  # type: ignore[attr-defined]
            if self.group and self.group_rid and resp and resp != self.group_rid:
                self.flush()
            if not self.group_rid and resp:
                self.group_rid = resp
            self.group.append(e)
            return
        self.flush()
        raw_item = e.body.item  # type: ignore[attr-defined]
        item = encode_item(raw_item)
        kind = item.get("type")
        if kind == "message":
            role = item.get("role") or ""
            extra = self.item_extra(e, item)
            if role != "user":
                extra["role"] = role
            self.append(
                {
                    "source": "user" if role == "user" else "system",
                    "message": message_content(item),
                    "extra": extra,
                },
                e,
            )
        elif kind == "function_call_output":
            call_id = item.get("call_id") or ""
            content = output_content(item.get("output"))
            target = self.call_step.get(call_id)
            if target is not None:
                result: dict[str, JSON] = {"source_call_id": call_id}
                if content != "":
                    result["content"] = content
                result["extra"] = self.item_extra(e, item)
                target.setdefault("observation", {"results": []})["results"].append(result)
                self.entry_step[e.id] = target
            else:
                extra = self.item_extra(e, item)
                extra["orphan_call_id"] = call_id
                res: dict[str, JSON] = {"content": content} if content != "" else {}
                self.append(
                    {
                        "source": "system",
                        "message": "",
                        "observation": {"results": [res]},
                        "extra": extra,
                    },
                    e,
                )
        else:
            extra = self.item_extra(e, item)
            extra["item_type"] = kind
            source = (
                "user"
                if raw_item.get("role") == "user" and kind not in ("compaction", "item_reference")
                else "system"
            )
            self.append({"source": source, "message": item_text(item), "extra": extra}, e)

    def on_compaction(self, e: Entry) -> None:
        self.flush()
        b = e.body
        summary = encode_item(b.summary)  # type: ignore[attr-defined]
        text = item_text(summary)
        extra: dict[str, JSON] = {
            "context_management": {"boundary": "replace", "type": "compaction"},
            "openresponses": {"item": summary},
            "first_kept": b.first_kept,  # type: ignore[attr-defined]
        }
        if b.tokens_before and b.tokens_before > 0:  # type: ignore[attr-defined]
            extra["tokens_before"] = b.tokens_before  # type: ignore[attr-defined]
        if b.usage is not None:  # type: ignore[attr-defined]
            extra["usage"] = b.usage  # type: ignore[attr-defined]
        self.append(
            {
                "source": "system",
                "message": text,
                "observation": {"results": [{"content": text} if text else {}]},
                "is_copied_context": True,
                "extra": extra,
            },
            e,
        )

    def on_branch_summary(self, e: Entry) -> None:
        self.flush()
        b = e.body
        summary = encode_item(b.summary)  # type: ignore[attr-defined]
        message = (
            message_content(summary) if summary.get("type") == "message" else item_text(summary)
        )
        extra: dict[str, JSON] = {"branch_from": b.from_, "openresponses": {"item": summary}}  # type: ignore[attr-defined]
        if b.usage is not None:  # type: ignore[attr-defined]
            extra["usage"] = b.usage  # type: ignore[attr-defined]
        self.append(
            {"source": "system", "message": message, "is_copied_context": True, "extra": extra}, e
        )

    def on_response(self, e: Entry) -> None:
        rid = e.body.response_id  # type: ignore[attr-defined]
        if self.group_rid and self.group_rid != rid:
            self.flush()
        self.flush(response=e)

    def on_config(self, e: Entry) -> None:
        before = {tool_name(t) for t in self.settings.tools}
        self.settings = self.settings.apply(e.body)
        after = {tool_name(t) for t in self.settings.tools}
        if before != after:
            change: dict[str, JSON] = {}
            if after - before:
                change["added"] = sorted(after - before)
            if before - after:
                change["removed"] = sorted(before - after)
            self.pending["tool_changes"] = change
        self.pending.setdefault("config_entries", []).append(e.id)
        unknown = e.body.unknown_members()
        if unknown:
            self.pending.setdefault("config_extensions", []).append(
                _sorted({**unknown, "entry_id": e.id})
            )

    def on_record(self, e: Entry) -> None:
        b, kind = e.body, e.type
        if kind == "label":
            self.pending.setdefault("labels", []).append(
                {"entry_id": e.id, "label": b.label, "target": b.target}
            )  # type: ignore[attr-defined]
        elif kind == "info":
            rec: dict[str, JSON] = {"entry_id": e.id}
            if b.name:  # type: ignore[attr-defined]
                rec["name"] = b.name  # type: ignore[attr-defined]
            rec.update(b.unknown_members())
            self.pending.setdefault("info", []).append(_sorted(rec))
        elif kind == "custom":
            self.pending.setdefault("custom", []).append(
                {"data": e.raw.get("data"), "entry_id": e.id, "ns": b.ns}
            )  # type: ignore[attr-defined]
        elif kind == "env":
            rec = _env_record(e)
            if self.root_env is None:
                self.root_env = rec
            else:
                self.pending["environment"] = rec
        elif kind == "link":
            self.links.append(e)
        elif kind == "outcome":
            rec = _outcome_record(e)
            self.outcomes.append(rec)
            step = self.entry_step.get(b.target or "")  # type: ignore[attr-defined]
            if step is not None:
                step["extra"].setdefault("outcome", []).append(rec)
        elif kind == "run":
            if b.phase == "start":  # type: ignore[attr-defined]
                rec = {"run_id": b.run_id, "source": b.source, "start_entry_id": e.id}  # type: ignore[attr-defined]
                if b.ref:  # type: ignore[attr-defined]
                    rec["trigger"] = b.ref  # type: ignore[attr-defined]
                self.open_run = rec
                self.pending.setdefault("run", []).append(rec)
            else:
                if self.open_run is not None and self.open_run["run_id"] == b.run_id:  # type: ignore[attr-defined]
                    rec = self.open_run
                else:
                    rec = {"run_id": b.run_id}  # type: ignore[attr-defined]
                    self.pending.setdefault("run", []).append(rec)
                rec["reason"] = b.reason  # type: ignore[attr-defined]
                rec["end_entry_id"] = e.id
                if b.ref:  # type: ignore[attr-defined]
                    rec["cause"] = b.ref  # type: ignore[attr-defined]
                rec["pending"] = list(b.pending or [])  # type: ignore[attr-defined]
                self.open_run = None
        elif kind == "dispatch":
            self.calls.setdefault(b.call_id, {})["dispatch"] = {"entry_id": e.id}  # type: ignore[attr-defined]
        elif kind == "decision":
            rec = {"entry_id": e.id, "verdict": b.verdict}  # type: ignore[attr-defined]
            if b.by:  # type: ignore[attr-defined]
                rec["by"] = b.by  # type: ignore[attr-defined]
            if b.reason:  # type: ignore[attr-defined]
                rec["reason"] = b.reason  # type: ignore[attr-defined]
            if "args" in e.raw:
                rec["args"] = e.raw["args"]
            self.calls.setdefault(b.call_id, {}).setdefault("decisions", []).append(_sorted(rec))  # type: ignore[attr-defined]
        else:  # extension or unknown entry: the raw line, original order
            self.pending.setdefault("extensions", []).append(e.raw)

    def walk(self) -> None:
        handlers = {
            "item": self.on_item,
            "compaction": self.on_compaction,
            "branch_summary": self.on_branch_summary,
            "response": self.on_response,
            "config": self.on_config,
        }
        for e in self.entries:
            if self.copied and e.parent == self.compaction_id:
                self.copied = False
            handlers.get(e.type, self.on_record)(e)
        self.flush()

    # -- document ------------------------------------------------------------------

    def agent(self) -> dict[str, JSON]:
        header = self.traj.session.header
        opts = self.options
        harness = header.harness
        if opts.agent_name:
            name, version = opts.agent_name, opts.agent_version or FORMAT
        else:
            name = (harness.name if harness else None) or "agentsession"
            version = opts.agent_version or (harness.version if harness else None) or FORMAT
        settings = (
            self.traj.context.checkpoint.copy() if self.traj.context.checkpoint else Settings()
        )
        for e in self.entries:
            if e.type == "config":
                settings = settings.apply(e.body)
            elif e.type not in SKIP_FOR_AGENT_SETTINGS:
                break
        agent: dict[str, JSON] = {"name": name, "version": version}
        if settings.model:
            agent["model_name"] = settings.model
        if settings.tools:
            agent["tool_definitions"] = [tool_definition(t) for t in settings.tools]
        return agent

    def root_extra(self) -> dict[str, JSON]:
        traj, header = self.traj, self.traj.session.header
        session = traj.session
        asess: dict[str, JSON] = {"format": header.format, "leaf": traj.leaf_id}
        for key in ("cwd", "parent_session", "spawned_by"):
            if getattr(header, key):
                asess[key] = getattr(header, key)
        if header.records:
            asess["records"] = header.records
        if name := session.name():
            asess["name"] = name
        if labels := session.labels():
            asess["labels"] = _sorted(labels)
        if traj.main:
            asess["main"] = True
        extra: dict[str, JSON] = {
            "openresponses": {"payload": header.payload},
            "agentsession": _sorted(asess),
        }
        if traj.preferred_over:
            extra["preferred_over"] = list(traj.preferred_over)
        if traj.abandoned_at:
            extra["abandoned_at"] = traj.abandoned_at
        if self.root_env is not None:
            extra["environment"] = self.root_env
        root_calls = {
            cid: _sorted(rec) for cid, rec in self.calls.items() if cid not in self.call_step
        }
        for cid, rec in self.calls.items():
            if cid in self.call_step:
                self.call_step[cid]["extra"].setdefault("calls", {})[cid] = _sorted(rec)
        if root_calls:
            extra["calls"] = _sorted(root_calls)
        extra.update(self.pending)
        return extra

    def resolve_links(self, extra: dict[str, JSON], embedded: list[dict[str, JSON]]) -> None:
        links: list[JSON] = []
        for e in self.links:
            b = e.body
            rec: dict[str, JSON] = {"entry_id": e.id, "rel": b.rel, "session": b.session}  # type: ignore[attr-defined]
            if b.call_id:  # type: ignore[attr-defined]
                rec["call_id"] = b.call_id  # type: ignore[attr-defined]
            if b.rel != "subsession":  # type: ignore[attr-defined]
                links.append(rec)
                continue
            child_id = b.session  # type: ignore[attr-defined]
            ref: dict[str, JSON] = {"session_id": child_id}
            child = self.options.subsessions(child_id) if self.options.subsessions else None
            doc = _main_document(child, self.options) if child is not None else None
            if doc is not None:
                doc["trajectory_id"] = f"{child_id}/{doc['trajectory_id']}"
                if all(d["trajectory_id"] != doc["trajectory_id"] for d in embedded):
                    embedded.append(doc)
                ref["trajectory_id"] = doc["trajectory_id"]
            else:
                ref["trajectory_path"] = f"{child_id}.json"
            ref["extra"] = {"entry_id": e.id}
            ref = _ordered(ref, ("trajectory_id", "session_id", "trajectory_path", "extra"))
            step = self.call_step.get(b.call_id or "")  # type: ignore[attr-defined]
            if step is not None:
                results = step.setdefault("observation", {"results": []})["results"]
                result = next((r for r in results if r.get("source_call_id") == b.call_id), None)  # type: ignore[attr-defined]
                if result is None:
                    results.append({"source_call_id": b.call_id, "subagent_trajectory_ref": [ref]})  # type: ignore[attr-defined]
                else:
                    result.setdefault("subagent_trajectory_ref", []).append(ref)
            else:
                rec["subagent_trajectory_ref"] = ref
                links.append(_sorted(rec))
        if links:
            extra["links"] = links

    def document(self) -> dict[str, JSON]:
        self.walk()
        agent = self.agent()
        extra = self.root_extra()
        embedded: list[dict[str, JSON]] = []
        self.resolve_links(extra, embedded)
        final: dict[str, JSON] = {
            "total_prompt_tokens": self.totals[0],
            "total_completion_tokens": self.totals[1],
            "total_cached_tokens": self.totals[2],
        }
        if self.cost is not None:
            final["total_cost_usd"] = self.cost
        final["total_steps"] = len(self.steps)
        if self.outcomes:
            final["extra"] = {"outcome": self.outcomes}
        steps = []
        for s in self.steps:
            s["extra"] = _sorted(s["extra"])
            if "observation" in s:
                s["observation"]["results"] = [
                    _ordered(r, ("source_call_id", "content", "subagent_trajectory_ref", "extra"))
                    for r in s["observation"]["results"]
                ]
            steps.append(_ordered(s, STEP_ORDER))
        doc: dict[str, JSON] = {
            "schema_version": "ATIF-v1.8",
            "session_id": self.traj.session.id,
            "trajectory_id": self.traj.leaf_id,
            "agent": agent,
            "steps": steps,
        }
        if self.options.notes:
            doc["notes"] = self.options.notes
        doc["final_metrics"] = final
        doc["extra"] = _sorted(extra)
        if embedded:
            doc["subagent_trajectories"] = embedded
        return doc


def to_atif(traj: Trajectory, options: AtifOptions | None = None) -> dict[str, JSON]:
    """The ATIF v1.8 document of one trajectory (not yet validated)."""
    return _Builder(traj, options or AtifOptions()).document()


def _main_document(session: Session, options: AtifOptions) -> dict[str, JSON] | None:
    sub = AtifOptions(
        options.agent_name,
        options.agent_version,
        "",
        options.cost,
        options.subsessions,
        options.preferences,
    )
    for t in trajectories(session, options.preferences):
        if isinstance(t, Trajectory) and t.main:
            return to_atif(t, sub)
    return None


# --------------------------------------------------------------------------- Items / ItemsFrom


class NoRawItems(ValueError):
    """The document carries no raw Open Responses items (e.g. after no_passthrough)."""


def items(doc: dict[str, JSON]) -> list[JSON]:
    """Rebuild the Open Responses items from a document's raw items (spec §7.11)."""
    out: list[JSON] = []
    found = False
    for step in doc.get("steps", []):
        o = (step.get("extra") or {}).get("openresponses") or {}
        if "item" in o:
            out.append(o["item"])
            found = True
        if "items" in o:
            out.extend(o["items"])
            found = True
        for r in (step.get("observation") or {}).get("results", []):
            ro = (r.get("extra") or {}).get("openresponses") or {}
            if "item" in ro:
                out.append(ro["item"])
                found = True
    if not found:
        raise NoRawItems("the document carries no raw Open Responses items")
    return out


def items_from(doc: dict[str, JSON]) -> list[JSON]:
    """Rebuild items, lossily, from the declared fields of any producer's document."""
    out: list[JSON] = []
    used: dict[str, int] = {}

    def fresh(cid: str) -> str:
        base = cid or "call"
        n = used.get(base, 0) + 1
        used[base] = n
        if not cid:
            return f"call_{n}"
        return cid if n == 1 else f"{cid}_{n}"

    def text_of(message: JSON) -> tuple[str, list[JSON]]:
        if isinstance(message, str):
            return message, []
        texts, images = [], []
        for p in message or []:
            if p.get("type") == "text":
                texts.append(p.get("text") or "")
            elif p.get("type") == "image":
                images.append(
                    {"type": "input_image", "image_url": p["source"]["path"], "detail": "auto"}
                )
        return "".join(texts), images

    for step in doc.get("steps", []):
        source = step.get("source")
        text, images = text_of(step.get("message"))
        results = (step.get("observation") or {}).get("results", [])
        renames: dict[str, str] = {}
        if source == "agent":
            if step.get("reasoning_content"):
                out.append(
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": step["reasoning_content"]}],
                    }
                )
            if text:
                out.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                )
            for tc in step.get("tool_calls") or []:
                cid = fresh(tc.get("tool_call_id") or "")
                renames.setdefault(tc.get("tool_call_id") or "", cid)
                args = tc.get("arguments") or {}
                raw = (
                    args["_arguments"]
                    if set(args) == {"_arguments"} and isinstance(args["_arguments"], str)
                    else dumps_compact(args)
                )
                out.append(
                    {
                        "type": "function_call",
                        "call_id": cid,
                        "name": tc.get("function_name") or "",
                        "arguments": raw,
                    }
                )
        else:
            role = "user" if source == "user" else "system"
            if not (role == "system" and not text and results):
                content = (
                    [{"type": "input_text", "text": text}, *images]
                    if text or not images
                    else images
                )
                out.append({"type": "message", "role": role, "content": content})
        for r in results:
            sid = r.get("source_call_id")
            if sid:
                content = r.get("content")
                output, _ = text_of(content) if not isinstance(content, str) else (content, [])
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": renames.get(sid, sid),
                        "output": output or "",
                    }
                )
    return out


def session_documents(session: Session, options: AtifOptions) -> list[dict[str, JSON] | Exception]:
    """Every trajectory of ``session`` as a document (or the error for that leaf)."""
    out: list[dict[str, JSON] | Exception] = []
    for t in trajectories(session, options.preferences):
        out.append(t if isinstance(t, Exception) else to_atif(t, options))
    return out
