"""What an output table is: a declared Arrow schema, a description for the card, and its rows.

A table's rows are built from one session's ``SessionExport`` (the records
the stages made), never by re-reading documents or inputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from trajset.schemas.records import SessionExport

Row = dict[str, Any]


@dataclass(frozen=True)
class Table:
    """One dataset config: ``data/<name>/*.parquet``."""

    name: str
    schema: pa.Schema
    description: str  # one line for the dataset card
    rows: Callable[[SessionExport, Counter[str]], list[Row]]  # may count into the unit's stats
