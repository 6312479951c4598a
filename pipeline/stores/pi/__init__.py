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
from trajset.schemas.session import Session
from trajset.schemas.timestamps import RFC3339_RE

from ...errors import SessionReadError
from ..base import Loaded, Location, Reader, Unit, UnitOptions, converted_session
from .convert import ROOT, Converter
from .files import PiFile, is_session, project_dirs, read_pi
from .files import header as first_line
from .merge import Tree, trees

JSON = Any
PAYLOAD = "openresponses/2026-04-24"


class PiReader(Reader):
    """``pi``: the sessions folder (``~/.pi/agent/sessions``), one project folder, or one file."""

    kind = "pi"
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

    def load(self, unit: Unit) -> Loaded:
        out: Loaded = []
        files: list[PiFile] = []
        for f in unit.files:
            try:
                files.append(read_pi(Path(f)))
            except SessionReadError as exc:
                out.append(exc)
        for tree in trees(files):
            try:
                out.append(_session(tree, {Path(f.path).stem for f in files}))
            except SessionReadError as exc:
                out.append(exc)
        return out

    def session_ids(self, unit: Unit) -> list[str]:
        return [str(h["id"]) for f in unit.files if (h := first_line(Path(f))) is not None]

    def identities(self, unit: Unit) -> list[Identity]:
        heads = (first_line(Path(f)) for f in unit.files)
        return identities_of([("workdir", h.get("cwd")) for h in heads if h is not None])


def _first(entries: list[dict[str, JSON]], kind: str, key: str) -> JSON:
    return next((e.get(key) for e in entries if e.get("type") == kind and e.get(key)), None)


def _session(tree: Tree, stems: set[str]) -> Session:
    h = tree.root.header
    c = Converter(tree.entries)
    first_ts = next(
        (
            str(e["timestamp"])
            for e in tree.entries
            if RFC3339_RE.match(str(e.get("timestamp") or ""))
        ),
        "",
    )
    created = str(h.get("timestamp") or "")
    ts = first_ts or (created if RFC3339_RE.match(created) else "1970-01-01T00:00:00Z")
    model = _first(tree.entries, "model_change", "modelId") or h.get("modelId")
    level = _first(tree.entries, "thinking_level_change", "thinkingLevel") or h.get("thinkingLevel")
    root: dict[str, JSON] = {}
    if model:
        root["model"] = str(model)
    if level and level != "off":
        root["reasoning"] = {"effort": level}
    c.add(ROOT, None, "config", ts, **root)  # type: ignore[arg-type]
    for e in tree.entries:
        if not RFC3339_RE.match(str(e.get("timestamp") or "")):
            e = {**e, "timestamp": c.raws[-1]["ts"]}
        c.entry(e)
    header: dict[str, JSON] = {
        "type": "session", "format": "agentsession/0.2", "id": str(h["id"]),
        "created_at": created if RFC3339_RE.match(created) else ts,
        "payload": PAYLOAD, "harness": {"name": "pi"},
    }  # fmt: skip
    if isinstance(h.get("cwd"), str):
        header["cwd"] = h["cwd"]
    header["pi:version"] = tree.root.version
    header |= {f"pi:{k}": h[k] for k in ("provider", "modelId", "thinkingLevel") if k in h}
    src = h.get("parentSession") or h.get("branchedFrom")
    if isinstance(src, str) and src:
        header["pi:parent_session_path"] = src
        if tree.root.source not in stems:  # a fork whose source is not here stands alone
            source = tree.root.source.rsplit("_", 1)[-1]  # <ts>_<uuid>: the session id
            header["parent_session"] = source
            last = c.raws[-1]
            c.add(
                f"{last['id']}:fork_of",
                last["id"],
                "link",
                last["ts"],
                rel="fork_of",
                session=source,
            )
    header["pi:member_files"] = [Path(f.path).name for f in tree.files]
    counts = {f"pi/{k}": v for k, v in c.counts.items() if not k.startswith("entries_from/")}
    counts |= {
        "pi/files": len(tree.files),
        "pi/copied_entries": tree.copies,
        "pi/relinked": tree.relinked,
    }
    issues = [i for f in tree.files for i in f.issues] + tree.issues
    return converted_session(header, c.raws, tree.root.path, "pi", issues, counts)
