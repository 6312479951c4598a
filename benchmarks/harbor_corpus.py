"""A Harbor job folder made from code, for the benchmark: the conversations of ``corpus.py``
(tool calls, large tool outputs, planted secrets) as trials of one job, laid out as Harbor
0.25.0 writes them (specs/harbor-jobs.md §2-§5).

    python benchmarks/corpus.py corpus /tmp/hj --format harbor --sessions 1000 --tool-output-kb 4

``sessions`` is the number of trials: four attempts per task (``n_attempts: 4``), in one job
``jobs/2026-02-01__09-00-00/``.  Each trial folder holds ``config.json``, ``lock.json``,
``result.json`` (agent usage, verifier rewards, timings), ``verifier/reward.txt`` (one trial in
four writes ``reward.json`` with several keys), ``trial.log`` and ``agent/trajectory.json``:
ATIF-v1.7 as claude-code's converter writes it, the task's system and user prompts
(identical across its attempts, so trajset shares them), then per turn an agent step with
reasoning, a ``Bash`` call and its linked result, and per-step metrics.  One trial in twenty
fails with an ``AgentTimeoutError``, still verified (reward 0).
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

from texts import sentence, timestamp, tool_output

JSON = Any
ATTEMPTS = 4
JOB = "2026-02-01__09-00-00"
AGENT = {"name": "claude-code", "model_name": "anthropic/claude-sonnet-4-5"}
SYSTEM = "You are a coding agent working in /app. Use the Bash tool. " + "Be careful. " * 40


def _dump(path: Path, value: JSON) -> int:
    """Harbor's ``model_dump_json(indent=4)``; the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, indent=4, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return len(text.encode())


def _trajectory(
    rng: random.Random, task: int, ms: int, turns: int, size: int, shared: list[JSON]
) -> JSON:
    """A trial's ATIF document; its first steps are ``shared`` (the task's prompts, and the
    first turns of an earlier attempt when this one repeated them)."""
    steps = [dict(s) for s in shared]
    for t in range(len(steps) - 2, turns):
        ms += rng.randint(2_000, 9_000)
        call = f"toolu_{rng.getrandbits(64):016x}"
        steps.append({
            "step_id": len(steps) + 1, "timestamp": timestamp(ms), "source": "agent",
            "model_name": "claude-sonnet-4-5", "message": sentence(rng, 14),
            "reasoning_content": sentence(rng, 20),
            "tool_calls": [{"tool_call_id": call, "function_name": "Bash",
                            "arguments": {"command": f"pytest -q tests/test_{task}_{t}.py"}}],
            "observation": {"results": [{"source_call_id": call,
                                         "content": tool_output(rng, task, size)}]},
            "metrics": {"prompt_tokens": rng.randint(2_000, 30_000),
                        "completion_tokens": rng.randint(40, 900),
                        "cached_tokens": rng.randint(0, 2_000),
                        "cost_usd": round(rng.random() / 50, 6)},
        })  # fmt: skip
    steps.append({"step_id": len(steps) + 1, "timestamp": timestamp(ms + 3_000), "source": "agent",
                  "model_name": "claude-sonnet-4-5", "message": sentence(rng, 18)})  # fmt: skip
    totals = {
        f"total_{k}": sum(s.get("metrics", {}).get(k, 0) for s in steps)
        for k in ("prompt_tokens", "completion_tokens", "cached_tokens")
    }
    return {"schema_version": "ATIF-v1.7", "session_id": str(uuid.UUID(int=rng.getrandbits(128))),
            "agent": {"name": "claude-code", "version": "2.1.14", "model_name": "claude-sonnet-4-5"},
            "steps": steps, "final_metrics": totals | {"total_steps": len(steps)}}  # fmt: skip


