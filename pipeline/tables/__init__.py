"""The output tables (DESIGN §5): one module per table and the ``TABLES`` registry.

A new table is its Arrow schema in ``trajset.schemas.tables``, one module
here defining ``TABLE`` (schema, card description, rows from a
``SessionExport``) and one line below.  Registry order is the order of the
dataset card's configs; the first is the default config.
"""

from __future__ import annotations

import pyarrow as pa

from trajset.schemas.tables import ERRORS

from . import kto, outcomes, preferences, sft, steps, trajectories
from .base import Row, Table

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        trajectories.TABLE,
        sft.TABLE,
        steps.TABLE,
        outcomes.TABLE,
        preferences.TABLE,
        kto.TABLE,
    )
}
#: the dataset configs, in card order
CONFIGS = tuple(TABLES)
#: every table written, by name: the configs and ``errors.parquet``
SCHEMAS: dict[str, pa.Schema] = {**{n: t.schema for n, t in TABLES.items()}, "errors": ERRORS}


def schema_json(name: str) -> list[dict[str, object]]:
    """A table's columns as JSON (name, Arrow type, nullable), for ``trajset schema``."""
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in SCHEMAS[name]]


__all__ = ["CONFIGS", "SCHEMAS", "TABLES", "Row", "Table", "schema_json"]
