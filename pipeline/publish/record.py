"""The merged repository's manifest and card: its counts, and the publication record.

The tables' facts and the row counts are the merged repository's (every shard the index
lists), so ``datasets`` checks the merged split sizes on load; the run's own counts
(units, forks, errors) stay those of the export published last.  The card opens with a
publication record: who published, to which repository and how visible, the licence,
the redaction rule set, what ``scan`` found, and the sessions per store kind.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..outputs.card import card
from ..outputs.scores import task_scores
from ..tables import CONFIGS, DERIVED
from .index import Item

JSON = Any
#: the count of a table's rows in the manifest's ``counts``
ROW_COUNTS = {"trajectories": "trajectories", "sft": "sft_rows", "steps": "steps",
              "outcomes": "outcomes", "preferences": "pairs", "kto": "kto_rows"}  # fmt: skip


@dataclass(frozen=True)
class Publication:
    """Who publishes what, where: the card's publication record."""

    repo_id: str
    publisher: str
    private: bool | None  # None: the repository existed (its visibility is left as it is)
    license: str
    scan: str  # what scan found ("nothing", or what --allow-unredacted let through)


def tables_of(items: list[Item], splits: list[str]) -> dict[str, JSON]:
    """Each table's facts (``tables_info.table_facts`` with its splits) over the shards."""
    shards: dict[str, list[Item]] = defaultdict(list)
    for i in items:
        if i.kind == "shard":
            shards[i.table].append(i)
    out: dict[str, JSON] = {}
    for name in (*CONFIGS, *(n for n in DERIVED if n in shards)):
        mine = sorted(shards.get(name, []), key=lambda i: i.path)
        out[name] = {
            "rows": sum(i.rows for i in mine),
            "bytes": sum(i.bytes for i in mine),
            "files": {i.path: {"num_bytes": i.num_bytes, "checksum": i.hash} for i in mine},
            "splits": {
                s: _split(mine, s) for s in dict.fromkeys([*splits, *(i.split for i in mine)])
            },
        }
    return out


def _split(shards: list[Item], split: str) -> dict[str, int]:
    mine = [i for i in shards if i.split == split]
    return {"rows": sum(i.rows for i in mine), "bytes": sum(i.bytes for i in mine)}


def sessions_by_kind(items: list[Item]) -> dict[str, int]:
    """Sessions per store kind, from the trajectories' rows."""
    kinds = {
        i.session_id: i.source_format
        for i in items
        if i.kind == "row" and i.table == "trajectories"
    }
    return dict(sorted(Counter(kinds.values()).items()))


def merged_manifest(manifest: JSON, items: list[Item], record: JSON) -> JSON:
    """The export's manifest with the merged tables, row counts and the publication record."""
    splits = ["train", *((manifest.get("options") or {}).get("split") or {})]
    tables = tables_of(items, splits)
    counts = dict(manifest.get("counts") or {})
    counts.update({key: tables[t]["rows"] for t, key in ROW_COUNTS.items() if t in tables})
    counts["sessions_exported"] = sum(sessions_by_kind(items).values())
    return {**manifest, "tables": tables, "counts": counts, "publication": record}


def record_of(p: Publication, manifest: JSON, items: list[Item], merged: JSON) -> JSON:
    redaction = manifest.get("redaction") or {}
    return {
        "repo_id": p.repo_id,
        "publisher": p.publisher,
        "visibility": {True: "private", False: "public", None: "visibility unchanged"}[p.private],
        "license": p.license,
        "redaction_version": redaction.get("version") or "none",
        "redaction_rules": redaction.get("rules") or [],
        "scan": p.scan,
        "sessions_by_store_kind": sessions_by_kind(items),
        **merged,
    }


def record_section(record: JSON) -> list[str]:
    kinds = record["sessions_by_store_kind"]
    rules = ", ".join(f"`{r}`" for r in record["redaction_rules"]) or "none"
    return [
        "## Publication",
        "",
        f"* published to `{record['repo_id']}` ({record['visibility']}) by "
        f"`{record['publisher']}`, under the licence `{record['license']}`",
        f"* redaction rule set `{record['redaction_version']}` ({rules}); every row carries "
        "it (`redaction_version`)",
        f"* scan before publishing: {record['scan']}",
        *(f"* {kind}: {n} session(s)" for kind, n in kinds.items()),
        f"* this publish: {record['sessions_in_export']} session(s) of the export; "
        f"{record['sessions_kept']} kept from earlier publishes that it does not hold; rows "
        f"sent {record['rows_sent']}, taken out {record['rows_removed']}",
        "* the counts below are the repository's; units, forks and errors are of the export "
        "published last",
        "",
    ]


def card_text(manifest: JSON, license_id: str, outcomes: list[Path], scratch: Path) -> str:
    """The card of the merged repository (task scores over its ``outcomes`` shards)."""
    folder = scratch / "scores"
    target = folder / "data" / "outcomes"
    target.mkdir(parents=True, exist_ok=True)
    for old in target.iterdir():
        old.unlink()
    for n, shard in enumerate(outcomes):
        (target / f"{n:05d}.parquet").write_bytes(shard.read_bytes())
    text = card(manifest, license_id, task_scores(folder))
    at = text.index("## Stats")
    return text[:at] + "\n".join(record_section(manifest["publication"])) + "\n" + text[at:]
