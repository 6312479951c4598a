"""The trials of one task as branches of one tree (specs/harbor-jobs.md §6).

Trials of the same task, agent and model are samples of one prompt: one
session whose ``harbor:task`` root holds every trial's branch.  A trial's
steps are shared with an earlier trial's while they are byte-identical
(``steps.step_key``), so the fork is the last step they share: the prompt, or
the root when even the first step differs (a hostname in a screen capture).
Branches are appended in ``started_at`` order; each ends in the trial's
outcome (a ``harbor:trial`` record while it runs), which carries the trial's
``harbor:trial`` members: the leaf is the one entry no other trial shares.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.timestamps import RFC3339_RE

from ...atif.items import CallIds
from ...jsonio import content_hash
from ..draft import EPOCH, SessionDraft
from . import steps as step_mod
from .branch import doc_members, trial_steps
from .outcomes import outcome
from .steps import Step
from .trials import Trial, obj

JSON = Any
ROOT = "task"


def _strip_provider(model: str) -> str:
    return model.split("/", 1)[-1]


def group_key(t: Trial) -> tuple[str, str, str, str]:
    """(task, checksum, agent, model): from ``lock.json``, written at trial start and so read
    alike for finished and running trials; else from ``result.json``."""
    lock, res = t.lock or {}, t.result or {}
    task, agent = lock.get("task"), lock.get("agent")
    if isinstance(task, dict) and isinstance(agent, dict):
        digest = str(task.get("digest") or "").removeprefix("sha256:")
        model = _strip_provider(str(agent.get("model_name") or ""))
        return str(task.get("name") or ""), digest, str(agent.get("name") or ""), model
    info = obj(res.get("agent_info"))
    model_info = obj(info.get("model_info"))
    task_name = res.get("task_name") or t.path.name.rsplit("__", 1)[0]
    return (str(task_name), str(res.get("task_checksum") or ""), str(info.get("name") or ""),
            str(model_info.get("name") or ""))  # fmt: skip


def session_id(job_id: str, *parts: str) -> str:
    """A stable session id: a hash of the job id and what names the session in it."""
    return content_hash([job_id, *parts])[7:39]


@dataclass
class Built:
    """Entries of one session being built, in order, and what the reader counts."""

    raws: list[dict[str, JSON]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    shared: dict[tuple[str, str], str] = field(default_factory=dict)  # (parent, key) -> last id
    used: set[str] = field(default_factory=set)

    def emit(self, step: Step, parent: str | None, prefix: str) -> str:
        """Give the step's bodies ids and parents; the id of its last entry."""
        eid = ""
        for n, body in enumerate(step.bodies):
            eid = base = f"{prefix}/{step.label}" + (f".{n}" if n else "")
            k = 1
            while eid in self.used:  # a step id a document repeats
                k += 1
                eid = f"{base}~{k}"
            self.used.add(eid)
            raw = {"type": body["type"], "id": eid, "parent": parent, **body}
            if raw["type"] == "compaction" and raw.get("first_kept") is None:
                raw["first_kept"] = parent
            self.raws.append(raw)
            parent = eid
        return eid


@dataclass
class Job:
    """The job a unit's trials belong to: its id (what session ids are hashed from), name and
    records (``config.json``, ``result.json``; None when absent)."""

    id: str
    name: str
    config: dict[str, JSON] | None = None
    result: dict[str, JSON] | None = None
    lock: dict[str, JSON] | None = None

    def evals(self, key: tuple[str, str, str, str], dataset: str) -> JSON:
        """The group's ``stats.evals`` entry (``<agent>__<model>__<dataset>``), if any."""
        evals = ((self.result or {}).get("stats") or {}).get("evals") or {}
        return evals.get(f"{key[2]}__{key[3]}__{dataset}") if isinstance(evals, dict) else None


def subsession_of(job: Job, t: Trial, counts: Counter[str]) -> Callable[[JSON], str]:
    """Ref -> the id of the subagent session it names (a file, or one embedded in a document);
    a ref to a file that is not there keeps its link and is counted."""
    embedded = {str(d.get("session_id")): d for _, doc in t.chain for d in _embedded(doc)}

    def of(ref: JSON) -> str:
        path = ref.get("trajectory_path")
        if isinstance(path, str) and path:
            if t.subagents.get(path) is None:
                counts["harbor/subagent_refs_dangling"] += 1
            return session_id(job.id, t.id, path)
        sid = ref.get("session_id")
        if isinstance(sid, str) and sid in embedded:
            return session_id(job.id, t.id, "#" + sid)
        counts["harbor/subagent_refs_unresolved"] += 1
        return ""

    return of


def _embedded(doc: JSON) -> list[JSON]:
    subs = doc.get("subagent_trajectories")
    return (
        [d for d in subs if isinstance(d, dict) and isinstance(d.get("steps"), list)]
        if isinstance(subs, list)
        else []
    )


def subagent_docs(job: Job, t: Trial) -> list[tuple[str, str, JSON]]:
    """(session id, source file, document) of every subagent document a trial has."""
    out = [(session_id(job.id, t.id, p), str(t.path / "agent" / p), d)
           for p, d in t.subagents.items() if d is not None]  # fmt: skip
    for name, doc in t.chain:
        for d in _embedded(doc):
            out.append((session_id(job.id, t.id, "#" + str(d.get("session_id"))),
                        str(t.path / "agent" / name), d))  # fmt: skip
    return out


def _rfc3339(ts: str, default: str) -> str:
    return ts if RFC3339_RE.match(ts) else default


