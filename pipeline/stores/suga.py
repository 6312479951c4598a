"""suga sessions through its SDK's public JSON types: the ``suga-export`` folder (specs/suga.md §4).

A host program writes ``manifest.json`` and the JSON Lines files it
declares (``sessions.jsonl``, ``entries.jsonl``, ``trace_events.jsonl``,
``session_meta.jsonl``) from ``sugasdk``'s ``SessionInfo``, ``Entry`` and
``TraceEvent``; only those declared files are read (never ``.env`` or
anything else of a suga home).  The record vocabulary is not published, so
the mapping is one table (``MAPPED``): known bodies become items, every other
type a ``suga:<type>`` extension entry holding the body unchanged, counted
per type.  Entries chain in ``seq`` order (suga does not fork); trace events
give each model call's usage, model, latency and errors; request states and
the session status become outcomes; a gap in ``seq`` is reported.
One unit per export folder.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.entries import TOOL_FAILED
from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue

from ..errors import SessionReadError
from .base import Fixture, Match, Unit, UnitOptions, input_lines
from .draft import SessionDraft
from .jsonl import objects
from .numbers import INT64, count, counts, usage
from .regular import read_text
from .template import ConvertingReader

JSON = Any
FILES = ("sessions.jsonl", "entries.jsonl", "trace_events.jsonl", "session_meta.jsonl")
#: the member of a trace event that holds its line in ``trace_events.jsonl`` (read here only)
LINE = "trajset:line"
DONE, FAILED = (
    frozenset({"done", "completed", "ok"}),
    frozenset({"failed", "canceled", "cancelled", "error"}),
)


def _declared(folder: Path) -> list[Path]:
    """The export's JSON Lines files that ``manifest.json`` declares (all four when it lists none)."""
    try:
        manifest = json.loads(read_text(folder / "manifest.json"))
    except (OSError, ValueError):
        return []
    if not isinstance(manifest, dict) or manifest.get("format") != "suga-export":
        return []
    listed = manifest.get("files")
    names = [n for n in FILES if not isinstance(listed, list) or n in listed]
    return [folder / n for n in names if (folder / n).is_file()]


def _lines(
    path: Path | None, issues: list[tuple[str, Issue]] | None = None
) -> Iterator[tuple[int, dict[str, JSON]]]:
    """Each line's object; a line that does not decode (a cut last line, a value that is no
    object) is an issue in ``issues``, and the other lines are read (one cut line of
    ``entries.jsonl`` once cost every session of the export)."""
    if path is None or not path.is_file():
        return
    found, problems = objects(input_lines(path), path.name)
    if issues is not None:
        issues.extend((str(path), p) for p in problems)
    yield from found


