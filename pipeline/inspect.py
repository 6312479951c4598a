"""What ``trajset inspect`` and ``trajset verify`` report about a store, and ``read_store``,
its sessions read in the calling process.

``inspect_store`` describes each session (entries, roots, forks with their
children, leaves, compactions, truncation, problems); ``verify_store``
rebuilds every recorded request hash and checks the record rules (spec
§4.5, §6.3) the way the reference ``agentsession verify`` does.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.entries import CompactionEntry
from trajset.schemas.session import Issue, Session

from .errors import ContextError, UnitFailed, UnitSkipped
from .stores import Unit, discover, load_unit
from .tree.context import build_context, verify_response
from .tree.lifecycle import verify_records

JSON = Any


def read_store(
    store: Path, kind: str = "auto", errors: list[UnitFailed] | None = None
) -> list[Session]:
    """Every session of a store that reads, in the calling process (for notebooks and tests).
    Each one that does not is put in ``errors``; without that list, a warning says how many
    (``trajset inspect`` names them)."""
    out: list[Session] = []
    failed: list[UnitFailed] = []
    for unit in discover([store], kind):
        try:
            loaded = load_unit(unit)
        except UnitFailed as exc:
            loaded = [exc]
        out.extend(s for s in loaded if isinstance(s, Session))
        failed.extend(s for s in loaded if not isinstance(s, Session))
    if errors is not None:
        errors.extend(failed)
    elif failed:
        warnings.warn(f"{len(failed)} session(s) of {store} did not read, the first: "
                      f"{failed[0]}; `trajset inspect {store}` lists them", stacklevel=2)  # fmt: skip
    return out


def session_report(session: Session) -> dict[str, JSON]:
    problems: list[str] = []
    for leaf in session.leaves():
        try:
            build_context(session.path(leaf))
        except ContextError as exc:
            problems.append(f"leaf {leaf}: {exc.message}")
    rep: dict[str, JSON] = {
        "session_id": session.id,
        "source": session.source,
        "format": session.header.format,
        "name": session.name(),
        "entries": len(session.entries),
        "roots": session.roots(),
        "forks": [{"entry_id": f, "children": session.children(f)} for f in session.forks()],
        "leaves": session.leaves(),
        "current_leaf": session.current_leaf(),
        "main_leaf": session.last_id(),
        "compactions": [
            {"entry_id": e.id, "first_kept": e.body.first_kept}
            for e in session.entries
            if isinstance(e.body, CompactionEntry)
        ],
        "truncated": None,
        "problems": problems + [_issue(i) for i in session.issues],
        "links": [e.raw.get("session") for e in session.entries if e.type == "link"],
        "reader": dict(sorted(session.counts.items())),
    }
    if session.truncation is not None:
        t = session.truncation
        rep["truncated"] = {"line": t.line, "reason": t.reason}
    return rep


def _loaded(unit: Unit) -> list[Session | UnitFailed]:
    """The unit's sessions and errors; a unit skipped by design gives neither."""
    try:
        return list(load_unit(unit))
    except UnitSkipped:
        return []
    except UnitFailed as exc:
        return [exc]


def inspect_store(stores: list[Path], kind: str = "auto") -> list[dict[str, JSON]]:
    reports: list[dict[str, JSON]] = []
    for unit in discover(stores, kind):
        for s in _loaded(unit):
            if isinstance(s, Session):
                reports.append(session_report(s))
            else:
                reports.append({"source": s.source or unit.label, "error": str(s)})
    return reports


@dataclass
class Verified:
    """What ``verify`` found: lines per problem, a line per response (``--verbose``), counts."""

    problems: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def total(self) -> str:
        c = self.counts
        return (
            f"{c['sessions']} session(s), {c['responses']} response(s): {c['verified']} "
            f"verified, {c['no_hash']} without a recorded hash, {len(self.problems)} "
            f"problem(s), {len(self.warnings)} warning(s)"
        )


def verify_session(session: Session, found: Verified) -> None:
    """Add what one session's hashes and record rules give to ``found``."""
    found.counts["sessions"] += 1
    for e in session.entries:
        if e.type != "response":
            continue
        found.counts["responses"] += 1
        check = verify_response(session, e.id)
        where = f"{session.source}: session {session.id} entry {e.id}"
        if check.status == "ok":
            found.counts["verified"] += 1
            found.details.append(f"{where}: ok")
        elif check.status == "no_hash":
            found.counts["no_hash"] += 1
            found.details.append(f"{where}: no hash recorded")
        elif check.status == "mismatch":
            found.problems.append(
                f"{where}: MISMATCH recorded {check.recorded} computed {check.computed}"
            )
        else:
            found.problems.append(f"{where}: error: {check.message}")
    seen: set[str] = set()
    for leaf in session.leaves():
        for problem in verify_records(session, session.path(leaf)):
            if problem not in seen:
                seen.add(problem)
                found.problems.append(f"{session.source}: session {session.id}: records: {problem}")
    if session.truncation is not None:
        t = session.truncation
        found.warnings.append(
            f"{session.source}:{t.line}: session {session.id}: truncated last line ({t.reason}); "
            "not a hash mismatch: export keeps the complete lines before it"
        )


def verify_store(stores: list[Path], kind: str = "auto") -> Verified:
    found = Verified()
    for unit in discover(stores, kind):
        for s in _loaded(unit):
            if isinstance(s, Session):
                verify_session(s, found)
            else:
                found.problems.append(f"{s}")
    return found


def _issue(i: Issue) -> str:
    where = ", ".join(x for x in (i.source, "" if i.line is None else f"line {i.line}") if x)
    return f"{i.kind} ({where}): {i.message}" if where else f"{i.kind}: {i.message}"
