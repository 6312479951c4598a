"""Facts about the written tables: rows, and per shard its size and SHA-256 (manifest and card).

The card's ``dataset_info`` carries them, so ``datasets`` verifies the split
sizes on load and a different export is a different cache entry (its
module hash covers the card's dataset infos).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

JSON = Any


def table_facts(out: Path, shards: list[Path]) -> dict[str, JSON]:
    files: dict[str, JSON] = {}
    rows = size = 0
    for path in shards:
        data = path.read_bytes()
        meta = pq.ParquetFile(path).metadata
        rows += meta.num_rows
        size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        files[path.relative_to(out).as_posix()] = {
            "num_bytes": len(data),
            "checksum": hashlib.sha256(data).hexdigest(),
        }
    return {"rows": rows, "bytes": size, "files": files}
