"""``--dedup exact``: the ``sft`` rows a store holds twice, decided over the whole store.

A session copied under another id, or copied and continued (Claude Code's
``/branch`` and ``--fork-session``, Codex and OpenCode forks), repeats its
history in several rows.  Each ``sft`` row gets a digest where its part is
written (``row_digest``): a chain of hashes, one per message boundary, that
starts from its tools, so the chain's last link names the whole row and every
earlier link one of its prefixes.  Batches carry the digests in their results;
the driver decides in unit order (``decide``), the same whatever ran the
batches: a row equal to an earlier one is a duplicate of it, and a row equal to
a prefix of another session's row is subsumed by that row (whose messages hold
it, trainable answers included).  The shards leave both out; the manifest lists
each with the row it is a ``duplicate_of``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

#: (session_id, leaf_id, window): an ``sft`` row's key
RowKey = tuple[str, str, int]
#: a row's digest: its key, then the hash of each prefix (the last one: the whole row)
Digest = list[Any]

#: hex digits kept of each hash (64 bits: no collision among a store's rows to expect)
HEX = 16
#: how many dropped rows the manifest lists by key (all are counted)
LISTED = 1000


def _link(previous: str, value: Any) -> str:
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(previous.encode() + hashlib.sha256(data).digest()).hexdigest()[:HEX]


def row_digest(row: dict[str, Any]) -> Digest:
    """``[session_id, leaf_id, window, [hash of messages[:1], ..., hash of all]]``, the
    chain starting from the row's tools."""
    link = _link("", row.get("tools") or "")
    chain = []
    for message in row["messages"]:
        link = _link(link, message)
        chain.append(link)
    return [row["session_id"], row["leaf_id"], row["window"], chain]


def decide(digests: Iterable[Digest]) -> dict[RowKey, RowKey]:
    """Row -> the row it duplicates, for every row to leave out, given every row's digest in
    unit order: an exact duplicate of an earlier row, or a prefix of another session's row
    (the first such row)."""
    rows: list[tuple[RowKey, Sequence[str]]] = [
        ((d[0], d[1], int(d[2])), d[3]) for d in digests if d[3]
    ]
    first_whole: dict[str, RowKey] = {}
    # a proper prefix's hash -> the first row it begins, and the first of another session
    holders: dict[str, list[RowKey]] = {}
    for key, chain in rows:
        first_whole.setdefault(chain[-1], key)
        for link in chain[:-1]:
            found = holders.setdefault(link, [key])
            if len(found) == 1 and found[0][0] != key[0]:
                found.append(key)
    dropped: dict[RowKey, RowKey] = {}
    for key, chain in rows:
        whole = chain[-1]
        longer = next((h for h in holders.get(whole, []) if h[0] != key[0]), None)
        if longer is not None:
            dropped[key] = longer  # subsumed: another session's row holds all of it
        elif first_whole[whole] != key:
            dropped[key] = first_whole[whole]  # the same row, written again
    # a row kept as another's duplicate_of may itself be dropped: point at what stays
    for key, target in list(dropped.items()):
        seen = {key}
        while target in dropped and target not in seen:
            seen.add(target)
            target = dropped[target]
        dropped[key] = target
    return dropped


def report(dropped: dict[RowKey, RowKey]) -> dict[str, Any]:
    """The manifest's ``dedup`` block: how many rows were left out, and which (listed up to
    ``LISTED``), each with the row it is a duplicate of."""
    listed = sorted(dropped.items())[:LISTED]
    return {
        "dropped": len(dropped),
        "rows": [
            {
                "session_id": k[0],
                "leaf_id": k[1],
                "window": k[2],
                "duplicate_of": {"session_id": d[0], "leaf_id": d[1], "window": d[2]},
            }
            for k, d in listed
        ],
    }
