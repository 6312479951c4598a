"""Facts about the written tables: rows, and per shard its size and SHA-256 (manifest and card).

The card's ``dataset_info`` carries them, so ``datasets`` verifies the split
sizes on load and a different export is a different cache entry (its
module hash covers the card's dataset infos).  A shard's facts are taken by
the worker that wrote it (``shard_facts``) and gathered per table by the
driver (``table_facts``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

JSON = Any


def shard_facts(meta: pq.FileMetaData, size: int, sha256: str) -> dict[str, int | str]:
    """A shard's rows, uncompressed bytes (its row groups'), file size and SHA-256, from its
    footer and the bytes its writer wrote."""
    return {
        "rows": meta.num_rows,
        "bytes": sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)),
        "num_bytes": size,
        "checksum": sha256,
    }


def table_facts(out: Path, shards: list[tuple[Path, dict[str, JSON]]]) -> dict[str, JSON]:
    """A table's rows, bytes and files from its shards' facts, in shard order."""
    files = {
        path.relative_to(out).as_posix(): {"num_bytes": f["num_bytes"], "checksum": f["checksum"]}
        for path, f in shards
    }
    rows = sum(f["rows"] for _, f in shards)
    return {"rows": rows, "bytes": sum(f["bytes"] for _, f in shards), "files": files}
