"""The reference ATIF v1.8 mapping (spec §7) and its reverse (§7.11).

::

    walker.py    the walk over a trajectory's context; steps.py builds the steps
    records.py   one pure builder per record entry type (labels, outcomes, env, ...)
    links.py     subagent refs and embedded subsessions
    document.py  assembly: agent, root extras, final metrics, member order
    content.py   Open Responses content -> ATIF content; media.py spills data URLs
    items.py     items / items_from: the reverse mapping
"""

from .document import AtifOptions, session_documents, to_atif
from .items import NoRawItems, items, items_from
from .media import SpillError, spill_media
from .tools import tool_definition

__all__ = [
    "AtifOptions",
    "NoRawItems",
    "SpillError",
    "items",
    "items_from",
    "session_documents",
    "spill_media",
    "to_atif",
    "tool_definition",
]
