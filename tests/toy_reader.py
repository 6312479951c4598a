"""A reader of a trivial format, written through the public seam only (``trajset.pipeline.stores``).

One JSON file per session, ``<id>.toy.json``::

    {"id": "...", "created_at": "2026-...Z", "messages": [{"role": "user", "content": "..."}, ...]}

It is the worked example of CONTRIBUTING's "Adding a reader": it declares its kind,
no default location and one typed option, and fills in the reader template
(``ConvertingReader``): ``read`` one file, ``join`` what the files gave into trees
(here each file is one), ``convert`` a tree through a ``SessionDraft``.  The template
does the rest; the reader contract test (``test_reader_contract.py``) runs it like the
others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.pipeline.errors import SessionReadError
from trajset.pipeline.stores import (
    ConvertingReader,
    Fixture,
    ReaderOption,
    SessionDraft,
    Unit,
    UnitOptions,
    read_input,
)

SUFFIX = ".toy.json"


@dataclass(frozen=True)
class Toy:
    """One toy session file, parsed."""

    path: Path
    doc: dict[str, Any]


class ToyReader(ConvertingReader[Toy, Toy]):
    """``toy``: a folder of ``*.toy.json`` files, a unit each."""

    kind = "toy"
    fixtures = (Fixture("build:toy"),)  # laid out by write_toy_store (tests/fixture_stores.py)
    options = (ReaderOption("system", str, "", "a system prompt to put before each session"),)

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.name.endswith(SUFFIX)
        return path.is_dir() and any(path.glob("*" + SUFFIX))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        files = [path] if path.is_file() else sorted(path.glob("*" + SUFFIX))
        return [self.unit((str(f),)) for f in files]

    def read(self, path: Path, unit: Unit, earlier: list[Toy]) -> Toy:
        try:
            doc = json.loads(read_input(path))
            if not isinstance(doc, dict) or not {"id", "created_at", "messages"} <= set(doc):
                raise TypeError("members missing")
        except (ValueError, TypeError) as exc:
            raise SessionReadError(
                f"not a toy session ({type(exc).__name__}: {exc}); a toy session is one JSON "
                'object {"id", "created_at", "messages"}', rule="bad_toy", source=str(path),
            ) from None  # fmt: skip
        return Toy(path, doc)

    def join(self, read: list[Toy], unit: Unit) -> list[Toy]:
        return read  # a toy file is one linear session

    def convert(self, tree: Toy, unit: Unit) -> SessionDraft:
        doc = tree.doc
        d = SessionDraft(str(doc["id"]), str(tree.path), "toy", "toy")
        d.stamp(doc["created_at"])
        messages = doc["messages"]
        system = str(self.option(unit, "system"))
        if system:
            messages = [{"role": "system", "content": system}, *messages]
        for n, m in enumerate(messages):
            kind = "output_text" if m["role"] == "assistant" else "input_text"
            item = {"type": "message", "role": m["role"], "content": [{"type": kind, "text": m["content"]}]}  # fmt: skip
            d.add("item", f"e{n:04d}", d.last["id"] if d.entries else None, item=item)
        return d

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
