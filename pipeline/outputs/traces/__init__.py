"""``export --traces``: one redacted trace per session under ``traces/``, for the Hub's viewer.

The Hub's trace viewer reads Claude Code, Codex and Pi session files as the agents write
them, and the Session Trace Simple Format from any other harness.  A session of those
three kinds is written in its agent's own shape (``native.py``: every file it was read
from, each line redacted, its branches kept); a session of any other kind, or of those
when the ``environment`` or ``no_passthrough`` rules run (they remove what only the
documents know the place of), as STS from its main ATIF document (``sts.py``).  Files:
``traces/<kind>/<name>.jsonl``, ``<name>`` the main document's (a joined fork's own
file: ``<name>~<n>.jsonl``).  The first line of each file carries ``trajset``: the
session id, the store kind, the shape and the redaction rule set's version.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.redactors import Placeholders, Redactor, count_placeholders
from trajset.schemas.session import Session

from ..files import atomic_path, inside
from .native import Dropped, encoded, native_lines
from .sts import sts_lines

JSON = Any
FOLDER = "traces"
#: store kind -> the harness the viewer knows its own files by
NATIVE = {"claude-code": "claude_code", "codex": "codex", "pi": "pi"}


@dataclass
class Written:
    """What writing one session's trace did: files, bytes, placeholders, lines left out."""

    files: list[str] = field(default_factory=list)
    native: bool = False
    bytes: int = 0
    placeholders: Counter[str] = field(default_factory=Counter)
    dropped_lines: int = 0


def native_files(session: Session, redactor: Redactor | None) -> list[Path]:
    """The files to copy in the agent's shape ([] when the trace is STS)."""
    if session.source_format not in NATIVE:
        return []
    if redactor is not None and (redactor.environment or redactor.no_passthrough):
        return []
    files = [Path(f) for f in (session.files or (session.source,)) if f]
    return files if files and all(f.is_file() for f in files) else []


def write_trace(
    out: Path,
    session: Session,
    doc: dict[str, JSON],
    name: str,
    redactor: Redactor | None,
    placeholders: Placeholders | None,
    version: str,
) -> Written:
    """The session's trace file(s) under ``out/traces/<kind>/``, named after ``name`` (the
    main document's file name); ``redactor`` None writes the values as they are."""
    folder = out / FOLDER / session.source_format
    stem = name.removesuffix(".json")
    files = native_files(session, redactor)
    stamp = {
        "session_id": session.id, "source_format": session.source_format,
        "shape": "native" if files else "sts", "redaction_version": version,
    }  # fmt: skip
    written = Written(native=bool(files))
    if not files:
        lines = (encoded(v) for v in sts_lines(doc, session.source_format, session.name(), stamp))
        _write(folder / f"{stem}.jsonl", lines, out, written)
        return written
    found = placeholders if placeholders is not None else Placeholders()
    dropped = Dropped()
    for k, path in enumerate(files):
        target = folder / (f"{stem}.jsonl" if k == 0 else f"{stem}~{k}.jsonl")
        _write(target, native_lines(path, redactor, found, stamp, dropped), out, written)
    written.dropped_lines = dropped.lines
    return written


def _write(target: Path, lines: Iterable[bytes], out: Path, written: Written) -> None:
    with atomic_path(inside(out / FOLDER, target)) as tmp, open(tmp, "wb") as fh:
        for line in lines:
            fh.write(line)
            written.bytes += len(line)
            written.placeholders.update(count_placeholders(line))
    written.files.append(target.relative_to(out).as_posix())
