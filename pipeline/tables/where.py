"""``--where``: keep trajectories whose outcome (or other scalar) columns match.

Expressions are SQL, parsed by polars (``outcome_score >= 0.5``,
``outcome_pass``, ``outcome_label = 'thumbs_up' and n_steps < 40``); a row
whose expression is null (no outcome) does not match.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trajset.schemas.tables import TRAJECTORIES

from ..errors import UsageError

if TYPE_CHECKING:  # polars is imported where a filter is used (0.1 s of every process otherwise)
    import polars as pl

#: scalar columns of ``trajectories`` a filter may use (``split`` and ``redaction_version``
#: are set after it)
FILTER_COLUMNS = tuple(
    f.name
    for f in TRAJECTORIES
    if f.name
    not in ("messages", "preferred_over", "tools", "content_hash", "split", "redaction_version")
)


def compile_where(expr: str) -> pl.Expr:
    """Parse ``expr``; ``UsageError`` naming the problem and the usable columns."""
    import polars as pl

    try:
        compiled = pl.sql_expr(expr)
        names = compiled.meta.root_names()
    except Exception as exc:  # polars raises several error types for bad SQL
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"--where {expr!r} does not parse: {first}{_hint(expr)}") from None
    unknown = sorted(set(names) - set(FILTER_COLUMNS))
    if unknown:
        raise UsageError(
            f"--where {expr!r} names unknown column(s) {', '.join(unknown)}{_hint(expr)}; "
            f"usable: {', '.join(FILTER_COLUMNS)}"
        )
    try:  # types are checked here, on a row of nulls, not inside a worker
        matching([dict.fromkeys(FILTER_COLUMNS)], compiled)
    except Exception as exc:  # polars raises several error types for ill-typed SQL
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"--where {expr!r} cannot be evaluated: {first}") from None
    return compiled


def _hint(expr: str) -> str:
    """How to write what a user used from another language (``&&``, ``"text"``)."""
    hints = []
    if "&&" in expr or "||" in expr:
        hints.append("SQL joins conditions with and / or, not && / ||")
    if "==" in expr:
        hints.append("SQL compares with =, not ==")
    if '"' in expr:
        hints.append("SQL text goes in single quotes ('thumbs_up'); double quotes name columns")
    return f" ({'; '.join(hints)})" if hints else ""


def matching(rows: list[dict[str, Any]], expr: pl.Expr) -> list[bool]:
    """One flag per row: does ``expr`` hold (null counts as no)?"""
    import polars as pl

    if not rows:
        return []
    schema = pa.schema([TRAJECTORIES.field(n) for n in FILTER_COLUMNS])
    frame = pl.DataFrame(
        pa.Table.from_pylist([{k: r[k] for k in FILTER_COLUMNS} for r in rows], schema=schema)
    )
    keep = frame.with_columns(expr.fill_null(False).cast(pl.Boolean).alias("__keep"))["__keep"]
    return [bool(k) for k in keep.to_list()]