def _trial_members(t: Trial) -> dict[str, JSON]:
    res = t.result or {}
    out: dict[str, JSON] = {"name": t.name, "id": t.id, "started_at": t.started_at or None}
    out |= {k: res[k] for k in ("finished_at", "trial_uri", "source", "agent_info") if k in res}
    source_trial = (
        ((res.get("config") or {}).get("source_trial"))
        if isinstance(res.get("config"), dict)
        else None
    )
    if source_trial:
        out["regrade_of"] = source_trial
    if t.result is None:
        out["incomplete"] = True
    out["document"] = doc_members(*t.chain[0])
    return out


def tree_start(trials: list[Trial]) -> str:
    """The time of a tree's root: its earliest trial's start (by the trials' order)."""
    ordered = sorted(trials, key=lambda t: (t.started_at, t.name))
    return next((t.started_at for t in ordered if RFC3339_RE.match(t.started_at)), EPOCH)


def branches(job: Job, trials: list[Trial], counts: Counter[str]) -> list[dict[str, JSON]]:
    """The tree's entries: the ``harbor:task`` root, then each trial's branch (sharing the
    leading steps an earlier trial had) ending in its outcome."""
    trials = sorted(trials, key=lambda t: (t.started_at, t.name))
    created = tree_start(trials)
    first = trials[0].result or {}
    task = {
        k: first.get(k) for k in ("task_name", "task_checksum", "task_id", "source") if k in first
    }
    b = Built(used={ROOT})
    b.raws.append({"type": "custom", "id": ROOT, "parent": None, "ts": created, "ns": "harbor:task",
                   "data": task or {"task_name": group_key(trials[0])[0]}})  # fmt: skip
    for t in trials:
        ts = _rfc3339(t.started_at, created)
        parent, own = ROOT, False
        for s in trial_steps(t, ts, subsession_of(job, t, counts), counts):
            if not own and s.key and (parent, s.key) in b.shared:
                parent = b.shared[(parent, s.key)]
                continue
            last = b.emit(s, parent, t.name)
            if s.key:
                b.shared.setdefault((parent, s.key), last)
            parent, own = last, True
        # the leaf: the outcome, else a record; it is the trial's own (a shared step is not)
        body = outcome(t, parent if own else None) or {"type": "custom", "ns": "harbor:trial"}
        body["harbor:trial"] = _trial_members(t)
        b.emit(Step(body["type"], "", [body | {"ts": ts}]), parent, t.name)
        counts["harbor/trials_shared_whole"] += not own
    return _untarget_forks(b.raws)


def _untarget_forks(raws: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """An outcome whose target became a fork (a later trial said the same to the end) judges
    its own leaf: located at the fork, it would be in no branch's subtree, and ``--prefer
    score`` would not see it."""
    children = Counter(r["parent"] for r in raws)
    for r in raws:
        if r["type"] == "outcome" and children.get(r.get("target"), 0) > 1:
            r["harbor:target"] = r.pop("target")
    return raws


def tree_draft(
    job: Job, key: tuple[str, str, str, str], trials: list[Trial], source: str
) -> SessionDraft:
    """The tree session, its header filled: its id hashed from the job and group; the agent's
    name and version as the harness; the job and the group's ``stats.evals`` in ``harbor:``
    members."""
    res = next((t.result for t in trials if t.result), None) or {}
    info = obj(res.get("agent_info"))
    doc_agent = obj(trials[0].chain[0][1].get("agent"))
    version = info.get("version") or doc_agent.get("version")
    d = SessionDraft(
        session_id(job.id, *key), source, "harbor", key[2] or str(doc_agent.get("name") or "harbor"),
        version if isinstance(version, str) else "",
    )  # fmt: skip
    d.created_at = min(
        (t.started_at for t in trials if RFC3339_RE.match(t.started_at)), default=EPOCH
    )
    out = d.members
    out["harbor:job"] = {"id": job.id, "name": job.name}
    out["harbor:group"] = dict(
        zip(("task_name", "task_checksum", "agent", "model"), key, strict=True)
    )
    dataset = res.get("source") or "adhoc"
    out["harbor:dataset"] = dataset
    if isinstance((job.config or {}).get("n_attempts"), int):
        out["harbor:n_attempts"] = job.config["n_attempts"]  # type: ignore[index]
    if isinstance(harbor := (job.lock or {}).get("harbor"), dict):
        out["harbor:version"] = harbor.get("version")
    if (evals := job.evals(key, str(dataset))) is not None:
        out["harbor:evals"] = evals
    agent_config = (
        (res.get("config") or {}).get("agent") if isinstance(res.get("config"), dict) else None
    )
    if agent_config is not None:
        out["harbor:agent_config"] = agent_config
    return d


def subagent(job: Job, tree_id: str, sid: str, doc: JSON, ts: str, file: str) -> SessionDraft:
    """A subagent document as its own session: linear, its copied-context steps marked
    ``harbor:copied_context``, its usage its own."""
    agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    version = agent.get("version")
    d = SessionDraft(
        sid, file, "harbor", str(agent.get("name") or "subagent"),
        version if isinstance(version, str) else "",
    )  # fmt: skip
    model = str(agent.get("model_name") or "")
    b, ids = Built(), CallIds()
    config: dict[str, JSON] = {"type": "config", "ts": ts, "harbor:document": doc_members("", doc)}
    if model:
        config["model"] = model
    parent = b.emit(Step("config", "", [config]), None, "sub")
    for step in doc["steps"]:
        if isinstance(step, dict):
            ts = step_mod.timestamp(step, ts)
            copied = bool(step.get("is_copied_context"))
            s = step_mod.convert(step, ids, ts, model, lambda _ref: "", d.notes, copied, file)
            parent = b.emit(s, parent, "sub")
    d.entries = b.raws
    d.members["parent_session"] = tree_id
    return d
