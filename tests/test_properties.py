"""Tree and export invariants over generated sessions (Hypothesis)."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from trajset.pipeline import ExportOptions, Trajectory, export_session, trajectories
from trajset.pipeline.atif import to_atif
from trajset.pipeline.jsonio import canonical
from trajset.pipeline.stores import read_session_text
from trajset.pipeline.tables import TABLES
from trajset.pipeline.tree import outcome_records, parse_policy
from trajset.redactors import count_placeholders
from trajset.schemas.atif import validate_document
from trajset.schemas.entries import BranchSummaryEntry, CompactionEntry, ItemEntry
from trajset.schemas.openresponses import encode_item

from .strategies import sessions

JSONS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(sessions())
def test_leaves_are_the_childless_entries(b) -> None:  # type: ignore[no-untyped-def]
    s = b.session()
    parents = {e.parent for e in s.entries}
    assert s.leaves() == [e.id for e in s.entries if e.id not in parents]


@given(sessions())
def test_every_path_runs_from_a_root_to_its_leaf(b) -> None:  # type: ignore[no-untyped-def]
    s = b.session()
    for leaf in s.leaves():
        path = s.path(leaf)
        assert path[0].parent is None and path[-1].id == leaf
        assert all(path[i + 1].parent == path[i].id for i in range(len(path) - 1))


@given(sessions())
def test_read_write_round_trip_is_json_equal(b) -> None:  # type: ignore[no-untyped-def]
    s = b.session()
    again = read_session_text("\n".join(s.lines()) + "\n")
    assert [e.raw for e in again.entries] == [e.raw for e in s.entries]
    assert again.header_raw == s.header_raw


@given(JSONS, st.randoms())
def test_canonical_json_ignores_member_order(value, rnd) -> None:  # type: ignore[no-untyped-def]
    def shuffle(v):  # type: ignore[no-untyped-def]
        if isinstance(v, dict):
            items = list(v.items())
            rnd.shuffle(items)
            return {k: shuffle(x) for k, x in items}
        if isinstance(v, list):
            return [shuffle(x) for x in v]
        return v

    assert canonical(value) == canonical(shuffle(value))
    assert json.loads(canonical(value)) is not None or value is None


@settings(max_examples=60)
@given(
    sessions(),
    st.sampled_from([[], ["score"], ["label:kept"], ["current"], ["label:kept", "score"]]),
)
def test_export_invariants(b, prefer) -> None:  # type: ignore[no-untyped-def]
    s = b.session()
    out = list(trajectories(s, [parse_policy(p) for p in prefer]))
    trajs = [t for t in out if isinstance(t, Trajectory)]
    # One document per leaf (these trees have no broken compactions).
    assert [t.leaf_id for t in trajs] == s.leaves()
    assert sum(t.main for t in trajs) == 1
    # At every fork, exactly one trajectory through it is preferred there and at every fork below.
    for fork in s.forks():
        through = [t for t in trajs if any(fc.fork == fork for fc in t.forks)]
        below = [
            t
            for t in through
            if all(fc.followed for fc in t.forks if _depth(s, fc.fork) >= _depth(s, fork))
        ]
        assert len(below) == 1, fork
    # Every abandoned leaf is listed in some preferred trajectory's preferred_over.
    listed = {leaf for t in trajs if t.is_preferred for leaf in t.preferred_over}
    for t in trajs:
        if not t.is_preferred:
            assert t.leaf_id in listed
    for t in trajs:
        doc = to_atif(t)
        assert [st_["step_id"] for st_ in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
        # A leaf whose path makes no step (e.g. a config then an outcome) has no valid document;
        # the writer reports it as an error for that leaf.
        assert validate_document(doc) is None or not doc["steps"]


@settings(max_examples=40)
@given(sessions(), st.sampled_from([[], ["score"], ["current"]]))
def test_shared_item_encodings_survive_every_output(b, prefer) -> None:  # type: ignore[no-untyped-def]
    """An entry's item is encoded once and shared by every trajectory through it (its
    context, its steps, its documents and table rows): building them all changes none."""
    s = b.session()
    ex = export_session(s, ExportOptions(redact=False, prefer=tuple(prefer)))
    for table in TABLES.values():
        list(table.rows(ex, Counter()))
    for e in s.entries:
        if isinstance(e.body, ItemEntry | CompactionEntry | BranchSummaryEntry):
            item = e.body.item if isinstance(e.body, ItemEntry) else e.body.summary
            assert e.encoded_item() == encode_item(item), e.id


def _depth(s, entry_id: str) -> int:  # type: ignore[no-untyped-def]
    return len(s.path(entry_id))


@given(sessions())
def test_an_outcome_applies_to_exactly_the_leaves_below_its_target(b) -> None:  # type: ignore[no-untyped-def]
    """The depth-first spans give what a walk of the target's subtree gives."""
    s = b.session()
    for record in outcome_records(s):
        if record.target is None:
            assert record.leaf_ids == tuple(s.leaves())
            continue
        under = set(s.subtree_ids(record.target)) if record.target in s.by_id else set()
        assert record.leaf_ids == tuple(leaf for leaf in s.leaves() if leaf in under)


def test_an_outcome_stops_at_its_targets_subtree() -> None:
    """A leaf right after the target's subtree (its sibling) is not under the target."""
    from tests.builder import SessionBuilder

    b = SessionBuilder("s-spans", hashes=False)
    b.user("q")
    target = b.respond(text="a")
    sibling = b.branch(b.entries[-2]["id"]).user("x")  # beside the response, under its item
    b.add("outcome", parent=None, kind="eval", target=target, score=1.0)
    session = b.session()
    assert {target, sibling} <= set(session.leaves())
    [record] = outcome_records(session)
    assert record.leaf_ids == (target,)


_PLACEHOLDERS = st.builds(
    lambda rule, n: f"[REDACTED:{rule}:{n}]",
    st.sampled_from(["email", "aws_access_key", "x_1"]),
    st.integers(1, 10**6),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text() | _PLACEHOLDERS | st.just("[REDACTED:email:٣]")))
def test_placeholders_count_the_same_in_a_text_and_its_utf8_bytes(pieces: list[str]) -> None:
    """Documents are counted in the bytes written (no decoded copy of a large document)."""
    text = "".join(pieces)
    counts = count_placeholders(text)
    assert count_placeholders(text.encode("utf-8")) == counts
    assert sum(counts.values()) >= sum(
        1 for p in pieces if p.startswith("[REDACTED:") and p[-2] != "٣"
    )