def _trial(rng: random.Random, job: Path, job_id: str, task: int, attempt: int, digest: str,
           shared: list[JSON], *, turns: int, size: int) -> tuple[int, JSON]:  # fmt: skip
    """One trial folder (attempt ``attempt`` at task ``task``); the bytes written and its
    trajectory."""
    name = f"task-{task:04d}__{rng.getrandbits(28):07x}"
    folder = job / name
    ms = 1_790_000_000_000 + (task * ATTEMPTS + attempt) * 60_000
    path = f"/srv/bench/tasks/task-{task:04d}"
    doc = _trajectory(rng, task, ms + 10_000, turns, size, shared)
    timeout = rng.random() < 0.05
    reward = 0.0 if timeout else float(rng.random() < 0.45)
    n = _dump(folder / "config.json", {"task": {"path": path}, "trial_name": name,
                                        "trials_dir": f"jobs/{JOB}", "agent": AGENT, "job_id": job_id})  # fmt: skip
    n += _dump(folder / "lock.json", {"schema_version": 2, "task": {"name": f"task-{task:04d}",
               "type": "local", "digest": f"sha256:{digest}", "path": path}, "agent": AGENT})  # fmt: skip
    if attempt == 3:  # a verifier with several keys
        rewards = {"reward": reward, "tests_passed": rng.randint(0, 9)}
        n += _dump(folder / "verifier" / "reward.json", rewards)
    else:
        rewards = {"reward": reward}
        (folder / "verifier").mkdir()
        n += (folder / "verifier" / "reward.txt").write_text(f"{reward:g}\n")
    exception = None
    if timeout:
        exception = {"exception_type": "AgentTimeoutError", "exception_message": "Agent timed out",
                     "exception_traceback": "Traceback (most recent call last): ...",
                     "occurred_at": timestamp(ms + 50_000)}  # fmt: skip
    n += _dump(folder / "result.json", {
        "id": str(uuid.UUID(int=rng.getrandbits(128))), "task_name": f"task-{task:04d}",
        "trial_name": name, "trial_uri": f"file:///srv/bench/jobs/{JOB}/{name}",
        "task_id": {"path": path}, "source": None, "task_checksum": digest,
        "agent_info": {"name": "claude-code", "version": "2.1.14",
                       "model_info": {"name": "claude-sonnet-4-5", "provider": "anthropic"}},
        "agent_result": {"n_input_tokens": doc["final_metrics"]["total_prompt_tokens"],
                         "n_cache_tokens": doc["final_metrics"]["total_cached_tokens"],
                         "n_output_tokens": doc["final_metrics"]["total_completion_tokens"]},
        "verifier_result": {"rewards": rewards}, "exception_info": exception,
        "started_at": timestamp(ms), "finished_at": timestamp(ms + 55_000),
    })  # fmt: skip
    n += (folder / "trial.log").write_text(f"trial {name} finished\n")
    return n + _dump(folder / "agent" / "trajectory.json", doc), doc


def _prompts(rng: random.Random, task: int, ms: int) -> list[JSON]:
    prompt = f"Task {task}: make the failing tests of module {task} pass. {sentence(rng, 30)}\n"
    return [{"step_id": 1, "timestamp": timestamp(ms), "source": "system", "message": SYSTEM},
            {"step_id": 2, "timestamp": timestamp(ms), "source": "user", "message": prompt}]  # fmt: skip


def build_harbor_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write one job of ``sessions`` trials under ``dest/jobs/``; the bytes written.  An
    attempt repeats the first turns of the task's first attempt with probability
    ``fork_rate`` (so its tree forks after them), else it forks at the prompt."""
    rng = random.Random(seed)
    job = dest / "jobs" / JOB
    job_id = str(uuid.UUID(int=rng.getrandbits(128)))
    total = _dump(job / "config.json", {"job_name": JOB, "n_attempts": ATTEMPTS,
                                         "agents": [AGENT], "tasks": []})  # fmt: skip
    total += _dump(job / "lock.json", {"schema_version": 3, "created_at": timestamp(1_790_000_000_000),
                                       "harbor": {"version": "0.25.0", "is_editable": False}})  # fmt: skip
    digest, base = "", []  # the task's checksum and its first attempt's steps
    for i in range(sessions):
        task, attempt = divmod(i, ATTEMPTS)
        if attempt == 0:
            digest = f"{rng.getrandbits(256):064x}"
            shared = _prompts(rng, task, 1_790_000_000_000 + i * 60_000)
        elif rng.random() < fork_rate:
            shared = base[: 2 + rng.randint(1, max(1, turns - 1))]
        else:
            shared = base[:2]
        n, doc = _trial(rng, job, job_id, task, attempt, digest, shared, turns=turns,
                        size=tool_output_bytes)  # fmt: skip
        total += n
        base = doc["steps"] if attempt == 0 else base
    total += _dump(job / "result.json", {"id": job_id, "started_at": "2026-02-01T09:00:00",
                                          "finished_at": "2026-02-01T21:00:00",
                                          "n_total_trials": sessions, "stats": {}})  # fmt: skip
    return total
