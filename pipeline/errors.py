"""The trajset exception hierarchy.

::

    TrajsetError                  everything trajset raises on purpose
    ├── AbortRun                  stop the whole run (exit 1 or 2)
    │   ├── UsageError            bad option or configuration (exit 2)
    │   ├── OutputError           the output folder cannot be used as asked
    │   └── InvariantBroken       the run's counts do not add up (a bug: exit 1)
    ├── UnitFailed                this work unit is lost; the run goes on
    │   ├── SessionReadError      a session file that does not read (bad header,
    │   │                         corrupt line, duplicate id, unknown parent)
    │   └── UnitSkipped           a unit that holds no sessions by design (counted,
    │                             not an error row)
    └── BadRecord                 one record is lost; the rest of the unit goes on
        ├── ContextError          a leaf whose context cannot be built
        └── DocumentInvalid       an ATIF document that fails validation

Every error names what failed, where (file, line, session, entry) and how to
fix it when there is something to say.  A full disk (``disk_full``) is no error of
trajset's: it stops the run wherever it happens and the command names the resume.
"""

from __future__ import annotations

import errno

#: what a write gets from a disk with no room: no space, a quota, a file too large
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or a quota) is full: an ``OSError`` of ``_FULL``, or
    SQLite's "database or disk is full"; such an error stops the run, never a session."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL or "[errno 28]" in str(exc).lower()
    return "disk is full" in str(exc) and type(exc).__name__ == "OperationalError"


class TrajsetError(Exception):
    """Base class of every error trajset raises on purpose."""

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        source: str = "",
        line: int | None = None,
        session_id: str = "",
        entry_id: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.line = line
        self.session_id = session_id
        self.entry_id = entry_id

    def __str__(self) -> str:
        where = self.source
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        parts = [
            p
            for p in (
                where,
                self.session_id and f"session {self.session_id}",
                self.entry_id and f"entry {self.entry_id}",
            )
            if p
        ]
        return f"{', '.join(parts)}: {self.message}" if parts else self.message


class AbortRun(TrajsetError):
    kind = "abort"


class UsageError(AbortRun):
    kind = "usage"


class OutputError(AbortRun):
    kind = "output"


class InvariantBroken(AbortRun):
    """What the run counted does not add up (``Ledger.check``): never silent."""

    kind = "internal"


class UnitFailed(TrajsetError):
    kind = "unit"


class SessionReadError(UnitFailed):
    """A session file that cannot be read; ``rule`` names the broken rule."""

    kind = "read"

    def __init__(
        self,
        message: str,
        *,
        rule: str,
        source: str = "",
        line: int | None = None,
        session_id: str = "",
        entry_id: str = "",
    ) -> None:
        super().__init__(
            message, source=source, line=line, session_id=session_id, entry_id=entry_id
        )
        self.rule = rule


class UnitSkipped(UnitFailed):
    """Not a failure: the unit holds no sessions by design; ``reason`` is counted."""

    kind = "skipped"

    def __init__(self, message: str, *, reason: str, source: str = "") -> None:
        super().__init__(message, source=source)
        self.reason = reason


class BadRecord(TrajsetError):
    kind = "record"


class ContextError(BadRecord):
    kind = "context"


class DocumentInvalid(BadRecord):
    kind = "invalid_document"
