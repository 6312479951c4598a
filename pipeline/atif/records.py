"""One pure function per record entry type: the extra it becomes in an ATIF document (spec §7.5).

Each builder takes the entry and returns the JSON record; the walker
(``walker.py``) decides where the record goes (the next step's extras, the
root, a call's record).  ``BUILDERS`` maps an entry body type to its builder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trajset.schemas.entries import (
    CustomEntry,
    DecisionEntry,
    EntryBody,
    EnvEntry,
    InfoEntry,
    LabelEntry,
    OutcomeEntry,
    ResponseEntry,
)
from trajset.schemas.openresponses import encode_error, encode_usage
from trajset.schemas.session import Entry
from trajset.schemas.timestamps import rfc3339nano

JSON = Any


def sorted_members(d: dict[str, JSON]) -> dict[str, JSON]:
    """Members in key order, as Go's ``map[string]any`` encodes them."""
    return dict(sorted(d.items()))


def label_record(e: Entry, b: LabelEntry) -> JSON:
    return {"entry_id": e.id, "label": b.label, "target": b.target}


def info_record(e: Entry, b: InfoEntry) -> JSON:
    rec: dict[str, JSON] = {"entry_id": e.id}
    if b.name:
        rec["name"] = b.name
    rec.update(b.unknown_members())
    return sorted_members(rec)


def custom_record(e: Entry, b: CustomEntry) -> JSON:
    return {"data": e.raw.get("data"), "entry_id": e.id, "ns": b.ns}


def env_record(e: Entry, b: EnvEntry) -> JSON:
    rec: dict[str, JSON] = {"entry_id": e.id}
    if b.cwd:
        rec["cwd"] = b.cwd
    if b.vcs is not None:
        v: dict[str, JSON] = {"system": b.vcs.get("system") or ""}
        if b.vcs.get("revision"):
            v["revision"] = b.vcs["revision"]
        if b.vcs.get("dirty"):
            v["dirty"] = True
        rec["vcs"] = v
    if b.files is not None:
        rec["files"] = {k: b.files[k] for k in ("read", "written") if b.files.get(k)}
    if b.tools:
        rec["tools"] = b.tools
    if b.workspace is not None:
        w: dict[str, JSON] = {"kind": b.workspace.get("kind") or ""}
        if b.workspace.get("ref"):
            w["ref"] = b.workspace["ref"]
        rec["workspace"] = w
    return sorted_members(rec)


def outcome_record(e: Entry, b: OutcomeEntry) -> JSON:
    rec: dict[str, JSON] = {"kind": b.kind, "entry_id": e.id}
    if b.target:
        rec["target"] = b.target
    for key in ("score", "pass", "label", "details"):
        if key in e.raw and (e.raw[key] is not None or key == "details"):
            if key == "label" and not e.raw[key]:
                continue
            rec[key] = e.raw[key]
    return sorted_members(rec)


def decision_record(e: Entry, b: DecisionEntry) -> JSON:
    rec: dict[str, JSON] = {"entry_id": e.id, "verdict": b.verdict}
    if b.by:
        rec["by"] = b.by
    if b.reason:
        rec["reason"] = b.reason
    if "args" in e.raw:
        rec["args"] = e.raw["args"]
    return sorted_members(rec)


def response_record(e: Entry, b: ResponseEntry) -> JSON:
    """``extra.openresponses.response`` of the step a response closes."""
    rec: dict[str, JSON] = {"response_id": b.response_id, "status": b.status}
    if b.model:
        rec["model"] = b.model
    if b.request_hash:
        rec["request_hash"] = b.request_hash
    if b.latency_ms:
        rec["latency_ms"] = b.latency_ms
    if b.usage is not None:
        rec["usage"] = encode_usage(b.usage)
    if b.incomplete is not None:
        rec["incomplete"] = {"reason": b.incomplete.get("reason") or ""}
    if b.error is not None:
        rec["error"] = encode_error(b.error)
    rec["ts"] = rfc3339nano(b.ts, to_utc=False)
    rec.update(b.unknown_members())
    rec["entry_id"] = e.id
    return sorted_members(rec)


#: entry body type -> the record it becomes (``Callable[[Entry, body], JSON]``)
BUILDERS: dict[type[EntryBody], Callable[[Entry, Any], JSON]] = {
    LabelEntry: label_record,
    InfoEntry: info_record,
    CustomEntry: custom_record,
    EnvEntry: env_record,
    OutcomeEntry: outcome_record,
    DecisionEntry: decision_record,
    ResponseEntry: response_record,
}
