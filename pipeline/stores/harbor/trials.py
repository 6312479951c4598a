"""Harbor trial folders read (specs/harbor-jobs.md §1-§4): results, rewards and trajectories.

A trial is read from the files Harbor writes in it: ``result.json`` (at the
end only), ``lock.json`` (at the start), ``verifier/reward.json`` over
``reward.txt``, and the ATIF documents of ``agent/``: ``trajectory.json``, its
``continued_trajectory_ref`` chain and the subagent files its steps refer to.
Nothing else in the folder is read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ...jsonio import SURROGATE_MESSAGE, loads_checked
from .. import numbers
from ..base import read_input
from ..jsonl import json_kind
from ..regular import read_bytes
from .shapes import checked

JSON = Any
MAIN = "trajectory.json"
#: the result members a trial's reading takes, and their types (another is read as missing)
TYPED: dict[str, type] = {"trial_name": str, "id": str, "started_at": str,
                          "exception_info": dict, "verifier_result": dict}  # fmt: skip


def obj(value: JSON) -> dict[str, JSON]:
    """``value`` when it is a JSON object, else an empty one (a member of the wrong type)."""
    return value if isinstance(value, dict) else {}


def read_json(path: Path, what: str, notes: list[Issue] | None = None) -> JSON:
    """A JSON file's value; ``SessionReadError`` saying where it breaks (``truncated`` when
    it ends early, as a dump cut short by a full disk or a kill leaves it).  A lone
    surrogate it held became U+FFFD, and is noted in ``notes``."""
    data = read_input(path)
    try:
        value, fixed = loads_checked(data.decode("utf-8"), finite=False)
        if fixed and notes is not None:
            notes.append(Issue("bad_character", None, SURROGATE_MESSAGE.format(what), str(path)))
        return value
    except UnicodeDecodeError:
        raise SessionReadError(
            f"{what} is not UTF-8 text", rule="format", source=str(path)
        ) from None
    except json.JSONDecodeError as exc:
        cut = not data.rstrip().endswith((b"}", b"]"))  # a whole object or list ends so
        rule = "truncated" if cut else "format"
        why = "it ends before the JSON value does" if cut else exc.msg
        raise SessionReadError(
            f"{what} does not parse ({why}); nothing of it was read",
            rule=rule, source=str(path), line=exc.lineno,
        ) from None  # fmt: skip
    except ValueError as exc:
        raise SessionReadError(f"{what}: {exc}", rule="format", source=str(path)) from None


def _object(path: Path, what: str, notes: list[Issue]) -> dict[str, JSON] | None:
    """A JSON object file, or None when the file is not there."""
    if not path.exists():
        return None
    value = read_json(path, what, notes)
    if not isinstance(value, dict):
        raise SessionReadError(f"{what} is not a JSON object", rule="format", source=str(path))
    return value


def is_trial(folder: Path) -> bool:
    """A trial folder: a ``config.json`` beside a ``result.json`` or ``lock.json`` naming a
    task, or beside ``agent/`` (a bare trial killed before its lock was written)."""
    if not (folder / "config.json").is_file():
        return False
    for name in ("result.json", "lock.json"):
        try:
            head = read_bytes(folder / name)[:4096]
        except OSError:
            continue
        if b'"task_name"' in head or (b'"task"' in head and b'"agent"' in head):
            return b'"n_total_trials"' not in head and b'"trials"' not in head
    return (folder / "agent").is_dir()


@dataclass
class Rewards:
    """The verifier's rewards and the file they came from."""

    values: dict[str, float]
    file: str


@dataclass
class Trial:
    """One trial folder read: its records, rewards and ATIF documents (``chain``: the main
    document and its continuations, in order; ``subagents``: file name -> document, None
    when the ref dangles)."""

    path: Path
    result: dict[str, JSON] | None
    lock: dict[str, JSON] | None
    rewards: Rewards | None
    chain: list[tuple[str, dict[str, JSON]]] = field(default_factory=list)
    subagents: dict[str, dict[str, JSON] | None] = field(default_factory=dict)
    #: values out of range its records and main documents hold (``numbers``)
    notes: list[Issue] = field(default_factory=list)

    @property
    def name(self) -> str:
        got = (self.result or {}).get("trial_name")
        return str(got) if isinstance(got, str) and got else self.path.name

    @property
    def id(self) -> str:
        got = (self.result or {}).get("id")
        return str(got) if isinstance(got, str) and got else self.name

    @property
    def started_at(self) -> str:
        got = (self.result or {}).get("started_at") or (self.lock or {}).get("created_at")
        return str(got) if isinstance(got, str) else ""

    @property
    def exception(self) -> dict[str, JSON] | None:
        got = (self.result or {}).get("exception_info")
        return got if isinstance(got, dict) else None


