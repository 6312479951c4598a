"""``preferences``: pairs from the abandoned branches at every fork (DPO, KTO, reward models).

At every fork each abandoned child is paired with the preferred one twice:
``turn`` (each side up to the next user input) and ``trajectory`` (each side
to the leaf reached by following preferred children).  A side is the part of
that leaf's messages after the fork; the prompt is the context at the fork, and
what both sides begin with alike (one task's instruction given to two trials).
A ``turn`` side runs to its first answer at least.  Dropped and counted: pairs
whose sides are equal, pairs with a side whose trajectory was not exported
(filtered by ``--where`` or failed), a side that holds no answer (a summary, an
injected message), an empty prompt (a trainer needs one), and two children a
``score`` policy found equal (``dropped_tied``: the store prefers neither).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from trajset.schemas.records import (
    Anchored,
    ExportedTrajectory,
    ForkDecision,
    ForkPrompt,
    Message,
    SessionExport,
    Trajectory,
)
from trajset.schemas.session import Session
from trajset.schemas.tables import PREFERENCES, TRAINER_JSON

from ..jsonio import content_hash
from .base import Dedup, Prepared, Row, Table
from .messages import context_messages
from .paths import forks, windows

GRANULARITIES = ("turn", "trajectory")


def preferred_leaf(
    session: Session,
    start: str,
    decisions: dict[str, ForkDecision],
    memo: dict[str, str] | None = None,
) -> str:
    """Follow preferred children from ``start`` down to a leaf; ``memo`` remembers the leaf of
    every entry walked (the forks of one session share their walks)."""
    memo = {} if memo is None else memo
    walked, cur = [], start
    while cur not in memo and (children := session.children(cur)):
        walked.append(cur)
        cur = children[0] if len(children) == 1 else decisions[cur].preferred
    leaf = memo.get(cur, cur)
    memo.update(dict.fromkeys(walked, leaf))
    return leaf


class PairSides:
    """What a session's pairs take of each leaf's messages: those after the fork nearest the
    root at which the leaf is a side (the preferred leaf of one of the fork's children), and
    nothing of a leaf that is no side.  A side at a lower fork takes a part of that, so a
    session's kept trajectories can wait for its last slice with only these."""

    def __init__(self, session: Session, decisions: dict[str, ForkDecision]) -> None:
        self.session = session
        leaf_below: dict[str, str] = {}  # entry -> the leaf preferred children lead to
        depth: dict[str, int] = {}
        self.first_fork: dict[str, str] = {}  # leaf -> the fork nearest the root it is a side at
        for fork, d in decisions.items():
            for child in d.children:
                leaf = preferred_leaf(session, child, decisions, leaf_below)
                seen = self.first_fork.get(leaf)
                if seen is None or _depth(session, fork, depth) < _depth(session, seen, depth):
                    self.first_fork[leaf] = fork

    def messages(self, leaf: str, messages: list[Anchored]) -> list[Anchored]:
        """Of the leaf's messages (``ExportedTrajectory.side``), those after its first fork."""
        fork = self.first_fork.get(leaf)
        if fork is None:
            return []
        before = {e.id for e in self.session.path(fork)}
        return [(m, anchor) for m, anchor in messages if anchor not in before]


def prepare(t: Trajectory, messages: list[Anchored], max_media_bytes: int | None) -> Prepared:
    """What the path said after its first fork where its document does not hold it all
    (``said``), kept for its pairs' sides."""
    side, media = said(t, messages, max_media_bytes)
    return Prepared(side, media)


def spoken(et: ExportedTrajectory) -> list[Anchored]:
    """What a kept trajectory said: from the tree where its branch was compacted after its
    fork (``prepare``), else its document's messages."""
    side: list[Anchored] | None = et.prepared.get("preferences")
    return side or et.messages


def retain(export: SessionExport) -> Callable[[ExportedTrajectory], list[Anchored]]:
    """Of each trajectory's messages, what the session's pairs take (``PairSides``)."""
    sides = PairSides(export.session, export.source.decisions)
    return lambda et: sides.messages(et.trajectory.leaf_id, spoken(et))


def said(
    t: Trajectory,
    messages: list[Anchored],
    max_media_bytes: int | None = None,
    after: int | None = None,
) -> tuple[list[Anchored] | None, dict[str, bytes]]:
    """What the path said after its first fork (after its entry ``after``, by index), from
    the tree, when its document's ``messages`` do not hold it all (None otherwise), and the
    media that took.

    A document holds the last window only, so a branch compacted after a fork gets each
    earlier window's own messages from that window's context: each window gives the
    entries it adds, never its copied context (a summary, a kept tail).  A pair's side is
    cut from these, so it starts with what the branch said first."""
    session = t.session
    path = session.path(t.leaf_id)
    parts = list(windows(path))
    if len(parts) == 1:  # most paths: no compaction, the document holds it all
        return None, {}
    first = after if after is not None else next(iter(forks(session, path)), None)
    if first is None:
        return None, {}
    before = {e.id for e in path[: first + 1]}
    if all(e.id in before for e in parts[-2]):
        return None, {}  # every entry after the fork is in the last window
    out: list[Anchored] = []
    media: dict[str, bytes] = {}
    for i, part in enumerate(parts):
        own = {e.id for e in part if e.type != "compaction"} - before
        if not own:
            continue
        if i == len(parts) - 1:
            taken = messages
        elif (built := context_messages(session, part[-1].id, max_media_bytes)) is None:
            continue  # the window does not build: its leaf's error says why
        else:
            taken, _, window_media = built
            media.update(window_media)
        out += [(m, a) for m, a in taken if a in own]
    return out, media


def _depth(session: Session, entry: str, memo: dict[str, int]) -> int:
    chain: list[str] = []
    cur: str | None = entry
    while cur and cur not in memo:
        chain.append(cur)
        cur = session.by_id[cur].parent
    d = memo[cur] if cur else 0
    for x in reversed(chain):
        d += 1
        memo[x] = d
    return memo[entry]


def _turn(messages: list[Message]) -> list[Message]:
    """A side up to (not including) the next user input after its first answer (a summary
    or a prompt before the answer is part of the turn)."""
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    for i in range(max(first, 1), len(messages)):
        if messages[i]["role"] == "user":
            return messages[:i]
    return messages


def _shared(c: list[Message], r: list[Message]) -> int:
    """How many leading messages both sides hold alike (two trials given one instruction, a
    prompt typed again after a rewind): the prompt's, not a side's."""
    n = 0
    while n < min(len(c), len(r)) and c[n] == r[n]:
        n += 1
    return n


def _answers(side: list[Message]) -> bool:
    return any(m["role"] == "assistant" for m in side)


def _sides(
    export: SessionExport, fork: str, leaf_msgs: dict[str, list[Anchored]], memo: dict[str, str]
) -> dict[str, tuple[str, list[Message] | None]]:
    """child -> (its preferred leaf, the messages after the fork; None when not exported)."""
    session, decisions = export.session, export.source.decisions
    pos = {e.id for e in session.path(fork)}
    sides: dict[str, tuple[str, list[Message] | None]] = {}
    for child in session.children(fork):
        leaf = preferred_leaf(session, child, decisions, memo)
        msgs = leaf_msgs.get(leaf)
        if msgs is None:
            sides[child] = (leaf, None)
            continue
        # What the branch said after the fork; a compaction summary is context the harness
        # rebuilt (it leads the compacted document), not something the branch said.
        after = {e.id for e in session.path(leaf) if e.type != "compaction"} - pos
        sides[child] = (leaf, [m for m, anchor in msgs if anchor in after])
    return sides


def _pair(
    export: SessionExport,
    d: ForkDecision,
    child: str,
    granularity: str,
    prompt: ForkPrompt,
    sides: dict[str, tuple[str, list[Message] | None]],
) -> Row | str:
    """The pair row, or the reason it is dropped."""
    (chosen_leaf, chosen), (rejected_leaf, rejected) = sides[d.preferred], sides[child]
    if chosen is None or rejected is None:
        return "dropped_unexported"
    c = _turn(chosen) if granularity == "turn" else chosen
    r = _turn(rejected) if granularity == "turn" else rejected
    if c == r:
        return "dropped_identical"
    if child in d.tied:  # as good by the store's own score: no preference
        return "dropped_tied"
    shared = _shared(c, r)
    messages, c, r = [*prompt.messages, *c[:shared]], c[shared:], r[shared:]
    if not c or not r:  # a branch that said nothing (an undo not yet followed) prefers nothing
        return "dropped_empty_side"
    if not _answers(c) or not _answers(r):  # a summary or an injected message alone
        return "dropped_no_answer"
    if not messages:  # nothing both sides answer (TRL needs a prompt)
        return "dropped_empty_prompt"
    both_agent = c[0]["role"] == r[0]["role"] == "assistant"
    best = export.source.best_score
    cs, rs = best.get(d.preferred), best.get(child)
    sid = export.session.id
    return {
        "pair_id": content_hash([sid, d.fork, d.preferred, child, granularity])[7:39],
        "session_id": sid,
        "fork_entry_id": d.fork,
        "granularity": granularity,
        "kind": "response" if both_agent else "prompt",
        "prompt": messages if shared else prompt.messages,  # one list for a fork's pairs
        "chosen": c,
        "rejected": r,
        "chosen_leaf_id": chosen_leaf,
        "rejected_leaf_id": rejected_leaf,
        "chosen_score": cs,
        "rejected_score": rs,
        "margin": cs - rs if cs is not None and rs is not None else None,
        "policy": d.policy,
        "tools": prompt.tools,
    }


def rows(export: SessionExport, stats: Counter[str]) -> list[Row]:
    """Every pair of the session; counts ``pairs`` built and ``pairs_dropped_<reason>``."""
    return list(iter_rows(export, stats))


def iter_rows(export: SessionExport, stats: Counter[str]) -> Iterator[Row]:
    """``rows`` one pair at a time (a session's pairs can be many times its documents, so
    the run spills them as they come); counts once they are all taken."""
    counts = Counter(built=0, dropped_identical=0, dropped_unexported=0, dropped_tied=0,
                     dropped_no_answer=0, dropped_empty_prompt=0)  # fmt: skip
    leaf_msgs = {et.trajectory.leaf_id: spoken(et) for et in export.kept}
    leaves: dict[str, str] = {}  # entry -> its preferred leaf, shared by the session's forks
    for fork, d in export.source.decisions.items():
        prompt = export.prompts.get(fork)
        abandoned = [c for c in d.children if c != d.preferred]
        if prompt is None:
            counts["dropped_unexported"] += len(GRANULARITIES) * len(abandoned)
            continue
        sides = _sides(export, fork, leaf_msgs, leaves)
        for child in abandoned:
            for granularity in GRANULARITIES:
                got = _pair(export, d, child, granularity, prompt, sides)
                if isinstance(got, str):
                    counts[got] += 1
                else:
                    counts["built"] += 1
                    yield got
    stats["pairs"] += counts.pop("built")
    stats.update({f"pairs_{reason}": n for reason, n in counts.items()})


TABLE = Table(
    "preferences",
    PREFERENCES,
    "pairs from abandoned branches: `prompt`/`chosen`/`rejected` (DPO, KTO, reward models)",
    iter_rows,
    per="session",
    dedup=Dedup(
        key=("session_id", "pair_id"),
        seed=("tools", "granularity"),
        links=lambda r: [r["prompt"], r["chosen"], r["rejected"]],  # equal, or not: no prefixes
        messages=lambda r: [*r["prompt"], *r["chosen"], *r["rejected"]],
        counter="pairs_dropped_duplicate",
    ),
    shared=("prompt",),  # a fork's pairs, and their KTO rows, hold one prompt
    prepare=prepare,
    retain=retain,
    json_fields=TRAINER_JSON,
)
