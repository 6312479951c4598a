"""The output tables (DESIGN §5): one module per table and the ``TABLES`` registry.

A new table is its Arrow schema in ``trajset.schemas.tables``, one module
here defining ``TABLE`` (schema, card description, rows from a
``SessionExport``) and one line below.  Registry order is the order of the
dataset card's configs; the first is the default config.  ``DERIVED`` configs
(``tokenized``) are made from written tables when asked, after them in the card.
"""

from __future__ import annotations

import pyarrow as pa

from trajset.schemas.columns import meaning
from trajset.schemas.tables import ERRORS, PAIR_TOKENS, TOKENIZED

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
#: configs written from other configs' files when asked (``trajset tokenize``), not by the
#: run's chain: name -> (schema, the card's description)
DERIVED: dict[str, tuple[pa.Schema, str]] = {
    "tokenized": (
        TOKENIZED,
        "Each `sft` row rendered with a tokenizer's chat template: `input_ids`, and "
        "`assistant_masks` 1 exactly on the tokens of trainable assistant messages "
        "(TRL's `SFTTrainer` builds its labels from it; axolotl, torchtune and verl read it).",
    ),
    "pair_tokens": (
        PAIR_TOKENS,
        "The token lengths of each `preferences` row's prompt, chosen and rejected side, "
        "to filter over-long pairs (join on `pair_id`).",
    ),
}
#: the dataset configs, in card order
CONFIGS = tuple(TABLES)
#: every table written, by name: the configs, the derived configs and ``errors.parquet``
SCHEMAS: dict[str, pa.Schema] = {
    **{n: t.schema for n, t in TABLES.items()},
    **{n: schema for n, (schema, _) in DERIVED.items()},
    "errors": ERRORS,
}


def describe(name: str) -> str:
    """A config's line for the dataset card."""
    return TABLES[name].description if name in TABLES else DERIVED[name][1]


def schema_json(name: str) -> list[dict[str, object]]:
    """A table's columns as JSON (name, Arrow type, nullable, meaning), for ``trajset schema``."""
    return [
        {
            "name": f.name,
            "type": str(f.type),
            "nullable": f.nullable,
            "description": meaning(name, f.name),
        }
        for f in SCHEMAS[name]
    ]


__all__ = ["CONFIGS", "DERIVED", "SCHEMAS", "TABLES", "Row", "Table", "describe", "schema_json"]