def _rewards(trial: Path, result: dict[str, JSON] | None, notes: list[Issue]) -> Rewards | None:
    """``verifier_result.rewards`` of the result; ``reward.json`` over ``reward.txt`` (spec §4,
    read as Harbor's verifier reads them) only for a result without ``verifier_result``.  A
    trial without a result has none: a reward file an agent wrote itself is not a grade.  A
    reward that is no finite number is noted in ``notes``, the others kept."""
    if result is None:
        return None
    got = (result.get("verifier_result") or {}).get("rewards")
    if isinstance(got, dict):
        source = str(trial / "result.json")
        return (
            Rewards(_numbers(got, source, "verifier_result.rewards", notes), source)
            if got
            else None
        )
    if "verifier_result" in result:
        return None  # never graded, or the verifier failed: reward files were not taken
    as_json, as_text = trial / "verifier" / "reward.json", trial / "verifier" / "reward.txt"
    if as_json.is_file():
        value = read_json(as_json, "reward.json", notes)
        if isinstance(value, dict) and (found := _numbers(value, str(as_json), "rewards", notes)):
            return Rewards(found, str(as_json))
        return None
    if as_text.is_file():
        try:
            text = read_input(as_text).decode("utf-8").strip()
        except UnicodeDecodeError:
            text = "(not UTF-8)"
        value = _finite(text)
        if value is None:
            numbers.note(notes, text, "reward", str(as_text), 1, "a finite score")
            return None
        return Rewards({"reward": value}, str(as_text))
    return None


def _finite(value: JSON) -> float | None:
    """``value`` (a number, or the text of one) as a finite float, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        got = float(value)
    except (ValueError, OverflowError):
        return None
    return got if math.isfinite(got) else None


def _numbers(
    rewards: dict[str, JSON], source: str, where: str, notes: list[Issue]
) -> dict[str, float]:
    """The rewards that are finite numbers; each other one is noted in ``notes``."""
    out: dict[str, float] = {}
    for k, v in rewards.items():
        got = None if isinstance(v, str) else _finite(v)
        if got is None:
            numbers.note(notes, v, f"{where}.{k}", source, None, "a finite score")
        else:
            out[str(k)] = got
    return out


def _subagent_paths(doc: dict[str, JSON]) -> list[str]:
    """The ``trajectory_path`` of every file-form subagent ref of a document, in order."""
    out: list[str] = []
    for step in doc.get("steps") or []:
        obs = step.get("observation") if isinstance(step, dict) else None
        for r in (obs or {}).get("results") or [] if isinstance(obs, dict) else []:
            for ref in (r.get("subagent_trajectory_ref") or []) if isinstance(r, dict) else []:
                path = ref.get("trajectory_path") if isinstance(ref, dict) else None
                if isinstance(path, str) and path and path not in out:
                    out.append(path)
    return out


def _document(path: Path, notes: list[Issue]) -> dict[str, JSON]:
    doc = read_json(path, f"the ATIF document {path.name}", notes)
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise SessionReadError(
            f"{path.name} is not an ATIF document (no steps list)", rule="format", source=str(path)
        )
    return checked(doc, path, notes)


def read_records(folder: Path) -> Trial:
    """A trial folder's ``result.json`` and ``lock.json``, without its rewards and documents
    (what grouping needs); ``SessionReadError`` for one that does not read."""
    notes: list[Issue] = []
    result = _object(folder / "result.json", "result.json", notes)
    for key, kind in TYPED.items():
        if result is not None and result.get(key) is not None and not isinstance(result[key], kind):
            notes.append(Issue("bad_field", None, f"result.json: {key} is "
                               f"{json_kind(result[key])}, not {kind.__name__}; read as "
                               "missing", str(folder / "result.json")))  # fmt: skip
    lock = _object(folder / "lock.json", "lock.json", notes)
    for part, key in (
        ("task", "name"),
        ("task", "digest"),
        ("agent", "name"),
        ("agent", "model_name"),
    ):
        got = obj(obj(lock).get(part)).get(key)
        if got is not None and not isinstance(got, str):
            notes.append(Issue("bad_field", None, f"lock.json: {part}.{key} is {json_kind(got)}, "
                               "not a string; read as its text", str(folder / "lock.json")))  # fmt: skip
    return Trial(folder, result, lock, None, notes=notes)


def read_trial(folder: Path) -> Trial:
    """A trial folder's records and documents; ``SessionReadError`` for a file that does not
    read (the trial then has no branch: its error row names that file)."""
    trial = read_records(folder)
    trial.rewards = _rewards(folder, trial.result, trial.notes)
    agent = folder / "agent"
    name: str | None = MAIN
    seen: set[str] = set()
    while name and name not in seen and (agent / name).is_file():
        seen.add(name)
        doc = _document(agent / name, trial.notes)
        trial.chain.append((name, doc))
        ref = doc.get("continued_trajectory_ref")
        name = ref if isinstance(ref, str) else None
    for _, doc in list(trial.chain):
        for ref in _subagent_paths(doc):
            sub = agent / ref
            if ref in trial.subagents or sub.parent != agent:
                continue
            trial.subagents[ref] = _document(sub, trial.notes) if sub.is_file() else None
    return trial
