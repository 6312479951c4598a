"""The people a run numbers into pseudonyms before it reads any unit (``identity_v1``), and
the units it leaves out because their people could not be read: exported, they would
keep the names the run could not number."""

from __future__ import annotations

from trajset.redactors.identities import Identity
from trajset.schemas.records import ErrorRow

from ..options import ExportOptions
from ..stores import Unit, identities


def people_of(
    units: list[Unit], options: ExportOptions
) -> tuple[list[Unit], tuple[Identity, ...], list[ErrorRow]]:
    """The units to run, the people they name (when ``identity_v1`` is on), and a row for
    each unit left out because its people could not be read."""
    if "identity_v1" not in options.builtin_rules():
        return units, (), []
    unnamed: list[tuple[Unit, str]] = []
    people = tuple(identities(units, failed=unnamed))
    kept = [u for u in units if all(u is not f for f, _ in unnamed)]
    return kept, people, [unnamed_row(u, why) for u, why in unnamed]


def unnamed_row(unit: Unit, why: str) -> ErrorRow:
    """The row of a unit whose people could not be read before the run (``identities``)."""
    return ErrorRow(
        unit.label, "", None, "internal",
        f"the people this input names could not be read ({why}), so they could not be "
        "given pseudonyms; it is not exported (export it with --no-redact, or report this)",
    )  # fmt: skip