@dataclass
class Export:
    """The export folder's records, grouped by session."""

    folder: Path
    sessions: list[dict[str, JSON]] = field(default_factory=list)
    entries: dict[str, list[tuple[int, dict[str, JSON]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    traces: dict[str, list[dict[str, JSON]]] = field(default_factory=lambda: defaultdict(list))
    meta: dict[str, dict[str, JSON]] = field(default_factory=dict)
    #: lines of its files that do not read, with the file: a row each
    issues: list[tuple[str, Issue]] = field(default_factory=list)

    @classmethod
    def read(cls, folder: Path) -> Export:
        out = cls(folder)
        files = {p.name: p for p in _declared(folder)}
        for _, s in _lines(files.get("sessions.jsonl"), out.issues):
            out.sessions.append(s)
        for lineno, e in _lines(files.get("entries.jsonl"), out.issues):
            out.entries[str(e.get("session_id"))].append((lineno, e))
        for lineno, t in _lines(files.get("trace_events.jsonl"), out.issues):
            out.traces[str(t.get("session_id"))].append({**t, LINE: lineno})
        for _, m in _lines(files.get("session_meta.jsonl"), out.issues):
            out.meta[str(m.get("session_id"))] = m
        return out


# --------------------------------------------------------------------------- one session


@dataclass
class Chain:
    """A session's entries in order, each the parent of the next (``draft.append``)."""

    draft: SessionDraft
    traces: str = ""  # the trace file, which problems with a trace's numbers name
    calls: int = 0


def _user(c: Chain, body: JSON, ts: JSON, traces: list[JSON]) -> None:
    c.draft.append("item", ts, item=text_message("user", str(body.get("text") or "")))


def _tool_result(c: Chain, body: JSON, ts: JSON, traces: list[JSON]) -> None:
    content = body.get("content")
    item = {
        "type": "function_call_output",
        "call_id": str(body.get("tool_call_id") or ""),
        "output": content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
    }
    extra: dict[str, JSON] = {"suga:ok": body["ok"]} if "ok" in body else {}
    if body.get("ok") is False:
        extra[TOOL_FAILED] = True
    c.draft.append("item", ts, item=item, **extra)


def _assistant(c: Chain, body: JSON, ts: JSON, traces: list[JSON]) -> None:
    c.calls += 1
    rid = f"{c.draft.id}-resp{c.calls}"
    if body.get("reasoning"):
        c.draft.append(
            "item",
            ts,
            item={
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": str(body["reasoning"])}],
            },
            response=rid,
        )
    if body.get("text"):
        c.draft.append("item", ts, item=text_message("assistant", str(body["text"])), response=rid)
    for call in body.get("tool_calls") or []:
        args = call.get("arguments")
        arguments = (
            args
            if isinstance(args, str)
            else json.dumps(args if args is not None else {}, ensure_ascii=False)
        )
        item = {
            "type": "function_call",
            "call_id": str(call.get("id") or ""),
            "name": str(call.get("name") or ""),
            "arguments": arguments,
        }
        c.draft.append("item", ts, item=item, response=rid)
    _response(c, rid, traces.pop(0) if traces else None, ts)


def _response(c: Chain, rid: str, trace: JSON, ts: JSON) -> None:
    """The response entry of one model call, from its trace event when there is one."""
    body: dict[str, JSON] = {"response_id": rid, "status": "completed"}
    if trace is not None:
        body["model"] = str(trace.get("name") or "")
        where = (c.traces, trace.get(LINE))
        got = counts(
            c.draft.notes,
            trace,
            ("input_tokens", "output_tokens", "cache_read_tokens"),
            "trace",
            *where,
        )
        if got is not None:
            body["usage"] = usage(*got)
        if trace.get("duration_ms") and (
            ms := count(c.draft.notes, trace["duration_ms"], "duration_ms", *where)
        ):
            body["latency_ms"] = ms
        if trace.get("error") or trace.get("status") not in (None, "", "ok"):
            body["status"] = "failed"
            body["error"] = {
                "code": str(trace.get("status") or "error"),
                "message": str(trace.get("error") or ""),
            }
        body["suga:trace"] = {
            k: trace[k] for k in ("id", "ttft_ms", "cache_write_tokens", "attrs") if k in trace
        }
    c.draft.append("response", ts if trace is None else trace.get("started_at") or ts, **body)


#: entry type -> how its body becomes entries; any other type is kept as ``suga:<type>``
MAPPED: dict[str, Callable[[Chain, JSON, JSON, list[JSON]], None]] = {
    "user": _user,
    "assistant": _assistant,
    "tool_result": _tool_result,
}
#: types understood as boundaries whose kept window is unknown: kept whole, not counted unknown
BOUNDARIES = ("segment", "compaction", "handoff")


def _request_outcome(c: Chain, request: JSON) -> None:
    state = str(request.get("state") or "")
    body: dict[str, JSON] = {
        "kind": "task",
        "target": c.draft.last["id"] if c.draft.entries else None,
    }
    if "uncertain" in state:
        body["label"] = "delivery_uncertain"
    else:
        body["label"] = state or "unknown"
        if state in DONE or state in FAILED:
            body["pass"] = state in DONE
    body["details"] = request
    c.draft.append("outcome", None, **body)


def _entries(
    c: Chain, entries: list[tuple[int, JSON]], traces: list[JSON], requests: dict[str, JSON]
) -> None:
    """Every entry in ``seq`` order; a turn's left-over model calls and its request state at its end."""
    llm: dict[str, list[JSON]] = defaultdict(list)
    for t in traces:
        if t.get("kind") == "llm":
            llm[str(t.get("turn_id") or "")].append(t)
    ordered = sorted(entries, key=lambda le: _seq(le[1]))
    for i, (_, e) in enumerate(ordered):
        kind, body, turn = str(e.get("type") or ""), e.get("json"), str(e.get("turn_id") or "")
        handler = MAPPED.get(kind) if isinstance(body, dict) else None
        if handler is not None:
            handler(c, body, e.get("created_at"), llm[turn])
        else:
            if kind not in BOUNDARIES:
                c.draft.counts[f"suga_unknown_type/{kind}"] += 1
            c.draft.append(
                f"suga:{kind or 'untyped'}",
                e.get("created_at"),
                body=body,
                seq=e.get("seq"),
                turn_id=turn,
            )
        nxt = ordered[i + 1][1].get("turn_id") if i + 1 < len(ordered) else None
        if turn and nxt != turn:
            for trace in llm.pop(turn, []):  # model calls that left no assistant record
                c.calls += 1
                _response(c, f"{c.draft.id}-resp{c.calls}", trace, trace.get("started_at"))
            if turn in requests:
                _request_outcome(c, requests[turn])


def _seq(e: JSON) -> int:
    """An entry's ``seq`` for ordering: one that is no count sorts first (``_gaps`` says so)."""
    v = e.get("seq")
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < INT64 else 0


def _gaps(sid: str, entries: list[tuple[int, JSON]]) -> list[Issue]:
    seqs = sorted({_seq(e) for _, e in entries} - {0})
    missing: list[int] = []  # the first 11 numbers missing below the last seq
    for before, after in zip([0, *seqs], seqs, strict=False):
        missing += range(before + 1, min(after, before + 12 - len(missing)))
        if len(missing) > 10:
            break
    if not missing:
        return []
    shown = ", ".join(str(n) for n in missing[:10]) + (" ..." if len(missing) > 10 else "")
    message = f"session {sid} misses entries seq {shown}: an incomplete export; exported as far as it goes"
    return [Issue("incomplete", None, message)]


def convert_session(export: Export, info: JSON, children: list[str]) -> SessionDraft:
    sid = str(info.get("id") or "")
    source = str(export.folder / "entries.jsonl")
    d = SessionDraft(sid, source, "suga", "suga")
    d.stamp(info.get("created_at"))
    c = Chain(d, traces=str(export.folder / "trace_events.jsonl"))
    entries = export.entries.get(sid, [])
    meta = export.meta.get(sid, {})
    requests = {str(r.get("turn_id")): r for r in meta.get("requests") or [] if isinstance(r, dict)}
    _entries(c, entries, list(export.traces.get(sid, [])), requests)
    for child in children:
        c.draft.append("link", None, rel="subsession", session=child)
    outcome: dict[str, JSON] = {
        "kind": "task",
        "target": c.draft.last["id"] if c.draft.entries else None,
        "label": str(info.get("status") or "unknown"),
        "details": info,
    }
    if info.get("status") in FAILED:
        outcome["pass"] = False
    d.append("outcome", info.get("updated_at"), **outcome)
    if info.get("cwd"):
        d.members["cwd"] = str(info["cwd"])
        d.meet("workdir", d.members["cwd"])
    if info.get("parent_session_id"):
        d.members["parent_session"] = str(info["parent_session_id"])
    d.members["suga:session"] = info
    if meta:
        d.members["suga:meta"] = {k: v for k, v in meta.items() if k != "requests"}
    d.issues += _gaps(sid, entries)
    return d


class SugaReader(ConvertingReader[Export, tuple[Export, JSON, list[str]]]):
    """``suga``: a ``suga-export`` folder (``manifest.json`` with ``format: suga-export``);
    no default location, since a host program writes the export where it is told."""

    kind = "suga"
    match = Match.MARKER
    fixtures = (Fixture("upstream/suga/synthetic-export"),)
    identity_fields = (("workdir", "sessions.jsonl cwd"),)

    def detect(self, path: Path) -> bool:
        return path.is_dir() and bool(_declared(path))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        files = tuple(str(p) for p in [path / "manifest.json", *_declared(path)])
        return [self.unit(files, name=str(path))]

    def files(self, unit: Unit) -> tuple[str, ...]:
        """The export folder: its files are read together (``Export.read``)."""
        return (unit.name,)

    def read(self, path: Path, unit: Unit, earlier: list[Export]) -> Export:
        return Export.read(path)

    def join(
        self, read: list[Export], unit: Unit
    ) -> Iterator[tuple[Export, JSON, list[str]] | SessionReadError]:
        """Each session ``sessions.jsonl`` lists, with its children's ids; then an error for
        each session the entries name that it does not list."""
        for export in read:
            known = {str(s.get("id")) for s in export.sessions}
            children: dict[str, list[str]] = defaultdict(list)
            for s in export.sessions:
                if s.get("parent_session_id") in known:
                    children[str(s["parent_session_id"])].append(str(s.get("id")))
            for info in export.sessions:
                yield export, info, children.get(str(info.get("id")), [])
            for sid in sorted(set(export.entries) - known):
                yield SessionReadError(
                    "entries of a session that sessions.jsonl does not list",
                    rule="unknown_session",
                    source=str(export.folder / "entries.jsonl"),
                    session_id=sid,
                )
            if not export.sessions:  # no session to carry them: a row each
                for source, issue in export.issues:
                    yield SessionReadError(issue.message, rule=issue.kind, source=source,
                                           line=issue.line)  # fmt: skip

    def convert(self, tree: tuple[Export, JSON, list[str]], unit: Unit) -> SessionDraft:
        """The session; the export's first one also carries the lines of its files that do
        not read (a row each, the sessions exported)."""
        draft = convert_session(*tree)
        export, info, _ = tree
        if export.sessions and info is export.sessions[0]:
            draft.issues += [replace(i, source=src) for src, i in export.issues]
        return draft

    def session_ids(self, unit: Unit) -> list[str]:
        return [str(s.get("id")) for s in self._infos(unit)]

    def identities(self, unit: Unit) -> list[Identity]:
        return identities_of([("workdir", s.get("cwd")) for s in self._infos(unit)])

    def _infos(self, unit: Unit) -> list[dict[str, JSON]]:
        """The export's ``sessions.jsonl`` rows (its ``SessionInfo``) up to one that does not
        read (its load reports that line), read cheaply."""
        out: list[dict[str, JSON]] = []
        with contextlib.suppress(SessionReadError, OSError):
            for _, info in _lines(Path(unit.name) / "sessions.jsonl" if unit.name else None):
                out.append(info)
        return out
