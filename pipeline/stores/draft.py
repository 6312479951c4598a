"""A converted session as it is built: the one place a converting reader writes the model.

A reader that converts a store into the Agent Session Format (DESIGN §2) fills a
``SessionDraft`` while it walks one tree, then ``finish`` validates it into a
``Session``.  The draft holds what every converter needs and used to write by
hand: the header's fixed members (format, payload, harness), entries with a
timestamp policy (``stamp`` keeps the last valid time; an entry without one takes
it), the reserved ``leaf`` label the ``current`` policy follows, extension members,
the session's problems and counts, and the identities the converter met.

Nothing travels beside it: a value out of a column's range that the converter
meets (``numbers``) is noted on the draft of the session it belongs to, never on
whichever session happens to finish next.  The identities a converter ``meet``s are
kept on the session (``Session.met``), so the reader contract test can hold them
against what ``Reader.identities`` read cheaply before the run: a value the cheap
pass missed would reach the outputs unnumbered.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from trajset.schemas.session import Entry, Issue, Session, validate_header
from trajset.schemas.timestamps import RFC3339_RE

from ..errors import SessionReadError
from . import numbers

JSON = Any
FORMAT = "agentsession/0.2"
#: the Open Responses version every converter writes its items in
PAYLOAD = "openresponses/2026-04-24"
#: the time of an entry no record dates, before any record did
EPOCH = "1970-01-01T00:00:00Z"


class SessionDraft:
    """One session being converted (see the module docstring).

    ``sid`` is its id, ``source`` the file its errors name, ``source_format`` the store
    kind, ``harness`` the agent's name (and ``version`` when the store says); ``ts`` the
    time entries take until a record is ``stamp``ed.  ``created_at`` is the header's,
    else the first entry's time.  ``members`` are the header's other members, in the
    order set (``cwd``, ``parent_session``, ``<kind>:...`` extensions).
    """

    def __init__(
        self,
        sid: str,
        source: str,
        source_format: str,
        harness: str,
        version: str = "",
        *,
        ts: str = EPOCH,
    ) -> None:
        self.id = sid
        self.source = source
        self.source_format = source_format
        self.harness: dict[str, str] = {
            "name": harness,
            **({"version": version} if version else {}),
        }
        self.created_at = ""
        self.members: dict[str, JSON] = {}
        self.entries: list[dict[str, JSON]] = []
        self.counts: Counter[str] = Counter()
        self.issues: list[Issue] = []
        #: values out of a column's range met while converting (``numbers``), with their place
        self.notes: list[Issue] = []
        #: (kind, value) of each identity met while converting, in order
        self.met: list[tuple[str, str]] = []
        self.ts = ts
        #: the store's files the session was read from, its own first: ``source`` alone
        #: unless the reader joined several (a fork's copy), as ``--traces`` copies them
        self.files: tuple[str, ...] = (source,)
        self._bad_times: set[str] = set()

    # ------------------------------------------------------------------ entries

    def stamp(self, ts: JSON) -> str:
        """The time entries take from now on: ``ts`` when it is an RFC 3339 time, else the
        last one stamped."""
        if self.is_time(ts):
            self.ts = ts
        return self.ts

    def is_time(self, ts: JSON, line: int | None = None, source: str = "") -> bool:
        """Whether ``ts`` is an RFC 3339 time; a value that is none (not a missing one) is an
        issue, once per value (at ``line`` of ``source``, when the reader knows them)."""
        if isinstance(ts, str) and RFC3339_RE.match(ts):
            return True
        if ts not in (None, "") and repr(ts) not in self._bad_times:
            self._bad_times.add(repr(ts))
            self.issues.append(Issue("bad_field", line, f"time {str(ts)[:40]!r} is no RFC 3339 "
                                     "time; the time before it is used", source))  # fmt: skip
        return False

    def add(
        self, entry_type: str, eid: str, parent: str | None, ts: JSON = None, /, **body: JSON
    ) -> str:
        """Append an entry ``{type, id, parent, ts, **body}`` and return its id.  ``ts`` is the
        record's time, ``stamp``ed: a missing or invalid one gives the time before it."""
        raw = {"type": entry_type, "id": eid, "parent": parent, "ts": self.stamp(ts)}
        raw.update(body)
        self.entries.append(raw)
        return eid

    def append(self, entry_type: str, ts: JSON = None, /, **body: JSON) -> str:
        """``add`` an entry below the last one (a linear log), its id ``<session>-NNNN``."""
        parent = self.entries[-1]["id"] if self.entries else None
        return self.add(entry_type, f"{self.id}-{len(self.entries) + 1:04d}", parent, ts, **body)

    @property
    def last(self) -> dict[str, JSON]:
        """The last entry added; ``IndexError`` when there is none."""
        return self.entries[-1]

    def label_leaf(self, target: str, eid: str = "", *, unless_last: bool = True) -> None:
        """The reserved ``leaf`` label on ``target``, the entry the store calls its current
        leaf, as a child of the last entry (id ``eid``, else ``<last>:leaf``).  Nothing
        when ``target`` is empty, or (``unless_last``) already the last entry, where the
        ``current`` policy finds it without a label."""
        if not target or not self.entries:
            return
        last = self.entries[-1]
        if unless_last and target == last["id"]:
            return
        self.add(
            "label", eid or f"{last['id']}:leaf", last["id"], last["ts"], target=target,
            label="leaf",
        )  # fmt: skip

    # ------------------------------------------------------------------ beside the entries

    def meet(self, kind: str, value: JSON) -> None:
        """Note an identity (``trajset.redactors.identities.KINDS``) the converter read, as the
        store has it; a value that is no non-empty string is none."""
        if isinstance(value, str) and value.strip() and (kind, value) not in self.met:
            self.met.append((kind, value))

    def note(
        self,
        value: JSON,
        field: str,
        line: int | None,
        holds: str,
        instead: str = "written as null",
        source: str = "",
    ) -> None:
        """``field`` (at ``line`` of ``source``, else of the draft's source) holds ``value``,
        which no column that holds ``holds`` can (``numbers.note``)."""
        numbers.note(self.notes, value, field, source or self.source, line, holds, instead)

    # ------------------------------------------------------------------ the session

    def header(self) -> dict[str, JSON]:
        """The header as written: the fixed members, then ``members`` in their order."""
        created = self.created_at or (self.entries[0]["ts"] if self.entries else self.ts)
        return {
            "type": "session",
            "format": FORMAT,
            "id": self.id,
            "created_at": created,
            "payload": PAYLOAD,
            "harness": self.harness,
            **self.members,
        }

    def finish(self) -> Session:
        """The validated session: entries numbered as the lines of its Agent Session Format
        text, the notes added to its issues and counted (``numbers.COUNT``).  A converter
        that produced something invalid is a ``conversion`` error of this session."""
        header = self.header()
        entries = []
        for at, raw in enumerate(self._as_tree()):
            try:
                entries.append(Entry.of(raw, at + 2, at))
            except ValueError as exc:
                raise self._invalid(f"entry {raw.get('id')!r}", exc) from None
        try:
            checked = validate_header(header)
        except ValueError as exc:
            raise self._invalid("header", exc) from None
        counts = dict(self.counts)
        if self.notes:
            counts[numbers.COUNT] = counts.get(numbers.COUNT, 0) + len(self.notes)
        return Session(
            checked,
            header,
            entries,
            self.source,
            source_format=self.source_format,
            issues=[*self.issues, *self.notes],
            counts=counts,
            met=list(self.met),
            files=self.files,
        )

    def _as_tree(self) -> list[dict[str, Any]]:
        """The entries as a tree, in one pass: a repeated id's later entries are left out (a
        store that repeats a record: an OpenCode ``part`` table without its key once made a
        run take minutes and gigabytes), and an entry whose parent is no earlier entry (a
        missing record, or a cycle of them) starts a tree of its own; each is an issue."""
        seen: set[str] = set()
        out = []
        for raw in self.entries:
            eid, parent = raw.get("id"), raw.get("parent")
            if eid in seen:
                self.issues.append(Issue("duplicate_entry", None, f"entry {eid!r} appears "
                                         "again; the later copy is left out"))  # fmt: skip
                continue
            if parent and parent not in seen:
                self.issues.append(Issue("broken_link", None, f"entry {eid!r}: its parent "
                                         f"{parent!r} is no earlier entry (missing, or a "
                                         "cycle); it starts a tree of its own"))  # fmt: skip
                raw = {**raw, "parent": None}
            seen.add(str(eid))
            out.append(raw)
        return out

    def _invalid(self, where: str, exc: ValueError) -> SessionReadError:
        return SessionReadError(
            f"converted session does not validate ({where}): {exc}",
            rule="conversion",
            source=self.source,
            session_id=self.id,
        )
