"""Pi coding agent sessions (specs/pi.md): ``~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl``.

A unit is one project folder, since a ``/fork`` file names its source there.
Files are read as version 3 has them (``files.py``: v1 and v2 migrated in
memory, never rewritten), a fork merged into its source's tree (``merge.py``)
and the entries converted (``convert.py``).  The current leaf is the last
merged entry.  A fork whose source is not in the unit stands alone, with a
``fork_of`` link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Issue
from trajset.schemas.timestamps import RFC3339_RE

from ..base import Fixture, Location, Unit, UnitOptions
from ..draft import EPOCH, SessionDraft
from ..jsonl import json_kind
from ..template import ConvertingReader
from .convert import ROOT, Converter
from .files import PiFile, is_session, project_dirs, read_pi
from .files import header as first_line
from .merge import Tree, trees

JSON = Any


class PiReader(ConvertingReader[PiFile, tuple[Tree, set[str]]]):
    """``pi``: the sessions folder (``~/.pi/agent/sessions``), one project folder, or one file."""

    kind = "pi"
    fixtures = (
        Fixture("upstream/pi/pi-session-inspector"),
        Fixture("upstream/pi/real/teich"),
        Fixture("upstream/pi/synthetic/sessions", cut=False),  # a cut source changes its fork
    )
    locations = (Location("~/.pi/agent", env="PI_CODING_AGENT_DIR", below="sessions"),)
    identity_fields = (("workdir", "the session header's cwd"),)

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return is_session(path)
        return path.is_dir() and bool(project_dirs(path))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        if path.is_file():
            return [self.unit((str(path),), name=str(path))]
        return [
            self.unit(tuple(str(f) for f in sorted(p.glob("*.jsonl"))), name=str(p))
            for p in project_dirs(path)
        ]

    def read(self, path: Path, unit: Unit, earlier: list[PiFile]) -> PiFile:
        return read_pi(path)

    def join(self, read: list[PiFile], unit: Unit) -> list[tuple[Tree, set[str]]]:
        """Forks merged into their source's tree; with the stems of the files read."""
        stems = {Path(f.path).stem for f in read}
        return [(tree, stems) for tree in trees(read)]

    def convert(self, tree: tuple[Tree, set[str]], unit: Unit) -> SessionDraft:
        return _session(*tree)

    def session_ids(self, unit: Unit) -> list[str]:
        return [str(h["id"]) for f in unit.files if (h := first_line(Path(f))) is not None]

    def identities(self, unit: Unit) -> list[Identity]:
        heads = (first_line(Path(f)) for f in unit.files)
        return identities_of([("workdir", h.get("cwd")) for h in heads if h is not None])


def _first(entries: list[dict[str, JSON]], kind: str, key: str) -> JSON:
    return next((e.get(key) for e in entries if e.get("type") == kind and e.get(key)), None)


def _session(tree: Tree, stems: set[str]) -> SessionDraft:
    h = tree.root.header
    d = SessionDraft(str(h["id"]), tree.root.path, "pi", "pi")
    d.files = tuple(str(f.path) for f in tree.files)
    c = Converter(tree.entries, d)
    first_ts = next(
        (
            str(e["timestamp"])
            for e in tree.entries
            if RFC3339_RE.match(str(e.get("timestamp") or ""))
        ),
        "",
    )
    created = str(h.get("timestamp") or "")
    ts = first_ts or (created if RFC3339_RE.match(created) else EPOCH)
    model = _first(tree.entries, "model_change", "modelId") or h.get("modelId")
    level = _first(tree.entries, "thinking_level_change", "thinkingLevel") or h.get("thinkingLevel")
    root: dict[str, JSON] = {}
    if model:
        root["model"] = str(model)
    if level and level != "off":
        root["reasoning"] = {"effort": level}
    d.add("config", ROOT, None, ts, **root)
    for e in tree.entries:
        if not d.is_time(e.get("timestamp"), e["pi:at"][1], e["pi:at"][0]):
            e = {**e, "timestamp": d.last["ts"]}
        c.entry(e)
    d.created_at = created if RFC3339_RE.match(created) else ts
    if isinstance(h.get("cwd"), str):
        d.members["cwd"] = h["cwd"]
        d.meet("workdir", h["cwd"])
    elif h.get("cwd") is not None:
        d.issues.append(Issue("bad_field", 1, f"the header's cwd is {json_kind(h['cwd'])}, not "
                              "a folder; left out", tree.root.path))  # fmt: skip
    d.members["pi:version"] = tree.root.version
    d.members |= {f"pi:{k}": h[k] for k in ("provider", "modelId", "thinkingLevel") if k in h}
    src = h.get("parentSession") or h.get("branchedFrom")
    if isinstance(src, str) and src:
        d.members["pi:parent_session_path"] = src
        if tree.root.source not in stems:  # a fork whose source is not here stands alone
            source = tree.root.source.rsplit("_", 1)[-1]  # <ts>_<uuid>: the session id
            d.members["parent_session"] = source
            last = d.last
            d.add("link", f"{last['id']}:fork_of", last["id"], last["ts"], rel="fork_of",
                  session=source)  # fmt: skip
    d.members["pi:member_files"] = [Path(f.path).name for f in tree.files]
    d.counts.update(
        {f"pi/{k}": v for k, v in c.counts.items() if not k.startswith("entries_from/")}
    )
    d.counts.update({
        "pi/files": len(tree.files),
        "pi/copied_entries": tree.copies,
        "pi/relinked": tree.relinked,
    })  # fmt: skip
    d.issues = [*(i for f in tree.files for i in f.issues), *tree.issues, *d.issues]
    return d
