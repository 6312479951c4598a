"""``--dedup``: the ``sft`` rows and preference pairs a store holds twice, decided over the
whole store.

A session copied under another id, or copied and continued (Claude Code's
``/branch`` and ``--fork-session``, Codex and OpenCode forks), repeats its
history in several rows, and its forks in several pairs.  Each row of a table
with a ``Dedup`` gets a digest where its part is written (``row_digest``): a
chain of hashes, one per link (an ``sft`` row's messages; a pair's prompt,
chosen and rejected sides), that starts from its seed columns (the tools), so
the chain's last link names the whole row and every earlier link one of its
prefixes; with ``--dedup near`` also a MinHash of its words (rensa: MinHash in
Rust with no dependencies, seeded, so the same bytes everywhere).  Batches
carry the digests in their results; the driver decides per table in unit order
(``decide``), the same whatever ran the batches: a row equal to an earlier one
is a duplicate of it, a row equal to a prefix of another session's row is
subsumed by that row (whose messages hold it, trainable answers included; a
pair has no prefix of another), and with ``near`` a row whose estimated Jaccard
similarity to an earlier kept row reaches the threshold is a duplicate of the
first such row.  The shards leave them out; the manifest lists each with its
``duplicate_of``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from ..errors import UsageError
from ..tables import TABLES
from ..tables.base import Dedup

#: a row's key (``Dedup.key``: the session id first)
RowKey = tuple[Any, ...]
#: a row's digest: its key, the hash of each prefix (the last one: the whole row), MinHash
Digest = list[Any]
#: table -> its rows' digests
Digests = dict[str, list[Digest]]

#: hex digits kept of each hash (64 bits: no collision among a store's rows to expect)
HEX = 16
#: how many dropped rows the manifest lists by key (all are counted)
LISTED = 1000
#: MinHash permutations and LSH bands for ``near`` (16 bands of 8: candidates from J ~ 0.7)
NUM_PERM, BANDS, SEED = 128, 16, 1
#: words per shingle for ``near``
SHINGLE = 3


def _rensa() -> Any:
    try:
        import rensa
    except ImportError:
        raise UsageError(
            "--dedup near needs rensa (MinHash); install it with: pip install 'trajset[near]'"
        ) from None
    return rensa


def check_mode(mode: str) -> None:
    """``UsageError`` now, before any unit runs, when ``mode`` needs what is not installed."""
    if mode == "near":
        _rensa()


def _shingles(messages: list[Any]) -> list[str]:
    words: list[str] = []
    for m in messages:
        words += [str(m.get("role") or ""), *str(m.get("content") or "").lower().split()]
        for c in m.get("tool_calls") or []:
            words += [c["function"]["name"], *str(c["function"]["arguments"]).lower().split()]
    if len(words) <= SHINGLE:
        return [" ".join(words)]
    return [" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)]


def _minhash(messages: list[Any]) -> str:
    m = _rensa().RMinHash(num_perm=NUM_PERM, seed=SEED)
    m.update(_shingles(messages))
    return base64.b64encode(m.__getstate__()).decode("ascii")


def _restored(state: str) -> Any:
    m = _rensa().RMinHash(num_perm=NUM_PERM, seed=SEED)
    m.__setstate__(base64.b64decode(state))
    return m


def _link(previous: str, value: Any, memo: dict[int, bytes] | None = None) -> str:
    """The hash of ``previous`` and ``value``; ``memo`` keeps each value's own hash by its id,
    for values shared by several rows (a fork's prompt is the same list in each of its
    pairs), alive while the memo is."""
    inner = memo.get(id(value)) if memo is not None else None
    if inner is None:
        inner = hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).digest()
        if memo is not None:
            memo[id(value)] = inner
    return hashlib.sha256(previous.encode() + inner).hexdigest()[:HEX]


def row_digest(
    spec: Dedup, row: dict[str, Any], near: bool = False, memo: dict[int, bytes] | None = None
) -> Digest:
    """``[key, [hash of links[:1], ..., hash of all], minhash]``, the chain starting from the
    row's seed columns; the MinHash (its state, base64) with ``near``."""
    link = _link("", [row.get(c) for c in spec.seed])
    chain = []
    for part in spec.links(row):
        link = _link(link, part, memo)
        chain.append(link)
    return [
        [row[c] for c in spec.key],
        chain,
        _minhash(spec.messages(row)) if near else None,
    ]


def digests(rows: dict[str, list[dict[str, Any]]], near: bool = False) -> Digests:
    """The digest of every row of each table ``--dedup`` applies to."""
    memo: dict[int, bytes] = {}  # the rows hold every value it is keyed by until it goes
    return {
        name: [row_digest(t.dedup, r, near, memo) for r in rows.get(name, [])]
        for name, t in TABLES.items()
        if t.dedup is not None
    }


def decide(digests: Iterable[Digest], near: float | None = None) -> dict[RowKey, RowKey]:
    """Row -> the row it duplicates, for every row to leave out, given every row's digest in
    unit order: an exact duplicate of an earlier row, or a prefix of another session's row
    (the first such row); with ``near`` (a threshold), also a row as similar as that to an
    earlier row that is kept."""
    digests = [d for d in digests if d[1]]
    rows: list[tuple[RowKey, Sequence[str]]] = [(tuple(d[0]), d[1]) for d in digests]
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
    if near is not None:
        _near(digests, [k for k, _ in rows], near, dropped)
    # a row kept as another's duplicate_of may itself be dropped: point at what stays
    for key, target in list(dropped.items()):
        seen = {key}
        while target in dropped and target not in seen:
            seen.add(target)
            target = dropped[target]
        dropped[key] = target
    return dropped


def _near(
    digests: list[Digest], keys: list[RowKey], threshold: float, dropped: dict[RowKey, RowKey]
) -> None:
    """Rows not dropped yet, in unit order, against the earlier kept ones (LSH candidates,
    then the estimated Jaccard similarity): the first at or above ``threshold`` is held."""
    lsh = _rensa().RMinHashLSH(threshold=threshold, num_perm=NUM_PERM, num_bands=BANDS)
    kept: dict[int, Any] = {}
    for i, (key, d) in enumerate(zip(keys, digests, strict=True)):
        if key in dropped or d[2] is None:
            continue
        m = _restored(d[2])
        similar = sorted(j for j in lsh.query(m) if m.jaccard(kept[j]) >= threshold)
        if similar:
            dropped[key] = keys[similar[0]]
        else:
            kept[i] = m
            lsh.insert(i, m)


def report(dropped: dict[str, dict[RowKey, RowKey]]) -> dict[str, Any]:
    """The manifest's ``dedup`` block: per table, how many rows were left out, and which
    (listed up to ``LISTED``), each with the row it is a duplicate of, by its key columns."""
    out: dict[str, Any] = {}
    for name, t in TABLES.items():
        if t.dedup is None:
            continue
        rows = dropped.get(name, {})
        columns = t.dedup.key
        out[name] = {
            "dropped": len(rows),
            "rows": [
                {**dict(zip(columns, k, strict=True)),
                 "duplicate_of": dict(zip(columns, d, strict=True))}
                for k, d in sorted(rows.items())[:LISTED]
            ],
        }  # fmt: skip
    return out
