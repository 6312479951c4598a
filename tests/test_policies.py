"""Preference policies (spec §7.2): each one's choice at a fork, chaining, and the registry."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from tests.builder import SessionBuilder
from trajset.pipeline.errors import UsageError
from trajset.pipeline.tree import POLICIES, TreeIndex, choose, decide, parse_policy
from trajset.schemas.session import Session


class Forked(NamedTuple):
    session: Session
    fork: str
    first: str
    second: str


def _forked() -> Forked:
    """A user prompt answered twice: first answer ``a``, regenerated answer ``b`` (appended last)."""
    b = SessionBuilder("s-policies", hashes=False)
    b.config(model="m")
    u = b.user("hi")
    a = b.respond(text="first")
    b.branch(u)
    second = b.respond(text="second")
    b.add("outcome", kind="eval", target=a, score=0.9)
    b.add("outcome", kind="eval", target=second, score=0.2)
    b.add("label", target=a, label="kept")
    s = b.session()
    return Forked(s, u, *s.children(u))


def _pick(spec: list[str]) -> tuple[str, str]:
    f = _forked()
    preferred, policy, _ = choose(TreeIndex(f.session), f.fork, [parse_policy(p) for p in spec])
    return preferred, policy


def test_latest_prefers_the_branch_appended_to_last() -> None:
    second = _forked().second
    assert _pick(["latest"]) == (second, "latest")
    assert _pick([]) == (second, "latest")  # the fallback


def test_score_prefers_the_strictly_best_subtree() -> None:
    assert _pick(["score"]) == (_forked().first, "score")


def test_label_prefers_the_only_labelled_branch_and_names_itself() -> None:
    first, second = _forked()[2:]
    assert _pick(["label:kept"]) == (first, "label:kept")
    assert _pick(["label:missing"]) == (second, "latest")  # no opinion: the fallback decides


def test_current_follows_the_current_leaf() -> None:
    # The records were appended under the regenerated answer: the last entry is on that branch.
    assert _pick(["current"]) == (_forked().second, "current")
    b = SessionBuilder("s-current", hashes=False)
    u = b.user("hi")
    a = b.respond(text="first")
    b.branch(u).respond(text="second")
    b.add("label", target=a, label="leaf")  # the reserved label moves the current leaf
    s = b.session()
    assert choose(TreeIndex(s), u, [parse_policy("current")])[:2] == (s.children(u)[0], "current")


def test_first_decisive_policy_wins_and_decisions_are_made_once() -> None:
    f = _forked()
    assert _pick(["label:missing", "score", "latest"]) == (f.first, "score")
    decisions = decide(TreeIndex(f.session), [parse_policy("score")])
    assert list(decisions) == f.session.forks() and decisions[f.fork].preferred == f.first


def test_unknown_or_malformed_policies_list_the_valid_spellings() -> None:
    assert set(POLICIES) == {"latest", "current", "label", "score"}
    with pytest.raises(UsageError, match="valid: latest, current, label:NAME, score"):
        parse_policy("best")
    with pytest.raises(UsageError, match="needs a name"):
        parse_policy("label")
    with pytest.raises(UsageError, match="takes no argument"):
        parse_policy("score:x")
