"""Outcome scores per task: the distribution of attempts' scores, and pass@k (card, report).

A task is a session whose outcomes judge attempts at it (``test`` and ``task``
outcomes: a Harbor job's trials of one task, a benchmark's reruns).  Per task:
the attempts, how many were scored, the mean, lowest and highest score, and
pass@k by the unbiased estimator of Chen et al. (2021),
``1 - C(n-c, k) / C(n, k)``, for k = 1, 2, 4, ... up to n, when every attempt
passed or failed outright (every score 0 or 1, an attempt without a score
failing, as Harbor counts one).  Over all tasks, pass@k is the mean over
tasks, for each k every task reaches, as Harbor's ``pass_at_k`` is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

JSON = Any
ATTEMPT_KINDS = ("test", "task")
#: tasks listed by name in the card (the rest are in the overall line)
CARD_TASKS = 20


def pass_at_k(n: int, c: int, k: int) -> float:
    """The probability that at least one of k attempts drawn from n (c passing) passes."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def _ks(n: int) -> list[int]:
    out, k = [], 1
    while k <= n:
        out.append(k)
        k *= 2
    return out


@dataclass
class TaskScores:
    """One task's attempts: their scores (None: not scored) and whether each passed."""

    session_id: str
    name: str
    agent: str = ""  # the agent and model that made the attempts
    scores: list[float | None] = field(default_factory=list)
    passed: list[bool | None] = field(default_factory=list)

    @property
    def scored(self) -> list[float]:
        return [s for s in self.scores if s is not None]

    @property
    def binary(self) -> bool:
        """Every attempt passed or failed outright (pass@k is defined)."""
        return all(
            (s in (0.0, 1.0) and p is not None) or (s is None and p is False)
            for s, p in zip(self.scores, self.passed, strict=True)
        )

    def distribution(self) -> list[tuple[float, int]]:
        """Each score the attempts got, lowest first, with how many got it."""
        counts: dict[float, int] = {}
        for v in self.scored:
            counts[v] = counts.get(v, 0) + 1
        return sorted(counts.items())

    def pass_at(self) -> dict[int, float]:
        if not self.binary:
            return {}
        n, c = len(self.scores), sum(p is True for p in self.passed)
        return {k: pass_at_k(n, c, k) for k in _ks(n)}

    def to_json(self) -> JSON:
        s = self.scored
        return {
            "session_id": self.session_id, "name": self.name, "agent": self.agent,
            "attempts": len(self.scores),
            "scored": len(s), "mean": sum(s) / len(s) if s else None,
            "min": min(s, default=None), "max": max(s, default=None),
            "passed": sum(p is True for p in self.passed),
            "distribution": [list(d) for d in self.distribution()],
            "pass_at_k": {str(k): v for k, v in self.pass_at().items()},
        }  # fmt: skip


def task_scores(folder: Path) -> list[TaskScores]:
    """Every task of an export folder with a scored attempt, by name then session id."""
    shards = sorted((folder / "data" / "outcomes").glob("*.parquet"))
    tasks: dict[str, TaskScores] = {}
    cols = ["session_id", "kind", "score", "pass", "details"]
    for shard in shards:
        for row in pq.ParquetFile(shard).read(columns=cols).to_pylist():
            if row["kind"] not in ATTEMPT_KINDS:
                continue
            sid = row["session_id"]
            t = tasks.setdefault(sid, TaskScores(sid, _name(row["details"]) or sid))
            t.scores.append(row["score"])
            t.passed.append(row["pass"])
    found = {sid: t for sid, t in tasks.items() if t.scored}
    for sid, agent in _agents(folder, set(found)).items():
        found[sid].agent = agent
    return sorted(found.values(), key=lambda t: (t.name, t.agent, t.session_id))


def _agents(folder: Path, sessions: set[str]) -> dict[str, str]:
    """``agent (model)`` of each of ``sessions``, from its first trajectory."""
    out: dict[str, str] = {}
    for shard in sorted((folder / "data" / "trajectories").glob("*.parquet")) if sessions else []:
        columns = ["session_id", "agent_name", "model_name"]
        for row in pq.ParquetFile(shard).read(columns=columns).to_pylist():
            sid, agent, model = row["session_id"], row["agent_name"] or "", row["model_name"]
            if sid in sessions and sid not in out:
                out[sid] = f"{agent} ({model})" if model else agent
    return out


def _name(details: str | None) -> str:
    try:
        got = json.loads(details) if details else None
    except ValueError:
        return ""
    name = got.get("task_name") if isinstance(got, dict) else None
    return name if isinstance(name, str) else ""


def overall(tasks: list[TaskScores]) -> dict[int, float]:
    """pass@k over tasks (the mean), for the k every task has; {} unless all are binary."""
    if not tasks or not all(t.binary for t in tasks):
        return {}
    ks = _ks(min(len(t.scores) for t in tasks))
    per = [t.pass_at() for t in tasks]
    return {k: sum(p[k] for p in per) / len(per) for k in ks}


def score_text(v: float | None) -> str:
    """A score or pass@k as the card and the report print it (3 significant digits)."""
    return "" if v is None else f"{v:.3g}"


def card_section(tasks: list[TaskScores]) -> list[str]:
    """The card's ``Outcome scores`` section; nothing when no task has a scored attempt."""
    if not tasks:
        return []
    ks = sorted({k for t in tasks for k in t.pass_at()})
    lines = [
        "## Outcome scores",
        "",
        f"{len(tasks)} tasks with scored attempts (`test` and `task` outcomes of one session).",
    ]
    if o := overall(tasks):
        lines.append(
            "Over all tasks: " + ", ".join(f"pass@{k} {v:.3f}" for k, v in o.items()) + "."
        )
    head = "| task | agent | attempts | scored | mean | min | max |"
    head += "".join(f" pass@{k} |" for k in ks)
    lines += ["", head, "|---|---|" + "---:|" * (5 + len(ks))]
    for t in tasks[:CARD_TASKS]:
        j, p = t.to_json(), t.pass_at()
        cells = [
            j["attempts"],
            j["scored"],
            score_text(j["mean"]),
            score_text(j["min"]),
            score_text(j["max"]),
        ]
        cells += [score_text(p.get(k)) for k in ks]
        lines.append(f"| {t.name} | {t.agent} | " + " | ".join(str(c) for c in cells) + " |")
    if len(tasks) > CARD_TASKS:
        lines.append(f"\n({len(tasks) - CARD_TASKS} more tasks; every one is in the report.)")
    lines.append("")
    recipe = ('`pl.read_parquet("data/outcomes/*.parquet").group_by("session_id")'
              '.agg(pl.col("score").mean())`')  # fmt: skip
    return [*lines, f"Per attempt, from the outcomes table: {recipe}.", ""]
