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
from ..base import Fixture, Location, Unit, UnitOptions
from ..draft import SessionDraft
from ..template import ConvertingReader
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


def is_rollout(path: Path) -> bool:
    """A rollout file: its first line is ``session_meta`` (the direct form only by name)."""
    if not path.is_file() or not path.name.endswith(SUFFIXES):
        return False
    first = first_line(path)
    if first is not None and first.get("type") == "session_meta":
        return meta_of(first) is not None
    return is_rollout_name(path) and meta_of(first) is not None


class CodexReader(ConvertingReader[Rollout, tuple[Tree, dict[str, Duplicates]]]):
    """``codex``: a ``CODEX_HOME`` (``sessions/`` and ``archived_sessions/``), any folder of
    rollouts (a date folder), or one rollout file (``.jsonl`` or ``.jsonl.zst``)."""

    kind = "codex"
    fixtures = (
        Fixture("upstream/codex/synthetic/rollback"),
        Fixture("upstream/codex/synthetic/fork"),
        Fixture("upstream/codex/real/codemie-code"),
        # a cut base changes the segments of what continues it
        Fixture("upstream/codex/synthetic/paginated-revert-fork", cut=False),
        Fixture("upstream/codex/synthetic/subagent-paginated", cut=False),
        Fixture("upstream/codex/upstream-synthetic/claude-code-log", cut=False),
    )
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

    def read(self, path: Path, unit: Unit, earlier: list[Rollout]) -> Rollout:
        """A rollout; a copy of an earlier file under another name gets an id of its own."""
        return read_rollout(path, {r.rollout for r in earlier})

    def join(self, read: list[Rollout], unit: Unit) -> list[tuple[Tree, dict[str, Duplicates]]]:
        """The thread's trees: forks, rollbacks and subagent threads placed (``lineage``).  A
        file that repeats an earlier one line for line (a copy) is left out, said in the
        earlier one's ``duplicate_session`` row: read as a segment, it would say it all twice."""
        read = _without_copies(read)
        dups = {r.rollout: duplicates(r) for r in read}
        return [(tree, dups) for tree in build_trees(read, dups)]

    def convert(self, tree: tuple[Tree, dict[str, Duplicates]], unit: Unit) -> Session:
        return _session(*tree)

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
    meta = tree.root.meta
    version = str(meta["cli_version"]) if meta.get("cli_version") else ""
    d = SessionDraft(tree.thread, tree.root.path, "codex", "codex", version)
    d.files = tuple(dict.fromkeys([tree.root.path, *(p.rollout.path for p in tree.placed)]))
    c = convert(tree, dups, d)
    d.label_leaf(c.current)
    created = str(meta.get("timestamp") or "")
    d.created_at = created if RFC3339_RE.match(created) else ""
    if isinstance(meta.get("cwd"), str):
        d.members["cwd"] = meta["cwd"]
    git = meta.get("git")
    git = git if isinstance(git, dict) else {}
    d.meet("workdir", meta.get("cwd"))
    d.meet("repo", git.get("repository_url"))
    d.meet("branch", git.get("branch"))
    parent = tree.root.head().parent_thread
    if parent:
        d.members["parent_session"] = parent
        if tree.spawned_by:
            d.members["spawned_by"] = tree.spawned_by
    d.members["codex:meta"] = {k: v for k, v in meta.items() if k != "base_instructions"}
    if tree.notes:
        d.members["codex:notes"] = tree.notes
    files = {pl.rollout.path: pl.rollout for pl in tree.placed}
    d.issues = [*(i for r in files.values() for i in r.issues), *d.issues]  # the converter's too
    d.counts.update({f"codex/{k}": v for k, v in tree.counts.items()})
    d.counts.update({f"codex/{k}": v for k, v in c.counts.items()})
    d.counts["codex/rollouts"] = len(files)
    try:
        return d.finish()
    except SessionReadError:  # an entry that does not decode: found, reported, kept verbatim
        d.issues += _undecodable(tree, d.entries)
        d.counts["codex/entries_undecodable"] = len(d.issues)
        return d.finish()


def _said(r: Rollout) -> list[tuple[JSON, ...]]:
    return [(x.ts, x.type, x.payload, x.metadata) for x in r.lines]


def _without_copies(read: list[Rollout]) -> list[Rollout]:
    kept: dict[tuple[str, int, str], list[Rollout]] = {}  # files compared only on this match
    for r in read:
        same = kept.setdefault((r.thread, len(r.lines), r.ts), [])
        original = next((o for o in same if _said(o) == _said(r)), None)
        if original is None:
            same.append(r)
            continue
        original.issues.append(Issue(
            "duplicate_session", None, f"{Path(r.path).name} repeats this file line for line "
            "(a copy); the copy is not exported", original.path,
        ))  # fmt: skip
    return [r for r in read if any(r is o for o in kept[(r.thread, len(r.lines), r.ts)])]


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
