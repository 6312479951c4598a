"""OpenAI Codex CLI rollouts (specs/codex.md): ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.

A unit is one thread family (``lineage.families``): a thread with its revert
segments, its forks and its subagent children, whose first lines tie them
together.  A thread, its segments and its forks are one session tree
(``lineage.build_trees``): rolled-back turns stay in it as abandoned branches,
forks and revert segments hang from the line they continue.  A subagent child
is a session of its own, its replay of the parent left out, linked from the
spawn call.  ``convert.py`` maps the lines to entries.  The thread's current
leaf (the end of its file, or of its newest segment) is the reserved ``leaf``
label, which the ``current`` policy follows.  ``session_index.jsonl``,
``history.jsonl``, the config and the state database are never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.entries import validate_entry
from trajset.schemas.session import Issue, Session
from trajset.schemas.timestamps import RFC3339_RE

from ...errors import SessionReadError
from ..base import Loaded, Location, Reader, Unit, UnitOptions, converted_session
from .convert import convert
from .events import Duplicates, duplicates
from .lineage import Tree, build_trees, families
from .rollouts import (
    SUFFIXES,
    Head,
    Rollout,
    first_line,
    is_rollout_name,
    meta_of,
    read_rollout,
    rollout_files,
)

JSON = Any
PAYLOAD = "openresponses/2026-04-24"


def is_rollout(path: Path) -> bool:
    """A rollout file: its first line is ``session_meta`` (the direct form only by name)."""
    if not path.is_file() or not path.name.endswith(SUFFIXES):
        return False
    first = first_line(path)
    if first is not None and first.get("type") == "session_meta":
        return meta_of(first) is not None
    return is_rollout_name(path) and meta_of(first) is not None


class CodexReader(Reader):
    """``codex``: a ``CODEX_HOME`` (``sessions/`` and ``archived_sessions/``), any folder of
    rollouts (a date folder), or one rollout file (``.jsonl`` or ``.jsonl.zst``)."""

    kind = "codex"
    locations = (Location("~/.codex", env="CODEX_HOME"),)
    identity_fields = (
        ("workdir", "session_meta cwd"),
        ("repo", "session_meta git.repository_url"),
        ("branch", "session_meta git.branch"),
    )

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return is_rollout(path)
        if not path.is_dir():
            return False
        return any(is_rollout(p) for p in rollout_files(path)[:8])

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        files = [path] if path.is_file() else rollout_files(path)
        heads: list[Head] = []
        unread: list[Path] = []
        for f in files:
            head = Head.read(f)
            if head is None:
                unread.append(f)
            else:
                heads.append(head)
        units = [self.unit(tuple(h.path for h in g), name=g[0].path) for g in families(heads)]
        units += [self.unit((str(f),), name=str(f)) for f in unread]  # an error row each
        return sorted(units, key=lambda u: u.files)

    def load(self, unit: Unit) -> Loaded:
        out: Loaded = []
        rollouts: list[Rollout] = []
        taken: set[str] = set()
        for f in unit.files:
            try:
                rollouts.append(read_rollout(Path(f), taken))
            except SessionReadError as exc:
                out.append(exc)
        dups = {r.rollout: duplicates(r) for r in rollouts}
        for tree in build_trees(rollouts, dups):
            try:
                out.append(_session(tree, dups))
            except SessionReadError as exc:
                out.append(exc)
        return out

    def session_ids(self, unit: Unit) -> list[str]:
        return [h.thread for f in unit.files if (h := Head.read(Path(f))) is not None]

    def identities(self, unit: Unit) -> list[Identity]:
        found: list[tuple[str, object]] = []
        for f in unit.files:
            if (h := Head.read(Path(f))) is not None:
                git = h.meta.get("git")
                git = git if isinstance(git, dict) else {}
                found += [("workdir", h.meta.get("cwd")), ("repo", git.get("repository_url")),
                          ("branch", git.get("branch"))]  # fmt: skip
        return identities_of(found)


def _session(tree: Tree, dups: dict[str, Duplicates]) -> Session:
    c = convert(tree, dups)
    raws = c.raws
    if c.current and raws and c.current != raws[-1]["id"]:
        last = raws[-1]
        raws.append({"type": "label", "id": f"{last['id']}:leaf", "parent": last["id"],
                     "ts": last["ts"], "target": c.current, "label": "leaf"})  # fmt: skip
    meta = tree.root.meta
    created = str(meta.get("timestamp") or "")
    header: dict[str, JSON] = {
        "type": "session",
        "format": "agentsession/0.2",
        "id": tree.thread,
        "created_at": created if RFC3339_RE.match(created) else raws[0]["ts"],
        "payload": PAYLOAD,
        "harness": {
            "name": "codex",
            **({"version": str(meta["cli_version"])} if meta.get("cli_version") else {}),
        },
    }
    if isinstance(meta.get("cwd"), str):
        header["cwd"] = meta["cwd"]
    parent = tree.root.head().parent_thread
    if parent:
        header["parent_session"] = parent
        if tree.spawned_by:
            header["spawned_by"] = tree.spawned_by
    header["codex:meta"] = {k: v for k, v in meta.items() if k != "base_instructions"}
    if tree.notes:
        header["codex:notes"] = tree.notes
    files = {pl.rollout.path: pl.rollout for pl in tree.placed}
    issues = [i for r in files.values() for i in r.issues]
    counts = {**{f"codex/{k}": v for k, v in tree.counts.items()},
              **{f"codex/{k}": v for k, v in c.counts.items()}}  # fmt: skip
    counts["codex/rollouts"] = len(files)
    try:
        return converted_session(header, raws, tree.root.path, "codex", issues, counts)
    except SessionReadError:  # an entry that does not decode: found, reported, kept verbatim
        issues += _undecodable(tree, raws)
        counts["codex/entries_undecodable"] = len(issues)
        return converted_session(header, raws, tree.root.path, "codex", issues, counts)


def _undecodable(tree: Tree, raws: list[dict[str, JSON]]) -> list[Issue]:
    """Each entry that does not validate (an item of a known type with a broken shape),
    replaced in ``raws`` by a ``codex:undecodable`` entry holding it, and an issue naming the
    file and line it came from."""
    where = {pl.line.key: (pl.rollout.path, pl.line.n) for pl in tree.placed}
    issues: list[Issue] = []
    for i, raw in enumerate(raws):
        try:
            validate_entry(raw)
        except ValueError as exc:
            path, line = where.get(str(raw["id"]).split(":link:")[0], (tree.root.path, None))
            keep = {k: raw[k] for k in ("type", "id", "parent", "ts")}
            raws[i] = {**keep, "type": "codex:undecodable", "entry": raw}
            issues.append(Issue("bad_line", line, f"{Path(path).name}: a {raw['type']} entry does "
                                f"not decode ({exc}); kept verbatim as codex:undecodable"))  # fmt: skip
    return issues
