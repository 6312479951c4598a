"""The agentsession corpus (``corpus.py``) as an Agent Session Format SQLite store (spec
§8.2), for the benchmark: the same sessions, one ``sessions.db``.

    python benchmarks/corpus.py corpus /tmp/db --format agentsession-sqlite --sessions 200 --tool-output-kb 36

The files are written first, then loaded into the database the way the tests build one
(``tests/builder.py``), and removed; the input counted is the database's size.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from corpus import build_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the builder lives in tests/
from tests.builder import write_sqlite_store


def build_sqlite_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``dest/sessions.db`` holding the corpus's sessions; its size in bytes."""
    files = dest / "files"
    build_corpus(files, sessions, seed, turns=turns, fork_rate=fork_rate,
                 tool_output_bytes=tool_output_bytes)  # fmt: skip
    db = dest / "sessions.db"
    write_sqlite_store(db, sorted(files.rglob("*.jsonl")))
    shutil.rmtree(files)
    return db.stat().st_size
