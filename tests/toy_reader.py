"""A reader of a trivial format, written through the public seam only (``trajset.pipeline.stores``).

One JSON file per session, ``<id>.toy.json``::

    {"id": "...", "created_at": "2026-...Z", "messages": [{"role": "user", "content": "..."}, ...]}

It declares its kind, no default location and one typed option, and converts a
file into the Agent Session Format model with ``converted_session``; the
reader contract test (``test_reader_contract.py``) runs it like the others.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajset.pipeline.errors import SessionReadError
from trajset.pipeline.stores import (
    Loaded,
    Reader,
    ReaderOption,
    Unit,
    UnitOptions,
    converted_session,
    read_input,
)

SUFFIX = ".toy.json"


class ToyReader(Reader):
    """``toy``: a folder of ``*.toy.json`` files, a unit each."""

    kind = "toy"
    options = (ReaderOption("system", str, "", "a system prompt to put before each session"),)

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.name.endswith(SUFFIX)
        return path.is_dir() and any(path.glob("*" + SUFFIX))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        files = [path] if path.is_file() else sorted(path.glob("*" + SUFFIX))
        return [self.unit((str(f),)) for f in files]

    def load(self, unit: Unit) -> Loaded:
        path = Path(unit.files[0])
        data = read_input(path)
        try:
            doc = json.loads(data)
            sid, created, messages = doc["id"], doc["created_at"], doc["messages"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SessionReadError(
                f"not a toy session ({type(exc).__name__}: {exc}); a toy session is one JSON "
                'object {"id", "created_at", "messages"}', rule="bad_toy", source=str(path),
            ) from None  # fmt: skip
        header: dict[str, Any] = {
            "type": "session",
            "format": "agentsession/0.2",
            "id": sid,
            "created_at": created,
            "payload": "openresponses/2026-04-24",
        }
        raws: list[dict[str, Any]] = []
        system = str(self.option(unit, "system"))
        if system:
            messages = [{"role": "system", "content": system}, *messages]
        for n, m in enumerate(messages):
            kind = "output_text" if m["role"] == "assistant" else "input_text"
            raws.append(
                {
                    "type": "item",
                    "id": f"e{n:04d}",
                    "parent": raws[-1]["id"] if raws else None,
                    "ts": created,
                    "item": {
                        "type": "message",
                        "role": m["role"],
                        "content": [{"type": kind, "text": m["content"]}],
                    },
                }
            )
        return [converted_session(header, raws, str(path), "toy", [], {})]

    def session_ids(self, unit: Unit) -> list[str]:
        try:
            return [str(json.loads(Path(unit.files[0]).read_bytes())["id"])]
        except (OSError, ValueError, KeyError, TypeError):
            return []


def write_toy_store(folder: Path, n: int) -> None:
    """``n`` toy sessions of two turns each in ``folder``."""
    folder.mkdir(parents=True)
    for i in range(n):
        sid = f"0199a1b2-0000-7000-8000-{i:012d}"
        doc = {
            "id": sid,
            "created_at": "2026-11-01T10:00:00Z",
            "messages": [
                {"role": "user", "content": f"question {i}: what is {i} + {i}?"},
                {"role": "assistant", "content": f"{2 * i}, of course."},
                {"role": "user", "content": "and times two?"},
                {"role": "assistant", "content": f"{4 * i}."},
            ],
        }
        (folder / f"{sid}{SUFFIX}").write_text(json.dumps(doc, indent=1), encoding="utf-8")
