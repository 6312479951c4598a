"""Hypothesis strategies: random session trees built the way harnesses append them."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.builder import SessionBuilder

OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["user", "respond", "call", "branch", "outcome", "label", "config", "root"]
        ),
        st.integers(min_value=0, max_value=10_000),
        st.floats(min_value=0, max_value=1, allow_nan=False),
    ),
    min_size=1,
    max_size=40,
)


@st.composite
def sessions(draw, hashes: bool = False):  # type: ignore[no-untyped-def]
    """A ``SessionBuilder`` holding a random tree with forks, tool calls, outcomes and labels."""
    b = SessionBuilder("s-" + str(draw(st.integers(0, 10**6))), hashes=hashes)
    b.config(model="m", instructions="be brief", tools_added=[{"type": "function", "name": "t"}])
    b.user("start")
    calls = 0
    for op, n, x in draw(OPS):
        ids = [e["id"] for e in b.entries]
        if op == "user":
            b.user(f"u{n}")
        elif op == "respond":
            b.respond(text=f"a{n}", model="m", usage=(n % 100, n % 7, 0))
        elif op == "call":
            calls += 1
            cid = f"call_{calls}"
            b.respond(calls=[(cid, "t", {"n": n})], model="m")
            b.tool_output(cid, f"out {n}")
        elif op == "branch":
            b.branch(ids[1 + n % (len(ids) - 1)])  # never at the root config
        elif op == "outcome":
            b.add("outcome", kind="eval", target=ids[n % len(ids)], score=round(x, 3))
        elif op == "label":
            b.add("label", target=ids[n % len(ids)], label="kept" if n % 2 else None)
        elif op == "config":
            b.config(model=f"m{n % 3}")
        elif op == "root":
            b.branch(None)
            b.config(model="m")
            b.user(f"r{n}")
    return b
