"""The reader template: a store kind converted into the Agent Session Format model.

A converting reader fills in three steps (``ConvertingReader``) and builds each
session through a ``SessionDraft``; the template's ``load`` does the rest.
CONTRIBUTING's "Adding a reader" walks through one (``tests/toy_reader.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Generic, TypeVar

from trajset.schemas.session import Session

from ..errors import SessionReadError
from .base import Loaded, Reader, Unit
from .draft import SessionDraft

#: what a converting reader reads of one file, and what it joins those into
Read = TypeVar("Read")
Tree = TypeVar("Tree")


class ConvertingReader(Reader, Generic[Read, Tree]):
    """The reader template: a store kind converted into the Agent Session Format model.

    A converting reader implements three steps, and ``load`` does the rest:

    * ``read(path, unit, earlier)``: one of the unit's files (``files``), knowing what its
      earlier files gave; ``SessionReadError`` when it cannot be read;
    * ``join(read, unit)``: what the files gave, joined into trees (a store's forks,
      resumes and subagents), in a stable order; an error in place of a tree that cannot be
      joined;
    * ``convert(tree, unit)``: one tree through a ``SessionDraft``, which ``load`` finishes
      (a reader that must finish it itself returns the ``Session``).

    Each file that does not read and each tree that does not convert is an error in its
    place; the others go on.
    """

    def files(self, unit: Unit) -> tuple[str, ...]:
        """The paths ``read`` is given, in order: the unit's files."""
        return unit.files

    def read(self, path: Path, unit: Unit, earlier: list[Read]) -> Read:
        raise NotImplementedError

    def join(self, read: list[Read], unit: Unit) -> Iterable[Tree | SessionReadError]:
        raise NotImplementedError

    def convert(self, tree: Tree, unit: Unit) -> SessionDraft | Session:
        raise NotImplementedError

    def load(self, unit: Unit) -> Loaded:
        out: Loaded = []
        read: list[Read] = []
        for f in self.files(unit):
            try:
                read.append(self.read(Path(f), unit, read))
            except SessionReadError as exc:
                out.append(exc)
            except Exception as exc:  # a file no one planned for: its row, not the unit's
                out.append(_unplanned(exc, f))
        for tree in self.join(read, unit):
            if isinstance(tree, SessionReadError):
                out.append(tree)
                continue
            try:
                made = self.convert(tree, unit)
                out.append(made.finish() if isinstance(made, SessionDraft) else made)
            except SessionReadError as exc:
                out.append(exc)
            except Exception as exc:  # one tree's, never the other sessions of the unit
                out.append(_unplanned(exc, str(getattr(tree, "path", "") or unit.label)))
        return out


def _unplanned(exc: Exception, source: str) -> SessionReadError:
    """An error no check foresaw while reading one file or converting one tree: that
    session's row (``internal``), naming the error; the unit's other sessions are read."""
    return SessionReadError(
        f"{type(exc).__name__}: {exc} (not expected; please report it with the input); the "
        "unit's other sessions were read", rule="internal", source=source,
    )  # fmt: skip
