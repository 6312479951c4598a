"""Agent Session Format files (spec §3, §8.1): a ``.jsonl`` file, or a folder of them at any depth.

Reading follows the reference exactly: only the final line may be truncated,
a bad line anywhere else fails the file with a ``SessionReadError`` naming
file, line and rule.  A folder covers the jsonl store layout
``<root>/<project-key>/<stamp>_<id>.jsonl``; each file is one unit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, header_identities
from trajset.schemas.entries import EntryUnion
from trajset.schemas.session import Entry, Header, Issue, Session, Truncation, validate_header
from trajset.schemas.timestamps import parse_rfc3339

from ..errors import SessionReadError
from ..jsonio import SURROGATE_MESSAGE, loads_checked, loads_strict
from .base import (
    Fixture,
    Loaded,
    Location,
    Match,
    Reader,
    ReaderOption,
    Unit,
    UnitOptions,
    input_lines,
)
from .regular import open_input, read_bytes

JSON = Any


class AgentSessionReader(Reader):
    """``agentsession``: one session file, or every ``*.jsonl`` below a folder (the fallback kind)."""

    kind = "agentsession"
    match = Match.ANY
    fixtures = (Fixture("build:sample"), Fixture("build:sessions"))
    locations = (Location("~/.agent/sessions"),)
    identity_fields = (
        ("workdir", "the header's cwd"),
        ("user", "einox:owner"),
        ("repo", "codex:meta git.repository_url"),
        ("branch", "codex:meta git.branch"),
        ("workdir", "gemini:directories"),
    )
    options = (
        ReaderOption(
            "follow_symlinks", bool, False, "read links to session files outside the store"
        ),
    )

    def detect(self, path: Path) -> bool:
        return path.is_file() or path.is_dir()

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        """Every ``*.jsonl`` path, whatever it is (a dangling link, a FIFO or a folder so named
        becomes an error row when read, never a silent skip).  A link out of the store is
        left out by discovery (``regular.Boundary``) unless ``follow_symlinks``."""
        files = [path] if not path.is_dir() else sorted(path.rglob("*.jsonl"))
        return [self.unit((str(p),)) for p in files]

    def load(self, unit: Unit) -> Loaded:
        return [read_session(unit.files[0])]

    def session_ids(self, unit: Unit) -> list[str]:
        sid = _first_line(Path(unit.files[0])).get("id")
        return [sid] if isinstance(sid, str) and sid else []

    def identities(self, unit: Unit) -> list[Identity]:
        return header_identities(_first_line(Path(unit.files[0])))


def _first_line(path: Path) -> dict[str, JSON]:
    """The header from the first non-empty line, or {} when it does not read."""
    if not path.is_file():
        return {}
    try:
        with open_input(path) as fh:
            for line in fh:
                if line.strip():
                    head = loads_strict(line.decode("utf-8"))
                    return head if isinstance(head, dict) else {}
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return {}


def _numbered(pieces: Iterable[str]) -> Iterator[tuple[int, str, bool]]:
    """The non-empty lines among ``pieces`` (a text split at each LF), with their numbers and
    whether each is the final line: one no byte follows but its own LF; only it may be cut
    short (spec §3.1).  CR before LF is dropped; empty lines are skipped.  One line is held
    back to tell, so a file is never held whole."""
    held: tuple[int, str] | None = None
    after: list[str] = []  # the pieces after the held line
    for number, piece in enumerate(pieces, 1):
        line = piece.rstrip("\r")
        if not line:
            after.append(piece)
            continue
        if held is not None:
            yield (*held, False)
        held, after = (number, line), []
    if held is not None:
        yield (*held, after in ([], [""]))


def _pieces(source: Path, lines: Iterable[bytes]) -> Iterator[str]:
    """A file's lines (``input_lines``) decoded, without their LF; ``SessionReadError``
    (rule ``encoding``) at the first that is not UTF-8, unless a crashed writer cut the
    final line inside a character (that line is then cut short: a U+FFFD ends it)."""
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if raw.endswith(b"\n") or len(raw) - exc.start >= 4:
                raise SessionReadError(
                    "file is not UTF-8", rule="encoding", source=str(source), line=number
                ) from None
            text = raw.decode("utf-8", errors="replace")
        yield text.removesuffix("\n")


#: what the first line of a session file looks like, for the messages of one that is not
SHAPE = (
    'an Agent Session Format file starts with a header line {"type": "session", "format": '
    '"agentsession/0.2", "id": ..., "created_at": ..., "payload": ...}'
)


def _header(line: str, lineno: int, source: str) -> tuple[Header, dict[str, JSON], bool]:
    """The header, its JSON, and whether a lone surrogate in it became U+FFFD."""
    raw: JSON = None
    try:
        raw, fixed = loads_checked(line)
        return validate_header(raw), raw, fixed
    except ValueError as exc:
        rule = "unsupported_format" if "format" in str(exc) else "bad_header"
        why = f"{exc}; {SHAPE}" if rule == "bad_header" else str(exc)
        if rule == "bad_header" and isinstance(raw, dict) and "type" not in raw:
            why = f"line {lineno} is not a session header ({exc}); {SHAPE}; is this a session file?"
        raise SessionReadError(why, rule=rule, source=source, line=lineno) from None


def _check_tree(body: EntryUnion, seen: set[str], lineno: int, source: str) -> None:
    if body.id in seen:
        raise SessionReadError(
            f"duplicate entry id {body.id!r}",
            rule="duplicate_id", source=source, line=lineno, entry_id=body.id,
        )  # fmt: skip
    if body.parent and body.parent not in seen:
        raise SessionReadError(
            f"no such entry: parent {body.parent!r} has not appeared on an earlier line",
            rule="unknown_parent", source=source, line=lineno, entry_id=body.id,
        )  # fmt: skip


def read_session_text(text: str, source: str = "") -> Session:
    """Read one session from its JSONL text (spec §3.1)."""
    return _session(_numbered(text.split("\n")), source)


def _session(lines: Iterator[tuple[int, str, bool]], source: str) -> Session:
    first = next(lines, None)
    if first is None:
        raise SessionReadError("the file holds no header line", rule="empty", source=source, line=1)
    header, header_raw, fixed = _header(first[1], first[0], source)
    entries: list[Entry] = []
    seen: set[str] = set()
    truncation: Truncation | None = None
    issues = [Issue("bad_character", first[0], SURROGATE_MESSAGE.format("the header"))] * fixed
    for lineno, line, final in lines:
        try:
            raw, fixed = loads_checked(line)
            if fixed:
                issues.append(Issue("bad_character", lineno, SURROGATE_MESSAGE.format("this line")))
            entry = Entry.of(raw, lineno, len(entries))
        except ValueError as exc:
            reason = _decode_reason(exc)
            if final:
                truncation = Truncation(lineno, line, reason)
                break
            raise SessionReadError(
                f"line does not decode ({reason}); only a file's final line may be cut short",
                rule="bad_line", source=source, line=lineno,
            ) from None  # fmt: skip
        _check_tree(entry.body, seen, lineno, source)
        seen.add(entry.id)
        entries.append(entry)
    return Session(header, header_raw, entries, source=source, truncation=truncation, issues=issues)


def _decode_reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg}, column {exc.colno})"
    return str(exc)


def read_session(path: str | Path) -> Session:
    """Read one ``.jsonl`` session file, a line at a time: its text is never held whole, so
    a session takes the memory of its entries alone."""
    p = Path(path)
    pieces = _pieces(p, input_lines(p))
    try:
        session = _session(_numbered(pieces), str(p))
    finally:  # read to the end: its fingerprint is noted, and a line further on that is
        for _ in pieces:  # not UTF-8 fails the file before any error of an earlier line
            pass
    holder = writer_lock(p)
    if holder is not None:
        session.counts["live"] = 1
        if session.truncation is not None:
            session.truncation.reason += (
                f"; {holder} holds the writer lock: the tail is in progress"
            )
    return session


def writer_lock(path: Path) -> str | None:
    """Who holds ``<session file>.lock`` (spec §8.1), or None when nobody does.

    A reader only looks: it never takes, removes or waits for the lock, so an
    export of a live store reads the complete lines written so far.
    """
    lock = path.with_name(path.name + ".lock")
    try:
        holder = json.loads(read_bytes(lock)[:4096])
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return f"{lock.name} (unreadable)"
    if not isinstance(holder, dict):
        return lock.name
    who = " ".join(f"{k} {holder[k]}" for k in ("pid", "host", "since") if k in holder)
    return f"{lock.name} ({who})" if who else lock.name


# --------------------------------------------------------------------------- writing


def session_text(header: dict[str, JSON], entries: list[dict[str, JSON]]) -> str:
    """A session as JSONL text: the header line, then one line per entry (compact, UTF-8)."""
    return "".join(
        json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in (header, *entries)
    )


def store_path(root: Path, header: dict[str, JSON]) -> Path:
    """Where the jsonl store layout keeps a session (spec §8.1):
    ``<root>/<project-key>/<stamp>_<session-id>.jsonl``."""
    cwd = str(header.get("cwd") or "")
    key = cwd.lstrip("/").replace("/", "-").replace("\\", "-").replace(":", "-") or "default"
    created = parse_rfc3339(str(header["created_at"])).astimezone(UTC)
    stamp = created.strftime("%Y-%m-%dT%H-%M-%S.") + f"{created.microsecond // 1000:03d}Z"
    return root / key / f"{stamp}_{header['id']}.jsonl"


def write_session(root: Path, session: Session) -> Path:
    """Write ``session`` into the jsonl store at ``root``; returns the file's path."""
    path = store_path(root, session.header_raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        session_text(session.header_raw, [e.raw for e in session.entries]), encoding="utf-8"
    )
    return path


def sessions_beside(store: Path, read: set[str]) -> list[Path]:
    """The Agent Session Format files below a folder store of another kind that its reader
    does not read: a folder mixing kinds exports each file by its own kind (two such files
    beside a stray Claude Code file were once only listed as skipped)."""
    unread = (p for p in sorted(store.rglob("*.jsonl")) if os.path.abspath(p) not in read)
    return [p for p in unread if _is_header(_first_line(p))]


def _is_header(head: dict[str, JSON]) -> bool:
    return head.get("type") == "session" and str(head.get("format", "")).startswith("agentsession/")
